//! The tool catalog: four fixed schemas, registered once per deployment. Kept small on
//! purpose: they sit in the prefix of every request of a session that mounts the plugin.

use crate::Settings;
use crate::args::SESSION_ID_MAX_CHARS;

/// A tool's MCP annotations (`tools.tool-annotations`): what a client decides from
/// whether the tool may run without asking.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Annotations {
    pub title: &'static str,
    pub read_only: bool,
    /// For a tool that changes something: whether it may destroy or overwrite.
    pub destructive: Option<bool>,
    /// For a tool that changes something: whether repeating a call changes nothing
    /// more (a retried send delivers once).
    pub idempotent: Option<bool>,
    /// Whether it reaches beyond the harness's own sessions.
    pub open_world: bool,
}

impl Annotations {
    const fn read_only(title: &'static str) -> Annotations {
        Annotations {
            title,
            read_only: true,
            destructive: None,
            idempotent: None,
            open_world: false,
        }
    }
}

/// One tool as the harness registers it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolSpec {
    pub name: &'static str,
    pub description: &'static str,
    /// JSON Schema of the arguments object, as JSON text. Every string states its
    /// bound (`maxLength`); `message`'s is the deployment's `maxSendChars`.
    pub input_schema: String,
    pub annotations: Annotations,
}

/// The four tools for a deployment's settings. An argument the deployment turns off
/// (`include_actions`, `await_reply_seconds`) is left out of its schema.
pub fn tools(settings: &Settings) -> Vec<ToolSpec> {
    let actions = if settings.allow_actions {
        r#","include_actions":{"type":"boolean"}"#
    } else {
        ""
    };
    let await_reply = if settings.max_await_seconds > 0 {
        format!(
            r#","await_reply_seconds":{{"type":"integer","minimum":0,"maximum":{}}}"#,
            settings.max_await_seconds
        )
    } else {
        String::new()
    };
    vec![
        ToolSpec {
            name: crate::list::NAME,
            description: "List this harness's other sessions, newest first (yours last). \
                query: up to 16 words matched in id, title, cwd or preset.",
            input_schema: format!(
                r#"{{"type":"object","properties":{{"query":{{"type":"string","maxLength":{}}},"scope":{{"enum":["top-level","subagents","all"]}},"live_only":{{"type":"boolean"}},"limit":{{"type":"integer","minimum":1,"maximum":200}}}},"additionalProperties":false}}"#,
                crate::list::QUERY_MAX_CHARS
            ),
            annotations: Annotations::read_only("List sessions"),
        },
        ToolSpec {
            name: crate::read::NAME,
            description: "Read the latest text messages of a session, newest first. \
                Never wakes it. include_actions: its tool calls too.",
            input_schema: format!(
                r#"{{"type":"object","properties":{{"session_id":{{"type":"string","maxLength":{}}},"max_messages":{{"type":"integer","minimum":1,"maximum":100}},"include_injected":{{"type":"boolean"}},"include_system":{{"type":"boolean"}}{actions},"before_seq":{{"type":"integer","minimum":1}}}},"required":["session_id"],"additionalProperties":false}}"#,
                SESSION_ID_MAX_CHARS
            ),
            annotations: Annotations::read_only("Read a session"),
        },
        ToolSpec {
            name: crate::send::NAME,
            description: "Send a message to a top-level session's inbox. queue: its next turn; \
                steer: its current turn. reply_to: a message-id you got.",
            input_schema: format!(
                r#"{{"type":"object","properties":{{"session_id":{{"type":"string","maxLength":{}}},"message":{{"type":"string","maxLength":{}}},"mode":{{"enum":["queue","steer"]}},"reply_to":{{"type":"string","maxLength":14}}{await_reply}}},"required":["message"],"additionalProperties":false}}"#,
                SESSION_ID_MAX_CHARS, settings.max_send_chars
            ),
            annotations: Annotations {
                title: "Send to a session",
                read_only: false,
                destructive: Some(false),
                idempotent: Some(true),
                open_world: false,
            },
        },
        ToolSpec {
            name: crate::claim::NAME,
            description: "Claim files you will edit: other sessions' writes there are refused \
                until you release (release: true) or it ends. paths: globs in your workspace.",
            input_schema: format!(
                r#"{{"type":"object","properties":{{"paths":{{"type":"array","items":{{"type":"string","maxLength":{}}},"maxItems":{}}},"mode":{{"enum":["exclusive","shared"]}},"minutes":{{"type":"integer","minimum":1,"maximum":{}}},"reason":{{"type":"string","maxLength":{}}},"release":{{"type":"boolean"}}}},"additionalProperties":false}}"#,
                crate::claims::PATH_MAX_CHARS,
                crate::claims::MAX_PATHS,
                settings.max_claim_minutes,
                crate::claims::REASON_MAX_CHARS
            ),
            annotations: Annotations {
                title: "Claim files",
                read_only: false,
                destructive: Some(false),
                idempotent: Some(true),
                open_world: false,
            },
        },
    ]
}

/// Bytes of names, descriptions and schemas together: the catalog's cost in every
/// request prefix (annotations are the client's, not the model's, and not counted).
pub fn catalog_bytes(tools: &[ToolSpec]) -> usize {
    tools
        .iter()
        .map(|tool| tool.name.len() + tool.description.len() + tool.input_schema.len())
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemas_are_valid_json_objects_that_close_their_properties() {
        for tool in tools(&Settings::default()) {
            let schema: serde_json::Value = serde_json::from_str(&tool.input_schema).unwrap();
            assert_eq!(schema["type"], "object", "{}", tool.name);
            assert_eq!(schema["additionalProperties"], false, "{}", tool.name);
        }
    }

    #[test]
    fn every_string_argument_states_its_bound() {
        let settings = Settings {
            max_send_chars: 1234,
            ..Settings::default()
        };
        let bounds: Vec<(String, u64)> = tools(&settings)
            .iter()
            .flat_map(|tool| {
                let schema: serde_json::Value = serde_json::from_str(&tool.input_schema).unwrap();
                let properties = schema["properties"].as_object().unwrap().clone();
                properties.into_iter().filter_map(|(name, property)| {
                    let (name, string) = match property["type"].as_str() {
                        Some("array") => (format!("{name}[]"), property["items"].clone()),
                        _ => (name, property),
                    };
                    (string["type"] == "string")
                        .then(|| (name, string["maxLength"].as_u64().expect("maxLength")))
                })
            })
            .collect();
        assert_eq!(
            bounds,
            [
                ("query".to_string(), 256),
                ("session_id".to_string(), 512),
                ("message".to_string(), 1234),
                ("reply_to".to_string(), 14),
                ("session_id".to_string(), 512),
                ("paths[]".to_string(), 1024),
                ("reason".to_string(), 80),
            ]
        );
    }

    #[test]
    fn the_catalog_stays_within_2000_bytes() {
        let bytes = catalog_bytes(&tools(&Settings::default()));
        assert!(bytes <= 2000, "catalog is {bytes} bytes");
    }

    #[test]
    fn arguments_a_deployment_turns_off_are_left_out() {
        let on = tools(&Settings::default());
        assert!(on[1].input_schema.contains("include_actions"));
        assert!(on[2].input_schema.contains(r#""maximum":120"#));
        let off = tools(&Settings {
            allow_actions: false,
            max_await_seconds: 0,
            ..Settings::default()
        });
        assert!(!off[1].input_schema.contains("include_actions"));
        assert!(!off[2].input_schema.contains("await_reply_seconds"));
    }
}
