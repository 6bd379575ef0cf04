//! The OpenClaw store's pieces on events written here in OpenClaw 2026.9.6's shape (the
//! real binary's own database is tried in `host-shim/harnesses/openclaw/tests/real.rs`).

use super::db::decompressed;
use super::transcript::surface_of;
use host_shim::contract::latest::{ActionStatus, Role};
use serde_json::{Value, json};

fn message(id: &str, body: Value) -> Value {
    json!({"type": "message", "id": id, "message": body})
}

fn user(id: &str, text: &str) -> Value {
    message(id, json!({"role": "user", "content": text}))
}

fn said(id: &str, text: &str) -> Value {
    message(
        id,
        json!({"role": "assistant", "provider": "scripted", "model": "m",
               "content": [{"type": "thinking", "thinking": "hidden"}, {"type": "text", "text": text}]}),
    )
}

fn custom(id: &str) -> Value {
    json!({"type": "custom", "id": id, "customType": "openclaw.cache-ttl", "data": {}})
}

fn texts(events: &[Value]) -> Vec<(u64, Role, String, bool, bool, String)> {
    (surface_of(events).messages.iter())
        .map(|m| {
            (
                m.seq,
                m.role,
                m.source.clone(),
                m.replaced,
                m.injected,
                m.text().unwrap_or("").to_string(),
            )
        })
        .collect()
}

#[test]
fn a_person_and_the_model_in_order_thinking_never_and_the_session_event_not_a_message() {
    let events = [
        json!({"type": "session", "id": "s", "cwd": "/w"}),
        user("u1", "Check the tests"),
        said("a1", "The tests pass."),
        message(
            "u2",
            json!({"role": "user", "content": [{"type": "text", "text": "one"}, {"type": "image"}, {"type": "text", "text": "two"}]}),
        ),
    ];
    assert_eq!(
        texts(&events),
        vec![
            (
                1,
                Role::User,
                "user".into(),
                false,
                false,
                "Check the tests".into()
            ),
            (
                2,
                Role::Assistant,
                "model:scripted/m".into(),
                false,
                false,
                "The tests pass.".into()
            ),
            (
                3,
                Role::User,
                "user".into(),
                false,
                false,
                "one\ntwo".into()
            ),
        ]
    );
}

#[test]
fn a_call_ends_as_its_result_says_and_a_tool_call_is_the_tool_it_called() {
    let events = [
        message(
            "a1",
            json!({"role": "assistant", "content": [
                {"type": "toolCall", "id": "c1", "name": "exec", "arguments": {"command": "ls"}},
                {"type": "toolCall", "id": "c2", "name": "tool_call",
                 "arguments": {"id": "openclaw:session-tools:session-tools__sessions_list", "args": {"scope": "all"}}},
                {"type": "toolCall", "id": "c3", "name": "tool_call", "arguments": {"id": "sessions_spawn"}},
            ]}),
        ),
        message(
            "r1",
            json!({"role": "toolResult", "toolCallId": "c1", "content": [{"type": "text", "text": "secret output"}]}),
        ),
        message(
            "r2",
            json!({"role": "toolResult", "toolCallId": "c2", "isError": true, "content": []}),
        ),
    ];
    let surface = surface_of(&events);
    assert_eq!(
        surface.messages.len(),
        1,
        "a tool's result is never a message"
    );
    let actions = &surface.messages[0].actions;
    let seen: Vec<(&str, &str, ActionStatus)> = (actions.iter())
        .map(|a| (a.name.as_str(), a.input.as_str(), a.status))
        .collect();
    assert_eq!(
        seen,
        vec![
            ("exec", r#"{"command":"ls"}"#, ActionStatus::Ok),
            (
                "session-tools__sessions_list",
                r#"{"scope":"all"}"#,
                ActionStatus::Error
            ),
            ("sessions_spawn", "{}", ActionStatus::Running),
        ]
    );
}

#[test]
fn another_sessions_message_an_injected_one_and_our_frames_each_as_what_they_are() {
    let frame = "Cross-session message from another session of this harness.\nfrom-session: x (\"X\")\ndelivery: queue\nhop: 1\nmessage-id: m-00000000abcd\n--- message begins ---\nhi\n--- message ends ---";
    let events = [
        message(
            "u1",
            json!({"role": "user", "content": "From a peer", "provenance": {"kind": "inter_session", "sourceSessionKey": "agent:main:main"}}),
        ),
        message(
            "c1",
            json!({"role": "custom", "customType": "reminder", "content": "Injected note"}),
        ),
        message(
            "c2",
            json!({"role": "custom", "customType": "openclaw.nested-tool.v1", "excludeFromContext": true, "content": "never given"}),
        ),
        user("u2", frame),
    ];
    let seen = texts(&events);
    assert_eq!(seen.len(), 3, "{seen:?}");
    assert_eq!(seen[0].2, "openclaw:inter-session");
    assert_eq!((seen[1].2.as_str(), seen[1].4), ("openclaw:reminder", true));
    assert_eq!(
        (seen[2].2.as_str(), seen[2].4, seen[2].5.as_str()),
        ("user", false, frame)
    );
}

#[test]
fn after_a_compaction_the_summary_then_what_it_kept_even_from_an_event_that_is_no_message() {
    // As the real 2026.9.6 wrote one: `firstKeptEntryId` named a `custom` event.
    let events = [
        user("u1", "First question"),
        said("a1", "First answer."),
        user("u2", "Second question"),
        custom("k"),
        said("a2", "Second answer."),
        json!({"type": "compaction", "id": "cmp", "summary": "They asked twice.", "firstKeptEntryId": "k"}),
        user("u3", "Third question"),
    ];
    assert_eq!(
        texts(&events),
        vec![
            (
                3,
                Role::User,
                "openclaw:compaction".into(),
                true,
                true,
                "They asked twice.".into()
            ),
            (
                4,
                Role::Assistant,
                "model:scripted/m".into(),
                false,
                false,
                "Second answer.".into()
            ),
            (
                5,
                Role::User,
                "user".into(),
                false,
                false,
                "Third question".into()
            ),
        ]
    );
    assert_eq!(surface_of(&events).captured_through_seq, 5);
}

#[test]
fn a_compressed_event_is_read_only_at_the_size_its_row_declares() {
    let event = br#"{"type":"message","id":"u","message":{"role":"user","content":"long"}}"#;
    let frame =
        ruzstd::encoding::compress_to_vec(&event[..], ruzstd::encoding::CompressionLevel::Fastest);
    let size = i64::try_from(event.len()).unwrap();
    assert_eq!(
        decompressed(&frame, Some(size)).as_deref(),
        Some(&event[..])
    );
    assert_eq!(
        decompressed(&frame, Some(size - 1)),
        None,
        "longer than declared"
    );
    assert_eq!(
        decompressed(&frame, Some(size + 1)),
        None,
        "shorter than declared"
    );
    assert_eq!(decompressed(&frame, None), None);
    assert_eq!(decompressed(b"not zstd", Some(8)), None);
    assert_eq!(
        decompressed(&frame, Some(5 * 1024 * 1024)),
        None,
        "past OpenClaw's own bound"
    );
}
