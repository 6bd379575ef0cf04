//! The harness-neutral inbox: where every harness's deliveries wait until that
//! harness hands them over (a hook, Claude Code's messaging socket, Codex's daemon).
//!
//! The seam is [`InboxBackend`]: put a message once by its key, find it again wherever
//! it moved, count one sender's messages, list what waits, and hand messages over
//! (claim, answer, mark handed over). Handles are opaque; no path crosses the trait.
//! Two backends live here: [`StateDir`], the durable state folder several processes
//! share on one machine (the default), and [`MemoryInbox`], one process's memory (the
//! in-memory corpus, tests, an embedder that hands over in process). A backend on
//! another engine implements the same trait in its own crate and runs the same checks
//! (the module `suite`, feature `inbox-suite`).
//!
//! Above the backend, one delivery path for every harness ([`delivery`]): the answered
//! keys, the 10-minute repeat rule, the wake check and the put, so a store says only
//! what its harness adds (who the target is, how it wakes, how it hands over at once).
//! And one hand-over for every hook adapter ([`hand_over_waiting`]), which hands
//! nothing over while the session's person holds its inbound ([`InboxBackend::inbound`]).
//! [`await_reply`] takes a reply for a sender that awaits it. [`Audited`] wraps any
//! backend to record each acceptance and hand-over in the audit log (`host-shim log`).

pub mod audit;
pub mod claims;
pub mod delivery;
mod hand_over;
mod memory;
pub mod record_marks;
mod replies;
mod state_dir;
#[cfg(any(test, feature = "inbox-suite"))]
pub mod suite;
pub mod wake;

use crate::contract::latest::{
    Claim, ClaimChange, DeliveryMode, DeliveryState, InboundPolicy, InboxCount, MessageIds,
};
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Duration;

pub use audit::{AuditLog, Audited};
pub use delivery::{AnsweredKeys, Desk, KEYS_KEPT, KEYS_KEPT_FOR, REPEAT_WINDOW, Recipient};
pub use hand_over::{
    COMMAND_HOOK_ANSWER_CHARS, CommandHookInput, HookReport, RecordReader, Takes, Witness,
    answer_nothing, hand_over_as_json, hand_over_waiting, hook_json, joined, within_answer_cap,
    write_hook_answer,
};
pub use memory::MemoryInbox;
pub use replies::{REPLY_POLL, await_reply, inbound_or_accept, send_history, send_history_or_none};
pub use state_dir::{MAX_MESSAGE_BYTES, StateDir, Step, default_dir};
pub use wake::WakeCommand;

/// What [`InboxBackend::find_same_words`] looks for: a message from `sender` to
/// `session` in the words of `body`, accepted at or after `since_ns` (`within` of when
/// it was asked).
pub struct SameWords<'a> {
    pub session: &'a str,
    pub sender: &'a str,
    pub body: &'a str,
    pub within: Duration,
    pub since_ns: u128,
}

impl<'a> SameWords<'a> {
    /// The question for messages accepted within `within` of now.
    pub fn new(session: &'a str, sender: &'a str, body: &'a str, within: Duration) -> Self {
        let since_ns = now_ns().saturating_sub(within.as_nanos());
        SameWords {
            session,
            sender,
            body,
            within,
            since_ns,
        }
    }

    /// Whether `message` (one of the session's) is the one asked for.
    pub fn is(&self, message: &SpooledMessage) -> bool {
        message.accepted_at_ns >= self.since_ns
            && message.sender == self.sender
            && message.same_words(self.body)
    }
}

/// Reads which frames the target's own record shows ([`InboxBackend::settle`]), given
/// the message ids of the offers to settle (a record read from where it stood when
/// they were offered: [`record_marks`]).
pub type ReadShown<'a> = &'a mut dyn FnMut(&[String]) -> Result<Shown>;

/// A hand-over's messages and what gives them to the harness
/// ([`InboxBackend::hand`]).
pub struct Handing<'a> {
    /// The session whose inbox they wait in.
    pub session: &'a str,
    /// The messages picked to give.
    pub picked: Vec<Waiting>,
    /// Gives the claimed messages to the harness (a hook's answer, a socket's write).
    pub answer: &'a mut dyn FnMut(&[SpooledMessage]) -> Result<()>,
    /// How they are marked once given.
    pub handed: Handed,
}

/// How a message given to a harness is marked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Handed {
    /// Handed over.
    Over,
    /// Offered: given to no other hand-over, and not yet handed over, until
    /// [`InboxBackend::settle`] finds it in the target's own record. A message without
    /// a `message_id` (sent by a plugin before 0.4.0) can never be found there: it is
    /// handed over at once.
    Offered,
}

/// The durable inbox, as every harness uses it. Several processes (servers delivering,
/// hooks handing over) may use one backend at once: each method is one step that is
/// whole or not done, and a message is handed over by exactly one successful
/// [`InboxBackend::hand_over`].
pub trait InboxBackend: Send + Sync {
    /// The message with this key for this session, wherever it is (waiting, being
    /// handed over, or handed over); `None` for an empty key.
    fn find(&self, session: &str, key: &str) -> Result<Option<Located>>;

    /// A message from `sender` to `session` with this body
    /// ([`SpooledMessage::same_words`]), accepted within `within` of now, wherever it
    /// is; `None` for an empty sender. A model that retries an interrupted send gets a
    /// new call id, so only the body tells it is the same message.
    fn find_identical(
        &self,
        session: &str,
        sender: &str,
        body: &str,
        within: Duration,
    ) -> Result<Option<Located>> {
        if sender.is_empty() {
            return Ok(None);
        }
        self.find_same_words(&SameWords::new(session, sender, body, within))
    }

    /// The message `ask` asks for, wherever it is (see [`InboxBackend::find_identical`],
    /// which asks it; its sender is never empty).
    fn find_same_words(&self, ask: &SameWords) -> Result<Option<Located>>;

    /// How many of `sender`'s messages to `session` wait and how many were handed
    /// over; both zero for an empty sender.
    fn count_from(&self, session: &str, sender: &str) -> Result<InboxCount>;

    /// Puts a message into its target's inbox, whole, unless a message with its
    /// (non-empty) key is there already, in any state: then nothing changes and that
    /// message is the answer. For a caller that has just looked the key up with
    /// [`InboxBackend::find`]: two writers of one key still land one message.
    fn put_unseen(&self, message: &SpooledMessage) -> Result<Put>;

    /// The messages waiting for `session`, oldest first, and what in its inbox could
    /// not be read. A claim whose claimant is gone is returned first.
    fn waiting(&self, session: &str) -> Result<InboxContents>;

    /// The message waiting for `session` under `handle`, as [`InboxBackend::waiting`]
    /// returns it; `None` when it no longer waits (or never did). A backend that can
    /// look one message up answers without reading the others.
    fn waiting_one(&self, session: &str, handle: &str) -> Result<Option<Waiting>> {
        let contents = self.waiting(session)?;
        Ok((contents.messages.into_iter()).find(|w| w.handle.as_str() == handle))
    }

    /// Hands `picked` over: [`InboxBackend::hand`] with [`Handed::Over`].
    fn hand_over(
        &self,
        session: &str,
        picked: Vec<Waiting>,
        answer: &mut dyn FnMut(&[SpooledMessage]) -> Result<()>,
    ) -> Result<Vec<SpooledMessage>> {
        let handed = Handed::Over;
        self.hand(Handing {
            session,
            picked,
            answer,
            handed,
        })
    }

    /// Offers `picked`: [`InboxBackend::hand`] with [`Handed::Offered`].
    fn offer(
        &self,
        session: &str,
        picked: Vec<Waiting>,
        answer: &mut dyn FnMut(&[SpooledMessage]) -> Result<()>,
    ) -> Result<Vec<SpooledMessage>> {
        let handed = Handed::Offered;
        self.hand(Handing {
            session,
            picked,
            answer,
            handed,
        })
    }

    /// Gives the picked messages to the harness: claims each (one another process
    /// claimed first is left out), calls the answer with the claimed messages, then
    /// marks them as `handing.handed` says. When the answer fails the claims are given
    /// back and its error returned. Returns the messages given (none when nothing could
    /// be claimed; the answer is then not called).
    fn hand(&self, handing: Handing) -> Result<Vec<SpooledMessage>>;

    /// Settles `session`'s offers against the target's own record: an offer whose
    /// message id `shown` names is handed over; one made more than `expire_after` ago
    /// that `shown` does not name waits again, for the next hand-over. A claim whose
    /// claimant is gone (a hook killed mid-hand-over: its answer may or may not have
    /// reached the harness) counts as an offer, made when its claimant was last known
    /// to be alive. `shown` is called at most once, and only when there is an offer or
    /// a dead claim to settle, with their message ids: it reads the record.
    fn settle(&self, session: &str, expire_after: Duration, shown: ReadShown) -> Result<Settled>;

    /// `sender`'s messages accepted at or after `since_ns` (ns since the epoch), in
    /// every session's inbox, waiting or handed over, in any order; none for an empty
    /// sender. What sending caps count (a backend that forgets handed-over messages
    /// counts those it remembers).
    fn sent_since(&self, sender: &str, since_ns: u128) -> Result<Vec<Sent>>;

    /// What the person using `session` lets in from other sessions ([`InboundPolicy::Accept`]
    /// when they never said).
    fn inbound(&self, session: &str) -> Result<InboundPolicy>;

    /// Sets what the person using `session` lets in. Only a person sets it (a CLI
    /// command, a harness's own setting), never a model's tool call.
    fn set_inbound(&self, session: &str, policy: InboundPolicy) -> Result<()>;

    /// Every claim kept, at its revision (contract 0.6.0's `claims.read`). By default
    /// the backend keeps none, and says so: the plugin then tells the model claims
    /// are unavailable, and lets every write through unchecked.
    fn read_claims(&self) -> Result<claims::ClaimsAt> {
        anyhow::bail!("this inbox keeps no claims")
    }

    /// Replaces the claim set with `claims` when it is still at `revision`, atomically
    /// for every process (and machine) sharing the backend; `changes` say what the
    /// write did, for a log. By default the backend keeps none.
    fn write_claims(
        &self,
        _revision: u64,
        _claims: &[Claim],
        _changes: &[ClaimChange],
    ) -> Result<claims::ClaimsWritten> {
        anyhow::bail!("this inbox keeps no claims")
    }

    /// [`InboxBackend::put_unseen`] after looking the key up: a key accepted before
    /// is a repeat.
    fn put(&self, message: &SpooledMessage) -> Result<Put> {
        if let Some(first) = self.find(&message.target, &message.key)? {
            return Ok(Put::Repeat(first.message));
        }
        self.put_unseen(message)
    }
}

/// The message ids a target's own record shows it was given (the transcript, the
/// rollout, the database the harness writes): the witness that settles an offer.
pub type Shown = std::collections::HashSet<String>;

/// How long an offer waits for the target's record before its message is offered
/// again: longer than a harness lets a hook run (Claude Code's and Codex's default
/// hook timeout is 60 s) and records what it answered.
pub const OFFERS_EXPIRE_AFTER: Duration = Duration::from_secs(90);

/// What [`InboxBackend::settle`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Settled {
    /// Offers the record showed: handed over now.
    pub handed_over: Vec<SpooledMessage>,
    /// Offers past their time that the record did not show: waiting again.
    pub waiting_again: Vec<SpooledMessage>,
}

/// Whether `waiting`, offered, is handed over now: `settled` (what a settling just
/// did) names it, or a settling elsewhere did (found by its key, when it has one).
pub fn settled_as_handed(
    inbox: &dyn InboxBackend,
    waiting: &Waiting,
    settled: Result<Settled>,
) -> bool {
    let ours = &waiting.message;
    if settled.is_ok_and(|settled| settled.handed_over.contains(ours)) {
        return true;
    }
    let found = inbox.find(&ours.target, &ours.key).ok().flatten();
    found.is_some_and(|found| found.state == DeliveryState::HandedOver)
}

/// The message ids of the frames among `texts` (each a surface message's text, or a
/// hand-over's joined frames): what a record shows.
pub fn shown_in<'a>(texts: impl IntoIterator<Item = &'a str>) -> Shown {
    use crate::contract::frames::{frame_message_id, handed_over_frames};
    let mut shown = Shown::new();
    for text in texts {
        let frames = handed_over_frames(text).unwrap_or_default();
        shown.extend((frames.into_iter()).filter_map(|f| frame_message_id(f).map(str::to_string)));
    }
    shown
}

/// A write a backend sent but whose outcome it cannot tell: no acknowledgement came
/// before it gave up (a cluster cut off or electing for longer than a step waits), so
/// the message may be stored. A backend marks such an error with [`undecided`]; the
/// delivery path answers it as the refusal `undecided`, never remembered for the key.
/// Any other error of `put_unseen` means nothing was stored.
#[derive(Debug)]
pub struct UndecidedWrite;

impl std::fmt::Display for UndecidedWrite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the inbox did not acknowledge the write")
    }
}

/// `err`, marked as a write whose outcome is unknown ([`UndecidedWrite`]).
pub fn undecided(err: anyhow::Error) -> anyhow::Error {
    err.context(UndecidedWrite)
}

/// Whether `err` is a write whose outcome is unknown ([`undecided`]).
pub fn is_undecided(err: &anyhow::Error) -> bool {
    err.downcast_ref::<UndecidedWrite>().is_some()
}

/// An inbox backend shared by the stores, hooks and watchers of a process.
pub type SharedInbox = Arc<dyn InboxBackend>;

/// One message, as a backend keeps it.
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
    /// The id its frame carries (empty for a plugin built before 0.4.0).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message_id: String,
    /// The id of the message it answers, for a reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_reply_to: Option<String>,
}

/// One message a sender sent, as sending caps count it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sent {
    pub target: String,
    pub accepted_at_ns: u128,
    pub key: String,
}

impl SpooledMessage {
    /// A fresh message, stamped now; the sender is read from the key.
    pub fn new(
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
            message_id: String::new(),
            in_reply_to: None,
        }
    }

    /// Whether `body` says what this message says: the same text once the frames' id
    /// lines are set aside (a retry under a new call id carries a new id).
    pub fn same_words(&self, body: &str) -> bool {
        use crate::contract::frames::without_ids;
        self.body == body || without_ids(&self.body) == without_ids(body)
    }

    /// The message from `sender` (the calling session, when its key names none).
    pub fn from(mut self, sender: &str) -> SpooledMessage {
        if self.sender.is_empty() {
            self.sender = sender.to_string();
        }
        self
    }

    /// The message with the ids its frame carries.
    pub fn with_ids(mut self, ids: &MessageIds) -> SpooledMessage {
        self.message_id = ids.message_id.clone();
        self.in_reply_to = ids.in_reply_to.clone();
        self
    }
}

/// Where a message is in its backend: opaque outside it (a file name, a sequence
/// number, a stream position). A backend makes its own from text and reads it back.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Handle(String);

impl Handle {
    pub fn new(place: impl Into<String>) -> Handle {
        Handle(place.into())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// What a put did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Put {
    /// The message is in the inbox now.
    New(Handle),
    /// A message with this key was accepted before: nothing changed.
    Repeat(SpooledMessage),
}

/// A message found in a backend, and where it is now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Located {
    pub message: SpooledMessage,
    /// Waiting (in the inbox, or claimed by a hand-over in progress) or handed over.
    pub state: DeliveryState,
}

/// A message waiting in a session's inbox.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Waiting {
    pub handle: Handle,
    pub message: SpooledMessage,
}

/// What a session's inbox holds: the messages, oldest first, and what in it is not a
/// message (each named with what is wrong), which is left where it is.
#[derive(Clone, Debug, Default)]
pub struct InboxContents {
    pub messages: Vec<Waiting>,
    pub unreadable: Vec<String>,
}

/// A session id as a name a backend may store under (a folder, a subject), or why it
/// cannot be one. Harnesses' ids are UUIDs or names of that kind; anything with a path
/// separator, a leading dot or other characters is refused.
pub fn checked_id(id: &str) -> Result<&str, String> {
    let plain = !id.is_empty()
        && id.len() <= 200
        && !id.starts_with('.')
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if plain {
        return Ok(id);
    }
    // Named as far as a person reads it: an id of a megabyte is cut, not echoed whole.
    const SHOWN: usize = 80;
    let shown = match id.char_indices().nth(SHOWN) {
        Some((end, _)) => format!("{:?}… ({} bytes)", &id[..end], id.len()),
        None => format!("{id:?}"),
    };
    Err(format!(
        "the session id {shown} is not a plain name (letters, digits, '-', '_', '.'), so it has no inbox folder"
    ))
}

#[cfg(test)]
mod checked_id_tests {
    #[test]
    fn a_long_id_is_named_cut_with_its_size() {
        let id = "x/".repeat(500_000);
        let err = super::checked_id(&id).unwrap_err();
        assert!(err.len() < 300, "{err}");
        assert!(err.contains("… (1000000 bytes)"), "{err}");
        assert_eq!(
            super::checked_id("../x").unwrap_err(),
            "the session id \"../x\" is not a plain name (letters, digits, '-', '_', '.'), so it has no inbox folder"
        );
    }
}

/// The caller a delivery key names: the plugin makes keys `LEN:CALLERCALLID`, the
/// caller's byte length first.
pub fn key_sender(key: &str) -> Option<&str> {
    let (length, rest) = key.split_once(':')?;
    rest.get(..length.parse::<usize>().ok()?)
}

/// Now, in nanoseconds since the Unix epoch (0 on a clock before it): when a message
/// was accepted, and what a backend measures windows and claims from.
pub fn now_ns() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_names_its_sender() {
        assert_eq!(key_sender("5:alicetoolu_1"), Some("alice"));
        assert_eq!(key_sender("0:toolu_1"), Some(""));
        assert_eq!(key_sender("9:alice"), None);
        assert_eq!(key_sender("x:alice"), None);
        assert_eq!(key_sender(""), None);
    }

    #[test]
    fn ids_that_are_not_plain_names_are_refused() {
        for id in ["../etc", "a/b", ".hidden", "", "a b"] {
            assert!(checked_id(id).unwrap_err().contains("is not a plain name"));
        }
        assert_eq!(checked_id("01a2-b_c.d"), Ok("01a2-b_c.d"));
    }
}
