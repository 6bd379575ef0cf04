"""Writes `host-shim/harnesses/claude-code/fixtures/2.1.328/`: Claude Code transcripts written by the
real, pinned binary against the project's scripted endpoint (never anyone's real
sessions), for the store's tests in `host-shim/tests/claude.rs`.

    cargo build -p host-shim-cli && (cd host-shim/harnesses/claude-code/suite && npm ci) \
        && python3 host-shim/harnesses/claude-code/suite/generate_fixtures.py

It sets Claude Code up as host-shim/harnesses/claude-code/README.md says, under a fixed HOME
(`/tmp/session-tools-fixtures/home`, so the paths in the transcripts read the same
each time), and runs three sessions:

- `garden`: named with `--name`, sends a message to `notes` and one to `plain`, then
  runs a subagent (Claude Code's `Agent` tool) that lists the sessions;
- `notes`: gets its message handed over at `SessionStart` when resumed, and is then
  compacted with `/compact` and asked once more;
- `plain`: one prompt, then resumed, getting its message at `SessionStart`.

The session ids are fixed; `FIXTURES.md` beside the transcripts says which is which.
"""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import claude_code_endpoint as endpoint  # noqa: E402
import suite  # noqa: E402

GARDEN = "a0000000-0000-4000-8000-00000000000a"
NOTES = "b0000000-0000-4000-8000-00000000000b"
PLAIN = "c0000000-0000-4000-8000-00000000000c"
BASE = Path("/tmp/session-tools-fixtures")
OUT = suite.ROOT / "host-shim" / "harnesses" / "claude-code" / "fixtures" / "2.1.328"


def main():
    shutil.rmtree(BASE, ignore_errors=True)
    suite.WORK, suite.HOME, suite.LOG = BASE, BASE / "home", BASE / "endpoint.jsonl"
    suite.HOME.mkdir(parents=True)
    server = endpoint.start(str(suite.LOG))
    env = suite.environment(server.server_port)
    suite.set_up(env)
    home = suite.HOME
    tool = suite.tool
    suite.new_session(env, home / "notes", NOTES, "Collect notes on the garden plan",
                      [tool("sessions_list", scope="all")])
    suite.new_session(env, home / "plain", PLAIN, "Say hello", [])
    suite.claude(env, home / "garden", [
        "--session-id", GARDEN, "--name", "Vegetable garden",
        suite.prompt("Plan the vegetable garden beds", [
            tool("sessions_send", session_id=NOTES, message="The beds are planned: four of them."),
            tool("sessions_send", session_id=PLAIN, message="Hello from the garden."),
        ]),
    ])
    suite.resume(env, home / "garden", GARDEN, "Survey the sessions", [
        {"tool": "Agent", "input": {
            "description": "survey sessions",
            "prompt": suite.prompt("Survey the sessions", [tool("sessions_list", scope="all")]),
            "subagent_type": "general-purpose", "run_in_background": False}},
    ])
    suite.resume(env, home / "notes", NOTES, "Any news?", [])
    suite.resume(env, home / "notes", NOTES, "/compact")
    suite.resume(env, home / "notes", NOTES, "What is left to do?", [])
    suite.resume(env, home / "plain", PLAIN, "Any news?", [])
    server.shutdown()
    shutil.rmtree(OUT, ignore_errors=True)
    shutil.copytree(home / ".claude" / "projects", OUT,
                    ignore=shutil.ignore_patterns("memory"))
    version = subprocess.run([suite.CLAUDE, "--version"], env=env, capture_output=True,
                             text=True).stdout.strip()
    (OUT / "FIXTURES.md").write_text(
        f"Written by the real Claude Code {version} against the project's scripted\n"
        "endpoint, by `host-shim/harnesses/claude-code/suite/generate_fixtures.py` (read it for what each\n"
        "session did). Sessions:\n\n"
        f"- `{GARDEN}` garden: named \"Vegetable garden\", messaged notes and plain, ran a subagent\n"
        f"- `{NOTES}` notes: got its message at SessionStart, then /compact, then a prompt\n"
        f"- `{PLAIN}` plain: one prompt, then resumed, got its message at SessionStart\n")
    print(f"wrote {OUT}")
    for path in sorted(OUT.rglob("*")):
        if path.is_file():
            print(f"  {path.relative_to(OUT)}  {path.stat().st_size} bytes")


if __name__ == "__main__":
    main()
