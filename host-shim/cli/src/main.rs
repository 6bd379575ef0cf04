//! `host-shim`: run the session-tools plugin from the command line. A thin layer over
//! the library: the flags (`flags.rs`) turned into stores and options, one module per
//! command, and the MCP server (`mcp.rs`).

mod call;
mod catalog;
mod demo;
mod doctor;
mod flags;
mod hooks;
mod inbound;
mod log;
mod mcp;
mod serve;
mod setup;
mod watch;

use anyhow::Context;
use clap::Parser;
use flags::{Cli, Command, DemoArgs};
use host_shim::{Harness, Runtime};
use host_shim_plugin::PLUGIN_WASM;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let cache_dir = cli.cache_dir();
    let outcome = match cli.command.unwrap_or(Command::Demo(DemoArgs::default())) {
        Command::Demo(args) => demo::run_command(&args, cache_dir),
        Command::Catalog { settings, plugin } => {
            catalog::catalog(settings.as_deref(), plugin.as_deref(), cache_dir)
        }
        Command::Call(args) => call::run(args, cache_dir),
        Command::Mcp(args) => serve::run(args, cache_dir),
        Command::ClaudeHook { state } => hooks::claude(&state),
        Command::CodexHook { state } => hooks::codex(&state),
        Command::Log(args) => log::run(&args),
        Command::Inbound(args) => inbound::run(&args),
        Command::Setup(args) => setup::run(&args),
        Command::Watch(args) => watch::run(&args),
        // Problems found are the report's; the exit status says there were some.
        Command::Doctor(args) => match doctor::run(&args) {
            Ok(true) => Ok(()),
            Ok(false) => return ExitCode::FAILURE,
            Err(err) => Err(err),
        },
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

/// A plugin that imports WASI runs with a deny-all WASI; the host says so.
fn say_wasi<H: Harness>(runtime: &Runtime<H>) {
    if !runtime.wasi_imports().is_empty() {
        eprintln!(
            "host-shim: note: the plugin imports WASI ({} interfaces); it gets a deny-all WASI: no files, environment, arguments or sockets, stdio discarded",
            runtime.wasi_imports().len()
        );
    }
}
