//! The Copilot CLI store on a big COPILOT_HOME: 1,000 sessions of 3 MB each (written
//! once under the temporary folder in Copilot CLI 1.0.102's shape, then reused), listed
//! and read through the component, beside the other stores' figures.
//! `cargo bench -p benches --bench copilot`. The streams sit in the page cache after the
//! first run: these are the store's costs, not the disk's.

use benches::copilot_home::{copilot_home, id};
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use host_shim::{CopilotStore, Runtime, RuntimeOptions, StateDir};
use host_shim_plugin::PLUGIN_WASM;
use std::sync::Arc;

fn copilot(c: &mut Criterion) {
    let home = copilot_home();
    let state_root = std::env::temp_dir().join(format!(
        "session-tools-bench-copilot-state-{}",
        std::process::id()
    ));
    let inbox: host_shim::SharedInbox = Arc::new(StateDir::open(&state_root).unwrap());
    let open = || CopilotStore::open(&home, inbox.clone());
    let runtime: Runtime<CopilotStore> =
        Runtime::with_options(PLUGIN_WASM, &RuntimeOptions::default()).unwrap();
    let (list, read) = benches::list_and_read(&id(0), &id(1));
    let mut group = c.benchmark_group("copilot store, 1,000 sessions of 3 MB");
    group.sample_size(10);
    group.bench_function(
        "sessions_list, first (open the store: bounded reads of every event stream)",
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
    group.bench_function("sessions_list, cached (stat every stream)", |b| {
        b.iter(|| {
            let report = runtime.call(store.take().unwrap(), &list);
            store = Some(report.harness);
        })
    });
    let listed = || {
        let mut store = open();
        host_shim::SessionQuery::list_sessions(&mut store);
        store
    };
    group.bench_function(
        "sessions_read of a 3 MB session, first (parse it whole)",
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
    group.bench_function("sessions_read of a 3 MB session, cached", |b| {
        b.iter(|| {
            let report = runtime.call(store.take().unwrap(), &read);
            store = Some(report.harness);
        })
    });
    group.finish();
    let _ = std::fs::remove_dir_all(state_root);
}

criterion_group!(benches, copilot);
criterion_main!(benches);
