//! Codex (0.169.0, tested in CI): its threads from its home (`--codex-home`), hand-overs
//! through its app-server daemon when one runs, its MCP client's thread and call in
//! each call's `_meta`, the `codex-hook` command, what `setup codex` writes and
//! `doctor` checks (Codex's trust in the hooks among them).

mod doctor;
mod setup;

use crate::CodexStore;
use anyhow::Result;
use clap::{Arg, ArgAction};
use host_shim::Store;
use host_shim::inbox::HookReport;
use host_shim_profile::StateFolder;
use host_shim_profile::{
    Facts, HarnessProfile, Home, Hook, PathFlag, Purpose, StoreInputs, Tour, WriteHook,
    pinned_version, write,
};
use std::io::Write;
use std::path::Path;

pub struct Codex;

const HOME: &str = "codex_home";
const HOOKS_ONLY: &str = "codex_hooks_only";

static FACTS: Facts = Facts {
    name: "codex",
    title: "Codex",
    tested_version: pinned_version(include_str!("../../suite/package.json"), "@openai/codex"),
    home_hint: "~/.codex",
    set_up: "a new `codex` session has the tools (mcp__session_tools.sessions_list, \
         mcp__session_tools.sessions_read, mcp__session_tools.sessions_send, \
         mcp__session_tools.sessions_claim), and its patches (apply_patch) keep out of \
         other sessions' claims. Codex runs the hooks once you trust them: the next \
         interactive `codex` asks (\"Hooks need review\"; choose \"Trust all and \
         continue\"), or type /hooks.",
    sessions: PathFlag {
        id: HOME,
        long: "codex-home",
        value_name: "DIR",
        help: "Codex's threads, from this CODEX_HOME (usually ~/.codex)",
    },
    place_help: Some("Codex's home (default: $CODEX_HOME, else ~/.codex)"),
    home: Some(Home {
        env: "CODEX_HOME",
        find: crate::default_home,
    }),
    places: &[],
    wake: None,
    mcp_client: crate::MCP_CLIENT,
    hooks: &[Hook {
        command: "codex-hook",
        about: "A Codex command hook (hooks.json): reads the hook's JSON on stdin and hands \
                the messages spooled for that thread over on stdout (Stop: the oldest queued \
                one, as a block decision that continues the turn; UserPromptSubmit and \
                SessionStart: all that wait, as context)",
        answer: hook,
    }],
    write_hook: Some(WriteHook {
        command: crate::write_hook::WRITE_HOOK,
        runs: "Codex's PreToolUse hook, before apply_patch (the files its patch names)",
        ask: crate::write_hook::ask,
        refuse: write::deny_pre_tool_use,
    }),
    tour: Tour {
        sessions: "Codex's threads",
        none: "the CODEX_HOME holds no Codex threads",
        page: "host-shim/harnesses/codex/README.md",
    },
    resume: Some("codex resume {id}"),
};

impl HarnessProfile for Codex {
    fn facts(&self) -> &'static Facts {
        &FACTS
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

    fn store(&self, place: &Path, with: &StoreInputs) -> Result<Box<dyn Store>> {
        let store = CodexStore::open(place, with.inbox.clone());
        Ok(Box::new(match with.purpose {
            // A hand-over through the daemon gets half of the call's deadline.
            Purpose::Serve { deadline } => {
                let hooks_only =
                    with.flags.try_get_one::<bool>(HOOKS_ONLY).ok().flatten() == Some(&true);
                store.through_daemon(!hooks_only).daemon_time(deadline / 2)
            }
            Purpose::Look => store.through_daemon(false),
        }))
    }

    host_shim_profile::files_in_home!(setup::changes, doctor::check);
}

/// `host-shim codex-hook`: over the state folder's inbox.
fn hook(state: &dyn StateFolder, input: &[u8], out: &mut dyn Write) -> Result<HookReport> {
    let inbox = state.inbox()?;
    crate::hook::answer(&*inbox, input, out)
}
