//! Command hooks in the layout Claude Code and Codex share: an object of events, each a
//! list of groups (`{"matcher"?, "hooks": [{"type": "command", "command": …}]}`).
//! Setup's group runs `host-shim HOOK` (`claude-hook`, `codex-hook`); a group running
//! that from any host-shim binary is setup's, so a binary that moved is replaced where
//! it was, once.

use crate::json::{Json, Object, array_at, drop_if_empty};
use anyhow::Result;
use std::path::Path;

/// One event setup hooks, with its matcher when the harness needs one.
pub struct Event {
    pub name: &'static str,
    pub matcher: Option<&'static str>,
}

impl Event {
    pub const fn on(name: &'static str) -> Event {
        Event {
            name,
            matcher: None,
        }
    }

    pub const fn matching(name: &'static str, matcher: &'static str) -> Event {
        Event {
            name,
            matcher: Some(matcher),
        }
    }
}

/// The program a hook's command line runs, unquoted.
pub fn program(command: &str) -> &str {
    command
        .split_whitespace()
        .next()
        .unwrap_or("")
        .trim_matches('\'')
}

/// Whether `command` runs `host-shim HOOK`, from this binary or another copy.
fn runs(command: &str, hook: &str) -> bool {
    let name = Path::new(program(command))
        .file_name()
        .and_then(|n| n.to_str());
    name == Some("host-shim") && command.split_whitespace().nth(1) == Some(hook)
}

/// Whether a group holds a hook running `host-shim HOOK`.
pub fn is_setups(group: &Json, hook: &str) -> bool {
    let Some(Json::Array(hooks)) = group.get("hooks") else {
        return false;
    };
    (hooks.iter())
        .filter_map(|h| h.get("command").and_then(Json::as_str))
        .any(|command| runs(command, hook))
}

/// Puts setup's group running `command` (`host-shim HOOK …`) on each event of `hooks`.
pub fn add(
    hooks: &mut Object,
    events: &[Event],
    hook: &str,
    command: &str,
    file: &Path,
) -> Result<()> {
    for event in events {
        let mut group = Object::default();
        if let Some(matcher) = event.matcher {
            group.insert("matcher", Json::str(matcher));
        }
        let handler = Object::of([
            ("type", Json::str("command")),
            ("command", Json::str(command)),
        ]);
        group.insert("hooks", Json::Array(vec![Json::Object(handler)]));
        let groups = array_at(hooks, event.name, file)?;
        match groups.iter().position(|g| is_setups(g, hook)) {
            Some(first) => {
                groups[first] = Json::Object(group);
                let mut index = 0;
                groups.retain(|g| {
                    index += 1;
                    index - 1 == first || !is_setups(g, hook)
                });
            }
            None => groups.push(Json::Object(group)),
        }
    }
    Ok(())
}

/// Takes setup's groups out of each event of `hooks`, and an event left empty by it;
/// whether anything was taken.
pub fn remove(hooks: &mut Object, events: &[Event], hook: &str) -> bool {
    let mut removed = false;
    for event in events {
        if let Some(Json::Array(groups)) = hooks.get_mut(event.name)
            && groups.iter().any(|g| is_setups(g, hook))
        {
            groups.retain(|g| !is_setups(g, hook));
            drop_if_empty(hooks, event.name);
            removed = true;
        }
    }
    removed
}
