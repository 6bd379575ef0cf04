//! A harness as the command knows it: everything `host-shim` needs of one harness,
//! declared in that harness's own folder (`harnesses/<name>/`). The commands loop over
//! one list of profiles (`harnesses::ALL`) and never name a harness: a new harness is
//! a new folder and one line in that list.
//!
//! A profile says, in order of the commands that use it:
//!
//! - where its sessions are (one flag) and how messages reach them (flags of `call`
//!   and `mcp`), and how those flags become its store ([`HarnessProfile::store`]);
//! - what its MCP client sends ([`HarnessProfile::mcp_client`]) and what `mcp` runs
//!   beside the calls while it serves this harness ([`HarnessProfile::serve`]);
//! - its hook commands ([`Hook`]);
//! - where its own files are, what `setup` writes there and `--remove` takes out;
//! - what `doctor` checks, each problem with its fix;
//! - the words of the demo's tour of its sessions.

use crate::doctor::checks::Report;
use crate::setup::change::Change;
use crate::state::StateArgs;
use anyhow::Result;
use clap::{Arg, ArgMatches};
use host_shim::inbox::HookReport;
use host_shim::{Harnesses, McpClient, Shared, SharedInbox, Store, WakeCommand};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// One harness, as every command needs it.
pub trait HarnessProfile: Sync {
    /// The name `setup` takes and a fix names (`claude`).
    fn name(&self) -> &'static str;

    /// How a person calls it (`Claude Code`).
    fn title(&self) -> &'static str;

    /// The flag naming where its sessions are (`--claude-projects DIR`), on `call`,
    /// `mcp`, `watch` and `demo`. Its id is how the store finds its value.
    fn sessions_flag(&self) -> Arg;

    /// Flags of `call` and `mcp` saying how messages reach its sessions (a wake
    /// command, a daemon); each should `requires` the sessions flag.
    fn delivery_flags(&self) -> Vec<Arg> {
        Vec::new()
    }

    /// Its store over the sessions in `place` (the sessions flag's value), with the
    /// other flags given.
    fn store(&self, place: &Path, flags: &ArgMatches, with: &StoreInputs)
    -> Result<Box<dyn Store>>;

    /// Where its MCP client names the calling session and the call.
    fn mcp_client(&self) -> McpClient;

    /// What `host-shim mcp` runs beside the calls while it serves this harness's
    /// sessions (a session's lifecycle, a companion's requests); nothing by default.
    fn serve(&self, _serving: &Serving) -> Result<ServedParts> {
        Ok(ServedParts::default())
    }

    /// Its hook commands (`host-shim claude-hook`).
    fn hooks(&self) -> &'static [Hook] {
        &[]
    }

    /// The demo's words for a tour of its sessions.
    fn tour(&self) -> Tour;

    /// Flags of `setup` and `doctor` naming where its own files are.
    fn place_flags(&self) -> Vec<Arg>;

    /// Flags of `setup` for this harness only (each is refused for another harness).
    fn setup_flags(&self) -> Vec<Arg> {
        Vec::new()
    }

    /// Where its sessions are on this machine (there or not yet): `setup` points
    /// every harness's server at all of them that are there, so one listing holds
    /// them all.
    fn sessions_place(&self, places: &ArgMatches) -> Result<PathBuf>;

    /// What `setup` (or `setup --remove`) changes in its files.
    fn setup(&self, places: &ArgMatches, setup: &SetupInputs) -> Result<Vec<Change>>;

    /// What a person is told once `setup` wrote its files.
    fn set_up(&self) -> &'static str;

    /// The command a person runs it with (`claude`), for `doctor`'s version check.
    fn command(&self) -> &'static str;

    /// The version its real-client suite runs (that suite's package.json).
    fn tested_version(&self) -> &'static str;

    /// Its folder as a person knows it (`~/.claude`), for `doctor`'s "none found".
    fn home_hint(&self) -> &'static str;

    /// Whether its files are on this machine (its command on PATH is checked apart):
    /// by default, whether the place of its sessions is there.
    fn found(&self, places: &ArgMatches) -> Result<bool> {
        Ok(self.sessions_place(places)?.exists())
    }

    /// `doctor`'s checks of its set-up; `fix` is the setup command that fixes most.
    fn check(&self, places: &ArgMatches, report: &mut Report, fix: &str);

    /// The command that resumes `session` when it is one of this harness's here (its
    /// next prompt takes what waits for it).
    fn resume(&self, _places: &ArgMatches, _session: &str) -> Option<String> {
        None
    }
}

/// A flag naming a file or folder (`--claude-projects DIR`), read as a path.
pub fn path_flag(
    id: &'static str,
    long: &'static str,
    value_name: &'static str,
    help: &'static str,
) -> Arg {
    Arg::new(id)
        .long(long)
        .value_name(value_name)
        .value_parser(clap::value_parser!(PathBuf))
        .help(help)
}

/// The path the flag `id` names on this command, when it was given (and the command
/// has it).
pub fn path_of<'a>(flags: &'a ArgMatches, id: &str) -> Option<&'a Path> {
    (flags.try_get_one::<PathBuf>(id).ok().flatten()).map(PathBuf::as_path)
}

/// What a store is built with besides its own flags.
pub struct StoreInputs<'a> {
    /// The inbox every store of this process delivers to.
    pub inbox: &'a SharedInbox,
    /// The state folder (its presence).
    pub state: &'a StateArgs,
    /// What the store is for.
    pub purpose: Purpose,
}

impl StoreInputs<'_> {
    /// The wake command the flag `id` names, for a store that serves calls; none for
    /// one that only looks.
    pub fn wake_command(&self, flags: &ArgMatches, id: &str) -> Result<Option<WakeCommand>> {
        match self.purpose {
            Purpose::Serve { .. } => (flags.try_get_one::<String>(id).ok().flatten())
                .map(|template| WakeCommand::parse(template))
                .transpose(),
            Purpose::Look => Ok(None),
        }
    }
}

/// What a store is built for.
#[derive(Clone, Copy, Debug)]
pub enum Purpose {
    /// Calls that may deliver: waking and hand-overs at once as the flags say; a
    /// hand-over through a daemon gets at most `deadline`.
    Serve { deadline: Duration },
    /// Looking only (`watch`, the demo): it never wakes a session or hands over.
    Look,
}

/// What a profile's [`HarnessProfile::serve`] is given.
pub struct Serving<'a> {
    /// The stores the server answers from.
    pub harness: &'a Shared<Harnesses>,
    /// The server's caller, when it knows one.
    pub caller: Option<&'a str>,
    /// The inbox of the stores.
    pub inbox: &'a SharedInbox,
    /// The state folder.
    pub state: &'a StateArgs,
    /// Where the harness keeps its sessions (its sessions flag).
    pub place: &'a Path,
}

/// What a profile runs beside an MCP server's calls.
#[derive(Default)]
pub struct ServedParts {
    /// Held while the server runs; dropped as it ends (a registration).
    pub held: Option<Box<dyn Send>>,
    /// The session that really made a call, where the harness can tell one of its
    /// subagents from the server's caller.
    pub caller_of_call: Option<CallerOfCall>,
    /// Requests besides MCP's that the harness's client sends.
    pub companion: Option<Arc<dyn Companion>>,
}

/// Who really made a call, given the server's caller and the call id: `None` leaves
/// the server's caller.
pub type CallerOfCall = Box<dyn Fn(&str, &str) -> Option<String> + Send + Sync>;

/// Requests a harness's client sends an MCP server besides MCP's own, all under one
/// method prefix.
pub trait Companion: Send + Sync {
    /// The prefix of its methods (`session-tools/`).
    fn prefix(&self) -> &'static str;

    /// Answers one request; may block (it runs off the protocol's threads) until
    /// `interrupted` says the client cancelled it.
    fn request(
        &self,
        method: &str,
        params: &serde_json::Value,
        interrupted: &dyn Fn() -> bool,
    ) -> Result<serde_json::Value, rmcp::ErrorData>;

    /// The client closed the connection: its process is gone.
    fn client_gone(&self);
}

/// One hook command of a harness: `host-shim <command>` reads the hook's input on
/// stdin and writes its answer on stdout.
pub struct Hook {
    /// The subcommand (`claude-hook`).
    pub command: &'static str,
    /// Its help: what it hands over at which event.
    pub about: &'static str,
    /// One run over the state folder's inbox.
    pub answer: fn(&StateArgs, &[u8], &mut dyn Write) -> Result<HookReport>,
}

/// The demo's words for a harness's sessions.
pub struct Tour {
    /// What the sessions are, e.g. "Claude Code's sessions".
    pub sessions: &'static str,
    /// The error when there are none, e.g. "the projects folder holds no Claude Code
    /// sessions".
    pub none: &'static str,
    /// The page that lets them message each other.
    pub page: &'static str,
}

/// What `setup` is given besides a harness's places.
pub struct SetupInputs<'a> {
    /// Take setup's entries out instead.
    pub remove: bool,
    /// What the harness is told to run: this binary and the state folder.
    pub commands: &'a crate::setup::change::Commands,
    /// The setup command's flags (its harness's [`HarnessProfile::setup_flags`]).
    pub flags: &'a ArgMatches,
}
