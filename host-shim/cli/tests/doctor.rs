//! `host-shim doctor` over a state folder broken on purpose, one mistake at a time: each
//! is found, named, and given its fix; and `remove-state` once no harness uses it (a
//! harness's own set-up is checked in its folder).

use host_shim::DeliveryMode;
use host_shim::inbox::{InboxBackend, SpooledMessage, StateDir};
use host_shim_testkit::command::Home;
use std::os::unix::fs::PermissionsExt;

fn the_state_folder_s_modes_and_stuck_messages_are_named_and_dead_registrations_swept() {
    let home = Home::new("state");
    home.setup("claude");
    let state = home.state();
    let inbox = StateDir::open(&state).unwrap();
    // A registration of a process that is gone (a headless run that ended): the host's
    // own bookkeeping, swept, and nothing wrong.
    std::fs::create_dir_all(state.join("live")).unwrap();
    let dead = state.join("live/999999999.json");
    std::fs::write(
        &dead,
        r#"{"session_id": "s-dead", "pid": 999999999, "started": 1}"#,
    )
    .unwrap();
    let (ok, text) = home.doctor();
    assert!(
        ok && text.contains("ok       swept 1 registration of a process that is gone (s-dead)"),
        "{text}"
    );
    assert!(!dead.exists());
    // A message that waited two hours for a session no harness here knows.
    let mut message = SpooledMessage::new("s-stuck", DeliveryMode::Queue, "hello", "k1", false);
    message.accepted_at_ns -= 2 * 3_600_000_000_000;
    inbox.put(&message).unwrap();
    // A fresh one is no problem.
    inbox
        .put(&SpooledMessage::new(
            "s-fresh",
            DeliveryMode::Queue,
            "hi",
            "k2",
            false,
        ))
        .unwrap();
    let (ok, text) = home.doctor();
    assert!(!ok);
    assert!(
        text.contains(
            "PROBLEM  1 message has waited more than an hour for s-stuck (the oldest 2 h)"
        ) && text.contains("fix: resume s-stuck in its harness (its next prompt takes them; no harness here holds it)"),
        "{text}"
    );
    // A session of a harness here: that harness's own resume command.
    let project = home.root.join(".claude/projects/-work");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join("s-stuck.jsonl"), "").unwrap();
    let (_, text) = home.doctor();
    host_shim_testkit::has(
        &text,
        "fix: claude --resume s-stuck (its next prompt takes them)",
    );
    host_shim_testkit::lacks(&text, "s-fresh");
    // Held by its person: the fix is theirs to release.
    inbox
        .set_inbound("s-stuck", host_shim::contract::latest::InboundPolicy::Hold)
        .unwrap();
    let (_, text) = home.doctor();
    host_shim_testkit::has(&text, "fix: host-shim inbound s-stuck accept");
    // Readable by others; then writable by others (which the inbox refuses outright).
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o755)).unwrap();
    let (_, text) = home.doctor();
    assert!(
        text.contains("others can read it (mode 755)")
            && text.contains(&format!("fix: chmod 700 {}", state.display())),
        "{text}"
    );
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o777)).unwrap();
    let (_, text) = home.doctor();
    assert!(
        text.contains("others can write to it (mode 777)")
            && text.contains(&format!("fix: chmod 700 {}", state.display())),
        "{text}"
    );
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o700)).unwrap();
}

/// `host-shim doctor | head`: the report ends quietly when its reader goes, as other
/// command-line tools do (a sweep it was making is done again by the next look).
fn doctor_piped_into_a_reader_that_goes_ends_quietly() {
    let home = Home::new("piped");
    // Set up, so the report goes on after its first line (it starts the server).
    home.setup("claude");
    let state = home.state();
    host_shim_testkit::command::ends_quietly_when_its_reader_goes(
        host_shim_testkit::command::in_home(&home.root).args([
            "doctor",
            "--state-dir",
            state.to_str().unwrap(),
        ]),
    );
}

fn no_harness_here_says_so() {
    let home = Home::new("empty");
    let (ok, text) = home.doctor();
    assert!(ok, "{text}");
    host_shim_testkit::has(&text, "No harness found");
    host_shim_testkit::has(&text, "not created yet");
}

fn remove_state_removes_the_tools_own_folders_only_once_no_harness_uses_them() {
    let home = Home::new("remove-state");
    home.setup("claude");
    let state = home.state();
    let cache = home.root.join(".cache/session-tools");
    std::fs::create_dir_all(&cache).unwrap();
    let inbox = StateDir::open(&state).unwrap();
    inbox
        .put(&SpooledMessage::new(
            "s-b",
            DeliveryMode::Queue,
            "hi",
            "k1",
            false,
        ))
        .unwrap();
    // The hooks' record marks, in a temporary folder of this test's own.
    let tmp = home.root.join("tmp");
    let uid = std::os::unix::fs::MetadataExt::uid(&std::fs::metadata(&home.root).unwrap());
    let marks = tmp.join(format!("session-tools-marks-{uid}"));
    host_shim_testkit::command::put(&marks.join("0123456789abcdef"), "");
    // A wake command's message file its host left.
    let wake = tmp.join(format!("session-tools-wake-{uid}"));
    host_shim_testkit::command::put(&wake.join("1-2-0.json"), "{}");
    let remove = |extra: &[&str]| {
        home.run_with(
            (home.host_shim().env("TMPDIR", &tmp))
                .args(["remove-state", "--state-dir", state.to_str().unwrap()])
                .args(extra),
        )
    };
    // A harness still set up needs them: nothing removed, and the way out named.
    let (ok, text) = remove(&[]);
    assert!(
        !ok && text.contains("claude still set up for the tools")
            && text.contains("`host-shim setup claude --remove`"),
        "{text}"
    );
    assert!(state.exists() && cache.exists());
    let (ok, text) = home.run(&["setup", "claude", "--remove"]);
    assert!(ok, "{text}");
    // A message waiting would be lost: refused unless asked for.
    let (ok, text) = remove(&[]);
    assert!(
        !ok && text.contains("1 message still waits in the inbox")
            && text.contains("--discard-waiting"),
        "{text}"
    );
    assert!(state.exists());
    let (ok, text) = remove(&["--discard-waiting"]);
    assert!(ok, "{text}");
    assert!(
        text.contains(&format!("removed: {} (the state folder)", state.display()))
            && text.contains(&format!(
                "removed: {} (the compiled-plugin cache)",
                cache.display()
            )),
        "{text}"
    );
    assert!(
        text.contains(&format!("removed: {} (the record marks)", marks.display()))
            && text.contains(&format!(
                "removed: {} (the wake commands' message files)",
                wake.display()
            )),
        "{text}"
    );
    assert!(!state.exists() && !cache.exists() && !marks.exists() && !wake.exists());
    let (ok, text) = remove(&[]);
    assert!(ok && text.contains("nothing changed"), "{text}");
}

fn damaged_message_files_and_inbound_settings_are_named_and_inbound_mends_its_own() {
    let home = Home::new("damaged");
    home.setup("claude");
    let state = home.state();
    let inbox = StateDir::open(&state).unwrap();
    inbox
        .put(&SpooledMessage::new(
            "s-b",
            DeliveryMode::Queue,
            "fine",
            "k1",
            false,
        ))
        .unwrap();
    std::fs::write(state.join("inbox/s-b/k-bad.json"), "{half").unwrap();
    std::fs::create_dir_all(state.join("inbound")).unwrap();
    std::fs::write(state.join("inbound/s-b"), "maybe").unwrap();
    let (ok, text) = home.doctor();
    assert!(!ok, "{text}");
    assert!(
        text.contains("k-bad.json is not a spooled message")
            && text.contains("fix: remove the file it names"),
        "{text}"
    );
    assert!(
        text.contains("says \"maybe\", which is no inbound setting")
            && text.contains("fix: host-shim inbound s-b accept (or hold, or refuse)"),
        "{text}"
    );
    // The person's own command mends the setting.
    let (ok, text) = home.run(&[
        "inbound",
        "s-b",
        "hold",
        "--state-dir",
        state.to_str().unwrap(),
    ]);
    assert!(ok && text.contains("s-b: inbound hold"), "{text}");
    assert_eq!(
        inbox.inbound("s-b").unwrap(),
        host_shim::contract::latest::InboundPolicy::Hold
    );
    std::fs::remove_file(state.join("inbox/s-b/k-bad.json")).unwrap();
    let (ok, text) = home.doctor();
    assert!(ok, "{text}");
    host_shim_testkit::has(
        &text,
        "ok       every message file and inbound setting reads",
    );
}

host_shim_testkit::tests![
    doctor_piped_into_a_reader_that_goes_ends_quietly,
    the_state_folder_s_modes_and_stuck_messages_are_named_and_dead_registrations_swept,
    no_harness_here_says_so,
    remove_state_removes_the_tools_own_folders_only_once_no_harness_uses_them,
    damaged_message_files_and_inbound_settings_are_named_and_inbound_mends_its_own,
];
