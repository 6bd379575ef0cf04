"""The scripted Chat Completions endpoint (tests/suite_kit/chat_completions.py) as OpenCode is
driven with it offline: pointed at by a provider of the bundled
`@ai-sdk/openai-compatible` package whose `baseURL` is this server (`opencode_config`).
OpenCode's title request (its system prompt asks for a title) is answered with the
first words of the person's message, and its compaction's summary request with a short
summary; `opencode run` stores a word with a space in it quoted, which a script's text
is read without.
"""

import json
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "tests"))
from suite_kit import chat_completions  # noqa: E402
from suite_kit import real_client  # noqa: E402
from suite_kit.chat_completions import MODEL, SCRIPT_MARK  # noqa: E402,F401


def unquoted(text):
    """`opencode run` stores a word with a space in it quoted: wrapped in `"`, each `"`
    in it escaped with a backslash (nothing else escaped). Undone here."""
    if len(text) > 1 and text.startswith('"') and text.endswith('"'):
        return text[1:-1].replace('\\"', '"')
    return text


def texts(message):
    """The text parts of one chat message, in order, as OpenCode's person wrote them."""
    return chat_completions.texts(message, unquoted)


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
    return chat_completions.scripted_action(messages, unquoted)


Handler = chat_completions.handler(next_action)


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
