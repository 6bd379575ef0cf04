//! `host-shim doctor` for OpenCode: the plugin file, the server it runs, the package
//! it imports, the database.

use super::setup as opencode_setup;
use host_shim_profile::HarnessProfile;
use host_shim_profile::checks::{Report, check_plugin_file, check_server};
use std::path::Path;

pub fn check(report: &mut Report, config: &Path, db: &Path, fix: &str) {
    let file = config.join("plugin").join(opencode_setup::FILE_NAME);
    match opencode_setup::host_of(&file) {
        Err(err) => report.problem(&format!("{err:#}"), fix),
        Ok(None) => report.problem(
            &format!(
                "no plugin file {}: OpenCode's sessions have no tools",
                file.display()
            ),
            fix,
        ),
        Ok(Some((command, args))) => {
            check_server(report, &command, &args, fix);
            let current = opencode_setup::plugin_file(&command, &args);
            if check_plugin_file(report, &file, &current, fix) {
                report.ok(&format!(
                    "{} is this host-shim's plugin file (it asks before edit, write and apply_patch)",
                    file.display()
                ));
            }
        }
    }
    let package = config.join("node_modules/@opencode-ai/plugin/package.json");
    if !package.is_file() {
        report.note(&format!(
            "@opencode-ai/plugin is not in {} yet: OpenCode installs it at its next start (from the npm registry; offline, run `npm install @opencode-ai/plugin@{}` there)",
            config.display(),
            super::OpenCode.tested_version()
        ));
    }
    if !db.is_file() {
        report.note(&format!(
            "no database at {} yet: OpenCode writes it at its first session",
            db.display()
        ));
    }
}
