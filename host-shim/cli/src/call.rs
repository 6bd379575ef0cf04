//! `host-shim call`: one tool call, its text printed exactly as the model sees it.

use crate::flags::CallArgs;
use anyhow::{Context, Result, bail};
use host_shim::{CallError, CallRequest, Delivery, Harnesses, Runtime};
use std::io::Read;
use std::path::{Path, PathBuf};

pub fn run(args: CallArgs, cache_dir: Option<PathBuf>) -> Result<()> {
    let options = args.limits.options(cache_dir, None, &args.source.state)?;
    let stores = args.source.stores(options.limits.deadline)?;
    let Some(caller) = args.caller.clone().or(stores.corpus_caller) else {
        bail!(if args.source.over_a_harness() {
            "no calling session: pass --caller ID (a session id from sessions_list)"
        } else {
            "no calling session: pass --caller ID or set \"caller\" in the corpus file"
        });
    };
    let settings_path = args.source.settings.as_deref();
    let request = CallRequest {
        caller,
        call_id: args.call_id.clone(),
        settings: args.source.settings()?,
        tool: args.tool.clone(),
        arguments: read_arguments(&args)?,
    };
    let runtime: Runtime<Harnesses> = Runtime::with_options(&args.source.plugin()?, &options)?;
    crate::flags::say_wasi(&runtime);
    // A send that awaits its reply waits for it here (Ctrl-C ends the process).
    let report = runtime.call_awaiting(stores.harnesses, &request, &|| false);
    // What the host did is reported whatever the outcome.
    if args.stats {
        let mut stats = serde_json::to_value(report.stats)?;
        stats["contract"] = runtime.contract_version().as_str().into();
        stats["refusal"] = match &report.answer {
            Ok(answer) => answer.refusal.map(|code| code.as_str()).into(),
            Err(_) => serde_json::Value::Null,
        };
        if args.source.over_a_harness() {
            stats["skipped_lines"] = report.harness.skipped_lines().into();
        }
        eprintln!("{stats}");
    }
    if let Some(path) = args.deliveries.as_deref() {
        host_shim::record::write(path, &report.deliveries)?;
    }
    match report.answer {
        Ok(answer) => {
            println!("{}", answer.text);
            Ok(())
        }
        Err(err) => {
            if !report.deliveries.is_empty() {
                eprintln!("host-shim: {}", accepted_before(&report.deliveries));
            }
            Err(call_error(settings_path, err))
        }
    }
}

fn read_arguments(args: &CallArgs) -> Result<String> {
    if let Some(path) = &args.args_file {
        return std::fs::read_to_string(path)
            .with_context(|| format!("cannot read arguments file {}", path.display()));
    }
    match args.args.as_deref() {
        Some("-") => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .context("cannot read the arguments from stdin")?;
            Ok(text)
        }
        other => Ok(other.unwrap_or_default().to_string()),
    }
}

/// The plugin's own error names the settings file it came from.
pub fn call_error(settings: Option<&Path>, err: CallError) -> anyhow::Error {
    match (settings, &err) {
        (Some(path), CallError::Refused(message)) => {
            anyhow::anyhow!("{}: {message}", path.display())
        }
        _ => err.into(),
    }
}

/// Says what was delivered before a failure, so a harness does not deliver twice.
fn accepted_before(deliveries: &[Delivery]) -> String {
    match deliveries.len() {
        1 => "1 delivery was accepted before the plugin was stopped".to_string(),
        n => format!("{n} deliveries were accepted before the plugin was stopped"),
    }
}
