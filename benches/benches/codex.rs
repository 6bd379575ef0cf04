//! The Codex store on a big CODEX_HOME: 1,000 threads of 3 MB each (written once under
//! the temporary folder in Codex 0.169.0's rollout shape, then reused), listed and read
//! through the component, beside the Claude store's figures (`benches/claude.rs`).
//! `cargo bench -p benches --bench codex`. The rollouts sit in the page cache after the
//! first run: these are the store's costs, not the disk's.

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use host_shim::{CallRequest, CodexStore, Runtime, RuntimeOptions, StateDir};
use host_shim_plugin::PLUGIN_WASM;
use std::io::Write;
use std::path::{Path, PathBuf};

const THREADS: usize = 1_000;
const THREAD_BYTES: usize = 3 << 20;

fn id(n: usize) -> String {
    format!("01a2{n:04x}-0000-7000-8000-{n:012x}")
}

/// One rollout of about 3 MB: `session_meta` (with long base instructions, as Codex
/// writes them), then turns of a turn context, the person's prompt, a shell call with
/// a large output and the model's answer.
fn write_rollout(path: &Path, n: usize) {
    let id = id(n);
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut ordinal = 0u64;
    let mut line = |out: &mut std::io::BufWriter<std::fs::File>, kind: &str, payload: String| {
        let record = format!(
            r#"{{"timestamp":"2026-11-{:02}T10:00:00.000Z","ordinal":{ordinal},"type":"{kind}","payload":{payload}}}"#,
            1 + n % 28
        );
        ordinal += 1;
        writeln!(out, "{record}").unwrap();
        record.len() + 1
    };
    let cwd = format!("/home/bench/project-{}", n % 50);
    let mut written = line(
        &mut out,
        "session_meta",
        format!(
            r#"{{"id":"{id}","timestamp":"2026-11-{:02}T10:00:00.000Z","cwd":"{cwd}","source":"cli","thread_source":"user","model_provider":"openai","base_instructions":{{"text":"{}"}}}}"#,
            1 + n % 28,
            "i".repeat(20 << 10)
        ),
    );
    let output = "o".repeat(16 << 10);
    let mut turn = 0;
    while written < THREAD_BYTES {
        written += line(
            &mut out,
            "turn_context",
            format!(r#"{{"cwd":"{cwd}","model":"gpt-5.5-codex"}}"#),
        );
        written += line(
            &mut out,
            "response_item",
            format!(
                r#"{{"type":"message","role":"user","content":[{{"type":"input_text","text":"Turn {turn}: please look at module {turn}"}}],"internal_chat_message_metadata_passthrough":{{"content_item_metadata":[{{"provenance":{{"type":"user"}}}}]}}}}"#
            ),
        );
        written += line(
            &mut out,
            "response_item",
            format!(
                r#"{{"type":"function_call","name":"exec_command","arguments":"{{\"cmd\":\"cargo test -p module{turn}\"}}","call_id":"call_{turn}"}}"#
            ),
        );
        written += line(
            &mut out,
            "response_item",
            format!(
                r#"{{"type":"function_call_output","call_id":"call_{turn}","output":"{output}"}}"#
            ),
        );
        written += line(
            &mut out,
            "response_item",
            format!(
                r#"{{"type":"message","role":"assistant","content":[{{"type":"output_text","text":"Module {turn} is fixed: {}"}}]}}"#,
                "a".repeat(600)
            ),
        );
        turn += 1;
    }
}

/// The CODEX_HOME of 1,000 rollouts, written on the first run.
fn codex_home() -> PathBuf {
    let root = std::env::temp_dir().join("session-tools-bench-codex-home");
    let done = root.join(".complete");
    if !done.exists() {
        let _ = std::fs::remove_dir_all(&root);
        for n in 0..THREADS {
            let day = root.join(format!("sessions/2026/11/{:02}", 1 + n % 28));
            std::fs::create_dir_all(&day).unwrap();
            let name = format!("rollout-2026-11-{:02}T10-00-00-{}.jsonl", 1 + n % 28, id(n));
            write_rollout(&day.join(name), n);
        }
        std::fs::write(&done, "").unwrap();
    }
    root
}

fn codex(c: &mut Criterion) {
    let home = codex_home();
    let state_root = std::env::temp_dir().join(format!(
        "session-tools-bench-codex-state-{}",
        std::process::id()
    ));
    let state = StateDir::open(&state_root).unwrap();
    let open = || CodexStore::open(&home, state.clone());
    let runtime: Runtime<CodexStore> =
        Runtime::with_options(PLUGIN_WASM, &RuntimeOptions::default()).unwrap();
    let list = CallRequest {
        caller: id(0),
        tool: "sessions_list".into(),
        arguments: r#"{"scope": "all"}"#.into(),
        ..CallRequest::default()
    };
    let read = CallRequest {
        arguments: format!(r#"{{"session_id": "{}"}}"#, id(1)),
        tool: "sessions_read".into(),
        ..list.clone()
    };
    let mut group = c.benchmark_group("codex store, 1,000 threads of 3 MB");
    group.sample_size(10);
    group.bench_function(
        "sessions_list, first (open the store: bounded reads of every rollout)",
        |b| {
            b.iter_batched(
                || (),
                |()| {
                    let report = runtime.call(open(), &list);
                    assert!(report.answer.unwrap().text.contains("1000 considered"));
                },
                BatchSize::PerIteration,
            )
        },
    );
    let mut store = Some(open());
    group.bench_function("sessions_list, cached (stat every rollout)", |b| {
        b.iter(|| {
            let report = runtime.call(store.take().unwrap(), &list);
            store = Some(report.harness);
        })
    });
    // A store that has listed (as Claude's has when it opens): the read parses the one
    // rollout.
    let listed = || {
        let mut store = open();
        host_shim::SessionQuery::list_sessions(&mut store);
        store
    };
    group.bench_function(
        "sessions_read of a 3 MB thread, first (parse it whole)",
        |b| {
            b.iter_batched(
                listed,
                |fresh| {
                    let report = runtime.call(fresh, &read);
                    assert!(report.answer.unwrap().text.contains("readable messages"));
                },
                BatchSize::PerIteration,
            )
        },
    );
    group.bench_function("sessions_read of a 3 MB thread, cached", |b| {
        b.iter(|| {
            let report = runtime.call(store.take().unwrap(), &read);
            store = Some(report.harness);
        })
    });
    group.finish();
    let _ = std::fs::remove_dir_all(state_root);
}

criterion_group!(benches, codex);
criterion_main!(benches);
