//! One file's change as setup makes it: shown as a diff, or written with its previous
//! bytes kept beside it and the new ones put in place by one rename. `--remove` takes
//! setup's entries out and leaves nothing of setup's behind: no copy of previous bytes,
//! no folder of its own left empty. And what a harness set up is told to run.

use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

/// One file's change: its bytes now (none: no file) and after (none: removed).
pub struct Change {
    pub path: PathBuf,
    pub before: Option<String>,
    pub after: Option<String>,
    /// The folder setup makes for this file alone (OpenCode's `plugin/`), which
    /// `--remove` takes out when the file was all it held.
    pub own_folder: Option<PathBuf>,
}

/// What a setup run does with its changes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Write the changes, each file's previous bytes kept beside it.
    Write,
    /// Write the changes that take setup's entries out; then the copies of previous
    /// bytes setup kept go, and so does a file's own folder it emptied.
    Remove,
    /// Print each change as a unified diff; write nothing.
    DryRun,
}

/// The suffix of the copy of a file's previous bytes.
const BACKUP_SUFFIX: &str = ".before-session-tools";

/// Applies (or, dry, prints) `changes`; says what happened to each file on stdout.
/// Whether any file changed (or would).
pub fn apply(changes: &[Change], mode: Mode) -> Result<bool> {
    for change in changes {
        let shown = change.path.display();
        if change.before == change.after {
            println!("unchanged: {shown}");
            continue;
        }
        match mode {
            Mode::DryRun => print!("{}", diff(change)),
            Mode::Remove => {
                take_out(change).with_context(|| format!("cannot update {shown}"))?;
                match &change.after {
                    None => println!("removed: {shown}"),
                    Some(_) => println!("updated: {shown} (setup's entries taken out)"),
                }
            }
            Mode::Write => {
                write(change).with_context(|| format!("cannot update {shown}"))?;
                match (&change.before, &change.after) {
                    (None, _) => println!("created: {shown}"),
                    (Some(_), None) => println!(
                        "removed: {shown} (its previous bytes are in {shown}{BACKUP_SUFFIX})"
                    ),
                    (Some(_), Some(_)) => println!(
                        "updated: {shown} (its previous bytes are in {shown}{BACKUP_SUFFIX})"
                    ),
                }
            }
        }
    }
    Ok(changes.iter().any(|c| c.before != c.after))
}

/// The change as a unified diff, `/dev/null` for a file that is not there.
fn diff(change: &Change) -> String {
    let shown = change.path.display().to_string();
    let before = change.before.as_deref().unwrap_or("");
    let after = change.after.as_deref().unwrap_or("");
    let old = if change.before.is_some() {
        shown.as_str()
    } else {
        "/dev/null"
    };
    let new = if change.after.is_some() {
        shown.as_str()
    } else {
        "/dev/null"
    };
    similar::TextDiff::from_lines(before, after)
        .unified_diff()
        .context_radius(3)
        .missing_newline_hint(true)
        .header(old, new)
        .to_string()
}

/// Keeps the file's bytes beside it, then replaces (or removes) it.
fn write(change: &Change) -> Result<()> {
    let path = &change.path;
    let mode = std::fs::metadata(path).ok().map(|m| m.permissions());
    if let Some(before) = &change.before {
        replace(&backup_of(path), before.as_bytes(), mode.clone())?;
    }
    match &change.after {
        Some(after) => {
            if let Some(folder) = path.parent() {
                std::fs::create_dir_all(folder)?;
            }
            replace(path, after.as_bytes(), mode)
        }
        None => Ok(std::fs::remove_file(path)?),
    }
}

/// Writes what is left of the file (or removes it) with no copy kept, then removes
/// the copy setup kept and the file's own folder when nothing else is in it
/// (`remove_dir` refuses a folder that holds anything).
fn take_out(change: &Change) -> Result<()> {
    let path = &change.path;
    match &change.after {
        Some(after) => {
            let mode = std::fs::metadata(path).ok().map(|m| m.permissions());
            replace(path, after.as_bytes(), mode)?;
        }
        None => std::fs::remove_file(path)?,
    }
    match std::fs::remove_file(backup_of(path)) {
        Err(err) if err.kind() != std::io::ErrorKind::NotFound => return Err(err.into()),
        _ => {}
    }
    if let Some(folder) = &change.own_folder
        && std::fs::remove_dir(folder).is_ok()
    {
        println!("removed: {} (setup's folder, empty now)", folder.display());
    }
    Ok(())
}

fn backup_of(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(BACKUP_SUFFIX);
    path.with_file_name(name)
}

/// Replaces `path` with `bytes` in one rename, with `mode` when the file had one.
fn replace(path: &Path, bytes: &[u8], mode: Option<std::fs::Permissions>) -> Result<()> {
    use std::io::Write;
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".tmp{}", std::process::id()));
    let temporary = path.with_file_name(name);
    let written = (|| -> std::io::Result<()> {
        let mut file = std::fs::File::create_new(&temporary)?;
        file.write_all(bytes)?;
        if let Some(mode) = mode {
            file.set_permissions(mode)?;
        }
        file.sync_all()?;
        std::fs::rename(&temporary, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    Ok(written?)
}

/// What a harness is told to run: this binary (or `--binary`), the server's arguments,
/// and `--state-dir` when one was given.
pub struct Commands {
    pub binary: String,
    /// `mcp`, then each harness's sessions flag with where its sessions are: the
    /// harness set up, and every other found on this machine (so one listing holds
    /// them all); `--state-dir` last.
    pub server_args: Vec<String>,
    state_dir: Option<String>,
}

impl Commands {
    pub fn new(binary: String, server_args: Vec<String>, state_dir: Option<String>) -> Commands {
        Commands {
            binary,
            server_args,
            state_dir,
        }
    }

    /// The shell command line of `host-shim WRITE_HOOK` with the server's flags (its
    /// sessions flags, `--state-dir`, a wake flag), so the hook reads what the server
    /// reads.
    pub fn write_hook(&self, hook: &str) -> String {
        let mut words = vec![self.binary.clone(), hook.to_string()];
        words.extend(self.server_args.iter().skip(1).cloned());
        command_line(&words)
    }

    /// The shell command line of `host-shim HOOK`, with `--state-dir`.
    pub fn hook(&self, hook: &str) -> String {
        let mut words = vec![self.binary.clone(), hook.to_string()];
        if let Some(state) = &self.state_dir {
            words.extend(["--state-dir".to_string(), state.clone()]);
        }
        command_line(&words)
    }
}

/// `words` as one shell command line (a harness runs a hook's command with a shell).
fn command_line(words: &[String]) -> String {
    let quote = |word: &str| {
        if !word.is_empty()
            && word
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"/._-+=:,@".contains(&b))
        {
            word.to_string()
        } else {
            format!("'{}'", word.replace('\'', r"'\''"))
        }
    };
    words.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" ")
}
