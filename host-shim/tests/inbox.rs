//! The spool's promises under crashes: a writer is killed (SIGKILL, no clean-up) at
//! each step, and what is left must be whole, delivered at most once (each harness's
//! crate kills its own hooks the same way, through `host_shim_testkit::crash`). The
//! killed process is this test binary itself, started again to run [`child`].

use host_shim::inbox::{InboxBackend, Put, SpooledMessage, Step};
use host_shim::{DeliveryMode, StateDir};
use host_shim_testkit::crash::{TARGET, killed, message, run_child, scratch, waiting};
use std::process::Command;

/// Started by the tests below in a process of its own: puts one message, killed at the
/// step they name.
#[test]
#[ignore = "a child process of the crash tests, not a test by itself"]
fn child() {
    host_shim_testkit::crash::child(None);
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
            .put(&message("the body"))
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
fn a_state_folder_others_can_write_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("open");
    let state = dir.join("state");
    std::fs::create_dir(&state).unwrap();
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o777)).unwrap();
    let err = StateDir::open(&state).unwrap_err().to_string();
    host_shim_testkit::has(&err, "others can write to it");
    host_shim_testkit::has(&err, "--state-dir");
    // A symlink to a good folder is not followed.
    let real = dir.join("real");
    std::fs::create_dir(&real).unwrap();
    let link = dir.join("link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let err = StateDir::open(&link).unwrap_err().to_string();
    host_shim_testkit::has(&err, "not a directory (a symlink?)");
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
