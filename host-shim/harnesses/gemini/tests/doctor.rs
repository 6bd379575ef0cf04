//! `host-shim doctor` over Gemini CLI's set-up broken on purpose, one mistake at a
//! time: each is found, named, and given its fix; a sound set-up has nothing wrong.

use host_shim_testkit::command::{Home, pinned};

fn gemini_s_trusted_server_hooks_and_session_retention_are_checked() {
    let home = Home::new("gemini");
    home.command("gemini", &pinned("@google/gemini-cli"));
    std::fs::create_dir_all(home.root.join(".gemini")).unwrap();
    home.setup("gemini");
    let (ok, text) = home.doctor();
    assert!(ok, "{text}");
    assert!(
        text.contains("the version the tools are tested with")
            && text.contains("the hooks (`host-shim gemini-hook`) are in"),
        "{text}"
    );
    // Gemini's retention is on unless the person turned it off: a note, not a problem.
    host_shim_testkit::has(&text, "session retention is on");
    home.edit_json(".gemini/settings.json", |settings| {
        settings["general"] = serde_json::json!({"sessionRetention": {"enabled": false}});
        settings["mcpServers"]["session-tools"]
            .as_object_mut()
            .unwrap()
            .remove("trust");
    });
    let (ok, text) = home.doctor();
    assert!(!ok && !text.contains("session retention is on"), "{text}");
    host_shim_testkit::has(&text, "is not trusted");
    host_shim_testkit::has(&text, "fix: host-shim setup gemini");
}

host_shim_testkit::tests![gemini_s_trusted_server_hooks_and_session_retention_are_checked,];
