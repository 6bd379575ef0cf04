//! The NATS inbox on a real three-node JetStream cluster on loopback (`support`),
//! started and stopped by each test: every check of the inbox suite, and hosts on
//! separate connections (as separate machines) sharing one bucket, and puts riding
//! out the stream leader killed.

mod support;

use host_shim::contract::latest::DeliveryMode;
use host_shim::inbox::{InboxBackend, Put, SpooledMessage};
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

#[test]
fn puts_ride_out_the_stream_leader_killed_and_each_message_lands_once() {
    let Some(binary) = server() else { return };
    let mut cluster = Cluster::start(&binary, "election");
    let probe = inbox_at(&cluster.urls[0], "election");
    drop(probe);
    let leader = cluster
        .leader_of("KV_election")
        .expect("the bucket's stream has a leader");
    // A host connected through another node, sending while the leader dies.
    let survivor = (leader + 1) % 3;
    let inbox = inbox_at(&cluster.urls[survivor], "election");
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
