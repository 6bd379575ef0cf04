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
//! - `preMcpToolCall` (`serverName`): a call of our server is stamped with the session
//!   that makes it, as Copilot names it to the hook (a subagent's own id, with its
//!   `parentAgentId`), and the call's `toolCallId`, as `{"metaToUse": {…}}`: Copilot
//!   sends the stamp in the request's `_meta`, which the model never sees nor writes
//!   ([`host_shim::call_stamp`]). Another server's call is left as it is. This one takes
//!   nothing from the inbox.
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

use anyhow::{Result, bail};
use host_shim::inbox::{
    HookReport, InboxBackend, Takes, Witness, answer_nothing, hand_over_as_json, write_hook_answer,
};
use host_shim_profile::SERVER;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The most text one answer carries (as for the other harnesses' hooks).
pub const ANSWER_CHARS: usize = 10_000;

/// The `_meta` key a call's stamp rides in.
pub const STAMP_META: &str = "session-tools/stamp";

/// The events this hook answers, told by their input's fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Event {
    AgentStop,
    UserPromptSubmitted,
    PostToolUse,
    SessionStart,
    McpToolCall,
}

impl Event {
    fn of(input: &serde_json::Value) -> Option<Event> {
        let has = |key: &str| input.get(key).is_some();
        if has("serverName") {
            Some(Event::McpToolCall)
        } else if has("stopReason") {
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

    /// What it takes from the inbox; none for a tool call, which is stamped.
    fn takes(self) -> Option<Takes> {
        match self {
            Event::AgentStop => Some(Takes::SteerAndOldestQueued),
            Event::PostToolUse => Some(Takes::Steer),
            Event::UserPromptSubmitted | Event::SessionStart => Some(Takes::All),
            Event::McpToolCall => None,
        }
    }
}

/// A hook's input, read once: the JSON Copilot gave and the session it names (a plain
/// id).
pub struct HookInput {
    json: serde_json::Value,
    session: String,
    event: Option<Event>,
}

impl HookInput {
    /// Reads the hook's stdin; bad input is an error that names it.
    pub fn read(input: &[u8]) -> Result<HookInput> {
        let (json, session) =
            host_shim::inbox::hook_json(input, "copilot-hook", "Copilot CLI", "sessionId")?;
        let event = Event::of(&json);
        Ok(HookInput {
            json,
            session,
            event,
        })
    }

    /// Whether this is a tool call to stamp ([`stamp`]), which needs no inbox.
    pub fn is_tool_call(&self) -> bool {
        self.event == Some(Event::McpToolCall)
    }
}

/// Answers a `preMcpToolCall` hook: a call of our server (named [`SERVER`] by setup)
/// gets the stamp of the session making it, made with the key in the state folder
/// `state_root` (made there when it is the first); any other call, `{}`.
pub fn stamp(input: &HookInput, state_root: &Path, out: &mut dyn Write) -> Result<HookReport> {
    let json = &input.json;
    let text = |key: &str| {
        json.get(key)
            .and_then(|v| v.as_str())
            .filter(|s| !s.is_empty())
    };
    let answer = match (text("serverName"), text("toolName")) {
        (Some(named), Some(tool)) if named == SERVER => {
            let Some(call) = text("toolCallId") else {
                bail!(
                    "the preMcpToolCall input has no toolCallId; this Copilot CLI is not one host-shim knows (tested: 1.0.102)"
                );
            };
            let parent = match text("parentAgentId") {
                Some(parent) => Some(
                    host_shim::inbox::checked_id(parent)
                        .map_err(|why| {
                            anyhow::anyhow!(
                                "the hook input's parentAgentId is not a session id: {why}"
                            )
                        })?
                        .to_string(),
                ),
                None => None,
            };
            let who = host_shim::call_stamp::Stamped {
                session: input.session.clone(),
                parent,
                call: call.to_string(),
            };
            let key = host_shim::call_stamp::StampKey::load_or_create(state_root)?;
            // No arguments are an empty object, as the server reads them.
            let arguments = (json.get("arguments").cloned())
                .filter(|a| !a.is_null())
                .unwrap_or_else(|| serde_json::json!({}));
            let stamp = key.stamp(&who, tool, &arguments, host_shim::call_stamp::now_ms());
            // The request's own _meta is kept beside the stamp.
            let mut meta = match json.get("_meta") {
                Some(serde_json::Value::Object(meta)) => meta.clone(),
                _ => serde_json::Map::new(),
            };
            meta.insert(STAMP_META.to_string(), stamp);
            serde_json::json!({"metaToUse": meta})
        }
        _ => serde_json::json!({}),
    };
    write_hook_answer(out, &answer)?;
    Ok(HookReport::default())
}

/// Answers one hook: `input` is the hook's JSON, the answer goes to `out` (`{}` when
/// there is nothing to give: Copilot reads an empty answer as one); messages come from
/// `inbox`, which lives in `home`'s sessions (`COPILOT_HOME`), whose event stream
/// witnesses each hand-over.
pub fn answer(
    inbox: &dyn InboxBackend,
    home: &std::path::Path,
    input: &HookInput,
    out: &mut dyn Write,
) -> Result<HookReport> {
    let session = input.session.as_str();
    let Some(takes) = input.event.and_then(Event::takes) else {
        return answer_nothing(out);
    };
    let event = input.event.expect("an event takes");
    let input = &input.json;
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
    hand_over_as_json(
        inbox,
        session,
        takes,
        ANSWER_CHARS,
        witness,
        out,
        |text| match event {
            Event::AgentStop => serde_json::json!({"decision": "block", "reason": text}),
            _ => serde_json::json!({"additionalContext": text}),
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use host_shim::contract::latest::DeliveryMode;
    use host_shim::inbox::StateDir;

    const SESSION: &str = "8c6f233d-ecb4-4553-9721-eeca05f621f3";

    fn state() -> (StateDir, PathBuf) {
        let (state, root) = host_shim_testkit::fresh_state("copilot-hook");
        (state, root.join("copilot"))
    }

    fn run(
        state: &StateDir,
        home: &std::path::Path,
        input: serde_json::Value,
    ) -> serde_json::Value {
        let mut out = Vec::new();
        let input = HookInput::read(input.to_string().as_bytes()).unwrap();
        answer(state, home, &input, &mut out).unwrap();
        serde_json::from_slice(&out).unwrap()
    }

    fn spool(state: &StateDir, body: &str, mode: DeliveryMode, key: &str) {
        host_shim_testkit::spool(state, SESSION, (body, mode, key));
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
        let (state, _home) = state();
        spool(&state, "kept", DeliveryMode::Queue, "k1");
        let err = |bytes: &[u8]| HookInput::read(bytes).err().unwrap().to_string();
        assert!(err(b"nope").contains("not JSON"));
        assert!(err(b"{}").contains("no sessionId"));
        let bad = err(br#"{"sessionId": "../x", "prompt": "p"}"#);
        assert!(bad.contains("not a session id"), "{bad}");
        let parent = serde_json::json!({"sessionId": SESSION, "serverName": "session-tools",
            "toolName": "sessions_list", "toolCallId": "c1", "arguments": {},
            "parentAgentId": "../up"});
        let input = HookInput::read(parent.to_string().as_bytes()).unwrap();
        let mut out = Vec::new();
        let err = stamp(&input, state.root(), &mut out).unwrap_err();
        assert!(
            err.to_string()
                .contains("parentAgentId is not a session id"),
            "{err}"
        );
        assert!(out.is_empty());
        assert_eq!(state.waiting(SESSION).unwrap().messages.len(), 1);
    }

    #[test]
    fn a_call_of_our_server_is_stamped_with_the_session_copilot_names() {
        use host_shim::call_stamp::{StampKey, Stamped, now_ms};
        let (state, _home) = state();
        let child = "0b31767a-220f-4271-bd6e-c38e69ff4a4e";
        let call = |server: &str| {
            serde_json::json!({"sessionId": child, "agentId": child, "parentAgentId": SESSION,
                "toolCallId": "call_7", "serverName": server, "toolName": "sessions_list",
                "arguments": {"scope": "all"}})
        };
        let answer_to = |input: serde_json::Value| {
            let input = HookInput::read(input.to_string().as_bytes()).unwrap();
            assert!(input.is_tool_call());
            let mut out = Vec::new();
            stamp(&input, state.root(), &mut out).unwrap();
            serde_json::from_slice::<serde_json::Value>(&out).unwrap()
        };
        assert_eq!(answer_to(call("another-server")), serde_json::json!({}));
        let answer = answer_to(call("session-tools"));
        let stamp = &answer["metaToUse"][STAMP_META];
        let key = StampKey::load(state.root())
            .unwrap()
            .expect("made by the hook");
        let who = key
            .check(
                stamp,
                "sessions_list",
                &serde_json::json!({"scope": "all"}),
                now_ms(),
            )
            .unwrap();
        assert_eq!(
            who,
            Stamped {
                session: child.into(),
                parent: Some(SESSION.into()),
                call: "call_7".into()
            }
        );
        // Nothing was taken from or written to the inbox.
        assert!(state.sessions().unwrap().is_empty());
    }
}
