//! An OpenCode database for the benchmarks: 1,000 sessions of about 3 MB each in
//! OpenCode 1.18.33's table layout (the columns the store reads and the ones it
//! requires), written once under the temporary folder in WAL mode, then reused.

use std::path::PathBuf;

pub const SESSIONS: usize = 1_000;
pub const SESSION_BYTES: usize = 3 << 20;

pub fn id(n: usize) -> String {
    format!("ses_bench{n:05}aaaaaaaaaaaaaaaa")
}

const SCHEMA: &str = "
PRAGMA journal_mode = WAL;
CREATE TABLE session (id text PRIMARY KEY, project_id text NOT NULL, parent_id text,
  slug text NOT NULL, directory text NOT NULL, title text NOT NULL, version text NOT NULL,
  model text, time_created integer NOT NULL, time_updated integer NOT NULL,
  time_compacting integer, time_archived integer);
CREATE TABLE message (id text PRIMARY KEY, session_id text NOT NULL,
  time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL);
CREATE TABLE part (id text PRIMARY KEY, message_id text NOT NULL, session_id text NOT NULL,
  time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL);
CREATE INDEX message_session_time_created_id_idx ON message (session_id, time_created, id);
CREATE INDEX part_message_id_id_idx ON part (message_id, id);
CREATE INDEX part_session_idx ON part (session_id);
CREATE INDEX session_parent_idx ON session (parent_id);
";

/// One session's turns: the person's prompt, the model's shell call with a large
/// output, then its answer, until the session holds about 3 MB.
fn write_session(db: &rusqlite::Transaction<'_>, n: usize) {
    let session = id(n);
    let created = 1_796_000_000_000i64 + n as i64 * 60_000;
    db.execute(
        "INSERT INTO session VALUES (?1, 'global', NULL, 'slug', ?2, ?3, '1.18.33', \
         '{\"id\":\"bench-model\",\"providerID\":\"bench\"}', ?4, ?4, NULL, NULL)",
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
    let output = "o".repeat(16 << 10);
    let (mut written, mut turn, mut at) = (0, 0, created);
    while written < SESSION_BYTES {
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
        written += call.len() + said.len() + text.len() + 200;
        turn += 1;
    }
}

/// The database of 1,000 sessions, written on the first run.
pub fn opencode_db() -> PathBuf {
    let root = std::env::temp_dir().join("session-tools-bench-opencode");
    let done = root.join(".complete");
    let path = root.join("opencode.db");
    if !done.exists() {
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        let mut db = rusqlite::Connection::open(&path).unwrap();
        db.execute_batch(SCHEMA).unwrap();
        let writing = db.transaction().unwrap();
        for n in 0..SESSIONS {
            write_session(&writing, n);
        }
        writing.commit().unwrap();
        db.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);")
            .unwrap();
        std::fs::write(&done, "").unwrap();
    }
    path
}
