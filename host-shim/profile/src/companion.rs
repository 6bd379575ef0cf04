//! The requests a harness plugin of session-tools (OpenCode's, OpenClaw's) sends its
//! `host-shim mcp` child besides MCP's (`session-tools/*`): the sessions of its
//! process, their hand-overs and a wait for the next one.

use crate::{Companion, CompanionError};
use host_shim::plugin_session::{Moment, PluginSessions};

/// What every session-tools harness plugin shares, in JavaScript: `Host` (its `host-shim
/// mcp` child and the requests in flight) and `writeRefusal` (the check before a file
/// write, which runs the harness's pre-write hook). Setup writes it into each plugin in
/// place of [`PLUGIN_JS_MARK`]; the plugin imports `spawn` and `createInterface`.
pub const PLUGIN_JS: &str = concat!(
    include_str!("plugin/host.js"),
    "\n",
    include_str!("plugin/write_check.js")
);
/// Where a plugin's source takes [`PLUGIN_JS`].
pub const PLUGIN_JS_MARK: &str = "/* __SESSION_TOOLS_PLUGIN__ */\n";

/// A plugin's source with [`PLUGIN_JS`] in place of its mark.
pub fn with_plugin_js(source: &str) -> String {
    source.replacen(PLUGIN_JS_MARK, PLUGIN_JS, 1)
}

/// The prefix of the requests a session-tools harness plugin sends besides MCP's.
pub const PLUGIN_METHODS: &str = "session-tools/";

/// The sessions of the harness process whose plugin started the server.
pub struct PluginCompanion(pub PluginSessions);

impl Companion for PluginCompanion {
    fn prefix(&self) -> &'static str {
        PLUGIN_METHODS
    }

    fn request(
        &self,
        method: &str,
        params: &serde_json::Value,
        interrupted: &dyn Fn() -> bool,
    ) -> Result<serde_json::Value, CompanionError> {
        plugin_request(&self.0, method, params, interrupted)
    }

    /// The plugin's harness process is gone: its sessions are not live, and its
    /// waits end now.
    fn client_gone(&self) {
        self.0.close();
    }
}

/// One request of a session-tools harness plugin (see
/// [`host_shim::plugin_session`]):
///
/// - `session-tools/open` `{sessionID, busy}`: the session runs in the plugin's
///   process, at work or idle; answers `{}`.
/// - `session-tools/hand-over` `{sessionID, moment: "prompt"|"idle"|"busy"}`: takes what
///   waits for the session at that moment; answers `{text}` (`null` for nothing).
/// - `session-tools/wait` `{sessions: [{sessionID, moment}], seconds}`: blocks until a
///   hand-over would take something for one of them (at most `seconds`, at most 60);
///   answers `{ready: [sessionID…]}`. A `notifications/cancelled` ends it early.
///
/// Params that do not read are the protocol's invalid params, naming what is wrong.
fn plugin_request(
    sessions: &PluginSessions,
    method: &str,
    params: &serde_json::Value,
    interrupted: &dyn Fn() -> bool,
) -> Result<serde_json::Value, CompanionError> {
    use serde_json::{Value, json};
    let invalid = |what: &str| CompanionError::InvalidParams(format!("{method} takes {what}"));
    let session_of = |value: &Value| -> Result<String, CompanionError> {
        (value.get("sessionID").and_then(Value::as_str))
            .filter(|id| !id.is_empty())
            .map(str::to_string)
            .ok_or_else(|| invalid("a string sessionID"))
    };
    let moment_of = |value: &Value| -> Result<Moment, CompanionError> {
        match value.get("moment").and_then(Value::as_str) {
            Some("prompt") => Ok(Moment::Prompt),
            Some("idle") => Ok(Moment::Idle),
            Some("busy") => Ok(Moment::Busy),
            _ => Err(invalid("a moment: \"prompt\", \"idle\" or \"busy\"")),
        }
    };
    let failed = |err: anyhow::Error| CompanionError::Internal(format!("{err:#}"));
    match method.strip_prefix(PLUGIN_METHODS) {
        Some("open") => {
            let session = session_of(params)?;
            let busy = (params.get("busy").and_then(Value::as_bool))
                .ok_or_else(|| invalid("a sessionID and a boolean busy"))?;
            sessions.open(&session, busy).map_err(failed)?;
            Ok(json!({}))
        }
        Some("hand-over") => {
            let text = sessions
                .hand_over(&session_of(params)?, moment_of(params)?)
                .map_err(failed)?;
            Ok(json!({ "text": text }))
        }
        Some("wait") => {
            let asked = (params.get("sessions").and_then(Value::as_array))
                .ok_or_else(|| invalid("sessions: a list of {sessionID, moment}"))?;
            let asked = (asked.iter())
                .map(|one| Ok((session_of(one)?, moment_of(one)?)))
                .collect::<Result<Vec<_>, CompanionError>>()?;
            let seconds = (params.get("seconds").and_then(Value::as_u64))
                .ok_or_else(|| invalid("a whole number of seconds"))?;
            let ready = sessions.wait(&asked, std::time::Duration::from_secs(seconds), interrupted);
            Ok(json!({ "ready": ready }))
        }
        _ => Err(CompanionError::MethodNotFound(format!(
            "no method {method} on this server: its session-tools/ methods are open, hand-over and wait"
        ))),
    }
}

impl crate::Serving<'_> {
    /// The sessions of the harness process whose plugin started this server, their
    /// hand-overs settled against the harness's record (`read` over the sessions' place).
    pub fn plugin_sessions(
        &self,
        read: host_shim::harnesses::plugin_session::RecordReader,
    ) -> anyhow::Result<PluginSessions> {
        let sessions = PluginSessions::new(self.inbox.clone(), self.state.presence()?);
        Ok(sessions.recorded_in(self.place, read))
    }
}

impl crate::ServedParts {
    /// What a server started by a harness plugin runs beside the calls: the plugin's
    /// `session-tools/*` requests over `sessions`.
    pub fn plugin_companion(sessions: PluginSessions) -> crate::ServedParts {
        crate::ServedParts {
            companion: Some(std::sync::Arc::new(PluginCompanion(sessions))),
            ..crate::ServedParts::default()
        }
    }
}
