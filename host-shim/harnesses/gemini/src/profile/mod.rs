//! Gemini CLI (0.61.0): its sessions from its folder (`--gemini-home`), each call's
//! caller from the stamp our `BeforeTool` hook adds, the `gemini-hook` command, what
//! `setup gemini` writes and `doctor` checks.

mod doctor;
mod setup;

use crate::GeminiStore;
use anyhow::Result;
use host_shim::Store;
use host_shim::inbox::HookReport;
use host_shim_profile::{HarnessProfile, HookCall, StoreInputs, WriteAsk};
use std::io::Write;
use std::path::Path;

pub struct Gemini;

impl HarnessProfile for Gemini {
    host_shim_profile::facts!("suite/package.json", crate::MCP_CLIENT);

    fn store(&self, place: &Path, with: &StoreInputs) -> Result<Box<dyn Store>> {
        let wake = with.wake_command(self.facts())?;
        let store = GeminiStore::open(place, with.inbox.clone());
        Ok(Box::new(
            store.presence(with.state.presence()?).wake_command(wake),
        ))
    }

    host_shim_profile::files_in_home!(crate::default_home, setup::changes, doctor::check);

    /// `host-shim gemini-hook`: a call of our server stamped with the state folder's key;
    /// any other event over the state folder's inbox, as Gemini runs its hooks.
    fn answer_hook(&self, call: HookCall) -> Result<HookReport> {
        let HookCall { state, input, out } = call;
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

    fn ask_write(&self, input: &[u8]) -> Result<Option<WriteAsk>> {
        crate::write_hook::ask(input)
    }

    fn refuse_write(&self, text: &str, out: &mut dyn Write) -> Result<()> {
        crate::write_hook::refuse(text, out)
    }
}
