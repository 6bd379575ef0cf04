//! `host-shim setup gemini`: Gemini CLI's user settings (`~/.gemini/settings.json`):
//! the MCP server `session-tools` (`mcpServers`, with `"trust": true`, without which a
//! headless `gemini -p` is not offered its tools) and the hooks (`hooks`, in the layout
//! Claude Code's share: `SessionStart`, `BeforeAgent`, `BeforeTool` on our tools,
//! `AfterTool`, `AfterAgent`). Everything else in the file is kept; `--remove` takes
//! out only what setup put there.

use anyhow::Result;
use host_shim_profile::SetupInputs;
use host_shim_profile::change::Change;
use host_shim_profile::hooks::{self, Event};
use host_shim_profile::json::{
    Json, JsonFile, Object, drop_if_empty, object_at, remove_our_server,
};
use std::path::Path;

/// The server's name: the model sees `mcp_session-tools_sessions_list`, ….
pub use host_shim_profile::SERVER;
/// The hook's subcommand.
pub const HOOK: &str = "gemini-hook";
/// The events the hook answers; `BeforeTool` only for our tools, whose calls it stamps.
pub const EVENTS: [Event; 5] = [
    Event::on("SessionStart"),
    Event::on("BeforeAgent"),
    Event::matching("BeforeTool", "mcp_session-tools_.*"),
    Event::on("AfterTool"),
    Event::on("AfterAgent"),
];

/// The pre-write hook's event: before each tool that writes a file.
pub const WRITE_EVENTS: [Event; 1] = [Event::matching(
    "BeforeTool",
    crate::write_hook::WRITING_TOOLS,
)];

/// What setup (or `--remove`) would change in Gemini CLI's settings.
pub fn changes(home: &Path, setup: &SetupInputs) -> Result<Vec<Change>> {
    let commands = setup.commands;
    let server_args = &commands.server_args;
    let settings_file = home.join("settings.json");
    let mut settings = JsonFile::read(&settings_file)?;
    if setup.remove {
        remove_our_server(&mut settings.object, SERVER, &settings_file)?;
        if let Some(Json::Object(hooks)) = settings.object.get_mut("hooks") {
            let handing = hooks::remove(hooks, &EVENTS, HOOK);
            let writing = hooks::remove(hooks, &WRITE_EVENTS, crate::write_hook::WRITE_HOOK);
            if handing || writing {
                drop_if_empty(&mut settings.object, "hooks");
            }
        }
    } else {
        let server = Json::Object(Object::of([
            ("command", Json::str(&commands.binary)),
            (
                "args",
                Json::Array(server_args.iter().map(|a| Json::str(a)).collect()),
            ),
            // Headless runs offer only trusted servers' tools; the tools ask the person
            // nothing a send's guard rails do not already hold.
            ("trust", Json::Bool(true)),
        ]));
        object_at(&mut settings.object, "mcpServers", &settings_file)?.insert(SERVER, server);
        let hooks = object_at(&mut settings.object, "hooks", &settings_file)?;
        hooks::add(hooks, &EVENTS, HOOK, &commands.hook(HOOK), &settings_file)?;
        let write_hook = crate::write_hook::WRITE_HOOK;
        let command = commands.write_hook(write_hook);
        hooks::add(hooks, &WRITE_EVENTS, write_hook, &command, &settings_file)?;
    }
    Ok(vec![Change {
        after: settings.after(),
        before: settings.bytes,
        path: settings_file,
        own_folder: None,
    }])
}
