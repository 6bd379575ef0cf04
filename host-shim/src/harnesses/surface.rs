//! A session's current model surface as a host keeps it, for every store alike (the
//! in-memory corpus, the Claude Code store): its messages with their text parts
//! already joined, and how that becomes the contract's answers (an index with leads,
//! whole messages by seq).

use crate::contract::latest::{MessageContent, MessageEntry, Role, SurfaceIndex, ToolAction};

pub use crate::contract::frames::FRAME_FIRST_LINE;

/// The frame's last line: a body line that reads like it is escaped by the plugin (a
/// leading backslash), so in a hand-over this line only ever ends a frame.
const FRAME_LAST_LINE: &str = "--- message ends ---";

/// The frames of a hook's hand-over (several messages are joined by a blank line), or
/// `None` when the text is not one: each must start with the frame's first line and
/// end with its last. Every store shows a handed-over message as the frame itself
/// (user role, not injected), whatever the harness recorded it in.
pub fn handed_over_frames(text: &str) -> Option<Vec<&str>> {
    let mut frames = Vec::new();
    let mut rest = text.trim_end_matches('\n');
    while !rest.is_empty() {
        if !rest.starts_with(FRAME_FIRST_LINE) {
            return None;
        }
        let end = rest.find(&format!("\n{FRAME_LAST_LINE}"))? + 1 + FRAME_LAST_LINE.len();
        let after = &rest[end..];
        if !(after.is_empty() || after.starts_with('\n')) {
            return None;
        }
        frames.push(&rest[..end]);
        rest = after.trim_start_matches('\n');
    }
    (!frames.is_empty()).then_some(frames)
}

/// One message of a session's current model surface, as the host keeps it: the text
/// parts already joined (the only content that ever crosses), its length counted once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    pub seq: u64,
    pub role: Role,
    pub source: String,
    pub replaced: bool,
    /// The harness put it there (a reminder, an instructions file, a hook's text).
    pub injected: bool,
    /// The text parts joined by a line feed; `None` without a text part.
    text: Option<String>,
    text_chars: u32,
    /// The tool calls it made, in order (their inputs as the log records them, cut to
    /// the WIT's 1024 bytes), each with how it ended; never their output.
    pub actions: Vec<ToolAction>,
}

impl Message {
    pub fn new(
        seq: u64,
        role: Role,
        source: &str,
        replaced: bool,
        text: Option<String>,
    ) -> Message {
        let text_chars = text.as_deref().map_or(0, |text| {
            u32::try_from(text.chars().count()).unwrap_or(u32::MAX)
        });
        Message {
            seq,
            role,
            source: source.to_string(),
            replaced,
            injected: false,
            text,
            text_chars,
            actions: Vec::new(),
        }
    }

    /// The message with the tool calls it made.
    pub fn with_actions(mut self, actions: Vec<ToolAction>) -> Message {
        self.actions = actions;
        self
    }

    /// The message, marked as injected by the harness or not.
    pub fn injected(mut self, injected: bool) -> Message {
        self.injected = injected;
        self
    }

    pub fn text(&self) -> Option<&str> {
        self.text.as_deref()
    }
}

/// A surface: the messages in the host's order and the seq it was captured through.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Surface {
    pub messages: Vec<Message>,
    pub captured_through_seq: u64,
}

impl Surface {
    /// The surface as an index, each lead at most `lead_chars` chars.
    pub fn index(&self, lead_chars: u32) -> SurfaceIndex {
        index_of(&self.messages, self.captured_through_seq, lead_chars)
    }

    /// The message with this seq, whole.
    pub fn message(&self, seq: u64) -> Option<MessageContent> {
        message_of(&self.messages, seq)
    }

    /// `get-messages`' answer: one entry per seq, all `None` without a surface (an
    /// unknown session).
    pub fn messages(surface: Option<&Surface>, seqs: &[u64]) -> Vec<Option<MessageContent>> {
        seqs.iter().map(|&seq| surface?.message(seq)).collect()
    }

    /// `action-seqs`' answer: the seqs of the messages that made calls.
    pub fn action_seqs(surface: Option<&Surface>) -> Vec<u64> {
        (surface.into_iter())
            .flat_map(|s| s.messages.iter())
            .filter(|m| !m.actions.is_empty())
            .map(|m| m.seq)
            .collect()
    }

    /// `get-actions`' answer: one entry per seq, empty for a message without calls or
    /// an unknown session.
    pub fn actions(surface: Option<&Surface>, seqs: &[u64]) -> Vec<Vec<ToolAction>> {
        seqs.iter()
            .map(|&seq| {
                (surface.into_iter())
                    .flat_map(|s| s.messages.iter())
                    .find(|m| m.seq == seq)
                    .map(|m| m.actions.clone())
                    .unwrap_or_default()
            })
            .collect()
    }
}

/// The `SessionQuery` answers every store over a harness's own logs gives alike, inside
/// its `impl SessionQuery`: a session's surface, its messages and its tool calls from
/// the store's `surface(id) -> Option<Arc<Surface>>`, and what its inbox holds from its
/// `desk` field (a [`crate::inbox::Desk`]): an inbox that cannot be read counts nothing.
macro_rules! answers_from_surface_and_desk {
    () => {
        fn get_surface(
            &mut self,
            id: &str,
            lead_chars: u32,
        ) -> Option<$crate::contract::latest::SurfaceIndex> {
            Some(self.surface(id)?.index(lead_chars))
        }

        fn get_messages(
            &mut self,
            id: &str,
            seqs: &[u64],
        ) -> Vec<Option<$crate::contract::latest::MessageContent>> {
            $crate::harnesses::surface::Surface::messages(self.surface(id).as_deref(), seqs)
        }

        fn inbox_status(
            &mut self,
            target: &str,
            sender: &str,
        ) -> $crate::contract::latest::InboxCount {
            (self.desk.inbox())
                .count_from(target, sender)
                .unwrap_or($crate::contract::latest::InboxCount::NONE)
        }

        fn action_seqs(&mut self, id: &str) -> Vec<u64> {
            $crate::harnesses::surface::Surface::action_seqs(self.surface(id).as_deref())
        }

        fn get_actions(
            &mut self,
            id: &str,
            seqs: &[u64],
        ) -> Vec<Vec<$crate::contract::latest::ToolAction>> {
            $crate::harnesses::surface::Surface::actions(self.surface(id).as_deref(), seqs)
        }

        fn send_history(
            &mut self,
            sender: &str,
            target: &str,
            window_minutes: u32,
            limit: u32,
            key: &str,
        ) -> $crate::contract::latest::SendCounts {
            $crate::inbox::send_history_or_none(
                &**self.desk.inbox(),
                sender,
                target,
                window_minutes,
                limit,
                key,
            )
        }
    };
}
pub(crate) use answers_from_surface_and_desk;

/// `messages` as an index, each lead at most `lead_chars` chars.
pub fn index_of(messages: &[Message], captured_through_seq: u64, lead_chars: u32) -> SurfaceIndex {
    let mut index = SurfaceIndex::new(captured_through_seq);
    for m in messages {
        let entry = MessageEntry {
            seq: m.seq,
            role: m.role,
            replaced: m.replaced,
            injected: m.injected,
            source_lead_len: 0,
            text_lead_len: 0,
            text_chars: m.text_chars,
        };
        index.push(entry, &m.source, m.text().unwrap_or(""), lead_chars);
    }
    index
}

/// The message of `messages` with this seq, whole.
pub fn message_of(messages: &[Message], seq: u64) -> Option<MessageContent> {
    let message = messages.iter().find(|m| m.seq == seq)?;
    Some(MessageContent {
        source: message.source.clone(),
        text: message.text().unwrap_or("").to_string(),
        injected: message.injected,
    })
}
