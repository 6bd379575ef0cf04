//! OpenCode (1.18.33, tested in CI): its sessions from its database (`--opencode-db`),
//! a wake command for a cold one, the plugin file `setup opencode` writes (the tools
//! under their own names, hand-overs by the plugin through its `host-shim mcp` child's
//! `session-tools/*` requests), and what `doctor` checks.

mod doctor;
mod setup;

use crate::doctor::checks::Report;
use crate::profile::{
    HarnessProfile, ServedParts, Serving, SetupInputs, StoreInputs, Tour, path_flag, path_of,
};
use crate::setup::change::Change;
use anyhow::Result;
use clap::{Arg, ArgMatches};
use host_shim::plugin_session::PluginSessions;
use host_shim::{McpClient, OpenCodeStore, Store};
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub struct OpenCode;

const DATABASE: &str = "opencode_db";
const WAKE: &str = "opencode_wake_command";
const CONFIG: &str = "opencode_config";

impl HarnessProfile for OpenCode {
    fn name(&self) -> &'static str {
        "opencode"
    }

    fn title(&self) -> &'static str {
        "OpenCode"
    }

    fn sessions_flag(&self) -> Arg {
        path_flag(
            DATABASE,
            "opencode-db",
            "FILE",
            "OpenCode's sessions, from its database (usually \
                 ~/.local/share/opencode/opencode.db; `opencode db path` prints it)",
        )
    }

    fn delivery_flags(&self) -> Vec<Arg> {
        vec![wake_flag().requires(DATABASE)]
    }

    fn store(
        &self,
        place: &Path,
        flags: &ArgMatches,
        with: &StoreInputs,
    ) -> Result<Box<dyn Store>> {
        let wake = with.wake_command(flags, WAKE)?;
        let presence = with.state.presence()?;
        let store = OpenCodeStore::open(place, with.inbox.clone(), presence).wake_command(wake);
        Ok(Box::new(store))
    }

    fn mcp_client(&self) -> McpClient {
        host_shim::opencode::MCP_CLIENT
    }

    fn serve(&self, serving: &Serving) -> Result<ServedParts> {
        // The server also answers the plugin that started it.
        let sessions = PluginSessions::new(serving.inbox.clone(), serving.state.presence()?)
            .recorded_in(serving.place, host_shim::opencode::handed_over_ids);
        Ok(ServedParts {
            companion: Some(Arc::new(crate::plugin_companion::PluginCompanion(sessions))),
            ..ServedParts::default()
        })
    }

    fn tour(&self) -> Tour {
        Tour {
            sessions: "OpenCode's sessions",
            none: "the database holds no OpenCode sessions",
            page: "docs/opencode.md",
        }
    }

    fn place_flags(&self) -> Vec<Arg> {
        vec![
            path_flag(
                CONFIG,
                "opencode-config",
                "DIR",
                "OpenCode's configuration folder (default: $XDG_CONFIG_HOME/opencode, else \
                     ~/.config/opencode)",
            ),
            path_flag(
                DATABASE,
                "opencode-db",
                "FILE",
                "OpenCode's database (default: $XDG_DATA_HOME/opencode/opencode.db, else \
                     ~/.local/share/opencode/opencode.db; `opencode db path` prints it)",
            ),
        ]
    }

    fn setup_flags(&self) -> Vec<Arg> {
        vec![wake_flag().help(
            "OpenCode only: the server wakes a cold OpenCode session with this command (see \
             `host-shim mcp --opencode-wake-command`)",
        )]
    }

    fn sessions_place(&self, places: &ArgMatches) -> Result<PathBuf> {
        setup::database(path_of(places, DATABASE))
    }

    fn setup(&self, places: &ArgMatches, setup: &SetupInputs) -> Result<Vec<Change>> {
        let wake = setup.flags.try_get_one::<String>(WAKE).ok().flatten();
        setup::changes(&self.config(places)?, wake, setup)
    }

    fn set_up(&self) -> &'static str {
        "a new OpenCode session has the tools sessions_list, sessions_read and \
         sessions_send (the first start installs @opencode-ai/plugin, which the plugin \
         file imports)."
    }

    fn command(&self) -> &'static str {
        "opencode"
    }

    fn tested_version(&self) -> &'static str {
        "1.18.33"
    }

    fn home_hint(&self) -> &'static str {
        "~/.config/opencode"
    }

    fn found(&self, places: &ArgMatches) -> Result<bool> {
        Ok(self.config(places)?.exists() || self.sessions_place(places)?.exists())
    }

    fn check(&self, places: &ArgMatches, report: &mut Report, fix: &str) {
        match (self.config(places), self.sessions_place(places)) {
            (Ok(config), Ok(db)) => doctor::check(report, &config, &db, fix),
            (Err(err), _) | (_, Err(err)) => report.problem(&format!("{err:#}"), fix),
        }
    }
}

impl OpenCode {
    fn config(&self, places: &ArgMatches) -> Result<PathBuf> {
        setup::config_dir(path_of(places, CONFIG))
    }
}

/// `--opencode-wake-command TEMPLATE`, of `mcp` and of `setup opencode`.
fn wake_flag() -> Arg {
    Arg::new(WAKE)
        .long("opencode-wake-command")
        .value_name("TEMPLATE")
        .help(
            "With --opencode-db: wake a cold OpenCode session with this command, e.g. \
             'opencode run --session {id} \"A message from another session is waiting.\"' \
             ({id}, {cwd} and {message_file} filled in; no shell runs it; it starts in the \
             session's folder). Off by default: a message for a cold session waits for its \
             next prompt",
        )
}
