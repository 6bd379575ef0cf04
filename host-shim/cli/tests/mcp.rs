//! `host-shim mcp` at the wire: JSON-RPC lines in, lines out. What the official client
//! cannot send (lines that are not JSON, requests that are not requests) is sent here;
//! the client-side checks are `tests/mcp/client_test.py`, on the official Python SDK.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::time::{Duration, Instant};

mod common;

fn corpus() -> String {
    common::harness_corpus().to_string_lossy().into_owned()
}

/// Sends `lines` (after the handshake), closes stdin, and returns every response by
/// id (a response with no id under `null`) and the exit status.
fn exchange(extra: &[&str], lines: &[String]) -> (Vec<Value>, std::process::ExitStatus) {
    exchange_over(&["--corpus", &corpus()], extra, &[], lines)
}

/// [`exchange`] with a server over the store `source` names, its environment given
/// `env` as a client would.
fn exchange_over(
    source: &[&str],
    extra: &[&str],
    env: &[(&str, &str)],
    lines: &[String],
) -> (Vec<Value>, std::process::ExitStatus) {
    let (mut child, stdin) = started(source, extra, env, lines);
    let expected = 1 + lines.len();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let mut responses = Vec::new();
    for line in stdout.lines() {
        responses.push(serde_json::from_str::<Value>(&line.unwrap()).unwrap());
        if responses.len() == expected {
            break;
        }
    }
    // The client closes stdin: the server ends, cleanly.
    drop(stdin);
    (responses, ended_within(&mut child, Duration::from_secs(10)))
}

/// A server started and given the handshake, then `lines`; its stdin still open.
fn started(
    source: &[&str],
    extra: &[&str],
    env: &[(&str, &str)],
    lines: &[String],
) -> (std::process::Child, std::process::ChildStdin) {
    let scratch = std::env::temp_dir().join(format!("host-shim-mcp-{}", std::process::id()));
    let mut child = common::host_shim()
        .arg("mcp")
        .args(source)
        .args(extra)
        .env("XDG_CACHE_HOME", scratch)
        .env_remove("CLAUDE_CODE_SESSION_ID")
        .env_remove("COPILOT_AGENT_SESSION_ID")
        .env_remove("GEMINI_CLI")
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("host-shim runs");
    let mut stdin = child.stdin.take().unwrap();
    let handshake = [
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "wire-test", "version": "1"}}})
        .to_string(),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
    ];
    for line in handshake.iter().chain(lines) {
        writeln!(stdin, "{line}").unwrap();
    }
    (child, stdin)
}

/// How the server ended, which it must within `limit` (its stdin is closed).
fn ended_within(child: &mut std::process::Child, limit: Duration) -> std::process::ExitStatus {
    let closed = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(
            closed.elapsed() < limit,
            "the server still runs {limit:?} after its client closed stdin"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn by_id(responses: &[Value], id: Value) -> &Value {
    responses
        .iter()
        .find(|r| r["id"] == id)
        .unwrap_or_else(|| panic!("no response with id {id}: {responses:#?}"))
}

#[test]
fn malformed_lines_get_json_rpc_errors_and_the_next_request_is_served() {
    let lines = [
        "this is not json".to_string(),
        json!({"id": 8, "hello": 1}).to_string(),
        json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"nope": 1}})
            .to_string(),
        json!({"jsonrpc": "2.0", "id": 10, "method": "tools/frobnicate"}).to_string(),
        json!({"jsonrpc": "2.0", "id": 11, "method": "tools/call",
               "params": {"name": "sessions_kill", "arguments": {}}})
        .to_string(),
        json!({"jsonrpc": "2.0", "id": 12, "method": "tools/list"}).to_string(),
    ];
    let (responses, status) = exchange(&[], &lines);
    assert!(status.success(), "{status}");
    // The revision the client asked for is the one answered.
    assert_eq!(
        by_id(&responses, json!(0))["result"]["protocolVersion"],
        "2025-06-18"
    );
    assert_eq!(by_id(&responses, Value::Null)["error"]["code"], -32700);
    assert_eq!(by_id(&responses, json!(8))["error"]["code"], -32600);
    assert_eq!(by_id(&responses, json!(9))["error"]["code"], -32602);
    assert_eq!(by_id(&responses, json!(10))["error"]["code"], -32601);
    let unknown = &by_id(&responses, json!(11))["error"];
    assert_eq!(unknown["code"], -32602);
    assert!(
        unknown["message"]
            .as_str()
            .unwrap()
            .starts_with("unknown tool \"sessions_kill\": this server's tools are sessions_list"),
        "{unknown}"
    );
    let tools = by_id(&responses, json!(12))["result"]["tools"]
        .as_array()
        .unwrap();
    assert_eq!(tools.len(), 3);
    // The plugin's MCP annotations, passed on: a client that refuses tools without
    // readOnlyHint under a no-approval policy can run the two readers.
    assert_eq!(
        tools[1]["annotations"],
        json!({"title": "Read a session", "readOnlyHint": true, "openWorldHint": false})
    );
    assert_eq!(
        tools[2]["annotations"],
        json!({"title": "Send to a session", "readOnlyHint": false, "destructiveHint": false,
               "idempotentHint": true, "openWorldHint": false})
    );
}

#[test]
fn a_retry_under_a_new_tool_use_id_is_a_repeat_over_the_corpus_too() {
    // A model retrying an interrupted send gets a new tool-use id; the same words
    // from the same caller to the same target within ten minutes deliver once
    // (SPEC, "Repeats a host should catch"), in every store, the corpus included.
    let deliveries =
        std::env::temp_dir().join(format!("host-shim-mcp-repeat-{}.json", std::process::id()));
    let _ = std::fs::remove_file(&deliveries);
    let send = |id: u32, tool_use: &str, message: &str| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "sessions_send",
            "arguments": {"session_id": "s-live", "message": message},
            "_meta": {"claudecode/toolUseId": tool_use}}})
        .to_string()
    };
    let lines = [
        send(1, "toolu_01", "Ship it."),
        send(2, "toolu_02", "Ship it."),
        send(3, "toolu_03", "Ship it now."),
    ];
    let (responses, status) = exchange(
        &[
            "--caller",
            "s-me",
            "--deliveries",
            deliveries.to_str().unwrap(),
        ],
        &lines,
    );
    assert!(status.success(), "{status}");
    let text = |id: u32| {
        by_id(&responses, json!(id))["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(text(1).starts_with("accepted for s-live"), "{}", text(1));
    assert_eq!(
        text(1),
        text(2),
        "the retry reads the first acceptance again"
    );
    // One line per accepted delivery (calls run at once: in any order).
    let recorded: Vec<Value> = std::fs::read_to_string(&deliveries)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(recorded.len(), 2, "{recorded:#?}");
    let with = |words: &str| {
        (recorded.iter())
            .filter(|d| {
                d["body"]
                    .as_str()
                    .unwrap()
                    .contains(&format!("\n{words}\n"))
            })
            .count()
    };
    assert_eq!((with("Ship it."), with("Ship it now.")), (1, 1));
    let _ = std::fs::remove_file(&deliveries);
}

#[test]
fn a_host_failure_is_an_error_result_with_its_one_line() {
    // A cap the catalog (1,092 bytes) fits under and this read (16 KB) does not.
    let lines = [json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                        "params": {"name": "sessions_read", "arguments": {
                            "session_id": "s-cold", "max_messages": 100,
                            "include_injected": true, "include_system": true}}})
    .to_string()];
    let (responses, status) = exchange(&["--output-bytes", "2000"], &lines);
    assert!(status.success());
    let result = &by_id(&responses, json!(1))["result"];
    assert_eq!(result["isError"], true);
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("the plugin returned ")
            && text.ends_with("bytes of text, past the output limit of 2000 bytes"),
        "{text}"
    );
}

#[test]
fn invalid_settings_stop_the_server_before_it_serves() {
    let settings = std::env::temp_dir().join(format!("mcp-bad-{}.json", std::process::id()));
    std::fs::write(&settings, r#"{"maxListResults": "ten"}"#).unwrap();
    let output = common::host_shim()
        .args(["mcp", "--corpus", &corpus(), "--settings"])
        .arg(&settings)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!output.status.success());
    let err = String::from_utf8(output.stderr).unwrap();
    assert!(
        err.contains("maxListResults") && err.contains(settings.to_str().unwrap()),
        "{err}"
    );
    std::fs::remove_file(settings).unwrap();
}

#[test]
fn codex_names_the_calling_thread_and_the_call_in_meta() {
    // Codex starts one server for its process and names the calling thread and the
    // call in each tools/call's _meta; the server needs no --caller.
    const GARDEN: &str = "01a23b72-a3cd-71d1-b3d0-19989707ce0b";
    const ORCHARD: &str = "01a23b72-ab02-7282-ba7a-193ba89b0a05";
    let home = common::codex_home();
    let state = std::env::temp_dir().join(format!("host-shim-mcp-codex-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&state);
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
    let text = |id: u32| {
        by_id(&responses, json!(id))["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(
        text(1).contains(&format!("- {GARDEN} [cold, top-level]")),
        "{}",
        text(1)
    );
    assert!(
        text(1).contains("| this session\n  Plan the vegetable garden beds"),
        "{}",
        text(1)
    );
    assert!(
        text(2).starts_with(&format!("accepted for {ORCHARD} | mode=queue")),
        "{}",
        text(2)
    );
    assert_eq!(text(2), text(3));
    let spooled = std::fs::read_dir(state.join("inbox").join(ORCHARD))
        .unwrap()
        .count();
    assert_eq!(spooled, 1);
}

#[test]
fn under_copilot_each_call_is_the_session_its_hooks_stamp_and_an_unstamped_one_is_refused() {
    // Copilot CLI starts one server per process (its session in the environment) and
    // names no session per call: our preMcpToolCall hook stamps each call in _meta.
    const TESTS: &str = "159ea5c6-0c55-457c-9992-d392532b57f5";
    const HANDED: &str = "62fa32e6-2bc3-45e5-b86d-4ea55781df68";
    const DELEGATED: &str = "a140dcba-cb99-4839-8fa6-364e62e4f5cf";
    const LISTER: &str = "f37128e5-b82e-4157-95cf-8bdd8023bd75";
    let dir = common::scratch("mcp", "copilot");
    std::fs::create_dir_all(dir.join("copilot")).unwrap();
    std::os::unix::fs::symlink(
        common::copilot_sessions(),
        dir.join("copilot/session-state"),
    )
    .unwrap();
    // Copilot's session store, which lists the subagent.
    let sql =
        std::fs::read_to_string(common::copilot_sessions().join("../session-store.sql")).unwrap();
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
        let out = common::output_with_stdin(
            common::host_shim().args(["copilot-hook", "--state-dir", &state_dir]),
            &input.to_string(),
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice::<Value>(&out.stdout).unwrap()["metaToUse"].clone()
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
    let result = |id: u32| by_id(&responses, json!(id))["result"].clone();
    let text = |id: u32| {
        result(id)["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(result(1)["isError"], true);
    assert!(
        text(1).contains("cannot tell which session made this call")
            && text(1).contains("Run `host-shim setup copilot`"),
        "{}",
        text(1)
    );
    assert!(
        text(2).contains(&format!("- {HANDED} [cold, top-level]")),
        "{}",
        text(2)
    );
    let own_row = text(2)
        .lines()
        .find(|l| l.contains(HANDED))
        .unwrap()
        .to_string();
    assert!(own_row.ends_with("| this session"), "{own_row}");
    assert_eq!(result(3)["isError"], true);
    assert!(
        text(3).contains("not made by the harness's hook for this call"),
        "{}",
        text(3)
    );
    assert!(
        text(4).starts_with(&format!("accepted for {TESTS}")),
        "{}",
        text(4)
    );
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
    assert!(
        frame.contains(&format!("from-session: {HANDED}")),
        "{frame}"
    );
}

#[test]
fn under_gemini_each_call_is_the_session_its_hook_stamped_into_the_arguments() {
    // Gemini CLI names no session to its servers (only GEMINI_CLI=1): our BeforeTool
    // hook adds the session's stamp to the arguments, which the server takes out.
    const TESTS: &str = "9f56404f-5e45-496b-a276-a5a915d6bfd0";
    const HANDED: &str = "47f70645-fcc5-406b-bc9e-eee64e7fde62";
    let dir = common::scratch("mcp", "gemini");
    let state = dir.join("state");
    let state_dir = state.to_str().unwrap().to_string();
    // What the hook gives Gemini for a call, as Gemini gives it the call.
    let stamped = |session: &str, tool: &str, arguments: Value| -> Value {
        let input = json!({"session_id": session, "hook_event_name": "BeforeTool",
            "transcript_path": "/nowhere.jsonl", "cwd": "/w",
            "tool_name": format!("mcp_session-tools_{tool}"), "tool_input": arguments,
            "mcp_context": {"server_name": "session-tools", "tool_name": tool}});
        let out = common::output_with_stdin(
            common::host_shim().args(["gemini-hook", "--state-dir", &state_dir]),
            &input.to_string(),
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice::<Value>(&out.stdout).unwrap()["hookSpecificOutput"]["tool_input"]
            .clone()
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
    let home = common::gemini_home();
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
    let result = |id: u32| by_id(&responses, json!(id))["result"].clone();
    let text = |id: u32| {
        result(id)["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_string()
    };
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
    assert!(
        text(1).contains("Run `host-shim setup gemini`"),
        "{}",
        text(1)
    );
    let own_row = text(2)
        .lines()
        .find(|l| l.contains(HANDED))
        .unwrap()
        .to_string();
    assert!(own_row.ends_with("| this session"), "{}", text(2));
    assert!(text(2).contains(TESTS), "{}", text(2));
    assert_eq!(result(3)["isError"], true);
    assert!(
        text(3).contains("not made by the harness's hook for this call"),
        "{}",
        text(3)
    );
}

#[test]
fn a_lone_surrogate_in_a_call_is_refused_naming_the_argument_never_altered() {
    // What JavaScript's JSON.stringify writes for a string with a lone surrogate: the
    // call is answered under its own id, the plugin refusing the argument by name as
    // `host-shim call` does, never as a parse error with no id a client would wait on
    // forever, and never delivered with U+FFFD in its place.
    let call = |id: u32, escape: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"sessions_read","arguments":{{"session_id":"{escape}bad"}}}}}}"#
        )
    };
    let lines = [
        call(1, r"\ud800"),
        call(2, r"\udfff"),
        // An escaped backslash then `ud800` is no escape, and a pair stays a pair.
        call(3, r"\\ud800"),
        call(4, r"\ud83d\ude00"),
        // A message is refused as written, never sent with U+FFFD in its place.
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"sessions_send","arguments":{"session_id":"s-other","message":"MCP-SURR-\ud800-MARK"}}}"#.to_string(),
    ];
    let (responses, status) = exchange(&["--caller", "s-me"], &lines);
    assert!(status.success());
    for id in [1, 2] {
        let answer = by_id(&responses, json!(id));
        let text = answer["result"]["content"][0]["text"].as_str().unwrap();
        assert_eq!(answer["result"]["isError"], true, "{answer}");
        assert_eq!(
            text,
            "invalid arguments: session_id is not Unicode text (a \\uD800–\\uDFFF escape, \
             half of a UTF-16 surrogate pair, stands alone in it); write it again with whole \
             characters"
        );
    }
    let sent = &by_id(&responses, json!(5))["result"];
    assert_eq!(sent["isError"], true, "{sent}");
    assert!(
        (sent["content"][0]["text"].as_str().unwrap())
            .starts_with("invalid arguments: message is not Unicode text"),
        "{sent}"
    );
    // The id as the plugin shows it: a backslash escaped by the id rule, the pair whole.
    for (id, shown) in [(3, r#""\\ud800bad""#), (4, "\"\u{1F600}bad\"")] {
        let text = by_id(&responses, json!(id))["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(
            text.starts_with("sessions_read refused (not-found)") && text.contains(shown),
            "{text}"
        );
    }
}

#[test]
fn the_server_ends_soon_after_its_client_closes_stdin_whatever_still_runs() {
    // A send awaiting its reply for a minute is in flight when the client goes: the
    // server does not stay behind it (it would hold the harness's files open).
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "sessions_send", "arguments": {"session_id": "s-live",
        "message": "are you there?", "await_reply_seconds": 60}}});
    let (mut child, stdin) = started(
        &["--corpus", &corpus()],
        &["--caller", "s-me"],
        &[],
        &[call.to_string()],
    );
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut initialized = String::new();
    stdout.read_line(&mut initialized).unwrap();
    std::thread::sleep(Duration::from_millis(500));
    drop(stdin);
    let status = ended_within(&mut child, Duration::from_secs(15));
    assert!(status.success(), "{status}");
}
