//! `host-shim doctor` for Claude Code: the server in `~/.claude.json` starts and lists
//! the tools; the permission and the hooks are in `settings.json`.

use super::setup::{self as claude_setup, Places};
use host_shim_profile::checks::{Report, check_hooks, check_server_in, check_write_hook};
use host_shim_profile::json::{Json, JsonFile};

pub fn check(report: &mut Report, places: &Places, fix: &str) {
    match JsonFile::read(&places.config_file) {
        Err(err) => report.unreadable(&err, fix),
        Ok(config) => {
            let file = &places.config_file;
            check_server_in(report, &config.object, file, claude_setup::SERVER, fix);
        }
    }
    match JsonFile::read(&places.settings_file) {
        Err(err) => report.unreadable(&err, fix),
        Ok(settings) => {
            let shown = places.settings_file.display();
            let allowed = match settings
                .object
                .get("permissions")
                .and_then(|p| p.get("allow"))
            {
                Some(Json::Array(allow)) => allow
                    .iter()
                    .any(|p| p.as_str() == Some(claude_setup::PERMISSION)),
                _ => false,
            };
            if allowed {
                report.ok(&format!(
                    "the permission `{}` is in {shown}",
                    claude_setup::PERMISSION
                ));
            } else {
                report.problem(
                    &format!(
                        "no permission `{}` in {shown}: a session without a person to ask is refused the tools",
                        claude_setup::PERMISSION
                    ),
                    fix,
                );
            }
            let hooks = settings.object.get("hooks");
            check_hooks(
                report,
                hooks,
                &claude_setup::EVENTS,
                claude_setup::HOOK,
                &shown.to_string(),
                fix,
            );
            let write_hook = crate::write_hook::WRITE_HOOK;
            let asked = (hooks, &claude_setup::WRITE_EVENTS[..], write_hook);
            check_write_hook(report, asked, &shown.to_string(), fix);
        }
    }
}
