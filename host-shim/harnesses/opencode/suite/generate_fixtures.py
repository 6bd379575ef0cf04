"""Writes host-shim/harnesses/opencode/fixtures/1.18.33/opencode.sql: the sessions the real, pinned
OpenCode writes into its database, driven offline by the project's scripted chat
completions endpoint (`endpoint.py`), set up with `host-shim setup opencode`. Run
after `npm ci` here and a build of host-shim:

    HOST_SHIM=target/debug/host-shim python3 host-shim/harnesses/opencode/suite/generate_fixtures.py

What it makes OpenCode write (under `opencode serve`, as the suite runs it):

- "Plan the garden": a person's prompt, a shell call and its output, the model's
  answer, then a second turn; then the model starts a subagent (`task`), which answers
  in a session of its own (`parent_id`);
- "Long talk": a turn, a compaction (`POST /session/:id/summarize`), then a turn after
  it;
- "Old plan": a session archived (`PATCH /session/:id`, `time.archived`);
- "Mail": an idle session the garden session messaged (`sessions_send`), handed over
  by the session-tools plugin as a new turn.

Only the tables the store reads are kept (`session`, `message`, `part`), as SQL text
(`sqlite3`'s dump): the rest of the database is OpenCode's own.
"""

import json
import sqlite3
import sys
from pathlib import Path

import suite  # noqa: E402
from suite import script, tool  # noqa: E402

OUT = suite.ROOT / "host-shim" / "harnesses" / "opencode" / "fixtures" / "1.18.33" / "opencode.sql"
TABLES = ("session", "message", "part")


def main():
    import shutil
    import subprocess
    shutil.rmtree(suite.WORK, ignore_errors=True)
    suite.WORK.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(suite.WORK)], check=True)
    server = suite.endpoint.serve(suite.PORT, str(suite.LOG))
    suite.set_up()
    serve = suite.Serve(suite.folder("garden"))
    try:
        write(serve)
    finally:
        serve.stop()
        server.shutdown()
    dump()


def write(serve):
    garden = serve.new_session("Plan the garden")
    serve.prompt(garden, script("Plant the beans", [
        {"tool": "bash", "input": {"command": "echo beans", "description": "plant"}},
        {"say": "Beans planted."}]))
    serve.prompt(garden, script("And water them?", [{"say": "Watered."}]))
    serve.prompt(garden, script("Ask a helper", [
        {"tool": "task", "input": {"description": "count the pots", "subagent_type": "general",
                                   "prompt": script("Count the pots", [{"say": "Four pots."}])}},
        {"say": "Four pots, says the helper."}]))

    long = serve.new_session("Long talk")
    serve.prompt(long, script("Tell me everything", [{"say": "Everything, at length."}]))
    serve.call("POST", f"/session/{long}/summarize",
               {"providerID": "scripted", "modelID": suite.endpoint.MODEL})
    serve.prompt(long, script("And after that?", [{"say": "After the summary."}]))

    old = serve.new_session("Old plan")
    serve.prompt(old, script("An old idea", [{"say": "Shelved."}]))
    serve.call("PATCH", f"/session/{old}", {"time": {"archived": 1796400000000}})

    mail = serve.new_session("Mail")
    serve.prompt(mail, script("Wait for mail", [{"say": "Waiting."}]))
    serve.prompt(garden, script("Write to the mail session", [
        tool("sessions_send", session_id=mail, message="The beans are in.\n"
             + suite.endpoint.SCRIPT_MARK + json.dumps([{"say": "Noted, beans."}]))]))
    handed = suite.wait_for(lambda: suite.frames_in(mail, "The beans are in."), 30)
    if not handed:
        raise SystemExit("the mail session was not handed its message")
    suite.wait_for(lambda: suite.requests(mail)[-1].get("action") == ["say", "Noted, beans."], 30)


def dump():
    """The tables as SQL, each after the tables it refers to, then their indexes."""
    db = sqlite3.connect(f"file:{suite.DB}?mode=ro", uri=True)
    lines = ["-- Written by host-shim/harnesses/opencode/suite/generate_fixtures.py from the database the real",
             "-- OpenCode 1.18.33 wrote (its session, message and part tables)."]
    dumped = list(db.iterdump())
    for table in TABLES:
        lines += [line for line in dumped
                  if line.startswith((f"CREATE TABLE `{table}`", f'INSERT INTO "{table}"'))]
    lines += [line for line in dumped if line.startswith("CREATE INDEX")
              and any(f"ON `{table}`" in line for table in TABLES)]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text("\n".join(lines) + "\n")
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
