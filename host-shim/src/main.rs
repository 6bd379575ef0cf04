//! `host-shim`: run the session-tools plugin from the command line. A thin layer over
//! the library: parse flags, read files, print what the plugin said.

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};
use host_shim::{CallRequest, Corpus, Limits, PLUGIN_WASM, Runtime, RuntimeOptions};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

#[derive(Parser)]
#[command(
    name = "host-shim",
    version,
    about = "Run the session-tools plugin under wasmtime over an in-memory corpus"
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
    /// Load the plugin and tour its tools on the embedded demo corpus (the default).
    Demo,
    /// Print the tool catalog as JSON.
    Catalog {
        /// Deployment settings (JSON object with camelCase keys).
        #[arg(long)]
        settings: Option<PathBuf>,
    },
    /// Run one tool call and print its text exactly as the model sees it. A refusal is
    /// a normal answer (exit 0); only a host failure exits non-zero.
    Call(CallArgs),
}

#[derive(clap::Args)]
struct CallArgs {
    /// sessions_list, sessions_read or sessions_send.
    tool: String,
    /// The model's arguments as JSON text (default: none, read as `{}`).
    args: Option<String>,
    /// Corpus JSON file (default: the embedded demo corpus).
    #[arg(long)]
    corpus: Option<PathBuf>,
    /// Deployment settings JSON file.
    #[arg(long)]
    settings: Option<PathBuf>,
    /// The calling session's id (default: the corpus file's "caller").
    #[arg(long)]
    caller: Option<String>,
    /// Write what the inbox accepted as a JSON array of {target, mode, body, woke}.
    #[arg(long)]
    deliveries: Option<PathBuf>,
    /// Print the host-call counters as JSON on stderr.
    #[arg(long)]
    stats: bool,
    #[command(flatten)]
    limits: LimitFlags,
}

/// Per-call limits (defaults: 1000 ms, 64 MiB, 1 MiB).
#[derive(clap::Args)]
struct LimitFlags {
    /// Wall-clock deadline of the call inside the plugin, in milliseconds.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..))]
    deadline_ms: u64,
    /// Cap on the plugin's linear memory, in MiB.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u64).range(1..=4096))]
    memory_mib: u64,
    /// Cap on the returned text, in bytes.
    #[arg(long, default_value_t = 1 << 20, value_parser = clap::value_parser!(u64).range(1..))]
    output_bytes: u64,
}

impl LimitFlags {
    fn limits(&self) -> Limits {
        Limits {
            deadline: Duration::from_millis(self.deadline_ms),
            memory_bytes: usize::try_from(self.memory_mib << 20).unwrap_or(usize::MAX),
            output_bytes: usize::try_from(self.output_bytes).unwrap_or(usize::MAX),
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let cache_dir = cli.cache_dir();
    let outcome = match cli.command.unwrap_or(Command::Demo) {
        Command::Demo => host_shim::demo::run(&mut std::io::stdout().lock(), cache_dir),
        Command::Catalog { settings } => catalog(settings.as_deref(), cache_dir),
        Command::Call(args) => call(args, cache_dir),
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

fn settings_error(path: Option<&Path>, message: String) -> anyhow::Error {
    match path {
        Some(path) => anyhow::anyhow!("{}: {message}", path.display()),
        None => anyhow::anyhow!("{message}"),
    }
}

fn catalog(settings_path: Option<&Path>, cache_dir: Option<PathBuf>) -> Result<()> {
    let settings = read_settings(settings_path)?;
    let options = RuntimeOptions {
        cache_dir,
        ..RuntimeOptions::default()
    };
    let runtime = Runtime::with_options(PLUGIN_WASM, &options)?;
    let tools = runtime
        .catalog(&settings)?
        .map_err(|message| settings_error(settings_path, message))?;
    let json: Vec<serde_json::Value> = tools
        .into_iter()
        .map(|tool| {
            let schema: serde_json::Value =
                serde_json::from_str(&tool.input_schema).unwrap_or(tool.input_schema.into());
            serde_json::json!({
                "name": tool.name,
                "description": tool.description,
                "input_schema": schema,
            })
        })
        .collect();
    println!("{}", serde_json::to_string_pretty(&json)?);
    Ok(())
}

fn call(args: CallArgs, cache_dir: Option<PathBuf>) -> Result<()> {
    let settings_path = args.settings.as_deref();
    let corpus = match args.corpus.as_deref() {
        Some(path) => Corpus::from_file(path)?,
        None => Corpus::demo(),
    };
    let Some(caller) = args.caller.or_else(|| corpus.caller().map(str::to_string)) else {
        bail!("no calling session: pass --caller ID or set \"caller\" in the corpus file");
    };
    let request = CallRequest {
        caller,
        settings: read_settings(settings_path)?,
        tool: args.tool,
        arguments: args.args.unwrap_or_default(),
        ..CallRequest::default()
    };
    let options = RuntimeOptions {
        limits: args.limits.limits(),
        cache_dir,
        ..RuntimeOptions::default()
    };
    let runtime = Runtime::with_options(PLUGIN_WASM, &options)?;
    let outcome = runtime.call(Arc::new(corpus), &request)?;
    if args.stats {
        eprintln!("{}", serde_json::to_string(&outcome.stats)?);
    }
    if let Some(path) = args.deliveries.as_deref() {
        let json = serde_json::to_string_pretty(&outcome.deliveries)?;
        std::fs::write(path, json + "\n")
            .with_context(|| format!("cannot write deliveries file {}", path.display()))?;
    }
    let text = outcome
        .result
        .map_err(|message| settings_error(settings_path, message))?;
    println!("{text}");
    Ok(())
}
