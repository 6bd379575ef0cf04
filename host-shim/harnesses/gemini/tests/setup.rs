//! `host-shim setup gemini` on scratch homes: what it writes, that a second run changes
//! nothing, that `--remove` gives the person's files back byte for byte, that the dry
//! run writes nothing, and that a broken file stops it before anything is written.
//! (The real Gemini CLI running with what it writes: `suite/suite.py`.)

use host_shim_testkit::command::{again_then_removed, binary, json, read, scratch, set_up_over};

fn gemini_gets_its_trusted_server_and_hooks_once_keeps_the_rest_and_gives_them_back() {
    let home = scratch("setup-gemini", "gemini");
    let settings = home.join(".gemini/settings.json");
    // As a person's settings read: their auth, a server and a hook of their own.
    let mine = "{\n  \"security\": {\n    \"auth\": {\n      \"selectedType\": \"gemini-api-key\"\n    }\n  },\n  \"mcpServers\": {\n    \"mine\": {\n      \"command\": \"my-server\"\n    }\n  },\n  \"hooks\": {\n    \"BeforeTool\": [\n      {\n        \"matcher\": \"run_shell_command\",\n        \"hooks\": [\n          {\n            \"type\": \"command\",\n            \"command\": \"my-check\"\n          }\n        ]\n      }\n    ]\n  }\n}\n";
    let (said, before) = set_up_over(&home, "gemini", &settings, mine);
    host_shim_testkit::has(&said, "GEMINI_CLI_TRUST_WORKSPACE=true");
    let written = json(&settings);
    assert_eq!(
        written["security"]["auth"]["selectedType"],
        "gemini-api-key"
    );
    assert_eq!(written["mcpServers"]["mine"]["command"], "my-server");
    let ours = &written["mcpServers"]["session-tools"];
    assert_eq!(ours["command"], binary());
    assert_eq!(ours["trust"], true);
    let args = ours["args"].as_array().unwrap();
    assert!(
        args.windows(2)
            .any(|w| w[0] == "--gemini-home"
                && w[1] == home.join(".gemini").to_string_lossy().as_ref()),
        "{args:?}"
    );
    let hooks = &written["hooks"];
    assert_eq!(hooks["BeforeTool"][0]["hooks"][0]["command"], "my-check");
    assert_eq!(hooks["BeforeTool"][1]["matcher"], "mcp_session-tools_.*");
    for event in [
        "SessionStart",
        "BeforeAgent",
        "BeforeTool",
        "AfterTool",
        "AfterAgent",
    ] {
        let groups = hooks[event].as_array().unwrap();
        let ours = groups
            .iter()
            .filter_map(|g| g["hooks"][0]["command"].as_str());
        assert!(
            ours.into_iter()
                .any(|command| command.contains(" gemini-hook")),
            "{event}: {groups:?}"
        );
    }
    // Before the file-writing tools, the pre-write hook, reading the server's sessions.
    let write_hook = &hooks["BeforeTool"][2];
    assert_eq!(write_hook["matcher"], "write_file|replace");
    let command = write_hook["hooks"][0]["command"].as_str().unwrap();
    host_shim_testkit::has(command, " gemini-write-hook --gemini-home ");
    // Again: nothing changes; removed: the person's file as it was, byte for byte.
    again_then_removed(&home, "gemini", &before);
    assert_eq!(read(&settings), mine);
}

host_shim_testkit::tests![
    gemini_gets_its_trusted_server_and_hooks_once_keeps_the_rest_and_gives_them_back,
];
