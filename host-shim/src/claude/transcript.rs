//! One Claude Code transcript record (one JSONL line), read for what the store needs
//! and nothing else: the record's kind, its session facts, its titles and, for user
//! and assistant records, the role, the model and the text parts. Everything else in a
//! record (tool input, tool output, thinking, images, usage) is skipped by the parser
//! without being kept.

use serde::Deserialize;
use serde::de::{Deserializer, IgnoredAny, SeqAccess, Visitor};
use std::fmt;

/// The fields of a record the store reads.
#[derive(Debug, Default, Deserialize)]
pub struct Record {
    #[serde(rename = "type", default)]
    pub kind: String,
    #[serde(default)]
    pub subtype: Option<String>,
    #[serde(rename = "sessionId", default)]
    pub session_id: Option<String>,
    #[serde(rename = "agentId", default)]
    pub agent_id: Option<String>,
    #[serde(default)]
    pub timestamp: Option<String>,
    #[serde(default)]
    pub cwd: Option<String>,
    #[serde(default)]
    pub slug: Option<String>,
    #[serde(rename = "isMeta", default)]
    pub is_meta: bool,
    #[serde(rename = "isCompactSummary", default)]
    pub is_compact_summary: bool,
    #[serde(rename = "customTitle", default)]
    pub custom_title: Option<String>,
    #[serde(rename = "aiTitle", default)]
    pub ai_title: Option<String>,
    #[serde(default)]
    pub summary: Option<String>,
    #[serde(default)]
    pub message: Option<MessageRecord>,
}

/// `message` of a user or assistant record.
#[derive(Debug, Default, Deserialize)]
pub struct MessageRecord {
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub content: Content,
}

/// A message's content: only its text survives parsing (a string content, or the
/// `text` parts of a part list, joined by a line feed); `None` without any text.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Content(pub Option<String>);

/// One element of a content list: its type, and its text when it is a text part.
#[derive(Deserialize)]
struct Part {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    text: Option<String>,
}

impl<'de> Deserialize<'de> for Content {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Content, D::Error> {
        struct ContentVisitor;
        impl<'de> Visitor<'de> for ContentVisitor {
            type Value = Content;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string or a list of content parts")
            }
            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Content, E> {
                Ok(Content(Some(text.to_string())))
            }
            fn visit_string<E: serde::de::Error>(self, text: String) -> Result<Content, E> {
                Ok(Content(Some(text)))
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<Content, E> {
                Ok(Content(None))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Content, A::Error> {
                let mut joined: Option<String> = None;
                while let Some(part) = seq.next_element::<Option<Part>>()? {
                    let Some(Part {
                        kind,
                        text: Some(text),
                    }) = part
                    else {
                        continue;
                    };
                    if kind != "text" {
                        continue;
                    }
                    match &mut joined {
                        Some(joined) => {
                            joined.push('\n');
                            joined.push_str(&text);
                        }
                        None => joined = Some(text),
                    }
                }
                Ok(Content(joined))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Content, A::Error> {
                // Not a shape Claude Code writes; read as no text rather than a bad line.
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Content(None))
            }
        }
        deserializer.deserialize_any(ContentVisitor)
    }
}

impl Record {
    /// Parses one line; `None` for a line that is not a JSON object (a malformed line,
    /// or the half-written last line of a transcript being written).
    pub fn parse(line: &[u8]) -> Option<Record> {
        serde_json::from_slice(line).ok()
    }

    /// A record that is part of the conversation the model sees.
    pub fn is_message(&self) -> bool {
        (self.kind == "user" || self.kind == "assistant") && self.message.is_some()
    }

    /// The system record Claude Code writes where it compacted the conversation:
    /// what comes before it is no longer on the model's surface.
    pub fn is_compact_boundary(&self) -> bool {
        self.kind == "system" && self.subtype.as_deref() == Some("compact_boundary")
    }

    /// The message's text (text parts joined), if any.
    pub fn text(&self) -> Option<&str> {
        self.message.as_ref().and_then(|m| m.content.0.as_deref())
    }

    /// A prompt the person typed: a user record that is not meta, not a compaction
    /// summary, and whose text is not one of Claude Code's own wrappers (slash
    /// commands, their output, shell escapes, caveats, reminders).
    pub fn is_real_prompt(&self) -> bool {
        const WRAPPERS: &[&str] = &[
            "<command-name>",
            "<command-message>",
            "<command-args>",
            "<local-command-",
            "<bash-input>",
            "<bash-stdout>",
            "<bash-stderr>",
            "<system-reminder>",
            "<user-prompt-submit-hook>",
            "Caveat: ",
            "[Request interrupted",
        ];
        if self.kind != "user" || self.is_meta || self.is_compact_summary {
            return false;
        }
        match self.text().map(str::trim_start) {
            Some(text) if !text.is_empty() => !WRAPPERS.iter().any(|w| text.starts_with(w)),
            _ => false,
        }
    }
}

/// Splits a byte buffer into lines, each with whether it ended with a line feed (only
/// the last piece can be incomplete).
pub fn lines(buffer: &[u8]) -> impl Iterator<Item = (&[u8], bool)> {
    let mut rest = buffer;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        match rest.iter().position(|&b| b == b'\n') {
            Some(end) => {
                let line = &rest[..end];
                rest = &rest[end + 1..];
                Some((line, true))
            }
            None => {
                let line = rest;
                rest = &[];
                Some((line, false))
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_text_parts_survive() {
        let record = Record::parse(
            br#"{"type":"assistant","message":{"role":"assistant","model":"claude-x","content":[
                {"type":"thinking","thinking":"secret","signature":"s"},
                {"type":"text","text":"one"},
                {"type":"tool_use","id":"t","name":"Bash","input":{"command":"ls","text":"no"}},
                {"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}},
                {"type":"text","text":"two"}]}}"#,
        )
        .unwrap();
        assert!(record.is_message());
        assert_eq!(record.text(), Some("one\ntwo"));
        assert_eq!(record.message.unwrap().model.as_deref(), Some("claude-x"));
    }

    #[test]
    fn string_content_is_text_and_tool_results_are_not() {
        let record =
            Record::parse(br#"{"type":"user","message":{"role":"user","content":"hi"}}"#).unwrap();
        assert_eq!(record.text(), Some("hi"));
        assert!(record.is_real_prompt());
        let record = Record::parse(
            br#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"output"}]}]}}"#,
        )
        .unwrap();
        assert_eq!(record.text(), None);
        assert!(!record.is_real_prompt());
    }

    #[test]
    fn wrappers_and_meta_are_not_real_prompts() {
        for line in [
            r#"{"type":"user","isMeta":true,"message":{"role":"user","content":"Caveat: x"}}"#,
            r#"{"type":"user","message":{"role":"user","content":"<command-name>/clear</command-name>"}}"#,
            r#"{"type":"user","isCompactSummary":true,"message":{"role":"user","content":"This session is being continued"}}"#,
            r#"{"type":"user","message":{"role":"user","content":"  "}}"#,
        ] {
            assert!(
                !Record::parse(line.as_bytes()).unwrap().is_real_prompt(),
                "{line}"
            );
        }
    }

    #[test]
    fn a_half_written_line_does_not_parse() {
        assert!(Record::parse(br#"{"type":"user","message":{"role":"us"#).is_none());
        assert!(Record::parse(b"[1,2]").is_none());
    }

    #[test]
    fn lines_say_whether_they_ended() {
        let all: Vec<_> = lines(b"a\nb\nc").collect();
        assert_eq!(
            all,
            vec![(&b"a"[..], true), (&b"b"[..], true), (&b"c"[..], false)]
        );
    }
}
