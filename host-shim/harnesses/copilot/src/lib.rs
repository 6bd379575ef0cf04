//! A harness over GitHub Copilot CLI's own sessions: the event streams under
//! `COPILOT_HOME/session-state/<id>/` (`~/.copilot` by default), read only, with the
//! harness-neutral inbox ([`host_shim::inbox`]) for deliveries, which `host-shim
//! copilot-hook` hands over ([`hook`]).
//!
//! What a session is, from its folder: its id is the folder's name (a plain id) and
//! `session.start`'s; created is `workspace.yaml`'s `created_at`, else the start's time;
//! the cwd `workspace.yaml`'s, else the start's; the title `workspace.yaml`'s `name`
//! (Copilot names a session from its first prompt, or the person renames it), else the
//! first prompt; the preset the newest model an event names (`session.start`'s
//! `selectedModel`, then each `assistant.message`'s `model`). Live is a lock held on
//! the folder's `inuse.<pid>.hold` (Copilot holds it while it runs; a crash leaves the
//! file, not the lock). A session in its first turn
//! has only `workspace.yaml` (Copilot writes `events.jsonl` later): listed, live, with
//! an empty surface.
//!
//! A subagent is no folder of its own in Copilot 1.0.102: its events sit in its
//! parent's file under its `agentId` ([`subagents`]). It is listed with its parent as
//! owner (not messageable): its id the `agentId` (what Copilot's hooks name it),
//! created at its start, its title what the parent asked of it, its preset its model,
//! its cwd its parent's, live while its parent is and its stream does not show it
//! ended (Copilot writes the stream behind its work: a subagent may ask its model
//! before its start is on disk, so the session store finds it first); its surface is
//! its own events in its parent's file, read as a session's.
//!
//! The surface, in the file's order ([`events`]): the person's words (`user.message`
//! `content`) as `user`; what Copilot added around them in `transformedContent` (the
//! current time, hooks' reminders) as injected `copilot` text, except a hand-over's
//! frames, each shown as the frame itself (user, not injected), wherever Copilot
//! recorded it (a `userPromptSubmitted` reminder, a `sessionStart` hook's context, a
//! `postToolUse` hook's guidance after a tool's result, or, from `agentStop`, a prompt of
//! its own); the model's text and tool calls (`assistant.message`) as
//! `model:copilot/<model>`, each call's status from its `tool.execution_complete`. The
//! system prompt, reasoning and tool results are not shown, nor a subagent's own
//! conversation on its parent's surface. seq is the message's place in its surface,
//! counted from the file's start, so it stays as the file grows.
//!
//! Trust model: the folders are Copilot's, written by this user's processes; they are
//! read only, a line that is not an event (or an event of a type this module does not
//! know) is skipped and counted, and nothing in them selects a file to open: a session
//! id is made a plain name first ([`host_shim::inbox::checked_id`]). A `COPILOT_HOME` that
//! does not exist is an empty store.
//!
//! Cost: a listing reads each event stream's head and tail once per size and
//! modification time (then only what was appended), each `workspace.yaml` once per
//! change, Copilot's session store once per commit, and a live session's stream whole
//! once (then what was appended), for its subagents; a read parses the one stream,
//! cached while it is unchanged.

/// The profile `host-shim` runs this harness by (setup, doctor, hooks, its store from
/// the command's flags).
pub mod profile;
pub use profile::Copilot;
pub mod events;
pub mod hook;
pub mod subagents;
pub mod write_hook;

use events::{Event, reminders, split_transformed};
use host_shim::contract::latest::{
    ActionStatus, DeliveryRefusal, Role, SessionHeader, SessionIndex, ToolAction,
};
use host_shim::harnesses::McpClient;
use host_shim::harnesses::logfile::{LineFacts, ReadFrom, Stamp, Windowed, lines, rfc3339_ms};
use host_shim::harnesses::surface::{LoggedSessions, Message, Recent, Surface};
use host_shim::inbox::delivery::{Arriving, Desk, Woken};
use host_shim::inbox::wake::{self, WakeCommand};
use host_shim::inbox::{Recipient, SharedInbox, Shown, Waiting};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use subagents::{ReadSpans, SessionStoreDb, spans_of};

/// What Copilot CLI's MCP client sends: one server per CLI process, started with the
/// session's id in its environment (a subagent's calls come from the same process); a
/// `tools/call` of its own carries no session and no call id (its `_meta` holds only a
/// progress token, a counter per server). So our `preMcpToolCall` hook stamps each
/// call with the session making it and the call's id ([`hook::stamp`]).
pub const MCP_CLIENT: McpClient = McpClient {
    who: "GitHub Copilot CLI",
    caller_env: Some("COPILOT_AGENT_SESSION_ID"),
    caller_meta: None,
    call_id_meta: None,
    stamps: Some(host_shim::harnesses::StampedCalls {
        carrier: host_shim::harnesses::StampCarrier::Meta(hook::STAMP_META),
        under_env: "COPILOT_AGENT_SESSION_ID",
        set_up_by: "host-shim setup copilot",
    }),
};

/// Copilot CLI's home as Copilot finds it: `$COPILOT_HOME`, else `~/.copilot`; none
/// without either.
pub fn default_home() -> Option<PathBuf> {
    host_shim::os::env_or_home("COPILOT_HOME", ".copilot")
}

/// What a listing needs of a session's event stream.
#[derive(Clone, Debug, Default)]
struct Facts {
    id: Option<String>,
    started: Option<String>,
    cwd: Option<String>,
    /// The newest model an event names.
    model: Option<String>,
    first_prompt: Option<String>,
    skipped: u64,
}

impl LineFacts for Facts {
    fn take_line(&mut self, line: &[u8]) {
        let Some(event) = Event::parse(line) else {
            self.skipped += 1;
            return;
        };
        match event.kind.as_str() {
            "session.start" => {
                self.id = self
                    .id
                    .take()
                    .or(event.text("sessionId").map(str::to_string));
                self.started =
                    (self.started.take()).or(event.text("startTime").map(str::to_string));
                let cwd = event
                    .data
                    .get("context")
                    .and_then(|c| events::text_of(c, "cwd"));
                self.cwd = self.cwd.take().or(cwd.map(str::to_string));
                if let Some(model) = event.text("selectedModel") {
                    self.model = Some(model.to_string());
                }
            }
            "user.message" if self.first_prompt.is_none() => {
                self.first_prompt = event.text("content").map(str::to_string);
            }
            "assistant.message" => {
                if let Some(model) = event.text("model") {
                    self.model = Some(model.to_string());
                }
            }
            _ if !event.known() => self.skipped += 1,
            _ => {}
        }
    }

    fn then(self, later: Facts) -> Facts {
        Facts {
            id: self.id.or(later.id),
            started: self.started.or(later.started),
            cwd: self.cwd.or(later.cwd),
            model: later.model.or(self.model),
            first_prompt: self.first_prompt.or(later.first_prompt),
            skipped: self.skipped + later.skipped,
        }
    }

    fn has_latest(&self) -> bool {
        self.model.is_some()
    }
}

/// What `workspace.yaml` says of a session.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Workspace {
    name: Option<String>,
    cwd: Option<String>,
    created_at: Option<String>,
}

impl Workspace {
    /// The file read as YAML (Copilot writes a title of several lines as a block
    /// scalar, `name: |-`); a file that does not read as a mapping says nothing.
    fn parse(text: &str) -> Workspace {
        use yaml_rust2::{Yaml, YamlLoader};
        let documents = YamlLoader::load_from_str(text).unwrap_or_default();
        let Some(Yaml::Hash(fields)) = documents.into_iter().next() else {
            return Workspace::default();
        };
        // A plain scalar that reads as a number or a boolean is still its text here.
        let field = |key: &str| {
            let text = match fields.get(&Yaml::String(key.to_string()))? {
                Yaml::String(text) | Yaml::Real(text) => text.clone(),
                Yaml::Integer(n) => n.to_string(),
                Yaml::Boolean(flag) => flag.to_string(),
                _ => return None,
            };
            (!text.is_empty()).then_some(text)
        };
        Workspace {
            name: field("name"),
            cwd: field("cwd"),
            created_at: field("created_at"),
        }
    }
}

/// One session as the last listing found it.
#[derive(Clone, Debug)]
struct Listed {
    id: String,
    folder: PathBuf,
    facts: Facts,
    workspace: Workspace,
}

/// A subagent as the last listing found it ([`subagents`]).
#[derive(Clone, Debug)]
struct Subagent {
    id: String,
    parent: String,
    created_ms: i64,
    model: Option<String>,
    /// From its parent's stream, when that was read.
    title: Option<String>,
    /// Whether its parent's stream shows it ended; unknown when that was not read (or
    /// does not show it yet).
    ended: Option<bool>,
}

/// The store: a `COPILOT_HOME`, read only, and an inbox backend for deliveries.
pub struct CopilotStore {
    home: PathBuf,
    desk: Desk,
    listed: Vec<Listed>,
    by_id: HashMap<String, usize>,
    indexed: HashMap<PathBuf, Windowed<Facts>>,
    workspaces: HashMap<PathBuf, (Stamp, Workspace)>,
    surfaces: Recent<(String, Stamp, Arc<Surface>)>,
    /// Starts Copilot for a cold target the call may wake (none by default).
    wake: Option<WakeCommand>,
    /// Lines the last parse of each session's surface skipped (a whole read, so it
    /// stands for the session's count).
    surface_skips: HashMap<String, u64>,
    /// During a tool call, what it found of each session it looked at: a call asks
    /// about one session more than once (a send reads its header, then delivers) and
    /// its answers describe one state of the harness. None between calls.
    this_call: Option<ThisCall>,
    /// Folders looked at ([`CopilotStore::looks`]).
    looks: u64,
    /// Copilot's session store: the subagents that asked their model anything.
    session_store: SessionStoreDb,
    /// Each stream read whole for its subagents.
    spans: HashMap<PathBuf, ReadSpans>,
    /// The subagents the last listing found, and where each is.
    subagents: Vec<Subagent>,
    subagent_at: HashMap<String, usize>,
}

/// What one tool call has looked at (see [`CopilotStore::this_call`]).
#[derive(Default)]
struct ThisCall {
    indexed: std::collections::HashSet<String>,
    live: HashMap<String, bool>,
    /// Whether it looked for subagents (a listing, or an id no folder has).
    subagents_found: bool,
}

impl CopilotStore {
    /// A store over `home` (a `COPILOT_HOME`; one that does not exist yet is empty).
    pub fn open(home: &Path, inbox: SharedInbox) -> CopilotStore {
        CopilotStore {
            home: home.to_path_buf(),
            desk: Desk::new(inbox),
            listed: Vec::new(),
            by_id: HashMap::new(),
            indexed: HashMap::new(),
            workspaces: HashMap::new(),
            surfaces: Recent::default(),
            surface_skips: HashMap::new(),
            wake: None,
            this_call: None,
            looks: 0,
            session_store: SessionStoreDb::open(home),
            spans: HashMap::new(),
            subagents: Vec::new(),
            subagent_at: HashMap::new(),
        }
    }

    /// How many times the store looked at a session's files (indexed them or probed
    /// its lock), for tests and benchmarks: once per session per call at most.
    pub fn looks(&self) -> u64 {
        self.looks
    }

    /// Wakes a cold target with `wake` (for instance `copilot --resume={id} -p "A
    /// message from another session is waiting." --allow-all-tools`): Copilot CLI
    /// 1.0.102 has no way to wake an idle session of its own, and the resumed session's
    /// `sessionStart` hook hands the message over. None by default: a message for a
    /// cold session waits for its next start.
    pub fn wake_command(mut self, wake: Option<WakeCommand>) -> CopilotStore {
        self.wake = wake;
        self
    }

    /// The inbox backend deliveries go to.
    pub fn inbox(&self) -> &SharedInbox {
        self.desk.inbox()
    }

    /// Where the sessions' folders are.
    fn sessions(&self) -> PathBuf {
        self.home.join("session-state")
    }

    /// Finds every session folder and indexes those new or changed since last time.
    fn scan(&mut self) {
        let mut folders: Vec<(String, PathBuf)> = std::fs::read_dir(self.sessions())
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                host_shim::inbox::checked_id(&name).ok()?;
                Some((name, e.path()))
            })
            .collect();
        folders.sort();
        let mut listed = Vec::with_capacity(folders.len());
        for (id, folder) in folders {
            if let Some(found) = self.index_one(&id, &folder) {
                listed.push(found);
            }
        }
        self.by_id = (listed.iter().enumerate())
            .map(|(n, l)| (l.id.clone(), n))
            .collect();
        self.listed = listed;
        self.find_subagents();
    }

    /// The subagents of the sessions listed: every one Copilot's session store has, and
    /// those a live session's stream shows (started before the store has a row).
    fn find_subagents(&mut self) {
        let mut found: Vec<Subagent> = (self.session_store.subagents().iter())
            .filter(|row| self.by_id.contains_key(&row.parent))
            .map(|row| Subagent {
                id: row.id.clone(),
                parent: row.parent.clone(),
                created_ms: row.created_ms,
                model: row.model.clone(),
                title: None,
                ended: None,
            })
            .collect();
        let listed = std::mem::take(&mut self.listed);
        for parent in &listed {
            if !self.live(parent) {
                continue;
            }
            let Some(spans) = self.spans_of(&parent.folder) else {
                continue;
            };
            for span in spans.spans.found.iter().filter(|s| s.created_ms > 0) {
                let at = match found.iter().position(|f| f.id == span.id) {
                    Some(at) => at,
                    None => {
                        found.push(Subagent {
                            id: span.id.clone(),
                            parent: parent.id.clone(),
                            created_ms: span.created_ms,
                            model: None,
                            title: None,
                            ended: None,
                        });
                        found.len() - 1
                    }
                };
                let subagent = &mut found[at];
                subagent.title = span.title.clone();
                subagent.ended = Some(span.ended);
                subagent.model = subagent.model.take().or(span.model.clone());
            }
        }
        self.listed = listed;
        self.subagent_at = (found.iter().enumerate())
            .map(|(n, f)| (f.id.clone(), n))
            .collect();
        self.subagents = found;
        if let Some(call) = &mut self.this_call {
            call.subagents_found = true;
        }
    }

    /// The subagents a stream shows, read whole once (then what was appended).
    fn spans_of(&mut self, folder: &Path) -> Option<&ReadSpans> {
        let path = events_of(folder);
        let previous = self.spans.remove(&path);
        let spans = spans_of(&path, previous)?;
        Some(self.spans.entry(path).or_insert(spans))
    }

    /// The subagent `id`, when a listing (this call's, made now if it made none) found
    /// it.
    fn subagent(&mut self, id: &str) -> Option<Subagent> {
        let searched = self.this_call.as_ref().is_some_and(|c| c.subagents_found);
        if !searched {
            self.scan();
        }
        let at = *self.subagent_at.get(id)?;
        Some(self.subagents[at].clone())
    }

    fn subagent_header(&mut self, subagent: &Subagent) -> SessionHeader {
        let mut header = SessionHeader::top_level(&subagent.id, subagent.created_ms);
        header.parent_id = Some(subagent.parent.clone());
        header.origin = "subagent".to_string();
        header.preset = subagent.model.clone();
        if let Some(&at) = self.by_id.get(&subagent.parent) {
            let parent = self.listed[at].clone();
            header.cwd = parent.workspace.cwd.clone().or(parent.facts.cwd.clone());
            // Copilot writes its stream behind its work: a subagent the stream does not
            // show ended yet is live while its parent is.
            header.live = subagent.ended != Some(true) && self.live(&parent);
        }
        header
    }

    /// A subagent's title: what its parent asked of it, from the parent's stream (read
    /// whole now when the listing did not).
    fn subagent_title(&mut self, subagent: &Subagent) -> Option<String> {
        if subagent.title.is_some() {
            return subagent.title.clone();
        }
        let folder = self.sessions().join(&subagent.parent);
        let spans = self.spans_of(&folder)?;
        spans.spans.span(&subagent.id)?.title.clone()
    }

    /// One folder's session, indexed afresh when its files changed.
    fn index_one(&mut self, id: &str, folder: &Path) -> Option<Listed> {
        self.looks += 1;
        let path = events_of(folder);
        let found_facts = match Stamp::of(&path) {
            Some(stamp) => {
                let previous = self.indexed.remove(&path);
                let facts = match previous {
                    Some(previous) if previous.stamp == stamp => previous,
                    previous => {
                        host_shim::harnesses::logfile::index::<Facts>(&path, stamp, previous)
                            .ok()?
                            .0
                    }
                };
                let found = facts.facts.clone();
                self.indexed.insert(path, facts);
                found
            }
            // A session in its first turn: Copilot writes its event stream later.
            None if folder.join("workspace.yaml").is_file() => Facts::default(),
            None => return None,
        };
        let workspace = self.workspace(folder);
        // A folder whose stream names another session is not this id's.
        if found_facts.id.as_deref().is_some_and(|named| named != id) {
            return None;
        }
        Some(Listed {
            id: id.to_string(),
            folder: folder.to_path_buf(),
            facts: found_facts,
            workspace,
        })
    }

    fn workspace(&mut self, folder: &Path) -> Workspace {
        let path = folder.join("workspace.yaml");
        let Some(stamp) = Stamp::of(&path) else {
            return Workspace::default();
        };
        if let Some((seen, workspace)) = self.workspaces.get(&path)
            && *seen == stamp
        {
            return workspace.clone();
        }
        let workspace = std::fs::read_to_string(&path)
            .map(|text| Workspace::parse(&text))
            .unwrap_or_default();
        self.workspaces.insert(path, (stamp, workspace.clone()));
        workspace
    }

    /// The session `id`, from the last listing or looked up now.
    fn lookup(&mut self, id: &str) -> Option<Listed> {
        let id = host_shim::inbox::checked_id(id).ok()?;
        let seen = self
            .this_call
            .as_ref()
            .is_some_and(|c| c.indexed.contains(id));
        if seen {
            // Looked at in this call already (no folder: a subagent's id, or none).
            let at = *self.by_id.get(id)?;
            return Some(self.listed[at].clone());
        }
        let folder = self.sessions().join(id);
        let found = self.index_one(id, &folder);
        if let Some(call) = &mut self.this_call {
            call.indexed.insert(id.to_string());
        }
        let found = found?;
        match self.by_id.get(id) {
            Some(&at) => self.listed[at] = found.clone(),
            None => {
                self.by_id.insert(id.to_string(), self.listed.len());
                self.listed.push(found.clone());
            }
        }
        Some(found)
    }

    /// Whether `found` is live, probed once per call.
    fn live(&mut self, found: &Listed) -> bool {
        if let Some(&live) = self.this_call.as_ref().and_then(|c| c.live.get(&found.id)) {
            return live;
        }
        self.looks += 1;
        let live = is_live(&found.folder);
        if let Some(call) = &mut self.this_call {
            call.live.insert(found.id.clone(), live);
        }
        live
    }

    fn header(&mut self, found: &Listed) -> SessionHeader {
        let created = (found.workspace.created_at.as_deref())
            .or(found.facts.started.as_deref())
            .and_then(rfc3339_ms)
            .unwrap_or(0);
        let mut header = SessionHeader::top_level(&found.id, created);
        header.live = self.live(found);
        header.cwd = found.workspace.cwd.clone().or(found.facts.cwd.clone());
        header.preset = found.facts.model.clone();
        header
    }
}

fn events_of(folder: &Path) -> PathBuf {
    folder.join("events.jsonl")
}

/// Whether a Copilot process holds the session now: it holds a lock on an
/// `inuse.<pid>.hold` file in the folder while it runs (the file outlives a crash, the
/// lock does not).
fn is_live(folder: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return false;
    };
    entries.flatten().any(|entry| {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if !(name.starts_with("inuse.") && name.ends_with(".hold")) {
            return false;
        }
        let Ok(file) = host_shim::harnesses::logfile::open_record(&entry.path()) else {
            return false;
        };
        matches!(
            file.try_lock_shared(),
            Err(std::fs::TryLockError::WouldBlock)
        )
    })
}

/// The ids of the frames an event stream shows handed over from `from` (its end, or
/// where it stood when the offers were made): what witnesses a hand-over (the hook's
/// `transcriptPath`, or the session's stream).
pub fn handed_over_ids(events: &Path, from: ReadFrom<'_>) -> anyhow::Result<Shown> {
    let bytes = host_shim::harnesses::logfile::witness_since(events, from)
        .map_err(|err| anyhow::anyhow!("cannot read {}: {err}", events.display()))?;
    Ok(parse_surface(&bytes, None).0.handed_over_ids())
}

/// The surface of an event stream (the session's own, or the subagent `agent`'s), and
/// how many lines it skipped.
fn parse_surface(bytes: &[u8], agent: Option<&str>) -> (Surface, u64) {
    let mut parsed = Parsed {
        agent: agent.map(str::to_string),
        ..Parsed::default()
    };
    for (line, complete) in lines(bytes) {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        if !complete {
            parsed.skipped += 1; // still being written
            continue;
        }
        match Event::parse(line) {
            Some(event) => parsed.take(&event),
            None => parsed.skipped += 1,
        }
    }
    let captured_through_seq = parsed.messages.last().map_or(0, |m| m.seq);
    let surface = Surface {
        messages: parsed.messages,
        captured_through_seq,
    };
    (surface, parsed.skipped)
}

/// A surface being read from the start of a stream.
#[derive(Default)]
struct Parsed {
    messages: Vec<Message>,
    /// Where each tool call is: its message and its place among the message's actions.
    calls: HashMap<String, (usize, usize)>,
    skipped: u64,
    /// The subagent whose surface this is; none for the session's own.
    agent: Option<String>,
}

impl Parsed {
    fn push(&mut self, role: Role, source: &str, text: &str, injected: bool) {
        let seq = self.messages.len() as u64 + 1;
        let message = Message::new(seq, role, source, false, Some(text.to_string()));
        self.messages.push(message.injected(injected));
    }

    /// Context Copilot added: a hand-over's frames each as the frame (the person's
    /// side), anything else as Copilot's injected text.
    fn push_context(&mut self, text: &str) {
        let text = text.trim();
        if text.is_empty() {
            return;
        }
        match host_shim::contract::frames::handed_over_frames(text) {
            Some(frames) => (frames.iter()).for_each(|f| self.push(Role::User, "user", f, false)),
            None => self.push(Role::User, "copilot", text, true),
        }
    }

    fn take(&mut self, event: &Event) {
        let ours = match &self.agent {
            Some(agent) => event.agent.as_ref() == Some(agent),
            None => !event.of_a_subagent(),
        };
        if !ours {
            return; // another conversation of the same stream
        }
        match event.kind.as_str() {
            "user.message" => {
                let content = event.text("content").unwrap_or("");
                let Some(transformed) = event.text("transformedContent") else {
                    self.push_context_or_words(content);
                    return;
                };
                let (before, after) = split_transformed(content, transformed);
                self.push_context(before);
                self.push_context_or_words(content);
                let reminders = reminders(after);
                for reminder in &reminders {
                    self.push_context(reminder);
                }
                if reminders.is_empty() {
                    self.push_context(after);
                }
            }
            "assistant.message" => self.take_answer(event),
            "tool.execution_complete" => {
                let id = event.text("toolCallId").unwrap_or("");
                let ok = event.data.get("success").and_then(|s| s.as_bool()) == Some(true);
                if let Some(&(message, action)) = self.calls.get(id) {
                    let status = if ok {
                        ActionStatus::Ok
                    } else {
                        ActionStatus::Error
                    };
                    self.messages[message].actions[action].status = status;
                }
                if let Some(context) = event.post_tool_context() {
                    self.push_context(context);
                }
            }
            "hook.end" => {
                if let Some(context) = event.session_start_context() {
                    self.push_context(context);
                }
            }
            _ if !event.known() => self.skipped += 1,
            _ => {}
        }
    }

    /// A prompt: a hand-over that came as a prompt of its own (`agentStop`'s) is its
    /// frames; anything else is the person's words.
    fn push_context_or_words(&mut self, content: &str) {
        if content.is_empty() {
            return;
        }
        match host_shim::contract::frames::handed_over_frames(content) {
            Some(_) => self.push_context(content),
            None => self.push(Role::User, "user", content, false),
        }
    }

    fn take_answer(&mut self, event: &Event) {
        let text = event.text("content");
        let requests = (event.data.get("toolRequests").and_then(|r| r.as_array()))
            .map_or(&[][..], Vec::as_slice);
        if text.is_none() && requests.is_empty() {
            return;
        }
        let source = format!("model:copilot/{}", event.text("model").unwrap_or("unknown"));
        let seq = self.messages.len() as u64 + 1;
        let at = self.messages.len();
        let mut actions = Vec::with_capacity(requests.len());
        for (n, request) in requests.iter().enumerate() {
            let input = request
                .get("arguments")
                .map_or_else(String::new, |a| match a {
                    serde_json::Value::String(text) => text.clone(),
                    other => other.to_string(),
                });
            if let Some(id) = events::text_of(request, "toolCallId") {
                self.calls.insert(id.to_string(), (at, n));
            }
            actions.push(ToolAction {
                name: events::text_of(request, "name")
                    .unwrap_or("(unnamed)")
                    .to_string(),
                input: host_shim::harnesses::surface::action_input(&input),
                status: ActionStatus::Running,
            });
        }
        let message = Message::new(
            seq,
            Role::Assistant,
            &source,
            false,
            text.map(str::to_string),
        );
        self.messages.push(message.with_actions(actions));
    }
}

impl LoggedSessions for CopilotStore {
    const HARNESS: &'static str = "copilot";

    /// Lines the store could not read, per session as its last read (else its listing)
    /// found them: damaged ones, events of types this store does not know, a last line
    /// still being written.
    fn skipped_lines(&self) -> u64 {
        self.session_store.skipped
            + (self.listed.iter())
                .map(|l| match self.surface_skips.get(&l.id) {
                    Some(&skipped) => skipped,
                    None => {
                        let path = events_of(&l.folder);
                        let consumed = self.indexed.get(&path).map_or(0, |w| w.consumed);
                        let len = Stamp::of(&path).map_or(0, |s| s.len);
                        l.facts.skipped + u64::from(consumed < len)
                    }
                })
                .sum::<u64>()
    }

    fn call_begins(&mut self) {
        self.this_call = Some(ThisCall::default());
    }

    fn call_ends(&mut self) {
        self.this_call = None;
    }

    fn all_sessions(&mut self) -> SessionIndex {
        self.scan();
        if let Some(call) = &mut self.this_call {
            call.indexed
                .extend(self.listed.iter().map(|l| l.id.clone()));
        }
        let listed = std::mem::take(&mut self.listed);
        let mut headers: Vec<SessionHeader> = listed.iter().map(|l| self.header(l)).collect();
        self.listed = listed;
        let subagents = std::mem::take(&mut self.subagents);
        headers.extend(subagents.iter().map(|s| self.subagent_header(s)));
        self.subagents = subagents;
        SessionIndex::of(&headers)
    }

    fn session_header(&mut self, id: &str) -> Option<SessionHeader> {
        let Some(found) = self.lookup(id) else {
            let subagent = self.subagent(id)?;
            return Some(self.subagent_header(&subagent));
        };
        let mut header = self.header(&found);
        header.inbound = self.desk.inbound(id);
        Some(header)
    }

    fn titles(&mut self, ids: &[String]) -> Vec<Option<String>> {
        ids.iter()
            .map(|id| match self.lookup(id) {
                Some(found) => found.workspace.name.or(found.facts.first_prompt),
                None => {
                    let subagent = self.subagent(id)?;
                    self.subagent_title(&subagent)
                }
            })
            .collect()
    }

    fn surface_of(&mut self, id: &str) -> Option<Arc<Surface>> {
        // A session's own events, or a subagent's in its parent's stream.
        let (found, agent) = match self.lookup(id) {
            Some(found) => (found, None),
            None => {
                let subagent = self.subagent(id)?;
                (self.lookup(&subagent.parent)?, Some(subagent.id))
            }
        };
        let path = events_of(&found.folder);
        let Some(stamp) = Stamp::of(&path) else {
            return Some(Arc::new(Surface::default())); // its first turn: nothing written yet
        };
        if let Some(surface) = self.surfaces.surface(id, &stamp) {
            return Some(surface);
        }
        let bytes = host_shim::harnesses::logfile::read_record(&path).ok()?;
        let (surface, skipped) = parse_surface(&bytes, agent.as_deref());
        self.surface_skips.insert(id.to_string(), skipped);
        Some(self.surfaces.keep_surface(id, stamp, surface))
    }
}

/// Copilot's part of the delivery path: every session it lists takes messages, which
/// wait in the inbox for the session's hooks (`host-shim copilot-hook`); a cold one may
/// be woken by the wake command.
impl Recipient for CopilotStore {
    type Plan = ();

    fn desk(&mut self) -> &mut Desk {
        &mut self.desk
    }

    fn resolve(&mut self, target: &str) -> Result<bool, DeliveryRefusal> {
        let found = self.lookup(target).ok_or(DeliveryRefusal::NotFound)?;
        Ok(self.live(&found))
    }

    fn wake(&mut self, arriving: &Arriving) -> Woken<()> {
        wake::woken_if_cold(self.wake.as_ref(), arriving)
    }

    fn accepted(&mut self, waiting: &Waiting, (): ()) -> host_shim::contract::latest::Delivered {
        let target = &waiting.message.target;
        let cwd =
            (self.by_id.get(target.as_str())).and_then(|&at| self.listed[at].workspace.cwd.clone());
        wake::waiting_for_hooks(self.wake.as_ref(), waiting, cwd.as_deref())
    }
}

#[cfg(test)]
mod tests;
