//! GitHub Copilot CLI (1.0.102): its sessions from its home (`--copilot-home`), the
//! calling session from the environment Copilot starts the server with, the
//! `copilot-hook` command, what `setup copilot` writes and `doctor` checks.

mod doctor;
mod setup;

use crate::CopilotStore;
use anyhow::Result;
use host_shim::Store;
use host_shim::inbox::HookReport;
use host_shim_profile::{HarnessProfile, HookCall, StoreInputs, WriteAsk};
use std::io::Write;
use std::path::Path;

pub struct Copilot;

impl HarnessProfile for Copilot {
    host_shim_profile::facts!("suite/package.json", crate::MCP_CLIENT);

    fn store(&self, place: &Path, with: &StoreInputs) -> Result<Box<dyn Store>> {
        let wake = with.wake_command(self.facts())?;
        Ok(Box::new(
            CopilotStore::open(place, with.inbox.clone()).wake_command(wake),
        ))
    }

    host_shim_profile::files_in_home!(crate::default_home, setup::changes, doctor::check);

    /// `host-shim copilot-hook`: a call of our server stamped with the state folder's key;
    /// any other event over the state folder's inbox and the sessions in `$COPILOT_HOME`
    /// (or `~/.copilot`), as Copilot runs its hooks.
    fn answer_hook(&self, call: HookCall) -> Result<HookReport> {
        let HookCall { state, input, out } = call;
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

    fn ask_write(&self, input: &[u8]) -> Result<Option<WriteAsk>> {
        crate::write_hook::ask(input)
    }

    fn refuse_write(&self, text: &str, out: &mut dyn Write) -> Result<()> {
        crate::write_hook::refuse(text, out)
    }
}
