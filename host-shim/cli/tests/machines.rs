//! Two machines as separate processes on a real three-node NATS cluster on loopback,
//! each with its own HOME, state folder and machine name, through the command a user
//! runs: beta's `host-shim mcp` over Codex threads (its cluster file in its state
//! folder), alpha's `host-shim call` over Claude Code sessions (`--cluster FILE`).
//! Alpha lists beta's threads, reads one (beta's server answers), messages it; beta's
//! Codex hook hands the message over once; when beta's server ends, alpha's read of it
//! fails at once, saying why. The cluster is `host-shim/nats/tests/support`'s.

#[path = "../../nats/tests/support/mod.rs"]
mod support;

mod common;

use std::path::PathBuf;
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

const CODEX_ORCHARD: &str = "01a23b72-ab02-7282-ba7a-193ba89b0a05";
const CLAUDE_CALLER: &str = "11111111-aaaa-4aaa-8aaa-000000000001";

/// A machine: its HOME and state folder, and its cluster file.
struct Machine {
    home: PathBuf,
    state: PathBuf,
    cluster: PathBuf,
}

impl Machine {
    fn new(name: &str, urls: &[String], cluster_file_in_state: bool) -> Machine {
        let home = host_shim_testkit::command::scratch("machines", name);
        let state = home.join("state");
        std::fs::create_dir_all(&state).unwrap();
        let cluster = match cluster_file_in_state {
            true => state.join("cluster.json"),
            false => home.join("team.json"),
        };
        let file = serde_json::json!({
            "servers": urls, "machine": name, "bucket": "team", "liveTtlSeconds": 3,
        });
        std::fs::write(&cluster, file.to_string()).unwrap();
        Machine {
            home,
            state,
            cluster,
        }
    }

    fn command(&self) -> std::process::Command {
        let mut command = common::host_shim();
        command
            .env("HOME", &self.home)
            .env_remove("XDG_STATE_HOME")
            .arg("--cache-dir")
            .arg(std::env::temp_dir().join("host-shim-machines-cache"));
        command
    }

    /// `host-shim ARGS --state-dir STATE` with `stdin`, to its end.
    fn run(&self, args: &[&str], stdin: &str) -> Output {
        let mut child = self
            .command()
            .args(args)
            .arg("--state-dir")
            .arg(&self.state)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        (child.stdin.take().unwrap())
            .write_all(stdin.as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    }

    /// A tool call as alpha's Claude Code session, over alpha's cluster file.
    fn call(&self, tool: &str, arguments: &str) -> Output {
        let projects = common::claude_projects();
        let cluster = self.cluster.to_str().unwrap();
        let args = [
            "call",
            tool,
            arguments,
            "--claude-projects",
            projects.to_str().unwrap(),
            "--cluster",
            cluster,
            "--caller",
            CLAUDE_CALLER,
        ];
        self.run(&args, "")
    }
}

fn text(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn said(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Beta's MCP server, running until its stdin closes.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn machines_as_separate_processes_list_read_and_message_each_other() {
    let Some(binary) = support::server() else {
        return;
    };
    let nodes = support::Cluster::start(&binary, "cli-machines");
    let alpha = Machine::new("alpha", &nodes.urls[..1], false);
    let beta = Machine::new("beta", &nodes.urls[1..], true);
    let codex = common::codex_home();
    let mut server = Server(
        beta.command()
            .args([
                "mcp",
                "--codex-home",
                codex.to_str().unwrap(),
                "--codex-hooks-only",
            ])
            .arg("--state-dir")
            .arg(&beta.state)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );

    // Beta's threads appear in alpha's listing once its server has published them.
    let deadline = Instant::now() + Duration::from_secs(30);
    let listing = loop {
        let out = alpha.call("sessions_list", r#"{"scope":"all"}"#);
        assert!(out.status.success(), "{}", said(&out));
        if text(&out).contains(CODEX_ORCHARD) {
            break text(&out);
        }
        assert!(
            Instant::now() < deadline,
            "beta never published:\n{}",
            text(&out)
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    let orchard = (listing.lines())
        .find(|line| line.starts_with(&format!("- {CODEX_ORCHARD} [")))
        .unwrap();
    assert!(
        orchard.contains("[cold, top-level]") && orchard.contains("| machine=beta"),
        "{listing}"
    );
    let caller = (listing.lines())
        .find(|line| line.starts_with(&format!("- {CLAUDE_CALLER} [")))
        .unwrap();
    assert!(
        caller.contains("| machine=alpha | this session"),
        "{listing}"
    );

    // The doctor on beta (its cluster file in its state folder) reaches the cluster and
    // sees the list its server published.
    let doctor = beta.run(&["doctor"], "");
    let report = text(&doctor);
    host_shim_testkit::has(&report, "joined as machine beta");
    host_shim_testkit::has(&report, "machine beta (this machine): 6 sessions published");

    // A read of beta's thread, answered by beta's server.
    let read = alpha.call(
        "sessions_read",
        &format!(r#"{{"session_id":"{CODEX_ORCHARD}"}}"#),
    );
    assert!(read.status.success(), "{}", said(&read));
    assert!(text(&read).contains("| machine=beta"), "{}", text(&read));
    host_shim_testkit::has(&text(&read), "Survey the orchard with a helper");

    // A message to it, handed over by beta's Codex hook, once.
    let send = format!(r#"{{"session_id":"{CODEX_ORCHARD}","message":"Pears or plums?"}}"#);
    let sent = alpha.call("sessions_send", &send);
    host_shim_testkit::begins(
        &text(&sent),
        &format!("accepted for {CODEX_ORCHARD} | mode=queue"),
    );
    // Beta's person watches: the thread, with alpha's message waiting for it in the
    // cluster (beta's own audit log has nothing of it yet).
    let watch_args = ["watch", "--once", "--codex-home", codex.to_str().unwrap()];
    let watched = beta.run(&watch_args, "");
    assert!(watched.status.success(), "{}", said(&watched));
    let row = (text(&watched).lines())
        .find(|line| line.trim_start().starts_with(CODEX_ORCHARD))
        .map(str::to_string);
    assert!(
        row.as_deref().is_some_and(|row| row.contains("1 waiting")),
        "{}",
        text(&watched)
    );
    let hook_input =
        serde_json::json!({"session_id": CODEX_ORCHARD, "hook_event_name": "UserPromptSubmit"})
            .to_string();
    let handed = beta.run(&["codex-hook"], &hook_input);
    assert!(handed.status.success(), "{}", said(&handed));
    host_shim_testkit::has(&text(&handed), "Pears or plums?");
    assert!(text(&handed).contains(CLAUDE_CALLER), "{}", text(&handed));
    let again = beta.run(&["codex-hook"], &hook_input);
    assert!(
        !text(&again).contains("Pears or plums?"),
        "{}",
        text(&again)
    );
    // Accepted on alpha, handed over on beta: each machine's audit log has its part.
    let alpha_log = text(&alpha.run(&["log"], ""));
    host_shim_testkit::has(&alpha_log, "accepted");
    host_shim_testkit::has(&alpha_log, CODEX_ORCHARD);
    let beta_log = text(&beta.run(&["log"], ""));
    host_shim_testkit::has(&beta_log, "handed-over");
    host_shim_testkit::has(&beta_log, CODEX_ORCHARD);
    // And the watch shows it handed over, nothing waiting.
    let watched = text(&beta.run(&watch_args, ""));
    let handed_row = (watched.lines())
        .find(|line| line.contains(&format!("{CLAUDE_CALLER} -> {CODEX_ORCHARD}  queue hop=1 ")));
    assert!(
        handed_row
            .is_some_and(|row| row.ends_with(" chars  handed over (accepted on another machine)")),
        "{watched}"
    );
    host_shim_testkit::lacks(&watched, "1 waiting");

    // Beta's server ends (its client closes its stdin after a session): a read of its
    // thread is refused at once.
    let mut stdin = server.0.stdin.take().unwrap();
    use std::io::Write;
    let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"tests","version":"1"}}}"#;
    writeln!(stdin, "{initialize}").unwrap();
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .unwrap();
    drop(stdin);
    let mut stderr = String::new();
    use std::io::Read;
    (server.0.stderr.take().unwrap())
        .read_to_string(&mut stderr)
        .unwrap();
    let status = server.0.wait().unwrap();
    assert!(status.success(), "{status}: {stderr}");
    let started = Instant::now();
    let refused = alpha.call(
        "sessions_read",
        &format!(r#"{{"session_id":"{CODEX_ORCHARD}"}}"#),
    );
    assert!(!refused.status.success());
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert!(
        said(&refused).contains(&format!(
            "session {CODEX_ORCHARD} is on machine beta, where no session-tools host runs now"
        )),
        "{}",
        said(&refused)
    );
}

#[test]
fn a_cluster_file_that_cannot_be_used_is_named_with_what_to_do() {
    let home = host_shim_testkit::command::scratch("machines", "bad-file");
    let file = home.join("cluster.json");
    std::fs::write(
        &file,
        r#"{"servers": ["nats://127.0.0.1:1"], "machine": "a b"}"#,
    )
    .unwrap();
    let machine = Machine {
        home: home.clone(),
        state: home.join("state"),
        cluster: file.clone(),
    };
    let out = machine.call("sessions_list", "{}");
    assert!(!out.status.success());
    host_shim_testkit::has(&said(&out), &format!("the cluster file {}", file.display()));
    host_shim_testkit::has(&said(&out), "cannot name a machine");
    // A cluster nobody answers at: named, and nothing is delivered or listed.
    let port = support::free_port();
    std::fs::write(
        &file,
        format!(r#"{{"url": "nats://127.0.0.1:{port}", "machine": "a"}}"#),
    )
    .unwrap();
    let out = machine.call("sessions_list", "{}");
    assert!(!out.status.success());
    host_shim_testkit::has(&said(&out), "cannot join the cluster");
    assert!(
        said(&out).contains(&format!(
            "cannot connect to NATS at nats://127.0.0.1:{port}"
        )),
        "{}",
        said(&out)
    );
}
