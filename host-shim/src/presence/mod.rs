//! Which sessions run now and which are idle: what a harness knows of its sessions'
//! processes, behind one trait so it can come from where that harness keeps it (a
//! registry of pid files on one machine, a key-value bucket across machines). A store
//! reads liveness for its headers and deliveries; the harness's lifecycle (its MCP
//! server, its hooks) writes it.

mod local;

pub use local::{LiveRegistration, LocalPresence};

use anyhow::Result;
use std::collections::HashSet;
use std::sync::Arc;

/// Liveness and idleness of a harness's sessions.
pub trait Presence: Send + Sync {
    /// The sessions a running process serves now.
    fn live_sessions(&self) -> HashSet<String>;

    /// Registers `session` as served by this process until the registration is
    /// dropped; a process that ends without dropping it reads as gone.
    fn register_live(&self, session: &str) -> Result<Registration>;

    /// Marks `session` idle (its last turn ended and nothing continued it) or at work.
    fn set_idle(&self, session: &str, idle: bool) -> Result<()>;

    /// Whether `session` is idle (see [`Presence::set_idle`]).
    fn is_idle(&self, session: &str) -> bool;
}

/// A live registration; dropping it ends it.
pub struct Registration(#[allow(dead_code)] Box<dyn Send + Sync>);

impl Registration {
    /// A registration that ends when `held` is dropped.
    pub fn new(held: impl Send + Sync + 'static) -> Registration {
        Registration(Box::new(held))
    }
}

impl std::fmt::Debug for Registration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Registration")
    }
}

/// Which sessions a presence says run, as a store asks it: at most once a call (the
/// call's first question asks, the rest of the call take that answer, so one listing's
/// headers agree), and anew outside a call.
pub struct LivePerCall {
    presence: Arc<dyn Presence>,
    in_call: bool,
    asked: Option<HashSet<String>>,
}

impl LivePerCall {
    pub fn new(presence: Arc<dyn Presence>) -> LivePerCall {
        LivePerCall {
            presence,
            in_call: false,
            asked: None,
        }
    }

    /// A call begins: its first question asks the presence.
    pub fn begin(&mut self) {
        self.in_call = true;
        self.asked = None;
    }

    /// The call ended: what it asked is forgotten.
    pub fn end(&mut self) {
        self.in_call = false;
        self.asked = None;
    }

    /// Whether `session` runs now.
    pub fn is_live(&mut self, session: &str) -> bool {
        if let Some(live) = &self.asked {
            return live.contains(session);
        }
        let live = self.presence.live_sessions();
        let is_live = live.contains(session);
        if self.in_call {
            self.asked = Some(live);
        }
        is_live
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// A presence that counts its questions; its live sessions are set by the test.
    #[derive(Default)]
    struct Counted {
        live: Mutex<HashSet<String>>,
        asked: Mutex<u32>,
    }

    impl Presence for Counted {
        fn live_sessions(&self) -> HashSet<String> {
            *self.asked.lock().unwrap() += 1;
            self.live.lock().unwrap().clone()
        }
        fn register_live(&self, session: &str) -> Result<Registration> {
            self.live.lock().unwrap().insert(session.to_string());
            Ok(Registration::new(()))
        }
        fn set_idle(&self, _: &str, _: bool) -> Result<()> {
            Ok(())
        }
        fn is_idle(&self, _: &str) -> bool {
            false
        }
    }

    #[test]
    fn a_call_asks_the_presence_once_and_outside_a_call_every_question_asks() {
        let presence = Arc::new(Counted::default());
        let _a = presence.register_live("a").unwrap();
        let mut live = LivePerCall::new(presence.clone());
        let asked = || *presence.asked.lock().unwrap();

        live.begin();
        assert!(live.is_live("a"));
        let _b = presence.register_live("b").unwrap();
        assert!(!live.is_live("b"), "the call keeps its first answer");
        assert_eq!(asked(), 1);
        live.end();

        assert!(live.is_live("b"));
        assert!(live.is_live("a"));
        assert_eq!(asked(), 3);

        live.begin();
        assert!(live.is_live("b"), "a new call asks again");
        assert_eq!(asked(), 4);
    }
}
