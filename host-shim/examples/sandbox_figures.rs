//! Measures how the limits hold against the hostile test plugin, with the default
//! limits: how long each misbehaviour runs before the host stops it, and what the
//! error says. Figures for the README; run with
//! `cargo run --release -p host-shim --example sandbox_figures`.

use host_shim::{CallRequest, Corpus, Runtime};
use std::sync::Arc;
use std::time::Instant;

const HOSTILE_PLUGIN_WASM: &[u8] = include_bytes!(env!("HOSTILE_PLUGIN_WASM"));

fn main() -> anyhow::Result<()> {
    let runtime = Runtime::from_component(HOSTILE_PLUGIN_WASM)?;
    let limits = runtime.limits();
    println!(
        "limits: deadline {} ms, memory {} MiB, output {} KiB",
        limits.deadline.as_millis(),
        limits.memory_bytes >> 20,
        limits.output_bytes >> 10
    );
    let corpus = Arc::new(Corpus::demo());
    for tool in ["spin", "hammer", "allocate", "flood", "trap", "good call"] {
        let request = CallRequest {
            caller: "me".into(),
            tool: tool.into(),
            ..CallRequest::default()
        };
        let started = Instant::now();
        let outcome = runtime.call(corpus.clone(), &request);
        let elapsed = started.elapsed();
        let said = match outcome {
            Ok(outcome) => format!("ok: {:?}", outcome.result),
            Err(err) => format!("error: {err}"),
        };
        println!(
            "{tool:>9}: stopped after {:>7.1} ms  {said}",
            elapsed.as_secs_f64() * 1e3
        );
    }
    Ok(())
}
