//! The OpenCode store over databases written here in the table layout the real
//! OpenCode 1.18.33 wrote (`host-shim/harnesses/opencode/fixtures/1.18.33/`, whose rows
//! `host-shim/harnesses/opencode/tests/real.rs` reads).

use super::*;
use host_shim::contract::latest::{
    DeliveryMode, DeliveryState, InboundPolicy, MessageContent, MessageIds,
};
use host_shim::harnesses::plugin_session::{Moment, PluginSessions};
use host_shim::inbox::WakeCommand;
use host_shim::inbox::delivery::DeliveryRequest;
use host_shim::inbox::{MemoryInbox, SpooledMessage};
use host_shim::{Inbox, SessionQuery};
use host_shim_testkit::Live;
use rusqlite::Connection;
use std::path::PathBuf;
use std::time::Duration;

/// What the real OpenCode 1.18.33 wrote (its session, message and part tables), for
/// their layout: the tests write their own rows into it.
const FIXTURE: &str = include_str!("../fixtures/1.18.33/opencode.sql");

const MODEL: &str = r#"{"id":"scripted-model","providerID":"scripted","variant":"default"}"#;

fn scratch(name: &str) -> PathBuf {
    host_shim_testkit::scratch("opencode-unit", name)
}

/// A database as OpenCode writes it, and the writer's connection.
struct Written {
    path: PathBuf,
    writer: Connection,
    at: i64,
}

impl Written {
    fn new(name: &str) -> Written {
        let path = scratch(name).join("opencode.db");
        let writer = Connection::open(&path).unwrap();
        // The fixture keeps three of OpenCode's tables, not the project table they refer to.
        writer
            .execute_batch("PRAGMA journal_mode = WAL; PRAGMA foreign_keys = OFF;")
            .unwrap();
        writer.execute_batch(FIXTURE).unwrap();
        writer
            .execute_batch("DELETE FROM part; DELETE FROM message; DELETE FROM session;")
            .unwrap();
        Written {
            path,
            writer,
            at: 1_796_360_000_000,
        }
    }

    fn session(&mut self, id: &str, title: &str, parent: Option<&str>) {
        self.at += 1000;
        self.writer
            .execute(
                "INSERT INTO session (id, project_id, parent_id, slug, directory, title, version, \
                 model, time_created, time_updated) VALUES (?1, 'global', ?2, 'slug', '/home/ada/shop', \
                 ?3, '1.18.33', ?4, ?5, ?5)",
                rusqlite::params![id, parent, title, MODEL, self.at],
            )
            .unwrap();
    }

    /// A message and its parts (each part's JSON), ids ascending as OpenCode's do.
    fn message(&mut self, session: &str, id: &str, data: &str, parts: &[&str]) {
        self.at += 10;
        self.writer
            .execute(
                "INSERT INTO message VALUES (?1, ?2, ?3, ?3, ?4)",
                rusqlite::params![id, session, self.at, data],
            )
            .unwrap();
        for (n, part) in parts.iter().enumerate() {
            self.writer
                .execute(
                    "INSERT INTO part VALUES (?1, ?2, ?3, ?4, ?4, ?5)",
                    rusqlite::params![format!("prt_{id}_{n:02}"), id, session, self.at, part],
                )
                .unwrap();
        }
    }

    fn user(&mut self, session: &str, id: &str, parts: &[&str]) {
        self.message(
            session,
            id,
            r#"{"role":"user","summary":{"diffs":[]}}"#,
            parts,
        );
    }

    fn assistant(&mut self, session: &str, id: &str, parts: &[&str]) {
        let data = r#"{"role":"assistant","providerID":"scripted","modelID":"scripted-model","finish":"stop"}"#;
        self.message(session, id, data, parts);
    }
}

fn store(path: &Path) -> (OpenCodeStore, SharedInbox, Arc<Live>) {
    let inbox: SharedInbox = Arc::new(MemoryInbox::new());
    let live = Arc::new(Live::default());
    let store = OpenCodeStore::open(path, inbox.clone(), live.clone());
    (store, inbox, live)
}

fn ids(index: &SessionIndex) -> Vec<String> {
    host_shim::harnesses::ids_of(index)
}

fn text(part: &str) -> String {
    serde_json::json!({"type": "text", "text": part}).to_string()
}

fn synthetic(part: &str) -> String {
    serde_json::json!({"type": "text", "text": part, "synthetic": true}).to_string()
}

#[test]
fn a_database_that_does_not_exist_yet_is_an_empty_store_and_is_not_made() {
    let path = scratch("missing").join("opencode").join("opencode.db");
    let (mut store, _, _) = store(&path);
    assert!(store.list_sessions().entries.is_empty());
    assert!(store.get_session("ses_1").is_none());
    assert!(store.get_surface("ses_1", 10).is_none());
    assert!(!path.exists() && !path.parent().unwrap().exists());
}

#[test]
fn sessions_are_listed_newest_first_without_the_archived_and_subagents_are_owned() {
    let mut db = Written::new("listing");
    db.session("ses_a", "Plan the garden", None);
    db.session("ses_b", "Fix the shop", None);
    db.session("ses_c", "Look something up", Some("ses_b"));
    db.session("ses_old", "Old plan", None);
    db.writer
        .execute(
            "UPDATE session SET time_archived = 1 WHERE id = 'ses_old'",
            [],
        )
        .unwrap();
    let (mut store, _, live) = store(&db.path);
    live.starts("ses_b");
    store.begin_call("ses_a");
    let index = store.list_sessions();
    assert_eq!(ids(&index), ["ses_c", "ses_b", "ses_a"]);
    let b = store.get_session("ses_b").unwrap();
    assert!(b.live);
    assert_eq!(b.origin, "user");
    assert_eq!(b.cwd.as_deref(), Some("/home/ada/shop"));
    assert_eq!(b.preset.as_deref(), Some("scripted/scripted-model"));
    let c = store.get_session("ses_c").unwrap();
    assert!(c.is_subagent() && !c.live);
    assert_eq!(c.parent_id.as_deref(), Some("ses_b"));
    assert!(store.get_session("ses_old").is_none(), "archived");
    let titles = store.title_snapshots(&["ses_a".to_string(), "nobody".to_string()]);
    assert_eq!(titles, [Some("Plan the garden".to_string()), None]);
    store.end_call();
}

#[test]
fn the_surface_starts_at_the_last_compaction_and_splits_what_the_person_did_not_type() {
    let mut db = Written::new("surface");
    db.session("ses_a", "Garden", None);
    db.user("ses_a", "msg_01", &[&text("plant the beans")]);
    db.assistant("ses_a", "msg_02", &[&text("planted")]);
    // A compaction: the person's message with a compaction part, its finished summary.
    db.user("ses_a", "msg_03", &[r#"{"type":"compaction","auto":true}"#]);
    db.message(
        "ses_a",
        "msg_04",
        r#"{"role":"assistant","providerID":"scripted","modelID":"scripted-model","summary":true,"finish":"stop","parentID":"msg_03"}"#,
        &[&text("We planted beans.")],
    );
    let frame = "Cross-session message from another session of this harness.\nfrom: ses_b\n--- message begins ---\nwater them\n--- message ends ---";
    db.user(
        "ses_a",
        "msg_05",
        &[
            &text("and now?"),
            &synthetic("Called the Read tool with the following input"),
            &synthetic(frame),
            r#"{"type":"text","text":"never sent","ignored":true}"#,
        ],
    );
    db.assistant(
        "ses_a",
        "msg_06",
        &[
            r#"{"type":"reasoning","text":"thinking"}"#,
            &text("watering"),
            r#"{"type":"tool","tool":"bash","callID":"c1","state":{"status":"completed","input":{"command":"water"}}}"#,
            r#"{"type":"tool","tool":"edit","callID":"c2","state":{"status":"error","input":{"path":"x"}}}"#,
        ],
    );
    let (mut store, _, _) = store(&db.path);
    let index = store.get_surface("ses_a", 100).unwrap();
    let seqs: Vec<u64> = index.messages.iter().map(|e| e.seq).collect();
    // msg_01 and msg_02 are before the compaction (seqs 1 and 2); msg_03 has no text.
    assert_eq!(seqs, [3, 4, 5, 6, 7]);
    assert_eq!(index.captured_through_seq, 7);
    let all = store.get_messages("ses_a", &[3, 4, 5, 6, 7]);
    let all: Vec<MessageContent> = all.into_iter().map(Option::unwrap).collect();
    assert_eq!(all[0].text, "We planted beans.");
    assert!(
        index.messages[0].replaced,
        "the summary stands for what came before"
    );
    assert_eq!(
        (all[1].source.as_str(), all[1].text.as_str()),
        ("user", "and now?")
    );
    assert!(!all[1].injected);
    assert_eq!(all[2].source, "opencode");
    assert!(all[2].injected);
    assert_eq!((all[3].text.as_str(), all[3].injected), (frame, false));
    assert_eq!(all[4].source, "model:scripted/scripted-model");
    assert_eq!(all[4].text, "watering", "no reasoning");
    assert_eq!(store.action_seqs("ses_a"), [7]);
    let actions = store.get_actions("ses_a", &[7]).remove(0);
    assert_eq!(actions.len(), 2);
    assert_eq!(actions[0].name, "bash");
    assert_eq!(actions[0].input, r#"{"command":"water"}"#);
    assert_eq!(actions[0].status, ActionStatus::Ok);
    assert_eq!(actions[1].status, ActionStatus::Error);
}

#[test]
fn what_was_read_is_kept_until_opencode_writes_and_a_bad_row_is_skipped_and_counted() {
    let mut db = Written::new("cache");
    db.session("ses_a", "Garden", None);
    db.user("ses_a", "msg_01", &[&text("hello")]);
    let (mut store, _, _) = store(&db.path);
    store.list_sessions();
    store.list_sessions();
    store.get_surface("ses_a", 10);
    store.get_surface("ses_a", 10);
    assert_eq!(
        store.reads(),
        DatabaseReads {
            listings: 1,
            surfaces: 1
        }
    );
    db.session("ses_b", "Shop", None);
    db.user("ses_a", "msg_02", &["not json", &text("again")]);
    assert_eq!(ids(&store.list_sessions()), ["ses_b", "ses_a"]);
    let index = store.get_surface("ses_a", 10).unwrap();
    assert_eq!(index.messages.len(), 2);
    assert_eq!(store.reads().listings, 2);
    assert_eq!(store.reads().surfaces, 2);
    assert_eq!(store.skipped_lines(), 1);
}

#[test]
fn reading_never_holds_up_opencode_writing_or_checkpointing() {
    let mut db = Written::new("locks");
    db.session("ses_a", "Garden", None);
    let (mut store, _, _) = store(&db.path);
    // OpenCode mid-write: the store reads what was committed, without waiting.
    db.writer.execute_batch("BEGIN IMMEDIATE").unwrap();
    db.session("ses_b", "Shop", None);
    assert_eq!(ids(&store.list_sessions()), ["ses_a"]);
    db.writer.execute_batch("COMMIT").unwrap();
    assert_eq!(ids(&store.list_sessions()), ["ses_b", "ses_a"]);
    store.get_surface("ses_b", 10);
    // The store holds no read open between questions: a full checkpoint completes.
    let (busy, _, _): (i64, i64, i64) = db
        .writer
        .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |row| {
            Ok((row.get(0)?, row.get(1)?, row.get(2)?))
        })
        .unwrap();
    assert_eq!(busy, 0, "the checkpoint was not held up");
}

#[test]
fn a_message_goes_to_a_top_level_session_and_never_to_a_subagent() {
    let mut db = Written::new("deliver");
    db.session("ses_a", "Garden", None);
    db.session("ses_b", "Shop", None);
    db.session("ses_c", "Lookup", Some("ses_b"));
    let (mut store, inbox, live) = store(&db.path);
    live.starts("ses_b");
    store.begin_call("ses_a");
    let ids = MessageIds::none();
    let queue = DeliveryMode::Queue;
    let delivered = store
        .deliver(
            &DeliveryRequest::new("ses_b", "hi", queue)
                .key("k1")
                .ids(&ids),
        )
        .unwrap();
    assert_eq!(delivered.state, DeliveryState::Waiting);
    assert_eq!(inbox.waiting("ses_b").unwrap().messages.len(), 1);
    assert!(matches!(
        store.deliver(
            &DeliveryRequest::new("ses_c", "hi", queue)
                .may_wake(true)
                .key("k2")
                .ids(&ids)
        ),
        Err(DeliveryRefusal::Rejected(_))
    ));
    assert_eq!(
        store.deliver(
            &DeliveryRequest::new("nobody", "hi", queue)
                .may_wake(true)
                .key("k3")
                .ids(&ids)
        ),
        Err(DeliveryRefusal::NotFound)
    );
    // Cold, and the call may not wake: refused; may wake: it waits for a prompt.
    assert_eq!(
        store.deliver(
            &DeliveryRequest::new("ses_a", "hi", queue)
                .key("k4")
                .ids(&ids)
        ),
        Err(DeliveryRefusal::WouldNeedWake)
    );
    store.end_call();
}

#[test]
fn a_plugin_hand_over_is_an_offer_until_the_database_shows_it() {
    let mut db = Written::new("witness");
    db.session("ses_b", "Mail", None);
    let inbox: SharedInbox = Arc::new(MemoryInbox::new());
    let sessions = PluginSessions::new(inbox.clone(), Arc::new(Live::default()))
        .recorded_in(&db.path, super::handed_over_ids);
    let frame = "Cross-session message from another session of this harness.\n\
        from-session: ses_a (\"Plan\")\ndelivery: queue\nhop: 1\nmessage-id: m-000000000001\n\
        --- message begins ---\nThe beans are in.\n--- message ends ---";
    let ids = host_shim::contract::latest::MessageIds {
        message_id: "m-000000000001".to_string(),
        in_reply_to: None,
    };
    let sent =
        SpooledMessage::new("ses_b", DeliveryMode::Queue, frame, "5:ses_ak1", false).with_ids(&ids);
    inbox.put(&sent).unwrap();
    let given = sessions.hand_over("ses_b", Moment::Idle).unwrap();
    assert_eq!(given.as_deref(), Some(frame));
    // Offered: not given again while its time runs, and still waiting to its sender.
    assert_eq!(sessions.hand_over("ses_b", Moment::Idle).unwrap(), None);
    let found = inbox.find("ses_b", "5:ses_ak1").unwrap().unwrap();
    assert_eq!(
        found.state,
        host_shim::contract::latest::DeliveryState::Waiting
    );
    // OpenCode wrote the plugin's prompt (the frame, as a part of the session's user
    // message): the next hand-over finds it there.
    db.user("ses_b", "msg_01", &[&synthetic(frame)]);
    assert_eq!(sessions.hand_over("ses_b", Moment::Idle).unwrap(), None);
    let found = inbox.find("ses_b", "5:ses_ak1").unwrap().unwrap();
    assert_eq!(
        found.state,
        host_shim::contract::latest::DeliveryState::HandedOver
    );
}

#[test]
fn the_plugin_side_registers_its_sessions_and_hands_over_what_the_moment_takes() {
    let inbox: SharedInbox = Arc::new(MemoryInbox::new());
    let live = Arc::new(Live::default());
    let sessions = PluginSessions::new(inbox.clone(), live.clone());
    sessions.open("ses_b", true).unwrap();
    assert!(live.live_sessions().contains("ses_b"));
    assert!(sessions.open("../x", true).is_err(), "not a plain name");
    let put = |body: &str, mode| {
        inbox
            .put(&SpooledMessage::new("ses_b", mode, body, "", false))
            .unwrap()
    };
    put("queued", DeliveryMode::Queue);
    let busy = [("ses_b".to_string(), Moment::Busy)];
    let never = || false;
    assert!(
        sessions
            .wait(&busy, Duration::from_millis(300), &never)
            .is_empty()
    );
    assert_eq!(sessions.hand_over("ses_b", Moment::Busy).unwrap(), None);
    put("steered", DeliveryMode::Steer);
    assert_eq!(
        sessions.wait(&busy, Duration::from_secs(5), &never),
        ["ses_b"]
    );
    assert_eq!(
        sessions
            .hand_over("ses_b", Moment::Busy)
            .unwrap()
            .as_deref(),
        Some("steered")
    );
    let idle = [("ses_b".to_string(), Moment::Idle)];
    assert_eq!(
        sessions.wait(&idle, Duration::from_secs(5), &never),
        ["ses_b"]
    );
    assert_eq!(
        sessions
            .hand_over("ses_b", Moment::Idle)
            .unwrap()
            .as_deref(),
        Some("queued")
    );
    assert_eq!(sessions.hand_over("ses_b", Moment::Prompt).unwrap(), None);
    // A person holding inbound: nothing is taken, and a wait does not end for it.
    put("held", DeliveryMode::Steer);
    inbox.set_inbound("ses_b", InboundPolicy::Hold).unwrap();
    assert!(
        sessions
            .wait(&idle, Duration::from_millis(300), &never)
            .is_empty()
    );
    assert_eq!(sessions.hand_over("ses_b", Moment::Prompt).unwrap(), None);
    // An interrupted wait ends at once; so does every wait once the plugin is gone,
    // and its sessions are no longer live.
    let started = std::time::Instant::now();
    sessions.wait(&idle, Duration::from_secs(30), &|| true);
    assert!(started.elapsed() < Duration::from_secs(5));
    let closing = std::thread::scope(|scope| {
        let waiting = scope.spawn(|| {
            let started = std::time::Instant::now();
            sessions.wait(&idle, Duration::from_secs(30), &never);
            started.elapsed()
        });
        std::thread::sleep(Duration::from_millis(300));
        sessions.close();
        waiting.join().unwrap()
    });
    assert!(closing < Duration::from_secs(5), "{closing:?}");
    assert!(sessions.open_sessions().is_empty());
    assert!(live.live_sessions().is_empty(), "no longer live");
    assert!(sessions.open("ses_b", true).is_err());
}

#[test]
fn a_cold_session_is_woken_by_the_wake_command_when_the_call_may_wake() {
    let mut db = Written::new("wake");
    db.session("ses_a", "Garden", None);
    db.session("ses_b", "Shop", None);
    let out = db.path.parent().unwrap().join("woken.json");
    let wake = WakeCommand::parse(&format!("cp {{message_file}} {}", out.display())).unwrap();
    let (store, _, live) = store(&db.path);
    let mut store = store.wake_command(Some(wake));
    store.begin_call("ses_a");
    let ids = MessageIds::none();
    let woke = store
        .deliver(
            &DeliveryRequest::new("ses_b", "wake up", DeliveryMode::Queue)
                .may_wake(true)
                .key("k1")
                .ids(&ids),
        )
        .unwrap();
    // Started, not yet seen running: never "woke".
    assert!(!woke.woke && woke.state == DeliveryState::WakeStarted);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !out.exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let message: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(message["body"], "wake up");
    // A live session is not woken: its plugin hands the message over.
    live.starts("ses_b");
    store.end_call();
    store.begin_call("ses_a");
    let later = store
        .deliver(
            &DeliveryRequest::new("ses_b", "again", DeliveryMode::Queue)
                .may_wake(true)
                .key("k2")
                .ids(&ids),
        )
        .unwrap();
    assert!(!later.woke);
    store.end_call();
}
