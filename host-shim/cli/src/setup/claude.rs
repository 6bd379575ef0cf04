//! `host-shim setup claude`: Claude Code's user-scope MCP server (`mcpServers` in
//! `~/.claude.json`, where `claude mcp add --scope user` puts it), its hooks and the
//! permission for the tools (`~/.claude/settings.json`); with `CLAUDE_CONFIG_DIR` (or
//! `--claude-config`), both in that folder, as Claude Code reads them then.

use super::json::{Json, JsonFile, Object, array_at, drop_if_empty, object_at};
use super::{Change, Mode, apply, command_line, this_binary};
use crate::flags::SetupArgs;
use anyhow::{Result, bail};
use std::path::{Path, PathBuf};

/// The server's name, which makes the tools `mcp__session-tools__sessions_list`, ….
const SERVER: &str = "session-tools";
/// The permission that lets the model use every tool of the server.
const PERMISSION: &str = "mcp__session-tools";
/// The hook events `host-shim claude-hook` answers; PostToolUse for every tool.
const EVENTS: [(&str, Option<&str>); 4] = [
    ("SessionStart", None),
    ("UserPromptSubmit", None),
    ("PostToolUse", Some("*")),
    ("Stop", None),
];

/// Where Claude Code keeps what setup edits.
struct Places {
    /// `~/.claude.json` (or `$CLAUDE_CONFIG_DIR/.claude.json`).
    config_file: PathBuf,
    /// `~/.claude/settings.json` (or `$CLAUDE_CONFIG_DIR/settings.json`).
    settings_file: PathBuf,
    /// `~/.claude/projects`, the transcripts the server reads.
    projects: PathBuf,
}

impl Places {
    fn find(flag: Option<&Path>) -> Result<Places> {
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

pub fn run(args: &SetupArgs) -> Result<()> {
    let places = Places::find(args.claude_config.as_deref())?;
    let binary = match &args.binary {
        Some(binary) => binary.clone(),
        None => this_binary()?,
    };
    let binary = binary.to_string_lossy().into_owned();
    let state = args
        .state_dir
        .as_ref()
        .map(|d| d.to_string_lossy().into_owned());
    let mut server_args = vec![
        "mcp".to_string(),
        "--claude-projects".to_string(),
        places.projects.to_string_lossy().into_owned(),
    ];
    let mut hook = vec![binary.as_str(), "claude-hook"];
    if let Some(state) = &state {
        server_args.extend(["--state-dir".to_string(), state.clone()]);
        hook.extend(["--state-dir", state.as_str()]);
    }
    // As `claude mcp add --scope user` writes it.
    let server = Json::Object(Object::of([
        ("type", Json::str("stdio")),
        ("command", Json::str(&binary)),
        (
            "args",
            Json::Array(server_args.iter().map(|a| Json::str(a)).collect()),
        ),
        ("env", Json::Object(Object::default())),
    ]));
    let hook = command_line(&hook);

    let mut config = JsonFile::read(&places.config_file)?;
    let mut settings = JsonFile::read(&places.settings_file)?;
    if args.remove {
        remove_server(&mut config.object, &places.config_file)?;
        remove_hooks_and_permission(&mut settings.object, &places.settings_file)?;
    } else {
        object_at(&mut config.object, "mcpServers", &places.config_file)?.insert(SERVER, server);
        add_hooks_and_permission(&mut settings.object, &hook, &places.settings_file)?;
    }
    let changes = [
        Change {
            after: config.after(),
            before: config.bytes,
            path: places.config_file,
        },
        Change {
            after: settings.after(),
            before: settings.bytes,
            path: places.settings_file,
        },
    ];
    let mode = if args.dry_run {
        Mode::DryRun
    } else {
        Mode::Write
    };
    let changed = apply(&changes, mode)?;
    match (args.dry_run, args.remove, changed) {
        (true, _, _) => {}
        (false, false, false) => println!("Claude Code was set up already: nothing changed."),
        (false, false, true) => println!(
            "Claude Code is set up: a new `claude` session has the tools \
             (mcp__session-tools__sessions_list, sessions_read, sessions_send); \
             `claude mcp list` shows the server. Undo with `host-shim setup claude --remove`."
        ),
        (false, true, false) => println!("Nothing of setup's was there: nothing changed."),
        (false, true, true) => {
            println!("Setup's entries are removed; everything else is as it was.")
        }
    }
    Ok(())
}

/// Whether a hook command runs `host-shim claude-hook` (this binary or another copy).
fn is_our_hook(command: &str) -> bool {
    let mut words = command.split_whitespace();
    let program = words.next().unwrap_or("").trim_matches('\'');
    let name = Path::new(program).file_name().and_then(|n| n.to_str());
    name == Some("host-shim") && words.next() == Some("claude-hook")
}

/// Whether a hook group (`{"matcher"?, "hooks": [...]}`) holds one of ours.
fn is_our_group(group: &Json) -> bool {
    let Some(Json::Array(hooks)) = group.get("hooks") else {
        return false;
    };
    (hooks.iter())
        .filter_map(|hook| hook.get("command").and_then(Json::as_str))
        .any(is_our_hook)
}

fn add_hooks_and_permission(settings: &mut Object, hook: &str, file: &Path) -> Result<()> {
    let permissions = object_at(settings, "permissions", file)?;
    let allow = array_at(permissions, "allow", file)?;
    if !allow.iter().any(|p| p.as_str() == Some(PERMISSION)) {
        allow.push(Json::str(PERMISSION));
    }
    let hooks = object_at(settings, "hooks", file)?;
    for (event, matcher) in EVENTS {
        let mut group = Object::default();
        if let Some(matcher) = matcher {
            group.insert("matcher", Json::str(matcher));
        }
        let command = Object::of([("type", Json::str("command")), ("command", Json::str(hook))]);
        group.insert("hooks", Json::Array(vec![Json::Object(command)]));
        let groups = array_at(hooks, event, file)?;
        // Ours in the place of the first one there was (a binary that moved), once.
        match groups.iter().position(is_our_group) {
            Some(first) => {
                groups[first] = Json::Object(group);
                let mut index = 0;
                groups.retain(|g| {
                    index += 1;
                    index - 1 == first || !is_our_group(g)
                });
            }
            None => groups.push(Json::Object(group)),
        }
    }
    Ok(())
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
        let mut removed = false;
        for (event, _) in EVENTS {
            if let Some(Json::Array(groups)) = hooks.get_mut(event)
                && groups.iter().any(is_our_group)
            {
                groups.retain(|g| !is_our_group(g));
                drop_if_empty(hooks, event);
                removed = true;
            }
        }
        if removed {
            drop_if_empty(settings, "hooks");
        }
    }
    Ok(())
}

fn remove_server(config: &mut Object, file: &Path) -> Result<()> {
    let Some(servers) = config.get_mut("mcpServers") else {
        return Ok(());
    };
    let Json::Object(servers) = servers else {
        bail!(
            "\"mcpServers\" in {} is not a JSON object; nothing was changed",
            file.display()
        );
    };
    let ours = servers
        .get(SERVER)
        .and_then(|s| s.get("command"))
        .and_then(Json::as_str)
        .and_then(|c| Path::new(c).file_name())
        .is_some_and(|n| n == "host-shim");
    if ours {
        servers.remove(SERVER);
        drop_if_empty(config, "mcpServers");
    }
    Ok(())
}
