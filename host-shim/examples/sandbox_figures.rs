//! Measures how the limits hold against the hostile test plugin, with the default
//! limits: how long each misbehaviour runs before the host stops it, and what the
//! error says. Figures for the README; run with
//! `cargo run --release -p host-shim --example sandbox_figures`.

use host_shim::{CallRequest, Corpus, CorpusHost, Runtime};
use std::sync::Arc;
use std::time::Instant;
use test_plugin_artifacts::HOSTILE_PLUGIN;

fn main() -> anyhow::Result<()> {
    let runtime: Runtime<CorpusHost> = Runtime::from_component(HOSTILE_PLUGIN)?;
    let limits = runtime.limits();
    println!(
        "limits: deadline {} ms, memory {} MiB, output {} KiB",
        limits.deadline.as_millis(),
        limits.memory_bytes >> 20,
        limits.output_bytes >> 10
    );
    let corpus = Arc::new(Corpus::demo());
    let target = "session-e218a09e-8736-4483-9a04-2bf13608630c";
    for tool in [
        "spin",
        "hammer",
        "allocate",
        "flood",
        "trap",
        "deliver-flood",
        "deliver-twice",
        "good call",
    ] {
        let request = CallRequest {
            caller: "me".into(),
            tool: tool.into(),
            arguments: target.into(),
            ..CallRequest::default()
        };
        let started = Instant::now();
        let report = runtime.call(CorpusHost::new(corpus.clone()), &request);
        let elapsed = started.elapsed();
        let said = match report.answer {
            Ok(text) => format!("ok: {text:?}"),
            Err(err) => format!("error: {err}"),
        };
        println!(
            "{tool:>13}: stopped after {:>7.1} ms  {said} ({} accepted)",
            elapsed.as_secs_f64() * 1e3,
            report.deliveries.len()
        );
    }
    Ok(())
}
