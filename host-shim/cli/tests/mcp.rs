//! `host-shim mcp` at the wire: JSON-RPC lines in, lines out. What the official client
//! cannot send (lines that are not JSON, requests that are not requests) is sent here;
//! the client-side checks are `tests/mcp/client_test.py`, on the official Python SDK.

use host_shim_testkit::mcp::{by_id, ended_within, exchange_over, started};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

fn corpus() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/corpora/harness.json")
        .to_string_lossy()
        .into_owned()
}

/// Sends `lines` (after the handshake), closes stdin, and returns every response by
/// id (a response with no id under `null`) and the exit status.
fn exchange(extra: &[&str], lines: &[String]) -> (Vec<Value>, std::process::ExitStatus) {
    exchange_over(&["--corpus", &corpus()], extra, &[], lines)
}

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
    assert_eq!(tools.len(), 4);
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

fn a_retry_under_a_new_tool_use_id_is_a_repeat_over_the_corpus_too() {
    // A model retrying an interrupted send gets a new tool-use id; the same words
    // from the same caller to the same target within ten minutes deliver once
    // (SPEC, "Repeats a host should catch"), in every store, the corpus included.
    let deliveries = host_shim_testkit::scratch("mcp", "repeat").join("deliveries.json");
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
    let text = |id: u32| host_shim_testkit::mcp::text_of(&responses, id);
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

fn invalid_settings_stop_the_server_before_it_serves() {
    let settings = host_shim_testkit::scratch("mcp", "bad-settings").join("settings.json");
    std::fs::write(&settings, r#"{"maxListResults": "ten"}"#).unwrap();
    let output = host_shim_testkit::command::host_shim()
        .args(["mcp", "--corpus", &corpus(), "--settings"])
        .arg(&settings)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!output.status.success());
    let err = String::from_utf8(output.stderr).unwrap();
    host_shim_testkit::has(&err, "maxListResults");
    host_shim_testkit::has(&err, settings.to_str().unwrap());
    std::fs::remove_file(settings).unwrap();
}

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
        host_shim_testkit::begins(&text, "sessions_read refused (not-found)");
        host_shim_testkit::has(&text, shown);
    }
}

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

host_shim_testkit::tests![
    malformed_lines_get_json_rpc_errors_and_the_next_request_is_served,
    a_retry_under_a_new_tool_use_id_is_a_repeat_over_the_corpus_too,
    a_host_failure_is_an_error_result_with_its_one_line,
    invalid_settings_stop_the_server_before_it_serves,
    a_lone_surrogate_in_a_call_is_refused_naming_the_argument_never_altered,
    the_server_ends_soon_after_its_client_closes_stdin_whatever_still_runs,
];
