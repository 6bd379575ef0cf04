//! A session's current model surface as a host keeps it, for every store alike (the
//! in-memory corpus, the Claude Code store): its messages with their text parts
//! already joined, and how that becomes the contract's answers (an index with leads,
//! whole messages by seq).

use crate::contract::latest::{
    InboxCount, MessageContent, MessageEntry, Role, SendCounts, SessionHeader, SessionIndex,
    SurfaceIndex, ToolAction,
};
use crate::harness::{HistoryAsk, SessionQuery};
use crate::inbox::{Recipient, send_history_or_none};
use std::sync::Arc;

pub use crate::contract::frames::handed_over_frames;

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

/// How many parsed surfaces a store keeps.
pub const SURFACES_KEPT: usize = 8;

/// What a store keeps of the surfaces it parsed: the last [`SURFACES_KEPT`], the one
/// kept least recently dropped first.
#[derive(Debug)]
pub struct Recent<T> {
    kept: std::collections::VecDeque<T>,
}

impl<T> Default for Recent<T> {
    fn default() -> Self {
        Recent {
            kept: std::collections::VecDeque::new(),
        }
    }
}

impl<T> Recent<T> {
    /// The kept one `is` picks.
    pub fn find(&self, is: impl Fn(&T) -> bool) -> Option<&T> {
        self.kept.iter().find(|item| is(item))
    }

    /// Takes out the kept one `is` picks.
    pub fn take(&mut self, is: impl Fn(&T) -> bool) -> Option<T> {
        let at = self.kept.iter().position(is)?;
        self.kept.remove(at)
    }

    /// Keeps `item` as the most recent.
    pub fn keep(&mut self, item: T) {
        if self.kept.len() == SURFACES_KEPT {
            self.kept.pop_front();
        }
        self.kept.push_back(item);
    }
}

/// Surfaces kept by session, each with what it was read at (a file's stamp, a
/// database's version).
impl<V: PartialEq> Recent<(String, V, Arc<Surface>)> {
    /// `session`'s surface, when the one kept was read at `at`.
    pub fn surface(&self, session: &str, at: &V) -> Option<Arc<Surface>> {
        let kept = self.find(|(id, seen, _)| id == session && seen == at)?;
        Some(kept.2.clone())
    }

    /// Keeps `surface` as `session`'s read at `at`, in place of what was kept of it.
    pub fn keep_surface(&mut self, session: &str, at: V, surface: Surface) -> Arc<Surface> {
        let surface = Arc::new(surface);
        self.take(|(id, _, _)| id == session);
        self.keep((session.to_string(), at, surface.clone()));
        surface
    }
}

/// A surface: the messages in the host's order and the seq it was captured through.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Surface {
    pub messages: Vec<Message>,
    pub captured_through_seq: u64,
}

impl Surface {
    /// A surface of only the person's messages, `texts` in order (seq 1, 2, …): what a
    /// harness that keeps plain text has.
    pub fn of_person_texts<'a>(texts: impl IntoIterator<Item = &'a String>) -> Surface {
        let messages: Vec<Message> = (texts.into_iter().zip(1..))
            .map(|(text, seq)| Message::new(seq, Role::User, "user", false, Some(text.clone())))
            .collect();
        Surface {
            captured_through_seq: messages.len() as u64,
            messages,
        }
    }

    /// The surface as an index, each lead at most `lead_chars` chars.
    pub fn index(&self, lead_chars: u32) -> SurfaceIndex {
        index_of(&self.messages, self.captured_through_seq, lead_chars)
    }

    /// The message ids of the frames handed over to the session (its person's side,
    /// not injected): what this surface witnesses of the hand-overs offered to it.
    pub fn handed_over_ids(&self) -> crate::inbox::Shown {
        let given = (self.messages.iter())
            .filter(|m| m.role == Role::User && !m.injected)
            .filter_map(|m| m.text());
        crate::inbox::shown_in(given)
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

/// A store over a harness's own logs, as the plugin asks it: what a call's start and
/// end mean to it, its sessions (all, or by id), their titles, and one session's
/// surface. The rest of [`SessionQuery`] follows alike for every such store (below): a
/// surface's index, messages and tool calls, and what the inbox holds, from its
/// desk (an inbox that cannot be read counts nothing). Its deliveries take the one
/// delivery path, as its [`Recipient`] says.
pub trait LoggedSessions: Recipient {
    /// The harness's name (`claude-code`, `codex`): its [`super::Store::harness`].
    const HARNESS: &'static str;

    /// Lines of its logs the last listing could not read: its
    /// [`super::Store::skipped_lines`].
    fn skipped_lines(&self) -> u64 {
        0
    }

    /// A call begins (the desk already knows its caller): what the store keeps for
    /// its length.
    fn call_begins(&mut self) {}

    /// The call ended: nothing kept.
    fn call_ends(&mut self) {}

    /// Every session, as a listing shows it.
    fn all_sessions(&mut self) -> SessionIndex;

    /// One session's header, when the store holds it.
    fn session_header(&mut self, id: &str) -> Option<SessionHeader>;

    /// Several sessions' headers, in the order asked.
    fn session_headers(&mut self, ids: &[String]) -> Vec<Option<SessionHeader>> {
        ids.iter().map(|id| self.session_header(id)).collect()
    }

    /// Several sessions' titles, in the order asked.
    fn titles(&mut self, ids: &[String]) -> Vec<Option<String>>;

    /// One session's surface, parsed from its log.
    fn surface_of(&mut self, id: &str) -> Option<Arc<Surface>>;
}

// A store over logs is a `Store` with no more said.
impl<T: LoggedSessions + Send + 'static> super::Store for T {
    fn harness(&self) -> &'static str {
        T::HARNESS
    }

    fn skipped_lines(&self) -> u64 {
        LoggedSessions::skipped_lines(self)
    }
}

// The bound is the kit's own: only its stores over logs take this impl; any other
// store implements `SessionQuery` itself.
impl<T: LoggedSessions> SessionQuery for T {
    fn begin_call(&mut self, caller: &str) {
        self.desk().set_caller(caller);
        self.call_begins();
    }

    fn end_call(&mut self) {
        self.desk().end_call();
        self.call_ends();
    }

    fn list_sessions(&mut self) -> SessionIndex {
        self.all_sessions()
    }

    fn get_session(&mut self, id: &str) -> Option<SessionHeader> {
        self.session_header(id)
    }

    fn get_sessions(&mut self, ids: &[String]) -> Vec<Option<SessionHeader>> {
        self.session_headers(ids)
    }

    fn title_snapshots(&mut self, ids: &[String]) -> Vec<Option<String>> {
        self.titles(ids)
    }

    fn get_surface(&mut self, id: &str, lead_chars: u32) -> Option<SurfaceIndex> {
        Some(self.surface_of(id)?.index(lead_chars))
    }

    fn get_messages(&mut self, id: &str, seqs: &[u64]) -> Vec<Option<MessageContent>> {
        Surface::messages(self.surface_of(id).as_deref(), seqs)
    }

    /// When the caller has messages waiting there (or a look without a caller, as
    /// `host-shim watch`'s), what the target's surface shows settles its offers first
    /// (a read is as good a witness as its next hook): an offer it shows is handed
    /// over. A read with nothing waiting settles nothing, so reads stay one count.
    /// None is offered again from here: a surface starts after the last compaction, so
    /// one it does not show may still be in the log before it.
    fn inbox_status(&mut self, target: &str, sender: &str) -> InboxCount {
        let inbox = self.desk().inbox().clone();
        let count = inbox.count_from(target, sender).unwrap_or(InboxCount::NONE);
        if !sender.is_empty() && count.waiting == 0 {
            return count;
        }
        let _ = inbox.settle(target, std::time::Duration::MAX, &mut |_| {
            Ok((self.surface_of(target)).map_or_else(Default::default, |s| s.handed_over_ids()))
        });
        inbox.count_from(target, sender).unwrap_or(InboxCount::NONE)
    }

    fn action_seqs(&mut self, id: &str) -> Vec<u64> {
        Surface::action_seqs(self.surface_of(id).as_deref())
    }

    fn get_actions(&mut self, id: &str, seqs: &[u64]) -> Vec<Vec<ToolAction>> {
        Surface::actions(self.surface_of(id).as_deref(), seqs)
    }

    fn send_history(&mut self, ask: &HistoryAsk) -> SendCounts {
        let inbox = self.desk().inbox().clone();
        send_history_or_none(&*inbox, ask)
    }
}

/// A tool call's input as a store keeps it: cut to the WIT's
/// [`crate::guard::ACTION_INPUT_BYTES`] at a char boundary.
pub fn action_input(input: &str) -> String {
    let mut end = input.len().min(crate::guard::ACTION_INPUT_BYTES);
    while !input.is_char_boundary(end) {
        end -= 1;
    }
    input[..end].to_string()
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

/// A piece of a text a harness wrapped blocks into: what stands outside the blocks,
/// or a block's inside (see [`tagged`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tagged<'a> {
    Outside(&'a str),
    Inside(&'a str),
}

/// `text` cut at the blocks between `open` and `close` (a harness's own wrapping of
/// what its hooks added, `<hook_context>…</hook_context>`), in order; a block opened
/// and never closed is outside. Empty pieces are left out.
pub fn tagged<'a>(text: &'a str, open: &str, close: &str) -> Vec<Tagged<'a>> {
    let mut pieces = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find(open) {
        let inner = &rest[start + open.len()..];
        let Some(end) = inner.find(close) else { break };
        pieces.push(Tagged::Outside(&rest[..start]));
        pieces.push(Tagged::Inside(&inner[..end]));
        rest = &inner[end + close.len()..];
    }
    pieces.push(Tagged::Outside(rest));
    pieces.retain(|piece| !matches!(piece, Tagged::Outside("")));
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(ids: impl IntoIterator<Item = usize>) -> Recent<(String, u32, Arc<Surface>)> {
        let mut recent = Recent::default();
        for id in ids {
            recent.keep_surface(&format!("s{id}"), 1, Surface::default());
        }
        recent
    }

    #[test]
    fn a_text_is_cut_at_its_closed_blocks_in_order() {
        use Tagged::{Inside, Outside};
        let text = "<c>one</c>words<c></c> more <c>unclosed";
        assert_eq!(
            tagged(text, "<c>", "</c>"),
            [
                Inside("one"),
                Outside("words"),
                Inside(""),
                Outside(" more <c>unclosed")
            ]
        );
        assert_eq!(tagged("", "<c>", "</c>"), []);
        assert_eq!(tagged("plain", "<c>", "</c>"), [Outside("plain")]);
    }

    #[test]
    fn keeps_the_last_eight_and_drops_the_least_recently_kept() {
        let recent = kept(0..=SURFACES_KEPT);
        assert!(recent.surface("s0", &1).is_none(), "the first was dropped");
        for id in 1..=SURFACES_KEPT {
            assert!(
                recent.surface(&format!("s{id}"), &1).is_some(),
                "s{id} kept"
            );
        }
    }

    #[test]
    fn keeping_a_session_again_replaces_it_and_makes_it_most_recent() {
        let mut recent = kept(0..SURFACES_KEPT);
        let newer = recent.keep_surface("s0", 2, Surface::of_person_texts(&["hi".into()]));
        assert!(
            recent.surface("s0", &1).is_none(),
            "the old stamp is not answered"
        );
        assert!(Arc::ptr_eq(&recent.surface("s0", &2).unwrap(), &newer));
        recent.keep_surface("new", 1, Surface::default());
        assert!(
            recent.surface("s0", &2).is_some(),
            "s0 was kept most recently"
        );
        assert!(
            recent.surface("s1", &1).is_none(),
            "s1 was the least recent"
        );
    }
}
