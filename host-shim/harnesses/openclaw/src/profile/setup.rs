//! `host-shim setup openclaw`: the session-tools plugin, installed as OpenClaw installs
//! a local plugin package: its folder under OpenClaw's extensions
//! (`<state>/extensions/session-tools/`: `package.json`, `openclaw.plugin.json`,
//! `index.js`, where `openclaw plugins install <folder>` copies one), and its entry in
//! OpenClaw's config (`$OPENCLAW_CONFIG_PATH`, else `<state>/openclaw.json`):
//! `plugins.entries.session-tools` enabled, with `hooks.allowConversationAccess` (a
//! plugin not bundled with OpenClaw gets its prompt hook only with it) and `config`
//! naming the command the plugin runs (`host-shim mcp` with where every harness's
//! sessions are, and the wake command when `--openclaw-wake-command` is given).
//! Everything else in the config is kept; `--remove` takes out the
//! entry and the folder.

use anyhow::{Context, Result, bail};
use host_shim_profile::change::Change;
use host_shim_profile::json::{Json, JsonFile, Object, drop_if_empty, object_at};
use host_shim_profile::{SetupInputs, companion};
use std::path::{Path, PathBuf};

/// The plugin's id (its entry in `plugins.entries` and its folder).
pub const PLUGIN_ID: &str = "session-tools";

/// The plugin package's files as they ship.
const FILES: [(&str, &str); 3] = [
    ("package.json", include_str!("plugin/package.json")),
    (
        "openclaw.plugin.json",
        include_str!("plugin/openclaw.plugin.json"),
    ),
    ("index.js", include_str!("plugin/index.js")),
];

/// The plugin package's files as setup writes them: their names and texts.
pub fn plugin_files() -> impl Iterator<Item = (&'static str, String)> {
    FILES
        .into_iter()
        .map(|(name, text)| (name, companion::with_plugin_js(text)))
}

/// OpenClaw's config file: `$OPENCLAW_CONFIG_PATH` when it names the same state, else
/// `openclaw.json` in the state folder.
pub fn config_file(state: &Path, state_flag: Option<&Path>) -> PathBuf {
    match std::env::var_os("OPENCLAW_CONFIG_PATH").filter(|p| !p.is_empty()) {
        Some(path) if state_flag.is_none() => PathBuf::from(path),
        _ => state.join("openclaw.json"),
    }
}

/// The plugin's folder.
pub fn plugin_dir(state: &Path) -> PathBuf {
    state.join("extensions").join(PLUGIN_ID)
}

/// The command and arguments the config's entry has the plugin run; `None` without
/// the entry.
pub fn host_of(config: &JsonFile) -> Option<(String, Vec<String>)> {
    let entry = (config.object.get("plugins"))
        .and_then(|plugins| plugins.get("entries"))
        .and_then(|entries| entries.get(PLUGIN_ID))?;
    let host = entry.get("config")?;
    let command = host.get("command").and_then(Json::as_str)?;
    let args = match host.get("args") {
        Some(Json::Array(args)) => args.iter().filter_map(Json::as_str).map(str::to_string),
        _ => return None,
    };
    Some((command.to_string(), args.collect()))
}

/// What setup (or `--remove`) would change in OpenClaw's files.
pub fn changes(state: &Path, config_path: &Path, setup: &SetupInputs) -> Result<Vec<Change>> {
    let commands = setup.commands;
    let server_args = &commands.server_args;
    let mut config = JsonFile::read(config_path)?;
    let plugins = object_at(&mut config.object, "plugins", config_path)?;
    let entries = object_at(plugins, "entries", config_path)?;
    if setup.remove {
        entries.remove(PLUGIN_ID);
        drop_if_empty(plugins, "entries");
        drop_if_empty(&mut config.object, "plugins");
    } else {
        let host = Object::of([
            ("command", Json::str(&commands.binary)),
            (
                "args",
                Json::Array(server_args.iter().map(|a| Json::str(a)).collect()),
            ),
        ]);
        let entry = Object::of([
            ("enabled", Json::Bool(true)),
            (
                "hooks",
                Json::Object(Object::of([("allowConversationAccess", Json::Bool(true))])),
            ),
            ("config", Json::Object(host)),
        ]);
        entries.insert(PLUGIN_ID, Json::Object(entry));
    }
    if !setup.remove && config.bytes.is_none() {
        // Without a config of the person's, OpenClaw is not set up yet: writing one
        // would stand in for its own onboarding.
        bail!(
            "no OpenClaw config at {}: run `openclaw onboard` (or `openclaw setup`) first, then setup again; nothing was changed",
            config_path.display()
        );
    }
    let mut changes = vec![Change {
        after: config.after(),
        before: config.bytes,
        path: config_path.to_path_buf(),
        own_folder: None,
    }];
    let folder = plugin_dir(state);
    for (name, text) in plugin_files() {
        let path = folder.join(name);
        let before = match std::fs::read_to_string(&path) {
            Ok(text) => Some(text),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => None,
            Err(err) => return Err(err).with_context(|| format!("cannot read {}", path.display())),
        };
        let ours = before.as_deref().is_none_or(|b| is_ours(name, b));
        if !ours {
            bail!(
                "{} is not setup's (another plugin named {PLUGIN_ID}?); move {} away and run setup again; nothing was changed",
                path.display(),
                folder.display()
            );
        }
        changes.push(Change {
            path,
            before,
            after: (!setup.remove).then_some(text),
            own_folder: Some(folder.clone()),
        });
    }
    Ok(changes)
}

/// Whether a file in the plugin's folder is one setup wrote (of any version).
fn is_ours(name: &str, text: &str) -> bool {
    match name {
        "index.js" => text.starts_with("// session-tools for OpenClaw:"),
        "package.json" => text.contains("\"session-tools-openclaw\""),
        _ => text.contains(&format!("\"id\": \"{PLUGIN_ID}\"")),
    }
}
