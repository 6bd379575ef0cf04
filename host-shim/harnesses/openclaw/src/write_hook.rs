//! `host-shim openclaw-write-hook`: what our OpenClaw plugin runs from its
//! `before_tool_call` hook before a tool that writes files (`write` and `edit`, each
//! naming its `path`; `apply_patch`, the files its `input` patch names). The plugin gives
//! it `{session_id, hook_event_name: "before_tool_call", tool_name, tool_input}` on
//! stdin; the command asks the plugin whether the session may write there now (another
//! session's claim may cover it) and prints the refusal's text, which the plugin
//! returns as the hook's `blockReason`, so OpenClaw gives the model that text instead of
//! running the tool. Nothing printed: the write goes ahead. Shell commands (`exec`) are
//! not parsed for the files they write.

use anyhow::Result;
use host_shim_profile::{WriteAsk, Written};

/// The hook's subcommand (the plugin file names it too).
pub const WRITE_HOOK: &str = "openclaw-write-hook";
/// The event the plugin names in the input.
const EVENT: &str = "before_tool_call";
/// The tools it checks, and where each names the files it writes.
const TOOLS: [(&str, Written); 3] = [
    ("write", Written::File("path")),
    ("edit", Written::File("path")),
    ("apply_patch", Written::Patch("input")),
];

/// The session and the files a writing tool's call would write.
pub fn ask(input: &[u8]) -> Result<Option<WriteAsk>> {
    WriteAsk::from_hook_input(input, (WRITE_HOOK, "OpenClaw plugin"), EVENT, &TOOLS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(tool: &str, tool_input: serde_json::Value) -> Vec<u8> {
        host_shim_testkit::hook_input(
            "0b8f3c2e-5a61-4d7e-9c14-2f6a8e1d7b90",
            EVENT,
            tool,
            tool_input,
        )
    }

    #[test]
    fn write_edit_and_apply_patch_ask_about_their_files_and_nothing_else_does() {
        let asked = |tool, args| ask(&input(tool, args)).unwrap().map(|a| a.paths);
        let one = serde_json::json!({"path": "beds.md", "content": "x"});
        assert_eq!(asked("write", one.clone()), Some(vec!["beds.md".into()]));
        assert_eq!(asked("edit", one.clone()), Some(vec!["beds.md".into()]));
        let patch = "*** Begin Patch\n*** Update File: a.md\n*** Move to: b.md\n*** End Patch";
        assert_eq!(
            asked("apply_patch", serde_json::json!({ "input": patch })),
            Some(vec!["a.md".into(), "b.md".into()])
        );
        assert_eq!(
            asked("exec", serde_json::json!({"command": "rm beds.md"})),
            None
        );
        // The plugin runs this command before the same tools.
        let plugin = include_str!("profile/plugin/index.js");
        host_shim_testkit::profiles::assert_plugin_checks_writes(plugin, WRITE_HOOK, &TOOLS);
    }
}
