//! `host-shim setup openclaw` on scratch homes: what it writes, that a second run changes
//! nothing, that `--remove` gives the person's files back byte for byte, that the dry
//! run writes nothing, and that a broken file stops it before anything is written.
//! (The real OpenClaw running with what it writes: `suite/suite.py`.)

use host_shim_testkit::command::{
    again_then_removed, binary, json, ok, read, scratch, set_up_over, setup,
};

fn openclaw_gets_its_plugin_and_entry_once_keeps_the_rest_and_gives_them_back() {
    let home = scratch("setup-openclaw", "openclaw");
    // Before OpenClaw's own onboarding wrote its config: refused, nothing written.
    let refused = setup(&home, "openclaw", &[]);
    assert!(!refused.status.success());
    let said = String::from_utf8_lossy(&refused.stderr);
    host_shim_testkit::has(&said, "run `openclaw onboard`");
    assert!(!home.join(".openclaw").exists());
    let config = home.join(".openclaw/openclaw.json");
    // As a person's config reads: a model and a plugin of their own.
    let mine = "{\n  \"agents\": {\n    \"defaults\": {\n      \"model\": {\n        \"primary\": \"openai/gpt-5\"\n      }\n    }\n  },\n  \"plugins\": {\n    \"entries\": {\n      \"mine\": {\n        \"enabled\": true\n      }\n    }\n  }\n}\n";
    let (said, before) = set_up_over(&home, "openclaw", &config, mine);
    host_shim_testkit::has(&said, "session-tools__sessions_list");
    let written = json(&config);
    assert_eq!(
        written["agents"]["defaults"]["model"]["primary"],
        "openai/gpt-5"
    );
    assert_eq!(written["plugins"]["entries"]["mine"]["enabled"], true);
    let ours = &written["plugins"]["entries"]["session-tools"];
    assert_eq!(ours["enabled"], true);
    assert_eq!(ours["hooks"]["allowConversationAccess"], true);
    assert_eq!(ours["config"]["command"], binary());
    let args = ours["config"]["args"].as_array().unwrap();
    assert_eq!(args[0], "mcp");
    assert!(
        args.windows(2).any(|w| w[0] == "--openclaw-state"
            && w[1] == home.join(".openclaw").to_string_lossy().as_ref()),
        "{args:?}"
    );
    // The plugin package, where `openclaw plugins install <folder>` would copy it.
    let plugin = home.join(".openclaw/extensions/session-tools");
    let manifest = json(&plugin.join("openclaw.plugin.json"));
    assert_eq!(manifest["id"], "session-tools");
    // OpenClaw registers only the tools a manifest declares: every tool the plugin
    // offers, under the name the plugin registers it by.
    let offered: Vec<String> = (host_shim_profile::checks::TOOLS.iter())
        .map(|tool| format!("session-tools__{tool}"))
        .collect();
    assert_eq!(manifest["contracts"]["tools"], serde_json::json!(offered));
    assert_eq!(
        json(&plugin.join("package.json"))["openclaw"]["extensions"][0],
        "./index.js"
    );
    let index = read(&plugin.join("index.js"));
    assert!(index.starts_with("// session-tools for OpenClaw:"));
    // With what every session-tools plugin shares (its child, the write check) in place
    // of its mark.
    assert!(index.contains(host_shim_profile::companion::PLUGIN_JS));
    assert!(!index.contains(host_shim_profile::companion::PLUGIN_JS_MARK));
    // With a wake command: in the command the plugin runs, which takes it.
    let wake = "openclaw agent --session-id {id} --message 'A message is waiting.'";
    ok(&setup(
        &home,
        "openclaw",
        &["--openclaw-wake-command", wake],
    ));
    let host = json(&config)["plugins"]["entries"]["session-tools"]["config"].clone();
    let args: Vec<&str> = (host["args"].as_array().unwrap().iter())
        .map(|a| a.as_str().unwrap())
        .collect();
    assert!(
        args.windows(2)
            .any(|w| w == ["--openclaw-wake-command", wake]),
        "{args:?}"
    );
    let started = std::process::Command::new(host["command"].as_str().unwrap())
        .args(&args)
        .env(host_shim_testkit::command::AS_COMMAND, "1")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&started.stderr);
    host_shim_testkit::has(&said, "4 tools over stdio");
    ok(&setup(&home, "openclaw", &[]));
    // Again: nothing changes; removed: the person's files as they were, byte for byte, and no plugin folder.
    again_then_removed(&home, "openclaw", &before);
    assert_eq!(read(&config), mine);
    assert!(!plugin.exists());
    // A plugin of that name that is not setup's is named and left alone.
    std::fs::create_dir_all(&plugin).unwrap();
    std::fs::write(plugin.join("index.js"), "export default {};\n").unwrap();
    let said = host_shim_testkit::command::failed(&setup(&home, "openclaw", &[]));
    host_shim_testkit::has(&said, "is not setup's");
    assert_eq!(read(&plugin.join("index.js")), "export default {};\n");
    assert_eq!(read(&config), mine);
}

host_shim_testkit::tests![
    openclaw_gets_its_plugin_and_entry_once_keeps_the_rest_and_gives_them_back,
];
