//! What a tool call takes, whatever contract version the plugin was built against:
//! below the version modules, which each pass it to their own exports.

/// One tool call's inputs.
#[derive(Clone, Debug, Default)]
pub struct CallRequest {
    /// The calling session's id.
    pub caller: String,
    /// The harness's id for this tool call, the same across its retries (empty when it
    /// has none): a retried send delivers once.
    pub call_id: String,
    /// The deployment's settings JSON (empty: all defaults).
    pub settings: String,
    pub tool: String,
    /// The model's JSON arguments text.
    pub arguments: String,
}
