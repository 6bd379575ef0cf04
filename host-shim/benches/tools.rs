//! Each tool both through the component in wasmtime and natively (the same core called
//! directly), in one run, so the ratio is visible; plus cold (compile) and warm (cache)
//! loads. `cargo bench -p host-shim`; peak guest memory per case is printed first.

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use host_shim::{CallRequest, Corpus, CorpusHost, PLUGIN_WASM, Runtime, RuntimeOptions, Session};
use session_tools::host::{ContentPart, ModelSurface, Role, SessionHeader, SurfaceMessage};
use std::hint::black_box;
use std::sync::Arc;

const CALLER: &str = "session-00000";

fn session(i: usize, messages: Vec<SurfaceMessage>) -> Session {
    Session {
        header: SessionHeader {
            id: format!("session-{i:05}"),
            created_at_ms: 1_700_000_000_000 + i as i64 * 1000,
            live: i.is_multiple_of(3),
            parent_id: (i.is_multiple_of(5) && i > 0).then(|| format!("session-{:05}", i - 1)),
            origin: if i.is_multiple_of(5) {
                "subagent"
            } else {
                "user"
            }
            .to_string(),
            cwd: Some(format!("/home/dev/repo-{}", i % 97)),
            preset: Some(["standard", "fast", "deep"][i % 3].to_string()),
        },
        title: Some(format!(
            "Work item {i}: refactor the parser module number {}",
            i % 13
        )),
        surface: ModelSurface {
            messages,
            captured_through_seq: 0,
        },
        reject: None,
        refuse_delivery: None,
    }
}

/// 10,000 sessions, a fifth of them subagents.
fn ten_thousand_sessions() -> Arc<Corpus> {
    Arc::new(Corpus::new(
        None,
        (0..10_000).map(|i| session(i, Vec::new())).collect(),
    ))
}

/// One session with a 2,000-message surface (text, reasoning and tool parts).
fn two_thousand_messages() -> Arc<Corpus> {
    let messages = (0..2000u64)
        .map(|seq| SurfaceMessage {
            seq,
            role: if seq % 2 == 0 {
                Role::User
            } else {
                Role::Assistant
            },
            source: if seq.is_multiple_of(2) {
                "user".into()
            } else {
                "model:provider/model".into()
            },
            replaced: false,
            parts: vec![
                ContentPart::Reasoning,
                ContentPart::Text(format!(
                    "message {seq}: {}",
                    "some words of a reply ".repeat(20)
                )),
                ContentPart::ToolOutput,
            ],
        })
        .collect();
    Arc::new(Corpus::new(
        None,
        vec![session(0, Vec::new()), session(1, messages)],
    ))
}

struct Case {
    name: &'static str,
    corpus: Arc<Corpus>,
    tool: &'static str,
    arguments: &'static str,
}

fn cases() -> Vec<Case> {
    let big = ten_thousand_sessions();
    vec![
        Case {
            name: "fixed cost (empty corpus, sessions_list)",
            corpus: Arc::new(Corpus::default()),
            tool: "sessions_list",
            arguments: "",
        },
        Case {
            name: "sessions_list 10k, empty query",
            corpus: big.clone(),
            tool: "sessions_list",
            arguments: "",
        },
        Case {
            name: "sessions_list 10k, query",
            corpus: big.clone(),
            tool: "sessions_list",
            arguments: r#"{"query": "parser repo-42 number", "scope": "all"}"#,
        },
        Case {
            name: "sessions_read 2k-message surface",
            corpus: two_thousand_messages(),
            tool: "sessions_read",
            arguments: r#"{"session_id": "session-00001"}"#,
        },
        Case {
            name: "sessions_send",
            corpus: big,
            tool: "sessions_send",
            arguments: r#"{"session_id": "session-09998", "message": "The parser refactor landed; rebase when you can."}"#,
        },
    ]
}

fn tools(c: &mut Criterion) {
    let runtime = Runtime::new().expect("plugin loads");
    let settings = session_tools::Settings::default();
    for case in cases() {
        let request = CallRequest {
            caller: CALLER.into(),
            tool: case.tool.into(),
            arguments: case.arguments.into(),
            ..CallRequest::default()
        };
        let outcome = runtime.call(case.corpus.clone(), &request).unwrap();
        let text = outcome.result.unwrap();
        let mut host = CorpusHost::new(case.corpus.clone());
        let native = session_tools::call(&mut host, CALLER, &settings, case.tool, case.arguments);
        assert_eq!(native, text, "native and wasm agree");
        eprintln!(
            "{}: peak guest memory {} KiB, {} bytes of text",
            case.name,
            outcome.peak_memory_bytes / 1024,
            text.len()
        );
        let mut group = c.benchmark_group(case.name);
        group.bench_function("wasm", |b| {
            b.iter(|| black_box(runtime.call(case.corpus.clone(), &request).unwrap()))
        });
        group.bench_function("native", |b| {
            b.iter(|| {
                let mut host = CorpusHost::new(case.corpus.clone());
                black_box(session_tools::call(
                    &mut host,
                    CALLER,
                    &settings,
                    case.tool,
                    case.arguments,
                ))
            })
        });
        group.finish();
    }
}

fn loads(c: &mut Criterion) {
    let dir =
        std::env::temp_dir().join(format!("session-tools-bench-cache-{}", std::process::id()));
    let warm_options = RuntimeOptions {
        cache_dir: Some(dir.clone()),
        ..RuntimeOptions::default()
    };
    Runtime::with_options(PLUGIN_WASM, &warm_options).unwrap();
    let mut group = c.benchmark_group("load");
    group.sample_size(10);
    group.bench_function("cold (compile)", |b| {
        b.iter(|| {
            black_box(Runtime::with_options(PLUGIN_WASM, &RuntimeOptions::default()).unwrap())
        })
    });
    group.bench_function("warm (cache)", |b| {
        b.iter_batched(
            || (),
            |()| black_box(Runtime::with_options(PLUGIN_WASM, &warm_options).unwrap()),
            BatchSize::PerIteration,
        )
    });
    group.finish();
    let _ = std::fs::remove_dir_all(dir);
}

criterion_group!(benches, tools, loads);
criterion_main!(benches);
