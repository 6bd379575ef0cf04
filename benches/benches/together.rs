//! Two harnesses in one server: Claude Code's 1,000 sessions beside Codex's 1,000
//! threads (each store's own benchmark writes its folder), where a read of a Codex
//! thread is asked of the Codex store only. `cargo bench -p benches --bench together`.

use criterion::{Criterion, criterion_group, criterion_main};
use host_shim::{Harnesses, LocalPresence, Runtime, RuntimeOptions, StateDir};
use host_shim_claude_code::ClaudeStore;
use host_shim_codex::CodexStore;
use host_shim_plugin::PLUGIN_WASM;
use std::sync::Arc;

fn together(c: &mut Criterion) {
    let projects = host_shim_claude_code_bench::projects();
    let home = host_shim_codex_bench::codex_home();
    let state_root = std::env::temp_dir().join(format!(
        "session-tools-bench-together-state-{}",
        std::process::id()
    ));
    let inbox: host_shim::SharedInbox = Arc::new(StateDir::open(&state_root).unwrap());
    let presence = Arc::new(LocalPresence::open(&state_root).unwrap());
    let (list, read) =
        benches::list_and_read(&host_shim_codex_bench::id(0), &host_shim_codex_bench::id(1));
    let runtime: Runtime<Harnesses> =
        Runtime::with_options(PLUGIN_WASM, &RuntimeOptions::default()).unwrap();
    let mut both = Some(Harnesses::new(vec![
        Box::new(ClaudeStore::open(&projects, inbox.clone(), presence, None).unwrap()),
        Box::new(CodexStore::open(&home, inbox.clone())),
    ]));
    let report = runtime.call(both.take().unwrap(), &list);
    assert!(report.answer.unwrap().text.contains("2000 considered"));
    both = Some(report.harness);
    let mut group =
        c.benchmark_group("both stores, 1,000 Claude Code sessions and 1,000 Codex threads");
    group.sample_size(10);
    group.bench_function("sessions_read of a 3 MB Codex thread, cached", |b| {
        b.iter(|| {
            let report = runtime.call(both.take().unwrap(), &read);
            assert!(report.answer.unwrap().text.contains("readable messages"));
            both = Some(report.harness);
        })
    });
    group.finish();
    let _ = std::fs::remove_dir_all(state_root);
}

criterion_group!(benches, together);
criterion_main!(benches);
