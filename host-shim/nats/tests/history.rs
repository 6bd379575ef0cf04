//! The history check, in the spirit of Jepsen's checkers: many sends and hand-overs
//! through a real three-node cluster while the target's hooks are killed at every step
//! and at random moments and the cluster's stream leader is killed, then paused past an
//! election, then the whole cluster stopped and started again; then every message is
//! counted in the target's own record. The record is a transcript kept as Claude Code
//! keeps one: what a hook that exited with success added, and nothing of a killed or
//! failed one. Lost (accepted, never recorded), doubled (recorded twice) and phantom
//! (recorded, never sent) messages are counted from it, not from the bucket.
//!
//! Each hook is a process of its own (this test binary started again to run
//! [`hook_child`]): `host-shim claude-hook`'s code over the cluster's inbox.

mod support;

use host_shim::contract::latest::{DeliveryMode, MessageIds};
use host_shim::inbox::{InboxBackend, Put, SpooledMessage, Step};
use host_shim_nats::{ClusterFile, Connection, NatsInbox};
use std::collections::HashMap;
use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use support::{Cluster, server};

const SESSION: &str = "ses-b";
const BUCKET: &str = "history";
/// Sends, one every [`PACE`].
const SENDS: usize = 200;
const PACE: Duration = Duration::from_millis(120);

/// Kills this process at the step named by `HISTORY_KILL_AT`.
fn kill_at_named_step(step: Step) {
    if std::env::var("HISTORY_KILL_AT").ok().as_deref() == Some(&format!("{step:?}")) {
        // SAFETY: sends a signal to this process; nothing after it runs.
        unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
    }
}

/// The inbox on the cluster whose nodes `HISTORY_URLS` (or `urls`) names, as machine
/// `tests`.
fn inbox_on(urls: &[String]) -> NatsInbox {
    let urls: Vec<&str> = urls.iter().map(String::as_str).collect();
    let file = ClusterFile::new(&urls, "tests").unwrap();
    NatsInbox::open(Connection::open(&file).unwrap(), BUCKET, 3).unwrap()
}

/// One `SessionStart` hook of the target, as Claude Code runs it: started by the
/// check below in a process of its own, and killed at the step it names.
#[test]
#[ignore = "a hook run of the history check, not a test by itself"]
fn hook_child() {
    let urls: Vec<String> = (std::env::var("HISTORY_URLS").unwrap().split(','))
        .map(str::to_string)
        .collect();
    let inbox = inbox_on(&urls).observe(kill_at_named_step);
    let state = PathBuf::from(std::env::var("HISTORY_STATE").unwrap());
    let presence = host_shim::LocalPresence::open(&state).unwrap();
    let input = serde_json::json!({"session_id": SESSION, "hook_event_name": "SessionStart",
        "transcript_path": std::env::var("HISTORY_RECORD").unwrap()});
    let mut out = std::io::stdout();
    host_shim_claude_code::hook::answer(
        &inbox,
        &presence,
        None,
        input.to_string().as_bytes(),
        &mut out,
    )
    .unwrap();
}

/// How a hook run ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ending {
    /// It runs to its end (success, or a failure it says).
    Whole,
    /// Killed right after this step.
    At(Step),
    /// Killed this many ms after it started, wherever it is.
    After(u64),
}

/// What the hook runs did.
#[derive(Default, Debug)]
struct Runs {
    /// Runs by how they were to end (a run with nothing to hand over ends whole).
    by_ending: std::collections::BTreeMap<String, usize>,
    /// Runs that exited with success and answered: their context is in the record.
    recorded: usize,
    /// Runs killed, and runs that failed (the cluster down, say).
    killed: usize,
    failed: usize,
}

/// The places of one history check.
struct World {
    urls: Vec<String>,
    record: PathBuf,
    state: PathBuf,
}

impl World {
    /// Runs one hook, ending as `ending` says, and keeps its context in the record if it
    /// exited with success (as Claude Code does; a killed or failed hook's output is
    /// dropped).
    fn hook(&self, ending: Ending, runs: &mut Runs) {
        let kill_at = match ending {
            Ending::At(step) => format!("{step:?}"),
            _ => String::new(),
        };
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "hook_child",
                "--exact",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("HISTORY_URLS", self.urls.join(","))
            .env("HISTORY_RECORD", &self.record)
            .env("HISTORY_STATE", &self.state)
            .env("HISTORY_KILL_AT", kill_at)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let started = Instant::now();
        let cut = match ending {
            Ending::After(ms) => Duration::from_millis(ms),
            // Past any hook's time (a step may wait 15 s for an election, twice).
            _ => Duration::from_secs(60),
        };
        while child.try_wait().unwrap().is_none() && started.elapsed() < cut {
            std::thread::sleep(Duration::from_millis(2));
        }
        let _ = child.kill();
        let output = child.wait_with_output().unwrap();
        let kind = match ending {
            Ending::Whole => "whole".to_string(),
            Ending::At(step) => format!("killed after {step:?}"),
            Ending::After(_) => "killed at a random moment".to_string(),
        };
        *runs.by_ending.entry(kind).or_default() += 1;
        if output.status.signal() == Some(libc::SIGKILL) {
            runs.killed += 1;
            return;
        }
        if !output.status.success() {
            runs.failed += 1;
            return;
        }
        // The test harness prints its own words around the child's answer.
        let stdout = String::from_utf8_lossy(&output.stdout);
        let Some(answer) =
            (stdout.lines()).find_map(|l| l.find("{\"hookSpecificOutput\"").map(|at| &l[at..]))
        else {
            return;
        };
        let answer: serde_json::Value = serde_json::from_str(answer).unwrap();
        let context = &answer["hookSpecificOutput"]["additionalContext"];
        let line = serde_json::json!({"type": "attachment", "attachment": {
            "type": "hook_additional_context", "content": [context], "hookEvent": "SessionStart"}});
        let mut record = (std::fs::OpenOptions::new().create(true).append(true))
            .open(&self.record)
            .unwrap();
        writeln!(record, "{line}").unwrap();
        runs.recorded += 1;
    }

    /// How many times the record holds each message id.
    fn recorded(&self) -> HashMap<String, usize> {
        let mut times = HashMap::new();
        let text = std::fs::read_to_string(&self.record).unwrap_or_default();
        for line in text.lines() {
            let record: serde_json::Value = serde_json::from_str(line).unwrap();
            let texts = record["attachment"]["content"].as_array().unwrap();
            let texts = texts.iter().filter_map(|t| t.as_str());
            for id in host_shim::inbox::shown_in(texts) {
                *times.entry(id).or_default() += 1;
            }
        }
        times
    }
}

/// Message `n`, framed as the plugin frames it, with its id.
fn note(n: usize) -> SpooledMessage {
    let id = format!("m-{n:012x}");
    let body = format!(
        "Cross-session message from another session of this harness.\nfrom-session: alice (\"A\")\n\
         delivery: queue\nhop: 1\nmessage-id: {id}\n--- message begins ---\nnote {n}\n--- message ends ---"
    );
    let ids = MessageIds {
        message_id: id,
        in_reply_to: None,
    };
    SpooledMessage::new(
        SESSION,
        DeliveryMode::Queue,
        &body,
        &format!("5:alicek{n}"),
        false,
    )
    .with_ids(&ids)
}

/// Puts message `n`, again under its key while the cluster cannot take it, for up to
/// 90 s: whether it was accepted.
fn send(inbox: &NatsInbox, n: usize) -> bool {
    let until = Instant::now() + Duration::from_secs(90);
    loop {
        match inbox.put(&note(n)) {
            Ok(Put::New(_) | Put::Repeat(_)) => return true,
            Err(_) if Instant::now() < until => std::thread::sleep(Duration::from_millis(500)),
            Err(_) => return false,
        }
    }
}

/// A small, seeded generator for the hooks' random moments (the seed is printed).
struct Moments(u64);

impl Moments {
    fn next(&mut self, below: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % below
    }
}

#[test]
fn every_accepted_message_is_in_its_targets_record_exactly_once() {
    let Some(binary) = server() else { return };
    let mut cluster = Cluster::start(&binary, "history");
    let dir = host_shim_testkit::temp_folder("nats-history");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("state")).unwrap();
    let world = World {
        urls: cluster.urls.clone(),
        record: dir.join("transcript.jsonl"),
        state: dir.join("state"),
    };
    let sender = inbox_on(&world.urls);
    let seed = (host_shim::inbox::now_ns() as u64) | 1;
    let began = Instant::now();
    let (sending, harness_on) = (AtomicBool::new(true), AtomicBool::new(true));
    let endings = [
        Ending::Whole,
        Ending::At(Step::Claimed),
        Ending::At(Step::Answered),
        Ending::At(Step::Marked),
        Ending::After(0),
    ];
    let (accepted, mut runs) = std::thread::scope(|scope| {
        let sends = scope.spawn(|| {
            let accepted: Vec<bool> = (0..SENDS)
                .map(|n| {
                    std::thread::sleep(PACE);
                    send(&sender, n)
                })
                .collect();
            sending.store(false, Ordering::SeqCst);
            accepted
        });
        // The target's harness: a hook every 100 ms, each ending another way in turn.
        let hooks = scope.spawn(|| {
            let (mut runs, mut moments) = (Runs::default(), Moments(seed));
            for turn in 0.. {
                if !harness_on.load(Ordering::SeqCst) {
                    break;
                }
                let ending = match endings[turn % endings.len()] {
                    Ending::After(_) => Ending::After(20 + moments.next(400)),
                    ending => ending,
                };
                world.hook(ending, &mut runs);
                std::thread::sleep(Duration::from_millis(100));
            }
            runs
        });
        // The faults, while both run.
        std::thread::sleep(Duration::from_millis(1500));
        let leader = cluster.leader_of("KV_history").expect("a leader");
        cluster.kill(leader);
        std::thread::sleep(Duration::from_secs(8));
        cluster.restart(leader);
        cluster.wait_healthy();
        std::thread::sleep(Duration::from_secs(2));
        let leader = cluster.leader_of("KV_history").expect("a leader");
        cluster.pause(leader);
        std::thread::sleep(Duration::from_secs(12));
        cluster.resume(leader);
        std::thread::sleep(Duration::from_secs(2));
        for node in 0..3 {
            cluster.kill(node);
        }
        std::thread::sleep(Duration::from_secs(4));
        for node in 0..3 {
            cluster.restart(node);
        }
        cluster.wait_healthy();
        let accepted = sends.join().unwrap();
        harness_on.store(false, Ordering::SeqCst);
        (accepted, hooks.join().unwrap())
    });
    assert!(!sending.load(Ordering::SeqCst));
    // Time passes: a dead hook's claim and an offer its record does not show are
    // settled (handed over when the record shows them, else waiting again), and the
    // hooks run on until nothing is left.
    let settler = inbox_on(&world.urls).claims_expire_after(Duration::ZERO);
    for _ in 0..20 {
        let shown = host_shim_claude_code::handed_over_ids(
            &world.record,
            host_shim::harnesses::logfile::ReadFrom::End,
        )
        .unwrap();
        (settler.settle(SESSION, Duration::ZERO, &mut |_| Ok(shown.clone()))).unwrap();
        let count = settler.count_from(SESSION, "alice").unwrap();
        if count.waiting == 0 {
            break;
        }
        world.hook(Ending::Whole, &mut runs);
    }
    let recorded = world.recorded();
    let sent: HashMap<String, bool> = (accepted.iter().enumerate())
        .map(|(n, &accepted)| (format!("m-{n:012x}"), accepted))
        .collect();
    let lost: Vec<&String> = (sent.iter())
        .filter(|(id, accepted)| **accepted && !recorded.contains_key(*id))
        .map(|(id, _)| id)
        .collect();
    let doubled: Vec<(&String, &usize)> = recorded.iter().filter(|(_, n)| **n > 1).collect();
    let phantom: Vec<&String> = (recorded.keys())
        .filter(|id| !sent.contains_key(*id))
        .collect();
    let refused = accepted.iter().filter(|a| !**a).count();
    eprintln!(
        "history (seed {seed}): {SENDS} sends, {} accepted, {refused} refused; {} hook runs \
         ({} recorded, {} killed, {} failed; {:?}); lost {}, doubled {}, phantom {}; {:.1} s",
        SENDS - refused,
        runs.by_ending.values().sum::<usize>(),
        runs.recorded,
        runs.killed,
        runs.failed,
        runs.by_ending,
        lost.len(),
        doubled.len(),
        phantom.len(),
        began.elapsed().as_secs_f64()
    );
    assert_eq!(refused, 0, "every send accepted through the faults");
    assert!(lost.is_empty(), "lost: {lost:?}");
    assert!(doubled.is_empty(), "doubled: {doubled:?}");
    assert!(phantom.is_empty(), "phantom: {phantom:?}");
    assert!(runs.killed >= 4, "hooks killed at every step: {runs:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
