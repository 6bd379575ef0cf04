//! `host-shim mcp`: the tools served over MCP on stdio, over the stores the flags name.
//! What a harness's client needs besides the calls (a session's lifecycle, requests of
//! its own) is its profile's, started here for each harness served.

use crate::flags::McpArgs;
use crate::mcp::{Caller, McpOptions, McpServer, StampCheck};
use anyhow::Result;
use host_shim::inbox::AuditLog;
use host_shim::{Harnesses, McpClient, Runtime, Shared};
use host_shim_profile::Serving;
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
    let given = &args.source.harnesses;
    let clients: Vec<McpClient> = given.profiles().iter().map(|p| p.mcp_client()).collect();
    // Under a client whose hook stamps each call, the stamps name the callers.
    let stamps = StampCheck::under(&clients, || args.source.state.root())?;
    // The caller: named on the command line, by the client in the server's
    // environment, or by the corpus file; else by each call's _meta, or every call
    // says how to name it.
    let caller = (args.caller.clone())
        .or_else(|| crate::mcp::caller_from_env(&clients))
        .or(stores.corpus_caller);
    // Over a harness's sessions, refused sends go to the state folder's audit log.
    let audit = match &stores.inbox {
        Some(_) => Some(Arc::new(AuditLog::open(
            &args.source.state.root()?,
            args.source.state.log_bodies,
        )?)),
        None => None,
    };
    let harness = Shared::new(stores.harnesses);
    // What each harness served runs beside the calls, held until the server ends.
    let mut served = Vec::new();
    if let Some(inbox) = &stores.inbox {
        for (profile, place) in given.named() {
            served.push(profile.serve(&Serving {
                harness: &harness,
                caller: caller.as_deref(),
                inbox,
                state: &args.source.state,
                place: &place,
            })?);
        }
    }
    let mut held = Vec::new();
    let mut caller_of_call = Vec::new();
    let mut companions = Vec::new();
    for parts in served {
        held.extend(parts.held);
        caller_of_call.extend(parts.caller_of_call);
        companions.extend(parts.companion);
    }
    let caller = match caller {
        Some(id) => Caller::Known(id),
        None => Caller::Unknown,
    };
    let runtime: Runtime<Shared<Harnesses>> =
        Runtime::with_options(&args.source.plugin()?, &options)?;
    crate::flags::say_wasi(&runtime);
    let version = runtime.contract_version();
    let settings_path = args.source.settings.as_deref();
    let server = McpServer::new(
        runtime,
        harness,
        McpOptions {
            settings: args.source.settings()?,
            caller: caller.clone(),
            clients,
            deliveries: args.deliveries.clone(),
            caller_of_call,
            companions,
            audit,
            call_begins: (machine.as_ref())
                .map(|host| Box::new(host.refresher()) as Box<dyn Fn() + Send + Sync>),
            stamps,
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
    let served = crate::mcp::serve_stdio(server);
    drop(held);
    served
}
