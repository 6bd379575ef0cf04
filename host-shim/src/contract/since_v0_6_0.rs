//! The current contract, 0.6.0 (`wit/plugin.wit`), re-exported as [`super::latest`]:
//! its wasmtime bindings, whose types every harness answers in, and how the runtime
//! calls the exports (the guard answers the imports: `crate::guard::since_v0_6_0`).
//! One module per contract version, as Zed keeps `since_vX.Y.Z`; older versions
//! convert into these types.
//!
//! Every import is generated trappable: the guard ([`crate::guard`]) ends a call from
//! inside an import when the plugin asks past a host bound. A harness never sees that:
//! it implements [`crate::SessionQuery`] and [`crate::Inbox`], plain traits over the
//! types re-exported here.

wasmtime::component::bindgen!({
    path: "../wit",
    world: "plugin",
    imports: { default: trappable },
    additional_derives: [PartialEq, Eq],
});

use super::latest as current;
use super::request::CallRequest;
use wasmtime::Store;

pub use exports::harness::sessions::tools::{
    Answer, Refusal, ReplyWait, ToolAnnotations, ToolSpec, WriteCheck, WriteRefusal,
};
pub use harness::sessions::claims::{
    ChangeKind, Claim, ClaimChange, ClaimMode, ClaimSet, WriteFailure,
};
pub use harness::sessions::inbox::{
    Delivered, DeliveryMode, DeliveryRefusal, DeliveryState, MessageIds,
};
pub use harness::sessions::session_query::{
    ActionStatus, InboundPolicy, InboxCount, MessageContent, MessageEntry, Role, SendCounts,
    SessionEntry, SessionHeader, SessionIndex, SurfaceIndex, ToolAction,
};

/// One tool of a plugin's catalog, whatever contract version the plugin was built
/// against: a plugin built before 0.3.0 gives no annotations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tool {
    pub name: String,
    pub description: String,
    /// JSON Schema (as JSON text) of the arguments object.
    pub input_schema: String,
    pub annotations: Option<ToolAnnotations>,
}

impl From<ToolSpec> for Tool {
    fn from(spec: ToolSpec) -> Tool {
        Tool {
            name: spec.name,
            description: spec.description,
            input_schema: spec.input_schema,
            annotations: Some(spec.annotations),
        }
    }
}

impl ToolAnnotations {
    /// As MCP's `ToolAnnotations` object (camelCase; a hint that is none left out).
    pub fn to_mcp_json(&self) -> serde_json::Value {
        let mut object = serde_json::Map::new();
        object.insert("title".into(), self.title.clone().into());
        object.insert("readOnlyHint".into(), self.read_only_hint.into());
        if let Some(hint) = self.destructive_hint {
            object.insert("destructiveHint".into(), hint.into());
        }
        if let Some(hint) = self.idempotent_hint {
            object.insert("idempotentHint".into(), hint.into());
        }
        object.insert("openWorldHint".into(), self.open_world_hint.into());
        serde_json::Value::Object(object)
    }
}

impl Refusal {
    /// The code as the answer's text names it (`not-found`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Refusal::InvalidArguments => "invalid-arguments",
            Refusal::UnknownTool => "unknown-tool",
            Refusal::NotFound => "not-found",
            Refusal::NotMessageable => "not-messageable",
            Refusal::NotPermitted => "not-permitted",
            Refusal::RefusedByTarget => "refused-by-target",
            Refusal::LoopGuard => "loop-guard",
            Refusal::RateLimited => "rate-limited",
            Refusal::ResumeDisabled => "resume-disabled",
            Refusal::EmptyBody => "empty-body",
            Refusal::Rejected => "rejected",
            Refusal::Undecided => "undecided",
            Refusal::Claimed => "claimed",
        }
    }
}

impl DeliveryMode {
    /// The mode as the tools name it (`queue`, `steer`).
    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryMode::Queue => "queue",
            DeliveryMode::Steer => "steer",
        }
    }
}

// On disk (the spool, the deliveries file) a mode is its name.
impl serde::Serialize for DeliveryMode {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for DeliveryMode {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match <std::borrow::Cow<str>>::deserialize(deserializer)?.as_ref() {
            "queue" => Ok(DeliveryMode::Queue),
            "steer" => Ok(DeliveryMode::Steer),
            other => Err(serde::de::Error::unknown_variant(
                other,
                &["queue", "steer"],
            )),
        }
    }
}

impl InboxCount {
    /// No message waiting or handed over.
    pub const NONE: InboxCount = InboxCount {
        waiting: 0,
        handed_over: 0,
    };
}

impl DeliveryState {
    /// The state as records name it (`waiting`, `handed-over`, `held`,
    /// `wake-started`).
    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryState::Waiting => "waiting",
            DeliveryState::HandedOver => "handed-over",
            DeliveryState::Held => "held",
            DeliveryState::WakeStarted => "wake-started",
        }
    }
}

impl serde::Serialize for DeliveryState {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for DeliveryState {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match <std::borrow::Cow<str>>::deserialize(deserializer)?.as_ref() {
            "waiting" => Ok(DeliveryState::Waiting),
            "handed-over" => Ok(DeliveryState::HandedOver),
            "held" => Ok(DeliveryState::Held),
            "wake-started" => Ok(DeliveryState::WakeStarted),
            other => Err(serde::de::Error::unknown_variant(
                other,
                &["waiting", "handed-over", "held", "wake-started"],
            )),
        }
    }
}

impl InboundPolicy {
    /// The policy as the person names it (`accept`, `hold`, `refuse`).
    pub fn as_str(self) -> &'static str {
        match self {
            InboundPolicy::Accept => "accept",
            InboundPolicy::Hold => "hold",
            InboundPolicy::Refuse => "refuse",
        }
    }

    /// The stricter of two policies: refuse over hold over accept (two people's say,
    /// or a person's and a harness setting's: the one that lets in less wins).
    pub fn stricter(self, other: InboundPolicy) -> InboundPolicy {
        let rank = |p: InboundPolicy| match p {
            InboundPolicy::Accept => 0,
            InboundPolicy::Hold => 1,
            InboundPolicy::Refuse => 2,
        };
        if rank(other) > rank(self) {
            other
        } else {
            self
        }
    }

    pub fn parse(text: &str) -> Option<InboundPolicy> {
        match text {
            "accept" => Some(InboundPolicy::Accept),
            "hold" => Some(InboundPolicy::Hold),
            "refuse" => Some(InboundPolicy::Refuse),
            _ => None,
        }
    }
}

impl MessageIds {
    /// The ids of a message from a plugin built before 0.4.0, whose frames carry none.
    pub const fn none() -> MessageIds {
        MessageIds {
            message_id: String::new(),
            in_reply_to: None,
        }
    }
}

impl SendCounts {
    /// No sends counted, at the host's clock now: a harness that keeps no record of
    /// what it accepted, or an inbox that cannot be read (caps nothing).
    pub fn none_now() -> SendCounts {
        let now_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
        SendCounts {
            now_ms,
            to_target: 0,
            to_any: 0,
            to_target_times: Vec::new(),
            to_any_times: Vec::new(),
            key_accepted: false,
        }
    }
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

impl SessionHeader {
    /// A top-level session's header with the facts a harness most often leaves at
    /// their defaults: cold, origin "user", no parent, path, preset or machine, inbound
    /// accepted.
    pub fn top_level(id: &str, created_at_ms: i64) -> SessionHeader {
        SessionHeader {
            id: id.to_string(),
            created_at_ms,
            live: false,
            parent_id: None,
            origin: "user".to_string(),
            cwd: None,
            preset: None,
            inbound: InboundPolicy::Accept,
            machine: None,
        }
    }

    /// A subagent has a parent id or the origin "subagent".
    pub fn is_subagent(&self) -> bool {
        self.parent_id.is_some() || self.origin == "subagent"
    }
}

impl SessionIndex {
    /// The index of these sessions, in their order: how a harness that holds whole
    /// headers answers `list-sessions`.
    pub fn of<'a, I>(headers: I) -> SessionIndex
    where
        I: IntoIterator<Item = &'a SessionHeader>,
        I::IntoIter: Clone,
    {
        let headers = headers.into_iter();
        // Sized once: the ids of a large harness are more than a page or two.
        let mut index = SessionIndex {
            ids: String::with_capacity(headers.clone().map(|h| h.id.len()).sum()),
            entries: Vec::with_capacity(headers.size_hint().0),
        };
        for header in headers {
            index.ids.push_str(&header.id);
            index.entries.push(SessionEntry {
                id_len: u32::try_from(header.id.len()).unwrap_or(u32::MAX),
                created_at_ms: header.created_at_ms,
                live: header.live,
                subagent: header.is_subagent(),
            });
        }
        index
    }
}

/// The first `chars` chars of `text` (all of it when shorter).
fn lead(text: &str, chars: u32) -> &str {
    let chars = chars as usize;
    if text.len() <= chars {
        return text;
    }
    // Most text starts with ASCII: then the first `chars` bytes are the lead.
    if text.as_bytes()[..chars].is_ascii() {
        return &text[..chars];
    }
    match text.char_indices().nth(chars) {
        Some((end, _)) => &text[..end],
        None => text,
    }
}

impl SurfaceIndex {
    /// An empty surface index.
    pub fn new(captured_through_seq: u64) -> SurfaceIndex {
        SurfaceIndex {
            messages: Vec::new(),
            source_leads: String::new(),
            text_leads: String::new(),
            captured_through_seq,
        }
    }

    /// Adds one message given whole: its facts in `entry` (with `text-chars`, which a
    /// harness best counts once, when it stores the message), its source label and its
    /// text (the text parts joined by a line feed); the leads are cut here to
    /// `lead_chars` chars and their lengths filled in.
    pub fn push(&mut self, mut entry: MessageEntry, source: &str, text: &str, lead_chars: u32) {
        let source_lead = lead(source, lead_chars);
        let text_lead = lead(text, lead_chars);
        self.source_leads.push_str(source_lead);
        self.text_leads.push_str(text_lead);
        entry.source_lead_len = source_lead.len() as u32;
        entry.text_lead_len = text_lead.len() as u32;
        self.messages.push(entry);
    }
}

/// The catalog for the settings.
pub fn catalog<T: 'static>(
    pre: &PluginPre<T>,
    store: &mut Store<T>,
    settings: &str,
) -> wasmtime::Result<Result<Vec<Tool>, String>> {
    let plugin = pre.instantiate(&mut *store)?;
    let tools = plugin
        .harness_sessions_tools()
        .call_catalog(store, settings)?;
    Ok(tools.map(|tools| tools.into_iter().map(Tool::from).collect()))
}

/// The end of a send that awaited its reply, in a fresh instance.
pub fn reply_awaited<T: 'static>(
    pre: &PluginPre<T>,
    store: &mut Store<T>,
    request: &CallRequest,
    accepted: &str,
    wait: &ReplyWait,
    reply: Option<&str>,
) -> wasmtime::Result<Result<Answer, String>> {
    let plugin = pre.instantiate(&mut *store)?;
    plugin.harness_sessions_tools().call_reply_awaited(
        store,
        &request.caller,
        &request.settings,
        accepted,
        wait,
        reply,
    )
}

super::convert::call_fn!(current);

/// Whether `caller` may write `paths` now, in a fresh instance.
pub fn check_write<T: 'static>(
    pre: &PluginPre<T>,
    store: &mut Store<T>,
    caller: &str,
    settings: &str,
    paths: &[String],
) -> wasmtime::Result<Result<WriteCheck, String>> {
    let plugin = pre.instantiate(&mut *store)?;
    plugin
        .harness_sessions_tools()
        .call_check_write(store, caller, settings, paths)
}

impl ClaimMode {
    /// The mode as claims name it (`exclusive`, `shared`).
    pub fn as_str(self) -> &'static str {
        match self {
            ClaimMode::Exclusive => "exclusive",
            ClaimMode::Shared => "shared",
        }
    }

    pub fn parse(text: &str) -> Option<ClaimMode> {
        match text {
            "exclusive" => Some(ClaimMode::Exclusive),
            "shared" => Some(ClaimMode::Shared),
            _ => None,
        }
    }
}

impl ChangeKind {
    /// The change as the audit log names it (`made`, `released`, `lapsed`).
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::Made => "made",
            ChangeKind::Released => "released",
            ChangeKind::Lapsed => "lapsed",
        }
    }
}
