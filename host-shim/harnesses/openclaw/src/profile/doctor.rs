//! `host-shim doctor` for OpenClaw: the plugin's entry in OpenClaw's config (enabled,
//! its prompt hook allowed, the server it runs starts and lists the tools), its folder,
//! and the agent databases.

use super::setup as openclaw_setup;
use host_shim_profile::checks::{Report, check_plugin_file, check_server};
use host_shim_profile::json::{Json, JsonFile};
use std::path::Path;

pub fn check(report: &mut Report, state: &Path, config_path: &Path, fix: &str) {
    let config = match JsonFile::read(config_path) {
        Ok(config) => config,
        Err(err) => {
            report.unreadable(&err, fix);
            return;
        }
    };
    let entry = (config.object.get("plugins"))
        .and_then(|plugins| plugins.get("entries"))
        .and_then(|entries| entries.get(openclaw_setup::PLUGIN_ID));
    match openclaw_setup::host_of(&config) {
        None => report.problem(
            &format!(
                "no `{}` plugin entry with a command in {}: OpenClaw's sessions have no tools",
                openclaw_setup::PLUGIN_ID,
                config_path.display()
            ),
            fix,
        ),
        Some((command, args)) => check_server(report, &command, &args, fix),
    }
    if let Some(entry) = entry {
        if entry.get("enabled") == Some(&Json::Bool(false)) {
            report.problem(
                "the session-tools plugin is disabled in OpenClaw's config",
                fix,
            );
        }
        let allowed = entry
            .get("hooks")
            .and_then(|hooks| hooks.get("allowConversationAccess"));
        if allowed != Some(&Json::Bool(true)) {
            report.problem(
                "the session-tools plugin's prompt hook is not allowed (hooks.allowConversationAccess): messages are never handed over",
                fix,
            );
        }
    }
    let folder = openclaw_setup::plugin_dir(state);
    let files: Vec<_> = openclaw_setup::plugin_files().collect();
    if files.iter().any(|(name, _)| !folder.join(name).is_file()) {
        report.problem(
            &format!(
                "the plugin's folder {} is missing or incomplete",
                folder.display()
            ),
            fix,
        );
    } else if (files.iter())
        .filter(|(name, text)| !check_plugin_file(report, &folder.join(name), text, fix))
        .count()
        == 0
    {
        report.ok(&format!(
            "the plugin's folder {} holds this host-shim's plugin (it asks before write, edit and apply_patch)",
            folder.display()
        ));
    }
    if crate::db::agent_databases(state).is_empty() {
        report.note(&format!(
            "no agent database under {} yet: OpenClaw writes one at its first session",
            state.join("agents").display()
        ));
    }
}
