//! OpenClaw (2026.9.6, tested in CI): its sessions from its state folder
//! (`--openclaw-state`), the plugin `setup openclaw` installs (the tools as
//! `session-tools__sessions_list`, …, hand-overs at each prompt through its
//! `host-shim mcp` child's `session-tools/*` requests), and what `doctor` checks.

mod doctor;
mod setup;

use crate::doctor::checks::Report;
use crate::profile::{
    HarnessProfile, ServedParts, Serving, SetupInputs, StoreInputs, Tour, path_flag, path_of,
};
use crate::setup::change::Change;
use anyhow::Result;
use clap::{Arg, ArgMatches};
use host_shim::plugin_session::{Moment, PluginSessions};
use host_shim::{McpClient, OpenClawStore, Store};
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub struct OpenClaw;

const STATE: &str = "openclaw_state";
const WAKE: &str = "openclaw_wake_command";

/// `--openclaw-wake-command TEMPLATE`, of `mcp` and of `setup openclaw`.
fn wake_flag() -> Arg {
    Arg::new(WAKE)
        .long("openclaw-wake-command")
        .value_name("TEMPLATE")
        .help(
            "With --openclaw-state: wake a cold OpenClaw session with this command, e.g. \
             'openclaw agent --session-id {id} --message \"A message from another session is \
             waiting.\"' (through the gateway when one runs; {id}, {cwd} and {message_file} \
             filled in; no shell runs it; it starts in the session's folder). Off by default: \
             a message for a cold session waits for its next prompt",
        )
}

impl HarnessProfile for OpenClaw {
    fn name(&self) -> &'static str {
        "openclaw"
    }

    fn title(&self) -> &'static str {
        "OpenClaw"
    }

    fn sessions_flag(&self) -> Arg {
        path_flag(
            STATE,
            "openclaw-state",
            "DIR",
            "OpenClaw's sessions, from its state folder (usually ~/.openclaw; its agents' \
             databases are under agents/)",
        )
    }

    fn delivery_flags(&self) -> Vec<Arg> {
        vec![wake_flag().requires(STATE)]
    }

    fn store(
        &self,
        place: &Path,
        flags: &ArgMatches,
        with: &StoreInputs,
    ) -> Result<Box<dyn Store>> {
        let wake = with.wake_command(flags, WAKE)?;
        let presence = with.state.presence()?;
        let store = OpenClawStore::open(place, with.inbox.clone(), presence).wake_command(wake);
        Ok(Box::new(store))
    }

    fn mcp_client(&self) -> McpClient {
        host_shim::openclaw::MCP_CLIENT
    }

    fn serve(&self, serving: &Serving) -> Result<ServedParts> {
        // The server also answers the plugin that started it. OpenClaw 2026.9.6 keeps the
        // turn the plugin starts for an idle session (the frames are its message), not
        // a prompt hook's text: there the answer is the hand-over.
        let sessions = PluginSessions::new(serving.inbox.clone(), serving.state.presence()?)
            .recorded_in(serving.place, host_shim::openclaw::handed_over_ids)
            .unrecorded_at(&[Moment::Prompt, Moment::Busy]);
        Ok(ServedParts {
            companion: Some(Arc::new(crate::plugin_companion::PluginCompanion(sessions))),
            ..ServedParts::default()
        })
    }

    fn tour(&self) -> Tour {
        Tour {
            sessions: "OpenClaw's sessions",
            none: "the OpenClaw state folder holds no sessions",
            page: "docs/openclaw.md",
        }
    }

    fn place_flags(&self) -> Vec<Arg> {
        vec![path_flag(
            STATE,
            "openclaw-state",
            "DIR",
            "OpenClaw's state folder (default: $OPENCLAW_STATE_DIR, else ~/.openclaw); its \
             config is $OPENCLAW_CONFIG_PATH, else openclaw.json there",
        )]
    }

    fn sessions_place(&self, places: &ArgMatches) -> Result<PathBuf> {
        setup::state_dir(path_of(places, STATE))
    }

    fn setup_flags(&self) -> Vec<Arg> {
        vec![wake_flag().help(
            "OpenClaw only: the server wakes a cold OpenClaw session with this command (see \
             `host-shim mcp --openclaw-wake-command`)",
        )]
    }

    fn setup(&self, places: &ArgMatches, setup: &SetupInputs) -> Result<Vec<Change>> {
        let state = self.sessions_place(places)?;
        let config = setup::config_file(&state, path_of(places, STATE));
        let wake = setup.flags.try_get_one::<String>(WAKE).ok().flatten();
        setup::changes(&state, &config, wake, setup)
    }

    fn set_up(&self) -> &'static str {
        "a new OpenClaw turn has the tools session-tools__sessions_list, \
         session-tools__sessions_read and session-tools__sessions_send (OpenClaw's own \
         sessions_list and sessions_send keep their names). With Tool Search on (OpenClaw's \
         default) the model finds them by tool_search (\"sessions\"); with \
         `tools.toolSearch: false` they are offered directly. A running gateway takes the \
         change as it reloads its config."
    }

    fn command(&self) -> &'static str {
        "openclaw"
    }

    fn tested_version(&self) -> &'static str {
        "2026.9.6"
    }

    fn home_hint(&self) -> &'static str {
        "~/.openclaw"
    }

    fn check(&self, places: &ArgMatches, report: &mut Report, fix: &str) {
        match self.sessions_place(places) {
            Ok(state) => {
                let config = setup::config_file(&state, path_of(places, STATE));
                doctor::check(report, &state, &config, fix)
            }
            Err(err) => report.problem(&format!("{err:#}"), fix),
        }
    }
}
