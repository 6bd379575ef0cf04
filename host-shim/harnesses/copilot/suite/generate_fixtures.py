"""Writes host-shim/harnesses/copilot/fixtures/1.0.102/, a COPILOT_HOME: the session folders
(`session-state/<id>/events.jsonl`, `workspace.yaml`) the real, pinned Copilot CLI
writes when driven offline by the scripted endpoint, and `session-store.sql`, the
tables of its session store (`session-store.db`) that index subagents (`sessions`,
`assistant_usage_events`, as `sqlite3`'s dump; the rest of the database is Copilot's
own). Nothing of ours runs inside Copilot but one hook, which answers a
prompt with a cross-session frame as `host-shim copilot-hook` would, so the record
shows where Copilot keeps a hand-over.

    python3 host-shim/harnesses/copilot/suite/generate_fixtures.py

Three sessions: one that runs a shell command and answers; one that is handed a
message at its prompt; one that delegates to a subagent (whose conversation Copilot
writes into its file).
"""

import json
import shutil
import sqlite3

import copilot_endpoint as endpoint  # noqa: E402
from suite_kit.real_client import ROOT, client, fixture_folders, run_for_fixture, sample_frame  # noqa: E402

COPILOT = client("COPILOT", "copilot", "copilot")
WORK, HOME, OUT = fixture_folders("copilot", "1.0.102")
PORT = 18795
FRAME = sample_frame("The docs can ship.")


def run(prompt):
    env = {"XDG_CACHE_HOME": str(ROOT / "target" / "copilot-cache"), **endpoint.copilot_env(PORT)}
    run_for_fixture([COPILOT, "-p", prompt, "--allow-all-tools"], HOME, WORK / "w", env)


def main():
    shutil.rmtree(WORK, ignore_errors=True)
    (WORK / "w").mkdir(parents=True)
    hooks = HOME / ".copilot" / "hooks"
    hooks.mkdir(parents=True)
    answer = WORK / "hand-over.sh"
    # The message goes to the one prompt that asks for it.
    answer.write_text("#!/bin/sh\ngrep -q 'Anything for me' || { echo '{}'; exit 0; }\n"
                      f"printf '%s\\n' '{json.dumps({'additionalContext': FRAME})}'\n")
    answer.chmod(0o755)
    (hooks / "hand-over.json").write_text(json.dumps(
        {"version": 1, "hooks": {"userPromptSubmitted": [{"type": "command", "bash": str(answer)}]}}))
    endpoint.serve(PORT, None)
    mark = endpoint.SCRIPT_MARK
    run("Check the tests " + mark + json.dumps([
        {"tool": "bash", "input": {"command": "echo tests pass", "description": "run the tests"}},
        {"say": "The tests pass."}]))
    run("Anything for me? " + mark + json.dumps([{"say": "The docs can ship, I read."}]))
    sub = "List the files " + mark + json.dumps([
        {"tool": "bash", "input": {"command": "ls", "description": "list"}}, {"say": "Listed."}])
    run("Delegate the listing " + mark + json.dumps([
        {"tool": "task", "input": {"description": "list the files", "prompt": sub,
                                   "agent_type": "general-purpose", "name": "lister"}},
        {"say": "Delegated."}]))
    shutil.rmtree(OUT, ignore_errors=True)
    for folder in sorted((HOME / ".copilot" / "session-state").iterdir()):
        if folder.name.startswith("."):
            continue
        (OUT / "session-state" / folder.name).mkdir(parents=True)
        for name in ("events.jsonl", "workspace.yaml"):
            shutil.copy(folder / name, OUT / "session-state" / folder.name / name)
    dump_store(HOME / ".copilot" / "session-store.db", OUT / "session-store.sql")
    print(f"wrote {OUT}")


def dump_store(db_path, out):
    """The tables of Copilot's session store that index subagents (the usage rows and
    the sessions they belong to), as SQL that makes them again."""
    db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    dumped = list(db.iterdump())
    # The sessions first: a usage row refers to its session.
    lines = [line for table in ("sessions", "assistant_usage_events") for line in dumped
             if line.startswith(f"CREATE TABLE {table} ")
             or line.startswith(f'INSERT INTO "{table}"')]
    db.close()
    out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
