//! An OpenCode database for the benchmarks: 1,000 sessions of about 3 MB each in the
//! table layout the real OpenCode 1.18.33 wrote (the fixture's), written once under the
//! temporary folder in WAL mode, then reused.

use host_shim_testkit::corpus::{fill_with_turns, tool_output, write_database, written_once};
use std::path::PathBuf;

pub fn id(n: usize) -> String {
    format!("ses_bench{n:05}aaaaaaaaaaaaaaaa")
}

/// What the real OpenCode 1.18.33 wrote (its session, message and part tables), for
/// their layout.
const FIXTURE: &str = include_str!("../../fixtures/1.18.33/opencode.sql");

/// One session's turns: the person's prompt, the model's shell call with a large
/// output, then its answer, until the session holds about 3 MB.
fn write_session(db: &rusqlite::Transaction<'_>, n: usize) {
    let session = id(n);
    let created = 1_796_000_000_000i64 + n as i64 * 60_000;
    db.execute(
        "INSERT INTO session (id, project_id, slug, directory, title, version, model, \
         time_created, time_updated) VALUES (?1, 'global', 'slug', ?2, ?3, '1.18.33', \
         '{\"id\":\"bench-model\",\"providerID\":\"bench\"}', ?4, ?4)",
        rusqlite::params![
            session,
            format!("/home/bench/project-{}", n % 50),
            format!("Session {n}"),
            created
        ],
    )
    .unwrap();
    let mut message = db
        .prepare_cached("INSERT INTO message VALUES (?1, ?2, ?3, ?3, ?4)")
        .unwrap();
    let mut part = db
        .prepare_cached("INSERT INTO part VALUES (?1, ?2, ?3, ?4, ?4, ?5)")
        .unwrap();
    let output = tool_output();
    let mut at = created;
    fill_with_turns(0, |turn| {
        let prompt = format!("msg_{n:05}_{turn:05}_a");
        let answer = format!("msg_{n:05}_{turn:05}_b");
        at += 10;
        message
            .execute(rusqlite::params![prompt, session, at, r#"{"role":"user"}"#])
            .unwrap();
        let text =
            format!(r#"{{"type":"text","text":"Turn {turn}: please look at module {turn}"}}"#);
        part.execute(rusqlite::params![
            format!("prt_{prompt}_0"),
            prompt,
            session,
            at,
            text
        ])
        .unwrap();
        at += 10;
        message
            .execute(rusqlite::params![
                answer,
                session,
                at,
                r#"{"role":"assistant","providerID":"bench","modelID":"bench-model","finish":"stop"}"#
            ])
            .unwrap();
        let call = format!(
            r#"{{"type":"tool","tool":"bash","callID":"c{turn}","state":{{"status":"completed","input":{{"command":"cargo test -p module{turn}"}},"output":"{output}"}}}}"#
        );
        let said = format!(
            r#"{{"type":"text","text":"Module {turn} is fixed: {}"}}"#,
            "a".repeat(600)
        );
        part.execute(rusqlite::params![
            format!("prt_{answer}_0"),
            answer,
            session,
            at,
            call
        ])
        .unwrap();
        part.execute(rusqlite::params![
            format!("prt_{answer}_1"),
            answer,
            session,
            at,
            said
        ])
        .unwrap();
        call.len() + said.len() + text.len() + 200
    });
}

/// The database of 1,000 sessions, written on the first run.
pub fn opencode_db() -> PathBuf {
    let root = written_once("opencode", |root| {
        write_database(
            &root.join("opencode.db"),
            FIXTURE,
            "DELETE FROM part; DELETE FROM message; DELETE FROM session;",
            write_session,
        );
    });
    root.join("opencode.db")
}
