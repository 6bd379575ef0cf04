//! The spool's promises under crashes, for the kit's writer and each harness's hook: a
//! process is killed (SIGKILL, no clean-up) at each step, and what is left must be
//! whole, delivered at most once, and in the target's record exactly once. The killed
//! process is the test binary itself, started again to run its `child` test, which
//! calls [`child`].
//!
//! A harness's test file holds the two tests [`stop_hook_crash_tests!`](crate::stop_hook_crash_tests)
//! writes over its [`StopHook`]:
//!
//! ```ignore
//! host_shim_testkit::stop_hook_crash_tests!(
//!     STOP_HOOK,
//!     a_stop_hook_killed_at_any_step_leaves_the_message_in_the_record_exactly_once
//! );
//! ```

use host_shim::DeliveryMode;
use host_shim::inbox::{InboxBackend, Put, SpooledMessage, StateDir, Step};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The key the crash tests deliver under.
pub const KEY: &str = "32:11111111-aaaa-4aaa-8aaa-000000000001toolu_01";
/// The session the crash tests deliver to.
pub const TARGET: &str = "22222222-bbbb-4bbb-8bbb-000000000002";

/// The message the hook tests hand over: a 0.4.0 frame, whose id a record can show.
pub const FRAME: &str = "Cross-session message from another session of this harness.\n\
    from-session: 11111111-aaaa-4aaa-8aaa-000000000001 (\"A\")\ndelivery: queue\nhop: 1\n\
    message-id: m-0123456789ab\n--- message begins ---\nthe body\n--- message ends ---";

/// A harness's Stop hook as the crash test runs and reads it.
pub struct StopHook {
    /// One run of the hook over the state folder's inbox, its input and its answer.
    pub answer: fn(&StateDir, &[u8], &mut dyn std::io::Write) -> anyhow::Result<()>,
    /// What the hook's answer gives the model, if `line` is its answer.
    pub given: fn(&str) -> Option<String>,
    /// The record's line for what a hook gave, as the harness writes it.
    pub record_line: fn(&str) -> serde_json::Value,
}

/// A folder of its own for one case.
pub fn scratch(name: &str) -> PathBuf {
    crate::scratch("spool", name)
}

/// Kills this process at the step named by `SPOOL_KILL_AT`.
fn kill_at_named_step(step: Step) {
    if std::env::var("SPOOL_KILL_AT").ok().as_deref() == Some(&format!("{step:?}")) {
        // SAFETY: sends a signal to this process; nothing after it runs.
        unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
    }
}

/// The two crash tests of a harness's Stop hook `$hook` (a [`StopHook`]): `child`, the
/// killed process's work (run only by the other, in a process of its own), and `$test`,
/// the hook killed at each step.
#[macro_export]
macro_rules! stop_hook_crash_tests {
    ($hook:expr, $test:ident) => {
        /// Started by the crash test in a process of its own.
        #[test]
        #[ignore = "a child process of the crash tests, not a test by itself"]
        fn child() {
            $crate::crash::child(Some(&$hook));
        }

        #[test]
        fn $test() {
            $crate::crash::hook_killed_at_any_step(&$hook);
        }
    };
}

/// The child process's work: put one message (role `writer`), or answer one Stop hook
/// with `hook` (role `hook`), killed at the step the parent named.
pub fn child(hook: Option<&StopHook>) {
    let state = StateDir::open(Path::new(&std::env::var("SPOOL_STATE").unwrap()))
        .unwrap()
        .observe(kill_at_named_step);
    match (std::env::var("SPOOL_ROLE").unwrap().as_str(), hook) {
        ("writer", _) => {
            state.put(&message("the body")).unwrap();
        }
        ("hook", Some(hook)) => {
            let transcript = std::env::var("SPOOL_TRANSCRIPT").unwrap();
            let input = serde_json::json!({"session_id": TARGET, "hook_event_name": "Stop",
                "transcript_path": transcript})
            .to_string();
            (hook.answer)(&state, input.as_bytes(), &mut std::io::stdout()).unwrap();
        }
        (role, _) => panic!("no role {role}"),
    }
}

/// A queued message to [`TARGET`] under [`KEY`].
pub fn message(body: &str) -> SpooledMessage {
    SpooledMessage::new(TARGET, DeliveryMode::Queue, body, KEY, false)
}

/// This test binary's `child` test in a process of its own, as `role`, killed at
/// `kill_at`.
pub fn run_child(state: &Path, role: &str, kill_at: Option<Step>) -> Output {
    Command::new(std::env::current_exe().unwrap())
        .env("SPOOL_TRANSCRIPT", state.join("transcript.jsonl"))
        .env("TMPDIR", crate::tmpdir())
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

/// Whether the child was killed.
pub fn killed(output: &Output) -> bool {
    output.status.signal() == Some(libc::SIGKILL)
}

/// The bodies waiting for [`TARGET`].
pub fn waiting(state: &Path) -> Vec<String> {
    StateDir::open(state)
        .unwrap()
        .waiting(TARGET)
        .unwrap()
        .messages
        .into_iter()
        .map(|w| w.message.body)
        .collect()
}

fn framed() -> SpooledMessage {
    let mut message = message(FRAME);
    message.message_id = "m-0123456789ab".to_string();
    message
}

/// One Stop hook run, killed at `kill_at`, and what the harness makes of it: what a
/// hook that exited with success gave goes into its record (`recorded_anyway`: so does
/// a killed one's, as a harness that took the answer before the hook died would);
/// anything else is dropped. Whether it offered the frame.
fn stop_hook(state: &Path, hook: &StopHook, kill_at: Option<Step>, recorded_anyway: bool) -> bool {
    let output = run_child(state, "hook", kill_at);
    assert_eq!(
        killed(&output),
        kill_at.is_some(),
        "{kill_at:?}: {output:?}"
    );
    // The test harness prints its own words around the child's answer.
    let stdout = String::from_utf8_lossy(&output.stdout);
    let Some(given) = stdout.lines().find_map(hook.given) else {
        return false;
    };
    assert_eq!(given, FRAME, "{kill_at:?}");
    if output.status.success() || recorded_anyway {
        let line = (hook.record_line)(&given);
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
    let inbox = state.join("inbox").join(TARGET);
    for entry in std::fs::read_dir(&inbox).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some((original, _)) = name.rsplit_once('~') {
            std::fs::rename(entry.path(), inbox.join(format!("{original}~0"))).unwrap();
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

/// The hook killed at each step (and not killed), with the harness keeping a killed
/// hook's answer or not: the message ends in the record exactly once.
pub fn hook_killed_at_any_step(hook: &StopHook) {
    // (killed at, whether the harness kept the answer anyway)
    let cases = [
        (Some(Step::Claimed), false),
        (Some(Step::Answered), false),
        (Some(Step::Marked), false),
        (Some(Step::Answered), true),
        (Some(Step::Marked), true),
        (None, false),
    ];
    for (kill_at, recorded_anyway) in cases {
        hook_killed(hook, kill_at, recorded_anyway);
    }
}

/// One case of [`hook_killed_at_any_step`].
fn hook_killed(hook: &StopHook, kill_at: Option<Step>, recorded_anyway: bool) {
    let case = format!("{kill_at:?}-{recorded_anyway}");
    let state = scratch(&format!("hook-{case}"));
    let spool = StateDir::open(&state).unwrap();
    spool.put(&framed()).unwrap();
    let run = |kill_at, recorded_anyway| stop_hook(&state, hook, kill_at, recorded_anyway);
    let offered = run(kill_at, recorded_anyway);
    assert_eq!(offered, kill_at != Some(Step::Claimed), "{case}");
    let taken = kill_at.is_none() || (offered && recorded_anyway);
    assert_eq!(recorded(&state), usize::from(taken), "{case}");
    // The next hook settles: what the record shows is handed over, and nothing is
    // offered again while an offer's time runs (its hook may still be answering).
    assert!(!run(None, false), "{case}");
    assert_eq!(handed_over(&state), taken, "{case}");
    assert!(waiting(&state).is_empty(), "{case}");
    // Its time up, an offer the record does not show is offered again, once; one it
    // shows never is.
    age_offers(&state);
    assert_eq!(run(None, false), !taken, "{case}");
    assert_eq!(recorded(&state), 1, "{case}");
    assert!(!run(None, false), "{case}");
    age_offers(&state);
    assert!(!run(None, false), "{case}");
    assert!(handed_over(&state), "{case}");
    assert_eq!(recorded(&state), 1, "exactly once in the record: {case}");
    // A retried delivery is still a repeat.
    assert!(
        matches!(spool.put(&framed()).unwrap(), Put::Repeat(_)),
        "{case}"
    );
}
