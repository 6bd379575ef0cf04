"""The real OpenClaw in the loop: the pinned `openclaw` package on the Node it needs
(host-shim/harnesses/openclaw/suite/requirements.txt), driven offline by the scripted chat completions
endpoint in `endpoint.py`, set up as host-shim/harnesses/openclaw/README.md tells a new user (`host-shim
setup openclaw`), on a scratch HOME.

Each check asserts what the model saw (the tool results and the messages handed over,
as they come back to the endpoint in OpenClaw's next request, once where once is
promised) and what OpenClaw's own database shows. Each `openclaw agent --local` is one
turn of one session in a process of its own, named by `--session-id`; the subagent
part runs through a gateway (`openclaw gateway run`), as OpenClaw requires.
"""

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "tests"))
import openclaw_endpoint as endpoint  # noqa: E402
from suite_kit.peers import ClaudeCodePeer  # noqa: E402
from suite_kit.real_client import FRAME, HOST_SHIM  # noqa: E402
from suite_kit.real_client import a_claim_keeps_writes_out, a_send_and_its_retry, frames_seen, script, send_and_retry, the_prompt_is_read, audit, doctor_finds_nothing_wrong, events_named, finish, first_request_with, folders, holds, logged, stopped, WAKE_PROMPT, a_wake_hands_the_message_over  # noqa: E402

WORK, HOME, STATE, LOG = folders("openclaw")
GATEWAY_LOG = WORK / "gateway.log"
OPENCLAW_STATE = HOME / ".openclaw"
PORT = 18793
GATEWAY_PORT = 18794
TOKEN = "scripted-gateway-token"
PREFIX = "session-tools__"


def env():
    """OpenClaw's environment: a scratch HOME, offline, `openclaw` on PATH."""
    world = endpoint.env(HOME)
    world["PATH"] = f"{endpoint.OPENCLAW.parent}:{world['PATH']}"
    return dict(world, LANG="C.UTF-8", OPENCLAW_GATEWAY_TOKEN=TOKEN, TMPDIR=str(WORK / "tmp"))


def texts_of(message):
    return endpoint.texts(message)


class Run:
    """One `openclaw agent` turn of `session`: what it printed and the model requests it
    made (runs go one at a time)."""

    def __init__(self, prompt, session, local=True, cwd=None):
        done, self.requests = endpoint.agent_turn(env(), cwd or WORK / "w", session, prompt, LOG,
                                                  local)
        if done.returncode != 0:
            raise SystemExit(f"openclaw failed ({done.returncode}):\n{(done.stdout + done.stderr)[-3000:]}")
        self.session = session
        self.out = done.stdout

    def results(self, name):
        """The text of every result of the tool `name` (ours without the prefix), called
        directly or through Tool Search's tool_call, in the run's last request."""
        if not self.requests:
            return []
        return results_in(self.requests[-1]["messages"], PREFIX + name)

    def frames_seen(self, words):
        return frames_seen(self.requests, words, lambda request: [
            t for m in request["messages"] if m["role"] == "user" for t in texts_of(m)])


def results_in(messages, name):
    calls = {}
    for m in messages:
        for call in m.get("tool_calls") or []:
            function = call["function"]
            arguments = json.loads(function.get("arguments") or "{}")
            called = function["name"]
            if called == "tool_call":
                called = str(arguments.get("id", "")).rsplit(":", 1)[-1]
            calls[call["id"]] = called
    found = []
    for m in messages:
        if m["role"] != "tool" or calls.get(m.get("tool_call_id")) != name:
            continue
        text = "\n".join(texts_of(m))
        try:
            wrapped = json.loads(text)
            text = "\n".join(c.get("text", "") for c in wrapped["result"]["content"])
        except (ValueError, KeyError, TypeError):
            pass
        found.append(text)
    return found


def ours(name, **arguments):
    """A call of one of our tools as a model makes it with Tool Search on (OpenClaw's
    default): through tool_call, by the name tool_search gave."""
    return {"tool": "tool_call", "input": {"id": PREFIX + name, "args": arguments}}


def recorded(session):
    """The texts OpenClaw's database keeps for `session`'s transcript."""
    db = sqlite3.connect(f"file:{OPENCLAW_STATE}/agents/main/agent/openclaw-agent.sqlite?mode=ro",
                         uri=True)
    try:
        return [row[0] or "" for row in db.execute(
            "SELECT event_json FROM transcript_events WHERE session_id = ? ORDER BY seq", (session,))]
    finally:
        db.close()


def setup(*extra):
    return subprocess.run([HOST_SHIM, "setup", "openclaw", "--state-dir", str(STATE), *extra],
                          env=env(), capture_output=True, text=True, check=True).stdout


def is_subagents(request):
    """Whether a model request is a subagent's (OpenClaw opens its prompt so)."""
    return any("[Subagent Context]" in t for m in request["messages"] if m["role"] == "user"
               for t in texts_of(m))


class Gateway:
    """`openclaw gateway run` on loopback, its output in gateway.log."""

    def __init__(self):
        self.process = subprocess.Popen(
            [str(endpoint.OPENCLAW), "gateway", "run", "--bind", "loopback"], cwd=WORK / "w",
            env=env(), stdout=GATEWAY_LOG.open("a"), stderr=subprocess.STDOUT,
            start_new_session=True)
        endpoint.wait_for_gateway(GATEWAY_PORT)

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, 9)
            self.process.wait()

    def restart(self):
        self.stop()
        self.__init__()


def with_a_subagent(lead, sleeper):
    """Subagents need a running gateway: the lead spawns one through it (sessions_spawn,
    found by Tool Search), whose own call is its own; then the cold `sleeper` is woken
    through it."""
    config_path = OPENCLAW_STATE / "openclaw.json"
    config = json.loads(config_path.read_text())
    config["gateway"] = endpoint.gateway(GATEWAY_PORT, TOKEN)
    config_path.write_text(json.dumps(config, indent=2))
    gateway = Gateway()
    try:
        task = script("Look around", ours("sessions_list", scope="all"), {"say": "Looked."})
        before = len(logged(LOG))
        Run(script("Delegate a look", {"tool": "tool_call", "input": {
            "id": "sessions_spawn", "args": {"task": task, "label": "looker"}}},
            {"say": "Delegated."}), lead, local=False)
        # The subagent's turn runs on after the lead's.
        deadline = time.time() + 90
        seen = []
        while time.time() < deadline and not seen:
            seen = [t for r in logged(LOG)[before:] if "request" in r and is_subagents(r["request"])
                    for t in results_in(r["request"]["messages"], PREFIX + "sessions_list")]
            time.sleep(1)
        own = [line for t in seen for line in t.splitlines() if line.endswith("| this session")]
        holds("a subagent's call is its own: listed as a subagent of the lead, this session",
              len(own) == 1 and "subagent]" in own[0] and f"owner={lead}" in own[0], seen)
        woken_through_the_gateway(lead, sleeper, gateway)
        idle_in_the_gateway(lead, sleeper)
        steered_in_the_gateway(lead, sleeper)
    finally:
        gateway.stop()
    after = Run(script("Look again", ours("sessions_list", scope="all"), {"say": "seen"}), lead)
    listing = (after.results("sessions_list") or [""])[-1]
    rows = [line for line in listing.splitlines() if "subagent]" in line]
    holds("the lead lists its subagent, with its owner and label, not messageable",
          len(rows) == 1 and f"owner={lead} | not messageable" in rows[0]
          and "looker" in listing, listing)


def claims_keep_writes_out():
    """Contract 0.6.0: one session claims a file; another session's `write` and
    `apply_patch` there are blocked by the plugin's before_tool_call hook, in words
    naming the holder and the reason, and nothing is written; its write elsewhere goes
    through."""
    work = WORK / "w"
    owner = str(uuid.uuid4())
    claim = Run(script("Replant the beds", ours("sessions_claim", paths=["beds.md"],
                                                 reason="replanting"), {"say": "claimed"}), owner)
    target, own = work / "beds.md", work / "notes.md"
    patch = "*** Begin Patch\n*** Add File: beds.md\n+x\n*** End Patch"
    writer = Run(script("Tidy the beds",
                        {"tool": "write", "input": {"path": str(target), "content": "x"}},
                        {"tool": "apply_patch", "input": {"input": patch}},
                        {"tool": "write", "input": {"path": str(own), "content": "mine"}},
                        {"say": "done"}), str(uuid.uuid4()))
    messages = writer.requests[-1]["messages"] if writer.requests else []
    wrote, patched = results_in(messages, "write"), results_in(messages, "apply_patch")
    a_claim_keeps_writes_out(
        "an OpenClaw session", claim.results("sessions_claim"),
        "another session's write and apply_patch into the claim are blocked by the plugin's hook",
        [wrote[0], patched[0]] if len(wrote) == 2 and len(patched) == 1 else [], owner,
        (target, own, "mine"))


def gateway_reloads():
    """How many config changes the gateway has applied, and how many it failed to
    apply (it logs each)."""
    lines = GATEWAY_LOG.read_text(errors="replace").splitlines()
    return (sum("[reload] config hot reload applied" in line for line in lines),
            sum("[reload] config reload failed" in line for line in lines))


def woken_through_the_gateway(lead, sleeper, gateway):
    """A cold session (`sleeper`: its last turn ran in a process that has ended), woken
    by the wake command `setup openclaw --openclaw-wake-command` names: `openclaw agent`
    without --local, so the running gateway runs its turn, whose prompt hook hands the
    message over. (While a gateway runs, OpenClaw refuses `--local`.)"""
    log = WORK / "wake.log"
    woken = (f"{endpoint.OPENCLAW} agent --agent main --session-id {{id}} "
             f'--message "{WAKE_PROMPT}" --json')
    # `setsid -f` hands the woken turn to init at once; its output goes to wake.log.
    applied, failed = gateway_reloads()
    setup("--openclaw-wake-command", f"setsid -f sh -c 'exec {woken} > {log} 2>&1'")
    # The gateway takes the new command as it reloads its config (~1 s after the write):
    # a send before that would reach the plugin's server as it was. While an agent turn
    # runs in it (the subagent's may), 2026.9.6 refuses the reload ("still has active
    # retained work") and does not try again: then, as the page says, restart it.
    deadline = time.time() + 60
    while time.time() < deadline and gateway_reloads() == (applied, failed):
        time.sleep(0.2)
    now_applied, now_failed = gateway_reloads()
    if now_failed > failed:
        print("     the gateway refused the reload while a turn ran; restarted, as the page says")
        gateway.restart()
    holds("the running gateway takes setup's new wake command (as it reloads its config, or "
          "once restarted when a turn held the reload)",
          now_applied > applied or now_failed > failed, GATEWAY_LOG.read_text()[-2000:])
    before = len(logged(LOG))
    sent = Run(script("Wake the sleeper", ours("sessions_send", session_id=sleeper,
                                              message="Wake up and review."), {"say": "sent"}),
               lead, local=False)
    answer = (sent.results("sessions_send") or [""])[-1]
    a_wake_hands_the_message_over(
        "OpenClaw", answer, LOG, before,
        lambda request: [t for m in request["messages"] if m["role"] == "user"
                         for t in texts_of(m)], log, how=", through the gateway")
    holds("the woken turn ends", stopped(sleeper), log.read_text()[-1500:] if log.exists() else "")
    holds("the woken turn ran in the gateway, which records its prompt",
          any(WAKE_PROMPT in e for e in recorded(sleeper)),
          recorded(sleeper)[-2:])
    setup()


def idle_in_the_gateway(idle, sender):
    """A session whose last turn ran in the gateway is live and idle there: a message
    for it starts its turn at once (the plugin in the gateway takes it and asks the
    gateway for a turn whose message it is, `openclaw agent --session-id …
    --message-file`), and OpenClaw's record of that turn confirms the hand-over."""
    before = len(logged(LOG))
    handed_before = len(events_named(STATE, "handed-over", idle))
    carriers = Carriers()
    sent = subprocess.run([HOST_SHIM, "call", "--openclaw-state", str(OPENCLAW_STATE),
                           "--state-dir", str(STATE), "--caller", sender, "--call-id", "idle-1",
                           "sessions_send", json.dumps({"session_id": idle,
                                                        "message": "Idle lead: look now."})],
                          env=env(), capture_output=True, text=True).stdout
    holds("a send to a session idle in the gateway is accepted for it, live",
          sent.startswith(f"accepted for {idle}") and "woke" not in sent, sent)
    seen = first_request_with(LOG, before, "Idle lead: look now.",
                              lambda request: [t for m in request["messages"] if m["role"] == "user"
                                               for t in texts_of(m)])
    holds("the idle session's model is given the message at once, once, as its frame",
          seen is not None and sum(t.count("Idle lead: look now.") for t in seen if FRAME in t) == 1,
          seen and seen[-2:])
    deadline = time.time() + 60
    while time.time() < deadline and len(events_named(STATE, "handed-over", idle)) == handed_before:
        time.sleep(0.5)
    holds("OpenClaw records the frame as the message of the turn the plugin started, and "
          "that record settles the hand-over, once",
          sum(FRAME in e and "Idle lead: look now." in e for e in recorded(idle)) == 1
          and len(events_named(STATE, "handed-over", idle)) == handed_before + 1,
          [recorded(idle)[-2:], audit(STATE)[-3:]])
    holds("the turn the plugin started ends", stopped(idle))
    seen = carriers.stop()
    left = sorted(p.name for p in (WORK / "tmp").glob("session-tools-message-*"))
    holds("the message went to `openclaw agent` in a file only its user reads, gone with it",
          seen and all(mode == 0o700 for mode in seen.values()) and not left, [seen, left])


class Carriers:
    """Watches the gateway's TMPDIR, while a turn the plugin starts runs, for the folders
    that carry a message to `openclaw agent`: each name seen, with its mode."""

    def __init__(self):
        import threading
        self.seen, self.done = {}, threading.Event()
        self.thread = threading.Thread(target=self.watch, daemon=True)
        self.thread.start()

    def watch(self):
        while not self.done.is_set():
            for folder in (WORK / "tmp").glob("session-tools-message-*"):
                try:
                    self.seen[folder.name] = folder.stat().st_mode & 0o777
                except FileNotFoundError:
                    pass
            time.sleep(0.05)

    def stop(self):
        self.done.set()
        self.thread.join()
        return self.seen


def steered_in_the_gateway(busy, sender):
    """A `steer` message for a session at work in the gateway: 2026.9.6 steers nothing
    that comes through `openclaw agent`, so the plugin gives it when the running turn
    ends, as the turn it starts then. The turn sends it to itself from another session,
    with a shell command, then works on (a foreground command of 8 s)."""
    arguments = json.dumps({"session_id": busy, "message": "Steer: stop before the release notes.",
                            "mode": "steer"})
    send = (f"{HOST_SHIM} call --openclaw-state {OPENCLAW_STATE} --state-dir {STATE} "
            f"--caller {sender} --call-id steer-1 sessions_send '{arguments}'")
    before = len(logged(LOG))
    Run(script("Work on the release", {"tool": "exec", "input": {"command": send}},
               {"tool": "exec", "input": {"command": "sleep 8", "yieldMs": 30000}},
               {"say": "Worked."}), busy, local=False)
    words = "Steer: stop before the release notes."
    seen = first_request_with(LOG, before, FRAME, lambda request: [
        t for m in request["messages"] if m["role"] == "user" for t in texts_of(m)
        if FRAME in t and words in t])
    holds("a steered message for a session at work in the gateway is given once, as the "
          "message of the turn the plugin starts when the running one ends",
          seen is not None and len(seen) == 1
          and any(FRAME in e and words in e for e in recorded(busy)), seen)
    holds("that turn ends", stopped(busy))


def with_claude_code(lead):
    """OpenClaw and Claude Code on one machine (each pinned real binary with its own
    scripted endpoint), each set up by `host-shim setup`, which links every harness it
    finds: one listing holds both, and a message each way is handed over once by the
    target's own harness."""
    if not ClaudeCodePeer.installed():
        return
    claude = ClaudeCodePeer(HOME, WORK / "w", env(), WORK / "claude-endpoint.jsonl")
    try:
        for harness in ("claude", "openclaw"):
            subprocess.run([HOST_SHIM, "setup", harness, "--state-dir", str(STATE)], env=env(),
                           check=True, capture_output=True)
        planner = claude.new_session("Plan the herbs")
        reached = Run(script("Reach Claude Code", ours("sessions_list"),
                             ours("sessions_send", session_id=planner,
                                  message="From OpenClaw: which herbs?"), {"say": "sent"}), lead)
        listing = (reached.results("sessions_list") or [""])[-1]
        holds("one OpenClaw listing holds the Claude Code session and the OpenClaw sessions",
              f"- {planner} [" in listing and f"- {lead} [live, top-level]" in listing, listing)
        sent = (reached.results("sessions_send") or [""])[-1]
        holds("OpenClaw's send to Claude Code is accepted", sent.startswith(f"accepted for {planner}"),
              sent)
        claude.send(planner, "Any mail?", lead, "From Claude Code: basil and thyme.")
        once, seen = claude.handed_once("From OpenClaw: which herbs?")
        holds("Claude Code's hook hands OpenClaw's message over once, framed", once, seen)
        back = Run("Back again", lead)
        holds("OpenClaw's plugin hands Claude Code's answer over once, framed",
              back.frames_seen("From Claude Code: basil and thyme.") == 1, back.out[-1500:])
    finally:
        claude.close()


def main():
    if not (endpoint.NODE_BIN / "node").exists() or not endpoint.OPENCLAW.exists():
        raise SystemExit("the pinned Node and OpenClaw are not installed: run the OpenClaw lines of "
                         ".ci/run (target/openclaw-venv, then npm ci in host-shim/harnesses/openclaw/suite)")
    shutil.rmtree(WORK, ignore_errors=True)
    (WORK / "w").mkdir(parents=True)
    (WORK / "tmp").mkdir()
    endpoint.serve(PORT, str(LOG))
    # The person's own OpenClaw, onboarded: its config names its model.
    endpoint.write_config(HOME, PORT, WORK / "w")

    # The set-up a new user runs: the README's command, twice; doctor finds nothing wrong.
    setup()
    again = setup()
    holds("setup openclaw, run again, changes nothing", "set up already: nothing changed" in again,
          again)
    doctor = subprocess.run([HOST_SHIM, "doctor", "--state-dir", str(STATE)], env=env(),
                            capture_output=True, text=True)
    section = doctor.stdout.split("\nOpenClaw\n", 1)[-1].split("State folder", 1)[0]
    holds("doctor finds the OpenClaw set-up sound (its version, the plugin's server)",
          "OpenClaw 2026.9.6, the version the tools are tested with" in section
          and "starts and lists" in section and "PROBLEM" not in section, doctor.stdout[-2000:])

    reviewer = str(uuid.uuid4())
    Run("Review the docs", reviewer)
    holds("an OpenClaw session is made", recorded(reviewer), reviewer)

    # Another finds our tools with Tool Search, lists and reads the first; the caller is
    # the session OpenClaw's tool factory named.
    lead = str(uuid.uuid4())
    look = Run(script("Look around", {"tool": "tool_search", "input": {"query": "list other sessions"}},
                      ours("sessions_list"), ours("sessions_read", session_id=reviewer),
                      {"say": "seen"}), lead)
    found = [t for m in look.requests[-1]["messages"] if m["role"] == "tool"
             for t in texts_of(m) if '"session-tools__sessions_list"' in t and '"sourceName": "session-tools"' in t]
    holds("Tool Search finds the tools by their words (tool_search \"list other sessions\")",
          found, [texts_of(m) for m in look.requests[-1]["messages"] if m["role"] == "tool"][:1])
    listing = look.results("sessions_list")
    holds("sessions_list from an OpenClaw session shows the other, cold, and itself as this "
          "session, live",
          listing and f"- {reviewer} [cold, top-level]" in listing[0]
          and f"- {lead} [live, top-level]" in listing[0] and "| this session" in listing[0],
          listing or look.out[-2000:])
    read = look.results("sessions_read")
    the_prompt_is_read(read)

    # A send, its retry in the same words (a new call) delivered once, and a bad call
    # answered with a refusal the model can act on.
    sent = Run(script("Tell the reviewer",
                      *send_and_retry(ours, reviewer),
                      ours("sessions_send", message="No target."),
                      {"say": "sent"}), lead)
    answers = sent.results("sessions_send")
    a_send_and_its_retry(answers, reviewer, STATE)
    holds("a send without a target is refused in words the model can act on",
          len(answers) == 3 and "session_id is required" in answers[2], answers)

    # The reviewer's next turn: the plugin's prompt hook hands the message over and its
    # model gets it once; OpenClaw keeps the prompt, not the hook's text.
    resumed = Run("Anything new?", reviewer)
    holds("the reviewer's model is given the message once, as its frame",
          resumed.frames_seen("Docs can ship.") == 1,
          [texts_of(m) for m in resumed.requests[-1]["messages"][-3:]] if resumed.requests else resumed.out)
    holds("the hand-over is the plugin's word (OpenClaw 2026.9.6 keeps no prompt hook's text)",
          len(events_named(STATE, "handed-over", reviewer)) == 1
          and not any("Docs can ship." in e for e in recorded(reviewer)), audit(STATE)[-3:])
    later = Run("Anything else?", reviewer)
    holds("a message handed over is never given again", later.frames_seen("Docs can ship.") == 0)

    claims_keep_writes_out()
    with_a_subagent(lead, reviewer)
    with_claude_code(lead)

    doctor_finds_nothing_wrong(HOST_SHIM, ["--state-dir", str(STATE)], env(),
                               "ordinary OpenClaw turns and a gateway")

    setup("--remove")
    left = json.loads((OPENCLAW_STATE / "openclaw.json").read_text())
    holds("setup --remove takes the plugin's entry and folder out, the person's config kept",
          "session-tools" not in json.dumps(left.get("plugins", {}))
          and left["agents"]["defaults"]["model"]["primary"] == f"scripted/{endpoint.MODEL}"
          and not (OPENCLAW_STATE / "extensions" / "session-tools").exists(), left)
    finish()


if __name__ == "__main__":
    main()
