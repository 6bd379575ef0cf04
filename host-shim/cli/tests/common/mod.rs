//! What the CLI's tests share: the binary, and the project's fixtures named in one
//! place.

#![allow(dead_code)] // each test file uses its own part

use std::path::PathBuf;
use std::process::Command;

/// The workspace's `tests/` folder.
fn tests_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests")
}

/// Claude Code transcripts written for the tests (the older layouts included).
pub fn claude_projects() -> PathBuf {
    tests_dir().join("fixtures/claude-projects")
}

/// The CODEX_HOME the real Codex 0.169.0 wrote (tests/codex/generate_fixtures.py).
pub fn codex_home() -> PathBuf {
    tests_dir().join("fixtures/codex-0.169.0")
}

/// The session folders the real Copilot CLI 1.0.102 wrote
/// (tests/copilot/generate_fixtures.py): a `session-state` folder.
pub fn copilot_sessions() -> PathBuf {
    tests_dir().join("fixtures/copilot-1.0.102/session-state")
}

/// The `~/.gemini` the real Gemini CLI 0.61.0 wrote (tests/gemini/generate_fixtures.py).
pub fn gemini_home() -> PathBuf {
    tests_dir().join("fixtures/gemini-0.61.0")
}

/// The corpus of the harness tests.
pub fn harness_corpus() -> PathBuf {
    tests_dir().join("corpora/harness.json")
}

/// The `host-shim` binary under test.
pub fn host_shim() -> Command {
    Command::new(env!("CARGO_BIN_EXE_host-shim"))
}

/// `command` run with `stdin` as its input, to its end: its status and both outputs.
pub fn output_with_stdin(command: &mut Command, stdin: &str) -> std::process::Output {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = (command.stdin(Stdio::piped()).stdout(Stdio::piped()))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin.as_bytes()).unwrap();
    drop(input);
    child.wait_with_output().unwrap()
}

/// A fresh, empty folder for one test: `<tmp>/host-shim-<suite>-<pid>/<name>`.
pub fn scratch(suite: &str, name: &str) -> PathBuf {
    let dir = std::env::temp_dir()
        .join(format!("host-shim-{suite}-{}", std::process::id()))
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
