//! What a harness implements to serve the plugin: the WIT's imported interfaces
//! (`harness:sessions@0.6.0`; `claims` is the inbox's, [`Inbox::claims_inbox`]), one
//! method per WIT function, over the WIT's own types.
//! The runtime calls these during a tool call only, one call at a time per store. A
//! plugin built against an older contract is served over the same methods.

use crate::contract::latest::{
    Delivered, DeliveryRefusal, InboxCount, MessageContent, SendCounts, SessionHeader,
    SessionIndex, SurfaceIndex, ToolAction,
};
use crate::inbox::SharedInbox;
use crate::inbox::delivery::{self, DeliveryRequest, Recipient};

/// `session-query`: read-only questions about the harness's sessions. Nothing here may
/// wake, resume or charge a session.
/// What `send-history` asks (the WIT function's arguments, as one value so a sender
/// and a target are never swapped): `sender`'s sends within the last
/// `window_minutes`, those to `target` apart, the newest `limit` times of each, and
/// whether `key` was accepted before (in any window).
#[derive(Clone, Copy, Debug)]
pub struct HistoryAsk<'a> {
    pub sender: &'a str,
    pub target: &'a str,
    pub window_minutes: u32,
    pub limit: u32,
    pub key: &'a str,
}

pub trait SessionQuery {
    /// Not a WIT function: called as each tool call begins (a
    /// [`crate::guard::Guard`] is made per call), with the calling session from the
    /// host's call context (empty for a catalog), so a harness can answer one call
    /// from one state, as the WIT asks, and knows whose a delivery is when the call
    /// has no id. Nothing by default.
    fn begin_call(&mut self, _caller: &str) {}
    /// Not a WIT function: called as the call ends ([`crate::guard::Guard::into_harness`]);
    /// the harness looks afresh from then on. Nothing by default.
    fn end_call(&mut self) {}
    /// Every session the caller may see, as one index: the ids as one text, one small
    /// entry per session.
    fn list_sessions(&mut self) -> SessionIndex;
    /// One session's header, or `None` when no session has that id.
    fn get_session(&mut self, id: &str) -> Option<SessionHeader>;
    /// Headers for `ids`, one entry per id in the same order; `None` for an unknown id.
    fn get_sessions(&mut self, ids: &[String]) -> Vec<Option<SessionHeader>>;
    /// Titles for `ids`, one entry per id in the same order; `None` (or an empty
    /// string) when a session has no title or is unknown.
    fn title_snapshots(&mut self, ids: &[String]) -> Vec<Option<String>>;
    /// One session's current model surface as an index with leads of at most
    /// `lead_chars` chars, read without waking it.
    fn get_surface(&mut self, id: &str, lead_chars: u32) -> Option<SurfaceIndex>;
    /// Whole messages of one session's surface by seq, one entry per seq in the same
    /// order; `None` when the session or the message is gone.
    fn get_messages(&mut self, id: &str, seqs: &[u64]) -> Vec<Option<MessageContent>>;
    /// How many of the messages `sender` sent to `target` wait in its inbox and how
    /// many were handed over (accepted deliveries, repeats not counted); both zero
    /// when the harness knows of none.
    fn inbox_status(&mut self, target: &str, sender: &str) -> InboxCount;
    /// The seqs of one session's surface messages that made tool calls (any order;
    /// empty for an unknown session). By default none.
    fn action_seqs(&mut self, _id: &str) -> Vec<u64> {
        Vec::new()
    }
    /// The tool calls of whole messages of one session's surface by seq, one entry per
    /// seq in the same order, each in the order the message made them; empty for a
    /// message that made none or is gone. Never a tool's output. By default none: a
    /// harness that does not read tool calls shows none.
    fn get_actions(&mut self, _id: &str, seqs: &[u64]) -> Vec<Vec<ToolAction>> {
        vec![Vec::new(); seqs.len()]
    }
    /// The sender's accepted messages within the asked window, counted from what the
    /// harness's inbox holds, with the times of the newest `limit` of each count, and
    /// whether the key was accepted already ([`HistoryAsk`]). By default none (the
    /// harness's clock only): a harness that keeps no record of what it accepted caps
    /// nothing.
    fn send_history(&mut self, _ask: &HistoryAsk) -> SendCounts {
        SendCounts::none_now()
    }
    /// Not a WIT function: asked by the host after each question, why the harness
    /// could not answer the last one (a session on another machine whose host did not
    /// answer), taken once. The host then ends the call with that sentence for the
    /// model to read, instead of answering as if the session were not there. `None` by
    /// default: every answer is the harness's.
    fn unanswered(&mut self) -> Option<String> {
        None
    }
}

/// `inbox`: delivery into a top-level session.
pub trait Inbox {
    /// Deliver `body` into `target`'s inbox exactly once or not at all. With
    /// `may_wake` false, refuse with `WouldNeedWake` rather than wake a cold target,
    /// checking and delivering atomically. At most once per non-empty `key`: a repeat
    /// gets the first answer (`repeat` set on an acceptance). `ids` are the ids the
    /// body's frame carries, kept with the message so a reply can be found (empty for
    /// a plugin built before 0.4.0). A target whose person holds inbound keeps the
    /// message `Held`; one whose person refuses it gets `RefusedByTarget`.
    fn deliver(&mut self, request: &DeliveryRequest) -> Result<Delivered, DeliveryRefusal>;

    /// Not a WIT function: the inbox a reply to the caller arrives in, for a send
    /// that awaits it (`answer.await-reply`); the runtime polls it without holding
    /// the harness. `None` (the default): the harness cannot wait, and the send's
    /// answer says no reply came.
    fn reply_inbox(&mut self) -> Option<SharedInbox> {
        None
    }

    /// Not a WIT function: a message for `target`, stored by another process in the
    /// shared inbox under `handle` (another machine's call, through a cluster), waits
    /// there now: do with it at once what this harness does with a message it
    /// delivered itself (hand it over to an idle session, start a wake command when
    /// `may_wake`), by its own rules (what the target's person lets in), and say where
    /// it is. `None` (the default): no session here is `target`, the message no longer
    /// waits, or it waits for the harness's next hand-over.
    fn arrived(&mut self, _target: &str, _handle: &str, _may_wake: bool) -> Option<Delivered> {
        None
    }

    /// Not a WIT function: the inbox whose claims this harness's sessions share
    /// (contract 0.6.0's `claims`, kept beside the messages: every process and machine
    /// sharing the inbox shares the claims). `None` (the default): the harness keeps
    /// none, and a claim is answered as unavailable.
    fn claims_inbox(&mut self) -> Option<SharedInbox> {
        None
    }
}

/// Every store that says what its harness adds to the delivery path (a [`Recipient`])
/// delivers through that one path.
impl<R: Recipient> Inbox for R {
    fn deliver(&mut self, request: &DeliveryRequest) -> Result<Delivered, DeliveryRefusal> {
        delivery::deliver(self, request)
    }

    fn reply_inbox(&mut self) -> Option<SharedInbox> {
        self.inbox_for_replies()
    }

    fn arrived(&mut self, target: &str, handle: &str, may_wake: bool) -> Option<Delivered> {
        delivery::arrived(self, target, handle, may_wake)
    }

    fn claims_inbox(&mut self) -> Option<SharedInbox> {
        Some(self.desk().inbox().clone())
    }
}

/// A harness's state for one tool call: both interfaces, movable into the call's
/// store (and handed back after it).
pub trait Harness: SessionQuery + Inbox + Send + 'static {}

impl<T: SessionQuery + Inbox + Send + 'static> Harness for T {}

/// One harness state shared by calls that run at once (an MCP server's): each call
/// gets a clone of the handle, and every method locks the state for its own duration,
/// so calls interleave at host-call granularity and see each other's deliveries.
pub struct Shared<H>(std::sync::Arc<std::sync::Mutex<H>>);

impl<H> Shared<H> {
    pub fn new(harness: H) -> Shared<H> {
        Shared(std::sync::Arc::new(std::sync::Mutex::new(harness)))
    }

    /// The state, locked (a call that panicked while holding it leaves it as it was).
    pub fn lock(&self) -> std::sync::MutexGuard<'_, H> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl<H> Clone for Shared<H> {
    fn clone(&self) -> Shared<H> {
        Shared(self.0.clone())
    }
}

impl<H: SessionQuery> SessionQuery for Shared<H> {
    fn begin_call(&mut self, caller: &str) {
        self.lock().begin_call(caller)
    }
    fn end_call(&mut self) {
        self.lock().end_call()
    }
    fn list_sessions(&mut self) -> SessionIndex {
        self.lock().list_sessions()
    }
    fn get_session(&mut self, id: &str) -> Option<SessionHeader> {
        self.lock().get_session(id)
    }
    fn get_sessions(&mut self, ids: &[String]) -> Vec<Option<SessionHeader>> {
        self.lock().get_sessions(ids)
    }
    fn title_snapshots(&mut self, ids: &[String]) -> Vec<Option<String>> {
        self.lock().title_snapshots(ids)
    }
    fn get_surface(&mut self, id: &str, lead_chars: u32) -> Option<SurfaceIndex> {
        self.lock().get_surface(id, lead_chars)
    }
    fn get_messages(&mut self, id: &str, seqs: &[u64]) -> Vec<Option<MessageContent>> {
        self.lock().get_messages(id, seqs)
    }
    fn inbox_status(&mut self, target: &str, sender: &str) -> InboxCount {
        self.lock().inbox_status(target, sender)
    }
    fn action_seqs(&mut self, id: &str) -> Vec<u64> {
        self.lock().action_seqs(id)
    }
    fn get_actions(&mut self, id: &str, seqs: &[u64]) -> Vec<Vec<ToolAction>> {
        self.lock().get_actions(id, seqs)
    }
    fn send_history(&mut self, ask: &HistoryAsk) -> SendCounts {
        self.lock().send_history(ask)
    }
    fn unanswered(&mut self) -> Option<String> {
        self.lock().unanswered()
    }
}

impl<H: Inbox> Inbox for Shared<H> {
    fn deliver(&mut self, request: &DeliveryRequest) -> Result<Delivered, DeliveryRefusal> {
        self.lock().deliver(request)
    }
    fn reply_inbox(&mut self) -> Option<SharedInbox> {
        self.lock().reply_inbox()
    }
    fn arrived(&mut self, target: &str, handle: &str, may_wake: bool) -> Option<Delivered> {
        self.lock().arrived(target, handle, may_wake)
    }
    fn claims_inbox(&mut self) -> Option<SharedInbox> {
        self.lock().claims_inbox()
    }
}
