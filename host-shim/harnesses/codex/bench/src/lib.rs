//! A CODEX_HOME for the benchmarks: 1,000 threads of 3 MB each in Codex 0.169.0's
//! rollout shape, written once under the temporary folder, then reused.

use host_shim_testkit::corpus::{SESSIONS, fill_with_turns, tool_output, written_once};
use std::io::Write;
use std::path::{Path, PathBuf};

pub fn id(n: usize) -> String {
    format!("01a2{n:04x}-0000-7000-8000-{n:012x}")
}

/// One rollout of about 3 MB: `session_meta` (with long base instructions, as Codex
/// writes them), then turns of a turn context, the person's prompt, a shell call with
/// a large output and the model's answer.
pub fn write_rollout(path: &Path, n: usize) {
    let id = id(n);
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut ordinal = 0u64;
    let mut line = |out: &mut std::io::BufWriter<std::fs::File>, kind: &str, payload: String| {
        let record = format!(
            r#"{{"timestamp":"2026-11-{:02}T10:00:00.000Z","ordinal":{ordinal},"type":"{kind}","payload":{payload}}}"#,
            1 + n % 28
        );
        ordinal += 1;
        writeln!(out, "{record}").unwrap();
        record.len() + 1
    };
    let cwd = format!("/home/bench/project-{}", n % 50);
    let written = line(
        &mut out,
        "session_meta",
        format!(
            r#"{{"id":"{id}","timestamp":"2026-11-{:02}T10:00:00.000Z","cwd":"{cwd}","source":"cli","thread_source":"user","model_provider":"openai","base_instructions":{{"text":"{}"}}}}"#,
            1 + n % 28,
            "i".repeat(20 << 10)
        ),
    );
    let output = tool_output();
    fill_with_turns(written, |turn| {
        line(
            &mut out,
            "turn_context",
            format!(r#"{{"cwd":"{cwd}","model":"gpt-5.5-codex"}}"#),
        ) + line(
            &mut out,
            "response_item",
            format!(
                r#"{{"type":"message","role":"user","content":[{{"type":"input_text","text":"Turn {turn}: please look at module {turn}"}}],"internal_chat_message_metadata_passthrough":{{"content_item_metadata":[{{"provenance":{{"type":"user"}}}}]}}}}"#
            ),
        ) + line(
            &mut out,
            "response_item",
            format!(
                r#"{{"type":"function_call","name":"exec_command","arguments":"{{\"cmd\":\"cargo test -p module{turn}\"}}","call_id":"call_{turn}"}}"#
            ),
        ) + line(
            &mut out,
            "response_item",
            format!(
                r#"{{"type":"function_call_output","call_id":"call_{turn}","output":"{output}"}}"#
            ),
        ) + line(
            &mut out,
            "response_item",
            format!(
                r#"{{"type":"message","role":"assistant","content":[{{"type":"output_text","text":"Module {turn} is fixed: {}"}}]}}"#,
                "a".repeat(600)
            ),
        )
    });
}

/// The CODEX_HOME of 1,000 rollouts, written on the first run.
pub fn codex_home() -> PathBuf {
    written_once("codex-home", |root| {
        for n in 0..SESSIONS {
            let day = root.join(format!("sessions/2026/11/{:02}", 1 + n % 28));
            std::fs::create_dir_all(&day).unwrap();
            let name = format!("rollout-2026-11-{:02}T10-00-00-{}.jsonl", 1 + n % 28, id(n));
            write_rollout(&day.join(name), n);
        }
    })
}
