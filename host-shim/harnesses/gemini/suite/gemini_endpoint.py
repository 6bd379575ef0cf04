"""A scripted endpoint in Gemini's own protocol, as Gemini CLI 0.61.0 speaks it to
`GOOGLE_GEMINI_BASE_URL`: `POST /v1beta/models/<model>:streamGenerateContent?alt=sse`
(the conversation as `contents`, each `{role, parts}`), answered as server-sent events
(`data: {candidates: [...]}`), and `:generateContent` (the model router's question,
answered in one piece). `:countTokens` is answered with a small count.

The model follows the script in the person's newest prompt, as every suite's scripted
model does (tests/suite_kit/chat_completions.py): `@script [{"tool": NAME, "input": {...}},
{"say": TEXT}]`, one step per request, a tool step as a `functionCall` part.
"""

import json
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "tests"))
from suite_kit import chat_completions  # noqa: E402
from suite_kit import real_client  # noqa: E402
from suite_kit.chat_completions import SCRIPT_MARK  # noqa: E402,F401

MODEL = "gemini-2.5-flash"


def as_messages(contents):
    """Gemini's `contents` as chat messages: a user's text parts, the model's text and
    calls (`tool_calls`), each function's response as a `tool` message."""
    messages = []
    for content in contents or []:
        parts = content.get("parts") or []
        role = content.get("role", "user")
        said = [{"text": p["text"]} for p in parts if isinstance(p.get("text"), str)]
        calls = [p["functionCall"] for p in parts if "functionCall" in p]
        answers = [p["functionResponse"] for p in parts if "functionResponse" in p]
        for text in texts({"parts": [{"functionResponse": a} for a in answers]}):
            messages.append({"role": "tool", "content": [{"text": text}]})
        if role == "model":
            messages.append({"role": "assistant", "content": said,
                             "tool_calls": [{"function": c} for c in calls]})
        elif said:
            messages.append({"role": "user", "content": said})
    return messages


def texts(content):
    """Every text of one Gemini content: a function's response as its output (or its
    JSON when it has none)."""
    found = []
    for part in content.get("parts") or []:
        if isinstance(part.get("text"), str):
            found.append(part["text"])
        if "functionResponse" in part:
            response = part["functionResponse"].get("response") or {}
            output = response.get("output") if isinstance(response, dict) else None
            found.append(output if isinstance(output, str) else json.dumps(part["functionResponse"]))
    return found


def candidate(action):
    """The one candidate of an answer: text, or a call."""
    if action[0] == "say":
        parts = [{"text": action[1]}]
    else:
        step = action[1]
        parts = [{"functionCall": {"name": step["tool"], "args": step.get("input", {})}}]
    return {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}


USAGE = {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}


class Handler(real_client.LoggedHandler):

    def do_GET(self):
        self.log({"method": "GET", "path": self.path})
        self.reply(404, "application/json", b'{"error": {"code": 404, "message": "not here"}}')

    def do_POST(self):
        request = self.json_body(b'{"error": {"code": 400, "message": "not JSON"}}')
        if request is None:
            return
        path = self.path.split("?")[0]
        record = {"method": "POST", "path": self.path, "request": request}
        if path.endswith(":countTokens"):
            self.log(record)
            self.reply(200, "application/json", json.dumps({"totalTokens": 10}).encode())
            return
        if not (path.endswith(":streamGenerateContent") or path.endswith(":generateContent")):
            self.log(record)
            self.reply(404, "application/json", b'{"error": {"code": 404, "message": "not found"}}')
            return
        try:
            action = chat_completions.scripted_action(as_messages(request.get("contents")))
        except ValueError as err:
            self.log(dict(record, error=str(err)))
            self.reply(500, "application/json",
                       json.dumps({"error": {"code": 500, "message": str(err)}}).encode())
            return
        self.log(dict(record, action=action))
        answer = {"candidates": [candidate(action)], "usageMetadata": USAGE, "modelVersion": MODEL}
        if path.endswith(":generateContent"):
            self.reply(200, "application/json", json.dumps(answer).encode())
            return
        self.reply(200, "text/event-stream", f"data: {json.dumps(answer)}\n\n".encode())


def gemini_env(port):
    """The environment that points Gemini CLI at this endpoint on `port`, offline."""
    return {"GOOGLE_GEMINI_BASE_URL": f"http://127.0.0.1:{port}", "GEMINI_API_KEY": "scripted-key",
            "GEMINI_CLI_TRUST_WORKSPACE": "true"}


def serve(port, log_path):
    """Serves on 127.0.0.1:`port` in a daemon thread; returns the server."""
    return real_client.serve(Handler, port, log_path)


if __name__ == "__main__":
    serve(int(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else None)
    threading.Event().wait()
