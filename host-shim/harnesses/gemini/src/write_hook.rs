//! `host-shim gemini-write-hook`: Gemini CLI's `BeforeTool` hook for the tools that
//! write files (`write_file` and `replace`, each naming its `file_path`). The command
//! asks the plugin whether the session may write there now (another session's claim may
//! cover it); a refused write is answered `{"decision": "deny", "reason": …}`, which
//! Gemini CLI shows the model instead of running the tool. Any other tool or event: no
//! answer, so the tool runs. Shell commands are not parsed for the files they write.

use anyhow::Result;
use host_shim_profile::{WriteAsk, Written};
use std::io::Write;

/// The hook's subcommand.
pub const WRITE_HOOK: &str = "gemini-write-hook";
/// The tools it checks, as setup's `BeforeTool` matcher names them.
pub const WRITING_TOOLS: &str = "write_file|replace";
/// The tools it checks, each with the field of its input that names the file.
const TOOLS: [(&str, Written); 2] = [
    ("write_file", Written::File("file_path")),
    ("replace", Written::File("file_path")),
];

/// The session and the file a writing tool's call would write.
pub fn ask(input: &[u8]) -> Result<Option<WriteAsk>> {
    WriteAsk::from_hook_input(input, (WRITE_HOOK, "Gemini CLI"), "BeforeTool", &TOOLS)
}

/// Gemini CLI's answer refusing the tool call, `text` the reason the model reads.
pub fn refuse(text: &str, out: &mut dyn Write) -> Result<()> {
    let answer = serde_json::json!({"decision": "deny", "reason": text});
    writeln!(out, "{answer}")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(event: &str, tool: &str, tool_input: serde_json::Value) -> Vec<u8> {
        host_shim_testkit::hook_input(
            "4a9d2f7e-0000-4000-8000-000000000002",
            event,
            tool,
            tool_input,
        )
    }

    #[test]
    fn its_writing_tools_name_their_file_and_nothing_else_is_asked_about() {
        for tool in ["write_file", "replace"] {
            let given = serde_json::json!({"file_path": "/w/a.md", "content": "x"});
            assert_eq!(
                ask(&input("BeforeTool", tool, given)).unwrap(),
                Some(WriteAsk {
                    session: "4a9d2f7e-0000-4000-8000-000000000002".into(),
                    paths: vec!["/w/a.md".into()],
                }),
                "{tool}"
            );
        }
        let read = serde_json::json!({"file_path": "/w/a.md"});
        assert_eq!(
            ask(&input("BeforeTool", "read_file", read.clone())).unwrap(),
            None
        );
        assert_eq!(ask(&input("AfterTool", "write_file", read)).unwrap(), None);
        let err = ask(&input("BeforeTool", "replace", serde_json::json!({}))).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the replace call's input has no file_path: its write was not checked"
        );
    }

    #[test]
    fn a_refusal_is_a_deny_with_the_plugins_text() {
        let denied = serde_json::json!({"decision": "deny", "reason": "claimed: …"});
        assert_eq!(host_shim_testkit::answer_of(refuse, "claimed: …"), denied);
    }
}
