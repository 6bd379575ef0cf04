//! Codex (0.169.0, tested in CI): its threads from its home (`--codex-home`), hand-overs
//! through its app-server daemon when one runs, its MCP client's thread and call in
//! each call's `_meta`, the `codex-hook` command, what `setup codex` writes and
//! `doctor` checks (Codex's trust in the hooks among them).

mod doctor;
mod setup;

use crate::doctor::checks::Report;
use crate::profile::{
    HarnessProfile, Hook, Purpose, SetupInputs, StoreInputs, Tour, path_flag, path_of,
};
use crate::setup::change::Change;
use crate::state::StateArgs;
use anyhow::Result;
use clap::{Arg, ArgAction, ArgMatches};
use host_shim::{CodexStore, McpClient, MemoryInbox, SessionQuery, Store};
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub struct Codex;

const HOME: &str = "codex_home";
const HOOKS_ONLY: &str = "codex_hooks_only";

impl HarnessProfile for Codex {
    fn name(&self) -> &'static str {
        "codex"
    }

    fn title(&self) -> &'static str {
        "Codex"
    }

    fn sessions_flag(&self) -> Arg {
        path_flag(
            HOME,
            "codex-home",
            "DIR",
            "Codex's threads, from this CODEX_HOME (usually ~/.codex)",
        )
    }

    fn delivery_flags(&self) -> Vec<Arg> {
        vec![
            Arg::new(HOOKS_ONLY)
                .long("codex-hooks-only")
                .action(ArgAction::SetTrue)
                .requires(HOME)
                .help(
                    "With --codex-home: never hand a message over through the Codex \
                     app-server daemon; every message waits for the thread's hooks. By \
                     default, when the daemon runs, an idle or cold thread gets a message at \
                     once as a new turn",
                ),
        ]
    }

    fn store(
        &self,
        place: &Path,
        flags: &ArgMatches,
        with: &StoreInputs,
    ) -> Result<Box<dyn Store>> {
        let store = CodexStore::open(place, with.inbox.clone());
        Ok(Box::new(match with.purpose {
            // A hand-over through the daemon gets half of the call's deadline.
            Purpose::Serve { deadline } => {
                let hooks_only =
                    flags.try_get_one::<bool>(HOOKS_ONLY).ok().flatten() == Some(&true);
                store.through_daemon(!hooks_only).daemon_time(deadline / 2)
            }
            Purpose::Look => store.through_daemon(false),
        }))
    }

    fn mcp_client(&self) -> McpClient {
        host_shim::codex::MCP_CLIENT
    }

    fn hooks(&self) -> &'static [Hook] {
        &[Hook {
            command: "codex-hook",
            about: "A Codex command hook (hooks.json): reads the hook's JSON on stdin and hands \
                    the messages spooled for that thread over on stdout (Stop: the oldest queued \
                    one, as a block decision that continues the turn; UserPromptSubmit and \
                    SessionStart: all that wait, as context)",
            answer: hook,
        }]
    }

    fn tour(&self) -> Tour {
        Tour {
            sessions: "Codex's threads",
            none: "the CODEX_HOME holds no Codex threads",
            page: "docs/codex.md",
        }
    }

    fn place_flags(&self) -> Vec<Arg> {
        vec![path_flag(
            HOME,
            "codex-home",
            "DIR",
            "Codex's home (default: $CODEX_HOME, else ~/.codex)",
        )]
    }

    fn sessions_place(&self, places: &ArgMatches) -> Result<PathBuf> {
        setup::codex_home(path_of(places, HOME))
    }

    fn setup(&self, places: &ArgMatches, setup: &SetupInputs) -> Result<Vec<Change>> {
        setup::changes(&self.sessions_place(places)?, setup)
    }

    fn set_up(&self) -> &'static str {
        "a new `codex` session has the tools (mcp__session_tools.sessions_list, \
         mcp__session_tools.sessions_read, mcp__session_tools.sessions_send). Codex runs the hooks once you trust them: the next \
         interactive `codex` asks (\"Hooks need review\"; choose \"Trust all and \
         continue\"), or type /hooks."
    }

    fn command(&self) -> &'static str {
        "codex"
    }

    fn tested_version(&self) -> &'static str {
        "0.169.0"
    }

    fn home_hint(&self) -> &'static str {
        "~/.codex"
    }

    fn check(&self, places: &ArgMatches, report: &mut Report, fix: &str) {
        match self.sessions_place(places) {
            Ok(home) => doctor::check(report, &home, fix),
            Err(err) => report.problem(&format!("{err:#}"), fix),
        }
    }

    fn resume(&self, places: &ArgMatches, session: &str) -> Option<String> {
        let home = self.sessions_place(places).ok()?;
        let mut threads = CodexStore::open(&home, Arc::new(MemoryInbox::new()));
        (threads.get_session(session)).map(|_| format!("codex resume {session}"))
    }
}

/// `host-shim codex-hook`: over the state folder's inbox.
fn hook(
    state: &StateArgs,
    input: &[u8],
    out: &mut dyn std::io::Write,
) -> Result<host_shim::inbox::HookReport> {
    let inbox = state.inbox()?;
    host_shim::codex::hook::answer(&*inbox, input, out)
}
