//! `host-shim codex-hook`: a Codex command hook (`hooks.json`) that hands the messages
//! spooled for a thread to that thread. It reads the hook's JSON input on stdin
//! (`session_id` is the thread id, `hook_event_name` the event) and answers on stdout:
//!
//! - `Stop`: the waiting `steer` messages and the oldest `queue` message, as
//!   `{"decision": "block", "reason": …}`: Codex continues the same turn with the text.
//!   One queued message per stop, so each becomes its own continuation.
//! - `UserPromptSubmit` and `SessionStart`: everything waiting, as
//!   `{"hookSpecificOutput": {"hookEventName": …, "additionalContext": …}}`.
//! - Any other event, or nothing waiting: no output.
//!
//! One answer carries messages, oldest first, up to [`ANSWER_CHARS`] (at least one);
//! the rest wait for the next hook. An answer is an offer: a message is handed over
//! once the thread's rollout (`transcript_path` in the hook's input) shows its frame,
//! and offered again when the rollout still does not after its time (see
//! [`host_shim::inbox`]); without `transcript_path` the answer alone hands it over.

use anyhow::Result;
use host_shim::inbox::{
    CommandHookInput, HookReport, InboxBackend, Takes, Witness, hand_over_waiting,
    write_hook_answer,
};
use std::io::Write;

/// The most text one answer carries (as for Claude Code's hooks).
pub use host_shim::inbox::COMMAND_HOOK_ANSWER_CHARS as ANSWER_CHARS;

/// Answers one hook: `input` is the hook's JSON, the answer goes to `out`; messages
/// come from `inbox`.
pub fn answer(inbox: &dyn InboxBackend, input: &[u8], out: &mut dyn Write) -> Result<HookReport> {
    let input = CommandHookInput::read(input, "codex-hook", "Codex")?;
    let (thread, event) = (&input.session, input.event.as_str());
    let takes = match event {
        "Stop" => Takes::SteerAndOldestQueued,
        "UserPromptSubmit" | "SessionStart" => Takes::All,
        _ => return Ok(HookReport::default()),
    };
    let rollout = input.transcript_path.as_deref().map(std::path::Path::new);
    let witness = Witness::file(rollout, super::rollout::handed_over_ids);
    hand_over_waiting(inbox, thread, takes, ANSWER_CHARS, witness, |text| {
        let output = if event == "Stop" {
            serde_json::json!({"decision": "block", "reason": text})
        } else {
            serde_json::json!({
                "hookSpecificOutput": {"hookEventName": event, "additionalContext": text}
            })
        };
        write_hook_answer(out, &output)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use host_shim::contract::latest::DeliveryMode;
    use host_shim::inbox::{SpooledMessage, StateDir};

    const THREAD: &str = "01a23b69-bd46-7060-9af0-509a2688740e";

    fn state() -> StateDir {
        host_shim_testkit::fresh_state("codex-hook").0
    }

    fn run(state: &StateDir, event: &str) -> Option<serde_json::Value> {
        let input = serde_json::json!({"session_id": THREAD, "hook_event_name": event,
            "turn_id": "t1", "transcript_path": "/x.jsonl"});
        let mut out = Vec::new();
        answer(state, input.to_string().as_bytes(), &mut out).unwrap();
        (!out.is_empty()).then(|| serde_json::from_slice(&out).unwrap())
    }

    fn spool(state: &StateDir, body: &str, mode: DeliveryMode, key: &str) {
        host_shim_testkit::spool(state, THREAD, (body, mode, key));
    }

    #[test]
    fn stop_blocks_with_the_oldest_queued_message_once() {
        let state = state();
        assert_eq!(run(&state, "Stop"), None);
        spool(&state, "first", DeliveryMode::Queue, "k1");
        spool(&state, "second", DeliveryMode::Queue, "k2");
        assert_eq!(
            run(&state, "Stop"),
            Some(serde_json::json!({"decision": "block", "reason": "first"}))
        );
        assert_eq!(
            run(&state, "Stop"),
            Some(serde_json::json!({"decision": "block", "reason": "second"}))
        );
        assert_eq!(run(&state, "Stop"), None);
        // Handed over: a repeat of the key is not delivered again.
        assert!(matches!(
            state.put(&SpooledMessage::new(
                THREAD,
                DeliveryMode::Queue,
                "first",
                "k1",
                false
            )),
            Ok(host_shim::inbox::Put::Repeat(_))
        ));
    }

    #[test]
    fn a_prompt_or_a_start_takes_everything_waiting_as_context() {
        let state = state();
        spool(&state, "one", DeliveryMode::Queue, "k1");
        spool(&state, "two", DeliveryMode::Steer, "k2");
        assert_eq!(run(&state, "PostToolUse"), None);
        assert_eq!(
            run(&state, "UserPromptSubmit"),
            Some(serde_json::json!({"hookSpecificOutput": {
                "hookEventName": "UserPromptSubmit", "additionalContext": "one\n\ntwo"}}))
        );
        assert_eq!(run(&state, "SessionStart"), None);
    }

    #[test]
    fn bad_input_is_a_clear_error() {
        let state = state();
        let mut out = Vec::new();
        let err = answer(&state, b"nope", &mut out).unwrap_err().to_string();
        assert!(err.contains("the hook input is not JSON"), "{err}");
        assert!(
            err.contains("run host-shim codex-hook as a Codex command hook"),
            "{err}"
        );
        let err = answer(&state, b"{}", &mut out).unwrap_err().to_string();
        assert!(err.contains("no session_id"), "{err}");
        let err = answer(&state, br#"{"session_id": "t1"}"#, &mut out).unwrap_err();
        assert!(err.to_string().contains("no hook_event_name"), "{err}");
        let err = answer(
            &state,
            br#"{"session_id": "../t", "hook_event_name": "Stop"}"#,
            &mut out,
        );
        assert!(format!("{:#}", err.unwrap_err()).contains("is not a session id"));
        assert!(out.is_empty());
    }
}
