//! OpenCode (1.18.33, tested in CI): its sessions from its database (`--opencode-db`),
//! a wake command for a cold one, the plugin file `setup opencode` writes (the tools
//! under their own names, hand-overs by the plugin through its `host-shim mcp` child's
//! `session-tools/*` requests), and what `doctor` checks.

mod doctor;
mod setup;

use crate::OpenCodeStore;
use anyhow::Result;
use clap::ArgMatches;
use host_shim::Store;
use host_shim_profile::change::Change;
use host_shim_profile::checks::Report;
use host_shim_profile::{
    Facts, HarnessProfile, Home, PathFlag, ServedParts, Serving, SetupInputs, StoreInputs, Tour,
    WakeFlag, WriteHook, path_of, pinned_version, write,
};
use std::path::{Path, PathBuf};

pub struct OpenCode;

const DATABASE: &str = "opencode_db";
const CONFIG: &str = "opencode_config";

static FACTS: Facts = Facts {
    name: "opencode",
    title: "OpenCode",
    tested_version: pinned_version(include_str!("../../suite/package.json"), "opencode-ai"),
    home_hint: "~/.config/opencode",
    set_up: "a new OpenCode session has the tools sessions_list, sessions_read, \
         sessions_send and sessions_claim, and its file writes (edit, write, apply_patch) \
         keep out of other sessions' claims (the first start installs @opencode-ai/plugin, \
         which the plugin file imports).",
    sessions: PathFlag {
        id: DATABASE,
        long: "opencode-db",
        value_name: "FILE",
        help: "OpenCode's sessions, from its database (usually \
                 ~/.local/share/opencode/opencode.db; `opencode db path` prints it)",
    },
    place_help: Some(
        "OpenCode's database (default: $XDG_DATA_HOME/opencode/opencode.db, else \
                     ~/.local/share/opencode/opencode.db; `opencode db path` prints it)",
    ),
    home: Some(Home {
        env: "XDG_DATA_HOME",
        find: crate::db::default_path,
    }),
    places: &[PathFlag {
        id: CONFIG,
        long: "opencode-config",
        value_name: "DIR",
        help: "OpenCode's configuration folder (default: $XDG_CONFIG_HOME/opencode, else \
                     ~/.config/opencode)",
    }],
    wake: Some(WakeFlag {
        id: "opencode_wake_command",
        long: "opencode-wake-command",
        help: "With --opencode-db: wake a cold OpenCode session with this command, e.g. \
             'opencode run --session {id} \"A message from another session is waiting.\"' \
             ({id}, {cwd} and {message_file} filled in; no shell runs it; it starts in the \
             session's folder). Off by default: a message for a cold session waits for its \
             next prompt",
        setup_help: Some(
            "OpenCode only: the server wakes a cold OpenCode session with this command (see \
                     `host-shim mcp --opencode-wake-command`)",
        ),
    }),
    mcp_client: crate::MCP_CLIENT,
    hooks: &[],
    write_hook: Some(WriteHook {
        command: crate::write_hook::WRITE_HOOK,
        runs: "What the OpenCode plugin runs before edit, write and apply_patch",
        ask: crate::write_hook::ask,
        refuse: write::refuse_in_words,
    }),
    tour: Tour {
        sessions: "OpenCode's sessions",
        none: "the database holds no OpenCode sessions",
        page: "host-shim/harnesses/opencode/README.md",
    },
    resume: None,
};

impl HarnessProfile for OpenCode {
    fn facts(&self) -> &'static Facts {
        &FACTS
    }

    fn store(&self, place: &Path, with: &StoreInputs) -> Result<Box<dyn Store>> {
        let store = OpenCodeStore::open(place, with.inbox.clone(), with.state.presence()?);
        Ok(Box::new(store.wake_command(with.wake_command(&FACTS)?)))
    }

    fn serve(&self, serving: &Serving) -> Result<ServedParts> {
        // The server also answers the plugin that started it.
        let sessions = serving.plugin_sessions(crate::handed_over_ids)?;
        Ok(ServedParts::plugin_companion(sessions))
    }

    fn setup(&self, places: &ArgMatches, setup: &SetupInputs) -> Result<Vec<Change>> {
        setup::changes(&self.config(places)?, setup)
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
