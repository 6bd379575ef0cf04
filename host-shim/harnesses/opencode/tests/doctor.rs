//! `host-shim doctor` over OpenCode's set-up broken on purpose, one mistake at a
//! time: each is found, named, and given its fix; a sound set-up has nothing wrong.

use host_shim_testkit::command::{Home, pinned, problems};

fn opencode_s_plugin_file_and_the_server_it_runs_are_checked() {
    let home = Home::new("opencode");
    home.command("opencode", &pinned("opencode-ai"));
    // Installed, never set up for the tools: the person's choice, a note with the
    // command that sets it up.
    let (ok, text) = home.doctor();
    assert!(ok, "{text}");
    host_shim_testkit::has(
        &text,
        "OpenCode 1.18.33, the version the tools are tested with",
    );
    let state = home.state();
    host_shim_testkit::has(
        &text,
        &format!(
            "note     OpenCode is here but not set up for the tools; to set it up: host-shim setup opencode --state-dir {}",
            state.display()
        ),
    );
    home.setup("opencode");
    let (ok, text) = home.doctor();
    assert!(ok, "{text}");
    host_shim_testkit::has(
        &text,
        "starts and lists sessions_list, sessions_read, sessions_send",
    );
    host_shim_testkit::has(&text, "@opencode-ai/plugin is not in ");
    host_shim_testkit::has(&text, "no database at ");
    host_shim_testkit::has(
        &text,
        "is this host-shim's plugin file (it asks before edit, write and apply_patch)",
    );
    // An earlier setup's file, without the check before each file write: named, with
    // its fix.
    let file = home.root.join(".config/opencode/plugin/session-tools.js");
    let current = std::fs::read_to_string(&file).unwrap();
    let refusing = "if (refusal) throw new Error(refusal);";
    assert!(current.contains(refusing));
    std::fs::write(&file, current.replacen(refusing, "", 1)).unwrap();
    let (ok, text) = home.doctor();
    assert!(
        !ok && problems(&text).iter().any(|p| p.contains(&format!(
            "{} is not what this host-shim's setup writes",
            file.display()
        ))),
        "{text}"
    );
    std::fs::write(&file, current).unwrap();
    // The binary the file runs moved away.
    let moved = std::fs::read_to_string(&file).unwrap().replacen(
        "\"command\":\"/",
        "\"command\":\"/nowhere/",
        1,
    );
    std::fs::write(&file, moved).unwrap();
    let (ok, text) = home.doctor();
    assert!(!ok, "{text}");
    assert!(
        problems(&text)
            .iter()
            .any(|p| p.contains("the MCP server's command /nowhere/")),
        "{text}"
    );
    // A file of that name setup did not write.
    std::fs::write(&file, "export const Mine = async () => ({});\n").unwrap();
    let (ok, text) = home.doctor();
    assert!(
        !ok && text.contains("is not a plugin file setup wrote"),
        "{text}"
    );
}

host_shim_testkit::tests![opencode_s_plugin_file_and_the_server_it_runs_are_checked,];
