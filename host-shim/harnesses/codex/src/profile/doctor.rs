//! `host-shim doctor` for Codex: the server in `config.toml` starts and lists the
//! tools; the hooks are in `hooks.json`, and Codex trusts them.

use super::setup as codex_setup;
use host_shim_profile::checks::{Report, check_hooks, check_server, check_write_hook};
use host_shim_profile::hooks;
use host_shim_profile::json::{Json, JsonFile};
use std::path::Path;

pub fn check(report: &mut Report, home: &Path, fix: &str) {
    let config_file = home.join("config.toml");
    let config = codex_setup::read_text(&config_file)
        .and_then(|text| codex_setup::parse_toml(text.as_deref().unwrap_or(""), &config_file));
    let hooks_file = home.join("hooks.json");
    match &config {
        Err(err) => report.unreadable(err, fix),
        Ok(config) => {
            let server = config
                .get("mcp_servers")
                .and_then(|servers| servers.get(codex_setup::SERVER));
            let command = server
                .and_then(|s| s.get("command"))
                .and_then(|c| c.as_str());
            let args: Vec<String> = (server
                .and_then(|s| s.get("args"))
                .and_then(|a| a.as_array()))
            .map(|args| {
                args.iter()
                    .filter_map(|a| a.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
            match command {
                None => report.problem(
                    &format!(
                        "no [mcp_servers.session-tools] in {}",
                        config_file.display()
                    ),
                    fix,
                ),
                Some(command) => check_server(report, command, &args, fix),
            }
        }
    }
    let shown = hooks_file.display().to_string();
    match JsonFile::read(&hooks_file) {
        Err(err) => report.unreadable(&err, fix),
        Ok(hooks_json) => {
            let hooks = hooks_json.object.get("hooks");
            let all_there = check_hooks(
                report,
                hooks,
                &codex_setup::EVENTS,
                codex_setup::HOOK,
                &shown,
                fix,
            );
            let asked = (
                hooks,
                &codex_setup::WRITE_EVENTS[..],
                codex_setup::WRITE_HOOK,
            );
            let write_there = check_write_hook(report, asked, &shown, fix);
            // Codex runs a hook only once its person trusted it: config.toml's
            // `[hooks.state."<hooks.json>:<event>:<group>:<hook>"] trusted_hash`.
            if let (true, true, Ok(config), Some(Json::Object(events))) =
                (all_there, write_there, &config, hooks)
            {
                let setups = [
                    (&codex_setup::EVENTS[..], codex_setup::HOOK),
                    (&codex_setup::WRITE_EVENTS[..], codex_setup::WRITE_HOOK),
                ];
                let untrusted: Vec<&str> = (setups.iter())
                    .flat_map(|(events, hook)| events.iter().map(move |event| (event, *hook)))
                    .filter(|(event, hook)| {
                        let Some(Json::Array(groups)) = events.get(event.name) else {
                            return true;
                        };
                        let Some(group) = groups.iter().position(|g| hooks::is_setups(g, hook))
                        else {
                            return true;
                        };
                        let key = format!("{shown}:{}:{group}:0", snake(event.name));
                        let trusted = (config.get("hooks").and_then(|h| h.get("state")))
                            .and_then(|state| state.get(key.as_str()))
                            .and_then(|entry| entry.get("trusted_hash"))
                            .is_some();
                        !trusted
                    })
                    .map(|(event, _)| event.name)
                    .collect();
                if untrusted.is_empty() {
                    report.ok("Codex trusts the hooks");
                } else {
                    report.problem(
                        &format!(
                            "Codex has not been told to trust the hook on {} (it runs no hook it does not trust)",
                            untrusted.join(", ")
                        ),
                        "run `codex` and choose \"Trust all and continue\" when it says \"Hooks need review\" (or type /hooks)",
                    );
                }
            }
        }
    }
}

/// `SessionStart` → `session_start`, as Codex names events in its trust keys.
fn snake(event: &str) -> String {
    let mut out = String::new();
    for (i, ch) in event.chars().enumerate() {
        if ch.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(ch.to_ascii_lowercase());
    }
    out
}
