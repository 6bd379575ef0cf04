//! One line of a Codex rollout (`CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`), as
//! Codex 0.169.0 writes it: `{timestamp, ordinal, type, payload}`. Only what the store
//! uses is read; a line that is not such a record is skipped and counted.
//!
//! - `session_meta` (the first record): the thread's id, creation time, cwd, provider,
//!   and, for a spawned agent, `parent_thread_id` and `thread_source: "subagent"`; for
//!   a fork, `forked_from_id` and `history_base` (the base thread's records before
//!   `end_ordinal_exclusive`, which the fork's file does not copy).
//! - `turn_context`: the cwd and model of each turn.
//! - `response_item` with `payload.type: "message"`: what the model sees, each content
//!   part with its provenance in
//!   `internal_chat_message_metadata_passthrough.content_item_metadata[]` (`user` for
//!   the person; `harness`, `skills`, `agents_md`, a hook, … for what Codex put there).
//!   Reasoning and the rest are not messages.
//! - `response_item` with `payload.type: "function_call"` (or `custom_tool_call`): a
//!   tool call the model made (`name`, `arguments` or `input`, `call_id`);
//!   `function_call_output` (or `custom_tool_call_output`) ends it (`call_id`). Only
//!   whether it failed is read of the output, never its text.
//! - `compacted`: a compaction: `replacement_history` is the model's input from then on
//!   (ending with the summary, whose text is `message`).

use host_shim::contract::latest::Role;
use serde::Deserialize;

#[derive(Debug, Deserialize)]
pub struct Record {
    #[serde(default)]
    pub ordinal: Option<u64>,
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub payload: serde_json::Value,
}

impl Record {
    pub fn parse(line: &[u8]) -> Option<Record> {
        host_shim::json::from_slice(line).ok()
    }
}

fn text_of<'a>(value: &'a serde_json::Value, key: &str) -> Option<&'a str> {
    value.get(key)?.as_str().filter(|s| !s.is_empty())
}

/// A thread's `session_meta`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Meta {
    pub id: Option<String>,
    pub created: Option<String>,
    pub cwd: Option<String>,
    pub provider: Option<String>,
    pub parent: Option<String>,
    pub subagent: bool,
    pub forked_from: Option<String>,
    /// The base thread's records a fork's surface starts with: those before this
    /// ordinal, within this many bytes of its file.
    pub base_end: Option<(u64, u64)>,
}

impl Meta {
    pub fn of(payload: &serde_json::Value) -> Meta {
        let base = payload.get("history_base");
        let base_end = base.and_then(|base| {
            Some((
                base.get("end_ordinal_exclusive")?.as_u64()?,
                base.get("end_byte_offset")?.as_u64()?,
            ))
        });
        Meta {
            id: text_of(payload, "id").map(str::to_string),
            created: text_of(payload, "timestamp").map(str::to_string),
            cwd: text_of(payload, "cwd").map(str::to_string),
            provider: text_of(payload, "model_provider").map(str::to_string),
            parent: text_of(payload, "parent_thread_id").map(str::to_string),
            subagent: text_of(payload, "thread_source") == Some("subagent"),
            forked_from: text_of(payload, "forked_from_id").map(str::to_string),
            base_end,
        }
    }
}

/// One message of the model's input, from a `response_item` (or an item of a
/// compaction's `replacement_history`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Said {
    pub role: Role,
    /// The text parts joined by a line feed; `None` without one.
    pub text: Option<String>,
    /// Codex put it there: no text part of it came from the person (or, for the
    /// model's own messages, never).
    pub injected: bool,
    /// Some text part came from the person.
    pub from_person: bool,
}

impl Said {
    /// The message a response item is, if it is one.
    pub fn of(item: &serde_json::Value) -> Option<Said> {
        if item.get("type")?.as_str()? != "message" {
            return None;
        }
        let role = match item.get("role")?.as_str()? {
            "assistant" => Role::Assistant,
            "user" => Role::User,
            _ => Role::System, // developer and system instructions
        };
        let provenances: Vec<Option<&str>> = item
            .pointer("/internal_chat_message_metadata_passthrough/content_item_metadata")
            .and_then(|m| m.as_array())
            .map(|items| {
                items
                    .iter()
                    .map(|m| m.pointer("/provenance/type").and_then(|t| t.as_str()))
                    .collect()
            })
            .unwrap_or_default();
        let mut texts: Vec<&str> = Vec::new();
        let mut from_person = false;
        let mut from_codex = false;
        for (index, part) in (item.get("content")?.as_array()?.iter()).enumerate() {
            let kind = part.get("type").and_then(|t| t.as_str()).unwrap_or("");
            if !matches!(kind, "input_text" | "output_text" | "text") {
                continue; // images, audio, … never cross
            }
            let Some(text) = part.get("text").and_then(|t| t.as_str()) else {
                continue;
            };
            texts.push(text);
            match provenances.get(index).copied().flatten() {
                Some("user") => from_person = true,
                Some(_) => from_codex = true,
                None => {}
            }
        }
        let text = (!texts.is_empty()).then(|| texts.join("\n"));
        Some(Said {
            role,
            text,
            injected: role != Role::Assistant && from_codex && !from_person,
            from_person: role == Role::User && from_person,
        })
    }
}

/// A tool call the model made, from a `function_call` or `custom_tool_call` item.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Called {
    pub call_id: String,
    pub name: String,
    /// The arguments as recorded (JSON text for a function), cut to the WIT's 1024
    /// bytes at a char boundary.
    pub input: String,
}

impl Called {
    pub fn of(item: &serde_json::Value) -> Option<Called> {
        let kind = item.get("type")?.as_str()?;
        if !matches!(kind, "function_call" | "custom_tool_call") {
            return None;
        }
        let input = text_of(item, "arguments")
            .or_else(|| text_of(item, "input"))
            .unwrap_or("");
        Some(Called {
            call_id: text_of(item, "call_id").unwrap_or_default().to_string(),
            name: text_of(item, "name").unwrap_or("(unnamed)").to_string(),
            input: host_shim::harnesses::surface::action_input(input),
        })
    }
}

/// How a call ended, from a `function_call_output` or `custom_tool_call_output` item:
/// its call id, and whether it failed (the output says `"success": false`, or a
/// command's `Exit code:` is not 0).
pub fn call_ended(item: &serde_json::Value) -> Option<(String, bool)> {
    let kind = item.get("type")?.as_str()?;
    if !matches!(kind, "function_call_output" | "custom_tool_call_output") {
        return None;
    }
    let call_id = text_of(item, "call_id")?.to_string();
    let output = item.get("output");
    let said_failure = output
        .and_then(|o| o.get("success"))
        .and_then(serde_json::Value::as_bool)
        == Some(false);
    let exit_code = (output.and_then(serde_json::Value::as_str))
        .and_then(|text| text.strip_prefix("Exit code: "))
        .and_then(|rest| rest.split(['\n', ' ']).next())
        .and_then(|code| code.parse::<i64>().ok());
    Some((
        call_id,
        said_failure || exit_code.is_some_and(|code| code != 0),
    ))
}

/// What a Stop hook's block gave the model, unwrapped: Codex 0.169.0 records the
/// reason as a user message `<hook_prompt hook_run_id="…">REASON</hook_prompt>`.
pub fn hook_prompt(text: &str) -> Option<&str> {
    let rest = text.strip_prefix("<hook_prompt")?;
    let inner = &rest[rest.find('>')? + 1..];
    inner.strip_suffix("</hook_prompt>")
}

/// The message ids of the frames a rollout records given to the thread (a hook's
/// context, a Stop hook's block reason, a turn the daemon started): what witnesses a
/// hand-over. The file is read from `from` (its end, or where it stood when the offers
/// were made), compactions included; none when it does not exist yet.
pub fn handed_over_ids(
    path: &std::path::Path,
    from: host_shim::harnesses::logfile::ReadFrom<'_>,
) -> anyhow::Result<host_shim::inbox::Shown> {
    use anyhow::Context;
    let mut texts = Vec::new();
    host_shim::harnesses::logfile::each_whole_line(path, from, |line| {
        let said = (Record::parse(line))
            .filter(|record| record.kind == "response_item")
            .and_then(|record| Said::of(&record.payload));
        // The model's own words never witness a hand-over.
        if let Some(said) = said.filter(|said| said.role != Role::Assistant) {
            texts.extend(said.text);
        }
    })
    .with_context(|| format!("cannot read the rollout {}", path.display()))?;
    Ok(host_shim::inbox::shown_in(
        texts.iter().map(|text| hook_prompt(text).unwrap_or(text)),
    ))
}

/// The turn's cwd and model, from a `turn_context`.
pub fn turn(payload: &serde_json::Value) -> (Option<String>, Option<String>) {
    (
        text_of(payload, "cwd").map(str::to_string),
        text_of(payload, "model").map(str::to_string),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn frame(id: &str) -> String {
        format!(
            "Cross-session message from another session of this harness.\nfrom-session: a (\"A\")\n\
             delivery: queue\nhop: 1\nmessage-id: {id}\n--- message begins ---\nhi\n--- message ends ---"
        )
    }

    #[test]
    fn the_rollout_witnesses_what_hooks_and_turns_gave_and_never_the_models_words() {
        let item = |role: &str, text: &str| {
            json!({"type": "response_item", "payload": {"type": "message", "role": role,
                "content": [{"type": "input_text", "text": text}]}})
            .to_string()
        };
        let lines = [
            // A hook's context (Codex records it as a developer message).
            item("developer", &frame("m-000000000001")),
            // A Stop hook's block reason, wrapped.
            item(
                "user",
                &format!(
                    "<hook_prompt hook_run_id=\"stop:1\">{}\n\n{}</hook_prompt>",
                    frame("m-000000000002"),
                    frame("m-000000000003")
                ),
            ),
            // A turn the daemon started.
            item("user", &frame("m-000000000004")),
            // The model quoting a frame, and a half-written last line.
            item("assistant", &frame("m-0000000000ff")),
            "{\"type\": \"response_item\", \"pay".to_string(),
        ];
        assert_eq!(
            host_shim_testkit::witnessed_in("rollout", handed_over_ids, &lines.join("\n")),
            [
                "m-000000000001",
                "m-000000000002",
                "m-000000000003",
                "m-000000000004"
            ]
        );
    }

    #[test]
    fn a_stop_hooks_reason_is_unwrapped() {
        assert_eq!(
            hook_prompt(
                "<hook_prompt hook_run_id=\"stop:2:/h/hooks.json\">the reason</hook_prompt>"
            ),
            Some("the reason")
        );
        assert_eq!(hook_prompt("<hook_prompt>x"), None);
        assert_eq!(hook_prompt("plain"), None);
    }

    #[test]
    fn provenance_says_who_wrote_a_message() {
        let person = json!({"type": "message", "role": "user",
            "content": [{"type": "input_text", "text": "Plan the beds"}],
            "internal_chat_message_metadata_passthrough": {"content_item_metadata": [{"provenance": {"type": "user"}}]}});
        let said = Said::of(&person).unwrap();
        assert_eq!((said.injected, said.from_person), (false, true));
        let context = json!({"type": "message", "role": "user",
            "content": [{"type": "input_text", "text": "<environment_context>…"}],
            "internal_chat_message_metadata_passthrough": {"content_item_metadata": [{"provenance": {"type": "harness", "hook": false}}]}});
        assert!(Said::of(&context).unwrap().injected);
        let model = json!({"type": "message", "role": "assistant",
            "content": [{"type": "output_text", "text": "Done."}, {"type": "output_text", "text": "Twice."}]});
        let said = Said::of(&model).unwrap();
        assert_eq!(said.text.as_deref(), Some("Done.\nTwice."));
        assert!(!said.injected);
        assert_eq!(
            Said::of(&json!({"type": "function_call", "name": "x"})),
            None
        );
    }
}
