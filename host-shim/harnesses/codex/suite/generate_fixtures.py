"""Writes host-shim/harnesses/codex/fixtures/0.169.0/: a CODEX_HOME as the real, pinned Codex CLI
writes it, driven offline by the project's scripted Responses API endpoint
(`endpoint.py`). Run after `npm ci` here:

    python3 host-shim/harnesses/codex/suite/generate_fixtures.py

What it makes Codex write (each thread is the binary's own rollout file):

- "garden": a person's prompt, a shell call and its output, the model's answer, then a
  second turn (`codex exec resume`);
- "orchard": the model spawns an agent (`multi_agent_v1.spawn_agent`), which answers
  in a thread of its own (`parent_thread_id`, `thread_source: subagent`);
- "herbs": a fork of "garden" (`codex exec fork`), which starts at a later ordinal;
- "compacted": a turn whose response reports a large token count, so Codex compacts
  the thread before the next turn;
- "old plan": a thread archived with `codex archive` (moved to archived_sessions/);
- "mail": a thread another thread sent a message to (`host-shim call sessions_send
  --codex-home`), handed over by `host-shim codex-hook` from `hooks.json` at its next
  prompt (`--dangerously-bypass-hook-trust`: `codex exec` has no way to trust a hook;
  a person trusts it once with `/hooks`).

CODEX_HOME is a private folder under the repository's target/ (Codex refuses helper
binaries under /tmp). Only sessions/, archived_sessions/ and session_index.jsonl are
kept: the rest (SQLite state, skills, logs) is Codex's own and not read by the store.
"""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
import codex_endpoint as endpoint  # noqa: E402

ROOT = HERE.parents[3]
CODEX = HERE / "node_modules" / ".bin" / "codex"
OUT = ROOT / "host-shim" / "harnesses" / "codex" / "fixtures" / "0.169.0"
PORT = 18741
WORK = ROOT / "target" / "codex-fixtures"
HOME = WORK / "home"
CODEX_HOME = HOME / ".codex"
HOST_SHIM = Path(os.environ.get("HOST_SHIM", ROOT / "target" / "debug" / "host-shim"))
STATE = WORK / "state"


def script(text, steps):
    return f"{text}\n{endpoint.SCRIPT_MARK}{json.dumps(steps)}"


def codex(args, cwd):
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(HOME),
        "CODEX_HOME": str(CODEX_HOME),
        "SCRIPTED_API_KEY": "scripted",
        "LANG": "C.UTF-8",
    }
    run = subprocess.run([str(CODEX), *args], cwd=cwd, env=env, capture_output=True,
                         text=True, timeout=120)
    if run.returncode != 0:
        raise SystemExit(f"codex {' '.join(args[:2])} failed:\n{run.stdout}\n{run.stderr}")
    return run.stdout + run.stderr


def thread_id(output):
    match = re.search(r"session id: ([0-9a-f-]{36})", output)
    if not match:
        raise SystemExit(f"no session id in:\n{output}")
    return match.group(1)


def exec_(cwd, prompt, *extra):
    return thread_id(codex(["exec", "--skip-git-repo-check", "-s", "danger-full-access",
                            *extra, prompt], cwd))


def main():
    if not CODEX.exists():
        raise SystemExit(f"{CODEX} is missing: run `npm ci` in {HERE} first")
    if not HOST_SHIM.exists():
        raise SystemExit(f"{HOST_SHIM} is missing: run `cargo build -p host-shim-cli` first")
    shutil.rmtree(WORK, ignore_errors=True)
    CODEX_HOME.mkdir(parents=True)
    (CODEX_HOME / "config.toml").write_text(endpoint.codex_config(PORT))
    hook = f"{HOST_SHIM} codex-hook --state-dir {STATE}"
    (CODEX_HOME / "hooks.json").write_text(endpoint.hooks_json(hook))
    endpoint.serve(PORT, str(WORK / "requests.log"))
    garden_dir, orchard_dir = WORK / "garden", WORK / "orchard"
    for folder in (garden_dir, orchard_dir):
        folder.mkdir()

    garden = exec_(garden_dir, script("Plan the vegetable garden beds", [
        {"tool": "exec_command", "input": {"cmd": "echo three beds"}},
        {"say": "Three beds: tomatoes, beans, herbs."},
    ]))
    codex(["exec", "--skip-git-repo-check", "resume", garden,
           script("Now order the tomato seedlings", [{"say": "Ordered twelve seedlings."}])],
          garden_dir)

    child_prompt = script("Count the apple trees", [{"say": "Twelve apple trees."}])
    exec_(orchard_dir, script("Survey the orchard with a helper", [
        {"tool": "spawn_agent", "namespace": "multi_agent_v1",
         "input": {"message": child_prompt}},
        {"say": "A helper is counting the trees."},
    ]))

    codex(["exec", "--skip-git-repo-check", "fork", garden,
           script("Fork: plan the herb spiral instead", [{"say": "A spiral of thyme and sage."}])],
          garden_dir)

    compacted = exec_(garden_dir, script("Keep a long log of the watering", [
        {"say": "Logged.", "tokens": 250000},
    ]), "-c", "model_auto_compact_token_limit=1000")
    codex(["exec", "--skip-git-repo-check", "-c", "model_auto_compact_token_limit=1000",
           "resume", compacted,
           script("What did we log?", [{"say": "The watering, every morning."}])],
          garden_dir)

    old = exec_(garden_dir, script("An old plan to drop", [{"say": "Dropped."}]))
    codex(["archive", old], garden_dir)

    mail = exec_(garden_dir, script("Wait for the seed order", [{"say": "Waiting."}]))
    sent = subprocess.run(
        [str(HOST_SHIM), "call", "sessions_send",
         json.dumps({"session_id": mail, "message": "The seed order arrived."}),
         "--codex-home", str(CODEX_HOME), "--state-dir", str(STATE),
         "--caller", garden, "--call-id", "generate-1"],
        capture_output=True, text=True, timeout=60)
    if sent.returncode != 0 or not sent.stdout.startswith("accepted for"):
        raise SystemExit(f"the send failed:\n{sent.stdout}\n{sent.stderr}")
    codex(["exec", "--dangerously-bypass-hook-trust", "--skip-git-repo-check", "resume", mail,
           script("Any news?", [{"say": "Yes: the seed order arrived."}])], garden_dir)

    shutil.rmtree(OUT, ignore_errors=True)
    OUT.mkdir(parents=True)
    for kept in ("sessions", "archived_sessions", "session_index.jsonl"):
        source = CODEX_HOME / kept
        if source.is_dir():
            shutil.copytree(source, OUT / kept)
        elif source.exists():
            shutil.copy2(source, OUT / kept)
    written = sorted(p.relative_to(OUT) for p in OUT.rglob("*") if p.is_file())
    print(f"wrote {len(written)} files under {OUT}:")
    for path in written:
        print(f"  {path}")


if __name__ == "__main__":
    main()
