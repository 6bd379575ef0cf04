//! `host-shim` over Codex's threads (`--codex-home`), alone and together with Claude
//! Code's sessions (`--claude-projects` too): one listing, and messages each way, each
//! handed over once by its own harness's hook. The CODEX_HOME is the one the real
//! Codex 0.169.0 wrote (`host-shim/harnesses/codex/suite/generate_fixtures.py`), the projects folder the
//! one the real Claude Code 2.1.328 wrote.

use std::path::{Path, PathBuf};
use std::process::Output;

const GARDEN: &str = "01a23b72-a3cd-71d1-b3d0-19989707ce0b";
const ORCHARD: &str = "01a23b72-ab02-7282-ba7a-193ba89b0a05";
/// A Claude Code session of the real binary's fixtures.
const CLAUDE: &str = "a0000000-0000-4000-8000-00000000000a";

fn claude_projects() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../claude-code/fixtures/2.1.328")
}

fn scratch(name: &str) -> PathBuf {
    host_shim_testkit::scratch("cli-codex", name)
}

fn run(args: &[&str], stdin: &str) -> Output {
    let mut command = host_shim_testkit::command::host_shim();
    command.args(args).env(
        "XDG_CACHE_HOME",
        std::env::temp_dir().join("host-shim-cli-codex-cache"),
    );
    host_shim_testkit::command::output_with_stdin(&mut command, stdin)
}

fn text(output: &Output) -> String {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone()).unwrap()
}

/// A call over both harnesses, sharing `state`.
fn call_both(tool: &str, arguments: &str, caller: &str, state: &Path, call_id: &str) -> String {
    let home = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/0.169.0");
    let projects = claude_projects();
    text(&run(
        &[
            "call",
            tool,
            arguments,
            "--codex-home",
            home.to_str().unwrap(),
            "--claude-projects",
            projects.to_str().unwrap(),
            "--state-dir",
            state.to_str().unwrap(),
            "--caller",
            caller,
            "--call-id",
            call_id,
        ],
        "",
    ))
}

fn hook(which: &str, event: &str, session: &str, state: &Path) -> Option<serde_json::Value> {
    let input = serde_json::json!({"session_id": session, "hook_event_name": event});
    let out = text(&run(
        &[which, "--state-dir", state.to_str().unwrap()],
        &input.to_string(),
    ));
    (!out.is_empty()).then(|| serde_json::from_str(&out).expect("the answer is JSON"))
}

fn the_demo_tours_codex_threads() {
    let state = scratch("demo");
    let home = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/0.169.0");
    let out = text(&run(
        &[
            "demo",
            "--codex-home",
            home.to_str().unwrap(),
            "--state-dir",
            state.to_str().unwrap(),
        ],
        "",
    ));
    host_shim_testkit::begins(
        &out,
        "Codex's threads (6 of them), as the model in session ",
    );
    host_shim_testkit::has(&out, "Plan the vegetable garden beds");
    host_shim_testkit::has(&out, "see host-shim/harnesses/codex/README.md.");
}

fn claude_code_and_codex_in_one_listing_messaging_each_other() {
    let state = scratch("both");
    let listing = call_both("sessions_list", r#"{"scope":"all"}"#, CLAUDE, &state, "c0");
    host_shim_testkit::has(&listing, &format!("- {GARDEN} ["));
    host_shim_testkit::has(&listing, &format!("- {CLAUDE} ["));
    // Each harness's sessions show their own model as the preset.
    host_shim_testkit::has(&listing, "preset=scripted-1");
    host_shim_testkit::has(&listing, "preset=claude-");

    // Claude Code → Codex: spooled, then handed over at the thread's Stop, once.
    let sent = call_both(
        "sessions_send",
        &format!(r#"{{"session_id":"{GARDEN}","message":"From Claude Code."}}"#),
        CLAUDE,
        &state,
        "c1",
    );
    host_shim_testkit::begins(&sent, &format!("accepted for {GARDEN} | mode=queue"));
    let answer = hook("codex-hook", "Stop", GARDEN, &state).expect("handed over");
    assert_eq!(answer["decision"], "block");
    let reason = answer["reason"].as_str().unwrap();
    host_shim_testkit::has(reason, &format!("from-session: {CLAUDE} ("));
    host_shim_testkit::has(reason, "\nFrom Claude Code.\n");
    assert_eq!(hook("codex-hook", "Stop", GARDEN, &state), None);
    // The Claude Code session's hook has nothing for it.
    assert_eq!(hook("claude-hook", "Stop", CLAUDE, &state), None);

    // Codex → Claude Code: handed over by Claude Code's own hook.
    let sent = call_both(
        "sessions_send",
        &format!(r#"{{"session_id":"{CLAUDE}","message":"From Codex."}}"#),
        ORCHARD,
        &state,
        "x1",
    );
    host_shim_testkit::begins(&sent, &format!("accepted for {CLAUDE} | mode=queue"));
    let answer = hook("claude-hook", "Stop", CLAUDE, &state).expect("handed over");
    let context = answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    host_shim_testkit::has(context, &format!("from-session: {ORCHARD} ("));
    host_shim_testkit::has(context, "\nFrom Codex.\n");
    assert_eq!(hook("claude-hook", "Stop", CLAUDE, &state), None);
    // The senders' reads say where their messages went.
    let read = call_both(
        "sessions_read",
        &format!(r#"{{"session_id":"{CLAUDE}"}}"#),
        ORCHARD,
        &state,
        "x2",
    );
    host_shim_testkit::has(&read, "\nyour messages to it: 1 handed over\n");
}

host_shim_testkit::tests![
    the_demo_tours_codex_threads,
    claude_code_and_codex_in_one_listing_messaging_each_other,
];
