//! One line of a Copilot CLI session's event stream
//! (`COPILOT_HOME/session-state/<id>/events.jsonl`), as Copilot CLI 1.0.102 writes it:
//! `{type, data, id, timestamp, parentId}`. Only what the store uses is read; a line
//! that is not such an event is skipped and counted, and so is an event type this
//! module does not know.
//!
//! - `session.start`: the session's id, start time, model (`selectedModel`), cwd.
//! - `user.message`: what the person typed (`content`) and what the model was sent
//!   (`transformedContent`: the current time before it, each `userPromptSubmitted`
//!   hook's context after it in a `<system_reminder>` block).
//! - `assistant.message`: the model's text (`content`), its model, and the tool calls
//!   it made (`toolRequests[]`: `toolCallId`, `name`, `arguments`).
//! - `tool.execution_complete`: how a call ended (`success`); a `postToolUse` hook's
//!   context is appended to `result.content` after [`POST_TOOL_GUIDANCE`].
//! - `hook.end` of a `sessionStart` hook: its `output.additionalContext`, which the
//!   model is sent as a message of its own before the first prompt.
//!
//! Everything else Copilot writes (`system.message`, turns, usage, hook starts, …) is
//! known and carries nothing the surface shows.
use host_shim::harnesses::surface::{Tagged, tagged};

use serde::Deserialize;

/// What a `postToolUse` hook's context follows in a tool's result, as Copilot CLI
/// 1.0.102 writes it.
pub const POST_TOOL_GUIDANCE: &str = "Additional guidance from postToolUse hooks:\n";

/// The event types this store reads or knowingly passes over.
const KNOWN: &[&str] = &[
    "session.start",
    "session.resume",
    "session.shutdown",
    "session.usage_record",
    "session.info",
    "session.model_change",
    "user.message",
    "system.message",
    "assistant.message",
    "assistant.turn_start",
    "assistant.turn_end",
    "assistant.reasoning",
    "tool.execution_start",
    "tool.execution_complete",
    "tool.execution_partial_result",
    "hook.start",
    "hook.end",
    "subagent.started",
    "subagent.configured",
    "subagent.completed",
    "subagent.failed",
    "abort",
];

/// One event.
#[derive(Debug, Deserialize)]
pub struct Event {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub data: serde_json::Value,
    #[serde(default)]
    pub timestamp: Option<String>,
    /// The subagent whose event it is (none for the session's own).
    #[serde(rename = "agentId", default)]
    pub agent: Option<String>,
}

impl Event {
    /// The event on `line`, when it is one.
    pub fn parse(line: &[u8]) -> Option<Event> {
        host_shim::json::from_slice(line).ok()
    }

    /// Whether this store knows the event's type (an unknown one is counted).
    pub fn known(&self) -> bool {
        KNOWN.contains(&self.kind.as_str())
    }

    /// The text at `key` of the event's data, when it is a non-empty string.
    pub fn text(&self, key: &str) -> Option<&str> {
        text_of(&self.data, key)
    }

    /// Whether the event is a subagent's own: Copilot 1.0.102 writes a subagent's
    /// conversation into its parent's file, each event with the subagent's `agentId`
    /// and most with the `parentToolCallId` of the `task` call that started it (its
    /// prompt, a `user.message`, has a `source` of `agent-<parent id>` instead).
    pub fn of_a_subagent(&self) -> bool {
        self.agent.is_some()
            || self.data.get("parentToolCallId").is_some()
            || (self.kind == "user.message"
                && self.text("source").is_some_and(|s| s.starts_with("agent-")))
    }

    /// The context a `sessionStart` hook gave, when this is that hook's end.
    pub fn session_start_context(&self) -> Option<&str> {
        if self.kind != "hook.end" || self.text("hookType") != Some("sessionStart") {
            return None;
        }
        text_of(self.data.get("output")?, "additionalContext")
    }

    /// The `postToolUse` hooks' context in a finished tool call's result.
    pub fn post_tool_context(&self) -> Option<&str> {
        if self.kind != "tool.execution_complete" {
            return None;
        }
        let content = text_of(self.data.get("result")?, "content")?;
        let (_, after) = content.split_once(POST_TOOL_GUIDANCE)?;
        Some(after)
    }
}

pub fn text_of<'a>(value: &'a serde_json::Value, key: &str) -> Option<&'a str> {
    value.get(key)?.as_str().filter(|s| !s.is_empty())
}

/// What the model was sent of a person's message, split: the person's words, and what
/// Copilot added around them (the current time, each hook's `<system_reminder>`), in
/// order. A `transformedContent` that does not hold the words is all Copilot's.
pub fn split_transformed<'a>(content: &'a str, transformed: &'a str) -> (&'a str, &'a str) {
    match transformed.find(content) {
        Some(at) if !content.is_empty() => (&transformed[..at], &transformed[at + content.len()..]),
        _ => (transformed, ""),
    }
}

/// The insides of the `<system_reminder>` blocks in `text`, in order.
pub fn reminders(text: &str) -> Vec<&str> {
    let blocks = tagged(text, "<system_reminder>\n", "\n</system_reminder>");
    (blocks.into_iter())
        .filter_map(|piece| match piece {
            Tagged::Inside(reminder) => Some(reminder),
            Tagged::Outside(_) => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prompt_splits_into_the_persons_words_and_what_copilot_added() {
        let transformed = "<current_datetime>2026-12-05T06:54:18.272+00:00</current_datetime>\n\n\
                           go\n\n<system_reminder>\nA\n</system_reminder>";
        let (before, after) = split_transformed("go", transformed);
        assert!(before.starts_with("<current_datetime>"));
        assert_eq!(reminders(after), ["A"]);
        assert_eq!(
            split_transformed("absent", "all copilot's"),
            ("all copilot's", "")
        );
        assert_eq!(
            reminders(
                "<system_reminder>\nA\n</system_reminder>x<system_reminder>\nB\nC\n</system_reminder>"
            ),
            ["A", "B\nC"]
        );
        assert!(reminders("<system_reminder>\nunclosed").is_empty());
    }

    #[test]
    fn hook_context_is_found_where_copilot_records_it() {
        let start = Event::parse(
            br#"{"type":"hook.end","data":{"hookType":"sessionStart","success":true,"output":{"additionalContext":"S"}}}"#,
        )
        .unwrap();
        assert_eq!(start.session_start_context(), Some("S"));
        let tool = Event::parse(
            br#"{"type":"tool.execution_complete","data":{"success":true,"result":{"content":"rows\n\nTool \"x\" succeeded. Additional guidance from postToolUse hooks:\nP"}}}"#,
        )
        .unwrap();
        assert_eq!(tool.post_tool_context(), Some("P"));
        assert!(tool.known());
        assert!(!Event::parse(br#"{"type":"brand.new"}"#).unwrap().known());
        assert!(Event::parse(b"not json").is_none());
    }
}
