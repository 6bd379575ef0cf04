//! A `~/.gemini` for the benchmarks: 1,000 sessions of 3 MB each in Gemini CLI 0.61.0's
//! shape (`tmp/<project>/chats/session-<time>-<id8>.jsonl`, a header, Gemini's context,
//! then turns each written as Gemini writes them: the model's message twice, once its
//! tool call is done), each tenth with a subagent, written once under the temporary
//! folder, then reused.

use host_shim_testkit::corpus::{SESSIONS, fill_with_turns, tool_output, written_once};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Each tenth session has a subagent.
pub const SUBAGENTS: usize = SESSIONS / 10;

pub fn id(n: usize) -> String {
    format!("9e3a{n:04x}-0000-4000-8000-{n:012x}")
}

fn subagent_id(n: usize) -> String {
    format!("5ab2{n:04x}-0000-4000-8000-{n:012x}")
}

fn line(out: &mut impl Write, value: serde_json::Value) -> usize {
    let text = value.to_string();
    writeln!(out, "{text}").unwrap();
    text.len() + 1
}

/// One session of about 3 MB in project `project`.
pub fn write_session(chats: &Path, n: usize) {
    let id = id(n);
    let day = 1 + n % 28;
    let at = format!("2026-11-{day:02}T10:00:00.000Z");
    let file = std::fs::File::create(
        chats.join(format!("session-2026-11-{day:02}T10-00-{}.jsonl", &id[..8])),
    )
    .unwrap();
    let mut out = std::io::BufWriter::new(file);
    let mut written = line(
        &mut out,
        serde_json::json!({"sessionId": id, "startTime": at, "kind": "main"}),
    );
    let context = format!(
        "<session_context>\n{}\n</session_context>",
        "c".repeat(4 << 10)
    );
    written += line(
        &mut out,
        serde_json::json!({"$set": {"messages": [
        {"id": "ctx", "timestamp": at, "type": "user", "content": [{"text": context}]}]}}),
    );
    let output = tool_output();
    fill_with_turns(written, |turn| {
        let call = serde_json::json!({"name": "run_shell_command",
            "args": {"command": format!("cargo test -p module{turn}")}, "status": "success"});
        [
            serde_json::json!({"id": format!("u{turn}"), "type": "user",
            "content": [{"text": format!("Turn {turn}: please look at module {turn}")}]}),
            serde_json::json!({"id": format!("g{turn}"), "type": "gemini",
            "content": "", "model": "gemini-2.5-pro"}),
            serde_json::json!({"id": format!("g{turn}"), "type": "gemini",
            "content": "", "model": "gemini-2.5-pro", "toolCalls": [call]}),
            serde_json::json!({"id": format!("r{turn}"), "type": "user",
            "content": [{"functionResponse": {"name": "run_shell_command",
                "response": {"output": output}}}]}),
            serde_json::json!({"id": format!("a{turn}"), "type": "gemini",
            "content": format!("Module {turn} is fixed: {}", "a".repeat(600)), "model": "gemini-2.5-pro"}),
        ]
        .into_iter()
        .map(|record| line(&mut out, record))
        .sum()
    });
    if n.is_multiple_of(10) {
        let folder = chats.join(&id);
        std::fs::create_dir_all(&folder).unwrap();
        let sub = subagent_id(n);
        let mut out = std::fs::File::create(folder.join(format!("{sub}.jsonl"))).unwrap();
        line(
            &mut out,
            serde_json::json!({"sessionId": sub, "startTime": at, "kind": "subagent",
            "directories": [format!("/home/bench/project-{}", n % 50)]}),
        );
        line(
            &mut out,
            serde_json::json!({"id": "s1", "type": "user", "content": [{"text": "Check the build"}]}),
        );
        line(
            &mut out,
            serde_json::json!({"id": "s2", "type": "gemini", "content": "It builds.", "model": "gemini-2.5-flash"}),
        );
    }
}

/// The `~/.gemini` of 1,000 sessions in 50 projects, written on the first run.
pub fn gemini_home() -> PathBuf {
    written_once("gemini-home", |root| {
        let mut projects = serde_json::Map::new();
        for project in 0..50 {
            let name = format!("project-{project}");
            projects.insert(
                format!("/home/bench/{name}"),
                serde_json::Value::from(name.as_str()),
            );
            std::fs::create_dir_all(root.join("tmp").join(&name).join("chats")).unwrap();
        }
        for n in 0..SESSIONS {
            write_session(
                &root
                    .join("tmp")
                    .join(format!("project-{}", n % 50))
                    .join("chats"),
                n,
            );
        }
        std::fs::write(
            root.join("projects.json"),
            serde_json::json!({"projects": projects}).to_string(),
        )
        .unwrap();
    })
}
