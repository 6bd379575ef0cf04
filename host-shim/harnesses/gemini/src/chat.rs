//! One Gemini CLI session file (`~/.gemini/tmp/<project>/chats/*.jsonl`), as Gemini CLI
//! 0.61.0 writes it: a header line (`sessionId`, `startTime`, `kind` `main` or
//! `subagent`), then lines that each change the record, which is read by folding them
//! in order:
//!
//! - a message (`{id, timestamp, type, content, …}`) is added, or replaces the message
//!   with the same `id` where it stands (Gemini writes a model's message again once its
//!   tool calls are done);
//! - `{"$set": {…}}` sets header fields (`summary`, `lastUpdated`), and `messages`, when
//!   it is there, replaces every message.
//!
//! A message's `type`: `user` (`content` the parts the model was sent; `displayContent`
//! what the person typed, without a hook's `<hook_context>` parts; a message of only
//! `functionResponse` parts is the tools' results), `gemini` (`content` the model's
//! text, `model`, `toolCalls[]` each with `name`, `args`, `status`), or Gemini's own
//! notes (`info`, `error`, `warning`), which its model is not sent. A line that is none
//! of these is skipped and counted.

use host_shim::harnesses::surface::{Tagged, tagged};
use serde::Deserialize;

/// One message as the file records it (only what the store reads).
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
pub struct ChatMessage {
    pub id: String,
    #[serde(rename = "type", default)]
    pub kind: String,
    #[serde(default)]
    pub timestamp: Option<String>,
    /// The parts the model was sent (a user's), or the model's text (a string).
    #[serde(default)]
    pub content: serde_json::Value,
    /// What the person typed, where a hook added to it.
    #[serde(rename = "displayContent", default)]
    pub display_content: Option<serde_json::Value>,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(rename = "toolCalls", default)]
    pub tool_calls: Vec<ToolCall>,
}

/// One tool call of a model's message.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(default)]
pub struct ToolCall {
    pub name: String,
    pub args: serde_json::Value,
    /// `success`, `error`, `cancelled`; none while it runs.
    pub status: Option<String>,
    /// The subagent a call started (`invoke_agent`).
    #[serde(rename = "agentId")]
    pub agent_id: Option<String>,
}

/// What one line says.
#[derive(Debug)]
pub enum Line {
    Header(Header),
    Set(serde_json::Map<String, serde_json::Value>),
    Message(ChatMessage),
}

/// A file's first line.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
pub struct Header {
    #[serde(rename = "sessionId")]
    pub session_id: String,
    #[serde(rename = "startTime", default)]
    pub start_time: Option<String>,
    #[serde(default)]
    pub kind: Option<String>,
    #[serde(default)]
    pub summary: Option<String>,
    /// The folders the session works in (a subagent's header has them).
    #[serde(default)]
    pub directories: Vec<String>,
}

impl Line {
    /// The line's meaning; none for a line that is not one of Gemini's.
    pub fn parse(line: &[u8]) -> Option<Line> {
        let value: serde_json::Value = host_shim::json::from_slice(line).ok()?;
        let object = value.as_object()?;
        if let Some(set) = object.get("$set") {
            return Some(Line::Set(set.as_object()?.clone()));
        }
        if object.contains_key("sessionId") {
            return serde_json::from_value(value).ok().map(Line::Header);
        }
        if object.get("id").is_some_and(serde_json::Value::is_string) {
            return serde_json::from_value(value).ok().map(Line::Message);
        }
        None
    }
}

/// A session file folded: its header and its messages now.
#[derive(Clone, Debug, Default)]
pub struct Chat {
    pub header: Header,
    pub messages: Vec<ChatMessage>,
    /// Lines that were none of Gemini's (or a last one still being written).
    pub skipped: u64,
}

impl Chat {
    /// Folds one line into the record.
    pub fn take(&mut self, line: &[u8]) {
        match Line::parse(line) {
            Some(Line::Header(header)) => self.header = header,
            Some(Line::Set(set)) => {
                if let Some(messages) = set.get("messages") {
                    match serde_json::from_value::<Vec<ChatMessage>>(messages.clone()) {
                        Ok(messages) => self.messages = messages,
                        Err(_) => self.skipped += 1,
                    }
                }
                if let Some(summary) = set.get("summary").and_then(|s| s.as_str()) {
                    self.header.summary = Some(summary.to_string());
                }
            }
            Some(Line::Message(message)) => {
                match self.messages.iter_mut().find(|m| m.id == message.id) {
                    Some(known) => *known = message,
                    None => self.messages.push(message),
                }
            }
            None => self.skipped += 1,
        }
    }

    /// A whole file folded.
    pub fn of(bytes: &[u8]) -> Chat {
        let mut chat = Chat::default();
        for (line, complete) in host_shim::harnesses::logfile::lines(bytes) {
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            if !complete {
                chat.skipped += 1; // still being written
                continue;
            }
            chat.take(line);
        }
        chat
    }
}

impl ChatMessage {
    /// The text parts of `content` (a user's), in order.
    pub fn text_parts(&self) -> Vec<&str> {
        parts_text(&self.content)
    }

    /// What the person typed: `displayContent`, else the text parts without a hook's
    /// context.
    pub fn person_words(&self) -> Option<String> {
        let parts = match &self.display_content {
            Some(display) => parts_text(display),
            None => (self.text_parts().into_iter())
                .flat_map(segments)
                .filter_map(|segment| match segment {
                    Segment::Words(words) => Some(words),
                    Segment::Context(_) => None,
                })
                .collect(),
        };
        let words = parts.join("\n");
        (!words.trim().is_empty()).then_some(words)
    }

    /// Whether this user message is only the tools' results.
    pub fn is_tool_results(&self) -> bool {
        let Some(parts) = self.content.as_array() else {
            return false;
        };
        !parts.is_empty() && parts.iter().all(|p| p.get("functionResponse").is_some())
    }

    /// The hooks' context in the tools' results (an `AfterTool` hook's, appended to
    /// the output), in order.
    pub fn result_contexts(&self) -> Vec<&str> {
        let outputs = (self.content.as_array().into_iter().flatten()).filter_map(|p| {
            p.get("functionResponse")?
                .get("response")?
                .get("output")?
                .as_str()
        });
        outputs
            .flat_map(segments)
            .filter_map(|segment| match segment {
                Segment::Context(context) => Some(context),
                Segment::Words(_) => None,
            })
            .collect()
    }
}

/// A piece of a text part: a hook's `<hook_context>…</hook_context>` block, or what
/// lies between such blocks.
#[derive(Debug, PartialEq, Eq)]
pub enum Segment<'a> {
    Context(&'a str),
    Words(&'a str),
}

/// `text` cut at each hook's block: a `BeforeAgent` hook's is a part of its own, a
/// `SessionStart` hook's is put before the prompt in its part, an `AfterTool` hook's
/// after a tool's output. Blank pieces between blocks are dropped.
pub fn segments(text: &str) -> Vec<Segment<'_>> {
    (tagged(text, "<hook_context>", "</hook_context>").into_iter())
        .filter_map(|piece| match piece {
            Tagged::Inside(context) => Some(Segment::Context(context)),
            Tagged::Outside(words) => Some(words.trim())
                .filter(|words| !words.is_empty())
                .map(Segment::Words),
        })
        .collect()
}

fn parts_text(value: &serde_json::Value) -> Vec<&str> {
    match value {
        serde_json::Value::String(text) => vec![text.as_str()],
        serde_json::Value::Array(parts) => (parts.iter())
            .filter_map(|p| p.get("text").and_then(|t| t.as_str()))
            .collect(),
        _ => Vec::new(),
    }
}

/// Gemini's own context before the first prompt (the date, the OS, the folders).
pub fn is_session_context(text: &str) -> bool {
    text.starts_with("<session_context>")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_fold_as_gemini_writes_them() {
        let lines = [
            r#"{"sessionId":"s1","startTime":"2026-12-05T10:29:48.703Z","kind":"main"}"#,
            r#"{"$set":{"messages":[{"id":"a","type":"user","content":[{"text":"<session_context>\nctx\n</session_context>"}]}]}}"#,
            r#"{"id":"b","type":"user","content":[{"text":"Go"},{"text":"<hook_context>H</hook_context>"}],"displayContent":[{"text":"Go"}]}"#,
            r#"{"id":"c","type":"gemini","content":"","model":"m1"}"#,
            r#"{"id":"c","type":"gemini","content":"","model":"m1","toolCalls":[{"name":"run_shell_command","args":{"command":"ls"},"status":"success"}]}"#,
            r#"{"id":"d","type":"user","content":[{"functionResponse":{"name":"run_shell_command","response":{}}}]}"#,
            r#"{"$set":{"summary":"Listing","lastUpdated":"x"}}"#,
            "not json",
            r#"{"id":"e","type":"gem"#,
        ];
        let chat = Chat::of(lines.join("\n").as_bytes());
        assert_eq!(chat.header.session_id, "s1");
        assert_eq!(chat.header.summary.as_deref(), Some("Listing"));
        let ids: Vec<&str> = chat.messages.iter().map(|m| m.id.as_str()).collect();
        assert_eq!(ids, ["a", "b", "c", "d"]);
        assert_eq!(chat.messages[2].tool_calls.len(), 1);
        assert_eq!(chat.messages[1].person_words().as_deref(), Some("Go"));
        assert!(chat.messages[3].is_tool_results());
        assert!(is_session_context(chat.messages[0].text_parts()[0]));
        assert_eq!(
            segments("<hook_context>S</hook_context>\n\nGo"),
            [Segment::Context("S"), Segment::Words("Go")]
        );
        assert_eq!(
            segments("out\n\n\n<hook_context>T</hook_context>"),
            [Segment::Words("out"), Segment::Context("T")]
        );
        assert_eq!(
            segments("<hook_context>open"),
            [Segment::Words("<hook_context>open")]
        );
        // The damaged line and the half-written last one.
        assert_eq!(chat.skipped, 2);
    }
}
