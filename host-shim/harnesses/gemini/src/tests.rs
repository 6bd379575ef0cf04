//! The Gemini CLI store over session files written for these tests in the shapes Gemini
//! CLI 0.61.0 writes (seen against our scripted endpoint; `host-shim/harnesses/gemini/fixtures/0.61.0`
//! holds the real ones).

use super::*;
use host_shim::SessionQuery;
use host_shim::inbox::MemoryInbox;

const MAIN: &str = "2b217103-671c-4390-826d-2a96f029d40e";
const CHILD: &str = "0e8bfb2f-2b05-4c5f-8198-c31b552f7b86";

fn frame(id: &str, words: &str) -> String {
    format!(
        "Cross-session message from another session of this harness.\nfrom-session: peer (\"Peer\")\n\
         delivery: queue\nhop: 1\nmessage-id: {id}\n--- message begins ---\n{words}\n--- message ends ---"
    )
}

fn line(value: serde_json::Value) -> String {
    format!("{value}\n")
}

fn home() -> PathBuf {
    let thread = format!("{:?}", std::thread::current().id());
    let root = host_shim_testkit::scratch("gemini-unit", &thread);
    let chats = root.join("tmp/app/chats");
    std::fs::create_dir_all(chats.join(MAIN)).unwrap();
    std::fs::write(
        root.join("projects.json"),
        r#"{"projects": {"/w/app": "app"}}"#,
    )
    .unwrap();
    let main = [
        line(
            serde_json::json!({"sessionId": MAIN, "startTime": "2026-12-05T10:29:48.703Z", "kind": "main"}),
        ),
        line(
            serde_json::json!({"$set": {"messages": [{"id": "ctx", "type": "user",
            "content": [{"text": "<session_context>\nToday is Saturday.\n</session_context>"}]}]}}),
        ),
        line(
            serde_json::json!({"id": "p1", "type": "user", "content": [{"text": "Plan the release"},
            {"text": format!("<hook_context>{}</hook_context>", frame("m-000000000001", "first"))},
            {"text": "<hook_context>Repository notes.</hook_context>"}],
            "displayContent": [{"text": "Plan the release"}]}),
        ),
        line(serde_json::json!({"id": "g1", "type": "gemini", "content": "", "model": "gemini-a"})),
        line(
            serde_json::json!({"id": "g1", "type": "gemini", "content": "", "model": "gemini-a",
            "toolCalls": [{"name": "mcp_session-tools_sessions_list",
                "args": {"scope": "all", "session_tools_stamp": {"mac": "x"}}, "status": "success"},
                {"name": "invoke_agent", "args": {"agent_name": "generalist"}, "agentId": CHILD}]}),
        ),
        line(
            serde_json::json!({"id": "r1", "type": "user", "content": [{"functionResponse": {"name": "x", "response": {}}}]}),
        ),
        line(
            serde_json::json!({"id": "g2", "type": "gemini", "content": "Planned.", "model": "gemini-b"}),
        ),
        line(serde_json::json!({"id": "i1", "type": "info", "content": "Note for the person"})),
        // Resumed in a later minute: the conversation goes on in this file.
        line(serde_json::json!({"id": "p2", "type": "user", "content": [{"text": "And now?"}]})),
        line(
            serde_json::json!({"id": "g3", "type": "gemini", "content": "Shipping.", "model": "gemini-c"}),
        ),
    ];
    std::fs::write(
        chats.join("session-2026-12-05T10-29-2b217103.jsonl"),
        main.concat(),
    )
    .unwrap();
    // The resume's stub, named after its minute: its header and Gemini's context again.
    let stub = [
        line(
            serde_json::json!({"sessionId": MAIN, "startTime": "2026-12-05T10:31:00.000Z", "kind": "main"}),
        ),
        line(
            serde_json::json!({"$set": {"messages": [{"id": "ctx", "type": "user",
            "content": [{"text": "<session_context>\nToday is Saturday.\n</session_context>"}]}]}}),
        ),
    ];
    std::fs::write(
        chats.join("session-2026-12-05T10-31-2b217103.jsonl"),
        stub.concat(),
    )
    .unwrap();
    let child = [
        line(
            serde_json::json!({"sessionId": CHILD, "startTime": "2026-12-05T10:29:50.433Z",
            "kind": "subagent", "directories": ["/w/app/sub"]}),
        ),
        line(
            serde_json::json!({"id": "c1", "type": "user", "content": [{"text": "List the files"}]}),
        ),
        line(
            serde_json::json!({"id": "c2", "type": "gemini", "content": "Listed.", "model": "gemini-a"}),
        ),
        line(serde_json::json!({"$set": {"summary": "{\"response\": \"Listed.\"}"}})),
    ];
    std::fs::write(
        chats.join(MAIN).join(format!("{CHILD}.jsonl")),
        child.concat(),
    )
    .unwrap();
    root
}

fn store(home: &Path) -> GeminiStore {
    GeminiStore::open(home, Arc::new(MemoryInbox::new()))
}

fn texts(surface: &Surface) -> Vec<(String, bool, Option<String>)> {
    (surface.messages.iter())
        .map(|m| (m.source.clone(), m.injected, m.text().map(str::to_string)))
        .collect()
}

#[test]
fn sessions_and_subagents_are_listed_from_their_files() {
    let home = home();
    let mut store = store(&home);
    let index = store.list_sessions();
    assert_eq!(index.entries.len(), 2);
    let main = store.get_session(MAIN).unwrap();
    assert_eq!(main.cwd.as_deref(), Some("/w/app"));
    assert_eq!(
        main.preset.as_deref(),
        Some("gemini-c"),
        "the stub's newer model"
    );
    assert_eq!(
        main.created_at_ms,
        rfc3339_ms("2026-12-05T10:29:48.703Z").unwrap()
    );
    assert!(main.parent_id.is_none() && !main.live);
    let child = store.get_session(CHILD).unwrap();
    assert_eq!(child.parent_id.as_deref(), Some(MAIN));
    assert_eq!(child.origin, "subagent");
    assert_eq!(child.cwd.as_deref(), Some("/w/app/sub"));
    assert_eq!(
        store.title_snapshots(&[MAIN.into(), CHILD.into(), "nobody".into()]),
        [
            Some("Plan the release".to_string()),
            Some("List the files".to_string()),
            None
        ]
    );
    assert_eq!(store.get_session("../x"), None);
    assert_eq!(store.skipped_lines(), 0);
}

#[test]
fn the_surface_is_what_the_model_was_sent_with_hand_overs_as_their_frames() {
    let home = home();
    let mut store = store(&home);
    let surface = store.surface_of(MAIN).unwrap();
    let model = |name: &str| format!("model:gemini/{name}");
    assert_eq!(
        texts(&surface),
        [
            (
                "gemini".into(),
                true,
                Some("<session_context>\nToday is Saturday.\n</session_context>".into())
            ),
            ("user".into(), false, Some("Plan the release".into())),
            ("user".into(), false, Some(frame("m-000000000001", "first"))),
            ("gemini".into(), true, Some("Repository notes.".into())),
            (model("gemini-a"), false, None),
            (model("gemini-b"), false, Some("Planned.".into())),
            ("user".into(), false, Some("And now?".into())),
            (model("gemini-c"), false, Some("Shipping.".into())),
        ]
    );
    // The stamp a hook added is not the model's input.
    let actions = &surface.messages[4].actions;
    assert_eq!(actions[0].input, r#"{"scope":"all"}"#);
    assert_eq!(actions[0].status, ActionStatus::Ok);
    assert_eq!(actions[1].status, ActionStatus::Running);
    let file = home.join("tmp/app/chats/session-2026-12-05T10-29-2b217103.jsonl");
    assert!(
        handed_over_ids(&file, ReadFrom::End)
            .unwrap()
            .contains("m-000000000001")
    );
    let child = store.surface_of(CHILD).unwrap();
    assert_eq!(child.messages.len(), 2);
}

#[test]
fn files_that_vanish_or_are_being_written_are_taken_as_they_are() {
    let home = home();
    let mut store = store(&home);
    store.list_sessions();
    // Gemini's clean-up deletes the subagent; a line is half written in the record.
    std::fs::remove_dir_all(home.join("tmp/app/chats").join(MAIN)).unwrap();
    let record = home.join("tmp/app/chats/session-2026-12-05T10-29-2b217103.jsonl");
    let mut text = std::fs::read_to_string(&record).unwrap();
    text.push_str(r#"{"id":"p3","type":"us"#);
    std::fs::write(&record, text).unwrap();
    assert_eq!(store.list_sessions().entries.len(), 1);
    assert_eq!(store.get_session(CHILD), None);
    let surface = store.surface_of(MAIN).unwrap();
    assert_eq!(surface.messages.len(), 8);
    assert_eq!(store.skipped_lines(), 1);
    // The record deleted, its stub kept: the session is what the stub holds.
    std::fs::remove_file(&record).unwrap();
    store.list_sessions();
    let surface = store.surface_of(MAIN).unwrap();
    assert_eq!(surface.messages.len(), 1);
    assert!(surface.messages[0].injected);
}

#[test]
fn a_home_that_is_not_there_is_an_empty_store() {
    let mut store = store(Path::new("/nonexistent/.gemini"));
    assert!(store.list_sessions().entries.is_empty());
    assert_eq!(store.get_session(MAIN), None);
}

/// Where Gemini CLI 0.61.0 records each hook's context (seen with the real binary):
/// `SessionStart`'s before the prompt in its part, `AfterTool`'s after the tool's
/// output, `AfterAgent`'s denial as a prompt of its own.
#[test]
fn each_hooks_context_is_found_where_gemini_records_it() {
    let root = home();
    let chats = root.join("tmp/app/chats");
    let id = "7c7c7c7c-0000-4000-8000-000000000007";
    let output = format!(
        "<untrusted_context>\nrows\n</untrusted_context>\n\n\n<hook_context>{}</hook_context>",
        frame("m-000000000003", "steered")
    );
    let lines = [
        line(
            serde_json::json!({"sessionId": id, "startTime": "2026-12-05T11:00:00.000Z", "kind": "main"}),
        ),
        line(
            serde_json::json!({"id": "u1", "type": "user", "content": [{"text":
            format!("<hook_context>{}</hook_context>\n\nGo on", frame("m-000000000002", "at start"))}]}),
        ),
        line(
            serde_json::json!({"id": "g1", "type": "gemini", "content": "", "model": "m",
            "toolCalls": [{"name": "run_shell_command", "args": {"command": "ls"}, "status": "success"}]}),
        ),
        line(
            serde_json::json!({"id": "r1", "type": "user", "content": [{"functionResponse":
            {"name": "run_shell_command", "response": {"output": output}}}]}),
        ),
        line(serde_json::json!({"id": "g2", "type": "gemini", "content": "Done.", "model": "m"})),
        line(
            serde_json::json!({"id": "u2", "type": "user", "content": [{"text": frame("m-000000000004", "at stop")}]}),
        ),
    ];
    let file = chats.join("session-2026-12-05T11-00-7c7c7c7c.jsonl");
    std::fs::write(&file, lines.concat()).unwrap();
    let mut store = store(&root);
    let surface = store.surface_of(id).unwrap();
    let shown = texts(&surface);
    assert_eq!(
        shown[0],
        (
            "user".into(),
            false,
            Some(frame("m-000000000002", "at start"))
        )
    );
    assert_eq!(shown[1], ("user".into(), false, Some("Go on".into())));
    assert_eq!(
        shown[3],
        (
            "user".into(),
            false,
            Some(frame("m-000000000003", "steered"))
        )
    );
    assert_eq!(
        shown[5],
        (
            "user".into(),
            false,
            Some(frame("m-000000000004", "at stop"))
        )
    );
    assert_eq!(
        store.title_snapshots(&[id.into()]),
        [Some("Go on".to_string())]
    );
    let ids = handed_over_ids(&file, ReadFrom::End).unwrap();
    for id in ["m-000000000002", "m-000000000003", "m-000000000004"] {
        assert!(ids.contains(id), "{id}: {ids:?}");
    }
}

#[test]
fn a_session_whose_gemini_process_runs_is_live_and_a_message_for_it_waits_unwoken() {
    use host_shim::Inbox;
    let home = home();
    let mut store = store(&home).presence(Arc::new(host_shim_testkit::Live::of(&[MAIN])));
    assert!(store.get_session(MAIN).unwrap().live);
    assert!(!store.get_session(CHILD).unwrap().live);
    let request = host_shim::inbox::delivery::DeliveryRequest::new(
        MAIN,
        "hello",
        host_shim::contract::latest::DeliveryMode::Queue,
    )
    .may_wake(true)
    .key("5:alicek1");
    let delivered = store.deliver(&request).unwrap();
    assert!(!delivered.woke);
    assert_eq!(store.inbox().waiting(MAIN).unwrap().messages.len(), 1);
}
