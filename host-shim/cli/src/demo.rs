//! The demo: load the plugin, show the catalog, and take a short tour of the tools on
//! the embedded corpus, with real output.

use anyhow::Result;
use host_shim::{CallRequest, Corpus, CorpusHost, LoadKind, Runtime, RuntimeOptions};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

const CONFIG_SESSION: &str = "session-e218a09e-8736-4483-9a04-2bf13608630c";
const SUBAGENT: &str = "019c3d96-79e0-4e6a-b7bf-ea46c224d701";
const BILLING_SESSION: &str = "session-4b91c0de-7a3f-4c55-b2e8-93d1f0a6c7e1";

/// Runs the tour; `cache_dir` keeps the compiled plugin between runs.
pub fn run(out: &mut impl Write, cache_dir: Option<PathBuf>) -> Result<()> {
    let started = Instant::now();
    let options = RuntimeOptions {
        cache_dir,
        ..RuntimeOptions::default()
    };
    let runtime: Runtime<CorpusHost> =
        Runtime::with_options(host_shim_plugin::PLUGIN_WASM, &options)?;
    writeln!(
        out,
        "Loaded plugin.wasm ({} bytes; contract harness:sessions@{}; imports: session-query, claims, inbox) in {:.1} ms ({}).\n",
        host_shim_plugin::PLUGIN_WASM.len(),
        runtime.contract_version().as_str(),
        started.elapsed().as_secs_f64() * 1e3,
        match runtime.load_kind() {
            LoadKind::Compiled => "compiled",
            LoadKind::FromCache => "from the compiled-component cache",
        }
    )?;

    let tools = runtime.catalog("")?;
    let bytes: usize = tools
        .iter()
        .map(|t| t.name.len() + t.description.len() + t.input_schema.len())
        .sum();
    writeln!(out, "Catalog ({} tools, {bytes} bytes):", tools.len())?;
    for tool in &tools {
        writeln!(out, "  {}: {}", tool.name, tool.description)?;
    }

    let corpus = Corpus::demo();
    let caller = corpus.caller().unwrap_or_default().to_string();
    // One harness for the whole tour: a delivery shows up in the next read.
    let mut harness = CorpusHost::new(Arc::new(corpus));
    writeln!(out, "\nThe model in session {caller} calls:")?;
    // The read runs with a small maxMessageChars so the tour shows a visible cut.
    let short_bodies = r#"{"maxMessageChars": 200}"#;
    let steps: [(&str, String, &str); 8] = [
        ("sessions_list", String::new(), ""),
        (
            "sessions_list",
            r#"{"query": "config", "scope": "all"}"#.to_string(),
            "",
        ),
        (
            "sessions_read",
            format!(r#"{{"session_id": "{CONFIG_SESSION}", "max_messages": 2}}"#),
            short_bodies,
        ),
        (
            "sessions_send",
            format!(
                r#"{{"session_id": "{BILLING_SESSION}", "message": "Schema review is done: resume the export migration."}}"#
            ),
            "",
        ),
        // The harness timed out waiting and retries the same call (same call id).
        (
            "sessions_send",
            format!(
                r#"{{"session_id": "{BILLING_SESSION}", "message": "Schema review is done: resume the export migration."}}"#
            ),
            "",
        ),
        (
            "sessions_read",
            format!(r#"{{"session_id": "{BILLING_SESSION}", "max_messages": 1}}"#),
            "",
        ),
        (
            "sessions_send",
            format!(r#"{{"session_id": "{SUBAGENT}", "message": "status?"}}"#),
            "",
        ),
        ("sessions_list", r#"{"limit": 500}"#.to_string(), ""),
    ];
    let mut previous: Option<(&str, String)> = None;
    for (step, (tool, arguments, settings)) in steps.into_iter().enumerate() {
        // Each call gets the harness's own call id; a retry keeps the one it retries.
        let retry = previous.as_ref() == Some(&(tool, arguments.clone()));
        let call_id = format!("call-{}", if retry { step } else { step + 1 });
        let request = CallRequest {
            caller: caller.clone(),
            call_id: call_id.clone(),
            settings: settings.to_string(),
            tool: tool.to_string(),
            arguments: arguments.clone(),
        };
        previous = Some((tool, arguments.clone()));
        let report = runtime.call(harness, &request);
        harness = report.harness;
        let answer = report.answer?;
        let shown_args = if arguments.is_empty() {
            "{}"
        } else {
            &arguments
        };
        let mut notes = vec![format!("call id {call_id}")];
        if retry {
            notes.push("the harness retries it".to_string());
        }
        if !settings.is_empty() {
            notes.push(format!("settings: {settings}"));
        }
        writeln!(out, "\n$ {tool} {shown_args}    ({})", notes.join("; "))?;
        writeln!(out, "{}", answer.text)?;
        if let Some(refusal) = answer.refusal {
            writeln!(out, "[host] a refusal: {}", refusal.as_str())?;
        }
        if report.stats.repeats > 0 {
            writeln!(
                out,
                "[host] the inbox had this call's message already: nothing new was delivered"
            )?;
        }
        for delivery in &report.deliveries {
            writeln!(
                out,
                "\n[host] the inbox of {} received ({}{}):\n{}",
                delivery.target,
                delivery.mode.as_str(),
                if delivery.woke { ", woke it" } else { "" },
                delivery.body
            )?;
        }
    }
    // The binary that is running now: the one the README's commands already built.
    let this = std::env::current_exe()
        .ok()
        .map(|exe| {
            let relative = std::env::current_dir()
                .ok()
                .and_then(|cwd| exe.strip_prefix(cwd).ok().map(|p| p.to_path_buf()));
            relative.unwrap_or(exe).display().to_string()
        })
        .unwrap_or_else(|| "host-shim".to_string());
    writeln!(
        out,
        "\nTry it: {this} call sessions_list '{{\"scope\":\"all\"}}'\n\
         Serve the tools to any MCP client: {this} mcp (docs/cli.md)."
    )?;
    Ok(())
}

/// The tour over a harness's own sessions, read only: every session listed, then the
/// newest other top-level session read. `caller` defaults to the newest top-level
/// session.
pub fn run_over<H: host_shim::Harness>(
    out: &mut impl Write,
    mut store: H,
    tour: &host_shim_profile::Tour,
    caller: Option<&str>,
    cache_dir: Option<PathBuf>,
) -> Result<()> {
    let options = RuntimeOptions {
        cache_dir,
        ..RuntimeOptions::default()
    };
    let runtime: Runtime<H> = Runtime::with_options(host_shim_plugin::PLUGIN_WASM, &options)?;
    // Newest first, top-level only: who calls, and whom the tour reads.
    let index = store.list_sessions();
    let mut top_level: Vec<(i64, String)> = Vec::new();
    let mut offset = 0;
    for entry in &index.entries {
        let id = &index.ids[offset..offset + entry.id_len as usize];
        offset += entry.id_len as usize;
        if !entry.subagent {
            top_level.push((entry.created_at_ms, id.to_string()));
        }
    }
    top_level.sort_by(|a, b| b.cmp(a));
    let Some(caller) = caller
        .map(str::to_string)
        .or_else(|| top_level.first().map(|(_, id)| id.clone()))
    else {
        anyhow::bail!("{} to tour", tour.none);
    };
    let target = top_level.iter().map(|(_, id)| id).find(|id| **id != caller);
    writeln!(
        out,
        "{} ({} of them), as the model in session {caller} sees them:",
        tour.sessions,
        index.entries.len()
    )?;
    let mut steps = vec![("sessions_list", r#"{"scope": "all"}"#.to_string())];
    if let Some(target) = target {
        steps.push((
            "sessions_read",
            format!(r#"{{"session_id": "{target}", "max_messages": 3}}"#),
        ));
    }
    for (tool, arguments) in steps {
        let request = CallRequest {
            caller: caller.clone(),
            tool: tool.to_string(),
            arguments: arguments.clone(),
            ..CallRequest::default()
        };
        let report = runtime.call(store, &request);
        store = report.harness;
        writeln!(out, "\n$ {tool} {arguments}\n{}", report.answer?.text)?;
    }
    writeln!(
        out,
        "\nNothing was sent, and no log was touched. To let these sessions message each other, see {}.",
        tour.page
    )?;
    Ok(())
}

/// `host-shim demo`: the tour of the demo corpus, or of a harness's own sessions.
pub fn run_command(args: &crate::flags::DemoArgs, cache_dir: Option<PathBuf>) -> Result<()> {
    let out = &mut std::io::stdout().lock();
    let caller = args.caller.as_deref();
    let named = args.harnesses.named();
    let Some((profile, place)) = named.first() else {
        return run(out, cache_dir);
    };
    let with = host_shim_profile::StoreInputs {
        inbox: &args.state.inbox()?,
        state: &args.state,
        purpose: host_shim_profile::Purpose::Look,
        flags: args.harnesses.matches(),
    };
    let store = profile.store(place, &with)?;
    let sessions = host_shim::Harnesses::new(vec![store]);
    run_over(out, sessions, profile.tour(), caller, cache_dir)
}
