//! The spool's promises under crashes: a writer or a hook is killed (SIGKILL, no
//! clean-up) at each step, and what is left must be whole, delivered at most once,
//! and in the target's record (a transcript kept as Claude Code keeps it, a rollout as
//! Codex does: what a hook that exited with success gave) exactly once. The killed process is this test
//! binary itself, started again to run [`child`].

use host_shim::DeliveryMode;
use host_shim::inbox::{InboxBackend, Put, SpooledMessage, Step};
use host_shim::{LocalPresence, StateDir};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const KEY: &str = "32:11111111-aaaa-4aaa-8aaa-000000000001toolu_01";
const TARGET: &str = "22222222-bbbb-4bbb-8bbb-000000000002";

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir()
        .join(format!("host-shim-spool-{}", std::process::id()))
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Kills this process at the step named by `SPOOL_KILL_AT`.
fn kill_at_named_step(step: Step) {
    if std::env::var("SPOOL_KILL_AT").ok().as_deref() == Some(&format!("{step:?}")) {
        // SAFETY: sends a signal to this process; nothing after it runs.
        unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
    }
}

/// Started by the tests below in a process of its own: puts one message, or answers
/// one Stop hook, and is killed at the step they name.
#[test]
#[ignore = "a child process of the crash tests, not a test by itself"]
fn child() {
    let state = StateDir::open(Path::new(&std::env::var("SPOOL_STATE").unwrap()))
        .unwrap()
        .observe(kill_at_named_step);
    match std::env::var("SPOOL_ROLE").unwrap().as_str() {
        "writer" => {
            state
                .put(&SpooledMessage::new(
                    TARGET,
                    DeliveryMode::Queue,
                    "the body",
                    KEY,
                    false,
                ))
                .unwrap();
        }
        "claude-hook" | "codex-hook" => {
            let transcript = std::env::var("SPOOL_TRANSCRIPT").unwrap();
            let input = serde_json::json!({"session_id": TARGET, "hook_event_name": "Stop",
                "transcript_path": transcript})
            .to_string();
            let mut out = std::io::stdout();
            if std::env::var("SPOOL_ROLE").unwrap() == "codex-hook" {
                host_shim::codex::hook::answer(&state, input.as_bytes(), &mut out).unwrap();
                return;
            }
            let presence = LocalPresence::open(state.root()).unwrap();
            host_shim::claude::hook::answer(&state, &presence, None, input.as_bytes(), &mut out)
                .unwrap();
        }
        role => panic!("no role {role}"),
    }
}

fn run_child(state: &Path, role: &str, kill_at: Option<Step>) -> Output {
    Command::new(std::env::current_exe().unwrap())
        .env("SPOOL_TRANSCRIPT", state.join("transcript.jsonl"))
        .args([
            "child",
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("SPOOL_STATE", state)
        .env("SPOOL_ROLE", role)
        .env(
            "SPOOL_KILL_AT",
            kill_at.map(|s| format!("{s:?}")).unwrap_or_default(),
        )
        .output()
        .unwrap()
}

fn killed(output: &Output) -> bool {
    output.status.signal() == Some(libc::SIGKILL)
}

fn waiting(state: &Path) -> Vec<String> {
    StateDir::open(state)
        .unwrap()
        .waiting(TARGET)
        .unwrap()
        .messages
        .into_iter()
        .map(|w| w.message.body)
        .collect()
}

#[test]
fn a_writer_killed_at_any_step_leaves_the_message_whole_or_absent_and_a_retry_lands_once() {
    for (step, landed) in [
        (Step::Written, false),
        (Step::Synced, false),
        (Step::Linked, true),
    ] {
        let state = scratch(&format!("writer-{step:?}"));
        let output = run_child(&state, "writer", Some(step));
        assert!(killed(&output), "{step:?}: {output:?}");
        // Whole or absent; an orphan in tmp/ is swept once its writer is gone.
        let expected: &[&str] = if landed { &["the body"] } else { &[] };
        assert_eq!(waiting(&state), expected, "{step:?}");
        assert_eq!(
            std::fs::read_dir(state.join("tmp")).unwrap().count(),
            0,
            "{step:?}"
        );
        // The harness retries the call (same key): exactly one message in the end.
        let retried = StateDir::open(&state)
            .unwrap()
            .put(&SpooledMessage::new(
                TARGET,
                DeliveryMode::Queue,
                "the body",
                KEY,
                false,
            ))
            .unwrap();
        assert_eq!(matches!(retried, Put::Repeat(_)), landed, "{step:?}");
        assert_eq!(waiting(&state), ["the body"], "{step:?}");
    }
}

#[test]
fn writers_racing_on_one_key_land_one_message() {
    let state = scratch("race");
    StateDir::open(&state).unwrap();
    let children: Vec<_> = (0..6)
        .map(|_| {
            Command::new(std::env::current_exe().unwrap())
                .args(["child", "--exact", "--ignored", "--test-threads=1"])
                .env("SPOOL_STATE", &state)
                .env("SPOOL_ROLE", "writer")
                .env("SPOOL_KILL_AT", "")
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
    assert_eq!(waiting(&state), ["the body"]);
}

/// The message the hook tests hand over: a 0.4.0 frame, whose id a record can show.
const FRAME: &str = "Cross-session message from another session of this harness.\n\
    from-session: 11111111-aaaa-4aaa-8aaa-000000000001 (\"A\")\ndelivery: queue\nhop: 1\n\
    message-id: m-0123456789ab\n--- message begins ---\nthe body\n--- message ends ---";

fn framed() -> SpooledMessage {
    let mut message = SpooledMessage::new(TARGET, DeliveryMode::Queue, FRAME, KEY, false);
    message.message_id = "m-0123456789ab".to_string();
    message
}

/// A harness whose Stop hook the test kills, and how it keeps its record.
#[derive(Clone, Copy, Debug)]
enum Harness {
    /// A transcript: a hook's context as a `hook_additional_context` attachment.
    ClaudeCode,
    /// A rollout: a Stop hook's block reason as a `<hook_prompt>` user message.
    Codex,
}

impl Harness {
    fn role(self) -> &'static str {
        match self {
            Harness::ClaudeCode => "claude-hook",
            Harness::Codex => "codex-hook",
        }
    }

    /// What the hook's answer gives the model, if `line` is its answer.
    fn given(self, line: &str) -> Option<String> {
        let lead = match self {
            Harness::ClaudeCode => "{\"hookSpecificOutput\"",
            Harness::Codex => "{\"decision\"",
        };
        let answer: serde_json::Value = serde_json::from_str(&line[line.find(lead)?..]).ok()?;
        let given = match self {
            Harness::ClaudeCode => &answer["hookSpecificOutput"]["additionalContext"],
            Harness::Codex => &answer["reason"],
        };
        given.as_str().map(str::to_string)
    }

    /// The record's line for what a hook gave, as the harness writes it.
    fn record_line(self, given: &str) -> serde_json::Value {
        match self {
            Harness::ClaudeCode => serde_json::json!({"type": "attachment", "attachment": {
                "type": "hook_additional_context", "content": [given], "hookEvent": "Stop"}}),
            Harness::Codex => serde_json::json!({"type": "response_item", "payload": {
                "type": "message", "role": "user", "content": [{"type": "input_text",
                "text": format!("<hook_prompt hook_run_id=\"stop:1\">{given}</hook_prompt>")}]}}),
        }
    }
}

/// One Stop hook run of `harness`, killed at `kill_at`, and what the harness makes of
/// it: what a hook that exited with success gave goes into its record, as Claude Code
/// and Codex keep theirs (`recorded_anyway`: so does a killed one's, as a harness that
/// took the answer before the hook died would); anything else is dropped. Whether it
/// offered the frame.
fn stop_hook(state: &Path, harness: Harness, kill_at: Option<Step>, recorded_anyway: bool) -> bool {
    let output = run_child(state, harness.role(), kill_at);
    assert_eq!(
        killed(&output),
        kill_at.is_some(),
        "{kill_at:?}: {output:?}"
    );
    // The test harness prints its own words around the child's answer.
    let stdout = String::from_utf8_lossy(&output.stdout);
    let Some(given) = stdout.lines().find_map(|line| harness.given(line)) else {
        return false;
    };
    assert_eq!(given, FRAME, "{kill_at:?}");
    if output.status.success() || recorded_anyway {
        let line = harness.record_line(&given);
        let mut transcript = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(state.join("transcript.jsonl"))
            .unwrap();
        std::io::Write::write_all(&mut transcript, format!("{line}\n").as_bytes()).unwrap();
    }
    true
}

/// Every offer in the state folder, made long enough ago that its time is up.
fn age_offers(state: &Path) {
    for entry in std::fs::read_dir(state.join("inbox").join(TARGET))
        .unwrap()
        .flatten()
    {
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some((original, _)) = name.rsplit_once('~') {
            let aged = state
                .join("inbox")
                .join(TARGET)
                .join(format!("{original}~0"));
            std::fs::rename(entry.path(), aged).unwrap();
        }
    }
}

/// How many times the transcript holds the frame.
fn recorded(state: &Path) -> usize {
    std::fs::read_to_string(state.join("transcript.jsonl"))
        .unwrap_or_default()
        .matches("message-id: m-0123456789ab")
        .count()
}

fn handed_over(state: &Path) -> bool {
    let spool = StateDir::open(state).unwrap();
    let found = spool.find(TARGET, KEY).unwrap().unwrap();
    found.state == host_shim::DeliveryState::HandedOver
}

#[test]
fn a_hook_killed_at_any_step_leaves_the_message_in_the_record_exactly_once() {
    // (killed at, whether the harness kept the answer anyway)
    let cases = [
        (Some(Step::Claimed), false),
        (Some(Step::Answered), false),
        (Some(Step::Marked), false),
        (Some(Step::Answered), true),
        (Some(Step::Marked), true),
        (None, false),
    ];
    for harness in [Harness::ClaudeCode, Harness::Codex] {
        for (kill_at, recorded_anyway) in cases {
            hook_killed(harness, kill_at, recorded_anyway);
        }
    }
}

/// One case of [`a_hook_killed_at_any_step_leaves_the_message_in_the_record_exactly_once`].
fn hook_killed(harness: Harness, kill_at: Option<Step>, recorded_anyway: bool) {
    let case = format!("{harness:?}-{kill_at:?}-{recorded_anyway}");
    let state = scratch(&format!("hook-{case}"));
    let spool = StateDir::open(&state).unwrap();
    spool.put(&framed()).unwrap();
    let hook = |kill_at, recorded_anyway| stop_hook(&state, harness, kill_at, recorded_anyway);
    let offered = hook(kill_at, recorded_anyway);
    assert_eq!(offered, kill_at != Some(Step::Claimed), "{case}");
    let taken = kill_at.is_none() || (offered && recorded_anyway);
    assert_eq!(recorded(&state), usize::from(taken), "{case}");
    // The next hook settles: what the record shows is handed over, and nothing is
    // offered again while an offer's time runs (its hook may still be answering).
    assert!(!hook(None, false), "{case}");
    assert_eq!(handed_over(&state), taken, "{case}");
    assert!(waiting(&state).is_empty(), "{case}");
    // Its time up, an offer the record does not show is offered again, once; one it
    // shows never is.
    age_offers(&state);
    assert_eq!(hook(None, false), !taken, "{case}");
    assert_eq!(recorded(&state), 1, "{case}");
    assert!(!hook(None, false), "{case}");
    age_offers(&state);
    assert!(!hook(None, false), "{case}");
    assert!(handed_over(&state), "{case}");
    assert_eq!(recorded(&state), 1, "exactly once in the record: {case}");
    // A retried delivery is still a repeat.
    assert!(
        matches!(spool.put(&framed()).unwrap(), Put::Repeat(_)),
        "{case}"
    );
}

#[test]
fn a_state_folder_others_can_write_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("open");
    let state = dir.join("state");
    std::fs::create_dir(&state).unwrap();
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o777)).unwrap();
    let err = StateDir::open(&state).unwrap_err().to_string();
    assert!(err.contains("others can write to it"), "{err}");
    assert!(err.contains("--state-dir"), "{err}");
    // A symlink to a good folder is not followed.
    let real = dir.join("real");
    std::fs::create_dir(&real).unwrap();
    let link = dir.join("link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let err = StateDir::open(&link).unwrap_err().to_string();
    assert!(err.contains("not a directory (a symlink?)"), "{err}");
}

#[test]
fn a_planted_message_that_is_not_a_file_is_not_read() {
    let state = scratch("planted");
    let spool = StateDir::open(&state).unwrap();
    spool
        .put(&SpooledMessage::new(
            TARGET,
            DeliveryMode::Queue,
            "real",
            "",
            false,
        ))
        .unwrap();
    let inbox = state.join("inbox").join(TARGET);
    // A symlink to a file elsewhere, and a FIFO: neither is read (nor waited on).
    let elsewhere = state.join("elsewhere.json");
    std::fs::write(
        &elsewhere,
        r#"{"target":"x","mode":"queue","body":"planted","accepted_at_ns":0}"#,
    )
    .unwrap();
    std::os::unix::fs::symlink(&elsewhere, inbox.join("k-link.json")).unwrap();
    let fifo = std::ffi::CString::new(inbox.join("k-fifo.json").to_str().unwrap()).unwrap();
    // SAFETY: a valid C path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    let contents = spool.waiting(TARGET).unwrap();
    let bodies: Vec<_> = contents
        .messages
        .iter()
        .map(|w| w.message.body.as_str())
        .collect();
    assert_eq!(bodies, ["real"]);
    assert_eq!(contents.unreadable.len(), 2, "{:?}", contents.unreadable);
}
