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
//! An answer is an offer: a message is handed over once the session's transcript
//! (`transcript_path` in the hook's input) shows its frame, which Claude Code writes
//! as a `hook_additional_context` attachment only when the hook exited with success;
//! an offer the transcript still does not show after its time is offered again (see
//! [`host_shim::inbox`]). A hook input without `transcript_path` hands over on the answer
//! alone.
//!
//! Each event also says whether the session is idle: a `Stop` that hands nothing over
//! leaves it idle (waiting for its person), any other event of the session at work
//! clears that. An open idle session's own `host-shim mcp` hands messages to it through
//! Claude Code's messaging socket (`idle.rs`).

use anyhow::Result;
use host_shim::inbox::{
    CommandHookInput, HookReport, InboxBackend, Takes, Witness, hand_over_waiting,
    write_hook_answer,
};
use host_shim::presence::Presence;
use std::io::Write;

/// The most text one answer carries: Claude Code's cap on what a hook adds to the
/// context.
pub use host_shim::inbox::COMMAND_HOOK_ANSWER_CHARS as ANSWER_CHARS;

/// Answers one hook: `input` is the hook's JSON, the answer goes to `out`; messages
/// come from `inbox`, and the session's idle mark is kept in `presence`. Nothing is
/// handed over while Claude Code's own `crossSessionInbound` (read from `claude_config`,
/// its configuration folder, and the session's project) holds inbound, as while the
/// inbox's setting does.
pub fn answer(
    inbox: &dyn InboxBackend,
    presence: &dyn Presence,
    claude_config: Option<&std::path::Path>,
    input: &[u8],
    out: &mut dyn Write,
) -> Result<HookReport> {
    let input = CommandHookInput::read(input, "claude-hook", "Claude Code")?;
    let (session, event) = (&input.session, input.event.as_str());
    if input.agent_id.is_some() {
        return Ok(HookReport::default());
    }
    let takes = match event {
        "PostToolUse" => Takes::Steer,
        "Stop" => Takes::SteerAndOldestQueued,
        "UserPromptSubmit" | "SessionStart" => Takes::All,
        _ => return Ok(HookReport::default()),
    };
    // The session works from here on (a Stop that hands something over continues
    // it); a Stop that hands nothing over leaves it idle, below.
    presence.set_idle(session, false)?;
    let cwd = input.cwd.as_deref().map(std::path::Path::new);
    let claude_says = super::settings::inbound(claude_config, cwd);
    if claude_says == host_shim::contract::latest::InboundPolicy::Hold {
        if event == "Stop" {
            presence.set_idle(session, true)?;
        }
        return Ok(HookReport::default());
    }
    // An answer is an offer until the transcript shows it (a hook killed after writing
    // it exits without success, and Claude Code drops what it said).
    let transcript = input.transcript_path.as_deref().map(std::path::Path::new);
    let witness = Witness::file(transcript, super::transcript::handed_over_ids);
    let report = hand_over_waiting(inbox, session, takes, ANSWER_CHARS, witness, |text| {
        // Every event hands over as context: at Stop, Claude Code 2.1.328 then
        // continues the session with the text shown once, where `decision: block`
        // would show it twice, once as a hook error.
        let output = serde_json::json!({
            "hookSpecificOutput": {"hookEventName": event, "additionalContext": text}
        });
        write_hook_answer(out, &output)
    })?;
    if report.picked == 0 && event == "Stop" {
        presence.set_idle(session, true)?;
    }
    Ok(report)
}
