//! The reference host for the session-tools plugin: a wasmtime runtime that loads the
//! component with nothing but its two imports, an in-memory corpus behind them, and
//! counters of every host call. The CLI (`main.rs`) is a small layer over this.

pub mod cache;
pub mod corpus;
pub mod demo;
pub mod runtime;

pub use cache::LoadKind;
pub use corpus::{Corpus, CorpusHost, Delivery, HostFaults, HostStats, RefusalFile, Session};
pub use runtime::{
    CallError, CallOutcome, CallRequest, Limits, PLUGIN_WASM, Runtime, RuntimeOptions,
};
