//! The in-memory corpus: sessions, titles and model surfaces read from JSON, and
//! [`CorpusHost`], the harness side of both interfaces over it.
//!
//! The in-memory controller (this host, the guest's `testing::FakeHost` and the jco
//! host `tests/jco/host.js` all follow it, and the case files pin it):
//!
//! - Lookups answer the first session of a repeated id; a listing shows every session,
//!   repeats included.
//! - `deliver` takes the one delivery path every harness takes ([`crate::inbox::delivery`],
//!   over an in-memory inbox) and answers, in this order: `not-found` for an unknown
//!   id; the session's scripted `refuse_delivery` (`not-found`, `would-need-wake`, or
//!   `undecided` with the reason "the inbox did not acknowledge the write (scripted)");
//!   `rejected` with the session's `reject` reason; `rejected` when the session's last
//!   message already has the largest seq; a repeat (below); `would-need-wake` for a
//!   cold session when waking is not allowed. Otherwise it accepts: `woke` is true when the session was cold, the
//!   session is live from then on, and the message is in the state the session's
//!   `delivery_state` scripts: `handed-over` (the default) makes the body its newest
//!   message (role `user`, source `user`, one text part, seq one past both its highest
//!   seq and its captured-through seq, which moves to it); `waiting` and `held` leave
//!   the surface as it was; `wake-started` scripts a wake command: a cold session's
//!   message is `wake-started` (`woke` false), a live one's `waiting`, the surface as it
//!   was.
//! - `inbox-status` answers the session's scripted `inbox` counts for that sender
//!   (zero when none are scripted), and both zero when the sender or the target is no
//!   session of the corpus, as the WIT says.
//! - A refused delivery changes nothing.
//! - At most once per key: a delivery whose non-empty key this host has answered
//!   before gets that answer again (an acceptance with `repeat` set) and changes
//!   nothing; so does the same body from the same sender to the same session within
//!   ten minutes under another key (SPEC, "Repeats a host should catch"). The memory
//!   of keys and messages is the host value's, so a harness that threads one
//!   `CorpusHost` through its calls (as [`crate::CallReport::harness`] hands it back,
//!   or [`crate::Shared`] shares it) keeps it across them.

use crate::contract::latest::{
    ActionStatus, Delivered, DeliveryRefusal, DeliveryState, InboundPolicy, InboxCount,
    MessageContent, Role, SendCounts, SessionHeader, SessionIndex, SurfaceIndex, ToolAction,
};
use crate::harness::{HistoryAsk, SessionQuery};
pub use crate::harnesses::surface::Message;
use crate::inbox::delivery::{Arriving, Woken};
use crate::inbox::{Desk, MemoryInbox, Recipient, Waiting};
use anyhow::{Context, Result, bail};
use serde::{Deserialize, Deserializer};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

/// A corpus file: `{"caller": ID, "sessions": [...]}`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct CorpusFile {
    #[serde(default)]
    caller: Option<String>,
    #[serde(default)]
    sessions: Vec<SessionFile>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SessionFile {
    id: String,
    #[serde(deserialize_with = "rfc3339_ms")]
    created_at: i64,
    #[serde(default)]
    live: bool,
    #[serde(default)]
    parent: Option<String>,
    #[serde(default)]
    origin: Option<String>,
    #[serde(default)]
    cwd: Option<String>,
    #[serde(default)]
    preset: Option<String>,
    /// What the session's person lets in: "accept" (the default), "hold" or "refuse".
    #[serde(default)]
    inbound: Option<InboundFile>,
    #[serde(default)]
    machine: Option<String>,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    captured_through_seq: Option<u64>,
    #[serde(default)]
    reject: Option<String>,
    #[serde(default)]
    refuse_delivery: Option<ScriptedRefusal>,
    #[serde(default)]
    delivery_state: Option<DeliveryState>,
    #[serde(default)]
    inbox: Vec<InboxFile>,
    #[serde(default)]
    messages: Vec<MessageFile>,
}

/// One sender's messages in a session's inbox, as `inbox-status` answers them.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct InboxFile {
    from: String,
    #[serde(default)]
    waiting: u32,
    #[serde(default)]
    handed_over: u32,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "lowercase")]
enum InboundFile {
    Accept,
    Hold,
    Refuse,
}

/// A tool call of a message: `{"name": …, "input": any JSON, "status": "ok" | "error" |
/// "running"}` (status defaults to ok); only its name, input and status cross.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ToolCallFile {
    name: String,
    #[serde(default)]
    input: serde_json::Value,
    #[serde(default)]
    status: Option<StatusFile>,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "lowercase")]
enum StatusFile {
    Ok,
    Error,
    Running,
}

/// A controller answer a corpus can script, for the refusals a header cannot predict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ScriptedRefusal {
    /// The controller lost the session between its header and the delivery.
    NotFound,
    /// The controller will not wake this session, even where waking is allowed.
    WouldNeedWake,
    /// The inbox cannot tell whether it stored the message (a cluster's write that
    /// went unacknowledged): `undecided`, with the reason "the inbox did not
    /// acknowledge the write (scripted)"; nothing is stored.
    Undecided,
}

/// The reason a scripted `undecided` gives.
const SCRIPTED_UNDECIDED: &str = "the inbox did not acknowledge the write (scripted)";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct MessageFile {
    seq: u64,
    role: RoleFile,
    #[serde(default)]
    source: Option<String>,
    #[serde(default)]
    replaced: bool,
    #[serde(default)]
    injected: bool,
    #[serde(default)]
    parts: Vec<PartFile>,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "lowercase")]
enum RoleFile {
    User,
    Assistant,
    System,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
enum PartFile {
    Text(String),
    // Any JSON; only the kind is kept (the plugin never sees the content).
    Reasoning(serde::de::IgnoredAny),
    /// A call as `ToolCallFile`, or any other JSON: a call named by it, its input
    /// unrecorded.
    ToolCall(serde_json::Value),
    ToolResult(serde::de::IgnoredAny),
}

fn rfc3339_ms<'de, D: Deserializer<'de>>(deserializer: D) -> Result<i64, D::Error> {
    let text = String::deserialize(deserializer)?;
    chrono::DateTime::parse_from_rfc3339(&text)
        .map(|time| time.timestamp_millis())
        .map_err(|err| {
            serde::de::Error::custom(format!(
                "expected an RFC 3339 time such as \"2026-01-31T12:00:00Z\", got {text:?} ({err})"
            ))
        })
}

/// serde accepts a struct written as an array of its fields; the corpus format is the
/// object form only, so every place that holds a record is checked to be an object.
fn check_object_forms(value: &serde_json::Value) -> Result<(), String> {
    fn object<'a>(
        value: &'a serde_json::Value,
        path: &str,
    ) -> Result<&'a serde_json::Map<String, serde_json::Value>, String> {
        value.as_object().ok_or_else(|| {
            format!(
                "at {path}: expected an object with named fields, got {}",
                match value {
                    serde_json::Value::Array(_) => "an array",
                    serde_json::Value::String(_) => "a string",
                    serde_json::Value::Number(_) => "a number",
                    serde_json::Value::Bool(_) => "a boolean",
                    serde_json::Value::Null => "null",
                    serde_json::Value::Object(_) => "an object",
                }
            )
        })
    }
    fn items(
        value: Option<&serde_json::Value>,
    ) -> impl Iterator<Item = (usize, &serde_json::Value)> {
        value
            .and_then(serde_json::Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
    }
    let file = object(value, "the top level")?;
    for (i, session) in items(file.get("sessions")) {
        let session = object(session, &format!("sessions[{i}]"))?;
        for (j, entry) in items(session.get("inbox")) {
            object(entry, &format!("sessions[{i}].inbox[{j}]"))?;
        }
        for (j, message) in items(session.get("messages")) {
            let message = object(message, &format!("sessions[{i}].messages[{j}]"))?;
            for (k, part) in items(message.get("parts")) {
                object(part, &format!("sessions[{i}].messages[{j}].parts[{k}]"))?;
            }
        }
    }
    Ok(())
}

/// One session as the host knows it.
#[derive(Clone, Debug)]
pub struct Session {
    pub header: SessionHeader,
    pub title: Option<String>,
    /// The current model surface, in the host's order.
    pub messages: Vec<Message>,
    pub captured_through_seq: u64,
    /// The controller refuses deliveries to this session with this reason.
    pub reject: Option<String>,
    /// The controller answers every delivery to this session with this refusal.
    pub refuse_delivery: Option<ScriptedRefusal>,
    /// Where an accepted delivery is: handed over (on the surface) or waiting.
    pub delivery_state: DeliveryState,
    /// What `inbox-status` answers, by sender.
    pub inbox: Vec<(String, InboxCount)>,
}

impl Session {
    /// A top-level cold session with nothing else, for building corpora in code.
    pub fn new(id: &str, created_at_ms: i64) -> Session {
        Session {
            header: SessionHeader::top_level(id, created_at_ms),
            title: None,
            messages: Vec::new(),
            captured_through_seq: 0,
            reject: None,
            refuse_delivery: None,
            delivery_state: DeliveryState::HandedOver,
            inbox: Vec::new(),
        }
    }

    /// The seq a delivered message takes: one past both the highest seq and the
    /// captured-through seq; `None` when that is past `u64::MAX` (the session is full).
    fn next_seq(&self) -> Option<u64> {
        let highest = self.messages.iter().map(|m| m.seq).max().unwrap_or(0);
        highest.max(self.captured_through_seq).checked_add(1)
    }

    /// Accepts a delivery the way the controller does (see the module's opening);
    /// `seq` is [`Session::next_seq`].
    fn accept(&mut self, body: &str, seq: u64) {
        self.header.live = true;
        if self.delivery_state != DeliveryState::HandedOver {
            return;
        }
        self.messages.push(Message::new(
            seq,
            Role::User,
            "user",
            false,
            Some(body.to_string()),
        ));
        self.captured_through_seq = seq;
    }

    /// The surface as an index, each lead at most `lead_chars` chars.
    pub fn surface_index(&self, lead_chars: u32) -> SurfaceIndex {
        crate::harnesses::surface::index_of(&self.messages, self.captured_through_seq, lead_chars)
    }

    /// The message with this seq, whole.
    pub fn message(&self, seq: u64) -> Option<MessageContent> {
        crate::harnesses::surface::message_of(&self.messages, seq)
    }
}

/// A corpus's tool call as the contract gives it.
fn tool_action(call: serde_json::Value) -> ToolAction {
    let call = match call {
        serde_json::Value::String(text) => {
            crate::json::from_str(&text).unwrap_or(serde_json::Value::String(text))
        }
        other => other,
    };
    match serde_json::from_value::<ToolCallFile>(call.clone()) {
        Ok(file) => ToolAction {
            name: file.name,
            input: match file.input {
                serde_json::Value::String(text) => text,
                serde_json::Value::Null => String::new(),
                other => other.to_string(),
            },
            status: match file.status {
                None | Some(StatusFile::Ok) => ActionStatus::Ok,
                Some(StatusFile::Error) => ActionStatus::Error,
                Some(StatusFile::Running) => ActionStatus::Running,
            },
        },
        Err(_) => ToolAction {
            name: match call {
                serde_json::Value::String(name) => name,
                other => other.to_string(),
            },
            input: String::new(),
            status: ActionStatus::Ok,
        },
    }
}

impl From<SessionFile> for Session {
    fn from(file: SessionFile) -> Session {
        let messages: Vec<Message> = file
            .messages
            .into_iter()
            .map(|message| {
                let (role, name) = match message.role {
                    RoleFile::User => (Role::User, "user"),
                    RoleFile::Assistant => (Role::Assistant, "assistant"),
                    RoleFile::System => (Role::System, "system"),
                };
                // Only the text parts cross as text, joined (see the WIT); a call as
                // its name, input and status.
                let mut text: Option<String> = None;
                let mut actions = Vec::new();
                for part in message.parts {
                    match part {
                        PartFile::Text(part) => match &mut text {
                            Some(joined) => {
                                joined.push('\n');
                                joined.push_str(&part);
                            }
                            None => text = Some(part),
                        },
                        PartFile::ToolCall(call) => actions.push(tool_action(call)),
                        PartFile::Reasoning(_) | PartFile::ToolResult(_) => {}
                    }
                }
                Message::new(
                    message.seq,
                    role,
                    message.source.as_deref().unwrap_or(name),
                    message.replaced,
                    text,
                )
                .injected(message.injected)
                .with_actions(actions)
            })
            .collect();
        let last_seq = messages.iter().map(|m| m.seq).max().unwrap_or(0);
        Session {
            header: SessionHeader {
                id: file.id,
                created_at_ms: file.created_at,
                live: file.live,
                parent_id: file.parent,
                origin: file.origin.unwrap_or_else(|| "user".to_string()),
                cwd: file.cwd,
                preset: file.preset,
                inbound: match file.inbound {
                    None | Some(InboundFile::Accept) => InboundPolicy::Accept,
                    Some(InboundFile::Hold) => InboundPolicy::Hold,
                    Some(InboundFile::Refuse) => InboundPolicy::Refuse,
                },
                machine: file.machine,
            },
            title: file.title,
            messages,
            captured_through_seq: file.captured_through_seq.unwrap_or(last_seq),
            reject: file.reject,
            refuse_delivery: file.refuse_delivery,
            delivery_state: file.delivery_state.unwrap_or(DeliveryState::HandedOver),
            inbox: (file.inbox.into_iter())
                .map(|i| {
                    let count = InboxCount {
                        waiting: i.waiting,
                        handed_over: i.handed_over,
                    };
                    (i.from, count)
                })
                .collect(),
        }
    }
}

/// Every session of a harness, indexed by id (the first of repeated ids wins a lookup;
/// a listing shows what the host holds, repeats included).
#[derive(Clone, Debug, Default)]
pub struct Corpus {
    caller: Option<String>,
    sessions: Vec<Session>,
    index: HashMap<String, usize>,
    /// The sessions whose person holds or refuses inbound, found once: a host made
    /// over the corpus tells its inbox of them without walking every session.
    not_accepting: Vec<usize>,
}

impl Corpus {
    pub fn new(caller: Option<String>, sessions: Vec<Session>) -> Corpus {
        let mut index = HashMap::with_capacity(sessions.len());
        for (position, session) in sessions.iter().enumerate() {
            index.entry(session.header.id.clone()).or_insert(position);
        }
        let not_accepting = (sessions.iter().enumerate())
            .filter(|(_, s)| s.header.inbound != InboundPolicy::Accept)
            .map(|(at, _)| at)
            .collect();
        Corpus {
            caller,
            sessions,
            index,
            not_accepting,
        }
    }

    /// Parses corpus JSON; `origin` names the source in errors (a file path, say).
    /// An error names the field's path and what was expected. A leading UTF-8 byte
    /// order mark is accepted.
    pub fn from_json(text: &str, origin: &str) -> Result<Corpus> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let value: serde_json::Value =
            crate::json::from_str(text).map_err(|err| anyhow::anyhow!("{origin}: {err}"))?;
        check_object_forms(&value).map_err(|err| anyhow::anyhow!("{origin}: {err}"))?;
        let file: CorpusFile = serde_path_to_error::deserialize(value).map_err(|err| {
            let path = err.path().to_string();
            anyhow::anyhow!("{origin}: at {path}: {}", err.into_inner())
        })?;
        Ok(Corpus::new(
            file.caller,
            file.sessions.into_iter().map(Session::from).collect(),
        ))
    }

    /// Reads a corpus file.
    pub fn from_file(path: &Path) -> Result<Corpus> {
        let bytes = std::fs::read(path)
            .with_context(|| format!("cannot read corpus file {}", path.display()))?;
        let Ok(text) = String::from_utf8(bytes) else {
            bail!("{}: the corpus is not UTF-8 text", path.display());
        };
        Corpus::from_json(&text, &path.display().to_string())
    }

    /// The corpus the demo and the CLI use when no file is given.
    pub fn demo() -> Corpus {
        Corpus::from_json(DEMO_CORPUS, "the embedded demo corpus")
            .expect("the embedded demo corpus is valid")
    }

    /// The session the corpus file names as the caller, if any.
    pub fn caller(&self) -> Option<&str> {
        self.caller.as_deref()
    }

    pub fn sessions(&self) -> &[Session] {
        &self.sessions
    }

    pub fn session(&self, id: &str) -> Option<&Session> {
        self.index.get(id).map(|&position| &self.sessions[position])
    }
}

/// The embedded demo corpus (`host-shim/demo/corpus.json`).
pub const DEMO_CORPUS: &str = include_str!("../../demo/corpus.json");

/// The harness side of both interfaces over a corpus. The corpus is shared and never
/// changed; a delivery changes this host's own copy of the target session only, so
/// other holders of the same corpus never see it.
pub struct CorpusHost {
    corpus: Arc<Corpus>,
    /// Sessions changed by deliveries, by position in the corpus.
    changed: HashMap<usize, Session>,
    /// The delivery path's keys and this host's own in-memory inbox.
    desk: Desk,
}

impl Default for CorpusHost {
    fn default() -> CorpusHost {
        CorpusHost::new(Arc::new(Corpus::new(None, Vec::new())))
    }
}

impl std::fmt::Debug for CorpusHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CorpusHost")
            .field("sessions", &self.corpus.sessions.len())
            .field("changed", &self.changed.len())
            .finish_non_exhaustive()
    }
}

impl CorpusHost {
    pub fn new(corpus: Arc<Corpus>) -> CorpusHost {
        CorpusHost::with_inbox(corpus, Arc::new(MemoryInbox::new()))
    }

    /// The corpus over `inbox` (one other hosts share, e.g. a cluster's) instead of a
    /// memory inbox of its own.
    pub fn with_inbox(corpus: Arc<Corpus>, inbox: crate::inbox::SharedInbox) -> CorpusHost {
        // What each session's person lets in, as the corpus says, known to the inbox
        // the delivery path asks.
        for &at in &corpus.not_accepting {
            let header = &corpus.sessions[at].header;
            let _ = inbox.set_inbound(&header.id, header.inbound);
        }
        CorpusHost {
            corpus,
            changed: HashMap::new(),
            desk: Desk::new(inbox),
        }
    }

    fn at(&self, position: usize) -> &Session {
        self.changed
            .get(&position)
            .unwrap_or(&self.corpus.sessions[position])
    }

    /// This host's own inbox: what its deliveries put, by session.
    pub fn inbox(&self) -> &crate::inbox::SharedInbox {
        self.desk.inbox()
    }

    /// A session as this host holds it now (deliveries applied).
    pub fn session(&self, id: &str) -> Option<&Session> {
        self.corpus.index.get(id).map(|&position| self.at(position))
    }
}

impl SessionQuery for CorpusHost {
    fn begin_call(&mut self, caller: &str) {
        self.desk.set_caller(caller);
    }

    fn end_call(&mut self) {
        self.desk.end_call();
    }

    fn list_sessions(&mut self) -> SessionIndex {
        SessionIndex::of((0..self.corpus.sessions.len()).map(|position| &self.at(position).header))
    }

    fn get_session(&mut self, id: &str) -> Option<SessionHeader> {
        self.session(id).map(|s| s.header.clone())
    }

    fn get_sessions(&mut self, ids: &[String]) -> Vec<Option<SessionHeader>> {
        ids.iter().map(|id| self.get_session(id)).collect()
    }

    fn title_snapshots(&mut self, ids: &[String]) -> Vec<Option<String>> {
        ids.iter()
            .map(|id| self.session(id).and_then(|s| s.title.clone()))
            .collect()
    }

    fn get_surface(&mut self, id: &str, lead_chars: u32) -> Option<SurfaceIndex> {
        self.session(id).map(|s| s.surface_index(lead_chars))
    }

    fn get_messages(&mut self, id: &str, seqs: &[u64]) -> Vec<Option<MessageContent>> {
        let session = self.session(id);
        seqs.iter()
            .map(|&seq| session.and_then(|s| s.message(seq)))
            .collect()
    }

    fn inbox_status(&mut self, target: &str, sender: &str) -> InboxCount {
        // Both zero when either session is unknown (the WIT).
        if self.session(sender).is_none() {
            return InboxCount::NONE;
        }
        (self.session(target).into_iter())
            .flat_map(|s| &s.inbox)
            .find(|(from, _)| from == sender)
            .map_or(InboxCount::NONE, |(_, count)| *count)
    }

    fn action_seqs(&mut self, id: &str) -> Vec<u64> {
        (self.session(id).into_iter())
            .flat_map(|s| s.messages.iter())
            .filter(|m| !m.actions.is_empty())
            .map(|m| m.seq)
            .collect()
    }

    fn get_actions(&mut self, id: &str, seqs: &[u64]) -> Vec<Vec<ToolAction>> {
        let session = self.session(id);
        seqs.iter()
            .map(|&seq| {
                (session.into_iter())
                    .flat_map(|s| s.messages.iter())
                    .find(|m| m.seq == seq)
                    .map(|m| m.actions.clone())
                    .unwrap_or_default()
            })
            .collect()
    }

    /// Counted from this host's own inbox: the deliveries it took.
    fn send_history(&mut self, ask: &HistoryAsk) -> SendCounts {
        crate::inbox::send_history_or_none(&**self.desk.inbox(), ask)
    }
}

impl CorpusHost {
    /// How many delivery keys this host remembers now (at most
    /// [`crate::inbox::KEYS_KEPT`]).
    pub fn answered_keys(&self) -> usize {
        self.desk.answered_keys()
    }
}

impl crate::harnesses::Store for CorpusHost {
    fn harness(&self) -> &'static str {
        "corpus"
    }
}

/// The controller's part of the delivery path (see the module's opening).
impl Recipient for CorpusHost {
    type Plan = ();

    fn desk(&mut self) -> &mut Desk {
        &mut self.desk
    }

    /// None: nothing but this host's own calls delivers into its inbox, so no reply
    /// can come while a call waits (a test host that plays both sides lends
    /// [`CorpusHost::inbox`] instead).
    fn inbox_for_replies(&mut self) -> Option<crate::inbox::SharedInbox> {
        None
    }

    fn resolve(&mut self, target: &str) -> Result<bool, DeliveryRefusal> {
        let Some(&position) = self.corpus.index.get(target) else {
            return Err(DeliveryRefusal::NotFound);
        };
        let session = self.at(position);
        match session.refuse_delivery {
            Some(ScriptedRefusal::NotFound) => return Err(DeliveryRefusal::NotFound),
            Some(ScriptedRefusal::WouldNeedWake) => return Err(DeliveryRefusal::WouldNeedWake),
            Some(ScriptedRefusal::Undecided) => {
                return Err(DeliveryRefusal::Undecided(SCRIPTED_UNDECIDED.to_string()));
            }
            None => {}
        }
        if let Some(reason) = &session.reject {
            return Err(DeliveryRefusal::Rejected(reason.clone()));
        }
        if session.next_seq().is_none() {
            return Err(DeliveryRefusal::Rejected(
                "the session is full: its last message already has the largest seq".to_string(),
            ));
        }
        Ok(session.header.live)
    }

    fn wake(&mut self, arriving: &Arriving) -> Woken<()> {
        Woken {
            woke: !arriving.live,
            plan: (),
        }
    }

    fn accepted(&mut self, waiting: &Waiting, (): ()) -> Delivered {
        let target = &waiting.message.target;
        let position = self.corpus.index[target.as_str()];
        let corpus = &self.corpus;
        let session = (self.changed)
            .entry(position)
            .or_insert_with(|| corpus.sessions[position].clone());
        let state = match session.delivery_state {
            // Only a cold session is woken.
            DeliveryState::WakeStarted if !waiting.message.woke => DeliveryState::Waiting,
            state => state,
        };
        if let Some(seq) = session.next_seq() {
            session.accept(&waiting.message.body, seq);
        }
        if state == DeliveryState::HandedOver {
            // On the surface now: the inbox says so to a repeat.
            let inbox = self.desk.inbox();
            let _ = inbox.hand_over(target, vec![waiting.clone()], &mut |_| Ok(()));
        }
        Delivered {
            woke: waiting.message.woke && state != DeliveryState::WakeStarted,
            repeat: false,
            state,
            message_id: waiting.message.message_id.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::latest::DeliveryMode;
    use crate::harness::Inbox;
    use crate::inbox::delivery::DeliveryRequest;

    #[test]
    fn the_harness_s_word_on_a_target_comes_before_its_person_s() {
        // Full at the largest seq, and its person refusing: refused as full (the
        // harness resolves the target before the person's say is read).
        let mut full = Session::new("full", 1);
        full.header.live = true;
        full.captured_through_seq = u64::MAX;
        full.header.inbound = InboundPolicy::Refuse;
        let mut open = Session::new("open", 2);
        open.header.live = true;
        open.header.inbound = InboundPolicy::Refuse;
        let mut host = CorpusHost::new(Arc::new(Corpus::new(None, vec![full, open])));
        let said = host.deliver(&DeliveryRequest::new("full", "hi", DeliveryMode::Queue));
        assert!(
            matches!(&said, Err(DeliveryRefusal::Rejected(why)) if why.contains("the session is full")),
            "{said:?}"
        );
        // Not full: the person's refusal.
        assert_eq!(
            host.deliver(&DeliveryRequest::new("open", "hi", DeliveryMode::Queue)),
            Err(DeliveryRefusal::RefusedByTarget)
        );
    }

    #[test]
    fn a_scripted_wake_command_is_told_as_started_and_its_repeat_still_waits() {
        let corpus = Corpus::from_json(
            r#"{"sessions":[{"id":"cold","created_at":"2026-01-01T00:00:01Z",
                "delivery_state":"wake-started"}]}"#,
            "test",
        )
        .unwrap();
        let mut host = CorpusHost::new(Arc::new(corpus));
        let send = |host: &mut CorpusHost, key, body| {
            let request = DeliveryRequest::new("cold", body, DeliveryMode::Queue);
            let delivered = host.deliver(&request.may_wake(true).key(key)).unwrap();
            (delivered.woke, delivered.repeat, delivered.state)
        };
        let started = (false, false, DeliveryState::WakeStarted);
        assert_eq!(send(&mut host, "5:alicek1", "hello"), started);
        assert_eq!(host.session("cold").unwrap().messages.len(), 0);
        let again = (false, true, DeliveryState::WakeStarted);
        assert_eq!(send(&mut host, "5:alicek1", "hello"), again);
        // Live now: another message waits, nothing woken.
        let next = (false, false, DeliveryState::Waiting);
        assert_eq!(send(&mut host, "5:alicek2", "and this"), next);
    }

    #[test]
    fn defaults_fill_optional_fields() {
        let corpus = Corpus::from_json(
            r#"{"sessions":[{"id":"a","created_at":"2026-01-01T00:00:01Z",
                "messages":[{"seq":4,"role":"assistant","parts":[{"text":"hi"},{"tool_call":{"name":"x"}}]}]}]}"#,
            "test",
        )
        .unwrap();
        let session = corpus.session("a").unwrap();
        assert_eq!(session.header.created_at_ms, 1_767_225_601_000);
        assert_eq!(session.header.origin, "user");
        assert!(!session.header.live);
        assert_eq!(session.captured_through_seq, 4);
        let message = &session.messages[0];
        assert_eq!(message.source, "assistant");
        // Only the text crosses: the tool call is gone.
        assert_eq!(message.text(), Some("hi"));
    }

    /// Why `json` (from `origin`) is no corpus.
    fn refusal_of(json: &str, origin: &str) -> String {
        Corpus::from_json(json, origin).unwrap_err().to_string()
    }

    #[test]
    fn errors_name_the_origin_the_path_and_the_expectation() {
        let err = refusal_of(
            r#"{"sessions":[{"id":"a","created_at":"2026-01-01T00:00:00Z"},{"id":"b","created_at":"yesterday"}]}"#,
            "corpus.json",
        );
        assert!(
            err.starts_with("corpus.json: at sessions[1].created_at: expected an RFC 3339 time"),
            "{err}"
        );
        let err = refusal_of(
            r#"{"sessions":[{"id":"a","created_at":"2026-01-01T00:00:00Z","messages":[{"seq":1,"role":"robot"}]}]}"#,
            "c.json",
        );
        assert!(
            err.starts_with("c.json: at sessions[0].messages[0].role: unknown variant `robot`"),
            "{err}"
        );
        let err = refusal_of(
            r#"{"sessions":[{"id":"a","created_at":"2026-01-01T00:00:00Z","titel":"x"}]}"#,
            "c.json",
        );
        assert!(err.contains("unknown field `titel`"), "{err}");
    }

    #[test]
    fn only_the_object_forms_are_accepted() {
        let err = Corpus::from_json(r#"["me",[["me","2026-01-01T00:00:00Z",true]]]"#, "c.json")
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "c.json: at the top level: expected an object with named fields, got an array"
        );
        let err = refusal_of(
            r#"{"sessions":[["me","2026-01-01T00:00:00Z",true]]}"#,
            "c.json",
        );
        assert_eq!(
            err,
            "c.json: at sessions[0]: expected an object with named fields, got an array"
        );
    }

    #[test]
    fn a_byte_order_mark_is_accepted() {
        let corpus = Corpus::from_json("\u{feff}{\"caller\": \"me\"}", "c.json").unwrap();
        assert_eq!(corpus.caller(), Some("me"));
    }

    #[test]
    fn the_demo_corpus_loads() {
        assert!(Corpus::demo().sessions().len() >= 5);
    }

    #[test]
    fn deliveries_follow_the_controller_semantics() {
        let corpus = Arc::new(Corpus::demo());
        let cold = corpus
            .sessions()
            .iter()
            .find(|s| {
                !s.header.live && s.header.parent_id.is_none() && s.header.origin != "subagent"
            })
            .unwrap();
        let id = cold.header.id.clone();
        let before = cold.captured_through_seq;
        let mut host = CorpusHost::new(corpus.clone());
        assert_eq!(
            host.deliver(&DeliveryRequest::new(&id, "x", DeliveryMode::Queue)),
            Err(DeliveryRefusal::WouldNeedWake)
        );
        assert!(!host.session(&id).unwrap().header.live);
        assert_eq!(
            host.deliver(
                &DeliveryRequest::new(&id, "hello", DeliveryMode::Queue)
                    .may_wake(true)
                    .key("k1")
            ),
            Ok(Delivered {
                woke: true,
                repeat: false,
                state: DeliveryState::HandedOver,
                message_id: String::new(),
            })
        );
        let after = host.session(&id).unwrap();
        assert!(after.header.live);
        let newest = after.messages.last().unwrap();
        assert_eq!(newest.text(), Some("hello"));
        assert_eq!(newest.seq, after.captured_through_seq);
        assert!(newest.seq > before);
        // The same key again: the first answer, nothing delivered.
        let messages = after.messages.len();
        assert_eq!(
            host.deliver(
                &DeliveryRequest::new(&id, "hello", DeliveryMode::Queue)
                    .may_wake(true)
                    .key("k1")
            ),
            Ok(Delivered {
                woke: true,
                repeat: true,
                state: DeliveryState::HandedOver,
                message_id: String::new(),
            })
        );
        assert_eq!(host.session(&id).unwrap().messages.len(), messages);
        // Now live: a second delivery does not wake it.
        assert_eq!(
            host.deliver(&DeliveryRequest::new(&id, "again", DeliveryMode::Steer)),
            Ok(Delivered {
                woke: false,
                repeat: false,
                state: DeliveryState::HandedOver,
                message_id: String::new(),
            })
        );
        // The shared corpus is untouched: the host changed its own copy.
        assert!(!corpus.session(&id).unwrap().header.live);
        assert_eq!(
            host.deliver(&DeliveryRequest::new("nobody", "x", DeliveryMode::Queue).may_wake(true)),
            Err(DeliveryRefusal::NotFound)
        );
    }
}
