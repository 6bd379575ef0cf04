//! The OpenClaw store on the agent database the real OpenClaw 2026.9.6 wrote
//! (`host-shim/harnesses/openclaw/fixtures/2026.9.6/agent.sql`: the tables the store reads, generated
//! by `host-shim/harnesses/openclaw/suite/generate_fixtures.py` against the project's scripted chat
//! completions endpoint): a session that ran a shell command, one with a 20,000-char
//! prompt (stored zstd-compressed), one compacted after two turns, one that spawned a
//! subagent, as the binary writes them, through the plugin.

use host_shim::contract::latest::ActionStatus;
use host_shim::{SessionQuery, StateDir};
use host_shim_openclaw::OpenClawStore;
use std::path::{Path, PathBuf};
use std::sync::Arc;

const TESTS: &str = "0c1a7e55-7e57-4000-8000-000000000001";
const BIG: &str = "0c1a7e55-b16b-4000-8000-000000000002";
const COMPACTED: &str = "0c1a7e55-c0c0-4000-8000-000000000003";
const LEAD: &str = "0c1a7e55-1ead-4000-8000-000000000004";
/// LEAD's subagent (its session id; its key is `agent:main:subagent:…`).
const COUNTER: &str = "080b5ece-67d8-4986-91f4-4c8cc6a028fd";

/// An OpenClaw state folder holding the fixture as agent `main`'s database.
fn state(name: &str) -> PathBuf {
    let dir = host_shim_testkit::scratch("openclaw", name);
    let agent = dir.join("openclaw/agents/main/agent");
    std::fs::create_dir_all(&agent).unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/2026.9.6/agent.sql");
    let sql = std::fs::read_to_string(fixture).unwrap();
    let db = rusqlite::Connection::open(agent.join("openclaw-agent.sqlite")).unwrap();
    db.execute_batch(&sql).unwrap();
    dir
}

fn store(dir: &Path) -> OpenClawStore {
    let inbox = Arc::new(StateDir::open(&dir.join("state")).unwrap());
    let presence = Arc::new(host_shim::LocalPresence::open(&dir.join("state")).unwrap());
    OpenClawStore::open(&dir.join("openclaw"), inbox, presence)
}

fn call(
    store: OpenClawStore,
    caller: &str,
    tool: &str,
    arguments: &str,
) -> (String, OpenClawStore) {
    host_shim_testkit::call_through_plugin(store, caller, "call-1", tool, arguments)
}

#[test]
fn the_real_sessions_are_listed_with_their_first_prompts_and_the_subagent_with_its_owner() {
    let dir = state("list");
    let (listing, store) = call(store(&dir), TESTS, "sessions_list", r#"{"scope": "all"}"#);
    for id in [TESTS, BIG, COMPACTED, LEAD] {
        host_shim_testkit::has(
            &listing,
            &format!(
                "- {id} [cold, top-level] | cwd=/tmp/openclaw-fixtures/w | preset=scripted/scripted-model"
            ),
        );
    }
    // The label sessions_spawn gave it, its owner the session that spawned it.
    host_shim_testkit::has(
        &listing,
        &format!(
            "- {COUNTER} [cold, subagent] | cwd=/tmp/openclaw-fixtures/w | preset=scripted/scripted-model | owner={LEAD} | not messageable\n  counter"
        ),
    );
    // Titles: the first prompt, not OpenClaw's display name for an explicit session.
    host_shim_testkit::has(&listing, "\n  Check the tests");
    host_shim_testkit::has(&listing, "\n  Delegate the count");
    // A prompt OpenClaw stored compressed is still the title.
    host_shim_testkit::has(&listing, "\n  Summarise this log: lorem ipsum");
    host_shim_testkit::lacks(&listing, "explicit:");
    host_shim_testkit::has(&listing, "5 of 5 considered sessions");
    // Every row and event the real binary wrote read, the compressed ones too.
    assert_eq!(host_shim::Store::skipped_lines(&store), 0);
}

#[test]
fn a_call_through_tool_search_and_a_shell_command_are_actions_that_ended_as_recorded() {
    let dir = state("actions");
    let mut store = store(&dir);
    let seqs = store.action_seqs(TESTS);
    let exec = store.get_actions(TESTS, &seqs).concat();
    assert_eq!(exec.len(), 1, "{exec:?}");
    assert_eq!(exec[0].name, "exec");
    host_shim_testkit::has(&exec[0].input, "echo tests pass");
    assert_eq!(exec[0].status, ActionStatus::Ok);
    // The lead called sessions_spawn through Tool Search's tool_call; its result is
    // one of the compressed rows.
    let seqs = store.action_seqs(LEAD);
    let spawn = store.get_actions(LEAD, &seqs).concat();
    assert_eq!(spawn.len(), 1, "{spawn:?}");
    assert_eq!(spawn[0].name, "sessions_spawn");
    host_shim_testkit::has(&spawn[0].input, "\"label\":\"counter\"");
    assert_eq!(spawn[0].status, ActionStatus::Ok);
}

#[test]
fn a_compressed_prompt_reads_whole_and_a_compacted_session_reads_as_its_model_sees_it() {
    let dir = state("read");
    let (read, store) = call(
        store(&dir),
        TESTS,
        "sessions_read",
        &format!(r#"{{"session_id": "{BIG}"}}"#),
    );
    host_shim_testkit::has(&read, "Summarise this log: lorem ipsum dolor");
    host_shim_testkit::has(&read, "A long log of lorem ipsum.");
    let (read, _) = call(
        store,
        TESTS,
        "sessions_read",
        &format!(r#"{{"session_id": "{COMPACTED}", "include_injected": true}}"#),
    );
    // The summary stands for what it replaced; the second answer it kept.
    host_shim_testkit::has(
        &read,
        "(seq 3, openclaw:compaction, harness-injected, replaced)",
    );
    // The first turn is no message of its own any more (the summary may quote it).
    assert!(
        !read.contains("(seq 1,") && !read.contains("(seq 2,"),
        "{read}"
    );
    host_shim_testkit::has(&read, "Second answer.");
}

#[test]
fn a_top_level_session_takes_a_message_and_a_subagent_does_not() {
    let dir = state("send");
    let (sent, store) = call(
        store(&dir),
        TESTS,
        "sessions_send",
        &format!(r#"{{"session_id": "{LEAD}", "message": "The count is in."}}"#),
    );
    host_shim_testkit::begins(&sent, &format!("accepted for {LEAD} | mode=queue"));
    let waiting = store.inbox().waiting(LEAD).unwrap();
    assert_eq!(waiting.messages.len(), 1);
    assert!(
        waiting.messages[0]
            .message
            .body
            .contains("The count is in.")
    );
    let (refused, _) = call(
        store,
        TESTS,
        "sessions_send",
        &format!(r#"{{"session_id": "{COUNTER}", "message": "hi"}}"#),
    );
    host_shim_testkit::has(&refused, "refused");
    host_shim_testkit::has(&refused, "subagent");
}

#[test]
fn a_prompt_hooks_hand_over_is_the_plugins_word_and_an_idle_turns_waits_for_the_record() {
    use host_shim::plugin_session::{Moment, PluginSessions};
    use std::time::Duration;
    let dir = state("witness");
    let send = |store, words: &str| {
        let arguments = format!(r#"{{"session_id": "{LEAD}", "message": "{words}"}}"#);
        host_shim_testkit::call_through_plugin(store, TESTS, words, "sessions_send", &arguments).1
    };
    let store = send(store(&dir), "First.");
    let inbox = store.inbox().clone();
    let presence = Arc::new(host_shim::LocalPresence::open(&dir.join("state")).unwrap());
    let sessions = PluginSessions::new(inbox.clone(), presence)
        .recorded_in(&dir.join("openclaw"), host_shim_openclaw::handed_over_ids)
        .unrecorded_at(&[Moment::Prompt, Moment::Busy]);
    let nothing_shown = &mut |_: &[String]| Ok(Default::default());

    // At a prompt: handed over as the plugin answers (OpenClaw keeps no hook's text), so
    // it never waits again.
    let given = sessions.hand_over(LEAD, Moment::Prompt).unwrap().unwrap();
    host_shim_testkit::has(&given, "First.");
    let settled = inbox.settle(LEAD, Duration::ZERO, nothing_shown).unwrap();
    assert!(settled.waiting_again.is_empty());

    // For an idle session's turn: an offer, given again once its time is up and the
    // record does not show it...
    let store = send(store, "Second.");
    let offered = sessions.hand_over(LEAD, Moment::Idle).unwrap().unwrap();
    host_shim_testkit::has(&offered, "Second.");
    assert_eq!(sessions.hand_over(LEAD, Moment::Prompt).unwrap(), None);
    let settled = inbox.settle(LEAD, Duration::ZERO, nothing_shown).unwrap();
    assert_eq!(settled.waiting_again.len(), 1);
    assert_eq!(
        sessions.hand_over(LEAD, Moment::Idle).unwrap(),
        Some(offered.clone())
    );
    // ...and handed over once OpenClaw records it as the turn's message, which any
    // later hand-over (a prompt's too) finds.
    let id = offered
        .split("message-id: ")
        .nth(1)
        .unwrap()
        .lines()
        .next()
        .unwrap();
    let event = serde_json::json!({"type": "message", "id": "turn",
        "message": {"role": "user", "content": offered}});
    let db = dir.join("openclaw/agents/main/agent/openclaw-agent.sqlite");
    (rusqlite::Connection::open(&db).unwrap())
        .execute(
            "INSERT INTO transcript_events (session_id, seq, event_json, created_at) \
             VALUES (?1, 1000, ?2, 0)",
            (LEAD, event.to_string()),
        )
        .unwrap();
    let shown = host_shim_openclaw::handed_over_ids(&dir.join("openclaw"), LEAD).unwrap();
    assert!(shown.contains(id), "{shown:?}");
    assert_eq!(sessions.hand_over(LEAD, Moment::Prompt).unwrap(), None);
    let settled = inbox.settle(LEAD, Duration::ZERO, nothing_shown).unwrap();
    assert!(settled.waiting_again.is_empty(), "handed over, not offered");
    assert!(store.inbox().waiting(LEAD).unwrap().messages.is_empty());
}

/// Rows written here in the real database's layout, for what the real run did not make:
/// a second agent's database, a cron job's session, a hook's, an archived one, one
/// spawned by a session no longer there.
fn with_more_agents(dir: &Path) {
    let main = dir.join("openclaw/agents/main/agent/openclaw-agent.sqlite");
    let db = rusqlite::Connection::open(&main).unwrap();
    // The foreign keys name tables the fixture does not carry.
    db.execute_batch("PRAGMA foreign_keys=OFF;").unwrap();
    let session = |key: &str, id: &str, via: &str, hook: Option<&str>, archived: bool| {
        db.execute(
            "INSERT INTO session_nodes (session_key, current_session_id, entry_json, updated_at, \
             created_at, created_via, archived_at) VALUES (?1, ?2, '{}', 1, 1796000000000, ?3, ?4)",
            rusqlite::params![key, id, via, archived.then_some(1796000000001i64)],
        )
        .unwrap();
        db.execute(
            "INSERT INTO session_windows (session_id, session_key, created_at, updated_at, \
             hook_external_content_source) VALUES (?1, ?2, 1796000000000, 1, ?3)",
            rusqlite::params![id, key, hook],
        )
        .unwrap();
    };
    session(
        "agent:main:cron:nightly",
        "c0000000-0000-4000-8000-00000000c001",
        "cron",
        None,
        false,
    );
    session(
        "hook:webhook:1",
        "c0000000-0000-4000-8000-00000000c002",
        "internal",
        Some("webhook"),
        false,
    );
    session(
        "agent:main:old",
        "c0000000-0000-4000-8000-00000000c003",
        "operator",
        None,
        true,
    );
    session(
        "agent:main:subagent:orphan",
        "c0000000-0000-4000-8000-00000000c004",
        "spawn",
        None,
        false,
    );
    drop(db);
    let ops = dir.join("openclaw/agents/ops/agent");
    std::fs::create_dir_all(&ops).unwrap();
    let sql = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/2026.9.6/agent.sql"),
    )
    .unwrap();
    let db = rusqlite::Connection::open(ops.join("openclaw-agent.sqlite")).unwrap();
    db.execute_batch(&sql).unwrap();
    db.execute_batch(
        "DELETE FROM transcript_events; DELETE FROM session_windows; DELETE FROM session_nodes;",
    )
    .unwrap();
    db.execute(
        "INSERT INTO session_nodes (session_key, current_session_id, entry_json, updated_at, \
         created_at, label) VALUES ('agent:ops:main', 'c0000000-0000-4000-8000-0000000000a1', '{}', \
         1, 1796000000000, 'Ops desk')",
        [],
    )
    .unwrap();
}

#[test]
fn every_agents_sessions_are_listed_as_what_made_them_an_archived_one_not() {
    let dir = state("agents");
    with_more_agents(&dir);
    let (listing, _) = call(store(&dir), TESTS, "sessions_list", r#"{"scope": "all"}"#);
    host_shim_testkit::has(
        &listing,
        "- c0000000-0000-4000-8000-0000000000a1 [cold, top-level]\n  Ops desk",
    );
    host_shim_testkit::has(
        &listing,
        "- c0000000-0000-4000-8000-00000000c001 [cold, top-level]\n  cron job",
    );
    assert!(
        listing
            .contains("- c0000000-0000-4000-8000-00000000c002 [cold, top-level]\n  hook (webhook)"),
        "{listing}"
    );
    host_shim_testkit::lacks(&listing, "c0000000-0000-4000-8000-00000000c003");
    // Spawned, its owner gone: a subagent still, never messageable (SPEC: a session is
    // a subagent when it has a parent or its origin is `subagent`).
    let orphan = "c0000000-0000-4000-8000-00000000c004";
    host_shim_testkit::has(&listing, &format!("- {orphan} [cold, subagent]"));
    host_shim_testkit::has(&listing, "9 of 9 considered sessions");
    let arguments = format!(r#"{{"session_id": "{orphan}", "message": "hi"}}"#);
    let (refused, _) = call(store(&dir), TESTS, "sessions_send", &arguments);
    host_shim_testkit::has(&refused, "refused");
    host_shim_testkit::has(&refused, "subagent");
}

#[test]
fn a_state_folder_not_there_yet_is_an_empty_store() {
    let dir = host_shim_testkit::scratch("openclaw", "none");
    let (listing, store) = call(store(&dir), TESTS, "sessions_list", "{}");
    host_shim_testkit::has(&listing, "0 of 0 considered sessions");
    assert!(
        !dir.join("openclaw").exists(),
        "the store never makes OpenClaw's folder"
    );
    assert_eq!(host_shim::Store::skipped_lines(&store), 0);
}

#[test]
fn an_event_that_does_not_read_is_skipped_and_counted_and_the_rest_read() {
    let dir = state("broken");
    let db =
        rusqlite::Connection::open(dir.join("openclaw/agents/main/agent/openclaw-agent.sqlite"))
            .unwrap();
    db.execute_batch("PRAGMA foreign_keys=OFF;").unwrap();
    // The person's first prompt as text that is not JSON, the compressed prompt of BIG
    // declared one byte longer than it is.
    db.execute(
        "UPDATE transcript_events SET event_json = 'not json {' WHERE session_id = ?1 AND seq = 4",
        [TESTS],
    )
    .unwrap();
    db.execute(
        "UPDATE transcript_events SET event_utf8_bytes = event_utf8_bytes + 1 \
         WHERE session_id = ?1 AND event_zstd IS NOT NULL",
        [BIG],
    )
    .unwrap();
    drop(db);
    let (read, store) = call(
        store(&dir),
        TESTS,
        "sessions_read",
        &format!(r#"{{"session_id": "{TESTS}"}}"#),
    );
    host_shim_testkit::lacks(&read, "Check the tests");
    host_shim_testkit::has(&read, "The tests pass.");
    let (read, store) = call(
        store,
        TESTS,
        "sessions_read",
        &format!(r#"{{"session_id": "{BIG}"}}"#),
    );
    host_shim_testkit::lacks(&read, "lorem ipsum dolor");
    host_shim_testkit::has(&read, "A long log of lorem ipsum.");
    assert_eq!(host_shim::Store::skipped_lines(&store), 2);
}
