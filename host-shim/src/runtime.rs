//! The wasmtime edge: one engine, linker and pre-instantiated component built once; a
//! fresh store per tool call, so nothing leaks from one call into the next. The host
//! imports are the two interfaces of the world and nothing else.

use crate::corpus::{Corpus, CorpusHost, Delivery, HostStats};
use anyhow::{Context, Result};
use session_tools::host as core;
use std::sync::Arc;
use wasmtime::component::{Component, HasSelf, Linker};
use wasmtime::{Config, Engine, Store};

wasmtime::component::bindgen!({
    path: "../wit",
    world: "plugin",
});

use exports::harness::sessions::tools::ToolSpec;
use harness::sessions::{inbox, session_query as query};

/// The plugin component built by this crate's build script.
pub const PLUGIN_WASM: &[u8] = include_bytes!(env!("PLUGIN_WASM"));

/// What one tool call produced.
#[derive(Clone, Debug)]
pub struct CallOutcome {
    /// The tool's text for the model (`Ok`, refusals included), or the plugin's error
    /// for the harness author (`Err`: invalid settings, disabled deployment).
    pub result: Result<String, String>,
    /// What the inbox accepted during the call.
    pub deliveries: Vec<Delivery>,
    /// Host calls the plugin made.
    pub stats: HostStats,
}

/// One tool call's inputs.
#[derive(Clone, Debug, Default)]
pub struct CallRequest {
    pub caller: String,
    pub settings: String,
    pub tool: String,
    pub arguments: String,
}

/// A loaded plugin, ready to serve calls from many threads.
pub struct Runtime {
    engine: Engine,
    pre: PluginPre<CorpusHost>,
}

impl Runtime {
    /// The embedded plugin.
    pub fn new() -> Result<Runtime> {
        Runtime::from_component(PLUGIN_WASM)
    }

    /// Any component built for the `plugin` world.
    pub fn from_component(bytes: &[u8]) -> Result<Runtime> {
        let engine = Engine::new(&Config::new())?;
        let component = Component::from_binary(&engine, bytes)
            .map_err(anyhow::Error::from)
            .context("loading the plugin component")?;
        let mut linker = Linker::new(&engine);
        Plugin::add_to_linker::<CorpusHost, HasSelf<CorpusHost>>(&mut linker, |host| host)?;
        let pre = PluginPre::new(linker.instantiate_pre(&component)?)?;
        Ok(Runtime { engine, pre })
    }

    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The catalog for the given settings JSON (`Err` inside: the plugin's error).
    pub fn catalog(&self, settings: &str) -> Result<Result<Vec<ToolSpec>, String>> {
        let mut store = Store::new(&self.engine, CorpusHost::new(Arc::new(Corpus::default())));
        let plugin = self.pre.instantiate(&mut store)?;
        Ok(plugin
            .harness_sessions_tools()
            .call_catalog(&mut store, settings)?)
    }

    /// Runs one tool call against `corpus` in a fresh store.
    pub fn call(&self, corpus: Arc<Corpus>, request: &CallRequest) -> Result<CallOutcome> {
        let mut store = Store::new(&self.engine, CorpusHost::new(corpus));
        let plugin = self.pre.instantiate(&mut store)?;
        let result = plugin
            .harness_sessions_tools()
            .call_call(
                &mut store,
                &request.caller,
                &request.settings,
                &request.tool,
                &request.arguments,
            )
            .map_err(anyhow::Error::from)
            .with_context(|| format!("the plugin failed while running {}", request.tool))?;
        let host = store.into_data();
        Ok(CallOutcome {
            result,
            deliveries: host.deliveries,
            stats: host.stats,
        })
    }
}

// The generated import traits, implemented by converting to and from the core's types.

fn header(h: core::SessionHeader) -> query::SessionHeader {
    query::SessionHeader {
        id: h.id,
        created_at_ms: h.created_at_ms,
        live: h.live,
        parent_id: h.parent_id,
        origin: h.origin,
        cwd: h.cwd,
        preset: h.preset,
    }
}

fn message(m: core::SurfaceMessage) -> query::SurfaceMessage {
    query::SurfaceMessage {
        seq: m.seq,
        role: match m.role {
            core::Role::User => query::Role::User,
            core::Role::Assistant => query::Role::Assistant,
            core::Role::System => query::Role::System,
        },
        source: m.source,
        replaced: m.replaced,
        parts: m
            .parts
            .into_iter()
            .map(|part| match part {
                core::ContentPart::Text(t) => query::ContentPart::Text(t),
                core::ContentPart::Reasoning(t) => query::ContentPart::Reasoning(t),
                core::ContentPart::ToolCall(t) => query::ContentPart::ToolCall(t),
                core::ContentPart::ToolOutput(t) => query::ContentPart::ToolOutput(t),
            })
            .collect(),
    }
}

impl query::Host for CorpusHost {
    fn list_sessions(&mut self) -> Vec<query::SessionHeader> {
        core::SessionQuery::list_sessions(self)
            .into_iter()
            .map(header)
            .collect()
    }

    fn get_session(&mut self, id: String) -> Option<query::SessionHeader> {
        core::SessionQuery::get_session(self, &id).map(header)
    }

    fn title_snapshots(&mut self, ids: Vec<String>) -> Vec<Option<String>> {
        core::SessionQuery::title_snapshots(self, &ids)
    }

    fn get_surface(&mut self, id: String) -> Option<query::ModelSurface> {
        core::SessionQuery::get_surface(self, &id).map(|surface| query::ModelSurface {
            messages: surface.messages.into_iter().map(message).collect(),
            captured_through_seq: surface.captured_through_seq,
        })
    }
}

impl inbox::Host for CorpusHost {
    fn deliver(
        &mut self,
        target: String,
        body: String,
        mode: inbox::DeliveryMode,
        may_wake: bool,
    ) -> Result<inbox::Delivered, inbox::DeliveryRefusal> {
        let mode = match mode {
            inbox::DeliveryMode::Queue => core::DeliveryMode::Queue,
            inbox::DeliveryMode::Steer => core::DeliveryMode::Steer,
        };
        match core::Inbox::deliver(self, &target, &body, mode, may_wake) {
            Ok(delivered) => Ok(inbox::Delivered {
                woke: delivered.woke,
            }),
            Err(core::DeliveryRefusal::NotFound) => Err(inbox::DeliveryRefusal::NotFound),
            Err(core::DeliveryRefusal::WouldNeedWake) => Err(inbox::DeliveryRefusal::WouldNeedWake),
            Err(core::DeliveryRefusal::Rejected(reason)) => {
                Err(inbox::DeliveryRefusal::Rejected(reason))
            }
        }
    }
}
