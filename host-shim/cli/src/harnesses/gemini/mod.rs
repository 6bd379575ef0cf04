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
const WAKE: &str = "gemini_wake_command";

fn wake_flag() -> Arg {
    Arg::new(WAKE)
        .long("gemini-wake-command")
        .value_name("TEMPLATE")
        .help(
            "With --gemini-home: wake a cold Gemini CLI session with this command, e.g. \
             'gemini --resume {id} -p \"A message from another session is waiting.\" --yolo' \
             ({id}, {cwd} and {message_file} filled in; no shell runs it; it starts in the \
             session's folder). Off by default: a message for a cold session waits for its next \
             start",
        )
}

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

    fn delivery_flags(&self) -> Vec<Arg> {
        vec![wake_flag().requires(HOME)]
    }

    fn store(
        &self,
        place: &Path,
        flags: &ArgMatches,
        with: &StoreInputs,
    ) -> Result<Box<dyn Store>> {
        let wake = with.wake_command(flags, WAKE)?;
        let store = GeminiStore::open(place, with.inbox.clone())
            .presence(with.state.presence()?)
            .wake_command(wake);
        Ok(Box::new(store))
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

    fn setup_flags(&self) -> Vec<Arg> {
        vec![wake_flag().help(
            "Gemini CLI only: the server wakes a cold Gemini session with this command (see \
             `host-shim mcp --gemini-wake-command`)",
        )]
    }

    fn setup(&self, places: &ArgMatches, setup: &SetupInputs) -> Result<Vec<Change>> {
        let wake = setup.flags.try_get_one::<String>(WAKE).ok().flatten();
        setup::changes(&self.sessions_place(places)?, wake, setup)
    }

    fn set_up(&self) -> &'static str {
        "a new `gemini` session has the tools (mcp_session-tools_sessions_list, \
         mcp_session-tools_sessions_read, mcp_session-tools_sessions_send), the server trusted so headless `gemini -p` is offered them too. Gemini \
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
    if input.is_session_start() {
        // Live while its Gemini process runs; a registry that cannot be written
        // leaves it cold, and the hand-over goes on.
        let registered = host_shim::LocalPresence::open(&state.root()?)
            .and_then(|presence| hook::register(&presence, &input));
        if let Err(err) = registered {
            eprintln!("host-shim gemini-hook: the session is not registered as live: {err:#}");
        }
    }
    let inbox = state.inbox()?;
    hook::answer(&*inbox, &input, out)
}
