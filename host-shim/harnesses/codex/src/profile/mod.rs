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
use host_shim_profile::{HarnessProfile, HookCall, Purpose, StoreInputs, WriteAsk};
use std::path::Path;

pub struct Codex;

const HOOKS_ONLY: &str = "codex_hooks_only";

impl HarnessProfile for Codex {
    host_shim_profile::facts!("suite/package.json", crate::MCP_CLIENT);

    fn delivery_flags(&self) -> Vec<Arg> {
        vec![
            Arg::new(HOOKS_ONLY)
                .long("codex-hooks-only")
                .action(ArgAction::SetTrue)
                .requires(self.facts().sessions.long)
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

    host_shim_profile::files_in_home!(crate::default_home, setup::changes, doctor::check);

    /// `host-shim codex-hook`: over the state folder's inbox.
    fn answer_hook(&self, call: HookCall) -> Result<HookReport> {
        let HookCall { state, input, out } = call;
        let inbox = state.inbox()?;
        crate::hook::answer(&*inbox, input, out)
    }

    fn ask_write(&self, input: &[u8]) -> Result<Option<WriteAsk>> {
        crate::write_hook::ask(input)
    }
}
