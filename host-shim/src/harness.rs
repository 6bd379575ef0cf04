//! What a harness implements to serve the plugin: the WIT's two imported interfaces,
//! one method per WIT function, over the WIT's own types. The runtime calls these
//! during a tool call only, one call at a time per store.

use crate::bindings::{Delivered, DeliveryMode, DeliveryRefusal, ModelSurface, SessionHeader};

/// `session-query`: read-only questions about the harness's sessions. Nothing here may
/// wake, resume or charge a session.
pub trait SessionQuery {
    /// Every session the caller may see, in any order. Headers only.
    fn list_sessions(&mut self) -> Vec<SessionHeader>;
    /// One session's header, or `None` when no session has that id.
    fn get_session(&mut self, id: &str) -> Option<SessionHeader>;
    /// Titles for `ids`, one entry per id in the same order; `None` (or an empty
    /// string) when a session has no title or is unknown.
    fn title_snapshots(&mut self, ids: &[String]) -> Vec<Option<String>>;
    /// One session's current model surface, read without waking it.
    fn get_surface(&mut self, id: &str) -> Option<ModelSurface>;
}

/// `inbox`: delivery into a top-level session.
pub trait Inbox {
    /// Deliver `body` into `target`'s inbox exactly once or not at all. With
    /// `may_wake` false, refuse with `WouldNeedWake` rather than wake a cold target,
    /// checking and delivering atomically.
    fn deliver(
        &mut self,
        target: &str,
        body: &str,
        mode: DeliveryMode,
        may_wake: bool,
    ) -> Result<Delivered, DeliveryRefusal>;
}

/// A harness's state for one tool call: both interfaces, movable into the call's
/// store (and handed back after it).
pub trait Harness: SessionQuery + Inbox + Send + 'static {}

impl<T: SessionQuery + Inbox + Send + 'static> Harness for T {}
