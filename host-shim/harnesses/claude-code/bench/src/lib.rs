//! Claude Code's projects folder for the benchmarks: 1,000 sessions of 3 MB each,
//! written once under the temporary folder, then reused.

use host_shim_testkit::corpus::{SESSIONS, fill_with_turns, tool_output, written_once};
use std::io::Write;
use std::path::{Path, PathBuf};

pub fn id(n: usize) -> String {
    format!("{n:08x}-0000-4000-8000-{n:012x}")
}

/// One transcript of about 3 MB in Claude Code's shape: turns of a prompt, thinking,
/// a tool call, a large tool result and an answer; titles at both ends.
pub fn write_transcript(path: &Path, n: usize) {
    let id = id(n);
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let base = format!(
        r#""sessionId":"{id}","cwd":"/home/bench/project-{}","version":"2.1.30","gitBranch":"main""#,
        n % 50
    );
    writeln!(
        out,
        r#"{{"type":"summary","summary":"Bench session {n}","leafUuid":"x"}}"#
    )
    .unwrap();
    let output = tool_output();
    fill_with_turns(0, |turn| {
        let ts = format!(
            "2026-11-{:02}T10:{:02}:{:02}.000Z",
            1 + n % 28,
            turn / 60 % 60,
            turn % 60
        );
        let lines = [
            format!(
                r#"{{"type":"user",{base},"timestamp":"{ts}","message":{{"role":"user","content":"Turn {turn}: please look at module {turn} and fix what is wrong"}}}}"#
            ),
            format!(
                r#"{{"type":"assistant",{base},"timestamp":"{ts}","message":{{"role":"assistant","model":"claude-opus-4-5-20251101","content":[{{"type":"thinking","thinking":"{}","signature":"s"}}]}}}}"#,
                "t".repeat(800)
            ),
            format!(
                r#"{{"type":"assistant",{base},"timestamp":"{ts}","message":{{"role":"assistant","model":"claude-opus-4-5-20251101","content":[{{"type":"tool_use","id":"toolu_{turn}","name":"Bash","input":{{"command":"cargo test -p module{turn}"}}}}]}}}}"#
            ),
            format!(
                r#"{{"type":"user",{base},"timestamp":"{ts}","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_{turn}","content":"{output}"}}]}},"toolUseResult":{{"stdout":"{output}"}}}}"#
            ),
            format!(
                r#"{{"type":"assistant",{base},"timestamp":"{ts}","message":{{"role":"assistant","model":"claude-opus-4-5-20251101","content":[{{"type":"text","text":"Module {turn} is fixed: {}"}}]}}}}"#,
                "a".repeat(600)
            ),
        ];
        let mut written = 0;
        for line in lines {
            writeln!(out, "{line}").unwrap();
            written += line.len() + 1;
        }
        written
    });
    writeln!(
        out,
        r#"{{"type":"custom-title","customTitle":"Bench session {n}, renamed","sessionId":"{id}"}}"#
    )
    .unwrap();
}

/// The folder of 1,000 transcripts, written on the first run.
pub fn projects() -> PathBuf {
    written_once("claude-projects", |root| {
        for n in 0..SESSIONS {
            let project = root.join(format!("-home-bench-project-{}", n % 50));
            std::fs::create_dir_all(&project).unwrap();
            write_transcript(&project.join(format!("{}.jsonl", id(n))), n);
        }
    })
}
