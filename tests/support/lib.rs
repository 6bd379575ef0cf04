//! Support for the end-to-end tests: one shared runtime per test binary over a test
//! harness (a corpus host that can misbehave on request), and the case files under
//! `tests/cases/` (an input, the exact expected output), which any host can run to
//! check itself against the spec.

use anyhow::{Context, Result, bail};
use host_shim::DeliveryRequest;
use host_shim::contract::latest::{SendCounts, ToolAction};
use host_shim::{
    Answer, CallReport, CallRequest, Corpus, CorpusHost, Delivered, DeliveryRefusal, Inbox,
    InboxCount, MessageContent, Runtime, SessionHeader, SessionIndex, SessionQuery, SharedInbox,
    SurfaceIndex,
};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// Misbehaviours of a host, to show the plugin copes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Faults {
    /// Answer title batches with one entry too few.
    pub short_title_batches: bool,
    /// Answer title batches with one entry too many.
    pub long_title_batches: bool,
}

/// The corpus host, with faults on request: test code, kept out of host-shim.
#[derive(Debug, Default)]
pub struct TestHost {
    pub corpus: CorpusHost,
    pub faults: Faults,
}

impl TestHost {
    pub fn new(corpus: Arc<Corpus>) -> TestHost {
        TestHost {
            corpus: CorpusHost::new(corpus),
            faults: Faults::default(),
        }
    }
}

impl SessionQuery for TestHost {
    fn begin_call(&mut self, caller: &str) {
        self.corpus.begin_call(caller);
    }

    fn list_sessions(&mut self) -> SessionIndex {
        self.corpus.list_sessions()
    }

    fn get_session(&mut self, id: &str) -> Option<SessionHeader> {
        self.corpus.get_session(id)
    }

    fn get_sessions(&mut self, ids: &[String]) -> Vec<Option<SessionHeader>> {
        self.corpus.get_sessions(ids)
    }

    fn title_snapshots(&mut self, ids: &[String]) -> Vec<Option<String>> {
        let mut titles = self.corpus.title_snapshots(ids);
        if self.faults.short_title_batches {
            titles.pop();
        }
        if self.faults.long_title_batches {
            titles.push(Some("a title nobody asked for".to_string()));
        }
        titles
    }

    fn get_surface(&mut self, id: &str, lead_chars: u32) -> Option<SurfaceIndex> {
        self.corpus.get_surface(id, lead_chars)
    }

    fn get_messages(&mut self, id: &str, seqs: &[u64]) -> Vec<Option<MessageContent>> {
        self.corpus.get_messages(id, seqs)
    }

    fn inbox_status(&mut self, target: &str, sender: &str) -> InboxCount {
        self.corpus.inbox_status(target, sender)
    }

    fn action_seqs(&mut self, id: &str) -> Vec<u64> {
        self.corpus.action_seqs(id)
    }

    fn get_actions(&mut self, id: &str, seqs: &[u64]) -> Vec<Vec<ToolAction>> {
        self.corpus.get_actions(id, seqs)
    }

    fn send_history(&mut self, ask: &host_shim::HistoryAsk) -> SendCounts {
        (self.corpus).send_history(ask)
    }
}

impl Inbox for TestHost {
    fn deliver(&mut self, request: &DeliveryRequest) -> Result<Delivered, DeliveryRefusal> {
        self.corpus.deliver(request)
    }

    /// The corpus host's own inbox: a later call of a case may have delivered the
    /// reply an earlier one awaits (the runner looks once, then stops waiting).
    fn reply_inbox(&mut self) -> Option<SharedInbox> {
        Some(self.corpus.inbox().clone())
    }

    /// Claims are the corpus inbox's too.
    fn claims_inbox(&mut self) -> Option<SharedInbox> {
        Some(self.corpus.inbox().clone())
    }
}

/// The runtime with the embedded plugin, compiled once per test binary.
pub fn runtime() -> &'static Runtime<TestHost> {
    static RUNTIME: OnceLock<Runtime<TestHost>> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        Runtime::with_options(
            host_shim_plugin::PLUGIN_WASM,
            &host_shim::RuntimeOptions::default(),
        )
        .expect("the embedded plugin loads")
    })
}

/// The plugin as released with contract 0.1.0 (built from the commit that froze it),
/// kept so every host-shim is checked to still load it.
pub const PLUGIN_V0_1_0: &[u8] = include_bytes!("../fixtures/plugin-v0.1.0.wasm");

/// The plugin as released with contract 0.2.0 (built from the commit that froze it).
pub const PLUGIN_V0_2_0: &[u8] = include_bytes!("../fixtures/plugin-v0.2.0.wasm");

/// The plugin as released with contract 0.3.0 (built from the commit that froze it,
/// 8c8e466).
pub const PLUGIN_V0_3_0: &[u8] = include_bytes!("../fixtures/plugin-v0.3.0.wasm");

/// The plugin as released with contract 0.4.0 (built from the commit that froze it,
/// 947f517).
pub const PLUGIN_V0_4_0: &[u8] = include_bytes!("../fixtures/plugin-v0.4.0.wasm");

/// The plugin as released with contract 0.5.0 (built from f2c26f3, the last commit
/// before 0.6.0).
pub const PLUGIN_V0_5_0: &[u8] = include_bytes!("../fixtures/plugin-v0.5.0.wasm");

/// A runtime over the 0.5.0 plugin, compiled once per test binary.
pub fn runtime_v0_5_0() -> &'static Runtime<TestHost> {
    static RUNTIME: OnceLock<Runtime<TestHost>> = OnceLock::new();
    RUNTIME.get_or_init(|| Runtime::from_component(PLUGIN_V0_5_0).expect("the 0.5.0 plugin loads"))
}

/// A runtime over the 0.4.0 plugin, compiled once per test binary.
pub fn runtime_v0_4_0() -> &'static Runtime<TestHost> {
    static RUNTIME: OnceLock<Runtime<TestHost>> = OnceLock::new();
    RUNTIME.get_or_init(|| Runtime::from_component(PLUGIN_V0_4_0).expect("the 0.4.0 plugin loads"))
}

/// A runtime over the 0.3.0 plugin, compiled once per test binary.
pub fn runtime_v0_3_0() -> &'static Runtime<TestHost> {
    static RUNTIME: OnceLock<Runtime<TestHost>> = OnceLock::new();
    RUNTIME.get_or_init(|| Runtime::from_component(PLUGIN_V0_3_0).expect("the 0.3.0 plugin loads"))
}

/// A runtime over the 0.2.0 plugin, compiled once per test binary.
pub fn runtime_v0_2_0() -> &'static Runtime<TestHost> {
    static RUNTIME: OnceLock<Runtime<TestHost>> = OnceLock::new();
    RUNTIME.get_or_init(|| Runtime::from_component(PLUGIN_V0_2_0).expect("the 0.2.0 plugin loads"))
}

/// A runtime over the 0.1.0 plugin, compiled once per test binary.
pub fn runtime_v0_1_0() -> &'static Runtime<TestHost> {
    static RUNTIME: OnceLock<Runtime<TestHost>> = OnceLock::new();
    RUNTIME.get_or_init(|| Runtime::from_component(PLUGIN_V0_1_0).expect("the 0.1.0 plugin loads"))
}

pub fn tests_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A corpus from `tests/corpora/NAME.json`.
pub fn corpus(name: &str) -> Arc<Corpus> {
    let path = tests_dir().join("corpora").join(format!("{name}.json"));
    Arc::new(Corpus::from_file(&path).unwrap_or_else(|err| panic!("{err:#}")))
}

/// One call through the real component, over a fresh host on `corpus`.
pub fn call(
    corpus: &Arc<Corpus>,
    caller: &str,
    settings: &str,
    tool: &str,
    args: &str,
) -> CallReport<TestHost> {
    call_on(TestHost::new(corpus.clone()), caller, settings, tool, args)
}

/// One call through the real component, over `host` (handed back in the report).
pub fn call_on(
    host: TestHost,
    caller: &str,
    settings: &str,
    tool: &str,
    args: &str,
) -> CallReport<TestHost> {
    let request = CallRequest {
        caller: caller.to_string(),
        settings: settings.to_string(),
        tool: tool.to_string(),
        arguments: args.to_string(),
        ..CallRequest::default()
    };
    runtime().call(host, &request)
}

/// The tool's text, where the call succeeds.
pub fn text(corpus: &Arc<Corpus>, caller: &str, settings: &str, tool: &str, args: &str) -> String {
    call(corpus, caller, settings, tool, args)
        .answer
        .unwrap_or_else(|err| panic!("the call failed: {err}"))
        .text
}

/// The refusal code SPEC's text implies (the oracle's reading, shared with the fuzz
/// target): a host checks a plugin's structured answer against it.
pub use session_tools::invariants::refusal_named_in as refusal_in_text;

/// One case of a case file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Case {
    /// `file:line name`, for failure messages.
    pub name: String,
    pub corpus: String,
    pub caller: String,
    pub settings: String,
    /// The harness's call id for every call of the case (empty: none).
    pub call_id: String,
    /// The contract version that brought the rule the case pins (`since: 0.3.0`);
    /// empty for the rules every version keeps.
    pub since: String,
    pub tool: String,
    pub arguments: String,
    pub output: String,
    /// Expected deliveries as JSON; none means the inbox must stay empty.
    pub deliveries: Option<serde_json::Value>,
    /// Calls made after the first on the same host (same caller and settings), each
    /// with its own expected text and deliveries: they pin what the host's controller
    /// does to its sessions.
    pub then: Vec<FollowUp>,
}

/// A later call of a case, on the host the earlier calls left.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FollowUp {
    pub tool: String,
    pub arguments: String,
    /// Its own call id (`--- then with call-id ID: …`), else the case's.
    pub call_id: Option<String>,
    /// Its own caller (`--- then as SESSION: …`), else the case's: another session of
    /// the same host answers.
    pub caller: Option<String>,
    pub output: String,
    pub deliveries: Option<serde_json::Value>,
}

/// Parses a case file:
///
/// ```text
/// === name of the case
/// corpus: NAME            (tests/corpora/NAME.json)
/// caller: SESSION-ID
/// settings: {JSON}        (optional)
/// call-id: ID             (optional: the harness's call id, for every call of the case)
/// since: 0.3.0            (optional: a rule of that contract version, not run by older plugins)
/// call: TOOL {JSON ARGS}  (args optional)
/// --- output
/// exact text, every line
/// --- deliveries          (optional; JSON array of {target, mode, body, woke[, key]})
/// [...]
/// --- then TOOL {JSON ARGS} (optional, repeatable: a later call on the same host;
///                          `--- then with call-id ID: TOOL {JSON ARGS}` gives it its own call id,
///                          `--- then as SESSION: …` (before `with`) its own caller)
/// --- output
/// ...
/// ```
///
/// Lines before the first `===` and lines starting with `#` between cases are
/// comments. A case's output ends at the next `--- ` section or `===` line; the
/// trailing blank line before the next case is not part of it.
pub fn parse_cases(path: &Path) -> Result<Vec<Case>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let file = path
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .to_string();
    let mut cases = Vec::new();
    let mut lines = text.lines().enumerate().peekable();
    while let Some((number, line)) = lines.next() {
        let Some(name) = line.strip_prefix("=== ") else {
            continue;
        };
        let mut case = Case {
            name: format!("{file}:{} {name}", number + 1),
            ..Case::default()
        };
        let mut section = "head";
        let mut body: Vec<&str> = Vec::new();
        let finish = |case: &mut Case, section: &str, body: &mut Vec<&str>| -> Result<()> {
            while body.last().is_some_and(|l| l.is_empty()) {
                body.pop();
            }
            let joined = body.join("\n");
            let name = case.name.clone();
            // Sections after a `--- then` belong to that later call.
            let (output, deliveries) = match case.then.last_mut() {
                Some(later) => (&mut later.output, &mut later.deliveries),
                None => (&mut case.output, &mut case.deliveries),
            };
            match section {
                "output" => *output = joined,
                "deliveries" => {
                    *deliveries = Some(
                        serde_json::from_str(&joined)
                            .with_context(|| format!("{name}: deliveries are not JSON"))?,
                    )
                }
                _ => {}
            }
            body.clear();
            Ok(())
        };
        while let Some((_, line)) = lines.peek().copied() {
            if line.starts_with("=== ") {
                break;
            }
            lines.next();
            if let Some(call) = line.strip_prefix("--- then ") {
                finish(&mut case, section, &mut body)?;
                // `as SESSION[ with call-id ID]: TOOL ARGS`
                let (caller, call) = match call.strip_prefix("as ") {
                    Some(rest) => {
                        let (who, call) = (rest.split_once(": "))
                            .with_context(|| format!("{}: `as SESSION: TOOL`", case.name))?;
                        match who.split_once(" with call-id ") {
                            Some((caller, id)) => (
                                Some(caller.to_string()),
                                format!("with call-id {id}: {call}"),
                            ),
                            None => (Some(who.to_string()), call.to_string()),
                        }
                    }
                    None => (None, call.to_string()),
                };
                let call = call.as_str();
                let (call_id, call) = match call.strip_prefix("with call-id ") {
                    Some(rest) => {
                        let (id, call) = (rest.split_once(": "))
                            .with_context(|| format!("{}: `with call-id ID: TOOL`", case.name))?;
                        (Some(id.to_string()), call)
                    }
                    None => (None, call),
                };
                let (tool, args) = call.split_once(' ').unwrap_or((call, ""));
                case.then.push(FollowUp {
                    tool: tool.to_string(),
                    arguments: args.to_string(),
                    call_id,
                    caller,
                    ..FollowUp::default()
                });
                section = "then";
                continue;
            }
            if let Some(next) = line
                .strip_prefix("--- ")
                .filter(|n| ["output", "deliveries"].contains(n))
            {
                finish(&mut case, section, &mut body)?;
                section = if next == "output" {
                    "output"
                } else {
                    "deliveries"
                };
                continue;
            }
            if section != "head" {
                body.push(line);
                continue;
            }
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (key, value) = line
                .split_once(": ")
                .with_context(|| format!("{}: expected `key: value`, got {line:?}", case.name))?;
            match key {
                "corpus" => case.corpus = value.to_string(),
                "caller" => case.caller = value.to_string(),
                "settings" => case.settings = value.to_string(),
                "call-id" => case.call_id = value.to_string(),
                "since" => case.since = value.to_string(),
                "call" => {
                    let (tool, args) = value.split_once(' ').unwrap_or((value, ""));
                    case.tool = tool.to_string();
                    case.arguments = args.to_string();
                }
                other => bail!("{}: unknown key {other:?}", case.name),
            }
        }
        finish(&mut case, section, &mut body)?;
        if case.corpus.is_empty() || case.tool.is_empty() {
            bail!("{}: a case needs corpus and call", case.name);
        }
        cases.push(case);
    }
    Ok(cases)
}

/// The case files a plugin of contract `version` answers: each current file, or its
/// copy frozen where a later version changed the text (`tests/cases/since_vX.Y.Z/` holds
/// the files as they stood for X.Y.Z; the oldest copy at or after `version` wins).
/// Cases marked `since:` a later version are for the caller to leave out
/// ([`too_new_for`]).
pub fn case_files_for(version: host_shim::ContractVersion) -> Vec<PathBuf> {
    let frozen: Vec<PathBuf> = (host_shim::ContractVersion::ALL.iter())
        .filter(|v| version_number(v.as_str()) >= version_number(version.as_str()))
        .map(|v| tests_dir().join(format!("cases/since_v{}", v.as_str())))
        .filter(|dir| dir.is_dir())
        .collect();
    case_files()
        .into_iter()
        .map(|path| {
            let name = path.file_name().unwrap();
            (frozen.iter())
                .map(|dir| dir.join(name))
                .find(|copy| copy.exists())
                .unwrap_or(path)
        })
        .collect()
}

/// Whether a case pins a rule newer than `version` (its `since:`).
pub fn too_new_for(case: &Case, version: host_shim::ContractVersion) -> bool {
    !case.since.is_empty() && version_number(&case.since) > version_number(version.as_str())
}

fn version_number(text: &str) -> Vec<u32> {
    text.split('.')
        .map(|part| part.parse().unwrap_or(0))
        .collect()
}

/// Every case file under `tests/cases/`, in name order.
pub fn case_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(tests_dir().join("cases"))
        .expect("tests/cases exists")
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|e| e == "txt"))
        .collect();
    files.sort();
    files
}

/// Runs one case through the current plugin, its later calls on the host the first
/// left; the error shows the expected and actual text line by line.
pub fn run_case(case: &Case) -> Result<()> {
    run_case_on(runtime(), case)
}

/// [`run_case`] through the plugin `runtime` loaded. A plugin that gives structured
/// answers must give the refusal code its text names.
/// The text a case's first call answers on `runtime` (a host error as its words),
/// whatever the case expects.
pub fn answer_on(runtime: &Runtime<TestHost>, case: &Case) -> String {
    let request = CallRequest {
        caller: case.caller.clone(),
        call_id: case.call_id.clone(),
        settings: case.settings.clone(),
        tool: case.tool.clone(),
        arguments: case.arguments.clone(),
    };
    let report = runtime.call(TestHost::new(corpus(&case.corpus)), &request);
    match report.answer {
        Ok(answer) => answer.text,
        Err(err) => format!("host error: {err}"),
    }
}

pub fn run_case_on(runtime: &Runtime<TestHost>, case: &Case) -> Result<()> {
    let first = FollowUp {
        tool: case.tool.clone(),
        arguments: case.arguments.clone(),
        call_id: None,
        caller: None,
        output: case.output.clone(),
        deliveries: case.deliveries.clone(),
    };
    let structured = runtime.contract_version() != host_shim::ContractVersion::V0_1_0;
    let mut host = TestHost::new(corpus(&case.corpus));
    for (step, call) in std::iter::once(&first).chain(&case.then).enumerate() {
        let request = CallRequest {
            caller: call.caller.clone().unwrap_or_else(|| case.caller.clone()),
            call_id: call.call_id.clone().unwrap_or_else(|| case.call_id.clone()),
            settings: case.settings.clone(),
            tool: call.tool.clone(),
            arguments: call.arguments.clone(),
        };
        // A send that awaits its reply looks once for one already in the caller's
        // inbox (a later call of the case may have sent it), then stops waiting.
        let report = runtime.call_awaiting(host, &request, &|| true);
        let name = format!("{} (call {})", case.name, step + 1);
        let actual = match &report.answer {
            Ok(answer) => answer.text.clone(),
            Err(err) => format!("host error: {err}"),
        };
        record_actual(case, step, &actual, &report.deliveries)?;
        if actual != call.output {
            bail!("{name}: output differs\n{}", diff(&call.output, &actual));
        }
        if let (true, Ok(Answer { text, refusal, .. })) = (structured, &report.answer) {
            let code = refusal.map(|code| code.as_str());
            if code != refusal_in_text(text) {
                bail!(
                    "{name}: the answer's refusal code is {code:?} but its text says {:?}",
                    refusal_in_text(text)
                );
            }
        }
        let delivered = serde_json::to_value(&report.deliveries)?;
        let expected = call.deliveries.clone().unwrap_or(serde_json::json!([]));
        if delivered != expected {
            bail!("{name}: deliveries differ\nexpected: {expected:#}\nactual:   {delivered:#}");
        }
        host = report.harness;
    }
    Ok(())
}

/// With `CASES_ACTUAL=FILE` set, each call's actual text and deliveries are appended
/// to FILE as JSON lines, for a person updating the case files after a deliberate
/// change of the text to review (`tests/cases/README` says how).
fn record_actual(
    case: &Case,
    step: usize,
    actual: &str,
    deliveries: &[host_shim::Delivery],
) -> Result<()> {
    let Some(path) = std::env::var_os("CASES_ACTUAL") else {
        return Ok(());
    };
    use std::io::Write as _;
    let line = serde_json::json!({
        "case": case.name,
        "step": step,
        "output": actual,
        "deliveries": deliveries,
    });
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    writeln!(file, "{line}")?;
    Ok(())
}

/// A line diff that is enough to see what changed.
pub fn diff(expected: &str, actual: &str) -> String {
    let expected: Vec<&str> = expected.lines().collect();
    let actual: Vec<&str> = actual.lines().collect();
    let mut out = String::new();
    for i in 0..expected.len().max(actual.len()) {
        match (expected.get(i), actual.get(i)) {
            (Some(e), Some(a)) if e == a => out.push_str(&format!("  {e}\n")),
            (e, a) => {
                if let Some(e) = e {
                    out.push_str(&format!("- {e}\n"));
                }
                if let Some(a) = a {
                    out.push_str(&format!("+ {a}\n"));
                }
            }
        }
    }
    out
}
