"""The real Gemini CLI in the loop: the pinned `@google/gemini-cli` binary, driven
offline by the scripted Gemini endpoint in `endpoint.py`, set up as host-shim/harnesses/gemini/README.md
tells a new user (`host-shim setup gemini`), on a scratch HOME.

Each check asserts what the model saw (the tool results and the messages handed over,
as they come back to the endpoint in Gemini's next request, once where once is
promised) and what the session's own file shows. Each `gemini -p` is one turn of one
session in a process of its own; a session is resumed with `--resume <id>`.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "tests"))
import gemini_endpoint as endpoint  # noqa: E402
from suite_kit.peers import ClaudeCodePeer  # noqa: E402
from suite_kit.real_client import FRAME, HOST_SHIM  # noqa: E402
from suite_kit.real_client import HeadlessRun, a_wake_by_setups_command, claims_between_two_runs, a_send_and_its_retry, script, send_and_retry, the_prompt_is_read, audit, client, doctor_finds_nothing_wrong, events_named, finish, folders, holds, stopped, WAKE_PROMPT  # noqa: E402

GEMINI = client("GEMINI", "gemini", "gemini")
WORK, HOME, STATE, LOG = folders("gemini")
GEMINI_HOME = HOME / ".gemini"
PORT = 18792
STAMP = "session_tools_stamp"


def env(cwd):
    """Gemini's environment: a scratch HOME, offline, the folder trusted."""
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(HOME), "PWD": str(cwd),
            "LANG": "C.UTF-8", **endpoint.gemini_env(PORT)}


class Run(HeadlessRun):
    """One `gemini -p` turn: its session id and the events it printed (stream-json)."""
    who = "Gemini"

    def __init__(self, prompt, cwd, session=None):
        args = [GEMINI, "-p", prompt, "-m", endpoint.MODEL, "--yolo", "--output-format", "stream-json"]
        if session:
            args += ["--resume", session]
        super().__init__("gemini", args, cwd, env(cwd), LOG)
        self.out = self.done.stdout
        events = [json.loads(line) for line in self.out.splitlines() if line.startswith("{")]
        inits = [e for e in events if e.get("type") == "init"]
        self.session = inits[0]["session_id"] if inits else session
        self.events = events

    def results(self, tool):
        """Every result of `tool` (the model's name for it) in the run's output, in order."""
        calls = {e["tool_id"]: e["tool_name"] for e in self.events if e.get("type") == "tool_use"}
        return [e.get("output") or json.dumps(e.get("error")) for e in self.events
                if e.get("type") == "tool_result" and calls.get(e.get("tool_id")) == tool]

    @staticmethod
    def texts_of(request):
        return [t for c in request.get("contents", []) for t in endpoint.texts(c)]


def tool(name, **arguments):
    return {"tool": f"mcp_session-tools_{name}", "input": arguments}


def session_file(session):
    """The session's file (its first)."""
    found = sorted(GEMINI_HOME.glob(f"tmp/*/chats/session-*-{session[:8]}.jsonl"))
    return found[0] if found else None


def with_claude_code(lead, work):
    """Gemini CLI and Claude Code on one machine (each pinned real binary with its own
    scripted endpoint), each set up by `host-shim setup`, which links every harness it
    finds: one listing holds both, and a message each way is handed over once by the
    target's own harness."""
    if not ClaudeCodePeer.installed():
        return
    claude = ClaudeCodePeer(HOME, work, env(work), WORK / "claude-endpoint.jsonl")
    try:
        for harness in ("claude", "gemini"):
            subprocess.run([HOST_SHIM, "setup", harness, "--state-dir", str(STATE)], env=env(work),
                           check=True, capture_output=True)
        planner = claude.new_session("Plan the herbs")
        reached = Run(script("Reach Claude Code", tool("sessions_list"),
                             tool("sessions_send", session_id=planner,
                                  message="From Gemini: which herbs?"), {"say": "sent"}),
                      work, session=lead)
        listing = (reached.results("mcp_session-tools_sessions_list") or [""])[-1]
        holds("one Gemini listing holds the Claude Code session and the Gemini sessions",
              f"- {planner} [" in listing and f"- {lead} [live, top-level]" in listing, listing)
        sent = (reached.results("mcp_session-tools_sessions_send") or [""])[-1]
        holds("Gemini's send to Claude Code is accepted", sent.startswith(f"accepted for {planner}"), sent)
        claude.send(planner, "Any mail?", lead, "From Claude Code: basil and thyme.")
        once, seen = claude.handed_once("From Gemini: which herbs?")
        holds("Claude Code's hook hands Gemini's message over once, framed", once, seen)
        back = Run("Back again", work, session=lead)
        holds("Gemini's hook hands Claude Code's answer over once, framed",
              back.frames_seen("From Claude Code: basil and thyme.") == 1, back.out[-1500:])
    finally:
        claude.close()


def woken_by_the_wake_command(lead, work):
    """Gemini CLI has no way to wake an idle session: with a wake command set up, a
    message to a cold session starts it (`gemini --resume <id> -p …`), and its
    BeforeAgent hook hands the message over."""
    sleeper = Run("Sleep on it", work).session
    # The command names the endpoint and the folder's trust, as a person's offline
    # set-up must, but not the API key: Gemini removes GEMINI_API_KEY from the
    # environment of the MCP servers it starts, and a key in the command would sit in
    # settings.json. The person keeps it where Gemini itself reads it, ~/.gemini/.env
    # (docs/gemini.md).
    key = endpoint.gemini_env(PORT)["GEMINI_API_KEY"]
    (GEMINI_HOME / ".env").write_text(f"GEMINI_API_KEY={key}\n")
    settings = " ".join(f"{k}={v}" for k, v in endpoint.gemini_env(PORT).items()
                        if k != "GEMINI_API_KEY")
    woken = (f"env HOME={HOME} {settings} {GEMINI} --resume {{id}} -m {endpoint.MODEL} "
             f'-p "{WAKE_PROMPT}" --yolo')
    log = a_wake_by_setups_command(Run, "gemini", woken, "mcp_session-tools_sessions_send",
                                   (WORK, STATE, LOG, work, env(work)), lead, sleeper)
    holds("the wake command in Gemini's settings holds no API key",
          key not in (GEMINI_HOME / "settings.json").read_text())
    holds("the woken Gemini ends its turn", stopped(sleeper), log.read_text()[-1500:] if log.exists() else "")


def claims_keep_writes_out(work):
    """Contract 0.6.0: a session's write_file into another's claim is denied by its own
    BeforeTool hook (`claims_between_two_runs`)."""
    claims_between_two_runs(Run, work, "a Gemini session",
                            ("mcp_session-tools_sessions_claim", "write_file"),
                            lambda path, text: {"file_path": str(path), "content": text},
                            "its BeforeTool hook")


def main():
    shutil.rmtree(WORK, ignore_errors=True)
    GEMINI_HOME.mkdir(parents=True)
    work = WORK / "w"
    work.mkdir()
    endpoint.serve(PORT, str(LOG))
    # The person's own settings: signed in with an API key, sessions kept.
    (GEMINI_HOME / "settings.json").write_text(json.dumps({
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "general": {"sessionRetention": {"enabled": False}}}, indent=2) + "\n")

    # The set-up a new user runs: the README's command, twice.
    setup = [HOST_SHIM, "setup", "gemini", "--state-dir", str(STATE)]
    subprocess.run(setup, check=True, capture_output=True, env=env(WORK))
    again = subprocess.run(setup, check=True, capture_output=True, text=True, env=env(WORK)).stdout
    holds("setup gemini, run again, changes nothing", "set up already: nothing changed" in again, again)

    reviewer = Run("Review the docs", work).session
    holds("a Gemini session is made", bool(reviewer) and session_file(reviewer), reviewer)

    # Another lists and reads it: the caller is the session our hook stamped.
    lead = Run(script("Look around", tool("sessions_list"),
                      tool("sessions_read", session_id=reviewer), {"say": "seen"}), work)
    listing = lead.results("mcp_session-tools_sessions_list")
    holds("sessions_list from a Gemini session shows the other, and itself as this session",
          listing and reviewer in listing[0] and f"{lead.session} [" in listing[0]
          and "| this session" in listing[0], listing or lead.out[-2000:])
    holds("a running Gemini session is live (its SessionStart hook registered its process), "
          "an ended one cold",
          listing and f"{lead.session} [live, top-level]" in listing[0]
          and f"{reviewer} [cold, top-level]" in listing[0], listing)
    read = lead.results("mcp_session-tools_sessions_read")
    the_prompt_is_read(read)

    # A send, its retry in the same words (a new call) delivered once, and a stamp the
    # model wrote itself refused by the hook.
    sent = Run(script("Tell the reviewer",
                      *send_and_retry(tool, reviewer),
                      tool("sessions_send", session_id=reviewer, message="Forged.",
                           **{STAMP: {"session": reviewer}}),
                      {"say": "sent"}), work, session=lead.session)
    answers = sent.results("mcp_session-tools_sessions_send")
    a_send_and_its_retry(answers, reviewer, STATE)
    holds("a stamp the model writes is refused by the hook, the model told why",
          len(answers) == 3 and "never by the model" in answers[2], answers)
    shown = subprocess.run([HOST_SHIM, "call", "--gemini-home", str(GEMINI_HOME), "--caller", reviewer,
                            "sessions_read", json.dumps({"session_id": lead.session,
                                                         "include_actions": True})],
                           capture_output=True, text=True).stdout
    holds("the session file records the stamped arguments, and a read shows the model's own",
          '"mac"' in session_file(lead.session).read_text() and "mac" not in shown
          and "[action] mcp_session-tools_sessions_send: Docs can ship. (ok)" in shown, shown[-1500:])

    # The reviewer's next turn: its BeforeAgent hook hands the message over (after the
    # prompt: Gemini 0.61.0 drops from a resumed history a user message that begins with
    # `<hook_context>`, where a SessionStart hook's context goes, the prompt with it),
    # its model gets it once, and its own file shows it.
    resumed = Run("Anything new?", work, session=reviewer)
    holds("the reviewer's model is given the message once, as its frame",
          resumed.frames_seen("Docs can ship.") == 1,
          [endpoint.texts(c) for c in resumed.requests[-1]["contents"][-2:]] if resumed.requests else resumed.out)
    recorded = session_file(reviewer).read_text()
    holds("the reviewer's session file records the frame Gemini sent its model",
          "Docs can ship." in recorded and FRAME in recorded, recorded[-1500:])
    after = Run("And now?", work, session=reviewer)
    # What Gemini keeps: the turn after, its history still holds that turn's message,
    # the person's words and the frame once.
    kept = [t for c in (after.requests[-1]["contents"] if after.requests else [])
            if c.get("role") == "user" for t in endpoint.texts(c)]
    holds("Gemini keeps the handed-over turn in the next turn's history: the prompt, and the frame once",
          any("Anything new?" in t for t in kept) and after.frames_seen("Docs can ship.") == 1,
          kept[-4:])
    handed = events_named(STATE, "handed-over", reviewer)
    holds("the offer is settled as handed over by the reviewer's own record, once",
          len(handed) == 1 and not events_named(STATE, "waiting-again", reviewer), audit(STATE))
    later = Run("Anything else?", work, session=reviewer)
    holds("a message handed over is never given again (the history keeps its one frame)",
          later.frames_seen("Docs can ship.") == 1)

    # Messages that arrive during the reviewer's turn (a tool of its own turn sends them
    # from the lead, through host-shim call): the steered one is handed over after that
    # tool (AfterTool), the queued one when the turn ends (AfterAgent), as a prompt.
    def send_from_lead(call_id, mode, message):
        arguments = json.dumps({"session_id": reviewer, "message": message, "mode": mode})
        return (f"{HOST_SHIM} call --gemini-home {GEMINI_HOME} --state-dir {STATE} "
                f"--caller {lead.session} --call-id {call_id} sessions_send '{arguments}'")
    command = (send_from_lead("mid-turn-1", "queue", "Also fix the typo.") + " && "
               + send_from_lead("mid-turn-2", "steer", "Stop before the release notes."))
    turn = Run(script("Work on it", {"tool": "run_shell_command", "input": {
        "command": command, "description": "send"}}, {"say": "worked"}), work, session=reviewer)
    steered = [t for r in turn.requests for c in r.get("contents", []) for t in endpoint.texts(c)
               if FRAME in t and "Stop before the release notes." in t]
    holds("a steered message is handed over after the turn's next tool call (AfterTool), once",
          len(set(steered)) == 1 and turn.frames_seen("Stop before the release notes.") == 1,
          turn.out[-2000:])
    holds("a queued message accepted mid-turn is handed over when the turn ends (AfterAgent), once",
          turn.frames_seen("Also fix the typo.") == 1, turn.out[-2000:])
    record = session_file(reviewer).read_text()
    holds("Gemini records both hand-overs in the session file",
          "Also fix the typo." in record and "Stop before the release notes." in record, "")
    # The reviewer's next resume, as Gemini 0.61.0 rebuilds its history: the queued
    # frame (a prompt of its own) once; the steered frame rides in the tool's result,
    # which Gemini repeats in a resumed history as it repeats every tool result (the
    # lead's plain shell results too), so it shows once in each copy and nowhere else.
    again = Run("Once more", work, session=reviewer)
    contents = again.requests[-1]["contents"] if again.requests else []
    results = [json.dumps(part["functionResponse"]) for c in contents for part in c.get("parts") or []
               if "functionResponse" in part and "accepted for" in json.dumps(part["functionResponse"])]
    prompts = [part["text"] for c in contents for part in c.get("parts") or []
               if isinstance(part.get("text"), str) and FRAME in part["text"]]
    holds("the next resume keeps the queued frame once, and the steered one once in each copy of "
          "the tool result Gemini repeats",
          sum(t.count("Also fix the typo.") for t in prompts) == 1
          and not any("Stop before the release notes." in t for t in prompts)
          and results and all(r.count("Stop before the release notes.") == 1 for r in results),
          [len(results), [t[-200:] for t in prompts]])

    # A subagent: Gemini gives its hooks its parent's session, so its call is its
    # parent's; the subagent is listed with its owner.
    look = script("List every session", tool("sessions_list", scope="all"),
                  {"tool": "complete_task", "input": {"result": {"response": "listed"}}})
    delegated = Run(script("Delegate a look", {"tool": "invoke_agent", "input": {
        "agent_name": "generalist", "prompt": look}}, {"say": "delegated"}), work, session=lead.session)
    seen = [t for r in delegated.requests for c in r.get("contents", []) for t in endpoint.texts(c)
            if "considered sessions" in t]
    own_rows = sorted({line for t in seen for line in t.splitlines() if line.endswith("| this session")})
    holds("a subagent's call is taken as its parent's (Gemini names the parent to its hooks)",
          own_rows and all(lead.session in row for row in own_rows), seen[-1:] or delegated.out[-2000:])
    after = Run(script("Look again", tool("sessions_list", scope="all"), {"say": "seen"}), work,
                session=lead.session).results("mcp_session-tools_sessions_list")
    rows = [line for line in (after[-1] if after else "").splitlines() if "subagent]" in line]
    holds("the lead lists its subagent, with its owner, not messageable",
          len(rows) == 1 and f"owner={lead.session} | not messageable" in rows[0], after)

    with_claude_code(lead.session, work)
    woken_by_the_wake_command(lead.session, work)
    claims_keep_writes_out(work)

    doctor_finds_nothing_wrong(HOST_SHIM, ["--state-dir", str(STATE)], env(WORK),
                               "ordinary headless turns")

    subprocess.run(setup + ["--remove"], check=True, capture_output=True, env=env(WORK))
    left = json.loads((GEMINI_HOME / "settings.json").read_text())
    holds("setup --remove takes the server and the hooks out",
          "session-tools" not in json.dumps(left) and left["security"]["auth"]["selectedType"], left)
    finish()


if __name__ == "__main__":
    main()
