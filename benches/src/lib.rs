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

/// What a store benchmark calls its four timings, in a group named `group`: a first
/// listing (a store opened afresh each time; `first_list` says what that costs), a
/// listing again, a first read of the read's session, a read again. Each listing must
/// count `sessions`.
pub struct StoreTimings<'a> {
    pub group: &'a str,
    pub sessions: usize,
    pub first_list: &'a str,
    pub cached_list: &'a str,
    pub first_read: &'a str,
    pub cached_read: &'a str,
    /// Whether the first read is of a store that has listed (one that lists as it
    /// opens, or reads its database afresh, is read as opened).
    pub listed_before_read: bool,
}

impl<'a> StoreTimings<'a> {
    /// The names most stores' timings take.
    pub fn new(group: &'a str, sessions: usize, first_list: &'a str) -> StoreTimings<'a> {
        StoreTimings {
            group,
            sessions,
            first_list,
            cached_list: "sessions_list, cached",
            first_read: "sessions_read of a 3 MB session, first (parse it whole)",
            cached_read: "sessions_read of a 3 MB session, cached",
            listed_before_read: true,
        }
    }
}

/// A store benchmark's group after its four timings, for the timings a store adds (a
/// live one's): the group to add them to, and the runtime with the cached store.
pub struct Timed<'c, S: host_shim::Harness + 'static> {
    pub group: criterion::BenchmarkGroup<'c, criterion::measurement::WallTime>,
    pub cached: Cached<S>,
}

/// The runtime and the store it keeps calling.
pub struct Cached<S: host_shim::Harness + 'static> {
    runtime: host_shim::Runtime<S>,
    store: Option<S>,
}

impl<S: host_shim::Harness + 'static> Cached<S> {
    /// One call of the cached store; its answer.
    pub fn again(&mut self, request: &host_shim::CallRequest) -> Option<String> {
        let report = self.runtime.call(self.store.take().unwrap(), request);
        self.store = Some(report.harness);
        report.answer.ok().map(|answer| answer.text)
    }
}

/// The four timings of `timings` over the stores `open` makes, with the calls of
/// [`list_and_read`].
pub fn store_timings<'c, S: host_shim::Harness + host_shim::SessionQuery + 'static>(
    c: &'c mut criterion::Criterion,
    timings: &StoreTimings,
    open: impl Fn() -> S,
    (list, read): &(host_shim::CallRequest, host_shim::CallRequest),
) -> Timed<'c, S> {
    use criterion::BatchSize;
    let runtime: host_shim::Runtime<S> = host_shim::Runtime::with_options(
        host_shim_plugin::PLUGIN_WASM,
        &host_shim::RuntimeOptions::default(),
    )
    .unwrap();
    let counted = format!("{} considered", timings.sessions);
    let mut group = c.benchmark_group(timings.group);
    group.sample_size(10);
    group.bench_function(
        format!("sessions_list, first ({})", timings.first_list),
        |b| {
            b.iter_batched(
                || (),
                |()| {
                    let report = runtime.call(open(), list);
                    assert!(report.answer.unwrap().text.contains(&counted));
                },
                BatchSize::PerIteration,
            )
        },
    );
    let mut timed = Timed {
        cached: Cached {
            store: Some(open()),
            runtime,
        },
        group,
    };
    timed
        .group
        .bench_function(timings.cached_list, |b| b.iter(|| timed.cached.again(list)));
    let for_read = || {
        let mut store = open();
        if timings.listed_before_read {
            store.list_sessions();
        }
        store
    };
    timed.group.bench_function(timings.first_read, |b| {
        b.iter_batched(
            for_read,
            |fresh| {
                let report = timed.cached.runtime.call(fresh, read);
                assert!(report.answer.unwrap().text.contains("readable messages"));
            },
            BatchSize::PerIteration,
        )
    });
    timed
        .group
        .bench_function(timings.cached_read, |b| b.iter(|| timed.cached.again(read)));
    timed
}

/// The four timings of `timings` alone, over the calls of [`list_and_read`] as `caller`
/// of `target`.
pub fn time_store<S: host_shim::Harness + host_shim::SessionQuery + 'static>(
    c: &mut criterion::Criterion,
    timings: &StoreTimings,
    open: impl Fn() -> S,
    (caller, target): (&str, &str),
) {
    let calls = list_and_read(caller, target);
    store_timings(c, timings, open, &calls).group.finish();
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
