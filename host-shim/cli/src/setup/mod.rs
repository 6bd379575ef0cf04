//! `host-shim setup HARNESS`: writes into a harness's own configuration what it needs to
//! run the tools (the MCP server, the hooks, the permission), pointing at this binary;
//! `--dry-run` prints the change as a diff and writes nothing; `--remove` takes out what
//! setup adds and nothing else.
//!
//! Trust model: it edits only the files of the person running it, where their harness
//! reads them (or where the flags say), and keeps every other entry of those files as
//! it was, in its order. Before a file changes, its previous bytes are kept beside it
//! (`FILE.before-session-tools`, the file's own mode); the new bytes replace the file
//! in one rename, with the file's mode, so a harness reading it never sees half a file.
//! A file that is not what the harness itself would read (not JSON, not an object) is
//! left untouched, and the error names it. Running setup twice changes nothing the
//! second time.

pub(crate) mod claude;
pub(crate) mod codex;
pub(crate) mod hooks;
pub(crate) mod json;
pub(crate) mod opencode;

use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

/// One file's change: its bytes now (none: no file) and after (none: removed).
pub struct Change {
    pub path: PathBuf,
    pub before: Option<String>,
    pub after: Option<String>,
}

/// What a setup run does with its changes.
#[derive(Clone, Copy)]
pub enum Mode {
    /// Write the changes.
    Write,
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

/// Applies `changes` as `args` say, and says what became of `harness`'s set-up.
fn finish(
    args: &crate::flags::SetupArgs,
    changes: &[Change],
    harness: &str,
    ready: &str,
) -> Result<()> {
    let mode = if args.dry_run {
        Mode::DryRun
    } else {
        Mode::Write
    };
    let changed = apply(changes, mode)?;
    match (args.dry_run, args.remove, changed) {
        (true, _, _) => {}
        (false, false, false) => println!("{harness} was set up already: nothing changed."),
        (false, false, true) => println!("{harness} is set up: {ready}"),
        (false, true, false) => println!("Nothing of setup's was there: nothing changed."),
        (false, true, true) => {
            println!("Setup's entries are removed; everything else is as it was.")
        }
    }
    Ok(())
}

/// Sets the harness `args` names up (or takes setup's entries out).
pub fn run(args: &crate::flags::SetupArgs) -> Result<()> {
    if args.opencode_wake_command.is_some() && args.harness != "opencode" {
        anyhow::bail!("--opencode-wake-command is for `host-shim setup opencode`");
    }
    match args.harness.as_str() {
        "claude" => claude::run(args),
        "opencode" => opencode::run(args),
        _ => codex::run(args),
    }
}

/// What a harness is told to run: the server's command and arguments, and the hook's
/// command line, each with `--state-dir` when one was given.
pub(crate) struct Commands {
    pub binary: String,
    pub server_args: Vec<String>,
    pub hook: String,
}

impl Commands {
    /// `host-shim mcp STORE_FLAG STORE`, then every other harness found on this
    /// machine (so one listing holds them all), and `host-shim HOOK`, with `--binary`
    /// (else this binary) and `--state-dir`.
    fn of(
        args: &crate::flags::SetupArgs,
        store_flag: &str,
        store: &Path,
        hook: &str,
    ) -> Result<Commands> {
        let binary = match &args.binary {
            Some(path) => path.clone(),
            None => {
                let exe = std::env::current_exe()
                    .context("cannot tell where this host-shim binary is")?;
                exe.canonicalize().unwrap_or(exe)
            }
        };
        let binary = binary.to_string_lossy().into_owned();
        let mut server_args = vec!["mcp".to_string()];
        for (flag, place) in stores_found(args)? {
            if flag == store_flag {
                server_args.extend([flag.to_string(), store.to_string_lossy().into_owned()]);
            } else if let Some(place) = place {
                server_args.extend([flag.to_string(), place.to_string_lossy().into_owned()]);
            }
        }
        let mut hook_words = vec![binary.clone(), hook.to_string()];
        if let Some(state) = &args.places.state_dir {
            let state = state.to_string_lossy().into_owned();
            server_args.extend(["--state-dir".to_string(), state.clone()]);
            hook_words.extend(["--state-dir".to_string(), state]);
        }
        Ok(Commands {
            hook: command_line(&hook_words),
            binary,
            server_args,
        })
    }
}

/// Each harness's store flag, in one order, with where its sessions are on this
/// machine (`None` where that harness has none yet).
fn stores_found(args: &crate::flags::SetupArgs) -> Result<[(&'static str, Option<PathBuf>); 3]> {
    let places = &args.places;
    let projects = claude::Places::find(places.claude_config.as_deref())?.projects;
    let codex_home = codex::codex_home(places.codex_home.as_deref())?;
    let opencode_db = opencode::database(places.opencode_db.as_deref())?;
    Ok([
        ("--claude-projects", projects.is_dir().then_some(projects)),
        ("--codex-home", codex_home.is_dir().then_some(codex_home)),
        (
            "--opencode-db",
            opencode_db.is_file().then_some(opencode_db),
        ),
    ])
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
