//! The host kit for the session-tools plugin: a wasmtime runtime that loads any
//! component of the `plugin` world with nothing but its two imports, generic over the
//! harness that answers them. A harness implements [`SessionQuery`] and [`Inbox`] for
//! its own state and calls [`Runtime::call`]; [`CorpusHost`] is one such harness, over
//! an in-memory corpus, and [`ClaudeStore`] another, over Claude Code's own transcripts
//! with a durable inbox ([`inbox`], harness-neutral) that `host-shim claude-hook` drains.
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

pub mod cache;
pub mod claude;
pub mod codex;
pub mod contract;
pub mod corpus;
pub mod guard;
pub mod harness;
pub mod harnesses;
pub mod inbox;
pub mod logfile;
pub mod plugin;
pub mod policy;
pub mod presence;
pub mod private;
pub mod record;
pub mod runtime;
pub mod surface;

pub use cache::LoadKind;
pub use claude::{ClaudeStore, TranscriptReads, WakeCommand, presence::LocalPresence};
pub use codex::{CodexStore, RolloutReads};
pub use contract::CallRequest;
pub use contract::latest::{
    Answer, Delivered, DeliveryMode, DeliveryRefusal, DeliveryState, InboxCount, MessageContent,
    MessageEntry, Refusal, Role, SessionEntry, SessionHeader, SessionIndex, SurfaceIndex, Tool,
    ToolAnnotations, ToolSpec,
};
pub use corpus::{Corpus, CorpusHost, Message, ScriptedRefusal, Session};
pub use guard::{Delivery, HostBounds, HostStats, HostStop};
pub use harness::{Harness, Inbox, SessionQuery, Shared};
pub use harnesses::{Harnesses, McpClient, Store};
pub use inbox::{AnsweredKeys, InboxBackend, MemoryInbox, SharedInbox, StateDir};
pub use plugin::ContractVersion;
pub use policy::Policy;
pub use presence::Presence;
pub use runtime::{CallError, CallReport, ComponentShape, Limits, Runtime, RuntimeOptions};
