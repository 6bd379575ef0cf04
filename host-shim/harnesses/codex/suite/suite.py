"""The real Codex CLI in the loop: the pinned `@openai/codex` binary, driven offline by
the scripted Responses API endpoint in `endpoint.py`, set up as host-shim/harnesses/codex/README.md
tells a new user, on a private CODEX_HOME (not under /tmp: Codex refuses
helper binaries there).

Each check asserts what the model saw: the tool results and hook texts as they come
back to the endpoint in Codex's next request, once where once is promised.
"""

import json
import os
import re
import shlex
import shutil
import subprocess
import time
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "tests"))
import codex_endpoint as endpoint  # noqa: E402
from suite_kit.real_client import FRAME, HOST_SHIM, ROOT  # noqa: E402
from suite_kit.real_client import client, folders  # noqa: E402
from suite_kit.real_client import a_claim_keeps_writes_out, check, finish  # noqa: E402
from suite_kit.peers import binary_of, endpoint_of, suite_of  # noqa: E402

CODEX = client("CODEX", "codex", "codex")
WORK, HOME, STATE, LOG = folders("codex")
CODEX_HOME = HOME / ".codex"
PORT = 18771
TOOLS = "mcp__session_tools"



def set_up():
    """host-shim/harnesses/codex/README.md's set-up: a person's own config.toml (the model it talks to, a
    comment of theirs), then `host-shim setup codex`, run twice. Returns what the second
    run said."""
    CODEX_HOME.mkdir(parents=True)
    (CODEX_HOME / "config.toml").write_text(
        "# my Codex settings\n" + endpoint.codex_config(PORT))
    setup = [HOST_SHIM, "setup", "codex", "--codex-home", str(CODEX_HOME), "--state-dir",
             str(STATE)]
    # The suite's HOME: setup links every other harness it finds there (none).
    subprocess.run(setup, check=True, capture_output=True, env=codex_env())
    return subprocess.run(setup, check=True, capture_output=True, text=True,
                          env=codex_env()).stdout


def without_id(accepted):
    """An acceptance's first line without the message id that ends it."""
    return re.sub(r" \| id=m-[0-9a-f]{12}$", "", accepted.split("\n")[0])


def script(text, steps):
    return f"{text}\n{endpoint.SCRIPT_MARK}{json.dumps(steps)}"


def tool(name, **arguments):
    return {"tool": name, "namespace": TOOLS, "input": arguments}


def codex(args, cwd):
    env = codex_env()
    # `codex exec` cannot trust a hook (a person does, once, with /hooks).
    run = subprocess.run([CODEX, "exec", "--dangerously-bypass-hook-trust",
                          "--skip-git-repo-check", *args], cwd=cwd, env=env,
                         capture_output=True, text=True, timeout=180)
    output = run.stdout + run.stderr
    if run.returncode != 0:
        raise SystemExit(f"codex exec failed:\n{output}")
    match = re.search(r"session id: ([0-9a-f-]{36})", output)
    return match.group(1) if match else None


def requests():
    if not LOG.exists():
        return []
    return [json.loads(line)["request"] for line in LOG.read_text().splitlines()
            if json.loads(line).get("method") == "POST"]


def results_in(request, name):
    """The results of tool `name` one request carries, in order, as text."""
    calls = {i.get("call_id"): i.get("name") for i in request.get("input", [])
             if i.get("type") in ("function_call", "custom_tool_call")}
    results = []
    for item in request.get("input", []):
        if (item.get("type") in ("function_call_output", "custom_tool_call_output")
                and calls.get(item.get("call_id")) == name):
            output = item.get("output")
            # Codex gives an MCP result as a "Wall time: … Output:" part, then the
            # tool's own text.
            if isinstance(output, list):
                output = output[-1].get("text", "") if output else ""
            results.append(output or "")
    return results


def tool_results(name, thread=None):
    """Every result of tool `name` the model was given, as text (the last request
    carries them all): of `thread`'s last request when given (Codex keys each request's
    prompt cache by its thread), else of the last request."""
    mine = [r for r in requests() if thread is None or r.get("prompt_cache_key") == thread]
    return results_in(mine[-1], name) if mine else []


def all_tool_results(name):
    """Every result of tool `name` in any request (each thread's calls)."""
    return sorted({result for request in requests() for result in results_in(request, name)})


def texts_seen(request):
    """Every text the model was given in one request."""
    seen = []
    for item in request.get("input", []):
        if item.get("type") == "message":
            seen.extend(p.get("text", "") for p in item.get("content") or [] if isinstance(p, dict))
    return seen


def claude_code_and_codex(thread, folder):
    """A Claude Code session (the pinned real binary, its own scripted endpoint) and a
    Codex thread, each with the one server over both harnesses, messaging each other;
    each message handed over once by the target's own harness's hook."""
    import uuid
    claude_endpoint = endpoint_of("claude-code")
    claude_bin = binary_of("claude-code", "claude")
    if not check(claude_bin.exists(), "the pinned Claude Code is installed (npm ci in host-shim/harnesses/claude-code/suite)"):
        return
    claude_home = WORK / "claude-home"
    claude_home.mkdir()
    claude_log = WORK / "claude-endpoint.jsonl"
    server = claude_endpoint.start(str(claude_log))
    env = {"HOME": str(claude_home), "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
           "LANG": "C.UTF-8", "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{server.server_port}",
           "ANTHROPIC_API_KEY": "sk-scripted-endpoint", "DISABLE_TELEMETRY": "1",
           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1"}
    projects = claude_home / ".claude" / "projects"
    both = ["--claude-projects", str(projects), "--codex-home", str(CODEX_HOME),
            "--state-dir", str(STATE)]
    # The two-harness set-up of host-shim/harnesses/codex/README.md: one server over both, in each client.
    subprocess.run([str(claude_bin), "mcp", "add", "--scope", "user", "session-tools", "--",
                    HOST_SHIM, "mcp", *both], env=env, check=True, capture_output=True,
                   cwd=claude_home)
    hook = {"type": "command", "command": f"{HOST_SHIM} claude-hook --state-dir {STATE}"}
    (claude_home / ".claude" / "settings.json").write_text(json.dumps({
        "permissions": {"allow": ["mcp__session-tools"]},
        "hooks": {event: [{"hooks": [hook]}] for event in ("SessionStart", "UserPromptSubmit", "Stop")},
    }))
    config = (CODEX_HOME / "config.toml").read_text()
    written = f'args = ["mcp", "--codex-home", "{CODEX_HOME}", "--state-dir", "{STATE}"]'
    assert written in config, config
    (CODEX_HOME / "config.toml").write_text(config.replace(
        written, "args = " + json.dumps(["mcp", *both])))

    def claude(args):
        cwd = WORK / "claude-garden"
        cwd.mkdir(exist_ok=True)
        done = subprocess.run([str(claude_bin), "-p", *args], env=env, cwd=cwd,
                              capture_output=True, text=True, timeout=180)
        if done.returncode != 0:
            print(f"     claude exited {done.returncode}: {done.stderr[-800:]}")

    def claude_requests():
        return [json.loads(line) for line in claude_log.read_text().splitlines()
                if line.strip() and "count_tokens" not in json.loads(line)["path"]]

    claude_texts = claude_endpoint.request_texts

    session = str(uuid.uuid4())
    claude(["--session-id", session, "Plan the herbs\n" + claude_endpoint.SCRIPT_MARK + "[]"])
    # Codex → Claude Code, handed over by Claude Code's UserPromptSubmit hook.
    codex(["resume", thread, script("Ask the Claude Code session", [
        tool("sessions_send", session_id=session, message="From Codex: which herbs?"),
    ])], folder)
    sent = (tool_results("sessions_send") or [""])[-1]
    check(sent.startswith(f"accepted for {session} | mode=queue"),
          "a Codex thread's send to a Claude Code session is accepted", sent)
    claude(["--resume", session, "Any mail?\n" + claude_endpoint.SCRIPT_MARK + "[]"])
    last = claude_requests()[-1]["request"]
    count = sum(t.count("From Codex: which herbs?") for t in claude_texts(last))
    check(count == 1 and any(FRAME in t for t in claude_texts(last)),
          "Claude Code's hook hands the Codex thread's message over once, framed", count)
    # Claude Code → Codex, handed over by Codex's UserPromptSubmit hook.
    send_step = {"tool": "mcp__session-tools__sessions_send",
                 "input": {"session_id": thread, "message": "From Claude Code: basil."}}
    claude(["--resume", session, "Answer the thread\n" + claude_endpoint.SCRIPT_MARK
            + json.dumps([send_step])])
    results = [t for r in claude_requests() for t in claude_texts(r["request"])
               if f"accepted for {thread}" in t]
    check(bool(results), "a Claude Code session's send to a Codex thread is accepted", results[-1:])
    codex(["resume", thread, script("Mail?", [{"say": "Basil it is."}])], folder)
    seen = texts_seen(requests()[-1])
    check(sum(t.count("From Claude Code: basil.") for t in seen) == 1
          and any(t.startswith(FRAME) for t in seen),
          "Codex's hook hands the Claude Code session's message over once, framed")
    live = sorted((STATE / "live").glob("*.json")) if (STATE / "live").is_dir() else []
    check(live == [], "no live registration is left after the Claude Code sessions end", live)
    server.shutdown()


def codex_env():
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(HOME),
            "CODEX_HOME": str(CODEX_HOME), "SCRIPTED_API_KEY": "scripted", "LANG": "C.UTF-8"}


def daemon(command):
    """`codex app-server daemon COMMAND`; its last line of JSON, parsed."""
    run = subprocess.run([CODEX, "app-server", "daemon", command], env=codex_env(),
                         capture_output=True, text=True, timeout=180)
    lines = [line for line in run.stdout.splitlines() if line.startswith("{")]
    return json.loads(lines[-1]) if lines else {"exit": run.returncode, "stderr": run.stderr[-800:]}


def through_the_daemon(caller, folder):
    """With the app-server daemon running (offline, on this CODEX_HOME), a send to a
    cold thread wakes it at once: the daemon resumes it and runs the message as a new
    turn, with no hook and no person; the send says handed over only then."""
    shed = codex([script("Tidy the shed", [{"say": "Shed tidy."}])], folder)
    started = daemon("start")
    if not check(started.get("status") in ("started", "alreadyRunning"),
                 "the app-server daemon starts offline", started):
        return
    try:
        codex(["resume", caller, script("Ask the shed", [
            tool("sessions_send", session_id=shed,
                 message=f"Is the shed tidy?\n{endpoint.SCRIPT_MARK}"
                         + json.dumps([{"say": "The shed is tidy."}])),
            tool("sessions_read", session_id=shed),
        ])], folder)
        sent = (tool_results("sessions_send", caller) or [""])[-1]
        check(sent.startswith(f"accepted for {shed} | mode=queue")
              and without_id(sent).endswith("| hop=1 (woke a cold session)")
              and "\nThe message was handed to that session as a new turn." in sent,
              "a send to a cold thread with the daemon running wakes it, handed over as a new turn",
              sent)
        deadline = time.time() + 60
        turns = []
        while time.time() < deadline and not turns:
            turns = [r for r in requests() if any(
                t.startswith(FRAME) and "Is the shed tidy?" in t for t in texts_seen(r))]
            time.sleep(0.5)
        check(len(turns) == 1,
              "the daemon runs the message in the cold thread at once, as its own turn",
              len(turns))
        check(not list((STATE / "inbox" / shed).glob("*.json")) and
              len(list((STATE / "handed" / shed).glob("*.json"))) == 1,
              "the message went straight to handed/, so no hook hands it over again")
        read = (tool_results("sessions_read", caller) or [""])[-1]
        check("\nyour messages to it: 1 handed over\n" in read,
              "the sender's read right after says it was handed over", read)
        # Now the daemon holds the thread, idle: a message starts a turn (no waking), and
        # a steer sent while that turn runs goes into it at its next step. The turn's
        # step lasts 8 s (under exec_command's 10 s wait for output): the steer must come
        # before the step ends, less the 0.4 s the send looks at the rollout for, and the
        # caller's next step, its hooks and the send once took more than 4 s in CI.
        sleep = {"tool": "exec_command", "input": {"cmd": "sleep 8"}}
        codex(["resume", caller, script("Keep the shed busy", [
            tool("sessions_send", session_id=shed,
                 message=f"Sweep the shed.\n{endpoint.SCRIPT_MARK}"
                         + json.dumps([sleep, {"say": "Swept."}])),
            tool("sessions_send", session_id=shed, mode="steer", message="Also oil the hinges."),
        ])], folder)
        queued, steered = ([""] * 2 + tool_results("sessions_send", caller))[-2:]
        check(queued.startswith(f"accepted for {shed} | mode=queue")
              and without_id(queued).endswith("| hop=1"),
              "a send to an idle thread the daemon holds is taken at once, nothing woken", queued)
        # The daemon took the steer, but the rollout shows it only once the running turn
        # takes it at its next step: until then the send says it waits (an offer).
        check(steered.startswith(f"accepted for {shed} | mode=steer")
              and "handed into its running turn at its next step" in steered,
              "a steer while the daemon runs that turn is given to it, waiting for its next step",
              steered)
        deadline = time.time() + 60
        into = []
        while time.time() < deadline and not into:
            into = [r for r in requests()
                    if any("Also oil the hinges." in t for t in texts_seen(r))
                    and any(i.get("type") == "function_call_output" for i in r["input"][-4:])]
            time.sleep(0.5)
        check(bool(into) and any("Sweep the shed." in t for t in texts_seen(into[0])),
              "the real model input has the steer inside the running turn, after its tool step",
              len(into))
        # A person's interactive Codex attached to the daemon (`codex --remote unix://`):
        # its idle thread gets a message at once, as a new turn on their screen.
        interactive_thread_on_the_daemon(caller, folder)
        # The woken thread's answers, then a person's next prompt there: the hook finds
        # nothing waiting, and the model sees each message once.
        deadline = time.time() + 60
        while time.time() < deadline and not any(
                "Swept." in t for r in requests() for t in texts_seen(r)):
            time.sleep(0.5)
        daemon("stop")
        codex(["resume", shed, script("Anything else?", [{"say": "No."}])], folder)
        seen = texts_seen(requests()[-1])
        check(all(sum(words in t for t in seen) == 1 for words in
                  ("Is the shed tidy?", "Sweep the shed.", "Also oil the hinges."))
              and any("The shed is tidy." in t for t in seen)
              and any("Swept." in t for t in seen),
              "the thread's history holds each message once, and the answers it gave",
              [t[:120] for t in seen])
        check(not list((STATE / "inbox" / shed).iterdir())
              and len(list((STATE / "handed" / shed).glob("*.json"))) == 3,
              "each of the three is handed over, the steer once its rollout showed it",
              sorted(p.name for p in (STATE / "inbox" / shed).iterdir()))
    finally:
        daemon("stop")
        stop_the_daemons_updater()


def inbound(thread, policy):
    run = subprocess.run([HOST_SHIM, "inbound", thread, policy, "--state-dir", str(STATE)],
                         capture_output=True, text=True, timeout=30)
    return run.stdout + run.stderr


def conversations(caller, beds, folder):
    """Contract 0.4.0 with the real Codex: an ask answered within await_reply_seconds
    (the answer names only what it answers), a message held for its person and
    released, one refused, and a chatty sender capped."""
    reply_words = "ask reply: the beds are dug"
    reply_back = json.dumps([tool("sessions_send", reply_to="$newest-message-id",
                                  message=reply_words)])
    working = subprocess.Popen(
        [sys.executable, __file__, "--resume", beds,
         script("Dig again", [{"tool": "exec_command", "input": {"cmd": "sleep 5"}},
                              {"say": "Dug again."}])])
    time.sleep(2)
    codex(["resume", caller, script("Ask the beds and wait", [
        tool("sessions_send", session_id=beds, await_reply_seconds=90,
             message=f"Are the beds dug?\n{endpoint.SCRIPT_MARK}{reply_back}"),
    ])], folder)
    check(working.wait(timeout=180) == 0, "the asked thread's run ends")
    asked = (tool_results("sessions_send", caller) or [""])[-1]
    check(asked.startswith(f"accepted for {beds} | mode=queue")
          and f"\nreply from {beds} (hop 2):\n{reply_words}" in asked,
          "an ask is answered within await_reply_seconds: the reply is in the send's own result",
          asked)
    codex(["resume", caller, script("Anything new?", [{"say": "No."}])], folder)
    seen = texts_seen(requests()[-1])
    check(not any(FRAME in t and reply_words in t for t in seen)
          and not list((STATE / "inbox" / caller).glob("*.json")),
          "the awaited reply counts as handed over: no hook hands it over again",
          [t[:160] for t in seen if reply_words in t])

    held = codex([script("Deep work", [{"say": "Working."}])], folder)
    refusing = codex([script("Do not disturb", [{"say": "Quiet."}])], folder)
    said = inbound(held, "hold") + inbound(refusing, "refuse")
    held_words = "held: the seedlings are in"
    codex(["resume", caller, script("Tell the others", [
        tool("sessions_send", session_id=held, message=held_words),
        tool("sessions_send", session_id=refusing, message="refused: hello?"),
        tool("sessions_list"),
    ])], folder)
    to_held, to_refusing = ([""] * 2 + tool_results("sessions_send", caller))[-2:]
    check("The person using that session holds incoming messages" in to_held,
          "a send to a held thread is accepted and says it is held", (said, to_held))
    check(to_refusing.startswith(
              f"sessions_send refused (refused-by-target): the person using {refusing}")
          and not list((STATE / "inbox" / refusing).glob("*.json")),
          "a send to a refusing thread is refused-by-target and delivers nothing", to_refusing)
    listing = (tool_results("sessions_list", caller) or [""])[-1]
    check(any(l.startswith(f"- {held} ") and l.endswith("| inbound=hold") for l in listing.splitlines()),
          "the listing shows what the thread's person lets in", listing)
    codex(["resume", held, script("Any news?", [{"say": "None."}])], folder)
    check(not any(held_words in t for t in texts_seen(requests()[-1])),
          "a held message is not handed over")
    released = inbound(held, "accept")
    codex(["resume", held, script("And now?", [{"say": "Got it."}])], folder)
    check("released: 1 message" in released
          and sum(held_words in t for t in texts_seen(requests()[-1])) == 1,
          "released by the person (host-shim inbound accept), it is handed over once", released)

    target = codex([script("A quiet bed", [{"say": "Quiet."}])], folder)
    chatty = codex([script("Chatty", [
        tool("sessions_send", session_id=target, message=f"note {n}") for n in range(21)
    ])], folder)
    notes = tool_results("sessions_send", chatty)
    check(len(notes) == 21 and all(n.startswith("accepted") for n in notes[:20])
          and notes[-1].startswith(
              f"sessions_send refused (rate-limited): you sent 20 messages to {target} in the "
              "last 60 minutes, and this deployment allows 20 (maxSendsPerTarget)."),
          "a chatty sender is capped at the 21st send to one thread (maxSendsPerTarget)",
          notes[-1:] or notes)
    check(len(list((STATE / "inbox" / target).glob("*.json"))) == 20,
          "the capped send delivered nothing")


def claude_suite():
    """Claude Code's real-client suite as a module: its tmux pane and its waiting."""
    return suite_of("claude-code")


def rollout_ids():
    return {p.name[-42:-6] for p in (CODEX_HOME / "sessions").rglob("rollout-*.jsonl")}


def interactive_thread_on_the_daemon(caller, folder):
    """The interactive Codex, in a terminal of its own (tmux), attached to the daemon
    as host-shim/harnesses/codex/README.md says (`--remote unix://`): a person's prompt, then, while the thread
    sits idle, a message from another thread, which appears on their screen as a new
    turn and is answered, with no prompt of theirs."""
    if not check(shutil.which("tmux") is not None,
                 "tmux is installed (the interactive check drives codex in a terminal)"):
        return
    helpers = claude_suite()
    name = "codex-suite-tui"
    subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)
    words = ["env", *(f"{k}={v}" for k, v in codex_env().items()), CODEX,
             "--remote", "unix://", "-c", 'approval_policy="never"']
    subprocess.run(["tmux", "new-session", "-d", "-s", name, "-x", "160", "-y", "45",
                    "-c", str(folder), " ".join(shlex.quote(w) for w in words)], check=True)
    pane = helpers.Pane(name)
    try:
        # A first start asks the person what they answer once: trust this folder ("1.
        # Trust and continue"), and, with hooks.json in place, review the hooks (the
        # host-shim/harnesses/codex/README.md's step 4: "2. Trust all and continue"). Each shows a moment after the
        # prompt does.
        hooks_offered = False
        deadline = time.time() + 90
        ready_since = None
        while time.time() < deadline:
            screen = pane.screen()
            if "Hooks need review" in screen:
                hooks_offered = "2. Trust all and continue" in screen
                pane.keys("Down")
                time.sleep(0.3)
                pane.keys("Enter")
                ready_since = None
            elif "Trust this folder?" in screen and "1. Trust and continue" in screen:
                pane.keys("Enter")
                ready_since = None
            elif "Ask Codex to do anything" in screen:
                ready_since = ready_since or time.time()
                if time.time() - ready_since > 5:
                    break
            time.sleep(0.5)
        check(hooks_offered, "codex asks to review the hooks, offering to trust them all")
        if not check(ready_since is not None and "Ask Codex to do anything" in pane.screen(),
                     "the interactive codex starts, attached to the daemon", pane.screen()):
            return
        before = rollout_ids()
        pane.type("Mind the tools")
        helpers.wait_for(lambda: rollout_ids() - before, 30)
        helpers.wait_for(lambda: "Worked for" in pane.screen(), 30)
        new = sorted(rollout_ids() - before)
        if not check(len(new) == 1, "the person's prompt starts a thread",
                     f"{new}\n{pane.screen()}"):
            return
        person = new[0]
        codex(["resume", caller, script("Tell the person", [
            tool("sessions_send", session_id=person, message="The tools are oiled."),
        ])], folder)
        sent = (tool_results("sessions_send", caller) or [""])[-1]
        check(sent.startswith(f"accepted for {person} | mode=queue")
              and without_id(sent).endswith("| hop=1"),
              "a send to the idle interactive thread is accepted (it is live: nothing woken)",
              sent)
        shown = helpers.wait_for(
            lambda: FRAME in pane.screen() and "The tools are oiled." in pane.screen()
            and pane.screen().count("Worked for") >= 2, 60)
        check(shown, "the person's screen shows the message as a new turn, answered, at once",
              pane.screen())
        asked = [r for r in requests() if r.get("prompt_cache_key") == person
                 and any(t.startswith(FRAME) and "The tools are oiled." in t for t in texts_seen(r))]
        check(len(asked) >= 1, "the model of that thread got the frame as the person's message")
        check(not list((STATE / "inbox" / person).glob("*.json"))
              and len(list((STATE / "handed" / person).glob("*.json"))) == 1,
              "and the spool says handed over")
    finally:
        pane.close()


def stop_the_daemons_updater():
    """`daemon stop` leaves the daemon's update loop running (Codex 0.169.0); it is this
    CODEX_HOME's own process, named in its pid file, and a CI run must not leave it."""
    try:
        pid = json.loads((CODEX_HOME / "app-server-daemon" / "daemon-updater.pid").read_text())["pid"]
        if str(CODEX_HOME) in Path(f"/proc/{pid}/cmdline").read_text():
            os.kill(pid, 15)
    except (OSError, ValueError, KeyError):
        pass


def claims_keep_writes_out(folder):
    """Contract 0.6.0: one thread claims a file; another thread's apply_patch there is
    denied by its own PreToolUse hook, in words naming the holder and the reason, and
    nothing is written; its patch elsewhere goes through. (The scripted model is given
    apply_patch through a model catalog, as Codex gives its own models.)"""
    owner = codex([script("Replant the beds", [
        tool("sessions_claim", paths=["beds.md"], reason="replanting")])], folder)
    claimed = tool_results("sessions_claim", owner)
    catalog = WORK / "model-catalog.json"
    catalog.write_text(endpoint.model_catalog())
    target, own = folder / "beds.md", folder / "notes.md"
    patch = "*** Begin Patch\n*** Add File: {}\n+{}\n*** End Patch\n"
    writer = codex(["-c", f'model_catalog_json="{catalog}"', "--sandbox", "workspace-write",
                    script("Tidy the beds", [
                        {"tool": "apply_patch", "input": patch.format("beds.md", "x")},
                        {"tool": "apply_patch", "input": patch.format("notes.md", "mine")},
                        {"say": "done"}])], folder)
    wrote = tool_results("apply_patch", writer)
    a_claim_keeps_writes_out(
        "a Codex thread", claimed,
        "another thread's apply_patch into the claim is denied by its PreToolUse hook",
        wrote[:1] if len(wrote) == 2 else [], owner, (target, own, "mine\n"))


def main():
    shutil.rmtree(WORK, ignore_errors=True)
    setup_again = set_up()
    check("nothing changed" in setup_again, "host-shim setup codex twice changes nothing",
          setup_again)
    config = (CODEX_HOME / "config.toml").read_text()
    check(config.startswith("# my Codex settings\n" + endpoint.codex_config(PORT))
          and "[mcp_servers.session-tools]" in config,
          "setup keeps the person's config.toml, comment and all, and adds the server", config)
    endpoint.serve(PORT, str(LOG))
    folder = WORK / "garden"
    folder.mkdir(parents=True)

    # A second thread to talk to, then a thread that lists, reads and sends.
    beds = codex([script("Plan the beds", [{"say": "Three beds."}])], folder)
    caller = codex([script("Look around", [
        tool("sessions_list", scope="all"),
        tool("sessions_read", session_id=beds),
        tool("sessions_send", session_id=beds, message="Water the beds, please."),
        {"say": "Done."},
    ])], folder)
    listing = (tool_results("sessions_list") or [""])[-1]
    check(f"- {caller} [live, top-level]" in listing and "| this session" in listing,
          "a thread lists itself as this session, live (its writer lock is held)", listing)
    check(f"- {beds} [cold, top-level]" in listing and "Plan the beds" in listing,
          "and the other thread, cold, with its title", listing)
    read = (tool_results("sessions_read") or [""])[-1]
    check(f"session {beds} [cold, top-level]" in read and "Three beds." in read
          and "environment_context" not in read,
          "a read shows the other thread's words, not Codex's own context", read)
    sent = (tool_results("sessions_send") or [""])[-1]
    check(sent.startswith(f"accepted for {beds} | mode=queue") and "| hop=1" in sent,
          "a send is accepted, hop 1", sent)
    check(len(list((STATE / "inbox" / beds).glob("*.json"))) == 1,
          "the message waits in the target's spool")

    # The target's next prompt: its UserPromptSubmit hook hands the frame over, once.
    codex(["resume", beds, script("Anything new?", [{"say": "The beds need water."}])], folder)
    seen = texts_seen(requests()[-1])
    framed = [t for t in seen if t.startswith(FRAME) and "Water the beds, please." in t]
    check(len(framed) == 1, "the target's hook hands the message over once, as the frame",
          [t[:200] for t in seen])
    check(not list((STATE / "inbox" / beds).glob("*.json")) and
          len(list((STATE / "handed" / beds).glob("*.json"))) == 1,
          "and it left the inbox for handed/")
    codex(["resume", beds, script("And now?", [{"say": "Nothing new."}])], folder)
    seen = texts_seen(requests()[-1])
    check(sum("Water the beds, please." in t for t in seen) == 1,
          "the next turn carries it once (in history), not handed over again")

    # A message that arrives while the target works is handed over at its Stop, which
    # continues the turn with it; its words script the target's answer, a send back
    # with no person's message in between: one hop further.
    answer_back = json.dumps([tool("sessions_send", session_id=caller, message="Watered.")])
    working = subprocess.Popen(
        [sys.executable, __file__, "--resume", beds,
         script("Dig for a while", [{"tool": "exec_command", "input": {"cmd": "sleep 5"}},
                                    {"say": "Dug."}])])
    time.sleep(2)
    codex(["resume", caller, script("Ask the beds to answer", [
        tool("sessions_send", session_id=beds,
             message=f"Tell me when watered.\n{endpoint.SCRIPT_MARK}{answer_back}"),
    ])], folder)
    check(working.wait(timeout=180) == 0, "the working thread's run ends")
    replies = [r for r in all_tool_results("sessions_send") if f"accepted for {caller}" in r]
    check(len(replies) == 1 and "| hop=2" in replies[0],
          "a reply within the turn the message continued is hop 2 (the chain read off the real rollout)",
          replies)

    conversations(caller, beds, folder)
    claims_keep_writes_out(folder)
    claude_code_and_codex(caller, folder)
    through_the_daemon(caller, folder)

    # `host-shim doctor` over what the real Codex wrote: its version, the server it starts,
    # the hooks, and the trust the person gave them in the interactive run above.
    bin_dir = ROOT / "host-shim" / "harnesses" / "codex" / "suite" / "node_modules" / ".bin"
    doctor = subprocess.run(
        [HOST_SHIM, "doctor", "--codex-home", str(CODEX_HOME), "--state-dir", str(STATE)],
        env=dict(codex_env(), PATH=f"{bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}"),
        capture_output=True, text=True, timeout=180)
    print("     host-shim doctor said:\n" + "\n".join("       " + l for l in doctor.stdout.splitlines()))
    check("ok       Codex 0.169.0, the version the tools are tested with" in doctor.stdout
          and "starts and lists sessions_list, sessions_read, sessions_send" in doctor.stdout
          and "ok       the hooks (`host-shim codex-hook`) are in" in doctor.stdout,
          "host-shim doctor finds the real Codex set up: its version, the server, the hooks",
          doctor.stdout)
    check("ok       Codex trusts the hooks" in doctor.stdout,
          "host-shim doctor reads the hook trust the real Codex recorded", doctor.stdout)
    check(doctor.returncode == 0 and "PROBLEM" not in doctor.stdout,
          "host-shim doctor finds nothing wrong after ordinary Codex turns", doctor.stdout[-3000:])

    # `host-shim setup codex --remove`: the server and hooks gone, the person's lines and
    # what Codex wrote itself since (trusted folders and hooks) kept.
    subprocess.run([HOST_SHIM, "setup", "codex", "--remove", "--codex-home", str(CODEX_HOME)],
                   check=True, capture_output=True, env=codex_env())
    config = (CODEX_HOME / "config.toml").read_text()
    check(config.startswith("# my Codex settings\n" + endpoint.codex_config(PORT))
          and "mcp_servers" not in config and not (CODEX_HOME / "hooks.json").exists(),
          "setup --remove takes out the server and the hooks, and only them", config)

    finish()


if __name__ == "__main__":
    if sys.argv[1:2] == ["--resume"]:
        # One `codex exec resume` in its own process (the suite runs two at once).
        codex(["resume", sys.argv[2], sys.argv[3]], WORK / "garden")
    else:
        main()
