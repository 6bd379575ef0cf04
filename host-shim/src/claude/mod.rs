//! A session store over Claude Code's own transcripts (`~/.claude/projects`), read
//! only, with deliveries going to the durable spool of a state folder
//! ([`crate::spool`]), which `host-shim claude-hook` hands to the target session.
//!
//! Mapping (the README's "Use it with Claude Code" says the same for a reader):
//!
//! - A session per `<project>/<id>.jsonl`: id from the records' `sessionId` (the file
//!   name when none has one), created at the first record's `timestamp` (the file's
//!   modification time when no record has one), cwd from `cwd`, preset the model of
//!   the latest assistant record read (what the session runs on: Claude Code keeps no
//!   other preset in the transcript).
//! - Subagents in both layouts, `<project>/<id>/subagents/agent-*.jsonl` and the older
//!   `<project>/agent-*.jsonl`: id `agent-<agentId>` (the file name when no record has
//!   an `agentId`), parent the `sessionId` their records carry (else the folder they
//!   sit in), origin `subagent`.
//! - Title: the latest `custom-title`, else the latest `ai-title`, else the latest
//!   `summary`, else the first real user prompt (not meta, not a compaction summary,
//!   not one of Claude Code's own wrappers), else the session's `slug`.
//! - Surface: user and assistant records after the last `compact_boundary` system
//!   record; the compaction summary (`isCompactSummary`) is marked `replaced`. `isMeta`
//!   user records are sent to the model, so they are on the surface (the plugin's
//!   prefix rule hides the injected ones). `progress`, `file-history-snapshot`,
//!   `queue-operation`, `system` and title records are the harness's log, not
//!   messages. Text parts and string content cross; thinking, tool calls, tool results
//!   and images do not (the plugin would drop them). Source `user`, or
//!   `model:anthropic/<model>`; seq the record's line number; captured through the last
//!   record read.
//! - Live: a session is live while a host-shim process serves it (the MCP server
//!   registers its caller in the state folder; a dead process reads cold). A Claude
//!   Code session with no host-shim server reads cold even while it runs.
//! - A line that is not a JSON object (a damaged line, or the half-written last line
//!   of a transcript being written) is skipped and counted ([`ClaudeStore::skipped_lines`]).
//!
//! Trust model. Transcripts are data from whoever can write the projects folder: they
//! are opened for reading only (never written, moved or locked), parsed as JSON lines
//! with unknown fields skipped, and only what the contract asks (ids, times, paths,
//! titles, text) reaches the sandboxed plugin, under the host's bounds. Nothing read
//! from a transcript selects a file to open or a command to run: the wake command comes
//! from the command line only, and session ids reach the state folder only as plain
//! names ([`crate::spool::checked_id`]).
//!
//! Cost: a listing reads at most [`HEAD_BYTES`] from the start and [`TAIL_BYTES`] from
//! the end of each transcript, once per path, size and modification time; titles and
//! facts past those windows of a large transcript are not seen. A read parses the one
//! transcript, cached the same way.

pub mod hook;
pub mod transcript;
pub mod wake;

use crate::bindings::{
    Delivered, DeliveryMode, DeliveryRefusal, MessageContent, Role, SessionHeader, SessionIndex,
    SurfaceIndex,
};
use crate::corpus::{Message, Session};
use crate::harness::{AnsweredKeys, Inbox, SessionQuery};
use crate::spool::{Put, StateDir};
use anyhow::{Context, Result, bail};
use std::collections::{HashMap, VecDeque};
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;
use transcript::{Record, lines};
pub use wake::WakeCommand;

/// Bytes read from the start of a transcript for a listing.
pub const HEAD_BYTES: u64 = 64 << 10;
/// Bytes read from the end of a transcript for a listing.
pub const TAIL_BYTES: u64 = 64 << 10;
/// Transcripts whose parsed surface is kept.
const SURFACES_KEPT: usize = 8;

/// A file's identity for the caches: a changed size or modification time is a new
/// file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stamp {
    len: u64,
    modified: SystemTime,
}

impl Stamp {
    fn of(path: &Path) -> Option<Stamp> {
        let meta = std::fs::metadata(path).ok()?;
        Some(Stamp {
            len: meta.len(),
            modified: meta.modified().ok()?,
        })
    }
}

/// Where a transcript sits, which says what it is.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Layout {
    Session,
    /// A subagent, in the folder of the session named here (new layout) or beside it.
    Subagent {
        folder_session: Option<String>,
    },
}

/// What a listing knows of one transcript.
#[derive(Clone, Debug)]
struct Summary {
    header: SessionHeader,
    title: Option<String>,
    skipped_lines: u64,
}

/// The facts gathered from a transcript's head and tail.
#[derive(Default)]
struct Facts {
    session_id: Option<String>,
    agent_id: Option<String>,
    created: Option<String>,
    cwd: Option<String>,
    slug: Option<String>,
    custom_title: Option<String>,
    ai_title: Option<String>,
    summary: Option<String>,
    first_prompt: Option<String>,
    model: Option<String>,
    skipped_lines: u64,
}

impl Facts {
    fn take(&mut self, record: Record) {
        let first = |slot: &mut Option<String>, value: Option<String>| {
            if slot.is_none() {
                *slot = value.filter(|v| !v.is_empty());
            }
        };
        let latest = |slot: &mut Option<String>, value: Option<String>| {
            if let Some(value) = value.filter(|v| !v.trim().is_empty()) {
                *slot = Some(value);
            }
        };
        if self.first_prompt.is_none() && record.is_real_prompt() {
            self.first_prompt = record.text().map(str::to_string);
        }
        if record.kind == "assistant"
            && let Some(model) = record.message.as_ref().and_then(|m| m.model.clone())
        {
            latest(&mut self.model, Some(model));
        }
        first(&mut self.session_id, record.session_id);
        first(&mut self.agent_id, record.agent_id);
        first(&mut self.created, record.timestamp);
        first(&mut self.cwd, record.cwd);
        latest(&mut self.slug, record.slug);
        match record.kind.as_str() {
            "custom-title" => latest(&mut self.custom_title, record.custom_title),
            "ai-title" => latest(&mut self.ai_title, record.ai_title),
            "summary" => latest(&mut self.summary, record.summary),
            _ => {}
        }
    }

    /// Reads the complete lines of `buffer`; `starts_at_line` says whether its first
    /// piece starts a line, `ends_file` whether its last piece ends the file (a last
    /// piece without a line feed is then a truncated line, skipped and counted).
    fn read(&mut self, buffer: &[u8], starts_at_line: bool, ends_file: bool) {
        let mut pieces = lines(buffer);
        if !starts_at_line {
            pieces.next();
        }
        for (line, complete) in pieces {
            if !complete && !ends_file {
                break; // cut by the window, not by the writer
            }
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match Record::parse(line) {
                Some(record) => self.take(record),
                None => self.skipped_lines += 1,
            }
        }
    }
}

fn rfc3339_ms(text: &str) -> Option<i64> {
    chrono::DateTime::parse_from_rfc3339(text)
        .ok()
        .map(|time| time.timestamp_millis())
}

fn system_time_ms(time: SystemTime) -> i64 {
    time.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// A transcript's header and title from its first and last bytes, and the bytes read.
fn summarize(path: &Path, layout: &Layout, stamp: Stamp) -> std::io::Result<(Summary, u64)> {
    let mut file = std::fs::File::open(path)?;
    let mut facts = Facts::default();
    let read = if stamp.len <= HEAD_BYTES + TAIL_BYTES {
        let mut all = Vec::with_capacity(stamp.len as usize);
        file.take(HEAD_BYTES + TAIL_BYTES).read_to_end(&mut all)?;
        facts.read(&all, true, true);
        all.len() as u64
    } else {
        let mut head = vec![0; HEAD_BYTES as usize];
        file.read_exact(&mut head)?;
        facts.read(&head, true, false);
        let mut tail = Vec::with_capacity(TAIL_BYTES as usize);
        file.seek(SeekFrom::Start(stamp.len - TAIL_BYTES))?;
        file.take(TAIL_BYTES).read_to_end(&mut tail)?;
        facts.read(&tail, false, true);
        (head.len() + tail.len()) as u64
    };
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (id, parent_id, origin) = match layout {
        Layout::Session => (facts.session_id.clone().unwrap_or(stem), None, "user"),
        Layout::Subagent { folder_session } => (
            facts
                .agent_id
                .as_ref()
                .map_or(stem, |agent| format!("agent-{agent}")),
            facts.session_id.clone().or(folder_session.clone()),
            "subagent",
        ),
    };
    let created_at_ms = facts
        .created
        .as_deref()
        .and_then(rfc3339_ms)
        .unwrap_or_else(|| system_time_ms(stamp.modified));
    let title = facts
        .custom_title
        .or(facts.ai_title)
        .or(facts.summary)
        .or(facts.first_prompt)
        .or(facts.slug);
    let summary = Summary {
        header: SessionHeader {
            id,
            created_at_ms,
            live: false,
            parent_id,
            origin: origin.to_string(),
            cwd: facts.cwd,
            preset: facts.model,
        },
        title,
        skipped_lines: facts.skipped_lines,
    };
    Ok((summary, read))
}

/// A transcript's current model surface (see the module's opening), parsed whole.
fn read_surface(path: &Path, id: &str) -> std::io::Result<(Session, u64)> {
    let bytes = std::fs::read(path)?;
    let mut messages: Vec<Message> = Vec::new();
    let mut last_read = 0;
    let mut skipped = 0;
    for (number, (line, complete)) in (1u64..).zip(lines(&bytes)) {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let record = match (complete, Record::parse(line)) {
            (true, Some(record)) => record,
            // A last line without its line feed is being written: not read yet.
            _ => {
                skipped += 1;
                continue;
            }
        };
        last_read = number;
        if record.is_compact_boundary() {
            messages.clear();
            continue;
        }
        if !record.is_message() {
            continue;
        }
        let (role, source) = if record.kind == "assistant" {
            let model = record
                .message
                .as_ref()
                .and_then(|m| m.model.as_deref())
                .unwrap_or("unknown");
            (Role::Assistant, format!("model:anthropic/{model}"))
        } else {
            (Role::User, "user".to_string())
        };
        let replaced = record.is_compact_summary;
        let text = record.message.and_then(|m| m.content.0);
        messages.push(Message::new(number, role, &source, replaced, text));
    }
    let mut session = Session::new(id, 0);
    session.messages = messages;
    session.captured_through_seq = last_read;
    Ok((session, skipped))
}

/// One transcript found by the last scan.
#[derive(Clone, Debug)]
struct Found {
    path: PathBuf,
    stamp: Stamp,
    summary: Arc<Summary>,
}

/// The store: Claude Code's projects folder, read only, and a state folder for the
/// inbox and the live registry.
pub struct ClaudeStore {
    root: PathBuf,
    state: StateDir,
    wake: Option<WakeCommand>,
    /// The last scan, in the order found, and each id's first transcript.
    found: Vec<Found>,
    by_id: HashMap<String, usize>,
    summaries: HashMap<PathBuf, (Stamp, Arc<Summary>)>,
    surfaces: VecDeque<ParsedSurface>,
    answered: AnsweredKeys,
    reads: TranscriptReads,
}

/// A transcript read whole: its surface, and the lines it skipped.
struct ParsedSurface {
    path: PathBuf,
    stamp: Stamp,
    session: Arc<Session>,
    skipped_lines: u64,
}

/// What a store has read of transcripts, for tests and benchmarks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TranscriptReads {
    /// Transcripts summarized for a listing (a cached one is not summarized again).
    pub summarized: u64,
    /// Bytes read for those summaries.
    pub summary_bytes: u64,
    /// Transcripts parsed whole for a read.
    pub parsed: u64,
}

impl ClaudeStore {
    /// A store over `projects` (Claude Code's `~/.claude/projects`).
    pub fn open(
        projects: &Path,
        state: StateDir,
        wake: Option<WakeCommand>,
    ) -> Result<ClaudeStore> {
        let meta = std::fs::metadata(projects).with_context(|| {
            format!(
                "cannot read the Claude Code projects folder {} (pass the folder that holds one folder per project, usually ~/.claude/projects)",
                projects.display()
            )
        })?;
        if !meta.is_dir() {
            bail!(
                "{} is not a folder; pass Claude Code's projects folder (usually ~/.claude/projects)",
                projects.display()
            );
        }
        let mut store = ClaudeStore {
            root: projects.to_path_buf(),
            state,
            wake,
            found: Vec::new(),
            by_id: HashMap::new(),
            summaries: HashMap::new(),
            surfaces: VecDeque::new(),
            answered: AnsweredKeys::default(),
            reads: TranscriptReads::default(),
        };
        store.scan();
        Ok(store)
    }

    pub fn state(&self) -> &StateDir {
        &self.state
    }

    /// What this store has read of transcripts so far.
    pub fn reads(&self) -> TranscriptReads {
        self.reads
    }

    /// Lines of the listed transcripts skipped as unreadable: counted in the whole
    /// transcript once it was read, else in the windows a listing read.
    pub fn skipped_lines(&self) -> u64 {
        self.found
            .iter()
            .map(|f| {
                self.surfaces
                    .iter()
                    .find(|s| s.path == f.path && s.stamp == f.stamp)
                    .map_or(f.summary.skipped_lines, |s| s.skipped_lines)
            })
            .sum()
    }

    /// Every transcript under the projects folder, in a stable order.
    fn transcripts(&self) -> Vec<(PathBuf, Layout)> {
        let mut all = Vec::new();
        let sorted = |dir: &Path| -> Vec<std::fs::DirEntry> {
            let mut entries: Vec<_> = std::fs::read_dir(dir)
                .map(|entries| entries.flatten().collect())
                .unwrap_or_default();
            entries.sort_by_key(std::fs::DirEntry::file_name);
            entries
        };
        let is_jsonl = |name: &str| name.ends_with(".jsonl");
        for project in sorted(&self.root) {
            if !project.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            for entry in sorted(&project.path()) {
                let name = entry.file_name().to_string_lossy().into_owned();
                let Ok(kind) = entry.file_type() else {
                    continue;
                };
                if kind.is_file() && is_jsonl(&name) {
                    let layout = if name.starts_with("agent-") {
                        Layout::Subagent {
                            folder_session: None,
                        }
                    } else {
                        Layout::Session
                    };
                    all.push((entry.path(), layout));
                } else if kind.is_dir() {
                    for agent in sorted(&entry.path().join("subagents")) {
                        let agent_name = agent.file_name().to_string_lossy().into_owned();
                        if agent_name.starts_with("agent-")
                            && is_jsonl(&agent_name)
                            && agent.file_type().is_ok_and(|t| t.is_file())
                        {
                            all.push((
                                agent.path(),
                                Layout::Subagent {
                                    folder_session: Some(name.clone()),
                                },
                            ));
                        }
                    }
                }
            }
        }
        all
    }

    /// Finds every transcript and summarizes those new or changed since last time.
    fn scan(&mut self) {
        let mut found = Vec::new();
        let mut summaries = HashMap::new();
        for (path, layout) in self.transcripts() {
            let Some(stamp) = Stamp::of(&path) else {
                continue;
            };
            let summary = match self.summaries.get(&path) {
                Some((cached, summary)) if *cached == stamp => summary.clone(),
                _ => match summarize(&path, &layout, stamp) {
                    Ok((summary, bytes)) => {
                        self.reads.summarized += 1;
                        self.reads.summary_bytes += bytes;
                        Arc::new(summary)
                    }
                    Err(_) => continue, // gone or unreadable since it was listed
                },
            };
            summaries.insert(path.clone(), (stamp, summary.clone()));
            found.push(Found {
                path,
                stamp,
                summary,
            });
        }
        self.by_id.clear();
        for (position, f) in found.iter().enumerate() {
            self.by_id
                .entry(f.summary.header.id.clone())
                .or_insert(position);
        }
        self.found = found;
        self.summaries = summaries;
    }

    /// The transcript of `id`, rescanning once when the last scan does not know it or
    /// its file changed.
    fn lookup(&mut self, id: &str) -> Option<Found> {
        let current = |store: &ClaudeStore| {
            let found = &store.found[*store.by_id.get(id)?];
            (Stamp::of(&found.path) == Some(found.stamp)).then(|| found.clone())
        };
        if let Some(found) = current(self) {
            return Some(found);
        }
        self.scan();
        current(self)
    }

    fn header(&self, found: &Found, live: &std::collections::HashSet<String>) -> SessionHeader {
        let mut header = found.summary.header.clone();
        header.live = live.contains(&header.id);
        header
    }

    fn surface(&mut self, id: &str) -> Option<Arc<Session>> {
        let found = self.lookup(id)?;
        if let Some(parsed) = self
            .surfaces
            .iter()
            .find(|s| s.path == found.path && s.stamp == found.stamp)
        {
            return Some(parsed.session.clone());
        }
        let (session, skipped_lines) = read_surface(&found.path, id).ok()?;
        self.reads.parsed += 1;
        let session = Arc::new(session);
        self.surfaces.retain(|s| s.path != found.path);
        if self.surfaces.len() == SURFACES_KEPT {
            self.surfaces.pop_front();
        }
        self.surfaces.push_back(ParsedSurface {
            path: found.path,
            stamp: found.stamp,
            session: session.clone(),
            skipped_lines,
        });
        Some(session)
    }
}

impl SessionQuery for ClaudeStore {
    fn list_sessions(&mut self) -> SessionIndex {
        self.scan();
        let live = self.state.live_sessions();
        let headers: Vec<SessionHeader> =
            self.found.iter().map(|f| self.header(f, &live)).collect();
        SessionIndex::of(&headers)
    }

    fn get_session(&mut self, id: &str) -> Option<SessionHeader> {
        let found = self.lookup(id)?;
        Some(self.header(&found, &self.state.live_sessions()))
    }

    fn get_sessions(&mut self, ids: &[String]) -> Vec<Option<SessionHeader>> {
        let live = self.state.live_sessions();
        ids.iter()
            .map(|id| {
                let found = self.lookup(id)?;
                Some(self.header(&found, &live))
            })
            .collect()
    }

    fn title_snapshots(&mut self, ids: &[String]) -> Vec<Option<String>> {
        ids.iter()
            .map(|id| self.lookup(id)?.summary.title.clone())
            .collect()
    }

    fn get_surface(&mut self, id: &str, lead_chars: u32) -> Option<SurfaceIndex> {
        Some(self.surface(id)?.surface_index(lead_chars))
    }

    fn get_messages(&mut self, id: &str, seqs: &[u64]) -> Vec<Option<MessageContent>> {
        let session = self.surface(id);
        seqs.iter()
            .map(|&seq| session.as_ref()?.message(seq))
            .collect()
    }
}

impl Inbox for ClaudeStore {
    fn deliver(
        &mut self,
        target: &str,
        body: &str,
        mode: DeliveryMode,
        may_wake: bool,
        key: &str,
    ) -> Result<Delivered, DeliveryRefusal> {
        let mut answered = std::mem::take(&mut self.answered);
        let answer = answered.once(key, || self.spool(target, body, mode, may_wake, key));
        self.answered = answered;
        answer
    }
}

impl ClaudeStore {
    /// A new delivery: into the target's spool, once per key across processes.
    fn spool(
        &mut self,
        target: &str,
        body: &str,
        mode: DeliveryMode,
        may_wake: bool,
        key: &str,
    ) -> Result<Delivered, DeliveryRefusal> {
        let Some(found) = self.lookup(target) else {
            return Err(DeliveryRefusal::NotFound);
        };
        if found.summary.header.is_subagent() {
            return Err(DeliveryRefusal::Rejected(
                "a subagent has no inbox; message its parent session".to_string(),
            ));
        }
        let unusable = |err: anyhow::Error| {
            DeliveryRefusal::Rejected(format!("the inbox cannot take messages now: {err:#}"))
        };
        // Accepted before, by this process or another: the first answer.
        if let Some(first) = self.state.find(target, key).map_err(unusable)? {
            return Ok(Delivered {
                woke: first.woke,
                repeat: true,
            });
        }
        let live = self.state.live_sessions().contains(target);
        if !live && !may_wake {
            return Err(DeliveryRefusal::WouldNeedWake);
        }
        let wakes = !live && self.wake.is_some();
        let message = StateDir::message(target, mode.as_str(), body, key, wakes);
        match self.state.put(&message).map_err(unusable)? {
            Put::Repeat(first) => Ok(Delivered {
                woke: first.woke,
                repeat: true,
            }),
            Put::New(path) => {
                let woke = match self.wake.as_ref().filter(|_| wakes) {
                    Some(wake) => {
                        match wake.spawn(target, found.summary.header.cwd.as_deref(), &path) {
                            Ok(()) => true,
                            Err(err) => {
                                // The message waits in the spool for the session's next start.
                                eprintln!(
                                    "host-shim: the wake command for {target} did not start: {err}"
                                );
                                false
                            }
                        }
                    }
                    None => false,
                };
                Ok(Delivered {
                    woke,
                    repeat: false,
                })
            }
        }
    }
}
