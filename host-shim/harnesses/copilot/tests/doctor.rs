//! `host-shim doctor` over Copilot CLI's set-up broken on purpose, one mistake at a
//! time: each is found, named, and given its fix; a sound set-up has nothing wrong.

use host_shim_testkit::command::{Home, pinned};

fn copilot_s_server_hooks_and_version_sentence_are_checked() {
    let home = Home::new("copilot");
    // As Copilot CLI prints it: a sentence, its full stop after the version.
    let version = pinned("@github/copilot");
    home.command(
        "copilot",
        &format!("GitHub Copilot CLI {version}.\nRun 'copilot update' to check for updates."),
    );
    home.setup("copilot");
    let (ok, text) = home.doctor();
    assert!(ok, "{text}");
    host_shim_testkit::has(&text, "the version the tools are tested with");
    host_shim_testkit::lacks(&text, "may work");
    host_shim_testkit::has(
        &text,
        "runs host-shim copilot-hook at sessionStart, userPromptSubmitted",
    );
    host_shim_testkit::has(&text, "and host-shim copilot-write-hook at preToolUse");
    // A hooks file without the pre-write hook (an earlier setup's): writes are not kept
    // out of claims, a problem, its fix.
    let hooks = home.root.join(".copilot/hooks/session-tools.json");
    let mut earlier: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&hooks).unwrap()).unwrap();
    earlier["hooks"]
        .as_object_mut()
        .unwrap()
        .remove("preToolUse");
    std::fs::write(&hooks, earlier.to_string()).unwrap();
    let (ok, text) = home.doctor();
    assert!(!ok);
    host_shim_testkit::has(&text, "writes are not kept out of other sessions' claims");
    // Without setup's hooks file, messages are never handed over: a problem, its fix.
    std::fs::remove_file(home.root.join(".copilot/hooks/session-tools.json")).unwrap();
    let (ok, text) = home.doctor();
    assert!(!ok);
    host_shim_testkit::has(&text, "no hooks file");
    host_shim_testkit::has(&text, "fix: host-shim setup copilot");
}

host_shim_testkit::tests![copilot_s_server_hooks_and_version_sentence_are_checked,];
