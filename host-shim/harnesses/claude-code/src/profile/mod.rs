//! Claude Code (2.1.328, tested in CI): its sessions from its projects folder
//! (`--claude-projects`), its MCP client's session in the server's environment, its
//! session's lifecycle beside the server (registration, idle hand-over, subagents),
//! the `claude-hook` command, what `setup claude` writes and `doctor` checks.

mod doctor;
mod setup;

use crate::ClaudeStore;
use crate::mcp_session::{ClaudeSession, subagent_of_call};
use anyhow::Result;
use clap::ArgMatches;
use host_shim::Store;
use host_shim::inbox::HookReport;
use host_shim_profile::change::Change;
use host_shim_profile::checks::Report;
use host_shim_profile::{
    CallerOfCall, HarnessProfile, HookCall, ServedParts, Serving, SetupInputs, StoreInputs,
    WriteAsk, path_of,
};
use std::path::{Path, PathBuf};

pub struct Claude;

impl HarnessProfile for Claude {
    host_shim_profile::facts!("suite/package.json", crate::MCP_CLIENT);

    fn store(&self, place: &Path, with: &StoreInputs) -> Result<Box<dyn Store>> {
        let wake = with.wake_command(self.facts())?;
        let presence = with.state.presence()?;
        Ok(Box::new(ClaudeStore::open(
            place,
            with.inbox.clone(),
            presence,
            wake,
        )?))
    }

    fn serve(&self, serving: &Serving) -> Result<ServedParts> {
        // Claude Code starts one server per session: it is live while the server runs,
        // and an idle one gets its messages through Claude Code's messaging socket.
        let session = ClaudeSession::start(serving.harness, serving.caller);
        // A subagent's calls reach its session's server: the tool-use id names it.
        let of_call = serving.harness.clone();
        let caller_of_call: CallerOfCall =
            Box::new(move |caller, call_id| subagent_of_call(&of_call, caller, call_id));
        Ok(ServedParts {
            held: Some(Box::new(session)),
            caller_of_call: Some(caller_of_call),
            companion: None,
        })
    }

    fn sessions_place(&self, places: &ArgMatches) -> Result<PathBuf> {
        Ok(self.places(places)?.projects)
    }

    fn setup(&self, places: &ArgMatches, setup: &SetupInputs) -> Result<Vec<Change>> {
        setup::changes(&self.places(places)?, setup)
    }

    fn found(&self, places: &ArgMatches) -> Result<bool> {
        let places = self.places(places)?;
        Ok(places.config_file.exists() || places.settings_file.exists())
    }

    fn check(&self, places: &ArgMatches, report: &mut Report, fix: &str) {
        match self.places(places) {
            Ok(places) => doctor::check(report, &places, fix),
            Err(err) => report.problem(&format!("{err:#}"), fix),
        }
    }

    fn holds(&self, projects: &Path, session: &str) -> bool {
        (std::fs::read_dir(projects).into_iter().flatten().flatten())
            .any(|project| project.path().join(format!("{session}.jsonl")).is_file())
    }

    /// `host-shim claude-hook`: over the state folder's inbox and idle marks, obeying
    /// Claude Code's own `crossSessionInbound`.
    fn answer_hook(&self, call: HookCall) -> Result<HookReport> {
        let HookCall { state, input, out } = call;
        // GitHub Copilot CLI runs a trusted project's Claude Code hooks with Claude-shaped
        // input naming its own session; only COPILOT_CLI=1 tells them apart. Copilot's
        // sessions have a hook of their own (copilot-hook): this one stays out.
        if std::env::var_os("COPILOT_CLI").is_some_and(|v| v == "1") {
            return Ok(host_shim::inbox::HookReport::default());
        }
        let (inbox, presence) = (state.inbox()?, state.presence()?);
        let config = crate::settings::config_dir_from_env();
        crate::hook::answer(&*inbox, &*presence, config.as_deref(), input, out)
    }

    fn ask_write(&self, input: &[u8]) -> Result<Option<WriteAsk>> {
        crate::write_hook::ask(input)
    }
}

impl Claude {
    fn places(&self, places: &ArgMatches) -> Result<setup::Places> {
        setup::Places::find(path_of(places, self.facts().places[0].long))
    }
}
