"""Writes tests/fixtures/copilot-1.0.102/: the session folders (`events.jsonl`,
`workspace.yaml`) the real, pinned Copilot CLI writes when driven offline by the
scripted endpoint. Nothing of ours runs inside Copilot but one hook, which answers a
prompt with a cross-session frame as `host-shim copilot-hook` would, so the record
shows where Copilot keeps a hand-over.

    python3 tests/copilot/generate_fixtures.py

Three sessions: one that runs a shell command and answers; one that is handed a
message at its prompt; one that delegates to a subagent (whose conversation Copilot
writes into its file).
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import endpoint  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
COPILOT = str(ROOT / "tests" / "copilot" / "node_modules" / ".bin" / "copilot")
WORK = Path("/tmp/copilot-fixtures")
HOME = WORK / "home"
OUT = ROOT / "tests" / "fixtures" / "copilot-1.0.102"
PORT = 18795
FRAME = ("Cross-session message from another session of this harness.\n"
         "from-session: 5f0c1e2d-0000-4000-8000-00000000beef (\"Lead\")\ndelivery: queue\nhop: 1\n"
         "message-id: m-00000000f1a5\n--- message begins ---\nThe docs can ship.\n--- message ends ---")


def run(prompt):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(HOME), "LANG": "C.UTF-8",
           "XDG_CACHE_HOME": str(ROOT / "target" / "copilot-cache"), **endpoint.copilot_env(PORT)}
    done = subprocess.run([COPILOT, "-p", prompt, "--allow-all-tools"], cwd=WORK / "w", env=env,
                          capture_output=True, text=True, timeout=180)
    if done.returncode != 0:
        raise SystemExit(done.stdout + done.stderr)


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
        (OUT / folder.name).mkdir(parents=True)
        for name in ("events.jsonl", "workspace.yaml"):
            shutil.copy(folder / name, OUT / folder.name / name)
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
