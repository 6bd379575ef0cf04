//! The reference host for the session-tools plugin: a wasmtime runtime that loads any
//! component of the `plugin` world with nothing but its two imports, generic over the
//! harness that answers them. A harness implements [`SessionQuery`] and [`Inbox`] for
//! its own state and calls [`Runtime::call`]; [`CorpusHost`] is one such harness, over
//! an in-memory corpus, and [`ClaudeStore`] another, over Claude Code's own transcripts
//! with a durable inbox spool ([`spool`]) that `host-shim claude-hook` drains. The CLI
//! (`main.rs`) is a small layer over this.
//!
//! ```no_run
//! use host_shim::{CallRequest, Corpus, CorpusHost, Runtime};
//! use std::sync::Arc;
//!
//! let runtime: Runtime<CorpusHost> = Runtime::new()?;
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

pub mod bindings;
pub mod cache;
pub mod claude;
pub mod corpus;
pub mod demo;
pub mod guard;
pub mod harness;
pub mod mcp;
pub mod record;
pub mod runtime;
pub mod spool;
pub mod v0_1_0;

pub use bindings::{
    Answer, ContractVersion, Delivered, DeliveryMode, DeliveryRefusal, MessageContent,
    MessageEntry, Refusal, Role, SessionEntry, SessionHeader, SessionIndex, SurfaceIndex, ToolSpec,
};
pub use cache::LoadKind;
pub use claude::{ClaudeStore, TranscriptReads, WakeCommand};
pub use corpus::{Corpus, CorpusHost, Message, ScriptedRefusal, Session};
pub use guard::{Delivery, HostBounds, HostStats, HostStop};
pub use harness::{AnsweredKeys, Harness, Inbox, SessionQuery, Shared};
pub use runtime::{
    CallError, CallReport, CallRequest, ComponentShape, Limits, PLUGIN_WASM, Runtime,
    RuntimeOptions,
};
pub use spool::StateDir;
