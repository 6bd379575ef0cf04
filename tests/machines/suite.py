"""The real clients on two machines joined through a real NATS cluster: a Claude Code
2.1.328 session on machine "alpha" lists and messages a Codex 0.169.0 thread and an
OpenClaw 2026.9.6 session on machine "beta", and beta's Codex hook and OpenClaw plugin
each hand their message over once. Each machine is its own HOME, state folder and
machine name, set up as docs/nats.md tells a new user: `host-shim setup claude` (or
`codex`, `openclaw`) as on one machine, and a cluster file in the state folder. The
cluster is three `nats-server` 2.15.1 nodes on loopback (`target/nats-venv`, which
`.ci/run` installs by hash, or $NATS_SERVER), stopped at the end. Each harness talks to
its own scripted endpoint (host-shim/harnesses/claude-code/suite/endpoint.py, host-shim/harnesses/codex/suite/endpoint.py,
host-shim/harnesses/openclaw/suite/endpoint.py); OpenClaw runs on the Node `.ci/run` installs for it.
"""

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent))
from suite_kit.real_client import FRAME, HOST_SHIM, ROOT  # noqa: E402
from suite_kit.real_client import check, finish  # noqa: E402
from suite_kit.peers import binary_of, endpoint_of  # noqa: E402

WORK = ROOT / "target" / "machines-suite"
CLAUDE = binary_of("claude-code", "claude")
CODEX = binary_of("codex", "codex")
NATS = Path(os.environ.get("NATS_SERVER", ROOT / "target" / "nats-venv" / "bin" / "nats-server"))
TOOLS = "mcp__session-tools__"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    """Three nodes with JetStream on loopback, each write synced before its ack."""

    def __init__(self):
        client, route, monitor = ([free_port() for _ in range(3)] for _ in range(3))
        routes = ", ".join(f"nats-route://127.0.0.1:{p}" for p in route)
        self.urls = [f"nats://127.0.0.1:{p}" for p in client]
        self.nodes = []
        for n in range(3):
            config = WORK / "nats" / f"n{n}.conf"
            config.parent.mkdir(parents=True, exist_ok=True)
            config.write_text(
                f"server_name: n{n}\nlisten: 127.0.0.1:{client[n]}\nhttp: 127.0.0.1:{monitor[n]}\n"
                f'jetstream {{ store_dir: "{WORK / "nats" / f"n{n}"}", sync_interval: always }}\n'
                f"cluster {{ name: session-tools, listen: 127.0.0.1:{route[n]}, routes: [{routes}] }}\n")
            self.nodes.append(subprocess.Popen([str(NATS), "-c", str(config)],
                                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        deadline = time.time() + 30
        for port in monitor:
            while True:
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as r:
                        if b'"ok"' in r.read():
                            break
                except OSError:
                    pass
                if time.time() > deadline:
                    raise SystemExit("the NATS cluster did not become healthy")
                time.sleep(0.1)

    def stop(self):
        for node in self.nodes:
            node.kill()
            node.wait()


class Machine:
    """A machine: its HOME, its state folder (the default one), its cluster file."""

    def __init__(self, name, urls):
        self.name = name
        self.home = WORK / name
        self.state = self.home / ".local" / "state" / "session-tools"
        self.state.mkdir(parents=True)
        (self.state / "cluster.json").write_text(json.dumps(
            {"servers": urls, "machine": name, "liveTtlSeconds": 6}, indent=1))
        self.env = {"HOME": str(self.home), "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                    "LANG": "C.UTF-8"}

    def setup(self, harness, extra_env=None):
        done = subprocess.run([HOST_SHIM, "setup", harness], env=dict(self.env, **(extra_env or {})),
                              capture_output=True, text=True, cwd=self.home)
        check(done.returncode == 0, f"{self.name}: host-shim setup {harness}", done.stderr)


class OpenClaw:
    """The real OpenClaw on a machine, talking to its own scripted endpoint: one
    `openclaw agent --local` turn of one session at a time (host-shim/harnesses/openclaw/suite/suite.py)."""

    def __init__(self, endpoint, port):
        self.endpoint = endpoint
        self.port = port
        self.log = WORK / "openclaw-endpoint.jsonl"
        self.server = endpoint.serve(port, str(self.log))

    def set_up(self, machine, workspace):
        """The person's onboarded OpenClaw on `machine` (its config names its model), then
        the README's `host-shim setup openclaw`."""
        self.env = dict(self.endpoint.env(machine.home), LANG="C.UTF-8")
        self.workspace = workspace
        self.endpoint.write_config(machine.home, self.port, workspace)
        machine.setup("openclaw", self.env)

    def turn(self, session, prompt):
        """One turn of `session`; the texts of the user messages of its last model request."""
        done, requests = self.endpoint.agent_turn(self.env, self.workspace, session, prompt,
                                                  self.log)
        if done.returncode != 0:
            print(f"     openclaw exited {done.returncode}: {(done.stdout + done.stderr)[-800:]}")
        return [t for m in (requests[-1]["messages"] if requests else []) if m["role"] == "user"
                for t in self.endpoint.texts(m)]


def codex_requests(log):
    """Every request Codex sent its endpoint, newest last."""
    return [json.loads(line)["request"] for line in log.read_text().splitlines()
            if json.loads(line).get("method") == "POST"]


def main():
    if not check(NATS.is_file(), f"nats-server is installed ({NATS}; .ci/run installs it)"):
        finish()
    if not check(CLAUDE.exists() and CODEX.exists(),
                 "the pinned Claude Code and Codex are installed (npm ci in host-shim/harnesses/claude-code/suite, host-shim/harnesses/codex/suite)"):
        finish()
    openclaw_endpoint = endpoint_of("openclaw")
    if not check((openclaw_endpoint.NODE_BIN / "node").exists() and openclaw_endpoint.OPENCLAW.exists(),
                 "the pinned OpenClaw and its Node are installed (the OpenClaw lines of .ci/run)"):
        finish()
    shutil.rmtree(WORK, ignore_errors=True)
    WORK.mkdir(parents=True)
    cluster = Cluster()
    claude_endpoint = endpoint_of("claude-code")
    codex_endpoint = endpoint_of("codex")
    claude_log, codex_log = WORK / "claude-endpoint.jsonl", WORK / "codex-endpoint.jsonl"
    claude_server = claude_endpoint.start(str(claude_log))
    codex_port, openclaw_port = free_port(), free_port()
    codex_server = codex_endpoint.serve(codex_port, str(codex_log))
    openclaw = OpenClaw(openclaw_endpoint, openclaw_port)
    try:
        alpha = Machine("alpha", cluster.urls[:1])
        beta = Machine("beta", cluster.urls[1:])
        across(alpha, beta, claude_endpoint, claude_server, claude_log, codex_endpoint,
               codex_port, codex_log, openclaw)
    finally:
        claude_server.shutdown()
        codex_server.shutdown()
        openclaw.server.shutdown()
        cluster.stop()
    finish()


def across(alpha, beta, claude_endpoint, claude_server, claude_log, codex_endpoint, codex_port,
           codex_log, openclaw):
    orchard = beta.home / "orchard"
    orchard.mkdir()
    # Beta also runs OpenClaw, set up as on one machine; setup codex below finds it too.
    openclaw.set_up(beta, orchard)
    # Beta runs Codex, set up as on one machine.
    codex_home = beta.home / ".codex"
    codex_home.mkdir()
    (codex_home / "config.toml").write_text(codex_endpoint.codex_config(codex_port))
    beta.setup("codex")
    codex_env = dict(beta.env, CODEX_HOME=str(codex_home), SCRIPTED_API_KEY="scripted")
    # Alpha runs Claude Code, set up as on one machine.
    alpha.setup("claude")
    claude_env = dict(alpha.env, ANTHROPIC_BASE_URL=f"http://127.0.0.1:{claude_server.server_port}",
                      ANTHROPIC_API_KEY="sk-scripted-endpoint", DISABLE_TELEMETRY="1",
                      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_AUTOUPDATER="1")
    greenhouse = alpha.home / "greenhouse"
    greenhouse.mkdir()

    def codex(args):
        done = subprocess.run([str(CODEX), "exec", "--dangerously-bypass-hook-trust",
                               "--skip-git-repo-check", *args], cwd=orchard,
                              env=dict(codex_env, PWD=str(orchard)), capture_output=True,
                              text=True, timeout=180)
        if done.returncode != 0:
            print(f"     codex exited {done.returncode}: {(done.stdout + done.stderr)[-800:]}")
        found = re.search(r"session id: ([0-9a-f-]{36})", done.stdout + done.stderr)
        return found.group(1) if found else None

    def codex_texts():
        lines = [json.loads(line) for line in codex_log.read_text().splitlines()]
        last = [r for r in lines if r.get("method") == "POST"][-1]["request"]
        return [p.get("text", "") for item in last.get("input", []) if item.get("type") == "message"
                for p in item.get("content") or [] if isinstance(p, dict)]

    def claude(args):
        done = subprocess.run([str(CLAUDE), "-p", *args], cwd=greenhouse,
                              env=dict(claude_env, PWD=str(greenhouse)), capture_output=True,
                              text=True, timeout=180)
        if done.returncode != 0:
            print(f"     claude exited {done.returncode}: {done.stderr[-800:]}")

    def claude_results():
        """The results of the scripted model's session-tools calls, as Claude Code sent
        them back: (tool, text, is_error), in order."""
        records = [json.loads(line) for line in claude_log.read_text().splitlines() if line.strip()]
        names = {}
        for record in records:
            for block in (record.get("answer") or {}).get("content", []):
                if block.get("type") == "tool_use":
                    names[block["id"]] = block["name"].removeprefix(TOOLS)
        results, seen = [], set()
        for record in records:
            for message in record["request"].get("messages", []):
                for part in message.get("content") if isinstance(message.get("content"), list) else []:
                    if part.get("type") != "tool_result" or part["tool_use_id"] in seen:
                        continue
                    seen.add(part["tool_use_id"])
                    content = part.get("content")
                    text = content if isinstance(content, str) else "\n".join(
                        p.get("text", "") for p in content or [] if isinstance(p, dict))
                    results.append((names.get(part["tool_use_id"]), text, bool(part.get("is_error"))))
        return results

    # An OpenClaw session on beta, one turn in.
    figs = str(uuid.uuid4())
    openclaw.turn(figs, "Keep the fig log")
    # A Codex thread on beta that looks around: its server publishes beta's sessions (the
    # OpenClaw one among them) as it starts and again after each call (the thread's title
    # is known by then).
    thread = codex(["Tend the orchard\n" + codex_endpoint.SCRIPT_MARK + json.dumps([
        {"tool": "sessions_list", "namespace": "mcp__session_tools", "input": {}}])])
    if not check(bool(thread), "beta: a Codex thread starts with the set-up and the cluster file"):
        return

    # On alpha, a Claude Code session lists both machines and messages the thread.
    session = str(uuid.uuid4())
    claude(["--session-id", session, "Ask the orchard\n" + claude_endpoint.SCRIPT_MARK + json.dumps([
        {"tool": TOOLS + "sessions_list", "input": {"scope": "all"}},
        {"tool": TOOLS + "sessions_send",
         "input": {"session_id": thread, "message": "From alpha: pears or plums?"}},
        {"tool": TOOLS + "sessions_send",
         "input": {"session_id": figs, "message": "From alpha: are the figs ripe?"}},
        {"tool": TOOLS + "sessions_read", "input": {"session_id": thread}},
    ])])
    results = claude_results()
    listing = next((t for name, t, _ in results if name == "sessions_list"), "")
    row = next((line for line in listing.splitlines() if line.startswith(f"- {thread} [")), "")
    # Live or cold as beta's last heartbeat says (its server ended with the turn; the
    # heartbeat expires within the TTL).
    check("top-level]" in row and "| machine=beta" in row and "Tend the orchard" in listing,
          "alpha's Claude Code lists beta's Codex thread on machine beta, with its title", listing)
    # A row, then its title on the next line.
    row = next((row + title for row, title in zip(listing.splitlines(), listing.splitlines()[1:])
                if row.startswith(f"- {figs} [")), "")
    check("top-level]" in row and "| machine=beta" in row and row.endswith("Keep the fig log"),
          "and beta's OpenClaw session on machine beta, with its title, beside the Codex thread",
          listing)
    mine = next((line for line in listing.splitlines() if line.startswith(f"- {session} [")), "")
    check("| machine=alpha | this session" in mine, "and itself on machine alpha", listing)
    sent = [t for name, t, _ in results if name == "sessions_send"]
    check(len(sent) == 2 and sent[0].startswith(f"accepted for {thread} | mode=queue")
          and sent[1].startswith(f"accepted for {figs} | mode=queue"),
          "the sends to beta's thread and OpenClaw session are accepted", sent)
    read = next(((t, e) for name, t, e in results if name == "sessions_read"), ("", False))
    check(read[1] and f"session {thread} is on machine beta, where no session-tools host runs now" in read[0],
          "a read of beta's thread while no host runs there is the tool's error, saying why", read)
    print(f"     Claude Code got: {read[0][:300]}")

    # On beta, the thread's next turn: Codex's hook hands the message over once.
    codex(["resume", thread, "Mail?\n" + codex_endpoint.SCRIPT_MARK + "[]"])
    seen = codex_texts()
    check(sum(t.count("From alpha: pears or plums?") for t in seen) == 1
          and any(t.startswith(FRAME) and session in t for t in seen),
          "beta's Codex hook hands alpha's message over once, framed, naming the sender", seen)
    check(any(t.startswith(FRAME) and f"from-session: {session} (" in t
              and "\nfrom-machine: alpha\ndelivery: queue\n" in t for t in seen),
          "and the frame names alpha, the machine the cluster let write it", seen)
    handed = next((t for t in seen if t.startswith(FRAME)), "")
    print("     Codex got: " + handed[:400].replace("\n", "\n       "))
    codex(["resume", thread, "More?\n" + codex_endpoint.SCRIPT_MARK + "[]"])
    seen = codex_texts()
    check(sum(t.count("From alpha: pears or plums?") for t in seen) == 1,
          "and not again at the turn after", seen)

    # And the other way: beta's Codex reads alpha's session while no host of alpha's
    # runs (Claude Code ran its server only for its turn), and is told why it cannot.
    codex(["resume", thread, "Look at alpha\n" + codex_endpoint.SCRIPT_MARK + json.dumps([
        {"tool": "sessions_read", "namespace": "mcp__session_tools",
         "input": {"session_id": session}}])])
    seen = codex_texts()
    check(any(f"session {session} is on machine alpha, where no session-tools host runs now" in t
              for t in seen) or any(f"session {session} is on machine alpha" in json.dumps(r)
                                    for r in codex_requests(codex_log)),
          "beta's Codex reading alpha's session is told why it cannot now",
          [t[:300] for t in seen])

    # On beta, the OpenClaw session's next turn: its plugin hands the message over once.
    seen = openclaw.turn(figs, "Anything new?")
    check(sum(t.count("From alpha: are the figs ripe?") for t in seen if FRAME in t) == 1
          and any(FRAME in t and f"from-session: {session} (" in t
                  and "\nfrom-machine: alpha\ndelivery: queue\n" in t for t in seen),
          "beta's OpenClaw plugin hands alpha's message over once, framed, naming alpha", seen)
    handed = next((t for t in seen if FRAME in t), "")
    print("     OpenClaw got: " + handed[handed.find(FRAME):][:400].replace("\n", "\n       "))
    seen = openclaw.turn(figs, "And now?")
    check(not any("From alpha: are the figs ripe?" in t for t in seen),
          "and not again at the turn after", seen)
    log = subprocess.run([HOST_SHIM, "log"], env=beta.env, capture_output=True, text=True).stdout
    handed = [line for line in log.splitlines() if "handed-over" in line]
    check(any(thread in line for line in handed) and any(figs in line for line in handed),
          "beta's audit log has both hand-overs", log)

    # Claims across machines: beta's OpenClaw session claims a file of its workspace;
    # alpha sees the claim, and alpha's Claude Code writing that file is denied by its
    # own pre-write hook, naming the holder on beta.
    fig_log = orchard / "fig-log.md"
    openclaw.turn(figs, "Claim the fig log\n" + openclaw.endpoint.SCRIPT_MARK + json.dumps([
        {"tool": "tool_call", "input": {"id": "session-tools__sessions_claim",
                                        "args": {"paths": ["fig-log.md"], "reason": "logging figs"}}},
        {"say": "claimed"}]))
    claims = subprocess.run([HOST_SHIM, "claims"], env=alpha.env, capture_output=True,
                            text=True).stdout
    check(figs in claims and str(fig_log) in claims and "logging figs" in claims,
          "alpha's `host-shim claims` shows the claim beta's OpenClaw session made", claims)
    writer = str(uuid.uuid4())
    before = len(claude_results())
    claude(["--session-id", writer, "Write the fig log\n" + claude_endpoint.SCRIPT_MARK + json.dumps([
        {"tool": "Write", "input": {"file_path": str(fig_log), "content": "figs: none"}}])])
    wrote = [(t, e) for name, t, e in claude_results()[before:] if name == "Write"]
    check(len(wrote) == 1 and "write refused (claimed)" in wrote[0][0] and figs in wrote[0][0]
          and " on beta holds c-" in wrote[0][0] and not fig_log.exists(),
          "alpha's Claude Code write into the claim is denied by its own hook, naming the "
          "holder on beta, and nothing is written", wrote)
    print("     Claude Code got: " + (wrote[0][0] if wrote else "")[:400].replace("\n", "\n       "))


if __name__ == "__main__":
    main()
