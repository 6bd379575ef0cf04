//! What the CLI's libtest tests share: the binary, and the fixtures they run it over
//! named in one place.

#![allow(dead_code)] // each test file uses its own part

use std::path::PathBuf;
use std::process::Command;

/// The fixtures of the harness in the folder `harness` (`host-shim/harnesses/<harness>`).
fn fixtures(harness: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../harnesses")
        .join(harness)
        .join("fixtures")
}

/// Claude Code transcripts written for the tests (the older layouts included).
pub fn claude_projects() -> PathBuf {
    fixtures("claude-code").join("projects")
}

/// The CODEX_HOME the real Codex 0.169.0 wrote (its folder's suite/generate_fixtures.py).
pub fn codex_home() -> PathBuf {
    fixtures("codex").join("0.169.0")
}

/// The `host-shim` binary under test, with a temporary folder of the test's own.
pub fn host_shim() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_host-shim"));
    command.env("TMPDIR", host_shim_testkit::tmpdir());
    command
}
