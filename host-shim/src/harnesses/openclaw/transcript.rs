//! An OpenClaw session's surface from its transcript events (the pi-agent shape
//! OpenClaw 2026.9.6 keeps one per row), as OpenClaw's model is given them:
//!
//! - `message` events: a person's (`role: "user"`, content a string or text parts), the
//!   model's (`assistant`: `text` parts, `toolCall` parts as actions, `thinking` never)
//!   and tool results (`toolResult`: never shown, they say how an action ended). A
//!   user message with `provenance.kind: "inter_session"` came from another OpenClaw
//!   session (OpenClaw's own `sessions_send`); one that holds our frames is the frames.
//!   A `tool_call` call (how a model calls a tool Tool Search found) is shown as the
//!   tool it called, with that tool's arguments.
//! - `custom` messages and `custom_message` events: text OpenClaw or an extension put
//!   into the conversation: injected; one marked `excludeFromContext` (a nested tool's
//!   record) never reached the model and is left out.
//! - `compaction` events: the model is given the summary, then the messages from
//!   `firstKeptEntryId` on. The summary is marked replaced and takes the seq of the last
//!   message it replaces, so seqs (each message's ordinal in the whole transcript) hold
//!   across compactions.
//!
//! Anything else (`session`, `model_change`, `custom`, …) is not a message.

use crate::contract::latest::{ActionStatus, Role, ToolAction};
use crate::harnesses::surface::{Message, Surface, action_input, handed_over_frames};
use serde_json::Value;
use std::collections::HashMap;

/// The text a person's (or another session's) message gives the model: a string, or
/// its text parts joined.
pub fn person_text(message: &Value) -> Option<String> {
    match &message["content"] {
        Value::String(text) => Some(text.clone()),
        Value::Array(parts) => {
            let texts: Vec<&str> = (parts.iter())
                .filter(|part| part["type"] == "text")
                .filter_map(|part| part["text"].as_str())
                .collect();
            (!texts.is_empty()).then(|| texts.join("\n"))
        }
        _ => None,
    }
}

/// One message as numbered in the whole transcript, with the index of the event it
/// came from.
struct Numbered {
    event_at: usize,
    message: Message,
}

/// The surface of a session whose events are `events`, in order.
pub fn surface_of(events: &[Value]) -> Surface {
    // How each call ended, by its id.
    let mut ended: HashMap<&str, ActionStatus> = HashMap::new();
    for event in events {
        let message = &event["message"];
        if event["type"] == "message"
            && message["role"] == "toolResult"
            && let Some(id) = message["toolCallId"].as_str()
        {
            let failed = message["isError"].as_bool().unwrap_or(false);
            ended.insert(
                id,
                if failed {
                    ActionStatus::Error
                } else {
                    ActionStatus::Ok
                },
            );
        }
    }
    let mut numbered: Vec<Numbered> = Vec::new();
    let mut seq = 0u64;
    // The last compaction: how many messages came before it, the index of the first
    // event it kept (a message's or not), and its summary.
    let mut compaction: Option<(usize, usize, String)> = None;
    for (event_at, event) in events.iter().enumerate() {
        let push = |message: Message, numbered: &mut Vec<Numbered>| {
            numbered.push(Numbered { event_at, message });
        };
        match event["type"].as_str() {
            Some("message") => {
                let message = &event["message"];
                match message["role"].as_str() {
                    Some("user") => {
                        let Some(text) = person_text(message) else {
                            continue;
                        };
                        if let Some(frames) = handed_over_frames(&text) {
                            for frame in frames {
                                seq += 1;
                                push(
                                    Message::new(
                                        seq,
                                        Role::User,
                                        "user",
                                        false,
                                        Some(frame.into()),
                                    ),
                                    &mut numbered,
                                );
                            }
                            continue;
                        }
                        let source = if message["provenance"]["kind"] == "inter_session" {
                            "openclaw:inter-session"
                        } else {
                            "user"
                        };
                        seq += 1;
                        push(
                            Message::new(seq, Role::User, source, false, Some(text)),
                            &mut numbered,
                        );
                    }
                    Some("assistant") => {
                        let Some(parts) = message["content"].as_array() else {
                            continue;
                        };
                        let texts: Vec<&str> = (parts.iter())
                            .filter(|p| p["type"] == "text")
                            .filter_map(|p| p["text"].as_str())
                            .collect();
                        let actions: Vec<ToolAction> = (parts.iter())
                            .filter(|p| p["type"] == "toolCall")
                            .map(|call| action_of(call, &ended))
                            .collect();
                        if texts.is_empty() && actions.is_empty() {
                            continue;
                        }
                        let source = format!(
                            "model:{}/{}",
                            message["provider"].as_str().unwrap_or("openclaw"),
                            message["model"].as_str().unwrap_or("unknown")
                        );
                        let text = (!texts.is_empty()).then(|| texts.join("\n"));
                        seq += 1;
                        push(
                            Message::new(seq, Role::Assistant, &source, false, text)
                                .with_actions(actions),
                            &mut numbered,
                        );
                    }
                    Some("custom") => {
                        if message["excludeFromContext"] == true {
                            continue;
                        }
                        let Some(text) = person_text(message) else {
                            continue;
                        };
                        let source = format!(
                            "openclaw:{}",
                            message["customType"].as_str().unwrap_or("extension")
                        );
                        seq += 1;
                        push(
                            Message::new(seq, Role::User, &source, false, Some(text))
                                .injected(true),
                            &mut numbered,
                        );
                    }
                    _ => {}
                }
            }
            Some("custom_message") => {
                let Some(text) = person_text(event) else {
                    continue;
                };
                let source = format!(
                    "openclaw:{}",
                    event["customType"].as_str().unwrap_or("extension")
                );
                seq += 1;
                push(
                    Message::new(seq, Role::User, &source, false, Some(text)).injected(true),
                    &mut numbered,
                );
            }
            Some("compaction") => {
                let (Some(summary), Some(kept_from)) = (
                    event["summary"].as_str(),
                    event["firstKeptEntryId"].as_str(),
                ) else {
                    continue;
                };
                // An id no earlier event has keeps nothing from before the cut.
                let kept_at = (events[..event_at].iter())
                    .position(|e| e["id"] == kept_from)
                    .unwrap_or(event_at);
                compaction = Some((numbered.len(), kept_at, summary.into()));
            }
            _ => {}
        }
    }
    let mut surface = Surface {
        captured_through_seq: seq,
        ..Surface::default()
    };
    let Some((cut, kept_from, summary)) = compaction else {
        surface.messages = numbered.into_iter().map(|n| n.message).collect();
        return surface;
    };
    // Before the cut: the messages from the first kept event on; the rest are replaced.
    let kept_at = (numbered[..cut].iter())
        .position(|n| n.event_at >= kept_from)
        .unwrap_or(cut);
    if let Some(last_replaced) = kept_at.checked_sub(1).map(|at| numbered[at].message.seq) {
        surface.messages.push(
            Message::new(
                last_replaced,
                Role::User,
                "openclaw:compaction",
                true,
                Some(summary),
            )
            .injected(true),
        );
    }
    surface
        .messages
        .extend(numbered.into_iter().skip(kept_at).map(|n| n.message));
    surface
}

/// A `toolCall` part as an action: its tool, its arguments as JSON cut to the WIT's
/// bytes, and how its result says it ended. A `tool_call` of a tool by name is that
/// tool with its own arguments (by the search result's id, `openclaw:<source>:<tool>`, or
/// by name).
fn action_of(call: &Value, ended: &HashMap<&str, ActionStatus>) -> ToolAction {
    let status = (call["id"].as_str())
        .and_then(|id| ended.get(id).copied())
        .unwrap_or(ActionStatus::Running);
    let arguments = &call["arguments"];
    let (name, input) = match (call["name"].as_str(), arguments["id"].as_str()) {
        (Some("tool_call"), Some(id)) => (id.rsplit(':').next().unwrap_or(id), &arguments["args"]),
        (name, _) => (name.unwrap_or("(unnamed)"), arguments),
    };
    let input = if input.is_null() {
        "{}".to_string()
    } else {
        input.to_string()
    };
    ToolAction {
        name: name.to_string(),
        input: action_input(&input),
        status,
    }
}
