//! OpenClaw (2026.9.6, tested in CI): its sessions from its state folder
//! (`--openclaw-state`), the plugin `setup openclaw` installs (the tools as
//! `session-tools__sessions_list`, …, hand-overs at each prompt through its
//! `host-shim mcp` child's `session-tools/*` requests), and what `doctor` checks.

mod doctor;
mod setup;

use crate::OpenClawStore;
use anyhow::Result;
use clap::ArgMatches;
use host_shim::Store;
use host_shim::plugin_session::Moment;
use host_shim_profile::change::Change;
use host_shim_profile::checks::Report;
use host_shim_profile::{
    HarnessProfile, ServedParts, Serving, SetupInputs, StoreInputs, WriteAsk, path_of,
};
use std::io::Write;
use std::path::{Path, PathBuf};

pub struct OpenClaw;

impl HarnessProfile for OpenClaw {
    host_shim_profile::facts!("suite/package.json", crate::MCP_CLIENT);

    fn store(&self, place: &Path, with: &StoreInputs) -> Result<Box<dyn Store>> {
        let wake = with.wake_command(self.facts())?;
        let presence = with.state.presence()?;
        Ok(Box::new(
            OpenClawStore::open(place, with.inbox.clone(), presence).wake_command(wake),
        ))
    }

    fn find_home(&self) -> Option<PathBuf> {
        crate::db::default_state_dir()
    }

    fn serve(&self, serving: &Serving) -> Result<ServedParts> {
        // The server also answers the plugin that started it. OpenClaw 2026.9.6 keeps the
        // turn the plugin starts for an idle session (the frames are its message), not
        // a prompt hook's text: there the answer is the hand-over.
        let sessions = (serving.plugin_sessions(crate::handed_over_ids)?)
            .unrecorded_at(&[Moment::Prompt, Moment::Busy]);
        Ok(ServedParts::plugin_companion(sessions))
    }

    fn setup(&self, places: &ArgMatches, setup: &SetupInputs) -> Result<Vec<Change>> {
        let state = self.sessions_place(places)?;
        let config = setup::config_file(&state, path_of(places, self.facts().sessions.long));
        setup::changes(&state, &config, setup)
    }

    fn check(&self, places: &ArgMatches, report: &mut Report, fix: &str) {
        match self.sessions_place(places) {
            Ok(state) => {
                let config =
                    setup::config_file(&state, path_of(places, self.facts().sessions.long));
                doctor::check(report, &state, &config, fix)
            }
            Err(err) => report.problem(&format!("{err:#}"), fix),
        }
    }

    fn ask_write(&self, input: &[u8]) -> Result<Option<WriteAsk>> {
        crate::write_hook::ask(input)
    }

    fn refuse_write(&self, text: &str, out: &mut dyn Write) -> Result<()> {
        host_shim_profile::write::refuse_in_words(text, out)
    }
}
