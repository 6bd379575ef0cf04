//! What a harness plugin of session-tools (OpenCode's, OpenClaw's) asks of the host
//! besides tool calls. The plugin runs inside every process of its harness, sees each
//! session that process runs (its events say when a session is busy or idle) and holds
//! one `host-shim mcp` child for the process; through it, for each session:
//!
//! - [`PluginSessions::open`]: the session runs in this process: live (registered in
//!   the presence until the child ends), busy or idle;
//! - [`PluginSessions::hand_over`]: what waits for the session now, as text for the
//!   plugin to give it: at a person's prompt everything (the plugin adds it to the
//!   prompt), to an idle session everything (a new turn), to a busy one the `steer`
//!   messages (OpenCode gives a message sent into a running turn to the model's next
//!   request);
//! - [`PluginSessions::wait`]: blocks until something waits that a hand-over would
//!   take now, so the plugin hands over at once without polling.
//!
//! Trust model: the plugin is code the person installed into the harness and speaks
//! for the sessions the harness names to it; the child trusts it as it trusts any MCP client
//! that names its caller. A message leaves the inbox only once its text is in the
//! answer the child writes to the plugin, as a hook's does ([`crate::inbox`]).

use crate::inbox::{OFFERS_EXPIRE_AFTER, SharedInbox, Takes, Witness, hand_over_waiting};
use crate::presence::{Presence, Registration};
use anyhow::Result;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The most text one hand-over carries (as for the other harnesses' hooks).
pub const ANSWER_CHARS: usize = 10_000;

/// How often [`PluginSessions::wait`] looks at the inbox.
pub const WATCH_EVERY: Duration = Duration::from_millis(200);

/// The longest one [`PluginSessions::wait`] blocks.
pub const LONGEST_WAIT: Duration = Duration::from_secs(60);

/// When a hand-over happens, which says what it takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Moment {
    /// A person's prompt is about to reach the model: everything.
    Prompt,
    /// The session is idle: everything, as a new turn.
    Idle,
    /// The session is at work: the `steer` messages, for its next request.
    Busy,
}

impl Moment {
    fn takes(self) -> Takes {
        match self {
            Moment::Prompt | Moment::Idle => Takes::All,
            Moment::Busy => Takes::Steer,
        }
    }
}

/// Reads what a harness's record shows handed over to a session: the record's place
/// and the session.
pub type RecordReader = fn(&Path, &str) -> Result<crate::inbox::Shown>;

/// The sessions one harness process runs, as its plugin reports them.
pub struct PluginSessions {
    inbox: SharedInbox,
    presence: Arc<dyn Presence>,
    /// The harness's record (OpenCode's database), whose messages witness each
    /// hand-over, and its reader (none: the answer does).
    record: Option<(PathBuf, RecordReader)>,
    /// The moments whose hand-over the record does not keep: the answer witnesses it.
    unrecorded: Vec<Moment>,
    registered: Mutex<HashMap<String, Registration>>,
    /// The plugin went away: waits end, nothing is registered any more.
    closed: AtomicBool,
}

impl PluginSessions {
    pub fn new(inbox: SharedInbox, presence: Arc<dyn Presence>) -> PluginSessions {
        PluginSessions {
            inbox,
            presence,
            record: None,
            unrecorded: Vec::new(),
            registered: Mutex::default(),
            closed: AtomicBool::new(false),
        }
    }

    /// A hand-over is an offer until the harness's record at `place`, read by `read`,
    /// shows the message in the session (OpenCode's database).
    pub fn recorded_in(mut self, place: &Path, read: RecordReader) -> PluginSessions {
        self.record = Some((place.to_path_buf(), read));
        self
    }

    /// A hand-over at one of `moments` leaves no mark in the record (OpenClaw keeps the
    /// turn its plugin starts for an idle session, not a prompt hook's text): the answer
    /// witnesses it; the record still settles the offers made at the other moments.
    pub fn unrecorded_at(mut self, moments: &[Moment]) -> PluginSessions {
        self.unrecorded = moments.to_vec();
        self
    }

    /// The plugin's process ended (its connection closed): its sessions are no longer
    /// live, and every wait ends.
    pub fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        self.registered
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }

    /// `session` runs in this process, busy or idle: live until this process ends.
    pub fn open(&self, session: &str, busy: bool) -> Result<()> {
        crate::inbox::checked_id(session).map_err(anyhow::Error::msg)?;
        if self.closed.load(Ordering::SeqCst) {
            anyhow::bail!("the plugin's connection is closed");
        }
        let mut registered = self
            .registered
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if !registered.contains_key(session) {
            let registration = self.presence.register_live(session)?;
            registered.insert(session.to_string(), registration);
        }
        self.presence.set_idle(session, !busy)
    }

    /// The sessions registered by this process.
    pub fn open_sessions(&self) -> Vec<String> {
        let registered = self
            .registered
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        registered.keys().cloned().collect()
    }

    /// Takes what waits for `session` at this moment, as the text to give it (`None`
    /// when nothing does, or its person holds its inbound).
    pub fn hand_over(&self, session: &str, moment: Moment) -> Result<Option<String>> {
        crate::inbox::checked_id(session).map_err(anyhow::Error::msg)?;
        let mut given = None;
        let witness = match &self.record {
            Some((place, read)) if self.unrecorded.contains(&moment) => {
                Witness::AnswerBesideRecord(Box::new(move |_: &[String]| read(place, session)))
            }
            Some((place, read)) => {
                Witness::Record(Box::new(move |_: &[String]| read(place, session)))
            }
            None => Witness::Answer,
        };
        hand_over_waiting(
            &*self.inbox,
            session,
            moment.takes(),
            ANSWER_CHARS,
            witness,
            |text: &str| {
                given = Some(text.to_string());
                Ok(())
            },
        )?;
        Ok(given)
    }

    /// Whether a hand-over at `moment` would take something for `session` now.
    fn would_take(&self, session: &str, moment: Moment) -> bool {
        if crate::inbox::checked_id(session).is_err() {
            return false;
        }
        if self.inbox.inbound(session).ok() == Some(crate::contract::latest::InboundPolicy::Hold) {
            return false;
        }
        // An offer past its time that the record does not show waits again here, so
        // the plugin is woken to give it again.
        if let Some((place, read)) = &self.record {
            let _ =
                (self.inbox).settle(session, OFFERS_EXPIRE_AFTER, &mut |_| read(place, session));
        }
        let Ok(contents) = self.inbox.waiting(session) else {
            return false;
        };
        match moment.takes() {
            Takes::Steer => (contents.messages.iter())
                .any(|w| w.message.mode == crate::contract::latest::DeliveryMode::Steer),
            _ => !contents.messages.is_empty(),
        }
    }

    /// Blocks until a hand-over would take something for one of `sessions` (each with
    /// its moment now), `within` passes (at most [`LONGEST_WAIT`]) or `interrupted`
    /// says stop; answers the sessions that have something.
    pub fn wait(
        &self,
        sessions: &[(String, Moment)],
        within: Duration,
        interrupted: &dyn Fn() -> bool,
    ) -> Vec<String> {
        let until = Instant::now() + within.min(LONGEST_WAIT);
        loop {
            let ready: Vec<String> = (sessions.iter())
                .filter(|(session, moment)| self.would_take(session, *moment))
                .map(|(session, _)| session.clone())
                .collect();
            let now = Instant::now();
            let closed = self.closed.load(Ordering::SeqCst);
            if !ready.is_empty() || now >= until || interrupted() || closed {
                return ready;
            }
            std::thread::sleep(WATCH_EVERY.min(until - now));
        }
    }
}
