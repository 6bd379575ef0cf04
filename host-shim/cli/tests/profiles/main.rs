//! The command with test harnesses beside the real ones. A harness is one folder here
//! (its profile, store, hook, setup and doctor check) and one line in [`TESTED`]:
//! nothing else of the command is edited for it, which is what this test proves.
//!
//! This binary is its own `host-shim`: run with [`AS_COMMAND`] set, it is the command
//! over every profile (the real ones and [`TESTED`]'s); run by `cargo test`, it checks
//! that the list makes a sound command line, then runs each tested harness's checks,
//! which drive it as the command.

#[path = "../common/mod.rs"]
mod common;
mod toy;

use host_shim_cli::profile::HarnessProfile;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The test harnesses, each with its checks.
static TESTED: &[Tested] = &[(&toy::Toy, toy::checks)];

/// A test harness and the checks that drive the command over it.
type Tested = (&'static dyn HarnessProfile, fn(&Command));

/// Set: this process is the command.
const AS_COMMAND: &str = "HOST_SHIM_PROFILES_TEST_AS_COMMAND";

/// The real profiles, then the tested ones.
fn profiles() -> &'static [&'static dyn HarnessProfile] {
    let all: Vec<&'static dyn HarnessProfile> = (host_shim_cli::harnesses::ALL.iter().copied())
        .chain(TESTED.iter().map(|(profile, _)| *profile))
        .collect();
    Vec::leak(all)
}

fn main() -> ExitCode {
    if std::env::var_os(AS_COMMAND).is_some() {
        return host_shim_cli::run(profiles());
    }
    // clap checks the whole command line (ids, conflicts, requirements, groups) and
    // panics on a flaw: two harnesses with one flag, a requirement of no flag.
    host_shim_cli::flags::command(profiles()).debug_assert();
    let names: Vec<&str> = profiles().iter().map(|p| p.name()).collect();
    let mut unique = names.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(
        unique.len(),
        names.len(),
        "two harnesses share a name: {names:?}"
    );
    println!("ok    the command line over {names:?} is sound");
    for (profile, checks) in TESTED {
        let command = Command::new();
        checks(&command);
        // Left behind only when a check failed, to look at.
        let _ = std::fs::remove_dir_all(&command.home);
        println!("ok    {}", profile.name());
    }
    ExitCode::SUCCESS
}

/// The command as a test runs it: this binary, with [`AS_COMMAND`] set, in a home of
/// its own (HOME, the XDG folders) with nothing on PATH.
pub struct Command {
    pub home: PathBuf,
}

impl Command {
    fn new() -> Command {
        let home = std::env::temp_dir().join(format!("host-shim-profiles-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&home);
        std::fs::create_dir_all(&home).unwrap();
        Command { home }
    }

    /// This binary's path: what a harness set up by it runs.
    pub fn binary(&self) -> PathBuf {
        std::env::current_exe().unwrap()
    }

    /// `host-shim ARGS…` with `stdin`: whether it succeeded, its stdout and stderr.
    pub fn run(&self, args: &[&str], stdin: &str) -> (bool, String, String) {
        self.run_with(args, stdin, &[])
    }

    /// As [`Command::run`], with `env` set besides.
    pub fn run_with(
        &self,
        args: &[&str],
        stdin: &str,
        env: &[(&str, &str)],
    ) -> (bool, String, String) {
        let mut command = std::process::Command::new(self.binary());
        command
            .args(args)
            .env(AS_COMMAND, "1")
            .env("HOME", &self.home)
            .env("PATH", self.home.join("bin"))
            .env("XDG_CONFIG_HOME", self.home.join(".config"))
            .env("XDG_DATA_HOME", self.home.join(".local/share"))
            .env("XDG_STATE_HOME", self.home.join(".local/state"))
            .env("XDG_CACHE_HOME", self.home.join(".cache"))
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("CODEX_HOME")
            .envs(env.iter().copied());
        let output = common::output_with_stdin(&mut command, stdin);
        let text = |bytes: Vec<u8>| String::from_utf8(bytes).unwrap();
        (
            output.status.success(),
            text(output.stdout),
            text(output.stderr),
        )
    }

    /// A folder of this home's.
    pub fn folder(&self, name: &str) -> PathBuf {
        let path = self.home.join(name);
        std::fs::create_dir_all(&path).unwrap();
        path
    }

    pub fn text(path: &Path) -> String {
        std::fs::read_to_string(path).unwrap()
    }
}
