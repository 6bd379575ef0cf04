"""A scripted OpenAI-compatible Chat Completions endpoint on loopback, shared by the
real-client suites whose harness speaks it (host-shim/harnesses/opencode/suite, host-shim/harnesses/copilot/suite).

It answers `GET /v1/models` with one model and streams `POST /v1/chat/completions` as
server-sent events (`data: {chunk}` lines, then `data: [DONE]`). What the "model" does
is the script in the person's prompt (`script`).

Each request continues the conversation's newest script: the number of tool calls made
since that prompt says which step comes next. A `tool` step calls the tool; a `say`
step, or a script run out, answers with text and ends the turn. A conversation with no
script gets a short answer. A harness's own requests (a title, a summary) are answered
by the `special` function its suite gives (`handler`). Every request is appended to
the log file as one JSON line, with the `x-session-id` header when the harness sends
one.
"""

import itertools
import json

from . import real_client
from .script import SCRIPT_MARK, newest_script, resolved  # noqa: F401

MODEL = "scripted-model"
_ids = itertools.count(1)


def plain(text):
    return text


def texts(message, unquote=plain):
    """The text parts of one chat message, in order, each through `unquote`."""
    content = message.get("content")
    if isinstance(content, str):
        return [unquote(content)]
    return [unquote(p.get("text", "")) for p in content or [] if isinstance(p, dict)]


def scripted_action(messages, unquote=plain):
    """What the script says the model does now: ("call", step) or ("say", text)."""
    script, after = newest_script(
        messages, lambda m: m.get("role") == "user", lambda m: texts(m, unquote))
    if script is None:
        return ("say", "ok")
    done = sum(len(m.get("tool_calls") or []) for m in after if m.get("role") == "assistant")
    if done >= len(script):
        return ("say", "done")
    step = script[done]
    if "say" in step:
        return ("say", step["say"])
    seen = [text for message in messages for text in texts(message, unquote)]
    return ("call", dict(step, input=resolved(step.get("input", {}), seen)))


def chunks(action):
    """The streamed chunks of one completion."""
    n = next(_ids)
    base = {"id": f"chatcmpl-scripted-{n:06d}", "object": "chat.completion.chunk",
            "created": 1767225600, "model": MODEL}
    usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    if action[0] == "say":
        return [
            dict(base, choices=[{"index": 0, "delta": {"role": "assistant", "content": action[1]},
                                 "finish_reason": None}]),
            dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": "stop"}]),
            dict(base, choices=[], usage=usage),
        ]
    step = action[1]
    call = {"index": 0, "id": f"call_scripted_{n:06d}", "type": "function",
            "function": {"name": step["tool"], "arguments": json.dumps(step.get("input", {}))}}
    return [
        dict(base, choices=[{"index": 0, "delta": {"role": "assistant", "tool_calls": [call]},
                             "finish_reason": None}]),
        dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]),
        dict(base, choices=[], usage=usage),
    ]


def handler(next_action):
    """A handler class whose model does `next_action(request)` for each completion."""

    class Handler(real_client.LoggedHandler):

        def do_GET(self):
            self.log({"method": "GET", "path": self.path})
            self.reply(200, "application/json", json.dumps(
                {"object": "list",
                 "data": [{"id": MODEL, "object": "model", "owned_by": "scripted"}]}).encode())

        def do_POST(self):
            request = self.json_body(b'{"error": "not JSON"}')
            if request is None:
                return
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self.log({"method": "POST", "path": self.path, "request": request})
                self.reply(404, "application/json", b'{"error": "not found"}')
                return
            record = {"method": "POST", "path": self.path,
                      "session": self.headers.get("x-session-id"), "request": request}
            try:
                action = next_action(request)
            except ValueError as err:
                # A script that does not read: say so in the log and to the harness.
                self.log(dict(record, error=str(err)))
                self.reply(500, "application/json", json.dumps({"error": str(err)}).encode())
                return
            self.log(dict(record, action=action))
            body = "".join(f"data: {json.dumps(chunk)}\n\n" for chunk in chunks(action))
            self.reply(200, "text/event-stream", (body + "data: [DONE]\n\n").encode())

    return Handler
