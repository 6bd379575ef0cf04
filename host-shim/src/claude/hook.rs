//! `host-shim claude-hook`: a Claude Code command hook that hands the messages spooled
//! for a session to that session. It reads the hook's JSON input on stdin and answers
//! with the hook's JSON output on stdout, in the formats of Claude Code's hooks
//! reference (<https://code.claude.com/docs/en/hooks>):
//!
//! - `PostToolUse`: the waiting `steer` messages, as `additionalContext` (Claude Code
//!   adds it to the turn that is running).
//! - `Stop`: the waiting `steer` messages (their turn is ending) and the oldest `queue`
//!   message, as `additionalContext`: Claude Code 2.1.328 continues the session with
//!   it, shown to the model once as `Stop hook additional context: …` (a
//!   `"decision": "block"` would show it twice, once as a "Stop hook blocking error",
//!   and record a hook error). One queued message per stop, so each becomes its own
//!   turn.
//! - `UserPromptSubmit` and `SessionStart`: everything waiting, as `additionalContext`.
//! - Any other event, a hook inside a subagent (`agent_id` set: messages are for the
//!   top-level session) or nothing waiting: no output.
//!
//! Claude Code caps what a hook puts into the context at 10,000 characters (a longer
//! text is filed away and the model sees a preview), so one answer hands over messages,
//! oldest first, while their text stays within [`ANSWER_CHARS`]; the rest wait for the
//! next hook. A single longer message (a deployment with a large `maxSendChars`) is
//! handed over alone.
//!
//! A message leaves the spool only after the answer is written, and the hook exits
//! with success only after it left (see [`crate::inbox`]).
//!
//! Each event also says whether the session is idle: a `Stop` that hands nothing over
//! leaves it idle (waiting for its person), any other event of the session at work
//! clears that. An open idle session's own `host-shim mcp` hands messages to it through
//! Claude Code's messaging socket ([`super::idle`]).

use crate::bindings::DeliveryMode;
use crate::inbox::{SpooledMessage, StateDir, Waiting};
use anyhow::{Context, Result, bail};
use serde::Deserialize;
use std::io::Write;

/// The most text one answer carries: Claude Code's cap on what a hook adds to the
/// context.
pub const ANSWER_CHARS: usize = 10_000;

/// The fields of a hook's input this hook reads (Claude Code sends more).
#[derive(Debug, Deserialize)]
struct HookInput {
    session_id: Option<String>,
    hook_event_name: Option<String>,
    #[serde(default)]
    agent_id: Option<String>,
}

/// What a hook run handed over, and what it could not read.
#[derive(Debug, Default)]
pub struct HookReport {
    pub handed_over: Vec<SpooledMessage>,
    /// Files in the inbox that are not messages, each with what is wrong.
    pub unreadable: Vec<String>,
}

/// Answers one hook: `input` is the hook's JSON, the answer goes to `out`.
pub fn answer(state: &StateDir, input: &[u8], out: &mut dyn Write) -> Result<HookReport> {
    let input: HookInput = serde_json::from_slice(input).context(
        "the hook input is not a JSON object; run host-shim claude-hook as a Claude Code command hook (it reads the hook's JSON on stdin)",
    )?;
    let (Some(session), Some(event)) = (input.session_id, input.hook_event_name) else {
        bail!(
            "the hook input has no session_id or hook_event_name; run host-shim claude-hook as a Claude Code command hook"
        );
    };
    if input.agent_id.is_some() {
        return Ok(HookReport::default());
    }
    let takes = match event.as_str() {
        "PostToolUse" => Takes::Steer,
        "Stop" => Takes::SteerAndOldestQueued,
        "UserPromptSubmit" | "SessionStart" => Takes::All,
        _ => return Ok(HookReport::default()),
    };
    // The session works from here on (a Stop that hands something over continues
    // it); a Stop that hands nothing over leaves it idle, below.
    state.set_idle(&session, false)?;
    let contents = state.waiting(&session)?;
    let is_steer = |w: &Waiting| w.message.mode == DeliveryMode::Steer;
    let oldest_queued = contents.messages.iter().position(|w| !is_steer(w));
    let picked: Vec<Waiting> = (contents.messages.iter().enumerate())
        .filter(|&(i, w)| match takes {
            Takes::Steer => is_steer(w),
            Takes::SteerAndOldestQueued => is_steer(w) || Some(i) == oldest_queued,
            Takes::All => true,
        })
        .map(|(_, w)| w.clone())
        .collect();
    let picked = within_answer_cap(picked, ANSWER_CHARS);
    let mut report = HookReport {
        handed_over: Vec::new(),
        unreadable: contents.unreadable,
    };
    if picked.is_empty() {
        if event == "Stop" {
            state.set_idle(&session, true)?;
        }
        return Ok(report);
    }
    report.handed_over = state.hand_over(&session, picked, |messages| {
        let text = joined(messages);
        // Every event hands over as context: at Stop, Claude Code 2.1.328 then
        // continues the session with the text shown once, where `decision: block`
        // would show it twice, once as a hook error.
        let output = serde_json::json!({
            "hookSpecificOutput": {"hookEventName": event, "additionalContext": text}
        });
        writeln!(out, "{output}")
            .and_then(|()| out.flush())
            .context("cannot write the hook's answer")
    })?;
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

/// Which waiting messages an event takes (oldest first, in each case).
#[derive(Clone, Copy)]
enum Takes {
    Steer,
    SteerAndOldestQueued,
    All,
}
