//! The audit trail: every message an inbox accepted and every hand-over, every claim
//! made, released or lapsed, for the person running the sessions (`host-shim log`),
//! and the sends the guard rails refused (the
//! loop guard, the sending caps, a person's refusal), which a host records with
//! [`AuditRecord::refused`] since they never reach an inbox. [`Audited`] wraps any [`InboxBackend`] and
//! records what passes through it, so every store, hook, idle watcher and daemon
//! hand-over is recorded without knowing of the log.
//!
//! Layout, in the state folder: `log/audit.jsonl` (newest), `log/audit.1.jsonl` …
//! `log/audit.<KEPT_FILES-1>.jsonl` (older), one JSON record per line ([`AuditRecord`]).
//!
//! Trust model. The log says who sent what to whom, so it is private like the state
//! folder: `log/` is made `0700` and refused when another user owns it, others can
//! write it or it is a symlink; files are created `0600` and opened without following
//! symlinks. It is bounded: past [`MAX_FILE_BYTES`] the file is rotated, and at most
//! [`KEPT_FILES`] files are kept (the oldest is dropped). A message's body is recorded
//! only when the log is opened with bodies on; otherwise its SHA-256 and size tell two
//! messages apart. Writing the log never fails a delivery or a hand-over: a record that
//! cannot be written is said on stderr and the message goes on. Records are appended
//! in one write each, so processes appending at once do not interleave within a line.

use super::{InboxBackend, InboxContents, Located, Put, SpooledMessage, Waiting, now_ns};
use super::{ReadShown, Settled};
use crate::contract::latest::{ChangeKind, Claim, DeliveryMode, InboxCount};
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

/// The size past which the newest file is rotated.
pub const MAX_FILE_BYTES: u64 = 1 << 20;
/// How many files are kept, the newest included.
pub const KEPT_FILES: usize = 4;
/// The longest record line read back (a record with a 256 KiB body, escaped, fits).
const MAX_LINE_BYTES: usize = 2 << 20;

/// What happened to a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AuditEvent {
    /// The inbox accepted it: it waits for its target's hand-over.
    Accepted,
    /// It was given to its target, which had not yet recorded it.
    Offered,
    /// It was handed to its target (its record shows it, or nothing but the answer
    /// could).
    HandedOver,
    /// Its offer's time passed and its target's record did not show it: it waits to
    /// be offered again.
    WaitingAgain,
    /// The plugin refused the send (`refusal` says which rail); nothing was delivered.
    Refused,
    /// A session claimed paths, or claimed them again (`claim` says which); `from` is
    /// the holder.
    Claimed,
    /// Its holder released a claim.
    Released,
    /// A claim ended: its time was up, or its holder was gone for the grace period.
    Lapsed,
    /// A session's write was refused before it happened: `from` is the writer, `to`
    /// the claim's holder, `claim` the claim it fell in.
    WriteRefused,
}

/// One line of the log.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditRecord {
    /// When, in milliseconds since the Unix epoch.
    pub at_ms: u64,
    pub event: AuditEvent,
    /// The sending session (empty when the delivery had no key).
    pub from: String,
    pub to: String,
    pub mode: DeliveryMode,
    /// The frame's hop (0 when the body carries none).
    pub hop: u32,
    /// Characters of the body.
    pub chars: u64,
    /// The first 16 hex digits of the body's SHA-256.
    pub sha256: String,
    /// The body, when the log records bodies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// For a refused send, the refusal's code (`loop-guard`, `rate-limited`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refusal: Option<String>,
    /// For a claim's record, the claim (the message fields are empty then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claim: Option<ClaimNote>,
}

/// A claim as the log records it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClaimNote {
    pub id: String,
    /// `exclusive` or `shared`.
    pub mode: String,
    pub paths: Vec<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    pub ends_at_ms: i64,
}

impl AuditRecord {
    /// The record of `message` for `event`, now.
    pub fn of(message: &SpooledMessage, event: AuditEvent, with_body: bool) -> AuditRecord {
        AuditRecord {
            at_ms: u64::try_from(now_ns() / 1_000_000).unwrap_or(u64::MAX),
            event,
            from: message.sender.clone(),
            to: message.target.clone(),
            mode: message.mode,
            hop: frame_hop(&message.body),
            chars: crate::contract::frames::as_sent(&message.body)
                .chars()
                .count() as u64,
            sha256: body_hash(&message.body),
            body: with_body.then(|| message.body.clone()),
            refusal: None,
            claim: None,
        }
    }

    /// The record of a send from `from` to `to` the plugin refused with `code`, now:
    /// `message` is the words the model asked to send (unframed: nothing was framed).
    pub fn refused(
        from: &str,
        to: &str,
        mode: DeliveryMode,
        message: &str,
        code: &str,
        with_body: bool,
    ) -> AuditRecord {
        AuditRecord {
            at_ms: u64::try_from(now_ns() / 1_000_000).unwrap_or(u64::MAX),
            event: AuditEvent::Refused,
            from: from.to_string(),
            to: to.to_string(),
            mode,
            hop: 0,
            chars: message.chars().count() as u64,
            sha256: body_hash(message),
            body: with_body.then(|| message.to_string()),
            refusal: Some(code.to_string()),
            claim: None,
        }
    }

    /// The record of `event` (a claim's) about `claim`, now: from its holder, or for a
    /// refused write from `writer` to the holder.
    pub fn of_claim(event: AuditEvent, claim: &Claim, writer: Option<&str>) -> AuditRecord {
        let (from, to) = match writer {
            Some(writer) => (writer.to_string(), claim.holder.clone()),
            None => (claim.holder.clone(), String::new()),
        };
        AuditRecord {
            at_ms: u64::try_from(now_ns() / 1_000_000).unwrap_or(u64::MAX),
            event,
            from,
            to,
            mode: DeliveryMode::Queue,
            hop: 0,
            chars: 0,
            sha256: String::new(),
            body: None,
            refusal: None,
            claim: Some(ClaimNote {
                id: claim.id.clone(),
                mode: claim.mode.as_str().to_string(),
                paths: claim.paths.clone(),
                reason: claim.reason.clone(),
                ends_at_ms: claim.ends_at_ms,
            }),
        }
    }
}

/// The first 16 hex digits of a body's SHA-256, as a record names the body.
pub fn body_hash(body: &str) -> String {
    // As its sender framed it: the same message hashes the same wherever it is read.
    let body = crate::contract::frames::as_sent(body);
    let digest = Sha256::digest(body.as_bytes());
    digest[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// The `hop: N` line of a frame's header (before `--- message begins ---`), or 0.
fn frame_hop(body: &str) -> u32 {
    body.lines()
        .take_while(|line| *line != "--- message begins ---")
        .find_map(|line| line.strip_prefix("hop: ")?.trim().parse().ok())
        .unwrap_or(0)
}

/// The log files of a state folder.
#[derive(Debug)]
pub struct AuditLog {
    dir: PathBuf,
    with_bodies: bool,
    /// One writer at a time within this process (rotation included).
    writing: Mutex<()>,
}

impl AuditLog {
    /// Whether records carry the messages' bodies.
    pub fn with_bodies(&self) -> bool {
        self.with_bodies
    }

    /// The log in `state_root/log` (made when missing, this user's alone). With
    /// `with_bodies`, records carry the messages' bodies.
    pub fn open(state_root: &Path, with_bodies: bool) -> Result<AuditLog> {
        // The state folder is checked before anything is made in it (a symlink's
        // target, another user's folder, one others can write get nothing).
        crate::os::trusted_dir(state_root).map_err(|why| {
            anyhow::anyhow!(
                "state folder {}: {why}; name one only you can write with --state-dir",
                state_root.display()
            )
        })?;
        let dir = state_root.join("log");
        crate::os::trusted_dir(&dir).map_err(|why| {
            anyhow::anyhow!(
                "log folder {}: {why}; name a state folder only you can write with --state-dir",
                dir.display()
            )
        })?;
        Ok(AuditLog {
            dir,
            with_bodies,
            writing: Mutex::new(()),
        })
    }

    /// The file of generation `n` (0 the newest).
    fn file(&self, n: usize) -> PathBuf {
        match n {
            0 => self.dir.join("audit.jsonl"),
            n => self.dir.join(format!("audit.{n}.jsonl")),
        }
    }

    /// Appends one record, rotating first when the newest file is full.
    pub fn append(&self, record: &AuditRecord) -> Result<()> {
        let _one = self.writing.lock().unwrap_or_else(|e| e.into_inner());
        let newest = self.file(0);
        let full = std::fs::symlink_metadata(&newest).is_ok_and(|m| m.len() >= MAX_FILE_BYTES);
        if full {
            for n in (1..KEPT_FILES).rev() {
                let _ = std::fs::rename(self.file(n - 1), self.file(n));
            }
        }
        let mut line = serde_json::to_vec(record)?;
        line.push(b'\n');
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&newest)
            .with_context(|| format!("cannot open {}", newest.display()))?;
        file.write_all(&line)
            .with_context(|| format!("cannot append to {}", newest.display()))
    }

    /// Every record kept, oldest first, the lines that are not records (each named with
    /// its file), and the cursor after the last one (for `--follow` to go on from).
    pub fn read_all(&self) -> (Vec<AuditRecord>, Vec<String>, Cursor) {
        let mut records = Vec::new();
        let mut unreadable = Vec::new();
        for n in (1..KEPT_FILES).rev() {
            let path = self.file(n);
            let Ok(bytes) = crate::os::read_regular(&path, MAX_FILE_BYTES * 4) else {
                continue;
            };
            read_lines(&bytes, &path, &mut records, &mut unreadable);
        }
        let (newest, cursor) = self.read_newest(Cursor::default(), &mut unreadable);
        records.extend(newest);
        (records, unreadable, cursor)
    }

    /// The newest file's records after `cursor`, and the cursor after them: for
    /// `--follow`. A file that is not the one the cursor was in (it was rotated) is read
    /// from its start.
    pub fn read_from(&self, cursor: Cursor) -> (Vec<AuditRecord>, Cursor) {
        self.read_newest(cursor, &mut Vec::new())
    }

    fn read_newest(&self, cursor: Cursor, bad: &mut Vec<String>) -> (Vec<AuditRecord>, Cursor) {
        use std::os::unix::fs::MetadataExt;
        let path = self.file(0);
        let Ok(file) = std::fs::symlink_metadata(&path).map(|m| m.ino()) else {
            return (Vec::new(), Cursor::default());
        };
        let Ok(bytes) = crate::os::read_regular(&path, MAX_FILE_BYTES * 4) else {
            return (Vec::new(), Cursor::default());
        };
        let same = cursor.file == file && cursor.offset <= bytes.len() as u64;
        let start = if same { cursor.offset as usize } else { 0 };
        // Only whole lines: a record being written is read next time.
        let end = bytes[start..]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(start, |at| start + at + 1);
        let mut records = Vec::new();
        read_lines(&bytes[start..end], &path, &mut records, bad);
        let offset = end as u64;
        (records, Cursor { file, offset })
    }
}

/// Where `--follow` is in the log: the newest file (its inode) and how far it read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cursor {
    file: u64,
    offset: u64,
}

fn read_lines(bytes: &[u8], path: &Path, records: &mut Vec<AuditRecord>, bad: &mut Vec<String>) {
    for (number, line) in bytes.split(|&b| b == b'\n').enumerate() {
        if line.is_empty() || line.len() > MAX_LINE_BYTES {
            continue;
        }
        match crate::json::from_slice(line) {
            Ok(record) => records.push(record),
            Err(err) => bad.push(format!("{} line {}: {err}", path.display(), number + 1)),
        }
    }
}

/// An inbox backend whose acceptances and hand-overs go into an [`AuditLog`].
pub struct Audited<B> {
    inner: B,
    log: AuditLog,
}

impl<B: InboxBackend> Audited<B> {
    pub fn new(inner: B, log: AuditLog) -> Audited<B> {
        Audited { inner, log }
    }

    fn record(&self, message: &SpooledMessage, event: AuditEvent) {
        self.append(&AuditRecord::of(message, event, self.log.with_bodies));
    }

    fn append(&self, record: &AuditRecord) {
        if let Err(err) = self.log.append(record) {
            eprintln!("host-shim: the audit log missed a record: {err:#}");
        }
    }
}

impl<B: InboxBackend> InboxBackend for Audited<B> {
    fn find(&self, session: &str, key: &str) -> Result<Option<Located>> {
        self.inner.find(session, key)
    }

    fn find_same_words(&self, ask: &super::SameWords) -> Result<Option<Located>> {
        self.inner.find_same_words(ask)
    }

    fn count_from(&self, session: &str, sender: &str) -> Result<InboxCount> {
        self.inner.count_from(session, sender)
    }

    fn put_unseen(&self, message: &SpooledMessage) -> Result<Put> {
        let put = self.inner.put_unseen(message)?;
        if matches!(put, Put::New(_)) {
            self.record(message, AuditEvent::Accepted);
        }
        Ok(put)
    }

    fn waiting(&self, session: &str) -> Result<InboxContents> {
        self.inner.waiting(session)
    }

    fn waiting_one(&self, session: &str, handle: &str) -> Result<Option<Waiting>> {
        self.inner.waiting_one(session, handle)
    }

    fn hand(&self, handing: super::Handing) -> Result<Vec<SpooledMessage>> {
        let handed = handing.handed;
        let given = self.inner.hand(handing)?;
        for message in &given {
            // One without an id no record can show: handed over at once.
            let event = match handed == super::Handed::Offered && !message.message_id.is_empty() {
                true => AuditEvent::Offered,
                false => AuditEvent::HandedOver,
            };
            self.record(message, event);
        }
        Ok(given)
    }

    fn settle(&self, session: &str, expire_after: Duration, shown: ReadShown) -> Result<Settled> {
        let settled = self.inner.settle(session, expire_after, shown)?;
        for message in &settled.handed_over {
            self.record(message, AuditEvent::HandedOver);
        }
        for message in &settled.waiting_again {
            self.record(message, AuditEvent::WaitingAgain);
        }
        Ok(settled)
    }

    fn sent_since(&self, sender: &str, since_ns: u128) -> Result<Vec<super::Sent>> {
        self.inner.sent_since(sender, since_ns)
    }

    fn read_claims(&self) -> Result<super::claims::ClaimsAt> {
        self.inner.read_claims()
    }

    fn write_claims(
        &self,
        revision: u64,
        claims: &[crate::contract::latest::Claim],
        changes: &[crate::contract::latest::ClaimChange],
    ) -> Result<super::claims::ClaimsWritten> {
        let written = self.inner.write_claims(revision, claims, changes)?;
        if matches!(written, super::claims::ClaimsWritten::Written(_)) {
            for change in changes {
                let event = match change.kind {
                    ChangeKind::Made => AuditEvent::Claimed,
                    ChangeKind::Released => AuditEvent::Released,
                    ChangeKind::Lapsed => AuditEvent::Lapsed,
                };
                self.append(&AuditRecord::of_claim(event, &change.claim, None));
            }
        }
        Ok(written)
    }

    fn inbound(&self, session: &str) -> Result<crate::contract::latest::InboundPolicy> {
        self.inner.inbound(session)
    }

    fn set_inbound(
        &self,
        session: &str,
        policy: crate::contract::latest::InboundPolicy,
    ) -> Result<()> {
        self.inner.set_inbound(session, policy)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inbox::{MemoryInbox, StateDir};
    use std::os::unix::fs::PermissionsExt;

    fn scratch(name: &str) -> PathBuf {
        host_shim_testkit::scratch("audit", name)
    }

    fn frame(hop: u32, words: &str) -> String {
        format!(
            "Cross-session message from another session of this harness.\nfrom-session: a\ndelivery: queue\nhop: {hop}\n--- message begins ---\n{words}\n--- message ends ---"
        )
    }

    #[test]
    fn acceptances_and_hand_overs_are_recorded_with_hashes_not_bodies() {
        let dir = scratch("records");
        let inbox = Audited::new(MemoryInbox::new(), AuditLog::open(&dir, false).unwrap());
        let message =
            SpooledMessage::new("b", DeliveryMode::Queue, &frame(2, "hi"), "1:ac1", false);
        inbox.put(&message).unwrap();
        // A repeat is no new acceptance.
        inbox.put(&message).unwrap();
        let waiting = inbox.waiting("b").unwrap().messages;
        inbox.hand_over("b", waiting, &mut |_| Ok(())).unwrap();
        let (records, bad, _) = AuditLog::open(&dir, false).unwrap().read_all();
        assert!(bad.is_empty(), "{bad:?}");
        let events: Vec<AuditEvent> = records.iter().map(|r| r.event).collect();
        assert_eq!(events, [AuditEvent::Accepted, AuditEvent::HandedOver]);
        let first = &records[0];
        assert_eq!(
            (first.from.as_str(), first.to.as_str(), first.hop),
            ("a", "b", 2)
        );
        assert_eq!(first.chars, message.body.chars().count() as u64);
        assert_eq!(first.sha256.len(), 16);
        assert_eq!(first.body, None, "bodies only when asked");
        // Private: the folder and the file are this user's alone.
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&dir.join("log")), 0o700);
        assert_eq!(mode(&dir.join("log/audit.jsonl")), 0o600);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn each_claim_written_is_recorded_and_a_stale_write_records_nothing() {
        let dir = scratch("claims");
        let inbox = Audited::new(MemoryInbox::new(), AuditLog::open(&dir, false).unwrap());
        let claim = Claim {
            id: "c-0123456789ab".into(),
            holder: "s-a".into(),
            paths: vec!["/w/src/**".into()],
            mode: crate::contract::latest::ClaimMode::Exclusive,
            reason: "split".into(),
            made_at_ms: 1,
            ends_at_ms: 2,
            seen_live_ms: 1,
        };
        let change = |kind| crate::contract::latest::ClaimChange {
            kind,
            claim: claim.clone(),
        };
        inbox
            .write_claims(0, std::slice::from_ref(&claim), &[change(ChangeKind::Made)])
            .unwrap();
        // Written from an old revision: nothing changed, nothing recorded.
        let stale = inbox.write_claims(0, &[], &[change(ChangeKind::Released)]);
        assert_eq!(stale.unwrap(), super::super::claims::ClaimsWritten::Stale);
        inbox
            .write_claims(1, &[], &[change(ChangeKind::Lapsed)])
            .unwrap();
        let (records, bad, _) = AuditLog::open(&dir, false).unwrap().read_all();
        assert!(bad.is_empty(), "{bad:?}");
        let events: Vec<AuditEvent> = records.iter().map(|r| r.event).collect();
        assert_eq!(events, [AuditEvent::Claimed, AuditEvent::Lapsed]);
        let note = records[0].claim.as_ref().unwrap();
        assert_eq!(
            (
                records[0].from.as_str(),
                note.id.as_str(),
                note.mode.as_str()
            ),
            ("s-a", "c-0123456789ab", "exclusive")
        );
        assert_eq!(note.paths, ["/w/src/**"]);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn bodies_are_kept_when_asked_and_a_failed_hand_over_records_nothing() {
        let dir = scratch("bodies");
        let state = StateDir::open(&dir.join("state")).unwrap();
        let inbox = Audited::new(state, AuditLog::open(&dir, true).unwrap());
        inbox
            .put(&SpooledMessage::new(
                "b",
                DeliveryMode::Steer,
                "plain",
                "",
                false,
            ))
            .unwrap();
        let waiting = inbox.waiting("b").unwrap().messages;
        assert!(
            inbox
                .hand_over("b", waiting, &mut |_| anyhow::bail!("no"))
                .is_err()
        );
        let (records, _, _) = AuditLog::open(&dir, true).unwrap().read_all();
        assert_eq!(records.len(), 1);
        assert_eq!(records[0].body.as_deref(), Some("plain"));
        assert_eq!(records[0].hop, 0, "no frame, no hop");
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn the_log_is_bounded_by_rotation_and_follow_reads_what_is_new() {
        let dir = scratch("rotation");
        let log = AuditLog::open(&dir, true).unwrap();
        let big = "x".repeat(200_000);
        let message = SpooledMessage::new("b", DeliveryMode::Queue, &big, "", false);
        let (_, mut cursor) = log.read_from(Cursor::default());
        for n in 0..40 {
            log.append(&AuditRecord::of(&message, AuditEvent::Accepted, true))
                .unwrap();
            let (new, next) = log.read_from(cursor);
            assert_eq!(new.len(), 1, "record {n} read once, rotation or not");
            cursor = next;
        }
        let files: Vec<u64> = (0..KEPT_FILES + 1)
            .map(|n| std::fs::metadata(log.file(n)).map_or(0, |m| m.len()))
            .collect();
        assert_eq!(files[KEPT_FILES], 0, "no more than {KEPT_FILES} files");
        let total: u64 = files.iter().sum();
        assert!(
            total <= (KEPT_FILES as u64) * (MAX_FILE_BYTES + 200_100),
            "{files:?}"
        );
        assert!(log.read_all().0.len() < 40, "the oldest were dropped");
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_record_that_cannot_be_written_never_fails_the_delivery_or_the_hand_over() {
        let dir = scratch("unwritable");
        let log = AuditLog::open(&dir, false).unwrap();
        // The log file cannot be opened (a directory stands in its place).
        std::fs::create_dir_all(dir.join("log/audit.jsonl")).unwrap();
        let inbox = Audited::new(MemoryInbox::new(), log);
        let message = SpooledMessage::new("b", DeliveryMode::Queue, "x", "1:ac1", false);
        assert!(matches!(inbox.put(&message).unwrap(), Put::New(_)));
        let waiting = inbox.waiting("b").unwrap().messages;
        assert_eq!(
            inbox
                .hand_over("b", waiting, &mut |_| Ok(()))
                .unwrap()
                .len(),
            1
        );
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_refused_state_folder_gets_nothing_made_in_it() {
        // Others can write it: refused for that, and no log folder made.
        let open = scratch("open-state");
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        let err = AuditLog::open(&open, false).unwrap_err().to_string();
        assert!(err.contains("others can write to it (mode 777)"), "{err}");
        assert!(!open.join("log").exists());
        // A symlink to a folder: refused, and nothing made in its target.
        let target = scratch("link-target");
        let link = target.with_extension("link");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let err = AuditLog::open(&link, false).unwrap_err().to_string();
        assert!(err.contains("a symlink"), "{err}");
        assert_eq!(std::fs::read_dir(&target).unwrap().count(), 0);
        std::fs::remove_file(&link).unwrap();
    }

    #[test]
    fn what_the_state_folder_holds_is_this_users_alone() {
        use crate::inbox::InboxBackend;
        let dir = scratch("private");
        let state = StateDir::open(&dir).unwrap();
        let message = crate::inbox::SpooledMessage::new(
            "s1",
            crate::contract::latest::DeliveryMode::Queue,
            "hi",
            "k1",
            false,
        );
        state.put(&message).unwrap();
        state
            .set_inbound("s1", crate::contract::latest::InboundPolicy::Hold)
            .unwrap();
        let presence = crate::presence::LocalPresence::open(&dir).unwrap();
        presence.register_process(std::process::id(), "s1").unwrap();
        let mode = |path: PathBuf| std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(dir.join("inbox/s1")), 0o700);
        for entry in std::fs::read_dir(dir.join("inbox/s1")).unwrap() {
            assert_eq!(mode(entry.unwrap().path()), 0o600);
        }
        for entry in std::fs::read_dir(dir.join("live")).unwrap() {
            assert_eq!(mode(entry.unwrap().path()), 0o600);
        }
        let inbound: Vec<_> = walk(&dir)
            .into_iter()
            .filter(|p| p.to_string_lossy().contains("inbound"))
            .collect();
        assert!(!inbound.is_empty());
        for path in inbound {
            let expected = if path.is_dir() { 0o700 } else { 0o600 };
            assert_eq!(mode(path.clone()), expected, "{}", path.display());
        }
    }

    /// Every path under `dir`.
    fn walk(dir: &Path) -> Vec<PathBuf> {
        let mut all = Vec::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                all.extend(walk(&path));
            }
            all.push(path);
        }
        all
    }

    #[test]
    fn a_log_folder_others_can_write_is_refused_and_a_bad_line_is_named() {
        let dir = scratch("trust");
        std::fs::create_dir_all(dir.join("log")).unwrap();
        std::fs::set_permissions(dir.join("log"), std::fs::Permissions::from_mode(0o777)).unwrap();
        let err = AuditLog::open(&dir, false).unwrap_err().to_string();
        assert!(err.contains("log folder"), "{err}");
        std::fs::set_permissions(dir.join("log"), std::fs::Permissions::from_mode(0o700)).unwrap();
        std::fs::write(dir.join("log/audit.jsonl"), "{half\n").unwrap();
        let (records, bad, _) = AuditLog::open(&dir, false).unwrap().read_all();
        assert!(records.is_empty());
        assert!(bad[0].contains("audit.jsonl line 1"), "{bad:?}");
        // A symlink planted as the log file is not followed: the record is refused.
        std::fs::remove_file(dir.join("log/audit.jsonl")).unwrap();
        let elsewhere = dir.join("elsewhere");
        std::fs::write(&elsewhere, "").unwrap();
        std::os::unix::fs::symlink(&elsewhere, dir.join("log/audit.jsonl")).unwrap();
        let message = SpooledMessage::new("b", DeliveryMode::Queue, "x", "", false);
        let log = AuditLog::open(&dir, false).unwrap();
        assert!(
            log.append(&AuditRecord::of(&message, AuditEvent::Accepted, false))
                .is_err()
        );
        assert_eq!(std::fs::read(&elsewhere).unwrap(), b"");
        let _ = std::fs::remove_dir_all(dir);
    }
}
