//! A session's current model surface as a host keeps it, for every store alike (the
//! in-memory corpus, the Claude Code store): its messages with their text parts
//! already joined, and how that becomes the contract's answers (an index with leads,
//! whole messages by seq).

use crate::bindings::{MessageContent, MessageEntry, Role, SurfaceIndex};

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
        }
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
}

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
