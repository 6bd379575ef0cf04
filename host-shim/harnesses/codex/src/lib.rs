//! A harness over Codex's own threads: the rollouts under `CODEX_HOME/sessions/`, read
//! only, with the harness-neutral inbox ([`host_shim::inbox`]) for deliveries.
//!
//! What a thread is, from its rollout (`rollout.rs`): its id is `session_meta`'s, as
//! written; created is `session_meta`'s timestamp; cwd the latest `turn_context`'s,
//! else `session_meta`'s; the preset the latest `turn_context` model; the title the
//! newest name `session_index.jsonl` gives it, else the person's first message. A thread
//! with `parent_thread_id` is a subagent owned by that thread; a fork is top-level, and
//! its surface starts with the base thread's records before its `history_base`. Live is
//! its writer lock held (`thread-writer-locks/<id>.lock`: the file outlives a crash,
//! the lock does not). Archived threads (`archived_sessions/`) are not listed.
//!
//! The surface: the `response_item` messages after the last compaction (the
//! compaction's replacement history first, its summary marked replaced), text parts
//! only, seq = the record's ordinal, source `user` or `model:<provider>/<model>`
//! (`codex` for developer and system instructions), injected as the content parts'
//! provenance says (no part from the person).
//!
//! Trust model: the rollouts are Codex's, written by this user's processes; they are
//! read only, a line that is not a record is skipped and counted, and nothing in them
//! selects a file to open but a thread id made a plain name first
//! ([`host_shim::inbox::checked_id`]). A `CODEX_HOME` that does not exist is an empty store.
//!
//! Cost: as the Claude store (`logfile.rs`): a listing reads each rollout's
//! head and tail once per size and modification time, then only what was appended; a
//! read parses the one rollout (and a fork's base up to its history base), cached and
//! read on as it grows.

/// The profile `host-shim` runs this harness by (setup, doctor, hooks, its store from
/// the command's flags).
pub mod profile;
pub use profile::Codex;
pub mod daemon;
pub mod hook;
pub mod rollout;
pub mod websocket;
pub mod write_hook;

use daemon::{AppServer, ThreadStatus};
use host_shim::contract::latest::{
    ActionStatus, Delivered, DeliveryMode, DeliveryRefusal, DeliveryState, InboundPolicy, Role,
    SessionHeader, SessionIndex, ToolAction,
};
use host_shim::harnesses::McpClient;
use host_shim::harnesses::logfile::{
    self, LineFacts, Stamp, Windowed, lines, read_range, rfc3339_ms, system_time_ms,
};
use host_shim::harnesses::surface::{LoggedSessions, Message, Recent, Surface, handed_over_frames};
use host_shim::inbox::delivery::{Arriving, Woken};
use host_shim::inbox::{Desk, Recipient, SharedInbox, Takes, Waiting};
use rollout::{Meta, Record, Said};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// Codex's home as Codex finds it: `$CODEX_HOME`, else `~/.codex`; none without either.
pub fn default_home() -> Option<PathBuf> {
    host_shim::os::env_or_home("CODEX_HOME", ".codex")
}

/// What a listing gathers from a rollout.
#[derive(Clone, Debug, Default)]
struct Facts {
    meta: Option<Meta>,
    first_prompt: Option<String>,
    turn_cwd: Option<String>,
    model: Option<String>,
    skipped_lines: u64,
}

impl LineFacts for Facts {
    fn take_line(&mut self, line: &[u8]) {
        let Some(record) = Record::parse(line) else {
            self.skipped_lines += 1;
            return;
        };
        match record.kind.as_str() {
            "session_meta" if self.meta.is_none() => self.meta = Some(Meta::of(&record.payload)),
            "turn_context" => {
                let (cwd, model) = rollout::turn(&record.payload);
                self.turn_cwd = cwd.or(self.turn_cwd.take());
                self.model = model.or(self.model.take());
            }
            "response_item" if self.first_prompt.is_none() => {
                if let Some(said) = Said::of(&record.payload).filter(|s| s.from_person) {
                    self.first_prompt = said.text;
                }
            }
            _ => {}
        }
    }

    fn then(self, later: Facts) -> Facts {
        Facts {
            meta: self.meta.or(later.meta),
            first_prompt: self.first_prompt.or(later.first_prompt),
            turn_cwd: later.turn_cwd.or(self.turn_cwd),
            model: later.model.or(self.model),
            skipped_lines: self.skipped_lines + later.skipped_lines,
        }
    }

    fn has_latest(&self) -> bool {
        self.model.is_some()
    }
}

/// One rollout found by the last scan.
#[derive(Clone, Debug)]
struct Found {
    path: PathBuf,
    stamp: Stamp,
    id: String,
    facts: Arc<Facts>,
}

impl Found {
    /// The thread a rollout holds, or `None` when its session record (`session_meta`,
    /// the first line Codex writes) is not there: a file still being started, or not
    /// Codex's, is no thread.
    fn of(path: &Path, indexed: &Windowed<Facts>) -> Option<Found> {
        let meta = indexed.facts.meta.as_ref()?;
        let id = meta.id.clone().unwrap_or_else(|| id_from_name(path));
        Some(Found {
            path: path.to_path_buf(),
            stamp: indexed.stamp,
            id,
            facts: Arc::new(indexed.facts.clone()),
        })
    }
}

/// A rollout's surface, parsed up to its last whole line and advanced from there.
struct ParsedSurface {
    path: PathBuf,
    stamp: Stamp,
    consumed: u64,
    provider: String,
    model: String,
    damaged: u64,
    surface: Arc<Surface>,
    /// Where each tool call not ended yet is (its message's seq, its place among the
    /// message's calls), by call id.
    open_calls: std::collections::HashMap<String, (u64, usize)>,
}

impl ParsedSurface {
    fn new(path: &Path, stamp: Stamp, provider: &str) -> ParsedSurface {
        ParsedSurface {
            path: path.to_path_buf(),
            stamp,
            consumed: 0,
            provider: provider.to_string(),
            model: "unknown".to_string(),
            damaged: 0,
            surface: Arc::new(Surface::default()),
            open_calls: std::collections::HashMap::new(),
        }
    }

    /// Takes the whole lines of `bytes` (those before `before_ordinal`, when given).
    /// Returns the bytes those lines take.
    fn take(&mut self, bytes: &[u8], before_ordinal: Option<u64>) -> u64 {
        let mut consumed = 0;
        for (line, complete) in lines(bytes) {
            if !complete {
                break;
            }
            consumed += line.len() as u64 + 1;
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let Some(record) = Record::parse(line) else {
                self.damaged += 1;
                continue;
            };
            let ordinal = record.ordinal.unwrap_or(0);
            if before_ordinal.is_some_and(|end| ordinal >= end) {
                break;
            }
            self.take_record(ordinal, &record);
        }
        consumed
    }

    fn take_record(&mut self, ordinal: u64, record: &Record) {
        let surface = Arc::make_mut(&mut self.surface);
        surface.captured_through_seq = surface.captured_through_seq.max(ordinal);
        match record.kind.as_str() {
            "turn_context" => {
                if let (_, Some(model)) = rollout::turn(&record.payload) {
                    self.model = model;
                }
            }
            "response_item" => {
                if let Some(mut said) = Said::of(&record.payload) {
                    // A hook's hand-over (Codex records context as a developer message,
                    // a Stop's block reason wrapped in `<hook_prompt>`): the frames
                    // themselves, as the person's side of the conversation.
                    let text = said.text.as_deref().unwrap_or("");
                    let inner = rollout::hook_prompt(text).unwrap_or(text);
                    if handed_over_frames(inner).is_some() {
                        said.text = Some(inner.to_string());
                        said.role = Role::User;
                        said.injected = false;
                    }
                    let message = message(ordinal, said, false, &self.provider, &self.model);
                    Arc::make_mut(&mut self.surface).messages.push(message);
                } else if let Some(called) = rollout::Called::of(&record.payload) {
                    self.take_call(ordinal, called);
                } else if let Some((call_id, failed)) = rollout::call_ended(&record.payload) {
                    let Some((seq, at)) = self.open_calls.remove(&call_id) else {
                        return;
                    };
                    let surface = Arc::make_mut(&mut self.surface);
                    let made = surface.messages.iter_mut().rev().find(|m| m.seq == seq);
                    if let Some(action) = made.and_then(|m| m.actions.get_mut(at)) {
                        action.status = if failed {
                            ActionStatus::Error
                        } else {
                            ActionStatus::Ok
                        };
                    }
                }
            }
            "compacted" => {
                // The model's input from here on: the replacement history, the summary
                // (its last item, whose text is the compaction's message) replaced.
                let summary = record.payload.get("message").and_then(|m| m.as_str());
                let history = (record.payload.get("replacement_history"))
                    .and_then(|h| h.as_array())
                    .map(Vec::as_slice)
                    .unwrap_or_default();
                let said: Vec<Said> = history.iter().filter_map(Said::of).collect();
                let count = said.len() as u64;
                let (provider, model) = (self.provider.clone(), self.model.clone());
                let surface = Arc::make_mut(&mut self.surface);
                surface.messages.clear();
                self.open_calls.clear();
                for (index, mut said) in said.into_iter().enumerate() {
                    // Each at its place just before the compaction, in order.
                    let seq = ordinal.saturating_sub(count - 1 - index as u64);
                    let replaced = summary.is_some() && said.text.as_deref() == summary;
                    // The summary stands in for the conversation: shown, as replaced.
                    said.injected &= !replaced;
                    surface
                        .messages
                        .push(message(seq, said, replaced, &provider, &model));
                }
            }
            _ => {}
        }
    }
}

impl ParsedSurface {
    /// A tool call joins the model's message it follows, or is a message of its own
    /// (the model called without a word); it runs until its output ends it.
    fn take_call(&mut self, ordinal: u64, called: rollout::Called) {
        let source = format!("model:{}/{}", self.provider, self.model);
        let messages = &mut Arc::make_mut(&mut self.surface).messages;
        if messages.last().is_none_or(|m| m.role != Role::Assistant) {
            messages.push(Message::new(ordinal, Role::Assistant, &source, false, None));
        }
        let Some(last) = messages.last_mut() else {
            return;
        };
        self.open_calls
            .insert(called.call_id, (last.seq, last.actions.len()));
        last.actions.push(ToolAction {
            name: called.name,
            input: called.input,
            status: ActionStatus::Running,
        });
    }
}

/// A surface message from what the model was given.
fn message(seq: u64, said: Said, replaced: bool, provider: &str, model: &str) -> Message {
    let source = match said.role {
        Role::User => "user".to_string(),
        Role::Assistant => format!("model:{provider}/{model}"),
        Role::System => "codex".to_string(),
    };
    Message::new(seq, said.role, &source, replaced, said.text).injected(said.injected)
}

/// What a store has read of rollouts, for tests and benchmarks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RolloutReads {
    /// Rollouts indexed for a listing (an unchanged one is not read again).
    pub summarized: u64,
    /// Bytes read for those.
    pub summary_bytes: u64,
    /// Rollouts parsed whole for a read.
    pub parsed: u64,
    /// Bytes read for reads.
    pub surface_bytes: u64,
    /// `stat`s of rollouts (a listing stats every one; a lookup the one it needs).
    pub stats: u64,
    /// Writer locks probed (a thread's liveness).
    pub lock_probes: u64,
}

/// The store: a `CODEX_HOME`, read only, and an inbox backend for deliveries.
pub struct CodexStore {
    home: PathBuf,
    desk: Desk,
    found: Vec<Found>,
    by_id: HashMap<String, usize>,
    indexed: HashMap<PathBuf, Windowed<Facts>>,
    names: Option<(Stamp, HashMap<String, String>)>,
    surfaces: Recent<ParsedSurface>,
    reads: RolloutReads,
    through_daemon: bool,
    daemon_time: Duration,
    /// During a tool call, what this call found of each thread it looked up: whether
    /// its rollout was `stat`ed and whether it is live. A call asks for one thread more
    /// than once (a send: its header, then the delivery), and its answers describe one
    /// state of the harness, so each is looked at once per call. `None` between calls:
    /// every lookup looks.
    this_call: Option<ThisCall>,
    /// Writer locks probed ([`RolloutReads::lock_probes`]; probing needs no `&mut`).
    lock_probes: std::cell::Cell<u64>,
}

/// What one tool call has looked at (see [`CodexStore::this_call`]).
#[derive(Default)]
struct ThisCall {
    statted: HashSet<String>,
    /// By position in `found` (a listing fills it without a string per thread); a
    /// rescan, which moves positions, empties it.
    live: std::cell::RefCell<Vec<Option<bool>>>,
}

/// The time a hand-over through the daemon may take by default: half the default call
/// deadline.
pub const DAEMON_TIME: Duration = Duration::from_millis(500);

impl CodexStore {
    /// A store over `home` (a `CODEX_HOME`; one that does not exist yet is empty).
    pub fn open(home: &Path, inbox: SharedInbox) -> CodexStore {
        CodexStore {
            home: home.to_path_buf(),
            desk: Desk::new(inbox),
            found: Vec::new(),
            by_id: HashMap::new(),
            indexed: HashMap::new(),
            names: None,
            surfaces: Recent::default(),
            reads: RolloutReads::default(),
            through_daemon: true,
            daemon_time: DAEMON_TIME,
            this_call: None,
            lock_probes: std::cell::Cell::new(0),
        }
    }

    /// How long a hand-over through the daemon may take ([`DAEMON_TIME`] by default):
    /// it runs inside the plugin's call, whose deadline counts it, so give it well under
    /// that deadline. Past it, the message waits for the thread's hooks.
    pub fn daemon_time(mut self, budget: Duration) -> CodexStore {
        self.daemon_time = budget;
        self
    }

    /// Whether a delivery may go through the Codex app-server daemon when one runs
    /// (`daemon.rs`; on by default): off, every message waits for the thread's hooks.
    pub fn through_daemon(mut self, on: bool) -> CodexStore {
        self.through_daemon = on;
        self
    }

    pub fn reads(&self) -> RolloutReads {
        RolloutReads {
            lock_probes: self.lock_probes.get(),
            ..self.reads
        }
    }

    /// The inbox backend deliveries go to.
    pub fn inbox(&self) -> &SharedInbox {
        self.desk.inbox()
    }

    fn consumed(&self, path: &Path) -> u64 {
        self.indexed.get(path).map_or(0, |w| w.consumed)
    }

    /// Every rollout under `sessions/` (any depth: `YYYY/MM/DD`).
    fn rollouts(&self) -> Vec<PathBuf> {
        let mut all = Vec::new();
        let mut folders = vec![self.home.join("sessions")];
        while let Some(folder) = folders.pop() {
            let Ok(entries) = std::fs::read_dir(&folder) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                let Ok(kind) = entry.file_type() else {
                    continue;
                };
                if kind.is_dir() {
                    folders.push(path);
                } else if kind.is_file()
                    && path.extension().is_some_and(|e| e == "jsonl")
                    && entry.file_name().to_string_lossy().starts_with("rollout-")
                {
                    all.push(path);
                }
            }
        }
        all.sort();
        all
    }

    /// Finds every rollout and indexes those new or changed since last time.
    fn scan(&mut self) {
        let mut found = Vec::new();
        for path in self.rollouts() {
            self.reads.stats += 1;
            let Some(stamp) = Stamp::of(&path) else {
                continue;
            };
            let facts = match self.indexed.remove(&path) {
                Some(previous) if previous.stamp == stamp => previous,
                previous => {
                    let Ok((windowed, bytes)) = logfile::index(&path, stamp, previous) else {
                        continue;
                    };
                    self.reads.summarized += 1;
                    self.reads.summary_bytes += bytes;
                    windowed
                }
            };
            if let Some(thread) = Found::of(&path, &facts) {
                found.push(thread);
            }
            self.indexed.insert(path, facts);
        }
        let listed: HashSet<&PathBuf> = found.iter().map(|f| &f.path).collect();
        self.indexed.retain(|path, _| listed.contains(path));
        self.by_id.clear();
        for (position, f) in found.iter().enumerate() {
            self.by_id.entry(f.id.clone()).or_insert(position);
        }
        self.found = found;
        if let Some(this_call) = &self.this_call {
            this_call.live.borrow_mut().clear();
        }
        self.read_names();
    }

    /// `session_index.jsonl`: the names the person gave threads, the newest line
    /// winning; read again only when it changed.
    fn read_names(&mut self) {
        let path = self.home.join("session_index.jsonl");
        let Some(stamp) = Stamp::of(&path) else {
            self.names = None;
            return;
        };
        if self.names.as_ref().is_some_and(|(s, _)| *s == stamp) {
            return;
        }
        let mut names = HashMap::new();
        let bytes = host_shim::os::read_regular(&path, 16 << 20).unwrap_or_default();
        for (line, complete) in lines(&bytes) {
            let Some(entry) = complete
                .then(|| host_shim::json::from_slice::<serde_json::Value>(line).ok())
                .flatten()
            else {
                continue;
            };
            let id = entry.get("id").or_else(|| entry.get("thread_id"));
            let name = entry.get("thread_name").or_else(|| entry.get("name"));
            if let (Some(id), Some(name)) =
                (id.and_then(|v| v.as_str()), name.and_then(|v| v.as_str()))
            {
                names.insert(id.to_string(), name.to_string());
            }
        }
        self.names = Some((stamp, names));
    }

    /// The thread `id` as its rollout is now: `stat`ed once per call; a rollout that
    /// changed is indexed again alone (one that went away, or now names another
    /// thread, rescans the folder).
    fn lookup(&mut self, id: &str) -> Option<Found> {
        if !self.by_id.contains_key(id) {
            self.scan();
        }
        let position = *self.by_id.get(id)?;
        let found = self.found[position].clone();
        if let Some(this_call) = &mut self.this_call
            && !this_call.statted.insert(id.to_string())
        {
            return Some(found); // looked at during this call
        }
        self.reads.stats += 1;
        let rescan = |store: &mut CodexStore| {
            store.scan();
            store.by_id.get(id).map(|&p| store.found[p].clone())
        };
        let Some(stamp) = Stamp::of(&found.path) else {
            return rescan(self);
        };
        if stamp == found.stamp {
            return Some(found);
        }
        let previous = self.indexed.remove(&found.path);
        let Ok((windowed, bytes)) = logfile::index(&found.path, stamp, previous) else {
            return rescan(self);
        };
        self.reads.summarized += 1;
        self.reads.summary_bytes += bytes;
        let updated = Found::of(&found.path, &windowed);
        self.indexed.insert(found.path.clone(), windowed);
        let Some(updated) = updated.filter(|thread| thread.id == id) else {
            return rescan(self);
        };
        self.found[position] = updated.clone();
        Some(updated)
    }

    /// Whether a Codex process holds the thread now: its writer lock is taken. Probed
    /// once per call.
    fn is_live(&self, id: &str) -> bool {
        let memo = (self.this_call.as_ref()).zip(self.by_id.get(id).copied());
        let Some((this_call, position)) = memo else {
            return self.probe_writer_lock(id);
        };
        if let Some(&Some(live)) = this_call.live.borrow().get(position) {
            return live;
        }
        let live = self.probe_writer_lock(id);
        let mut known = this_call.live.borrow_mut();
        if known.len() <= position {
            known.resize(self.found.len().max(position + 1), None);
        }
        known[position] = Some(live);
        live
    }

    fn probe_writer_lock(&self, id: &str) -> bool {
        self.lock_probes.set(self.lock_probes.get() + 1);
        let Ok(id) = host_shim::inbox::checked_id(id) else {
            return false;
        };
        let path = self
            .home
            .join("thread-writer-locks")
            .join(format!("{id}.lock"));
        let Ok(file) = host_shim::harnesses::logfile::open_record(&path) else {
            return false; // no lock file: never held, or cannot be probed: cold
        };
        matches!(
            file.try_lock_shared(),
            Err(std::fs::TryLockError::WouldBlock)
        )
    }

    fn header(&self, found: &Found) -> SessionHeader {
        let facts = &found.facts;
        let meta = facts.meta.clone().unwrap_or_default();
        SessionHeader {
            id: found.id.clone(),
            created_at_ms: (meta.created.as_deref())
                .and_then(rfc3339_ms)
                .unwrap_or_else(|| system_time_ms(found.stamp.modified)),
            live: self.is_live(&found.id),
            parent_id: meta.parent.clone(),
            origin: if meta.subagent { "subagent" } else { "user" }.to_string(),
            cwd: facts.turn_cwd.clone().or(meta.cwd),
            preset: facts.model.clone(),
            inbound: InboundPolicy::Accept,
            machine: None,
        }
    }

    fn title(&self, found: &Found) -> Option<String> {
        (self.names.as_ref())
            .and_then(|(_, names)| names.get(&found.id).cloned())
            .or_else(|| found.facts.first_prompt.clone())
    }

    /// A fork's surface begins with its base thread's records before its history base.
    fn take_base(
        &mut self,
        parsed: &mut ParsedSurface,
        base: &str,
        end_ordinal: u64,
        end_byte: u64,
    ) {
        let Some(found) = self.lookup(base) else {
            return;
        };
        let Ok(mut file) = host_shim::harnesses::logfile::open_record(&found.path) else {
            return;
        };
        let end = end_byte.min(found.stamp.len);
        let Ok(bytes) = read_range(&mut file, 0, end) else {
            return;
        };
        self.reads.surface_bytes += bytes.len() as u64;
        parsed.take(&bytes, Some(end_ordinal));
    }
}

/// A thread id from a rollout's name (`rollout-<local time>-<id>.jsonl`), for a rollout
/// whose `session_meta` names no id: the last five dash-separated groups.
fn id_from_name(path: &Path) -> String {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let parts: Vec<&str> = stem.split('-').collect();
    if parts.len() >= 5 {
        parts[parts.len() - 5..].join("-")
    } else {
        stem
    }
}

impl LoggedSessions for CodexStore {
    const HARNESS: &'static str = "codex";

    /// Lines the last listing could not read: damaged ones and last lines still being
    /// written.
    fn skipped_lines(&self) -> u64 {
        (self.found.iter())
            .map(|f| f.facts.skipped_lines + u64::from(self.consumed(&f.path) < f.stamp.len))
            .sum()
    }

    fn call_begins(&mut self) {
        self.this_call = Some(ThisCall::default());
    }

    fn call_ends(&mut self) {
        self.this_call = None;
    }

    fn all_sessions(&mut self) -> SessionIndex {
        self.scan();
        let headers: Vec<SessionHeader> = self.found.iter().map(|f| self.header(f)).collect();
        SessionIndex::of(&headers)
    }

    fn session_header(&mut self, id: &str) -> Option<SessionHeader> {
        let found = self.lookup(id)?;
        let mut header = self.header(&found);
        header.inbound = self.desk.inbound(&header.id);
        Some(header)
    }

    fn titles(&mut self, ids: &[String]) -> Vec<Option<String>> {
        ids.iter()
            .map(|id| {
                let found = self.lookup(id)?;
                self.title(&found)
            })
            .collect()
    }

    /// The thread's surface now: parsed once (a fork's base first), then read on.
    fn surface_of(&mut self, id: &str) -> Option<Arc<Surface>> {
        let found = self.lookup(id)?;
        let mut parsed = match self.surfaces.take(|s| s.path == found.path) {
            Some(parsed) if parsed.stamp == found.stamp => {
                let surface = parsed.surface.clone();
                self.surfaces.keep(parsed);
                return Some(surface);
            }
            Some(parsed) if found.stamp.grew_from(&parsed.stamp, parsed.consumed) => parsed,
            _ => {
                self.reads.parsed += 1;
                let meta = found.facts.meta.clone().unwrap_or_default();
                let provider = meta.provider.as_deref().unwrap_or("codex");
                let mut parsed = ParsedSurface::new(&found.path, found.stamp, provider);
                if let (Some(base), Some((end_ordinal, end_byte))) =
                    (meta.forked_from, meta.base_end)
                {
                    self.take_base(&mut parsed, &base, end_ordinal, end_byte);
                }
                parsed
            }
        };
        let mut file = host_shim::harnesses::logfile::open_record(&found.path).ok()?;
        let bytes = read_range(&mut file, parsed.consumed, found.stamp.len).ok()?;
        self.reads.surface_bytes += bytes.len() as u64;
        parsed.consumed += parsed.take(&bytes, None);
        parsed.stamp = found.stamp;
        let surface = parsed.surface.clone();
        self.surfaces.keep(parsed);
        Some(surface)
    }
}

/// What the daemon will do with a new message for a thread.
pub struct DaemonPlan {
    /// The daemon loaded the thread for it (it was cold: no process held it).
    resumed: bool,
    /// The waiting messages the new turn (or the running one) takes.
    takes: Takes,
}

impl CodexStore {
    /// Whether the app-server daemon can take a message for `target` now, and how
    /// (`daemon.rs`): an idle thread it holds gets everything waiting as a new turn; a
    /// running one the waiting `steer` messages (a `queue` message waits for the turn's
    /// end, where the Stop hook hands it over); a cold thread is loaded now, before the
    /// message is spooled, so the spool records only a wake that happened (the caller
    /// asks only when waking is allowed). A thread another process holds (its writer
    /// lock taken, not by the daemon) is left to its hooks.
    fn daemon_plan(
        &self,
        target: &str,
        live: bool,
        mode: DeliveryMode,
    ) -> Option<(AppServer, DaemonPlan)> {
        if !self.through_daemon {
            return None;
        }
        let said = |err: anyhow::Error| {
            eprintln!(
                "host-shim: the Codex app-server daemon cannot take a message for {target} now, so it waits for the thread's hooks: {err:#}"
            );
        };
        let mut server = AppServer::connect(&self.home, self.daemon_time)
            .map_err(said)
            .ok()??;
        let status = match server.thread_status(target) {
            Ok(status) => status,
            Err(err) => {
                said(err);
                return None;
            }
        };
        let plan = match status {
            ThreadStatus::Idle => DaemonPlan {
                resumed: false,
                takes: Takes::All,
            },
            ThreadStatus::Active if mode == DeliveryMode::Steer => DaemonPlan {
                resumed: false,
                takes: Takes::Steer,
            },
            ThreadStatus::NotLoaded if !live => match server.resume(target) {
                Ok(()) => DaemonPlan {
                    resumed: true,
                    takes: Takes::All,
                },
                Err(err) => {
                    said(err);
                    return None;
                }
            },
            _ => {
                server.close();
                return None;
            }
        };
        Some((server, plan))
    }

    /// Hands the waiting messages the plan takes (`ours` among them) to the thread
    /// through the daemon: each is claimed, given in one `turn/start`, and offered once
    /// the daemon named the turn it is in; handed over when the thread's rollout shows
    /// it (looked at for up to [`ROLLOUT_SHOWS_WITHIN`], then by the thread's next hook).
    /// When the daemon fails, they go back to the inbox for the thread's hooks.
    fn hand_over_through(
        &mut self,
        mut server: AppServer,
        plan: DaemonPlan,
        target: &str,
        key: &str,
        ours: &Waiting,
    ) -> Delivered {
        let rollout = self.lookup(target).map(|found| found.path);
        // Its end (bounded): a turn the daemon starts notes no place in it.
        let mut shown = |_: &[String]| match &rollout {
            Some(path) => {
                rollout::handed_over_ids(path, host_shim::harnesses::logfile::ReadFrom::End)
            }
            None => Ok(host_shim::inbox::Shown::new()),
        };
        let report = host_shim::inbox::hand_over_waiting(
            &**self.desk.inbox(),
            target,
            plan.takes,
            hook::ANSWER_CHARS,
            host_shim::inbox::Witness::Record(Box::new(&mut shown)),
            |text| server.start_turn(target, text).map(drop),
        );
        server.close();
        let offered = match report {
            Ok(report) => report.handed_over.contains(&ours.message),
            Err(err) => {
                eprintln!(
                    "host-shim: the Codex app-server daemon did not take the message for {target}; it waits for the thread's hooks: {err:#}"
                );
                false
            }
        };
        let inbox = self.desk.inbox().clone();
        // Codex records the turn's input as it starts it: settled as soon as it does.
        let until = std::time::Instant::now() + ROLLOUT_SHOWS_WITHIN;
        let mut handed = false;
        while offered && !handed && std::time::Instant::now() < until {
            let settled = inbox.settle(target, host_shim::inbox::OFFERS_EXPIRE_AFTER, &mut shown);
            handed = host_shim::inbox::settled_as_handed(&*inbox, ours, settled);
            if !handed {
                std::thread::sleep(std::time::Duration::from_millis(25));
            }
        }
        let state = match handed {
            true => DeliveryState::HandedOver,
            // A hook may have handed it over meanwhile.
            false => (inbox.find(target, key).ok().flatten())
                .map_or(DeliveryState::Waiting, |now| now.state),
        };
        Delivered {
            woke: plan.resumed,
            repeat: false,
            state,
            message_id: ours.message.message_id.clone(),
        }
    }
}

/// How long a send through the daemon looks for its message in the thread's rollout
/// before it answers (waiting, for the thread's next hook to settle, when not yet).
/// (Within a call's usual 1 s deadline.)
const ROLLOUT_SHOWS_WITHIN: std::time::Duration = std::time::Duration::from_millis(400);

/// What Codex's MCP client sends: one server for its process, the calling thread and
/// the call in each `tools/call`'s `_meta`.
pub const MCP_CLIENT: McpClient = McpClient {
    who: "Codex",
    caller_env: None,
    caller_meta: Some("threadId"),
    call_id_meta: Some("callId"),
    stamps: None,
};

/// Codex's part of the delivery path: a thread that was not spawned takes messages; the
/// app-server daemon, when it runs and can, hands a new message over at once (waking a
/// cold thread first); otherwise it waits for the thread's hooks.
impl Recipient for CodexStore {
    /// The daemon's connection and what it will do with the message, when it can
    /// take it.
    type Plan = Option<(AppServer, DaemonPlan)>;

    fn desk(&mut self) -> &mut Desk {
        &mut self.desk
    }

    fn resolve(&mut self, target: &str) -> Result<bool, DeliveryRefusal> {
        // The plugin read the target's header in this call: known, its rollout is not
        // looked at again (a new id is still looked for).
        let known = self.by_id.get(target).map(|&p| self.found[p].clone());
        let Some(found) = known.or_else(|| self.lookup(target)) else {
            return Err(DeliveryRefusal::NotFound);
        };
        // One lock probe: the header's.
        let header = self.header(&found);
        if header.is_subagent() {
            return Err(DeliveryRefusal::Rejected(
                "a spawned agent has no inbox; message the thread that spawned it".to_string(),
            ));
        }
        Ok(header.live)
    }

    fn wake(&mut self, arriving: &Arriving) -> Woken<Self::Plan> {
        // Asked only for a new message: the daemon is not asked about a repeat.
        let plan = self.daemon_plan(arriving.target, arriving.live, arriving.mode);
        Woken {
            woke: matches!(&plan, Some((_, plan)) if plan.resumed),
            plan,
        }
    }

    fn accepted(&mut self, ours: &Waiting, plan: Self::Plan) -> Delivered {
        match plan {
            Some((server, plan)) => {
                let (target, key) = (&ours.message.target, &ours.message.key);
                self.hand_over_through(server, plan, target, key, ours)
            }
            // In the inbox until a hook of the thread hands it over.
            None => Delivered {
                woke: false,
                repeat: false,
                state: DeliveryState::Waiting,
                message_id: ours.message.message_id.clone(),
            },
        }
    }
}
