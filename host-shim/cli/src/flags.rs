//! The command line: every flag defined here, and turned here into what the commands
//! run with (the stores, the runtime options, the settings, the plugin), once.

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};
use host_shim::inbox::{AuditLog, Audited};
use host_shim::{
    ClaudeStore, CodexStore, Corpus, CorpusHost, Harnesses, LocalPresence, OpenCodeStore, Presence,
    RuntimeOptions, SharedInbox, StateDir, Store, WakeCommand,
};
use host_shim_nats::{Cluster, ClusterFile, MachineHost};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

#[derive(Parser)]
#[command(
    name = "host-shim",
    version,
    about = "Run the session-tools plugin under wasmtime over an in-memory corpus or Claude Code's own sessions"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Compile the plugin on every start instead of keeping it compiled on disk.
    #[arg(long, global = true)]
    pub no_cache: bool,
    /// Where to keep the compiled plugin (default: $XDG_CACHE_HOME/session-tools or
    /// ~/.cache/session-tools).
    #[arg(long, global = true)]
    pub cache_dir: Option<PathBuf>,
}

impl Cli {
    pub fn cache_dir(&self) -> Option<PathBuf> {
        if self.no_cache {
            return None;
        }
        self.cache_dir
            .clone()
            .or_else(host_shim::runtime::cache::default_dir)
    }
}

#[derive(Subcommand)]
pub enum Command {
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
    /// Print the audit log: every message the state folder's inbox accepted and every
    /// hand-over (time, from, to, mode, hop, size, the body's hash; the body when it was
    /// recorded with --log-bodies).
    Log(LogArgs),
    /// Say what a session takes from other sessions (a person's choice, never a
    /// model's): accept (the default), hold (kept until you release them with accept)
    /// or refuse. Without a policy, print the session's and what waits for it.
    Inbound(InboundArgs),
    /// Set a harness up to run the tools: its MCP server, hooks and permission, in its
    /// own configuration files, pointing at this binary (everything else in them is
    /// kept; each file's previous bytes are kept beside it as FILE.before-session-tools).
    Setup(SetupArgs),
    /// Look over what the tools need here: for each harness found, its version, the
    /// server (registered, starts, lists the tools), the hooks and permission; the
    /// state folder's modes, messages stuck for an hour, registrations of dead
    /// processes. Each problem with the command that fixes it; exits 1 when any.
    Doctor(DoctorArgs),
    /// A live view of the sessions (live or idle, what each lets in, what waits for it)
    /// and the messages between them (waiting or handed over); keys read a message and
    /// hold, accept or refuse a session's inbound.
    Watch(WatchArgs),
    /// Write the embedded plugin component (plugin.wasm) to a file.
    Plugin {
        /// Where to write it.
        #[arg(long)]
        out: PathBuf,
    },
}

#[derive(clap::Args)]
pub struct WatchArgs {
    /// Claude Code's projects folder: its sessions listed with their titles.
    #[arg(long)]
    pub claude_projects: Option<PathBuf>,
    /// Codex's home: its threads listed with their titles.
    #[arg(long)]
    pub codex_home: Option<PathBuf>,
    /// OpenCode's database: its sessions listed with their titles.
    #[arg(long)]
    pub opencode_db: Option<PathBuf>,
    #[command(flatten)]
    pub state: StateArgs,
    /// Print the view once as text and end.
    #[arg(long)]
    pub once: bool,
}

#[derive(clap::Args)]
pub struct DoctorArgs {
    #[command(flatten)]
    pub places: HarnessPlaces,
}

#[derive(clap::Args)]
pub struct SetupArgs {
    /// The harness: claude (Claude Code), codex (Codex) or opencode (OpenCode).
    #[arg(value_parser = ["claude", "codex", "opencode"])]
    pub harness: String,
    /// Print the change as a diff and write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Take out what setup adds, and nothing else.
    #[arg(long)]
    pub remove: bool,
    #[command(flatten)]
    pub places: HarnessPlaces,
    /// The host-shim the harness should run (default: this one).
    #[arg(long)]
    pub binary: Option<PathBuf>,
    /// OpenCode only: the server wakes a cold OpenCode session with this command (see
    /// `host-shim mcp --opencode-wake-command`).
    #[arg(long)]
    pub opencode_wake_command: Option<String>,
}

/// Where the harnesses' own files and the state folder are, for `setup` and `doctor`.
#[derive(clap::Args)]
pub struct HarnessPlaces {
    /// The state folder for the server and hooks (default: $XDG_STATE_HOME/session-tools
    /// or ~/.local/state/session-tools).
    #[arg(long)]
    pub state_dir: Option<PathBuf>,
    /// Claude Code's configuration folder (default: $CLAUDE_CONFIG_DIR, else ~/.claude
    /// with ~/.claude.json).
    #[arg(long)]
    pub claude_config: Option<PathBuf>,
    /// Codex's home (default: $CODEX_HOME, else ~/.codex).
    #[arg(long)]
    pub codex_home: Option<PathBuf>,
    /// OpenCode's configuration folder (default: $XDG_CONFIG_HOME/opencode, else
    /// ~/.config/opencode).
    #[arg(long)]
    pub opencode_config: Option<PathBuf>,
    /// OpenCode's database (default: $XDG_DATA_HOME/opencode/opencode.db, else
    /// ~/.local/share/opencode/opencode.db; `opencode db path` prints it).
    #[arg(long)]
    pub opencode_db: Option<PathBuf>,
}

#[derive(clap::Args)]
pub struct InboundArgs {
    /// The session's id (from sessions_list, or the harness's own).
    pub session: String,
    /// accept, hold or refuse; none prints the session's now.
    #[arg(value_parser = ["accept", "hold", "refuse"])]
    pub policy: Option<String>,
    #[command(flatten)]
    pub state: StateArgs,
}

#[derive(clap::Args)]
pub struct LogArgs {
    /// Keep printing records as they come (stop with Ctrl-C).
    #[arg(long)]
    pub follow: bool,
    /// One JSON record per line, as the log keeps them.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub state: StateArgs,
}

#[derive(clap::Args)]
pub struct CallArgs {
    /// sessions_list, sessions_read or sessions_send.
    pub tool: String,
    /// The model's arguments as JSON text; `-` reads them from stdin (default: none,
    /// read as `{}`).
    pub args: Option<String>,
    /// Read the model's arguments from this file.
    #[arg(long, conflicts_with = "args")]
    pub args_file: Option<PathBuf>,
    #[command(flatten)]
    pub source: SourceArgs,
    /// The calling session's id (default: the corpus file's "caller").
    #[arg(long)]
    pub caller: Option<String>,
    /// The harness's id for this tool call, kept across its retries: a send's delivery
    /// is keyed by it (default: none, so every send delivers).
    #[arg(long, default_value = "")]
    pub call_id: String,
    /// Write what the inbox accepted as a JSON array of {target, mode, body, woke, state, key},
    /// whatever the outcome (`[]` when nothing was accepted; key only when the call had
    /// an id).
    #[arg(long)]
    pub deliveries: Option<PathBuf>,
    /// Print the host-call counters as JSON on stderr, whatever the outcome, with the
    /// plugin's contract version and the answer's refusal code (null for an answer).
    #[arg(long)]
    pub stats: bool,
    #[command(flatten)]
    pub limits: LimitFlags,
}

#[derive(clap::Args, Default)]
pub struct DemoArgs {
    /// Tour Claude Code's sessions in this projects folder (usually ~/.claude/projects)
    /// instead of the demo corpus: list them all and read the newest.
    #[arg(long, conflicts_with = "codex_home")]
    pub claude_projects: Option<PathBuf>,
    /// Tour Codex's threads in this CODEX_HOME (usually ~/.codex) instead.
    #[arg(long)]
    pub codex_home: Option<PathBuf>,
    /// The session the tour calls from (default: the newest top-level session).
    #[arg(long)]
    pub caller: Option<String>,
    #[command(flatten)]
    pub state: StateArgs,
}

/// The state folder: the inbox spool, the live registry and the audit log.
#[derive(clap::Args, Default)]
pub struct StateArgs {
    /// Where spooled messages and live sessions are kept (default:
    /// $XDG_STATE_HOME/session-tools or ~/.local/state/session-tools).
    #[arg(long)]
    pub state_dir: Option<PathBuf>,
    /// Keep each message's body in the audit log (`host-shim log`), not only its size
    /// and hash.
    #[arg(long)]
    pub log_bodies: bool,
    /// The cluster file (JSON: the NATS servers, this machine's name, credentials, TLS)
    /// that joins this machine's sessions to other machines' (default: cluster.json in
    /// the state folder, when it is there; docs/nats.md). Without one, nothing of NATS
    /// is loaded.
    #[arg(long)]
    pub cluster: Option<PathBuf>,
    /// The cluster, joined once per process (the inbox and the stores share it).
    #[arg(skip)]
    joined: std::sync::OnceLock<Option<Arc<Cluster>>>,
}

/// How long a call may take when the inbox is a cluster's, unless a policy file or
/// `--deadline-ms` says: a send rides out a leader election (up to about ten seconds;
/// each step is tried for up to `host_shim_nats::STEP_TIMEOUT`).
pub const CLUSTER_DEADLINE: Duration = Duration::from_secs(20);

impl StateArgs {
    pub fn root(&self) -> Result<PathBuf> {
        let Some(root) = (self.state_dir.clone()).or_else(host_shim::inbox::default_dir) else {
            bail!("no state folder: set HOME or XDG_STATE_HOME, or pass --state-dir DIR");
        };
        Ok(root)
    }

    /// The cluster this machine joined (`--cluster`, else the state folder's
    /// cluster.json when it is there), joined once per process; none without a file.
    pub fn cluster(&self) -> Result<Option<Arc<Cluster>>> {
        if let Some(joined) = self.joined.get() {
            return Ok(joined.clone());
        }
        let path = match &self.cluster {
            Some(path) => Some(path.clone()),
            None => Some(self.root()?.join("cluster.json")).filter(|path| path.is_file()),
        };
        let joined = match path {
            None => None,
            Some(path) => {
                let file = ClusterFile::read(&path)?;
                let cluster = Cluster::join(file).with_context(|| {
                    format!("cannot join the cluster the file {} names", path.display())
                })?;
                Some(Arc::new(cluster))
            }
        };
        Ok(self.joined.get_or_init(|| joined).clone())
    }

    /// The inbox: the cluster's when this machine joined one, else the state folder's;
    /// every acceptance and hand-over recorded in the state folder's audit log. Opened
    /// once per process (each opening is its own log writer).
    pub fn inbox(&self) -> Result<SharedInbox> {
        let root = self.root()?;
        let log = AuditLog::open(&root, self.log_bodies)?;
        Ok(match self.cluster()? {
            Some(cluster) => {
                let inbox = (*cluster.inbox()).clone().remembering(&root)?;
                Arc::new(Audited::new(inbox, log))
            }
            None => Arc::new(Audited::new(StateDir::open(&root)?, log)),
        })
    }

    /// The state folder's live registry and idle marks (Claude Code's presence).
    pub fn presence(&self) -> Result<Arc<dyn Presence>> {
        Ok(Arc::new(LocalPresence::open(&self.root()?)?))
    }
}

/// What a call runs over: the store, the deployment, the plugin.
#[derive(clap::Args)]
pub struct SourceArgs {
    /// Corpus JSON file (default: the embedded demo corpus).
    #[arg(long)]
    pub corpus: Option<PathBuf>,
    /// Serve Claude Code's own sessions from this projects folder (usually
    /// ~/.claude/projects) instead of a corpus; sends go to the state folder's spool.
    #[arg(long, conflicts_with = "corpus")]
    pub claude_projects: Option<PathBuf>,
    /// Serve Codex's own threads from this CODEX_HOME (usually ~/.codex) instead of a
    /// corpus; sends go to the state folder's spool. With --claude-projects: both
    /// harnesses' sessions in one listing, each messageable from the other.
    #[arg(long, conflicts_with = "corpus")]
    pub codex_home: Option<PathBuf>,
    /// With --codex-home: never hand a message over through the Codex app-server
    /// daemon; every message waits for the thread's hooks. By default, when the daemon
    /// runs, an idle or cold thread gets a message at once as a new turn.
    #[arg(long, requires = "codex_home")]
    pub codex_hooks_only: bool,
    /// Serve OpenCode's own sessions from its database (usually
    /// ~/.local/share/opencode/opencode.db; `opencode db path` prints it) instead of a
    /// corpus; sends go to the state folder's spool. With the other harnesses' flags:
    /// every harness's sessions in one listing.
    #[arg(long, conflicts_with = "corpus")]
    pub opencode_db: Option<PathBuf>,
    /// With --opencode-db: wake a cold OpenCode session with this command, e.g.
    /// 'opencode run --session {id} "A message from another session is waiting."'
    /// ({id}, {cwd} and {message_file} filled in; no shell runs it; it starts in the
    /// session's folder). Off by default: a message for a cold session waits for its
    /// next prompt.
    #[arg(long, requires = "opencode_db")]
    pub opencode_wake_command: Option<String>,
    #[command(flatten)]
    pub state: StateArgs,
    /// With --claude-projects: wake a cold target with this command, e.g.
    /// 'claude --resume {id}' ({id}, {cwd} and {message_file} are filled in; no shell
    /// runs it). Off by default: a message for a cold session waits for its next start.
    #[arg(long, requires = "claude_projects")]
    pub wake_command: Option<String>,
    /// Deployment settings JSON file.
    #[arg(long)]
    pub settings: Option<PathBuf>,
    /// A plugin component of the `plugin` world (default: the embedded plugin).
    #[arg(long)]
    pub plugin: Option<PathBuf>,
}

/// The stores a call runs over, and the caller a corpus file names.
pub struct Stores {
    pub harnesses: Harnesses,
    /// The corpus file's "caller", when the store is a corpus.
    pub corpus_caller: Option<String>,
    /// The inbox every harness's store delivers to (none over a corpus).
    pub inbox: Option<SharedInbox>,
    /// The cluster this machine joined, if any (none over a corpus).
    pub cluster: Option<Arc<Cluster>>,
}

impl SourceArgs {
    /// Whether the call runs over a harness's own sessions (not a corpus).
    pub fn over_a_harness(&self) -> bool {
        self.claude_projects.is_some() || self.codex_home.is_some() || self.opencode_db.is_some()
    }

    /// The stores, in the order they are asked: Claude Code's, then Codex's (an id both
    /// hold is Claude Code's), then OpenCode's, then the other machines' when this one
    /// joined a cluster; a corpus alone otherwise. `deadline` is the calls' (a
    /// hand-over through Codex's daemon gets half of it).
    pub fn stores(&self, deadline: Duration) -> Result<Stores> {
        // One inbox for every store of this process.
        let inbox = match self.over_a_harness() {
            true => Some(self.state.inbox()?),
            false => None,
        };
        let mut stores = match &inbox {
            Some(inbox) => self.local_stores(inbox, deadline)?,
            None => Vec::new(),
        };
        let mut corpus_caller = None;
        if stores.is_empty() {
            let corpus = match self.corpus.as_deref() {
                Some(path) => Corpus::from_file(path)?,
                None => Corpus::demo(),
            };
            corpus_caller = corpus.caller().map(str::to_string);
            stores.push(Box::new(CorpusHost::new(Arc::new(corpus))));
        }
        let cluster = match &inbox {
            Some(_) => self.state.cluster()?,
            None => None,
        };
        let harnesses = match (&cluster, &inbox) {
            (Some(cluster), Some(inbox)) => {
                stores.push(Box::new(cluster.machines(inbox.clone())?));
                Harnesses::new(stores).on_machine(cluster.machine())
            }
            _ => Harnesses::new(stores),
        };
        Ok(Stores {
            harnesses,
            corpus_caller,
            inbox,
            cluster,
        })
    }

    /// This machine's stores over the harnesses the flags name, delivering to `inbox`.
    fn local_stores(&self, inbox: &SharedInbox, deadline: Duration) -> Result<Vec<Box<dyn Store>>> {
        let mut stores: Vec<Box<dyn Store>> = Vec::new();
        if let Some(projects) = &self.claude_projects {
            let wake = (self.wake_command.as_deref())
                .map(WakeCommand::parse)
                .transpose()?;
            let presence = self.state.presence()?;
            stores.push(Box::new(ClaudeStore::open(
                projects,
                inbox.clone(),
                presence,
                wake,
            )?));
        }
        if let Some(home) = &self.codex_home {
            let codex = CodexStore::open(home, inbox.clone())
                .through_daemon(!self.codex_hooks_only)
                .daemon_time(deadline / 2);
            stores.push(Box::new(codex));
        }
        if let Some(db) = &self.opencode_db {
            let presence = self.state.presence()?;
            let wake = (self.opencode_wake_command.as_deref())
                .map(WakeCommand::parse)
                .transpose()?;
            stores.push(Box::new(
                OpenCodeStore::open(db, inbox.clone(), presence).wake_command(wake),
            ));
        }
        Ok(stores)
    }

    /// When this machine joined a cluster: its sessions published and other machines'
    /// reads of them answered, over stores of its own, until the host is dropped.
    pub fn serve_machine(
        &self,
        stores: &Stores,
        deadline: Duration,
    ) -> Result<Option<MachineHost>> {
        let (Some(cluster), Some(inbox)) = (&stores.cluster, &stores.inbox) else {
            return Ok(None);
        };
        let local = Harnesses::new(self.local_stores(inbox, deadline)?);
        Ok(Some(cluster.serve(local)?))
    }

    /// The settings file's text (empty: all defaults).
    pub fn settings(&self) -> Result<String> {
        read_settings(self.settings.as_deref())
    }

    /// The plugin's bytes: the file given, or the embedded plugin.
    pub fn plugin(&self) -> Result<std::borrow::Cow<'static, [u8]>> {
        plugin_bytes(self.plugin.as_deref())
    }
}

/// A Claude Code store over `projects` with the state folder's inbox and presence.
pub fn claude_store(
    projects: &Path,
    state: &StateArgs,
    wake: Option<WakeCommand>,
) -> Result<ClaudeStore> {
    ClaudeStore::open(projects, state.inbox()?, state.presence()?, wake)
}

#[derive(clap::Args)]
pub struct McpArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    /// The calling session's id (default: $CLAUDE_CODE_SESSION_ID, which Claude Code
    /// sets for the servers it starts; else the corpus file's "caller").
    #[arg(long)]
    pub caller: Option<String>,
    /// Append what the inbox accepts to this file, one JSON record per line, call by
    /// call, whatever each call's outcome.
    #[arg(long)]
    pub deliveries: Option<PathBuf>,
    /// Calls served at once (default 64); one more is answered with an error until one
    /// ends.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub max_concurrent_calls: Option<u32>,
    #[command(flatten)]
    pub limits: LimitFlags,
}

/// The host's policy: a policy file, and flags over it (defaults: 1000 ms, 64 MiB,
/// 1 MiB, and the bounds of `host_shim::Policy`).
#[derive(clap::Args)]
pub struct LimitFlags {
    /// A policy file (JSON): every limit and bound, the pool and the Spectre hardening
    /// (docs/limits.md); the flags below override it.
    #[arg(long)]
    pub policy: Option<PathBuf>,
    /// Wall-clock deadline of the call, in milliseconds.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub deadline_ms: Option<u64>,
    /// Cap on the plugin's linear memory, in MiB (2 to 4096).
    #[arg(long, value_parser = clap::value_parser!(u64).range(2..=4096))]
    pub memory_mib: Option<u64>,
    /// Cap on the returned text, in bytes.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub output_bytes: Option<u64>,
}

impl LimitFlags {
    /// The policy file's options (or the defaults) with the flags given over them,
    /// checked once.
    pub fn options(
        &self,
        cache_dir: Option<PathBuf>,
        max_concurrent_calls: Option<u32>,
        state: &StateArgs,
    ) -> Result<RuntimeOptions> {
        let mut policy = match &self.policy {
            Some(path) => host_shim::Policy::from_file(path)?,
            None => host_shim::Policy::default(),
        };
        // Over a cluster, a call may ride out a leader election (a policy file's
        // deadline stands).
        if self.policy.is_none() && state.cluster()?.is_some() {
            policy.deadline_ms = CLUSTER_DEADLINE.as_millis() as u64;
        }
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

pub fn read_settings(path: Option<&Path>) -> Result<String> {
    match path {
        None => Ok(String::new()),
        Some(path) => std::fs::read_to_string(path)
            .with_context(|| format!("cannot read settings file {}", path.display())),
    }
}

pub fn plugin_bytes(path: Option<&Path>) -> Result<std::borrow::Cow<'static, [u8]>> {
    match path {
        None => Ok(host_shim_plugin::PLUGIN_WASM.into()),
        Some(path) => Ok(std::fs::read(path)
            .with_context(|| format!("cannot read plugin {}", path.display()))?
            .into()),
    }
}
