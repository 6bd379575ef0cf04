//! A harness over OpenClaw's own sessions: each agent's database under OpenClaw's state
//! folder (`db.rs`, read only), with the harness-neutral inbox ([`host_shim::inbox`]) for
//! deliveries and liveness from a [`Presence`] that the session-tools OpenClaw plugin
//! writes through its `host-shim mcp` child ([`host_shim::harnesses::plugin_session`]).
//!
//! What a session is: a session key's current window (`session_nodes` and
//! `session_windows`), named by its session id, which is what OpenClaw gives a
//! plugin's tool as the caller (`sessionId`); a key's reset starts a new id, and the
//! old window is no longer listed. Title: the person's label, else the first prompt,
//! else OpenClaw's display name; workspace: the transcript's `session` event's `cwd`;
//! preset: `provider/model` of the window. One spawned by another session is a
//! subagent owned by it (listed, never messaged; still a subagent, without an owner,
//! when the session that spawned it is gone); a cron job's session has origin
//! `cron` and its title starts `cron job: `, a hook's origin `hook:<source>` and title
//! `hook (<source>): ` (the listing shows titles, not origins), a channel's origin is
//! `channel`. An archived one is not listed.
//!
//! The surface: `transcript.rs`. Liveness: OpenClaw keeps nothing that says a session
//! is open; a session is live while an OpenClaw process whose session-tools plugin
//! opened it runs. A cold one is started by the wake command, when one is set
//! (`openclaw agent --session-id {id} --message …`, through the gateway when one runs),
//! and its plugin hands the message over at that turn's prompt. A hand-over the plugin
//! gives as a turn's message is witnessed by the session's record
//! ([`handed_over_ids`]); one a prompt hook adds, by the plugin's word (OpenClaw does
//! not keep a hook's text).
//!
//! Trust model: the databases are OpenClaw's and read only (`db.rs`); liveness is the
//! presence's. A state folder without agent databases (or that does not exist yet) is
//! an empty store.
//!
//! Cost: a listing is one query per agent database, kept while SQLite's
//! `data_version` of every one says nothing was committed; a read is one query over the
//! session's events, kept the same way.

/// The profile `host-shim` runs this harness by (setup, doctor, hooks, its store from
/// the command's flags).
pub mod profile;
pub use profile::OpenClaw;
pub mod db;
pub mod transcript;
pub mod write_hook;

use db::{AgentDb, SessionRow};
use host_shim::contract::latest::{
    Delivered, DeliveryRefusal, InboundPolicy, SessionHeader, SessionIndex,
};
use host_shim::harnesses::McpClient;
use host_shim::harnesses::surface::{LoggedSessions, Recent, Surface};
use host_shim::inbox::delivery::{Arriving, Woken};
use host_shim::inbox::{Desk, Recipient, SharedInbox, Waiting, WakeCommand, wake};
use host_shim::presence::{LivePerCall, Presence};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use db::default_state_dir;

/// The message ids of the frames OpenClaw's state folder `state` records as messages
/// from the person's side of `session` (the turn the plugin starts for an idle session
/// carries them as its message): what witnesses such a hand-over. Every event of the
/// session is read, compacted ones included, in whichever agent's database holds it.
pub fn handed_over_ids(state: &Path, session: &str) -> anyhow::Result<host_shim::inbox::Shown> {
    let mut shown = host_shim::inbox::Shown::new();
    for (_, path) in db::agent_databases(state) {
        let events = AgentDb::at(&path).events(session)?;
        let texts: Vec<String> = (events.iter())
            .filter(|event| event["type"] == "message" && event["message"]["role"] == "user")
            .filter_map(|event| transcript::person_text(&event["message"]))
            .collect();
        shown.extend(host_shim::inbox::shown_in(texts.iter().map(String::as_str)));
    }
    Ok(shown)
}

/// What the session-tools OpenClaw plugin sends when it calls `host-shim mcp` for a
/// tool the model called: the calling session as OpenClaw gave the plugin's tool
/// factory (`sessionId`, a subagent's own inside a subagent) and the model's tool-call
/// id, in `_meta`, where the model cannot write. OpenClaw's own MCP client sends
/// neither (its calls carry no session).
pub const MCP_CLIENT: McpClient = McpClient {
    who: "the session-tools OpenClaw plugin",
    caller_env: None,
    caller_meta: Some("openclaw/sessionId"),
    call_id_meta: Some("openclaw/toolCallId"),
    stamps: None,
};

/// A listing: every agent database's version when it was read, and the sessions (with
/// the agent database each is in).
type Listing = (Vec<Option<i64>>, Vec<(usize, SessionRow)>);

/// The store: OpenClaw's state folder, its agents' databases read only, an inbox
/// backend for deliveries and the presence the plugin registers its sessions in.
pub struct OpenClawStore {
    state: PathBuf,
    /// The agent databases found so far, by path.
    agents: Vec<AgentDb>,
    desk: Desk,
    /// Which sessions run, as the plugin registers them: asked once a call.
    live: LivePerCall,
    /// The sessions as last listed.
    listed: Option<Listing>,
    by_id: HashMap<String, usize>,
    /// Parsed surfaces by session, with its database's version each was read at.
    surfaces: Recent<(String, i64, Arc<Surface>)>,
    /// During a tool call: whether the databases' versions were looked at yet (a call
    /// asks the listing of many sessions; it looks once).
    listed_this_call: Option<bool>,
    /// Starts OpenClaw for a cold target the call may wake (none by default).
    wake: Option<WakeCommand>,
}

impl OpenClawStore {
    /// A store over OpenClaw's state folder `state` (usually `~/.openclaw`).
    pub fn open(state: &Path, inbox: SharedInbox, presence: Arc<dyn Presence>) -> OpenClawStore {
        OpenClawStore {
            state: state.to_path_buf(),
            agents: Vec::new(),
            desk: Desk::new(inbox),
            live: LivePerCall::new(presence),
            listed: None,
            by_id: HashMap::new(),
            surfaces: Recent::default(),
            listed_this_call: None,
            wake: None,
        }
    }

    /// Wakes a cold target with `wake` (for instance `openclaw agent --session-id {id}
    /// --message "A message from another session is waiting."`, whose prompt the plugin
    /// adds the message to); without one a cold session's messages wait for its next
    /// prompt.
    pub fn wake_command(mut self, wake: Option<WakeCommand>) -> OpenClawStore {
        self.wake = wake;
        self
    }

    /// The inbox backend deliveries go to.
    pub fn inbox(&self) -> &SharedInbox {
        self.desk.inbox()
    }

    /// Every agent database's version now (an agent added since is opened).
    fn versions(&mut self) -> Vec<Option<i64>> {
        for (_, path) in db::agent_databases(&self.state) {
            if !self.agents.iter().any(|agent| agent.path() == path) {
                self.agents.push(AgentDb::at(&path));
            }
        }
        (self.agents.iter_mut())
            .map(|agent| {
                agent.version().unwrap_or_else(|_| {
                    agent.skipped_rows += 1;
                    None
                })
            })
            .collect()
    }

    /// The listing, read again only when a database changed (looked at once per call).
    fn listing(&mut self) -> &[(usize, SessionRow)] {
        if self.listed_this_call == Some(true) {
            return self.listed.as_ref().map_or(&[], |(_, rows)| rows);
        }
        if let Some(listed) = &mut self.listed_this_call {
            *listed = true;
        }
        let versions = self.versions();
        if self
            .listed
            .as_ref()
            .is_none_or(|(seen, _)| *seen != versions)
        {
            let mut rows = Vec::new();
            for (at, agent) in self.agents.iter_mut().enumerate() {
                match agent.sessions() {
                    Ok(found) => rows.extend(found.into_iter().map(|row| (at, row))),
                    Err(_) => agent.skipped_rows += 1,
                }
            }
            rows.sort_by(|(_, a), (_, b)| (b.created_ms, &b.id).cmp(&(a.created_ms, &a.id)));
            self.by_id = (rows.iter().enumerate())
                .map(|(at, (_, row))| (row.id.clone(), at))
                .collect();
            self.listed = Some((versions, rows));
        }
        self.listed.as_ref().map_or(&[], |(_, rows)| rows)
    }

    /// One session not archived, and the agent database it is in.
    fn lookup(&mut self, id: &str) -> Option<(usize, SessionRow)> {
        self.listing();
        let at = *self.by_id.get(id)?;
        self.listed.as_ref().map(|(_, rows)| rows[at].clone())
    }

    fn header(&mut self, row: &SessionRow) -> SessionHeader {
        let origin = match (&row.parent_id, row.created_via.as_deref(), &row.hook_source) {
            (Some(_), _, _) | (None, Some("spawn"), _) => "subagent".to_string(),
            (None, Some("cron"), _) => "cron".to_string(),
            (None, _, Some(source)) => format!("hook:{source}"),
            (None, Some("channel"), None) => "channel".to_string(),
            _ => "user".to_string(),
        };
        SessionHeader {
            id: row.id.clone(),
            created_at_ms: row.created_ms,
            live: self.live.is_live(&row.id),
            parent_id: row.parent_id.clone(),
            origin,
            cwd: row.cwd.clone(),
            preset: row.preset.clone(),
            inbound: InboundPolicy::Accept,
            machine: None,
        }
    }
}

impl LoggedSessions for OpenClawStore {
    const HARNESS: &'static str = "openclaw";

    /// Events and rows the store could not read.
    fn skipped_lines(&self) -> u64 {
        self.agents.iter().map(|agent| agent.skipped_rows).sum()
    }

    fn call_begins(&mut self) {
        self.live.begin();
        self.listed_this_call = Some(false);
    }

    fn call_ends(&mut self) {
        self.live.end();
        self.listed_this_call = None;
    }

    fn all_sessions(&mut self) -> SessionIndex {
        let rows: Vec<SessionRow> = self.listing().iter().map(|(_, row)| row.clone()).collect();
        let headers: Vec<SessionHeader> = rows.iter().map(|row| self.header(row)).collect();
        SessionIndex::of(&headers)
    }

    fn session_header(&mut self, id: &str) -> Option<SessionHeader> {
        let (_, row) = self.lookup(id)?;
        let mut header = self.header(&row);
        header.inbound = self.desk.inbound(&header.id);
        Some(header)
    }

    /// The label, else the first prompt (one statement per session without a label),
    /// else OpenClaw's display name; a cron job's or a hook's session says so first.
    fn titles(&mut self, ids: &[String]) -> Vec<Option<String>> {
        let rows: Vec<Option<(usize, SessionRow)>> = ids.iter().map(|id| self.lookup(id)).collect();
        let mut titles: Vec<Option<String>> = (rows.iter())
            .map(|row| row.as_ref().and_then(|(_, row)| row.label.clone()))
            .map(|label| label.filter(|l| !l.is_empty()))
            .collect();
        let mut untitled: HashMap<usize, Vec<(usize, &str)>> = HashMap::new();
        for (at, row) in rows.iter().enumerate() {
            if let (Some((agent, row)), None) = (row, &titles[at]) {
                untitled.entry(*agent).or_default().push((at, &row.id));
            }
        }
        for (agent, asked) in untitled {
            let session_ids: Vec<&str> = asked.iter().map(|(_, id)| *id).collect();
            let Ok(prompts) = self.agents[agent].first_prompts(&session_ids) else {
                continue;
            };
            for ((at, _), prompt) in asked.iter().zip(prompts) {
                titles[*at] = prompt.filter(|p| !p.trim().is_empty());
            }
        }
        (titles.into_iter().zip(rows))
            .map(|(title, row)| {
                let (_, row) = row?;
                let kind = kind_of(&row);
                match (kind, title.or(row.display_name)) {
                    (Some(kind), Some(title)) => Some(format!("{kind}: {title}")),
                    (Some(kind), None) => Some(kind),
                    (None, title) => title,
                }
            })
            .collect()
    }

    /// The session's surface now: read again only when its database changed.
    fn surface_of(&mut self, id: &str) -> Option<Arc<Surface>> {
        let (agent, _) = self.lookup(id)?;
        let version = self.agents[agent].version().ok()??;
        if let Some(surface) = self.surfaces.surface(id, &version) {
            return Some(surface);
        }
        let events = self.agents[agent].events(id).ok()?;
        let surface = transcript::surface_of(&events);
        Some(self.surfaces.keep_surface(id, version, surface))
    }
}

/// What made a session that no person started: a cron job, a hook (its source).
fn kind_of(row: &SessionRow) -> Option<String> {
    match (row.created_via.as_deref(), &row.hook_source) {
        (Some("cron"), _) => Some("cron job".to_string()),
        (_, Some(source)) => Some(format!("hook ({source})")),
        _ => None,
    }
}

/// OpenClaw's part of the delivery path: a top-level session takes messages, which
/// wait in the inbox until the plugin in the OpenClaw process that runs the session
/// hands them over (at its next prompt); a cold one may be woken by the wake command.
impl Recipient for OpenClawStore {
    type Plan = ();

    fn desk(&mut self) -> &mut Desk {
        &mut self.desk
    }

    fn resolve(&mut self, target: &str) -> Result<bool, DeliveryRefusal> {
        let Some((_, row)) = self.lookup(target) else {
            return Err(DeliveryRefusal::NotFound);
        };
        if row.parent_id.is_some() || row.created_via.as_deref() == Some("spawn") {
            return Err(DeliveryRefusal::Rejected(
                "a subagent has no inbox; message the session that started it".to_string(),
            ));
        }
        Ok(self.live.is_live(target))
    }

    fn wake(&mut self, arriving: &Arriving) -> Woken<()> {
        wake::woken_if_cold(self.wake.as_ref(), arriving)
    }

    fn accepted(&mut self, waiting: &Waiting, (): ()) -> Delivered {
        let target = &waiting.message.target;
        let cwd = self.lookup(target).and_then(|(_, row)| row.cwd);
        wake::waiting_for_hooks(self.wake.as_ref(), waiting, cwd.as_deref())
    }
}

#[cfg(test)]
mod tests;
