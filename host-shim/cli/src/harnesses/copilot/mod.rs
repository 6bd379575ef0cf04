//! GitHub Copilot CLI (1.0.102): its sessions from its home (`--copilot-home`), the
//! calling session from the environment Copilot starts the server with, the
//! `copilot-hook` command, what `setup copilot` writes and `doctor` checks.

mod doctor;
mod setup;

use crate::doctor::checks::Report;
use crate::profile::{HarnessProfile, Hook, SetupInputs, StoreInputs, Tour, path_flag, path_of};
use crate::setup::change::Change;
use crate::state::StateArgs;
use anyhow::Result;
use clap::{Arg, ArgMatches};
use host_shim::{CopilotStore, McpClient, SessionQuery, Store};
use std::path::{Path, PathBuf};

pub struct Copilot;

const HOME: &str = "copilot_home";
const WAKE: &str = "copilot_wake_command";

fn wake_flag() -> Arg {
    Arg::new(WAKE)
        .long("copilot-wake-command")
        .value_name("TEMPLATE")
        .help(
            "With --copilot-home: wake a cold Copilot CLI session with this command, e.g. \
             'copilot --resume={id} -p \"A message from another session is waiting.\" \
             --allow-all-tools' ({id}, {cwd} and {message_file} filled in; no shell runs it; \
             it starts in the session's folder). Off by default: a message for a cold session \
             waits for its next start",
        )
}

impl HarnessProfile for Copilot {
    fn name(&self) -> &'static str {
        "copilot"
    }

    fn title(&self) -> &'static str {
        "GitHub Copilot CLI"
    }

    fn sessions_flag(&self) -> Arg {
        path_flag(
            HOME,
            "copilot-home",
            "DIR",
            "Copilot CLI's sessions, from this COPILOT_HOME (usually ~/.copilot)",
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
        let store = CopilotStore::open(place, with.inbox.clone()).wake_command(wake);
        Ok(Box::new(store))
    }

    fn mcp_client(&self) -> McpClient {
        host_shim::copilot::MCP_CLIENT
    }

    fn hooks(&self) -> &'static [Hook] {
        &[Hook {
            command: "copilot-hook",
            about: "A Copilot CLI command hook (~/.copilot/hooks/): reads the hook's JSON on \
                    stdin and hands the messages spooled for that session over on stdout \
                    (agentStop: the oldest queued one, as a block decision that makes it the next \
                    prompt; userPromptSubmitted and sessionStart: all that wait, as context; \
                    postToolUse: the steered ones); preMcpToolCall: stamps each call of the \
                    session-tools server with the session making it",
            answer: hook,
        }]
    }

    fn tour(&self) -> Tour {
        Tour {
            sessions: "Copilot CLI's sessions",
            none: "the COPILOT_HOME holds no Copilot CLI sessions",
            page: "docs/copilot.md",
        }
    }

    fn place_flags(&self) -> Vec<Arg> {
        vec![path_flag(
            HOME,
            "copilot-home",
            "DIR",
            "Copilot CLI's home (default: $COPILOT_HOME, else ~/.copilot)",
        )]
    }

    fn sessions_place(&self, places: &ArgMatches) -> Result<PathBuf> {
        setup::copilot_home(path_of(places, HOME))
    }

    fn setup_flags(&self) -> Vec<Arg> {
        vec![wake_flag().help(
            "Copilot CLI only: the server wakes a cold Copilot session with this command (see \
             `host-shim mcp --copilot-wake-command`)",
        )]
    }

    fn setup(&self, places: &ArgMatches, setup: &SetupInputs) -> Result<Vec<Change>> {
        let wake = setup.flags.try_get_one::<String>(WAKE).ok().flatten();
        setup::changes(&self.sessions_place(places)?, wake, setup)
    }

    fn set_up(&self) -> &'static str {
        "a new `copilot` session has the tools (session-tools-sessions_list, \
         session-tools-sessions_read, session-tools-sessions_send), interactive or `copilot -p`, in any folder: a user's MCP servers and \
         hooks need no folder trust."
    }

    fn command(&self) -> &'static str {
        "copilot"
    }

    fn tested_version(&self) -> &'static str {
        "1.0.102"
    }

    fn home_hint(&self) -> &'static str {
        "~/.copilot"
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
        let mut sessions = CopilotStore::open(&home, inbox);
        (sessions.get_session(session)).map(|_| format!("copilot --resume={session}"))
    }
}

/// `host-shim copilot-hook`: a call of our server stamped with the state folder's key;
/// any other event over the state folder's inbox and the sessions in `$COPILOT_HOME`
/// (or `~/.copilot`), as Copilot runs its hooks.
fn hook(
    state: &StateArgs,
    input: &[u8],
    out: &mut dyn std::io::Write,
) -> Result<host_shim::inbox::HookReport> {
    use host_shim::copilot::hook;
    let input = hook::HookInput::read(input)?;
    if input.is_tool_call() {
        return hook::stamp(&input, setup::SERVER, &state.root()?, out);
    }
    let inbox = state.inbox()?;
    let home = setup::copilot_home(None)?;
    hook::answer(&*inbox, &home, &input, out)
}
