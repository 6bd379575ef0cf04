//! A session store over Claude Code's own transcripts (`~/.claude/projects`), read
//! only, with deliveries going to an inbox backend ([`host_shim::inbox`]; the state
//! folder's spool by default), which `host-shim claude-hook` hands to the target
//! session, and liveness from a [`Presence`] ([`host_shim::LocalPresence`] by default).
//!
//! Mapping (`host-shim/harnesses/claude-code/README.md` says the same for a reader):
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
//!   registers its caller with the presence; a dead process reads cold), while Claude
//!   Code's own registry (`~/.claude/sessions`, [`registry`]) lists it as running, and
//!   in its own server's answers from its first call.
//! - A line that is not a JSON object (a damaged line, or the half-written last line
//!   of a transcript being written) is skipped and counted ([`host_shim::Store::skipped_lines`]).
//!
//! Trust model. Transcripts are data from whoever can write the projects folder: they
//! are opened for reading only (never written, moved or locked), parsed as JSON lines
//! with unknown fields skipped, and only what the contract asks (ids, times, paths,
//! titles, text) reaches the sandboxed plugin, under the host's bounds. Nothing read
//! from a transcript selects a file to open or a command to run: the wake command comes
//! from the command line only, and session ids reach the state folder only as plain
//! names ([`host_shim::inbox::checked_id`]).
//!
//! Cost: a listing reads at most `logfile::HEAD_BYTES` from the start and
//! `logfile::TAIL_BYTES` from the end of each transcript, once per path, size
//! and modification time; titles and facts past those windows of a large transcript
//! are not seen. A read parses the one transcript, cached the same way.

/// The profile `host-shim` runs this harness by (setup, doctor, hooks, its store from
/// the command's flags).
pub mod profile;
pub use profile::Claude;
pub mod hook;
pub mod idle;
pub mod mcp_session;
pub mod registry;
pub mod settings;
pub mod transcript;
pub mod write_hook;
/// What a transcript shows of the hand-overs offered to its session.
pub use transcript::handed_over_ids;

/// How long a send through a session's messaging socket looks for the message in the
/// session's transcript before it answers (within a call's usual 1 s deadline).
const TRANSCRIPT_SHOWS_WITHIN: Duration = Duration::from_millis(400);

/// The transcript of `session` under `projects` (`<projects>/<project>/<session>.jsonl`),
/// when one exists.
pub fn transcript_in(projects: &Path, session: &str) -> Option<std::path::PathBuf> {
    let name = format!("{session}.jsonl");
    (std::fs::read_dir(projects).ok()?.flatten())
        .map(|project| project.path().join(&name))
        .find(|path| path.is_file())
}

use anyhow::{Result, bail};
use host_shim::call_memo::CallMemo;
use host_shim::contract::latest::{
    ActionStatus, Delivered, DeliveryRefusal, DeliveryState, InboundPolicy, Role, SessionHeader,
    SessionIndex, ToolAction,
};
use host_shim::harnesses::McpClient;
use host_shim::harnesses::logfile::{
    self, LineFacts, Stamp, TAIL_BYTES, Windowed, lines, read_range, rfc3339_ms, system_time_ms,
};
use host_shim::harnesses::surface::{LoggedSessions, Message, Recent, Surface};
use host_shim::inbox::delivery::{Arriving, Woken};
use host_shim::inbox::wake::{self, WakeCommand};
use host_shim::inbox::{Desk, Recipient, SharedInbox, Waiting};
use host_shim::presence::Presence;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use transcript::{Record, Surfaced};

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

/// The facts gathered from a transcript: the first value of some, the latest of
/// others.
#[derive(Clone, Debug, Default)]
struct Facts {
    // The first value seen.
    session_id: Option<String>,
    agent_id: Option<String>,
    created: Option<String>,
    cwd: Option<String>,
    first_prompt: Option<String>,
    // The latest value seen.
    slug: Option<String>,
    custom_title: Option<String>,
    agent_name: Option<String>,
    ai_title: Option<String>,
    summary: Option<String>,
    model: Option<String>,
    /// Complete lines that are not records.
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
            && model != "<synthetic>"
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
            "agent-name" => latest(&mut self.agent_name, record.agent_name),
            "ai-title" => latest(&mut self.ai_title, record.ai_title),
            "summary" => latest(&mut self.summary, record.summary),
            _ => {}
        }
    }

    /// These facts (from earlier in the file) followed by `later`'s.
    fn then(self, later: Facts) -> Facts {
        Facts {
            session_id: self.session_id.or(later.session_id),
            agent_id: self.agent_id.or(later.agent_id),
            created: self.created.or(later.created),
            cwd: self.cwd.or(later.cwd),
            first_prompt: self.first_prompt.or(later.first_prompt),
            slug: later.slug.or(self.slug),
            custom_title: later.custom_title.or(self.custom_title),
            agent_name: later.agent_name.or(self.agent_name),
            ai_title: later.ai_title.or(self.ai_title),
            summary: later.summary.or(self.summary),
            model: later.model.or(self.model),
            skipped_lines: self.skipped_lines + later.skipped_lines,
        }
    }
}

impl LineFacts for Facts {
    fn take_line(&mut self, line: &[u8]) {
        match Record::parse(line) {
            Some(record) => self.take(record),
            None => self.skipped_lines += 1,
        }
    }

    fn then(self, later: Facts) -> Facts {
        Facts::then(self, later)
    }

    fn has_latest(&self) -> bool {
        self.model.is_some()
    }
}

/// A transcript's facts, kept between listings and advanced as the file grows, and
/// the header and title they give.
#[derive(Debug)]
struct Indexed {
    windowed: Windowed<Facts>,
    summary: Arc<Summary>,
}

/// A transcript's header and title from its facts.
fn summarize(path: &Path, layout: &Layout, stamp: Stamp, facts: &Facts, consumed: u64) -> Summary {
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
    let title = (facts.custom_title.clone())
        .or_else(|| facts.agent_name.clone())
        .or_else(|| facts.ai_title.clone())
        .or_else(|| facts.summary.clone())
        .or_else(|| facts.first_prompt.clone())
        .or_else(|| facts.slug.clone());
    // A last line still being written is counted until it is whole.
    let being_written = u64::from(consumed < stamp.len);
    Summary {
        header: SessionHeader {
            id,
            created_at_ms,
            live: false,
            parent_id,
            origin: origin.to_string(),
            cwd: facts.cwd.clone(),
            preset: facts.model.clone(),
            inbound: InboundPolicy::Accept,
            machine: None,
        },
        title,
        skipped_lines: facts.skipped_lines + being_written,
    }
}

/// A transcript's current model surface (see the module's opening), parsed up to its
/// last whole line and advanced from there as the file grows.
struct ParsedSurface {
    path: PathBuf,
    stamp: Stamp,
    consumed: u64,
    /// The line number of the next line to read.
    next_line: u64,
    /// The API message id of the last message, when it is the model's: the records
    /// of one message (one per content block) become one surface message.
    open_assistant: Option<String>,
    captured_through: u64,
    /// Complete lines that are not records.
    damaged: u64,
    /// The surface so far; grown in place (readers hold a clone of the `Arc` only
    /// during one host call).
    session: Arc<Surface>,
    /// What one record put on the surface (kept to reuse its allocation).
    scratch: Vec<Surfaced>,
    /// Where each tool call not ended yet is (its message's seq, its place among the
    /// message's calls), by call id: a result in a later record ends it.
    open_calls: std::collections::HashMap<String, (u64, usize)>,
}

impl ParsedSurface {
    fn new(path: &Path, stamp: Stamp) -> ParsedSurface {
        ParsedSurface {
            path: path.to_path_buf(),
            stamp,
            consumed: 0,
            next_line: 1,
            open_assistant: None,
            captured_through: 0,
            damaged: 0,
            session: Arc::new(Surface::default()),
            scratch: Vec::new(),
            open_calls: std::collections::HashMap::new(),
        }
    }

    /// Lines skipped: damaged ones, and a last one still being written.
    fn skipped_lines(&self) -> u64 {
        self.damaged + u64::from(self.consumed < self.stamp.len)
    }

    /// Reads the whole lines from `consumed` up to the file's end as `stamp` saw it.
    fn advance(&mut self, stamp: Stamp) -> std::io::Result<()> {
        let mut file = host_shim::harnesses::logfile::open_record(&self.path)?;
        let bytes = read_range(&mut file, self.consumed, stamp.len)?;
        self.stamp = stamp;
        for (line, complete) in lines(&bytes) {
            if !complete {
                break; // being written: read when whole
            }
            self.consumed += line.len() as u64 + 1;
            let number = self.next_line;
            self.next_line += 1;
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let Some(record) = Record::parse(line) else {
                self.damaged += 1;
                continue;
            };
            self.captured_through = number;
            if record.is_compact_boundary() {
                Arc::make_mut(&mut self.session).messages.clear();
                self.open_assistant = None;
                self.open_calls.clear();
                continue;
            }
            self.take(number, record);
        }
        Arc::make_mut(&mut self.session).captured_through_seq = self.captured_through;
        Ok(())
    }

    fn take(&mut self, number: u64, mut record: Record) {
        let (message_id, model) = match record.message.as_mut() {
            Some(m) => (m.id.take(), m.model.take()),
            None => (None, None),
        };
        let mut surfaced = std::mem::take(&mut self.scratch);
        record.into_surfaced(&mut surfaced);
        join_frames(&mut surfaced);
        let messages = &mut Arc::make_mut(&mut self.session).messages;
        for Surfaced {
            role,
            text,
            injected,
            replaced,
            calls,
            results,
            ..
        } in surfaced.drain(..)
        {
            // Each result ends the call it answers, on the message that made it.
            for result in results {
                let Some((seq, at)) = self.open_calls.remove(&result.call_id) else {
                    continue;
                };
                let made = messages.iter_mut().rev().find(|m| m.seq == seq);
                if let Some(action) = made.and_then(|m| m.actions.get_mut(at)) {
                    action.status = if result.is_error {
                        ActionStatus::Error
                    } else {
                        ActionStatus::Ok
                    };
                }
            }
            if role == transcript::Role::Assistant {
                let source = format!("model:anthropic/{}", model.as_deref().unwrap_or("unknown"));
                // Another block of the model's message before: one message.
                let (seq, mut actions, text) = if message_id.is_some()
                    && self.open_assistant == message_id
                    && let Some(last) = messages.pop()
                {
                    let joined = match (last.text().map(str::to_string), text) {
                        (Some(a), Some(b)) => Some(format!("{a}\n{b}")),
                        (a, b) => a.or(b),
                    };
                    (last.seq, last.actions, joined)
                } else {
                    (number, Vec::new(), text)
                };
                for call in calls {
                    self.open_calls.insert(call.id, (seq, actions.len()));
                    actions.push(ToolAction {
                        name: call.name,
                        input: call.input,
                        status: ActionStatus::Running,
                    });
                }
                let message = Message::new(seq, Role::Assistant, &source, false, text);
                messages.push(message.with_actions(actions));
                self.open_assistant.clone_from(&message_id);
                continue;
            }
            self.open_assistant = None;
            let message = Message::new(number, Role::User, "user", replaced, text);
            messages.push(message.injected(injected));
        }
        self.scratch = surfaced;
    }
}

/// The frames one hand-over carried, as one surface message: a message's seq is its
/// record's line, so the messages of one record need one seq each (the WIT's seqs are
/// unique within a surface). Each frame is still there, whole, oldest first.
fn join_frames(surfaced: &mut Vec<Surfaced>) {
    let Some(first) = surfaced.iter().position(|s| s.frame) else {
        return;
    };
    let mut joined = surfaced[first].text.take().unwrap_or_default();
    let mut index = first + 1;
    while index < surfaced.len() {
        if surfaced[index].frame {
            let next = surfaced.remove(index);
            joined.push_str("\n\n");
            joined.push_str(next.text.as_deref().unwrap_or(""));
        } else {
            index += 1;
        }
    }
    surfaced[first].text = Some(joined);
}

/// One transcript found by the last scan.
#[derive(Clone, Debug)]
struct Found {
    path: PathBuf,
    layout: Layout,
    stamp: Stamp,
    summary: Arc<Summary>,
}

/// The store: Claude Code's projects folder, read only, and a state folder for the
/// inbox and the live registry.
pub struct ClaudeStore {
    root: PathBuf,
    desk: Desk,
    presence: Arc<dyn Presence>,
    /// The session this store's server serves: live in its own answers whatever the
    /// presence says yet (its registration may lag its first call).
    serving: Option<String>,
    /// Claude Code's own registry of running sessions (`~/.claude/sessions`, beside
    /// the projects folder): a session running without a server of ours is live too.
    registry: Option<registry::SessionRegistry>,
    wake: Option<WakeCommand>,
    /// The last scan, in the order found, and each id's first transcript.
    found: Vec<Found>,
    by_id: HashMap<String, usize>,
    indexed: HashMap<PathBuf, Indexed>,
    surfaces: Recent<ParsedSurface>,
    reads: TranscriptReads,
    /// During a tool call, the ids whose transcripts a lookup has `stat`ed: a call
    /// asks for one session more than once (a send: the caller's surface for its
    /// chain, then its title), and its answers describe one state of the harness (the
    /// WIT asks so), so each is `stat`ed once per call. `None` between calls: every
    /// lookup looks.
    statted: Option<std::collections::HashSet<String>>,
    /// What Claude Code's settings let in, by session cwd: read once per cwd per call
    /// (a listing's rows share a few folders), not per row.
    claude_inbound_seen: CallMemo<Option<String>, InboundPolicy>,
}

/// What a store has read of transcripts, for tests and benchmarks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TranscriptReads {
    /// Transcripts indexed for a listing, afresh or from where the last read ended (an
    /// unchanged one is not read again).
    pub summarized: u64,
    /// Bytes read for those.
    pub summary_bytes: u64,
    /// Transcripts parsed whole for a read (a grown one is read on from where the
    /// last parse ended, which does not count).
    pub parsed: u64,
    /// Bytes read for reads, whole or appended.
    pub surface_bytes: u64,
    /// `stat`s of transcripts (a listing stats every one; a lookup the one it needs).
    pub stats: u64,
}

impl ClaudeStore {
    /// A store over `projects` (Claude Code's `~/.claude/projects`). A folder that does
    /// not exist yet (a new install, before its first session) is an empty store that
    /// fills as sessions appear.
    pub fn open(
        projects: &Path,
        inbox: SharedInbox,
        presence: Arc<dyn Presence>,
        wake: Option<WakeCommand>,
    ) -> Result<ClaudeStore> {
        match std::fs::metadata(projects) {
            Ok(meta) if !meta.is_dir() => bail!(
                "{} is not a folder; pass Claude Code's projects folder (usually ~/.claude/projects)",
                projects.display()
            ),
            Ok(_) => {}
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
            Err(err) => bail!(
                "cannot read the Claude Code projects folder {}: {err} (pass the folder that holds one folder per project, usually ~/.claude/projects)",
                projects.display()
            ),
        }
        let mut store = ClaudeStore {
            root: projects.to_path_buf(),
            desk: Desk::new(inbox),
            presence,
            serving: None,
            registry: registry::SessionRegistry::beside(projects),
            wake,
            found: Vec::new(),
            by_id: HashMap::new(),
            statted: None,
            claude_inbound_seen: CallMemo::default(),
            indexed: HashMap::new(),
            surfaces: Recent::default(),
            reads: TranscriptReads::default(),
        };
        store.scan();
        Ok(store)
    }

    /// The inbox backend deliveries go to.
    pub fn inbox(&self) -> &SharedInbox {
        self.desk.inbox()
    }

    /// Where liveness and idleness come from.
    pub fn presence(&self) -> &Arc<dyn Presence> {
        &self.presence
    }

    /// Names the session this store's server serves: it is live in this store's
    /// answers from now on, even before its registration is seen.
    pub fn set_serving(&mut self, session: Option<String>) {
        self.serving = session;
    }

    /// The live sessions: the presence's, the ones Claude Code's own registry lists as
    /// running, and the one this store serves.
    fn live_sessions(&self) -> std::collections::HashSet<String> {
        let mut live = self.presence.live_sessions();
        if let Some(registry) = &self.registry {
            live.extend(registry.live_sessions());
        }
        live.extend(self.serving.iter().cloned());
        live
    }

    /// Offers `waiting` to its target through the target's own messaging socket, as
    /// another of this user's Claude sessions would ([`registry::SessionRegistry::peer`]),
    /// when Claude Code's registry lists it running with a socket and either it is idle
    /// (it runs the message as a turn now) or no server of ours serves it (no hook of
    /// ours would ever hand it over; Claude Code runs it after the turn at work). Whether
    /// it was handed over: its transcript shows it within [`TRANSCRIPT_SHOWS_WITHIN`]
    /// (else a later hook or read of the session settles the offer); a socket that fails
    /// leaves it waiting.
    fn hand_over_as_a_peer(&mut self, waiting: &Waiting) -> bool {
        let target = &waiting.message.target;
        let Some(peer) = self.registry.as_ref().and_then(|r| r.peer(target)) else {
            return false;
        };
        let ours = self.presence.live_sessions().contains(target);
        if !peer.idle && ours {
            return false;
        }
        let inbox = self.desk.inbox().clone();
        let offered = inbox.offer(target, vec![waiting.clone()], &mut |messages| {
            peer.socket.send(&host_shim::inbox::joined(messages))
        });
        match offered {
            Ok(offered) if !offered.is_empty() => {}
            Ok(_) => return false,
            Err(err) => {
                eprintln!(
                    "host-shim: a message for {target} waits: its socket did not take it: {err:#}"
                );
                return false;
            }
        }
        // Claude Code writes the message into the transcript as it takes it.
        let transcript = self.lookup(target).map(|found| found.path);
        // Its end (bounded): an offer through the socket notes no place in it.
        let mut shown = |_: &[String]| match &transcript {
            Some(path) => handed_over_ids(path, host_shim::harnesses::logfile::ReadFrom::End),
            None => Ok(host_shim::inbox::Shown::new()),
        };
        let until = Instant::now() + TRANSCRIPT_SHOWS_WITHIN;
        loop {
            let settled = inbox.settle(target, host_shim::inbox::OFFERS_EXPIRE_AFTER, &mut shown);
            if host_shim::inbox::settled_as_handed(&*inbox, waiting, settled) {
                return true;
            }
            if Instant::now() >= until {
                return false;
            }
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    /// The projects folder the store reads (`~/.claude/projects`).
    pub fn projects(&self) -> &Path {
        &self.root
    }

    /// What this store has read of transcripts so far.
    pub fn reads(&self) -> TranscriptReads {
        self.reads
    }

    /// Whether a transcript of this session exists now.
    pub fn knows(&mut self, id: &str) -> bool {
        self.lookup(id).is_some()
    }

    /// Who made the tool call `call_id` that reached `session`'s server: `Some(Some(
    /// agent))` when a subagent's transcript holds it (a subagent's MCP calls reach its
    /// session's server, named only by the tool-use id), `Some(None)` when the
    /// session's own transcript does, `None` when neither holds it yet, or the served
    /// session has no transcript yet (Claude Code writes the call's record as the call
    /// starts: ask again shortly).
    pub fn maker_of_call(&mut self, session: &str, call_id: &str) -> Option<Option<String>> {
        if call_id.is_empty() || call_id.contains(['"', '\\']) {
            return Some(None);
        }
        let Some(own) = self.lookup(session) else {
            // The session this server serves has a transcript soon (Claude Code writes
            // it behind the first prompt, later when the machine is busy): ask again.
            // Any other is not a session of this store: the server's caller.
            return if self.serving.as_deref() == Some(session) {
                None
            } else {
                Some(None)
            };
        };
        let needle = format!("\"id\":\"{call_id}\"");
        let holds = |path: &Path| -> bool {
            let Ok(mut file) = host_shim::harnesses::logfile::open_record(path) else {
                return false;
            };
            let Ok(len) = file.metadata().map(|m| m.len()) else {
                return false;
            };
            let tail = read_range(&mut file, len.saturating_sub(TAIL_BYTES), len);
            tail.is_ok_and(|tail| {
                tail.windows(needle.len())
                    .any(|window| window == needle.as_bytes())
            })
        };
        let subagents = own.path.with_extension("").join("subagents");
        for entry in std::fs::read_dir(subagents).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if let Some(stem) = name.strip_suffix(".jsonl")
                && stem.starts_with("agent-")
                && holds(&entry.path())
            {
                let id = self
                    .indexed
                    .get(&entry.path())
                    .map_or_else(|| stem.to_string(), |i| i.summary.header.id.clone());
                return Some(Some(id));
            }
        }
        holds(&own.path).then_some(None)
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

    /// The index of one transcript as it is now: the cached one when unchanged,
    /// advanced or rebuilt otherwise; `None` when it cannot be read.
    fn indexed(&mut self, path: &Path, layout: &Layout, stamp: Stamp) -> Option<Arc<Summary>> {
        if let Some(previous) = self.indexed.get(path).filter(|p| p.windowed.stamp == stamp) {
            return Some(previous.summary.clone());
        }
        let previous = self.indexed.remove(path).map(|p| p.windowed);
        let (windowed, bytes) = logfile::index(path, stamp, previous).ok()?;
        self.reads.summarized += 1;
        self.reads.summary_bytes += bytes;
        let summary = summarize(path, layout, stamp, &windowed.facts, windowed.consumed);
        let summary = Arc::new(summary);
        let indexed = Indexed {
            windowed,
            summary: summary.clone(),
        };
        self.indexed.insert(path.to_path_buf(), indexed);
        Some(summary)
    }

    /// Finds every transcript and indexes those new or changed since last time.
    fn scan(&mut self) {
        let transcripts = self.transcripts();
        let mut found = Vec::with_capacity(transcripts.len());
        for (path, layout) in transcripts {
            self.reads.stats += 1;
            let Some(stamp) = Stamp::of(&path) else {
                continue;
            };
            // Gone or unreadable since it was listed: left out.
            let Some(summary) = self.indexed(&path, &layout, stamp) else {
                continue;
            };
            found.push(Found {
                path,
                layout,
                stamp,
                summary,
            });
        }
        // Transcripts that are gone leave the index (only then is it walked).
        if self.indexed.len() > found.len() {
            let listed: std::collections::HashSet<&Path> =
                found.iter().map(|f| f.path.as_path()).collect();
            self.indexed
                .retain(|path, _| listed.contains(path.as_path()));
        }
        self.by_id.clear();
        for (position, f) in found.iter().enumerate() {
            self.by_id
                .entry(f.summary.header.id.clone())
                .or_insert(position);
        }
        self.found = found;
    }

    /// The transcript of `id` as it is now. A transcript being written is read on from
    /// where the last read ended (whatever was appended since, up to its last whole
    /// line), so a running session is always found; the whole folder is scanned again
    /// only for an id the last scan did not know, or whose file is gone.
    fn lookup(&mut self, id: &str) -> Option<Found> {
        if !self.by_id.contains_key(id) {
            self.scan();
        }
        let position = *self.by_id.get(id)?;
        let found = self.found[position].clone();
        if let Some(statted) = &mut self.statted
            && !statted.insert(id.to_string())
        {
            return Some(found); // looked at during this call
        }
        self.reads.stats += 1;
        let Some(stamp) = Stamp::of(&found.path) else {
            self.scan();
            return self.by_id.get(id).map(|&p| self.found[p].clone());
        };
        if stamp == found.stamp {
            return Some(found);
        }
        let Some(summary) = self.indexed(&found.path, &found.layout, stamp) else {
            return Some(found); // unreadable for a moment: what was known
        };
        let updated = Found {
            stamp,
            summary,
            ..found
        };
        if updated.summary.header.id != id {
            self.scan();
            return self.by_id.get(id).map(|&p| self.found[p].clone());
        }
        self.found[position] = updated.clone();
        Some(updated)
    }

    fn header(&self, found: &Found, live: &std::collections::HashSet<String>) -> SessionHeader {
        let mut header = found.summary.header.clone();
        header.live = live.contains(&header.id);
        header
    }

    /// A header as a question about one session answers it: with what its person lets
    /// in (a listing's index needs none of it).
    fn full_header(
        &mut self,
        found: &Found,
        live: &std::collections::HashSet<String>,
    ) -> SessionHeader {
        let mut header = self.header(found, live);
        let ours = self.desk.inbound(&header.id);
        header.inbound = ours.stricter(self.claude_inbound(header.cwd.as_deref()));
        header
    }

    /// What Claude Code's own `crossSessionInbound` setting lets into a session at
    /// `cwd` (its configuration folder is the one holding the projects folder).
    fn claude_inbound(&mut self, cwd: Option<&str>) -> InboundPolicy {
        let config = self.root.parent();
        (self.claude_inbound_seen).get_or(&cwd.map(str::to_string), || {
            settings::inbound(config, cwd.map(Path::new))
        })
    }
}

impl LoggedSessions for ClaudeStore {
    const HARNESS: &'static str = "claude-code";

    /// Lines of the listed transcripts skipped as unreadable: counted in the whole
    /// transcript once it was read, else in what a listing read.
    fn skipped_lines(&self) -> u64 {
        self.found
            .iter()
            .map(|f| {
                self.surfaces
                    .find(|s| s.path == f.path && s.stamp == f.stamp)
                    .map_or(f.summary.skipped_lines, ParsedSurface::skipped_lines)
            })
            .sum()
    }

    fn call_begins(&mut self) {
        self.statted = Some(std::collections::HashSet::new());
        self.claude_inbound_seen.begin();
    }

    fn call_ends(&mut self) {
        self.statted = None;
        self.claude_inbound_seen.end();
    }

    fn all_sessions(&mut self) -> SessionIndex {
        self.scan();
        let live = self.live_sessions();
        let headers: Vec<SessionHeader> =
            self.found.iter().map(|f| self.header(f, &live)).collect();
        SessionIndex::of(&headers)
    }

    fn session_header(&mut self, id: &str) -> Option<SessionHeader> {
        let found = self.lookup(id)?;
        Some(self.full_header(&found, &self.live_sessions()))
    }

    fn session_headers(&mut self, ids: &[String]) -> Vec<Option<SessionHeader>> {
        let live = self.live_sessions();
        ids.iter()
            .map(|id| {
                let found = self.lookup(id)?;
                Some(self.full_header(&found, &live))
            })
            .collect()
    }

    fn titles(&mut self, ids: &[String]) -> Vec<Option<String>> {
        ids.iter()
            .map(|id| self.lookup(id)?.summary.title.clone())
            .collect()
    }

    /// The session's surface now: parsed once, then read on as the file grows.
    fn surface_of(&mut self, id: &str) -> Option<Arc<Surface>> {
        let found = self.lookup(id)?;
        let mut parsed = match self.surfaces.take(|s| s.path == found.path) {
            Some(parsed) if parsed.stamp == found.stamp => {
                let session = parsed.session.clone();
                self.surfaces.keep(parsed);
                return Some(session);
            }
            Some(parsed) if found.stamp.grew_from(&parsed.stamp, parsed.consumed) => parsed,
            _ => {
                self.reads.parsed += 1;
                ParsedSurface::new(&found.path, found.stamp)
            }
        };
        let before = parsed.consumed;
        if parsed.advance(found.stamp).is_err() {
            return None;
        }
        self.reads.surface_bytes += parsed.consumed - before;
        let session = parsed.session.clone();
        self.surfaces.keep(parsed);
        Some(session)
    }
}

/// What Claude Code's MCP client sends: the session in the server's environment (it
/// starts one server per session), the tool-use id in each call's `_meta`.
pub const MCP_CLIENT: McpClient = McpClient {
    who: "Claude Code",
    caller_env: Some("CLAUDE_CODE_SESSION_ID"),
    caller_meta: None,
    call_id_meta: Some("claudecode/toolUseId"),
    stamps: None,
};

/// Claude Code's part of the delivery path: a session with a transcript and no parent
/// takes messages; a cold one may be woken by the wake command; a message waits in the
/// inbox until a hook of the target (or its idle watcher) hands it over.
impl Recipient for ClaudeStore {
    type Plan = ();

    fn desk(&mut self) -> &mut Desk {
        &mut self.desk
    }

    fn resolve(&mut self, target: &str) -> Result<bool, DeliveryRefusal> {
        // The plugin read the target's header in this call: known, its file is not
        // looked at again (a new id is still looked for).
        let known = self.by_id.get(target).map(|&p| self.found[p].clone());
        let Some(found) = known.or_else(|| self.lookup(target)) else {
            return Err(DeliveryRefusal::NotFound);
        };
        if found.summary.header.is_subagent() {
            return Err(DeliveryRefusal::Rejected(
                "a subagent has no inbox; message its parent session".to_string(),
            ));
        }
        Ok(self.live_sessions().contains(target))
    }

    fn wake(&mut self, arriving: &Arriving) -> Woken<()> {
        // A cold target wakes when a wake command is set (started once it is put).
        Woken {
            woke: !arriving.live && self.wake.is_some(),
            plan: (),
        }
    }

    fn inbound(&mut self, target: &str) -> InboundPolicy {
        let cwd = (self.by_id.get(target)).and_then(|&p| self.found[p].summary.header.cwd.clone());
        self.claude_inbound(cwd.as_deref())
    }

    fn accepted(&mut self, waiting: &Waiting, (): ()) -> Delivered {
        let target = &waiting.message.target;
        let cwd = (self.by_id.get(target)).and_then(|&p| self.found[p].summary.header.cwd.clone());
        let started = wake::wake_for(self.wake.as_ref(), waiting, cwd.as_deref());
        // In the inbox until a hook of the target hands it over (or its idle watcher
        // writes it to the session), unless Claude Code's own socket takes it now.
        let mut answer = wake::waiting_unless_started(waiting, started);
        if self.hand_over_as_a_peer(waiting) {
            answer.state = DeliveryState::HandedOver;
        }
        answer
    }
}
