"""A scripted OpenAI-compatible Chat Completions endpoint on loopback, shared by the
real-client suites whose harness speaks it (host-shim/harnesses/opencode/suite, host-shim/harnesses/copilot/suite).

It answers `GET /v1/models` with one model and streams `POST /v1/chat/completions` as
server-sent events (`data: {chunk}` lines, then `data: [DONE]`). What the "model" does
is written into the person's prompt, one line:

    @script [{"tool": "NAME", "input": {...}}, {"say": "TEXT"}]

A tool step's input may say `"$newest-message-id"`: the id of the newest cross-session
message the model was given, as a model answering it would write.

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

SCRIPT_MARK = "@script "
NEWEST_MESSAGE_ID = "$newest-message-id"
ONE_MEBIBYTE = "$one-mebibyte"
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


def newest_script(messages, unquote=plain):
    """The newest script among the user messages, and the messages after it."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.get("role") != "user":
            continue
        for text in texts(message, unquote):
            for line in text.splitlines():
                # A frame's header names its sender by title, which may quote the
                # sender's own script: never this model's.
                if SCRIPT_MARK in line and not line.startswith("from-session: "):
                    script = line[line.index(SCRIPT_MARK) + len(SCRIPT_MARK):]
                    return json.loads(script), messages[index + 1:]
    return None, []


def scripted_action(messages, unquote=plain):
    """What the script says the model does now: ("call", step) or ("say", text)."""
    script, after = newest_script(messages, unquote)
    if script is None:
        return ("say", "ok")
    done = sum(len(m.get("tool_calls") or []) for m in after if m.get("role") == "assistant")
    if done >= len(script):
        return ("say", "done")
    step = script[done]
    if "say" in step:
        return ("say", step["say"])
    return ("call", dict(step, input=resolved(step.get("input", {}), messages, unquote)))


def resolved(value, messages, unquote=plain):
    """A step's input with `$newest-message-id` replaced by the id of the newest
    cross-session message the model was given (its frame's `message-id:` line, in a
    message or a tool's output), and `$one-mebibyte` by 1 MiB of text (more than a
    command line carries)."""
    if isinstance(value, dict):
        return {key: resolved(item, messages, unquote) for key, item in value.items()}
    if isinstance(value, list):
        return [resolved(item, messages, unquote) for item in value]
    if value == ONE_MEBIBYTE:
        return ("a line of a very long message\n" * 40000)[:1 << 20]
    if value != NEWEST_MESSAGE_ID:
        return value
    newest = None
    for message in messages:
        for text in texts(message, unquote):
            for line in text.splitlines():
                if line.startswith("message-id: m-"):
                    newest = line[len("message-id: "):]
    return newest or value


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
            raw = self.rfile.read(int(self.headers.get("content-length", 0)))
            try:
                request = json.loads(raw)
            except ValueError:
                self.reply(400, "application/json", b'{"error": "not JSON"}')
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
