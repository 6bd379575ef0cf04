//! The two host interfaces as plain Rust: the data the host hands over and the traits
//! the tool core calls. The wit-bindgen adapter implements these traits over the real
//! imports; tests and benchmarks implement them over an in-memory corpus.

/// The durable facts of one session (`session-query.session-header`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionHeader {
    pub id: String,
    pub created_at_ms: i64,
    pub live: bool,
    pub parent_id: Option<String>,
    pub origin: String,
    pub cwd: Option<String>,
    pub preset: Option<String>,
    /// What the person using the session lets in from other sessions.
    pub inbound: Inbound,
    /// The session's machine, when the host serves more than one.
    pub machine: Option<String>,
}

/// What the person using a session lets in (`session-query.inbound-policy`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Inbound {
    #[default]
    Accept,
    Hold,
    Refuse,
}

impl Inbound {
    pub fn as_str(self) -> &'static str {
        match self {
            Inbound::Accept => "accept",
            Inbound::Hold => "hold",
            Inbound::Refuse => "refuse",
        }
    }
}

impl SessionHeader {
    /// A subagent has a parent or says so in its origin; only top-level sessions take
    /// messages.
    pub fn is_subagent(&self) -> bool {
        self.parent_id.is_some() || self.origin == "subagent"
    }
}

/// Who authored a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    User,
    Assistant,
    System,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::System => "system",
        }
    }
}

/// One session of a listing's index (`session-query.session-entry`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionEntry {
    /// Bytes of this entry's id in [`SessionIndex::ids`].
    pub id_len: u32,
    pub created_at_ms: i64,
    pub live: bool,
    pub subagent: bool,
}

/// Every session, compactly (`session-query.session-index`): the ids as one text, and
/// one entry per session.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SessionIndex {
    pub ids: String,
    pub entries: Vec<SessionEntry>,
}

/// The host broke the contract in a way the plugin cannot answer around; the text
/// names the function and the fault, for the harness author.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostError(pub String);

/// Checks that the byte lengths tile `text` exactly, each piece whole UTF-8, or says
/// where they do not.
fn check_lengths(
    text: &str,
    lengths: impl Iterator<Item = u32>,
    what: &str,
) -> Result<(), HostError> {
    let mut at = 0usize;
    for (index, length) in lengths.enumerate() {
        let end = at.saturating_add(length as usize);
        if end > text.len() || !text.is_char_boundary(end) {
            return Err(HostError(format!(
                "{what}: entry {index} says {length} bytes, which {}",
                if end > text.len() {
                    format!("runs past the end of the text ({} bytes)", text.len())
                } else {
                    "ends inside a character".to_string()
                }
            )));
        }
        at = end;
    }
    if at != text.len() {
        return Err(HostError(format!(
            "{what}: the entries' lengths add up to {at} bytes but the text has {} bytes",
            text.len()
        )));
    }
    Ok(())
}

/// `text` cut into consecutive pieces of the given byte lengths (checked first).
fn pieces<'a, L: ExactSizeIterator<Item = u32> + Clone>(
    text: &'a str,
    lengths: L,
    what: &str,
) -> Result<impl ExactSizeIterator<Item = &'a str> + Clone + use<'a, L>, HostError> {
    check_lengths(text, lengths.clone(), what)?;
    let mut at = 0usize;
    Ok(lengths.map(move |length| {
        let start = at;
        at += length as usize;
        &text[start..at]
    }))
}

impl SessionIndex {
    /// Each entry's id, in entry order, once the lengths are checked against the text.
    pub fn ids(&self) -> Result<impl ExactSizeIterator<Item = &str> + Clone, HostError> {
        pieces(
            &self.ids,
            self.entries.iter().map(|entry| entry.id_len),
            "session-query.list-sessions returned a malformed index (ids)",
        )
    }
}

/// One message of a surface's index (`session-query.message-entry`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MessageEntry {
    pub seq: u64,
    pub role: Role,
    pub replaced: bool,
    /// The host knows the harness put it there.
    pub injected: bool,
    pub source_lead_len: u32,
    pub text_lead_len: u32,
    /// Chars of the whole text; 0 when there is no text part.
    pub text_chars: u32,
}

/// A surface, compactly (`session-query.surface-index`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SurfaceIndex {
    pub messages: Vec<MessageEntry>,
    pub source_leads: String,
    pub text_leads: String,
    pub captured_through_seq: u64,
}

/// One whole message (`session-query.message-content`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MessageContent {
    pub source: String,
    /// The text parts joined by a line feed.
    pub text: String,
    /// As [`MessageEntry::injected`].
    pub injected: bool,
}

/// How a tool call ended (`session-query.action-status`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ActionStatus {
    Ok,
    Error,
    Running,
}

impl ActionStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ActionStatus::Ok => "ok",
            ActionStatus::Error => "error",
            ActionStatus::Running => "running",
        }
    }
}

/// One tool call of a message (`session-query.tool-action`); never its output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolAction {
    pub name: String,
    /// The input as the log records it, cut by the host to 1024 bytes.
    pub input: String,
    pub status: ActionStatus,
}

/// The caller's accepted messages within a window (`session-query.send-history`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SendCounts {
    pub now_ms: i64,
    pub to_target: u32,
    pub to_any: u32,
    /// Newest first.
    pub to_target_times: Vec<i64>,
    /// Newest first.
    pub to_any_times: Vec<i64>,
    /// The delivery key was accepted already: a retry, for `deliver` to answer.
    pub key_accepted: bool,
}

/// One sender's messages to one session (`session-query.inbox-count`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InboxCount {
    pub waiting: u32,
    pub handed_over: u32,
}

impl SurfaceIndex {
    /// Each message's source lead and text lead, in message order.
    pub fn split_leads(&self) -> Result<(Vec<&str>, Vec<&str>), HostError> {
        let what = "session-query.get-surface returned a malformed index";
        let sources = pieces(
            &self.source_leads,
            self.messages.iter().map(|m| m.source_lead_len),
            &format!("{what} (source-leads)"),
        )?;
        let texts = pieces(
            &self.text_leads,
            self.messages.iter().map(|m| m.text_lead_len),
            &format!("{what} (text-leads)"),
        )?;
        Ok((sources.collect(), texts.collect()))
    }
}

/// How a delivered message joins the target session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeliveryMode {
    Queue,
    Steer,
}

impl DeliveryMode {
    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryMode::Queue => "queue",
            DeliveryMode::Steer => "steer",
        }
    }

    pub fn parse(text: &str) -> Option<DeliveryMode> {
        match text {
            "queue" => Some(DeliveryMode::Queue),
            "steer" => Some(DeliveryMode::Steer),
            _ => None,
        }
    }
}

/// Where an accepted message is now (`inbox.delivery-state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeliveryState {
    /// In the target's inbox, handed over when its next turn or step begins.
    Waiting,
    /// In the target's model input or running turn already.
    HandedOver,
    /// Kept in the inbox while the person using the target holds inbound.
    Held,
    /// In the inbox; the target was cold and the host started its wake without seeing
    /// it run yet.
    WakeStarted,
}

/// The ids a frame carries (`inbox.message-ids`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MessageIds {
    pub message_id: String,
    pub in_reply_to: Option<String>,
}

/// The inbox accepted a message (now or, for a repeated key, before).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Delivered {
    /// The target was cold and the host woke it, and saw it running.
    pub woke: bool,
    /// The key was delivered before; nothing new was delivered.
    pub repeat: bool,
    pub state: DeliveryState,
    /// The id of the message in the inbox (for a repeat, the first delivery's); empty
    /// when the host does not know it.
    pub message_id: String,
}

/// Why a message was not accepted: nothing was delivered, except after `Undecided`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeliveryRefusal {
    NotFound,
    WouldNeedWake,
    Rejected(String),
    RefusedByTarget,
    /// The host could not tell whether the inbox stored it (its write went
    /// unacknowledged): it may still arrive, once. The host's reason.
    Undecided(String),
}

/// `session-query`: read-only, never wakes a session.
pub trait SessionQuery {
    /// Every session, as one index.
    fn list_sessions(&mut self) -> SessionIndex;
    /// One header, or `None` when the id is unknown.
    fn get_session(&mut self, id: &str) -> Option<SessionHeader>;
    /// Headers for `ids` in one batch. A well-behaved host answers one entry per id in
    /// order; the core tolerates any length.
    fn get_sessions(&mut self, ids: &[String]) -> Vec<Option<SessionHeader>>;
    /// Titles for `ids` in one batch, answered like [`SessionQuery::get_sessions`].
    fn title_snapshots(&mut self, ids: &[String]) -> Vec<Option<String>>;
    /// One session's surface as an index with leads of at most `lead_chars` chars, or
    /// `None` when the id is unknown.
    fn get_surface(&mut self, id: &str, lead_chars: u32) -> Option<SurfaceIndex>;
    /// Whole messages of one session by seq, answered like
    /// [`SessionQuery::get_sessions`].
    fn get_messages(&mut self, id: &str, seqs: &[u64]) -> Vec<Option<MessageContent>>;
    /// How many of `sender`'s messages to `target` wait and were handed over.
    fn inbox_status(&mut self, target: &str, sender: &str) -> InboxCount;
    /// The seqs of the surface's messages that made tool calls.
    fn action_seqs(&mut self, id: &str) -> Vec<u64>;
    /// The tool calls of whole messages by seq, answered like
    /// [`SessionQuery::get_sessions`] (empty for a message without any).
    fn get_actions(&mut self, id: &str, seqs: &[u64]) -> Vec<Vec<ToolAction>>;
    /// `sender`'s accepted messages within the last `window_minutes`, with the times
    /// of the newest `limit` of each count, and whether `key` was accepted already.
    fn send_history(
        &mut self,
        sender: &str,
        target: &str,
        window_minutes: u32,
        limit: u32,
        key: &str,
    ) -> SendCounts;
}

/// `inbox`: delivery into a top-level session.
pub trait Inbox {
    /// Deliver exactly once or not at all; with `may_wake` false, never wake a cold
    /// target; at most once per non-empty `key`.
    fn deliver(
        &mut self,
        target: &str,
        body: &str,
        mode: DeliveryMode,
        may_wake: bool,
        key: &str,
        ids: &MessageIds,
    ) -> Result<Delivered, DeliveryRefusal>;
}

/// What a claim lets others do (`claims.claim-mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClaimMode {
    Exclusive,
    Shared,
}

impl ClaimMode {
    pub fn as_str(self) -> &'static str {
        match self {
            ClaimMode::Exclusive => "exclusive",
            ClaimMode::Shared => "shared",
        }
    }
}

/// One claim as the plugin wrote it (`claims.claim`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Claim {
    /// `c-` and 12 lowercase hex digits.
    pub id: String,
    pub holder: String,
    /// Absolute glob patterns, each also covering what lies below it.
    pub paths: Vec<String>,
    pub mode: ClaimMode,
    pub reason: String,
    pub made_at_ms: i64,
    pub ends_at_ms: i64,
    /// When the plugin last saw the holder live.
    pub seen_live_ms: i64,
}

/// Every claim the host keeps, at one revision, with the host's clock
/// (`claims.claim-set`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClaimSet {
    pub claims: Vec<Claim>,
    pub revision: u64,
    pub now_ms: i64,
}

/// What a write changed, for the host's audit log (`claims.change-kind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChangeKind {
    Made,
    Released,
    Lapsed,
}

/// One change of a write, with the claim as it was (released, lapsed) or is (made).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClaimChange {
    pub kind: ChangeKind,
    pub claim: Claim,
}

/// Why a claim set was not written (`claims.write-failure`): nothing was.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WriteFailure {
    /// The set changed since the revision read.
    Stale,
    /// The host could not store it; its reason.
    Unavailable(String),
}

/// `claims`: the host keeps the set whole and swaps it only at the revision read.
pub trait Claims {
    /// Every claim, or why the host could not read them.
    fn read_claims(&mut self) -> Result<ClaimSet, String>;
    /// Replaces the set with `claims` when it is still at `revision`; the new revision.
    fn write_claims(
        &mut self,
        revision: u64,
        claims: &[Claim],
        changes: &[ClaimChange],
    ) -> Result<u64, WriteFailure>;
}
