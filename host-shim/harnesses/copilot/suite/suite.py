"""The real GitHub Copilot CLI in the loop: the pinned `@github/copilot` binary, driven
offline by the scripted Chat Completions endpoint in `endpoint.py`, set up as
host-shim/harnesses/copilot/README.md tells a new user (`host-shim setup copilot`), on a scratch HOME.

Each check asserts what the model saw (the tool results and the messages handed over,
as they come back to the endpoint in Copilot's next request, once where once is
promised) and what the session's own record shows (`events.jsonl`). Each `copilot -p`
is one turn of one session in a process of its own; a session is resumed with
`--resume=<id>`.
"""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "tests"))
import copilot_endpoint as endpoint  # noqa: E402
from suite_kit.real_client import FRAME, HOST_SHIM, ROOT  # noqa: E402
from suite_kit.real_client import HeadlessRun, a_wake_by_setups_command, claims_between_two_runs, a_send_and_its_retry, script, send_and_retry, the_prompt_is_read, audit, client, doctor_finds_nothing_wrong, events_named, finish, folders, holds, stopped, WAKE_PROMPT  # noqa: E402
from suite_kit.peers import binary_of, endpoint_of  # noqa: E402

COPILOT = client("COPILOT", "copilot", "copilot")
WORK, HOME, STATE, LOG = folders("copilot")
COPILOT_HOME = HOME / ".copilot"
# The first run unpacks ~235 MB of Copilot's own files here: kept across runs.
CACHE = ROOT / "target" / "copilot-cache"
PORT = 18791


def env(cwd):
    """Copilot's environment: a scratch HOME, offline, no GitHub token."""
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(HOME), "PWD": str(cwd),
            "LANG": "C.UTF-8", "XDG_CACHE_HOME": str(CACHE),
            "XDG_CONFIG_HOME": str(HOME / ".config"), "XDG_STATE_HOME": str(HOME / ".local/state"),
            **endpoint.copilot_env(PORT)}


class Run(HeadlessRun):
    """One `copilot -p` turn: its session id (from the `--resume=<id>` it prints)."""
    who = "Copilot"

    def __init__(self, prompt, cwd, session=None):
        args = [COPILOT, "-p", prompt, "--allow-all-tools"]
        if session:
            args.append(f"--resume={session}")
        super().__init__("copilot", args, cwd, env(cwd), LOG)
        self.out = self.done.stdout + self.done.stderr
        ids = re.findall(r"--resume=([0-9a-f-]{36})", self.out)
        self.session = ids[-1] if ids else session

    def results(self, tool):
        """Every result of `tool` (the model's name for it) the model was sent, in its
        last request, in order."""
        if not self.requests:
            return []
        messages = self.requests[-1].get("messages", [])
        names = {c["id"]: c["function"]["name"] for m in messages for c in m.get("tool_calls") or []}
        return ["".join(endpoint.texts(m)) for m in messages
                if m.get("role") == "tool" and names.get(m.get("tool_call_id")) == tool]

    @staticmethod
    def texts_of(request):
        return [t for m in request.get("messages", []) for t in endpoint.texts(m)]


def tool(name, **arguments):
    return {"tool": f"session-tools-{name}", "input": arguments}


def events(session):
    path = COPILOT_HOME / "session-state" / session / "events.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def with_codex(lead, work):
    """Copilot CLI and Codex on one machine (each pinned real binary with its own
    scripted endpoint), each set up by `host-shim setup`, which links every harness it
    finds: one listing holds both, and a message each way is handed over once by the
    target's own harness."""
    codex_bin = binary_of("codex", "codex")
    if not holds("the pinned Codex is installed (npm ci in host-shim/harnesses/codex/suite)", codex_bin.exists()):
        return
    codex_endpoint = endpoint_of("codex")
    codex_log = WORK / "codex-endpoint.jsonl"
    server = codex_endpoint.serve(PORT + 10, str(codex_log))
    codex_home = HOME / ".codex"
    codex_home.mkdir()
    (codex_home / "config.toml").write_text(codex_endpoint.codex_config(PORT + 10))
    codex_env = dict(env(work), CODEX_HOME=str(codex_home), SCRIPTED_API_KEY="scripted")
    # The README's order: Copilot was set up first; once Codex is there, both again.
    for harness in ("codex", "copilot"):
        subprocess.run([HOST_SHIM, "setup", harness, "--state-dir", str(STATE)], env=env(work),
                       check=True, capture_output=True)

    def codex(args):
        done = subprocess.run([str(codex_bin), "exec", "--dangerously-bypass-hook-trust",
                               "--skip-git-repo-check", *args], cwd=work, env=codex_env,
                              capture_output=True, text=True, timeout=180)
        found = re.search(r"session id: ([0-9a-f-]{36})", done.stdout + done.stderr)
        if done.returncode != 0:
            print(f"     codex exited {done.returncode}: {(done.stdout + done.stderr)[-800:]}")
        return found.group(1) if found else None

    def codex_texts():
        lines = [json.loads(line) for line in codex_log.read_text().splitlines()]
        last = [r for r in lines if r.get("method") == "POST"][-1]["request"]
        return [p.get("text", "") for item in last.get("input", []) if item.get("type") == "message"
                for p in item.get("content") or [] if isinstance(p, dict)]

    try:
        thread = codex(["Tend the orchard\n" + codex_endpoint.SCRIPT_MARK + "[]"])
        holds("a Codex thread starts with the linked set-up", thread)
        reach = Run(script("Reach Codex", tool("sessions_list"),
                           tool("sessions_send", session_id=thread,
                                message="From Copilot: prune the apples."),
                           {"say": "sent"}), work, session=lead)
        listing = (reach.results("session-tools-sessions_list") or [""])[-1]
        holds("one Copilot listing holds the Codex thread and the Copilot sessions",
              f"- {thread} [" in listing and f"- {lead} [" in listing, listing)
        sent = reach.results("session-tools-sessions_send")
        holds("Copilot's send to Codex is accepted", sent and sent[-1].startswith("accepted for "), sent)
        codex(["resume", thread, "Mail?\n" + codex_endpoint.SCRIPT_MARK + json.dumps([
            {"tool": "sessions_send", "namespace": "mcp__session_tools",
             "input": {"session_id": lead, "message": "From Codex: apples pruned."}}])])
        seen = codex_texts()
        holds("Codex's hook hands Copilot's message over once, framed",
              sum(t.count("From Copilot: prune the apples.") for t in seen) == 1
              and any(t.startswith(FRAME) for t in seen), seen[-3:])
        back = Run("Back again", work, session=lead)
        holds("Copilot's hook hands Codex's answer over once, framed",
              back.frames_seen("From Codex: apples pruned.") == 1, back.out[-1500:])
    finally:
        server.shutdown()


def woken_by_the_wake_command(lead, work):
    """Copilot CLI has no way to wake an idle session: with a wake command set up, a
    message to a cold session starts it (`copilot --resume=<id> -p …`), and its
    sessionStart hook hands the message over."""
    sleeper = Run("Sleep on it", work).session
    # Copilot starts its MCP servers without its provider settings (COPILOT_OFFLINE,
    # COPILOT_PROVIDER_*), so the command names them, as a person's offline set-up must.
    provider = " ".join(f"{k}={v}" for k, v in endpoint.copilot_env(PORT).items())
    # Copilot stops its servers with every process they started (it looks them up by
    # parent): `setsid -f` hands the woken session to init at once.
    woken = (f"env XDG_CACHE_HOME={CACHE} {provider} {COPILOT} --resume={{id}} "
             f'-p "{WAKE_PROMPT}" --allow-all-tools')
    log = a_wake_by_setups_command(Run, "copilot", woken, "session-tools-sessions_send",
                                   (WORK, STATE, LOG, work, env(work)), lead, sleeper)
    # The suite stops what it started: the woken Copilot ends its turn, or is stopped.
    ended = stopped(f"--resume={sleeper}")
    said = log.read_text() if log.exists() else ""
    holds("the woken session's Copilot ends its turn (its summary names the session)",
          ended and f"--resume={sleeper}" in said, said[-1500:])


def claims_keep_writes_out(work):
    """Contract 0.6.0: a session's `create` into another's claim is denied by its own
    preToolUse hook (`claims_between_two_runs`)."""
    claims_between_two_runs(Run, work, "a Copilot session", ("session-tools-sessions_claim", "create"),
                            lambda path, text: {"path": str(path), "file_text": text},
                            "its preToolUse hook")


def main():
    shutil.rmtree(WORK, ignore_errors=True)
    WORK.mkdir(parents=True)
    work = WORK / "w"
    work.mkdir()
    endpoint.serve(PORT, str(LOG))

    # The set-up a new user runs: the README's command, twice.
    setup = [HOST_SHIM, "setup", "copilot", "--state-dir", str(STATE)]
    subprocess.run(setup, check=True, capture_output=True, env=env(WORK))
    again = subprocess.run(setup, check=True, capture_output=True, text=True, env=env(WORK)).stdout
    holds("setup copilot, run again, changes nothing", "set up already: nothing changed" in again, again)

    # A reviewer session, cold once its turn ends. Its first prompt has two lines,
    # which Copilot writes into workspace.yaml as a YAML block scalar (`name: |-`).
    reviewer = Run("Review the docs\nbefore lunch", work).session
    holds("a Copilot session is made and named by Copilot", bool(reviewer), reviewer)

    # Another lists and reads it: the caller is Copilot's own session id.
    lead = Run(script("Look around", tool("sessions_list"),
                      tool("sessions_read", session_id=reviewer), {"say": "seen"}), work)
    listing = lead.results("session-tools-sessions_list")
    holds("sessions_list from a Copilot session shows the other, and itself as this session",
          listing and reviewer in listing[0] and f"{lead.session} [" in listing[0]
          and "| this session" in listing[0], listing)
    holds("the reviewer's title is its two-line first prompt, read as YAML",
          listing and "\n  Review the docs before lunch\n" in listing[0], listing)
    read = lead.results("session-tools-sessions_read")
    the_prompt_is_read(read)

    # A send, its retry in the same words (a new call) delivered once, and a caller
    # field the model wrote refused.
    sent = Run(script("Tell the reviewer",
                      *send_and_retry(tool, reviewer),
                      tool("sessions_send", session_id=reviewer, message="Forged.", caller=reviewer),
                      {"say": "sent"}), work, session=lead.session)
    answers = sent.results("session-tools-sessions_send")
    a_send_and_its_retry(answers, reviewer, STATE)
    holds("the send waits in the reviewer's inbox", answers and "queued in that session's inbox" in answers[0], answers)
    holds("a caller the model writes is refused, naming the arguments sessions_send takes",
          len(answers) == 3 and 'unknown argument "caller"' in answers[2], answers)

    claims_keep_writes_out(work)

    # A subagent's call: the same server and environment as its parent's, told apart by
    # the stamp our preMcpToolCall hook puts on each call (in _meta, out of the model's
    # reach).
    look = script("List every session", tool("sessions_list", scope="all"), {"say": "listed"})
    delegated = Run(script("Delegate a look", {"tool": "task", "input": {
        "description": "look around", "prompt": look, "agent_type": "general-purpose",
        "name": "looker"}}, {"say": "delegated"}), work, session=lead.session)
    seen = [t for r in delegated.requests for m in r.get("messages", []) if m.get("role") == "tool"
            for t in endpoint.texts(m) if "considered sessions" in t]
    # (Each request repeats the conversation so far: the lead's earlier listing too.)
    own = sorted({line for t in seen for line in t.splitlines()
                  if "subagent]" in line and line.endswith("| this session")})
    holds("a subagent's call is its own: a live subagent of the lead, this session",
          len(own) == 1 and "[live, subagent]" in own[0] and f"owner={lead.session}" in own[0]
          and "not messageable" in own[0], seen)
    after = Run(script("Look again", tool("sessions_list", scope="all"), {"say": "seen"}), work,
                session=lead.session).results("session-tools-sessions_list")
    rows = [line for line in (after[-1] if after else "").splitlines() if "[cold, subagent]" in line]
    holds("the lead lists its ended subagent, cold, with its owner, not messageable",
          len(rows) == 1 and f"owner={lead.session} | not messageable" in rows[0]
          and "  look around" in (after[-1] if after else ""), after)

    # The reviewer's next turn: its sessionStart hook offers the message, its model gets
    # it once, and its own record shows it.
    resumed = Run("Anything new?", work, session=reviewer)
    holds("the reviewer's model is given the message once, as its frame",
          resumed.frames_seen("Docs can ship.") == 1,
          [endpoint.texts(m) for m in resumed.requests[-1]["messages"][:3]] if resumed.requests else resumed.out)
    shown = [e for e in events(reviewer) if FRAME in json.dumps(e.get("data"))]
    holds("the reviewer's events.jsonl records the frame Copilot sent its model",
          len(shown) >= 1, [e["type"] for e in events(reviewer)])
    # The next hook of the reviewer settles the offer against that record.
    Run("And now?", work, session=reviewer)
    handed = events_named(STATE, "handed-over", reviewer)
    holds("the offer is settled as handed over by the reviewer's own record, once",
          len(handed) == 1 and not events_named(STATE, "waiting-again", reviewer), audit(STATE))
    later = Run("Anything else?", work, session=reviewer)
    holds("a message handed over is never given again", later.frames_seen("Docs can ship.") == 0)

    # A message that arrives during the reviewer's turn (a tool of its own turn sends it
    # from the lead, through host-shim call): agentStop hands it over as a new prompt.
    # (A script in the session's folder: Copilot asks before a command names a path
    # outside it, and a headless run has no one to ask.)
    arguments = json.dumps({"session_id": reviewer, "message": "Also fix the typo."})
    (work / "send-mid-turn.sh").write_text(
        f"exec {HOST_SHIM} call --copilot-home {COPILOT_HOME} --state-dir {STATE} "
        f"--caller {lead.session} --call-id mid-turn-1 sessions_send '{arguments}'\n")
    turn = Run(script("Work on it", {"tool": "bash", "input": {"command": "sh send-mid-turn.sh",
                                                              "description": "send"}},
                      {"say": "worked"}), work, session=reviewer)
    holds("a message accepted mid-turn is handed over when the turn ends (agentStop), once",
          turn.frames_seen("Also fix the typo.") == 1, turn.out[-2000:])
    prompts = [e for e in events(reviewer) if e["type"] == "user.message"
               and (e["data"].get("content") or "").startswith(FRAME)
               and "Also fix the typo." in e["data"]["content"]]
    holds("Copilot records the agentStop hand-over as a prompt of the session", len(prompts) == 1,
          len(prompts))

    # The listing's view of the team, as `host-shim call` (the MCP server's flags).
    listed = subprocess.run([HOST_SHIM, "call", "--copilot-home", str(COPILOT_HOME), "--caller",
                             lead.session, "sessions_list", "{}"], capture_output=True, text=True)
    holds("every Copilot session is listed, top-level, with the model as its preset",
          listed.returncode == 0 and listed.stdout.count("[cold, top-level]") >= 2
          and "preset=scripted-model" in listed.stdout, listed.stdout + listed.stderr)

    # A 1 MiB message, refused by the plugin, then a listing, in one turn, three times:
    # Copilot records the arguments in the caller's events.jsonl (lines of a MiB and
    # more), and every later call of the server, over those files, is still answered.
    # Each turn is a new session (Copilot compacts a resumed history this large, which
    # the scripted model would read as an earlier script).
    for turn in range(3):
        big = Run(script(f"Send too much {turn}",
                         tool("sessions_send", session_id=reviewer, message="$one-mebibyte"),
                         tool("sessions_list"), {"say": "sent"}),
                  work)
        refused = big.results("session-tools-sessions_send")
        listed = big.results("session-tools-sessions_list")
        holds(f"a 1 MiB send is refused and the next call answered, turn {turn + 1} of 3",
              refused and "message must be at most 8000" in refused[-1]
              and listed and "considered sessions" in listed[-1], [refused[-1:], listed[-1:]])

    # Before Codex joins this home (its hooks are trusted only by an interactive Codex).
    doctor_finds_nothing_wrong(HOST_SHIM, ["--state-dir", str(STATE)], env(WORK),
                               "ordinary headless turns")

    with_codex(lead.session, work)
    woken_by_the_wake_command(lead.session, work)

    # `--remove` gives everything back.
    subprocess.run([*setup, "--remove"], check=True, capture_output=True, env=env(WORK))
    config = json.loads((COPILOT_HOME / "mcp-config.json").read_text()) \
        if (COPILOT_HOME / "mcp-config.json").exists() else {}
    holds("setup --remove takes the server and the hooks out",
          "session-tools" not in config.get("mcpServers", {})
          and not (COPILOT_HOME / "hooks" / "session-tools.json").exists(), config)
    finish()


if __name__ == "__main__":
    main()
