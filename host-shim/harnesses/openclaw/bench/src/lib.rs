//! An OpenClaw state folder for the benchmarks: agent `main`'s database holding 1,000
//! sessions of about 3 MB each in the table layout the real OpenClaw 2026.9.6 wrote (the
//! fixture's tables), each tenth tool result stored zstd-compressed as OpenClaw stores a
//! large event, written once under the temporary folder in WAL mode, then reused.

use host_shim_testkit::corpus::{fill_with_turns, tool_output, write_database, written_once};
use std::path::PathBuf;

pub fn id(n: usize) -> String {
    format!("0be9c4a7-{n:04x}-4000-8000-{n:012x}")
}

/// What the real OpenClaw 2026.9.6 wrote (its session and transcript tables), for
/// their layout.
const FIXTURE: &str = include_str!("../../fixtures/2026.9.6/agent.sql");

/// One session's turns: the person's prompt, the model's shell call, its 16 KB output,
/// the model's answer, until the session holds about 3 MB.
fn write_session(db: &rusqlite::Transaction<'_>, n: usize) {
    let session = id(n);
    let key = format!("agent:main:explicit:{session}");
    let created = 1_796_000_000_000i64 + n as i64 * 60_000;
    db.execute(
        "INSERT INTO session_nodes (session_key, current_session_id, entry_json, updated_at, \
         created_at, created_via) VALUES (?1, ?2, '{}', ?3, ?3, 'run')",
        rusqlite::params![key, session, created],
    )
    .unwrap();
    db.execute(
        "INSERT INTO session_windows (session_id, session_key, created_at, updated_at, \
         model_provider, model) VALUES (?1, ?2, ?3, ?3, 'bench', 'bench-model')",
        rusqlite::params![session, key, created],
    )
    .unwrap();
    let mut event = db
        .prepare_cached(
            "INSERT INTO transcript_events (session_id, seq, event_json, created_at, \
             event_zstd, event_utf8_bytes, navigation_json) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )
        .unwrap();
    let mut seq = 0i64;
    let mut put = |value: serde_json::Value, compressed: bool| -> usize {
        let text = value.to_string();
        let size = text.len();
        if compressed {
            let frame = ruzstd::encoding::compress_to_vec(
                text.as_bytes(),
                ruzstd::encoding::CompressionLevel::Fastest,
            );
            event
                .execute(rusqlite::params![
                    session,
                    seq,
                    None::<String>,
                    created,
                    frame,
                    size as i64,
                    NAVIGATION
                ])
                .unwrap();
        } else {
            event
                .execute(rusqlite::params![
                    session,
                    seq,
                    text,
                    created,
                    None::<Vec<u8>>,
                    None::<i64>,
                    None::<String>
                ])
                .unwrap();
        }
        seq += 1;
        size
    };
    let written = put(
        serde_json::json!({"type": "session", "version": 4, "id": session,
            "cwd": format!("/home/bench/project-{}", n % 50)}),
        false,
    );
    let output = tool_output();
    fill_with_turns(written, |turn| {
        let call = format!("call_{turn}");
        put(
            serde_json::json!({"type": "message", "id": format!("u{turn}"), "message": {
                "role": "user", "content": format!("Turn {turn}: please look at module {turn}")}}),
            false,
        ) + put(
            serde_json::json!({"type": "message", "id": format!("a{turn}"), "message": {
                "role": "assistant", "provider": "bench", "model": "bench-model", "content": [
                    {"type": "toolCall", "id": call, "name": "exec",
                     "arguments": {"command": format!("cargo test -p module{turn}")}}]}}),
            false,
        ) + put(
            serde_json::json!({"type": "message", "id": format!("r{turn}"), "message": {
                "role": "toolResult", "toolCallId": call, "toolName": "exec",
                "content": [{"type": "text", "text": output}]}}),
            turn % 10 == 0,
        ) + put(
            serde_json::json!({"type": "message", "id": format!("b{turn}"), "message": {
                "role": "assistant", "provider": "bench", "model": "bench-model", "content": [
                    {"type": "text", "text": format!("Module {turn} is fixed: {}", "a".repeat(600))}]}}),
            false,
        )
    });
}

/// The navigation record OpenClaw's check asks of a compressed row.
const NAVIGATION: &str = r#"{"version":1,"report":{"kind":"canonical"},"navigation":{},"reset":{},"model":{},"modelBytes":0,"modelWithoutCheckpointBytes":0,"withoutCustomDataBytes":0}"#;

/// The state folder of 1,000 sessions, written on the first run.
pub fn openclaw_state() -> PathBuf {
    written_once("openclaw", |root| {
        let agent = root.join("agents/main/agent");
        std::fs::create_dir_all(&agent).unwrap();
        write_database(
            &agent.join("openclaw-agent.sqlite"),
            FIXTURE,
            "DELETE FROM transcript_events; DELETE FROM session_windows; DELETE FROM session_nodes;",
            write_session,
        );
    })
}
