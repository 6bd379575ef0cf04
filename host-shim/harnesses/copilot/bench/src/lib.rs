//! A COPILOT_HOME for the benchmarks: 1,000 sessions of 3 MB each in Copilot CLI
//! 1.0.102's shape (`session-state/<id>/events.jsonl` and `workspace.yaml`), each with
//! one subagent (its events in the session's stream, its model requests in the session
//! store `session-store.db`), written once under the temporary folder, then reused.

use host_shim_testkit::corpus::{SESSIONS, fill_with_turns, tool_output, written_once};
use std::io::Write;
use std::path::{Path, PathBuf};

pub fn id(n: usize) -> String {
    format!("c0b1{n:04x}-0000-4000-8000-{n:012x}")
}

/// The subagent of session `n`.
pub fn subagent_id(n: usize) -> String {
    format!("5ab1{n:04x}-0000-4000-8000-{n:012x}")
}

/// One session of about 3 MB: its start, then turns of the person's prompt (with the
/// time Copilot adds), the system prompt Copilot writes each turn, a shell call with a
/// large result and the model's answer.
pub fn write_session(folder: &Path, n: usize) {
    let id = id(n);
    let cwd = format!("/home/bench/project-{}", n % 50);
    std::fs::create_dir_all(folder).unwrap();
    std::fs::write(
        folder.join("workspace.yaml"),
        format!(
            "id: {id}\ncwd: {cwd}\nclient_name: github/cli\nname: Session {n}\nuser_named: false\n\
             summary_count: 0\nfork_count: 0\ncreated_at: 2026-11-{:02}T10:00:00.000Z\n",
            1 + n % 28
        ),
    )
    .unwrap();
    let file = std::fs::File::create(folder.join("events.jsonl")).unwrap();
    let mut out = std::io::BufWriter::new(file);
    let line = |out: &mut std::io::BufWriter<std::fs::File>, kind: &str, data: String| {
        let event = format!(
            r#"{{"type":"{kind}","data":{data},"id":"e","timestamp":"2026-11-{:02}T10:00:00.000Z","parentId":null}}"#,
            1 + n % 28
        );
        writeln!(out, "{event}").unwrap();
        event.len() + 1
    };
    let mut written = line(
        &mut out,
        "session.start",
        format!(
            r#"{{"sessionId":"{id}","version":1,"producer":"copilot-agent","copilotVersion":"1.0.102","startTime":"2026-11-{:02}T10:00:00.000Z","selectedModel":"gpt-5.2","context":{{"cwd":"{cwd}"}}}}"#,
            1 + n % 28
        ),
    );
    // Its subagent, early in the stream (as a first turn's delegation is).
    let sub = subagent_id(n);
    for (kind, data) in [
        (
            "subagent.started",
            format!(
                r#"{{"toolCallId":"call_sub","agentDisplayName":"checker","agentDescription":"check module {n}","model":"gpt-5.2-mini"}}"#
            ),
        ),
        (
            "user.message",
            format!(r#"{{"content":"Check module {n}","source":"agent-{id}"}}"#),
        ),
        (
            "assistant.message",
            r#"{"model":"gpt-5.2-mini","content":"Checked.","toolRequests":[]}"#.to_string(),
        ),
        (
            "subagent.completed",
            r#"{"toolCallId":"call_sub"}"#.to_string(),
        ),
    ] {
        let event = format!(
            r#"{{"type":"{kind}","data":{data},"agentId":"{sub}","id":"e","timestamp":"2026-11-{:02}T10:00:01.000Z","parentId":null}}"#,
            1 + n % 28
        );
        writeln!(out, "{event}").unwrap();
        written += event.len() + 1;
    }
    let system = "s".repeat(20 << 10);
    let output = tool_output();
    fill_with_turns(written, |turn| {
        line(
            &mut out,
            "user.message",
            format!(
                r#"{{"content":"Turn {turn}: please look at module {turn}","transformedContent":"<current_datetime>2026-11-02T10:00:00.000+00:00</current_datetime>\n\nTurn {turn}: please look at module {turn}"}}"#
            ),
        ) + line(
            &mut out,
            "system.message",
            format!(r#"{{"role":"system","content":"{system}"}}"#),
        ) + line(
            &mut out,
            "assistant.message",
            format!(
                r#"{{"model":"gpt-5.2","content":"","toolRequests":[{{"toolCallId":"call_{turn}","name":"bash","arguments":{{"command":"cargo test -p module{turn}","description":"test"}}}}]}}"#
            ),
        ) + line(
            &mut out,
            "tool.execution_complete",
            format!(
                r#"{{"toolCallId":"call_{turn}","success":true,"result":{{"content":"{output}"}}}}"#
            ),
        ) + line(
            &mut out,
            "assistant.message",
            format!(
                r#"{{"model":"gpt-5.2","content":"Module {turn} is fixed: {}","toolRequests":[]}}"#,
                "a".repeat(600)
            ),
        )
    });
}

/// Copilot's session store: a model request of each session and of its subagent, in
/// the columns Copilot CLI 1.0.102 writes that the store reads.
pub fn write_session_store(root: &Path) {
    let db = rusqlite::Connection::open(root.join("session-store.db")).unwrap();
    db.execute_batch(
        "CREATE TABLE assistant_usage_events (id INTEGER PRIMARY KEY AUTOINCREMENT, \
         session_id TEXT NOT NULL, turn_index INTEGER, agent_id TEXT, parent_tool_call_id TEXT, \
         model TEXT NOT NULL, created_at TEXT DEFAULT (datetime('now'))); BEGIN;",
    )
    .unwrap();
    for n in 0..SESSIONS {
        let day = 1 + n % 28;
        db.execute(
            "INSERT INTO assistant_usage_events (session_id, turn_index, agent_id, parent_tool_call_id, model, created_at) \
             VALUES (?1, 0, NULL, NULL, 'gpt-5.2', ?2), (?1, 0, ?3, 'call_sub', 'gpt-5.2-mini', ?4)",
            (
                id(n),
                format!("2026-11-{day:02}T10:00:00.500Z"),
                subagent_id(n),
                format!("2026-11-{day:02}T10:00:01.000Z"),
            ),
        )
        .unwrap();
    }
    db.execute_batch("COMMIT;").unwrap();
}

/// The COPILOT_HOME of 1,000 sessions, written on the first run.
pub fn copilot_home() -> PathBuf {
    written_once("copilot-home-v2", |root| {
        for n in 0..SESSIONS {
            write_session(&root.join("session-state").join(id(n)), n);
        }
        write_session_store(root);
    })
}
