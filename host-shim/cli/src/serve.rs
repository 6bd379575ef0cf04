//! `host-shim mcp`: the tools served over MCP on stdio, over the stores the flags name.
//! What a harness's client needs besides the calls (Claude Code's live registration,
//! idle hand-over and subagents) is the library's, started here for the harnesses
//! served.

use crate::flags::McpArgs;
use crate::mcp::{Caller, McpOptions, McpServer};
use anyhow::Result;
use host_shim::claude::mcp_session::{ClaudeSession, subagent_of_call};
use host_shim::inbox::AuditLog;
use host_shim::opencode::plugin_session::PluginSessions;
use host_shim::{Harnesses, Runtime, Shared};
use std::path::PathBuf;
use std::sync::Arc;

pub fn run(args: McpArgs, cache_dir: Option<PathBuf>) -> Result<()> {
    let options =
        (args.limits).options(cache_dir, args.max_concurrent_calls, &args.source.state)?;
    let stores = args.source.stores(options.limits.deadline)?;
    // Joined to a cluster: this machine's sessions published, other machines' reads of
    // them answered, while the server runs.
    let machine = args
        .source
        .serve_machine(&stores, options.limits.deadline)?;
    // The caller: named on the command line, by the client in the server's
    // environment (Claude Code), or by the corpus file; else by each call's _meta
    // (Codex), or every call says how to name it.
    let caller = (args.caller.clone())
        .or_else(crate::mcp::caller_from_env)
        .or(stores.corpus_caller);
    // Over OpenCode's sessions, the server also answers the plugin that started it.
    let plugin_sessions = match (&args.source.opencode_db, &stores.inbox) {
        (Some(_), Some(inbox)) => Some(Arc::new(PluginSessions::new(
            inbox.clone(),
            args.source.state.presence()?,
        ))),
        _ => None,
    };
    // Over a harness's sessions, refused sends go to the state folder's audit log.
    let audit = match &stores.inbox {
        Some(_) => Some(Arc::new(AuditLog::open(
            &args.source.state.root()?,
            args.source.state.log_bodies,
        )?)),
        None => None,
    };
    let harness = Shared::new(stores.harnesses);
    let claude = harness
        .lock()
        .find_mut::<host_shim::ClaudeStore>()
        .is_some();
    let _session = ClaudeSession::start(&harness, caller.as_deref());
    // A subagent's calls reach its session's server: the tool-use id names it.
    let caller_of_call: Option<crate::mcp::CallerOfCall> = claude.then(|| {
        let of_call = harness.clone();
        Box::new(move |caller: &str, call_id: &str| subagent_of_call(&of_call, caller, call_id))
            as crate::mcp::CallerOfCall
    });
    let caller = match caller {
        Some(id) => Caller::Known(id),
        None => Caller::Unknown,
    };
    let runtime: Runtime<Shared<Harnesses>> =
        Runtime::with_options(&args.source.plugin()?, &options)?;
    crate::say_wasi(&runtime);
    let version = runtime.contract_version();
    let settings_path = args.source.settings.as_deref();
    let server = McpServer::new(
        runtime,
        harness,
        McpOptions {
            settings: args.source.settings()?,
            caller: caller.clone(),
            deliveries: args.deliveries.clone(),
            caller_of_call,
            plugin_sessions,
            audit,
            call_begins: (machine.as_ref())
                .map(|host| Box::new(host.refresher()) as Box<dyn Fn() + Send + Sync>),
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
