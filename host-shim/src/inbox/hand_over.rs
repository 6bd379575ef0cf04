//! What every harness's hand-over does with what waits in the inbox (a hook adapter,
//! Claude Code's idle watcher, Codex's daemon): pick the messages the moment takes,
//! within the answer's size, and hand them over through the backend, so a message
//! leaves the inbox only once the harness has it.

use super::{InboxBackend, SpooledMessage, Waiting};
use crate::contract::latest::{DeliveryMode, InboundPolicy};
use anyhow::Result;

/// What a hand-over handed over, and what it could not read.
#[derive(Debug, Default)]
pub struct HookReport {
    pub handed_over: Vec<SpooledMessage>,
    /// Messages the event takes that were waiting (a concurrent hand-over may have
    /// claimed some first).
    pub picked: usize,
    /// What in the inbox is not a message, each with what is wrong.
    pub unreadable: Vec<String>,
}

/// Which waiting messages a hand-over takes (oldest first, in each case).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Takes {
    /// The `steer` messages: the running turn takes them at its next step.
    Steer,
    /// The `steer` messages and the oldest `queue` one: a turn that ends continues
    /// with one queued message, so each becomes its own turn.
    SteerAndOldestQueued,
    /// Everything waiting: a turn or a session is starting.
    All,
}

/// Picks the waiting messages `takes` names, at most `cap` chars of them (at least
/// one), and hands them over, `answer` giving the harness their joined text; a message
/// leaves the inbox only after that ([`InboxBackend::hand_over`]). Nothing is handed
/// over while the session's person holds its inbound.
pub fn hand_over_waiting(
    inbox: &dyn InboxBackend,
    session: &str,
    takes: Takes,
    cap: usize,
    answer: impl FnOnce(&str) -> Result<()>,
) -> Result<HookReport> {
    if inbox.inbound(session)? == InboundPolicy::Hold {
        return Ok(HookReport::default());
    }
    let contents = inbox.waiting(session)?;
    let is_steer = |w: &Waiting| w.message.mode == DeliveryMode::Steer;
    let oldest_queued = contents.messages.iter().position(|w| !is_steer(w));
    let picked: Vec<Waiting> = (contents.messages.into_iter().enumerate())
        .filter(|(i, w)| match takes {
            Takes::Steer => is_steer(w),
            Takes::SteerAndOldestQueued => is_steer(w) || Some(*i) == oldest_queued,
            Takes::All => true,
        })
        .map(|(_, w)| w)
        .collect();
    let picked = within_answer_cap(picked, cap);
    let mut report = HookReport {
        handed_over: Vec::new(),
        picked: picked.len(),
        unreadable: contents.unreadable,
    };
    if !picked.is_empty() {
        let mut answer = Some(answer);
        report.handed_over =
            inbox.hand_over(session, picked, &mut |messages| match answer.take() {
                Some(answer) => answer(&joined(messages)),
                None => anyhow::bail!("a hand-over answers once"),
            })?;
    }
    Ok(report)
}

/// Messages handed over together: their bodies, oldest first, joined by a blank line.
pub fn joined(messages: &[SpooledMessage]) -> String {
    messages
        .iter()
        .map(|m| m.body.as_str())
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// The first messages whose text, joined by blank lines, fits in `cap` chars; at
/// least one.
pub fn within_answer_cap(picked: Vec<Waiting>, cap: usize) -> Vec<Waiting> {
    let mut chars = 0;
    let mut kept = Vec::new();
    for waiting in picked {
        let more = waiting.message.body.chars().count() + if kept.is_empty() { 0 } else { 2 };
        if !kept.is_empty() && chars + more > cap {
            break;
        }
        chars += more;
        kept.push(waiting);
    }
    kept
}
