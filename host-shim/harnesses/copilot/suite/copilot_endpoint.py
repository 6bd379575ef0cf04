"""The scripted Chat Completions endpoint (tests/suite_kit/chat_completions.py) as GitHub Copilot
CLI is driven with it offline: `COPILOT_OFFLINE=true`, `COPILOT_PROVIDER_TYPE=openai`
and `COPILOT_PROVIDER_BASE_URL` this server's `/v1` (`copilot_env`). Copilot 1.0.102
sends nothing but the conversation's completions (no title or summary requests), a
subagent's included: a `task` call's prompt may carry a script of its own.
"""

import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "tests"))
from suite_kit import chat_completions  # noqa: E402
from suite_kit import real_client  # noqa: E402
from suite_kit.chat_completions import MODEL, SCRIPT_MARK, texts  # noqa: E402,F401


def next_action(request):
    """What the scripted model does now: ("call", step) or ("say", text)."""
    return chat_completions.scripted_action(request.get("messages", []))


Handler = chat_completions.handler(next_action)


def copilot_env(port):
    """The environment that points Copilot CLI at this endpoint on `port`, offline."""
    return {"COPILOT_OFFLINE": "true", "COPILOT_PROVIDER_TYPE": "openai",
            "COPILOT_PROVIDER_BASE_URL": f"http://127.0.0.1:{port}/v1",
            "COPILOT_MODEL": MODEL, "COPILOT_AUTO_UPDATE": "false"}


def serve(port, log_path):
    """Serves on 127.0.0.1:`port` in a daemon thread; returns the server."""
    return real_client.serve(Handler, port, log_path)


if __name__ == "__main__":
    serve(int(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else None)
    threading.Event().wait()
