//! `host-shim setup opencode`: OpenCode's plugin file
//! (`$XDG_CONFIG_HOME/opencode/plugin/session-tools.js`, `~/.config/opencode/…`
//! without it, or under `--opencode-config`), which gives the model the three tools
//! under their own names and hands messages over (`session-tools.js`). It runs
//! `host-shim mcp --opencode-db DB` (and `--state-dir`), DB being OpenCode's database
//! (`--opencode-db`, else where OpenCode keeps it for this user).
//!
//! OpenCode loads every `.js` file in that folder at start and installs the package
//! the file imports (`@opencode-ai/plugin`) into the configuration folder itself.
//! Nothing else of OpenCode's is edited: a plugin's tools need no permission entry.

use anyhow::{Context, Result, bail};
use host_shim_profile::SetupInputs;
use host_shim_profile::change::Change;
use std::path::{Path, PathBuf};

/// The plugin file as it ships; setup fills in the command.
const PLUGIN: &str = include_str!("session-tools.js");
/// The file's first line: what marks it as setup's.
const FIRST_LINE: &str = "// session-tools for OpenCode:";
pub const FILE_NAME: &str = "session-tools.js";

/// OpenCode's configuration folder.
pub fn config_dir(flag: Option<&Path>) -> Result<PathBuf> {
    if let Some(dir) = flag {
        return Ok(dir.to_path_buf());
    }
    if let Some(config) = std::env::var_os("XDG_CONFIG_HOME").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(config).join("opencode"));
    }
    match std::env::var_os("HOME") {
        Some(home) => Ok(PathBuf::from(home).join(".config").join("opencode")),
        None => bail!(
            "no HOME to find OpenCode's files in: set HOME or XDG_CONFIG_HOME, or pass --opencode-config DIR"
        ),
    }
}

/// The plugin file running `binary` with `args`.
pub fn plugin_file(binary: &str, args: &[String]) -> String {
    let host = serde_json::json!({ "command": binary, "args": args });
    host_shim_profile::companion::with_plugin_js(PLUGIN).replacen("__HOST__", &host.to_string(), 1)
}

/// The command and arguments a plugin file of setup's runs; `None` without the file,
/// an error for a file setup did not write or cannot read.
pub fn host_of(file: &Path) -> Result<Option<(String, Vec<String>)>> {
    let text = match std::fs::read_to_string(file) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(err).with_context(|| format!("cannot read {}", file.display())),
    };
    let host = (text.starts_with(FIRST_LINE))
        .then(|| {
            text.lines()
                .find_map(|line| line.strip_prefix("const HOST = "))
        })
        .flatten()
        .and_then(|json| {
            serde_json::from_str::<serde_json::Value>(json.trim_end_matches(';')).ok()
        });
    let command = host.as_ref().and_then(|h| h["command"].as_str());
    let args = host.as_ref().and_then(|h| h["args"].as_array());
    match (command, args) {
        (Some(command), Some(args)) => Ok(Some((
            command.to_string(),
            args.iter()
                .filter_map(|a| a.as_str().map(str::to_string))
                .collect(),
        ))),
        _ => bail!(
            "{} is not a plugin file setup wrote (no `const HOST = {{command, args}}` line)",
            file.display()
        ),
    }
}

/// What setup (or `--remove`) would change in OpenCode's files.
pub fn changes(config: &Path, setup: &SetupInputs) -> Result<Vec<Change>> {
    let binary = &setup.commands.binary;
    let server_args = &setup.commands.server_args;
    let path = config.join("plugin").join(FILE_NAME);
    let before = match std::fs::read_to_string(&path) {
        Ok(text) => Some(text),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => None,
        Err(err) => return Err(err).with_context(|| format!("cannot read {}", path.display())),
    };
    let ours = before.as_deref().is_some_and(|t| t.starts_with(FIRST_LINE));
    if before.is_some() && !ours {
        bail!(
            "{} is not setup's file (it does not start with \"{FIRST_LINE}\"); move it away and run setup again; nothing was changed",
            path.display()
        );
    }
    let after = (!setup.remove).then(|| plugin_file(binary, server_args));
    Ok(vec![Change {
        own_folder: path.parent().map(Path::to_path_buf),
        path,
        before,
        after,
    }])
}
