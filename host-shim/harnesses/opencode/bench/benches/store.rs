//! The OpenCode store on a big database: 1,000 sessions of about 3 MB each (written
//! once under the temporary folder in OpenCode 1.18.33's table layout, then reused),
//! listed and read through the component, beside the Claude and Codex stores' figures.
//! `cargo bench -p host-shim-opencode-bench`. The database sits in the page cache after
//! the first run: these are the store's costs, not the disk's.

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use host_shim::{Runtime, RuntimeOptions};
use host_shim_opencode::OpenCodeStore;
use host_shim_opencode_bench::{id, opencode_db};
use host_shim_plugin::PLUGIN_WASM;

fn opencode(c: &mut Criterion) {
    let db = opencode_db();
    let state_folder = benches::BenchState::new("opencode");
    let open = || {
        OpenCodeStore::open(
            &db,
            state_folder.inbox.clone(),
            state_folder.presence.clone(),
        )
    };
    let runtime: Runtime<OpenCodeStore> =
        Runtime::with_options(PLUGIN_WASM, &RuntimeOptions::default()).unwrap();
    let (list, read) = benches::list_and_read(&id(0), &id(1));
    let mut group = c.benchmark_group("opencode store, 1,000 sessions of 3 MB");
    group.sample_size(10);
    group.bench_function("sessions_list, first (open the database, one query)", |b| {
        b.iter_batched(
            || (),
            |()| {
                let report = runtime.call(open(), &list);
                assert!(report.answer.unwrap().text.contains("1000 considered"));
            },
            BatchSize::PerIteration,
        )
    });
    let mut store = Some(open());
    group.bench_function("sessions_list, cached (nothing written since)", |b| {
        b.iter(|| {
            let report = runtime.call(store.take().unwrap(), &list);
            store = Some(report.harness);
        })
    });
    group.bench_function("sessions_read of a 3 MB session, first (one query)", |b| {
        b.iter_batched(
            open,
            |fresh| {
                let report = runtime.call(fresh, &read);
                assert!(report.answer.unwrap().text.contains("readable messages"));
            },
            BatchSize::PerIteration,
        )
    });
    group.bench_function("sessions_read of a 3 MB session, cached", |b| {
        b.iter(|| {
            let report = runtime.call(store.take().unwrap(), &read);
            store = Some(report.harness);
        })
    });
    group.finish();
}

criterion_group!(benches, opencode);
criterion_main!(benches);
