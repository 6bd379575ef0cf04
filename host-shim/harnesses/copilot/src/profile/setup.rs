//! `host-shim setup copilot`: Copilot CLI's MCP server (`mcpServers` in
//! `$COPILOT_HOME/mcp-config.json`, `~/.copilot/mcp-config.json` by default, where
//! `copilot mcp add` puts a user's servers) and setup's own hooks file
//! (`$COPILOT_HOME/hooks/session-tools.json`). Both are the user's: Copilot loads them
//! in every folder, trusted or not, and a headless `copilot -p` offers the tools too.
//! Everything else in `mcp-config.json` is kept; `--remove` takes out the server and the
//! hooks file (and the `hooks/` folder when setup made it and it holds nothing else).

use anyhow::{Context, Result, bail};
use host_shim_profile::SetupInputs;
use host_shim_profile::change::Change;
use host_shim_profile::json::{Json, JsonFile, Object, object_at, remove_our_server};
use std::path::Path;

/// The server's name: the model sees `session-tools-sessions_list`, ….
pub use host_shim_profile::SERVER;
/// The hook's subcommand.
pub const HOOK: &str = "copilot-hook";
/// The pre-write hook's subcommand, and the event setup runs it at.
pub use crate::write_hook::WRITE_HOOK;
pub const WRITE_EVENT: &str = crate::write_hook::EVENT;
/// The events the hook answers, in the order Copilot fires them (`preMcpToolCall`
/// stamps each call of ours with the session making it).
pub const EVENTS: [&str; 5] = [
    "sessionStart",
    "userPromptSubmitted",
    "preMcpToolCall",
    "postToolUse",
    "agentStop",
];
/// Setup's hooks file, in `hooks/`.
pub const HOOKS_FILE: &str = "session-tools.json";

/// The hooks file setup writes: `hook` at each of [`EVENTS`], and `write_hook` (the
/// pre-write hook, with the server's flags) at `preToolUse`.
pub fn hooks_file(hook: &str, write_hook: &str) -> String {
    let entry =
        |bash: &str| serde_json::json!([{"type": "command", "bash": bash, "timeoutSec": 30}]);
    let mut hooks: serde_json::Map<String, serde_json::Value> = (EVENTS.iter())
        .map(|event| (event.to_string(), entry(hook)))
        .collect();
    hooks.insert(WRITE_EVENT.to_string(), entry(write_hook));
    let file = serde_json::json!({"version": 1, "hooks": hooks});
    format!("{}\n", serde_json::to_string_pretty(&file).expect("JSON"))
}

/// The command setup's hooks file runs at `event`, if it names one.
fn command_at<'a>(file: &'a serde_json::Value, event: &str) -> Option<&'a str> {
    file["hooks"][event][0]["bash"].as_str()
}

/// Whether `text` is a hooks file setup wrote, this version's or an earlier one's:
/// every event it names runs `host-shim copilot-hook` (or, at `preToolUse`, `host-shim
/// copilot-write-hook`).
pub fn is_ours(text: &str) -> bool {
    let Ok(file) = serde_json::from_str::<serde_json::Value>(text) else {
        return false;
    };
    let Some(hooks) = file["hooks"].as_object().filter(|h| !h.is_empty()) else {
        return false;
    };
    hooks.keys().all(|event| {
        command_at(&file, event).is_some_and(|bash| {
            bash.contains(HOOK) || (event == WRITE_EVENT && bash.contains(WRITE_HOOK))
        })
    })
}

/// Whether setup's hooks file `text` runs the hook at every event this version needs,
/// and the pre-write hook before each tool.
pub fn is_complete(text: &str) -> bool {
    let Ok(file) = serde_json::from_str::<serde_json::Value>(text) else {
        return false;
    };
    EVENTS
        .iter()
        .all(|event| command_at(&file, event).is_some_and(|bash| bash.contains(HOOK)))
        && command_at(&file, WRITE_EVENT).is_some_and(|bash| bash.contains(WRITE_HOOK))
}

/// What setup (or `--remove`) would change in Copilot CLI's files.
pub fn changes(home: &Path, setup: &SetupInputs) -> Result<Vec<Change>> {
    let commands = setup.commands;
    let server_args = &commands.server_args;
    let config_file = home.join("mcp-config.json");
    let mut config = JsonFile::read(&config_file)?;
    if setup.remove {
        remove_our_server(&mut config.object, SERVER, &config_file)?;
    } else {
        // As `copilot mcp add` writes a local server; every tool allowed.
        let server = Json::Object(Object::of([
            ("type", Json::str("local")),
            ("command", Json::str(&commands.binary)),
            (
                "args",
                Json::Array(server_args.iter().map(|a| Json::str(a)).collect()),
            ),
            ("tools", Json::Array(vec![Json::str("*")])),
        ]));
        object_at(&mut config.object, "mcpServers", &config_file)?.insert(SERVER, server);
    }
    let hooks_path = home.join("hooks").join(HOOKS_FILE);
    let before = match std::fs::read_to_string(&hooks_path) {
        Ok(text) => Some(text),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => None,
        Err(err) => {
            return Err(err).with_context(|| format!("cannot read {}", hooks_path.display()));
        }
    };
    if before.as_deref().is_some_and(|text| !is_ours(text)) {
        bail!(
            "{} is not setup's hooks file (its events do not run host-shim {HOOK}); move it away and run setup again; nothing was changed",
            hooks_path.display()
        );
    }
    let hooks_after =
        (!setup.remove).then(|| hooks_file(&commands.hook(HOOK), &commands.write_hook(WRITE_HOOK)));
    Ok(vec![
        Change {
            after: config.after(),
            before: config.bytes,
            path: config_file,
            own_folder: None,
        },
        Change {
            own_folder: hooks_path.parent().map(Path::to_path_buf),
            path: hooks_path,
            before,
            after: hooks_after,
        },
    ])
}
