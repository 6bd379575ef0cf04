//! `host-shim copilot-hook`: a Copilot CLI command hook (`~/.copilot/hooks/*.json`)
//! that hands the messages spooled for a session to that session. Copilot CLI 1.0.102
//! gives a hook no event name, so the hook tells its event by the input's fields
//! (`sessionId` in each):
//!
//! - `agentStop` (`stopReason`): the waiting `steer` messages and the oldest `queue`
//!   one, as `{"decision": "block", "reason": …}`: Copilot makes the text a new prompt
//!   of the same session. One queued message per stop, so each becomes its own turn.
//! - `userPromptSubmitted` (`prompt`): everything waiting, as `{"additionalContext": …}`,
//!   which Copilot appends to the prompt in a `<system_reminder>` block.
//! - `postToolUse` (`toolResult`): the `steer` messages, as `{"additionalContext": …}`,
//!   which Copilot appends to the tool's result.
//! - `sessionStart` (`source`): everything waiting, as `{"additionalContext": …}`, which
//!   Copilot sends the model as a message before the first prompt.
//! - Anything else, or nothing waiting: `{}`.
//!
//! Trust model: the input is Copilot's, run as this user; its `sessionId` is made a
//! plain name before it names a folder, and its `transcriptPath` is only read, as the
//! record that witnesses a hand-over. Bad input is an error that names it, and nothing
//! is taken from the inbox.
//!
//! One answer carries messages, oldest first, up to [`ANSWER_CHARS`] (at least one).
//! An answer is an offer: a message is handed over once the session's event stream
//! shows its frame (Copilot records each of the four; [`super::handed_over_ids`]), and
//! offered again when it still does not after its time.

use crate::inbox::{HookReport, InboxBackend, Takes, Witness, hand_over_waiting};
use anyhow::{Context, Result, bail};
use std::io::Write;
use std::path::PathBuf;

/// The most text one answer carries (as for the other harnesses' hooks).
pub const ANSWER_CHARS: usize = 10_000;

/// The events this hook answers, told by their input's fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Event {
    AgentStop,
    UserPromptSubmitted,
    PostToolUse,
    SessionStart,
}

impl Event {
    fn of(input: &serde_json::Value) -> Option<Event> {
        let has = |key: &str| input.get(key).is_some();
        if has("stopReason") {
            Some(Event::AgentStop)
        } else if has("toolResult") {
            Some(Event::PostToolUse)
        } else if has("prompt") {
            Some(Event::UserPromptSubmitted)
        } else if has("source") {
            Some(Event::SessionStart)
        } else {
            None
        }
    }

    fn takes(self) -> Takes {
        match self {
            Event::AgentStop => Takes::SteerAndOldestQueued,
            Event::PostToolUse => Takes::Steer,
            Event::UserPromptSubmitted | Event::SessionStart => Takes::All,
        }
    }
}

/// Answers one hook: `input` is the hook's JSON, the answer goes to `out` (`{}` when
/// there is nothing to give: Copilot reads an empty answer as one); messages come from
/// `inbox`, which lives in `home`'s sessions (`COPILOT_HOME`), whose event stream
/// witnesses each hand-over.
pub fn answer(
    inbox: &dyn InboxBackend,
    home: &std::path::Path,
    input: &[u8],
    out: &mut dyn Write,
) -> Result<HookReport> {
    let input: serde_json::Value = serde_json::from_slice(input).context(
        "the hook input is not JSON; run host-shim copilot-hook as a Copilot CLI command hook (it reads the hook's JSON on stdin)",
    )?;
    let Some(session) = input.get("sessionId").and_then(|s| s.as_str()) else {
        bail!(
            "the hook input has no sessionId; run host-shim copilot-hook as a Copilot CLI command hook"
        );
    };
    let session = crate::inbox::checked_id(session)
        .map_err(|why| anyhow::anyhow!("the hook input's sessionId is not a session id: {why}"))?;
    let nothing = |out: &mut dyn Write| -> Result<HookReport> {
        writeln!(out, "{{}}").context("cannot write the hook's answer")?;
        Ok(HookReport::default())
    };
    let Some(event) = Event::of(&input) else {
        return nothing(out);
    };
    // The stream Copilot names (agentStop), else the session's own in `home`.
    let stream = (input
        .get("transcriptPath")
        .and_then(|p| p.as_str())
        .map(PathBuf::from))
    .unwrap_or_else(|| {
        home.join("session-state")
            .join(session)
            .join("events.jsonl")
    });
    let witness = Witness::file(Some(&stream), super::handed_over_ids);
    let mut answered = false;
    let report = hand_over_waiting(
        inbox,
        session,
        event.takes(),
        ANSWER_CHARS,
        witness,
        |text| {
            answered = true;
            let output = match event {
                Event::AgentStop => serde_json::json!({"decision": "block", "reason": text}),
                _ => serde_json::json!({"additionalContext": text}),
            };
            writeln!(out, "{output}")
                .and_then(|()| out.flush())
                .context("cannot write the hook's answer")
        },
    )?;
    if !answered {
        nothing(out)?;
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::latest::DeliveryMode;
    use crate::inbox::{SpooledMessage, StateDir};

    const SESSION: &str = "8c6f233d-ecb4-4553-9721-eeca05f621f3";

    fn state() -> (StateDir, PathBuf) {
        let root = std::env::temp_dir().join(format!(
            "host-shim-copilot-hook-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_dir_all(&root);
        (
            StateDir::open(&root.join("state")).unwrap(),
            root.join("copilot"),
        )
    }

    fn run(
        state: &StateDir,
        home: &std::path::Path,
        input: serde_json::Value,
    ) -> serde_json::Value {
        let mut out = Vec::new();
        answer(state, home, input.to_string().as_bytes(), &mut out).unwrap();
        serde_json::from_slice(&out).unwrap()
    }

    fn spool(state: &StateDir, body: &str, mode: DeliveryMode, key: &str) {
        state
            .put(&SpooledMessage::new(SESSION, mode, body, key, false))
            .unwrap();
    }

    #[test]
    fn each_event_is_told_by_its_fields_and_answered_in_its_shape() {
        let (state, home) = state();
        let stop = serde_json::json!({"sessionId": SESSION, "stopReason": "end_turn",
            "stop_hook_active": false, "transcriptPath": "/nowhere/events.jsonl"});
        assert_eq!(run(&state, &home, stop.clone()), serde_json::json!({}));
        spool(&state, "first", DeliveryMode::Queue, "k1");
        spool(&state, "second", DeliveryMode::Queue, "k2");
        spool(&state, "now", DeliveryMode::Steer, "k3");
        let tool = serde_json::json!({"sessionId": SESSION, "toolName": "bash",
            "toolArgs": {}, "toolResult": {"resultType": "success"}});
        assert_eq!(
            run(&state, &home, tool.clone()),
            serde_json::json!({"additionalContext": "now"})
        );
        assert_eq!(
            run(&state, &home, stop.clone()),
            serde_json::json!({"decision": "block", "reason": "first"})
        );
        let prompt = serde_json::json!({"sessionId": SESSION, "prompt": "hi", "cwd": "/w"});
        assert_eq!(
            run(&state, &home, prompt),
            serde_json::json!({"additionalContext": "second"})
        );
        let start =
            serde_json::json!({"sessionId": SESSION, "source": "new", "initialPrompt": "x"});
        assert_eq!(run(&state, &home, start), serde_json::json!({}));
        let end = serde_json::json!({"sessionId": SESSION, "reason": "complete"});
        assert_eq!(run(&state, &home, end), serde_json::json!({}));
    }

    #[test]
    fn bad_input_is_a_clear_error_and_gives_nothing() {
        let (state, home) = state();
        spool(&state, "kept", DeliveryMode::Queue, "k1");
        let mut out = Vec::new();
        let err = answer(&state, &home, b"nope", &mut out)
            .unwrap_err()
            .to_string();
        assert!(err.contains("not JSON"), "{err}");
        let err = answer(&state, &home, b"{}", &mut out)
            .unwrap_err()
            .to_string();
        assert!(err.contains("no sessionId"), "{err}");
        let bad = br#"{"sessionId": "../x", "prompt": "p"}"#;
        let err = answer(&state, &home, bad, &mut out)
            .unwrap_err()
            .to_string();
        assert!(err.contains("not a session id"), "{err}");
        assert!(out.is_empty());
        assert_eq!(state.waiting(SESSION).unwrap().messages.len(), 1);
    }
}
