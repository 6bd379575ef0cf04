//! `host-shim doctor` for Gemini CLI: the server in `settings.json` starts, lists the
//! tools and is trusted; the hooks are there; and what Gemini's session retention may
//! delete.

use super::setup as gemini_setup;
use host_shim_profile::checks::{Report, check_hooks, check_server_in, check_write_hook};
use host_shim_profile::json::{Json, JsonFile};
use std::path::Path;

pub fn check(report: &mut Report, home: &Path, fix: &str) {
    let settings_file = home.join("settings.json");
    let settings = match JsonFile::read(&settings_file) {
        Ok(settings) => settings,
        Err(err) => {
            report.unreadable(&err, fix);
            return;
        }
    };
    let server = gemini_setup::SERVER;
    let found = check_server_in(report, &settings.object, &settings_file, server, fix);
    let trusted = (settings.object.get("mcpServers"))
        .and_then(|servers| servers.get(gemini_setup::SERVER))
        .and_then(|server| server.get("trust"));
    if found && trusted != Some(&Json::Bool(true)) {
        report.problem(
            "the session-tools server is not trusted: a headless `gemini -p` is not offered its tools",
            fix,
        );
    }
    check_hooks(
        report,
        settings.object.get("hooks"),
        &gemini_setup::EVENTS,
        gemini_setup::HOOK,
        &settings_file.display().to_string(),
        fix,
    );
    let write_hook = crate::write_hook::WRITE_HOOK;
    let asked = (
        settings.object.get("hooks"),
        &gemini_setup::WRITE_EVENTS[..],
        write_hook,
    );
    check_write_hook(report, asked, &settings_file.display().to_string(), fix);
    // Gemini's clean-up at start deletes old session files, and with a resume's stub
    // every file of that session.
    let retention = (settings.object.get("general"))
        .and_then(|general| general.get("sessionRetention"))
        .and_then(|retention| retention.get("enabled"));
    if retention != Some(&Json::Bool(false)) {
        report.note(
            "Gemini CLI's session retention is on: at each start it may delete old session files \
             (with a resumed session's stub, the whole session), and with them what sessions_read \
             shows; `\"general\": {\"sessionRetention\": {\"enabled\": false}}` in settings.json keeps them",
        );
    }
}
