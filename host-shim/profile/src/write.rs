//! A harness's pre-write hook: which tool calls write files, and which files, read from
//! the input the harness gives the hook (or its plugin gives `host-shim`), so the plugin
//! can be asked whether the session may write them now.

use anyhow::Result;
use std::io::Write;

/// A harness's pre-write hook: `host-shim <command>`, with the flags its MCP server is
/// given (so it reads the same sessions), reads the hook's input on stdin before a
/// tool runs; when the tool writes files, the plugin is asked (`check-write`) whether
/// the session may write them now, and a refused write is answered in the hook's
/// words: the model reads why, and the tool does not run. Its question and its answer
/// are its profile's ([`crate::HarnessProfile::ask_write`],
/// [`crate::HarnessProfile::refuse_write`]).
pub struct WriteHook {
    /// The subcommand (`claude-write-hook`).
    pub command: &'static str,
    /// Where the harness runs it, before which tools, for its help ("Claude Code's
    /// PreToolUse hook, before Edit, Write, MultiEdit and NotebookEdit").
    pub runs: &'static str,
}

impl WriteHook {
    /// Its help.
    pub fn about(&self) -> String {
        format!(
            "{}: reads the call on stdin and asks the plugin whether the session may write \
             those files now; a write into another session's claim is refused with the \
             reason the model reads. Takes the flags of `host-shim mcp`, so it reads the \
             sessions the server reads",
            self.runs
        )
    }
}

/// Where a writing tool's input names the files it writes.
#[derive(Clone, Copy, Debug)]
pub enum Written {
    /// A field holding one path.
    File(&'static str),
    /// A field holding a patch in the `*** Begin Patch` form Codex, OpenCode and OpenClaw
    /// share: its `*** Add File:`, `*** Update File:`, `*** Delete File:` and
    /// `*** Move to:` lines name the files.
    Patch(&'static str),
}

impl Written {
    /// The files a call of `tool` with input `given` writes; an error that says its
    /// write was not checked when they cannot be read from it.
    pub fn paths(self, tool: &str, given: Option<&serde_json::Value>) -> Result<Vec<String>> {
        let field = match self {
            Written::File(field) | Written::Patch(field) => field,
        };
        let text = (given.and_then(|given| given.get(field))).and_then(|text| text.as_str());
        let Some(text) = text.filter(|text| !text.trim().is_empty()) else {
            anyhow::bail!("the {tool} call's input has no {field}: its write was not checked");
        };
        match self {
            Written::File(_) => Ok(vec![text.to_string()]),
            Written::Patch(_) => {
                let paths = patch_paths(text);
                if paths.is_empty() {
                    anyhow::bail!(
                        "the {tool} call's patch names no file (no `*** Add File:`, `*** Update \
                         File:` or `*** Delete File:` line): its write was not checked"
                    );
                }
                Ok(paths)
            }
        }
    }
}

/// What a pre-write hook asks: may `session` write `paths` (as the tool names them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriteAsk {
    pub session: String,
    pub paths: Vec<String>,
}

impl WriteAsk {
    /// From a command hook's input in the shape Claude Code, Codex and Gemini CLI share
    /// (`session_id`, `hook_event_name`, `tool_name`, `tool_input`), which our
    /// OpenCode and OpenClaw plugins give `host-shim` too: at `event`, a call of one of
    /// `tools` (each a tool's name and where its input names the files it writes) asks
    /// about those files; any other event or tool asks nothing. A writing call whose
    /// files cannot be read from it is an error that says its write was not checked.
    pub fn from_hook_input(
        input: &[u8],
        (hook, harness): (&str, &str),
        event: &str,
        tools: &[(&str, Written)],
    ) -> Result<Option<WriteAsk>> {
        let input = host_shim::inbox::CommandHookInput::read(input, hook, harness)?;
        let tool = input.tool_name.as_deref().unwrap_or("");
        let Some((_, written)) = (input.event == event)
            .then(|| tools.iter().find(|(name, _)| *name == tool))
            .flatten()
        else {
            return Ok(None);
        };
        let paths = written.paths(tool, input.tool_input.as_ref())?;
        Ok(Some(WriteAsk {
            session: input.session,
            paths,
        }))
    }
}

/// The answer of a `PreToolUse` command hook refusing the tool call, in the shape Claude
/// Code and Codex share (`hookSpecificOutput.permissionDecision: "deny"`), `text` the
/// reason the model reads instead of the tool's result.
pub fn deny_pre_tool_use(text: &str, out: &mut dyn Write) -> Result<()> {
    let answer = serde_json::json!({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": text,
        }
    });
    writeln!(out, "{answer}")?;
    Ok(())
}

/// The answer of a pre-write hook our own harness plugin runs (OpenCode's, OpenClaw's):
/// the text the model reads, alone; the plugin refuses the tool call with it.
pub fn refuse_in_words(text: &str, out: &mut dyn Write) -> Result<()> {
    out.write_all(text.as_bytes())?;
    Ok(())
}

/// The files a patch in the `*** Begin Patch` form writes, each once, in order: added,
/// updated (and where one is moved to) and deleted.
pub fn patch_paths(patch: &str) -> Vec<String> {
    const HEADERS: [&str; 4] = [
        "*** Add File:",
        "*** Update File:",
        "*** Delete File:",
        "*** Move to:",
    ];
    let mut paths: Vec<String> = Vec::new();
    for line in patch.lines() {
        // A hunk's lines start with ' ', '+', '-' or "@@", never "*** ", so a header is
        // read only where a line starts with it (as the tools' own parsers read it).
        let Some(path) = HEADERS.iter().find_map(|h| line.strip_prefix(h)) else {
            continue;
        };
        let path = path.trim();
        if !path.is_empty() && !paths.iter().any(|p| p == path) {
            paths.push(path.to_string());
        }
    }
    paths
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_patch_names_each_file_it_adds_updates_moves_and_deletes_once() {
        let patch = "*** Begin Patch\n\
                     *** Add File: docs/new.md\n\
                     +*** Add File: not/a/header.md\n\
                     \x20*** Add File: a/context/line.md\n\
                     *** Update File: src/a.rs\r\n\
                     *** Move to: src/b.rs\n\
                     @@ fn a\n\
                     -old\n\
                     +new\n\
                     *** Delete File: /w/gone.txt\n\
                     *** Update File: docs/new.md\n\
                     *** End Patch\n";
        assert_eq!(
            patch_paths(patch),
            ["docs/new.md", "src/a.rs", "src/b.rs", "/w/gone.txt"]
        );
        assert!(patch_paths("*** Begin Patch\n*** End Patch").is_empty());
    }

    fn input(tool: &str, tool_input: serde_json::Value) -> Vec<u8> {
        serde_json::json!({
            "session_id": "s-1",
            "hook_event_name": "PreToolUse",
            "tool_name": tool,
            "tool_input": tool_input,
        })
        .to_string()
        .into_bytes()
    }

    const TOOLS: [(&str, Written); 2] = [
        ("write", Written::File("path")),
        ("apply_patch", Written::Patch("input")),
    ];

    fn ask(input: &[u8]) -> Result<Option<WriteAsk>> {
        WriteAsk::from_hook_input(input, ("x-write-hook", "X"), "PreToolUse", &TOOLS)
    }

    #[test]
    fn a_writing_call_asks_about_its_files_and_a_call_without_them_says_it_was_not_checked() {
        let patch = "*** Begin Patch\n*** Update File: a.md\n*** End Patch";
        let asked = ask(&input("apply_patch", serde_json::json!({ "input": patch })));
        assert_eq!(
            asked.unwrap(),
            Some(WriteAsk {
                session: "s-1".into(),
                paths: vec!["a.md".into()],
            })
        );
        let asked = ask(&input("write", serde_json::json!({ "path": "/w/b.md" })));
        assert_eq!(asked.unwrap().unwrap().paths, ["/w/b.md"]);
        assert_eq!(ask(&input("read", serde_json::json!({}))).unwrap(), None);
        let err = ask(&input("apply_patch", serde_json::json!({"input": "+x"}))).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("the apply_patch call's patch names no file"),
            "{err}"
        );
        let err = ask(&input("apply_patch", serde_json::json!({}))).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the apply_patch call's input has no input: its write was not checked"
        );
    }
}
