//! GitHub Copilot CLI (1.0.102): its sessions from its home (`--copilot-home`), the
//! calling session from the environment Copilot starts the server with, the
//! `copilot-hook` command, what `setup copilot` writes and `doctor` checks.

mod doctor;
mod setup;

use crate::CopilotStore;
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

pub struct Copilot;

const HOME: &str = "copilot_home";

static FACTS: Facts = Facts {
    name: "copilot",
    title: "GitHub Copilot CLI",
    tested_version: pinned_version(include_str!("../../suite/package.json"), "@github/copilot"),
    home_hint: "~/.copilot",
    set_up: "a new `copilot` session has the tools (session-tools-sessions_list, \
             session-tools-sessions_read, session-tools-sessions_send, \
             session-tools-sessions_claim), and its file writes (create, edit) keep out of \
             other sessions' claims, interactive or `copilot -p`, in any folder: a user's MCP servers and \
             hooks need no folder trust.",
    sessions: PathFlag {
        id: HOME,
        long: "copilot-home",
        value_name: "DIR",
        help: "Copilot CLI's sessions, from this COPILOT_HOME (usually ~/.copilot)",
    },
    place_help: Some("Copilot CLI's home (default: $COPILOT_HOME, else ~/.copilot)"),
    home: Some(Home {
        env: "COPILOT_HOME",
        find: crate::default_home,
    }),
    places: &[],
    wake: Some(WakeFlag {
        id: "copilot_wake_command",
        long: "copilot-wake-command",
        help: "With --copilot-home: wake a cold Copilot CLI session with this command, e.g. \
               'copilot --resume={id} -p \"A message from another session is waiting.\" \
               --allow-all-tools' ({id}, {cwd} and {message_file} filled in; no shell runs it; \
               it starts in the session's folder). Off by default: a message for a cold session \
               waits for its next start",
        setup_help: Some(
            "Copilot CLI only: the server wakes a cold Copilot session with this command (see \
                     `host-shim mcp --copilot-wake-command`)",
        ),
    }),
    mcp_client: crate::MCP_CLIENT,
    hooks: &[Hook {
        command: "copilot-hook",
        about: "A Copilot CLI command hook (~/.copilot/hooks/): reads the hook's JSON on \
                stdin and hands the messages spooled for that session over on stdout \
                (agentStop: the oldest queued one, as a block decision that makes it the next \
                prompt; userPromptSubmitted and sessionStart: all that wait, as context; \
                postToolUse: the steered ones); preMcpToolCall: stamps each call of the \
                session-tools server with the session making it",
        answer: hook,
    }],
    write_hook: Some(WriteHook {
        command: crate::write_hook::WRITE_HOOK,
        runs: "Copilot CLI's preToolUse hook (~/.copilot/hooks/), before create and edit",
        ask: crate::write_hook::ask,
        refuse: crate::write_hook::refuse,
    }),
    tour: Tour {
        sessions: "Copilot CLI's sessions",
        none: "the COPILOT_HOME holds no Copilot CLI sessions",
        page: "host-shim/harnesses/copilot/README.md",
    },
    resume: Some("copilot --resume={id}"),
};

impl HarnessProfile for Copilot {
    fn facts(&self) -> &'static Facts {
        &FACTS
    }

    fn store(&self, place: &Path, with: &StoreInputs) -> Result<Box<dyn Store>> {
        let wake = with.wake_command(&FACTS)?;
        Ok(Box::new(
            CopilotStore::open(place, with.inbox.clone()).wake_command(wake),
        ))
    }

    host_shim_profile::files_in_home!(setup::changes, doctor::check);
}

/// `host-shim copilot-hook`: a call of our server stamped with the state folder's key;
/// any other event over the state folder's inbox and the sessions in `$COPILOT_HOME`
/// (or `~/.copilot`), as Copilot runs its hooks.
fn hook(state: &dyn StateFolder, input: &[u8], out: &mut dyn Write) -> Result<HookReport> {
    use crate::hook;
    let input = hook::HookInput::read(input)?;
    if input.is_tool_call() {
        return hook::stamp(&input, &state.root()?, out);
    }
    let inbox = state.inbox()?;
    let home = anyhow::Context::context(
        crate::default_home(),
        "no HOME to find Copilot CLI's sessions in: set HOME or COPILOT_HOME for the hook",
    )?;
    hook::answer(&*inbox, &home, &input, out)
}
