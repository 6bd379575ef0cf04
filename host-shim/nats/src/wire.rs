//! What machines tell each other, as JSON: the sessions a machine publishes, its live
//! ones, and a read of one session asked and answered. Mirrors of the contract's
//! records (which carry no serde), converted both ways in one place.

use host_shim::contract::latest::{
    ActionStatus, Delivered, DeliveryState, MessageContent, Role, ToolAction,
};
use host_shim::inbox::SpooledMessage;
use host_shim::{MessageEntry, SessionHeader, SurfaceIndex};
use serde::{Deserialize, Serialize};

/// One session as its machine published it (`d.<machine>`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct PublishedSession {
    pub id: String,
    pub created_at_ms: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<String>,
    pub origin: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preset: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

impl PublishedSession {
    pub fn of(header: &SessionHeader, title: Option<String>) -> PublishedSession {
        PublishedSession {
            id: header.id.clone(),
            created_at_ms: header.created_at_ms,
            parent_id: header.parent_id.clone(),
            origin: header.origin.clone(),
            cwd: header.cwd.clone(),
            preset: header.preset.clone(),
            title: title.filter(|t| !t.is_empty()),
        }
    }

    /// The header a reader shows: on `machine`, live as that machine says now; what
    /// the person lets in is the inbox's (the reader fills it in).
    pub fn header(&self, machine: &str, live: bool) -> SessionHeader {
        SessionHeader {
            live,
            parent_id: self.parent_id.clone(),
            origin: self.origin.clone(),
            cwd: self.cwd.clone(),
            preset: self.preset.clone(),
            machine: Some(machine.to_string()),
            ..SessionHeader::top_level(&self.id, self.created_at_ms)
        }
    }
}

/// A machine's sessions (`d.<machine>`).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Published {
    pub sessions: Vec<PublishedSession>,
    /// The machines whose messages the machine's sessions take (none: every machine).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accept_from: Option<Vec<String>>,
}

/// The sessions a machine runs now (`<machine>` in the live bucket).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Live {
    pub live: Vec<String>,
}

/// A read of one of a machine's sessions, by another machine's call; or word that a
/// message for one of them was just stored in the cluster.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "ask", rename_all = "kebab-case")]
pub enum Ask {
    Surface {
        id: String,
        lead_chars: u32,
    },
    Messages {
        id: String,
        seqs: Vec<u64>,
    },
    ActionSeqs {
        id: String,
    },
    Actions {
        id: String,
        seqs: Vec<u64>,
    },
    /// A message for session `id` waits under `handle` (its key in the bucket): the
    /// machine's host does with it what its harness does with a message at once.
    Arrived {
        id: String,
        handle: String,
        may_wake: bool,
    },
}

/// Its answer.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "answer", rename_all = "kebab-case")]
pub enum Reply {
    Surface {
        surface: Option<Surface>,
    },
    Messages {
        messages: Vec<Option<Message>>,
    },
    ActionSeqs {
        seqs: Vec<u64>,
    },
    Actions {
        actions: Vec<Vec<Action>>,
    },
    /// What the harness did with an arrived message: `None` when it waits for the
    /// harness's next hand-over.
    Arrived {
        delivered: Option<Arrival>,
    },
    /// The asking machine's question could not be taken (not JSON, or too large).
    Refused {
        why: String,
    },
}

impl Reply {
    /// The answer about a session the machine does not have (or does not share).
    pub fn no_session(ask: &Ask) -> Reply {
        match ask {
            Ask::Surface { .. } => Reply::Surface { surface: None },
            Ask::Messages { seqs, .. } => Reply::Messages {
                messages: vec![None; seqs.len()],
            },
            Ask::ActionSeqs { .. } => Reply::ActionSeqs { seqs: Vec::new() },
            Ask::Actions { seqs, .. } => Reply::Actions {
                actions: vec![Vec::new(); seqs.len()],
            },
            Ask::Arrived { .. } => Reply::Arrived { delivered: None },
        }
    }
}

/// Where an arrived message is, as the target's machine says.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Arrival {
    pub woke: bool,
    /// `handed-over`, `waiting`, `held` or `wake-started`.
    pub state: String,
}

impl Arrival {
    pub fn of(delivered: &Delivered) -> Arrival {
        Arrival {
            woke: delivered.woke,
            state: delivered.state.as_str().to_string(),
        }
    }

    /// The sender's answer, for the message `waiting`: a state this host does not know
    /// reads as waiting.
    pub fn delivered(&self, waiting: &SpooledMessage) -> Delivered {
        Delivered {
            woke: self.woke,
            repeat: false,
            state: match self.state.as_str() {
                "handed-over" => DeliveryState::HandedOver,
                "held" => DeliveryState::Held,
                "wake-started" => DeliveryState::WakeStarted,
                _ => DeliveryState::Waiting,
            },
            message_id: waiting.message_id.clone(),
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Surface {
    /// Per message: seq, role, replaced, injected, source lead length, text lead
    /// length, text chars.
    messages: Vec<(u64, String, bool, bool, u32, u32, u32)>,
    source_leads: String,
    text_leads: String,
    captured_through_seq: u64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Message {
    source: String,
    text: String,
    injected: bool,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Action {
    name: String,
    input: String,
    status: String,
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::System => "system",
    }
}

fn role_of(name: &str) -> Option<Role> {
    match name {
        "user" => Some(Role::User),
        "assistant" => Some(Role::Assistant),
        "system" => Some(Role::System),
        _ => None,
    }
}

impl From<&SurfaceIndex> for Surface {
    fn from(index: &SurfaceIndex) -> Surface {
        Surface {
            messages: (index.messages.iter())
                .map(|m| {
                    let role = role_name(m.role).to_string();
                    let (lead, text) = (m.source_lead_len, m.text_lead_len);
                    (
                        m.seq,
                        role,
                        m.replaced,
                        m.injected,
                        lead,
                        text,
                        m.text_chars,
                    )
                })
                .collect(),
            source_leads: index.source_leads.clone(),
            text_leads: index.text_leads.clone(),
            captured_through_seq: index.captured_through_seq,
        }
    }
}

impl Surface {
    /// The index again; none when a message names no role the contract knows (a
    /// damaged answer is not shown as if it were a surface).
    pub fn index(self) -> Option<SurfaceIndex> {
        let mut messages = Vec::with_capacity(self.messages.len());
        for (seq, role, replaced, injected, source_lead_len, text_lead_len, text_chars) in
            self.messages
        {
            messages.push(MessageEntry {
                seq,
                role: role_of(&role)?,
                replaced,
                injected,
                source_lead_len,
                text_lead_len,
                text_chars,
            });
        }
        Some(SurfaceIndex {
            messages,
            source_leads: self.source_leads,
            text_leads: self.text_leads,
            captured_through_seq: self.captured_through_seq,
        })
    }
}

impl From<MessageContent> for Message {
    fn from(m: MessageContent) -> Message {
        Message {
            source: m.source,
            text: m.text,
            injected: m.injected,
        }
    }
}

impl From<Message> for MessageContent {
    fn from(m: Message) -> MessageContent {
        MessageContent {
            source: m.source,
            text: m.text,
            injected: m.injected,
        }
    }
}

impl From<ToolAction> for Action {
    fn from(a: ToolAction) -> Action {
        Action {
            name: a.name,
            input: a.input,
            status: a.status.as_str().to_string(),
        }
    }
}

impl Action {
    pub fn action(self) -> ToolAction {
        ToolAction {
            name: self.name,
            input: self.input,
            status: match self.status.as_str() {
                "ok" => ActionStatus::Ok,
                "error" => ActionStatus::Error,
                _ => ActionStatus::Running,
            },
        }
    }
}
