//! The tool catalog: three fixed schemas, registered once per deployment. Kept small on
//! purpose: they sit in the prefix of every request of a session that mounts the plugin.

/// One tool as the harness registers it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ToolSpec {
    pub name: &'static str,
    pub description: &'static str,
    /// JSON Schema of the arguments object, as JSON text.
    pub input_schema: &'static str,
}

pub const TOOLS: [ToolSpec; 3] = [
    ToolSpec {
        name: crate::list::NAME,
        description: "List this harness's other sessions, newest first (yours last). \
            query: words matched in id, title, cwd or preset.",
        input_schema: r#"{"type":"object","properties":{"query":{"type":"string"},"scope":{"enum":["top-level","subagents","all"]},"live_only":{"type":"boolean"},"limit":{"type":"integer","minimum":1,"maximum":200}},"additionalProperties":false}"#,
    },
    ToolSpec {
        name: crate::read::NAME,
        description: "Read the latest text messages of a session, newest first. \
            Never wakes it.",
        input_schema: r#"{"type":"object","properties":{"session_id":{"type":"string"},"max_messages":{"type":"integer","minimum":1,"maximum":100},"include_injected":{"type":"boolean"},"include_system":{"type":"boolean"}},"required":["session_id"],"additionalProperties":false}"#,
    },
    ToolSpec {
        name: crate::send::NAME,
        description: "Send a message to a top-level session's inbox. queue: its next turn; \
            steer: its current turn. Replies come later: use sessions_read.",
        input_schema: r#"{"type":"object","properties":{"session_id":{"type":"string"},"message":{"type":"string"},"mode":{"enum":["queue","steer"]}},"required":["session_id","message"],"additionalProperties":false}"#,
    },
];

/// Bytes of names, descriptions and schemas together: the catalog's cost in every
/// request prefix.
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
        for tool in TOOLS {
            let schema: serde_json::Value = serde_json::from_str(tool.input_schema).unwrap();
            assert_eq!(schema["type"], "object", "{}", tool.name);
            assert_eq!(schema["additionalProperties"], false, "{}", tool.name);
        }
    }

    #[test]
    fn the_catalog_stays_within_1200_bytes() {
        let bytes = catalog_bytes(&TOOLS);
        assert!(bytes <= 1200, "catalog is {bytes} bytes");
    }
}
