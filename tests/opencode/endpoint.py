"""A scripted OpenAI-compatible chat completions endpoint on loopback, for driving the
real OpenCode offline (the OpenCode counterpart of tests/codex/endpoint.py).

OpenCode is pointed at it with a provider of the bundled `@ai-sdk/openai-compatible`
package whose `baseURL` is this server (see `opencode_config`). It answers
`GET /v1/models` with one model and streams `POST /v1/chat/completions` as
server-sent events (`data: {chunk}` lines, then `data: [DONE]`). What the "model"
does is written into the person's prompt, one line:

    @script [{"tool": "NAME", "input": {...}}, {"say": "TEXT"}]

A tool step's input may say `"$newest-message-id"`: the id of the newest
cross-session message the model was given, as a model answering it would write.

Each request continues the conversation's newest script: the number of tool calls
made since that prompt says which step comes next. A `tool` step calls the tool; a
`say` step, or a script run out, answers with text and ends the turn. A conversation
with no script gets a short answer. OpenCode's title request (its system prompt asks
for a title) is answered with the first words of the person's message, and its
compaction's summary request with a short summary. Every request
is appended to the log file as one JSON line, with the `x-session-id` header OpenCode
sends.
"""

import itertools
import json
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import real_client  # noqa: E402

SCRIPT_MARK = "@script "
NEWEST_MESSAGE_ID = "$newest-message-id"
MODEL = "scripted-model"
_ids = itertools.count(1)


def unquoted(text):
    """`opencode run` stores a word with a space in it quoted: wrapped in `"`, each `"`
    in it escaped with a backslash (nothing else escaped). Undone here."""
    if len(text) > 1 and text.startswith('"') and text.endswith('"'):
        return text[1:-1].replace('\\"', '"')
    return text


def texts(message):
    """The text parts of one chat message, in order."""
    content = message.get("content")
    if isinstance(content, str):
        return [unquoted(content)]
    return [unquoted(p.get("text", "")) for p in content or [] if isinstance(p, dict)]


def newest_script(messages):
    """The newest script among the user messages, and the messages after it."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.get("role") != "user":
            continue
        for text in texts(message):
            for line in text.splitlines():
                if SCRIPT_MARK in line:
                    script = line[line.index(SCRIPT_MARK) + len(SCRIPT_MARK):]
                    return json.loads(script), messages[index + 1:]
    return None, []


def is_title_request(messages):
    return any(m.get("role") == "system" and "title" in " ".join(texts(m)).lower()
               and "generate" in " ".join(texts(m)).lower() for m in messages[:2])


def is_summary_request(messages):
    """OpenCode's compaction asks its summarization agent for a summary."""
    return any(m.get("role") == "system" and "summarization agent" in " ".join(texts(m))
               for m in messages[:2])


def first_words(messages):
    """The title: the first words of the last user message, before any script."""
    for message in reversed(messages):
        if message.get("role") == "user":
            for text in texts(message):
                words = text.split(SCRIPT_MARK)[0].split()
                if words:
                    return " ".join(words[:6])
    return "Untitled"


def next_action(request):
    """What the scripted model does now: ("call", step) or ("say", text)."""
    messages = request.get("messages", [])
    if is_title_request(messages):
        return ("say", first_words(messages))
    if is_summary_request(messages):
        return ("say", "Summary: the conversation so far, in short.")
    script, after = newest_script(messages)
    if script is None:
        return ("say", "ok")
    done = sum(len(m.get("tool_calls") or []) for m in after if m.get("role") == "assistant")
    if done >= len(script):
        return ("say", "done")
    step = script[done]
    if "say" in step:
        return ("say", step["say"])
    return ("call", dict(step, input=resolved(step.get("input", {}), messages)))


def resolved(value, messages):
    """A step's input with `$newest-message-id` replaced by the id of the newest
    cross-session message the model was given (its frame's `message-id:` line, in a
    message or a tool's output)."""
    if isinstance(value, dict):
        return {key: resolved(item, messages) for key, item in value.items()}
    if isinstance(value, list):
        return [resolved(item, messages) for item in value]
    if value != NEWEST_MESSAGE_ID:
        return value
    newest = None
    for message in messages:
        for text in texts(message):
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


class Handler(real_client.LoggedHandler):

    def do_GET(self):
        self.log({"method": "GET", "path": self.path})
        self.reply(200, "application/json", json.dumps(
            {"object": "list", "data": [{"id": MODEL, "object": "model", "owned_by": "scripted"}]}).encode())

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
        record = {"method": "POST", "path": self.path, "session": self.headers.get("x-session-id"),
                  "request": request}
        try:
            action = next_action(request)
        except ValueError as err:
            # A script that does not read: say so in the log and to OpenCode.
            self.log(dict(record, error=str(err)))
            self.reply(500, "application/json", json.dumps({"error": str(err)}).encode())
            return
        self.log(dict(record, action=action))
        body = "".join(f"data: {json.dumps(chunk)}\n\n" for chunk in chunks(action)) + "data: [DONE]\n\n"
        self.reply(200, "text/event-stream", body.encode())


def opencode_config(port):
    """OpenCode's opencode.json pointing it at this endpoint on `port`, offline."""
    return {
        "$schema": "https://opencode.ai/config.json",
        "provider": {
            "scripted": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "Scripted",
                "options": {"baseURL": f"http://127.0.0.1:{port}/v1", "apiKey": "scripted"},
                "models": {MODEL: {"name": "Scripted model", "tool_call": True}},
            }
        },
        "model": f"scripted/{MODEL}",
        "small_model": f"scripted/{MODEL}",
        "autoupdate": False,
        "share": "disabled",
    }


def serve(port, log_path):
    """Serves on 127.0.0.1:`port` in a daemon thread; returns the server."""
    return real_client.serve(Handler, port, log_path)


if __name__ == "__main__":
    serve(int(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else None)
    threading.Event().wait()
