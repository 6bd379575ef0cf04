//! `host-shim setup claude` on scratch homes: what it writes, that a second run changes
//! nothing, that `--remove` gives the person's files back byte for byte, that the dry
//! run writes nothing, and that a broken file stops it before anything is written.
//! (The real Claude Code running with what it writes: `suite/suite.py`.)

use host_shim_testkit::command::{binary, files, json, ok, read, scratch, setup};
use std::os::unix::fs::PermissionsExt;

fn a_fresh_home_gets_the_server_hooks_and_permission_once() {
    let home = scratch("setup-claude", "fresh");
    let said = ok(&setup(&home, "claude", &[]));
    host_shim_testkit::has(&said, "Claude Code is set up");
    let config = json(&home.join(".claude.json"));
    assert_eq!(
        config["mcpServers"]["session-tools"],
        serde_json::json!({"type": "stdio", "command": binary(), "args": [
            "mcp", "--claude-projects", home.join(".claude/projects").to_string_lossy()],
            "env": {}})
    );
    let settings = json(&home.join(".claude/settings.json"));
    assert_eq!(
        settings["permissions"]["allow"],
        serde_json::json!(["mcp__session-tools"])
    );
    let hook = format!("{} claude-hook", binary());
    for event in ["SessionStart", "UserPromptSubmit", "PostToolUse", "Stop"] {
        let groups = settings["hooks"][event].as_array().unwrap();
        assert_eq!(groups.len(), 1, "{event}");
        assert_eq!(groups[0]["hooks"][0]["command"], hook.as_str(), "{event}");
    }
    assert_eq!(settings["hooks"]["PostToolUse"][0]["matcher"], "*");
    // Before each file-writing tool, the pre-write hook, reading the server's sessions.
    let projects = home.join(".claude/projects");
    assert_eq!(
        settings["hooks"]["PreToolUse"],
        serde_json::json!([{"matcher": "Edit|Write|MultiEdit|NotebookEdit", "hooks": [{
            "type": "command",
            "command": format!(
                "{} claude-write-hook --claude-projects {}",
                binary(),
                projects.to_string_lossy()
            ),
        }]}])
    );
    // Twice: nothing changes.
    let before = files(&home);
    let said = ok(&setup(&home, "claude", &[]));
    host_shim_testkit::has(&said, "set up already: nothing changed");
    assert_eq!(files(&home), before);
    // Removed: no file of setup's is left.
    let said = ok(&setup(&home, "claude", &["--remove"]));
    host_shim_testkit::has(&said, "removed: ");
    assert_eq!(files(&home), vec![]);
}

fn a_persons_files_keep_everything_else_and_come_back_byte_for_byte() {
    let home = scratch("setup-claude", "existing");
    // As Claude Code writes them (two-space JSON, no last newline) and a person's own.
    let config = "{\n  \"numStartups\": 7,\n  \"mcpServers\": {\n    \"github\": {\n      \"type\": \"stdio\",\n      \"command\": \"gh-mcp\",\n      \"args\": [],\n      \"env\": {}\n    }\n  },\n  \"projects\": {}\n}";
    let settings = "{\n    \"model\": \"opus\",\n    \"permissions\": {\n        \"allow\": [\n            \"Bash(npm test)\"\n        ],\n        \"deny\": []\n    },\n    \"hooks\": {\n        \"Stop\": [\n            {\n                \"hooks\": [\n                    {\n                        \"type\": \"command\",\n                        \"command\": \"notify-send done\"\n                    }\n                ]\n            }\n        ]\n    }\n}\n";
    std::fs::write(home.join(".claude.json"), config).unwrap();
    std::fs::set_permissions(
        home.join(".claude.json"),
        std::fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    std::fs::write(home.join(".claude/settings.json"), settings).unwrap();
    let before = files(&home);
    ok(&setup(&home, "claude", &[]));
    // Everything else kept, in its order; the file's mode and indent kept.
    let written = read(&home.join(".claude.json"));
    host_shim_testkit::begins(
        &written,
        "{\n  \"numStartups\": 7,\n  \"mcpServers\": {\n    \"github\"",
    );
    assert!(!written.ends_with('\n'));
    let mode = std::fs::metadata(home.join(".claude.json"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    let settings_now = json(&home.join(".claude/settings.json"));
    assert_eq!(
        settings_now["permissions"]["allow"],
        serde_json::json!(["Bash(npm test)", "mcp__session-tools"])
    );
    let stop = settings_now["hooks"]["Stop"].as_array().unwrap();
    assert_eq!(stop.len(), 2);
    assert_eq!(stop[0]["hooks"][0]["command"], "notify-send done");
    assert!(read(&home.join(".claude/settings.json")).contains("\n    \"model\": \"opus\""));
    // The previous bytes beside each file.
    assert_eq!(
        read(&home.join(".claude.json.before-session-tools")),
        config
    );
    // Removed: byte for byte what the person had, file for file: setup's copies of
    // the previous bytes go with its entries.
    let said = ok(&setup(&home, "claude", &["--remove"]));
    host_shim_testkit::has(&said, "(setup's entries taken out)");
    assert_eq!(files(&home), before);
}

fn a_moved_binary_replaces_its_old_entries_in_place() {
    let home = scratch("setup-claude", "moved");
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    let old = serde_json::json!({"hooks": {"Stop": [
        {"hooks": [{"type": "command", "command": "/old/place/host-shim claude-hook"}]},
        {"hooks": [{"type": "command", "command": "say stopped"}]},
        {"hooks": [{"type": "command", "command": "/older/host-shim claude-hook --state-dir /s"}]}
    ]}});
    std::fs::write(home.join(".claude/settings.json"), old.to_string()).unwrap();
    ok(&setup(&home, "claude", &[]));
    let stop = json(&home.join(".claude/settings.json"))["hooks"]["Stop"].clone();
    let commands: Vec<&str> = (stop.as_array().unwrap().iter())
        .map(|g| g["hooks"][0]["command"].as_str().unwrap())
        .collect();
    assert_eq!(
        commands,
        [format!("{} claude-hook", binary()).as_str(), "say stopped"]
    );
}

fn a_dry_run_prints_the_diff_and_writes_nothing() {
    let home = scratch("setup-claude", "dry");
    let said = ok(&setup(
        &home,
        "claude",
        &["--dry-run", "--state-dir", "/srv/agents state"],
    ));
    host_shim_testkit::has(&said, "--- /dev/null\n+++ ");
    host_shim_testkit::has(&said, "+      \"mcp__session-tools\"");
    // A state folder with a space reaches the hook quoted for the shell.
    host_shim_testkit::has(&said, "claude-hook --state-dir '/srv/agents state'");
    host_shim_testkit::has(&said, "\"--state-dir\",\n+        \"/srv/agents state\"");
    assert_eq!(files(&home), vec![]);
}

fn a_broken_file_is_named_and_nothing_is_written() {
    let home = scratch("setup-claude", "broken");
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    std::fs::write(home.join(".claude/settings.json"), "{\"model\": \"opus\",}").unwrap();
    let before = files(&home);
    let output = setup(&home, "claude", &[]);
    assert!(!output.status.success());
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(
        err.contains(".claude/settings.json is not valid JSON")
            && err.contains("nothing was changed. Fix or move it, then run setup again"),
        "{err}"
    );
    assert_eq!(files(&home), before, ".claude.json was not written either");
    // A key of the wrong kind is named too.
    std::fs::write(home.join(".claude/settings.json"), r#"{"hooks": []}"#).unwrap();
    let err = String::from_utf8(setup(&home, "claude", &[]).stderr).unwrap();
    host_shim_testkit::has(&err, "\"hooks\" in ");
    host_shim_testkit::has(&err, "is not a JSON object");
}

fn claude_config_dir_keeps_both_files_in_that_folder() {
    let home = scratch("setup-claude", "config-dir");
    let config_dir = home.join("elsewhere");
    let output = host_shim_testkit::command::in_home(&home)
        .args(["setup", "claude"])
        .env("CLAUDE_CONFIG_DIR", &config_dir)
        .output()
        .unwrap();
    ok(&output);
    assert!(config_dir.join(".claude.json").exists());
    assert!(config_dir.join("settings.json").exists());
    assert!(!home.join(".claude.json").exists());
    assert_eq!(
        json(&config_dir.join(".claude.json"))["mcpServers"]["session-tools"]["args"][2],
        config_dir.join("projects").to_string_lossy().as_ref()
    );
}

host_shim_testkit::tests![
    a_fresh_home_gets_the_server_hooks_and_permission_once,
    a_persons_files_keep_everything_else_and_come_back_byte_for_byte,
    a_moved_binary_replaces_its_old_entries_in_place,
    a_dry_run_prints_the_diff_and_writes_nothing,
    a_broken_file_is_named_and_nothing_is_written,
    claude_config_dir_keeps_both_files_in_that_folder,
];
