//! `host-shim mcp` at the wire as Copilot CLI's client speaks to it: how it names the
//! calling session and the call.

use host_shim_testkit::mcp::exchange_over;
use serde_json::{Value, json};
use std::path::PathBuf;

fn under_copilot_each_call_is_the_session_its_hooks_stamp_and_an_unstamped_one_is_refused() {
    // Copilot CLI starts one server per process (its session in the environment) and
    // names no session per call: our preMcpToolCall hook stamps each call in _meta.
    const TESTS: &str = "159ea5c6-0c55-457c-9992-d392532b57f5";
    const HANDED: &str = "62fa32e6-2bc3-45e5-b86d-4ea55781df68";
    const DELEGATED: &str = "a140dcba-cb99-4839-8fa6-364e62e4f5cf";
    const LISTER: &str = "f37128e5-b82e-4157-95cf-8bdd8023bd75";
    let dir = host_shim_testkit::command::scratch("mcp", "copilot");
    std::fs::create_dir_all(dir.join("copilot")).unwrap();
    std::os::unix::fs::symlink(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/1.0.102/session-state"),
        dir.join("copilot/session-state"),
    )
    .unwrap();
    // Copilot's session store, which lists the subagent.
    let sql = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/1.0.102/session-state")
            .join("../session-store.sql"),
    )
    .unwrap();
    (rusqlite::Connection::open(dir.join("copilot/session-store.db")).unwrap())
        .execute_batch(&sql)
        .unwrap();
    let state = dir.join("state");
    let (home, state_dir) = (dir.join("copilot"), state.to_str().unwrap().to_string());
    // What the hook answers Copilot for a call, as Copilot gives it the call.
    let stamp_as = |session: &str,
                    parent: Option<&str>,
                    call: &str,
                    tool: &str,
                    arguments: Value| {
        let mut input = json!({"sessionId": session, "toolCallId": call, "serverName": "session-tools",
            "toolName": tool, "arguments": arguments, "cwd": "/w"});
        if let Some(parent) = parent {
            input["agentId"] = json!(session);
            input["parentAgentId"] = json!(parent);
        }
        host_shim_testkit::command::hook_answer("copilot-hook", &state_dir, &input)["metaToUse"]
            .clone()
    };
    let stamp = |session: &str, call: &str, tool: &str, arguments: Value| {
        stamp_as(session, None, call, tool, arguments)
    };
    let call = |id: u32, tool: &str, arguments: Value, meta: Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": tool, "arguments": arguments, "_meta": meta}})
        .to_string()
    };
    let list = json!({"scope": "all"});
    let send = json!({"session_id": TESTS, "message": "The docs can ship."});
    let lines = [
        // Without a stamp (no key made yet): refused, naming the fix.
        call(
            1,
            "sessions_list",
            list.clone(),
            json!({"progressToken": 1}),
        ),
        // Stamped for HANDED: the call is HANDED's, though the environment names TESTS.
        call(
            2,
            "sessions_list",
            list.clone(),
            stamp(HANDED, "call_1", "sessions_list", list.clone()),
        ),
        // A stamp made for other arguments does not hold.
        call(
            3,
            "sessions_send",
            send.clone(),
            stamp(HANDED, "call_2", "sessions_send", json!({})),
        ),
        // The stamp's call id keys the delivery: Copilot's retry of it is one message.
        call(
            4,
            "sessions_send",
            send.clone(),
            stamp(HANDED, "call_3", "sessions_send", send.clone()),
        ),
        call(
            5,
            "sessions_send",
            send.clone(),
            stamp(HANDED, "call_3", "sessions_send", send.clone()),
        ), // A subagent's call (same server, same environment) is the subagent's.
        call(
            6,
            "sessions_list",
            list.clone(),
            stamp_as(
                LISTER,
                Some(DELEGATED),
                "call_4",
                "sessions_list",
                list.clone(),
            ),
        ),
    ];
    let (responses, status) = exchange_over(
        &[
            "--copilot-home",
            home.to_str().unwrap(),
            "--state-dir",
            &state_dir,
        ],
        &[],
        &[("COPILOT_AGENT_SESSION_ID", TESTS)],
        &lines,
    );
    assert!(status.success(), "{status}");
    let result = |id: u32| host_shim_testkit::mcp::result_of(&responses, id);
    let text = |id: u32| host_shim_testkit::mcp::text_of(&responses, id);
    assert_eq!(result(1)["isError"], true);
    assert!(
        text(1).contains("cannot tell which session made this call")
            && text(1).contains("Run `host-shim setup copilot`"),
        "{}",
        text(1)
    );
    host_shim_testkit::has(&text(2), &format!("- {HANDED} [cold, top-level]"));
    let own_row = text(2)
        .lines()
        .find(|l| l.contains(HANDED))
        .unwrap()
        .to_string();
    assert!(own_row.ends_with("| this session"), "{own_row}");
    assert_eq!(result(3)["isError"], true);
    host_shim_testkit::has(&text(3), "not made by the harness's hook for this call");
    host_shim_testkit::begins(&text(4), &format!("accepted for {TESTS}"));
    assert_eq!(text(4), text(5));
    let subagent_row = text(6)
        .lines()
        .find(|l| l.contains(LISTER))
        .unwrap()
        .to_string();
    assert!(
        subagent_row.contains("[cold, subagent]") && subagent_row.ends_with("| this session"),
        "{}",
        text(6)
    );
    let spooled = std::fs::read_dir(state.join("inbox").join(TESTS))
        .unwrap()
        .count();
    assert_eq!(spooled, 1);
    let frame = std::fs::read_to_string(
        std::fs::read_dir(state.join("inbox").join(TESTS))
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path(),
    )
    .unwrap();
    host_shim_testkit::has(&frame, &format!("from-session: {HANDED}"));
}

host_shim_testkit::tests![
    under_copilot_each_call_is_the_session_its_hooks_stamp_and_an_unstamped_one_is_refused,
];
