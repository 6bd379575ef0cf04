//! `host-shim copilot-write-hook`: Copilot CLI's `preToolUse` command hook, for the
//! tools that write files (`create` and `edit`, each naming its `path`). Copilot CLI
//! 1.0.102 runs a `preToolUse` hook before every tool (it takes no matcher), giving it
//! `{sessionId, timestamp, cwd, toolName, toolArgs}` (`toolArgs` the call's arguments
//! as a JSON text, or as an object); for a writing tool the command asks the plugin
//! whether the session may write there now (another session's claim may cover it), and
//! a refused write is answered `{"permissionDecision": "deny",
//! "permissionDecisionReason": …}`, which Copilot shows the model instead of running the
//! tool. Any other tool: no answer, at once, without asking. Shell commands (`bash`) are
//! not parsed for the files they write.

use anyhow::Result;
use host_shim_profile::{WriteAsk, Written};
use std::io::Write;

/// The hook's subcommand.
pub const WRITE_HOOK: &str = "copilot-write-hook";
/// The event setup runs it at.
pub const EVENT: &str = "preToolUse";
/// The tools it checks, and where each names the file it writes.
const TOOLS: [(&str, Written); 2] = [
    ("create", Written::File("path")),
    ("edit", Written::File("path")),
];

/// The session and the file a writing tool's call would write.
pub fn ask(input: &[u8]) -> Result<Option<WriteAsk>> {
    let (input, session) =
        host_shim::inbox::hook_json(input, WRITE_HOOK, "Copilot CLI", "sessionId")?;
    let tool = input.get("toolName").and_then(|t| t.as_str()).unwrap_or("");
    let Some((_, written)) = TOOLS.iter().find(|(name, _)| *name == tool) else {
        return Ok(None);
    };
    let args = match input.get("toolArgs") {
        Some(serde_json::Value::String(text)) => {
            Some(host_shim::json::from_str(text).map_err(|err| {
                anyhow::anyhow!(
                    "the {tool} call's toolArgs is not JSON ({err}): its write was not checked"
                )
            })?)
        }
        given => given.cloned(),
    };
    let paths = written.paths(tool, args.as_ref())?;
    Ok(Some(WriteAsk { session, paths }))
}

/// Copilot CLI's answer refusing the tool call, `text` the reason the model reads.
pub fn refuse(text: &str, out: &mut dyn Write) -> Result<()> {
    let answer =
        serde_json::json!({"permissionDecision": "deny", "permissionDecisionReason": text});
    writeln!(out, "{answer}")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SESSION: &str = "9d0c7e61-2b4f-4a8e-b3c5-7f1e2d6a9b04";

    fn input(tool: &str, args: serde_json::Value) -> Vec<u8> {
        serde_json::json!({
            "sessionId": SESSION,
            "timestamp": 1796600000000u64,
            "cwd": "/w",
            "toolName": tool,
            "toolArgs": args,
        })
        .to_string()
        .into_bytes()
    }

    #[test]
    fn create_and_edit_ask_about_their_file_given_as_text_or_object() {
        let asked = |tool, args| {
            ask(&input(tool, args))
                .unwrap()
                .map(|a| (a.session, a.paths))
        };
        let text = serde_json::json!(r#"{"path":"/w/beds.md","file_text":"x"}"#);
        let expected = Some((SESSION.to_string(), vec!["/w/beds.md".to_string()]));
        assert_eq!(asked("create", text), expected);
        let object = serde_json::json!({"path": "/w/beds.md", "old_str": "a", "new_str": "b"});
        assert_eq!(asked("edit", object), expected);
        assert_eq!(
            asked("bash", serde_json::json!(r#"{"command":"ls"}"#)),
            None
        );
        assert_eq!(
            asked("view", serde_json::json!({"path": "/w/beds.md"})),
            None
        );
        let err = ask(&input("edit", serde_json::json!("{not json"))).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("the edit call's toolArgs is not JSON"),
            "{err}"
        );
    }

    #[test]
    fn a_refusal_is_a_deny_with_the_plugins_text() {
        let denied = serde_json::json!({
            "permissionDecision": "deny",
            "permissionDecisionReason": "claimed: …",
        });
        assert_eq!(host_shim_testkit::answer_of(refuse, "claimed: …"), denied);
    }
}
