//! The Claude Code store on a big folder: 1,000 sessions of 3 MB each (written once
//! under the temporary folder, then reused), listed and read through the component.
//! `cargo bench -p host-shim-claude-code-bench`. The transcripts sit in the page cache after
//! the first run: these are the store's costs, not the disk's.

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use host_shim::{CallRequest, Runtime, RuntimeOptions};
use host_shim_claude_code::ClaudeStore;
use host_shim_claude_code_bench::{SESSION_BYTES, SESSIONS, id, projects};
use host_shim_plugin::PLUGIN_WASM;
use std::io::Write;

fn claude(c: &mut Criterion) {
    let projects = projects();
    let state_folder = benches::BenchState::new("claude");
    let open = || {
        ClaudeStore::open(
            &projects,
            state_folder.inbox.clone(),
            state_folder.presence.clone(),
            None,
        )
        .unwrap()
    };
    let runtime: Runtime<ClaudeStore> =
        Runtime::with_options(PLUGIN_WASM, &RuntimeOptions::default()).unwrap();
    let (list, read) = benches::list_and_read(&id(0), &id(1));
    {
        let store = open();
        let reads = store.reads();
        println!(
            "first listing of {SESSIONS} transcripts of {} MB: {} summarized, {} KiB read",
            SESSION_BYTES >> 20,
            reads.summarized,
            reads.summary_bytes >> 10
        );
    }
    let mut group = c.benchmark_group("claude store, 1,000 sessions of 3 MB");
    group.sample_size(10);
    group.bench_function(
        "sessions_list, first (open the store: bounded reads of every transcript)",
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
    group.bench_function("sessions_list, cached (stat every transcript)", |b| {
        b.iter(|| {
            let report = runtime.call(store.take().unwrap(), &list);
            store = Some(report.harness);
        })
    });
    group.bench_function(
        "sessions_read of a 3 MB session, first (parse it whole)",
        |b| {
            b.iter_batched(
                open,
                |fresh| {
                    let report = runtime.call(fresh, &read);
                    assert!(report.answer.unwrap().text.contains("readable messages"));
                },
                BatchSize::PerIteration,
            )
        },
    );
    group.bench_function("sessions_read of a 3 MB session, cached", |b| {
        b.iter(|| {
            let report = runtime.call(store.take().unwrap(), &read);
            store = Some(report.harness);
        })
    });
    // A live store: one transcript is being written. Before each call a whole line is
    // appended to it (a copy of the folder's session 2, so the others stay as written).
    let live_path = projects
        .join("-home-bench-project-2")
        .join(format!("{}.jsonl", id(2)));
    let pristine = std::fs::read(&live_path).unwrap();
    let line = format!(
        "{{\"type\":\"assistant\",\"sessionId\":\"{}\",\"timestamp\":\"2026-11-03T11:00:00.000Z\",\"message\":{{\"role\":\"assistant\",\"model\":\"claude-opus-4-5-20251101\",\"content\":[{{\"type\":\"text\",\"text\":\"{}\"}}]}}}}\n",
        id(2),
        "w".repeat(400)
    );
    let append = || {
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&live_path)
            .unwrap();
        file.write_all(line.as_bytes()).unwrap();
    };
    let read_live = CallRequest {
        arguments: format!(r#"{{"session_id": "{}"}}"#, id(2)),
        ..read.clone()
    };
    group.bench_function(
        "sessions_list, live (one transcript appended to before each listing)",
        |b| {
            b.iter(|| {
                append();
                let report = runtime.call(store.take().unwrap(), &list);
                store = Some(report.harness);
            })
        },
    );
    group.bench_function(
        "sessions_read of a 3 MB session being written (a line appended before each read)",
        |b| {
            b.iter(|| {
                append();
                let report = runtime.call(store.take().unwrap(), &read_live);
                assert!(report.answer.as_ref().unwrap().text.contains("wwww"));
                store = Some(report.harness);
            })
        },
    );
    group.finish();
    std::fs::write(&live_path, pristine).unwrap();
}

criterion_group!(benches, claude);
criterion_main!(benches);
