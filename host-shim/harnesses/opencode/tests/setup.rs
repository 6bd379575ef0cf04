//! `host-shim setup opencode` on scratch homes: what it writes, that a second run changes
//! nothing, that `--remove` gives the person's files back byte for byte, that the dry
//! run writes nothing, and that a broken file stops it before anything is written.
//! (The real OpenCode running with what it writes: `suite/suite.py`.)

use host_shim_testkit::command::{binary, files, json, ok, read, scratch, setup};
use std::path::Path;

/// The command and arguments the OpenCode plugin file runs.
fn plugin_host(home: &Path) -> serde_json::Value {
    let file = read(&home.join(".config/opencode/plugin/session-tools.js"));
    let line = file
        .lines()
        .find_map(|line| line.strip_prefix("const HOST = "))
        .expect("the plugin file names its host");
    serde_json::from_str(line.trim_end_matches(';')).unwrap()
}

fn opencode_gets_its_plugin_file_once_and_gives_it_back() {
    let home = scratch("setup-opencode", "opencode");
    let said = ok(&setup(&home, "opencode", &[]));
    host_shim_testkit::has(&said, "OpenCode is set up");
    let db = home.join(".local/share/opencode/opencode.db");
    assert_eq!(
        plugin_host(&home),
        serde_json::json!({"command": binary(), "args": ["mcp", "--opencode-db", db.to_string_lossy()]})
    );
    // With what every session-tools plugin shares (its child, the write check) in place
    // of its mark.
    let plugin = read(&home.join(".config/opencode/plugin/session-tools.js"));
    assert!(plugin.contains(host_shim_profile::companion::PLUGIN_JS));
    assert!(!plugin.contains(host_shim_profile::companion::PLUGIN_JS_MARK));
    let before = files(&home);
    let said = ok(&setup(&home, "opencode", &[]));
    host_shim_testkit::has(&said, "set up already: nothing changed");
    assert_eq!(files(&home), before);
    ok(&setup(&home, "opencode", &["--remove"]));
    assert_eq!(files(&home), vec![]);
    // The plugin folder setup made for the file goes with it; OpenCode's own stays.
    assert!(!home.join(".config/opencode/plugin").exists());
    assert!(home.join(".config/opencode").is_dir());
    // A file of that name that is not setup's is named and left alone.
    let plugin = home.join(".config/opencode/plugin/session-tools.js");
    host_shim_testkit::command::put(&plugin, "export const Mine = async () => ({});\n");
    let said = host_shim_testkit::command::failed(&setup(&home, "opencode", &[]));
    host_shim_testkit::has(&said, "is not setup's file");
    assert_eq!(read(&plugin), "export const Mine = async () => ({});\n");
}

fn setup_links_every_harness_it_finds_into_one_listing() {
    let home = scratch("setup-opencode", "linked");
    std::fs::create_dir_all(home.join(".claude/projects")).unwrap();
    std::fs::create_dir_all(home.join(".codex")).unwrap();
    let db = home.join(".local/share/opencode/opencode.db");
    host_shim_testkit::command::put(&db, "");
    let all = serde_json::json!([
        "mcp",
        "--claude-projects",
        home.join(".claude/projects").to_string_lossy(),
        "--codex-home",
        home.join(".codex").to_string_lossy(),
        "--opencode-db",
        db.to_string_lossy(),
    ]);
    ok(&setup(&home, "opencode", &[]));
    assert_eq!(plugin_host(&home)["args"], all);
    let claude = host_shim_testkit::command::in_home(&home)
        .args(["setup", "claude"])
        .output()
        .unwrap();
    ok(&claude);
    let config = json(&home.join(".claude.json"));
    assert_eq!(config["mcpServers"]["session-tools"]["args"], all);
}

fn opencode_s_wake_command_goes_into_the_plugin_file_checked() {
    let home = scratch("setup-opencode", "opencode-wake");
    let wake = "opencode run --session {id} 'A message is waiting.'";
    ok(&setup(
        &home,
        "opencode",
        &["--opencode-wake-command", wake],
    ));
    let args = plugin_host(&home)["args"].clone();
    let args: Vec<&str> = args
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(args[args.len() - 2..], ["--opencode-wake-command", wake]);
    let bad = setup(
        &home,
        "opencode",
        &["--opencode-wake-command", "opencode run {session}"],
    );
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("is not a placeholder"));
    let other = (host_shim_testkit::command::in_home(&home))
        .args(["setup", "claude", "--opencode-wake-command", wake])
        .output()
        .unwrap();
    assert!(!other.status.success());
    assert!(String::from_utf8_lossy(&other.stderr).contains("is for `host-shim setup opencode`"));
}

host_shim_testkit::tests![
    opencode_gets_its_plugin_file_once_and_gives_it_back,
    setup_links_every_harness_it_finds_into_one_listing,
    opencode_s_wake_command_goes_into_the_plugin_file_checked,
];
