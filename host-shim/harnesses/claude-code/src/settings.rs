//! Claude Code's own say over inbound: its `crossSessionInbound` setting (`accept`,
//! `hold` or `refuse`), which its own cross-session messaging obeys. A person who set
//! it there has said what comes into their sessions, so the tools obey it too, beside
//! what they set with `host-shim inbound`; the stricter wins (refuse over hold over
//! accept).
//!
//! Read from the user's settings (`settings.json` in Claude Code's configuration
//! folder, `CLAUDE_CONFIG_DIR` or `~/.claude`) and the session's project settings
//! (`.claude/settings.json` and `.claude/settings.local.json` under its cwd). As in
//! Claude Code, a project's settings may only make it stricter.
//!
//! Trust model. These are files of the user's own machine; a project's files come
//! with its repository, so what they say can only add restriction, never lift it. Each
//! is read bounded (a settings file is small), without following a symlink out of
//! nowhere: an unreadable or malformed file says nothing (Claude Code reports its own
//! settings errors), and an unknown value is ignored.

use host_shim::contract::latest::InboundPolicy;
use std::path::{Path, PathBuf};

/// The most bytes of a settings file read.
const SETTINGS_BYTES: u64 = 1 << 20;

/// Claude Code's configuration folder, as it finds it: `CLAUDE_CONFIG_DIR`, else
/// `~/.claude`.
pub fn config_dir_from_env() -> Option<PathBuf> {
    std::env::var_os("CLAUDE_CONFIG_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".claude")))
}

/// `crossSessionInbound` of one settings file, if it says one.
fn said_in(path: &Path) -> Option<InboundPolicy> {
    let bytes = host_shim::os::read_regular(path, SETTINGS_BYTES).ok()?;
    let value: serde_json::Value = host_shim::json::from_slice(&bytes).ok()?;
    InboundPolicy::parse(value.get("crossSessionInbound")?.as_str()?)
}

/// What Claude Code's settings say a session at `cwd` takes in: the user's setting,
/// made stricter by the project's; `Accept` when none says.
pub fn inbound(config_dir: Option<&Path>, cwd: Option<&Path>) -> InboundPolicy {
    let mut policy = (config_dir.and_then(|dir| said_in(&dir.join("settings.json"))))
        .unwrap_or(InboundPolicy::Accept);
    if let Some(cwd) = cwd {
        for name in ["settings.json", "settings.local.json"] {
            if let Some(said) = said_in(&cwd.join(".claude").join(name)) {
                policy = policy.stricter(said);
            }
        }
    }
    policy
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = host_shim_testkit::scratch("settings", name);
        std::fs::create_dir_all(dir.join("config")).unwrap();
        std::fs::create_dir_all(dir.join("project/.claude")).unwrap();
        dir
    }

    #[test]
    fn the_user_says_and_a_project_may_only_tighten() {
        let dir = scratch("tighten");
        let (config, project) = (dir.join("config"), dir.join("project"));
        let write = |path: PathBuf, json: &str| std::fs::write(path, json).unwrap();
        assert_eq!(
            inbound(Some(&config), Some(&project)),
            InboundPolicy::Accept
        );
        write(
            config.join("settings.json"),
            r#"{"crossSessionInbound": "hold"}"#,
        );
        assert_eq!(inbound(Some(&config), Some(&project)), InboundPolicy::Hold);
        // A project cannot loosen it…
        write(
            project.join(".claude/settings.json"),
            r#"{"crossSessionInbound": "accept"}"#,
        );
        assert_eq!(inbound(Some(&config), Some(&project)), InboundPolicy::Hold);
        // …and can tighten it.
        write(
            project.join(".claude/settings.local.json"),
            r#"{"crossSessionInbound": "refuse"}"#,
        );
        assert_eq!(
            inbound(Some(&config), Some(&project)),
            InboundPolicy::Refuse
        );
        // Nonsense says nothing.
        write(
            config.join("settings.json"),
            r#"{"crossSessionInbound": "sometimes"}"#,
        );
        std::fs::remove_file(project.join(".claude/settings.local.json")).unwrap();
        assert_eq!(
            inbound(Some(&config), Some(&project)),
            InboundPolicy::Accept
        );
        write(config.join("settings.json"), "{not json");
        assert_eq!(inbound(Some(&config), None), InboundPolicy::Accept);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn the_stricter_wins() {
        use InboundPolicy::*;
        assert_eq!(Accept.stricter(Hold), Hold);
        assert_eq!(Refuse.stricter(Hold), Refuse);
        assert_eq!(Hold.stricter(Accept), Hold);
        assert_eq!(Accept.stricter(Accept), Accept);
    }
}
