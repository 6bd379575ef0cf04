//! `host-shim`: run the session-tools plugin from the command line. A thin layer over
//! the library: the flags (`flags.rs`) turned into stores and options, one module per
//! command, the MCP server (`mcp.rs`), and the list of harness crates
//! (`harnesses.rs`), each a profile ([`host_shim_profile::HarnessProfile`]) the commands loop
//! over.
//!
//! The binary runs [`run`] with [`harnesses::ALL`]; a build of the command with
//! another list of harnesses (a test's, an embedder's) runs it with its own.

/// This command's version: the package's, or `HOST_SHIM_VERSION` when the build set it
/// (the npm package's build does: its version is the command's). `--version`, the MCP
/// server's `serverInfo` and `doctor`'s check of a configured command compare this.
/// Read in the command's own crate: a build for another version compiles it alone.
pub const VERSION: &str = match option_env!("HOST_SHIM_VERSION") {
    Some(version) => version,
    None => env!("CARGO_PKG_VERSION"),
};

mod call;
mod catalog;
mod check_write;
mod claims;
mod demo;
pub mod doctor;
pub mod flags;
pub mod harnesses;
mod inbound;
mod log;
pub mod mcp;
mod nats_user;
mod remove_state;
mod serve;
pub mod setup;
pub mod state;
mod watch;

use anyhow::Context;
use flags::{Command, DemoArgs, Invocation};
use host_shim_plugin::PLUGIN_WASM;
use host_shim_profile::HarnessProfile;
use std::io::{Read, Write};
use std::process::ExitCode;

/// The command over `profiles`: parses the process's arguments and runs what they ask.
pub fn run(profiles: &'static [&'static dyn HarnessProfile]) -> ExitCode {
    let cli = match flags::parse(profiles) {
        Invocation::Hook {
            profile,
            hook,
            state,
        } => {
            return finish(hook_run(profile, hook, &state));
        }
        Invocation::WriteHook {
            profile,
            hook,
            args,
        } => {
            return finish(check_write::hook_run(profile, hook, &args));
        }
        Invocation::Command(cli) => cli,
    };
    let cache_dir = cli.cache_dir();
    let command = cli.command.unwrap_or(Command::Demo(DemoArgs::default()));
    if matches!(
        command,
        Command::Demo(_)
            | Command::Catalog { .. }
            | Command::Call(_)
            | Command::Log(_)
            | Command::Doctor(_)
            | Command::NatsUser(_)
    ) {
        // Output a person pipes on (`host-shim call … | head`, `host-shim doctor | head`)
        // ends quietly when the reader goes, as other command-line tools do (doctor's
        // only change, a sweep of dead processes' registrations, is made again by the
        // next look); the server, the hooks and the commands that change files keep
        // Rust's way (a closed pipe is an error they report, never a kill half-way).
        // SAFETY: setting a signal's disposition to its default, before any thread.
        unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    }
    let outcome = match command {
        Command::Demo(args) => demo::run_command(&args, cache_dir),
        Command::Catalog { settings, plugin } => {
            catalog::catalog(settings.as_deref(), plugin.as_deref(), cache_dir)
        }
        Command::Call(args) => call::run(args, cache_dir),
        Command::CheckWrite(args) => match check_write::run(&args, cache_dir) {
            Ok(true) => Ok(()),
            Ok(false) => return ExitCode::from(2),
            Err(err) => Err(err),
        },
        Command::Mcp(args) => serve::run(args, cache_dir),
        Command::Log(args) => log::run(&args),
        Command::Inbound(args) => inbound::run(&args),
        Command::Claims(args) => claims::run(&args),
        Command::Setup(args) => setup::run(&args),
        Command::RemoveState(args) => remove_state::run(&args, cache_dir),
        Command::Watch(args) => watch::run(&args),
        Command::NatsUser(args) => nats_user::run(&args),
        // Problems found are the report's; the exit status says there were some.
        Command::Doctor(args) => match doctor::run(&args) {
            Ok(true) => Ok(()),
            Ok(false) => return ExitCode::FAILURE,
            Err(err) => Err(err),
        },
        Command::Plugin { out } => host_shim::record::write_atomically(&out, PLUGIN_WASM)
            .with_context(|| format!("cannot write {}", out.display())),
    };
    finish(outcome)
}

fn finish(outcome: anyhow::Result<()>) -> ExitCode {
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("host-shim: error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

/// One hook run: its input from stdin, its answer to stdout, what it could not read
/// on stderr.
fn hook_run(
    profile: &dyn host_shim_profile::HarnessProfile,
    hook: &host_shim_profile::Hook,
    state: &state::StateArgs,
) -> anyhow::Result<()> {
    let mut input = Vec::new();
    std::io::stdin()
        .read_to_end(&mut input)
        .context("cannot read the hook's input from stdin")?;
    let mut out = std::io::stdout().lock();
    let report = profile.answer_hook(host_shim_profile::HookCall {
        state,
        input: &input,
        out: &mut out,
    })?;
    out.flush()?;
    for problem in &report.unreadable {
        eprintln!("host-shim {}: skipped {problem}", hook.command);
    }
    Ok(())
}
