//! Gemini CLI (0.61.0): its sessions from its folder (`--gemini-home`), each call's
//! caller from the stamp our `BeforeTool` hook adds, the `gemini-hook` command, what
//! `setup gemini` writes and `doctor` checks.

mod doctor;
mod setup;

use crate::GeminiStore;
use anyhow::Result;
use host_shim::Store;
use host_shim::inbox::HookReport;
use host_shim_profile::StateFolder;
use host_shim_profile::{
    Facts, HarnessProfile, Home, Hook, PathFlag, StoreInputs, Tour, WakeFlag, WriteHook,
    pinned_version,
};
use std::io::Write;
use std::path::Path;

pub struct Gemini;

const HOME: &str = "gemini_home";

static FACTS: Facts = Facts {
    name: "gemini",
    title: "Gemini CLI",
    tested_version: pinned_version(
        include_str!("../../suite/package.json"),
        "@google/gemini-cli",
    ),
    home_hint: "~/.gemini",
    set_up: "a new `gemini` session has the tools (mcp_session-tools_sessions_list, \
         mcp_session-tools_sessions_read, mcp_session-tools_sessions_send, \
         mcp_session-tools_sessions_claim), the server trusted so headless `gemini -p` is \
         offered them too, and its file writes keep out of other sessions' claims. Gemini \
         CLI loads a user's settings only in a trusted folder: trust it when Gemini asks, or set \
         GEMINI_CLI_TRUST_WORKSPACE=true for a headless run.",
    sessions: PathFlag {
        id: HOME,
        long: "gemini-home",
        value_name: "DIR",
        help: "Gemini CLI's sessions, from this folder (usually ~/.gemini)",
    },
    place_help: Some("Gemini CLI's folder (default: $GEMINI_CLI_HOME/.gemini, else ~/.gemini)"),
    home: Some(Home {
        env: "GEMINI_CLI_HOME",
        find: crate::default_home,
    }),
    places: &[],
    wake: Some(WakeFlag {
        id: "gemini_wake_command",
        long: "gemini-wake-command",
        help: "With --gemini-home: wake a cold Gemini CLI session with this command, e.g. \
             'gemini --resume {id} -p \"A message from another session is waiting.\" --yolo' \
             ({id}, {cwd} and {message_file} filled in; no shell runs it; it starts in the \
             session's folder). Off by default: a message for a cold session waits for its next \
             start",
        setup_help: Some(
            "Gemini CLI only: the server wakes a cold Gemini session with this command (see \
             `host-shim mcp --gemini-wake-command`)",
        ),
    }),
    mcp_client: crate::MCP_CLIENT,
    hooks: &[Hook {
        command: "gemini-hook",
        about: "A Gemini CLI command hook (~/.gemini/settings.json): reads the hook's JSON on \
                stdin; BeforeTool: stamps each call of the session-tools server with the \
                session making it (and denies a call whose model wrote the stamp); \
                SessionStart and BeforeAgent: hands over all that wait, as context; \
                AfterTool: the steered ones; AfterAgent: the oldest queued one, as a denial \
                that makes it the next prompt",
        answer: hook,
    }],
    write_hook: Some(WriteHook {
        command: crate::write_hook::WRITE_HOOK,
        runs: "Gemini CLI's BeforeTool hook, before write_file and replace",
        ask: crate::write_hook::ask,
        refuse: crate::write_hook::refuse,
    }),
    tour: Tour {
        sessions: "Gemini CLI's sessions",
        none: "the Gemini CLI folder holds no sessions",
        page: "host-shim/harnesses/gemini/README.md",
    },
    resume: Some("gemini --resume {id}"),
};

impl HarnessProfile for Gemini {
    fn facts(&self) -> &'static Facts {
        &FACTS
    }

    fn store(&self, place: &Path, with: &StoreInputs) -> Result<Box<dyn Store>> {
        let wake = with.wake_command(&FACTS)?;
        let store = GeminiStore::open(place, with.inbox.clone());
        Ok(Box::new(
            store.presence(with.state.presence()?).wake_command(wake),
        ))
    }

    host_shim_profile::files_in_home!(setup::changes, doctor::check);
}

/// `host-shim gemini-hook`: a call of our server stamped with the state folder's key;
/// any other event over the state folder's inbox, as Gemini runs its hooks.
fn hook(state: &dyn StateFolder, input: &[u8], out: &mut dyn Write) -> Result<HookReport> {
    use crate::hook;
    let input = hook::HookInput::read(input)?;
    if input.is_tool_call() {
        return hook::stamp(&input, &state.root()?, out);
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
