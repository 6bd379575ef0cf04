//! Each tool both through the component in wasmtime and natively (the same core called
//! directly), in one run, so the ratio is visible; plus cold (compile) and warm (cache)
//! loads. `cargo bench -p benches`; peak guest memory per case is printed first.

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use host_shim::contract::latest::{ActionStatus, InboundPolicy, MessageIds};
use host_shim::{
    CallRequest, Corpus, CorpusHost, Message, Role, Runtime, RuntimeOptions, Session, SessionHeader,
};
use host_shim_plugin::PLUGIN_WASM;
use session_tools::host as core;
use std::hint::black_box;
use std::sync::Arc;

/// The corpus host seen through the tool core's own traits, for the native runs: the
/// same answers, converted field by field (moves, no copies of text); the index is
/// built straight from the corpus, as a harness holding its sessions would.
struct NativeHost(CorpusHost, Arc<Corpus>);

fn header(h: SessionHeader) -> core::SessionHeader {
    core::SessionHeader {
        id: h.id,
        created_at_ms: h.created_at_ms,
        live: h.live,
        parent_id: h.parent_id,
        origin: h.origin,
        cwd: h.cwd,
        preset: h.preset,
        inbound: match h.inbound {
            InboundPolicy::Accept => core::Inbound::Accept,
            InboundPolicy::Hold => core::Inbound::Hold,
            InboundPolicy::Refuse => core::Inbound::Refuse,
        },
        machine: h.machine,
    }
}

fn role(role: Role) -> core::Role {
    match role {
        Role::User => core::Role::User,
        Role::Assistant => core::Role::Assistant,
        Role::System => core::Role::System,
    }
}

impl core::SessionQuery for NativeHost {
    fn list_sessions(&mut self) -> core::SessionIndex {
        let sessions = self.1.sessions();
        let mut index = core::SessionIndex {
            ids: String::with_capacity(sessions.iter().map(|s| s.header.id.len()).sum()),
            entries: Vec::with_capacity(sessions.len()),
        };
        for header in sessions.iter().map(|s| &s.header) {
            index.ids.push_str(&header.id);
            index.entries.push(core::SessionEntry {
                id_len: header.id.len() as u32,
                created_at_ms: header.created_at_ms,
                live: header.live,
                subagent: header.is_subagent(),
            });
        }
        index
    }
    fn get_session(&mut self, id: &str) -> Option<core::SessionHeader> {
        host_shim::SessionQuery::get_session(&mut self.0, id).map(header)
    }
    fn get_sessions(&mut self, ids: &[String]) -> Vec<Option<core::SessionHeader>> {
        host_shim::SessionQuery::get_sessions(&mut self.0, ids)
            .into_iter()
            .map(|h| h.map(header))
            .collect()
    }
    fn title_snapshots(&mut self, ids: &[String]) -> Vec<Option<String>> {
        host_shim::SessionQuery::title_snapshots(&mut self.0, ids)
    }
    fn get_surface(&mut self, id: &str, lead_chars: u32) -> Option<core::SurfaceIndex> {
        let surface = host_shim::SessionQuery::get_surface(&mut self.0, id, lead_chars)?;
        Some(core::SurfaceIndex {
            captured_through_seq: surface.captured_through_seq,
            source_leads: surface.source_leads,
            text_leads: surface.text_leads,
            messages: surface
                .messages
                .into_iter()
                .map(|m| core::MessageEntry {
                    seq: m.seq,
                    role: role(m.role),
                    replaced: m.replaced,
                    injected: m.injected,
                    source_lead_len: m.source_lead_len,
                    text_lead_len: m.text_lead_len,
                    text_chars: m.text_chars,
                })
                .collect(),
        })
    }
    fn get_messages(&mut self, id: &str, seqs: &[u64]) -> Vec<Option<core::MessageContent>> {
        host_shim::SessionQuery::get_messages(&mut self.0, id, seqs)
            .into_iter()
            .map(|m| {
                m.map(|m| core::MessageContent {
                    source: m.source,
                    text: m.text,
                    injected: m.injected,
                })
            })
            .collect()
    }
    fn inbox_status(&mut self, target: &str, sender: &str) -> core::InboxCount {
        let count = host_shim::SessionQuery::inbox_status(&mut self.0, target, sender);
        core::InboxCount {
            waiting: count.waiting,
            handed_over: count.handed_over,
        }
    }
    fn action_seqs(&mut self, id: &str) -> Vec<u64> {
        host_shim::SessionQuery::action_seqs(&mut self.0, id)
    }
    fn get_actions(&mut self, id: &str, seqs: &[u64]) -> Vec<Vec<core::ToolAction>> {
        (host_shim::SessionQuery::get_actions(&mut self.0, id, seqs).into_iter())
            .map(|calls| {
                (calls.into_iter())
                    .map(|a| core::ToolAction {
                        name: a.name,
                        input: a.input,
                        status: match a.status {
                            ActionStatus::Ok => core::ActionStatus::Ok,
                            ActionStatus::Error => core::ActionStatus::Error,
                            ActionStatus::Running => core::ActionStatus::Running,
                        },
                    })
                    .collect()
            })
            .collect()
    }
    fn send_history(
        &mut self,
        sender: &str,
        target: &str,
        window_minutes: u32,
        limit: u32,
        key: &str,
    ) -> core::SendCounts {
        let ask = host_shim::HistoryAsk {
            sender,
            target,
            window_minutes,
            limit,
            key,
        };
        let h = host_shim::SessionQuery::send_history(&mut self.0, &ask);
        core::SendCounts {
            now_ms: h.now_ms,
            to_target: h.to_target,
            to_any: h.to_any,
            to_target_times: h.to_target_times,
            to_any_times: h.to_any_times,
            key_accepted: h.key_accepted,
        }
    }
}

// The corpus holds no claims: a listing and a read ask once and find none, as a
// deployment where nobody claims anything does.
impl core::Claims for NativeHost {
    fn read_claims(&mut self) -> Result<core::ClaimSet, String> {
        Ok(core::ClaimSet::default())
    }

    fn write_claims(
        &mut self,
        revision: u64,
        _claims: &[core::Claim],
        _changes: &[core::ClaimChange],
    ) -> Result<u64, core::WriteFailure> {
        Ok(revision + 1)
    }
}

impl core::Inbox for NativeHost {
    fn deliver(
        &mut self,
        target: &str,
        body: &str,
        mode: core::DeliveryMode,
        may_wake: bool,
        key: &str,
        ids: &core::MessageIds,
    ) -> Result<core::Delivered, core::DeliveryRefusal> {
        let mode = match mode {
            core::DeliveryMode::Queue => host_shim::DeliveryMode::Queue,
            core::DeliveryMode::Steer => host_shim::DeliveryMode::Steer,
        };
        let ids = MessageIds {
            message_id: ids.message_id.clone(),
            in_reply_to: ids.in_reply_to.clone(),
        };
        let request = host_shim::DeliveryRequest {
            target,
            body,
            mode,
            may_wake,
            key,
            ids: &ids,
        };
        match host_shim::Inbox::deliver(&mut self.0, &request) {
            Ok(delivered) => Ok(core::Delivered {
                woke: delivered.woke,
                repeat: delivered.repeat,
                state: match delivered.state {
                    host_shim::DeliveryState::Waiting => core::DeliveryState::Waiting,
                    host_shim::DeliveryState::HandedOver => core::DeliveryState::HandedOver,
                    host_shim::DeliveryState::Held => core::DeliveryState::Held,
                    host_shim::DeliveryState::WakeStarted => core::DeliveryState::WakeStarted,
                },
                message_id: delivered.message_id,
            }),
            Err(host_shim::DeliveryRefusal::NotFound) => Err(core::DeliveryRefusal::NotFound),
            Err(host_shim::DeliveryRefusal::WouldNeedWake) => {
                Err(core::DeliveryRefusal::WouldNeedWake)
            }
            Err(host_shim::DeliveryRefusal::Rejected(r)) => Err(core::DeliveryRefusal::Rejected(r)),
            Err(host_shim::DeliveryRefusal::RefusedByTarget) => {
                Err(core::DeliveryRefusal::RefusedByTarget)
            }
            Err(host_shim::DeliveryRefusal::Undecided(r)) => {
                Err(core::DeliveryRefusal::Undecided(r))
            }
        }
    }
}

const CALLER: &str = "session-00000";

fn session(i: usize, messages: Vec<Message>) -> Session {
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
            inbound: InboundPolicy::Accept,
            machine: None,
        },
        title: Some(format!(
            "Work item {i}: refactor the parser module number {}",
            i % 13
        )),
        messages,
        ..Session::new("", 0)
    }
}

/// 10,000 sessions, a fifth of them subagents.
fn ten_thousand_sessions() -> Arc<Corpus> {
    Arc::new(Corpus::new(
        None,
        (0..10_000).map(|i| session(i, Vec::new())).collect(),
    ))
}

/// One session with a 2,000-message surface (the text part of each; reasoning and
/// tool parts never cross).
fn two_thousand_messages() -> Arc<Corpus> {
    let messages = (0..2000u64)
        .map(|seq| {
            let (role, source) = if seq.is_multiple_of(2) {
                (Role::User, "user")
            } else {
                (Role::Assistant, "model:provider/model")
            };
            let text = format!("message {seq}: {}", "some words of a reply ".repeat(20));
            Message::new(seq, role, source, false, Some(text))
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
    settings: &'static str,
    tool: &'static str,
    arguments: &'static str,
}

fn cases() -> Vec<Case> {
    let big = ten_thousand_sessions();
    vec![
        Case {
            name: "fixed cost (empty corpus, sessions_list)",
            corpus: Arc::new(Corpus::default()),
            settings: "",
            tool: "sessions_list",
            arguments: "",
        },
        Case {
            name: "sessions_list 10k, empty query",
            corpus: big.clone(),
            settings: "",
            tool: "sessions_list",
            arguments: "",
        },
        Case {
            name: "sessions_list 10k, readScope workspace",
            corpus: big.clone(),
            settings: r#"{"readScope": "workspace"}"#,
            tool: "sessions_list",
            arguments: r#"{"scope": "all"}"#,
        },
        Case {
            name: "sessions_list 10k, query",
            corpus: big.clone(),
            settings: "",
            tool: "sessions_list",
            arguments: r#"{"query": "parser repo-42 number", "scope": "all"}"#,
        },
        Case {
            name: "sessions_read 2k-message surface",
            corpus: two_thousand_messages(),
            settings: "",
            tool: "sessions_read",
            arguments: r#"{"session_id": "session-00001"}"#,
        },
        Case {
            name: "sessions_send",
            corpus: big,
            settings: "",
            tool: "sessions_send",
            arguments: r#"{"session_id": "session-09998", "message": "The parser refactor landed; rebase when you can."}"#,
        },
    ]
}

fn tools(c: &mut Criterion) {
    let runtime: Runtime<CorpusHost> = Runtime::with_options(
        host_shim_plugin::PLUGIN_WASM,
        &host_shim::RuntimeOptions::default(),
    )
    .expect("plugin loads");
    let unhardened: Runtime<CorpusHost> = Runtime::with_options(
        PLUGIN_WASM,
        &RuntimeOptions {
            spectre_mitigations: false,
            ..RuntimeOptions::default()
        },
    )
    .expect("plugin loads");
    for case in cases() {
        let settings = session_tools::Settings::from_json(case.settings).expect("valid settings");
        let request = CallRequest {
            caller: CALLER.into(),
            settings: case.settings.into(),
            tool: case.tool.into(),
            arguments: case.arguments.into(),
            ..CallRequest::default()
        };
        let outcome = runtime.call(CorpusHost::new(case.corpus.clone()), &request);
        let text = outcome.answer.unwrap().text;
        let mut host = NativeHost(CorpusHost::new(case.corpus.clone()), case.corpus.clone());
        let native =
            session_tools::call(&mut host, CALLER, "", &settings, case.tool, case.arguments)
                .unwrap()
                .text;
        assert_eq!(native, text, "native and wasm agree");
        eprintln!(
            "{}: peak guest memory {} KiB, {} bytes of text",
            case.name,
            outcome.peak_memory_bytes / 1024,
            text.len()
        );
        let mut group = c.benchmark_group(case.name);
        group.bench_function("wasm", |b| {
            b.iter(|| black_box(runtime.call(CorpusHost::new(case.corpus.clone()), &request)))
        });
        group.bench_function("wasm, Spectre hardening off", |b| {
            b.iter(|| black_box(unhardened.call(CorpusHost::new(case.corpus.clone()), &request)))
        });
        group.bench_function("native", |b| {
            b.iter(|| {
                let mut host =
                    NativeHost(CorpusHost::new(case.corpus.clone()), case.corpus.clone());
                black_box(session_tools::call(
                    &mut host,
                    CALLER,
                    "",
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
    Runtime::<CorpusHost>::with_options(PLUGIN_WASM, &warm_options).unwrap();
    let mut group = c.benchmark_group("load");
    group.sample_size(10);
    group.bench_function("cold (compile)", |b| {
        b.iter(|| {
            black_box(
                Runtime::<CorpusHost>::with_options(PLUGIN_WASM, &RuntimeOptions::default())
                    .unwrap(),
            )
        })
    });
    group.bench_function("warm (cache)", |b| {
        b.iter_batched(
            || (),
            |()| {
                black_box(Runtime::<CorpusHost>::with_options(PLUGIN_WASM, &warm_options).unwrap())
            },
            BatchSize::PerIteration,
        )
    });
    group.finish();
    let _ = std::fs::remove_dir_all(dir);
}

criterion_group!(benches, tools, loads);
criterion_main!(benches);
