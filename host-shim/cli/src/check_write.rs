//! The check before a session writes files (contract 0.6.0's `tools.check-write`),
//! over the sessions the flags name and the state folder's claims: `host-shim
//! check-write --caller ID PATH…` for a person or a script, and each harness's
//! pre-write hook (`host-shim claude-write-hook` …), which reads the session and the
//! files from the hook's input and answers a refusal in the hook's words. A refused
//! write is recorded in the audit log (`write-refused`, the writer and each claim it
//! fell in).
//!
//! A hook fails open: when the check cannot be made (no plugin, a store that does not
//! read), it says why on stderr and exits 1, which the harnesses take as an error that
//! does not block the tool; only a refusal keeps the write out.

use crate::flags::{CheckWriteArgs, LimitFlags, SourceArgs, WriteHookArgs};
use anyhow::{Context, Result};
use host_shim::inbox::AuditLog;
use host_shim::inbox::audit::{AuditEvent, AuditRecord};
use host_shim::{Harnesses, Runtime, WriteCheck};
use host_shim_profile::{HarnessProfile, WriteHook};
use std::io::{Read, Write};
use std::path::PathBuf;

/// `host-shim check-write`: prints the outcome; false when the write is refused.
pub fn run(args: &CheckWriteArgs, cache_dir: Option<PathBuf>) -> Result<bool> {
    match check(
        &args.source,
        &args.limits,
        cache_dir,
        &args.caller,
        &args.paths,
    )? {
        WriteCheck::Allowed => {
            println!("allowed");
            Ok(true)
        }
        WriteCheck::Unchecked(why) => {
            println!("{why}");
            Ok(true)
        }
        WriteCheck::Refused(refusal) => {
            println!("{}", refusal.text);
            Ok(false)
        }
    }
}

/// One run of a harness's pre-write hook: its input from stdin, a refusal's answer to
/// stdout; nothing for a write that may go ahead.
pub fn hook_run(
    profile: &dyn HarnessProfile,
    hook: &WriteHook,
    args: &WriteHookArgs,
) -> Result<()> {
    let mut input = Vec::new();
    std::io::stdin()
        .read_to_end(&mut input)
        .context("cannot read the hook's input from stdin")?;
    let Some(ask) = profile.ask_write(&input)? else {
        return Ok(());
    };
    let cache_dir = host_shim::runtime::cache::default_dir();
    match check(
        &args.source,
        &args.limits,
        cache_dir,
        &ask.session,
        &ask.paths,
    )? {
        WriteCheck::Allowed => Ok(()),
        WriteCheck::Unchecked(why) => {
            eprintln!("host-shim {}: {why}", hook.command);
            Ok(())
        }
        WriteCheck::Refused(refusal) => {
            let mut out = std::io::stdout().lock();
            profile.refuse_write(&refusal.text, &mut out)?;
            Ok(out.flush()?)
        }
    }
}

/// Asks the plugin whether `caller` may write `paths`, and records a refusal.
fn check(
    source: &SourceArgs,
    limits: &LimitFlags,
    cache_dir: Option<PathBuf>,
    caller: &str,
    paths: &[String],
) -> Result<WriteCheck> {
    let options = limits.options(cache_dir, None, &source.state)?;
    let stores = source.stores(options.limits.deadline)?;
    let runtime: Runtime<Harnesses> = Runtime::with_options(&source.plugin()?, &options)?;
    let settings = source.settings()?;
    let (check, _) = runtime.check_write(stores.harnesses, caller, &settings, paths);
    let check = check.map_err(|err| crate::call::call_error(source.settings.as_deref(), err))?;
    if let (WriteCheck::Refused(refusal), Some(inbox)) = (&check, &stores.inbox) {
        record(source, inbox.as_ref(), caller, &refusal.claims);
    }
    Ok(check)
}

/// The refused write in the audit log, once per claim it fell in (as the claims read
/// now; one released meanwhile is not named). Never fails the check.
fn record(
    source: &SourceArgs,
    inbox: &dyn host_shim::inbox::InboxBackend,
    caller: &str,
    ids: &[String],
) {
    let logged = (source.state.root())
        .and_then(|root| AuditLog::open(&root, false))
        .and_then(|log| {
            let claims = inbox.read_claims()?.claims;
            for claim in claims.iter().filter(|c| ids.contains(&c.id)) {
                log.append(&AuditRecord::of_claim(
                    AuditEvent::WriteRefused,
                    claim,
                    Some(caller),
                ))?;
            }
            Ok(())
        });
    if let Err(err) = logged {
        eprintln!("host-shim: the audit log missed the refused write: {err:#}");
    }
}
