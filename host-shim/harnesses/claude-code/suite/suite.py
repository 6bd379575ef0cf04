"""The real Claude Code in the loop: the pinned `@anthropic-ai/claude-code` binary,
driven by the scripted Messages API endpoint in `endpoint.py`, set up exactly as the
host-shim/harnesses/claude-code/README.md tells a new user, on a fresh HOME.

Each check asserts what the model saw: the tool results and hook texts as they come
back to the endpoint in Claude Code's next request, once where once is promised.

    HOST_SHIM=target/debug/host-shim CLAUDE=host-shim/harnesses/claude-code/suite/node_modules/.bin/claude \
        python3 host-shim/harnesses/claude-code/suite/suite.py

Exits non-zero when any check fails, naming each.
"""

import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "tests"))
import claude_code_endpoint as endpoint  # noqa: E402
from suite_kit.real_client import FRAME, HOST_SHIM, ROOT  # noqa: E402
from suite_kit.real_client import client, folders  # noqa: E402
from suite_kit.real_client import check, finish, wake_started  # noqa: E402

CLAUDE = client("CLAUDE", "claude-code", "claude")
WORK, HOME, _, LOG = folders("claude-code")
TOOLS = "mcp__session-tools__"



# --- set-up, as host-shim/harnesses/claude-code/README.md tells a user -------------------------------------------


def environment(port):
    env = {
        "HOME": str(HOME),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}",
        "ANTHROPIC_API_KEY": "sk-scripted-endpoint",
        "DISABLE_TELEMETRY": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
    }
    return env


def set_up(env):
    """host-shim/harnesses/claude-code/README.md's set-up: `host-shim setup claude`, over a person's own settings
    (a permission of theirs, kept). Returns what a second run and a dry run of it said."""
    (HOME / ".claude").mkdir(parents=True, exist_ok=True)
    (HOME / ".claude" / "settings.json").write_text(
        json.dumps({"permissions": {"allow": ["Bash"]}}, indent=2))
    setup = [HOST_SHIM, "setup", "claude"]
    subprocess.run(setup, env=env, check=True, capture_output=True, cwd=HOME)
    again = subprocess.run(setup, env=env, check=True, capture_output=True, text=True, cwd=HOME)
    return again.stdout


def state_dir():
    return HOME / ".local" / "state" / "session-tools"


# --- driving sessions ---------------------------------------------------------------


def prompt(text, steps):
    return f"{text}\n{endpoint.SCRIPT_MARK}{json.dumps(steps)}"


def tool(name, **arguments):
    return {"tool": TOOLS + name, "input": arguments}


def claude(env, cwd, args, background=False):
    cwd.mkdir(parents=True, exist_ok=True)
    command = [CLAUDE, "-p", *args]
    if background:
        return subprocess.Popen(command, env=env, cwd=cwd, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
    done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, timeout=180)
    if done.returncode != 0:
        print(f"     claude {' '.join(args[:3])} exited {done.returncode}: {done.stderr[-800:]}")
    return done


def new_session(env, cwd, session, text, steps, background=False):
    return claude(env, cwd, ["--session-id", session, prompt(text, steps)], background)


def resume(env, cwd, session, text, steps=None, background=False):
    words = text if steps is None else prompt(text, steps)
    return claude(env, cwd, ["--resume", session, words], background)


# --- what the model saw --------------------------------------------------------------


def records():
    if not LOG.exists():
        return []
    return [json.loads(line) for line in LOG.read_text().splitlines() if line.strip()]


def texts_of(content):
    if isinstance(content, str):
        return [content]
    out = []
    for part in content or []:
        if part.get("type") == "text":
            out.append(part.get("text", ""))
        elif part.get("type") == "tool_result":
            out.extend(texts_of(part.get("content")))
    return out


def tool_calls(session=None):
    """Every tool call the scripted model made (in `session`, when given), in order,
    with the result Claude Code sent back: (name, input, text, is_error)."""
    all_records = records()
    issued = []
    for record in all_records:
        if session and record.get("session") != session:
            continue
        for block in (record.get("answer") or {}).get("content", []):
            if block.get("type") == "tool_use":
                issued.append(block)
    results = {}
    for record in all_records:
        for message in record["request"].get("messages", []):
            content = message.get("content")
            if not isinstance(content, list):
                continue
            for part in content:
                if part.get("type") == "tool_result":
                    results[part["tool_use_id"]] = (
                        "\n".join(texts_of(part.get("content"))), bool(part.get("is_error")))
    calls = []
    for block in issued:
        if block["name"] == "ToolSearch":
            continue
        text, is_error = results.get(block["id"], (None, None))
        calls.append((block["name"].removeprefix(TOOLS), block["input"], text, is_error))
    return calls


def last_request(session):
    mine = [r for r in records() if r.get("session") == session and "count_tokens" not in r["path"]]
    return mine[-1]["request"] if mine else {"messages": []}


def seen_texts(request):
    """Every text the model was given in one request, with its role."""
    out = []
    for message in request.get("messages", []):
        for text in texts_of(message.get("content")):
            out.append((message.get("role"), text))
    return out


def occurrences(session, marker):
    return sum(text.count(marker) for _, text in seen_texts(last_request(session)))


def spooled(session):
    """Messages of `session` in the state folder: waiting and handed over."""
    found = []
    for kind in ("inbox", "handed"):
        folder = state_dir() / kind / session
        if folder.is_dir():
            for entry in folder.iterdir():
                found.append((kind, json.loads(entry.read_text())))
    return found


def live_files():
    folder = state_dir() / "live"
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


def wait_for(condition, seconds):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if condition():
            return True
        time.sleep(0.2)
    return condition()


class Pane:
    """An interactive Claude Code session in a tmux pane (a terminal of its own)."""

    def __init__(self, name):
        self.name = name

    def screen(self):
        done = subprocess.run(["tmux", "capture-pane", "-p", "-t", self.name],
                              capture_output=True, text=True)
        return done.stdout

    def keys(self, *keys):
        subprocess.run(["tmux", "send-keys", "-t", self.name, *keys], check=True)

    def type(self, text):
        self.keys("-l", text)
        time.sleep(0.3)
        self.keys("Enter")

    def close(self):
        subprocess.run(["tmux", "kill-session", "-t", self.name], capture_output=True)


def tmux_session(name, *args):
    """A detached tmux session `name` running what `args` say. Tried again when it met
    the tmux server ending: the session killed a moment before was its last, and a
    server with no session exits ("server exited unexpectedly")."""
    for _ in range(3):
        done = subprocess.run(["tmux", "new-session", "-d", "-s", name, *args],
                              capture_output=True, text=True)
        if done.returncode == 0:
            return
        time.sleep(0.5)
    raise SystemExit(f"tmux new-session {name} failed: {done.stderr.strip()}")


def interactive(env, cwd, session, extra=()):
    """Starts `claude` in a terminal, past the first-run questions a person answers
    once (the theme, trusting the folder, using the API key)."""
    cwd.mkdir(parents=True, exist_ok=True)
    config_path = HOME / ".claude.json"
    config = json.loads(config_path.read_text()) if config_path.exists() else {}
    config["hasCompletedOnboarding"] = True
    config.setdefault("projects", {}).setdefault(str(cwd), {})["hasTrustDialogAccepted"] = True
    config_path.write_text(json.dumps(config))
    name = f"cc-{session[:8]}"
    words = ["env", *(f"{k}={v}" for k, v in env.items()), CLAUDE, "--session-id", session,
             *extra]
    tmux_session(name, "-x", "200", "-y", "50", "-c", str(cwd),
                 " ".join(shlex.quote(w) for w in words))
    pane = Pane(name)
    if wait_for(lambda: "Do you want to use this API key" in pane.screen()
                or "❯" in pane.screen(), 30) and "API key" in pane.screen():
        pane.keys("Up")
        time.sleep(0.3)
        pane.keys("Enter")
    wait_for(lambda: "API key" not in pane.screen() and "❯" in pane.screen(), 30)
    return pane


def bytes_after_last_assistant(transcript):
    data = transcript.read_bytes()
    position, last = 0, 0
    for line in data.split(b"\n"):
        if line.strip() and json.loads(line).get("type") == "assistant":
            last = position + len(line) + 1
        position += len(line) + 1
    return len(data) - last


def recorded_times(session, message_id):
    """How many records of `session`'s transcript gave its model the frame with this
    message id: a hook's context, or a user message (a Stop hook's feedback, the
    messaging socket). The rendered copy inside a record is the same record."""
    times = 0
    for transcript in (HOME / ".claude" / "projects").glob(f"*/{session}.jsonl"):
        for line in transcript.read_text().splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            attachment = record.get("attachment") or {}
            if record.get("type") == "attachment" and attachment.get("type") == "hook_additional_context":
                texts = attachment.get("content") or []
            elif record.get("type") == "user":
                content = (record.get("message") or {}).get("content")
                texts = [content] if isinstance(content, str) else [
                    p.get("text") for p in content or [] if p.get("type") == "text"]
            else:
                continue
            if any(f"\nmessage-id: {message_id}\n" in (t or "") for t in texts):
                times += 1
    return times


def host_shim_call(tool_name, arguments, caller, extra=(), env=None):
    done = subprocess.run(
        [HOST_SHIM, "call", tool_name, json.dumps(arguments), "--claude-projects",
         str(HOME / ".claude" / "projects"), "--caller", caller, "--state-dir", str(state_dir()),
         *extra],
        capture_output=True, text=True, timeout=60, env=env,
    )
    return done.stdout + done.stderr


# --- the checks ----------------------------------------------------------------------


def main():
    shutil.rmtree(WORK, ignore_errors=True)
    HOME.mkdir(parents=True)
    server = endpoint.start(str(LOG))
    env = environment(server.server_port)
    version = subprocess.run([CLAUDE, "--version"], env=env, capture_output=True, text=True)
    print(f"Claude Code {version.stdout.strip()}, scripted endpoint on port {server.server_port}")
    setup_again = set_up(env)

    garden, notes = HOME / "garden", HOME / "notes"
    a, b = str(uuid.uuid4()), str(uuid.uuid4())

    # 1. A new install: no projects folder yet, and the server still starts.
    listed = subprocess.run([CLAUDE, "mcp", "list"], env=env, cwd=HOME, capture_output=True,
                            text=True, timeout=60)
    check("session-tools" in listed.stdout and "Connected" in listed.stdout,
          "fresh install: claude mcp list shows the server connected", listed.stdout + listed.stderr)
    check("nothing changed" in setup_again, "host-shim setup claude twice changes nothing",
          setup_again)
    settings = json.loads((HOME / ".claude" / "settings.json").read_text())
    check(settings["permissions"]["allow"] == ["Bash", "mcp__session-tools"],
          "setup keeps the person's own permission beside its own", settings["permissions"])
    check(live_files() == [], "a claude mcp list probe registers no live session", live_files())

    # The first session on the machine has the tools, allowed by the line host-shim/harnesses/claude-code/README.md gives.
    new_session(env, garden, a, "Plan the vegetable garden beds",
                [tool("sessions_list", scope="all")])
    calls = tool_calls(a)
    first = calls[0] if calls else (None, None, None, None)
    check(first[2] is not None and f"- {a} [" in first[2] and "| this session" in first[2]
          and not first[3],
          "the first session lists itself through the tools", first)
    check(first[2] is not None and "haven't granted" not in first[2],
          "permissions.allow lets the model use the tools", first)

    # The person's live view (`host-shim watch`), in a terminal of its own from here on.
    subprocess.run(["tmux", "kill-session", "-t", "st-watch"], capture_output=True)
    watch_words = [HOST_SHIM, "watch", "--claude-projects", str(HOME / ".claude" / "projects"),
                   "--state-dir", str(state_dir())]
    tmux_session("st-watch", "-x", "220", "-y", "40",
                 " ".join(shlex.quote(w) for w in watch_words))
    watch = Pane("st-watch")

    # 2. Another session lists, reads and messages the first.
    body = "hello garden, from the notes session"
    new_session(env, notes, b, "Collect notes on the garden plan", [
        tool("sessions_list", scope="all"),
        tool("sessions_read", session_id=a),
        tool("sessions_send", session_id=a, message=body),
        tool("sessions_send", session_id=a, message=body),
    ])
    calls = tool_calls(b)
    names = [c[0] for c in calls]
    check(names == ["sessions_list", "sessions_read", "sessions_send", "sessions_send"],
          "the scripted model made the four calls", names)
    if len(calls) == 4:
        listing, read, sent, again = calls
        check(f"- {a} [" in listing[2] and "Plan the vegetable garden beds" in listing[2]
              and "preset=claude-opus-5-5" in listing[2],
              "the listing shows the other session with its title and preset", listing[2])
        check(f"session {a} [" in read[2] and "Plan the vegetable garden beds" in read[2]
              and "<system-reminder>" not in read[2],
              "a read shows the person's prompt and no injected reminder", read[2])
        check(sent[2].startswith(f"accepted for {a} | mode=queue"), "the send is accepted", sent[2])
        check(again[2] == sent[2], "a retry with a new tool-use id reads the same acceptance",
              (sent[2], again[2]))
    check(len(spooled(a)) == 1, "the retried body is delivered once (one message spooled)",
          spooled(a))
    line = f"{b} -> {a}  queue hop=1"
    check(wait_for(lambda: any(line in l and "waiting" in l for l in watch.screen().splitlines()), 1),
          "host-shim watch shows the message waiting within a second of its acceptance",
          watch.screen())

    # 3. Resumed, the target gets the message at SessionStart, once, as context.
    resume(env, garden, a, "Back to the beds", [])
    check(occurrences(a, body) == 1, "the queued message is handed over once at SessionStart",
          [t for t in seen_texts(last_request(a)) if body in t[1]])
    # Settled once Claude Code's transcript shows the frame: at the Stop hook, or by the
    # session's server a moment later when Claude Code wrote the line after that hook
    # read the file (seen once in CI: handed over 245 ms after the Stop hook's summary).
    check(wait_for(lambda: all(kind == "handed" for kind, _ in spooled(a)), 3),
          "and it left the inbox", spooled(a))
    check(wait_for(lambda: any(line in l and "handed over after" in l
                               for l in watch.screen().splitlines()), 1),
          "host-shim watch shows it handed over within a second of the hand-over",
          watch.screen())
    watch.keys("q")
    surface = host_shim_call("sessions_read", {"session_id": a}, b)
    check(f"--- user (seq" in surface and FRAME in surface and body in surface
          and "harness-injected" not in surface,
          "the handed-over message is on the target's surface as the frame, not injected", surface)

    # 4. A running session: a queue message handed over at Stop, shown once, no error.
    stop_body = "stop-handover: please water the beds"
    running = resume(env, garden, a, "Measure the beds",
                     [{"tool": "Bash", "input": {"command": "sleep 4", "description": "wait"}}],
                     background=True)
    time.sleep(2)
    sent = host_shim_call("sessions_send", {"session_id": a, "message": stop_body}, b)
    running.wait(timeout=120)
    check(sent.startswith(f"accepted for {a}"), "a send to the running session is accepted", sent)
    seen = seen_texts(last_request(a))
    check(occurrences(a, stop_body) == 1, "the Stop hook hands it over once",
          [t for t in seen if stop_body in t[1]])
    check(not any("blocking error" in t for _, t in seen),
          "the hand-over at Stop is not shown as a hook error",
          [t for t in seen if "blocking error" in t[1]])

    # 5. A steer during a long tool call, handed over at PostToolUse.
    steer_body = "steer: use the north bed first"
    running = resume(env, garden, a, "Dig the beds",
                     [{"tool": "Bash", "input": {"command": "sleep 4", "description": "dig"}},
                      {"say": "dug"}],
                     background=True)
    time.sleep(2)
    sent = host_shim_call("sessions_send", {"session_id": a, "message": steer_body,
                                            "mode": "steer"}, b)
    running.wait(timeout=120)
    check(sent.startswith(f"accepted for {a} | mode=steer"), "a steer is accepted", sent)
    after_tool = [r for r in records() if r.get("session") == a
                  and any(steer_body in t for _, t in seen_texts(r["request"]))]
    check(bool(after_tool) and (after_tool[0].get("answer") or {}).get("content", [{}])[0].get("text") == "dug",
          "the steer reaches the model in the running turn, right after the tool call",
          [r.get("answer") for r in after_tool[:1]])
    check(occurrences(a, steer_body) == 1, "the steer is shown once",
          [t for t in seen_texts(last_request(a)) if steer_body in t[1]])

    # 6. A subagent written by Claude Code's own Agent tool: its calls are its own.
    sub_steps = [tool("sessions_list", scope="all")]
    resume(env, garden, a, "Delegate a survey", [
        {"tool": "Agent", "input": {"description": "survey sessions",
                                    "prompt": prompt("Survey the sessions", sub_steps),
                                    "subagent_type": "general-purpose",
                                    "run_in_background": False}},
    ])
    calls = [c for c in tool_calls(a) if c[0] == "sessions_list"]
    sub_listing = calls[-1][2] if calls else None
    agent_rows = [line for line in (sub_listing or "").splitlines() if line.startswith("- agent-")]
    check(bool(agent_rows) and "| this session" in agent_rows[0]
          and f"- {a} [live, top-level] | cwd={garden} | preset=claude-opus-5-5\n" in sub_listing + "\n",
          "a subagent's listing marks the subagent, not its parent, as this session", sub_listing)
    agent_id = agent_rows[0][2:].split(" ")[0] if agent_rows else "agent-none"
    refused = host_shim_call("sessions_send", {"session_id": agent_id, "message": "hi"}, b)
    check("not-messageable" in refused and a in refused,
          "a subagent is listed and not messageable, naming its parent", refused)

    # 7. A transcript appended while it is read and messaged.
    transcript = next((HOME / ".claude" / "projects").glob(f"*/{a}.jsonl"))
    line = next(l for l in transcript.read_text().splitlines() if '"type":"last-prompt"' in l
                or '"type": "last-prompt"' in l) + "\n"
    stop = threading.Event()

    def append():
        with open(transcript, "a") as out:
            while not stop.is_set():
                out.write(line[: len(line) // 2])
                out.flush()
                time.sleep(0.0005)
                out.write(line[len(line) // 2:])
                out.flush()
                time.sleep(0.0005)

    writer = threading.Thread(target=append)
    writer.start()
    answers = []
    try:
        for n in range(10):
            answers.append(host_shim_call("sessions_read", {"session_id": a, "max_messages": 2}, b))
            answers.append(host_shim_call("sessions_send",
                                          {"session_id": a, "message": f"while written {n}"}, b))
    finally:
        stop.set()
        writer.join()
    bad = [x for x in answers if "not-found" in x or "(untitled)" in x or "error" in x]
    check(not bad, "a transcript being written is always found (10 reads, 10 sends)", bad[:2])
    resume(env, garden, a, "Read the messages", [])  # hands them over

    # 8. /compact: the command's wrappers are not the person's words; the row keeps its
    # preset.
    # Compacted until the model's last record lies more than 64 KiB from the end
    # (each /compact leaves reminders and listings, and no assistant record, after it).
    for _ in range(12):
        resume(env, garden, a, "/compact")
        if bytes_after_last_assistant(transcript) > 80_000:
            break
    surface = host_shim_call("sessions_read", {"session_id": a}, b)
    leaked = [w for w in ("<local-command-caveat>", "<command-name>", "Compacted")
              if w in surface]
    check(not leaked, "after /compact a read shows no command wrappers as the person's", surface)
    check("replaced" in surface, "after /compact the summary is on the surface, replaced", surface)
    listing = host_shim_call("sessions_list", {"scope": "all"}, b)
    row = next((l for l in listing.splitlines() if l.startswith(f"- {a} ")), "")
    check("preset=claude-opus-5-5" in row, "after /compact the row keeps its preset", listing)

    # 9a. Two sessions at once, each with its own server, messaging each other while
    # both run.
    left, right = str(uuid.uuid4()), str(uuid.uuid4())
    new_session(env, HOME / "left", left, "Left bank", [])
    new_session(env, HOME / "right", right, "Right bank", [])
    runs = [
        resume(env, HOME / "left", left, "Talk to the right bank", [
            tool("sessions_send", session_id=right, message="from the left bank"),
            {"tool": "Bash", "input": {"command": "sleep 3", "description": "wait"}},
        ], background=True),
        resume(env, HOME / "right", right, "Talk to the left bank", [
            tool("sessions_send", session_id=left, message="from the right bank"),
            {"tool": "Bash", "input": {"command": "sleep 3", "description": "wait"}},
        ], background=True),
    ]
    for run in runs:
        run.wait(timeout=120)
    for me, other, words in ((left, right, "from the right bank"),
                             (right, left, "from the left bank")):
        sends = [c for c in tool_calls(me) if c[0] == "sessions_send"]
        check(bool(sends) and sends[-1][2].startswith(f"accepted for {other}"),
              "two servers at once: each session's send is accepted", sends)
        check(occurrences(me, words) == 1, "two servers at once: each message handed over once",
              [t for t in seen_texts(last_request(me)) if words in t[1]])

    # 9c. A chain (contract 0.3.0): X's person asks it to message Y; the message's words
    # carry a script, so Y's model, once its Stop hook hands the frame over, answers X
    # with a send of its own. Y's frame is on its surface with no person's message
    # after it, so Y's send is hop 2; X's, started by a person, was hop 1.
    x, y = str(uuid.uuid4()), str(uuid.uuid4())
    new_session(env, HOME / "left", x, "Chain start", [])
    new_session(env, HOME / "right", y, "Chain middle", [])
    answer_back = json.dumps([tool("sessions_send", session_id=x, message="chain reply")])
    waiting_y = resume(env, HOME / "right", y, "Wait a little", [
        {"tool": "Bash", "input": {"command": "sleep 5", "description": "wait"}},
    ], background=True)
    time.sleep(1)
    resume(env, HOME / "left", x, "Ask the middle to answer", [
        tool("sessions_send", session_id=y,
             message=f"please answer\n{endpoint.SCRIPT_MARK}{answer_back}"),
    ])
    waiting_y.wait(timeout=120)
    first = [c for c in tool_calls(x) if c[0] == "sessions_send"]
    reply = [c for c in tool_calls(y) if c[0] == "sessions_send"]
    check(bool(first) and (first[-1][2] or "").startswith(f"accepted for {y} | mode=queue")
          and "| hop=1" in (first[-1][2] or ""),
          "a send a person started is hop 1", first)
    check(bool(reply) and (reply[-1][2] or "").startswith(f"accepted for {x} | mode=queue")
          and "| hop=2" in (reply[-1][2] or ""),
          "a reply to a handed-over message is hop 2 (the chain is read off the real transcript)",
          reply)

    # 9b. A closed session woken by --wake-command with a real `claude --resume`.
    closed = str(uuid.uuid4())
    new_session(env, HOME / "shed", closed, "Sort the tools in the shed", [])
    wake_body = "wake: the shed key is under the mat"
    wake = f"{CLAUDE} -p --resume {{id}} 'A cross-session message is waiting for you.'"
    sent = host_shim_call("sessions_send", {"session_id": closed, "message": wake_body}, b,
                          ["--wake-command", wake], env)
    check(sent.startswith(f"accepted for {closed}") and wake_started(sent),
          "a send to a closed session starts the wake command and says the message waits", sent)
    check(wait_for(lambda: occurrences(closed, wake_body) == 1, 60),
          "the woken session gets the message once, at its SessionStart",
          [t for t in seen_texts(last_request(closed)) if wake_body in t[1]])
    wait_for(lambda: not any(p for p in live_files()), 30)

    # 9c. An open, idle interactive session gets a message without a person: its own
    # server hands it over through Claude Code's messaging socket.
    if shutil.which("tmux"):
        idle_session = str(uuid.uuid4())
        idle_body = "idle-wake: are the seedlings in?"
        pane = interactive(env, HOME / "greenhouse", idle_session)
        try:
            pane.type("Wait for news")
            waited = wait_for(lambda: (state_dir() / "idle" / idle_session).exists(), 60)
            check(waited, "an interactive session is idle after its turn (its Stop hook)",
                  pane.screen())
            sent = host_shim_call("sessions_send", {"session_id": idle_session,
                                                    "message": idle_body}, b)
            check(sent.startswith(f"accepted for {idle_session}"), "a send to it is accepted",
                  sent)
            woke = wait_for(lambda: occurrences(idle_session, idle_body) > 0, 60)
            seen = [t for t in seen_texts(last_request(idle_session)) if idle_body in t[1]]
            check(woke and occurrences(idle_session, idle_body) == 1
                  and seen[0][1].startswith("Another Claude session sent a message:\n" + FRAME),
                  "the idle session runs a turn with the message, shown once", seen or pane.screen())
            surface = host_shim_call("sessions_read", {"session_id": idle_session}, b)
            check(FRAME in surface and idle_body in surface and "harness-injected" not in surface,
                  "the socket's hand-over is on its surface as the frame", surface)
        finally:
            pane.close()
        # 9d. A session that set nothing up (no server of ours, no hooks: user settings
        # and MCP servers left out) is still reached: Claude Code's own registry lists it
        # running, and its messaging socket takes the message from the host as from a
        # peer session of this user's (its peer token, beside the registry).
        bare = str(uuid.uuid4())
        bare_body = "bare-session: the shed key is under the mat"
        pane = interactive(env, HOME / "shed", bare,
                           extra=["--strict-mcp-config", "--setting-sources", "project"])
        try:
            pane.type("Tidy the shed")

            def registry_idle():
                for record in (HOME / ".claude" / "sessions").glob("*.json"):
                    data = json.loads(record.read_text())
                    if data.get("sessionId") == bare and data.get("status") == "idle":
                        return True
                return False

            idle = wait_for(lambda: occurrences(bare, "Tidy the shed") > 0 and registry_idle(), 60)
            check(idle, "a session with nothing of ours set up runs and goes idle", pane.screen())
            listing = host_shim_call("sessions_list", {"scope": "all"}, b)
            check(f"- {bare} [live, top-level]" in listing,
                  "it is listed live, from Claude Code's own registry", listing)
            sent = host_shim_call("sessions_send", {"session_id": bare, "message": bare_body}, b)
            check(sent.startswith(f"accepted for {bare}") and "handed to that session" in sent,
                  "a send to it is handed over at once through its own socket", sent)
            woke = wait_for(lambda: occurrences(bare, bare_body) > 0, 60)
            seen = [t for t in seen_texts(last_request(bare)) if bare_body in t[1]]
            check(woke and occurrences(bare, bare_body) == 1
                  and seen[0][1].startswith("Another Claude session sent a message:\n" + FRAME),
                  "it runs a turn with the message, framed, once", seen or pane.screen())
            registered = [(state_dir() / "live" / name).read_text() for name in live_files()]
            check(not any(bare in text for text in registered)
                  and not (state_dir() / "idle" / bare).exists(),
                  "no server or hook of ours ran for it", registered)
        finally:
            pane.close()
    else:
        check(False, "tmux is installed (the idle-session check drives an interactive session)")

    # 12. Contract 0.4.0, with the real client: an ask answered within
    # await_reply_seconds, a message held for its person and released, one refused, and
    # a chatty sender capped.
    asker, answerer = str(uuid.uuid4()), str(uuid.uuid4())
    new_session(env, HOME / "left", asker, "Asker", [])
    new_session(env, HOME / "right", answerer, "Answerer", [])
    reply_words = "ask reply: the beds are watered"
    reply_back = json.dumps([tool("sessions_send", reply_to="$newest-message-id",
                                  message=reply_words)])
    busy = resume(env, HOME / "right", answerer, "Wait a little", [
        {"tool": "Bash", "input": {"command": "sleep 5", "description": "wait"}},
    ], background=True)
    time.sleep(1)
    resume(env, HOME / "left", asker, "Ask the answerer and wait for the answer", [
        tool("sessions_send", session_id=answerer, await_reply_seconds=90,
             message=f"are the beds watered?\n{endpoint.SCRIPT_MARK}{reply_back}"),
    ])
    busy.wait(timeout=120)
    asks = [c for c in tool_calls(asker) if c[0] == "sessions_send"]
    asked = (asks[-1][2] or "") if asks else ""
    check(asked.startswith(f"accepted for {answerer} | mode=queue | chars=")
          and f"\nreply from {answerer} (hop 2):\n{reply_words}" in asked,
          "an ask is answered within await_reply_seconds: the reply is in the send's own result",
          asked)
    replies = [c for c in tool_calls(answerer) if c[0] == "sessions_send"]
    check(bool(replies) and (replies[-1][2] or "").startswith(f"accepted for {asker} | mode=queue")
          and replies[-1][1].get("reply_to", "").startswith("m-")
          and "session_id" not in replies[-1][1],
          "the answer named only the message it answers (reply_to), not its target", replies)
    resume(env, HOME / "left", asker, "Anything new?", [])
    seen = [t for _, t in seen_texts(last_request(asker)) if reply_words in t]
    check(sum(t.startswith("accepted for") for t in seen) == 1
          and not any(FRAME in t for t in seen),
          "the awaited reply counts as handed over: no hook hands it over again", seen)


    def inbound(session, policy):
        done = subprocess.run([HOST_SHIM, "inbound", session, policy, "--state-dir",
                               str(state_dir())], capture_output=True, text=True, timeout=30)
        return done.stdout + done.stderr

    held, refusing, target = str(uuid.uuid4()), str(uuid.uuid4()), str(uuid.uuid4())
    for session, words in ((held, "Deep work"), (refusing, "Do not disturb"),
                           (target, "A quiet bed")):
        new_session(env, HOME / "shed", session, words, [])
    said = inbound(held, "hold") + inbound(refusing, "refuse")
    held_words = "held: the seedlings are in"
    resume(env, notes, b, "Tell the others", [
        tool("sessions_send", session_id=held, message=held_words),
        tool("sessions_send", session_id=refusing, message="refused: hello?"),
        tool("sessions_list"),
    ])
    sends = [c for c in tool_calls(b) if c[0] == "sessions_send"][-2:]
    check(len(sends) == 2 and "The person using that session holds incoming messages"
          in (sends[0][2] or "") and not sends[0][3],
          "a send to a held session is accepted and says it is held", (said, sends))
    check(len(sends) == 2 and (sends[1][2] or "").startswith(
              f"sessions_send refused (refused-by-target): the person using {refusing}")
          and sends[1][3] is True and not [m for m in spooled(refusing)],
          "a send to a refusing session is refused-by-target (isError) and delivers nothing",
          sends)
    rows = [c for c in tool_calls(b) if c[0] == "sessions_list"][-1:]
    listing = rows[0][2] if rows else ""
    check(any(l.startswith(f"- {held} ") and l.endswith("| inbound=hold") for l in listing.splitlines())
          and any(l.startswith(f"- {refusing} ") and l.endswith("| inbound=refuse")
                  for l in listing.splitlines()),
          "the listing shows what each person lets in", listing)
    resume(env, HOME / "shed", held, "Any news?", [])
    check(occurrences(held, held_words) == 0, "a held message is not handed over",
          [t for t in seen_texts(last_request(held)) if held_words in t[1]])
    released = inbound(held, "accept")
    resume(env, HOME / "shed", held, "And now?", [])
    check("released: 1 message" in released and occurrences(held, held_words) == 1,
          "released by the person (host-shim inbound accept), it is handed over once",
          (released, [t for t in seen_texts(last_request(held)) if held_words in t[1]]))

    chatty = str(uuid.uuid4())
    new_session(env, HOME / "shed", chatty, "Chatty", [
        tool("sessions_send", session_id=target, message=f"note {n}") for n in range(21)
    ])
    notes_sent = [c for c in tool_calls(chatty) if c[0] == "sessions_send"]
    capped = (notes_sent[-1][2] or "") if notes_sent else ""
    check(len(notes_sent) == 21 and all((c[2] or "").startswith("accepted") for c in notes_sent[:20])
          and capped.startswith(
              f"sessions_send refused (rate-limited): you sent 20 messages to {target} in the last "
              "60 minutes, and this deployment allows 20 (maxSendsPerTarget).")
          and notes_sent[-1][3] is True,
          "a chatty sender is capped at the 21st send to one session (maxSendsPerTarget)", capped)
    check(len(spooled(target)) == 20, "the capped send delivered nothing", len(spooled(target)))
    did = host_shim_call("sessions_read", {"session_id": chatty, "include_actions": True,
                                           "max_messages": 100}, b)
    check(f"\n[action] mcp__session-tools__sessions_send: note 0 (ok)" in did
          and f"\n[action] mcp__session-tools__sessions_send: note 20 (error)" in did,
          "include_actions shows what the real session did, one line per call, its status "
          "from the real tool result", did[-3000:])

    # 10. Each message a hook or the socket gave is in its target's own transcript exactly
    # once: the hand-over was an offer until the next hook found it there (host-shim log
    # says offered, then handed-over), and nothing was offered again. (A reply an
    # awaiting sender took is handed over in that sender's own call's answer.)
    # An offer whose session ran no hook since (it ended after that turn) is settled by
    # the next read of the session: its sender's.
    for offer in (state_dir() / "inbox").glob("*/*.json~*"):
        message = json.loads(offer.read_text())
        read = host_shim_call("sessions_read", {"session_id": message["target"]}, message["sender"])
        check("handed over" in read.splitlines()[3] and not offer.exists(),
              "an offer its session's transcript shows is handed over at the next read of it",
              read.splitlines()[:4])
    log = subprocess.run([os.environ["HOST_SHIM"], "log", "--json", "--state-dir",
                          str(state_dir())], capture_output=True, text=True, timeout=60)
    logged = [json.loads(line) for line in log.stdout.splitlines()]
    events = [r["event"] for r in logged]
    offered = {r["sha256"] for r in logged if r["event"] == "offered"}
    handed = [json.loads(f.read_text()) for f in (state_dir() / "handed").glob("*/*.json")]
    given = [m for m in handed if hashlib.sha256(m["body"].encode()).hexdigest()[:16] in offered]
    counts = {m["message_id"]: recorded_times(m["target"], m["message_id"]) for m in given}
    check(len(counts) == len(offered) and all(n == 1 for n in counts.values()),
          f"each of the {len(counts)} messages offered is in its target's transcript once",
          {k: v for k, v in counts.items() if v != 1})
    check("waiting-again" not in events and events.count("handed-over") == len(handed),
          "host-shim log: each offered, then handed over once the transcript showed it",
          {e: events.count(e) for e in set(events)})

    # 14. Claims (contract 0.6.0): one session claims a file; another session's Write
    # there is denied by its own PreToolUse hook, with the holder and the reason in the
    # words its model reads, and nothing is written; its write elsewhere goes through;
    # once the person releases the claim, the same write goes through.
    shop, yard = HOME / "shop", HOME / "yard"
    owner, writer = str(uuid.uuid4()), str(uuid.uuid4())
    new_session(env, shop, owner, "Replant the beds",
                [tool("sessions_claim", paths=["beds.md"], reason="replanting")])
    claimed = [c for c in tool_calls(owner) if c[0] == "sessions_claim"]
    check(bool(claimed) and (claimed[0][2] or "").startswith("claimed c-")
          and f"{shop}/beds.md" in claimed[0][2] and not claimed[0][3],
          "a session claims a file through the real client", claimed)
    target, own = shop / "beds.md", yard / "plan.md"
    writes = [{"tool": "Write", "input": {"file_path": str(target), "content": "yard was here"}},
              {"tool": "Write", "input": {"file_path": str(own), "content": "the yard's own"}}]
    claude(env, yard, ["--allowedTools", "Write", "--session-id", writer,
                       prompt("Tidy the beds", writes)])
    wrote = [c for c in tool_calls(writer) if c[0] == "Write"]
    denied = wrote[0] if wrote else (None, None, "", None)
    check("write refused (claimed)" in (denied[2] or "") and owner in denied[2]
          and '"replanting"' in denied[2] and "sessions_send" in denied[2],
          "the other session's Write into the claim is denied by its PreToolUse hook, naming "
          "the holder, the reason and the next step", denied)
    check(not target.exists(), "nothing was written into the claimed file", target)
    check(own.exists() and own.read_text() == "the yard's own",
          "its Write outside the claim goes through", own)
    log = subprocess.run([HOST_SHIM, "log"], env=env, capture_output=True, text=True, cwd=HOME)
    check(f"write-refused {writer} in {owner}'s c-" in log.stdout,
          "host-shim log records the refused write", log.stdout[-600:])
    listed = subprocess.run([HOST_SHIM, "claims"], env=env, capture_output=True, text=True,
                            cwd=HOME)
    ids = re.findall(r"^(c-[0-9a-f]{12}) " + re.escape(owner), listed.stdout, re.M)
    check(len(ids) == 1, "host-shim claims lists the claim", listed.stdout)
    if ids:
        subprocess.run([HOST_SHIM, "claims", "release", ids[0]], env=env, check=True,
                       capture_output=True, cwd=HOME)
    again = str(uuid.uuid4())
    claude(env, yard, ["--allowedTools", "Write", "--session-id", again,
                       prompt("Tidy the beds again", writes[:1])])
    check(target.exists() and target.read_text() == "yard was here",
          "once the person released the claim, the same write goes through", target)

    # 11. Nothing registered once the sessions ended, nor by a probe.
    time.sleep(0.5)
    check(live_files() == [], "no live registration is left after the sessions end", live_files())
    subprocess.run([CLAUDE, "mcp", "list"], env=env, cwd=HOME, capture_output=True, timeout=60)
    time.sleep(0.5)
    check(live_files() == [], "a probe over a populated store registers nothing", live_files())

    # 11. Without the permissions line of host-shim/harnesses/claude-code/README.md, Claude Code refuses the tools.
    bare = dict(env, HOME=str(WORK / "bare-home"))
    (WORK / "bare-home").mkdir()
    # The command setup wrote: HOST_SHIM itself, or the binary behind an npm package's bin.
    command = json.loads((HOME / ".claude.json").read_text())["mcpServers"]["session-tools"]["command"]
    subprocess.run([CLAUDE, "mcp", "add", "--scope", "user", "session-tools", "--", command,
                    "mcp", "--claude-projects", str(WORK / "bare-home" / ".claude" / "projects")],
                   env=bare, check=True, capture_output=True, cwd=WORK / "bare-home")
    c = str(uuid.uuid4())
    claude(bare, WORK / "bare-home", ["--session-id", c,
                                      prompt("No permissions here", [tool("sessions_list")])])
    calls = tool_calls(c)
    check(bool(calls) and "haven't granted it yet" in (calls[0][2] or ""),
          "without permissions.allow the model is refused the tools (its README says so)", calls)
    by_claude = json.loads((WORK / "bare-home" / ".claude.json").read_text())["mcpServers"]
    by_setup = json.loads((HOME / ".claude.json").read_text())["mcpServers"]
    by_claude["session-tools"]["args"][2] = by_setup["session-tools"]["args"][2]
    check(by_setup == by_claude,
          "setup registers the server exactly as `claude mcp add --scope user` does",
          (by_setup, by_claude))

    # `host-shim doctor` over what the real Claude Code and the suite left: nothing wrong.
    bin_dir = ROOT / "host-shim" / "harnesses" / "claude-code" / "suite" / "node_modules" / ".bin"
    doctor = subprocess.run([HOST_SHIM, "doctor"],
                            env=dict(env, PATH=f"{bin_dir}:{env['PATH']}"),
                            capture_output=True, text=True, timeout=180, cwd=HOME)
    print("     host-shim doctor said:\n" + "\n".join("       " + l for l in doctor.stdout.splitlines()))
    check(doctor.returncode == 0 and "Claude Code 2.1.328, the version the tools are tested with"
          in doctor.stdout and doctor.stdout.endswith("Nothing wrong found.\n"),
          "host-shim doctor finds the real Claude Code set up, nothing wrong", doctor.stdout)

    # 13. `host-shim setup claude --remove`: the person's settings back byte for byte, and
    # no server left for Claude Code to start.
    subprocess.run([HOST_SHIM, "setup", "claude", "--remove"], env=env, check=True,
                   capture_output=True, cwd=HOME)
    check((HOME / ".claude" / "settings.json").read_text()
          == json.dumps({"permissions": {"allow": ["Bash"]}}, indent=2),
          "setup --remove gives the person's settings.json back byte for byte",
          (HOME / ".claude" / "settings.json").read_text())
    listed = subprocess.run([CLAUDE, "mcp", "list"], env=env, cwd=HOME, capture_output=True,
                            text=True, timeout=60)
    check("session-tools" not in listed.stdout, "after --remove claude mcp list has no server",
          listed.stdout)

    subprocess.run(["tmux", "kill-session", "-t", "st-watch"], capture_output=True)
    server.shutdown()
    finish()


if __name__ == "__main__":
    main()
