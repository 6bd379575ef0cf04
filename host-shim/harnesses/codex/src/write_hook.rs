//! `host-shim codex-write-hook`: Codex's `PreToolUse` hook for `apply_patch`, the tool
//! it writes files with. Codex gives the hook the call in the shape Claude Code's hooks
//! take, the whole patch in `tool_input.command`; the command reads the files the patch
//! adds, updates, moves and deletes, asks the plugin whether the session may write them
//! now (another session's claim may cover one) and answers a refused write
//! `permissionDecision: "deny"` with the plugin's text as the reason, which Codex gives
//! the model instead of applying the patch. Any other tool or event: no answer, so the
//! tool runs. Shell commands (`exec_command`) are not parsed for the files they write.

use anyhow::Result;
use host_shim_profile::{WriteAsk, Written};

/// The hook's subcommand.
pub const WRITE_HOOK: &str = "codex-write-hook";
/// The tools it checks, as setup's `PreToolUse` matcher names them.
pub const WRITING_TOOLS: &str = "apply_patch";
/// The tools it checks, and where each names the files it writes.
const TOOLS: [(&str, Written); 1] = [("apply_patch", Written::Patch("command"))];

/// The session and the files a writing tool's call would write.
pub fn ask(input: &[u8]) -> Result<Option<WriteAsk>> {
    WriteAsk::from_hook_input(input, (WRITE_HOOK, "Codex"), "PreToolUse", &TOOLS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(tool: &str, tool_input: serde_json::Value) -> Vec<u8> {
        host_shim_testkit::hook_input(
            "019b2c4e-7a10-7d31-9e55-3b6f0a2c8d17",
            "PreToolUse",
            tool,
            tool_input,
        )
    }

    #[test]
    fn apply_patch_asks_about_the_files_its_patch_names_and_a_shell_command_does_not() {
        let patch = "*** Begin Patch\n*** Update File: src/beds.rs\n@@\n-a\n+b\n\
                     *** Add File: /w/notes.md\n+hi\n*** End Patch\n";
        let asked = ask(&input(
            "apply_patch",
            serde_json::json!({ "command": patch }),
        ));
        assert_eq!(
            asked.unwrap().unwrap().paths,
            ["src/beds.rs", "/w/notes.md"]
        );
        let shell = serde_json::json!({"command": "echo x > /w/beds.md"});
        assert_eq!(ask(&input("Bash", shell)).unwrap(), None);
    }
}
