//! The command line: every flag defined here, and turned here into what the commands
//! run with (the stores, the runtime options, the settings, the plugin), once. The
//! flags of each harness are its profile's ([`host_shim_profile`]), added to the
//! commands that take them when the command line is built ([`parse`]), read by the
//! profile from [`HarnessFlags`].

use crate::state::{CLUSTER_DEADLINE, StateArgs};
use anyhow::{Context, Result};
use clap::{ArgGroup, ArgMatches, CommandFactory, FromArgMatches, Parser, Subcommand};
use host_shim::{Corpus, CorpusHost, Harnesses, RuntimeOptions, SharedInbox, Store};
use host_shim_nats::{Cluster, MachineHost};
use host_shim_profile::{HarnessProfile, Hook, Purpose, StoreInputs, WriteHook, path_of};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// What the command line asks for: a command, or one run of a harness's hook.
pub enum Invocation {
    Command(Box<Cli>),
    /// One run of a harness's hook, answered by its profile.
    Hook {
        profile: &'static dyn HarnessProfile,
        hook: &'static Hook,
        state: StateArgs,
    },
    /// One run of a harness's pre-write hook, answered by its profile.
    WriteHook {
        profile: &'static dyn HarnessProfile,
        hook: &'static WriteHook,
        args: Box<WriteHookArgs>,
    },
}

/// Builds the command line with every profile's flags and hooks, parses the process's
/// arguments (a bad one ends the process with clap's message), and hands each command
/// the harness flags it was given.
pub fn parse(profiles: &'static [&'static dyn HarnessProfile]) -> Invocation {
    let matches = command(profiles).get_matches();
    let sub = matches.subcommand();
    if let Some((name, sub)) = sub
        && let Some((profile, hook)) = (profiles.iter())
            .filter_map(|&profile| Some((profile, profile.hook()?)))
            .find(|(_, hook)| hook.command == name)
    {
        let state = StateArgs::from_arg_matches(sub).unwrap_or_else(|err| err.exit());
        return Invocation::Hook {
            profile,
            hook,
            state,
        };
    }
    if let Some((name, sub)) = sub
        && let Some((profile, hook)) = (profiles.iter())
            .filter_map(|&profile| Some((profile, profile.write_hook()?)))
            .find(|(_, hook)| hook.command == name)
    {
        let mut args = WriteHookArgs::from_arg_matches(sub).unwrap_or_else(|err| err.exit());
        args.source.harnesses = HarnessFlags {
            profiles,
            matches: sub.clone(),
        };
        return Invocation::WriteHook {
            profile,
            hook,
            args: Box::new(args),
        };
    }
    let mut cli = Cli::from_arg_matches(&matches).unwrap_or_else(|err| err.exit());
    let given = HarnessFlags {
        profiles,
        matches: sub.map(|(_, sub)| sub.clone()).unwrap_or_default(),
    };
    match &mut cli.command {
        Some(Command::Call(args)) => args.source.harnesses = given,
        Some(Command::CheckWrite(args)) => args.source.harnesses = given,
        Some(Command::Mcp(args)) => args.source.harnesses = given,
        Some(Command::Watch(args)) => args.harnesses = given,
        Some(Command::Demo(args)) => args.harnesses = given,
        Some(Command::Setup(args)) => args.places.harnesses = given,
        Some(Command::Doctor(args)) => args.places.harnesses = given,
        Some(Command::RemoveState(args)) => args.places.harnesses = given,
        _ => {}
    }
    Invocation::Command(Box::new(cli))
}

/// The command line: [`Cli`] with each profile's flags on the commands that take them,
/// and each profile's hooks as commands of their own.
pub fn command(profiles: &[&'static dyn HarnessProfile]) -> clap::Command {
    let sessions: Vec<clap::Arg> = profiles.iter().map(|p| p.sessions_flag()).collect();
    let ids: Vec<clap::Id> = sessions.iter().map(|arg| arg.get_id().clone()).collect();
    let delivery: Vec<clap::Arg> = profiles.iter().flat_map(|p| p.delivery_flags()).collect();
    let places: Vec<clap::Arg> = profiles.iter().flat_map(|p| p.place_flags()).collect();
    let setup_only: Vec<clap::Arg> = profiles.iter().flat_map(|p| p.setup_flags()).collect();
    let titles: Vec<String> = (profiles.iter())
        .map(|p| format!("{} ({})", p.name(), p.title()))
        .collect();
    let names: Vec<&'static str> = profiles.iter().map(|p| p.name()).collect();
    let titles_only: Vec<String> = profiles.iter().map(|p| p.title().to_string()).collect();
    // Over a harness's sessions, or over a corpus: not both.
    let serving = |command: clap::Command| {
        (command.args(
            sessions
                .iter()
                .map(|arg| arg.clone().conflicts_with("corpus")),
        ))
        .args(delivery.iter().cloned())
    };
    let mut command = Cli::command()
        .about(format!(
            "Cross-session tools for agent harnesses: the session-tools plugin under wasmtime over the sessions of {} on this machine (and of other machines joined through NATS), or over an in-memory corpus",
            listed(&titles_only, "and")
        ))
        .mut_subcommand("call", serving)
        .mut_subcommand("check-write", serving)
        .mut_subcommand("mcp", serving)
        .mut_subcommand("watch", |c| c.args(sessions.iter().cloned()))
        // A tour is of one harness's sessions.
        .mut_subcommand("demo", |c| {
            c.args(sessions.iter().cloned())
                .group(ArgGroup::new("harness").args(ids.iter().cloned()).multiple(false))
        })
        .mut_subcommand("setup", |c| {
            c.mut_arg("harness", |arg| {
                arg.value_parser(clap::builder::PossibleValuesParser::new(names.clone()))
                    .help(format!("The harness: {}.", listed(&titles, "or")))
            })
            .args(places.iter().cloned())
            .args(setup_only.iter().cloned())
        })
        .mut_subcommand("doctor", |c| c.args(places.iter().cloned()))
        .mut_subcommand("remove-state", |c| c.args(places.iter().cloned()));
    for hook in profiles.iter().filter_map(|profile| profile.hook()) {
        // The state folder's flags, then the hook's own words (over the struct's).
        let run = <StateArgs as clap::Args>::augment_args(clap::Command::new(hook.command));
        command = command.subcommand(run.about(hook.about));
    }
    // A pre-write hook takes the flags its harness's server takes.
    for hook in profiles.iter().filter_map(|profile| profile.write_hook()) {
        let run = <WriteHookArgs as clap::Args>::augment_args(clap::Command::new(hook.command));
        command = command.subcommand(serving(run).about(hook.about()));
    }
    command
}

/// `a, b or c` (`word` between the last two).
pub fn listed(items: &[String], word: &str) -> String {
    match items.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} {word} {last}", rest.join(", ")),
    }
}

/// The harness flags a command was given, with the profiles that read them.
#[derive(Clone, Default)]
pub struct HarnessFlags {
    profiles: &'static [&'static dyn HarnessProfile],
    matches: ArgMatches,
}

impl HarnessFlags {
    /// Every harness the command knows.
    pub fn profiles(&self) -> &'static [&'static dyn HarnessProfile] {
        self.profiles
    }

    /// The command's flags, each profile's among them.
    pub fn matches(&self) -> &ArgMatches {
        &self.matches
    }

    /// The harnesses whose sessions the flags name, each with where they are, in the
    /// profiles' order.
    pub fn named(&self) -> Vec<(&'static dyn HarnessProfile, PathBuf)> {
        (self.profiles.iter())
            .filter_map(|&profile| {
                let flag = profile.sessions_flag();
                let place = path_of(&self.matches, flag.get_id().as_str())?;
                Some((profile, place.to_path_buf()))
            })
            .collect()
    }

    /// The stores over the sessions the flags name, in the profiles' order (an id two
    /// hold is the first's), delivering to `inbox`.
    pub fn stores(
        &self,
        inbox: &SharedInbox,
        state: &StateArgs,
        purpose: Purpose,
    ) -> Result<Vec<Box<dyn Store>>> {
        let with = StoreInputs {
            inbox,
            state,
            purpose,
            flags: &self.matches,
        };
        (self.named().into_iter())
            .map(|(profile, place)| profile.store(&place, &with))
            .collect()
    }
}

#[derive(Parser)]
#[command(name = "host-shim", version = crate::VERSION)]
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
    /// list and read one harness's own sessions (--claude-projects, …).
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
    /// Ask the plugin whether a session may write these files now (the check a
    /// harness's hook makes before a file-writing tool runs): prints `allowed`, or the
    /// refusal the model would read (exit status 2; the audit log records it), or why
    /// the claims could not be checked (the write goes ahead).
    CheckWrite(CheckWriteArgs),
    /// Serve the tools over the Model Context Protocol on stdio, for any MCP client
    /// (Claude Code, Codex, Cursor, Zed, …): each tools/call runs in a fresh sandboxed
    /// instance.
    Mcp(McpArgs),
    /// Print the audit log: every message the state folder's inbox accepted and every
    /// hand-over (time, from, to, mode, hop, size, the body's hash; the body when it was
    /// recorded with --log-bodies).
    Log(LogArgs),
    /// Say what a session takes from other sessions (a person's choice, never a
    /// model's): accept (the default), hold (kept until you release them with accept)
    /// or refuse. Without a policy, print the session's and what waits for it.
    Inbound(InboundArgs),
    /// List the claims sessions hold on files (sessions_claim), or release one:
    /// `claims release ID` ends it for every session at once (a person's say).
    Claims(ClaimsArgs),
    /// Set a harness up to run the tools: its MCP server, hooks and permission, in its
    /// own configuration files, pointing at this binary (everything else in them is
    /// kept; each file's previous bytes are kept beside it as FILE.before-session-tools,
    /// which --remove takes away with setup's entries).
    Setup(SetupArgs),
    /// Look over what the tools need here: for each harness found, its version, the
    /// server (registered, starts, lists the tools), the hooks and permission; the
    /// state folder's modes, messages stuck for an hour, registrations of dead
    /// processes. Each problem with the command that fixes it; exits 1 when any.
    Doctor(DoctorArgs),
    /// Remove the tools' own state folder (inbox, marks, registry, call-stamp key,
    /// audit log) and compiled-plugin cache, once no harness here is set up for them
    /// (`setup HARNESS --remove` leaves both); refuses while messages wait, unless
    /// --discard-waiting.
    RemoveState(RemoveStateArgs),
    /// A live view of the sessions (live or idle, what each lets in, what waits for it)
    /// and the messages between them (waiting or handed over); keys read a message and
    /// hold, accept or refuse a session's inbound.
    Watch(WatchArgs),
    /// Print one machine's NATS user block for the deployment's server configuration
    /// (`authorization { users: [ … ] }`): the subjects it may publish and subscribe to,
    /// confined to its own place (docs/nats.md, "Credentials").
    NatsUser(NatsUserArgs),
    /// Write the embedded plugin component (plugin.wasm) to a file.
    Plugin {
        /// Where to write it.
        #[arg(long)]
        out: PathBuf,
    },
}

#[derive(clap::Args)]
pub struct NatsUserArgs {
    /// The machine's name, as its cluster file says it.
    pub machine: String,
    /// The user's password as the server configuration holds it (a bcrypt hash from
    /// `nats server passwd`, or the password itself).
    #[arg(long)]
    pub password: String,
    /// The deployment's bucket (the cluster files' "bucket").
    #[arg(long, default_value = "session-tools")]
    pub bucket: String,
    /// Only these machines' sessions may be messaged from it (comma-separated; it
    /// always reaches its own).
    #[arg(long)]
    pub reaches: Option<String>,
}

#[derive(clap::Args)]
pub struct WatchArgs {
    /// The harnesses whose sessions are listed with their titles.
    #[arg(skip)]
    pub harnesses: HarnessFlags,
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
pub struct RemoveStateArgs {
    #[command(flatten)]
    pub places: HarnessPlaces,
    /// Remove the inbox even with messages waiting in it (they are lost).
    #[arg(long)]
    pub discard_waiting: bool,
}

#[derive(clap::Args)]
pub struct SetupArgs {
    /// The harness (its name, from the profiles).
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
}

/// Where the harnesses' own files and the state folder are, for `setup` and `doctor`.
#[derive(clap::Args)]
pub struct HarnessPlaces {
    /// The state folder for the server and hooks (default: $XDG_STATE_HOME/session-tools
    /// or ~/.local/state/session-tools).
    #[arg(long)]
    pub state_dir: Option<PathBuf>,
    /// Where each harness's files are (its profile's place flags).
    #[arg(skip)]
    pub harnesses: HarnessFlags,
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
pub struct CheckWriteArgs {
    /// The files the tool would write (relative ones are taken from the session's
    /// workspace).
    #[arg(required = true)]
    pub paths: Vec<String>,
    /// The writing session's id.
    #[arg(long)]
    pub caller: String,
    #[command(flatten)]
    pub source: SourceArgs,
    #[command(flatten)]
    pub limits: LimitFlags,
}

/// A pre-write hook's flags: those of the server it checks writes for.
#[derive(clap::Args)]
pub struct WriteHookArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    #[command(flatten)]
    pub limits: LimitFlags,
}

#[derive(clap::Args)]
pub struct ClaimsArgs {
    /// `release`: end the claim ID, whoever holds it.
    #[arg(value_parser = ["release"])]
    pub action: Option<String>,
    /// The claim's id (c-…), as `host-shim claims` lists it.
    pub id: Option<String>,
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
    /// The harness whose sessions the tour lists and reads instead of the demo corpus.
    #[arg(skip)]
    pub harnesses: HarnessFlags,
    /// The session the tour calls from (default: the newest top-level session).
    #[arg(long)]
    pub caller: Option<String>,
    #[command(flatten)]
    pub state: StateArgs,
}

/// What a call runs over: the store, the deployment, the plugin.
#[derive(clap::Args)]
pub struct SourceArgs {
    /// Corpus JSON file (default: the embedded demo corpus).
    #[arg(long)]
    pub corpus: Option<PathBuf>,
    /// The harnesses whose own sessions are served instead of a corpus (each
    /// profile's flags); sends go to the state folder's inbox. Several: every one's
    /// sessions in one listing, each messageable from the others.
    #[arg(skip)]
    pub harnesses: HarnessFlags,
    #[command(flatten)]
    pub state: StateArgs,
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
        !self.harnesses.named().is_empty()
    }

    /// The stores, in the order they are asked: each harness's the flags name, in the
    /// profiles' order (an id two hold is the first's), then the other machines' when
    /// this one joined a cluster; a corpus alone otherwise. `deadline` is the calls'.
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
        (self.harnesses).stores(inbox, &self.state, Purpose::Serve { deadline })
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

#[derive(clap::Args)]
pub struct McpArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    /// The calling session's id (default: what the harness's client names in the
    /// server's environment, e.g. $CLAUDE_CODE_SESSION_ID; else the corpus file's
    /// "caller").
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

/// A plugin that imports WASI runs with a deny-all WASI; the host says so.
pub fn say_wasi<H: host_shim::Harness>(runtime: &host_shim::Runtime<H>) {
    if !runtime.wasi_imports().is_empty() {
        eprintln!(
            "host-shim: note: the plugin imports WASI ({} interfaces); it gets a deny-all WASI: no files, environment, arguments or sockets, stdio discarded",
            runtime.wasi_imports().len()
        );
    }
}
