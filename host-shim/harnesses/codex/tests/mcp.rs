//! `host-shim mcp` at the wire as Codex's client speaks to it: how it names the
//! calling session and the call.

use host_shim_testkit::mcp::exchange_over;
use serde_json::json;
use std::path::PathBuf;

fn codex_names_the_calling_thread_and_the_call_in_meta() {
    // Codex starts one server for its process and names the calling thread and the
    // call in each tools/call's _meta; the server needs no --caller.
    const GARDEN: &str = "01a23b72-a3cd-71d1-b3d0-19989707ce0b";
    const ORCHARD: &str = "01a23b72-ab02-7282-ba7a-193ba89b0a05";
    let home = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/0.169.0");
    let state = host_shim_testkit::scratch("mcp-codex", "state");
    let send = |id: u32, call: &str| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "sessions_send",
            "arguments": {"session_id": ORCHARD, "message": "Pears too."},
            "_meta": {"threadId": GARDEN, "sessionId": GARDEN, "callId": call}}})
        .to_string()
    };
    let lines = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "sessions_list", "arguments": {"scope": "all"},
            "_meta": {"threadId": GARDEN, "sessionId": GARDEN, "callId": "call_a"}}})
        .to_string(),
        send(2, "call_b"),
        // Codex retried the call: the same call id delivers once.
        send(3, "call_b"),
    ];
    let (responses, status) = exchange_over(
        &[
            "--codex-home",
            home.to_str().unwrap(),
            "--state-dir",
            state.to_str().unwrap(),
        ],
        &[],
        &[],
        &lines,
    );
    assert!(status.success(), "{status}");
    let text = |id: u32| host_shim_testkit::mcp::text_of(&responses, id);
    host_shim_testkit::has(&text(1), &format!("- {GARDEN} [cold, top-level]"));
    host_shim_testkit::has(&text(1), "| this session\n  Plan the vegetable garden beds");
    host_shim_testkit::begins(&text(2), &format!("accepted for {ORCHARD} | mode=queue"));
    assert_eq!(text(2), text(3));
    let spooled = std::fs::read_dir(state.join("inbox").join(ORCHARD))
        .unwrap()
        .count();
    assert_eq!(spooled, 1);
}

host_shim_testkit::tests![codex_names_the_calling_thread_and_the_call_in_meta,];
