//! One OpenClaw agent's database, read only: `agents/<agent>/agent/openclaw-agent.sqlite`
//! under OpenClaw's state folder (SQLite, schema 23 in 2026.9.6, STRICT tables), as
//! OpenClaw 2026.9.6 lays it out:
//!
//! - `session_nodes`: one row per session key (`agent:main:main`,
//!   `agent:main:subagent:<uuid>`, …) with the key's current session id
//!   (`current_session_id`), `parent_session_key` / `spawned_by` (a subagent's owner),
//!   `created_via` (`operator`, `spawn`, `cron`, …), `label`, `display_name`,
//!   `archived_at`, `created_at` (ms);
//! - `session_windows`: one row per session id (a key's reset starts a new one), with
//!   `model_provider`, `model`, `hook_external_content_source` (a hook's session);
//! - `transcript_events`: a session id's events, one JSON event per row by `seq`, the
//!   pi-agent transcript shape (`session` with `cwd`, `message`, `compaction`, …); a
//!   large event is stored zstd-compressed (`event_zstd`, `event_utf8_bytes`) instead
//!   of as text.
//!
//! Trust model: the database is OpenClaw's, written by this user's processes. It is
//! opened read only and never created (`harnesses/sqlite.rs`); each question is one
//! statement in its own read transaction, so OpenClaw's writers never wait on this
//! reader. A compressed event is decoded only up to the size its row declares (at most
//! 4 MiB, as OpenClaw's own check holds it); an event that does not decode or read is
//! skipped and counted. Nothing in a row selects a file to open.

use anyhow::{Context, Result};
use host_shim::harnesses::sqlite::ReadOnlyDb;
use std::io::Read;
use std::path::Path;

/// The largest event OpenClaw stores (its own check on `event_utf8_bytes`).
const LARGEST_EVENT: u64 = 4 * 1024 * 1024;

/// One session as the database says: its key's node and its current window.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionRow {
    /// The session id (the key's current window): what the tools call the session.
    pub id: String,
    /// OpenClaw's session key (`agent:main:main`).
    pub key: String,
    /// The session id of the session that spawned it (a subagent's owner), when that
    /// session's key is in the same database.
    pub parent_id: Option<String>,
    /// How OpenClaw made it: `operator`, `spawn`, `cron`, `channel`, … (none for a
    /// session OpenClaw did not say).
    pub created_via: Option<String>,
    /// Set for a session a hook made (`gmail`, `webhook`).
    pub hook_source: Option<String>,
    /// The person's label (`sessions_spawn`'s `label`, a rename).
    pub label: Option<String>,
    /// OpenClaw's display name (for an explicit session, the key's tail).
    pub display_name: Option<String>,
    /// `provider/model` of its window.
    pub preset: Option<String>,
    /// The workspace its transcript's `session` event names.
    pub cwd: Option<String>,
    pub created_ms: i64,
}

/// One agent's database.
pub struct AgentDb {
    db: ReadOnlyDb,
    /// Events that did not decode or read, in the last reads.
    pub skipped_rows: u64,
}

/// The listing's query: every session not archived, newest first, with its owner's
/// current session id and the workspace its first event names.
const SESSIONS: &str = "\
    SELECT n.current_session_id, n.session_key, parent.current_session_id, n.created_via, \
           w.hook_external_content_source, n.label, coalesce(n.display_name, w.display_name), \
           w.model_provider, w.model, \
           CASE WHEN json_valid(e.event_json) THEN json_extract(e.event_json, '$.cwd') END, \
           coalesce(n.created_at, w.created_at) \
    FROM session_nodes n \
    LEFT JOIN session_windows w ON w.session_id = n.current_session_id \
    LEFT JOIN session_nodes parent \
           ON parent.session_key = coalesce(n.parent_session_key, n.spawned_by) \
    LEFT JOIN transcript_events e ON e.session_id = n.current_session_id AND e.seq = 0 \
    WHERE n.archived_at IS NULL \
    ORDER BY coalesce(n.created_at, w.created_at) DESC, n.current_session_id DESC";

impl AgentDb {
    pub fn at(path: &Path) -> AgentDb {
        AgentDb {
            db: ReadOnlyDb::at(path, "OpenClaw's agent database"),
            skipped_rows: 0,
        }
    }

    pub fn path(&self) -> &Path {
        self.db.path()
    }

    /// A number that changes whenever OpenClaw commits (SQLite's `data_version`);
    /// `None` without a database.
    pub fn version(&mut self) -> Result<Option<i64>> {
        self.db.version()
    }

    /// Every session not archived, newest first.
    pub fn sessions(&mut self) -> Result<Vec<SessionRow>> {
        let Some(connection) = self.db.connection()? else {
            return Ok(Vec::new());
        };
        let mut statement = connection.prepare_cached(SESSIONS)?;
        let rows = statement.query_map([], |row| {
            let provider: Option<String> = row.get(7)?;
            let model: Option<String> = row.get(8)?;
            Ok(SessionRow {
                id: row.get(0)?,
                key: row.get(1)?,
                parent_id: row.get(2)?,
                created_via: row.get(3)?,
                hook_source: row.get(4)?,
                label: row.get(5)?,
                display_name: row.get(6)?,
                preset: match (provider, model) {
                    (Some(provider), Some(model)) => Some(format!("{provider}/{model}")),
                    (None, model) => model,
                    (Some(_), None) => None,
                },
                cwd: row.get(9)?,
                created_ms: row.get::<_, Option<i64>>(10)?.unwrap_or(0),
            })
        })?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .context("cannot read OpenClaw's sessions")
    }

    /// The first text a person gave each of `ids` (its first user message's), in one
    /// statement per id; `None` for a session without one. A compressed row (a long
    /// prompt is one) is decoded to be looked at.
    pub fn first_prompts(&mut self, ids: &[&str]) -> Result<Vec<Option<String>>> {
        let Some(connection) = self.db.connection()? else {
            return Ok(vec![None; ids.len()]);
        };
        let mut statement = connection.prepare_cached(
            "SELECT event_json, event_zstd, event_utf8_bytes FROM transcript_events \
             WHERE session_id = ?1 AND (event_json IS NULL OR (json_valid(event_json) \
             AND json_extract(event_json, '$.type') = 'message' \
             AND json_extract(event_json, '$.message.role') = 'user')) ORDER BY seq",
        )?;
        let mut prompts = Vec::with_capacity(ids.len());
        for id in ids {
            let mut rows = statement.query([id])?;
            let mut prompt = None;
            while let Some(row) = rows.next()? {
                let event = event_of(row.get(0)?, row.get(1)?, row.get(2)?);
                let message = event.as_ref().map(|event| &event["message"]);
                if let Some(message) = message.filter(|m| m["role"] == "user") {
                    prompt = super::transcript::person_text(message);
                    break;
                }
            }
            prompts.push(prompt);
        }
        Ok(prompts)
    }

    /// A session id's events in order, compressed ones decoded; an event that does not
    /// decode or read is skipped and counted.
    pub fn events(&mut self, session: &str) -> Result<Vec<serde_json::Value>> {
        let Some(connection) = self.db.connection()? else {
            return Ok(Vec::new());
        };
        let mut statement = connection.prepare_cached(
            "SELECT event_json, event_zstd, event_utf8_bytes FROM transcript_events \
             WHERE session_id = ?1 ORDER BY seq",
        )?;
        let mut rows = statement.query([session])?;
        let mut events = Vec::new();
        let mut skipped = 0u64;
        while let Some(row) = rows.next()? {
            match event_of(row.get(0)?, row.get(1)?, row.get(2)?) {
                Some(event) => events.push(event),
                None => skipped += 1,
            }
        }
        drop(rows);
        drop(statement);
        self.skipped_rows += skipped;
        Ok(events)
    }
}

/// One row's event: its JSON text, or its compressed bytes decoded; `None` for one that
/// does not read.
fn event_of(
    text: Option<String>,
    compressed: Option<Vec<u8>>,
    size: Option<i64>,
) -> Option<serde_json::Value> {
    match (text, compressed) {
        (Some(text), _) => host_shim::json::from_str(&text).ok(),
        (None, Some(bytes)) => {
            decompressed(&bytes, size).and_then(|bytes| host_shim::json::from_slice(&bytes).ok())
        }
        (None, None) => None,
    }
}

/// A compressed event's bytes: exactly the size its row declares, at most
/// [`LARGEST_EVENT`]; `None` for a frame that does not decode or decodes to another size.
pub(crate) fn decompressed(bytes: &[u8], declared: Option<i64>) -> Option<Vec<u8>> {
    let declared = u64::try_from(declared?)
        .ok()
        .filter(|&n| n <= LARGEST_EVENT)?;
    let decoder = ruzstd::decoding::StreamingDecoder::new(bytes).ok()?;
    let mut out = Vec::with_capacity(usize::try_from(declared).ok()?);
    // One byte more than declared tells a frame that runs long.
    decoder.take(declared + 1).read_to_end(&mut out).ok()?;
    (out.len() as u64 == declared).then_some(out)
}

/// Where OpenClaw keeps its state for this user: `$OPENCLAW_STATE_DIR`, else
/// `~/.openclaw`.
pub fn default_state_dir() -> Option<std::path::PathBuf> {
    host_shim::os::env_or_home("OPENCLAW_STATE_DIR", ".openclaw")
}

/// The agent databases under OpenClaw's state folder, by agent id.
pub fn agent_databases(state: &Path) -> Vec<(String, std::path::PathBuf)> {
    let Ok(entries) = std::fs::read_dir(state.join("agents")) else {
        return Vec::new();
    };
    let mut found: Vec<(String, std::path::PathBuf)> = entries
        .flatten()
        .filter_map(|entry| {
            let agent = entry.file_name().into_string().ok()?;
            let path = entry.path().join("agent").join("openclaw-agent.sqlite");
            (!agent.starts_with('.') && path.is_file()).then_some((agent, path))
        })
        .collect();
    found.sort();
    found
}
