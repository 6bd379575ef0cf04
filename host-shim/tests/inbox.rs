//! The spool's promises under crashes: a writer or a hook is killed (SIGKILL, no
//! clean-up) at each step, and what is left must be whole, delivered at most once,
//! and handed over by exactly one successful hook run. The killed process is this
//! test binary itself, started again to run [`child`].

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
        "hook" => {
            let input = format!(r#"{{"session_id":"{TARGET}","hook_event_name":"Stop"}}"#);
            let presence = LocalPresence::open(state.root()).unwrap();
            let mut out = std::io::stdout();
            host_shim::claude::hook::answer(&state, &presence, None, input.as_bytes(), &mut out)
                .unwrap();
        }
        role => panic!("no role {role}"),
    }
}

fn run_child(state: &Path, role: &str, kill_at: Option<Step>) -> Output {
    Command::new(std::env::current_exe().unwrap())
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

#[test]
fn a_hook_killed_before_it_succeeds_hands_the_message_over_on_the_next_run() {
    for step in [Step::Claimed, Step::Answered] {
        let state = scratch(&format!("hook-{step:?}"));
        StateDir::open(&state)
            .unwrap()
            .put(&SpooledMessage::new(
                TARGET,
                DeliveryMode::Queue,
                "the body",
                KEY,
                false,
            ))
            .unwrap();
        let output = run_child(&state, "hook", Some(step));
        // Killed: Claude Code ignores the output of a hook that did not exit with
        // success, whatever it wrote.
        assert!(killed(&output), "{step:?}: {output:?}");
        let written = String::from_utf8_lossy(&output.stdout).contains("\"additionalContext\"");
        assert_eq!(written, step == Step::Answered, "{step:?}");
        // The claim of the dead hook goes back: the next hook hands it over, once.
        let output = run_child(&state, "hook", None);
        assert!(output.status.success(), "{step:?}: {output:?}");
        let stdout = String::from_utf8_lossy(&output.stdout);
        // The test harness prints its own words around the child's answer.
        let answers: Vec<&str> = stdout
            .lines()
            .filter_map(|l| l.find('{').map(|at| &l[at..]))
            .collect();
        assert_eq!(
            answers,
            [r#"{"hookSpecificOutput":{"additionalContext":"the body","hookEventName":"Stop"}}"#],
            "{step:?}"
        );
        assert!(waiting(&state).is_empty(), "{step:?}");
        let output = run_child(&state, "hook", None);
        assert!(!String::from_utf8_lossy(&output.stdout).contains("additionalContext"));
        // Handed over: a retried delivery is still a repeat.
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
        assert!(matches!(retried, Put::Repeat(_)), "{step:?}");
    }
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
