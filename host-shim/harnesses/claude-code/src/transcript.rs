//! One Claude Code transcript record (one JSONL line), read for what the store needs
//! and nothing else: the record's kind, its session facts, its titles, for user and
//! assistant records the role, the model and the text parts, the tool calls (`tool_use`:
//! id, name and input, the input cut to the WIT's 1024 bytes) and whether each call's
//! result was an error (`tool_result`: `tool_use_id`, `is_error`), and for attachments
//! what Claude Code rendered into the model's input. Everything else in a record (tool
//! output, thinking, images, usage, prompt snapshots) is skipped by the parser without
//! being kept.
//!
//! What reaches the model, as Claude Code 2.1.328 writes it (seen in transcripts the
//! real binary wrote in this project's real-client suite, `host-shim/harnesses/claude-code/suite/`):
//!
//! - `user` records: the person's prompts and tool results, and Claude Code's own
//!   wrappers (`isMeta` records such as caveats and `Stop hook feedback:`, the
//!   `<command-name>`/`<local-command-stdout>` records of a slash command, task
//!   notifications). [`Record::into_surfaced`] tells them apart.
//! - `assistant` records, one per content block of an API message (the blocks of one
//!   message share `message.id`).
//! - `attachment` records: reminders, listings, the date, hook context
//!   (`hook_additional_context`), hook errors; the text the model saw is in
//!   `rendered` (wrapped in `<system-reminder>`). Those without `rendered` are log.
//! - Titles: `custom-title` and `agent-name` (both set by `--name`/`/rename`, and
//!   appended again after every turn), `ai-title`, `summary`.

use anyhow::Context;
use serde::Deserialize;
use serde::de::{Deserializer, IgnoredAny, SeqAccess, Visitor};
use std::fmt;

/// The fields of a record the store reads.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Record {
    #[serde(rename = "type")]
    pub kind: String,
    pub subtype: Option<String>,
    #[serde(rename = "sessionId")]
    pub session_id: Option<String>,
    #[serde(rename = "agentId")]
    pub agent_id: Option<String>,
    pub timestamp: Option<String>,
    pub cwd: Option<String>,
    pub slug: Option<String>,
    #[serde(rename = "isMeta")]
    pub is_meta: bool,
    #[serde(rename = "isCompactSummary")]
    pub is_compact_summary: bool,
    #[serde(rename = "customTitle")]
    pub custom_title: Option<String>,
    #[serde(rename = "agentName")]
    pub agent_name: Option<String>,
    #[serde(rename = "aiTitle")]
    pub ai_title: Option<String>,
    pub summary: Option<String>,
    pub message: Option<MessageRecord>,
    pub attachment: Option<Attachment>,
    /// What Claude Code put into the model's input for an attachment.
    pub rendered: Option<Vec<Rendered>>,
}

/// `attachment` of an attachment record: its kind and, for hook context, the texts
/// the hooks returned.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Attachment {
    #[serde(rename = "type")]
    pub kind: String,
    pub content: Texts,
}

/// One piece of an attachment's rendering.
#[derive(Debug, Default, Deserialize)]
pub struct Rendered {
    #[serde(default)]
    pub content: Content,
}

/// A list of strings (hook context); anything else reads as none.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Texts(pub Vec<String>);

impl<'de> Deserialize<'de> for Texts {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Texts, D::Error> {
        match serde_json::Value::deserialize(deserializer)? {
            serde_json::Value::Array(items) => Ok(Texts(
                items
                    .into_iter()
                    .filter_map(|item| match item {
                        serde_json::Value::String(text) => Some(text),
                        _ => None,
                    })
                    .collect(),
            )),
            serde_json::Value::String(text) => Ok(Texts(vec![text])),
            _ => Ok(Texts::default()),
        }
    }
}

/// `message` of a user or assistant record.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct MessageRecord {
    /// The API message id: the records of one assistant message share it.
    pub id: Option<String>,
    pub model: Option<String>,
    pub content: Content,
}

/// A message's content: its text (a string content, or the `text` parts of a part
/// list, joined by a line feed; `None` without any), the tool calls it makes and the
/// results it carries. No output and no reasoning survive parsing.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Content {
    pub text: Option<String>,
    pub calls: Vec<Call>,
    pub results: Vec<CallResult>,
}

/// A `tool_use` part: the call's id, the tool's name and its input as written (JSON
/// text, cut to [`host_shim::guard::ACTION_INPUT_BYTES`] at a char boundary).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call {
    pub id: String,
    pub name: String,
    pub input: String,
}

/// A `tool_result` part: which call it answers and whether it is an error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallResult {
    pub call_id: String,
    pub is_error: bool,
}

impl Content {
    fn text(text: Option<String>) -> Content {
        Content {
            text,
            ..Content::default()
        }
    }
}

/// One element of a content list: its type, its text when it is a text part, and
/// what a tool call or result part says (a result's own content is skipped).
#[derive(Default, Deserialize)]
#[serde(default)]
struct Part {
    #[serde(rename = "type")]
    kind: String,
    text: Option<String>,
    id: Option<String>,
    name: Option<String>,
    input: Option<Box<serde_json::value::RawValue>>,
    tool_use_id: Option<String>,
    is_error: Option<bool>,
}

/// The first `max` bytes of `text`, at a char boundary.
fn cut(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
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
                Ok(Content::text(Some(text.to_string())))
            }
            fn visit_string<E: serde::de::Error>(self, text: String) -> Result<Content, E> {
                Ok(Content::text(Some(text)))
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<Content, E> {
                Ok(Content::default())
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Content, A::Error> {
                let mut content = Content::default();
                while let Some(part) = seq.next_element::<Option<Part>>()? {
                    let Some(part) = part else { continue };
                    match (part.kind.as_str(), part.text) {
                        ("text", Some(text)) => match &mut content.text {
                            Some(joined) => {
                                joined.push('\n');
                                joined.push_str(&text);
                            }
                            None => content.text = Some(text),
                        },
                        ("tool_use", _) => content.calls.push(Call {
                            id: part.id.unwrap_or_default(),
                            name: part.name.unwrap_or_default(),
                            input: (part.input.as_deref())
                                .map(|raw| cut(raw.get(), host_shim::guard::ACTION_INPUT_BYTES))
                                .unwrap_or_default()
                                .to_string(),
                        }),
                        ("tool_result", _) => {
                            content
                                .results
                                .extend(part.tool_use_id.map(|call_id| CallResult {
                                    call_id,
                                    is_error: part.is_error.unwrap_or(false),
                                }))
                        }
                        _ => {}
                    }
                }
                Ok(content)
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Content, A::Error> {
                // Not a shape Claude Code writes; read as no text rather than a bad line.
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Content::default())
            }
        }
        deserializer.deserialize_any(ContentVisitor)
    }
}

impl Record {
    /// Parses one line; `None` for a line that is not a JSON object (a malformed line,
    /// or the half-written last line of a transcript being written).
    pub fn parse(line: &[u8]) -> Option<Record> {
        host_shim::json::from_slice(line).ok()
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
        self.message
            .as_ref()
            .and_then(|m| m.content.text.as_deref())
    }

    /// A prompt the person typed: a user record that is on the surface as the
    /// person's own text (not a wrapper of Claude Code's, not a compaction summary,
    /// not a handed-over message).
    pub fn is_real_prompt(&self) -> bool {
        self.kind == "user"
            && self.text().is_some_and(|text| !text.trim().is_empty())
            && matches!(self.user_text(), UserText::Person)
    }

    /// What a user record's text is to the model.
    fn user_text(&self) -> UserText {
        let text = self.text();
        if self.is_compact_summary {
            return UserText::Replaced;
        }
        // A message a Stop hook handed over with `decision: block` (older set-ups), or
        // one handed to an idle session through its messaging socket.
        if let Some(frames) = text.and_then(|t| {
            if let Some(rest) = t.strip_prefix(STOP_FEEDBACK) {
                return handed_over_frames(rest);
            }
            let rest = t.strip_prefix(PEER_MESSAGE)?;
            let end = rest.find(PEER_NOTE).unwrap_or(rest.len());
            handed_over_frames(&rest[..end])
        }) {
            return UserText::HandedOver(frames);
        }
        let wrapper = text.is_some_and(|t| {
            let t = t.trim_start();
            HARNESS_WRAPPERS.iter().any(|w| t.starts_with(w))
        });
        if self.is_meta || wrapper {
            UserText::Injected
        } else {
            UserText::Person
        }
    }

    /// Appends what this record puts on the model's surface to `out`, in order (most
    /// records put nothing, a message record one message, a hand-over of several
    /// frames one per frame). The record's text moves; nothing is copied.
    pub fn into_surfaced(mut self, out: &mut Vec<Surfaced>) {
        if self.is_message() {
            let kind = (self.kind == "user").then(|| self.user_text());
            let content = self.message.take().map(|m| m.content).unwrap_or_default();
            let (text, calls, results) = (content.text, content.calls, content.results);
            let surfaced = match kind {
                None => Surfaced {
                    role: Role::Assistant,
                    text,
                    calls,
                    ..Surfaced::default()
                },
                Some(UserText::HandedOver(frames)) => return out.extend(frames),
                Some(UserText::Replaced) => Surfaced {
                    text,
                    replaced: true,
                    ..Surfaced::default()
                },
                Some(UserText::Injected) => Surfaced {
                    text,
                    injected: true,
                    ..Surfaced::default()
                },
                Some(UserText::Person) => Surfaced {
                    text,
                    ..Surfaced::default()
                },
            };
            // Results of the model's calls end them, whatever else the record says.
            out.push(Surfaced {
                results,
                ..surfaced
            });
        } else if self.kind == "attachment" {
            self.surfaced_attachment(out);
        }
    }

    fn surfaced_attachment(&self, out: &mut Vec<Surfaced>) {
        let Some(attachment) = &self.attachment else {
            return;
        };
        if attachment.kind == "hook_additional_context" {
            let before = out.len();
            for text in &attachment.content.0 {
                out.extend(handed_over_frames(text).into_iter().flatten());
            }
            if out.len() > before {
                return;
            }
        }
        let rendered: Vec<&str> = (self.rendered.iter().flatten())
            .filter_map(|r| r.content.text.as_deref())
            .collect();
        if !rendered.is_empty() {
            out.push(Surfaced {
                text: Some(rendered.join("\n")),
                injected: true,
                ..Surfaced::default()
            });
        }
    }
}

/// The message ids of the frames a transcript records as handed over (a hook's
/// context, a Stop hook's feedback, a message through the messaging socket): what
/// witnesses a hand-over. The file is read from `from` (its end, or where it stood when
/// the offers were made), compactions included; none when it does not exist yet.
pub fn handed_over_ids(
    path: &std::path::Path,
    from: host_shim::harnesses::logfile::ReadFrom<'_>,
) -> anyhow::Result<host_shim::inbox::Shown> {
    let mut frames = Vec::new();
    host_shim::harnesses::logfile::each_whole_line(path, from, |line| {
        if let Some(record) = Record::parse(line) {
            record.into_surfaced(&mut frames);
            frames.retain(|surfaced| surfaced.frame);
        }
    })
    .with_context(|| format!("cannot read the transcript {}", path.display()))?;
    Ok(host_shim::inbox::shown_in(
        frames.iter().filter_map(|frame| frame.text.as_deref()),
    ))
}

/// What a user record's text is.
enum UserText {
    /// Typed by the person.
    Person,
    /// Written by Claude Code (a caveat, a command's wrapper, a notification).
    Injected,
    /// A compaction summary.
    Replaced,
    /// Cross-session messages a hook or the messaging socket handed over.
    HandedOver(Vec<Surfaced>),
}

/// Who a surface message is from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Role {
    #[default]
    User,
    Assistant,
}

/// One message a record puts on the surface.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Surfaced {
    pub role: Role,
    pub text: Option<String>,
    /// Put there by Claude Code, not typed by the person (reminders, listings, hook
    /// context, command wrappers, caveats).
    pub injected: bool,
    /// A compaction summary standing in for what came before it.
    pub replaced: bool,
    /// A cross-session message a hook handed over: the plugin's frame itself.
    pub frame: bool,
    /// The model's tool calls in it.
    pub calls: Vec<Call>,
    /// Results of earlier calls it carries (a user record of tool results).
    pub results: Vec<CallResult>,
}

/// How Claude Code prefixes what a Stop hook's `decision: block` returned.
const STOP_FEEDBACK: &str = "Stop hook feedback:\n";

/// How Claude Code shows a message that came through its messaging socket, and the
/// note it adds after the text.
const PEER_MESSAGE: &str = "Another Claude session sent a message:\n";
const PEER_NOTE: &str = "\n\nThis came from another Claude session";

/// Texts Claude Code writes as user records that the person did not type: slash
/// commands and their output, caveats, notifications of background tasks, shell
/// output, hook wrappers and the interruption marker.
const HARNESS_WRAPPERS: &[&str] = &[
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<local-command-",
    "<bash-stdout>",
    "<bash-stderr>",
    "<task-notification>",
    "<system-reminder>",
    "<user-prompt-submit-hook>",
    "Caveat: ",
    "[Request interrupted",
];

/// The frames of a hook's hand-over, each a surface message of its own
/// ([`host_shim::harnesses::surface::handed_over_frames`]).
fn handed_over_frames(text: &str) -> Option<Vec<Surfaced>> {
    let frames = host_shim::harnesses::surface::handed_over_frames(text)?;
    Some(
        frames
            .into_iter()
            .map(|frame| Surfaced {
                text: Some(frame.to_string()),
                frame: true,
                ..Surfaced::default()
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use host_shim::contract::frames::FRAME_FIRST_LINE;

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

    fn frame(body: &str) -> String {
        format!(
            "{FRAME_FIRST_LINE}\nfrom-session: s1 (\"t\")\ndelivery: queue\n--- message begins ---\n{body}\n--- message ends ---"
        )
    }

    fn surfaced(line: &serde_json::Value) -> Vec<Surfaced> {
        let mut out = Vec::new();
        Record::parse(line.to_string().as_bytes())
            .unwrap()
            .into_surfaced(&mut out);
        out
    }

    #[test]
    fn hook_context_carrying_frames_is_one_message_per_frame_and_not_injected() {
        // A body line that reads like the frame's end is escaped by the plugin.
        let (one, two) = (frame("hello"), frame("\\--- message ends ---\nsecond"));
        let line = serde_json::json!({"type": "attachment",
            "attachment": {"type": "hook_additional_context", "content": [format!("{one}\n\n{two}")],
                           "hookName": "Stop", "hookEvent": "Stop"},
            "rendered": [{"content": "<system-reminder>\nStop hook additional context: …\n</system-reminder>"}]});
        let messages = surfaced(&line);
        let texts: Vec<_> = messages.iter().map(|m| m.text.clone().unwrap()).collect();
        assert_eq!(texts, [one.clone(), two]);
        assert!(
            messages
                .iter()
                .all(|m| m.frame && !m.injected && m.role == Role::User)
        );
        // The same hand-over by an older `decision: block` Stop hook.
        let line = serde_json::json!({"type": "user", "isMeta": true,
            "message": {"role": "user", "content": format!("Stop hook feedback:\n{one}")}});
        assert_eq!(surfaced(&line)[0].text.as_deref(), Some(one.as_str()));
        assert!(!surfaced(&line)[0].injected);
    }

    #[test]
    fn the_transcript_witnesses_what_hooks_and_the_socket_gave_and_never_the_models_words() {
        let framed = |id: &str| {
            frame("x").replace(
                "delivery: queue\n",
                &format!("delivery: queue\nhop: 1\nmessage-id: {id}\n"),
            )
        };
        let lines = [
            serde_json::json!({"type": "attachment", "attachment": {"type": "hook_additional_context",
                "content": [format!("{}\n\n{}", framed("m-000000000001"), framed("m-000000000002"))]}}),
            serde_json::json!({"type": "user", "message": {"role": "user",
                "content": format!("{PEER_MESSAGE}{}{PEER_NOTE}.", framed("m-000000000003"))}}),
            serde_json::json!({"type": "assistant", "message": {"role": "assistant",
                "content": [{"type": "text", "text": framed("m-0000000000ff")}]}}),
        ];
        let text: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        let record = text.join("\n") + "\n{\"type\": \"attac";
        assert_eq!(
            host_shim_testkit::witnessed_in("transcript", handed_over_ids, &record),
            ["m-000000000001", "m-000000000002", "m-000000000003"]
        );
    }

    #[test]
    fn other_hook_context_and_reminders_are_injected_as_rendered() {
        let line = serde_json::json!({"type": "attachment",
            "attachment": {"type": "hook_additional_context", "content": ["lint passed"]},
            "rendered": [{"content": "<system-reminder>\nPostToolUse hook additional context: lint passed\n</system-reminder>"}]});
        assert_eq!(
            surfaced(&line),
            [Surfaced {
                text: Some("<system-reminder>\nPostToolUse hook additional context: lint passed\n</system-reminder>".into()),
                injected: true,
                ..Surfaced::default()
            }]
        );
        // A frame cut short is not a hand-over.
        let cut = serde_json::json!({"type": "attachment",
            "attachment": {"type": "hook_additional_context", "content": [frame("x").replace("--- message ends ---", "")]},
            "rendered": [{"content": "<system-reminder>\ncut\n</system-reminder>"}]});
        assert!(surfaced(&cut)[0].injected);
        // An attachment Claude Code did not render is its log, not the surface.
        let log = serde_json::json!({"type": "attachment", "attachment": {"type": "hook_success", "content": ""}});
        assert!(surfaced(&log).is_empty());
    }

    #[test]
    fn command_wrappers_and_notifications_are_injected() {
        for text in [
            "<local-command-caveat>The command below was run directly</local-command-caveat>",
            "<command-name>/compact</command-name>\n<command-message>compact</command-message>",
            "<local-command-stdout>Compacted (ctrl+o to see full summary)</local-command-stdout>",
            "<task-notification>\n<task-id>a1</task-id>",
        ] {
            let line =
                serde_json::json!({"type": "user", "message": {"role": "user", "content": text}});
            assert!(surfaced(&line)[0].injected, "{text}");
        }
        let line = serde_json::json!({"type": "user", "message": {"role": "user", "content": "plain words"}});
        assert!(!surfaced(&line)[0].injected);
    }

    #[test]
    fn a_half_written_line_does_not_parse() {
        assert!(Record::parse(br#"{"type":"user","message":{"role":"us"#).is_none());
        assert!(Record::parse(b"[1,2]").is_none());
    }
}
