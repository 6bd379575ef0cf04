//! Presence on one machine, for every harness that keeps none of its own (Claude Code,
//! OpenCode): a registry of the `host-shim mcp` processes serving sessions, and the sessions' idle marks, in the state folder beside the
//! inbox ([`crate::inbox::StateDir`]):
//!
//! ```text
//! live/<pid>.json      a host-shim process serving sessions, or a harness's process
//!                      running one (registered by its hook): {session_id, sessions, pid, started}
//! idle/<session>       the session's last turn ended (its Stop hook handed nothing over)
//! ```
//!
//! Claude Code writes no record of which session runs, so its MCP server registers the
//! session it serves and its hooks mark it idle or at work. A process may serve several
//! sessions (OpenCode's runs every session of its process): its one file names them
//! all (`session_id` the first, `sessions` every one).
//!
//! Trust model: the folders are the state folder's, this user's alone (checked when
//! opened, as the inbox checks its own); a registration names a pid, trusted only while
//! that process runs with the start time recorded (a reused pid reads as gone), and
//! files of dead processes are swept. Records are bounded JSON data, read without
//! following symlinks; session ids become file names only when plain
//! ([`crate::inbox::checked_id`]).

use super::{Presence, Registration};
use crate::inbox::checked_id;
use crate::os::{process_start, same_process};
use anyhow::{Context, Result};
use serde::Deserialize;
use std::collections::HashSet;
use std::fs::OpenOptions;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// The largest registration file read.
const MAX_RECORD_BYTES: u64 = 64 << 10;

fn read_bounded(path: &Path) -> std::io::Result<Vec<u8>> {
    crate::os::read_regular(path, MAX_RECORD_BYTES)
}

/// The live registry and idle marks in a state folder.
#[derive(Clone, Debug)]
pub struct LocalPresence {
    root: PathBuf,
    /// The live registry as last read, by the `live/` folder's modification time:
    /// read again only when a registration came or went.
    live: Arc<Mutex<Option<LiveRead>>>,
    /// Times `live/` files were read (see [`LocalPresence::live_reads`]).
    live_reads: Arc<AtomicU64>,
}

/// One read of the live registry.
#[derive(Debug)]
struct LiveRead {
    modified: std::time::SystemTime,
    records: Vec<LiveRecord>,
}

/// One registration: the sessions a process serves.
#[derive(Clone, Debug, Deserialize)]
struct LiveRecord {
    session_id: String,
    /// Every session the process serves (a file of one session may leave it out).
    #[serde(default)]
    sessions: Vec<String>,
    pid: u32,
    #[serde(default)]
    started: Option<u64>,
    #[serde(skip)]
    path: PathBuf,
}

impl LiveRecord {
    /// Its process still runs (the same process: a reused pid has another start).
    fn alive(&self) -> bool {
        same_process(self.pid, self.started)
    }

    fn sessions(&self) -> impl Iterator<Item = &String> {
        std::iter::once(&self.session_id).chain(&self.sessions)
    }
}

/// The sessions this process registered, by registration file (each file one state
/// folder's `live/<pid>.json`), in the order they came.
static REGISTERED: Mutex<Vec<(PathBuf, Vec<String>)>> = Mutex::new(Vec::new());

/// Writes this process's registration file naming `sessions`, or removes it when
/// there are none.
fn write_registration(path: &Path, sessions: &[String]) -> Result<()> {
    let Some(first) = sessions.first() else {
        return match std::fs::remove_file(path) {
            Err(err) if err.kind() != std::io::ErrorKind::NotFound => {
                Err(err).with_context(|| format!("cannot remove {}", path.display()))
            }
            _ => Ok(()),
        };
    };
    let pid = std::process::id();
    let record = serde_json::json!({
        "session_id": first, "sessions": sessions, "pid": pid, "started": process_start(pid),
    });
    crate::record::write_atomically(path, record.to_string().as_bytes())
        .with_context(|| format!("cannot write {}", path.display()))
}

impl LocalPresence {
    /// The registry of the state folder `root` (made when missing, this user's alone).
    pub fn open(root: &Path) -> Result<LocalPresence> {
        for dir in [root.to_path_buf(), root.join("live")] {
            crate::os::trusted_dir(&dir).map_err(|why| {
                anyhow::anyhow!(
                    "state folder {}: {why}; name one only you can write with --state-dir",
                    dir.display()
                )
            })?;
        }
        Ok(LocalPresence {
            root: root.to_path_buf(),
            live: Arc::default(),
            live_reads: Arc::default(),
        })
    }

    /// `<kind>/<session>`, which may not exist yet.
    fn session_path(&self, kind: &str, session: &str) -> Result<PathBuf> {
        let session = checked_id(session).map_err(anyhow::Error::msg)?;
        Ok(self.root.join(kind).join(session))
    }

    /// Registers `session` as served by this process until the registration is
    /// dropped (a process that dies without dropping it reads as gone: its pid is
    /// dead).
    fn register_file(&self, session: &str) -> Result<LiveRegistration> {
        checked_id(session).map_err(anyhow::Error::msg)?;
        let path = self
            .root
            .join("live")
            .join(format!("{}.json", std::process::id()));
        let mut registered = REGISTERED.lock().unwrap_or_else(PoisonError::into_inner);
        let at = match registered.iter().position(|(file, _)| *file == path) {
            Some(at) => at,
            None => {
                registered.push((path.clone(), Vec::new()));
                registered.len() - 1
            }
        };
        let sessions = &mut registered[at].1;
        sessions.push(session.to_string());
        if let Err(err) = write_registration(&path, sessions) {
            sessions.pop();
            return Err(err);
        }
        Ok(LiveRegistration {
            path,
            session: session.to_string(),
        })
    }

    /// A registration, with SIGINT, SIGTERM and SIGHUP set to clear it before it is
    /// written (a signal between the two would otherwise end the process with its
    /// registration left behind).
    pub fn register_live_clearing_on_signals(&self, session: &str) -> Result<LiveRegistration> {
        checked_id(session).map_err(anyhow::Error::msg)?;
        clear_on_signals(
            &self
                .root
                .join("live")
                .join(format!("{}.json", std::process::id())),
        );
        self.register_file(session)
    }

    /// Registers `session` as run by process `pid`, another program (a harness that
    /// names its session only to its hooks: Gemini CLI's `SessionStart` hook registers
    /// the Gemini process). It stays while that process runs; a later session of the
    /// same process replaces it, and the file is swept once the process is gone.
    pub fn register_process(&self, pid: u32, session: &str) -> Result<()> {
        checked_id(session).map_err(anyhow::Error::msg)?;
        let Some(started) = process_start(pid) else {
            anyhow::bail!("process {pid} is not running: nothing to register");
        };
        let path = self.root.join("live").join(format!("{pid}.json"));
        let record = serde_json::json!({
            "session_id": session, "sessions": [session], "pid": pid, "started": started,
        });
        crate::record::write_atomically(&path, record.to_string().as_bytes())
            .with_context(|| format!("cannot write {}", path.display()))
    }

    /// The sessions a living host-shim process serves now.
    pub fn live_sessions(&self) -> HashSet<String> {
        let folder = self.root.join("live");
        let Ok(modified) = std::fs::metadata(&folder).and_then(|m| m.modified()) else {
            return HashSet::new();
        };
        let mut cached = self
            .live
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if cached.as_ref().is_none_or(|read| read.modified != modified) {
            *cached = Some(LiveRead {
                modified,
                records: self.read_live(&folder),
            });
        }
        let read = cached.as_mut().expect("just read");
        let mut live = HashSet::new();
        read.records.retain(|record| {
            if record.alive() {
                live.extend(record.sessions().cloned());
                return true;
            }
            // Its process is gone (killed, or the machine restarted): swept.
            let _ = std::fs::remove_file(&record.path);
            false
        });
        live
    }

    /// Sweeps the registrations in `live/` whose process is gone (as a look at the
    /// live sessions does): the session each named. A process ends without a word
    /// (a harness's headless run, a kill), so such files are ordinary bookkeeping.
    pub fn sweep_dead_registrations(&self) -> Vec<String> {
        (self.read_live(&self.root.join("live")).into_iter())
            .filter(|record| !record.alive())
            .filter(|record| std::fs::remove_file(&record.path).is_ok())
            .map(|record| record.session_id)
            .collect()
    }

    /// Every registration in `live/`, read once.
    fn read_live(&self, folder: &Path) -> Vec<LiveRecord> {
        self.live_reads.fetch_add(1, Ordering::Relaxed);
        let Ok(entries) = std::fs::read_dir(folder) else {
            return Vec::new();
        };
        let mut records = Vec::new();
        for entry in entries.flatten() {
            // A registration being written is no record; one left half-way by a
            // writer that is gone (killed mid-write) is swept.
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if !name.ends_with(".json") {
                if writer_of_temporary(&name).is_some_and(|pid| !crate::os::pid_alive(pid)) {
                    let _ = std::fs::remove_file(entry.path());
                }
                continue;
            }
            let Ok(bytes) = read_bounded(&entry.path()) else {
                continue;
            };
            if let Ok(mut record) = crate::json::from_slice::<LiveRecord>(&bytes) {
                record.path = entry.path();
                records.push(record);
            }
        }
        records
    }

    /// How many times this state folder's live registry was read (its files, not
    /// its folder's time): for tests.
    pub fn live_reads(&self) -> u64 {
        self.live_reads.load(Ordering::Relaxed)
    }
}

impl Presence for LocalPresence {
    /// Also sets SIGINT, SIGTERM and SIGHUP to clear the registration and end the
    /// process (how MCP clients such as Claude Code stop their stdio servers), set
    /// before the file exists, so no signal finds it unguarded.
    fn register_live(&self, session: &str) -> Result<Registration> {
        self.register_live_clearing_on_signals(session)
            .map(Registration::new)
    }

    fn live_sessions(&self) -> HashSet<String> {
        LocalPresence::live_sessions(self)
    }

    fn set_idle(&self, session: &str, idle: bool) -> Result<()> {
        LocalPresence::set_idle(self, session, idle)
    }

    fn is_idle(&self, session: &str) -> bool {
        LocalPresence::is_idle(self, session)
    }
}

impl LocalPresence {
    /// Marks `session` idle (its last turn ended and nothing continued it) or at
    /// work: an empty file `idle/<session>` while idle.
    pub fn set_idle(&self, session: &str, idle: bool) -> Result<()> {
        let path = self.session_path("idle", session)?;
        if idle {
            let dir = self.root.join("idle");
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(&dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(false)
                .mode(0o600)
                .custom_flags(libc::O_NOFOLLOW)
                .open(&path)
                .with_context(|| format!("cannot write {}", path.display()))?;
        } else {
            match std::fs::remove_file(&path) {
                Ok(()) => {}
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
                Err(err) => {
                    return Err(err).with_context(|| format!("cannot remove {}", path.display()));
                }
            }
        }
        Ok(())
    }

    /// Whether `session` is idle (see [`LocalPresence::set_idle`]).
    pub fn is_idle(&self, session: &str) -> bool {
        self.session_path("idle", session)
            .is_ok_and(|path| std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file()))
    }
}

/// A live session's registration; dropping it clears it, and so does a SIGINT,
/// SIGTERM or SIGHUP once [`LiveRegistration::clear_on_signals`] was called (for every
/// session of the process: its one file goes).
#[derive(Debug)]
pub struct LiveRegistration {
    path: PathBuf,
    session: String,
}

/// The registration file a signal handler removes (a leaked C string, or null).
static CLEAR_ON_SIGNAL: std::sync::atomic::AtomicPtr<libc::c_char> =
    std::sync::atomic::AtomicPtr::new(std::ptr::null_mut());

/// The temporary file that registration is written through, removed likewise.
static CLEAR_TEMPORARY_ON_SIGNAL: std::sync::atomic::AtomicPtr<libc::c_char> =
    std::sync::atomic::AtomicPtr::new(std::ptr::null_mut());

extern "C" fn clear_and_exit(signal: libc::c_int) {
    // SAFETY: only async-signal-safe calls: unlink of paths set before the handler
    // was installed and never freed, then _exit.
    unsafe {
        for path in [&CLEAR_ON_SIGNAL, &CLEAR_TEMPORARY_ON_SIGNAL] {
            let path = path.load(Ordering::SeqCst);
            if !path.is_null() {
                libc::unlink(path);
            }
        }
        libc::_exit(128 + signal);
    }
}

/// The pid that writes `name` when it is a temporary registration
/// (`<pid>.json.tmp<writer>`, see [`crate::record::write_atomically`]).
fn writer_of_temporary(name: &str) -> Option<u32> {
    let (_, writer) = name.split_once(".json.tmp")?;
    writer.parse().ok()
}

impl LiveRegistration {
    /// Makes SIGINT (how MCP clients such as Claude Code stop their stdio servers),
    /// SIGTERM and SIGHUP clear this registration and end the process (exit status
    /// 128 + the signal), instead of ending it with the registration left behind.
    /// [`LocalPresence::register_live_clearing_on_signals`] installs this before the file
    /// exists, so no signal finds it unguarded.
    pub fn clear_on_signals(&self) {
        clear_on_signals(&self.path);
    }
}

/// See [`LiveRegistration::clear_on_signals`]: the handlers remove `path`, and the
/// temporary file a registration is written through (a signal may come mid-write).
fn clear_on_signals(path: &Path) {
    use std::os::unix::ffi::OsStrExt;
    let temporary = crate::record::temporary_of(path);
    let (Ok(path), Ok(temporary)) = (
        std::ffi::CString::new(path.as_os_str().as_bytes()),
        std::ffi::CString::new(temporary.as_os_str().as_bytes()),
    ) else {
        return;
    };
    CLEAR_ON_SIGNAL.store(path.into_raw(), Ordering::SeqCst);
    CLEAR_TEMPORARY_ON_SIGNAL.store(temporary.into_raw(), Ordering::SeqCst);
    for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: installs a handler that makes only async-signal-safe calls.
        unsafe {
            libc::signal(signal, clear_and_exit as *const () as libc::sighandler_t);
        }
    }
}

impl Drop for LiveRegistration {
    fn drop(&mut self) {
        let mut registered = REGISTERED.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(at) = registered.iter().position(|(file, _)| *file == self.path) else {
            let _ = std::fs::remove_file(&self.path);
            return;
        };
        let sessions = &mut registered[at].1;
        if let Some(one) = sessions.iter().position(|s| *s == self.session) {
            sessions.remove(one);
        }
        let _ = write_registration(&self.path, sessions);
        if sessions.is_empty() {
            registered.remove(at);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn presence(name: &str) -> (PathBuf, LocalPresence) {
        let dir = host_shim_testkit::scratch("presence", name);
        let presence = LocalPresence::open(&dir.join("state")).unwrap();
        (dir, presence)
    }

    #[test]
    fn another_programs_process_is_registered_while_it_runs_and_its_next_session_replaces_it() {
        let (_dir, presence) = presence("process");
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        presence.register_process(child.id(), "first").unwrap();
        assert!(presence.live_sessions().contains("first"));
        presence.register_process(child.id(), "second").unwrap();
        let live = presence.live_sessions();
        assert!(
            live.contains("second") && !live.contains("first"),
            "{live:?}"
        );
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(presence.live_sessions().is_empty());
        let err = presence.register_process(child.id(), "third").unwrap_err();
        assert!(err.to_string().contains("is not running"), "{err}");
        assert!(
            presence
                .register_process(std::process::id(), "../x")
                .is_err()
        );
    }

    #[test]
    fn a_dead_processs_registration_reads_cold() {
        let (dir, state) = presence("dead");
        let registration = state.register_file("s1").unwrap();
        assert!(state.live_sessions().contains("s1"));
        drop(registration);
        assert!(state.live_sessions().is_empty());
        // A file left by a process that died (pid far past any real one).
        let dead = state.root.join("live").join("999999999.json");
        std::fs::write(&dead, r#"{"session_id":"s2","pid":999999999}"#).unwrap();
        assert!(state.live_sessions().is_empty());
        // and is swept.
        assert!(!dead.exists());
        // A registration half-written by a writer that died (killed mid-write) is
        // swept; one a living writer is writing is left to it.
        let live = state.root.join("live");
        let half_written = live.join("999999999.json.tmp999999999");
        let being_written = live.join(format!("7.json.tmp{}", std::process::id()));
        std::fs::write(&half_written, "{").unwrap();
        std::fs::write(&being_written, "{").unwrap();
        assert!(state.sweep_dead_registrations().is_empty());
        assert!(
            !half_written.exists(),
            "a dead writer's temporary file is swept"
        );
        assert!(being_written.exists(), "a living writer's is not");
        std::fs::remove_file(being_written).unwrap();
        // A living process that is not the one registered (its pid was reused).
        if let Some(started) = process_start(std::process::id()) {
            let pid = std::process::id();
            let reused = format!(
                r#"{{"session_id":"s3","pid":{pid},"started":{}}}"#,
                started + 1
            );
            std::fs::write(state.root.join("live").join("reused.json"), reused).unwrap();
            assert!(state.live_sessions().is_empty());
        }
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_process_registers_several_sessions_in_its_one_file() {
        let (dir, state) = presence("several");
        let first = state.register_file("s1").unwrap();
        let second = state.register_file("s2").unwrap();
        let names = |state: &LocalPresence| {
            let mut live: Vec<String> = state.live_sessions().into_iter().collect();
            live.sort();
            live
        };
        assert_eq!(names(&state), ["s1", "s2"]);
        assert_eq!(
            std::fs::read_dir(state.root.join("live")).unwrap().count(),
            1
        );
        drop(first);
        assert_eq!(names(&state), ["s2"]);
        drop(second);
        assert!(names(&state).is_empty());
        assert_eq!(
            std::fs::read_dir(state.root.join("live")).unwrap().count(),
            0
        );
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_session_is_idle_until_it_is_at_work_again() {
        let (dir, presence) = presence("idle");
        assert!(!presence.is_idle("s1"));
        presence.set_idle("s1", true).unwrap();
        assert!(presence.is_idle("s1"));
        presence.set_idle("s1", false).unwrap();
        assert!(!presence.is_idle("s1"));
        assert!(presence.set_idle("../x", true).is_err());
        let _ = std::fs::remove_dir_all(dir);
    }
}
