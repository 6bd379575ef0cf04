//! A harness over OpenCode's own sessions: its database (`db.rs`), read only, with the
//! harness-neutral inbox ([`host_shim::inbox`]) for deliveries and liveness from a
//! [`Presence`] that OpenCode's side of the host writes (`host_shim::harnesses::plugin_session`).
//!
//! What a session is, from its row: id, title, directory (the workspace), preset
//! (`provider/model` of the session's model), creation time; one with `parent_id` is a
//! subagent owned by that session (listed, never messaged); an archived one
//! (`time_archived`) is not listed and not found. OpenCode keeps nothing on disk that
//! says a session is open: a session is live while an OpenCode process that loaded the
//! session-tools plugin has it registered (it registers every session it runs).
//!
//! The surface: the messages from the last completed compaction on (OpenCode's own
//! rule: the person's message with a `compaction` part whose summary finished), the
//! summary marked replaced; text parts only (reasoning never), tool parts as actions,
//! seq = the message's ordinal in the whole session, so seqs hold across compactions.
//! A person's message splits where its parts change kind: the person's text (source
//! `user`), text OpenCode or a plugin added (`synthetic`: source `opencode`, injected),
//! and a handed-over message, which shows as the frame itself (user, not injected).
//! Parts marked `ignored` never reached the model and are left out.
//!
//! Trust model: the database is OpenCode's and read only (`db.rs`); liveness is the
//! presence's. A database that does not exist yet is an empty store.
//!
//! Cost: a listing is one indexed query, kept while SQLite's `data_version` says no
//! other connection committed; a read is one query over the session's messages and
//! parts, kept the same way.

/// The profile `host-shim` runs this harness by (setup, doctor, hooks, its store from
/// the command's flags).
pub mod profile;
pub use profile::OpenCode;
pub mod db;
pub mod write_hook;

use db::{Database, MessageRow, SessionRow};
use host_shim::contract::latest::{
    ActionStatus, Delivered, DeliveryRefusal, InboundPolicy, Role, SessionHeader, SessionIndex,
    ToolAction,
};
use host_shim::harnesses::McpClient;
use host_shim::harnesses::surface::{LoggedSessions, Message, Recent, Surface, handed_over_frames};
use host_shim::inbox::WakeCommand;
use host_shim::inbox::delivery::{Arriving, Woken};
use host_shim::inbox::{Desk, Recipient, SharedInbox, Waiting};
use host_shim::presence::{LivePerCall, Presence};
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;

/// What the store read, for `--stats` and the benchmarks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DatabaseReads {
    /// Listings read from the database (a listing while nothing changed is not).
    pub listings: u64,
    /// Surfaces read from the database.
    pub surfaces: u64,
}

/// The store: an OpenCode database, read only, an inbox backend for deliveries and
/// the presence OpenCode's plugin side registers its sessions in.
pub struct OpenCodeStore {
    db: Database,
    desk: Desk,
    /// Which sessions run, as the plugin registers them: asked once a call.
    live: LivePerCall,
    /// The sessions as last listed, with the database version they were read at.
    listed: Option<(i64, Vec<SessionRow>)>,
    by_id: HashMap<String, usize>,
    /// Parsed surfaces by session, with the database version each was read at.
    surfaces: Recent<(String, i64, Arc<Surface>)>,
    reads: DatabaseReads,
    /// Starts OpenCode for a cold target the call may wake (none by default).
    wake: Option<WakeCommand>,
}

impl OpenCodeStore {
    /// A store over the database at `path` (one that does not exist yet is empty).
    pub fn open(path: &Path, inbox: SharedInbox, presence: Arc<dyn Presence>) -> OpenCodeStore {
        OpenCodeStore {
            db: Database::at(path),
            desk: Desk::new(inbox),
            live: LivePerCall::new(presence),
            listed: None,
            by_id: HashMap::new(),
            surfaces: Recent::default(),
            reads: DatabaseReads::default(),
            wake: None,
        }
    }

    /// Wakes a cold target with `wake` (for instance `opencode run --session {id} "A
    /// message is waiting."`, whose prompt the plugin file adds the message to); without
    /// one a cold session's messages wait for its next prompt.
    pub fn wake_command(mut self, wake: Option<WakeCommand>) -> OpenCodeStore {
        self.wake = wake;
        self
    }

    pub fn reads(&self) -> DatabaseReads {
        self.reads
    }

    /// The inbox backend deliveries go to.
    pub fn inbox(&self) -> &SharedInbox {
        self.desk.inbox()
    }

    /// The database's version now, or `None` without a database (or one that cannot
    /// be read: every question then finds nothing, and `--stats` counts it).
    fn version(&mut self) -> Option<i64> {
        self.db.version().unwrap_or_else(|_| {
            self.db.skipped_rows += 1;
            None
        })
    }

    /// The listing, read again only when the database changed.
    fn listing(&mut self) -> &[SessionRow] {
        let version = self.version();
        let fresh = matches!((&self.listed, version), (Some((seen, _)), Some(now)) if *seen == now);
        if !fresh {
            self.listed = None;
            self.by_id.clear();
            if let Some(version) = version {
                self.reads.listings += 1;
                let rows = self.db.sessions().unwrap_or_default();
                self.by_id = (rows.iter().enumerate())
                    .map(|(at, row)| (row.id.clone(), at))
                    .collect();
                self.listed = Some((version, rows));
            }
        }
        self.listed.as_ref().map_or(&[], |(_, rows)| rows)
    }

    /// One session not archived: from the listing while it holds, else its own row.
    fn lookup(&mut self, id: &str) -> Option<SessionRow> {
        let version = self.version()?;
        if let Some((seen, rows)) = &self.listed
            && *seen == version
        {
            return self.by_id.get(id).map(|&at| rows[at].clone());
        }
        match self.db.session(id) {
            Ok(Some((row, false))) => Some(row),
            _ => None,
        }
    }

    fn header(&mut self, row: &SessionRow) -> SessionHeader {
        SessionHeader {
            id: row.id.clone(),
            created_at_ms: row.created_ms,
            live: self.live.is_live(&row.id),
            parent_id: row.parent_id.clone(),
            origin: if row.parent_id.is_some() {
                "subagent"
            } else {
                "user"
            }
            .to_string(),
            cwd: Some(row.directory.clone()),
            preset: row.preset.clone(),
            inbound: InboundPolicy::Accept,
            machine: None,
        }
    }
}

/// The message ids of the frames OpenCode's database at `database` records in
/// `session`'s messages from the person's side (the plugin gives a hand-over as a user
/// message, or as a synthetic part of the person's prompt): what witnesses a
/// hand-over. The whole session is read, compactions included.
pub fn handed_over_ids(database: &Path, session: &str) -> anyhow::Result<host_shim::inbox::Shown> {
    let messages = db::Database::at(database).messages(session)?;
    let texts = (messages.iter())
        .filter(|message| message.info.role == "user")
        .flat_map(|message| message.parts.iter())
        .filter_map(|part| part.text.as_deref());
    Ok(host_shim::inbox::shown_in(texts))
}

/// Where the surface starts: at the person's message of the last compaction whose
/// summary finished, as OpenCode decides what the model is given (or the first
/// message without one).
fn surface_start(messages: &[MessageRow]) -> usize {
    let mut summarised: HashSet<&str> = HashSet::new();
    for (at, message) in messages.iter().enumerate().rev() {
        let info = &message.info;
        if info.role == "assistant" && info.summary.0 && info.finish.is_some() {
            summarised.extend(info.parent.as_deref());
        }
        if info.role == "user"
            && summarised.contains(message.id.as_str())
            && message.parts.iter().any(|p| p.kind == "compaction")
        {
            return at;
        }
    }
    0
}

/// What one part of a person's message is, for splitting the message.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Said {
    Person,
    Injected,
}

/// A session's surface from its messages.
pub(crate) fn surface_of(messages: &[MessageRow]) -> Surface {
    let start = surface_start(messages);
    let mut out = Numbered {
        surface: Surface::default(),
        seq: 0,
        shown: false,
    };
    for (at, message) in messages.iter().enumerate() {
        out.shown = at >= start;
        let info = &message.info;
        if info.role == "assistant" {
            let texts: Vec<&str> = (message.parts.iter())
                .filter(|p| p.kind == "text" && !p.ignored)
                .filter_map(|p| p.text.as_deref())
                .collect();
            let actions: Vec<ToolAction> = message.parts.iter().filter_map(action_of).collect();
            if texts.is_empty() && actions.is_empty() {
                continue;
            }
            let source = format!(
                "model:{}/{}",
                info.provider.as_deref().unwrap_or("opencode"),
                info.model.as_deref().unwrap_or("unknown")
            );
            let text = (!texts.is_empty()).then(|| texts.join("\n"));
            out.push(|seq| {
                Message::new(seq, Role::Assistant, &source, info.summary.0, text)
                    .with_actions(actions)
            });
            continue;
        }
        // A person's message: runs of the person's text and of injected text, and each
        // handed-over message on its own.
        let mut run: Option<(Said, Vec<&str>)> = None;
        for part in &message.parts {
            let (Some(text), "text", false) =
                (part.text.as_deref(), part.kind.as_str(), part.ignored)
            else {
                continue;
            };
            if part.synthetic
                && let Some(frames) = handed_over_frames(text)
            {
                out.flush(run.take());
                for frame in frames {
                    out.push(|seq| {
                        Message::new(seq, Role::User, "user", false, Some(frame.to_string()))
                    });
                }
                continue;
            }
            let said = if part.synthetic {
                Said::Injected
            } else {
                Said::Person
            };
            match &mut run {
                Some((kind, texts)) if *kind == said => texts.push(text),
                _ => {
                    out.flush(run.take());
                    run = Some((said, vec![text]));
                }
            }
        }
        out.flush(run.take());
    }
    out.surface
}

/// Messages numbered in session order, kept only from the surface's start.
struct Numbered {
    surface: Surface,
    seq: u64,
    /// Whether the message being numbered is on the surface.
    shown: bool,
}

impl Numbered {
    fn push(&mut self, message: impl FnOnce(u64) -> Message) {
        self.seq += 1;
        if self.shown {
            self.surface.captured_through_seq = self.seq;
            self.surface.messages.push(message(self.seq));
        }
    }

    /// A run of a person's message's text parts of one kind, as one message.
    fn flush(&mut self, run: Option<(Said, Vec<&str>)>) {
        let Some((said, texts)) = run else {
            return;
        };
        let (source, injected) = match said {
            Said::Person => ("user", false),
            Said::Injected => ("opencode", true),
        };
        self.push(|seq| {
            Message::new(seq, Role::User, source, false, Some(texts.join("\n"))).injected(injected)
        });
    }
}

/// A tool part as an action: its tool, its input as JSON cut to the WIT's bytes, and
/// how it ended.
fn action_of(part: &db::PartData) -> Option<ToolAction> {
    if part.kind != "tool" {
        return None;
    }
    let state = part.state.clone().unwrap_or_default();
    let input = state.input.map(|v| v.to_string()).unwrap_or_default();
    let input = host_shim::harnesses::surface::action_input(&input);
    Some(ToolAction {
        name: part.tool.clone().unwrap_or_else(|| "(unnamed)".to_string()),
        input,
        status: match state.status.as_str() {
            "completed" => ActionStatus::Ok,
            "error" => ActionStatus::Error,
            _ => ActionStatus::Running,
        },
    })
}

impl LoggedSessions for OpenCodeStore {
    const HARNESS: &'static str = "opencode";

    /// Rows of the database the store could not read.
    fn skipped_lines(&self) -> u64 {
        self.db.skipped_rows
    }

    fn call_begins(&mut self) {
        self.live.begin();
    }

    fn call_ends(&mut self) {
        self.live.end();
    }

    fn all_sessions(&mut self) -> SessionIndex {
        let rows = self.listing().to_vec();
        let headers: Vec<SessionHeader> = rows.iter().map(|row| self.header(row)).collect();
        SessionIndex::of(&headers)
    }

    fn session_header(&mut self, id: &str) -> Option<SessionHeader> {
        let row = self.lookup(id)?;
        let mut header = self.header(&row);
        header.inbound = self.desk.inbound(&header.id);
        Some(header)
    }

    fn titles(&mut self, ids: &[String]) -> Vec<Option<String>> {
        ids.iter()
            .map(|id| Some(self.lookup(id)?.title).filter(|title| !title.is_empty()))
            .collect()
    }

    /// The session's surface now: read again only when the database changed.
    fn surface_of(&mut self, id: &str) -> Option<Arc<Surface>> {
        let version = self.version()?;
        if let Some(surface) = self.surfaces.surface(id, &version) {
            return Some(surface);
        }
        self.lookup(id)?;
        self.reads.surfaces += 1;
        let messages = self.db.messages(id).ok()?;
        Some(
            self.surfaces
                .keep_surface(id, version, surface_of(&messages)),
        )
    }
}

/// What the session-tools OpenCode plugin sends when it calls `host-shim mcp` for a
/// tool the model called: the calling session as OpenCode gave the plugin's tool
/// (`ToolContext.sessionID`) and the model's tool-call id (`callID`), in `_meta`,
/// where the model cannot write. OpenCode's own MCP client sends neither.
pub const MCP_CLIENT: McpClient = McpClient {
    who: "the session-tools OpenCode plugin",
    caller_env: None,
    caller_meta: Some("opencode/sessionID"),
    call_id_meta: Some("opencode/callID"),
    stamps: None,
};

/// OpenCode's part of the delivery path: a top-level session takes messages, which
/// wait in the inbox until the plugin in the process that runs the session hands them
/// over (at once when it is idle or the message steers; at its next prompt when it is
/// cold, or at once when a wake command starts it).
impl Recipient for OpenCodeStore {
    type Plan = ();

    fn desk(&mut self) -> &mut Desk {
        &mut self.desk
    }

    fn resolve(&mut self, target: &str) -> Result<bool, DeliveryRefusal> {
        let Some(row) = self.lookup(target) else {
            return Err(DeliveryRefusal::NotFound);
        };
        if row.parent_id.is_some() {
            return Err(DeliveryRefusal::Rejected(
                "a subagent has no inbox; message the session that started it".to_string(),
            ));
        }
        Ok(self.live.is_live(target))
    }

    fn wake(&mut self, arriving: &Arriving) -> Woken<()> {
        // A live session's plugin hands the message over itself; a cold one is started
        // only with a wake command.
        Woken {
            woke: !arriving.live && self.wake.is_some(),
            plan: (),
        }
    }

    fn accepted(&mut self, ours: &Waiting, (): ()) -> Delivered {
        // The folder only when the command starts there.
        let cwd = (ours.message.woke && self.wake.is_some())
            .then(|| self.lookup(&ours.message.target).map(|row| row.directory))
            .flatten();
        host_shim::inbox::wake::waiting_for_hooks(self.wake.as_ref(), ours, cwd.as_deref())
    }
}

#[cfg(test)]
mod tests;
