"""The real Claude Code as the peer of another harness's suite: the pinned binary
(`npm ci` in host-shim/harnesses/claude-code/suite) on that suite's scratch HOME, driven
by its own scripted Messages API endpoint (that folder's claude_code_endpoint.py), one
`claude -p` turn at a time. The
other suite sets both harnesses up (`host-shim setup`), so one listing holds both and
each hands the other's messages over by its own hooks.
"""

import json
import subprocess
import uuid
from pathlib import Path

from . import real_client

CLAUDE_SUITE = Path(__file__).resolve().parents[2] / "host-shim" / "harnesses" / "claude-code" / "suite"
CLAUDE = CLAUDE_SUITE / "node_modules" / ".bin" / "claude"
FRAME = real_client.FRAME


class ClaudeCodePeer:
    """Claude Code with its endpoint running, on `home`, working in `work`; `env` is the
    other harness's environment (HOME and PATH among it). Stop it with `close()`."""

    def __init__(self, home, work, env, log_path):
        self.endpoint = real_client.load("claude_endpoint", CLAUDE_SUITE / "claude_code_endpoint.py")
        self.log_path = str(log_path)
        self.server = self.endpoint.start(self.log_path)
        self.work = work
        (Path(home) / ".claude" / "projects").mkdir(parents=True, exist_ok=True)
        self.env = dict(env, PWD=str(work),
                        ANTHROPIC_BASE_URL=f"http://127.0.0.1:{self.server.server_port}",
                        ANTHROPIC_API_KEY="sk-scripted-endpoint", DISABLE_TELEMETRY="1",
                        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_AUTOUPDATER="1")

    @staticmethod
    def installed():
        """Whether the pinned Claude Code is installed, as a check of the suite that
        needs it."""
        return real_client.holds(
            "the pinned Claude Code is installed (npm ci in host-shim/harnesses/claude-code/suite)",
            CLAUDE.exists())

    def run(self, *args):
        """One `claude -p` turn; a failure is printed, and the checks after it fail."""
        done = subprocess.run([str(CLAUDE), "-p", *args], env=self.env, cwd=self.work,
                              capture_output=True, text=True, timeout=180)
        if done.returncode != 0:
            print(f"     claude exited {done.returncode}: {done.stderr[-800:]}")

    def new_session(self, prompt):
        """A new session of one turn (`prompt` and no script); its id."""
        session = str(uuid.uuid4())
        self.run("--session-id", session, prompt + "\n" + self.endpoint.SCRIPT_MARK + "[]")
        return session

    def send(self, session, prompt, target, message):
        """A turn of `session` whose model sends `message` to `target`."""
        self.run("--resume", session, prompt + "\n" + self.endpoint.SCRIPT_MARK + json.dumps([
            {"tool": "mcp__session-tools__sessions_send",
             "input": {"session_id": target, "message": message}}]))

    def handed_once(self, words):
        """Whether the last turn's model was given `words` once, framed (and the texts)."""
        seen = self.endpoint.request_texts(self.endpoint.last_request(self.log_path))
        once = sum(t.count(words) for t in seen) == 1 and any(FRAME in t for t in seen)
        return once, seen[-3:]

    def close(self):
        self.server.shutdown()


HARNESSES = Path(__file__).resolve().parents[2] / "host-shim" / "harnesses"


def endpoint_of(harness):
    """The scripted endpoint of the harness in folder `harness` (its suite's
    `<harness>_endpoint.py`), for a suite that runs that harness as a peer."""
    name = harness.replace("-", "_")
    return real_client.load(f"{name}_endpoint", HARNESSES / harness / "suite" / f"{name}_endpoint.py")


def suite_of(harness):
    """The real-client suite of the harness in folder `harness`, as a module (its folder
    on the path first, as when it runs: it imports its own endpoint)."""
    import sys
    folder = HARNESSES / harness / "suite"
    if str(folder) not in sys.path:
        sys.path.append(str(folder))
    return real_client.load(f"{harness.replace('-', '_')}_suite", folder / "suite.py")


def binary_of(harness, command):
    """The pinned binary `command` of the harness in folder `harness` (`npm ci` in its
    suite folder installs it)."""
    return HARNESSES / harness / "suite" / "node_modules" / ".bin" / command
