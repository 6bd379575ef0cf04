//! `host-shim setup claude`: Claude Code's user-scope MCP server (`mcpServers` in
//! `~/.claude.json`, where `claude mcp add --scope user` puts it), its hooks and the
//! permission for the tools (`~/.claude/settings.json`); with `CLAUDE_CONFIG_DIR` (or
//! `--claude-config`), both in that folder, as Claude Code reads them then.

use anyhow::{Result, bail};
use host_shim_profile::SetupInputs;
use host_shim_profile::change::Change;
use host_shim_profile::hooks::{self, Event};
use host_shim_profile::json::{
    Json, JsonFile, Object, array_at, drop_if_empty, object_at, remove_our_server,
};
use std::path::{Path, PathBuf};

/// The server's name, which makes the tools `mcp__session-tools__sessions_list`, ….
pub use host_shim_profile::SERVER;
/// The permission that lets the model use every tool of the server.
pub const PERMISSION: &str = "mcp__session-tools";
/// The hook events `host-shim claude-hook` answers; PostToolUse for every tool.
pub const EVENTS: [Event; 4] = [
    Event::on("SessionStart"),
    Event::on("UserPromptSubmit"),
    Event::matching("PostToolUse", "*"),
    Event::on("Stop"),
];
/// The hook's subcommand.
pub const HOOK: &str = "claude-hook";
/// The pre-write hook's event: before each tool that writes a file.
pub const WRITE_EVENTS: [Event; 1] = [Event::matching(
    "PreToolUse",
    crate::write_hook::WRITING_TOOLS,
)];

/// Where Claude Code keeps what setup edits.
pub struct Places {
    /// `~/.claude.json` (or `$CLAUDE_CONFIG_DIR/.claude.json`).
    pub config_file: PathBuf,
    /// `~/.claude/settings.json` (or `$CLAUDE_CONFIG_DIR/settings.json`).
    pub settings_file: PathBuf,
    /// `~/.claude/projects`, the transcripts the server reads.
    pub projects: PathBuf,
}

impl Places {
    pub fn find(flag: Option<&Path>) -> Result<Places> {
        let chosen = flag
            .map(Path::to_path_buf)
            .or_else(|| std::env::var_os("CLAUDE_CONFIG_DIR").map(PathBuf::from));
        if let Some(dir) = chosen {
            return Ok(Places {
                config_file: dir.join(".claude.json"),
                settings_file: dir.join("settings.json"),
                projects: dir.join("projects"),
            });
        }
        let Some(home) = std::env::var_os("HOME").map(PathBuf::from) else {
            bail!("no HOME to find Claude Code's files in: set HOME, or pass --claude-config DIR");
        };
        Ok(Places {
            config_file: home.join(".claude.json"),
            settings_file: home.join(".claude").join("settings.json"),
            projects: home.join(".claude").join("projects"),
        })
    }
}

/// What setup (or `--remove`) would change in Claude Code's files.
pub fn changes(places: &Places, setup: &SetupInputs) -> Result<Vec<Change>> {
    let commands = setup.commands;
    let hook = commands.hook(HOOK);
    let write_hook = commands.write_hook(crate::write_hook::WRITE_HOOK);
    // As `claude mcp add --scope user` writes it.
    let server = Json::Object(Object::of([
        ("type", Json::str("stdio")),
        ("command", Json::str(&commands.binary)),
        (
            "args",
            Json::Array(commands.server_args.iter().map(|a| Json::str(a)).collect()),
        ),
        ("env", Json::Object(Object::default())),
    ]));

    let mut config = JsonFile::read(&places.config_file)?;
    let mut settings = JsonFile::read(&places.settings_file)?;
    if setup.remove {
        remove_our_server(&mut config.object, SERVER, &places.config_file)?;
        remove_hooks_and_permission(&mut settings.object, &places.settings_file)?;
    } else {
        object_at(&mut config.object, "mcpServers", &places.config_file)?.insert(SERVER, server);
        add_hooks_and_permission(
            &mut settings.object,
            (&hook, &write_hook),
            &places.settings_file,
        )?;
    }
    Ok(vec![
        Change {
            after: config.after(),
            before: config.bytes,
            path: places.config_file.clone(),
            own_folder: None,
        },
        Change {
            after: settings.after(),
            before: settings.bytes,
            path: places.settings_file.clone(),
            own_folder: None,
        },
    ])
}

/// `commands`: the hand-over hook's command line and the pre-write hook's.
fn add_hooks_and_permission(
    settings: &mut Object,
    (hook, write_hook): (&str, &str),
    file: &Path,
) -> Result<()> {
    let permissions = object_at(settings, "permissions", file)?;
    let allow = array_at(permissions, "allow", file)?;
    if !allow.iter().any(|p| p.as_str() == Some(PERMISSION)) {
        allow.push(Json::str(PERMISSION));
    }
    let hooks = object_at(settings, "hooks", file)?;
    hooks::add(hooks, &EVENTS, HOOK, hook, file)?;
    let write_hook_name = crate::write_hook::WRITE_HOOK;
    hooks::add(hooks, &WRITE_EVENTS, write_hook_name, write_hook, file)
}

fn remove_hooks_and_permission(settings: &mut Object, file: &Path) -> Result<()> {
    if let Some(permissions) = settings.get_mut("permissions") {
        let Json::Object(permissions) = permissions else {
            bail!(
                "\"permissions\" in {} is not a JSON object; nothing was changed",
                file.display()
            );
        };
        if let Some(Json::Array(allow)) = permissions.get_mut("allow")
            && allow.iter().any(|p| p.as_str() == Some(PERMISSION))
        {
            allow.retain(|p| p.as_str() != Some(PERMISSION));
            drop_if_empty(permissions, "allow");
            drop_if_empty(settings, "permissions");
        }
    }
    if let Some(Json::Object(hooks)) = settings.get_mut("hooks") {
        let handing = hooks::remove(hooks, &EVENTS, HOOK);
        let writing = hooks::remove(hooks, &WRITE_EVENTS, crate::write_hook::WRITE_HOOK);
        if handing || writing {
            drop_if_empty(settings, "hooks");
        }
    }
    Ok(())
}
