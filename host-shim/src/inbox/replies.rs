//! A send that awaits its reply (`answer.await-reply`): the reply is a message in the
//! caller's own inbox from the target whose frame answers the sent one
//! (`in-reply-to`). It is taken for the caller, handed over by this wait, so no hook
//! or turn hands it over again. Waiting holds nothing a hook or another call needs:
//! the inbox is polled, each look one short step of the backend's own, and nothing but
//! the reply is kept.
//!
//! And the sending caps' count (`session-query.send-history`), from what the inbox
//! holds, so a restart of the host does not reset them.

use super::{InboxBackend, SpooledMessage, now_ns};
use crate::contract::latest::{InboundPolicy, ReplyWait, SendCounts};
use crate::harness::HistoryAsk;
use anyhow::Result;
use std::time::{Duration, Instant};

/// How often a wait looks in the inbox.
pub const REPLY_POLL: Duration = Duration::from_millis(200);

/// Waits up to `wait.seconds` for the reply to `wait.message_id` from `wait.target` in
/// `caller`'s inbox, and takes it for the caller (handed over by this wait). Ends early
/// when `interrupted` says so (after one look at least), taking nothing after. `None`
/// when no reply came; nothing is taken while the caller's person holds its inbound
/// (it reaches them when they release it).
pub fn await_reply(
    inbox: &dyn InboxBackend,
    caller: &str,
    wait: &ReplyWait,
    interrupted: &dyn Fn() -> bool,
) -> Result<Option<SpooledMessage>> {
    let deadline = Instant::now() + Duration::from_secs(u64::from(wait.seconds));
    loop {
        if inbox.inbound(caller)? != InboundPolicy::Hold {
            let contents = inbox.waiting(caller)?;
            let reply = (contents.messages.into_iter()).find(|w| {
                w.message.sender == wait.target
                    && w.message.in_reply_to.as_deref() == Some(wait.message_id.as_str())
            });
            if let Some(reply) = reply {
                let taken = inbox.hand_over(caller, vec![reply], &mut |_| Ok(()))?;
                // A hook that claimed it first hands it over instead.
                if let Some(message) = taken.into_iter().next() {
                    return Ok(Some(message));
                }
            }
        }
        let now = Instant::now();
        if now >= deadline || interrupted() {
            return Ok(None);
        }
        std::thread::sleep(REPLY_POLL.min(deadline - now));
        // Asked again before the next look: a call interrupted while it slept takes
        // nothing, and a reply that comes after reaches the caller like any other.
        if interrupted() {
            return Ok(None);
        }
    }
}

/// What the person using `session` lets in, for a header: an inbox that cannot say
/// (a damaged setting) reads as accept here; a delivery to it is refused naming why.
pub fn inbound_or_accept(inbox: &dyn InboxBackend, session: &str) -> InboundPolicy {
    inbox.inbound(session).unwrap_or(InboundPolicy::Accept)
}

/// [`send_history`], or no sends (the clock only) when the inbox cannot be read: a
/// send then is not capped by what could not be counted, and its delivery names the
/// inbox's fault.
pub fn send_history_or_none(inbox: &dyn InboxBackend, ask: &HistoryAsk) -> SendCounts {
    send_history(inbox, ask).unwrap_or_else(|_| SendCounts::none_now())
}

/// The sender's sends within the asked window, as `send-history` answers them, from
/// what `inbox` holds; the key accepted before (in any window) is a retry. The times
/// are the newest `limit` of each count, newest first.
pub fn send_history(inbox: &dyn InboxBackend, ask: &HistoryAsk) -> Result<SendCounts> {
    let HistoryAsk {
        sender,
        target,
        window_minutes,
        limit,
        key,
    } = *ask;
    let now = now_ns();
    let since = now.saturating_sub(u128::from(window_minutes) * 60 * 1_000_000_000);
    let mut sent = inbox.sent_since(sender, since)?;
    sent.sort_unstable_by_key(|s| std::cmp::Reverse(s.accepted_at_ns));
    let ms = |ns: u128| i64::try_from(ns / 1_000_000).unwrap_or(i64::MAX);
    let to_target: Vec<i64> = (sent.iter())
        .filter(|s| s.target == target)
        .map(|s| ms(s.accepted_at_ns))
        .collect();
    let key_accepted = !key.is_empty()
        && (sent.iter().any(|s| s.key == key) || inbox.find(target, key)?.is_some());
    Ok(SendCounts {
        now_ms: ms(now),
        to_target: u32::try_from(to_target.len()).unwrap_or(u32::MAX),
        to_any: u32::try_from(sent.len()).unwrap_or(u32::MAX),
        to_target_times: to_target.into_iter().take(limit as usize).collect(),
        to_any_times: (sent.iter())
            .take(limit as usize)
            .map(|s| ms(s.accepted_at_ns))
            .collect(),
        key_accepted,
    })
}
