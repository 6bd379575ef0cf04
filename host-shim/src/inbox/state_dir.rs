//! The durable inbox on one machine: the state folder (`$XDG_STATE_HOME/session-tools`,
//! or `--state-dir`) with a spool per session, an [`InboxBackend`]. Every store on the
//! machine delivers here and every harness's hand-over takes from here; nothing in it
//! knows a harness. Several processes use it at once (MCP servers delivering, hooks
//! handing over), none of them holding a lock: every change is one atomic filesystem
//! step.
//!
//! Layout (a handle is a message file's name):
//!
//! ```text
//! inbox/<session>/<name>.json          waiting for the session's next hand-over
//! inbox/<session>/<name>.json@<pid>    being handed over by process <pid> (a hook or a store)
//! inbox/<session>/<name>.json~<ns>     offered at <ns> (ns since the epoch): answered, not
//!                                      yet seen in the target's record
//! handed/<session>/<name>.json         handed over (kept: a retried delivery is a repeat,
//!                                      and sending caps count it)
//! inbound/<session>                    `hold` or `refuse`: what the session's person
//!                                      lets in (no file: accept)
//! claims/<revision>.json               every session's claims at that revision (the
//!                                      newest is the set: `super::claims`)
//! tmp/                                 messages being written
//! ```
//!
//! (the live registry and idle marks share the folder: `crate::presence::LocalPresence`.)
//!
//! Trust model. Whoever can write the folder can put words into a session's next
//! turn, so the folder must be this user's alone: it is created `0700`, and one owned
//! by someone else, writable by group or others, or a symlink is refused with an error
//! that names it. Nothing in it is ever run: message files are JSON data of bounded
//! size ([`MAX_MESSAGE_BYTES`]), read without following symlinks; session ids become
//! folder names only when they are plain names ([`checked_id`]), and a handle only
//! when it is a message file's name.
//!
//! Promises, each tried by `tests/inbox.rs`, which kills a writer at every step, and by
//! `host_shim_testkit::crash`, which each harness's tests run to kill its hook at every
//! step:
//!
//! - A message is in the inbox whole or not at all: it is written to `tmp/`, synced,
//!   then linked into place (a link fails when the name exists, so two writers of one
//!   key cannot both land) and the folder synced. A crash leaves at most an orphan in
//!   `tmp/`, never a half message; orphans of dead processes are swept.
//! - At most once per delivery key: the file is named from the key's SHA-256, and a
//!   key already waiting, claimed or handed over is a repeat that changes nothing.
//! - A message leaves the inbox only once the target has it: it is claimed (rename),
//!   answered, then marked offered (rename); it moves to `handed/` when the target's
//!   own record shows its id ([`InboxBackend::settle`]). A hook killed at any step
//!   exits without success, and the harness drops its answer: its claim or offer is
//!   settled against the record by a later hand-over, and offered again only when the
//!   record does not show it after the offer's time. (Where only the answer witnesses
//!   a hand-over, [`InboxBackend::hand_over`] moves it to `handed/` at once.)

use super::{
    Handle, InboxBackend, InboxContents, Located, Put, Sent, SpooledMessage, Waiting, checked_id,
    now_ns,
};
use super::{ReadShown, Settled};
use crate::contract::latest::{DeliveryState, InboundPolicy, InboxCount};
use crate::os::pid_alive;
use anyhow::{Context, Result};
use sha2::{Digest, Sha256};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

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
    /// The message is marked offered (or handed over, where only the answer witnesses
    /// it).
    Marked,
}

/// The state folder's spool.
#[derive(Clone, Debug)]
pub struct StateDir {
    root: PathBuf,
    observer: Option<fn(Step)>,
}

/// The default state folder: `$XDG_STATE_HOME/session-tools` when that is an absolute
/// path, else `$HOME/.local/state/session-tools`.
pub fn default_dir() -> Option<PathBuf> {
    crate::os::user_dir(
        std::env::var_os("XDG_STATE_HOME").map(PathBuf::from),
        std::env::var_os("HOME").map(PathBuf::from),
        ".local/state",
    )
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

/// Reads a message-sized regular file (see [`crate::os::read_regular`]).
fn read_bounded(path: &Path) -> std::io::Result<Vec<u8>> {
    crate::os::read_regular(path, MAX_MESSAGE_BYTES)
}

fn read_message(path: &Path) -> Result<SpooledMessage> {
    let bytes = read_bounded(path).with_context(|| format!("cannot read {}", path.display()))?;
    crate::json::from_slice(&bytes).with_context(|| {
        format!(
            "{} is not a spooled message; move it out of the state folder",
            path.display()
        )
    })
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
        for dir in [root.to_path_buf(), root.join("tmp")] {
            crate::os::trusted_dir(&dir).map_err(|why| {
                anyhow::anyhow!(
                    "state folder {}: {why}; name one only you can write with --state-dir",
                    dir.display()
                )
            })?;
        }
        Ok(StateDir {
            root: root.to_path_buf(),
            observer: None,
        })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The sessions with an inbox folder (messages may wait in it), in name order: for
    /// a person's look over the whole folder (`host-shim doctor`).
    pub fn sessions(&self) -> Result<Vec<String>> {
        let mut sessions: Vec<String> = listing(&self.root.join("inbox"))?
            .into_iter()
            .filter(|entry| entry.file_type().is_ok_and(|t| t.is_dir()))
            .filter_map(|entry| entry.file_name().to_str().map(str::to_string))
            .filter(|name| checked_id(name).is_ok())
            .collect();
        sessions.sort();
        Ok(sessions)
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
            .mode(0o700)
            .create(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        Ok(dir)
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

    /// The message file a handle names, in `session`'s inbox.
    fn waiting_path(&self, session: &str, handle: &Handle) -> Result<PathBuf> {
        let name = handle.as_str();
        let plain = name.ends_with(".json") && !name.starts_with('.') && !name.contains('/');
        anyhow::ensure!(plain, "{name:?} is no message file of this state folder");
        Ok(self.session_path("inbox", session)?.join(name))
    }
}

/// A message a hand-over claimed: where it waited, where its claim is.
struct Claim {
    original: PathBuf,
    claimed: PathBuf,
    message: SpooledMessage,
}

/// Where the message waiting at `original` is while offered since `at_ns`.
fn offer_path(original: &Path, at_ns: u128) -> PathBuf {
    let mut offer = original.as_os_str().to_os_string();
    offer.push(format!("~{at_ns}"));
    PathBuf::from(offer)
}

impl StateDir {
    /// Claims each of `picked` (one a concurrent hook claimed first is left out) and
    /// calls `answer` with the claimed messages; when it fails the claims go back.
    fn claim_and_answer(
        &self,
        session: &str,
        picked: Vec<Waiting>,
        answer: &mut dyn FnMut(&[SpooledMessage]) -> Result<()>,
    ) -> Result<Vec<Claim>> {
        let pid = std::process::id();
        let mut claimed: Vec<Claim> = Vec::new();
        for waiting in picked {
            let original = self.waiting_path(session, &waiting.handle)?;
            let mut claim = original.as_os_str().to_os_string();
            claim.push(format!("@{pid}"));
            let claim = PathBuf::from(claim);
            if std::fs::rename(&original, &claim).is_ok() {
                claimed.push(Claim {
                    original,
                    claimed: claim,
                    message: waiting.message,
                });
            }
        }
        if claimed.is_empty() {
            return Ok(claimed);
        }
        self.step(Step::Claimed);
        let messages: Vec<SpooledMessage> = claimed.iter().map(|c| c.message.clone()).collect();
        if let Err(err) = answer(&messages) {
            give_back(&claimed);
            return Err(err);
        }
        self.step(Step::Answered);
        Ok(claimed)
    }

    /// Moves claimed messages to `handed/`; those not moved when one fails go back.
    fn move_to_handed(&self, session: &str, claimed: &[Claim]) -> Result<()> {
        if claimed.is_empty() {
            return Ok(());
        }
        let handed = self.session_dir("handed", session)?;
        for (index, claim) in claimed.iter().enumerate() {
            let name = claim.original.file_name().unwrap_or_default();
            if let Err(err) = std::fs::rename(&claim.claimed, handed.join(name)) {
                give_back(&claimed[index..]);
                return Err(err).context(format!(
                    "cannot move a handed-over message into {}",
                    handed.display()
                ));
            }
        }
        sync_dir(&handed).with_context(|| format!("cannot sync {}", handed.display()))
    }
}

/// Claims given back to the inbox.
fn give_back(claimed: &[Claim]) {
    for claim in claimed {
        let _ = std::fs::rename(&claim.claimed, &claim.original);
    }
}

impl InboxBackend for StateDir {
    /// The message with this key for this session, wherever it is (waiting, claimed
    /// or handed over).
    fn find(&self, session: &str, key: &str) -> Result<Option<Located>> {
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
        // Claimed or offered: still waiting, until the target's record shows it.
        let (claimed, offered) = (format!("{name}@"), format!("{name}~"));
        for entry in listing(&inbox)? {
            let file = entry.file_name().to_string_lossy().into_owned();
            if file.starts_with(&claimed) || file.starts_with(&offered) {
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
    fn count_from(&self, session: &str, sender: &str) -> Result<InboxCount> {
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

    /// The link into place refuses a second writer of the key, so the message lands
    /// once.
    fn put_unseen(&self, message: &SpooledMessage) -> Result<Put> {
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
        Ok(Put::New(Handle::new(name)))
    }

    /// Only files written within `within` are read: a file is written once, when its
    /// message is accepted, and moves keep its time.
    fn find_same_words(&self, ask: &super::SameWords) -> Result<Option<Located>> {
        let recent = std::time::SystemTime::now() - ask.within;
        for kind in ["inbox", "handed"] {
            for entry in listing(&self.session_path(kind, ask.session)?)? {
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
                if ask.is(&message) {
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

    /// The messages waiting for `session`, oldest first (not those claimed or offered:
    /// [`InboxBackend::settle`] returns those whose time is up); orphans in `tmp/` of
    /// dead writers are swept.
    fn waiting(&self, session: &str) -> Result<InboxContents> {
        let inbox = self.session_path("inbox", session)?;
        self.sweep_tmp();
        let mut contents = InboxContents::default();
        for entry in listing(&inbox)? {
            let name = entry.file_name().to_string_lossy().into_owned();
            if !name.ends_with(".json") {
                continue;
            }
            match read_message(&entry.path()) {
                Ok(message) => {
                    let handle = Handle::new(name);
                    contents.messages.push(Waiting { handle, message });
                }
                Err(err) => contents.unreadable.push(format!("{err:#}")),
            }
        }
        contents.messages.sort_by(|a, b| {
            (a.message.accepted_at_ns, a.handle.as_str())
                .cmp(&(b.message.accepted_at_ns, b.handle.as_str()))
        });
        Ok(contents)
    }

    /// Claims each picked message (one a concurrent hook claimed first is left out),
    /// calls the answer with the claimed messages (it writes the hook's answer), then
    /// moves them to `handed/`, or, offered, renames each claim to an offer stamped now
    /// (a message without an id, which no record can show, still goes to `handed/`).
    /// When the answer fails, or nothing could be claimed, the claims go back to the
    /// inbox.
    fn hand(&self, handing: super::Handing) -> Result<Vec<SpooledMessage>> {
        let session = handing.session;
        let claimed = self.claim_and_answer(session, handing.picked, handing.answer)?;
        let (unseeable, offered): (Vec<Claim>, Vec<Claim>) = match handing.handed {
            super::Handed::Over => (claimed, Vec::new()),
            super::Handed::Offered => {
                (claimed.into_iter()).partition(|claim| claim.message.message_id.is_empty())
            }
        };
        self.move_to_handed(session, &unseeable)?;
        let now = now_ns();
        for claim in &offered {
            let offer = offer_path(&claim.original, now);
            std::fs::rename(&claim.claimed, &offer)
                .with_context(|| format!("cannot mark {} offered", offer.display()))?;
        }
        if let Some(claim) = offered.first() {
            let inbox = claim.original.parent().unwrap_or(&self.root);
            sync_dir(inbox).with_context(|| format!("cannot sync {}", inbox.display()))?;
        }
        self.step(Step::Marked);
        Ok((unseeable.into_iter().chain(offered))
            .map(|claim| claim.message)
            .collect())
    }

    /// A dead hook's claim becomes an offer stamped when it is found (its claimant's
    /// last moment is not known); each offer is then settled by the record.
    fn settle(&self, session: &str, expire_after: Duration, shown: ReadShown) -> Result<Settled> {
        let inbox = self.session_path("inbox", session)?;
        let now = now_ns();
        let mut offers: Vec<(PathBuf, u128)> = Vec::new();
        for entry in listing(&inbox)? {
            let name = entry.file_name().to_string_lossy().into_owned();
            if let Some((original, pid)) = name.rsplit_once('@') {
                if pid_alive(pid.parse().unwrap_or(0)) || !original.ends_with(".json") {
                    continue; // another hook is handing it over now
                }
                let offer = offer_path(&inbox.join(original), now);
                if std::fs::rename(entry.path(), &offer).is_ok() {
                    offers.push((offer, now));
                }
            } else if let Some((original, at)) = name.rsplit_once('~')
                && original.ends_with(".json")
            {
                offers.push((entry.path(), at.parse().unwrap_or(0)));
            }
        }
        let mut settled = super::Settled::default();
        if offers.is_empty() {
            return Ok(settled);
        }
        let mut readable = Vec::new();
        for (offer, at) in offers {
            let name = offer.file_name().unwrap_or_default().to_string_lossy();
            let original = name.rsplit_once('~').map_or(&*name, |(o, _)| o).to_string();
            match read_message(&offer) {
                Ok(message) => readable.push((offer, at, original, message)),
                // No record can settle it: back where the next listing names it.
                Err(_) => drop(std::fs::rename(&offer, inbox.join(&original))),
            }
        }
        if readable.is_empty() {
            sync_dir(&inbox)?;
            return Ok(settled);
        }
        let ids: Vec<String> = (readable.iter())
            .map(|(_, _, _, message)| message.message_id.clone())
            .collect();
        let shown = shown(&ids)?;
        let handed = self.session_dir("handed", session)?;
        for (offer, at, original, message) in readable {
            if !message.message_id.is_empty() && shown.contains(&message.message_id) {
                if std::fs::rename(&offer, handed.join(&original)).is_ok() {
                    settled.handed_over.push(message);
                }
            } else if now.saturating_sub(at) >= expire_after.as_nanos()
                && std::fs::rename(&offer, inbox.join(&original)).is_ok()
            {
                settled.waiting_again.push(message);
            }
        }
        sync_dir(&handed)?;
        sync_dir(&inbox)?;
        Ok(settled)
    }

    /// Every session's inbox and hand-over folder is listed; only files written since
    /// `since_ns` are read (a file is written once, when its message is accepted, and
    /// moves keep its time).
    fn sent_since(&self, sender: &str, since_ns: u128) -> Result<Vec<Sent>> {
        let mut sent = Vec::new();
        if sender.is_empty() {
            return Ok(sent);
        }
        let since = std::time::UNIX_EPOCH
            + std::time::Duration::from_nanos(u64::try_from(since_ns).unwrap_or(u64::MAX));
        // A second of slack for filesystems that keep coarse times.
        let fresh_since = since - std::time::Duration::from_secs(1);
        for kind in ["inbox", "handed"] {
            for session in listing(&self.root.join(kind))? {
                for entry in listing(&session.path())? {
                    let fresh = (entry.metadata().and_then(|m| m.modified()))
                        .is_ok_and(|modified| modified >= fresh_since);
                    if !fresh {
                        continue;
                    }
                    let Ok(message) = read_message(&entry.path()) else {
                        continue;
                    };
                    if message.sender == sender && message.accepted_at_ns >= since_ns {
                        sent.push(Sent {
                            target: message.target,
                            accepted_at_ns: message.accepted_at_ns,
                            key: message.key,
                        });
                    }
                }
            }
        }
        Ok(sent)
    }

    /// Read from `inbound/<session>`: `hold` or `refuse`; no file is accept. A file
    /// that says anything else is an error that names it.
    fn inbound(&self, session: &str) -> Result<InboundPolicy> {
        let path = self.session_path("inbound", session)?;
        let bytes = match read_bounded(&path) {
            Ok(bytes) => bytes,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                return Ok(InboundPolicy::Accept);
            }
            Err(err) => return Err(err).with_context(|| format!("cannot read {}", path.display())),
        };
        let word = String::from_utf8_lossy(&bytes);
        InboundPolicy::parse(word.trim()).with_context(|| {
            let said: String = word.trim().chars().take(40).collect();
            format!(
                "{} says {said:?}, which is no inbound setting (hold or refuse); set it again with `host-shim inbound {session} accept` (or hold, or refuse)",
                path.display(),
            )
        })
    }

    fn read_claims(&self) -> Result<super::claims::ClaimsAt> {
        (super::claims::ClaimFiles { root: &self.root }).read()
    }

    fn write_claims(
        &self,
        revision: u64,
        claims: &[crate::contract::latest::Claim],
        _changes: &[crate::contract::latest::ClaimChange],
    ) -> Result<super::claims::ClaimsWritten> {
        (super::claims::ClaimFiles { root: &self.root }).write(revision, claims)
    }

    /// Written whole (a temporary file renamed into place); accept removes the file.
    fn set_inbound(&self, session: &str, policy: InboundPolicy) -> Result<()> {
        let folder = self.root.join("inbound");
        let path = self.session_path("inbound", session)?;
        if policy == InboundPolicy::Accept {
            return match std::fs::remove_file(&path) {
                Err(err) if err.kind() != std::io::ErrorKind::NotFound => {
                    Err(err).with_context(|| format!("cannot remove {}", path.display()))
                }
                _ => Ok(()),
            };
        }
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&folder)
            .with_context(|| format!("cannot create {}", folder.display()))?;
        let temporary =
            self.root
                .join("tmp")
                .join(format!("inbound.{}.{}", std::process::id(), now_ns()));
        (OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&temporary))
        .and_then(|mut file| file.write_all(policy.as_str().as_bytes()))
        .with_context(|| format!("cannot write {}", temporary.display()))?;
        std::fs::rename(&temporary, &path)
            .with_context(|| format!("cannot write {}", path.display()))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::latest::DeliveryMode;

    fn state(name: &str) -> (PathBuf, StateDir) {
        let dir = host_shim_testkit::scratch("state-dir", name);
        let state = StateDir::open(&dir.join("state")).unwrap();
        (dir, state)
    }

    fn message(target: &str, body: &str, key: &str) -> SpooledMessage {
        SpooledMessage::new(target, DeliveryMode::Queue, body, key, false)
    }

    #[test]
    fn looking_creates_nothing_and_the_first_message_makes_its_inbox() {
        let (dir, state) = state("looking");
        assert!(state.waiting("s1").unwrap().messages.is_empty());
        assert!(!state.root().join("inbox").exists());
        state.put(&message("s1", "hello", "k")).unwrap();
        assert!(state.root().join("inbox/s1").is_dir());
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn ids_that_are_not_plain_names_have_no_inbox() {
        let (dir, state) = state("names");
        for id in ["../etc", "a/b", ".hidden", "", "a b"] {
            let err = state.put(&message(id, "x", "")).unwrap_err();
            assert!(err.to_string().contains("is not a plain name"), "{err}");
        }
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_handle_that_is_no_message_file_hands_nothing_over() {
        let (dir, state) = state("handles");
        state.put(&message("s1", "x", "k")).unwrap();
        let mut waiting = state.waiting("s1").unwrap().messages;
        waiting[0].handle = Handle::new("../../tmp/x.json");
        assert!(state.hand_over("s1", waiting, &mut |_| Ok(())).is_err());
        assert_eq!(state.waiting("s1").unwrap().messages.len(), 1);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_damaged_message_file_is_named_and_the_others_still_wait() {
        let (dir, state) = state("damaged");
        state.put(&message("s1", "fine", "")).unwrap();
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
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_damaged_offer_is_named_by_the_next_listing_not_kept_offered() {
        let (dir, state) = state("damaged-offer");
        let inbox = state.session_dir("inbox", "s1").unwrap();
        std::fs::write(inbox.join("k-bad.json~1"), "{half").unwrap();
        let settled = (state.settle("s1", std::time::Duration::MAX, &mut |_| {
            Ok(super::super::Shown::new())
        }))
        .unwrap();
        assert_eq!(settled, super::super::Settled::default());
        let contents = state.waiting("s1").unwrap();
        assert!(
            contents.unreadable[0].contains("k-bad.json is not a spooled message"),
            "{:?}",
            contents.unreadable
        );
        let _ = std::fs::remove_dir_all(dir);
    }
}
