//! `host-shim mcp` at the wire as Gemini CLI's client speaks to it: how it names the
//! calling session and the call.

use host_shim_testkit::mcp::exchange_over;
use serde_json::{Value, json};
use std::path::PathBuf;

fn under_gemini_each_call_is_the_session_its_hook_stamped_into_the_arguments() {
    // Gemini CLI names no session to its servers (only GEMINI_CLI=1): our BeforeTool
    // hook adds the session's stamp to the arguments, which the server takes out.
    const TESTS: &str = "9f56404f-5e45-496b-a276-a5a915d6bfd0";
    const HANDED: &str = "47f70645-fcc5-406b-bc9e-eee64e7fde62";
    let dir = host_shim_testkit::command::scratch("mcp", "gemini");
    let state = dir.join("state");
    let state_dir = state.to_str().unwrap().to_string();
    // What the hook gives Gemini for a call, as Gemini gives it the call.
    let stamped = |session: &str, tool: &str, arguments: Value| -> Value {
        let input = json!({"session_id": session, "hook_event_name": "BeforeTool",
            "transcript_path": "/nowhere.jsonl", "cwd": "/w",
            "tool_name": format!("mcp_session-tools_{tool}"), "tool_input": arguments,
            "mcp_context": {"server_name": "session-tools", "tool_name": tool}});
        let answer = host_shim_testkit::command::hook_answer("gemini-hook", &state_dir, &input);
        answer["hookSpecificOutput"]["tool_input"].clone()
    };
    let call = |id: u32, tool: &str, arguments: Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": tool, "arguments": arguments, "_meta": {"progressToken": "p"}}})
        .to_string()
    };
    let list = json!({"scope": "all"});
    let mut other = stamped(HANDED, "sessions_list", list.clone());
    other["limit"] = json!(1);
    let lines = [
        json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list"}).to_string(),
        call(1, "sessions_list", list.clone()),
        call(
            2,
            "sessions_list",
            stamped(HANDED, "sessions_list", list.clone()),
        ),
        // A stamp made for other arguments does not hold.
        call(3, "sessions_list", other),
    ];
    let home = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/0.61.0");
    let (responses, status) = exchange_over(
        &[
            "--gemini-home",
            home.to_str().unwrap(),
            "--state-dir",
            &state_dir,
        ],
        &[],
        &[("GEMINI_CLI", "1")],
        &lines,
    );
    assert!(status.success(), "{status}");
    let result = |id: u32| host_shim_testkit::mcp::result_of(&responses, id);
    let text = |id: u32| host_shim_testkit::mcp::text_of(&responses, id);
    // Gemini checks the arguments its hook rewrote against the schema: the stamp is in
    // it, for the hook to set and the model to leave alone.
    for tool in result(9)["tools"].as_array().unwrap() {
        let stamp = &tool["inputSchema"]["properties"]["session_tools_stamp"];
        assert!(
            stamp["description"]
                .as_str()
                .unwrap()
                .contains("never write it"),
            "{tool}"
        );
    }
    assert_eq!(result(1)["isError"], true);
    host_shim_testkit::has(&text(1), "Run `host-shim setup gemini`");
    let own_row = text(2)
        .lines()
        .find(|l| l.contains(HANDED))
        .unwrap()
        .to_string();
    assert!(own_row.ends_with("| this session"), "{}", text(2));
    assert!(text(2).contains(TESTS), "{}", text(2));
    assert_eq!(result(3)["isError"], true);
    host_shim_testkit::has(&text(3), "not made by the harness's hook for this call");
}

host_shim_testkit::tests![
    under_gemini_each_call_is_the_session_its_hook_stamped_into_the_arguments,
];
