//! `host-shim mcp` at the wire, as the tests drive it: JSON-RPC lines in, lines out.

use crate::command::in_home;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// Sends `lines` (after the handshake) to a server over the store `source` names, its
/// environment given `env` as a client would; closes stdin, and returns every response
/// in order (the handshake's first) and the exit status.
pub fn exchange_over(
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
pub fn started(
    source: &[&str],
    extra: &[&str],
    env: &[(&str, &str)],
    lines: &[String],
) -> (std::process::Child, std::process::ChildStdin) {
    let scratch = crate::temp_folder("mcp");
    // No client's variables but those given: a server no harness started.
    let home = std::env::var_os("HOME").unwrap_or_default();
    let mut child = (in_home(std::path::Path::new(&home)))
        .arg("mcp")
        .args(source)
        .args(extra)
        .env("XDG_CACHE_HOME", scratch)
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
pub fn ended_within(child: &mut std::process::Child, limit: Duration) -> std::process::ExitStatus {
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

/// The result of the response with `id`.
pub fn result_of(responses: &[Value], id: u32) -> Value {
    by_id(responses, json!(id))["result"].clone()
}

/// The text of the response with `id` (its result's first content).
pub fn text_of(responses: &[Value], id: u32) -> String {
    let text = &by_id(responses, json!(id))["result"]["content"][0]["text"];
    text.as_str().unwrap().to_string()
}

/// The response with `id`.
pub fn by_id(responses: &[Value], id: Value) -> &Value {
    responses
        .iter()
        .find(|r| r["id"] == id)
        .unwrap_or_else(|| panic!("no response with id {id}: {responses:#?}"))
}
