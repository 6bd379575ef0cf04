//! `host-shim check-write --caller ID PATH…`: the check a harness's hook makes before a
//! session's file-writing tool runs (contract 0.6.0's `tools.check-write`), over the
//! sessions the flags name and the state folder's claims. A refused write is recorded
//! in the audit log (`write-refused`, the writer and each claim it fell in).

use crate::flags::CheckWriteArgs;
use anyhow::Result;
use host_shim::inbox::AuditLog;
use host_shim::inbox::audit::{AuditEvent, AuditRecord};
use host_shim::{Harnesses, Runtime, WriteCheck};
use std::path::PathBuf;

/// Prints the outcome; false when the write is refused.
pub fn run(args: &CheckWriteArgs, cache_dir: Option<PathBuf>) -> Result<bool> {
    let options = args.limits.options(cache_dir, None, &args.source.state)?;
    let stores = args.source.stores(options.limits.deadline)?;
    let runtime: Runtime<Harnesses> = Runtime::with_options(&args.source.plugin()?, &options)?;
    let settings = args.source.settings()?;
    let (check, _) = runtime.check_write(stores.harnesses, &args.caller, &settings, &args.paths);
    let settings_path = args.source.settings.as_deref();
    match check.map_err(|err| crate::call::call_error(settings_path, err))? {
        WriteCheck::Allowed => {
            println!("allowed");
            Ok(true)
        }
        WriteCheck::Unchecked(why) => {
            println!("{why}");
            Ok(true)
        }
        WriteCheck::Refused(refusal) => {
            if let Some(inbox) = &stores.inbox {
                record(args, inbox.as_ref(), &refusal.claims);
            }
            println!("{}", refusal.text);
            Ok(false)
        }
    }
}

/// The refused write in the audit log, once per claim it fell in (as the claims read
/// now; one released meanwhile is not named). Never fails the check.
fn record(args: &CheckWriteArgs, inbox: &dyn host_shim::inbox::InboxBackend, ids: &[String]) {
    let logged = (args.source.state.root())
        .and_then(|root| AuditLog::open(&root, false))
        .and_then(|log| {
            let claims = inbox.read_claims()?.claims;
            for claim in claims.iter().filter(|c| ids.contains(&c.id)) {
                log.append(&AuditRecord::of_claim(
                    AuditEvent::WriteRefused,
                    claim,
                    Some(&args.caller),
                ))?;
            }
            Ok(())
        });
    if let Err(err) = logged {
        eprintln!("host-shim: the audit log missed the refused write: {err:#}");
    }
}
