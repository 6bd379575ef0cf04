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

/// One part of a message's content; only `Text` is ever shown, so the other kinds
/// carry no content.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ContentPart {
    Text(String),
    Reasoning,
    ToolCall,
    ToolOutput,
}

/// One message of a session's current model surface.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SurfaceMessage {
    pub seq: u64,
    pub role: Role,
    pub source: String,
    pub replaced: bool,
    pub parts: Vec<ContentPart>,
}

/// What a session's own model sees now.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ModelSurface {
    pub messages: Vec<SurfaceMessage>,
    pub captured_through_seq: u64,
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

/// The inbox accepted a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Delivered {
    /// The target was cold and the host woke it.
    pub woke: bool,
}

/// Why the controller did not accept a message; nothing was delivered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeliveryRefusal {
    NotFound,
    WouldNeedWake,
    Rejected(String),
}

/// `session-query`: read-only, never wakes a session.
pub trait SessionQuery {
    /// Every session header, in any order.
    fn list_sessions(&mut self) -> Vec<SessionHeader>;
    /// One header, or `None` when the id is unknown.
    fn get_session(&mut self, id: &str) -> Option<SessionHeader>;
    /// Titles for `ids` in one batch. A well-behaved host answers one entry per id in
    /// order; the core tolerates any length.
    fn title_snapshots(&mut self, ids: &[String]) -> Vec<Option<String>>;
    /// One session's current model surface, or `None` when the id is unknown.
    fn get_surface(&mut self, id: &str) -> Option<ModelSurface>;
}

/// `inbox`: delivery into a top-level session.
pub trait Inbox {
    /// Deliver exactly once or not at all; with `may_wake` false, never wake a cold
    /// target.
    fn deliver(
        &mut self,
        target: &str,
        body: &str,
        mode: DeliveryMode,
        may_wake: bool,
    ) -> Result<Delivered, DeliveryRefusal>;
}
