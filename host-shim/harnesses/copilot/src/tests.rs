//! The Copilot store over event streams written for these tests in the shapes Copilot
//! CLI 1.0.102 writes (seen against our scripted endpoint; host-shim/harnesses/copilot/README.md).

use super::*;
use host_shim::contract::latest::{DeliveryMode, DeliveryState};
use host_shim::inbox::MemoryInbox;
use host_shim::inbox::delivery::DeliveryRequest;
use host_shim::{Inbox, SessionQuery};

const PLANNER: &str = "0c1a5e2f-6b3d-4e8a-9f10-2b3c4d5e6f70";
const HELPER: &str = "7d8e9f00-1a2b-4c3d-8e4f-5a6b7c8d9e0f";
const STARTING: &str = "9a9b9c9d-0000-4000-8000-000000000001";

fn frame(id: &str, words: &str) -> String {
    format!(
        "Cross-session message from another session of this harness.\nfrom-session: peer (\"Peer\")\n\
         delivery: queue\nhop: 1\nmessage-id: {id}\n--- message begins ---\n{words}\n--- message ends ---"
    )
}

fn line(kind: &str, data: serde_json::Value) -> String {
    serde_json::json!({"type": kind, "data": data, "id": "e", "timestamp": "2026-12-05T06:54:18.272Z",
        "parentId": null})
    .to_string()
}

fn home() -> PathBuf {
    let thread = format!("{:?}", std::thread::current().id());
    let root = host_shim_testkit::scratch("copilot-unit", &thread);
    let planner = root.join("session-state").join(PLANNER);
    std::fs::create_dir_all(&planner).unwrap();
    std::fs::write(
        planner.join("workspace.yaml"),
        format!(
            "id: {PLANNER}\ncwd: /w/app\nname: \"Plan: the release\"\nuser_named: false\n\
             created_at: 2026-12-05T06:52:17.890Z\nupdated_at: 2026-12-05T06:53:00.000Z\n"
        ),
    )
    .unwrap();
    let events = [
        line(
            "session.start",
            serde_json::json!({"sessionId": PLANNER, "startTime": "2026-12-05T06:52:17.935Z",
            "selectedModel": "model-a", "context": {"cwd": "/w/start"}}),
        ),
        line(
            "hook.end",
            serde_json::json!({"hookType": "sessionStart", "success": true,
            "output": {"additionalContext": "Repository notes."}}),
        ),
        line(
            "user.message",
            serde_json::json!({"content": "Plan the release",
            "transformedContent": format!("<current_datetime>2026-12-05T06:52:18.150+00:00</current_datetime>\n\n\
                Plan the release\n\n<system_reminder>\n{}\n</system_reminder>", frame("m-000000000001", "first")),
            "delivery": "idle"}),
        ),
        line(
            "system.message",
            serde_json::json!({"role": "system", "content": "You are the GitHub Copilot CLI"}),
        ),
        line(
            "assistant.message",
            serde_json::json!({"model": "model-a", "content": "Looking.",
            "toolRequests": [{"toolCallId": "call_1", "name": "bash",
                "arguments": {"description": "list", "command": "ls"}, "type": "function"}]}),
        ),
        line(
            "tool.execution_complete",
            serde_json::json!({"toolCallId": "call_1", "success": true,
            "result": {"content": format!("a b\n\nTool \"bash\" succeeded. Additional guidance from postToolUse hooks:\n{}",
                frame("m-000000000002", "steered"))}}),
        ),
        line("brand.new_event", serde_json::json!({})),
        // A subagent's conversation, in its parent's file: not the parent's surface.
        line(
            "subagent.started",
            serde_json::json!({"toolCallId": "call_2", "agentName": "general-purpose"}),
        ),
        line(
            "user.message",
            serde_json::json!({"content": "Sub task", "source": format!("agent-{PLANNER}")}),
        ),
        line(
            "assistant.message",
            serde_json::json!({"model": "model-a", "content": "Sub answer",
            "toolRequests": [], "parentToolCallId": "call_2"}),
        ),
        line(
            "subagent.completed",
            serde_json::json!({"toolCallId": "call_2"}),
        ),
        "{damaged".to_string(),
        line(
            "user.message",
            serde_json::json!({"content": frame("m-000000000003", "queued"),
            "transformedContent": format!("<current_datetime>x</current_datetime>\n\n{}", frame("m-000000000003", "queued")),
            "delivery": "queued"}),
        ),
        line(
            "assistant.message",
            serde_json::json!({"model": "model-b", "content": "Done.", "toolRequests": []}),
        ),
    ];
    std::fs::write(planner.join("events.jsonl"), events.join("\n") + "\n").unwrap();

    let helper = root.join("session-state").join(HELPER);
    std::fs::create_dir_all(&helper).unwrap();
    let events = [
        line(
            "session.start",
            serde_json::json!({"sessionId": HELPER, "startTime": "2026-12-05T07:00:00.000Z",
            "selectedModel": "model-a", "context": {"cwd": "/w/help"}}),
        ),
        line(
            "user.message",
            serde_json::json!({"content": "Help with tests\nplease"}),
        ),
    ];
    std::fs::write(helper.join("events.jsonl"), events.join("\n") + "\n").unwrap();
    // Held, as a running Copilot holds its session (the lock lives as long as the test
    // process: the file is leaked on purpose).
    hold(&helper);
    // A crash left one behind: the file, not the lock.
    std::fs::write(
        root.join("session-state")
            .join(PLANNER)
            .join("inuse.1.hold"),
        "",
    )
    .unwrap();

    // A session in its first turn: Copilot has written only its workspace.
    let starting = root.join("session-state").join(STARTING);
    std::fs::create_dir_all(&starting).unwrap();
    let workspace = format!(
        "id: {STARTING}\ncwd: /w/new\nname: New one\ncreated_at: 2026-12-05T08:00:00.000Z\n"
    );
    std::fs::write(starting.join("workspace.yaml"), workspace).unwrap();
    hold(&starting);

    // Not sessions: a folder whose name is no id, one without an event stream, a
    // stream whose start names another session.
    std::fs::create_dir_all(root.join("session-state").join("not an id!")).unwrap();
    std::fs::create_dir_all(root.join("session-state").join(".session-operation-locks")).unwrap();
    let stray = root.join("session-state").join("stray-folder");
    std::fs::create_dir_all(&stray).unwrap();
    std::fs::write(
        stray.join("events.jsonl"),
        line("session.start", serde_json::json!({"sessionId": PLANNER})) + "\n",
    )
    .unwrap();
    root
}

/// Holds a lock on an `inuse.<pid>.hold` in `folder` for the rest of the test process.
fn hold(folder: &Path) {
    let path = folder.join(format!("inuse.{}.hold", std::process::id()));
    let file = std::fs::File::create(path).unwrap();
    file.lock().unwrap();
    std::mem::forget(file);
}

fn store(home: &Path) -> CopilotStore {
    CopilotStore::open(home, Arc::new(MemoryInbox::new()))
}

#[test]
fn sessions_are_listed_with_their_workspace_model_and_liveness() {
    let home = home();
    let mut store = store(&home);
    let index = store.list_sessions();
    let ids: Vec<&str> = (index.entries.iter())
        .scan(0, |at, e| {
            let id = &index.ids[*at..*at + e.id_len as usize];
            *at += e.id_len as usize;
            Some(id)
        })
        .collect();
    assert_eq!(ids, [PLANNER, HELPER, STARTING]);
    assert!(index.entries.iter().all(|e| !e.subagent));
    let planner = store.get_session(PLANNER).unwrap();
    assert_eq!(planner.cwd.as_deref(), Some("/w/app"));
    assert_eq!(planner.preset.as_deref(), Some("model-b"));
    assert_eq!(
        planner.created_at_ms,
        rfc3339_ms("2026-12-05T06:52:17.890Z").unwrap()
    );
    assert!(!planner.live);
    let helper = store.get_session(HELPER).unwrap();
    assert!(helper.live);
    assert_eq!(helper.cwd.as_deref(), Some("/w/help"));
    assert_eq!(
        store.title_snapshots(&[PLANNER.into(), HELPER.into(), "nobody".into()]),
        [
            Some("Plan: the release".to_string()),
            Some("Help with tests\nplease".to_string()),
            None
        ]
    );
    let starting = store.get_session(STARTING).unwrap();
    assert!(starting.live);
    assert_eq!(starting.cwd.as_deref(), Some("/w/new"));
    assert_eq!(
        store.title_snapshots(&[STARTING.into()]),
        [Some("New one".to_string())]
    );
    assert!(store.surface_of(STARTING).unwrap().messages.is_empty());
    assert_eq!(store.get_session("stray-folder"), None);
    assert_eq!(store.get_session("../x"), None);
}

#[test]
fn the_surface_is_what_the_model_was_sent_with_hand_overs_as_their_frames() {
    let home = home();
    let mut store = store(&home);
    let surface = store.surface_of(PLANNER).unwrap();
    let shown: Vec<(Role, &str, bool, &str)> = (surface.messages.iter())
        .map(|m| {
            (
                m.role,
                m.source.as_str(),
                m.injected,
                m.text().unwrap_or(""),
            )
        })
        .collect();
    let first = frame("m-000000000001", "first");
    let steered = frame("m-000000000002", "steered");
    let queued = frame("m-000000000003", "queued");
    assert_eq!(
        shown,
        [
            (Role::User, "copilot", true, "Repository notes."),
            (
                Role::User,
                "copilot",
                true,
                "<current_datetime>2026-12-05T06:52:18.150+00:00</current_datetime>"
            ),
            (Role::User, "user", false, "Plan the release"),
            (Role::User, "user", false, first.as_str()),
            (Role::Assistant, "model:copilot/model-a", false, "Looking."),
            (Role::User, "user", false, steered.as_str()),
            (
                Role::User,
                "copilot",
                true,
                "<current_datetime>x</current_datetime>"
            ),
            (Role::User, "user", false, queued.as_str()),
            (Role::Assistant, "model:copilot/model-b", false, "Done."),
        ]
    );
    let seqs: Vec<u64> = surface.messages.iter().map(|m| m.seq).collect();
    assert_eq!(seqs, (1..=9).collect::<Vec<u64>>());
    assert_eq!(surface.captured_through_seq, 9);
    let call = &surface.messages[4].actions;
    assert_eq!(call.len(), 1);
    assert_eq!(call[0].name, "bash");
    assert_eq!(call[0].input, r#"{"command":"ls","description":"list"}"#);
    assert_eq!(call[0].status, ActionStatus::Ok);
    let ids = surface.handed_over_ids();
    for id in ["m-000000000001", "m-000000000002", "m-000000000003"] {
        assert!(ids.contains(id), "{id} in {ids:?}");
    }
    assert_eq!(
        handed_over_ids(
            &home
                .join("session-state")
                .join(PLANNER)
                .join("events.jsonl"),
            ReadFrom::End
        )
        .unwrap(),
        ids
    );
    // The damaged line and the event of a type it does not know, counted.
    assert_eq!(store.skipped_lines(), 2);
}

#[test]
fn a_message_waits_for_the_sessions_hooks_and_nothing_else_takes_one() {
    let home = home();
    let mut store = store(&home);
    let ids = host_shim::contract::latest::MessageIds::none();
    let to = |target| {
        DeliveryRequest::new(target, "hello", DeliveryMode::Queue)
            .may_wake(false)
            .key("5:alicek1")
            .ids(&ids)
    };
    let delivered = store.deliver(&to(HELPER)).unwrap();
    assert_eq!(delivered.state, DeliveryState::Waiting);
    assert!(!delivered.woke);
    assert_eq!(store.inbox().waiting(HELPER).unwrap().messages.len(), 1);
    // A cold session the call may not wake, and an unknown one, take nothing.
    let cold = DeliveryRequest::new(PLANNER, "hello", DeliveryMode::Queue).key("5:alicek2");
    assert_eq!(store.deliver(&cold), Err(DeliveryRefusal::WouldNeedWake));
    let nobody = DeliveryRequest::new("nobody", "hello", DeliveryMode::Queue).key("5:alicek3");
    assert_eq!(store.deliver(&nobody), Err(DeliveryRefusal::NotFound));
}

#[test]
fn a_home_that_is_not_there_is_an_empty_store() {
    let mut store = store(Path::new("/nonexistent/copilot-home"));
    assert!(store.list_sessions().entries.is_empty());
    assert_eq!(store.get_session(PLANNER), None);
}

#[test]
fn workspace_scalars_read_as_yaml_writes_them() {
    let workspace =
        Workspace::parse("name: 'it''s: quoted'\ncwd: /plain path\ncreated_at: \"2026\\u0021\"\n");
    assert_eq!(workspace.name.as_deref(), Some("it's: quoted"));
    assert_eq!(workspace.cwd.as_deref(), Some("/plain path"));
    assert_eq!(workspace.created_at.as_deref(), Some("2026!"));
    // A first prompt of two lines, as Copilot CLI 1.0.102 writes it.
    let workspace = Workspace::parse(
        "id: 1\ncwd: /w\nname: |-\n  Plan the beds\n  then water them\nuser_named: false\n",
    );
    assert_eq!(
        workspace.name.as_deref(),
        Some("Plan the beds\nthen water them")
    );
    assert_eq!(workspace.cwd.as_deref(), Some("/w"));
    // A title that reads as a number is its text; a file that is not YAML says nothing.
    assert_eq!(Workspace::parse("name: 42\n").name.as_deref(), Some("42"));
    assert_eq!(Workspace::parse("name: [unclosed\n"), Workspace::default());
}

#[test]
fn a_call_looks_at_each_session_once_and_the_next_looks_afresh() {
    let home = home();
    let mut store = store(&home);
    store.begin_call(HELPER);
    let before = store.looks();
    // A send's questions: the header, the title, the surface, then the delivery.
    store.get_session(PLANNER).unwrap();
    store.title_snapshots(&[PLANNER.into()]);
    store.get_surface(PLANNER, 100).unwrap();
    let request = DeliveryRequest::new(PLANNER, "hello", DeliveryMode::Queue)
        .may_wake(true)
        .key("5:alicek9");
    store.deliver(&request).unwrap();
    // One index of its files, one probe of its lock.
    assert_eq!(store.looks() - before, 2);
    store.end_call();
    store.get_session(PLANNER).unwrap();
    assert_eq!(store.looks() - before, 4);
}

#[test]
fn a_live_sessions_subagent_is_listed_from_its_stream_live_until_it_ends() {
    const AGENT: &str = "5a5a5a5a-0000-4000-8000-00000000a9e7";
    let home = home();
    let events = home.join("session-state").join(HELPER).join("events.jsonl");
    let of_agent = |kind: &str, data: serde_json::Value| {
        let mut event: serde_json::Value = serde_json::from_str(&line(kind, data)).unwrap();
        event["agentId"] = serde_json::Value::from(AGENT);
        format!("{event}\n")
    };
    let mut appended = of_agent(
        "subagent.started",
        serde_json::json!({"toolCallId": "call_9", "agentDisplayName": "checker",
            "agentDescription": "check the build", "model": "model-s"}),
    );
    appended += &of_agent(
        "user.message",
        serde_json::json!({"content": "Check the build", "source": format!("agent-{HELPER}")}),
    );
    appended += &of_agent(
        "assistant.message",
        serde_json::json!({"content": "It builds.", "model": "model-s", "parentToolCallId": "call_9"}),
    );
    let append = |text: &str| {
        use std::io::Write;
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&events)
            .unwrap();
        file.write_all(text.as_bytes()).unwrap();
    };
    append(&appended);
    let mut store = store(&home);
    store.list_sessions();
    // No session store yet: the live parent's stream shows it.
    let header = store.get_session(AGENT).unwrap();
    assert_eq!(header.parent_id.as_deref(), Some(HELPER));
    assert_eq!(header.origin, "subagent");
    assert!(header.live);
    assert_eq!(header.preset.as_deref(), Some("model-s"));
    assert_eq!(header.cwd.as_deref(), Some("/w/help"));
    assert_eq!(
        store.title_snapshots(&[AGENT.into()]),
        [Some("check the build".to_string())]
    );
    let texts = |store: &mut CopilotStore, id: &str| -> Vec<String> {
        let surface = store.surface_of(id).unwrap();
        surface
            .messages
            .iter()
            .filter_map(|m| m.text().map(str::to_string))
            .collect()
    };
    assert_eq!(texts(&mut store, AGENT), ["Check the build", "It builds."]);
    assert!(
        !texts(&mut store, HELPER)
            .iter()
            .any(|t| t.contains("build"))
    );
    // It ended: listed, no longer live.
    append(&of_agent(
        "subagent.completed",
        serde_json::json!({"toolCallId": "call_9"}),
    ));
    store.list_sessions();
    assert!(!store.get_session(AGENT).unwrap().live);
    // The session store is only read: none was made.
    assert!(!home.join("session-store.db").exists());
    // One that is not a database is skipped and counted; the listing stands.
    std::fs::write(home.join("session-store.db"), "not a database").unwrap();
    let mut store = super::CopilotStore::open(&home, Arc::new(MemoryInbox::new()));
    let index = store.list_sessions();
    assert_eq!(index.entries.len(), 4);
    assert_eq!(store.session_store.skipped, 1);
}
