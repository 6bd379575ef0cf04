//! A harness as the `host-shim` command knows it: the vocabulary each harness crate
//! (`host-shim/harnesses/<name>/`) declares its profile in, and the command loops over.
//! The command names no harness: it takes one list of profiles, so a new harness is a
//! new crate and one line in that list. This crate holds only the words both sides
//! share (the profile trait, setup's changes and the JSON and hook-file helpers,
//! doctor's report, the plugin companion's requests); it knows no command line beyond
//! the flags a profile declares, and no MCP SDK.
//!
//! A harness's facts are data, its crate's `harness.toml` ([`facts`](mod@facts)); its profile says
//! in code, in order of the commands that use it:
//!
//! - how its flags become its store ([`HarnessProfile::store`]), and where its home is
//!   when no flag names it ([`HarnessProfile::find_home`]);
//! - what its MCP client sends ([`HarnessProfile::mcp_client`]) and what `mcp` runs
//!   beside the calls while it serves this harness ([`HarnessProfile::serve`]);
//! - its hooks' answers ([`HarnessProfile::answer_hook`], and a pre-write hook's
//!   [`HarnessProfile::ask_write`] and [`HarnessProfile::refuse_write`]);
//! - where its own files are, what `setup` writes there and `--remove` takes out;
//! - what `doctor` checks, each problem with its fix.

pub mod change;
pub mod checks;
pub mod companion;
pub mod facts;
pub mod hooks;
pub mod json;
pub mod write;

pub use facts::{Facts, Hook, PathFlag, Tour, WakeFlag};
pub use host_shim::McpClient;
pub use write::{WriteAsk, WriteHook, Written};

use crate::change::Change;
use crate::checks::Report;
use anyhow::Result;
use clap::{Arg, ArgMatches};
use host_shim::inbox::HookReport;
use host_shim::{Harnesses, Presence, Shared, SharedInbox, Store, WakeCommand};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// The name setup gives our MCP server in every harness's config; each harness makes the
/// model's names for the tools from it (`mcp__session-tools__sessions_list`, …).
pub const SERVER: &str = "session-tools";

/// The Cargo build folder (`target/`) `command` lies in, if it does: `cargo clean`
/// empties it, and every harness set up with a command there loses its tools. Cargo
/// marks the folder with a `CACHEDIR.TAG` naming it.
pub fn build_folder_of(command: &Path) -> Option<PathBuf> {
    (command.ancestors().skip(1))
        .find(|folder| {
            std::fs::read_to_string(folder.join("CACHEDIR.TAG"))
                .is_ok_and(|tag| tag.contains("created by cargo"))
        })
        .map(Path::to_path_buf)
}

/// What a person is told of a command set up from a build folder (`cargo clean`
/// removes it), with how to install one that lasts.
pub fn build_folder_warning(command: &Path, folder: &Path) -> String {
    format!(
        "{} is in a Cargo build folder ({}): `cargo clean` or a new build removes or \
         replaces it under every harness set up with it. Install the command where it lasts \
         (`npm install -g @session-tools/host-shim`, or `cargo install --locked --path \
         host-shim/cli`) and run setup again with that one",
        command.display(),
        folder.display()
    )
}

/// One harness, as every command needs it: its [`Facts`], and what differs from one
/// harness to another (its store, its files, its checks). What every profile does the
/// same way is a default here.
pub trait HarnessProfile: Sync {
    /// Its fixed facts.
    fn facts(&self) -> &'static Facts;

    /// The name `setup` takes and a fix names (`claude`).
    fn name(&self) -> &'static str {
        self.facts().name
    }

    /// How a person calls it (`Claude Code`).
    fn title(&self) -> &'static str {
        self.facts().title
    }

    /// The flag naming where its sessions are (`--claude-projects DIR`), on `call`,
    /// `mcp`, `watch` and `demo`. Its id is how the store finds its value.
    fn sessions_flag(&self) -> Arg {
        self.facts().sessions.arg()
    }

    /// Flags of `call` and `mcp` saying how messages reach its sessions (a wake
    /// command, a daemon); each should `requires` the sessions flag. By default, its
    /// wake flag.
    fn delivery_flags(&self) -> Vec<Arg> {
        let facts = self.facts();
        (facts.wake.iter())
            .map(|wake| wake.arg(wake.help).requires(facts.sessions.long))
            .collect()
    }

    /// Its store over the sessions in `place` (the sessions flag's value), with the
    /// other flags given.
    fn store(&self, place: &Path, with: &StoreInputs) -> Result<Box<dyn Store>>;

    /// Where its MCP client names the calling session and the call.
    fn mcp_client(&self) -> McpClient;

    /// What `host-shim mcp` runs beside the calls while it serves this harness's
    /// sessions (a session's lifecycle, a companion's requests); nothing by default.
    fn serve(&self, _serving: &Serving) -> Result<ServedParts> {
        Ok(ServedParts::default())
    }

    /// Its hook command (`host-shim claude-hook`), when its facts name one.
    fn hook(&self) -> Option<&'static Hook> {
        self.facts().hook.as_ref()
    }

    /// One run of its hook ([`Facts::hook`]) over the state folder: the hook's input,
    /// its answer written to `out`. Every profile whose facts name a hook answers it.
    fn answer_hook(&self, _call: HookCall) -> Result<HookReport> {
        anyhow::bail!("{} has no hook command", self.title())
    }

    /// Its pre-write hook (`host-shim claude-write-hook`), which asks the plugin before
    /// a file-writing tool runs, when its facts name one.
    fn write_hook(&self) -> Option<&'static WriteHook> {
        self.facts().write_hook.as_ref()
    }

    /// Its pre-write hook's question: the session and the files the tool would write,
    /// from the hook's input; `None` for a tool that writes no file (or one the hook
    /// does not check). Every profile whose facts name a pre-write hook answers it.
    fn ask_write(&self, _input: &[u8]) -> Result<Option<WriteAsk>> {
        anyhow::bail!("{} has no pre-write hook", self.title())
    }

    /// Writes its pre-write hook's answer refusing the write, `text` what the model
    /// reads: by default a `PreToolUse` hook's denial, as Claude Code and Codex read it.
    fn refuse_write(&self, text: &str, out: &mut dyn Write) -> Result<()> {
        write::deny_pre_tool_use(text, out)
    }

    /// The demo's words for a tour of its sessions.
    fn tour(&self) -> &'static Tour {
        &self.facts().tour
    }

    /// Flags of `setup` and `doctor` naming where its own files are: its places, and
    /// its sessions flag where that folder holds them.
    fn place_flags(&self) -> Vec<Arg> {
        let facts = self.facts();
        let home = (facts.place_help).map(|help| facts.sessions.arg_with(help));
        (facts.places.iter().map(PathFlag::arg))
            .chain(home)
            .collect()
    }

    /// Flags of `setup` for this harness only (each is refused for another harness):
    /// by default, its wake flag.
    fn setup_flags(&self) -> Vec<Arg> {
        (self.facts().wake.iter())
            .filter_map(|wake| Some(wake.arg(wake.setup_help?)))
            .collect()
    }

    /// Where its sessions are on this machine (there or not yet): `setup` points
    /// every harness's server at all of them that are there, so one listing holds
    /// them all. By default, its sessions flag's value, else its home.
    fn sessions_place(&self, places: &ArgMatches) -> Result<PathBuf> {
        let facts = self.facts();
        let flag = &facts.sessions;
        if let Some(place) = path_of(places, flag.long) {
            return Ok(place.to_path_buf());
        }
        match self.find_home() {
            Some(place) => Ok(place),
            None => anyhow::bail!(
                "no HOME to find {}'s files in: set HOME{}, or pass --{} {}",
                facts.title,
                facts
                    .home_env
                    .map(|env| format!(" or {env}"))
                    .unwrap_or_default(),
                flag.long,
                flag.value_name,
            ),
        }
    }

    /// Where its sessions are when no flag names them, as the harness finds its home
    /// (its variable, [`Facts::home_env`], else a folder under HOME); none by default,
    /// and without its variable or HOME.
    fn find_home(&self) -> Option<PathBuf> {
        None
    }

    /// What `setup` (or `setup --remove`) changes in its files.
    fn setup(&self, places: &ArgMatches, setup: &SetupInputs) -> Result<Vec<Change>>;

    /// What a person is told once `setup` wrote its files.
    fn set_up(&self) -> &'static str {
        self.facts().set_up
    }

    /// The command a person runs it with, for `doctor`'s version check: by default its
    /// name (`claude`).
    fn command(&self) -> &'static str {
        self.name()
    }

    /// The version its real-client suite runs (that suite's package.json).
    fn tested_version(&self) -> &'static str {
        self.facts().tested_version
    }

    /// Its folder as a person knows it (`~/.claude`), for `doctor`'s "none found".
    fn home_hint(&self) -> &'static str {
        self.facts().home_hint
    }

    /// Whether its files are on this machine (its command on PATH is checked apart):
    /// by default, whether the place of its sessions is there.
    fn found(&self, places: &ArgMatches) -> Result<bool> {
        Ok(self.sessions_place(places)?.exists())
    }

    /// `doctor`'s checks of its set-up; `fix` is the setup command that fixes most. By
    /// default, [`HarnessProfile::check_place`] over where its sessions are, or the
    /// reason that place cannot be found.
    fn check(&self, places: &ArgMatches, report: &mut Report, fix: &str) {
        match self.sessions_place(places) {
            Ok(place) => self.check_place(&place, report, fix),
            Err(err) => report.problem(&format!("{err:#}"), fix),
        }
    }

    /// `doctor`'s checks of its set-up over where its sessions are.
    fn check_place(&self, _place: &Path, _report: &mut Report, _fix: &str) {}

    /// The command that resumes `session` when it is one of this harness's here (its
    /// next prompt takes what waits for it): by default, its resume command when its
    /// sessions' place [holds](HarnessProfile::holds) it.
    fn resume(&self, places: &ArgMatches, session: &str) -> Option<String> {
        let template = self.facts().resume?;
        let place = self.sessions_place(places).ok()?;
        (self.holds(&place, session)).then(|| template.replace("{id}", session))
    }

    /// Whether the sessions in `place` hold `session`: by default, whether its store
    /// there, opened only to look, finds it.
    fn holds(&self, place: &Path, session: &str) -> bool {
        let flags = ArgMatches::default();
        let with = StoreInputs {
            inbox: &throwaway_inbox(),
            state: &LookingOnly,
            purpose: Purpose::Look,
            flags: &flags,
        };
        (self.store(place, &with)).is_ok_and(|mut store| store.get_session(session).is_some())
    }
}

/// [`HarnessProfile::find_home`], [`HarnessProfile::setup`] and
/// [`HarnessProfile::check_place`] of a harness whose own files are in the folder of its
/// sessions (its home: `~/.codex`, `~/.gemini`): `$find()` finds the home, what
/// `$changes(home, setup)` changes there, and `$check(report, home, fix)` checks.
/// Written inside the profile's `impl HarnessProfile`.
#[macro_export]
macro_rules! files_in_home {
    ($find:path, $changes:path, $check:path) => {
        fn find_home(&self) -> Option<std::path::PathBuf> {
            $find()
        }

        fn setup(
            &self,
            places: &clap::ArgMatches,
            setup: &$crate::SetupInputs,
        ) -> anyhow::Result<Vec<$crate::change::Change>> {
            $changes(&self.sessions_place(places)?, setup)
        }

        fn check_place(
            &self,
            home: &std::path::Path,
            report: &mut $crate::checks::Report,
            fix: &str,
        ) {
            $check(report, home, fix)
        }
    };
}

/// The state of a store opened only to look: an inbox nothing is delivered through, no
/// session live, and no folder.
struct LookingOnly;

impl StateFolder for LookingOnly {
    fn root(&self) -> Result<PathBuf> {
        anyhow::bail!("a store opened only to look has no state folder")
    }

    fn inbox(&self) -> Result<SharedInbox> {
        Ok(throwaway_inbox())
    }

    fn presence(&self) -> Result<Arc<dyn Presence>> {
        Ok(Arc::new(NoneLive))
    }
}

/// A presence that knows no live session and registers none.
struct NoneLive;

impl Presence for NoneLive {
    fn live_sessions(&self) -> std::collections::HashSet<String> {
        Default::default()
    }

    fn register_live(&self, _session: &str) -> Result<host_shim::presence::Registration> {
        anyhow::bail!("a store opened only to look registers no session")
    }

    fn set_idle(&self, _session: &str, _idle: bool) -> Result<()> {
        Ok(())
    }

    fn is_idle(&self, _session: &str) -> bool {
        false
    }
}

/// An inbox for a store opened only to look (`doctor`'s resume, whether a session is
/// there): nothing is delivered through it.
pub fn throwaway_inbox() -> SharedInbox {
    Arc::new(host_shim::MemoryInbox::new())
}

/// The version of `package` a real-client suite's `package.json` pins
/// (`"package": "version"`), read as the crate is compiled: the version a profile's
/// [`Facts::tested_version`] names is the one its suite runs, written once. A pin that
/// is not there fails the build.
pub const fn pinned_version(package_json: &'static str, package: &str) -> &'static str {
    let text = package_json.as_bytes();
    let name = package.as_bytes();
    let mut at = 0;
    while at + name.len() + 2 <= text.len() {
        if text[at] == b'"' && same_at(text, at + 1, name) && text[at + 1 + name.len()] == b'"' {
            let mut start = at + name.len() + 2;
            while start < text.len() && (text[start] == b':' || text[start] == b' ') {
                start += 1;
            }
            if start < text.len() && text[start] == b'"' {
                let (_, rest) = text.split_at(start + 1);
                let mut end = 0;
                while end < rest.len() && rest[end] != b'"' {
                    end += 1;
                }
                let (version, _) = rest.split_at(end);
                match std::str::from_utf8(version) {
                    Ok(version) if !version.is_empty() => return version,
                    _ => panic!("the pinned version is not a version"),
                }
            }
        }
        at += 1;
    }
    panic!("the package is not pinned in the suite's package.json")
}

/// Whether `name` stands in `text` at `at`.
const fn same_at(text: &[u8], at: usize, name: &[u8]) -> bool {
    if at + name.len() > text.len() {
        return false;
    }
    let mut i = 0;
    while i < name.len() {
        if text[at + i] != name[i] {
            return false;
        }
        i += 1;
    }
    true
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
    pub state: &'a dyn StateFolder,
    /// What the store is for.
    pub purpose: Purpose,
    /// The command's flags (the harness's own among them).
    pub flags: &'a ArgMatches,
}

impl StoreInputs<'_> {
    /// The wake command the harness's wake flag names, for a store that serves
    /// calls; none for one that only looks (or a harness with no wake flag).
    pub fn wake_command(&self, facts: &Facts) -> Result<Option<WakeCommand>> {
        let Some(wake) = &facts.wake else {
            return Ok(None);
        };
        match self.purpose {
            Purpose::Serve { .. } => (wake.given(self.flags))
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
    pub state: &'a dyn StateFolder,
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

/// Why a companion's request failed, as the protocol's error codes say it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompanionError {
    /// The params do not read (JSON-RPC's invalid params), with what is wrong.
    InvalidParams(String),
    /// No such method under the prefix.
    MethodNotFound(String),
    /// The host failed answering it.
    Internal(String),
}

/// The state folder a command was given: the inbox every store and hook of the process
/// delivers to, and the presence of the harnesses that keep none of their own. Each is
/// opened when first asked for.
pub trait StateFolder: Sync {
    /// The folder itself (what a call stamp's key and the live registry are kept in).
    fn root(&self) -> Result<PathBuf>;

    /// The inbox (the folder's, or a cluster's), with its audit log.
    fn inbox(&self) -> Result<SharedInbox>;

    /// The folder's live registry and idle marks.
    fn presence(&self) -> Result<Arc<dyn Presence>>;
}

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
    ) -> Result<serde_json::Value, CompanionError>;

    /// The client closed the connection: its process is gone.
    fn client_gone(&self);
}

/// One run of a harness's hook: the state folder it runs over, the hook's input (as
/// the harness gave it on stdin) and where its answer goes (stdout).
pub struct HookCall<'a> {
    pub state: &'a dyn StateFolder,
    pub input: &'a [u8],
    pub out: &'a mut dyn Write,
}

/// What `setup` is given besides a harness's places.
pub struct SetupInputs<'a> {
    /// Take setup's entries out instead.
    pub remove: bool,
    /// What the harness is told to run: this binary and the state folder.
    pub commands: &'a crate::change::Commands,
}

#[cfg(test)]
mod tests {
    use super::pinned_version;

    const PACKAGE: &str = r#"{
  "name": "a-suite",
  "dependencies": {
    "@scope/tool-plugin": "2.0.0",
    "@scope/tool": "1.18.33"
  }
}"#;

    #[test]
    fn a_pinned_version_is_read_for_its_package_alone() {
        assert_eq!(pinned_version(PACKAGE, "@scope/tool"), "1.18.33");
        assert_eq!(pinned_version(PACKAGE, "@scope/tool-plugin"), "2.0.0");
    }

    #[test]
    #[should_panic(expected = "not pinned")]
    fn a_package_not_pinned_is_refused() {
        pinned_version(PACKAGE, "tool");
    }
}
