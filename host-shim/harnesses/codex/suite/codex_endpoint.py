"""A scripted OpenAI Responses API endpoint on loopback, for driving the real Codex CLI
offline (the Codex counterpart of host-shim/harnesses/claude-code/suite/claude_code_endpoint.py).

Codex is pointed at it with a `[model_providers.scripted]` table whose `base_url` is
this server and `wire_api = "responses"`. It answers `GET /v1/models` with an empty
list and streams `POST /v1/responses` as server-sent events. What the "model" does is
the script written into the person's prompt (tests/suite_kit/script.py); a tool step
may name the tool's `namespace`.

A step's `tokens` sets the total token count its response reports (default 15): a large
one makes Codex compact the thread before its next turn.

Each request continues the conversation's newest script: the number of function
calls made since that prompt says which step comes next. A `tool` step calls the tool
(a function call, in the tool's namespace when it has one); a `say` step, or a script
run out, answers with text and ends the turn. A conversation with no script (a
compaction, a turn a hook continued after the script ended) gets a short answer.
Every request is appended to the log file as one JSON line.
"""

import itertools
import json
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "tests"))
from suite_kit import real_client  # noqa: E402
from suite_kit.script import SCRIPT_MARK, newest_script, resolved  # noqa: E402,F401

_ids = itertools.count(1)


def texts(item):
    """The text parts of one input item (a message), in order."""
    content = item.get("content")
    if isinstance(content, str):
        return [content]
    return [p.get("text", "") for p in content or [] if isinstance(p, dict)]


def next_action(request):
    """What the scripted model does now: ("call", step) or ("say", text)."""
    # The person's messages, and what a hook gave the model (Codex passes hook context
    # as a developer message).
    script, after = newest_script(
        request.get("input", []),
        lambda item: item.get("type") == "message" and item.get("role") in ("user", "developer"),
        texts)
    if script is None:
        return ("say", "ok")
    done = sum(1 for item in after if item.get("type") in ("function_call", "custom_tool_call"))
    if done >= len(script):
        return ("say", "done")
    step = script[done]
    if "say" in step:
        return ("say", step["say"], step.get("tokens", 15))
    seen = [text for item in request.get("input", []) for text in seen_texts(item)]
    return ("call", dict(step, input=resolved(step.get("input", {}), seen)))


def seen_texts(item):
    """The texts the model was given in one input item: a message's, a call's output."""
    if item.get("type") == "message":
        return texts(item)
    if item.get("type") in ("function_call_output", "custom_tool_call_output"):
        output = item.get("output")
        return [output] if isinstance(output, str) else [
            p.get("text", "") for p in output or [] if isinstance(p, dict)]
    return []


def events(request, action):
    """The server-sent events of one response."""
    n = next(_ids)
    response_id = f"resp_scripted_{n:06d}"
    if action[0] == "say":
        item = {"type": "message", "role": "assistant", "id": f"msg_scripted_{n:06d}",
                "content": [{"type": "output_text", "text": action[1], "annotations": []}]}
    else:
        step = action[1]
        if isinstance(step.get("input"), str):
            # A freeform tool's call (apply_patch): its input is the text itself.
            item = {"type": "custom_tool_call", "id": f"ctc_scripted_{n:06d}",
                    "call_id": f"call_scripted_{n:06d}", "name": step["tool"], "input": step["input"]}
        else:
            item = {"type": "function_call", "id": f"fc_scripted_{n:06d}", "call_id": f"call_scripted_{n:06d}",
                    "name": step["tool"], "arguments": json.dumps(step.get("input", {}))}
        if step.get("namespace"):
            item["namespace"] = step["namespace"]
    # A step may report a large token count, so Codex compacts before the next turn.
    total = action[1].get("tokens", 15) if action[0] == "call" else (action[2] if len(action) > 2 else 15)
    usage = {"input_tokens": total - 5, "input_tokens_details": None, "output_tokens": 5,
             "output_tokens_details": None, "total_tokens": total}
    return [
        ("response.created", {"type": "response.created", "response": {"id": response_id}}),
        ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0, "item": item}),
        ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}),
        ("response.completed", {"type": "response.completed",
                                "response": {"id": response_id, "usage": usage}}),
    ]


class Handler(real_client.LoggedHandler):

    def do_GET(self):
        self.log({"method": "GET", "path": self.path})
        self.reply(200, "application/json", json.dumps({"object": "list", "data": [], "models": []}).encode())

    def do_POST(self):
        request = self.json_body(b'{"error": "not JSON"}')
        if request is None:
            return
        if not self.path.rstrip("/").endswith("/responses"):
            self.log({"method": "POST", "path": self.path, "request": request})
            self.reply(404, "application/json", b'{"error": "not found"}')
            return
        action = next_action(request)
        self.log({"method": "POST", "path": self.path, "request": request, "action": action})
        body = "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n"
                       for name, data in events(request, action)).encode()
        self.reply(200, "text/event-stream", body)


def codex_config(port):
    """The lines of Codex's config.toml that point it at this endpoint on `port`."""
    return ('model = "scripted-1"\nmodel_provider = "scripted"\n\n'
            "[model_providers.scripted]\n"
            'name = "Scripted"\n'
            f'base_url = "http://127.0.0.1:{port}/v1"\n'
            'env_key = "SCRIPTED_API_KEY"\n'
            'wire_api = "responses"\n')


def model_catalog():
    """A model catalog (`model_catalog_json`) naming the scripted model with what Codex
    needs to offer it `apply_patch` (a freeform tool, as it offers its own models)."""
    return json.dumps({"models": [{
        "slug": "scripted-1", "display_name": "Scripted", "apply_patch_tool_type": "freeform",
        "base_instructions": "You are a scripted model.", "supported_reasoning_levels": [],
        "shell_type": "shell_command", "visibility": "list", "supported_in_api": True,
        "priority": 1, "support_verbosity": False,
        "truncation_policy": {"mode": "tokens", "limit": 10000},
        "experimental_supported_tools": []}]}, indent=1)


def hooks_json(command):
    """Codex's hooks.json running `command` at every event host-shim codex-hook answers."""
    return json.dumps({"hooks": {
        event: [{"hooks": [{"type": "command", "command": command}]}]
        for event in ("SessionStart", "UserPromptSubmit", "Stop")
    }}, indent=1)


def serve(port, log_path):
    """Serves on 127.0.0.1:`port` in a daemon thread; returns the server."""
    return real_client.serve(Handler, port, log_path)


if __name__ == "__main__":
    serve(int(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else None)
    threading.Event().wait()
