//! The wasmtime edge: one engine, linker and pre-instantiated component built once; a
//! fresh store per tool call, so nothing leaks from one call into the next. The host
//! imports are the two interfaces of the world and nothing else.
//!
//! Every call runs under limits: a deadline enforced by epoch interruption (a ticker
//! thread advances the engine's epoch), a cap on the guest's linear memory, and a cap
//! on the returned text. A call past any of them ends with a [`CallError`] that says
//! which, and the runtime serves the next call as before.

use crate::cache::{self, LoadKind};
use crate::corpus::{Corpus, CorpusHost, Delivery, HostFaults, HostStats};
use anyhow::Context;
use session_tools::host as core;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use wasmtime::component::{Component, HasSelf, Linker};
use wasmtime::{
    Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig, ResourceLimiter, Store,
    Trap,
};

wasmtime::component::bindgen!({
    path: "../wit",
    world: "plugin",
});

use exports::harness::sessions::tools::ToolSpec;
use harness::sessions::{inbox, session_query as query};

/// The plugin component built by this crate's build script.
pub const PLUGIN_WASM: &[u8] = include_bytes!(env!("PLUGIN_WASM"));

/// Bytes of each pooled linear memory kept resident between calls.
const KEEP_RESIDENT: usize = 1 << 20;

/// How often the ticker advances the engine's epoch: the granularity of deadlines.
const EPOCH_TICK: Duration = Duration::from_millis(5);

/// Per-call limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Wall-clock time a call may run inside the plugin.
    pub deadline: Duration,
    /// Bytes of linear memory the plugin may hold.
    pub memory_bytes: usize,
    /// Bytes of text a call may return.
    pub output_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            deadline: Duration::from_secs(1),
            memory_bytes: 64 << 20,
            output_bytes: 1 << 20,
        }
    }
}

/// How a runtime is built.
#[derive(Clone, Debug)]
pub struct RuntimeOptions {
    pub limits: Limits,
    /// Pre-allocate instance slots and reuse them (copy-on-write memory images), for
    /// cheap instantiation. Falls back to on-demand allocation where the pool cannot
    /// be reserved.
    pub pooling: bool,
    /// Calls that may run at once with pooling (slots in the pool).
    pub max_concurrent_calls: u32,
    /// Keep the compiled component here (see [`crate::cache`]); `None` compiles on
    /// every load.
    pub cache_dir: Option<std::path::PathBuf>,
}

impl Default for RuntimeOptions {
    fn default() -> Self {
        RuntimeOptions {
            limits: Limits::default(),
            pooling: true,
            max_concurrent_calls: 64,
            cache_dir: None,
        }
    }
}

/// A failed call: the host stopped the plugin or could not run it. Tool refusals are
/// not errors; they are text in [`CallOutcome::result`].
#[derive(Debug)]
pub enum CallError {
    /// The call ran past its deadline and was interrupted.
    Deadline(Duration),
    /// The plugin tried to grow its memory past the cap.
    Memory { limit: usize, asked: usize },
    /// The plugin returned more text than the cap.
    Output { limit: usize, size: usize },
    /// The plugin trapped: a bug in the plugin.
    Trap(Trap),
    /// Instantiation or the call failed for another reason.
    Plugin(anyhow::Error),
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CallError::Deadline(limit) => write!(
                f,
                "the plugin ran past its {} ms deadline and was stopped",
                limit.as_millis()
            ),
            CallError::Memory { limit, asked } => write!(
                f,
                "the plugin tried to grow its memory to {asked} bytes, past its limit of {limit} bytes, and was stopped"
            ),
            CallError::Output { limit, size } => write!(
                f,
                "the plugin returned {size} bytes of text, past the output limit of {limit} bytes"
            ),
            CallError::Trap(trap) => write!(
                f,
                "the plugin trapped ({trap}); this is a bug in the plugin"
            ),
            // The first line only: a backtrace would not fit a one-line report.
            CallError::Plugin(err) => write!(
                f,
                "the plugin failed: {}",
                format!("{err:#}").lines().next().unwrap_or_default()
            ),
        }
    }
}

impl std::error::Error for CallError {}

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
    /// The largest linear memory the plugin held during the call, in bytes.
    pub peak_memory_bytes: usize,
}

/// One tool call's inputs.
#[derive(Clone, Debug, Default)]
pub struct CallRequest {
    pub caller: String,
    pub settings: String,
    pub tool: String,
    pub arguments: String,
    /// Misbehaviours of the host to simulate (tests of the plugin's robustness).
    pub faults: HostFaults,
}

/// A store's data: the host for this call and its memory accounting.
pub struct CallState {
    host: CorpusHost,
    memory_limit: usize,
    peak_memory: usize,
    denied_growth: Option<usize>,
}

impl ResourceLimiter for CallState {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.memory_limit {
            self.denied_growth = Some(desired);
            return Ok(false);
        }
        self.peak_memory = self.peak_memory.max(desired);
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= 100_000)
    }
}

/// Advances the engine's epoch until dropped.
struct EpochTicker {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl EpochTicker {
    fn start(engine: Engine) -> EpochTicker {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("host-shim-epoch".into())
            .spawn(move || {
                // Ticks follow the wall clock, not the count of sleeps, so a late wake-up
                // on a loaded machine does not stretch deadlines.
                let started = Instant::now();
                let mut ticks: u128 = 0;
                while !flag.load(Ordering::Relaxed) {
                    std::thread::sleep(EPOCH_TICK);
                    let due = started.elapsed().as_micros() / EPOCH_TICK.as_micros();
                    while ticks < due {
                        engine.increment_epoch();
                        ticks += 1;
                    }
                }
            })
            .expect("spawning the epoch ticker thread");
        EpochTicker {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for EpochTicker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// A loaded plugin, ready to serve calls from many threads.
pub struct Runtime {
    engine: Engine,
    pre: PluginPre<CallState>,
    limits: Limits,
    load_kind: LoadKind,
    _ticker: EpochTicker,
}

fn engine_config(options: &RuntimeOptions, pooling: bool) -> Config {
    let mut config = Config::new();
    config.epoch_interruption(true);
    if pooling {
        let mut pool = PoolingAllocationConfig::default();
        let slots = options.max_concurrent_calls.max(1);
        pool.total_component_instances(slots)
            .total_core_instances(slots * 2)
            .total_memories(slots * 2)
            .total_tables(slots * 2)
            // Room above the cap so that the limiter, not the pool, refuses growth.
            .max_memory_size(options.limits.memory_bytes.saturating_mul(2))
            // Reset a slot's first pages with memset and keep them mapped: the next
            // call then takes no page faults on its stack and first allocations.
            .linear_memory_keep_resident(KEEP_RESIDENT)
            .table_keep_resident(64 << 10);
        config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    }
    config
}

impl Runtime {
    /// The embedded plugin with default options.
    pub fn new() -> anyhow::Result<Runtime> {
        Runtime::with_options(PLUGIN_WASM, &RuntimeOptions::default())
    }

    /// Any component built for the `plugin` world, with default options.
    pub fn from_component(bytes: &[u8]) -> anyhow::Result<Runtime> {
        Runtime::with_options(bytes, &RuntimeOptions::default())
    }

    pub fn with_options(bytes: &[u8], options: &RuntimeOptions) -> anyhow::Result<Runtime> {
        let engine = match Engine::new(&engine_config(options, options.pooling)) {
            Ok(engine) => engine,
            // A machine that cannot reserve the pool still runs calls, on demand.
            Err(_) if options.pooling => Engine::new(&engine_config(options, false))?,
            Err(err) => return Err(err.into()),
        };
        let (component, load_kind) = match &options.cache_dir {
            Some(dir) => cache::load(&engine, bytes, dir)?,
            None => (
                Component::from_binary(&engine, bytes)
                    .map_err(anyhow::Error::from)
                    .context("loading the plugin component")?,
                LoadKind::Compiled,
            ),
        };
        Runtime::from_parts(engine, component, options.limits, load_kind)
    }

    fn from_parts(
        engine: Engine,
        component: Component,
        limits: Limits,
        load_kind: LoadKind,
    ) -> anyhow::Result<Runtime> {
        let mut linker = Linker::new(&engine);
        Plugin::add_to_linker::<CallState, HasSelf<CorpusHost>>(&mut linker, |state| {
            &mut state.host
        })?;
        let pre = PluginPre::new(
            linker
                .instantiate_pre(&component)
                .map_err(anyhow::Error::from)
                .context("the plugin needs imports other than session-query and inbox")?,
        )?;
        let ticker = EpochTicker::start(engine.clone());
        Ok(Runtime {
            engine,
            pre,
            limits,
            load_kind,
            _ticker: ticker,
        })
    }

    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Whether loading compiled the component or took it from the cache.
    pub fn load_kind(&self) -> LoadKind {
        self.load_kind
    }

    fn store(&self, host: CorpusHost) -> Store<CallState> {
        let mut store = Store::new(
            &self.engine,
            CallState {
                host,
                memory_limit: self.limits.memory_bytes,
                peak_memory: 0,
                denied_growth: None,
            },
        );
        store.limiter(|state| state);
        let ticks = self
            .limits
            .deadline
            .as_micros()
            .div_ceil(EPOCH_TICK.as_micros());
        store.set_epoch_deadline(u64::try_from(ticks).unwrap_or(u64::MAX).max(1));
        store
    }

    /// Names what stopped a call, from the trap and the store's accounting.
    fn failure(&self, store: &Store<CallState>, err: wasmtime::Error) -> CallError {
        if let Some(asked) = store.data().denied_growth {
            return CallError::Memory {
                limit: self.limits.memory_bytes,
                asked,
            };
        }
        match err.downcast_ref::<Trap>() {
            Some(Trap::Interrupt) => CallError::Deadline(self.limits.deadline),
            Some(trap) => CallError::Trap(*trap),
            None => CallError::Plugin(err.into()),
        }
    }

    fn check_output(&self, text: &Result<String, String>) -> Result<(), CallError> {
        let size = match text {
            Ok(text) | Err(text) => text.len(),
        };
        if size > self.limits.output_bytes {
            return Err(CallError::Output {
                limit: self.limits.output_bytes,
                size,
            });
        }
        Ok(())
    }

    /// The catalog for the given settings JSON (`Err` inside: the plugin's error).
    pub fn catalog(&self, settings: &str) -> Result<Result<Vec<ToolSpec>, String>, CallError> {
        let mut store = self.store(CorpusHost::new(Arc::new(Corpus::default())));
        let result = self.pre.instantiate(&mut store).and_then(|plugin| {
            plugin
                .harness_sessions_tools()
                .call_catalog(&mut store, settings)
        });
        result.map_err(|err| self.failure(&store, err))
    }

    /// Runs one tool call against `corpus` in a fresh store.
    pub fn call(
        &self,
        corpus: Arc<Corpus>,
        request: &CallRequest,
    ) -> Result<CallOutcome, CallError> {
        let mut host = CorpusHost::new(corpus);
        host.faults = request.faults;
        let mut store = self.store(host);
        let result = self.pre.instantiate(&mut store).and_then(|plugin| {
            plugin.harness_sessions_tools().call_call(
                &mut store,
                &request.caller,
                &request.settings,
                &request.tool,
                &request.arguments,
            )
        });
        let result = result.map_err(|err| self.failure(&store, err))?;
        self.check_output(&result)?;
        let state = store.into_data();
        Ok(CallOutcome {
            result,
            deliveries: state.host.deliveries,
            stats: state.host.stats,
            peak_memory_bytes: state.peak_memory,
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
                core::ContentPart::Reasoning => query::ContentPart::Reasoning,
                core::ContentPart::ToolCall => query::ContentPart::ToolCall,
                core::ContentPart::ToolOutput => query::ContentPart::ToolOutput,
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
