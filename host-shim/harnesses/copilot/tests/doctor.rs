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
    assert!(
        text.contains("the version the tools are tested with") && !text.contains("may work"),
        "{text}"
    );
    host_shim_testkit::has(
        &text,
        "runs host-shim copilot-hook at sessionStart, userPromptSubmitted",
    );
    // Without setup's hooks file, messages are never handed over: a problem, its fix.
    std::fs::remove_file(home.root.join(".copilot/hooks/session-tools.json")).unwrap();
    let (ok, text) = home.doctor();
    assert!(!ok);
    assert!(
        text.contains("no hooks file") && text.contains("fix: host-shim setup copilot"),
        "{text}"
    );
}

host_shim_testkit::tests![copilot_s_server_hooks_and_version_sentence_are_checked,];
