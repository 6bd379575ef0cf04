"""Writes host-shim/harnesses/gemini/fixtures/0.61.0/, a `~/.gemini`: the session files the real,
pinned Gemini CLI writes (`tmp/<project>/chats/*.jsonl`, a subagent's in a folder named
after its parent) and `projects.json`, when driven offline by the scripted endpoint.
Nothing of ours runs inside Gemini CLI but one hook, which answers a prompt with a
cross-session frame as a hand-over would, so the record shows where Gemini keeps it.

    python3 host-shim/harnesses/gemini/suite/generate_fixtures.py

Three sessions: one that runs a shell command and answers; one that is handed a
message at its prompt; one that delegates to a subagent.
"""

import json
import shutil

import gemini_endpoint as endpoint  # noqa: E402
from suite_kit.real_client import client, fixture_folders, run_for_fixture, sample_frame  # noqa: E402

GEMINI = client("GEMINI", "gemini", "gemini")
WORK, HOME, OUT = fixture_folders("gemini", "0.61.0")
PORT = 18796
FRAME = sample_frame("The docs can ship.")


def settings(hook):
    """Gemini's user settings: offline with an API key, sessions kept, one hook."""
    return {"security": {"auth": {"selectedType": "gemini-api-key"}},
            "general": {"sessionRetention": {"enabled": False}},
            "hooks": {"BeforeAgent": [{"hooks": [{"type": "command", "command": str(hook)}]}]}}


def run(prompt):
    run_for_fixture([GEMINI, "-p", prompt, "-m", endpoint.MODEL, "--yolo", "--output-format",
                     "stream-json"], HOME, WORK / "w", endpoint.gemini_env(PORT))


def main():
    shutil.rmtree(WORK, ignore_errors=True)
    (WORK / "w").mkdir(parents=True)
    (HOME / ".gemini").mkdir(parents=True)
    answer = WORK / "hand-over.sh"
    # The message goes to the one prompt that asks for it.
    context = {"hookSpecificOutput": {"hookEventName": "BeforeAgent", "additionalContext": FRAME}}
    answer.write_text("#!/bin/sh\ngrep -q 'Anything for me' || { echo '{}'; exit 0; }\n"
                      f"printf '%s\\n' '{json.dumps(context)}'\n")
    answer.chmod(0o755)
    (HOME / ".gemini" / "settings.json").write_text(json.dumps(settings(answer), indent=2))
    endpoint.serve(PORT, None)
    mark = endpoint.SCRIPT_MARK
    run("Check the tests " + mark + json.dumps([
        {"tool": "run_shell_command", "input": {"command": "echo tests pass",
                                                "description": "run the tests"}},
        {"say": "The tests pass."}]))
    run("Anything for me? " + mark + json.dumps([{"say": "The docs can ship, I read."}]))
    sub = "List the files " + mark + json.dumps([
        {"tool": "run_shell_command", "input": {"command": "ls", "description": "list"}},
        {"tool": "complete_task", "input": {"result": {"response": "Listed."}}}])
    run("Delegate the listing " + mark + json.dumps([
        {"tool": "invoke_agent", "input": {"agent_name": "generalist", "prompt": sub}},
        {"say": "Delegated."}]))
    shutil.rmtree(OUT, ignore_errors=True)
    gemini = HOME / ".gemini"
    for path in sorted(gemini.rglob("*.jsonl")) + [gemini / "projects.json"]:
        target = OUT / path.relative_to(gemini)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, target)
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
