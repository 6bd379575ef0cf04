//! The wasmtime edge: one engine, linker and pre-instantiated component built once; a
//! fresh store per tool call, so nothing leaks from one call into the next. The linker
//! holds the world's two interfaces and nothing else; only a plugin that imports WASI
//! (built for wasm32-wasip2) also gets a deny-all WASI, with the `wasi` feature.
//!
//! A [`Runtime`] is generic over the harness: any state that implements
//! [`crate::SessionQuery`] and [`crate::Inbox`] serves the plugin. Every call runs under
//! [`Limits`] (a deadline enforced by epoch interruption, a cap on the plugin's linear
//! memory, a cap on the returned text) and [`HostBounds`] (what the plugin may make the
//! host do). A call past any of them ends with a [`CallError`] that says which, the
//! [`CallReport`] still says what the host did during it, and the runtime serves the
//! next call as before.

pub mod cache;
pub(crate) mod policy;

use crate::contract::CallRequest;
use crate::contract::latest::{Answer, Tool, WriteCheck};
use crate::guard::{Delivery, Guard, HostBounds, HostStats, HostStop};
use crate::harness::Harness;
use crate::plugin::ContractVersion;
use crate::plugin::PluginPre;
use anyhow::{Context, bail};
use cache::LoadKind;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use wasmtime::component::{Component, Linker};
use wasmtime::{
    Config, Enabled, Engine, InstanceAllocationStrategy, PoolConcurrencyLimitError,
    PoolingAllocationConfig, ResourceLimiter, Store, Trap,
};

/// Bytes of each pooled linear memory kept resident between calls.
const KEEP_RESIDENT: usize = 1 << 20;

/// How often the ticker advances the engine's epoch: the granularity of deadlines.
const EPOCH_TICK: Duration = Duration::from_millis(5);

/// The longest deadline honoured as given (about 174 years); longer ones are clamped
/// to it, so the epoch arithmetic cannot overflow.
const MAX_DEADLINE_TICKS: u64 = 1 << 40;

/// A 32-bit plugin cannot address more.
const MAX_MEMORY_BYTES: usize = 4 << 30;

/// Per-call limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Wall-clock time a call may run, host functions included (the epoch ticks by the
    /// wall clock; the plugin is stopped at its next check after the deadline).
    pub deadline: Duration,
    /// Bytes of linear memory the plugin may hold (at most 4 GiB).
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

impl Limits {
    /// Refuses limits no call could run under, with the reason.
    pub fn check(&self) -> anyhow::Result<()> {
        if self.deadline.is_zero() {
            bail!("the deadline must be longer than zero");
        }
        if self.memory_bytes < 2 << 20 {
            bail!(
                "the memory limit must be at least 2 MiB (the plugin starts with about 1.2 MiB); got {} bytes",
                self.memory_bytes
            );
        }
        if self.memory_bytes > MAX_MEMORY_BYTES {
            bail!(
                "the memory limit must be at most 4 GiB (a 32-bit plugin cannot use more); got {} bytes",
                self.memory_bytes
            );
        }
        if self.output_bytes == 0 {
            bail!("the output limit must be at least one byte");
        }
        Ok(())
    }

    fn deadline_ticks(&self) -> u64 {
        let ticks = self.deadline.as_micros().div_ceil(EPOCH_TICK.as_micros());
        u64::try_from(ticks)
            .unwrap_or(u64::MAX)
            .clamp(1, MAX_DEADLINE_TICKS)
    }
}

/// How a runtime is built.
#[derive(Clone, Debug)]
pub struct RuntimeOptions {
    pub limits: Limits,
    pub bounds: HostBounds,
    /// Pre-allocate instance slots and reuse them (copy-on-write memory images), for
    /// cheap instantiation. Falls back to on-demand allocation where the pool cannot
    /// be reserved.
    pub pooling: bool,
    /// Calls that may run at once with pooling; one more is refused with
    /// [`CallError::Busy`] until one ends.
    pub max_concurrent_calls: u32,
    /// Keep the compiled component here (see [`crate::runtime::cache`]); `None` compiles on
    /// every load.
    pub cache_dir: Option<PathBuf>,
    /// Keep wasmtime's Spectre hardening: guard pages, signal-based traps and
    /// speculation guards on every bounds check. Turning it off spares a plugin that
    /// grows its memory in a call the `mprotect` of its slot between calls (about 5 µs a
    /// call; this project's plugin grows none in a small call, so it gains little) and
    /// keeps every limit, but a plugin could then read the host's memory through a
    /// speculative side channel: only for plugins the harness trusts as much as itself.
    pub spectre_mitigations: bool,
}

impl Default for RuntimeOptions {
    fn default() -> Self {
        RuntimeOptions {
            limits: Limits::default(),
            bounds: HostBounds::default(),
            pooling: true,
            max_concurrent_calls: 64,
            cache_dir: None,
            spectre_mitigations: true,
        }
    }
}

impl RuntimeOptions {
    /// Refuses options no call could run under, with the reason.
    pub fn check(&self) -> Result<(), LoadError> {
        self.limits
            .check()
            .map_err(|err| LoadError::Policy(format!("invalid limits: {err}")))?;
        if self.max_concurrent_calls == 0 {
            return Err(LoadError::Policy(
                "invalid limits: max_concurrent_calls must be at least 1 (no call could run with 0)"
                    .to_string(),
            ));
        }
        if self.bounds.id_bytes < 256 {
            return Err(LoadError::Policy(format!(
                "invalid limits: id_bytes must be at least 256 (a shorter limit stops calls about ordinary sessions); got {}",
                self.bounds.id_bytes
            )));
        }
        Ok(())
    }
}

/// Why a plugin could not be loaded, or a policy used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadError {
    /// Limits, bounds or a policy file no call could run under.
    Policy(String),
    /// The engine could not be configured (the cause).
    Engine(String),
    /// The bytes are not a component wasmtime can load (the cause).
    NotAComponent(String),
    /// The component needs imports besides the world's two (named).
    ForeignImports(Vec<String>),
    /// The component exports no contract version's `tools` (its exports).
    NotAPlugin { exports: Vec<String> },
    /// The component imports WASI and this build has no `wasi` feature (the imports).
    WasiWithoutFeature(Vec<String>),
    /// Linking the imports failed (the cause).
    Link(String),
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Policy(why) => write!(f, "{why}"),
            LoadError::Engine(why) => write!(f, "the engine could not be set up: {why}"),
            LoadError::NotAComponent(why) => write!(f, "loading the plugin component: {why}"),
            LoadError::ForeignImports(names) => write!(
                f,
                "the plugin needs imports other than session-query and inbox: {}",
                names.join(", ")
            ),
            LoadError::NotAPlugin { exports } => write!(
                f,
                "the component is not a session-tools plugin: it exports none of harness:sessions/tools@0.3.0, @0.2.0 or @0.1.0 (it exports: {})",
                if exports.is_empty() {
                    "nothing".to_string()
                } else {
                    exports.join(", ")
                }
            ),
            LoadError::WasiWithoutFeature(names) => write!(
                f,
                "the plugin imports WASI ({}); this host-shim was built without its `wasi` feature, which gives such a plugin a deny-all WASI",
                names.join(", ")
            ),
            LoadError::Link(why) => write!(
                f,
                "the plugin needs imports other than session-query and inbox: {why}"
            ),
        }
    }
}

impl std::error::Error for LoadError {}

/// A failed call: the host stopped the plugin, could not run it, or the plugin
/// refused the call. Tool refusals are not errors; they are the answer's text.
#[derive(Debug)]
pub enum CallError {
    /// The call ran past its deadline and was interrupted.
    Deadline(Duration),
    /// The plugin tried to grow its memory past the cap.
    Memory { limit: usize, asked: usize },
    /// The plugin returned more text than the cap.
    Output { limit: usize, size: usize },
    /// The plugin's error text was longer than the output cap.
    ErrorText { limit: usize, size: usize },
    /// The plugin's catalog (names, descriptions, schemas, titles) was larger than the
    /// output cap.
    Catalog { limit: usize, size: usize },
    /// The host ended the call at one of its bounds.
    HostBound(HostStop),
    /// Every pooled instance slot is in use; try again when a call ends.
    Busy { limit: u32 },
    /// The plugin trapped: a bug in the plugin.
    Trap(Trap),
    /// The plugin refused the call (its `err`: invalid settings, a disabled
    /// deployment), for the harness author.
    Refused(String),
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
            CallError::ErrorText { limit, size } => write!(
                f,
                "the plugin returned an error of {size} bytes, past the output limit of {limit} bytes"
            ),
            CallError::Catalog { limit, size } => write!(
                f,
                "the plugin's catalog is {size} bytes, past the output limit of {limit} bytes; it was not served"
            ),
            CallError::HostBound(stop) => write!(f, "{stop}"),
            CallError::Busy { limit } => write!(
                f,
                "the host is serving {limit} calls already (its limit); this call was not started, try again when one ends"
            ),
            CallError::Trap(trap) => write!(
                f,
                "the plugin trapped ({trap}); this is a bug in the plugin"
            ),
            CallError::Refused(message) => write!(f, "{message}"),
            CallError::Plugin(err) => write!(f, "the plugin failed: {}", one_line(err)),
        }
    }
}

impl std::error::Error for CallError {}

/// An error chain as one line that names the cause: wasmtime puts "error while
/// executing at wasm backtrace:" and the frames first, and the cause (a trap, fuel
/// for host calls run out) last; the backtrace is left out.
fn one_line(err: &anyhow::Error) -> String {
    let parts: Vec<String> = err
        .chain()
        .map(|cause| {
            let text = cause.to_string();
            text.lines().next().unwrap_or_default().trim().to_string()
        })
        .filter(|line| {
            !line.is_empty() && !line.starts_with("error while executing at wasm backtrace")
        })
        .collect();
    match parts.is_empty() {
        true => format!("{err}")
            .lines()
            .next()
            .unwrap_or_default()
            .to_string(),
        false => parts.join(": "),
    }
}

/// What one tool call produced, whether the plugin answered or was stopped: nothing the
/// host did during the call goes unreported.
pub struct CallReport<H> {
    /// The tool's answer for the model (refusals included, with their code from a
    /// 0.2.0 plugin), or why there is none.
    pub answer: Result<Answer, CallError>,
    /// What the inbox accepted during the call, in order, even when the call failed
    /// afterwards.
    pub deliveries: Vec<Delivery>,
    /// Host calls the plugin made.
    pub stats: HostStats,
    /// The largest linear memory the plugin held during the call, in bytes.
    pub peak_memory_bytes: usize,
    /// The harness state, handed back.
    pub harness: H,
}

/// A store's data: the guarded host for this call and its memory accounting.
struct CallState<H> {
    guard: Guard<H>,
    memory_limit: usize,
    peak_memory: usize,
    denied_growth: Option<usize>,
    /// The deny-all WASI of a plugin that imports WASI, made on first use.
    #[cfg(feature = "wasi")]
    wasi: Option<(wasmtime_wasi::WasiCtx, wasmtime::component::ResourceTable)>,
}

/// A WASI that grants nothing: no preopened directories, no environment variables, no
/// arguments, no network (no TCP, UDP or name lookup), stdin empty and stdout and
/// stderr discarded. Clocks and randomness stay.
#[cfg(feature = "wasi")]
fn deny_all_wasi() -> (wasmtime_wasi::WasiCtx, wasmtime::component::ResourceTable) {
    let ctx = wasmtime_wasi::WasiCtxBuilder::new()
        .allow_tcp(false)
        .allow_udp(false)
        .allow_ip_name_lookup(false)
        .build();
    (ctx, wasmtime::component::ResourceTable::new())
}

#[cfg(feature = "wasi")]
impl<H: Send> wasmtime_wasi::WasiView for CallState<H> {
    fn ctx(&mut self) -> wasmtime_wasi::WasiCtxView<'_> {
        let (ctx, table) = self.wasi.get_or_insert_with(deny_all_wasi);
        wasmtime_wasi::WasiCtxView { ctx, table }
    }
}

impl<H: Send> ResourceLimiter for CallState<H> {
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
    fn start(engine: Engine) -> anyhow::Result<EpochTicker> {
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
            .context("starting the epoch ticker thread")?;
        Ok(EpochTicker {
            stop,
            thread: Some(thread),
        })
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

/// What one instantiation of a component takes from the pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ComponentShape {
    pub core_instances: u32,
    pub memories: u32,
    pub tables: u32,
}

impl ComponentShape {
    /// Reads the shape from a component's binary: each core instantiation takes an
    /// instance slot and the memories and tables its module defines. A component that
    /// cannot be read this way gets a generous guess (the compile that follows reports
    /// what is wrong with it).
    pub fn of(component: &[u8]) -> ComponentShape {
        ComponentShape::read(component).unwrap_or(ComponentShape {
            core_instances: 16,
            memories: 16,
            tables: 16,
        })
    }

    fn read(component: &[u8]) -> Option<ComponentShape> {
        use wasmparser::{Encoding, Instance, Parser, Payload};
        // Per component being read (nested ones have their own module index space):
        // the memories and tables each of its modules defines.
        let mut components: Vec<Vec<(u32, u32)>> = Vec::new();
        let mut module: Option<(u32, u32)> = None;
        let mut shape = ComponentShape {
            core_instances: 0,
            memories: 0,
            tables: 0,
        };
        for payload in Parser::new(0).parse_all(component) {
            match payload.ok()? {
                Payload::Version { encoding, .. } => match encoding {
                    Encoding::Module => module = Some((0, 0)),
                    Encoding::Component => components.push(Vec::new()),
                },
                Payload::MemorySection(reader) => module.as_mut()?.0 += reader.count(),
                Payload::TableSection(reader) => module.as_mut()?.1 += reader.count(),
                Payload::End(_) => match module.take() {
                    Some(done) => components.last_mut()?.push(done),
                    None => {
                        components.pop()?;
                    }
                },
                Payload::InstanceSection(reader) => {
                    let modules = components.last()?;
                    for instance in reader {
                        if let Instance::Instantiate { module_index, .. } = instance.ok()? {
                            let (memories, tables) = *modules.get(module_index as usize)?;
                            shape.core_instances += 1;
                            shape.memories += memories;
                            shape.tables += tables;
                        }
                    }
                }
                _ => {}
            }
        }
        Some(shape)
    }
}

fn engine_config(options: &RuntimeOptions, pool: Option<ComponentShape>) -> Config {
    let mut config = Config::new();
    config.epoch_interruption(true);
    // A pooled slot's memory and the pool's limit on it: room above the cap, so that
    // the limiter, not the pool, refuses growth.
    let slot_bytes = options
        .limits
        .memory_bytes
        .saturating_mul(2)
        .min(MAX_MEMORY_BYTES);
    if !options.spectre_mitigations {
        // No guard pages and no signal handlers: every access is bounds-checked in
        // code, so a slot needs no `mprotect` or `madvise` between calls. Wasmtime
        // requires the speculation guards on those checks off in this mode.
        config.signals_based_traps(false);
        config.memory_guard_size(0);
        config.memory_reservation(slot_bytes as u64);
        // SAFETY: these flags only drop the speculation guards, which is what this
        // option says it does.
        unsafe {
            config.cranelift_flag_set("enable_heap_access_spectre_mitigation", "false");
            config.cranelift_flag_set("enable_table_access_spectre_mitigation", "false");
        }
    }
    if let Some(shape) = pool {
        let mut pooling = PoolingAllocationConfig::default();
        let slots = options.max_concurrent_calls.max(1);
        let per = |n: u32| n.max(1);
        pooling
            .total_component_instances(slots)
            .total_core_instances(slots.saturating_mul(per(shape.core_instances)))
            .total_memories(slots.saturating_mul(per(shape.memories)))
            .total_tables(slots.saturating_mul(per(shape.tables)))
            .max_core_instances_per_component(per(shape.core_instances))
            .max_memories_per_component(per(shape.memories))
            .max_tables_per_component(per(shape.tables))
            .max_memory_size(slot_bytes)
            // Reset a slot's first pages with memset and keep them mapped: the next
            // call then takes no page faults on its stack and first allocations.
            // Linux's PAGEMAP_SCAN (6.7 and later) finds the pages a call dirtied, so
            // only those are reset; elsewhere every kept page is.
            .linear_memory_keep_resident(KEEP_RESIDENT)
            .table_keep_resident(64 << 10)
            .pagemap_scan(Enabled::Auto);
        config.allocation_strategy(InstanceAllocationStrategy::Pooling(pooling));
    }
    config
}

/// A loaded plugin, ready to serve calls from many threads, each over its own harness
/// state of type `H`.
pub struct Runtime<H: Harness> {
    engine: Engine,
    pre: PluginPre<CallState<H>>,
    options: RuntimeOptions,
    /// Every key delivered under, across calls (see [`crate::guard::KeyLedger`]).
    keys: std::sync::Arc<std::sync::Mutex<crate::guard::KeyLedger>>,
    load_kind: LoadKind,
    wasi_imports: Vec<String>,
    _ticker: EpochTicker,
}

impl<H: Harness> Runtime<H> {
    /// Any component built for the `plugin` world, with default options.
    pub fn from_component(bytes: &[u8]) -> Result<Runtime<H>, LoadError> {
        Runtime::with_options(bytes, &RuntimeOptions::default())
    }

    pub fn with_options(bytes: &[u8], options: &RuntimeOptions) -> Result<Runtime<H>, LoadError> {
        options.check()?;
        let shape = options.pooling.then(|| ComponentShape::of(bytes));
        let engine = match Engine::new(&engine_config(options, shape)) {
            Ok(engine) => engine,
            // A machine that cannot reserve the pool still runs calls, on demand.
            Err(_) if shape.is_some() => Engine::new(&engine_config(options, None))
                .map_err(|err| LoadError::Engine(one_line(&err.into())))?,
            Err(err) => return Err(LoadError::Engine(one_line(&err.into()))),
        };
        let loaded = match &options.cache_dir {
            Some(dir) => cache::load(&engine, bytes, dir),
            None => Component::from_binary(&engine, bytes)
                .map(|component| (component, LoadKind::Compiled))
                .map_err(anyhow::Error::from),
        };
        let (component, load_kind) =
            loaded.map_err(|err| LoadError::NotAComponent(one_line(&err)))?;
        // Only the world's two interfaces (and, with the `wasi` feature, WASI) are
        // linked: name anything else before trying to link it.
        let foreign: Vec<String> = component
            .component_type()
            .imports(&engine)
            .map(|(name, _)| name.to_string())
            .filter(|name| !name.starts_with("harness:sessions/") && !name.starts_with("wasi:"))
            .collect();
        if !foreign.is_empty() {
            return Err(LoadError::ForeignImports(foreign));
        }
        let exports: Vec<String> = component
            .component_type()
            .exports(&engine)
            .map(|(name, _)| name.to_string())
            .collect();
        let Some(version) = ContractVersion::exported_by(exports.iter().map(String::as_str)) else {
            return Err(LoadError::NotAPlugin { exports });
        };
        let mut linker = Linker::new(&engine);
        fn guard<H: Harness>(state: &mut CallState<H>) -> &mut Guard<H> {
            &mut state.guard
        }
        let link = |err: wasmtime::Error| LoadError::Link(one_line(&err.into()));
        crate::plugin::add_to_linker(&mut linker, version, guard::<H>).map_err(link)?;
        // A plugin from a stock toolchain (wasm32-wasip2) imports WASI as well.
        let wasi_imports: Vec<String> = component
            .component_type()
            .imports(&engine)
            .map(|(name, _)| name.to_string())
            .filter(|name| name.starts_with("wasi:"))
            .collect();
        if !wasi_imports.is_empty() {
            #[cfg(feature = "wasi")]
            wasmtime_wasi::p2::add_to_linker_sync(&mut linker).map_err(link)?;
            #[cfg(not(feature = "wasi"))]
            return Err(LoadError::WasiWithoutFeature(wasi_imports));
        }
        let instance_pre = linker.instantiate_pre(&component).map_err(link)?;
        let pre = PluginPre::new(version, instance_pre).map_err(link)?;
        let ticker =
            EpochTicker::start(engine.clone()).map_err(|err| LoadError::Engine(one_line(&err)))?;
        Ok(Runtime {
            engine,
            pre,
            options: options.clone(),
            load_kind,
            wasi_imports,
            keys: std::sync::Arc::default(),
            _ticker: ticker,
        })
    }

    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The contract version the loaded plugin was built against.
    pub fn contract_version(&self) -> ContractVersion {
        self.pre.version()
    }

    pub fn limits(&self) -> Limits {
        self.options.limits
    }

    /// Whether loading compiled the component or took it from the cache.
    pub fn load_kind(&self) -> LoadKind {
        self.load_kind
    }

    /// The WASI interfaces the plugin imports, each answered by a deny-all WASI (empty
    /// for a plugin that imports only the world, as ours does).
    pub fn wasi_imports(&self) -> &[String] {
        &self.wasi_imports
    }

    fn store(&self, harness: H, caller: &str) -> Store<CallState<H>> {
        let limits = self.options.limits;
        let mut store = Store::new(
            &self.engine,
            CallState {
                guard: Guard::new(
                    harness,
                    caller,
                    self.keys.clone(),
                    self.options.bounds,
                    limits.memory_bytes,
                ),
                memory_limit: limits.memory_bytes,
                peak_memory: 0,
                denied_growth: None,
                #[cfg(feature = "wasi")]
                wasi: None,
            },
        );
        store.limiter(|state| state);
        store.set_epoch_deadline(limits.deadline_ticks());
        store
    }

    /// Names what stopped a call, from the error and the store's accounting.
    fn failure(&self, state: &CallState<H>, err: wasmtime::Error) -> CallError {
        if let Some(stop) = &state.guard.stopped {
            return CallError::HostBound(stop.clone());
        }
        if let Some(asked) = state.denied_growth {
            return CallError::Memory {
                limit: self.options.limits.memory_bytes,
                asked,
            };
        }
        if err.downcast_ref::<PoolConcurrencyLimitError>().is_some() {
            return CallError::Busy {
                limit: self.options.max_concurrent_calls,
            };
        }
        match err.downcast_ref::<Trap>() {
            Some(Trap::Interrupt) => CallError::Deadline(self.options.limits.deadline),
            Some(trap) => CallError::Trap(*trap),
            None => CallError::Plugin(err.into()),
        }
    }

    /// The plugin's own error text, under the output cap like any text it returns.
    fn refused(&self, message: String) -> CallError {
        let limit = self.options.limits.output_bytes;
        if message.len() > limit {
            return CallError::ErrorText {
                limit,
                size: message.len(),
            };
        }
        CallError::Refused(message)
    }

    fn checked(&self, answer: Result<Answer, String>) -> Result<Answer, CallError> {
        let answer = answer.map_err(|message| self.refused(message))?;
        if answer.text.len() > self.options.limits.output_bytes {
            return Err(CallError::Output {
                limit: self.options.limits.output_bytes,
                size: answer.text.len(),
            });
        }
        Ok(answer)
    }

    /// The catalog for the given settings JSON, served over `harness` (which the
    /// catalog never calls).
    pub fn catalog_with(&self, harness: H, settings: &str) -> Result<Vec<Tool>, CallError> {
        let mut store = self.store(harness, "");
        let result = self.pre.catalog(&mut store, settings);
        let tools = match result {
            Ok(tools) => tools.map_err(|message| self.refused(message))?,
            Err(err) => return Err(self.failure(store.data(), err)),
        };
        // The catalog reaches the model (MCP tools/list): under the output cap too.
        let limit = self.options.limits.output_bytes;
        let size = tools.iter().fold(0usize, |total, tool| {
            total
                .saturating_add(tool.name.len())
                .saturating_add(tool.description.len())
                .saturating_add(tool.input_schema.len())
                .saturating_add(tool.annotations.as_ref().map_or(0, |a| a.title.len()))
        });
        if size > limit {
            return Err(CallError::Catalog { limit, size });
        }
        Ok(tools)
    }

    /// Runs one tool call over `harness` in a fresh store.
    pub fn call(&self, harness: H, request: &CallRequest) -> CallReport<H> {
        self.in_fresh_store(harness, request, |pre, store| pre.call(store, request))
    }

    /// Runs one export in a fresh store over `harness` and reports what it answered
    /// and what the host did meanwhile.
    fn in_fresh_store(
        &self,
        harness: H,
        request: &CallRequest,
        export: impl FnOnce(
            &PluginPre<CallState<H>>,
            &mut Store<CallState<H>>,
        ) -> wasmtime::Result<Result<Answer, String>>,
    ) -> CallReport<H> {
        let mut store = self.store(harness, &request.caller);
        let answer = match export(&self.pre, &mut store) {
            Ok(answer) => self.checked(answer),
            Err(err) => Err(self.failure(store.data(), err)),
        };
        let mut state = store.into_data();
        CallReport {
            answer,
            deliveries: std::mem::take(&mut state.guard.deliveries),
            stats: state.guard.stats,
            peak_memory_bytes: state.peak_memory,
            harness: state.guard.into_harness(),
        }
    }
}

impl<H: Harness> Runtime<H> {
    /// Whether session `caller` may write `paths` now (`tools.check-write`), asked by a
    /// harness's pre-tool hook before a file-writing tool runs, over `harness` in a
    /// fresh store: `Refused` carries what the model reads instead of the write. A
    /// plugin before contract 0.6.0 makes no claims: every write is allowed. The error
    /// is the call's as for [`Runtime::call`] (a host bound, a trap, the plugin's
    /// settings error); the harness then lets the write through and may say why.
    pub fn check_write(
        &self,
        harness: H,
        caller: &str,
        settings: &str,
        paths: &[String],
    ) -> (Result<WriteCheck, CallError>, H) {
        let mut store = self.store(harness, caller);
        let answer = match self.pre.check_write(&mut store, caller, settings, paths) {
            Ok(answer) => answer.map_err(|message| self.refused(message)),
            Err(err) => Err(self.failure(store.data(), err)),
        };
        let state = store.into_data();
        (answer, state.guard.into_harness())
    }

    /// The end of a send whose answer asked to await its reply
    /// ([`Answer::await_reply`]), in a fresh store: `reply` is the body the host took
    /// for the caller, none when none came. An answer that asked nothing comes back
    /// as it is.
    pub fn reply_awaited(
        &self,
        harness: H,
        request: &CallRequest,
        accepted: &Answer,
        reply: Option<&str>,
    ) -> CallReport<H> {
        self.in_fresh_store(harness, request, |pre, store| {
            pre.reply_awaited(store, request, accepted, reply)
        })
    }

    /// [`Runtime::call`], and when its answer asks to await a reply, the wait and the
    /// answer with the reply: the harness's reply inbox ([`crate::Inbox::reply_inbox`])
    /// is polled ([`crate::inbox::await_reply`]) holding no plugin instance and no lock
    /// of the harness, until the reply comes, the wait's seconds pass, or `interrupted`
    /// says the call was interrupted. A harness with no reply inbox gets the answer
    /// that no reply came at once. The deliveries and host calls of both steps are
    /// reported together.
    pub fn call_awaiting(
        &self,
        harness: H,
        request: &CallRequest,
        interrupted: &dyn Fn() -> bool,
    ) -> CallReport<H> {
        let first = self.call(harness, request);
        let wait = match &first.answer {
            Ok(answer) => answer.await_reply.clone(),
            Err(_) => None,
        };
        let (Some(mut wait), Ok(accepted)) = (wait, &first.answer) else {
            return first;
        };
        // No longer than the host allows, whatever the plugin asked.
        wait.seconds = wait.seconds.min(self.options.bounds.await_seconds);
        let accepted = accepted.clone();
        let mut harness = first.harness;
        let reply = match harness.reply_inbox() {
            Some(inbox) => crate::inbox::await_reply(&*inbox, &request.caller, &wait, interrupted)
                .unwrap_or_else(|err| {
                    eprintln!("host-shim: the wait for a reply stopped: {err:#}");
                    None
                }),
            None => None,
        };
        let body = reply.as_ref().map(|message| message.body.as_str());
        let accepted = Answer {
            await_reply: Some(wait),
            ..accepted
        };
        let mut last = self.reply_awaited(harness, request, &accepted, body);
        let mut deliveries = first.deliveries;
        deliveries.append(&mut last.deliveries);
        last.deliveries = deliveries;
        last.stats = first.stats;
        last.peak_memory_bytes = last.peak_memory_bytes.max(first.peak_memory_bytes);
        last
    }
}

impl<H: Harness + Default> Runtime<H> {
    /// [`Runtime::catalog_with`] over an empty harness.
    pub fn catalog(&self, settings: &str) -> Result<Vec<Tool>, CallError> {
        self.catalog_with(H::default(), settings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plugin_takes_three_core_instances_one_memory_and_its_tables() {
        let shape = ComponentShape::of(host_shim_plugin::PLUGIN_WASM);
        assert_eq!(shape.core_instances, 3);
        assert_eq!(shape.memories, 1);
        assert!(shape.tables >= 1, "{shape:?}");
    }

    #[test]
    fn a_failure_is_one_line_that_names_its_cause() {
        let err = anyhow::Error::msg(
            "too much data is being copied: fuel allocated for hostcalls has been exhausted",
        )
        .context(
            "error while executing at wasm backtrace:\n    0: 0x1234 - plugin!call\n    1: 0x5678",
        );
        assert_eq!(
            CallError::Plugin(err).to_string(),
            "the plugin failed: too much data is being copied: fuel allocated for hostcalls has been exhausted"
        );
        let plain = anyhow::Error::msg("instantiation failed\nmore detail");
        assert_eq!(
            CallError::Plugin(plain).to_string(),
            "the plugin failed: instantiation failed"
        );
    }

    #[test]
    fn limits_are_checked_and_deadlines_clamped() {
        assert!(Limits::default().check().is_ok());
        let zero = Limits {
            deadline: Duration::ZERO,
            ..Limits::default()
        };
        assert!(zero.check().unwrap_err().to_string().contains("deadline"));
        let huge = Limits {
            memory_bytes: usize::MAX,
            ..Limits::default()
        };
        assert!(huge.check().unwrap_err().to_string().contains("4 GiB"));
        let forever = Limits {
            deadline: Duration::MAX,
            ..Limits::default()
        };
        assert_eq!(forever.deadline_ticks(), MAX_DEADLINE_TICKS);
        let short = Limits {
            deadline: Duration::from_nanos(1),
            ..Limits::default()
        };
        assert_eq!(short.deadline_ticks(), 1);
    }
}
