"""A scripted Messages API endpoint for driving the real Claude Code binary offline.

Loopback only. It answers what Claude Code 2.1.x asks of `ANTHROPIC_BASE_URL`: the
`HEAD` probe, `POST /v1/messages` (streaming SSE or a plain answer) and
`POST /v1/messages/count_tokens`, and logs every request (one JSON line: the path,
the session id header, the body) so a test can assert what the model saw.

The "model" follows the script written into the person's prompt
(tests/suite_kit/script.py). Each request continues the conversation's newest script: the number of tool calls
the model made since that prompt says which step comes next. A `tool` step calls the
tool (first loading it with `ToolSearch` when Claude Code lists it as deferred, as a
real model must); a `say` step, or a script run out, answers with text and ends the
turn. A conversation with no script (titles, compaction summaries, a turn a hook
continued after the script ended) gets a short text answer.
"""

import itertools
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "tests"))
from suite_kit.script import SCRIPT_MARK, newest_script, resolved  # noqa: E402,F401

_ids = itertools.count(1)
_log_lock = threading.Lock()


def texts(message):
    """The text parts of one API message, in order."""
    content = message.get("content")
    if isinstance(content, str):
        return [content]
    return [p.get("text", "") for p in content or [] if p.get("type") == "text"]


def request_texts(request):
    """Every text Claude Code sent in one request, in order: its messages' text parts and
    its tool results' text (a hook's context among them)."""
    seen = []
    for message in request.get("messages", []):
        content = message.get("content")
        for part in content if isinstance(content, list) else [{"text": content}]:
            if isinstance(part, dict):
                text = part.get("text") or part.get("content")
                if isinstance(text, list):
                    text = "\n".join(p.get("text", "") for p in text if isinstance(p, dict))
                if isinstance(text, str):
                    seen.append(text)
    return seen


def last_request(log_path):
    """The newest model request in the endpoint's log (token counts left out)."""
    records = [json.loads(line) for line in open(log_path).read().splitlines() if line.strip()]
    return [r for r in records if "count_tokens" not in r["path"]][-1]["request"]


def tool_uses(message):
    content = message.get("content")
    if not isinstance(content, list):
        return []
    return [p for p in content if p.get("type") == "tool_use"]


def next_action(request):
    """What the scripted model does now: ("tool", name, input) or ("say", text)."""
    messages = request.get("messages", [])
    script, after = newest_script(messages, lambda m: m.get("role") == "user", texts)
    if script is None:
        return ("say", "ok")
    loaded = set()
    done = 0
    for message in after:
        for use in tool_uses(message):
            if use["name"] == "ToolSearch":
                loaded.update(use["input"].get("query", "")[len("select:"):].split(","))
            else:
                done += 1
    if done >= len(script):
        return ("say", "done")
    step = script[done]
    if "say" in step:
        return ("say", step["say"])
    name = step["tool"]
    listed = {t.get("name"): t for t in request.get("tools", [])}
    deferred = name not in listed or listed[name].get("defer_loading")
    if deferred and name not in loaded:
        return ("tool", "ToolSearch", {"query": f"select:{name}", "max_results": 5})
    seen = [text for message in messages for text in seen_texts(message)]
    return ("tool", name, resolved(step.get("input", {}), seen))


def seen_texts(message):
    """The texts the model was given in one message: its text parts and its tool
    results' text."""
    return texts(message) + [t for part in message.get("content") or []
                             if isinstance(part, dict) and part.get("type") == "tool_result"
                             for t in texts({"content": part.get("content")})]


def answer(request, action):
    """The assistant message for an action, and its SSE events."""
    model = request.get("model", "claude-scripted")
    message_id = f"msg_scripted_{next(_ids):06d}"
    if action[0] == "say":
        block = {"type": "text", "text": action[1]}
        stop = "end_turn"
    else:
        block = {
            "type": "tool_use",
            "id": f"toolu_scripted_{next(_ids):06d}",
            "name": action[1],
            "input": action[2],
        }
        stop = "tool_use"
    usage = {"input_tokens": 10, "output_tokens": 5}
    message = {
        "id": message_id, "type": "message", "role": "assistant", "model": model,
        "content": [block], "stop_reason": stop, "stop_sequence": None, "usage": usage,
    }
    start = dict(message, content=[], stop_reason=None)
    if block["type"] == "text":
        first = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": block["text"]}
    else:
        first = dict(block, input={})
        delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
    events = [
        ("message_start", {"type": "message_start", "message": start}),
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": first}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta",
                           "delta": {"stop_reason": stop, "stop_sequence": None},
                           "usage": {"output_tokens": 5}}),
        ("message_stop", {"type": "message_stop"}),
    ]
    return message, events


class Endpoint(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    log_path = None

    def log_message(self, *args):
        pass

    def reply(self, status, body, content_type="application/json"):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self):
        self.reply(200, b"{}")

    def do_POST(self):
        length = int(self.headers.get("Content-Length", 0))
        request = json.loads(self.rfile.read(length) or b"{}")
        record = {
            "path": self.path,
            "session": self.headers.get("X-Claude-Code-Session-Id"),
            "request": request,
        }
        if "count_tokens" in self.path:
            self.log(record)
            return self.reply(200, b'{"input_tokens": 10}')
        action = next_action(request)
        message, events = answer(request, action)
        record["answer"] = message
        self.log(record)
        if request.get("stream"):
            body = "".join(f"event: {e}\ndata: {json.dumps(d)}\n\n" for e, d in events)
            return self.reply(200, body.encode(), "text/event-stream")
        self.reply(200, json.dumps(message).encode())

    def log(self, record):
        with _log_lock, open(self.log_path, "a") as log:
            log.write(json.dumps(record) + "\n")


def start(log_path, port=0):
    """Serves on 127.0.0.1 in a thread; returns the server (its port in server_port)."""
    handler = type("LoggedEndpoint", (Endpoint,), {"log_path": log_path})
    server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


if __name__ == "__main__":
    server = start(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 0)
    print(server.server_port, flush=True)
    threading.Event().wait()
