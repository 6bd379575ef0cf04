//! The NATS inbox on a real three-node JetStream cluster on loopback (`support`),
//! started and stopped by each test: every check of the inbox suite, and hosts on
//! separate connections (as separate machines) sharing one bucket, puts riding out
//! the stream leader killed, and a bucket made before set up when joined.

mod support;

use host_shim::contract::latest::{DeliveryMode, InboundPolicy, MessageIds};
use host_shim::inbox::{InboxBackend, Put, Shown, SpooledMessage, is_undecided};
use host_shim_nats::NatsInbox;
use std::time::{Duration, Instant};
use support::{Cluster, inbox_at, server};

#[test]
fn every_inbox_check_holds_on_a_three_node_cluster() {
    let Some(binary) = server() else { return };
    let cluster = Cluster::start(&binary, "suite");
    let buckets = std::sync::atomic::AtomicUsize::new(0);
    host_shim::inbox::suite::run_all(|| {
        let n = buckets.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        // Each check on a fresh bucket, replicated on all three nodes.
        inbox_at(&cluster.urls[n % 3], &format!("inbox-{n}"))
    });
}

#[test]
fn hosts_on_separate_machines_share_one_inbox_and_each_key_lands_once() {
    let Some(binary) = server() else { return };
    let cluster = Cluster::start(&binary, "machines");
    // Each "machine" connects to another node of the cluster.
    let laptop = inbox_at(&cluster.urls[0], "shared");
    let buildbox = inbox_at(&cluster.urls[1], "shared");
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

/// Each process watches what its machine sent; a message another process of the
/// machine (its own connection, through another node) sent a moment before is still
/// caught as a repeat and counted against the sending caps, with no pause between.
#[test]
fn a_send_by_another_process_of_the_machine_is_seen_at_once() {
    let Some(binary) = server() else { return };
    let cluster = Cluster::start(&binary, "repeats");
    let processes = [
        inbox_at(&cluster.urls[0], "repeats"),
        inbox_at(&cluster.urls[2], "repeats"),
    ];
    let window = Duration::from_secs(600);
    let recently = || host_shim::inbox::now_ns() - 60_000_000_000;
    // Both watches run before either sends.
    for process in &processes {
        assert!(
            process
                .find_identical("ses-b", "alice", "-", window)
                .unwrap()
                .is_none()
        );
        assert!(process.sent_since("alice", recently()).unwrap().is_empty());
    }
    for n in 0..20 {
        let body = format!("note {n}");
        let key = format!("5:alicek{n}");
        let message = SpooledMessage::new("ses-b", DeliveryMode::Queue, &body, &key, false);
        let (sender, other) = (&processes[n % 2], &processes[1 - n % 2]);
        assert!(matches!(sender.put(&message).unwrap(), Put::New(_)));
        let repeat = other
            .find_identical("ses-b", "alice", &body, window)
            .unwrap();
        assert!(repeat.is_some_and(|first| first.message.key == key), "{n}");
        assert_eq!(other.sent_since("alice", recently()).unwrap().len(), n + 1);
    }
}

/// Each message and its mark is kept for the cluster file's `keepDays` after it was
/// written, then the bucket lets it go (it does not grow with every message ever
/// sent); what a person lets in stays.
#[test]
fn messages_and_their_marks_expire_and_a_persons_say_stays() {
    let Some(binary) = server() else { return };
    let cluster = Cluster::start(&binary, "kept");
    let inbox = inbox_at(&cluster.urls[0], "kept").keeping(Duration::from_secs(2));
    inbox.set_inbound("ses-b", InboundPolicy::Hold).unwrap();
    for key in ["5:alicek1", "5:alicek2"] {
        let message = SpooledMessage::new("ses-b", DeliveryMode::Queue, key, key, false);
        assert!(matches!(inbox.put(&message).unwrap(), Put::New(_)));
    }
    let first = inbox.waiting("ses-b").unwrap().messages[..1].to_vec();
    assert_eq!(
        inbox
            .hand_over("ses-b", first, &mut |_| Ok(()))
            .unwrap()
            .len(),
        1
    );
    let count = inbox.count_from("ses-b", "alice").unwrap();
    assert_eq!((count.waiting, count.handed_over), (1, 1));
    std::thread::sleep(Duration::from_millis(3500));
    assert!(inbox.waiting("ses-b").unwrap().messages.is_empty());
    assert!(inbox.find("ses-b", "5:alicek1").unwrap().is_none());
    let count = inbox.count_from("ses-b", "alice").unwrap();
    assert_eq!((count.waiting, count.handed_over), (0, 0));
    assert_eq!(
        cluster.messages_in("KV_kept"),
        Some(1),
        "the person's say alone"
    );
    assert_eq!(inbox.inbound("ses-b").unwrap(), InboundPolicy::Hold);
}

#[test]
fn reads_leave_no_consumer_behind() {
    let Some(binary) = server() else { return };
    let cluster = Cluster::start(&binary, "consumers");
    let inbox = inbox_at(&cluster.urls[0], "consumers");
    let message = SpooledMessage::new("ses-b", DeliveryMode::Queue, "hi", "5:alicek1", false);
    inbox.put(&message).unwrap();
    // Each read of a session's messages walks them with a consumer of its own, which
    // must go when the read ends: a busy host reads many times a second, and the
    // server refuses new consumers past its limit ("maximum consumers limit reached",
    // seen in the machines benchmark before this). The one that stays is the inbox's
    // watch of where each session is, for as long as the inbox lives.
    for _ in 0..50 {
        assert_eq!(inbox.waiting("ses-b").unwrap().messages.len(), 1);
        inbox.count_from("ses-b", "alice").unwrap();
    }
    assert_eq!(cluster.consumers_of("KV_consumers"), Some(1));
    drop(inbox);
    assert_eq!(cluster.consumers_of("KV_consumers"), Some(0));
}

#[test]
fn puts_ride_out_the_stream_leader_killed_and_each_message_lands_once() {
    let Some(binary) = server() else { return };
    let mut cluster = Cluster::start(&binary, "election");
    drop(inbox_at(&cluster.urls[0], "election"));
    let leader = cluster
        .leader_of("KV_election")
        .expect("the bucket's stream has a leader");
    // A host connected through another node, sending while the leader dies.
    let survivor = (leader + 1) % 3;
    sends_ride_out(&mut cluster, "election", survivor, |c| c.kill(leader));
}

#[test]
fn puts_ride_out_their_own_node_killed_and_each_message_lands_once() {
    let Some(binary) = server() else { return };
    let mut cluster = Cluster::start(&binary, "follower");
    drop(inbox_at(&cluster.urls[0], "follower"));
    let leader = cluster
        .leader_of("KV_follower")
        .expect("the bucket's stream has a leader");
    // A host connected through a follower, which dies under it: the client moves to
    // another node of the cluster and its puts go on.
    let follower = (leader + 1) % 3;
    sends_ride_out(&mut cluster, "follower", follower, |c| c.kill(follower));
}

#[test]
fn puts_ride_out_the_stream_leader_paused_past_an_election_and_the_stale_leader_takes_no_write() {
    let Some(binary) = server() else { return };
    let mut cluster = Cluster::start(&binary, "paused");
    drop(inbox_at(&cluster.urls[0], "paused"));
    let leader = cluster
        .leader_of("KV_paused")
        .expect("the bucket's stream has a leader");
    let survivor = (leader + 1) % 3;
    // The leader stops answering for longer than an election (the others elect a new
    // one in 4 to 9 s), then goes on as if nothing happened, believing it leads.
    sends_ride_out(&mut cluster, "paused", survivor, |c| {
        c.pause(leader);
        std::thread::sleep(Duration::from_secs(12));
        c.resume(leader);
    });
    // Writes through the stale leader's own node after it woke: it must not take them
    // as the leader it was; each lands once through the current one.
    let through_stale = inbox_at(&cluster.urls[leader], "paused");
    for n in SENDS..SENDS + 10 {
        through_stale.put(&note(n)).unwrap();
    }
    // Every accepted put there once, whichever node is asked.
    for url in &cluster.urls {
        let waiting = waiting_keys(&inbox_at(url, "paused"));
        assert_eq!(
            waiting,
            (SENDS + 10, SENDS + 10),
            "each message once, through {url}"
        );
    }
    assert_eq!(cluster.messages_in("KV_paused"), Some((SENDS + 10) as u64));
}

#[test]
fn what_was_just_written_is_read_back_through_every_node() {
    let Some(binary) = server() else { return };
    let cluster = Cluster::start(&binary, "readback");
    let nodes: Vec<NatsInbox> = (cluster.urls.iter())
        .map(|url| inbox_at(url, "readback"))
        .collect();
    // A listing is read by a consumer the server places on any replica, and a
    // follower may not have applied a write the cluster acknowledged a moment ago.
    for round in 0..ROUNDS {
        let (writer, reader) = (&nodes[round % 3], &nodes[(round + 1) % 3]);
        writer.put(&note(round)).unwrap();
        let waiting = reader.waiting("ses-b").unwrap().messages;
        assert_eq!(waiting.len(), 1, "round {round}: the put is read back");
        writer.hand_over("ses-b", waiting, &mut |_| Ok(())).unwrap();
        assert_eq!(
            waiting_keys(reader),
            (0, 0),
            "round {round}: what was handed over is not read as waiting"
        );
    }
}

/// Rounds of [`what_was_just_written_is_read_back_through_every_node`].
const ROUNDS: usize = 150;

#[test]
fn puts_through_a_node_cut_off_from_the_other_two_land_once_or_are_found_by_their_retry() {
    let Some(binary) = server() else { return };
    let cluster = Cluster::start_cuttable(&binary, "cut");
    drop(inbox_at(&cluster.urls[0], "cut"));
    let leader = cluster
        .leader_of("KV_cut")
        .expect("the bucket's stream has a leader");
    // A host whose only node is the stream's leader, cut off from the other two for
    // 15 s (its clients still reach it): it cannot reach a quorum, the others elect a
    // new leader, and it rejoins as a follower when the routes come back.
    let through = inbox_at(&cluster.urls[leader], "cut");
    let answers = std::thread::scope(|scope| {
        let sending = scope.spawn(|| {
            (0..SENDS)
                .map(|n| {
                    std::thread::sleep(Duration::from_millis(400));
                    (through.put(&note(n))).map_err(|err| (is_undecided(&err), format!("{err:#}")))
                })
                .collect::<Vec<_>>()
        });
        std::thread::sleep(Duration::from_millis(250));
        cluster.cut_off(leader);
        std::thread::sleep(Duration::from_secs(15));
        cluster.reconnect(leader);
        sending.join().unwrap()
    });
    let failed: Vec<usize> = (answers.iter().enumerate())
        .filter(|(_, answer)| answer.is_err())
        .map(|(n, _)| n)
        .collect();
    // Every failure says what it was, and one whose write went unanswered says its
    // outcome is not known (undecided); a retry under the same key through a node of
    // the majority finds the message if it landed, or lands it now: once either way. A
    // failure not marked undecided had stored nothing ("nothing was delivered" is true).
    let majority = inbox_at(&cluster.urls[(leader + 1) % 3], "cut");
    let (mut landed_anyway, mut undecided) = (0, 0);
    for &n in &failed {
        let (unknown, said) = answers[n].as_ref().unwrap_err();
        let named = [
            "cannot write",
            "cannot watch",
            "cannot read",
            "did not answer",
        ];
        assert!(named.iter().any(|what| said.contains(what)), "{said}");
        undecided += usize::from(*unknown);
        if matches!(majority.put(&note(n)).unwrap(), Put::Repeat(_)) {
            assert!(
                unknown,
                "a failure said to be decided had stored note {n}: {said}"
            );
            landed_anyway += 1;
        }
    }
    let mut reasons: Vec<&String> = failed
        .iter()
        .map(|&n| &answers[n].as_ref().unwrap_err().1)
        .collect();
    reasons.dedup();
    eprintln!(
        "{SENDS} puts through a node cut off for 15 s: {} accepted, {} failed ({undecided} undecided, {landed_anyway} of those had landed): {reasons:?}",
        SENDS - failed.len(),
        failed.len()
    );
    assert!(!failed.is_empty(), "the cut made some puts fail");
    // Each message once, whichever node is asked, the cut node included.
    for url in &cluster.urls {
        let waiting = waiting_keys(&inbox_at(url, "cut"));
        assert_eq!(waiting, (SENDS, SENDS), "each message once, through {url}");
    }
    // And handed over once.
    let waiting = majority.waiting("ses-b").unwrap().messages;
    let handed = majority
        .hand_over("ses-b", waiting, &mut |_| Ok(()))
        .unwrap();
    assert_eq!(handed.len(), SENDS);
    assert!(majority.waiting("ses-b").unwrap().messages.is_empty());
}

/// A write through the stream's leader cut off from the other two for longer than a
/// step waits gets no acknowledgement: its outcome is unknown, and the inbox says so
/// (undecided, never a plain failure). A retry under its key through the majority after
/// the heal stores it at most once, and every node then holds it once.
#[test]
fn a_write_unanswered_past_a_step_is_undecided_and_its_retry_stores_it_once() {
    let Some(binary) = server() else { return };
    let cluster = Cluster::start_cuttable(&binary, "undecided");
    drop(inbox_at(&cluster.urls[0], "undecided"));
    let leader = cluster
        .leader_of("KV_undecided")
        .expect("the bucket's stream has a leader");
    let through = inbox_at(&cluster.urls[leader], "undecided");
    // A first put learns where the target lives, so the cut meets the write itself.
    assert!(matches!(through.put(&note(1)).unwrap(), Put::New(_)));
    cluster.cut_off(leader);
    let began = Instant::now();
    let said = through.put_unseen(&note(0));
    let waited = began.elapsed();
    cluster.reconnect(leader);
    let err = said.expect_err("a leader without a quorum cannot store a write");
    assert!(is_undecided(&err), "after {waited:?}: {err:#}");
    eprintln!("a write through a node cut off, after {waited:?}: {err:#}");
    let majority = inbox_at(&cluster.urls[(leader + 1) % 3], "undecided");
    let deadline = Instant::now() + Duration::from_secs(30);
    let retried = loop {
        match majority.put(&note(0)) {
            Ok(put) => break put,
            Err(err) if Instant::now() < deadline => {
                eprintln!("retry after the heal: {err:#}");
                std::thread::sleep(Duration::from_millis(500));
            }
            Err(err) => panic!("the retry after the heal: {err:#}"),
        }
    };
    eprintln!(
        "the retry: {}",
        match retried {
            Put::New(_) => "stored now",
            Put::Repeat(_) => "it had landed",
        }
    );
    for url in &cluster.urls {
        assert_eq!(
            waiting_keys(&inbox_at(url, "undecided")),
            (2, 2),
            "once, through {url}"
        );
    }
}

/// The puts of [`sends_ride_out`].
const SENDS: usize = 40;

/// Note `n` for session `ses-b`, under its own key.
/// What `step` answers, asked again every 100 ms for up to 30 s while it fails.
async fn answered<T, E: std::fmt::Display, F: std::future::Future<Output = Result<T, E>>>(
    what: &str,
    mut step: impl FnMut() -> F,
) -> T {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match step().await {
            Ok(answer) => return answer,
            Err(err) if Instant::now() < deadline => {
                eprintln!("{what}: {err}; again");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(err) => panic!("{what} never succeeded: {err}"),
        }
    }
}

fn note(n: usize) -> SpooledMessage {
    let (key, body) = (format!("5:alicek{n}"), format!("note {n}"));
    SpooledMessage::new("ses-b", DeliveryMode::Queue, &body, &key, false)
}

/// How many messages wait for `ses-b` in `inbox`, and under how many distinct keys.
fn waiting_keys(inbox: &NatsInbox) -> (usize, usize) {
    // Right after a heal a node may not make a consumer yet ("cannot watch the bucket:
    // timed out" on a loaded machine): asked again, as the next hook would ask.
    let deadline = Instant::now() + Duration::from_secs(30);
    let waiting = loop {
        match inbox.waiting("ses-b") {
            Ok(waiting) => break waiting,
            Err(err) if Instant::now() < deadline => {
                eprintln!("what waits, asked again: {err:#}");
                std::thread::sleep(Duration::from_millis(500));
            }
            Err(err) => panic!("what waits for ses-b: {err:#}"),
        }
    };
    let mut keys: Vec<String> = (waiting.messages.into_iter())
        .map(|w| w.message.key)
        .collect();
    let all = keys.len();
    keys.sort();
    keys.dedup();
    (all, keys.len())
}

/// [`SENDS`] puts, one every 25 ms, by a host connected through node `through`, while
/// `fault` befalls the cluster (from 250 ms in): every put accepted, each message in
/// the inbox once.
fn sends_ride_out(
    cluster: &mut Cluster,
    bucket: &str,
    through: usize,
    fault: impl FnOnce(&mut Cluster),
) {
    let inbox = inbox_at(&cluster.urls[through], bucket);
    let started = Instant::now();
    let answers = std::thread::scope(|scope| {
        let sending = scope.spawn(|| {
            (0..SENDS)
                .map(|n| {
                    std::thread::sleep(Duration::from_millis(25));
                    inbox.put(&note(n))
                })
                .collect::<Vec<_>>()
        });
        std::thread::sleep(Duration::from_millis(250));
        fault(cluster);
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
    assert_eq!(
        waiting_keys(&inbox),
        (SENDS, SENDS),
        "each message once, none lost"
    );
    eprintln!("{SENDS} puts across the fault took {:?}", started.elapsed());
}

#[test]
fn the_cluster_down_and_back_loses_nothing_and_hands_each_message_over_once() {
    let Some(binary) = server() else { return };
    let mut cluster = Cluster::start(&binary, "down");
    let state = host_shim_testkit::temp_folder("nats-down-state");
    let _ = std::fs::remove_dir_all(&state);
    let host = |url: &str| {
        inbox_at(url, "down")
            .remembering(&state)
            .unwrap()
            .claims_expire_after(Duration::from_secs(1))
    };
    let message = |key: &str, body: &str| {
        let ids = MessageIds {
            message_id: format!("m-{}", &key[key.len() - 2..]),
            in_reply_to: None,
        };
        SpooledMessage::new("ses-b", DeliveryMode::Queue, body, key, false).with_ids(&ids)
    };
    // The session's record: what its harness took of each offer.
    let recorded = std::sync::Mutex::new(Shown::new());
    let mut record = |_: &[String]| Ok(recorded.lock().unwrap().clone());
    let before = host(&cluster.urls[0]);
    assert!(matches!(
        before.put(&message("5:alicek1", "before")).unwrap(),
        Put::New(_)
    ));
    // The receiving host offers it to its harness, which takes it, and the whole
    // cluster dies before the offer's mark gets there.
    let waiting = before.waiting("ses-b").unwrap().messages;
    let failed = before.offer("ses-b", waiting, &mut |given| {
        assert_eq!(given.len(), 1);
        recorded.lock().unwrap().insert(given[0].message_id.clone());
        for node in 0..3 {
            cluster.kill(node);
        }
        Ok(())
    });
    assert!(failed.is_err(), "the mark cannot have got there");
    // A send while the cluster is down fails (after the time an election may take),
    // never hangs, and stores nothing.
    let started = Instant::now();
    let down = before.put(&message("5:alicek2", "while down"));
    assert!(down.is_err(), "{down:?}");
    assert!(
        started.elapsed() < Duration::from_secs(40),
        "{:?}",
        started.elapsed()
    );
    drop(before);
    // Back (each node on its own store), and the host started again.
    for node in 0..3 {
        cluster.restart(node);
    }
    cluster.wait_healthy();
    let after = host(&cluster.urls[1]);
    // The send that failed, tried again under its key, lands once.
    after.put(&message("5:alicek2", "while down")).unwrap();
    std::thread::sleep(Duration::from_millis(1100));
    // The message accepted before is still there, its claim dead: the record shows
    // it, so it is handed over, not given again; the other is offered once, and
    // handed over when the record shows it.
    let settled = after.settle("ses-b", Duration::ZERO, &mut record).unwrap();
    assert_eq!(settled.handed_over.len(), 1, "{settled:?}");
    let waiting = after.waiting("ses-b").unwrap().messages;
    let bodies: Vec<&str> = waiting.iter().map(|w| w.message.body.as_str()).collect();
    assert_eq!(bodies, ["while down"]);
    let mut given = Vec::new();
    (after.offer("ses-b", waiting, &mut |m| {
        given.extend(m.iter().map(|m| m.body.clone()));
        recorded
            .lock()
            .unwrap()
            .extend(m.iter().map(|m| m.message_id.clone()));
        Ok(())
    }))
    .unwrap();
    assert_eq!(given, ["while down"]);
    let settled = after.settle("ses-b", Duration::ZERO, &mut record).unwrap();
    assert_eq!(settled.handed_over.len(), 1, "{settled:?}");
    let count = after.count_from("ses-b", "alice").unwrap();
    assert_eq!((count.waiting, count.handed_over), (0, 2));
    let _ = std::fs::remove_dir_all(&state);
}

/// A bucket made before reads could be confined (no direct gets, no per-message TTL)
/// is set up by the next host allowed to change it, and what it held reads as before.
#[test]
fn a_bucket_made_before_is_set_up_when_joined_and_keeps_what_it_held() {
    let Some(binary) = server() else { return };
    let cluster = Cluster::start(&binary, "older");
    let tokio = tokio::runtime::Runtime::new().unwrap();
    let url = cluster.urls[1].clone();
    let config = |url: String| async move {
        let jetstream = async_nats::jetstream::new(async_nats::connect(url).await.unwrap());
        let mut stream = jetstream.get_stream("KV_older").await.unwrap();
        stream.info().await.unwrap().config.clone()
    };
    tokio.block_on({
        let url = url.clone();
        async move {
            let jetstream = async_nats::jetstream::new(async_nats::connect(url).await.unwrap());
            // Each step as a host would make it: a cluster just healthy may still be
            // placing a new stream's replicas (a step timed out on a loaded machine).
            answered("making the bucket", || {
                jetstream.create_key_value(async_nats::jetstream::kv::Config {
                    bucket: "older".to_string(),
                    history: 1,
                    num_replicas: 3,
                    ..Default::default()
                })
            })
            .await;
            let mut stream =
                answered("opening its stream", || jetstream.get_stream("KV_older")).await;
            let mut older = stream.info().await.unwrap().config.clone();
            older.allow_direct = false;
            older.allow_message_ttl = false;
            answered("updating its stream", || {
                jetstream.update_stream(older.clone())
            })
            .await;
            // What a person let in, written then: once the updated stream has a
            // leader again (a put right after the update may find none yet).
            let kv = answered("opening the bucket", || jetstream.get_key_value("older")).await;
            answered("the seed write", || kv.put("p.tests.ses-b", "hold".into())).await;
        }
    });
    let before = tokio.block_on(config(url.clone()));
    assert!(!before.allow_direct && !before.allow_message_ttl);
    let inbox = inbox_at(&cluster.urls[0], "older");
    let after = tokio.block_on(config(url));
    assert!(after.allow_direct, "direct gets are not on");
    assert!(after.allow_message_ttl, "per-message TTLs are not on");
    assert_eq!(inbox.inbound("ses-b").unwrap(), InboundPolicy::Hold);
    let message = SpooledMessage::new("ses-b", DeliveryMode::Queue, "hi", "5:alicek1", false);
    assert!(matches!(inbox.put(&message).unwrap(), Put::New(_)));
    let found = inbox.find("ses-b", "5:alicek1").unwrap().unwrap();
    assert_eq!(found.message.body, "hi");
    assert_eq!(inbox.waiting("ses-b").unwrap().messages.len(), 1);
}
