//! `host-shim`: run the session-tools plugin from the command line. A thin layer over
//! the library: parse flags, read files, print what the plugin said.

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};
mod demo;
mod mcp;

use host_shim::{
    CallError, CallRequest, ClaudeStore, Corpus, CorpusHost, Delivery, Harness, LocalPresence,
    Presence, Runtime, RuntimeOptions, Shared, SharedInbox, StateDir, WakeCommand,
};
use host_shim_plugin::PLUGIN_WASM;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

#[derive(Parser)]
#[command(
    name = "host-shim",
    version,
    about = "Run the session-tools plugin under wasmtime over an in-memory corpus or Claude Code's own sessions"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Compile the plugin on every start instead of keeping it compiled on disk.
    #[arg(long, global = true)]
    no_cache: bool,
    /// Where to keep the compiled plugin (default: $XDG_CACHE_HOME/session-tools or
    /// ~/.cache/session-tools).
    #[arg(long, global = true)]
    cache_dir: Option<PathBuf>,
}

impl Cli {
    fn cache_dir(&self) -> Option<PathBuf> {
        if self.no_cache {
            return None;
        }
        self.cache_dir
            .clone()
            .or_else(host_shim::cache::default_dir)
    }
}

#[derive(Subcommand)]
enum Command {
    /// Load the plugin and tour its tools on the embedded demo corpus (the default), or
    /// list and read Claude Code's sessions with --claude-projects.
    Demo(DemoArgs),
    /// Print the tool catalog as JSON.
    Catalog {
        /// Deployment settings (JSON object with camelCase keys).
        #[arg(long)]
        settings: Option<PathBuf>,
        /// A plugin component of the `plugin` world (default: the embedded plugin).
        #[arg(long)]
        plugin: Option<PathBuf>,
    },
    /// Run one tool call and print its text exactly as the model sees it. A refusal is
    /// a normal answer (exit 0); only a host failure exits non-zero.
    Call(CallArgs),
    /// Serve the tools over the Model Context Protocol on stdio, for any MCP client
    /// (Claude Code, Codex, Cursor, Zed, …): each tools/call runs in a fresh sandboxed
    /// instance.
    Mcp(McpArgs),
    /// A Claude Code command hook: reads the hook's JSON on stdin and hands the
    /// messages spooled for that session over in the hook's JSON answer on stdout
    /// (PostToolUse: steer messages; Stop: the oldest queued one; UserPromptSubmit and
    /// SessionStart: all that wait).
    ClaudeHook {
        #[command(flatten)]
        state: StateArgs,
    },
    /// A Codex command hook (hooks.json): reads the hook's JSON on stdin and hands the
    /// messages spooled for that thread over on stdout (Stop: the oldest queued one, as
    /// a block decision that continues the turn; UserPromptSubmit and SessionStart:
    /// all that wait, as context).
    CodexHook {
        #[command(flatten)]
        state: StateArgs,
    },
    /// Write the embedded plugin component (plugin.wasm) to a file.
    Plugin {
        /// Where to write it.
        #[arg(long)]
        out: PathBuf,
    },
}

#[derive(clap::Args)]
struct CallArgs {
    /// sessions_list, sessions_read or sessions_send.
    tool: String,
    /// The model's arguments as JSON text; `-` reads them from stdin (default: none,
    /// read as `{}`).
    args: Option<String>,
    /// Read the model's arguments from this file.
    #[arg(long, conflicts_with = "args")]
    args_file: Option<PathBuf>,
    #[command(flatten)]
    source: SourceArgs,
    /// The calling session's id (default: the corpus file's "caller").
    #[arg(long)]
    caller: Option<String>,
    /// The harness's id for this tool call, kept across its retries: a send's delivery
    /// is keyed by it (default: none, so every send delivers).
    #[arg(long, default_value = "")]
    call_id: String,
    /// Write what the inbox accepted as a JSON array of {target, mode, body, woke, state, key},
    /// whatever the outcome (`[]` when nothing was accepted; key only when the call had
    /// an id).
    #[arg(long)]
    deliveries: Option<PathBuf>,
    /// Print the host-call counters as JSON on stderr, whatever the outcome, with the
    /// plugin's contract version and the answer's refusal code (null for an answer).
    #[arg(long)]
    stats: bool,
    #[command(flatten)]
    limits: LimitFlags,
}

#[derive(clap::Args, Default)]
struct DemoArgs {
    /// Tour Claude Code's sessions in this projects folder (usually ~/.claude/projects)
    /// instead of the demo corpus: list them all and read the newest.
    #[arg(long, conflicts_with = "codex_home")]
    claude_projects: Option<PathBuf>,
    /// Tour Codex's threads in this CODEX_HOME (usually ~/.codex) instead.
    #[arg(long)]
    codex_home: Option<PathBuf>,
    /// The session the tour calls from (default: the newest top-level session).
    #[arg(long)]
    caller: Option<String>,
    #[command(flatten)]
    state: StateArgs,
}

/// The state folder: the inbox spool and the live registry.
#[derive(clap::Args, Default)]
struct StateArgs {
    /// Where spooled messages and live sessions are kept (default:
    /// $XDG_STATE_HOME/session-tools or ~/.local/state/session-tools).
    #[arg(long)]
    state_dir: Option<PathBuf>,
}

impl StateArgs {
    fn root(&self) -> Result<PathBuf> {
        let Some(root) = (self.state_dir.clone()).or_else(host_shim::inbox::default_dir) else {
            bail!("no state folder: set HOME or XDG_STATE_HOME, or pass --state-dir DIR");
        };
        Ok(root)
    }

    /// The state folder's inbox.
    fn inbox(&self) -> Result<SharedInbox> {
        Ok(Arc::new(StateDir::open(&self.root()?)?))
    }

    /// The state folder's live registry and idle marks (Claude Code's presence).
    fn presence(&self) -> Result<Arc<dyn Presence>> {
        Ok(Arc::new(LocalPresence::open(&self.root()?)?))
    }
}

/// What a call runs over: the store, the deployment, the plugin.
#[derive(clap::Args)]
struct SourceArgs {
    /// Corpus JSON file (default: the embedded demo corpus).
    #[arg(long)]
    corpus: Option<PathBuf>,
    /// Serve Claude Code's own sessions from this projects folder (usually
    /// ~/.claude/projects) instead of a corpus; sends go to the state folder's spool.
    #[arg(long, conflicts_with = "corpus")]
    claude_projects: Option<PathBuf>,
    /// Serve Codex's own threads from this CODEX_HOME (usually ~/.codex) instead of a
    /// corpus; sends go to the state folder's spool. With --claude-projects: both
    /// harnesses' sessions in one listing, each messageable from the other.
    #[arg(long, conflicts_with = "corpus")]
    codex_home: Option<PathBuf>,
    /// With --codex-home: never hand a message over through the Codex app-server
    /// daemon; every message waits for the thread's hooks. By default, when the daemon
    /// runs, an idle or cold thread gets a message at once as a new turn.
    #[arg(long, requires = "codex_home")]
    codex_hooks_only: bool,
    #[command(flatten)]
    state: StateArgs,
    /// With --claude-projects: wake a cold target with this command, e.g.
    /// 'claude --resume {id}' ({id}, {cwd} and {message_file} are filled in; no shell
    /// runs it). Off by default: a message for a cold session waits for its next start.
    #[arg(long, requires = "claude_projects")]
    wake_command: Option<String>,
    /// Deployment settings JSON file.
    #[arg(long)]
    settings: Option<PathBuf>,
    /// A plugin component of the `plugin` world (default: the embedded plugin).
    #[arg(long)]
    plugin: Option<PathBuf>,
}

/// The sessions a call runs over.
enum Store {
    Corpus(Corpus),
    Claude(Box<ClaudeStore>),
    Codex(Box<host_shim::CodexStore>),
    Both(Box<host_shim::Both<ClaudeStore, host_shim::CodexStore>>),
}

impl SourceArgs {
    /// The store; `deadline` is the calls' (a hand-over through Codex's daemon gets
    /// half of it).
    fn store(&self, deadline: Duration) -> Result<Store> {
        if let Some(home) = &self.codex_home {
            let codex = host_shim::CodexStore::open(home, self.state.inbox()?)
                .through_daemon(!self.codex_hooks_only)
                .daemon_time(deadline / 2);
            let Some(projects) = &self.claude_projects else {
                return Ok(Store::Codex(Box::new(codex)));
            };
            let wake = (self.wake_command.as_deref())
                .map(WakeCommand::parse)
                .transpose()?;
            let claude = claude_store(projects, &self.state, wake)?;
            return Ok(Store::Both(Box::new(host_shim::Both::new(claude, codex))));
        }
        if let Some(projects) = &self.claude_projects {
            let wake = self
                .wake_command
                .as_deref()
                .map(WakeCommand::parse)
                .transpose()?;
            return Ok(Store::Claude(Box::new(claude_store(
                projects,
                &self.state,
                wake,
            )?)));
        }
        match self.corpus.as_deref() {
            Some(path) => Corpus::from_file(path).map(Store::Corpus),
            None => Ok(Store::Corpus(Corpus::demo())),
        }
    }
}

fn claude_store(
    projects: &Path,
    state: &StateArgs,
    wake: Option<WakeCommand>,
) -> Result<ClaudeStore> {
    ClaudeStore::open(projects, state.inbox()?, state.presence()?, wake)
}

#[derive(clap::Args)]
struct McpArgs {
    #[command(flatten)]
    source: SourceArgs,
    /// The calling session's id (default: $CLAUDE_CODE_SESSION_ID, which Claude Code
    /// sets for the servers it starts; else the corpus file's "caller").
    #[arg(long)]
    caller: Option<String>,
    /// Append what the inbox accepts to this file, one JSON record per line, call by
    /// call, whatever each call's outcome.
    #[arg(long)]
    deliveries: Option<PathBuf>,
    /// Calls served at once (default 64); one more is answered with an error until one
    /// ends.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1024))]
    max_concurrent_calls: Option<u32>,
    #[command(flatten)]
    limits: LimitFlags,
}

/// The host's policy: a policy file, and flags over it (defaults: 1000 ms, 64 MiB,
/// 1 MiB, and the bounds of `host_shim::Policy`).
#[derive(clap::Args)]
struct LimitFlags {
    /// A policy file (JSON): every limit and bound, the pool and the Spectre hardening
    /// (README, "Limits and guarantees"); the flags below override it.
    #[arg(long)]
    policy: Option<PathBuf>,
    /// Wall-clock deadline of the call, in milliseconds.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    deadline_ms: Option<u64>,
    /// Cap on the plugin's linear memory, in MiB (2 to 4096).
    #[arg(long, value_parser = clap::value_parser!(u64).range(2..=4096))]
    memory_mib: Option<u64>,
    /// Cap on the returned text, in bytes.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    output_bytes: Option<u64>,
}

impl LimitFlags {
    /// The policy file's options (or the defaults) with the flags given over them,
    /// checked once.
    fn options(
        &self,
        cache_dir: Option<PathBuf>,
        max_concurrent_calls: Option<u32>,
    ) -> Result<RuntimeOptions> {
        let mut policy = match &self.policy {
            Some(path) => host_shim::Policy::from_file(path)?,
            None => host_shim::Policy::default(),
        };
        if let Some(ms) = self.deadline_ms {
            policy.deadline_ms = ms;
        }
        if let Some(mib) = self.memory_mib {
            policy.memory_bytes = usize::try_from(mib << 20).unwrap_or(usize::MAX);
        }
        if let Some(bytes) = self.output_bytes {
            policy.output_bytes = usize::try_from(bytes).unwrap_or(usize::MAX);
        }
        if let Some(calls) = max_concurrent_calls {
            policy.max_concurrent_calls = calls;
        }
        let options = policy.options(cache_dir);
        options.check()?;
        Ok(options)
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let cache_dir = cli.cache_dir();
    let outcome = match cli.command.unwrap_or(Command::Demo(DemoArgs::default())) {
        Command::Demo(args) => match (&args.claude_projects, &args.codex_home) {
            (None, None) => crate::demo::run(&mut std::io::stdout().lock(), cache_dir),
            (Some(projects), _) => claude_store(projects, &args.state, None).and_then(|store| {
                crate::demo::run_over(
                    &mut std::io::stdout().lock(),
                    store,
                    &crate::demo::CLAUDE_TOUR,
                    args.caller.as_deref(),
                    cache_dir,
                )
            }),
            (None, Some(home)) => args.state.inbox().and_then(|inbox| {
                crate::demo::run_over(
                    &mut std::io::stdout().lock(),
                    host_shim::CodexStore::open(home, inbox),
                    &crate::demo::CODEX_TOUR,
                    args.caller.as_deref(),
                    cache_dir,
                )
            }),
        },
        Command::Catalog { settings, plugin } => {
            catalog(settings.as_deref(), plugin.as_deref(), cache_dir)
        }
        Command::Call(args) => call(args, cache_dir),
        Command::Mcp(args) => mcp(args, cache_dir),
        Command::ClaudeHook { state } => claude_hook(&state),
        Command::CodexHook { state } => codex_hook(&state),
        Command::Plugin { out } => host_shim::record::write_atomically(&out, PLUGIN_WASM)
            .with_context(|| format!("cannot write {}", out.display())),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("host-shim: error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

fn read_settings(path: Option<&Path>) -> Result<String> {
    match path {
        None => Ok(String::new()),
        Some(path) => std::fs::read_to_string(path)
            .with_context(|| format!("cannot read settings file {}", path.display())),
    }
}

/// The plugin's own error names the settings file it came from.
fn call_error(settings: Option<&Path>, err: CallError) -> anyhow::Error {
    match (settings, &err) {
        (Some(path), CallError::Refused(message)) => {
            anyhow::anyhow!("{}: {message}", path.display())
        }
        _ => err.into(),
    }
}

fn plugin_bytes(path: Option<&Path>) -> Result<std::borrow::Cow<'static, [u8]>> {
    match path {
        None => Ok(PLUGIN_WASM.into()),
        Some(path) => Ok(std::fs::read(path)
            .with_context(|| format!("cannot read plugin {}", path.display()))?
            .into()),
    }
}

fn catalog(
    settings_path: Option<&Path>,
    plugin: Option<&Path>,
    cache_dir: Option<PathBuf>,
) -> Result<()> {
    let settings = read_settings(settings_path)?;
    let options = RuntimeOptions {
        cache_dir,
        ..RuntimeOptions::default()
    };
    let runtime: Runtime<CorpusHost> = Runtime::with_options(&plugin_bytes(plugin)?, &options)?;
    say_wasi(&runtime);
    let tools = runtime
        .catalog(&settings)
        .map_err(|err| call_error(settings_path, err))?;
    let json: Vec<serde_json::Value> = tools
        .into_iter()
        .map(|tool| {
            let schema: serde_json::Value =
                serde_json::from_str(&tool.input_schema).unwrap_or(tool.input_schema.into());
            let mut shown = serde_json::json!({
                "name": tool.name,
                "description": tool.description,
                "input_schema": schema,
            });
            if let Some(annotations) = &tool.annotations {
                shown["annotations"] = annotations.to_mcp_json();
            }
            shown
        })
        .collect();
    println!("{}", serde_json::to_string_pretty(&json)?);
    Ok(())
}

/// A plugin that imports WASI runs with a deny-all WASI; the host says so.
fn say_wasi<H: Harness>(runtime: &Runtime<H>) {
    if !runtime.wasi_imports().is_empty() {
        eprintln!(
            "host-shim: note: the plugin imports WASI ({} interfaces); it gets a deny-all WASI: no files, environment, arguments or sockets, stdio discarded",
            runtime.wasi_imports().len()
        );
    }
}

fn mcp(args: McpArgs, cache_dir: Option<PathBuf>) -> Result<()> {
    let from_client = std::env::var("CLAUDE_CODE_SESSION_ID")
        .ok()
        .filter(|id| !id.is_empty());
    let caller = args.caller.clone().or(from_client);
    let options = args.limits.options(cache_dir, args.max_concurrent_calls)?;
    match args.source.store(options.limits.deadline)? {
        Store::Corpus(corpus) => {
            let caller = caller.or_else(|| corpus.caller().map(str::to_string));
            let harness = Shared::new(CorpusHost::new(Arc::new(corpus)));
            serve(&args, harness, caller, None, options)
        }
        Store::Claude(store) => serve_claude(&args, Shared::new(*store), caller, options),
        // Codex's threads: Codex names the calling thread in each call's _meta.
        Store::Codex(store) => serve(&args, Shared::new(*store), caller, None, options),
        // Both harnesses: a Claude Code session names itself in the environment (and
        // gets the Claude extras), a Codex thread in each call's _meta.
        Store::Both(both) => serve_claude(&args, Shared::new(*both), caller, options),
    }
}

/// A harness with Claude Code's sessions in it: the Claude store, alone or beside
/// Codex's.
trait ClaudeSide {
    fn claude(&mut self) -> &mut ClaudeStore;
}

impl ClaudeSide for ClaudeStore {
    fn claude(&mut self) -> &mut ClaudeStore {
        self
    }
}

impl ClaudeSide for host_shim::Both<ClaudeStore, host_shim::CodexStore> {
    fn claude(&mut self) -> &mut ClaudeStore {
        &mut self.first
    }
}

/// The MCP server for a Claude Code client: its session registered live once its
/// transcript exists, an idle interactive session handed its messages through Claude
/// Code's messaging socket, and a subagent's calls told from its session's.
fn serve_claude<H: Harness + ClaudeSide>(
    args: &McpArgs,
    harness: Shared<H>,
    caller: Option<String>,
    options: RuntimeOptions,
) -> Result<()> {
    // The session this server serves is live in its own answers from its first call.
    harness.lock().claude().set_serving(caller.clone());
    let registration = Arc::new(std::sync::Mutex::new(None));
    // A resumed session is known at once; a new one once its first prompt is written.
    if let Some(id) = caller.clone()
        && !try_register(&harness, &id, &registration)
    {
        let (harness, registration) = (harness.clone(), registration.clone());
        std::thread::spawn(move || register_when_seen(&harness, &id, &registration));
    }
    // An open, idle interactive session gets its messages through Claude Code's
    // messaging socket, without waiting for its person.
    if let (Some(id), Some(socket)) = (
        caller.clone(),
        host_shim::claude::idle::MessagingSocket::from_env(),
    ) {
        let (inbox, presence) = {
            let mut harness = harness.lock();
            let claude = harness.claude();
            (claude.inbox().clone(), claude.presence().clone())
        };
        std::thread::spawn(move || host_shim::claude::idle::watch(inbox, presence, id, socket));
    }
    // A subagent's calls reach its session's server: the tool-use id names it.
    let of_call = harness.clone();
    let caller_of_call: crate::mcp::CallerOfCall =
        Box::new(move |caller, call_id| subagent_of_call(&of_call, caller, call_id));
    let served = serve(args, harness, caller, Some(caller_of_call), options);
    drop(registration.lock().map(|mut r| r.take()));
    served
}

/// The subagent that made a call, when its transcript holds the call's tool-use id.
/// Claude Code writes that record as the call starts, so a call found in no transcript
/// yet is looked for again for up to a second (without holding the store).
fn subagent_of_call<H: ClaudeSide>(
    harness: &Shared<H>,
    caller: &str,
    call_id: &str,
) -> Option<String> {
    let deadline = std::time::Instant::now() + Duration::from_secs(1);
    loop {
        if let Some(maker) = harness.lock().claude().maker_of_call(caller, call_id) {
            return maker;
        }
        if std::time::Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Registers the caller as live once Claude Code has written its transcript, and
/// clears the registration on SIGINT, SIGTERM and SIGHUP: a probe such as `claude mcp
/// list` (a session id with no transcript, stopped within a second) registers nothing,
/// and a server Claude Code stops leaves nothing behind.
fn register_when_seen<H: ClaudeSide>(
    harness: &Shared<H>,
    id: &str,
    registration: &std::sync::Mutex<Option<host_shim::presence::Registration>>,
) {
    let mut wait = Duration::from_millis(100);
    loop {
        if try_register(harness, id, registration) {
            return;
        }
        std::thread::sleep(wait);
        wait = (wait * 2).min(Duration::from_secs(2));
    }
}

/// Registers `id` when its transcript exists; whether it did (or gave up trying).
fn try_register<H: ClaudeSide>(
    harness: &Shared<H>,
    id: &str,
    registration: &std::sync::Mutex<Option<host_shim::presence::Registration>>,
) -> bool {
    {
        if harness.lock().claude().knows(id) {
            let registered = harness.lock().claude().presence().register_live(id);
            match registered {
                Ok(live) => {
                    if let Ok(mut slot) = registration.lock() {
                        *slot = Some(live);
                    }
                }
                // The caller reads cold; the tools still work.
                Err(err) => eprintln!("host-shim mcp: {id} will read cold: {err:#}"),
            }
            return true;
        }
    }
    false
}

fn serve<H: Harness>(
    args: &McpArgs,
    harness: Shared<H>,
    caller: Option<String>,
    caller_of_call: Option<crate::mcp::CallerOfCall>,
    options: RuntimeOptions,
) -> Result<()> {
    use crate::mcp::{Caller, McpOptions, McpServer};
    let caller = match caller {
        Some(id) => Caller::Known(id),
        None => Caller::Unknown,
    };
    let runtime = Runtime::with_options(&plugin_bytes(args.source.plugin.as_deref())?, &options)?;
    say_wasi(&runtime);
    let version = runtime.contract_version();
    let settings_path = args.source.settings.as_deref();
    let server = McpServer::new(
        runtime,
        harness,
        McpOptions {
            settings: read_settings(settings_path)?,
            caller: caller.clone(),
            deliveries: args.deliveries.clone(),
            caller_of_call,
        },
    )
    .map_err(|err| match settings_path {
        Some(path) => err.context(format!("settings file {}", path.display())),
        None => err,
    })?;
    // stdout carries the protocol; anything for a person goes to stderr.
    eprintln!(
        "host-shim mcp: {} tools over stdio (contract {}), {}",
        server.tools().len(),
        version.as_str(),
        match &caller {
            Caller::Known(id) => format!("for session {id}"),
            Caller::Unknown =>
                "with no calling session: every call will say how to name it".to_string(),
        }
    );
    crate::mcp::serve_stdio(server)
}

fn claude_hook(state: &StateArgs) -> Result<()> {
    let (inbox, presence) = (state.inbox()?, state.presence()?);
    run_hook("claude-hook", |input, out| {
        host_shim::claude::hook::answer(&*inbox, &*presence, input, out)
    })
}

fn codex_hook(state: &StateArgs) -> Result<()> {
    let inbox = state.inbox()?;
    run_hook("codex-hook", |input, out| {
        host_shim::codex::hook::answer(&*inbox, input, out)
    })
}

/// One hook run: its input from stdin, its answer to stdout, what it could not read
/// on stderr.
fn run_hook(
    name: &str,
    answer: impl FnOnce(&[u8], &mut dyn Write) -> Result<host_shim::inbox::HookReport>,
) -> Result<()> {
    let mut input = Vec::new();
    std::io::stdin()
        .read_to_end(&mut input)
        .context("cannot read the hook's input from stdin")?;
    let report = answer(&input, &mut std::io::stdout().lock())?;
    for problem in &report.unreadable {
        eprintln!("host-shim {name}: skipped {problem}");
    }
    Ok(())
}

fn read_arguments(args: &CallArgs) -> Result<String> {
    if let Some(path) = &args.args_file {
        return std::fs::read_to_string(path)
            .with_context(|| format!("cannot read arguments file {}", path.display()));
    }
    match args.args.as_deref() {
        Some("-") => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .context("cannot read the arguments from stdin")?;
            Ok(text)
        }
        other => Ok(other.unwrap_or_default().to_string()),
    }
}

fn call(args: CallArgs, cache_dir: Option<PathBuf>) -> Result<()> {
    let options = args.limits.options(cache_dir, None)?;
    match args.source.store(options.limits.deadline)? {
        Store::Corpus(corpus) => {
            let caller = args
                .caller
                .clone()
                .or_else(|| corpus.caller().map(str::to_string));
            call_on(
                &args,
                CorpusHost::new(Arc::new(corpus)),
                caller,
                options,
                |_| None,
            )
        }
        Store::Claude(store) => {
            let caller = args.caller.clone();
            call_on(&args, *store, caller, options, |store| {
                Some(store.skipped_lines())
            })
        }
        Store::Codex(store) => {
            let caller = args.caller.clone();
            call_on(&args, *store, caller, options, |store| {
                Some(store.skipped_lines())
            })
        }
        Store::Both(both) => {
            let caller = args.caller.clone();
            call_on(&args, *both, caller, options, |both| {
                Some(both.first.skipped_lines() + both.second.skipped_lines())
            })
        }
    }
}

/// Runs the call over one harness; `skipped_lines` says what the store could not read
/// (for `--stats`).
fn call_on<H: Harness>(
    args: &CallArgs,
    harness: H,
    caller: Option<String>,
    options: RuntimeOptions,
    skipped_lines: impl Fn(&H) -> Option<u64>,
) -> Result<()> {
    let settings_path = args.source.settings.as_deref();
    let Some(caller) = caller else {
        bail!(
            if args.source.claude_projects.is_some() || args.source.codex_home.is_some() {
                "no calling session: pass --caller ID (a session id from sessions_list)"
            } else {
                "no calling session: pass --caller ID or set \"caller\" in the corpus file"
            }
        );
    };
    let request = CallRequest {
        caller,
        call_id: args.call_id.clone(),
        settings: read_settings(settings_path)?,
        tool: args.tool.clone(),
        arguments: read_arguments(args)?,
    };
    let runtime: Runtime<H> =
        Runtime::with_options(&plugin_bytes(args.source.plugin.as_deref())?, &options)?;
    say_wasi(&runtime);
    let report = runtime.call(harness, &request);
    // What the host did is reported whatever the outcome.
    if args.stats {
        let mut stats = serde_json::to_value(report.stats)?;
        stats["contract"] = runtime.contract_version().as_str().into();
        stats["refusal"] = match &report.answer {
            Ok(answer) => answer.refusal.map(|code| code.as_str()).into(),
            Err(_) => serde_json::Value::Null,
        };
        if let Some(skipped) = skipped_lines(&report.harness) {
            stats["skipped_lines"] = skipped.into();
        }
        eprintln!("{stats}");
    }
    if let Some(path) = args.deliveries.as_deref() {
        host_shim::record::write(path, &report.deliveries)?;
    }
    match report.answer {
        Ok(answer) => {
            println!("{}", answer.text);
            Ok(())
        }
        Err(err) => {
            if !report.deliveries.is_empty() {
                eprintln!("host-shim: {}", accepted_before(&report.deliveries));
            }
            Err(call_error(settings_path, err))
        }
    }
}

/// Says what was delivered before a failure, so a harness does not deliver twice.
fn accepted_before(deliveries: &[Delivery]) -> String {
    match deliveries.len() {
        1 => "1 delivery was accepted before the plugin was stopped".to_string(),
        n => format!("{n} deliveries were accepted before the plugin was stopped"),
    }
}
