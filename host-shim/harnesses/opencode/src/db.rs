//! OpenCode's database, read only: `opencode.db` (SQLite in WAL mode, one per user,
//! written by every OpenCode process), as OpenCode 1.18.33 lays it out: `session`
//! (`id`, `parent_id`, `title`, `directory`, `model` JSON, `time_created`,
//! `time_archived`, in ms), `message` (`session_id`, `data` JSON with `role`,
//! `providerID`, `modelID`, `summary`, `finish`, `parentID`) and `part` (`message_id`,
//! `data` JSON with `type` and, by type, `text`, `synthetic`, `ignored`, `tool`,
//! `state`).
//!
//! Trust model: the database is OpenCode's, written by this user's processes. It is
//! opened read only, never created (a missing file is an empty store); each question
//! is one statement in its own read transaction, so OpenCode's writers never wait on
//! this reader. A row whose JSON does not read is skipped and counted; nothing in a
//! row selects a file to open.

use anyhow::{Context, Result};
use host_shim::harnesses::sqlite::ReadOnlyDb;
use rusqlite::{Connection, OptionalExtension};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// One session as its row says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionRow {
    pub id: String,
    pub parent_id: Option<String>,
    pub title: String,
    pub directory: String,
    /// `provider/model`, from the session's `model` JSON.
    pub preset: Option<String>,
    pub created_ms: i64,
}

/// One message of a session with its parts, in OpenCode's order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MessageRow {
    pub id: String,
    pub info: MessageInfo,
    pub parts: Vec<PartData>,
}

/// What the store reads of a message's `data`.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct MessageInfo {
    pub role: String,
    #[serde(rename = "providerID")]
    pub provider: Option<String>,
    #[serde(rename = "modelID")]
    pub model: Option<String>,
    /// An assistant message that summarises what came before (a compaction's).
    pub summary: SummaryFlag,
    pub finish: Option<String>,
    #[serde(rename = "parentID")]
    pub parent: Option<String>,
}

/// `summary` is `true` on a compaction's summary, an object (diffs) on a person's
/// message.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SummaryFlag(pub bool);

impl<'de> Deserialize<'de> for SummaryFlag {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<SummaryFlag, D::Error> {
        let value = serde_json::Value::deserialize(d)?;
        Ok(SummaryFlag(value == serde_json::Value::Bool(true)))
    }
}

/// What the store reads of a part's `data`.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct PartData {
    #[serde(rename = "type")]
    pub kind: String,
    pub text: Option<String>,
    /// Put there by OpenCode or a plugin, not typed by the person.
    pub synthetic: bool,
    /// Kept but not given to the model.
    pub ignored: bool,
    /// A tool part's tool.
    pub tool: Option<String>,
    /// A tool part's state: `status` and `input`.
    pub state: Option<ToolState>,
}

#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct ToolState {
    pub status: String,
    pub input: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct ModelRef {
    id: String,
    #[serde(rename = "providerID")]
    provider: String,
}

/// OpenCode's database, read only.
pub struct Database {
    db: ReadOnlyDb,
    /// Rows whose JSON did not read, in the last listing and reads.
    pub skipped_rows: u64,
}

impl Database {
    pub fn at(path: &Path) -> Database {
        Database {
            db: ReadOnlyDb::at(path, "OpenCode's database"),
            skipped_rows: 0,
        }
    }

    pub fn path(&self) -> &Path {
        self.db.path()
    }

    /// The connection, or `None` while the database does not exist yet.
    fn connection(&mut self) -> Result<Option<&Connection>> {
        self.db.connection()
    }

    /// A number that changes whenever another connection commits (SQLite's
    /// `data_version`); `None` without a database.
    pub fn version(&mut self) -> Result<Option<i64>> {
        self.db.version()
    }

    /// Every session not archived, newest first.
    pub fn sessions(&mut self) -> Result<Vec<SessionRow>> {
        let Some(connection) = self.connection()? else {
            return Ok(Vec::new());
        };
        let mut statement = connection.prepare_cached(
            "SELECT id, parent_id, title, directory, model, time_created FROM session \
             WHERE time_archived IS NULL ORDER BY time_created DESC, id DESC",
        )?;
        let rows = statement.query_map([], session_row)?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .context("cannot read OpenCode's sessions")
    }

    /// One session, archived or not (`None` when no row has that id).
    pub fn session(&mut self, id: &str) -> Result<Option<(SessionRow, bool)>> {
        let Some(connection) = self.connection()? else {
            return Ok(None);
        };
        let mut statement = connection.prepare_cached(
            "SELECT id, parent_id, title, directory, model, time_created, \
             time_archived IS NOT NULL FROM session WHERE id = ?1",
        )?;
        let row = statement
            .query_row([id], |row| Ok((session_row(row)?, row.get::<_, bool>(6)?)))
            .optional()?;
        Ok(row)
    }

    /// A session's messages with their parts, oldest first (OpenCode's ids ascend with
    /// time; parts are ordered by id, as OpenCode orders them).
    pub fn messages(&mut self, session: &str) -> Result<Vec<MessageRow>> {
        let Some(connection) = self.connection()? else {
            return Ok(Vec::new());
        };
        let mut statement = connection.prepare_cached(
            "SELECT m.id, m.data, p.data FROM message m LEFT JOIN part p ON p.message_id = m.id \
             WHERE m.session_id = ?1 ORDER BY m.time_created, m.id, p.id",
        )?;
        let mut rows = statement.query([session])?;
        let mut messages: Vec<MessageRow> = Vec::new();
        let mut skipped = 0u64;
        while let Some(row) = rows.next()? {
            let id: String = row.get(0)?;
            if messages.last().is_none_or(|last| last.id != id) {
                let data: String = row.get(1)?;
                let info = host_shim::json::from_str(&data).unwrap_or_else(|_| {
                    skipped += 1;
                    MessageInfo::default()
                });
                messages.push(MessageRow {
                    id,
                    info,
                    parts: Vec::new(),
                });
            }
            if let Some(data) = row.get::<_, Option<String>>(2)? {
                match host_shim::json::from_str::<PartData>(&data) {
                    Ok(part) => messages.last_mut().expect("pushed").parts.push(part),
                    Err(_) => skipped += 1,
                }
            }
        }
        drop(rows);
        drop(statement);
        self.skipped_rows += skipped;
        Ok(messages)
    }
}

fn session_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<SessionRow> {
    let model: Option<String> = row.get(4)?;
    Ok(SessionRow {
        id: row.get(0)?,
        parent_id: row.get(1)?,
        title: row.get(2)?,
        directory: row.get(3)?,
        preset: model
            .and_then(|json| host_shim::json::from_str::<ModelRef>(&json).ok())
            .map(|model| format!("{}/{}", model.provider, model.id)),
        created_ms: row.get(5)?,
    })
}

/// Where OpenCode keeps its database for this user: `$XDG_DATA_HOME/opencode/opencode.db`
/// (`~/.local/share/…` without it), as `opencode db path` prints it.
pub fn default_path() -> Option<PathBuf> {
    let data = std::env::var_os("XDG_DATA_HOME")
        .filter(|dir| !dir.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(".local/share")))?;
    Some(data.join("opencode").join("opencode.db"))
}
