"""The real OpenCode in the loop: the pinned `opencode-ai` binary, driven offline by the
scripted chat completions endpoint in `endpoint.py`, set up as host-shim/harnesses/opencode/README.md tells a
new user (`host-shim setup opencode`), on a scratch HOME.

Each check asserts what the model saw: the tool results and the messages handed over
as they come back to the endpoint in OpenCode's next request, once where once is
promised. One `opencode serve` holds the open sessions (as a person's OpenCode does);
`opencode run` makes the ones nobody has open.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "tests"))
import opencode_endpoint as endpoint  # noqa: E402
from suite_kit.real_client import FRAME, HOST_SHIM, ROOT  # noqa: E402
from suite_kit.real_client import a_claim_keeps_writes_out, check, client, doctor_finds_nothing_wrong, finish, folders, logged, wake_started  # noqa: E402
from suite_kit.peers import binary_of, endpoint_of  # noqa: E402

HERE = ROOT / "host-shim" / "harnesses" / "opencode" / "suite"
OPENCODE = client("OPENCODE", "opencode", "opencode")
WORK, HOME, STATE, LOG = folders("opencode")
CONFIG = HOME / ".config" / "opencode"
DB = HOME / ".local" / "share" / "opencode" / "opencode.db"
PORT = 18781
SERVE_PORT = 18782
PLUGIN_VERSION = "1.18.33"



def env(cwd):
    """OpenCode's environment: a scratch HOME, offline, its directory from $PWD."""
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(HOME), "PWD": str(cwd),
            "LANG": "C.UTF-8", "XDG_CONFIG_HOME": str(HOME / ".config"),
            "XDG_DATA_HOME": str(HOME / ".local" / "share"), "XDG_CACHE_HOME": str(HOME / ".cache"),
            "XDG_STATE_HOME": str(HOME / ".local" / "state"),
            "OPENCODE_DISABLE_AUTOUPDATE": "1", "OPENCODE_DISABLE_MODELS_FETCH": "1",
            "OPENCODE_DISABLE_SHARE": "1", "OPENCODE_DISABLE_LSP_DOWNLOAD": "1"}


def set_up():
    """host-shim/harnesses/opencode/README.md's set-up: the person's opencode.json (the model it talks to),
    the plugin package OpenCode would install into its configuration folder at first
    start (provisioned here, pinned, so the first start does not wait on it), then
    `host-shim setup opencode`, run twice. Returns what the second run said."""
    CONFIG.mkdir(parents=True)
    (CONFIG / "opencode.json").write_text(json.dumps(endpoint.opencode_config(PORT), indent=1))
    (CONFIG / "package.json").write_text(json.dumps(
        {"dependencies": {"@opencode-ai/plugin": PLUGIN_VERSION}}, indent=2))
    subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--silent"], cwd=CONFIG,
                   check=True, capture_output=True)
    setup = [HOST_SHIM, "setup", "opencode", "--state-dir", str(STATE)]
    subprocess.run(setup, check=True, capture_output=True, env=env(WORK))
    return subprocess.run(setup, check=True, capture_output=True, text=True, env=env(WORK)).stdout


def script(text, steps):
    return f"{text}\n{endpoint.SCRIPT_MARK}{json.dumps(steps)}"


def tool(name, **arguments):
    return {"tool": name, "input": arguments}


def folder(name):
    path = WORK / name
    path.mkdir(exist_ok=True)
    return path


def run(prompt, cwd, session=None, title=None):
    """`opencode run`: one turn in a process of its own; the session's id."""
    args = [OPENCODE, "run", "--format", "json"]
    if session:
        args += ["--session", session]
    if title:
        args += ["--title", title]
    done = subprocess.run([*args, prompt], cwd=cwd, env=env(cwd), capture_output=True,
                          text=True, timeout=180)
    if done.returncode != 0:
        raise SystemExit(f"opencode run failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    ids = re.findall(r'"sessionID":"(ses_[A-Za-z0-9]+)"', done.stdout)
    return ids[0] if ids else session


class Serve:
    """`opencode serve`: the sessions a person has open, on loopback."""

    def __init__(self, cwd):
        self.process = subprocess.Popen(
            [OPENCODE, "serve", "--port", str(SERVE_PORT), "--hostname", "127.0.0.1"],
            cwd=cwd, env=env(cwd), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # A request that comes while the server is still starting can go unanswered
        # (seen with 1.18.33): each look gives up after 2 s and asks again.
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                self.call("GET", "/session", timeout=2)
                return
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise SystemExit("opencode serve did not answer within 60 s")

    def call(self, method, path, body=None, timeout=120):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(f"http://127.0.0.1:{SERVE_PORT}{path}", data=data,
                                         method=method, headers={"content-type": "application/json"})
        with urllib.request.urlopen(request, timeout=timeout) as response:
            raw = response.read()
            return json.loads(raw) if raw else None

    def new_session(self, title):
        return self.call("POST", "/session", {"title": title})["id"]

    def prompt(self, session, text):
        """A person's prompt, answered before this returns."""
        return self.call("POST", f"/session/{session}/message", {"parts": [{"type": "text", "text": text}]})

    def prompt_async(self, session, text):
        self.call("POST", f"/session/{session}/prompt_async", {"parts": [{"type": "text", "text": text}]})

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()



def requests(session=None):
    """The model requests OpenCode made (of one session), oldest first; title requests
    left out."""
    return [r for r in logged(LOG) if r.get("method") == "POST" and "request" in r
            and (session is None or r.get("session") == session)
            and not endpoint.is_title_request(r["request"].get("messages", []))]


def texts_seen(request):
    return [t for m in request["request"].get("messages", []) for t in endpoint.texts(m)]


def tool_results(session, name):
    """Every result of tool `name` in `session`'s last request, in order."""
    mine = requests(session)
    if not mine:
        return []
    messages = mine[-1]["request"]["messages"]
    names = {call["id"]: call["function"]["name"] for m in messages
             for call in m.get("tool_calls") or []}
    return [m.get("content") if isinstance(m.get("content"), str) else "".join(endpoint.texts(m))
            for m in messages if m.get("role") == "tool" and names.get(m.get("tool_call_id")) == name]


def wait_for(condition, seconds=60):
    deadline = time.time() + seconds
    while time.time() < deadline:
        found = condition()
        if found:
            return found
        time.sleep(0.25)
    return condition()


def frames_in(session, words):
    """How many times `words` came to `session`'s model inside a frame, in its last
    request."""
    mine = requests(session)
    if not mine:
        return 0
    return sum(t.count(words) for t in texts_seen(mine[-1]) if FRAME in t)


def main():
    shutil.rmtree(WORK, ignore_errors=True)
    WORK.mkdir(parents=True)
    # The sessions' folders are a small project of their own: OpenCode snapshots a
    # session's git worktree, and this one would otherwise be the repository's.
    subprocess.run(["git", "init", "-q", str(WORK)], check=True)
    server = endpoint.serve(PORT, str(LOG))
    said = set_up()
    check("OpenCode was set up already: nothing changed." in said,
          "setup twice: the second run changes nothing", said)
    plugin = (CONFIG / "plugin" / "session-tools.js").read_text()
    check(f'"--opencode-db","{DB}"' in plugin and HOST_SHIM in plugin,
          "setup writes the plugin file running this host-shim over OpenCode's database")

    # A session nobody has open: made by `opencode run`, which then exits.
    notes = run(script("Keep the garden notes", [{"say": "Notes kept."}]), folder("notes"),
                title="Garden notes")
    serve = Serve(folder("shop"))
    try:
        open_sessions(serve, notes)
    finally:
        serve.stop()
    interactive(notes)
    woken(notes)
    claims_keep_writes_out()
    live = sorted((STATE / "live").glob("*")) if (STATE / "live").is_dir() else []
    check(live == [], "no live registration is left after OpenCode ends", live)
    doctor_finds_nothing_wrong(HOST_SHIM, ["--state-dir", str(STATE)], env(WORK),
                               "ordinary OpenCode runs")
    try:
        three_harnesses(notes)
    finally:
        server.shutdown()
    finish()


def claims_keep_writes_out():
    """Contract 0.6.0: one session claims a file; another session's `write` there is
    refused by the plugin's tool.execute.before hook, in words naming the holder and the
    reason, and nothing is written; its write elsewhere goes through."""
    work = folder("beds")
    owner = run(script("Replant the beds", [
        tool("sessions_claim", paths=["beds.md"], reason="replanting"), {"say": "claimed"}]), work)
    target, own = work / "beds.md", work / "notes.md"
    writer = run(script("Tidy the beds", [
        tool("write", filePath=str(target), content="x"),
        tool("write", filePath=str(own), content="mine"), {"say": "done"}]), work)
    wrote = tool_results(writer, "write")
    a_claim_keeps_writes_out(
        "an OpenCode session", tool_results(owner, "sessions_claim"),
        "another session's write into the claim is refused by the plugin's hook",
        wrote[:1] if len(wrote) == 2 else [], owner, (target, own, "mine"))


def open_sessions(serve, notes):
    shop = serve.new_session("Fix the shop")
    garden = serve.new_session("Plan the garden")
    serve.prompt(garden, script("Plan the beds", [{"say": "Three beds."}]))

    # List and read from an open session, through the plugin's tools.
    serve.prompt(shop, script("Look around", [
        tool("sessions_list", scope="all"),
        tool("sessions_read", session_id=garden, max_messages=5),
        tool("sessions_list", limit=900),
        # A lone UTF-16 surrogate in the arguments (JSON.stringify writes it as an
        # escape): refused naming the argument, never read as other text, the turn not
        # left waiting.
        tool("sessions_read", session_id="\ud800bad"),
    ]))
    listing = (tool_results(shop, "sessions_list") or [""])[0]
    rows = [line for line in listing.splitlines() if line.startswith("- ses_")]
    check(len(rows) == 3 and rows[-1].startswith(f"- {shop} [live, top-level]")
          and rows[-1].endswith("| this session")
          and any(r.startswith(f"- {garden} [live, top-level]") for r in rows)
          and any(r.startswith(f"- {notes} [cold, top-level]") for r in rows),
          "sessions_list names the caller as OpenCode gives it, the open sessions live, the other cold",
          listing)
    check("preset=scripted/scripted-model" in listing and "  Plan the garden" in listing,
          "each row has its preset and its title", listing)
    read = (tool_results(shop, "sessions_read") or [""])[0]
    check(f"session {garden} [live, top-level]" in read and "Three beds." in read
          and "\n--- user (seq 1, user) ---\nPlan the beds" in read,
          "sessions_read shows the other session's surface as its model had it", read)
    refusal = (tool_results(shop, "sessions_list") or ["", ""])[1]
    check(refusal == "invalid arguments: limit must be an integer from 1 to 200 (got 900)",
          "a bad argument gets the plugin's own refusal, not OpenCode's schema check", refusal)
    odd = (tool_results(shop, "sessions_read") or ["", ""])[1]
    check(odd.startswith("invalid arguments: session_id is not Unicode text"),
          "a lone surrogate in a call's arguments is refused naming the argument", odd)

    # An idle open session gets a message at once, as a new turn.
    serve.prompt(shop, script("Tell the garden", [
        tool("sessions_send", session_id=garden, message="Water the beans.\n"
             + endpoint.SCRIPT_MARK + json.dumps([{"say": "Watering."}])),
    ]))
    sent = (tool_results(shop, "sessions_send") or [""])[0]
    check(sent.startswith(f"accepted for {garden} | mode=queue"),
          "a send to an open session is accepted", sent)
    woke = wait_for(lambda: frames_in(garden, "Water the beans."), 30)
    check(woke == 1, "the idle session's plugin hands it over at once, framed, once", woke)
    wait_for(lambda: any("Watering." in t for r in requests(garden) for t in texts_seen(r))
             or requests(garden)[-1]["action"] == ["say", "Watering."], 30)

    # Sent again under a new call id (a retry): the same words are one delivery.
    serve.prompt(shop, script("Tell the garden again", [
        tool("sessions_send", session_id=garden, message="Weed the path."),
        tool("sessions_send", session_id=garden, message="Weed the path."),
    ]))
    first, again = ([""] * 2 + tool_results(shop, "sessions_send"))[-2:]
    check(first.startswith(f"accepted for {garden}")
          and again.split("\n")[0] == first.split("\n")[0],
          "a retry under a new call id is answered with the first acceptance (its id)", again)
    wait_for(lambda: frames_in(garden, "Weed the path."), 30)
    time.sleep(1.5)
    check(frames_in(garden, "Weed the path.") == 1, "the retried message reaches the model once")

    # A steer while the target's turn runs goes into that turn, at its next request.
    serve.prompt_async(garden, script("Dig", [
        {"tool": "bash", "input": {"command": "sleep 3", "description": "dig"}},
        {"say": "Dug."}]))
    wait_for(lambda: requests(garden)[-1]["action"][0] == "call", 30)
    serve.prompt(shop, script("Interrupt the garden", [
        tool("sessions_send", session_id=garden, mode="steer", message="Mind the roots."),
    ]))
    into = wait_for(lambda: [r for r in requests(garden)
                             if any("Mind the roots." in t for t in texts_seen(r))], 30)
    steered = bool(into) and any(m.get("role") == "tool" and "sleep" not in str(m)
                                 for m in into[0]["request"]["messages"][-3:])
    check(steered and into[0]["action"] == ["say", "Dug."],
          "a steer reaches the running turn's next model request, after its tool step",
          into[0]["request"]["messages"][-3:] if into else "no request had it")

    # A subagent is listed under its session and takes no message.
    serve.prompt(shop, script("Ask a helper", [
        {"tool": "task", "input": {"description": "count the pots", "subagent_type": "general",
                                   "prompt": script("Count the pots", [{"say": "Four pots."}])}},
        tool("sessions_list", scope="subagents"),
    ]))
    subagents = (tool_results(shop, "sessions_list") or [""])[-1]
    child = re.search(r"- (ses_[A-Za-z0-9]+) \[[a-z]+, subagent\].*\| owner=" + re.escape(shop), subagents)
    check(bool(child), "a subagent is listed as its session's", subagents)
    if child:
        serve.prompt(shop, script("Message the helper", [
            tool("sessions_send", session_id=child.group(1), message="Hello?")]))
        refused = (tool_results(shop, "sessions_send") or [""])[-1]
        check("not-messageable" in refused or "has no inbox" in refused,
              "a send to a subagent is refused, naming where to send", refused)

    # A cold session: the message waits, then its next prompt gets it.
    serve.prompt(shop, script("Leave a note", [
        tool("sessions_send", session_id=notes, message="Order more seeds."),
        tool("sessions_read", session_id=notes),
    ]))
    waiting = (tool_results(shop, "sessions_read") or [""])[-1]
    check("your messages to it: 1 waiting" in waiting,
          "a message for a session nobody has open waits", waiting)
    run(script("Back to the notes", [{"say": "Seeds noted."}]), folder("notes"), session=notes)
    check(frames_in(notes, "Order more seeds.") == 1,
          "its next prompt hands it over, framed, once")
    serve.prompt(shop, script("Check the note", [tool("sessions_read", session_id=notes)]))
    read = (tool_results(shop, "sessions_read") or [""])[-1]
    check("your messages to it: 1 handed over" in read and FRAME in read,
          "the sender's read then says handed over, and shows the frame on the surface", read)


def screen(name):
    return subprocess.run(["tmux", "capture-pane", "-p", "-t", name], capture_output=True,
                          text=True).stdout


def interactive(notes):
    """A person's OpenCode (the TUI, in tmux): the tools in its first session, and a
    message from another session handed to it at once while it sits idle, shown on
    their screen as a new turn."""
    name = "st-opencode"
    cwd = folder("desk")
    variables = " ".join(f"{key}='{value}'" for key, value in env(cwd).items())
    subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)
    subprocess.run(["tmux", "new-session", "-d", "-s", name, "-x", "160", "-y", "45",
                    f"cd '{cwd}' && exec env -i {variables} TERM=xterm-256color '{OPENCODE}'"],
                   check=True)
    try:
        if not check(bool(wait_for(lambda: "Ask anything" in screen(name), 60)),
                     "the OpenCode TUI starts", screen(name)):
            return
        prompt = "Who else is here @script " + json.dumps([tool("sessions_list")])
        subprocess.run(["tmux", "send-keys", "-t", name, "-l", prompt], check=True)
        time.sleep(0.3)
        subprocess.run(["tmux", "send-keys", "-t", name, "Enter"], check=True)
        mine = wait_for(lambda: [r["session"] for r in requests()
                                 if any("Who else is here" in t for t in texts_seen(r))
                                 and r.get("action", [""])[0] == "say"], 60)
        if not check(bool(mine), "the first session of a person's OpenCode uses the tools",
                     screen(name)):
            return
        desk = mine[0]
        listing = (tool_results(desk, "sessions_list") or [""])[-1]
        check(f"- {desk} [live, top-level]" in listing and listing.count("| this session") == 1
              and f"- {notes} [" in listing,
              "its listing names it as the caller, live, beside the others", listing)
        run(script("Write to the desk", [
            tool("sessions_send", session_id=desk, message="Lunch is ready.\n"
                 + endpoint.SCRIPT_MARK + json.dumps([{"say": "Coming to lunch."}]))]),
            folder("notes"), session=notes)
        shown = wait_for(lambda: "Coming to lunch." in screen(name), 30)
        check(bool(shown) and frames_in(desk, "Lunch is ready.") == 1,
              "a message for the idle TUI session starts its turn at once, on the person's screen",
              screen(name))
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)
        wait_for(lambda: not any((STATE / "live").glob("*")), 10)


def woken(notes):
    """A deployment that lets the host wake a cold session (`--opencode-wake-command`):
    a send to it starts `opencode run --session …` at once, whose prompt the plugin adds
    the message to."""
    import sqlite3
    db = sqlite3.connect(f"file:{DB}?mode=ro", uri=True)
    shop = db.execute("SELECT id FROM session WHERE title = 'Fix the shop'").fetchone()[0]
    db.close()
    wake = f"'{OPENCODE}' run --session {{id}} 'A message from another session is waiting.'"
    message = "The frost is coming.\n" + endpoint.SCRIPT_MARK + json.dumps([{"say": "Covering the beds."}])
    sent = subprocess.run(
        [HOST_SHIM, "call", "sessions_send", json.dumps({"session_id": notes, "message": message}),
         "--caller", shop, "--call-id", "wake-1", "--opencode-db", str(DB),
         "--opencode-wake-command", wake, "--state-dir", str(STATE)],
        env=env(WORK), capture_output=True, text=True, timeout=60)
    check(sent.returncode == 0 and wake_started(sent.stdout),
          "a send to a cold session starts its wake command and says the message waits",
          sent.stdout + sent.stderr)
    handed = wait_for(lambda: frames_in(notes, "The frost is coming."), 60)
    check(handed == 1, "the woken OpenCode's prompt carries the message, once", handed)
    wait_for(lambda: not any((STATE / "live").glob("*")), 30)


def three_harnesses(notes):
    """OpenCode, Claude Code and Codex on one machine (each pinned real binary with its
    own scripted endpoint), each set up by `host-shim setup`, which links every harness
    it finds: one listing holds all three, and a message each way between OpenCode and
    each of the others is handed over once by the target's own harness."""
    claude_bin = binary_of("claude-code", "claude")
    codex_bin = binary_of("codex", "codex")
    if not check(claude_bin.exists() and codex_bin.exists(),
                 "the pinned Claude Code and Codex are installed (npm ci in host-shim/harnesses/claude-code/suite, host-shim/harnesses/codex/suite)"):
        return
    claude_endpoint = endpoint_of("claude-code")
    codex_endpoint = endpoint_of("codex")
    claude_log, codex_log = WORK / "claude-endpoint.jsonl", WORK / "codex-endpoint.jsonl"
    claude_server = claude_endpoint.start(str(claude_log))
    codex_port = PORT + 10
    codex_server = codex_endpoint.serve(codex_port, str(codex_log))
    codex_home = HOME / ".codex"
    codex_home.mkdir()
    (codex_home / "config.toml").write_text(codex_endpoint.codex_config(codex_port))
    (HOME / ".claude" / "projects").mkdir(parents=True)
    base = env(WORK)
    claude_env = dict(base, ANTHROPIC_BASE_URL=f"http://127.0.0.1:{claude_server.server_port}",
                      ANTHROPIC_API_KEY="sk-scripted-endpoint", DISABLE_TELEMETRY="1",
                      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_AUTOUPDATER="1")
    codex_env = dict(base, CODEX_HOME=str(codex_home), SCRIPTED_API_KEY="scripted")
    for harness in ("claude", "codex", "opencode"):
        subprocess.run([HOST_SHIM, "setup", harness, "--state-dir", str(STATE)], env=base,
                       check=True, capture_output=True)
    try:
        linked(claude_bin, claude_env, claude_endpoint, claude_log, codex_bin, codex_env, notes)
    finally:
        claude_server.shutdown()
        codex_server.shutdown()


def linked(claude_bin, claude_env, claude_endpoint, claude_log, codex_bin, codex_env, notes):
    import uuid
    cwd = folder("greenhouse")

    def claude(args):
        done = subprocess.run([str(claude_bin), "-p", *args], env=dict(claude_env, PWD=str(cwd)),
                              cwd=cwd, capture_output=True, text=True, timeout=180)
        if done.returncode != 0:
            print(f"     claude exited {done.returncode}: {done.stderr[-800:]}")

    def claude_texts():
        return claude_endpoint.request_texts(claude_endpoint.last_request(claude_log))

    def codex(args):
        done = subprocess.run([str(codex_bin), "exec", "--dangerously-bypass-hook-trust",
                               "--skip-git-repo-check", *args], cwd=cwd,
                              env=dict(codex_env, PWD=str(cwd)), capture_output=True, text=True,
                              timeout=180)
        found = re.search(r"session id: ([0-9a-f-]{36})", done.stdout + done.stderr)
        if done.returncode != 0:
            print(f"     codex exited {done.returncode}: {(done.stdout + done.stderr)[-800:]}")
        return found.group(1) if found else None

    def codex_texts():
        lines = [json.loads(line) for line in (WORK / "codex-endpoint.jsonl").read_text().splitlines()]
        last = [r for r in lines if r.get("method") == "POST"][-1]["request"]
        return [p.get("text", "") for item in last.get("input", []) if item.get("type") == "message"
                for p in item.get("content") or [] if isinstance(p, dict)]

    claude_session = str(uuid.uuid4())
    claude(["--session-id", claude_session, "Plan the herbs\n" + claude_endpoint.SCRIPT_MARK + "[]"])
    thread = codex(["Tend the orchard\n" + endpoint.SCRIPT_MARK + "[]"])
    check(bool(thread), "a Codex thread starts with the linked set-up")

    # OpenCode lists all three harnesses and messages the other two.
    codex_tool = {"tool": "sessions_send", "input": {"session_id": thread,
                  "message": "From OpenCode: prune the apples."}}
    run(script("Reach the others", [
        tool("sessions_list"),
        tool("sessions_send", session_id=claude_session, message="From OpenCode: which herbs?"),
        codex_tool,
    ]), folder("notes"), session=notes)
    listing = (tool_results(notes, "sessions_list") or [""])[-1]
    check(f"- {claude_session} [" in listing and f"- {thread} [" in listing
          and f"- {notes} [live, top-level]" in listing,
          "one OpenCode listing holds the Claude Code session, the Codex thread and itself", listing)
    sent = tool_results(notes, "sessions_send")[-2:]
    check(len(sent) == 2 and all(s.startswith("accepted for ") for s in sent),
          "OpenCode's sends to Claude Code and Codex are accepted", sent)

    claude(["--resume", claude_session, "Any mail?\n" + claude_endpoint.SCRIPT_MARK + json.dumps([
        {"tool": "mcp__session-tools__sessions_send",
         "input": {"session_id": notes, "message": "From Claude Code: basil and thyme."}}])])
    seen = claude_texts()
    check(sum(t.count("From OpenCode: which herbs?") for t in seen) == 1
          and any(FRAME in t for t in seen),
          "Claude Code's hook hands OpenCode's message over once, framed")
    codex(["resume", thread, "Mail?\n" + endpoint.SCRIPT_MARK + json.dumps([
        {"tool": "sessions_send", "namespace": "mcp__session_tools",
         "input": {"session_id": notes, "message": "From Codex: apples pruned."}}])])
    seen = codex_texts()
    check(sum(t.count("From OpenCode: prune the apples.") for t in seen) == 1
          and any(t.startswith(FRAME) for t in seen),
          "Codex's hook hands OpenCode's message over once, framed")

    # Both answers wait for the OpenCode session's next prompt, and arrive once each.
    run(script("Back again", [{"say": "Noted."}]), folder("notes"), session=notes)
    check(frames_in(notes, "From Claude Code: basil and thyme.") == 1
          and frames_in(notes, "From Codex: apples pruned.") == 1,
          "OpenCode's plugin hands the Claude Code and Codex answers over once each")


if __name__ == "__main__":
    main()
