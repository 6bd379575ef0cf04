"""What the real-client suites (each harness folder's `suite/`, and tests/machines)
share: the checkout and the command under test, the frame's first line, each check
printed as it runs and the failed ones named at the end, the plumbing of a scripted model endpoint (a
JSON-lines log of what it was asked, a threaded server on loopback), another suite's
module loaded, and processes a suite started stopped."""

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

failures = []

# The checkout, and the `host-shim` under test (HOST_SHIM, relative to the checkout).
ROOT = Path(__file__).resolve().parents[2]
HOST_SHIM = str((ROOT / os.environ.get("HOST_SHIM", "target/debug/host-shim")).resolve())
# The first line of every frame a target is given.
FRAME = "Cross-session message from another session of this harness."


# The prompt a suite's wake command starts a cold session with.
WAKE_PROMPT = "A message from another session is waiting."


def a_wake_hands_the_message_over(who, answer, log_path, before, texts_of, wake_log,
                                  body="Wake up and review.", how=""):
    """A send to a cold session, with the suite's wake command set up: the answer says
    the wake was started and the message waits, and the woken session's model, at its
    first request with WAKE_PROMPT, is given the message once, as its frame (`how` ends
    that check's words)."""
    holds(f"a send to a cold {who} session starts the wake command and says the message waits",
          wake_started(answer), answer)
    seen = first_request_with(log_path, before, WAKE_PROMPT, texts_of)
    holds(f"the woken session's model is given the message once, as its frame{how}",
          seen is not None and sum(t.count(body) for t in seen if FRAME in t) == 1,
          [seen and seen[-2:], wake_log.read_text()[-2000:] if wake_log.exists() else "no wake.log"])
    return seen


def wake_started(answer):
    """Whether a send's answer says the wake command was started and the message waits:
    never "woke", which is said only of a session the host saw running (a real client
    takes seconds to start, longer than a call waits)."""
    return ("(started a wake for a cold session)" in answer
            and "(woke a cold session)" not in answer
            and "handed over when the woken session's turn begins" in answer)


def sample_frame(body, sender="5f0c1e2d-0000-4000-8000-00000000beef", title="Lead",
                 message_id="m-00000000f1a5"):
    """A whole frame as the plugin writes one (queue, hop 1): what a fixture generator
    hands over by hand, where no plugin runs."""
    return (f"{FRAME}\nfrom-session: {sender} (\"{title}\")\ndelivery: queue\nhop: 1\n"
            f"message-id: {message_id}\n--- message begins ---\n{body}\n--- message ends ---")


def frames_seen(requests, words, texts_of):
    """How many times `words` came to the model inside a frame in the last of a turn's
    model `requests` (`texts_of(request)`: every text of one)."""
    if not requests:
        return 0
    return sum(text.count(words) for text in texts_of(requests[-1]) if FRAME in text)


def check(condition, what, detail=""):
    """Prints the check; a failed one is kept, with `detail` printed under it."""
    print(("ok   " if condition else "FAIL ") + what, flush=True)
    if not condition:
        failures.append(what)
        if detail:
            print("     " + str(detail)[:3000].replace("\n", "\n     "), flush=True)
    return condition


def fixture_folders(harness, version):
    """A fixture generator's folders: its scratch folder under /tmp, the HOME in it, and
    the fixtures it writes (`host-shim/harnesses/<harness>/fixtures/<version>`)."""
    work = Path(f"/tmp/{harness}-fixtures")
    return work, work / "home", ROOT / "host-shim" / "harnesses" / harness / "fixtures" / version


def holds(what, condition, detail=""):
    """A check, named first (any truthy condition holds)."""
    return check(bool(condition), what, detail)


def client(variable, harness, command):
    """The real client under test: `$variable` (relative to the checkout), else the one
    the harness folder's `suite/install` put in its node_modules."""
    default = f"host-shim/harnesses/{harness}/suite/node_modules/.bin/{command}"
    return str((ROOT / os.environ.get(variable, default)).resolve())


def run_for_fixture(argv, home, cwd, env):
    """Runs a real client once for a fixture generator, offline: PATH, the scratch
    `home`, C.UTF-8 and `env` (its endpoint's); what it said is the error when it fails."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8",
           **env}
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=180)
    if done.returncode != 0:
        raise SystemExit(done.stdout + done.stderr)


def folders(harness):
    """A suite's folders: its own (target/<harness>-suite, made anew by the suite), the
    scratch HOME in it, the tools' state folder and the scripted endpoint's log."""
    work = ROOT / "target" / f"{harness}-suite"
    return work, work / "home", work / "state", work / "endpoint.jsonl"


def logged(log_path):
    """Every record of a scripted endpoint's log, in order (none before its first)."""
    if not Path(log_path).exists():
        return []
    return [json.loads(line) for line in Path(log_path).read_text().splitlines() if line.strip()]


def audit(state):
    """`host-shim log --json` over the state folder `state`: each message the inbox
    accepted, offered and handed over, in order."""
    done = subprocess.run([HOST_SHIM, "log", "--json", "--state-dir", str(state)],
                          capture_output=True, text=True, check=True)
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def events_named(state, kind, to):
    """The audit log's `kind` events (accepted, handed-over, …) for the session `to`."""
    return [e for e in audit(state) if e.get("event") == kind and e.get("to") == to]


def script(text, *steps):
    """A prompt the scripted endpoints follow: `text`, then the model's steps as JSON
    after the script mark."""
    from .chat_completions import SCRIPT_MARK
    return f"{text} {SCRIPT_MARK}{json.dumps(list(steps))}"


def the_prompt_is_read(read):
    """The check every suite makes of a read of the reviewer: its prompt ("Review the
    docs …") as its model saw it."""
    holds("sessions_read shows the other session's prompt as its model saw it",
          read and "Review the docs" in read[0] and "--- user (seq" in read[0], read)


def send_and_retry(call, target):
    """A send to `target` and the model's retry of it in the same words: two steps of
    a script, each `call("sessions_send", …)` in the harness's own tool call."""
    return [call("sessions_send", session_id=target, message="Docs can ship.")] * 2


def a_send_and_its_retry(answers, target, state):
    """The checks every suite makes of a send and the model's retry of it in the same
    words (a new call): the first is accepted and waits for `target`'s next turn, the
    retry answers with the first message's id, and the inbox accepted one message."""
    import re
    holds("the send is accepted, waiting for the reviewer's next turn",
          len(answers) >= 2 and answers[0].startswith(f"accepted for {target} | mode=queue"),
          answers)
    first = re.findall(r"id=(m-[0-9a-f]{12})", answers[0] if answers else "")
    holds("the model's retry in the same words is the first message again, not a second",
          len(answers) >= 2 and first and f"id={first[0]}" in answers[1]
          and len(events_named(state, "accepted", target)) == 1, answers)


def a_claim_keeps_writes_out(who, claimed, refusal, refused, holder, files):
    """The checks every suite makes of contract 0.6.0's claims: `who` ("an OpenCode
    session") claimed `files[0]` (`claimed`: the claim tool's results); `refused`, the
    texts the writer's model read for each write into the claim, each names `holder`,
    the reason ("replanting") and the next step, as `refusal` says; nothing was written
    there, and the writer's other file, `files[1]`, holds `files[2]`."""
    target, own, text = files
    holds(f"{who} claims a file", bool(claimed) and claimed[0].startswith("claimed c-")
          and str(target) in claimed[0], claimed)
    holds(f"{refusal}, naming the holder, the reason and the next step",
          bool(refused) and all("write refused (claimed)" in t and holder in t
                                and '"replanting"' in t and "sessions_send" in t for t in refused),
          refused)
    holds("nothing was written into the claimed file, and the other write went through",
          not target.exists() and own.exists() and own.read_text() == text,
          (target.exists(), own.exists() and own.read_text()))
    print("     the model read:", (refused or [""])[0][:400])


class HeadlessRun:
    """One headless turn of a harness's real client (`args`, in `cwd` with `env`), run
    to its end: what it printed, and the model requests it made (the endpoint's log at
    `log_path` grew by them: runs go one at a time). A harness's run says which session
    it was (`session`), what its model read of a tool (`results`), where a request's
    texts are (`texts_of`) and what checks call the harness (`who`)."""

    def __init__(self, harness, args, cwd, env, log_path):
        before = len(logged(log_path))
        self.done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True,
                                   timeout=180)
        if self.done.returncode != 0:
            raise SystemExit(f"{harness} failed ({self.done.returncode}):\n"
                             f"{(self.done.stdout + self.done.stderr)[-3000:]}")
        self.requests = [r["request"] for r in logged(log_path)[before:] if "request" in r]

    def frames_seen(self, words):
        return frames_seen(self.requests, words, self.texts_of)


def a_wake_by_setups_command(run, harness, woken, send_tool, places, lead, sleeper):
    """The wake a headless harness's suite checks: `host-shim setup <harness>` given
    `woken` (the harness's command that resumes `{id}`) as its wake command, run
    detached (`setsid -f`: the woken session outlives the server that started it) with
    its output in `wake.log`; `lead` (a [`HeadlessRun`] class, `run`) sends to the cold
    `sleeper` with `send_tool` (the model's name for sessions_send), and
    [`a_wake_hands_the_message_over`] checks the answer and the woken model's frame.
    `places`: (the suite's folder, its state folder, the endpoint's log, the work
    folder, the harness's environment there). Gives the wake log's path."""
    root, state, log_path, work, env = places
    wake_log = root / "wake.log"
    wake = f"setsid -f sh -c 'exec {woken} > {wake_log} 2>&1'"
    subprocess.run([HOST_SHIM, "setup", harness, "--state-dir", str(state),
                    f"--{harness}-wake-command", wake], check=True, capture_output=True, env=env)
    before = len(logged(log_path))
    sent = run(script("Wake the sleeper", {"tool": send_tool, "input": {
        "session_id": sleeper, "message": "Wake up and review."}}, {"say": "sent"}),
        work, session=lead)
    answer = (sent.results(send_tool) or [""])[-1]
    a_wake_hands_the_message_over(run.who, answer, log_path, before, run.texts_of, wake_log)
    return wake_log


def claims_between_two_runs(run, work, who, tools, write, denied_by):
    """Contract 0.6.0's claims through a harness whose sessions are headless runs
    (`run(prompt, cwd)`, a [`HeadlessRun`]): one session claims `beds.md` in `work`,
    another writes there and into `notes.md` with the harness's write tool; the first
    write is denied by `denied_by` (the harness's hook), naming the holder and the
    reason, and nothing is written; the second goes through. `tools`: the model's names
    for the claim tool and the write tool; `write(path, text)`: the write tool's input."""
    claim_tool, write_tool = tools
    owner = run(script("Replant the beds",
                       {"tool": claim_tool, "input": {"paths": ["beds.md"], "reason": "replanting"}},
                       {"say": "claimed"}), work)
    target, own = work / "beds.md", work / "notes.md"
    writer = run(script("Tidy the beds", {"tool": write_tool, "input": write(target, "x")},
                        {"tool": write_tool, "input": write(own, "mine")}, {"say": "done"}), work)
    wrote = writer.results(write_tool)
    a_claim_keeps_writes_out(
        who, owner.results(claim_tool),
        f"another session's {write_tool} into the claim is denied by {denied_by}",
        wrote[:1] if len(wrote) == 2 else [], owner.session, (target, own, "mine"))


def finish():
    """Names every failed check and exits 1, or says all held."""
    print()
    if failures:
        print(f"{len(failures)} check(s) failed:")
        for what in failures:
            print(f"  - {what}")
        sys.exit(1)
    print("every check held")


def doctor_finds_nothing_wrong(host_shim, args, env, after):
    """`host-shim doctor` after ordinary use of a harness: it exits 0 (a registration of
    a session's process that ended is the host's own bookkeeping, swept). Its report."""
    doctor = subprocess.run([host_shim, "doctor", *args], env=env, capture_output=True, text=True)
    check(doctor.returncode == 0 and "PROBLEM" not in doctor.stdout,
          f"host-shim doctor finds nothing wrong after {after}",
          doctor.stdout[-3000:] + doctor.stderr[-500:])
    return doctor.stdout


_log_lock = threading.Lock()


class LoggedHandler(BaseHTTPRequestHandler):
    """A scripted endpoint's handler: quiet, HTTP/1.1, each request a line of its log."""

    protocol_version = "HTTP/1.1"
    log_path = None

    def log_message(self, *args):
        pass

    def log(self, record):
        if self.log_path:
            with _log_lock, open(self.log_path, "a") as log:
                log.write(json.dumps(record) + "\n")

    def reply(self, status, content_type, body):
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def json_body(self, not_json):
        """The request's body, read as JSON; None once answered 400 with `not_json` (the
        API's own error body) when it is not JSON."""
        raw = self.rfile.read(int(self.headers.get("content-length", 0)))
        try:
            return json.loads(raw)
        except ValueError:
            self.reply(400, "application/json", not_json)
            return None


def serve(handler, port, log_path):
    """Serves `handler` on 127.0.0.1:`port`, logging to `log_path`, in a daemon thread;
    returns the server."""
    handler.log_path = log_path
    server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def load(name, path):
    """Another suite's module (its endpoint), loaded from `path`."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def stopped(argument, seconds=60):
    """Waits for every process whose command line holds `argument` to end; stops those
    still running after `seconds`. Whether they had ended by themselves."""
    def running():
        found = []
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit():
                continue
            try:
                words = (proc / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if argument.encode() in words:
                found.append(int(proc.name))
        return found

    deadline = time.time() + seconds
    while running() and time.time() < deadline:
        time.sleep(0.25)
    left = running()
    for pid in left:
        try:
            os.kill(pid, 9)
        except OSError:
            pass
    return not left


def first_request_with(log_path, after, words, texts_of, seconds=90):
    """The texts (`texts_of(request)`) of the first model request logged in `log_path`
    after its first `after` lines whose texts hold `words`, waited for up to `seconds`
    (a process the suite started makes it); None when none came."""
    def found():
        lines = Path(log_path).read_text().splitlines() if Path(log_path).exists() else []
        for line in lines[after:]:
            request = json.loads(line).get("request") if line.strip() else None
            texts = texts_of(request) if request else []
            if any(words in t for t in texts):
                return texts
        return None

    deadline = time.time() + seconds
    seen = found()
    while seen is None and time.time() < deadline:
        time.sleep(0.5)
        seen = found()
    return seen
