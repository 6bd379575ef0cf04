//! The benchmarks of the tools (`cargo bench -p benches --bench tools`), of several
//! machines (`--bench machines`) and of two harnesses in one server
//! (`--bench together`) live in `benches/`; each harness's store benchmark lives in its
//! folder (`host-shim/harnesses/<name>/bench/`: `cargo bench -p host-shim-<name>-bench`).
//! This library holds what the store benchmarks share.

/// The two calls the store benchmarks time, as `caller`: a listing of every session
/// (`scope: all`) and a read of `target`.
pub fn list_and_read(
    caller: &str,
    target: &str,
) -> (host_shim::CallRequest, host_shim::CallRequest) {
    let list = host_shim::CallRequest {
        caller: caller.to_string(),
        tool: "sessions_list".into(),
        arguments: r#"{"scope": "all"}"#.into(),
        ..host_shim::CallRequest::default()
    };
    let read = host_shim::CallRequest {
        tool: "sessions_read".into(),
        arguments: format!(r#"{{"session_id": "{target}"}}"#),
        ..list.clone()
    };
    (list, read)
}

/// The four timings every store benchmark takes, in a group named `group`: a first
/// listing (a store `open` makes afresh each time; `first` says what that costs), a
/// listing again, a first read of `read`'s session (a store that has listed), a read
/// again. Each listing must count `sessions`.
pub fn store_group<S: host_shim::Harness + host_shim::SessionQuery + 'static>(
    c: &mut criterion::Criterion,
    group: &str,
    first: &str,
    sessions: usize,
    open: impl Fn() -> S,
    (list, read): (host_shim::CallRequest, host_shim::CallRequest),
) {
    use criterion::BatchSize;
    let runtime: host_shim::Runtime<S> = host_shim::Runtime::with_options(
        host_shim_plugin::PLUGIN_WASM,
        &host_shim::RuntimeOptions::default(),
    )
    .unwrap();
    let counted = format!("{sessions} considered");
    let mut group = c.benchmark_group(group);
    group.sample_size(10);
    group.bench_function(format!("sessions_list, first ({first})"), |b| {
        b.iter_batched(
            || (),
            |()| {
                let report = runtime.call(open(), &list);
                assert!(report.answer.unwrap().text.contains(&counted));
            },
            BatchSize::PerIteration,
        )
    });
    let mut store = Some(open());
    group.bench_function("sessions_list, cached", |b| {
        b.iter(|| {
            let report = runtime.call(store.take().unwrap(), &list);
            store = Some(report.harness);
        })
    });
    let listed = || {
        let mut store = open();
        store.list_sessions();
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
}

/// A state folder of one store benchmark's own, under the temporary folder: the inbox
/// and presence its store delivers to and looks up; removed when the benchmark ends.
pub struct BenchState {
    root: std::path::PathBuf,
    pub inbox: host_shim::SharedInbox,
    pub presence: std::sync::Arc<host_shim::LocalPresence>,
}

impl BenchState {
    /// A new state folder for the benchmark of `harness`.
    pub fn new(harness: &str) -> BenchState {
        let root = std::env::temp_dir().join(format!(
            "session-tools-bench-{harness}-state-{}",
            std::process::id()
        ));
        BenchState {
            inbox: std::sync::Arc::new(host_shim::StateDir::open(&root).unwrap()),
            presence: std::sync::Arc::new(host_shim::LocalPresence::open(&root).unwrap()),
            root,
        }
    }
}

impl Drop for BenchState {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}
