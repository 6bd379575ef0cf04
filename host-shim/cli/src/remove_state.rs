//! `host-shim remove-state`: removes what the tools keep of their own once no harness
//! here uses them: the state folder (the inbox, the hand-over and idle marks, the live
//! registry, the call-stamp key, the audit log), the compiled-plugin cache, the
//! hooks' record marks (`$TMPDIR/session-tools-marks-<uid>`) and the wake commands'
//! message files (`$TMPDIR/session-tools-wake-<uid>`).
//! `setup <harness> --remove` leaves both, as a harness still set up needs them.
//!
//! Trust model: it removes only the folders the flags (or the defaults) name, each
//! only when it is a folder of this user's (not a symlink, owned by this user), and
//! refuses, removing nothing, while any harness here is still set up for the tools or
//! while messages wait in the inbox (they would be lost), unless `--discard-waiting`.

use crate::flags::RemoveStateArgs;
use anyhow::{Result, bail};
use host_shim::inbox::{InboxBackend, StateDir};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

pub fn run(args: &RemoveStateArgs, cache_dir: Option<PathBuf>) -> Result<()> {
    let given = &args.places.harnesses;
    let still: Vec<&str> = (given.profiles().iter())
        .filter(|profile| crate::doctor::set_up_here(**profile, given.matches()))
        .map(|profile| profile.name())
        .collect();
    if !still.is_empty() {
        let removes: Vec<String> = (still.iter())
            .map(|name| format!("`host-shim setup {name} --remove`"))
            .collect();
        bail!(
            "{} still set up for the tools, which need the state folder: run {} first; nothing was removed",
            crate::flags::listed(
                &still.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
                "and"
            ),
            crate::flags::listed(&removes, "and")
        );
    }
    let state = args
        .places
        .state_dir
        .clone()
        .or_else(host_shim::inbox::default_dir);
    let mut folders = Vec::new();
    if let Some(state) = state.filter(|state| state.exists()) {
        ours(&state, "the state folder")?;
        if !args.discard_waiting {
            let waiting = waiting(&state)?;
            if waiting > 0 {
                bail!(
                    "{waiting} message{} still wait{} in the inbox at {} (`host-shim watch` shows them): hand {} over by resuming {} sessions, or pass --discard-waiting to lose {}; nothing was removed",
                    plural(waiting),
                    if waiting == 1 { "s" } else { "" },
                    state.display(),
                    if waiting == 1 { "it" } else { "them" },
                    if waiting == 1 { "its" } else { "their" },
                    if waiting == 1 { "it" } else { "them" },
                );
            }
        }
        folders.push(("state folder", state));
    }
    if let Some(cache) = cache_dir.filter(|cache| cache.exists()) {
        ours(&cache, "the compiled-plugin cache")?;
        folders.push(("compiled-plugin cache", cache));
    }
    let in_temp = [
        ("record marks", host_shim::inbox::record_marks::folder()),
        (
            "wake commands' message files",
            host_shim::inbox::wake::folder(),
        ),
    ];
    for (what, folder) in in_temp.into_iter().filter(|(_, folder)| folder.exists()) {
        ours(&folder, &format!("the {what}"))?;
        folders.push((what, folder));
    }
    if folders.is_empty() {
        println!("Nothing of the tools' own is here: nothing changed.");
        return Ok(());
    }
    for (what, folder) in folders {
        std::fs::remove_dir_all(&folder).map_err(|err| {
            anyhow::anyhow!("cannot remove the {what} {}: {err}", folder.display())
        })?;
        println!("removed: {} (the {what})", folder.display());
    }
    Ok(())
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Refuses a folder that is not this user's own (a symlink, another user's).
fn ours(folder: &Path, what: &str) -> Result<()> {
    let meta = std::fs::symlink_metadata(folder)?;
    if !meta.file_type().is_dir() {
        bail!(
            "{what} {} is not a folder (a symlink?): remove it yourself if it is yours; nothing was removed",
            folder.display()
        );
    }
    // SAFETY: geteuid has no preconditions and cannot fail.
    let uid = unsafe { libc::geteuid() };
    if meta.uid() != uid {
        bail!(
            "{what} {} is owned by uid {}, not by you (uid {uid}); nothing was removed",
            folder.display(),
            meta.uid()
        );
    }
    Ok(())
}

/// The messages waiting in the state folder's inbox.
fn waiting(state: &Path) -> Result<usize> {
    let inbox = StateDir::open(state)?;
    let mut waiting = 0;
    for session in inbox.sessions()? {
        waiting += inbox.waiting(&session)?.messages.len();
    }
    Ok(waiting)
}
