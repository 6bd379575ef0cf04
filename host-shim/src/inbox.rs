//! The harness-neutral inbox: the state folder (`$XDG_STATE_HOME/session-tools`, or
//! `--state-dir`) with a durable spool per session and the registry of live sessions.
//! Every store delivers here and every harness's hook adapter hands over from here (as
//! does the Codex store through Codex's daemon); nothing in it knows a harness. Several processes use
//! it at once (MCP servers delivering, hooks handing over), none of them holding a
//! lock: every change is one atomic filesystem step.
//!
//! Layout:
//!
//! ```text
//! inbox/<session>/<name>.json          waiting for the session's next hook
//! inbox/<session>/<name>.json@<pid>    being handed over by process <pid> (a hook or a store)
//! handed/<session>/<name>.json         handed over (kept: a retried delivery is a repeat)
//! tmp/                                 messages being written
//! live/<pid>.json                      a host-shim process serving a session
//! idle/<session>                       the session's last turn ended (its Stop hook)
//! ```
//!
//! Trust model. Whoever can write the folder can put words into a session's next
//! turn, so the folder must be this user's alone: it is created `0700`, and one owned
//! by someone else, writable by group or others, or a symlink is refused with an error
//! that names it. Nothing in it is ever run: message files are JSON data of bounded
//! size ([`MAX_MESSAGE_BYTES`]), read without following symlinks; session ids become
//! folder names only when they are plain names ([`checked_id`]).
//!
//! Promises, each tried by `tests/inbox.rs`, which kills a writer at every step:
//!
//! - A message is in the inbox whole or not at all: it is written to `tmp/`, synced,
//!   then linked into place (a link fails when the name exists, so two writers of one
//!   key cannot both land) and the folder synced. A crash leaves at most an orphan in
//!   `tmp/`, never a half message; orphans of dead processes are swept.
//! - At most once per delivery key: the file is named from the key's SHA-256, and a
//!   key already waiting, claimed or handed over is a repeat that changes nothing.
//! - A message leaves the inbox only after the hook's answer is written (or the Codex
//!   daemon's answer read): a hook claims it (rename), writes its answer, then moves it
//!   to `handed/`. A hook that
//!   dies before the move exits without success, which the harness ignores, and its
//!   claim returns to the inbox at the next hand-over: each message is handed over by
//!   exactly one successful hook run.

use crate::bindings::{Delivered, DeliveryMode, DeliveryRefusal, DeliveryState, InboxCount};
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The largest message file read (a delivered body is at most 256 KiB).
pub const MAX_MESSAGE_BYTES: u64 = 1 << 20;

/// A step of writing or handing over a message, for an observer to see (tests kill
/// the process at each one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// The message is written to its temporary file, not yet synced.
    Written,
    /// The temporary file is synced.
    Synced,
    /// The message is linked into the inbox; the folder is not yet synced.
    Linked,
    /// A hook claimed the message.
    Claimed,
    /// A hook wrote its answer; the message is still claimed.
    Answered,
}

/// One spooled message, as its file holds it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpooledMessage {
    pub target: String,
    pub mode: DeliveryMode,
    pub body: String,
    /// The delivery key (empty when the call had no id).
    #[serde(default)]
    pub key: String,
    /// When the inbox accepted it, in nanoseconds since the Unix epoch: the order of
    /// hand-over.
    pub accepted_at_ns: u128,
    /// Whether the delivery woke the target.
    #[serde(default)]
    pub woke: bool,
    /// The sending session, read from the delivery key (empty without one).
    #[serde(default)]
    pub sender: String,
}

/// What `put` did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Put {
    /// The message is in the inbox, at this path.
    New(PathBuf),
    /// A message with this key was accepted before: nothing changed.
    Repeat(SpooledMessage),
}

/// A message found in the state folder, and where it is now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Located {
    pub message: SpooledMessage,
    /// Waiting (in the inbox, or claimed by a hook handing it over) or handed over.
    pub state: DeliveryState,
}

/// How long an identical message from the same sender to the same target counts as a
/// repeat (SPEC, "Repeats a host should catch").
pub const REPEAT_WINDOW: std::time::Duration = std::time::Duration::from_secs(600);

/// What [`spool_once`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Spooled {
    /// Accepted before (the same key, or the same words from the same sender lately):
    /// the first answer, with where that message is now.
    Repeat(Delivered),
    /// In the target's inbox now (a store may wake the target with it, or hand it
    /// over itself).
    New(Waiting),
}

/// The acceptance every store gives a delivery: a key accepted before, by this
/// process or another, is a repeat; so are the same words from the same sender within
/// [`REPEAT_WINDOW`] (a retry with a new call id); a cold target the call may not wake
/// is refused; otherwise the message is spooled, once. `wakes` is asked only then,
/// just before the message is spooled (a store may wake the target in it), and records
/// whether the target was or will be woken with it.
#[allow(clippy::too_many_arguments)]
pub fn spool_once(
    state: &StateDir,
    target: &str,
    body: &str,
    mode: DeliveryMode,
    key: &str,
    live: bool,
    may_wake: bool,
    wakes: impl FnOnce() -> bool,
) -> Result<Spooled, DeliveryRefusal> {
    let unusable = |err: anyhow::Error| {
        DeliveryRefusal::Rejected(format!("the inbox cannot take messages now: {err:#}"))
    };
    let repeat = |first: Located| {
        Spooled::Repeat(Delivered {
            woke: first.message.woke,
            repeat: true,
            state: first.state,
        })
    };
    if let Some(first) = state.find(target, key).map_err(unusable)? {
        return Ok(repeat(first));
    }
    let sender = key_sender(key).unwrap_or_default();
    if let Some(first) =
        (state.find_identical(target, sender, body, REPEAT_WINDOW)).map_err(unusable)?
    {
        return Ok(repeat(first));
    }
    if !live && !may_wake {
        return Err(DeliveryRefusal::WouldNeedWake);
    }
    let message = StateDir::message(target, mode, body, key, wakes());
    Ok(match state.put_unseen(&message).map_err(unusable)? {
        // Another writer of this key landed first, a moment ago.
        Put::Repeat(first) => Spooled::Repeat(Delivered {
            woke: first.woke,
            repeat: true,
            state: DeliveryState::Waiting,
        }),
        Put::New(path) => Spooled::New(Waiting { path, message }),
    })
}

/// What a hook run handed over, and what it could not read.
#[derive(Debug, Default)]
pub struct HookReport {
    pub handed_over: Vec<SpooledMessage>,
    /// Messages the event takes that were waiting (a concurrent hook may have claimed
    /// some first).
    pub picked: usize,
    /// Files in the inbox that are not messages, each with what is wrong.
    pub unreadable: Vec<String>,
}

/// Which waiting messages a hook event takes (oldest first, in each case).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Takes {
    /// The `steer` messages: the running turn takes them at its next step.
    Steer,
    /// The `steer` messages and the oldest `queue` one: a turn that ends continues
    /// with one queued message, so each becomes its own turn.
    SteerAndOldestQueued,
    /// Everything waiting: a turn or a session is starting.
    All,
}

/// What every harness's hook adapter does: picks the waiting messages the event
/// takes, at most `cap` chars of them (at least one), and hands them over, `answer`
/// writing the harness's answer with their joined text; a message leaves the spool
/// only after that ([`StateDir::hand_over`]).
pub fn hand_over_waiting(
    state: &StateDir,
    session: &str,
    takes: Takes,
    cap: usize,
    answer: impl FnOnce(&str) -> Result<()>,
) -> Result<HookReport> {
    let contents = state.waiting(session)?;
    let is_steer = |w: &Waiting| w.message.mode == DeliveryMode::Steer;
    let oldest_queued = contents.messages.iter().position(|w| !is_steer(w));
    let picked: Vec<Waiting> = (contents.messages.iter().enumerate())
        .filter(|&(i, w)| match takes {
            Takes::Steer => is_steer(w),
            Takes::SteerAndOldestQueued => is_steer(w) || Some(i) == oldest_queued,
            Takes::All => true,
        })
        .map(|(_, w)| w.clone())
        .collect();
    let picked = within_answer_cap(picked, cap);
    let mut report = HookReport {
        handed_over: Vec::new(),
        picked: picked.len(),
        unreadable: contents.unreadable,
    };
    if !picked.is_empty() {
        report.handed_over =
            state.hand_over(session, picked, |messages| answer(&joined(messages)))?;
    }
    Ok(report)
}

/// Messages handed over together: their bodies, oldest first, joined by a blank line.
pub fn joined(messages: &[SpooledMessage]) -> String {
    messages
        .iter()
        .map(|m| m.body.as_str())
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// The first messages whose text, joined by blank lines, fits in `cap` chars; at
/// least one.
pub fn within_answer_cap(picked: Vec<Waiting>, cap: usize) -> Vec<Waiting> {
    let mut chars = 0;
    let mut kept = Vec::new();
    for waiting in picked {
        let more = waiting.message.body.chars().count() + if kept.is_empty() { 0 } else { 2 };
        if !kept.is_empty() && chars + more > cap {
            break;
        }
        chars += more;
        kept.push(waiting);
    }
    kept
}

/// A message waiting in a session's inbox.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Waiting {
    pub path: PathBuf,
    pub message: SpooledMessage,
}

/// What a session's inbox holds: the messages, oldest first, and the files in it that
/// are not messages (each named with what is wrong), which are left where they are.
#[derive(Clone, Debug, Default)]
pub struct InboxContents {
    pub messages: Vec<Waiting>,
    pub unreadable: Vec<String>,
}

/// The state folder.
#[derive(Clone, Debug)]
pub struct StateDir {
    root: PathBuf,
    observer: Option<fn(Step)>,
    /// The live registry as last read, by the `live/` folder's modification time:
    /// read again only when a registration came or went.
    live: std::sync::Arc<std::sync::Mutex<Option<LiveRead>>>,
    /// Times `live/` files were read (see [`StateDir::live_reads`]).
    live_reads: std::sync::Arc<AtomicU64>,
}

/// One read of the live registry.
#[derive(Debug)]
struct LiveRead {
    modified: std::time::SystemTime,
    records: Vec<LiveRecord>,
}

/// One registration: a session served by a process.
#[derive(Clone, Debug, Deserialize)]
struct LiveRecord {
    session_id: String,
    pid: u32,
    #[serde(default)]
    started: Option<u64>,
    #[serde(skip)]
    path: PathBuf,
}

impl LiveRecord {
    /// Its process still runs (the same process: a reused pid has another start).
    fn alive(&self) -> bool {
        pid_alive(self.pid) && (self.started.is_none() || self.started == process_start(self.pid))
    }
}

/// A session id as a folder name, or why it cannot be one. Harnesses' ids are UUIDs
/// or names of that kind; anything with a path separator, a leading dot or other
/// characters is refused.
pub fn checked_id(id: &str) -> Result<&str, String> {
    let plain = !id.is_empty()
        && id.len() <= 200
        && !id.starts_with('.')
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if plain {
        Ok(id)
    } else {
        Err(format!(
            "the session id {id:?} is not a plain name (letters, digits, '-', '_', '.'), so it has no inbox folder"
        ))
    }
}

/// The default state folder: `$XDG_STATE_HOME/session-tools` when that is an absolute
/// path, else `$HOME/.local/state/session-tools`.
pub fn default_dir() -> Option<PathBuf> {
    crate::private::user_dir(
        std::env::var_os("XDG_STATE_HOME").map(PathBuf::from),
        std::env::var_os("HOME").map(PathBuf::from),
        ".local/state",
    )
}

fn now_ns() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos())
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
fn process_start(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The name (field 2) is in parentheses and may hold spaces; field 22 is the start.
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(19)?.parse().ok()
}

/// A folder's entries; none when it does not exist (yet).
fn listing(dir: &Path) -> Result<Vec<std::fs::DirEntry>> {
    match std::fs::read_dir(dir) {
        Ok(entries) => Ok(entries.flatten().collect()),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(err) => Err(err).with_context(|| format!("cannot list {}", dir.display())),
    }
}

fn sync_dir(dir: &Path) -> std::io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Reads a message-sized regular file (see [`crate::private::read_regular`]).
fn read_bounded(path: &Path) -> std::io::Result<Vec<u8>> {
    crate::private::read_regular(path, MAX_MESSAGE_BYTES)
}

fn read_message(path: &Path) -> Result<SpooledMessage> {
    let bytes = read_bounded(path).with_context(|| format!("cannot read {}", path.display()))?;
    serde_json::from_slice(&bytes).with_context(|| {
        format!(
            "{} is not a spooled message; move it out of the state folder",
            path.display()
        )
    })
}

/// The caller a delivery key names: the plugin makes keys `LEN:CALLERCALLID`, the
/// caller's byte length first.
pub fn key_sender(key: &str) -> Option<&str> {
    let (length, rest) = key.split_once(':')?;
    rest.get(..length.parse::<usize>().ok()?)
}

/// The message file's name for a key: from its hash (keys hold any characters), or
/// unique per process and call without a key.
fn message_name(key: &str) -> String {
    if key.is_empty() {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        format!(
            "u-{}-{}-{}.json",
            now_ns(),
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        )
    } else {
        let digest = Sha256::digest(key.as_bytes());
        let hex: String = digest[..20].iter().map(|b| format!("{b:02x}")).collect();
        format!("k-{hex}.json")
    }
}

impl StateDir {
    /// Opens (creating when missing) a state folder this user alone can write.
    pub fn open(root: &Path) -> Result<StateDir> {
        for dir in [root.to_path_buf(), root.join("tmp"), root.join("live")] {
            crate::private::trusted_dir(&dir).map_err(|why| {
                anyhow::anyhow!(
                    "state folder {}: {why}; name one only you can write with --state-dir",
                    dir.display()
                )
            })?;
        }
        Ok(StateDir {
            root: root.to_path_buf(),
            observer: None,
            live: std::sync::Arc::default(),
            live_reads: std::sync::Arc::default(),
        })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Calls `observer` at each [`Step`] of writing and handing over (a test kills the
    /// process there to check what a crash leaves).
    pub fn observe(mut self, observer: fn(Step)) -> StateDir {
        self.observer = Some(observer);
        self
    }

    fn step(&self, step: Step) {
        if let Some(observer) = self.observer {
            observer(step);
        }
    }

    /// `<kind>/<session>`, which may not exist yet.
    fn session_path(&self, kind: &str, session: &str) -> Result<PathBuf> {
        let session = checked_id(session).map_err(anyhow::Error::msg)?;
        Ok(self.root.join(kind).join(session))
    }

    /// `<kind>/<session>`, made when missing (only writers make folders).
    fn session_dir(&self, kind: &str, session: &str) -> Result<PathBuf> {
        let dir = self.session_path(kind, session)?;
        std::fs::DirBuilder::new()
            .recursive(true)
            .create(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        Ok(dir)
    }

    /// The message with this key for this session, wherever it is (waiting, claimed
    /// or handed over).
    pub fn find(&self, session: &str, key: &str) -> Result<Option<Located>> {
        if key.is_empty() {
            return Ok(None);
        }
        let name = message_name(key);
        let at =
            |path: &Path, state| read_message(path).map(|message| Some(Located { message, state }));
        // In the order a message moves, so one moving on is still found.
        let inbox = self.session_path("inbox", session)?;
        let waiting = inbox.join(&name);
        if waiting.exists() {
            return at(&waiting, DeliveryState::Waiting);
        }
        let claim_prefix = format!("{name}@");
        for entry in listing(&inbox)? {
            if entry
                .file_name()
                .to_string_lossy()
                .starts_with(&claim_prefix)
            {
                return at(&entry.path(), DeliveryState::Waiting);
            }
        }
        let handed = self.session_path("handed", session)?.join(&name);
        if handed.exists() {
            return at(&handed, DeliveryState::HandedOver);
        }
        Ok(None)
    }

    /// How many of `sender`'s messages to `session` wait (in its inbox, or claimed by
    /// a hook handing them over) and how many were handed over. Every message file of
    /// the session is read: the sender is inside, not in the name.
    pub fn count_from(&self, session: &str, sender: &str) -> Result<InboxCount> {
        let mut count = InboxCount::NONE;
        if sender.is_empty() {
            return Ok(count);
        }
        for kind in ["inbox", "handed"] {
            for entry in listing(&self.session_path(kind, session)?)? {
                let Ok(message) = read_message(&entry.path()) else {
                    continue;
                };
                if message.sender != sender {
                    continue;
                }
                match kind {
                    "inbox" => count.waiting += 1,
                    _ => count.handed_over += 1,
                }
            }
        }
        Ok(count)
    }

    /// Puts a message into its target's inbox exactly once: whole, synced, and not at
    /// all when a message with its key was accepted before.
    pub fn put(&self, message: &SpooledMessage) -> Result<Put> {
        if let Some(first) = self.find(&message.target, &message.key)? {
            return Ok(Put::Repeat(first.message));
        }
        self.put_unseen(message)
    }

    /// [`StateDir::put`] for a caller that has just looked the key up with
    /// [`StateDir::find`] and found nothing: the link into place still refuses a
    /// second writer of the key, so the message lands once.
    pub fn put_unseen(&self, message: &SpooledMessage) -> Result<Put> {
        let inbox = self.session_dir("inbox", &message.target)?;
        let name = message_name(&message.key);
        let place = inbox.join(&name);
        let temporary =
            self.root
                .join("tmp")
                .join(format!("{name}.{}.{}", std::process::id(), now_ns()));
        let bytes = serde_json::to_vec(message)?;
        let written = (|| -> std::io::Result<()> {
            let mut file = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&temporary)?;
            file.write_all(&bytes)?;
            self.step(Step::Written);
            file.sync_all()?;
            self.step(Step::Synced);
            Ok(())
        })();
        let linked = written.and_then(|()| std::fs::hard_link(&temporary, &place));
        let _ = std::fs::remove_file(&temporary);
        match linked {
            Ok(()) => {}
            Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => {
                // Another writer of this key landed first.
                return Ok(Put::Repeat(read_message(&place)?));
            }
            Err(err) => {
                return Err(err)
                    .with_context(|| format!("cannot write a message into {}", inbox.display()));
            }
        }
        self.step(Step::Linked);
        sync_dir(&inbox).with_context(|| format!("cannot sync {}", inbox.display()))?;
        Ok(Put::New(place))
    }

    /// A fresh message for `put`, stamped now.
    pub fn message(
        target: &str,
        mode: DeliveryMode,
        body: &str,
        key: &str,
        woke: bool,
    ) -> SpooledMessage {
        SpooledMessage {
            target: target.to_string(),
            mode,
            body: body.to_string(),
            key: key.to_string(),
            accepted_at_ns: now_ns(),
            woke,
            sender: key_sender(key).unwrap_or_default().to_string(),
        }
    }

    /// A message from `sender` to `session` with this body, accepted within `within`
    /// of now, wherever it is (waiting, claimed or handed over): a model that retries
    /// an interrupted send gets a new call id, so only the body tells it is the same.
    pub fn find_identical(
        &self,
        session: &str,
        sender: &str,
        body: &str,
        within: std::time::Duration,
    ) -> Result<Option<Located>> {
        if sender.is_empty() {
            return Ok(None);
        }
        let since = now_ns().saturating_sub(within.as_nanos());
        let recent = std::time::SystemTime::now() - within;
        for kind in ["inbox", "handed"] {
            for entry in listing(&self.session_path(kind, session)?)? {
                // A file is written once, when its message is accepted; moves keep
                // its time.
                let fresh = entry
                    .metadata()
                    .and_then(|m| m.modified())
                    .is_ok_and(|modified| modified >= recent);
                if !fresh {
                    continue;
                }
                let Ok(message) = read_message(&entry.path()) else {
                    continue;
                };
                if message.accepted_at_ns >= since
                    && message.sender == sender
                    && message.body == body
                {
                    let state = match kind {
                        "inbox" => DeliveryState::Waiting,
                        _ => DeliveryState::HandedOver,
                    };
                    return Ok(Some(Located { message, state }));
                }
            }
        }
        Ok(None)
    }

    /// The messages waiting for `session`, oldest first. Claims left by hooks that
    /// died are returned to the inbox first, and orphans in `tmp/` of dead writers
    /// swept.
    pub fn waiting(&self, session: &str) -> Result<InboxContents> {
        let inbox = self.session_path("inbox", session)?;
        self.sweep_tmp();
        let mut contents = InboxContents::default();
        for entry in listing(&inbox)? {
            let name = entry.file_name().to_string_lossy().into_owned();
            let mut path = entry.path();
            if let Some((original, pid)) = name.rsplit_once('@') {
                let pid: u32 = pid.parse().unwrap_or(0);
                if pid_alive(pid) {
                    continue; // another hook is handing it over now
                }
                let back = inbox.join(original);
                if std::fs::rename(&path, &back).is_err() {
                    continue;
                }
                path = back;
            } else if !name.ends_with(".json") {
                continue;
            }
            match read_message(&path) {
                Ok(message) => contents.messages.push(Waiting { message, path }),
                Err(err) => contents.unreadable.push(format!("{err:#}")),
            }
        }
        contents.messages.sort_by(|a, b| {
            (a.message.accepted_at_ns, &a.path).cmp(&(b.message.accepted_at_ns, &b.path))
        });
        Ok(contents)
    }

    /// Hands `picked` over: claims each (one a concurrent hook claimed first is left
    /// out), calls `answer` with the claimed messages (it writes the hook's answer),
    /// then moves them to `handed/`. When `answer` fails, or nothing could be claimed,
    /// the claims go back to the inbox. Returns the messages handed over.
    pub fn hand_over(
        &self,
        session: &str,
        picked: Vec<Waiting>,
        answer: impl FnOnce(&[SpooledMessage]) -> Result<()>,
    ) -> Result<Vec<SpooledMessage>> {
        let handed = self.session_dir("handed", session)?;
        let pid = std::process::id();
        let mut claimed: Vec<(PathBuf, PathBuf, SpooledMessage)> = Vec::new();
        for waiting in picked {
            let mut claim = waiting.path.as_os_str().to_os_string();
            claim.push(format!("@{pid}"));
            let claim = PathBuf::from(claim);
            if std::fs::rename(&waiting.path, &claim).is_ok() {
                claimed.push((waiting.path, claim, waiting.message));
            }
        }
        if claimed.is_empty() {
            return Ok(Vec::new());
        }
        self.step(Step::Claimed);
        let messages: Vec<SpooledMessage> = claimed.iter().map(|(_, _, m)| m.clone()).collect();
        let give_back = |claimed: &[(PathBuf, PathBuf, SpooledMessage)]| {
            for (original, claim, _) in claimed {
                let _ = std::fs::rename(claim, original);
            }
        };
        if let Err(err) = answer(&messages) {
            give_back(&claimed);
            return Err(err);
        }
        self.step(Step::Answered);
        for (index, (original, claim, _)) in claimed.iter().enumerate() {
            let name = original.file_name().unwrap_or_default();
            if let Err(err) = std::fs::rename(claim, handed.join(name)) {
                give_back(&claimed[index..]);
                return Err(err).context(format!(
                    "cannot move a handed-over message into {}",
                    handed.display()
                ));
            }
        }
        sync_dir(&handed)?;
        Ok(messages)
    }

    /// Marks `session` idle (its last turn ended and nothing continued it) or at
    /// work: an empty file `idle/<session>` while idle.
    pub fn set_idle(&self, session: &str, idle: bool) -> Result<()> {
        let path = self.session_path("idle", session)?;
        if idle {
            let dir = self.root.join("idle");
            std::fs::DirBuilder::new()
                .recursive(true)
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

    /// Whether `session` is idle (see [`StateDir::set_idle`]).
    pub fn is_idle(&self, session: &str) -> bool {
        self.session_path("idle", session)
            .is_ok_and(|path| std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file()))
    }

    /// Removes temporary files whose writer is gone.
    fn sweep_tmp(&self) {
        let Ok(entries) = std::fs::read_dir(self.root.join("tmp")) else {
            return;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            // <name>.json.<pid>.<ns>
            let pid = name.rsplit('.').nth(1).and_then(|p| p.parse::<u32>().ok());
            if pid.is_some_and(|pid| !pid_alive(pid)) {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }

    /// Registers `session` as served by this process until the registration is
    /// dropped (a process that dies without dropping it reads as gone: its pid is
    /// dead).
    pub fn register_live(&self, session: &str) -> Result<LiveRegistration> {
        checked_id(session).map_err(anyhow::Error::msg)?;
        let path = self
            .root
            .join("live")
            .join(format!("{}.json", std::process::id()));
        let pid = std::process::id();
        let record =
            serde_json::json!({"session_id": session, "pid": pid, "started": process_start(pid)});
        crate::record::write_atomically(&path, record.to_string().as_bytes())
            .with_context(|| format!("cannot write {}", path.display()))?;
        Ok(LiveRegistration { path })
    }

    /// [`StateDir::register_live`], with SIGINT, SIGTERM and SIGHUP set to clear the
    /// registration before it is written (a signal between the two would otherwise
    /// end the process with its registration left behind).
    pub fn register_live_clearing_on_signals(&self, session: &str) -> Result<LiveRegistration> {
        checked_id(session).map_err(anyhow::Error::msg)?;
        clear_on_signals(
            &self
                .root
                .join("live")
                .join(format!("{}.json", std::process::id())),
        );
        self.register_live(session)
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
                live.insert(record.session_id.clone());
                return true;
            }
            // Its process is gone (killed, or the machine restarted): swept.
            let _ = std::fs::remove_file(&record.path);
            false
        });
        live
    }

    /// Every registration in `live/`, read once.
    fn read_live(&self, folder: &Path) -> Vec<LiveRecord> {
        self.live_reads.fetch_add(1, Ordering::Relaxed);
        let Ok(entries) = std::fs::read_dir(folder) else {
            return Vec::new();
        };
        let mut records = Vec::new();
        for entry in entries.flatten() {
            let Ok(bytes) = read_bounded(&entry.path()) else {
                continue;
            };
            if let Ok(mut record) = serde_json::from_slice::<LiveRecord>(&bytes) {
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

/// A live session's registration; dropping it clears it, and so does a SIGINT,
/// SIGTERM or SIGHUP once [`LiveRegistration::clear_on_signals`] was called.
#[derive(Debug)]
pub struct LiveRegistration {
    path: PathBuf,
}

/// The registration file a signal handler removes (a leaked C string, or null).
static CLEAR_ON_SIGNAL: std::sync::atomic::AtomicPtr<libc::c_char> =
    std::sync::atomic::AtomicPtr::new(std::ptr::null_mut());

extern "C" fn clear_and_exit(signal: libc::c_int) {
    let path = CLEAR_ON_SIGNAL.load(Ordering::SeqCst);
    // SAFETY: only async-signal-safe calls: unlink of a path set before the handler
    // was installed and never freed, then _exit.
    unsafe {
        if !path.is_null() {
            libc::unlink(path);
        }
        libc::_exit(128 + signal);
    }
}

impl LiveRegistration {
    /// Makes SIGINT (how MCP clients such as Claude Code stop their stdio servers),
    /// SIGTERM and SIGHUP clear this registration and end the process (exit status
    /// 128 + the signal), instead of ending it with the registration left behind.
    /// [`StateDir::register_live_clearing_on_signals`] installs this before the file
    /// exists, so no signal finds it unguarded.
    pub fn clear_on_signals(&self) {
        clear_on_signals(&self.path);
    }
}

/// See [`LiveRegistration::clear_on_signals`]: the handlers remove `path`.
fn clear_on_signals(path: &Path) {
    use std::os::unix::ffi::OsStrExt;
    let Ok(path) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return;
    };
    CLEAR_ON_SIGNAL.store(path.into_raw(), Ordering::SeqCst);
    for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: installs a handler that makes only async-signal-safe calls.
        unsafe {
            libc::signal(signal, clear_and_exit as *const () as libc::sighandler_t);
        }
    }
}

impl Drop for LiveRegistration {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::bail;

    fn state() -> (tempdir::Dir, StateDir) {
        let dir = tempdir::Dir::new();
        let state = StateDir::open(&dir.0.join("state")).unwrap();
        (dir, state)
    }

    mod tempdir {
        pub struct Dir(pub std::path::PathBuf);
        impl Dir {
            pub fn new() -> Dir {
                use std::sync::atomic::{AtomicU32, Ordering};
                static N: AtomicU32 = AtomicU32::new(0);
                let path = std::env::temp_dir().join(format!(
                    "spool-unit-{}-{}",
                    std::process::id(),
                    N.fetch_add(1, Ordering::Relaxed)
                ));
                std::fs::create_dir_all(&path).unwrap();
                Dir(path)
            }
        }
        impl Drop for Dir {
            fn drop(&mut self) {
                let _ = std::fs::remove_dir_all(&self.0);
            }
        }
    }

    #[test]
    fn a_key_is_put_once_and_found_wherever_it_moved() {
        let (_dir, state) = state();
        let first = StateDir::message("s1", DeliveryMode::Queue, "hello", "5:alicec1", false);
        // Looking creates nothing; the first message makes its inbox.
        assert!(state.waiting("s1").unwrap().messages.is_empty());
        assert!(!state.root().join("inbox").exists());
        assert!(matches!(state.put(&first).unwrap(), Put::New(_)));
        let again = StateDir::message("s1", DeliveryMode::Queue, "hello", "5:alicec1", false);
        assert_eq!(state.put(&again).unwrap(), Put::Repeat(first.clone()));
        let waiting = state.waiting("s1").unwrap().messages;
        assert_eq!(waiting.len(), 1);
        let handed = state.hand_over("s1", waiting, |_| Ok(())).unwrap();
        assert_eq!(handed, vec![first.clone()]);
        assert!(state.waiting("s1").unwrap().messages.is_empty());
        // Handed over: a retry is still a repeat.
        assert_eq!(state.put(&again).unwrap(), Put::Repeat(first));
    }

    #[test]
    fn messages_without_a_key_are_each_delivered_and_come_out_oldest_first() {
        let (_dir, state) = state();
        for body in ["one", "two", "three"] {
            state
                .put(&StateDir::message(
                    "s1",
                    DeliveryMode::Queue,
                    body,
                    "",
                    false,
                ))
                .unwrap();
        }
        let bodies: Vec<String> = state
            .waiting("s1")
            .unwrap()
            .messages
            .into_iter()
            .map(|w| w.message.body)
            .collect();
        assert_eq!(bodies, ["one", "two", "three"]);
    }

    #[test]
    fn a_failed_answer_leaves_the_messages_waiting() {
        let (_dir, state) = state();
        state
            .put(&StateDir::message(
                "s1",
                DeliveryMode::Steer,
                "x",
                "k",
                false,
            ))
            .unwrap();
        let waiting = state.waiting("s1").unwrap().messages;
        let err = state
            .hand_over("s1", waiting, |_| bail!("stdout closed"))
            .unwrap_err();
        assert_eq!(err.to_string(), "stdout closed");
        assert_eq!(state.waiting("s1").unwrap().messages.len(), 1);
    }

    #[test]
    fn ids_that_are_not_plain_names_have_no_inbox() {
        let (_dir, state) = state();
        for id in ["../etc", "a/b", ".hidden", "", "a b"] {
            let err = state
                .put(&StateDir::message(id, DeliveryMode::Queue, "x", "", false))
                .unwrap_err();
            assert!(err.to_string().contains("is not a plain name"), "{err}");
        }
    }

    #[test]
    fn a_dead_processs_registration_reads_cold() {
        let (_dir, state) = state();
        let registration = state.register_live("s1").unwrap();
        assert!(state.live_sessions().contains("s1"));
        drop(registration);
        assert!(state.live_sessions().is_empty());
        // A file left by a process that died (pid far past any real one).
        let dead = state.root().join("live").join("999999999.json");
        std::fs::write(&dead, r#"{"session_id":"s2","pid":999999999}"#).unwrap();
        assert!(state.live_sessions().is_empty());
        // and is swept.
        assert!(!dead.exists());
        // A living process that is not the one registered (its pid was reused).
        if let Some(started) = process_start(std::process::id()) {
            let pid = std::process::id();
            let reused = format!(
                r#"{{"session_id":"s3","pid":{pid},"started":{}}}"#,
                started + 1
            );
            std::fs::write(state.root().join("live").join("reused.json"), reused).unwrap();
            assert!(state.live_sessions().is_empty());
        }
    }

    #[test]
    fn a_key_names_its_sender() {
        assert_eq!(key_sender("5:alicetoolu_1"), Some("alice"));
        assert_eq!(key_sender("0:toolu_1"), Some(""));
        assert_eq!(key_sender("9:alice"), None);
        assert_eq!(key_sender("x:alice"), None);
        assert_eq!(key_sender(""), None);
    }

    #[test]
    fn an_identical_body_from_the_same_sender_is_found_within_the_window() {
        let (_dir, state) = state();
        let window = std::time::Duration::from_secs(600);
        let first = StateDir::message("s1", DeliveryMode::Queue, "hello", "5:alicetoolu_1", false);
        state.put(&first).unwrap();
        let found = |sender: &str, body: &str| {
            state
                .find_identical("s1", sender, body, window)
                .unwrap()
                .map(|m| m.message.key)
        };
        assert_eq!(found("alice", "hello"), Some("5:alicetoolu_1".into()));
        assert_eq!(found("bob", "hello"), None);
        assert_eq!(found("alice", "hello again"), None);
        assert_eq!(found("", "hello"), None);
        // Handed over, still found; older than the window, not.
        let waiting = state.waiting("s1").unwrap().messages;
        state.hand_over("s1", waiting, |_| Ok(())).unwrap();
        assert_eq!(found("alice", "hello"), Some("5:alicetoolu_1".into()));
        assert_eq!(
            state
                .find_identical("s1", "alice", "hello", std::time::Duration::ZERO)
                .unwrap(),
            None
        );
    }

    #[test]
    fn a_damaged_message_file_is_named_and_the_others_still_wait() {
        let (_dir, state) = state();
        state
            .put(&StateDir::message(
                "s1",
                DeliveryMode::Queue,
                "fine",
                "",
                false,
            ))
            .unwrap();
        let inbox = state.root().join("inbox").join("s1");
        std::fs::write(inbox.join("k-bad.json"), "{half").unwrap();
        let contents = state.waiting("s1").unwrap();
        assert_eq!(contents.messages.len(), 1);
        assert_eq!(contents.unreadable.len(), 1);
        assert!(
            contents.unreadable[0].contains("k-bad.json is not a spooled message"),
            "{:?}",
            contents.unreadable
        );
    }
}
