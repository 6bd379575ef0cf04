//! `host-shim claude-write-hook`: Claude Code's `PreToolUse` hook for the tools that
//! write files (`Edit`, `Write`, `MultiEdit`: `file_path`; `NotebookEdit`:
//! `notebook_path`). The command asks the plugin whether the session may write there
//! now (another session's claim may cover it); a refused write is answered
//! `permissionDecision: "deny"` with the plugin's text as the reason, which Claude
//! Code shows the model instead of running the tool (Claude Code's hooks reference,
//! <https://code.claude.com/docs/en/hooks>). Any other tool or event: no answer, so
//! the tool runs. Bash commands are not parsed for the files they write.

use anyhow::Result;
use host_shim_profile::{WriteAsk, Written};

/// The hook's subcommand.
pub const WRITE_HOOK: &str = "claude-write-hook";
/// The tools it checks, as setup's `PreToolUse` matcher names them.
pub const WRITING_TOOLS: &str = "Edit|Write|MultiEdit|NotebookEdit";

/// The tools it checks, each with the field of its input that names the file.
const TOOLS: [(&str, Written); 4] = [
    ("Edit", Written::File("file_path")),
    ("Write", Written::File("file_path")),
    ("MultiEdit", Written::File("file_path")),
    ("NotebookEdit", Written::File("notebook_path")),
];

/// The session and the file a writing tool's call would write.
pub fn ask(input: &[u8]) -> Result<Option<WriteAsk>> {
    // Copilot CLI runs a trusted project's Claude Code hooks too (see `hook.rs`).
    if std::env::var_os("COPILOT_CLI").is_some_and(|v| v == "1") {
        return Ok(None);
    }
    WriteAsk::from_hook_input(input, (WRITE_HOOK, "Claude Code"), "PreToolUse", &TOOLS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(tool: &str, tool_input: serde_json::Value) -> Vec<u8> {
        host_shim_testkit::hook_input(
            "6f1e0c2a-0000-4000-8000-000000000001",
            "PreToolUse",
            tool,
            tool_input,
        )
    }

    #[test]
    fn each_writing_tool_names_its_file_and_other_tools_are_not_asked_about() {
        for (tool, field) in [
            ("Edit", "file_path"),
            ("Write", "file_path"),
            ("MultiEdit", "file_path"),
            ("NotebookEdit", "notebook_path"),
        ] {
            let asked = ask(&input(tool, serde_json::json!({ field: "/w/src/a.rs" }))).unwrap();
            assert_eq!(
                asked,
                Some(WriteAsk {
                    session: "6f1e0c2a-0000-4000-8000-000000000001".into(),
                    paths: vec!["/w/src/a.rs".into()],
                }),
                "{tool}"
            );
        }
        let read = input("Read", serde_json::json!({"file_path": "/w/src/a.rs"}));
        assert_eq!(ask(&read).unwrap(), None);
        let bash = input(
            "Bash",
            serde_json::json!({"command": "echo hi > /w/src/a.rs"}),
        );
        assert_eq!(ask(&bash).unwrap(), None);
        let after = String::from_utf8(input("Write", serde_json::json!({"file_path": "/w/a"})))
            .unwrap()
            .replace("PreToolUse", "PostToolUse");
        assert_eq!(ask(after.as_bytes()).unwrap(), None);
    }

    #[test]
    fn a_writing_call_without_its_file_is_an_error_that_says_so() {
        let err = ask(&input("Write", serde_json::json!({"content": "x"}))).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the Write call's input has no file_path: its write was not checked"
        );
        assert!(ask(b"not json").is_err());
    }

    #[test]
    fn a_refusal_is_a_deny_with_the_plugins_text() {
        let answer = host_shim_testkit::answer_of(
            host_shim_profile::write::deny_pre_tool_use,
            "write refused (claimed): …",
        );
        let said = &answer["hookSpecificOutput"];
        assert_eq!(said["hookEventName"], "PreToolUse");
        assert_eq!(said["permissionDecision"], "deny");
        assert_eq!(
            said["permissionDecisionReason"],
            "write refused (claimed): …"
        );
    }
}
