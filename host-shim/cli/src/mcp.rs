//! The plugin's tools served over the Model Context Protocol, on stdio, with the
//! official Rust SDK (`rmcp`). `tools/list` is the plugin's catalog for the
//! deployment's settings; each `tools/call` runs the plugin in a fresh sandboxed
//! instance under the host's limits, over one harness state the calls share.
//!
//! How an answer becomes a result: an answer is a text result; a refusal (known from
//! the plugin's structured answer, never from its text) is a text result with
//! `isError`; a host failure (deadline, memory, output cap, a trap, the pool full) is
//! `isError` with its one-line error. A tool the catalog does not list is the
//! protocol's own error (invalid params), as the MCP spec asks.

use host_shim::McpClient;
use host_shim::Refusal;
use host_shim::guard::Delivery;
use host_shim::inbox::audit::{AuditLog, AuditRecord};
use host_shim::{CallRequest, Runtime};
use host_shim::{Harness, Shared};
use host_shim_profile::{CallerOfCall, Companion, CompanionError};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientJsonRpcMessage, ContentBlock,
    Implementation, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
    Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// The calling session, if the server knows it (without one, every call says how to
/// name it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Caller {
    Known(String),
    Unknown,
}

/// What a server is started with.
pub struct McpOptions {
    /// The deployment's settings JSON (empty: all defaults).
    pub settings: String,
    /// The session the model calling these tools runs in.
    pub caller: Caller,
    /// The MCP clients this server understands: where each names the calling session
    /// and the call (each harness's profile declares its client's). Other clients send
    /// nothing that survives a retry (`progressToken` is per request).
    pub clients: Vec<McpClient>,
    /// Append what the inbox accepts here, per call, whatever the call's outcome.
    pub deliveries: Option<PathBuf>,
    /// Finds the subagent behind a call, where a harness can tell (the first that
    /// names one).
    pub caller_of_call: Vec<CallerOfCall>,
    /// Requests besides MCP's that the harnesses' clients send, each under its prefix.
    pub companions: Vec<Arc<dyn Companion>>,
    /// The audit log a send the guard rails refused is recorded in ([`REFUSALS_LOGGED`]):
    /// such a send never reaches an inbox, whose wrapper logs the rest.
    pub audit: Option<Arc<AuditLog>>,
    /// Told as each call begins: a machine joined to a cluster publishes its sessions
    /// again (the caller's own may be new since the last heartbeat).
    pub call_begins: Option<Box<dyn Fn() + Send + Sync>>,
    /// Set when the server runs under a client whose calls carry a hook's stamp
    /// ([`StampCheck::under`]): each call's caller and call id are the stamp's, and a
    /// call without a good one is refused.
    pub stamps: Option<StampCheck>,
}

/// Where calls' stamps come in and the key they are checked with.
pub struct StampCheck {
    pub calls: host_shim::StampedCalls,
    /// The state folder, which holds the key ([`host_shim::call_stamp::StampKey`]).
    pub state_root: PathBuf,
}

impl StampCheck {
    /// The check, when the server runs under one of `clients` that stamps its calls
    /// (the first whose environment variable is set), with the key of the state
    /// folder `state_root` gives (asked only then).
    pub fn under(
        clients: &[McpClient],
        state_root: impl FnOnce() -> anyhow::Result<PathBuf>,
    ) -> anyhow::Result<Option<StampCheck>> {
        let calls = clients.iter().find_map(|client| {
            let calls = client.stamps?;
            let under = std::env::var(calls.under_env).is_ok_and(|value| !value.is_empty());
            under.then_some(calls)
        });
        match calls {
            Some(calls) => Ok(Some(StampCheck {
                calls,
                state_root: state_root()?,
            })),
            None => Ok(None),
        }
    }

    /// Who made the call of `tool`, from the stamp in `meta` or `arguments` (taken out
    /// of them, which are the model's after it); else the refusal's words.
    fn stamped(
        &self,
        meta: &serde_json::Map<String, serde_json::Value>,
        tool: &str,
        arguments: &mut serde_json::Map<String, serde_json::Value>,
    ) -> Result<host_shim::call_stamp::Stamped, String> {
        use host_shim::StampCarrier;
        use host_shim::call_stamp::{StampKey, Unstamped, now_ms};
        let refused = |why: Unstamped| why.explain(self.calls.set_up_by);
        let stamp = match self.calls.carrier {
            StampCarrier::Meta(key) => meta.get(key).cloned(),
            StampCarrier::Argument(name) => arguments.remove(name),
        };
        let Some(stamp) = stamp else {
            return Err(refused(Unstamped::Missing));
        };
        let arguments = serde_json::Value::Object(arguments.clone());
        match StampKey::load(&self.state_root) {
            Err(err) => Err(format!(
                "host-shim mcp cannot check the call's stamp: {err:#}; nothing was run"
            )),
            Ok(None) => Err(refused(Unstamped::NoKey)),
            Ok(Some(key)) => key
                .check(&stamp, tool, &arguments, now_ms())
                .map_err(refused),
        }
    }
}

/// The refusals of `sessions_send` a person watching the sessions is shown: the guard
/// rails (the loop guard, the sending caps) and a target's person refusing inbound.
pub const REFUSALS_LOGGED: &[Refusal] = &[
    Refusal::LoopGuard,
    Refusal::RateLimited,
    Refusal::RefusedByTarget,
];

/// An MCP server over a runtime and a shared harness.
pub struct McpServer<H: Harness> {
    runtime: Arc<Runtime<Shared<H>>>,
    harness: Shared<H>,
    tools: Vec<Tool>,
    options: McpOptions,
    /// Serialises appends to the deliveries file.
    record: Arc<Mutex<()>>,
    /// The arguments as written of requests whose text is not Unicode, by request id
    /// (see [`NotUnicode`]): taken by their call.
    raw_arguments: Arc<Mutex<std::collections::HashMap<String, String>>>,
}

/// A tool as MCP lists it: the plugin's own name, description, input schema and
/// annotations (a plugin before contract 0.3.0 gives none), unchanged.
fn mcp_tool(spec: &host_shim::Tool) -> anyhow::Result<Tool> {
    let schema: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(&spec.input_schema).map_err(|err| {
            anyhow::anyhow!(
                "the plugin's schema of {} is not a JSON object: {err}",
                spec.name
            )
        })?;
    let mut tool = Tool::new(
        spec.name.clone(),
        spec.description.clone(),
        Arc::new(schema),
    );
    if let Some(annotations) = &spec.annotations {
        tool.annotations = Some(serde_json::from_value(annotations.to_mcp_json())?);
    }
    Ok(tool)
}

/// `tool` with the stamp's argument in its input schema: a client that checks the
/// arguments a hook rewrote against the schema (Gemini CLI) takes the stamp then. Its
/// description tells the model it is not the model's to write (the hook refuses a call
/// whose model wrote it).
fn with_stamp_argument(tool: &mut Tool, name: &str) {
    let mut schema = (*tool.input_schema).clone();
    let properties = schema
        .entry("properties")
        .or_insert_with(|| serde_json::json!({}));
    if let Some(properties) = properties.as_object_mut() {
        properties.insert(
            name.to_string(),
            serde_json::json!({
                "type": "object",
                "description": "Set by the harness's hook (the session making the call); never write it."
            }),
        );
    }
    tool.input_schema = Arc::new(schema);
}

impl<H: Harness> McpServer<H> {
    /// Reads the catalog for the settings once (invalid settings fail here, before
    /// the server serves anything).
    pub fn new(
        runtime: Runtime<Shared<H>>,
        harness: Shared<H>,
        options: McpOptions,
    ) -> anyhow::Result<McpServer<H>> {
        let specs = runtime
            .catalog_with(harness.clone(), &options.settings)
            .map_err(|err| anyhow::anyhow!("{err}"))?;
        let mut tools: Vec<Tool> = specs.iter().map(mcp_tool).collect::<anyhow::Result<_>>()?;
        if let Some(StampCheck { calls, .. }) = &options.stamps
            && let host_shim::StampCarrier::Argument(name) = calls.carrier
        {
            tools
                .iter_mut()
                .for_each(|tool| with_stamp_argument(tool, name));
        }
        Ok(McpServer {
            runtime: Arc::new(runtime),
            harness,
            tools,
            options,
            record: Arc::default(),
            raw_arguments: Arc::default(),
        })
    }

    /// The tools as `tools/list` gives them.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// Runs one `tools/call` to its result (blocking: the plugin runs on this thread).
    /// A send that awaits its reply waits here, holding no plugin instance and no lock
    /// of the harness, until the reply comes, its seconds pass or `interrupted` says
    /// the client cancelled the call. `written`: the arguments as the client wrote
    /// them, when that text is not Unicode (the plugin refuses it by name).
    pub fn call_blocking(
        &self,
        name: &str,
        arguments: Option<&serde_json::Map<String, serde_json::Value>>,
        written: Option<String>,
        meta: &serde_json::Map<String, serde_json::Value>,
        interrupted: &dyn Fn() -> bool,
    ) -> Result<CallToolResult, ErrorData> {
        if !self.tools.iter().any(|tool| tool.name == name) {
            return Err(ErrorData::invalid_params(
                format!(
                    "unknown tool \"{name}\": this server's tools are {}",
                    if self.tools.is_empty() {
                        "none (the deployment's settings disable them)".to_string()
                    } else {
                        self.tools
                            .iter()
                            .map(|tool| tool.name.as_ref())
                            .collect::<Vec<_>>()
                            .join(", ")
                    }
                ),
                None,
            ));
        }
        let refused = |text: String| Ok(CallToolResult::error(vec![ContentBlock::text(text)]));
        // Who made the call and its id: the stamp's, where calls carry one; else what
        // the client names in `_meta`, else the server's caller.
        let mut arguments = arguments.cloned();
        let (call_id, caller_from_client) = match &self.options.stamps {
            Some(check) => {
                let arguments = arguments.get_or_insert_default();
                match check.stamped(meta, name, arguments) {
                    Ok(who) => (who.call, Some(who.session)),
                    Err(text) => return refused(text),
                }
            }
            None => (
                call_id(&self.options.clients, meta),
                caller_id(&self.options.clients, meta),
            ),
        };
        let arguments = arguments.as_ref();
        let call_id = call_id.as_str();
        let caller_known = match (caller_from_client, &self.options.caller) {
            (Some(caller), _) => Caller::Known(caller),
            (None, known) => known.clone(),
        };
        let Caller::Known(caller) = &caller_known else {
            return refused(unknown_caller(&self.options.clients));
        };
        let caller = (self.options.caller_of_call.iter())
            .find_map(|of_call| of_call(caller, call_id))
            .unwrap_or_else(|| caller.clone());
        let request = CallRequest {
            caller,
            call_id: call_id.to_string(),
            settings: self.options.settings.clone(),
            tool: name.to_string(),
            arguments: written.unwrap_or_else(|| {
                arguments
                    .map(|object| serde_json::Value::Object(object.clone()).to_string())
                    .unwrap_or_default()
            }),
        };
        // The caller's session exists now: a machine in a cluster publishes it while
        // the call runs (a harness may end this server right after its turn).
        if let Some(call_begins) = &self.options.call_begins {
            call_begins();
        }
        let report = (self.runtime).call_awaiting(self.harness.clone(), &request, interrupted);
        if let (Some(log), Ok(answer)) = (&self.options.audit, &report.answer) {
            log_refusal(log, &request, arguments, answer.refusal);
        }
        let recorded = self.record(&report.deliveries);
        let mut result = match report.answer {
            Ok(answer) if answer.refusal.is_some() => {
                CallToolResult::error(vec![ContentBlock::text(answer.text)])
            }
            Ok(answer) => CallToolResult::success(vec![ContentBlock::text(answer.text)]),
            Err(err) => CallToolResult::error(vec![ContentBlock::text(err.to_string())]),
        };
        if let Err(err) = recorded {
            // The delivery happened; only its record failed. Say so beside the answer.
            result.content.push(ContentBlock::text(format!(
                "host-shim: the delivery was made but could not be recorded: {err:#}"
            )));
        }
        Ok(result)
    }

    fn record(&self, deliveries: &[Delivery]) -> anyhow::Result<()> {
        let Some(path) = &self.options.deliveries else {
            return Ok(());
        };
        if deliveries.is_empty() {
            return Ok(());
        }
        let _one_at_a_time = self
            .record
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        host_shim::record::append(path, deliveries)
    }
}

/// What a call is told when the server knows no caller: each way a client names one.
fn unknown_caller(clients: &[McpClient]) -> String {
    let ways: Vec<String> = (clients.iter())
        .flat_map(|client| {
            let env = (client.caller_env).map(|name| format!("sets {name} ({} does)", client.who));
            let meta = client.caller_meta.map(|key| {
                let field = match key.contains('/') {
                    true => format!("_meta[\"{key}\"]"),
                    false => format!("_meta.{key}"),
                };
                format!("names it in each call's {field} ({} does)", client.who)
            });
            env.into_iter().chain(meta)
        })
        .collect();
    let from_a_client = match ways.is_empty() {
        true => String::new(),
        false => format!("or from a client that {}, ", ways.join(" or ")),
    };
    format!(
        "host-shim mcp does not know which session is calling: start it with --caller ID, \
         {from_a_client}or over a store that names its caller; nothing was run"
    )
}

/// Records a `sessions_send` refused by a guard rail ([`REFUSALS_LOGGED`]), its target
/// and words from the arguments the client sent (already read as JSON). A record that
/// cannot be written is said on stderr; the answer goes on.
fn log_refusal(
    log: &AuditLog,
    request: &CallRequest,
    arguments: Option<&serde_json::Map<String, serde_json::Value>>,
    refusal: Option<Refusal>,
) {
    let Some(refusal) = refusal.filter(|r| REFUSALS_LOGGED.contains(r)) else {
        return;
    };
    if request.tool != "sessions_send" {
        return;
    }
    let text = |name: &str| {
        (arguments.and_then(|a| a.get(name)))
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default()
    };
    let mode = match text("mode") {
        "steer" => host_shim::DeliveryMode::Steer,
        _ => host_shim::DeliveryMode::Queue,
    };
    let record = AuditRecord::refused(
        &request.caller,
        text("session_id"),
        mode,
        text("message"),
        refusal.as_str(),
        log.with_bodies(),
    );
    if let Err(err) = log.append(&record) {
        eprintln!("host-shim: a refused send could not be recorded in the audit log: {err:#}");
    }
}

/// The call id a client sent in a request's `_meta`, if any (see
/// [`McpOptions::clients`]); the SDK hands `_meta` over in the request's context.
pub fn call_id(clients: &[McpClient], meta: &serde_json::Map<String, serde_json::Value>) -> String {
    (clients.iter())
        .filter_map(|client| client.call_id_meta)
        .find_map(|key| meta.get(key).and_then(|value| value.as_str()))
        .unwrap_or_default()
        .to_string()
}

/// The calling session a client named in a request's `_meta`, if any.
pub fn caller_id(
    clients: &[McpClient],
    meta: &serde_json::Map<String, serde_json::Value>,
) -> Option<String> {
    (clients.iter())
        .filter_map(|client| client.caller_meta)
        .find_map(|key| meta.get(key).and_then(|value| value.as_str()))
        .filter(|id| !id.is_empty())
        .map(str::to_string)
}

/// The calling session a client named in this server's environment, if any.
pub fn caller_from_env(clients: &[McpClient]) -> Option<String> {
    (clients.iter())
        .filter_map(|client| client.caller_env)
        .find_map(|name| std::env::var(name).ok().filter(|id| !id.is_empty()))
}

/// The handle the SDK serves: cheap to clone into each request's task.
pub struct Served<H: Harness>(pub Arc<McpServer<H>>);

impl<H: Harness> ServerHandler for Served<H> {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            // doctor reads the version to tell a configured command of another version.
            .with_server_info(Implementation::new("session-tools", crate::VERSION))
            .with_instructions(
                "Cross-session tools: list this harness's other sessions, read one without \
                 waking it, send a message into another top-level session's inbox.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.0.tools().to_vec()))
    }

    /// A known method whose params the SDK could not read arrives here: that is the
    /// protocol's invalid params, not an unknown method.
    async fn on_custom_request(
        &self,
        request: rmcp::model::CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CustomResult, ErrorData> {
        let method = request.method;
        let companion = (self.0.options.companions.iter())
            .find(|companion| method.starts_with(companion.prefix()));
        if let Some(companion) = companion {
            let companion = companion.clone();
            let params = request.params.unwrap_or_default();
            let cancelled = context.ct.clone();
            // A request may block: off the protocol's threads.
            return tokio::task::spawn_blocking(move || {
                companion.request(&method, &params, &|| cancelled.is_cancelled())
            })
            .await
            .map_err(|err| {
                ErrorData::internal_error(format!("the request's task failed: {err}"), None)
            })?
            .map(rmcp::model::CustomResult)
            .map_err(protocol_error);
        }
        if ["tools/call", "tools/list"].contains(&method.as_str()) {
            let takes = if method == "tools/call" {
                "an object with a string name and an object of arguments"
            } else {
                "an optional object with a string cursor"
            };
            return Err(ErrorData::invalid_params(
                format!("the params of {method} are not what it takes: {takes}"),
                None,
            ));
        }
        Err(ErrorData::new(
            rmcp::model::ErrorCode::METHOD_NOT_FOUND,
            format!("no method {method} on this server"),
            None,
        ))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let server = self.0.clone();
        let meta = context.meta.clone();
        let written = (server.raw_arguments.lock())
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(&id_key(&context.id));
        // A client's notifications/cancelled ends a wait for a reply.
        let cancelled = context.ct.clone();
        // The plugin runs synchronously: off the protocol's threads, so calls in flight
        // run at once, up to the runtime's pool.
        tokio::task::spawn_blocking(move || {
            let arguments = request.arguments.as_ref();
            let interrupted = || cancelled.is_cancelled();
            server.call_blocking(&request.name, arguments, written, &meta, &interrupted)
        })
        .await
        .map_err(|err| ErrorData::internal_error(format!("the call's task failed: {err}"), None))?
        .map(CallToolResponse::from)
    }
}

/// One line from the client, parsed once: a message for the SDK, an answer this
/// server writes itself (JSON-RPC's error for a line the SDK could not read), or
/// nothing (a blank line, a notification the SDK cannot read).
enum Line {
    /// With the request's own arguments text when the line held text that is not
    /// Unicode (a lone surrogate escape, read as U+FFFD for the SDK).
    Message(Box<ClientJsonRpcMessage>, Option<NotUnicode>),
    Answer(String),
    Nothing,
}

/// A request whose line held a lone surrogate escape: its id (as JSON) and its
/// `params.arguments` as written, which the plugin is handed instead of the SDK's
/// reading, so it refuses the argument by name and nothing altered is delivered.
struct NotUnicode {
    id: String,
    arguments: String,
}

/// The request id as [`NotUnicode::id`] keeps it.
fn id_key(id: &impl serde::Serialize) -> String {
    serde_json::to_value(id)
        .map(|id| id.to_string())
        .unwrap_or_default()
}

/// The id and the arguments of a `tools/call` line as written (`RawValue` takes a
/// string's escapes as they are).
fn raw_arguments(line: &str) -> Option<NotUnicode> {
    #[derive(serde::Deserialize)]
    struct Request<'a> {
        id: serde_json::Value,
        method: String,
        #[serde(borrow)]
        params: Params<'a>,
    }
    #[derive(serde::Deserialize)]
    struct Params<'a> {
        #[serde(borrow)]
        arguments: &'a serde_json::value::RawValue,
    }
    let request = serde_json::from_str::<Request>(line).ok()?;
    // Only a call takes them (nothing else would: kept until taken).
    (request.method == "tools/call").then_some(())?;
    Some(NotUnicode {
        id: id_key(&request.id),
        arguments: request.params.arguments.get().to_string(),
    })
}

fn screen(line: &str) -> Line {
    if line.trim().is_empty() {
        return Line::Nothing;
    }
    // A lone UTF-16 surrogate escape (`"\ud800"`, which JavaScript's JSON.stringify
    // writes for a lone surrogate in a string) is no character: the SDK reads it as
    // U+FFFD, and the call's arguments go to the plugin as written.
    let parse_error = match host_shim::json::read::<ClientJsonRpcMessage>(line.as_bytes()) {
        Ok(read) => {
            let not_unicode = read.not_unicode.then(|| raw_arguments(line)).flatten();
            return Line::Message(Box::new(read.value), not_unicode);
        }
        Err(err) => err,
    };
    // JSON-RPC 2.0: a line that is not JSON is a parse error; JSON that is not a
    // request is an invalid request, answered with its id when it has one. A
    // notification the SDK cannot read needs no answer. (Only such lines are read a
    // second time, to find their id.)
    let (code, message, id) = match serde_json::from_str::<serde_json::Value>(line) {
        Err(_) => (
            -32700,
            format!("Parse error: {parse_error}"),
            serde_json::Value::Null,
        ),
        Ok(value) => match value.get("id") {
            Some(id) if value.get("method").is_some() || value.get("jsonrpc").is_none() => (
                -32600,
                "Invalid Request: not a JSON-RPC 2.0 request this server knows".to_string(),
                id.clone(),
            ),
            Some(id) => (
                -32600,
                "Invalid Request: not a JSON-RPC 2.0 message".to_string(),
                id.clone(),
            ),
            None if value.get("method").is_some() => return Line::Nothing,
            None => (
                -32600,
                "Invalid Request: not a JSON-RPC 2.0 message".to_string(),
                serde_json::Value::Null,
            ),
        },
    };
    Line::Answer(
        serde_json::json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": {"code": code, "message": message},
        })
        .to_string(),
    )
}

/// The SDK's transport here: messages the reader parsed, and lines for the writer.
struct LineTransport {
    incoming: tokio::sync::mpsc::UnboundedReceiver<ClientJsonRpcMessage>,
    outgoing: tokio::sync::mpsc::UnboundedSender<String>,
}

impl rmcp::transport::Transport<RoleServer> for LineTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: rmcp::model::ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let sent = serde_json::to_string(&item)
            .map_err(std::io::Error::other)
            .and_then(|line| {
                (self.outgoing.send(line)).map_err(|_| std::io::Error::other("stdout is closed"))
            });
        std::future::ready(sent)
    }

    fn receive(&mut self) -> impl Future<Output = Option<ClientJsonRpcMessage>> + Send {
        self.incoming.recv()
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.incoming.close();
        std::future::ready(Ok(()))
    }
}

/// Serves MCP on stdin and stdout until the client closes stdin. Each line is parsed
/// once: a message goes to the SDK as it is, a line the SDK could not read is
/// answered here with the JSON-RPC error it calls for (the SDK would drop it
/// silently), and the next line is served as usual. Once stdin closes, the calls in
/// flight get the runtime's deadline and [`EXIT_GRACE`] more to answer; then the
/// process ends whatever still runs (its client is gone, and a process that stayed
/// would hold the harness's files open).
pub fn serve_stdio<H: Harness>(server: McpServer<H>) -> anyhow::Result<()> {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let grace = server.runtime.limits().deadline + EXIT_GRACE;
    let served = runtime.block_on(async move {
        use rmcp::ServiceExt;
        let (to_sdk, incoming) = tokio::sync::mpsc::unbounded_channel::<ClientJsonRpcMessage>();
        let (outgoing, mut lines_out) = tokio::sync::mpsc::unbounded_channel::<String>();
        let (input_closed, closed) = tokio::sync::oneshot::channel::<()>();
        let answers = outgoing.clone();
        let companions = server.options.companions.clone();
        let raw = server.raw_arguments.clone();
        let reader = tokio::spawn(async move {
            let mut lines = BufReader::new(tokio::io::stdin()).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                match screen(&line) {
                    Line::Message(message, not_unicode) => {
                        if let Some(NotUnicode { id, arguments }) = not_unicode {
                            raw.lock()
                                .unwrap_or_else(std::sync::PoisonError::into_inner)
                                .insert(id, arguments);
                        }
                        if to_sdk.send(*message).is_err() {
                            break;
                        }
                    }
                    Line::Answer(answer) => {
                        let _ = answers.send(answer);
                    }
                    Line::Nothing => {}
                }
            }
            // stdin closed: dropping the SDK's input ends the session. The client's
            // process is gone: each companion ends what it serves (the session ends only
            // once its requests have).
            for companion in companions {
                companion.client_gone();
            }
            let _ = input_closed.send(());
        });
        let writer = tokio::spawn(async move {
            let mut stdout = tokio::io::stdout();
            while let Some(line) = lines_out.recv().await {
                let written = stdout.write_all(line.as_bytes()).await;
                if written.and(stdout.write_all(b"\n").await).is_err() {
                    break;
                }
                let _ = stdout.flush().await;
            }
        });
        let transport = LineTransport { incoming, outgoing };
        let running = Served(Arc::new(server))
            .serve(transport)
            .await
            .map_err(|err| anyhow::anyhow!("the MCP session did not start: {err}"))?;
        let gone = async {
            let _ = closed.await;
            tokio::time::sleep(grace).await;
        };
        tokio::select! {
            ended = running.waiting() => {
                ended?;
            }
            // A call still running long after its client left is not waited for.
            () = gone => {}
        }
        reader.abort();
        // Everything queued for stdout is written before the process ends (a writer
        // whose pipe no one reads is not waited for).
        let _ = tokio::time::timeout(EXIT_GRACE, writer).await;
        Ok::<(), anyhow::Error>(())
    });
    // Calls that outlived their client run on blocking threads: not joined.
    runtime.shutdown_timeout(std::time::Duration::ZERO);
    served
}

/// How much longer than the runtime's deadline a call may answer once its client
/// closed stdin, and how long what is queued for stdout may take to write.
pub const EXIT_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// A companion's failure as the protocol's error.
fn protocol_error(error: CompanionError) -> ErrorData {
    match error {
        CompanionError::InvalidParams(why) => ErrorData::invalid_params(why, None),
        CompanionError::MethodNotFound(why) => {
            ErrorData::new(rmcp::model::ErrorCode::METHOD_NOT_FOUND, why, None)
        }
        CompanionError::Internal(why) => ErrorData::internal_error(why, None),
    }
}
