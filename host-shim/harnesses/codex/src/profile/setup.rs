//! `host-shim setup codex`: Codex's MCP server (`[mcp_servers.session-tools]` in
//! `$CODEX_HOME/config.toml`, comments and order kept) and its hooks
//! (`$CODEX_HOME/hooks.json`); `CODEX_HOME` is `~/.codex` unless set (or
//! `--codex-home`). Codex runs no hook until its person trusts it ("Hooks need review"
//! at the next interactive start, or `/hooks`): setup leaves that choice to them, since
//! a trusted hook runs outside Codex's sandbox.

use anyhow::{Result, bail};
use host_shim_profile::SetupInputs;
use host_shim_profile::change::Change;
use host_shim_profile::hooks::{self, Event};
use host_shim_profile::json::{Json, JsonFile, drop_if_empty, object_at};
use std::path::Path;
use toml_edit::{Array, DocumentMut, Item, Table, value};

/// The server's name: the model sees `mcp__session_tools.sessions_list`, ….
pub use host_shim_profile::SERVER;
/// The hook events `host-shim codex-hook` answers.
pub const EVENTS: [Event; 3] = [
    Event::on("SessionStart"),
    Event::on("UserPromptSubmit"),
    Event::on("Stop"),
];
pub const HOOK: &str = "codex-hook";
/// The pre-write hook: before each `apply_patch`, with the server's flags.
pub const WRITE_EVENTS: [Event; 1] = [Event::matching(
    "PreToolUse",
    crate::write_hook::WRITING_TOOLS,
)];
pub use crate::write_hook::WRITE_HOOK;

/// What setup (or `--remove`) would change in Codex's files.
pub fn changes(home: &Path, setup: &SetupInputs) -> Result<Vec<Change>> {
    let commands = setup.commands;
    let hook = commands.hook(HOOK);

    let config_file = home.join("config.toml");
    let config_before = read_text(&config_file)?;
    let mut config = parse_toml(config_before.as_deref().unwrap_or(""), &config_file)?;
    let hooks_file = home.join("hooks.json");
    let mut hooks_json = JsonFile::read(&hooks_file)?;
    if setup.remove {
        remove_server(&mut config);
        if let Some(Json::Object(events)) = hooks_json.object.get_mut("hooks") {
            let handing_over = hooks::remove(events, &EVENTS, HOOK);
            let writing = hooks::remove(events, &WRITE_EVENTS, WRITE_HOOK);
            if handing_over || writing {
                drop_if_empty(&mut hooks_json.object, "hooks");
            }
        }
    } else {
        add_server(
            &mut config,
            &commands.binary,
            &commands.server_args,
            &config_file,
        )?;
        let events = object_at(&mut hooks_json.object, "hooks", &hooks_file)?;
        hooks::add(events, &EVENTS, HOOK, &hook, &hooks_file)?;
        let write_hook = commands.write_hook(WRITE_HOOK);
        hooks::add(events, &WRITE_EVENTS, WRITE_HOOK, &write_hook, &hooks_file)?;
    }
    let config_after = config.to_string();
    Ok(vec![
        Change {
            // A file left blank by --remove goes; one that was blank before stays.
            after: (!config_after.trim().is_empty()
                || config_before.as_deref() == Some(&config_after))
            .then_some(config_after),
            before: config_before,
            path: config_file,
            own_folder: None,
        },
        Change {
            after: hooks_json.after(),
            before: hooks_json.bytes,
            path: hooks_file,
            own_folder: None,
        },
    ])
}

pub fn read_text(path: &Path) -> Result<Option<String>> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(err) => bail!("cannot read {}: {err}", path.display()),
    }
}

pub fn parse_toml(text: &str, file: &Path) -> Result<DocumentMut> {
    text.parse::<DocumentMut>().map_err(|err| {
        anyhow::anyhow!(
            "{} is not valid TOML ({}); nothing was changed. Fix or move it, then run setup again",
            file.display(),
            err.to_string().trim()
        )
    })
}

/// `[mcp_servers.session-tools]`'s command and args, its other keys (a person's `env`,
/// timeouts) kept.
fn add_server(
    config: &mut DocumentMut,
    binary: &str,
    server_args: &[String],
    file: &Path,
) -> Result<()> {
    let servers = config.entry("mcp_servers").or_insert_with(|| {
        let mut table = Table::new();
        table.set_implicit(true);
        Item::Table(table)
    });
    let Some(servers) = servers.as_table_like_mut() else {
        bail!(
            "\"mcp_servers\" in {} is not a table; nothing was changed. Fix it, then run setup again",
            file.display()
        );
    };
    let server = servers.entry(SERVER).or_insert(Item::Table(Table::new()));
    let Some(server) = server.as_table_like_mut() else {
        bail!(
            "\"mcp_servers.{SERVER}\" in {} is not a table; nothing was changed. Fix it, then run setup again",
            file.display()
        );
    };
    let same_command = server.get("command").and_then(Item::as_str) == Some(binary);
    if !same_command {
        server.insert("command", value(binary));
    }
    let args: Array = server_args.iter().map(String::as_str).collect();
    let same_args = (server.get("args").and_then(Item::as_array)).is_some_and(|now| {
        now.iter()
            .map(|v| v.as_str())
            .eq(server_args.iter().map(|a| Some(a.as_str())))
    });
    if !same_args {
        server.insert("args", value(args));
    }
    Ok(())
}

/// Takes out `[mcp_servers.session-tools]` when it runs a host-shim, and `mcp_servers`
/// when that left it an empty table of no text of its own.
fn remove_server(config: &mut DocumentMut) {
    let Some(servers) = config
        .get_mut("mcp_servers")
        .and_then(Item::as_table_like_mut)
    else {
        return;
    };
    let ours = (servers.get(SERVER))
        .and_then(|server| server.get("command"))
        .and_then(Item::as_str)
        .and_then(|command| Path::new(command).file_name())
        .is_some_and(|name| name == "host-shim");
    if !ours {
        return;
    }
    servers.remove(SERVER);
    let empty_implicit = (config.get("mcp_servers").and_then(Item::as_table))
        .is_some_and(|t| t.is_empty() && t.is_implicit());
    if empty_implicit {
        config.remove("mcp_servers");
    }
}
