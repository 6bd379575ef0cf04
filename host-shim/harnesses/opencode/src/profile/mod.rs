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
    HarnessProfile, ServedParts, Serving, SetupInputs, StoreInputs, WriteAsk, path_of,
};
use std::io::Write;
use std::path::{Path, PathBuf};

pub struct OpenCode;

impl HarnessProfile for OpenCode {
    host_shim_profile::facts!("suite/package.json", crate::MCP_CLIENT);

    fn store(&self, place: &Path, with: &StoreInputs) -> Result<Box<dyn Store>> {
        let store = OpenCodeStore::open(place, with.inbox.clone(), with.state.presence()?);
        Ok(Box::new(
            store.wake_command(with.wake_command(self.facts())?),
        ))
    }

    fn find_home(&self) -> Option<PathBuf> {
        crate::db::default_path()
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

    fn ask_write(&self, input: &[u8]) -> Result<Option<WriteAsk>> {
        crate::write_hook::ask(input)
    }

    fn refuse_write(&self, text: &str, out: &mut dyn Write) -> Result<()> {
        host_shim_profile::write::refuse_in_words(text, out)
    }
}

impl OpenCode {
    fn config(&self, places: &ArgMatches) -> Result<PathBuf> {
        setup::config_dir(path_of(places, self.facts().places[0].long))
    }
}
