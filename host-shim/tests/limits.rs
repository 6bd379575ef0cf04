//! The sandbox holds: a plugin that spins, hogs memory, floods output, traps or
//! hammers its imports is stopped with an error that says which limit it hit, and the
//! same runtime serves a good call right after.

use host_shim::{CallError, CallRequest, Corpus, Limits, PLUGIN_WASM, Runtime, RuntimeOptions};
use std::sync::Arc;
use std::time::Duration;

const HOSTILE_PLUGIN_WASM: &[u8] = include_bytes!(env!("HOSTILE_PLUGIN_WASM"));

fn limits() -> Limits {
    Limits {
        deadline: Duration::from_millis(200),
        memory_bytes: 16 << 20,
        output_bytes: 1 << 20,
    }
}

fn hostile() -> Runtime {
    let options = RuntimeOptions {
        limits: limits(),
        ..RuntimeOptions::default()
    };
    Runtime::with_options(HOSTILE_PLUGIN_WASM, &options).unwrap()
}

fn run(runtime: &Runtime, tool: &str) -> Result<String, CallError> {
    let request = CallRequest {
        caller: "me".into(),
        tool: tool.into(),
        ..CallRequest::default()
    };
    runtime
        .call(Arc::new(Corpus::demo()), &request)
        .map(|outcome| outcome.result.unwrap())
}

/// After any failure, the runtime still answers.
fn still_serves(runtime: &Runtime) {
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
fn a_plugin_hammering_its_imports_is_stopped_at_its_deadline() {
    let runtime = hostile();
    let err = run(&runtime, "hammer").unwrap_err();
    assert!(matches!(err, CallError::Deadline(_)), "{err}");
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
fn the_real_plugin_stays_well_inside_the_default_limits() {
    let runtime = Runtime::new().unwrap();
    assert_eq!(runtime.limits(), Limits::default());
    let request = CallRequest {
        caller: "me".into(),
        tool: "sessions_list".into(),
        arguments: r#"{"scope":"all"}"#.into(),
        ..CallRequest::default()
    };
    let outcome = runtime.call(Arc::new(Corpus::demo()), &request).unwrap();
    assert!(outcome.peak_memory_bytes > 0);
    assert!(
        outcome.peak_memory_bytes <= 4 << 20,
        "peak {} bytes",
        outcome.peak_memory_bytes
    );
}

#[test]
fn one_runtime_serves_many_threads_with_serial_results() {
    let runtime = Arc::new(Runtime::new().unwrap());
    let corpus = Arc::new(Corpus::demo());
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
            let outcome = runtime.call(corpus.clone(), r).unwrap();
            (outcome.result, outcome.deliveries)
        })
        .collect();
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let (runtime, corpus, requests) = (runtime.clone(), corpus.clone(), requests.clone());
            std::thread::spawn(move || {
                (0..20)
                    .map(|i| {
                        let index = (t + i) % requests.len();
                        let outcome = runtime.call(corpus.clone(), &requests[index]).unwrap();
                        (index, outcome.result, outcome.deliveries)
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    for thread in threads {
        for (index, result, deliveries) in thread.join().unwrap() {
            assert_eq!((&result, &deliveries), (&serial[index].0, &serial[index].1));
        }
    }
}

#[test]
fn a_component_needing_other_imports_is_refused_at_load() {
    // The plugin itself loads with only the two interfaces linked.
    assert!(Runtime::from_component(PLUGIN_WASM).is_ok());
    // Anything that is not a component for this world is refused with a reason.
    let err = Runtime::from_component(b"\0asm\x01\0\0\0").err().unwrap();
    assert!(
        format!("{err:#}").contains("loading the plugin component"),
        "{err:#}"
    );
}
