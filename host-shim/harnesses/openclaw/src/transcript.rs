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
//! Anything else (`session`, `model_change`, `custom` events, …) is not a message.

use host_shim::contract::latest::{ActionStatus, Role, ToolAction};
use host_shim::harnesses::surface::{Message, Surface, action_input, handed_over_frames};
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

/// A message before it is numbered.
struct Draft {
    role: Role,
    source: String,
    text: Option<String>,
    actions: Vec<ToolAction>,
    injected: bool,
}

impl Draft {
    fn said(role: Role, source: &str, text: String) -> Draft {
        Draft {
            role,
            source: source.to_string(),
            text: Some(text),
            actions: Vec::new(),
            injected: false,
        }
    }

    fn numbered(self, seq: u64) -> Message {
        Message::new(seq, self.role, &self.source, false, self.text)
            .with_actions(self.actions)
            .injected(self.injected)
    }
}

/// What one event gives the model.
enum Given {
    Messages(Vec<Draft>),
    /// The summary, and the id of the first event kept.
    Compaction(String, String),
}

/// What `event` gives the model; `ended` says how each call ended, by its id.
fn given(event: &Value, ended: &HashMap<&str, ActionStatus>) -> Given {
    let message = &event["message"];
    let drafts = match (event["type"].as_str(), message["role"].as_str()) {
        (Some("message"), Some("user")) => person_message(message),
        (Some("message"), Some("assistant")) => model_message(message, ended),
        (Some("message"), Some("custom")) if message["excludeFromContext"] != true => {
            injected(message)
        }
        (Some("custom_message"), _) => injected(event),
        (Some("compaction"), _) => {
            if let (Some(summary), Some(kept_from)) = (
                event["summary"].as_str(),
                event["firstKeptEntryId"].as_str(),
            ) {
                return Given::Compaction(summary.to_string(), kept_from.to_string());
            }
            Vec::new()
        }
        _ => Vec::new(),
    };
    Given::Messages(drafts)
}

/// A person's message: our frames each on its own, another OpenClaw session's message
/// as that, else the person's.
fn person_message(message: &Value) -> Vec<Draft> {
    let Some(text) = person_text(message) else {
        return Vec::new();
    };
    if let Some(frames) = handed_over_frames(&text) {
        return (frames.into_iter())
            .map(|frame| Draft::said(Role::User, "user", frame.to_string()))
            .collect();
    }
    let source = if message["provenance"]["kind"] == "inter_session" {
        "openclaw:inter-session"
    } else {
        "user"
    };
    vec![Draft::said(Role::User, source, text)]
}

/// The model's message: its text parts, its calls as actions (thinking never).
fn model_message(message: &Value, ended: &HashMap<&str, ActionStatus>) -> Vec<Draft> {
    let Some(parts) = message["content"].as_array() else {
        return Vec::new();
    };
    let texts: Vec<&str> = (parts.iter())
        .filter(|p| p["type"] == "text")
        .filter_map(|p| p["text"].as_str())
        .collect();
    let actions: Vec<ToolAction> = (parts.iter())
        .filter(|p| p["type"] == "toolCall")
        .map(|call| action_of(call, ended))
        .collect();
    if texts.is_empty() && actions.is_empty() {
        return Vec::new();
    }
    let source = format!(
        "model:{}/{}",
        message["provider"].as_str().unwrap_or("openclaw"),
        message["model"].as_str().unwrap_or("unknown")
    );
    vec![Draft {
        role: Role::Assistant,
        source,
        text: (!texts.is_empty()).then(|| texts.join("\n")),
        actions,
        injected: false,
    }]
}

/// Text OpenClaw or an extension put into the conversation (its `customType` the
/// source).
fn injected(custom: &Value) -> Vec<Draft> {
    let Some(text) = person_text(custom) else {
        return Vec::new();
    };
    let kind = custom["customType"].as_str().unwrap_or("extension");
    let mut draft = Draft::said(Role::User, &format!("openclaw:{kind}"), text);
    draft.injected = true;
    vec![draft]
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
    // Every message numbered in the whole transcript, with the index of its event.
    let mut numbered: Vec<(usize, Message)> = Vec::new();
    // The last compaction: how many messages came before it, the index of the first
    // event it kept (a message's or not), and its summary.
    let mut compaction: Option<(usize, usize, String)> = None;
    for (event_at, event) in events.iter().enumerate() {
        match given(event, &ended) {
            Given::Messages(drafts) => {
                for draft in drafts {
                    let seq = numbered.len() as u64 + 1;
                    numbered.push((event_at, draft.numbered(seq)));
                }
            }
            Given::Compaction(summary, kept_from) => {
                // An id no earlier event has keeps nothing from before the cut.
                let kept_at = (events[..event_at].iter())
                    .position(|e| e["id"] == kept_from.as_str())
                    .unwrap_or(event_at);
                compaction = Some((numbered.len(), kept_at, summary));
            }
        }
    }
    let mut surface = Surface {
        captured_through_seq: numbered.len() as u64,
        ..Surface::default()
    };
    let Some((cut, kept_from, summary)) = compaction else {
        surface.messages = numbered.into_iter().map(|(_, m)| m).collect();
        return surface;
    };
    // Before the cut: the messages from the first kept event on; the rest are replaced.
    let kept_at = (numbered[..cut].iter())
        .position(|(event_at, _)| *event_at >= kept_from)
        .unwrap_or(cut);
    if let Some(last_replaced) = kept_at.checked_sub(1).map(|at| numbered[at].1.seq) {
        let summary = Message::new(
            last_replaced,
            Role::User,
            "openclaw:compaction",
            true,
            Some(summary),
        );
        surface.messages.push(summary.injected(true));
    }
    (surface.messages).extend(numbered.into_iter().skip(kept_at).map(|(_, m)| m));
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
