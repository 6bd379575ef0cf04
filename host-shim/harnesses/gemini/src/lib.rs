//! A harness over Gemini CLI's own sessions: the session files under
//! `~/.gemini/tmp/<project>/chats/` ([`chat`]), read only, with the harness-neutral
//! inbox ([`host_shim::inbox`]) for deliveries.
//!
//! What a session is, from its files: its id is the header's `sessionId` (a plain id);
//! a main session is `chats/session-<time>-<id8>.jsonl`. A resume in a later minute
//! writes a stub named after that minute (its header and Gemini's context, written
//! again at each resume) and goes on appending the conversation to the first file: the
//! files of one id are one session, its record the first of them still there. A
//! subagent is `chats/<parent id>/<id>.jsonl` (header `kind`
//! `subagent`), listed with its parent as owner. Created is the header's `startTime`;
//! the cwd the project's folder (`~/.gemini/projects.json` maps each folder to its
//! `<project>` name), a subagent's its header's first directory; the title the
//! session's `summary`, else the person's first prompt (a subagent's: the task its
//! parent gave it); the preset the newest model a message names. Gemini CLI keeps no
//! record of which session runs: a session is live while the Gemini process its
//! `SessionStart` hook registered runs ([`hook::register`], in the presence's live
//! registry); a subagent reads cold (it runs inside its parent's turn).
//!
//! The surface, in the file's order, is what the model was sent: Gemini's own context
//! before the first prompt (`<session_context>`) and each hook's `<hook_context>` as
//! injected `gemini` text, except a hand-over's frames, each shown as the frame itself
//! (user, not injected); the person's words as `user`; the model's text and tool calls
//! as `model:gemini/<model>`, each call's status as recorded (a call's arguments
//! without the stamp a hook of ours adds, [`STAMP_ARGUMENT`]). Tool results, thoughts
//! and Gemini's notes to the person are not shown. seq is the message's place on the
//! surface.
//!
//! Trust model: the files are Gemini's, written by this user's processes; they are
//! read only, a line that is none of Gemini's is skipped and counted, and nothing in
//! them selects a file to open: files are found by listing the folders, and an id
//! becomes part of a path only when it is a plain name ([`host_shim::inbox::checked_id`]).
//! A file that vanishes between a listing and a read (Gemini's retention clean-up
//! deletes old ones) is a session no longer there. A `~/.gemini` that does not exist is
//! an empty store.
//!
//! Cost: a listing reads each file's head and tail once per size and modification time
//! (then only what was appended); a question about one session a listing found looks
//! at that session's files alone; a read folds the session's record whole, cached
//! while it is unchanged.

/// The profile `host-shim` runs this harness by (setup, doctor, hooks, its store from
/// the command's flags).
pub mod profile;
pub use profile::Gemini;
pub mod chat;
pub mod hook;
pub mod write_hook;

use chat::{Chat, ChatMessage, Line, Segment, is_session_context, segments};
use host_shim::contract::latest::{
    ActionStatus, DeliveryRefusal, Role, SessionHeader, SessionIndex, ToolAction,
};
use host_shim::harnesses::logfile::{LineFacts, ReadFrom, Stamp, Windowed, rfc3339_ms};
use host_shim::harnesses::surface::{LoggedSessions, Message, Recent, Surface};
use host_shim::inbox::delivery::{Arriving, Desk, Woken};
use host_shim::inbox::wake::{self, WakeCommand};
use host_shim::inbox::{Recipient, SharedInbox, Shown, Waiting};
use host_shim::presence::{LivePerCall, Presence};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The argument a hook of ours adds to each call of our tools, naming the session that
/// makes it: never shown as the model's input.
pub const STAMP_ARGUMENT: &str = "session_tools_stamp";

/// What Gemini CLI's MCP client sends: one server per CLI process, whose environment
/// names no session (only `GEMINI_CLI=1`); a `tools/call` carries no session and no
/// call id (its `_meta` holds only a progress token). So our `BeforeTool` hook adds
/// the session's stamp to each call's arguments ([`hook::stamp`]).
pub const MCP_CLIENT: host_shim::harnesses::McpClient = host_shim::harnesses::McpClient {
    who: "Gemini CLI",
    caller_env: None,
    caller_meta: None,
    call_id_meta: None,
    stamps: Some(host_shim::harnesses::StampedCalls {
        carrier: host_shim::harnesses::StampCarrier::Argument(STAMP_ARGUMENT),
        under_env: "GEMINI_CLI",
        set_up_by: "host-shim setup gemini",
    }),
};

/// Gemini CLI's folder: `$GEMINI_CLI_HOME/.gemini` when set (Gemini's own override of
/// the home it uses), else `~/.gemini`.
pub fn default_home() -> Option<PathBuf> {
    let home = std::env::var_os("GEMINI_CLI_HOME")
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var_os("HOME"))?;
    Some(PathBuf::from(home).join(".gemini"))
}

/// What a listing needs of one file.
#[derive(Clone, Debug, Default)]
struct Facts {
    id: Option<String>,
    started: Option<String>,
    subagent: bool,
    directory: Option<String>,
    summary: Option<String>,
    first_prompt: Option<String>,
    /// The newest model a message names.
    model: Option<String>,
    skipped: u64,
}

impl LineFacts for Facts {
    fn take_line(&mut self, line: &[u8]) {
        let take_message = |facts: &mut Facts, message: &ChatMessage| {
            if let Some(model) = &message.model {
                facts.model = Some(model.clone());
            }
            if facts.first_prompt.is_none() && message.kind == "user" && !message.is_tool_results()
            {
                let context = message
                    .text_parts()
                    .first()
                    .is_some_and(|t| is_session_context(t));
                if !context {
                    facts.first_prompt = message.person_words();
                }
            }
        };
        match Line::parse(line) {
            Some(Line::Header(header)) => {
                self.id = self.id.take().or(Some(header.session_id));
                self.started = self.started.take().or(header.start_time);
                self.subagent |= header.kind.as_deref() == Some("subagent");
                self.directory = self
                    .directory
                    .take()
                    .or(header.directories.into_iter().next());
                self.summary = header.summary.or(self.summary.take());
            }
            Some(Line::Set(set)) => {
                if let Some(summary) = set.get("summary").and_then(|s| s.as_str()) {
                    self.summary = Some(summary.to_string());
                }
                let messages = set.get("messages").and_then(|m| m.as_array());
                for message in messages.into_iter().flatten() {
                    if let Ok(message) = serde_json::from_value::<ChatMessage>(message.clone()) {
                        take_message(self, &message);
                    }
                }
            }
            Some(Line::Message(message)) => take_message(self, &message),
            None => self.skipped += 1,
        }
    }

    fn then(self, later: Facts) -> Facts {
        Facts {
            id: self.id.or(later.id),
            started: self.started.or(later.started),
            subagent: self.subagent || later.subagent,
            directory: self.directory.or(later.directory),
            summary: later.summary.or(self.summary),
            first_prompt: self.first_prompt.or(later.first_prompt),
            model: later.model.or(self.model),
            skipped: self.skipped + later.skipped,
        }
    }

    fn has_latest(&self) -> bool {
        self.model.is_some()
    }
}

/// One session as the last listing found it.
#[derive(Clone, Debug)]
struct Listed {
    id: String,
    /// Its files, in name order: the record first, then a resume's stubs.
    files: Vec<PathBuf>,
    /// The project folder's name under `tmp/`.
    project: String,
    parent: Option<String>,
    facts: Facts,
}

/// What one tool call has found (see [`GeminiStore::this_call`]).
#[derive(Default)]
struct ThisCall {
    /// It listed every session.
    listed: bool,
    /// The sessions it looked at again without a listing.
    looked: std::collections::HashSet<String>,
}

/// The store: a `~/.gemini`, read only, and an inbox backend for deliveries.
pub struct GeminiStore {
    home: PathBuf,
    desk: Desk,
    listed: Vec<Listed>,
    by_id: HashMap<String, usize>,
    indexed: HashMap<PathBuf, Windowed<Facts>>,
    /// `projects.json` as last read (its stamp; none when it was not there): each
    /// project's name, its folder.
    projects: (Option<Stamp>, HashMap<String, String>),
    surfaces: Recent<(String, Stamp, Arc<Surface>)>,
    surface_skips: HashMap<String, u64>,
    /// What this call found (a call asks about one session more than once, and its
    /// answers describe one state of the harness); none between calls.
    this_call: Option<ThisCall>,
    /// Which sessions run, asked once a call (none without a presence: every session
    /// cold).
    live: Option<LivePerCall>,
    /// Starts Gemini for a cold target the call may wake (none by default).
    wake: Option<WakeCommand>,
}

impl GeminiStore {
    /// A store over `home` (a `~/.gemini`; one that does not exist yet is empty).
    pub fn open(home: &Path, inbox: SharedInbox) -> GeminiStore {
        GeminiStore {
            home: home.to_path_buf(),
            desk: Desk::new(inbox),
            listed: Vec::new(),
            by_id: HashMap::new(),
            indexed: HashMap::new(),
            projects: Default::default(),
            surfaces: Recent::default(),
            surface_skips: HashMap::new(),
            this_call: None,
            live: None,
            wake: None,
        }
    }

    /// Reads which sessions run from `presence` (the live registry Gemini's hooks
    /// write): without one, every session is cold.
    pub fn presence(mut self, presence: Arc<dyn Presence>) -> GeminiStore {
        self.live = Some(LivePerCall::new(presence));
        self
    }

    /// Wakes a cold target with `wake` (for instance `gemini --resume {id} -p "A message
    /// from another session is waiting." --yolo`): Gemini CLI 0.61.0 has no way to wake
    /// an idle session, and the resumed session's `SessionStart` hook hands the message
    /// over. None by default: a message for a cold session waits for its next start.
    pub fn wake_command(mut self, wake: Option<WakeCommand>) -> GeminiStore {
        self.wake = wake;
        self
    }

    /// Whether main session `id` runs now.
    fn live(&mut self, id: &str) -> bool {
        self.live.as_mut().is_some_and(|live| live.is_live(id))
    }

    /// The inbox backend deliveries go to.
    pub fn inbox(&self) -> &SharedInbox {
        self.desk.inbox()
    }

    /// Finds every session file and indexes those new or changed since last time.
    fn scan(&mut self) {
        let mut found: Vec<(PathBuf, String, Option<String>)> = Vec::new();
        let projects = read_dirs(&self.home.join("tmp"));
        for (project, project_dir) in projects {
            let chats = project_dir.join("chats");
            for (name, path) in read_entries(&chats) {
                if path.is_dir() {
                    // A parent's subagents.
                    if host_shim::inbox::checked_id(&name).is_err() {
                        continue;
                    }
                    for (child, child_path) in read_entries(&path) {
                        if child.ends_with(".jsonl") && child_path.is_file() {
                            found.push((child_path, project.clone(), Some(name.clone())));
                        }
                    }
                } else if name.starts_with("session-") && name.ends_with(".jsonl") {
                    found.push((path, project.clone(), None));
                }
            }
        }
        found.sort();
        let mut listed: Vec<Listed> = Vec::new();
        let mut by_id: HashMap<String, usize> = HashMap::new();
        let mut seen_paths = std::collections::HashSet::new();
        for (path, project, parent) in found {
            let Some(facts) = self.index_file(&path) else {
                continue;
            };
            seen_paths.insert(path.clone());
            let Some(id) = facts
                .id
                .clone()
                .filter(|id| host_shim::inbox::checked_id(id).is_ok())
            else {
                continue;
            };
            // A subagent's file names itself; its folder names its parent.
            let parent = parent.filter(|_| facts.subagent);
            match by_id.get(&id) {
                Some(&at) => {
                    let known = &mut listed[at];
                    known.files.push(path);
                    known.facts = std::mem::take(&mut known.facts).then(facts);
                }
                None => {
                    by_id.insert(id.clone(), listed.len());
                    listed.push(Listed {
                        id,
                        files: vec![path],
                        project,
                        parent,
                        facts,
                    });
                }
            }
        }
        // Files gone (deleted by Gemini's clean-up) are forgotten.
        self.indexed.retain(|path, _| seen_paths.contains(path));
        self.listed = listed;
        self.by_id = by_id;
        if let Some(call) = &mut self.this_call {
            call.listed = true;
        }
    }

    /// One file's facts, indexed afresh when it changed; none when it cannot be read.
    fn index_file(&mut self, path: &Path) -> Option<Facts> {
        let stamp = Stamp::of(path)?;
        let previous = self.indexed.remove(path);
        let windowed = match previous {
            Some(previous) if previous.stamp == stamp => previous,
            previous => {
                host_shim::harnesses::logfile::index::<Facts>(path, stamp, previous)
                    .ok()?
                    .0
            }
        };
        let facts = windowed.facts.clone();
        self.indexed.insert(path.to_path_buf(), windowed);
        Some(facts)
    }

    /// Every project's folder, by its name under `tmp/` (`projects.json`, read again
    /// when it changed; none while it is not there).
    fn project_folders(&mut self) -> &HashMap<String, String> {
        let path = self.home.join("projects.json");
        let stamp = Stamp::of(&path);
        if stamp != self.projects.0 {
            let folders = host_shim::harnesses::logfile::read_record(&path)
                .ok()
                .and_then(|bytes| host_shim::json::from_slice::<serde_json::Value>(&bytes).ok())
                .and_then(|json| json.get("projects").and_then(|p| p.as_object()).cloned())
                .map(|projects| {
                    (projects.into_iter())
                        .filter_map(|(folder, name)| Some((name.as_str()?.to_string(), folder)))
                        .collect()
                })
                .unwrap_or_default();
            self.projects = (stamp, folders);
        }
        &self.projects.1
    }

    /// The session `id`: from this call's listing; else, when an earlier listing found
    /// it, its own files looked at again (once per call); else from a listing made now.
    fn lookup(&mut self, id: &str) -> Option<Listed> {
        host_shim::inbox::checked_id(id).ok()?;
        let known = (self.this_call.as_ref()).is_some_and(|c| c.listed || c.looked.contains(id));
        if known {
            let at = *self.by_id.get(id)?;
            return Some(self.listed[at].clone());
        }
        if let Some(&at) = self.by_id.get(id)
            && self.refresh(at)
        {
            if let Some(call) = &mut self.this_call {
                call.looked.insert(id.to_string());
            }
            return Some(self.listed[at].clone());
        }
        self.scan();
        let at = *self.by_id.get(id)?;
        Some(self.listed[at].clone())
    }

    /// The listed session at `at` with its files indexed again; false when none of
    /// them is there any more (a listing finds where it went).
    fn refresh(&mut self, at: usize) -> bool {
        let files = self.listed[at].files.clone();
        let mut facts: Option<Facts> = None;
        let mut kept = Vec::new();
        for file in files {
            if let Some(more) = self.index_file(&file) {
                facts = Some(match facts {
                    Some(earlier) => earlier.then(more),
                    None => more,
                });
                kept.push(file);
            }
        }
        let Some(facts) = facts else {
            return false;
        };
        let listed = &mut self.listed[at];
        listed.files = kept;
        listed.facts = facts;
        true
    }

    fn header(&mut self, found: &Listed) -> SessionHeader {
        let created = found
            .facts
            .started
            .as_deref()
            .and_then(rfc3339_ms)
            .unwrap_or(0);
        let mut header = SessionHeader::top_level(&found.id, created);
        header.preset = found.facts.model.clone();
        header.cwd = match (&found.parent, &found.facts.directory) {
            (Some(_), Some(directory)) => Some(directory.clone()),
            _ => self.project_folders().get(&found.project).cloned(),
        };
        match &found.parent {
            Some(parent) => {
                header.parent_id = Some(parent.clone());
                header.origin = "subagent".to_string();
            }
            None => header.live = self.live(&found.id),
        }
        header
    }
}

/// The folders in `dir`, by name (none when it is not there).
fn read_dirs(dir: &Path) -> Vec<(String, PathBuf)> {
    read_entries(dir)
        .into_iter()
        .filter(|(_, path)| path.is_dir())
        .collect()
}

/// The entries of `dir` whose names are text, in name order.
fn read_entries(dir: &Path) -> Vec<(String, PathBuf)> {
    let mut entries: Vec<(String, PathBuf)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| Some((e.file_name().into_string().ok()?, e.path())))
        .filter(|(name, _)| !name.starts_with('.'))
        .collect();
    entries.sort();
    entries
}

/// The ids of the frames a session file shows handed over from `from` (its end, or
/// where it stood when the offers were made): what witnesses a hand-over (the hook's
/// `transcript_path`).
pub fn handed_over_ids(file: &Path, from: ReadFrom<'_>) -> anyhow::Result<Shown> {
    let bytes = host_shim::harnesses::logfile::witness_since(file, from)
        .map_err(|err| anyhow::anyhow!("cannot read {}: {err}", file.display()))?;
    Ok(surface_of(&Chat::of(&bytes)).handed_over_ids())
}

/// The surface of a folded session.
fn surface_of(chat: &Chat) -> Surface {
    let mut messages: Vec<Message> = Vec::new();
    let mut push =
        |role: Role, source: &str, text: &str, injected: bool, actions: Vec<ToolAction>| {
            let seq = messages.len() as u64 + 1;
            let text = (!text.is_empty()).then(|| text.to_string());
            let message = Message::new(seq, role, source, false, text);
            messages.push(message.injected(injected).with_actions(actions));
        };
    for message in &chat.messages {
        match message.kind.as_str() {
            "user" => {
                // The tools' results are not shown; a hook's context after one is.
                for context in message.result_contexts() {
                    push_context(&mut push, context);
                }
                let mut words_shown = false;
                for text in message.text_parts() {
                    if is_session_context(text) {
                        push(Role::User, "gemini", text.trim(), true, Vec::new());
                        continue;
                    }
                    for segment in segments(text) {
                        match segment {
                            Segment::Context(context) => push_context(&mut push, context),
                            // The person's words once, as they typed them.
                            Segment::Words(_) if words_shown => {}
                            Segment::Words(words) => {
                                words_shown = true;
                                let typed = message.person_words();
                                push(
                                    Role::User,
                                    "user",
                                    typed.as_deref().unwrap_or(words),
                                    false,
                                    Vec::new(),
                                );
                            }
                        }
                    }
                }
            }
            "gemini" => {
                let text = message.content.as_str().unwrap_or("");
                let actions: Vec<ToolAction> = (message.tool_calls.iter())
                    .map(|call| ToolAction {
                        name: call.name.clone(),
                        input: host_shim::harnesses::surface::action_input(&without_stamp(
                            &call.args,
                        )),
                        status: match call.status.as_deref() {
                            Some("success") => ActionStatus::Ok,
                            Some(_) => ActionStatus::Error,
                            None => ActionStatus::Running,
                        },
                    })
                    .collect();
                if text.is_empty() && actions.is_empty() {
                    continue;
                }
                let source = format!(
                    "model:gemini/{}",
                    message.model.as_deref().unwrap_or("unknown")
                );
                push(Role::Assistant, &source, text, false, actions);
            }
            _ => {} // Gemini's notes to the person: its model is not sent them
        }
    }
    let captured_through_seq = messages.last().map_or(0, |m| m.seq);
    Surface {
        messages,
        captured_through_seq,
    }
}

/// A hook's context: a hand-over's frames each as the frame (the person's side),
/// anything else as Gemini's injected text.
fn push_context(push: &mut impl FnMut(Role, &str, &str, bool, Vec<ToolAction>), context: &str) {
    let context = context.trim();
    if context.is_empty() {
        return;
    }
    match host_shim::contract::frames::handed_over_frames(context) {
        Some(frames) => {
            (frames.iter()).for_each(|f| push(Role::User, "user", f, false, Vec::new()))
        }
        None => push(Role::User, "gemini", context, true, Vec::new()),
    }
}

/// A call's arguments as JSON, without the stamp a hook of ours added.
fn without_stamp(args: &serde_json::Value) -> String {
    match args {
        serde_json::Value::Object(map) if map.contains_key(STAMP_ARGUMENT) => {
            let mut map = map.clone();
            map.remove(STAMP_ARGUMENT);
            serde_json::Value::Object(map).to_string()
        }
        other => other.to_string(),
    }
}

impl LoggedSessions for GeminiStore {
    const HARNESS: &'static str = "gemini";

    /// Lines the store could not read, per session as its last read (else its listing)
    /// found them.
    fn skipped_lines(&self) -> u64 {
        (self.listed.iter())
            .map(|l| match self.surface_skips.get(&l.id) {
                Some(&skipped) => skipped,
                None => l.facts.skipped,
            })
            .sum()
    }

    fn call_begins(&mut self) {
        self.this_call = Some(ThisCall::default());
        if let Some(live) = &mut self.live {
            live.begin();
        }
    }

    fn call_ends(&mut self) {
        self.this_call = None;
        if let Some(live) = &mut self.live {
            live.end();
        }
    }

    fn all_sessions(&mut self) -> SessionIndex {
        self.scan();
        let listed = std::mem::take(&mut self.listed);
        let headers: Vec<SessionHeader> = listed.iter().map(|l| self.header(l)).collect();
        self.listed = listed;
        SessionIndex::of(&headers)
    }

    fn session_header(&mut self, id: &str) -> Option<SessionHeader> {
        let found = self.lookup(id)?;
        let mut header = self.header(&found);
        header.inbound = self.desk.inbound(id);
        Some(header)
    }

    fn titles(&mut self, ids: &[String]) -> Vec<Option<String>> {
        ids.iter()
            .map(|id| {
                let found = self.lookup(id)?;
                match found.parent {
                    Some(_) => found.facts.first_prompt,
                    None => found.facts.summary.or(found.facts.first_prompt),
                }
            })
            .collect()
    }

    fn surface_of(&mut self, id: &str) -> Option<Arc<Surface>> {
        let found = self.lookup(id)?;
        // The record: the first file still there (Gemini's clean-up may delete one).
        let (file, stamp) = (found.files.iter()).find_map(|f| Some((f, Stamp::of(f)?)))?;
        if let Some(surface) = self.surfaces.surface(id, &stamp) {
            return Some(surface);
        }
        let chat = Chat::of(&host_shim::harnesses::logfile::read_record(file).ok()?);
        self.surface_skips.insert(id.to_string(), chat.skipped);
        Some(self.surfaces.keep_surface(id, stamp, surface_of(&chat)))
    }
}

/// Gemini's part of the delivery path: every main session takes messages, which wait
/// in the inbox for the session's hooks; a cold one may be woken by the wake command.
impl Recipient for GeminiStore {
    type Plan = ();

    fn desk(&mut self) -> &mut Desk {
        &mut self.desk
    }

    fn resolve(&mut self, target: &str) -> Result<bool, DeliveryRefusal> {
        match self.lookup(target) {
            Some(found) if found.parent.is_none() => Ok(self.live(target)),
            _ => Err(DeliveryRefusal::NotFound),
        }
    }

    fn wake(&mut self, arriving: &Arriving) -> Woken<()> {
        wake::woken_if_cold(self.wake.as_ref(), arriving)
    }

    fn accepted(&mut self, waiting: &Waiting, (): ()) -> host_shim::contract::latest::Delivered {
        let target = waiting.message.target.clone();
        let cwd = self
            .lookup(&target)
            .and_then(|found| self.header(&found).cwd);
        wake::waiting_for_hooks(self.wake.as_ref(), waiting, cwd.as_deref())
    }
}

#[cfg(test)]
mod tests;
