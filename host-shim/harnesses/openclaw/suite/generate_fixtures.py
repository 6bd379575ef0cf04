"""Writes host-shim/harnesses/openclaw/fixtures/2026.9.6/agent.sql: the tables of the agent database
(`agents/main/agent/openclaw-agent.sqlite`) the real, pinned OpenClaw writes when
driven offline by the scripted endpoint, that the store reads (`session_nodes`,
`session_windows`, `transcript_events`, as SQL that makes them again; the rest of the
database, its triggers and indexes are OpenClaw's own). Nothing of ours runs inside
OpenClaw.

    python3 host-shim/harnesses/openclaw/suite/generate_fixtures.py

Sessions (their ids given with --session-id): one that runs a shell command and
answers; one whose prompt is 20,000 characters (stored zstd-compressed); one compacted
after two turns (through the gateway); one that spawns a subagent (through the
gateway), which answers.
"""

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time

import openclaw_endpoint as endpoint  # noqa: E402
from suite_kit.real_client import fixture_folders  # noqa: E402

WORK, HOME, OUT = fixture_folders("openclaw", "2026.9.6")
PORT = 18797
GATEWAY_PORT = 18798
TOKEN = "scripted-gateway-token"
MARK = endpoint.SCRIPT_MARK

TESTS = "0c1a7e55-7e57-4000-8000-000000000001"
BIG = "0c1a7e55-b16b-4000-8000-000000000002"
COMPACTED = "0c1a7e55-c0c0-4000-8000-000000000003"
LEAD = "0c1a7e55-1ead-4000-8000-000000000004"


def environment():
    return dict(endpoint.env(HOME), OPENCLAW_GATEWAY_TOKEN=TOKEN)


def openclaw(*args, timeout=240):
    done = subprocess.run([str(endpoint.OPENCLAW), *args], cwd=WORK / "w", env=environment(),
                          capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise SystemExit(f"openclaw {args[0]} failed:\n{done.stdout}\n{done.stderr}")
    return done.stdout


def turn(session, prompt, local=True):
    openclaw("agent", *(["--local"] if local else []), "--agent", "main", "--session-id", session,
             "--message", prompt, "--json")


def main():
    shutil.rmtree(WORK, ignore_errors=True)
    (WORK / "w").mkdir(parents=True)
    config = endpoint.config(PORT, WORK / "w")
    config["gateway"] = endpoint.gateway(GATEWAY_PORT, TOKEN)
    path = HOME / ".openclaw" / "openclaw.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(config, indent=2))
    endpoint.serve(PORT, None)

    turn(TESTS, "Check the tests " + MARK + json.dumps([
        {"tool": "exec", "input": {"command": "echo tests pass"}}, {"say": "The tests pass."}]))
    turn(BIG, "Summarise this log: " + "lorem ipsum dolor " * 1100 + MARK + json.dumps(
        [{"say": "A long log of lorem ipsum."}]))
    turn(COMPACTED, "First question " + MARK + json.dumps([{"say": "First answer."}]))
    turn(COMPACTED, "Second question " + MARK + json.dumps([{"say": "Second answer."}]))

    gateway = subprocess.Popen([str(endpoint.OPENCLAW), "gateway", "run", "--bind", "loopback"],
                               cwd=WORK / "w", env=environment(), stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    try:
        endpoint.wait_for_gateway(GATEWAY_PORT)
        openclaw("sessions", "compact", f"agent:main:explicit:{COMPACTED}")
        task = "Count the files " + MARK + json.dumps([{"say": "There are three files."}])
        turn(LEAD, "Delegate the count " + MARK + json.dumps([
            {"tool": "tool_call", "input": {"id": "sessions_spawn",
                                            "args": {"task": task, "label": "counter"}}},
            {"say": "Delegated."}]), local=False)
        # The subagent's turn ends after the lead's.
        deadline = time.time() + 60
        while not subagent_answered() and time.time() < deadline:
            time.sleep(1)
    finally:
        gateway.terminate()
        gateway.wait(timeout=30)
    dump(HOME / ".openclaw/agents/main/agent/openclaw-agent.sqlite", OUT / "agent.sql")
    print(f"wrote {OUT}")


def subagent_answered():
    db = sqlite3.connect(f"file:{HOME}/.openclaw/agents/main/agent/openclaw-agent.sqlite?mode=ro",
                         uri=True)
    try:
        return db.execute("SELECT count(*) FROM transcript_events WHERE event_json LIKE "
                          "'%There are three files.%'").fetchone()[0] > 0
    finally:
        db.close()


TABLES = ("session_nodes", "session_windows", "transcript_events")


def dump(db_path, out):
    """The three tables as SQL: each CREATE TABLE as OpenClaw wrote it, then its rows."""
    db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    # The foreign keys name tables the fixture does not carry.
    lines = ["PRAGMA foreign_keys=OFF;"]
    for table in TABLES:
        (create,) = db.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?",
                               (table,)).fetchone()
        lines.append(create.replace("\n", " ") + ";")
    for line in db.iterdump():
        if any(line.startswith(f'INSERT INTO "{table}"') for table in TABLES):
            lines.append(line)
    db.close()
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
