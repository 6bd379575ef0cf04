//! Gemini CLI (0.61.0): its sessions from its folder (`--gemini-home`), each call's
//! caller from the stamp our `BeforeTool` hook adds, the `gemini-hook` command, what
//! `setup gemini` writes and `doctor` checks.

mod doctor;
mod setup;

use crate::doctor::checks::Report;
use crate::profile::{HarnessProfile, Hook, SetupInputs, StoreInputs, Tour, path_flag, path_of};
use crate::setup::change::Change;
use crate::state::StateArgs;
use anyhow::Result;
use clap::{Arg, ArgMatches};
use host_shim::{GeminiStore, McpClient, SessionQuery, Store};
use std::path::{Path, PathBuf};

pub struct Gemini;

const HOME: &str = "gemini_home";

impl HarnessProfile for Gemini {
    fn name(&self) -> &'static str {
        "gemini"
    }

    fn title(&self) -> &'static str {
        "Gemini CLI"
    }

    fn sessions_flag(&self) -> Arg {
        path_flag(
            HOME,
            "gemini-home",
            "DIR",
            "Gemini CLI's sessions, from this folder (usually ~/.gemini)",
        )
    }

    fn store(
        &self,
        place: &Path,
        _flags: &ArgMatches,
        with: &StoreInputs,
    ) -> Result<Box<dyn Store>> {
        Ok(Box::new(GeminiStore::open(place, with.inbox.clone())))
    }

    fn mcp_client(&self) -> McpClient {
        host_shim::gemini::MCP_CLIENT
    }

    fn hooks(&self) -> &'static [Hook] {
        &[Hook {
            command: "gemini-hook",
            about: "A Gemini CLI command hook (~/.gemini/settings.json): reads the hook's JSON on \
                    stdin; BeforeTool: stamps each call of the session-tools server with the \
                    session making it (and denies a call whose model wrote the stamp); \
                    SessionStart and BeforeAgent: hands over all that wait, as context; \
                    AfterTool: the steered ones; AfterAgent: the oldest queued one, as a denial \
                    that makes it the next prompt",
            answer: hook,
        }]
    }

    fn tour(&self) -> Tour {
        Tour {
            sessions: "Gemini CLI's sessions",
            none: "the Gemini CLI folder holds no sessions",
            page: "docs/gemini.md",
        }
    }

    fn place_flags(&self) -> Vec<Arg> {
        vec![path_flag(
            HOME,
            "gemini-home",
            "DIR",
            "Gemini CLI's folder (default: $GEMINI_CLI_HOME/.gemini, else ~/.gemini)",
        )]
    }

    fn sessions_place(&self, places: &ArgMatches) -> Result<PathBuf> {
        setup::gemini_home(path_of(places, HOME))
    }

    fn setup(&self, places: &ArgMatches, setup: &SetupInputs) -> Result<Vec<Change>> {
        setup::changes(&self.sessions_place(places)?, setup)
    }

    fn set_up(&self) -> &'static str {
        "a new `gemini` session has the tools (mcp_session-tools_sessions_list, sessions_read, \
         sessions_send), the server trusted so headless `gemini -p` is offered them too. Gemini \
         CLI loads a user's settings only in a trusted folder: trust it when Gemini asks, or set \
         GEMINI_CLI_TRUST_WORKSPACE=true for a headless run."
    }

    fn command(&self) -> &'static str {
        "gemini"
    }

    fn tested_version(&self) -> &'static str {
        "0.61.0"
    }

    fn home_hint(&self) -> &'static str {
        "~/.gemini"
    }

    fn check(&self, places: &ArgMatches, report: &mut Report, fix: &str) {
        match self.sessions_place(places) {
            Ok(home) => doctor::check(report, &home, fix),
            Err(err) => report.problem(&format!("{err:#}"), fix),
        }
    }

    fn resume(&self, places: &ArgMatches, session: &str) -> Option<String> {
        let home = self.sessions_place(places).ok()?;
        let inbox: host_shim::SharedInbox = std::sync::Arc::new(host_shim::MemoryInbox::new());
        let mut sessions = GeminiStore::open(&home, inbox);
        (sessions.get_session(session)).map(|_| format!("gemini --resume {session}"))
    }
}

/// `host-shim gemini-hook`: a call of our server stamped with the state folder's key;
/// any other event over the state folder's inbox, as Gemini runs its hooks.
fn hook(
    state: &StateArgs,
    input: &[u8],
    out: &mut dyn std::io::Write,
) -> Result<host_shim::inbox::HookReport> {
    use host_shim::gemini::hook;
    let input = hook::HookInput::read(input)?;
    if input.is_tool_call() {
        return hook::stamp(&input, setup::SERVER, &state.root()?, out);
    }
    let inbox = state.inbox()?;
    hook::answer(&*inbox, &input, out)
}
