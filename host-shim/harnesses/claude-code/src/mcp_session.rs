//! What an MCP server serving a Claude Code session does besides answering calls (any
//! MCP server: `host-shim mcp`, or an embedder's own): registers its session live once
//! Claude Code has written the session's transcript, hands messages to the session
//! while it is open and idle through Claude Code's messaging socket (`idle.rs`),
//! and tells a subagent's calls from its session's (Claude Code starts one server per
//! session, and a subagent's calls reach it with the session's id).
//!
//! Trust model: as [`host_shim::presence::LocalPresence`] and `idle.rs`: the registration is this
//! process's own, cleared when the session ends (dropped, or a signal); the messaging
//! socket and its token come from this process's environment only.

use super::ClaudeStore;
use super::idle::{MessagingSocket, watch};
use host_shim::Shared;
use host_shim::harnesses::Harnesses;
use host_shim::presence::Registration;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// A harness with Claude Code's sessions in it: the Claude store, alone or in a list.
pub trait ClaudeSide {
    /// The Claude store, if this harness has one.
    fn claude(&mut self) -> Option<&mut ClaudeStore>;
}

impl ClaudeSide for ClaudeStore {
    fn claude(&mut self) -> Option<&mut ClaudeStore> {
        Some(self)
    }
}

impl ClaudeSide for Harnesses {
    fn claude(&mut self) -> Option<&mut ClaudeStore> {
        self.find_mut()
    }
}

/// A served Claude Code session: its registration lasts as long as this value.
pub struct ClaudeSession {
    registration: Arc<Mutex<Option<Registration>>>,
}

impl ClaudeSession {
    /// Starts serving `caller` (Claude Code's `CLAUDE_CODE_SESSION_ID`) over `harness`:
    /// the session is live in the store's own answers at once and registered with the
    /// store's presence as soon as its transcript exists (a resumed session at once, a
    /// new one once its first prompt is written; a probe such as `claude mcp list`, a
    /// session id with no transcript stopped within a second, registers nothing); an
    /// interactive session's idle watcher starts when Claude Code handed this process
    /// its messaging socket. A harness without a Claude store, or no caller, starts
    /// nothing.
    pub fn start<H: ClaudeSide + Send + 'static>(
        harness: &Shared<H>,
        caller: Option<&str>,
    ) -> ClaudeSession {
        let session = ClaudeSession {
            registration: Arc::default(),
        };
        let Some(id) = caller.map(str::to_string) else {
            return session;
        };
        let watched = {
            let mut harness = harness.lock();
            let Some(claude) = harness.claude() else {
                return session;
            };
            claude.set_serving(Some(id.clone()));
            let projects = claude.projects().to_path_buf();
            (claude.inbox().clone(), claude.presence().clone(), projects)
        };
        if !try_register(harness, &id, &session.registration) {
            let (harness, registration) = (harness.clone(), session.registration.clone());
            let id = id.clone();
            std::thread::spawn(move || register_when_seen(&harness, &id, &registration));
        }
        // An open, idle interactive session gets its messages through Claude Code's
        // messaging socket, without waiting for its person.
        if let Some(socket) = MessagingSocket::from_env() {
            let (inbox, presence, projects) = watched;
            std::thread::spawn(move || watch(inbox, presence, id, socket, projects));
        }
        session
    }

    /// Whether the session is registered live now.
    pub fn registered(&self) -> bool {
        (self.registration.lock())
            .unwrap_or_else(PoisonError::into_inner)
            .is_some()
    }
}

impl Drop for ClaudeSession {
    fn drop(&mut self) {
        (self.registration.lock())
            .unwrap_or_else(PoisonError::into_inner)
            .take();
    }
}

/// The subagent that made a call, when its transcript holds the call's tool-use id;
/// `None` for the session's own calls, or a harness without a Claude store. Claude
/// Code writes that record as the call starts, so a call found in no transcript yet
/// (the first call of a new session can come before its transcript does, on a busy
/// machine) is looked for again for up to three seconds, without holding the harness;
/// the call is then answered as the session's own, its transcript perhaps not listed.
pub fn subagent_of_call<H: ClaudeSide>(
    harness: &Shared<H>,
    caller: &str,
    call_id: &str,
) -> Option<String> {
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let found = harness.lock().claude()?.maker_of_call(caller, call_id);
        if let Some(maker) = found {
            return maker;
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Registers the caller as live once Claude Code has written its transcript, looking
/// again less and less often.
fn register_when_seen<H: ClaudeSide>(
    harness: &Shared<H>,
    id: &str,
    registration: &Mutex<Option<Registration>>,
) {
    let mut wait = Duration::from_millis(100);
    while !try_register(harness, id, registration) {
        std::thread::sleep(wait);
        wait = (wait * 2).min(Duration::from_secs(2));
    }
}

/// Registers `id` when its transcript exists; whether it did (or gave up trying).
fn try_register<H: ClaudeSide>(
    harness: &Shared<H>,
    id: &str,
    registration: &Mutex<Option<Registration>>,
) -> bool {
    let mut harness = harness.lock();
    let Some(claude) = harness.claude() else {
        return true;
    };
    if !claude.knows(id) {
        return false;
    }
    match claude.presence().register_live(id) {
        Ok(live) => *registration.lock().unwrap_or_else(PoisonError::into_inner) = Some(live),
        // The caller reads cold to other servers; the tools still work.
        Err(err) => eprintln!("host-shim mcp: {id} will read cold: {err:#}"),
    }
    true
}
