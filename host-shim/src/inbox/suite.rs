//! The checks every [`InboxBackend`] must pass, written once and run against each
//! backend: the state folder and the in-memory inbox here, and a backend of another
//! crate by enabling the feature `inbox-suite` and calling [`run_all`] from its tests.
//! Each check takes a fresh, empty backend.

use super::{InboxBackend, Put, Shown, SpooledMessage};
use crate::contract::latest::{DeliveryMode, DeliveryState, InboundPolicy, InboxCount, MessageIds};
use std::time::Duration;

fn message(target: &str, body: &str, key: &str) -> SpooledMessage {
    SpooledMessage::new(target, DeliveryMode::Queue, body, key, false)
}

fn bodies(inbox: &dyn InboxBackend, session: &str) -> Vec<String> {
    (inbox.waiting(session).unwrap().messages.into_iter())
        .map(|w| w.message.body)
        .collect()
}

/// Runs every check, each on a backend `fresh` makes.
pub fn run_all<B: InboxBackend>(fresh: impl Fn() -> B) {
    a_key_is_put_once_and_found_wherever_it_moved(&fresh());
    messages_without_a_key_are_each_kept_and_come_out_oldest_first(&fresh());
    a_failed_answer_leaves_the_messages_waiting(&fresh());
    a_message_claimed_by_one_hand_over_is_not_handed_over_by_another(&fresh());
    an_identical_body_from_the_same_sender_is_found_within_the_window(&fresh());
    each_senders_messages_are_counted_where_they_are(&fresh());
    sessions_inboxes_are_apart(&fresh());
    a_senders_sends_are_found_in_every_inbox_waiting_or_handed_over(&fresh());
    a_persons_inbound_is_kept_per_session(&fresh());
    ids_are_kept_with_the_message(&fresh());
    one_waiting_message_is_found_by_its_handle(&fresh());
    an_offer_is_handed_over_once_the_record_shows_it(&fresh());
    an_offer_the_record_does_not_show_waits_again_when_its_time_is_up(&fresh());
    a_message_no_record_can_show_is_handed_over_when_offered(&fresh());
    a_failed_answer_leaves_an_offer_unmade(&fresh());
    the_claims_are_replaced_only_at_the_revision_read(&fresh());
}

pub fn the_claims_are_replaced_only_at_the_revision_read(inbox: &dyn InboxBackend) {
    use super::claims::ClaimsWritten;
    use crate::contract::latest::{Claim, ClaimMode};
    let claim = |id: &str| Claim {
        id: id.to_string(),
        holder: "s1".to_string(),
        paths: vec!["/w/src/**".to_string(), "/w/README.md".to_string()],
        mode: ClaimMode::Shared,
        reason: "a reason, \"quoted\"".to_string(),
        made_at_ms: 1,
        ends_at_ms: 2,
        seen_live_ms: 3,
    };
    // Never written: none, at revision 0.
    let empty = inbox.read_claims().unwrap();
    assert!(empty.claims.is_empty());
    let first = inbox
        .write_claims(empty.revision, &[claim("c-1")], &[])
        .unwrap();
    let ClaimsWritten::Written(revision) = first else {
        panic!("the first write at the revision read lands: {first:?}");
    };
    let read = inbox.read_claims().unwrap();
    assert_eq!((read.claims, read.revision), (vec![claim("c-1")], revision));
    // A second writer that read the empty set is told it is stale, and nothing changes.
    let late = inbox
        .write_claims(empty.revision, &[claim("c-2")], &[])
        .unwrap();
    assert_eq!(late, ClaimsWritten::Stale);
    assert_eq!(inbox.read_claims().unwrap().claims, [claim("c-1")]);
    // At the revision read, the set is replaced whole (here by none).
    let emptied = inbox.write_claims(revision, &[], &[]).unwrap();
    assert!(matches!(emptied, ClaimsWritten::Written(next) if next != revision));
    assert!(inbox.read_claims().unwrap().claims.is_empty());
}

pub fn one_waiting_message_is_found_by_its_handle(inbox: &dyn InboxBackend) {
    let Put::New(handle) = inbox.put(&message("s1", "hello", "5:alicek1")).unwrap() else {
        panic!("a new key is a new message");
    };
    inbox.put(&message("s1", "other", "5:alicek2")).unwrap();
    let one = inbox.waiting_one("s1", handle.as_str()).unwrap().unwrap();
    assert_eq!(
        (one.handle.as_str(), one.message.body.as_str()),
        (handle.as_str(), "hello")
    );
    // Another session's, or no message: none.
    assert!(inbox.waiting_one("s2", handle.as_str()).unwrap().is_none());
    assert!(
        inbox
            .waiting_one("s1", "no-such-message")
            .unwrap()
            .is_none()
    );
    // Handed over: it no longer waits.
    inbox.hand_over("s1", vec![one], &mut |_| Ok(())).unwrap();
    assert!(inbox.waiting_one("s1", handle.as_str()).unwrap().is_none());
    assert_eq!(bodies(inbox, "s1"), ["other"]);
}

pub fn a_senders_sends_are_found_in_every_inbox_waiting_or_handed_over(inbox: &dyn InboxBackend) {
    for (target, key) in [("s1", "5:alicek1"), ("s2", "5:alicek2"), ("s1", "3:bobk3")] {
        inbox.put(&message(target, key, key)).unwrap();
    }
    let waiting = inbox.waiting("s1").unwrap().messages;
    inbox.hand_over("s1", waiting, &mut |_| Ok(())).unwrap();
    let mut sent = inbox.sent_since("alice", 0).unwrap();
    sent.sort_by(|a, b| a.key.cmp(&b.key));
    let found: Vec<(&str, &str)> = (sent.iter())
        .map(|s| (s.target.as_str(), s.key.as_str()))
        .collect();
    assert_eq!(found, [("s1", "5:alicek1"), ("s2", "5:alicek2")]);
    // Only what was accepted since the time asked.
    let later = sent.iter().map(|s| s.accepted_at_ns).max().unwrap() + 1;
    assert!(inbox.sent_since("alice", later).unwrap().is_empty());
    assert!(inbox.sent_since("", 0).unwrap().is_empty());
}

pub fn a_persons_inbound_is_kept_per_session(inbox: &dyn InboxBackend) {
    assert_eq!(inbox.inbound("s1").unwrap(), InboundPolicy::Accept);
    inbox.set_inbound("s1", InboundPolicy::Hold).unwrap();
    inbox.set_inbound("s2", InboundPolicy::Refuse).unwrap();
    assert_eq!(inbox.inbound("s1").unwrap(), InboundPolicy::Hold);
    assert_eq!(inbox.inbound("s2").unwrap(), InboundPolicy::Refuse);
    assert_eq!(inbox.inbound("s3").unwrap(), InboundPolicy::Accept);
    inbox.set_inbound("s1", InboundPolicy::Accept).unwrap();
    assert_eq!(inbox.inbound("s1").unwrap(), InboundPolicy::Accept);
}

pub fn ids_are_kept_with_the_message(inbox: &dyn InboxBackend) {
    let ids = MessageIds {
        message_id: "m-0123456789ab".to_string(),
        in_reply_to: Some("m-ba9876543210".to_string()),
    };
    let sent = message("s1", "answer", "5:alicek9").with_ids(&ids);
    inbox.put(&sent).unwrap();
    let waiting = inbox.waiting("s1").unwrap().messages;
    assert_eq!(waiting[0].message.message_id, "m-0123456789ab");
    assert_eq!(
        waiting[0].message.in_reply_to.as_deref(),
        Some("m-ba9876543210")
    );
    let found = inbox.find("s1", "5:alicek9").unwrap().unwrap();
    assert_eq!(found.message, sent);
}

pub fn a_key_is_put_once_and_found_wherever_it_moved(inbox: &dyn InboxBackend) {
    let first = message("s1", "hello", "5:alicec1");
    assert!(inbox.waiting("s1").unwrap().messages.is_empty());
    assert_eq!(inbox.find("s1", "5:alicec1").unwrap(), None);
    assert!(matches!(inbox.put(&first).unwrap(), Put::New(_)));
    let again = message("s1", "hello", "5:alicec1");
    assert_eq!(inbox.put(&again).unwrap(), Put::Repeat(first.clone()));
    // Even when the caller skipped the lookup.
    assert_eq!(
        inbox.put_unseen(&again).unwrap(),
        Put::Repeat(first.clone())
    );
    let found = inbox.find("s1", "5:alicec1").unwrap().unwrap();
    assert_eq!(found.state, DeliveryState::Waiting);
    let waiting = inbox.waiting("s1").unwrap().messages;
    assert_eq!(waiting.len(), 1);
    let handed = inbox.hand_over("s1", waiting, &mut |_| Ok(())).unwrap();
    assert_eq!(handed, vec![first.clone()]);
    assert!(inbox.waiting("s1").unwrap().messages.is_empty());
    // Handed over: still found, and a retry is still a repeat.
    let found = inbox.find("s1", "5:alicec1").unwrap().unwrap();
    assert_eq!(found.state, DeliveryState::HandedOver);
    assert_eq!(inbox.put(&again).unwrap(), Put::Repeat(first));
    // An empty key is never found.
    assert_eq!(inbox.find("s1", "").unwrap(), None);
}

pub fn messages_without_a_key_are_each_kept_and_come_out_oldest_first(inbox: &dyn InboxBackend) {
    for body in ["one", "two", "three"] {
        assert!(matches!(
            inbox.put(&message("s1", body, "")).unwrap(),
            Put::New(_)
        ));
    }
    assert_eq!(bodies(inbox, "s1"), ["one", "two", "three"]);
}

pub fn a_failed_answer_leaves_the_messages_waiting(inbox: &dyn InboxBackend) {
    inbox.put(&message("s1", "x", "k")).unwrap();
    let waiting = inbox.waiting("s1").unwrap().messages;
    let err =
        (inbox.hand_over("s1", waiting, &mut |_| anyhow::bail!("stdout closed"))).unwrap_err();
    assert_eq!(err.to_string(), "stdout closed");
    assert_eq!(bodies(inbox, "s1"), ["x"]);
    assert_eq!(
        inbox.find("s1", "k").unwrap().unwrap().state,
        DeliveryState::Waiting
    );
}

pub fn a_message_claimed_by_one_hand_over_is_not_handed_over_by_another(inbox: &dyn InboxBackend) {
    inbox.put(&message("s1", "once", "k1")).unwrap();
    let seen_by_first = inbox.waiting("s1").unwrap().messages;
    let seen_by_second = seen_by_first.clone();
    let mut second_got = None;
    let first = inbox
        .hand_over("s1", seen_by_first, &mut |messages| {
            // While the first hand-over answers, a second one tries the same message.
            second_got = Some(
                inbox
                    .hand_over("s1", seen_by_second.clone(), &mut |_| Ok(()))
                    .unwrap(),
            );
            assert_eq!(messages.len(), 1);
            Ok(())
        })
        .unwrap();
    assert_eq!(first.len(), 1);
    assert_eq!(second_got, Some(Vec::new()), "claimed by the first");
    assert!(inbox.waiting("s1").unwrap().messages.is_empty());
}

pub fn an_identical_body_from_the_same_sender_is_found_within_the_window(inbox: &dyn InboxBackend) {
    let window = Duration::from_secs(600);
    inbox
        .put(&message("s1", "hello", "5:alicetoolu_1"))
        .unwrap();
    let found = |sender: &str, body: &str| {
        (inbox.find_identical("s1", sender, body, window).unwrap()).map(|m| m.message.key)
    };
    assert_eq!(found("alice", "hello"), Some("5:alicetoolu_1".into()));
    assert_eq!(found("bob", "hello"), None);
    assert_eq!(found("alice", "hello again"), None);
    assert_eq!(found("", "hello"), None);
    // Handed over, still found; older than the window, not.
    let waiting = inbox.waiting("s1").unwrap().messages;
    inbox.hand_over("s1", waiting, &mut |_| Ok(())).unwrap();
    assert_eq!(found("alice", "hello"), Some("5:alicetoolu_1".into()));
    let outside = inbox.find_identical("s1", "alice", "hello", Duration::ZERO);
    assert_eq!(outside.unwrap(), None);
}

pub fn each_senders_messages_are_counted_where_they_are(inbox: &dyn InboxBackend) {
    for (body, key) in [("a", "5:alicec1"), ("b", "5:alicec2"), ("c", "3:bobc3")] {
        inbox.put(&message("s1", body, key)).unwrap();
    }
    let mut first = inbox.waiting("s1").unwrap().messages;
    first.truncate(1);
    inbox.hand_over("s1", first, &mut |_| Ok(())).unwrap();
    let count = |sender: &str| inbox.count_from("s1", sender).unwrap();
    assert_eq!(
        count("alice"),
        InboxCount {
            waiting: 1,
            handed_over: 1
        }
    );
    assert_eq!(
        count("bob"),
        InboxCount {
            waiting: 1,
            handed_over: 0
        }
    );
    assert_eq!(count("carol"), InboxCount::NONE);
    assert_eq!(count(""), InboxCount::NONE);
}

pub fn sessions_inboxes_are_apart(inbox: &dyn InboxBackend) {
    inbox.put(&message("s1", "for one", "5:alicec1")).unwrap();
    inbox.put(&message("s2", "for two", "5:alicec2")).unwrap();
    assert_eq!(bodies(inbox, "s1"), ["for one"]);
    assert_eq!(bodies(inbox, "s2"), ["for two"]);
    // A handle of one session's inbox hands nothing over in another's.
    let other = inbox.waiting("s2").unwrap().messages;
    let crossed = inbox.hand_over("s1", other, &mut |_| Ok(()));
    assert!(crossed.map_or(true, |handed| handed.is_empty()));
    assert_eq!(bodies(inbox, "s2"), ["for two"]);
}

/// A message with the id its frame carries.
fn with_id(target: &str, body: &str, key: &str, id: &str) -> SpooledMessage {
    message(target, body, key).with_ids(&MessageIds {
        message_id: id.to_string(),
        in_reply_to: None,
    })
}

/// A record showing `ids`, and how many times it was read.
fn record(ids: &[&str]) -> (Shown, std::cell::Cell<usize>) {
    let shown = ids.iter().map(|id| id.to_string()).collect();
    (shown, std::cell::Cell::new(0))
}

const AN_HOUR: Duration = Duration::from_secs(3600);

pub fn an_offer_is_handed_over_once_the_record_shows_it(inbox: &dyn InboxBackend) {
    let sent = with_id("s1", "hello", "5:alicek1", "m-000000000001");
    inbox.put(&sent).unwrap();
    let waiting = inbox.waiting("s1").unwrap().messages;
    let offered = inbox.offer("s1", waiting, &mut |_| Ok(())).unwrap();
    assert_eq!(offered, vec![sent.clone()]);
    // Offered: no other hand-over takes it, and to its sender it still waits.
    assert!(inbox.waiting("s1").unwrap().messages.is_empty());
    let found = inbox.find("s1", "5:alicek1").unwrap().unwrap();
    assert_eq!(found.state, DeliveryState::Waiting);
    assert_eq!(inbox.count_from("s1", "alice").unwrap().waiting, 1);
    // A record that does not show it, within its time: nothing changes.
    let (shown, reads) = record(&["m-0000000000ff"]);
    let settled = (inbox.settle("s1", AN_HOUR, &mut |ids| {
        // Asked with the offers to settle: where the record stood at them.
        assert_eq!(ids, ["m-000000000001"]);
        reads.set(reads.get() + 1);
        Ok(shown.clone())
    }))
    .unwrap();
    assert_eq!(reads.get(), 1, "the record is read once");
    assert!(settled.handed_over.is_empty() && settled.waiting_again.is_empty());
    assert!(inbox.waiting("s1").unwrap().messages.is_empty());
    // The record shows it: handed over, even with its time up.
    let (shown, _) = record(&["m-000000000001"]);
    let settled = (inbox.settle("s1", Duration::ZERO, &mut |_| Ok(shown.clone()))).unwrap();
    assert_eq!(settled.handed_over, vec![sent.clone()]);
    let found = inbox.find("s1", "5:alicek1").unwrap().unwrap();
    assert_eq!(found.state, DeliveryState::HandedOver);
    assert_eq!(inbox.put(&sent).unwrap(), Put::Repeat(sent));
    // Nothing left to settle: the record is not read.
    let settled = (inbox.settle("s1", Duration::ZERO, &mut |_| {
        panic!("the record is read with nothing to settle")
    }))
    .unwrap();
    assert!(settled.handed_over.is_empty() && settled.waiting_again.is_empty());
}

pub fn an_offer_the_record_does_not_show_waits_again_when_its_time_is_up(inbox: &dyn InboxBackend) {
    let sent = with_id("s1", "hello", "5:alicek1", "m-000000000001");
    inbox.put(&sent).unwrap();
    let waiting = inbox.waiting("s1").unwrap().messages;
    inbox.offer("s1", waiting, &mut |_| Ok(())).unwrap();
    let settled = (inbox.settle("s1", Duration::ZERO, &mut |_| Ok(Shown::new()))).unwrap();
    assert_eq!(settled.waiting_again, vec![sent.clone()]);
    assert_eq!(bodies(inbox, "s1"), ["hello"]);
    // Offered again, and this time the record shows it.
    let waiting = inbox.waiting("s1").unwrap().messages;
    assert_eq!(
        inbox.offer("s1", waiting, &mut |_| Ok(())).unwrap(),
        vec![sent.clone()]
    );
    let (shown, _) = record(&["m-000000000001"]);
    let settled = (inbox.settle("s1", Duration::ZERO, &mut |_| Ok(shown.clone()))).unwrap();
    assert_eq!(settled.handed_over, vec![sent]);
    assert!(inbox.waiting("s1").unwrap().messages.is_empty());
}

pub fn a_message_no_record_can_show_is_handed_over_when_offered(inbox: &dyn InboxBackend) {
    // Sent by a plugin before 0.4.0: its frame carries no id.
    let sent = message("s1", "hello", "5:alicek1");
    inbox.put(&sent).unwrap();
    let waiting = inbox.waiting("s1").unwrap().messages;
    inbox.offer("s1", waiting, &mut |_| Ok(())).unwrap();
    let found = inbox.find("s1", "5:alicek1").unwrap().unwrap();
    assert_eq!(found.state, DeliveryState::HandedOver);
    let settled = (inbox.settle("s1", Duration::ZERO, &mut |_| Ok(Shown::new()))).unwrap();
    assert!(settled.waiting_again.is_empty());
    assert!(inbox.waiting("s1").unwrap().messages.is_empty());
}

pub fn a_failed_answer_leaves_an_offer_unmade(inbox: &dyn InboxBackend) {
    inbox
        .put(&with_id("s1", "x", "k", "m-000000000001"))
        .unwrap();
    let waiting = inbox.waiting("s1").unwrap().messages;
    let err = (inbox.offer("s1", waiting, &mut |_| anyhow::bail!("stdout closed"))).unwrap_err();
    assert_eq!(err.to_string(), "stdout closed");
    assert_eq!(bodies(inbox, "s1"), ["x"]);
}

#[cfg(test)]
mod tests {
    use crate::inbox::{MemoryInbox, StateDir};

    #[test]
    fn the_state_folder_passes_the_suite() {
        let root = host_shim_testkit::scratch("inbox", "suite");
        let made = std::sync::atomic::AtomicU32::new(0);
        super::run_all(|| {
            let n = made.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            StateDir::open(&root.join(n.to_string())).unwrap()
        });
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn the_memory_inbox_passes_the_suite() {
        super::run_all(MemoryInbox::new);
    }
}
