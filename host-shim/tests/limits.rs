//! The sandbox holds: a plugin that spins, hogs memory, floods output, traps, hammers
//! its imports or floods the inbox is stopped with an error that says which limit it
//! hit, the report still says what the host did, and the same runtime serves a good
//! call right after.

use host_shim::{
    CallError, CallReport, CallRequest, Corpus, CorpusHost, Delivered, DeliveryRefusal, HostBounds,
    HostStop, Inbox, Limits, MessageContent, Runtime, RuntimeOptions, SessionHeader, SessionIndex,
    SessionQuery, SurfaceIndex,
};
use host_shim_plugin::PLUGIN_WASM;
use std::sync::{Arc, Barrier, Condvar, Mutex};
use std::time::Duration;
use test_plugin_artifacts::HOSTILE_PLUGIN;

/// The demo's live top-level session other than the caller.
const LIVE_TARGET: &str = "session-e218a09e-8736-4483-9a04-2bf13608630c";

fn limits() -> Limits {
    Limits {
        deadline: Duration::from_millis(200),
        memory_bytes: 16 << 20,
        output_bytes: 1 << 20,
    }
}

fn hostile_with(options: RuntimeOptions) -> Runtime<CorpusHost> {
    Runtime::with_options(HOSTILE_PLUGIN, &options).unwrap()
}

/// Options giving a call time (30 s) and `memory_bytes`, so that what stops it is the
/// bound under test, one of `bounds`.
fn room(memory_bytes: usize, bounds: HostBounds) -> RuntimeOptions {
    RuntimeOptions {
        limits: Limits {
            deadline: Duration::from_secs(30),
            memory_bytes,
            ..limits()
        },
        bounds,
        ..RuntimeOptions::default()
    }
}

/// The host ended the call at `stop`.
#[track_caller]
fn stopped_at<T: std::fmt::Debug>(answer: &Result<T, CallError>, stop: HostStop) {
    match answer {
        Err(CallError::HostBound(at)) if *at == stop => {}
        other => panic!("not stopped at {stop:?}: {other:?}"),
    }
}

fn hostile() -> Runtime<CorpusHost> {
    hostile_with(RuntimeOptions {
        limits: limits(),
        ..RuntimeOptions::default()
    })
}

fn demo() -> CorpusHost {
    CorpusHost::new(Arc::new(Corpus::demo()))
}

fn call(runtime: &Runtime<CorpusHost>, tool: &str, args: &str) -> CallReport<CorpusHost> {
    let request = CallRequest {
        caller: "me".into(),
        tool: tool.into(),
        arguments: args.into(),
        ..CallRequest::default()
    };
    runtime.call(demo(), &request)
}

fn run(runtime: &Runtime<CorpusHost>, tool: &str) -> Result<String, CallError> {
    call(runtime, tool, "").answer.map(|answer| answer.text)
}

/// After any failure, the runtime still answers.
fn still_serves(runtime: &Runtime<CorpusHost>) {
    assert_eq!(run(runtime, "hello").unwrap(), "fine: hello");
}

#[test]
fn a_spinning_plugin_is_stopped_at_its_deadline() {
    let runtime = hostile();
    let err = run(&runtime, "spin").unwrap_err();
    assert!(
        matches!(err, CallError::Deadline(d) if d == Duration::from_millis(200)),
        "{err}"
    );
    assert_eq!(
        err.to_string(),
        "the plugin ran past its 200 ms deadline and was stopped"
    );
    still_serves(&runtime);
}

#[test]
fn a_plugin_hammering_its_imports_is_stopped() {
    let runtime = hostile();
    let err = run(&runtime, "hammer").unwrap_err();
    // Whichever comes first: the deadline, or the bytes the host hands over.
    assert!(
        matches!(
            err,
            CallError::Deadline(_) | CallError::HostBound(HostStop::LoweredBytes { .. })
        ),
        "{err}"
    );
    still_serves(&runtime);
}

#[test]
fn the_bytes_a_plugin_is_handed_are_bounded() {
    let runtime = hostile_with(room(
        16 << 20,
        HostBounds {
            lowered_bytes: 1 << 20,
            ..HostBounds::default()
        },
    ));
    let report = call(&runtime, "hammer", "");
    stopped_at(&report.answer, HostStop::LoweredBytes { limit: 1048576 });
    assert!(report.stats.lowered_bytes > 1 << 20);
    assert!(report.stats.lowered_bytes < 2 << 20, "stopped at the bound");
    still_serves(&runtime);
}

#[test]
fn a_plugin_allocating_without_bound_hits_the_memory_cap() {
    let runtime = hostile();
    let err = run(&runtime, "allocate").unwrap_err();
    match &err {
        CallError::Memory { limit, asked } => {
            assert_eq!(*limit, 16 << 20);
            assert!(*asked > *limit);
        }
        other => panic!("expected a memory error, got {other}"),
    }
    assert!(
        err.to_string().contains("past its limit of 16777216 bytes"),
        "{err}"
    );
    still_serves(&runtime);
}

#[test]
fn a_plugin_returning_a_huge_string_hits_the_output_cap() {
    let runtime = hostile();
    let err = run(&runtime, "flood").unwrap_err();
    assert!(
        matches!(
            err,
            CallError::Output {
                limit: 1048576,
                size: 4194304
            }
        ),
        "{err}"
    );
    still_serves(&runtime);
}

#[test]
fn a_trapping_plugin_is_reported_as_a_trap() {
    let runtime = hostile();
    let err = run(&runtime, "trap").unwrap_err();
    assert!(matches!(err, CallError::Trap(_)), "{err}");
    assert_eq!(
        err.to_string(),
        "the plugin trapped (wasm trap: wasm `unreachable` instruction executed); this is a bug in the plugin"
    );
    still_serves(&runtime);
}

#[test]
fn a_read_past_linear_memory_is_a_trap() {
    let runtime = hostile();
    let err = run(&runtime, "out-of-bounds").unwrap_err();
    assert!(
        matches!(err, CallError::Trap(wasmtime::Trap::MemoryOutOfBounds)),
        "{err}"
    );
    still_serves(&runtime);
}

/// Without the Spectre hardening, every limit still holds: bounds are checked in code
/// instead of by guard pages, and the rest does not depend on it.
#[test]
fn every_limit_holds_without_the_spectre_hardening() {
    let runtime = hostile_with(RuntimeOptions {
        limits: Limits {
            output_bytes: 1 << 20,
            ..limits()
        },
        spectre_mitigations: false,
        ..RuntimeOptions::default()
    });
    for (tool, expected) in [
        ("spin", "deadline"),
        ("allocate", "memory"),
        ("flood", "output"),
        ("trap", "trap"),
        ("out-of-bounds", "out of bounds"),
    ] {
        let err = run(&runtime, tool).unwrap_err();
        let kind = match &err {
            CallError::Deadline(_) => "deadline",
            CallError::Memory { .. } => "memory",
            CallError::Output { .. } => "output",
            CallError::Trap(wasmtime::Trap::MemoryOutOfBounds) => "out of bounds",
            CallError::Trap(_) => "trap",
            _ => "other",
        };
        assert_eq!(kind, expected, "{tool}: {err}");
        still_serves(&runtime);
    }
    let report = call(&runtime, "deliver-twice", LIVE_TARGET);
    stopped_at(&report.answer, HostStop::Deliveries { limit: 1 });
    assert_eq!(report.deliveries.len(), 1);
    // A plugin writing the claims past the bound is stopped at it.
    let report = call(&runtime, "claim-writes", "");
    stopped_at(&report.answer, HostStop::ClaimWrites { limit: 16 });
    assert_eq!(report.stats.claim_writes, 16);
    // The real plugin answers as it does with the hardening.
    let real: Runtime<CorpusHost> = Runtime::with_options(
        PLUGIN_WASM,
        &RuntimeOptions {
            spectre_mitigations: false,
            ..RuntimeOptions::default()
        },
    )
    .unwrap();
    let hardened: Runtime<CorpusHost> = Runtime::with_options(
        host_shim_plugin::PLUGIN_WASM,
        &host_shim::RuntimeOptions::default(),
    )
    .unwrap();
    let request = CallRequest {
        caller: "me".into(),
        tool: "sessions_list".into(),
        arguments: r#"{"scope": "all"}"#.into(),
        ..CallRequest::default()
    };
    assert_eq!(
        real.call(demo(), &request).answer.unwrap(),
        hardened.call(demo(), &request).answer.unwrap()
    );
}

#[test]
fn a_plugin_flooding_the_inbox_is_stopped_and_host_memory_stays_bounded() {
    let runtime = hostile_with(room(64 << 20, HostBounds::default()));
    // 1 MiB bodies are past the default body bound: the first is refused, unforwarded.
    let report = call(&runtime, "deliver-flood", LIVE_TARGET);
    let stop = HostStop::BodyBytes {
        limit: 262144,
        size: 1048576,
    };
    stopped_at(&report.answer, stop);
    // Counted as an attempt; not forwarded.
    assert_eq!(report.stats.delivery_attempts, 1);
    assert!(report.deliveries.is_empty());
    // With a bound that admits the bodies, one delivery is accepted, the next stops
    // the call: the host never holds more than one body.
    let runtime = hostile_with(room(
        64 << 20,
        HostBounds {
            body_bytes: 2 << 20,
            ..HostBounds::default()
        },
    ));
    let report = call(&runtime, "deliver-flood", LIVE_TARGET);
    stopped_at(&report.answer, HostStop::Deliveries { limit: 1 });
    assert_eq!(report.deliveries.len(), 1);
    assert_eq!(report.deliveries[0].body.len(), 1 << 20);
    still_serves(&runtime);
}

#[test]
fn a_second_delivery_in_one_call_is_refused() {
    let runtime = hostile();
    let report = call(&runtime, "deliver-twice", LIVE_TARGET);
    assert_eq!(
        report.answer.unwrap_err().to_string(),
        "the plugin tried to deliver more than 1 message(s) in one call; the host stopped it"
    );
    assert_eq!(report.deliveries.len(), 1);
    assert_eq!(report.deliveries[0].body, "one");
}

#[test]
fn an_accepted_delivery_is_reported_when_the_call_fails_afterwards() {
    let runtime = hostile_with(RuntimeOptions {
        limits: Limits {
            output_bytes: 10,
            ..limits()
        },
        ..RuntimeOptions::default()
    });
    let report = call(&runtime, "deliver-then-flood", LIVE_TARGET);
    assert!(
        matches!(report.answer, Err(CallError::Output { limit: 10, .. })),
        "{:?}",
        report.answer.err()
    );
    assert_eq!(report.deliveries.len(), 1);
    assert_eq!(report.stats.deliveries, 1);
    // The harness got its state back with the delivery applied.
    let target = report.harness.session(LIVE_TARGET).unwrap();
    assert_eq!(target.messages.last().unwrap().text(), Some("once"));
}

#[test]
fn a_surface_larger_than_the_plugins_memory_is_named() {
    let mut big = host_shim::Session::new("big", 1);
    big.messages.push(host_shim::Message::new(
        1,
        host_shim::Role::User,
        "user",
        false,
        Some("x".repeat(20 << 20)),
    ));
    let runtime: Runtime<CorpusHost> = Runtime::with_options(
        PLUGIN_WASM,
        &RuntimeOptions {
            limits: limits(),
            ..RuntimeOptions::default()
        },
    )
    .unwrap();
    let request = CallRequest {
        caller: "me".into(),
        tool: "sessions_read".into(),
        arguments: r#"{"session_id": "big"}"#.into(),
        ..CallRequest::default()
    };
    let host = CorpusHost::new(Arc::new(Corpus::new(None, vec![big])));
    let err = runtime.call(host, &request).answer.unwrap_err();
    let message = err.to_string();
    assert!(
        message.starts_with("the batch of 1 messages of session \"big\" is 20971")
            && message.contains("bytes, more than the plugin's memory limit of 16777216 bytes"),
        "{message}"
    );
}

#[test]
fn the_real_plugin_stays_well_inside_the_default_limits() {
    let runtime: Runtime<CorpusHost> = Runtime::with_options(
        host_shim_plugin::PLUGIN_WASM,
        &host_shim::RuntimeOptions::default(),
    )
    .unwrap();
    assert_eq!(runtime.limits(), Limits::default());
    let request = CallRequest {
        caller: "me".into(),
        tool: "sessions_list".into(),
        arguments: r#"{"scope":"all"}"#.into(),
        ..CallRequest::default()
    };
    let report = runtime.call(demo(), &request);
    assert!(report.answer.is_ok());
    assert!(report.peak_memory_bytes > 0);
    assert!(
        report.peak_memory_bytes <= 4 << 20,
        "peak {} bytes",
        report.peak_memory_bytes
    );
}

#[test]
fn one_runtime_serves_many_threads_with_serial_results() {
    let runtime: Arc<Runtime<CorpusHost>> = Arc::new(
        Runtime::with_options(
            host_shim_plugin::PLUGIN_WASM,
            &host_shim::RuntimeOptions::default(),
        )
        .unwrap(),
    );
    let requests: Vec<CallRequest> = [
        ("sessions_list", r#"{"scope":"all"}"#),
        (
            "sessions_read",
            r#"{"session_id":"session-e218a09e-8736-4483-9a04-2bf13608630c","max_messages":3}"#,
        ),
        (
            "sessions_send",
            r#"{"session_id":"session-b7d40f12-2c9a-4e8b-8f31-0a5d6e7c9b24","message":"hi"}"#,
        ),
        ("sessions_list", r#"{"limit":999}"#),
    ]
    .iter()
    .map(|(tool, args)| CallRequest {
        caller: "session-3f2a9c10-5b7e-4d21-9a0e-6c8b1d2e4f70".into(),
        tool: tool.to_string(),
        arguments: args.to_string(),
        ..CallRequest::default()
    })
    .collect();
    let serial: Vec<_> = requests
        .iter()
        .map(|r| {
            let report = runtime.call(demo(), r);
            (report.answer.unwrap(), report.deliveries)
        })
        .collect();
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let (runtime, requests) = (runtime.clone(), requests.clone());
            std::thread::spawn(move || {
                (0..20)
                    .map(|i| {
                        let index = (t + i) % requests.len();
                        let report = runtime.call(demo(), &requests[index]);
                        (index, report.answer.unwrap(), report.deliveries)
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    for thread in threads {
        for (index, answer, deliveries) in thread.join().unwrap() {
            assert_eq!((&answer, &deliveries), (&serial[index].0, &serial[index].1));
        }
    }
}

/// A harness that holds every call inside `get-session` until all `parties` calls are
/// there at once, or until released.
#[derive(Clone)]
struct Gate {
    barrier: Option<Arc<Barrier>>,
    held: Arc<(Mutex<(usize, bool)>, Condvar)>,
}

impl Gate {
    fn wait_until_held(&self, count: usize) {
        let (lock, signal) = &*self.held;
        let mut state = lock.lock().unwrap();
        while state.0 < count {
            state = signal.wait(state).unwrap();
        }
    }

    fn release(&self) {
        let (lock, signal) = &*self.held;
        lock.lock().unwrap().1 = true;
        signal.notify_all();
    }
}

impl SessionQuery for Gate {
    fn list_sessions(&mut self) -> SessionIndex {
        SessionIndex {
            ids: String::new(),
            entries: Vec::new(),
        }
    }
    fn get_session(&mut self, _id: &str) -> Option<SessionHeader> {
        if let Some(barrier) = &self.barrier {
            barrier.wait();
        } else {
            let (lock, signal) = &*self.held;
            let mut state = lock.lock().unwrap();
            state.0 += 1;
            signal.notify_all();
            while !state.1 {
                state = signal.wait(state).unwrap();
            }
        }
        None
    }
    fn get_sessions(&mut self, ids: &[String]) -> Vec<Option<SessionHeader>> {
        vec![None; ids.len()]
    }
    fn title_snapshots(&mut self, ids: &[String]) -> Vec<Option<String>> {
        vec![None; ids.len()]
    }
    fn get_surface(&mut self, _id: &str, _lead_chars: u32) -> Option<SurfaceIndex> {
        None
    }
    fn get_messages(&mut self, _id: &str, seqs: &[u64]) -> Vec<Option<MessageContent>> {
        vec![None; seqs.len()]
    }
    fn inbox_status(&mut self, _target: &str, _sender: &str) -> host_shim::InboxCount {
        host_shim::InboxCount::NONE
    }
}

impl Inbox for Gate {
    fn deliver(&mut self, _: &host_shim::DeliveryRequest) -> Result<Delivered, DeliveryRefusal> {
        Err(DeliveryRefusal::NotFound)
    }
}

fn gated_runtime(slots: u32) -> Arc<Runtime<Gate>> {
    let options = RuntimeOptions {
        limits: Limits {
            deadline: Duration::from_secs(60),
            ..Limits::default()
        },
        max_concurrent_calls: slots,
        ..RuntimeOptions::default()
    };
    Arc::new(Runtime::with_options(PLUGIN_WASM, &options).unwrap())
}

fn read_request() -> CallRequest {
    CallRequest {
        caller: "me".into(),
        tool: "sessions_read".into(),
        arguments: r#"{"session_id": "x"}"#.into(),
        ..CallRequest::default()
    }
}

#[test]
fn max_concurrent_calls_are_served_at_once() {
    // 64 calls are inside the plugin at the same moment: the barrier in `get-session`
    // opens only when all 64 have reached it.
    let runtime = gated_runtime(64);
    let gate = Gate {
        barrier: Some(Arc::new(Barrier::new(64))),
        held: Arc::default(),
    };
    let threads: Vec<_> = (0..64)
        .map(|_| {
            let (runtime, gate) = (runtime.clone(), gate.clone());
            std::thread::spawn(move || runtime.call(gate, &read_request()).answer)
        })
        .collect();
    for thread in threads {
        let answer = thread.join().unwrap().unwrap();
        assert_eq!(answer.refusal, Some(host_shim::Refusal::NotFound));
        host_shim_testkit::begins(&answer.text, "sessions_read refused (not-found)");
    }
}

#[test]
fn a_call_past_the_pool_is_the_hosts_own_error() {
    let runtime = gated_runtime(2);
    let gate = Gate {
        barrier: None,
        held: Arc::default(),
    };
    let held: Vec<_> = (0..2)
        .map(|_| {
            let (runtime, gate) = (runtime.clone(), gate.clone());
            std::thread::spawn(move || runtime.call(gate, &read_request()).answer)
        })
        .collect();
    gate.wait_until_held(2);
    let err = runtime
        .call(gate.clone(), &read_request())
        .answer
        .unwrap_err();
    assert!(matches!(err, CallError::Busy { limit: 2 }), "{err}");
    assert_eq!(
        err.to_string(),
        "the host is serving 2 calls already (its limit); this call was not started, try again when one ends"
    );
    gate.release();
    for thread in held {
        assert!(thread.join().unwrap().is_ok());
    }
}

#[test]
fn limits_no_call_could_run_under_are_refused_with_a_reason() {
    for (limits, reason) in [
        (
            Limits {
                deadline: Duration::ZERO,
                ..Limits::default()
            },
            "the deadline must be longer than zero",
        ),
        (
            Limits {
                memory_bytes: 0,
                ..Limits::default()
            },
            "the memory limit must be at least 2 MiB",
        ),
        (
            Limits {
                memory_bytes: usize::MAX,
                ..Limits::default()
            },
            "the memory limit must be at most 4 GiB",
        ),
        (
            Limits {
                output_bytes: 0,
                ..Limits::default()
            },
            "the output limit must be at least one byte",
        ),
    ] {
        let options = RuntimeOptions {
            limits,
            ..RuntimeOptions::default()
        };
        let err = Runtime::<CorpusHost>::with_options(PLUGIN_WASM, &options)
            .err()
            .unwrap();
        assert!(format!("{err:#}").contains(reason), "{err:#}");
    }
}

#[test]
fn the_longest_deadline_works() {
    let options = RuntimeOptions {
        limits: Limits {
            deadline: Duration::MAX,
            ..Limits::default()
        },
        ..RuntimeOptions::default()
    };
    let runtime: Runtime<CorpusHost> = Runtime::with_options(PLUGIN_WASM, &options).unwrap();
    let report = runtime.call(demo(), &read_request());
    assert!(report.answer.unwrap().text.contains("(not-found)"));
}

#[test]
fn a_component_needing_other_imports_is_refused_at_load() {
    // The plugin itself loads with only the two interfaces linked.
    assert!(Runtime::<CorpusHost>::from_component(PLUGIN_WASM).is_ok());
    // A component that imports one more interface is refused, and the refusal names it.
    let mut component = wasm_encoder::Component::new();
    let mut instance = wasm_encoder::InstanceType::new();
    instance
        .ty()
        .function()
        .params(std::iter::empty::<(&str, wasm_encoder::ComponentValType)>())
        .result(None);
    instance.export("f", wasm_encoder::ComponentTypeRef::Func(0));
    let mut types = wasm_encoder::ComponentTypeSection::new();
    types.instance(&instance);
    component.section(&types);
    let mut imports = wasm_encoder::ComponentImportSection::new();
    imports.import(
        "other:pkg/extra@1.0.0",
        wasm_encoder::ComponentTypeRef::Instance(0),
    );
    component.section(&imports);
    let bytes = component.finish();
    let err = Runtime::<CorpusHost>::from_component(&bytes).err().unwrap();
    let message = format!("{err:#}");
    assert!(
        message.contains("the plugin needs imports other than session-query and inbox")
            && message.contains("other:pkg/extra@1.0.0"),
        "{message}"
    );
    // Anything that is not a component for this world is refused with a reason.
    let err = Runtime::<CorpusHost>::from_component(b"\0asm\x01\0\0\0")
        .err()
        .unwrap();
    assert!(
        format!("{err:#}").contains("loading the plugin component"),
        "{err:#}"
    );
}

#[test]
fn a_batch_past_the_bound_ends_the_call() {
    let sessions = (0..20)
        .map(|i| host_shim::Session::new(&format!("s{i}"), i))
        .collect();
    let runtime: Runtime<CorpusHost> = Runtime::with_options(
        PLUGIN_WASM,
        &RuntimeOptions {
            bounds: HostBounds {
                ids_per_batch: 10,
                ..HostBounds::default()
            },
            ..RuntimeOptions::default()
        },
    )
    .unwrap();
    // A query no id matches needs every candidate's header: one batch of 20 ids.
    let request = CallRequest {
        caller: "me".into(),
        tool: "sessions_list".into(),
        arguments: r#"{"query": "zzz"}"#.into(),
        ..CallRequest::default()
    };
    let host = CorpusHost::new(Arc::new(Corpus::new(None, sessions)));
    let report = runtime.call(host, &request);
    let stop = HostStop::Batch {
        what: "headers",
        limit: 10,
        size: 20,
    };
    stopped_at(&report.answer, stop);
    assert_eq!(report.stats.header_batches, 1);
    assert_eq!(report.stats.title_batches, 0);
}

// --- Everything a plugin can make the host do is bounded before it is done. ---

/// Runs `role` of [`child`] in a child process of this test binary (so a host that
/// grows without bound cannot take the test runner down) and returns what it printed.
fn in_child(role: &str) -> String {
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "child",
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("LIMITS_CHILD_ROLE", role)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "the child ({role}) failed: {:?}\n{stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

/// This process's resident memory now, in bytes (Linux).
fn resident_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap();
    kib << 10
}

/// The value a child printed as `NAME=VALUE`.
fn printed(stdout: &str, name: &str) -> u64 {
    stdout
        .split_whitespace()
        .find_map(|word| word.strip_prefix(&format!("{name}=")))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {name} in:\n{stdout}"))
}

#[test]
#[ignore = "a child process of the memory tests, not a test by itself"]
fn child() {
    match std::env::var("LIMITS_CHILD_ROLE").unwrap().as_str() {
        // Three calls flooding the inbox with refused deliveries under new keys, over
        // one harness, as `host-shim mcp` keeps it.
        "refused-flood" => {
            let harness = host_shim::Shared::new(demo());
            let runtime: Runtime<host_shim::Shared<CorpusHost>> = Runtime::with_options(
                HOSTILE_PLUGIN,
                &room(
                    64 << 20,
                    HostBounds {
                        key_bytes: 2 << 20,
                        ..HostBounds::default()
                    },
                ),
            )
            .unwrap();
            let before = resident_bytes();
            let mut attempts = 0;
            for _ in 0..3 {
                let request = CallRequest {
                    caller: "me".into(),
                    tool: "refused-deliver-flood".into(),
                    arguments: (1 << 20).to_string(),
                    ..CallRequest::default()
                };
                let report = runtime.call(harness.clone(), &request);
                attempts += report.stats.delivery_attempts;
                println!("\nstopped={}", report.answer.unwrap_err());
            }
            println!("attempts={attempts}");
            println!("growth={}", resident_bytes().saturating_sub(before));
        }
        // One id repeated 100,000 times in each kind of batch, the session's title,
        // path and newest message each 1 MB.
        "repeat-batch" => {
            let big = "b".repeat(1 << 20);
            let corpus = serde_json::json!({"sessions": [{
                "id": "big", "created_at": "2026-12-01T00:00:00Z", "title": big,
                "cwd": big, "messages": [{"seq": 1, "role": "user", "parts": [{"text": big}]}]
            }]});
            let corpus = Corpus::from_json(&corpus.to_string(), "test").unwrap();
            let runtime = hostile_with(room(64 << 20, HostBounds::default()));
            let before = resident_bytes();
            let request = CallRequest {
                caller: "me".into(),
                tool: "repeat-batch".into(),
                arguments: "big".into(),
                ..CallRequest::default()
            };
            let report = runtime.call(CorpusHost::new(Arc::new(corpus)), &request);
            println!("\nstopped={}", report.answer.unwrap_err());
            println!("growth={}", resident_bytes().saturating_sub(before));
        }
        // 100,000 sends of the real plugin with distinct call ids over one harness;
        // the target refuses each (so the corpus itself does not grow).
        "many-sends" => {
            let corpus = serde_json::json!({"caller": "me", "sessions": [
                {"id": "me", "created_at": "2026-12-01T00:00:00Z"},
                {"id": "busy", "created_at": "2026-12-01T00:00:00Z", "live": true,
                 "reject": "the session takes no messages now"}
            ]});
            let corpus = Corpus::from_json(&corpus.to_string(), "test").unwrap();
            let harness = host_shim::Shared::new(CorpusHost::new(Arc::new(corpus)));
            let runtime: Runtime<host_shim::Shared<CorpusHost>> =
                Runtime::with_options(PLUGIN_WASM, &RuntimeOptions::default()).unwrap();
            let send = |n: u64| CallRequest {
                caller: "me".into(),
                call_id: format!("toolu_{n:020}"),
                tool: "sessions_send".into(),
                arguments: r#"{"session_id":"busy","message":"hello"}"#.into(),
                ..CallRequest::default()
            };
            // The first thousand settle the allocator; growth is measured after them.
            for n in 0..1_000 {
                runtime.call(harness.clone(), &send(n));
            }
            let before = resident_bytes();
            for n in 1_000..100_000 {
                let report = runtime.call(harness.clone(), &send(n));
                assert!(report.answer.unwrap().text.contains("rejected"));
            }
            println!("growth={}", resident_bytes().saturating_sub(before));
            println!("keys={}", harness.lock().answered_keys());
        }
        other => panic!("no child role {other}"),
    }
}

#[test]
fn refused_deliveries_are_bounded_in_number_and_key_size() {
    // Keys past the contract's bound stop the call at the first, forwarding nothing.
    let report = call(&hostile(), "refused-deliver-flood", &(1 << 20).to_string());
    let stop = HostStop::KeyBytes {
        limit: 1024,
        size: 1048577,
    };
    stopped_at(&report.answer, stop);
    assert_eq!(report.stats.delivery_attempts, 1);
    // Short keys: the attempts bound stops the loop.
    let report = call(&hostile(), "refused-deliver-flood", "8");
    stopped_at(&report.answer, HostStop::DeliveryAttempts { limit: 4 });
    assert_eq!(report.stats.delivery_attempts, 4);
    // Even with keys of 1 MiB admitted, three calls on one harness leave the host
    // about as big as it was (before: 87,460 attempts a call, 1.1 GiB more).
    let stdout = in_child("refused-flood");
    assert_eq!(printed(&stdout, "attempts"), 12, "{stdout}");
    let growth = printed(&stdout, "growth");
    assert!(growth < 64 << 20, "grew {growth} bytes:\n{stdout}");
}

#[test]
fn a_repeated_id_is_answered_once_and_the_whole_answer_bounded_before_it_is_built() {
    let stdout = in_child("repeat-batch");
    assert!(
        stdout.contains("stopped=the batch of 100000 headers is ")
            && stdout.contains("more than the plugin's memory limit of 67108864 bytes"),
        "{stdout}"
    );
    // 100,000 copies of a 1 MB path would be 100 GB; the host never built them.
    let growth = printed(&stdout, "growth");
    assert!(growth < 256 << 20, "grew {growth} bytes:\n{stdout}");
}

#[test]
fn a_long_lived_host_serving_100_000_sends_stays_bounded() {
    let stdout = in_child("many-sends");
    assert_eq!(
        printed(&stdout, "keys"),
        host_shim::inbox::KEYS_KEPT as u64,
        "{stdout}"
    );
    let growth = printed(&stdout, "growth");
    assert!(growth < 16 << 20, "grew {growth} bytes:\n{stdout}");
}

#[test]
fn the_plugins_error_text_is_under_the_output_cap() {
    let err = run(&hostile(), "error-flood").unwrap_err();
    assert!(
        matches!(
            err,
            CallError::ErrorText {
                limit: 1048576,
                size: 4400000
            }
        ),
        "{err}"
    );
    assert_eq!(
        err.to_string(),
        "the plugin returned an error of 4400000 bytes, past the output limit of 1048576 bytes"
    );
    still_serves(&hostile());
}

#[test]
fn a_catalog_over_the_output_cap_is_refused_with_its_size() {
    // Room to build the flood (its 16 MB take about 150 ms alone, more on a loaded
    // machine): this test is of the output cap, not of the deadline.
    let roomy = hostile_with(RuntimeOptions {
        limits: Limits {
            memory_bytes: 64 << 20,
            deadline: Duration::from_secs(10),
            ..limits()
        },
        ..RuntimeOptions::default()
    });
    let err = roomy.catalog("flood").unwrap_err();
    assert!(
        matches!(err, CallError::Catalog { limit: 1048576, size } if size > 16 << 20),
        "{err}"
    );
    assert!(
        err.to_string()
            .contains("past the output limit of 1048576 bytes; it was not served")
    );
    assert!(hostile().catalog("").unwrap().is_empty());
}

#[test]
fn titles_count_toward_the_catalogs_size() {
    let roomy = hostile_with(RuntimeOptions {
        limits: Limits {
            memory_bytes: 64 << 20,
            ..limits()
        },
        ..RuntimeOptions::default()
    });
    // Sixteen one-byte names with 1 MiB titles each.
    let err = roomy.catalog("title-flood").unwrap_err();
    assert!(
        matches!(err, CallError::Catalog { limit: 1048576, size } if size > 16 << 20),
        "{err}"
    );
}

#[test]
fn a_session_id_past_its_bound_stops_the_call_before_the_harness_is_asked() {
    // inbox-status with 1 MiB ids: stopped at the first call.
    let report = call(&hostile(), "status-flood", &(1 << 20).to_string());
    let err = report.answer.unwrap_err();
    assert!(
        matches!(
            err,
            CallError::HostBound(HostStop::IdBytes {
                limit: 65536,
                size: 1048576,
                ..
            })
        ),
        "{err}"
    );
    assert_eq!(report.stats.inbox_status_reads, 1);
    assert!(
        err.to_string().contains(
            "an inbox-status session id of 1048576 bytes, past the host's limit of 65536 bytes"
        ),
        "{err}"
    );
    // A delivery to a 1 MiB target: stopped, nothing delivered.
    let report = call(&hostile(), "deliver-long-target", "");
    assert!(matches!(
        report.answer.unwrap_err(),
        CallError::HostBound(HostStop::IdBytes {
            what: "a delivery target",
            ..
        })
    ));
    assert!(report.deliveries.is_empty());
    assert_eq!(report.stats.deliveries, 0);
    still_serves(&hostile());
}

#[test]
fn what_a_plugin_hands_the_host_in_one_call_is_bounded() {
    // inbox-status in a loop with ids just under the id bound: stopped by the bytes
    // handed over, not by the deadline.
    let runtime = hostile_with(room(
        16 << 20,
        HostBounds {
            lifted_bytes: 1 << 20,
            ..HostBounds::default()
        },
    ));
    let report = call(&runtime, "status-flood", "4000");
    stopped_at(&report.answer, HostStop::LiftedBytes { limit: 1048576 });
    assert!(report.stats.lifted_bytes > 1 << 20);
    assert_eq!(report.stats.inbox_status_reads, 132, "8,000 bytes a call");
    still_serves(&runtime);
}

#[test]
fn no_call_could_run_with_zero_concurrent_calls() {
    let err = Runtime::<CorpusHost>::with_options(
        PLUGIN_WASM,
        &RuntimeOptions {
            max_concurrent_calls: 0,
            ..RuntimeOptions::default()
        },
    )
    .err()
    .unwrap()
    .to_string();
    host_shim_testkit::has(&err, "max_concurrent_calls must be at least 1");
}

#[test]
fn a_delivery_after_the_largest_seq_is_refused_not_collided() {
    let corpus = serde_json::json!({"caller": "me", "sessions": [
        {"id": "me", "created_at": "2026-12-01T00:00:00Z"},
        {"id": "full", "created_at": "2026-12-01T00:00:00Z", "live": true,
         "messages": [{"seq": u64::MAX, "role": "user", "parts": [{"text": "last words"}]}]}
    ]});
    let corpus = Corpus::from_json(&corpus.to_string(), "test").unwrap();
    let runtime: Runtime<CorpusHost> = Runtime::with_options(
        host_shim_plugin::PLUGIN_WASM,
        &host_shim::RuntimeOptions::default(),
    )
    .unwrap();
    let request = CallRequest {
        caller: "me".into(),
        tool: "sessions_send".into(),
        arguments: r#"{"session_id":"full","message":"one more"}"#.into(),
        ..CallRequest::default()
    };
    let report = runtime.call(CorpusHost::new(Arc::new(corpus)), &request);
    let text = report.answer.unwrap().text;
    assert!(
        text.starts_with("sessions_send refused (rejected)")
            && text.contains("the session is full"),
        "{text}"
    );
    assert!(report.deliveries.is_empty());
}

#[test]
fn a_key_reused_for_another_message_is_a_contract_breach_not_a_repeat() {
    let harness = host_shim::Shared::new(demo());
    let runtime_shared: Runtime<host_shim::Shared<CorpusHost>> = Runtime::with_options(
        HOSTILE_PLUGIN,
        &RuntimeOptions {
            limits: limits(),
            ..RuntimeOptions::default()
        },
    )
    .unwrap();
    let keyed = |body: &str| {
        let request = CallRequest {
            caller: "me".into(),
            tool: "deliver-keyed".into(),
            arguments: LIVE_TARGET.into(),
            settings: body.into(),
            ..CallRequest::default()
        };
        runtime_shared.call(harness.clone(), &request)
    };
    assert_eq!(keyed("one").answer.unwrap().text, "Ok(false)");
    let report = keyed("two");
    let err = report.answer.unwrap_err();
    assert!(
        matches!(&err, CallError::HostBound(HostStop::KeyReused { key }) if key == "9:fixed-key"),
        "{err}"
    );
    assert!(
        err.to_string().contains("\"9:fixed-key\" was used before"),
        "{err}"
    );
    assert!(report.deliveries.is_empty());
    // The same message again is the repeat it always was.
    assert_eq!(keyed("one").answer.unwrap().text, "Ok(true)");
}

#[test]
fn an_id_bound_shorter_than_ordinary_ids_is_refused() {
    let err = Runtime::<CorpusHost>::with_options(
        PLUGIN_WASM,
        &RuntimeOptions {
            bounds: HostBounds {
                id_bytes: 10,
                ..HostBounds::default()
            },
            ..RuntimeOptions::default()
        },
    )
    .err()
    .unwrap()
    .to_string();
    host_shim_testkit::has(&err, "id_bytes must be at least 256");
}

/// A plugin that asks the host to await a reply for longer than the host allows gets
/// the host's bound: the wait it is told of (and the one the host keeps) is at most
/// `await_seconds`.
#[test]
fn a_wait_for_a_reply_is_bounded_by_the_host_whatever_the_plugin_asks() {
    let runtime = hostile_with(RuntimeOptions {
        limits: limits(),
        bounds: HostBounds {
            await_seconds: 2,
            ..HostBounds::default()
        },
        ..RuntimeOptions::default()
    });
    let request = CallRequest {
        caller: "me".into(),
        tool: "await-forever".into(),
        arguments: LIVE_TARGET.into(),
        ..CallRequest::default()
    };
    let report = runtime.call_awaiting(demo(), &request, &|| false);
    assert_eq!(
        report.answer.unwrap().text,
        "accepted / waited 2 s / reply None"
    );
    // Without waiting, the plugin's own answer asks for u32::MAX seconds.
    let asked = runtime.call(demo(), &request).answer.unwrap();
    assert_eq!(asked.await_reply.unwrap().seconds, u32::MAX);
}
