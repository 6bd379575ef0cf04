//! `host-shim claude-hook` and `host-shim codex-hook`: one hook run each, over the state
//! folder's inbox (and, for Claude Code, its idle marks).

use crate::flags::StateArgs;
use anyhow::{Context, Result};
use std::io::{Read, Write};

pub fn claude(state: &StateArgs) -> Result<()> {
    let (inbox, presence) = (state.inbox()?, state.presence()?);
    run("claude-hook", |input, out| {
        let config = host_shim::claude::settings::config_dir_from_env();
        host_shim::claude::hook::answer(&*inbox, &*presence, config.as_deref(), input, out)
    })
}

pub fn codex(state: &StateArgs) -> Result<()> {
    let inbox = state.inbox()?;
    run("codex-hook", |input, out| {
        host_shim::codex::hook::answer(&*inbox, input, out)
    })
}

/// One hook run: its input from stdin, its answer to stdout, what it could not read
/// on stderr.
fn run(
    name: &str,
    answer: impl FnOnce(&[u8], &mut dyn Write) -> Result<host_shim::inbox::HookReport>,
) -> Result<()> {
    let mut input = Vec::new();
    std::io::stdin()
        .read_to_end(&mut input)
        .context("cannot read the hook's input from stdin")?;
    let report = answer(&input, &mut std::io::stdout().lock())?;
    for problem in &report.unreadable {
        eprintln!("host-shim {name}: skipped {problem}");
    }
    Ok(())
}
