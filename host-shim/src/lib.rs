//! The host kit for the session-tools plugin: a wasmtime runtime that loads any
//! component of the `plugin` world with nothing but its two imports, generic over the
//! harness that answers them. A harness implements [`SessionQuery`] and [`Inbox`] for
//! its own state and calls [`Runtime::call`]; [`CorpusHost`] is one such harness, over
//! an in-memory corpus. Each real harness (Claude Code, Codex, OpenCode, Copilot CLI,
//! Gemini CLI, OpenClaw) is a crate of its own (`host-shim/harnesses/<name>/`), its store
//! written with this kit's public toolkit ([`harnesses`], [`inbox`], [`call_stamp`],
//! [`os`]), with a durable inbox ([`inbox`]) its hooks hand over.
//!
//! The kit has no command line, MCP or async runtime in it and no build script: a
//! harness passes it the plugin's bytes (its plugin folder's, or the product plugin's
//! from `host-shim-plugin`). The `host-shim` command (`host-shim/cli`) sits beside it.
//!
//! ```no_run
//! use host_shim::{CallRequest, Corpus, CorpusHost, Runtime, RuntimeOptions};
//! use std::sync::Arc;
//!
//! let plugin = std::fs::read("plugin.wasm")?;
//! let runtime: Runtime<CorpusHost> = Runtime::with_options(&plugin, &RuntimeOptions::default())?;
//! let harness = CorpusHost::new(Arc::new(Corpus::demo()));
//! let request = CallRequest {
//!     caller: "session-3f2a9c10-5b7e-4d21-9a0e-6c8b1d2e4f70".into(),
//!     tool: "sessions_list".into(),
//!     arguments: r#"{"scope": "all"}"#.into(),
//!     ..CallRequest::default()
//! };
//! let report = runtime.call(harness, &request);
//! println!("{}", report.answer?.text);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Where the kit grows, each by adding files:
//!
//! - a harness: a [`Store`] in a crate of its own, listed with the others in
//!   [`Harnesses`]; what it adds to the one delivery path is its [`inbox::Recipient`],
//!   which makes it an [`Inbox`];
//! - an inbox on another engine: an [`InboxBackend`] ([`inbox`]), and liveness from
//!   elsewhere: a [`Presence`];
//! - a contract version: its module in [`contract`], the guard's answers to its imports
//!   in [`guard`], and one row of the table in [`plugin`].

// The documented API: these modules, and the items re-exported below.
pub mod call_stamp;
pub mod contract;
pub mod guard;
pub mod harnesses;
pub mod inbox;
pub mod json;
pub mod plugin;
pub mod presence;
pub mod record;
pub mod runtime;

pub mod call_memo;
pub mod os;

// Internals.
mod harness;

pub use contract::CallRequest;
pub use contract::latest::{
    Answer, Delivered, DeliveryMode, DeliveryRefusal, DeliveryState, InboxCount, MessageContent,
    MessageEntry, Refusal, Role, SessionEntry, SessionHeader, SessionIndex, SurfaceIndex, Tool,
    ToolAnnotations, ToolSpec, WriteCheck,
};
pub use guard::{Delivery, HostBounds, HostStats, HostStop};
pub use harness::{Harness, HistoryAsk, Inbox, SessionQuery, Shared};
pub use harnesses::corpus::{Corpus, CorpusHost, Message, ScriptedRefusal, Session};
pub use harnesses::plugin_session;
pub use harnesses::{Harnesses, McpClient, StampCarrier, StampedCalls, Store};
pub use inbox::delivery::DeliveryRequest;
pub use inbox::{AnsweredKeys, InboxBackend, MemoryInbox, SharedInbox, StateDir, WakeCommand};
pub use plugin::ContractVersion;
pub use presence::{LocalPresence, Presence};
pub use runtime::cache::LoadKind;
pub use runtime::policy::Policy;
pub use runtime::{CallError, CallReport, ComponentShape, Limits, Runtime, RuntimeOptions};
