//! `host-shim opencode-write-hook`: what our OpenCode plugin runs from its
//! `tool.execute.before` hook before a tool that writes files (`edit` and `write`, each
//! naming its `filePath`; `apply_patch`, the files its `patchText` names). The plugin
//! gives it `{session_id, hook_event_name: "tool.execute.before", tool_name,
//! tool_input}` on stdin; the command asks the plugin whether the session may write
//! there now (another session's claim may cover it) and prints the refusal's text,
//! which the plugin throws, so OpenCode gives the model that text as the tool's error
//! instead of running it. Nothing printed: the write goes ahead. Shell commands are not
//! parsed for the files they write.

use anyhow::Result;
use host_shim_profile::{WriteAsk, Written};

/// The hook's subcommand (the plugin file names it too).
pub const WRITE_HOOK: &str = "opencode-write-hook";
/// The event the plugin names in the input.
const EVENT: &str = "tool.execute.before";
/// The tools it checks, and where each names the files it writes.
const TOOLS: [(&str, Written); 3] = [
    ("edit", Written::File("filePath")),
    ("write", Written::File("filePath")),
    ("apply_patch", Written::Patch("patchText")),
];

/// The session and the files a writing tool's call would write.
pub fn ask(input: &[u8]) -> Result<Option<WriteAsk>> {
    WriteAsk::from_hook_input(input, (WRITE_HOOK, "OpenCode plugin"), EVENT, &TOOLS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(tool: &str, tool_input: serde_json::Value) -> Vec<u8> {
        host_shim_testkit::hook_input("ses_5f0e6b2a1ffeXj0kq1Ew3Yb7Zt", EVENT, tool, tool_input)
    }

    #[test]
    fn edit_write_and_apply_patch_ask_about_their_files_and_nothing_else_does() {
        let asked = |tool, args| ask(&input(tool, args)).unwrap().map(|a| a.paths);
        let one = serde_json::json!({"filePath": "notes/a.md", "content": "x"});
        assert_eq!(asked("edit", one.clone()), Some(vec!["notes/a.md".into()]));
        assert_eq!(asked("write", one.clone()), Some(vec!["notes/a.md".into()]));
        let patch = "*** Begin Patch\n*** Add File: b.md\n+b\n*** Delete File: c.md\n*** End Patch";
        assert_eq!(
            asked("apply_patch", serde_json::json!({ "patchText": patch })),
            Some(vec!["b.md".into(), "c.md".into()])
        );
        assert_eq!(asked("read", one), None);
        // The plugin runs this command before the same tools.
        let plugin = include_str!("profile/session-tools.js");
        host_shim_testkit::profiles::assert_plugin_checks_writes(plugin, WRITE_HOOK, &TOOLS);
    }
}
