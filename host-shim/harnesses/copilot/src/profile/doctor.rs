//! `host-shim doctor` for Copilot CLI: the server in `mcp-config.json` starts and lists
//! the tools; setup's hooks file runs the hook at each event.

use super::setup as copilot_setup;
use host_shim_profile::checks::{Report, check_server_in};
use host_shim_profile::json::JsonFile;
use std::path::Path;

pub fn check(report: &mut Report, home: &Path, fix: &str) {
    let config_file = home.join("mcp-config.json");
    match JsonFile::read(&config_file) {
        Err(err) => report.unreadable(&err, fix),
        Ok(config) => {
            check_server_in(
                report,
                &config.object,
                &config_file,
                copilot_setup::SERVER,
                fix,
            );
        }
    }
    let hooks = home.join("hooks").join(copilot_setup::HOOKS_FILE);
    match std::fs::read_to_string(&hooks) {
        Ok(text) if copilot_setup::is_complete(&text) => report.ok(&format!(
            "{} runs host-shim {} at {}, and host-shim {} at {}",
            hooks.display(),
            copilot_setup::HOOK,
            copilot_setup::EVENTS.join(", "),
            copilot_setup::WRITE_HOOK,
            copilot_setup::WRITE_EVENT,
        )),
        Ok(text) if copilot_setup::is_ours(&text) => report.problem(
            &format!(
                "{} is an earlier setup's hooks file: it does not run host-shim {} at every one of {} and host-shim {} at {}, so calls may not be stamped with their session (and are refused) and writes are not kept out of other sessions' claims",
                hooks.display(),
                copilot_setup::HOOK,
                copilot_setup::EVENTS.join(", "),
                copilot_setup::WRITE_HOOK,
                copilot_setup::WRITE_EVENT,
            ),
            fix,
        ),
        Ok(_) => report.problem(
            &format!(
                "{} is not setup's hooks file: messages for Copilot sessions are never handed over",
                hooks.display()
            ),
            fix,
        ),
        Err(_) => report.problem(
            &format!(
                "no hooks file {}: messages for Copilot sessions are never handed over",
                hooks.display()
            ),
            fix,
        ),
    }
}
