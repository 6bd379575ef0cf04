//! Private folders and files: what the compiled-component cache and the inbox's state
//! folder both rely on. A folder is trusted only when this user owns it and nobody
//! else can write it (and it is not a symlink); a file is read only when it is a
//! regular file of bounded size, opened without following a symlink or waiting on a
//! FIFO; a socket is spoken to only when this user owns it and the folder holding it.
//! Each caller states its own trust model on top (`cache.rs`, `inbox/state_dir.rs`,
//! `presence/local.rs`, `codex/daemon.rs`). And whether a process still runs.

use std::fs::{File, Metadata, OpenOptions};
use std::io::Read;
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// `session-tools` under an XDG base folder: the variable's value when it is an
/// absolute path (a relative one is ignored, as the XDG spec says), else
/// `$HOME/<home_relative>`.
pub fn user_dir(
    xdg: Option<PathBuf>,
    home: Option<PathBuf>,
    home_relative: &str,
) -> Option<PathBuf> {
    let base = xdg.filter(|path| path.is_absolute()).or_else(|| {
        home.filter(|h| h.is_absolute())
            .map(|h| h.join(home_relative))
    })?;
    Some(base.join("session-tools"))
}

/// A harness's folder as the harness finds it: `$<var>` when set and not empty, else
/// `folder` under HOME; none without either.
pub fn env_or_home(var: &str, folder: &str) -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os(var).filter(|dir| !dir.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    std::env::var_os("HOME").map(|home| PathBuf::from(home).join(folder))
}

pub fn effective_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Makes the directory (`0700`) when missing and says why it cannot be trusted, if so.
pub fn trusted_dir(dir: &Path) -> std::result::Result<(), String> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|err| format!("cannot create it ({err})"))?;
    let meta =
        std::fs::symlink_metadata(dir).map_err(|err| format!("cannot inspect it ({err})"))?;
    if !meta.file_type().is_dir() {
        return Err("it is not a directory (a symlink?)".to_string());
    }
    private_to_this_user(&meta)
}

/// Says why a folder or file with this metadata is not this user's alone, if so.
fn private_to_this_user(meta: &Metadata) -> std::result::Result<(), String> {
    if meta.uid() != effective_uid() {
        return Err(format!(
            "it is owned by uid {}, not by this user (uid {})",
            meta.uid(),
            effective_uid()
        ));
    }
    if meta.mode() & 0o022 != 0 {
        return Err(format!(
            "others can write to it (mode {:o})",
            meta.mode() & 0o777
        ));
    }
    Ok(())
}

/// Where to connect to the Unix socket at `path`, which may be a symlink to a shorter
/// path (a socket address holds at most 108 bytes): `Ok(None)` when nothing is there,
/// or a link to nothing; the socket's own path when this user owns the link, the
/// socket and the folder holding the socket, and nobody else can write that folder
/// (so nobody else can put another socket in its place).
pub fn own_socket(path: &Path) -> std::result::Result<Option<PathBuf>, String> {
    let gone = |err: &std::io::Error| err.kind() == std::io::ErrorKind::NotFound;
    let link = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(err) if gone(&err) => return Ok(None),
        Err(err) => return Err(format!("cannot inspect {} ({err})", path.display())),
    };
    if link.uid() != effective_uid() {
        return Err(format!(
            "{} is owned by uid {}, not by this user (uid {})",
            path.display(),
            link.uid(),
            effective_uid()
        ));
    }
    let socket = match std::fs::canonicalize(path) {
        Ok(socket) => socket,
        Err(err) if gone(&err) => return Ok(None),
        Err(err) => return Err(format!("cannot follow {} ({err})", path.display())),
    };
    let meta = std::fs::metadata(&socket)
        .map_err(|err| format!("cannot inspect {} ({err})", socket.display()))?;
    if !meta.file_type().is_socket() {
        return Err(format!("{} is not a socket", socket.display()));
    }
    private_to_this_user(&meta).map_err(|why| format!("{}: {why}", socket.display()))?;
    let folder = socket.parent().unwrap_or(Path::new("/"));
    let folder_meta = std::fs::metadata(folder)
        .map_err(|err| format!("cannot inspect {} ({err})", folder.display()))?;
    private_to_this_user(&folder_meta).map_err(|why| format!("{}: {why}", folder.display()))?;
    Ok(Some(socket))
}

/// Opens `path` for reading if it is a regular file of at most `max_bytes`: without
/// following a symlink or blocking on a FIFO. Returns its metadata too.
pub fn open_regular(path: &Path, max_bytes: u64) -> std::io::Result<(File, Metadata)> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.file_type().is_file() || meta.len() > max_bytes {
        return Err(std::io::Error::other(format!(
            "not a regular file of at most {max_bytes} bytes"
        )));
    }
    Ok((file, meta))
}

/// The bytes of a regular file of at most `max_bytes` (see [`open_regular`]).
pub fn read_regular(path: &Path, max_bytes: u64) -> std::io::Result<Vec<u8>> {
    let (file, meta) = open_regular(path, max_bytes)?;
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(max_bytes).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Removes the files in `folder` (a cache of this user's alone) whose names `ours` picks
/// and that were last written more than `kept` ago; one that cannot be read or removed
/// is left for the next time.
pub fn remove_older_than(folder: &Path, kept: std::time::Duration, ours: impl Fn(&str) -> bool) {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return;
    };
    for entry in entries.flatten() {
        let old = (entry.metadata().and_then(|meta| meta.modified()).ok())
            .and_then(|written| written.elapsed().ok())
            .is_some_and(|age| age > kept);
        if old && ours(&entry.file_name().to_string_lossy()) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Whether a process with this id exists (a zombie counts until it is reaped).
pub fn pid_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        return false;
    }
    // SAFETY: signal 0 only checks that the process exists and may be signalled.
    let answer = unsafe { libc::kill(pid, 0) };
    answer == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// When a process started, in clock ticks since boot (Linux's `/proc/<pid>/stat`);
/// `None` where there is no such file. With the pid, it tells a registered process from
/// a later one that reuses its pid.
pub fn process_start(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The name (field 2) is in parentheses and may hold spaces; field 22 is the start.
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(19)?.parse().ok()
}

/// The parent of process `pid` (Linux's `/proc/<pid>/stat`, field 4).
pub fn parent_pid(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(1)?.parse().ok()
}

/// The arguments process `pid` was started with (`/proc/<pid>/cmdline`).
pub fn command_line(pid: u32) -> Vec<String> {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|bytes| {
            (bytes.split(|&b| b == 0))
                .filter(|word| !word.is_empty())
                .map(|word| String::from_utf8_lossy(word).into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// Whether process `pid` runs and is the one that started at `started` (clock ticks
/// since boot, as [`process_start`] reads it): a reused pid has another start. With no
/// start recorded, only whether the pid runs.
pub fn same_process(pid: u32, started: Option<u64>) -> bool {
    pid_alive(pid) && (started.is_none() || started == process_start(pid))
}
