//! Which sessions run now and which are idle: what a harness knows of its sessions'
//! processes, behind one trait so it can come from where that harness keeps it (a
//! registry of pid files on one machine, a key-value bucket across machines). A store
//! reads liveness for its headers and deliveries; the harness's lifecycle (its MCP
//! server, its hooks) writes it.

mod local;

pub use local::{LiveRegistration, LocalPresence};

use anyhow::Result;
use std::collections::HashSet;

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
