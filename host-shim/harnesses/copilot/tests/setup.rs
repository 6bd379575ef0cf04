//! `host-shim setup copilot` on scratch homes: what it writes, that a second run changes
//! nothing, that `--remove` gives the person's files back byte for byte, that the dry
//! run writes nothing, and that a broken file stops it before anything is written.
//! (The real Copilot CLI running with what it writes: `suite/suite.py`.)

use host_shim_testkit::command::{
    again_then_removed, binary, json, ok, read, scratch, set_up_over, setup,
};

fn copilot_gets_its_server_and_hooks_once_keeps_the_rest_and_gives_them_back() {
    let home = scratch("setup-copilot", "copilot");
    let config = home.join(".copilot/mcp-config.json");
    // As a person's own server reads, two-space JSON.
    let mine = "{\n  \"mcpServers\": {\n    \"mine\": {\n      \"type\": \"local\",\n      \"command\": \"my-server\",\n      \"args\": [],\n      \"tools\": [\n        \"*\"\n      ]\n    }\n  }\n}\n";
    let (_, before) = set_up_over(&home, "copilot", &config, mine);
    let servers = &json(&config)["mcpServers"];
    assert_eq!(servers["mine"]["command"], "my-server");
    let ours = &servers["session-tools"];
    assert_eq!(ours["type"], "local");
    assert_eq!(ours["command"], binary());
    assert_eq!(ours["tools"], serde_json::json!(["*"]));
    let args = ours["args"].as_array().unwrap();
    assert_eq!(args[0], "mcp");
    assert!(
        args.windows(2).any(|w| w[0] == "--copilot-home"
            && w[1] == home.join(".copilot").to_string_lossy().as_ref()),
        "{args:?}"
    );
    let hooks = json(&home.join(".copilot/hooks/session-tools.json"));
    assert_eq!(hooks["version"], 1);
    for event in [
        "sessionStart",
        "userPromptSubmitted",
        "preMcpToolCall",
        "postToolUse",
        "agentStop",
    ] {
        let bash = hooks["hooks"][event][0]["bash"].as_str().unwrap();
        assert!(bash.ends_with(" copilot-hook"), "{event}: {bash}");
    }
    // Before each tool, the pre-write hook with the server's flags (it reads the
    // sessions the server reads).
    let write_hook = hooks["hooks"]["preToolUse"][0]["bash"].as_str().unwrap();
    let flags: Vec<&str> = args[1..].iter().map(|a| a.as_str().unwrap()).collect();
    host_shim_testkit::has(
        write_hook,
        &format!(" copilot-write-hook {}", flags.join(" ")),
    );
    // An earlier setup's hooks file (no preMcpToolCall, no preToolUse) is setup's own:
    // brought up to this version's.
    let hooks_path = home.join(".copilot/hooks/session-tools.json");
    let mut earlier = hooks.clone();
    for event in ["preMcpToolCall", "preToolUse"] {
        earlier["hooks"].as_object_mut().unwrap().remove(event);
    }
    std::fs::write(&hooks_path, serde_json::to_string_pretty(&earlier).unwrap()).unwrap();
    ok(&setup(&home, "copilot", &[]));
    assert_eq!(json(&hooks_path), hooks);
    // Again: nothing changes; removed: the person's files as they were, byte for byte, file for file.
    again_then_removed(&home, "copilot", &before);
    assert!(!home.join(".copilot/hooks").exists());
    // A hooks file of that name that is not setup's is named and left alone.
    let other = home.join(".copilot/hooks/session-tools.json");
    host_shim_testkit::command::put(&other, "{\"version\": 1, \"hooks\": {}}\n");
    let said = host_shim_testkit::command::failed(&setup(&home, "copilot", &[]));
    host_shim_testkit::has(&said, "is not setup's hooks file");
    assert_eq!(read(&other), "{\"version\": 1, \"hooks\": {}}\n");
    assert_eq!(read(&config), mine);
}

host_shim_testkit::tests![
    copilot_gets_its_server_and_hooks_once_keeps_the_rest_and_gives_them_back,
];
