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
    Facts, HarnessProfile, Home, PathFlag, ServedParts, Serving, SetupInputs, StoreInputs, Tour,
    WakeFlag, WriteHook, path_of, pinned_version, write,
};
use std::path::Path;

pub struct OpenClaw;

const STATE: &str = "openclaw_state";

static FACTS: Facts = Facts {
    name: "openclaw",
    title: "OpenClaw",
    tested_version: pinned_version(include_str!("../../suite/package.json"), "openclaw"),
    home_hint: "~/.openclaw",
    set_up: "a new OpenClaw turn has the tools session-tools__sessions_list, \
         session-tools__sessions_read, session-tools__sessions_send and \
         session-tools__sessions_claim (OpenClaw's own sessions_list and sessions_send keep \
         their names), and its file writes (write, edit, apply_patch) keep out of other \
         sessions' claims. With Tool Search on (OpenClaw's \
         default) the model finds them by tool_search (\"sessions\"); with \
         `tools.toolSearch: false` they are offered directly. A running gateway takes the \
         change as it reloads its config.",
    sessions: PathFlag {
        id: STATE,
        long: "openclaw-state",
        value_name: "DIR",
        help: "OpenClaw's sessions, from its state folder (usually ~/.openclaw; its agents' \
             databases are under agents/)",
    },
    place_help: Some(
        "OpenClaw's state folder (default: $OPENCLAW_STATE_DIR, else ~/.openclaw); its \
             config is $OPENCLAW_CONFIG_PATH, else openclaw.json there",
    ),
    home: Some(Home {
        env: "OPENCLAW_STATE_DIR",
        find: crate::db::default_state_dir,
    }),
    places: &[],
    wake: Some(WakeFlag {
        id: "openclaw_wake_command",
        long: "openclaw-wake-command",
        help: "With --openclaw-state: wake a cold OpenClaw session with this command, e.g. \
             'openclaw agent --session-id {id} --message \"A message from another session is \
             waiting.\"' (through the gateway when one runs; {id}, {cwd} and {message_file} \
             filled in; no shell runs it; it starts in the session's folder). Off by default: \
             a message for a cold session waits for its next prompt",
        setup_help: Some(
            "OpenClaw only: the server wakes a cold OpenClaw session with this command (see \
             `host-shim mcp --openclaw-wake-command`)",
        ),
    }),
    mcp_client: crate::MCP_CLIENT,
    hooks: &[],
    write_hook: Some(WriteHook {
        command: crate::write_hook::WRITE_HOOK,
        runs: "What the OpenClaw plugin runs before write, edit and apply_patch",
        ask: crate::write_hook::ask,
        refuse: write::refuse_in_words,
    }),
    tour: Tour {
        sessions: "OpenClaw's sessions",
        none: "the OpenClaw state folder holds no sessions",
        page: "host-shim/harnesses/openclaw/README.md",
    },
    resume: None,
};

impl HarnessProfile for OpenClaw {
    fn facts(&self) -> &'static Facts {
        &FACTS
    }

    fn store(&self, place: &Path, with: &StoreInputs) -> Result<Box<dyn Store>> {
        let wake = with.wake_command(&FACTS)?;
        let presence = with.state.presence()?;
        Ok(Box::new(
            OpenClawStore::open(place, with.inbox.clone(), presence).wake_command(wake),
        ))
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
        let config = setup::config_file(&state, path_of(places, STATE));
        setup::changes(&state, &config, setup)
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
