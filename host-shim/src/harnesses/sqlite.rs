//! A harness's SQLite database, read only (OpenCode's sessions, Copilot CLI's session
//! store), opened when first needed.
//!
//! Trust model: the database is the harness's, written by this user's processes. It is
//! opened read only (`SQLITE_OPEN_READ_ONLY`, `query_only`), never created; a missing
//! file is no database (its store answers as an empty one). Each question is one
//! statement in its own read transaction, so the harness's writers never wait on this
//! reader (WAL) and a checkpoint waits at most for one statement. Nothing in a row
//! selects a file to open.

use anyhow::{Context, Result};
use rusqlite::{Connection, OpenFlags};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long a statement waits for a lock the harness holds (only WAL recovery takes
/// one a reader waits for).
const BUSY_WAIT: Duration = Duration::from_millis(250);

/// A read-only connection to one database, opened when first needed.
pub struct ReadOnlyDb {
    path: PathBuf,
    /// Whose database it is, for an error (`OpenCode's database`).
    whose: &'static str,
    connection: Option<Connection>,
}

impl ReadOnlyDb {
    pub fn at(path: &Path, whose: &'static str) -> ReadOnlyDb {
        ReadOnlyDb {
            path: path.to_path_buf(),
            whose,
            connection: None,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The connection, or `None` while the database does not exist yet.
    pub fn connection(&mut self) -> Result<Option<&Connection>> {
        if self.connection.is_none() {
            if !self.path.is_file() {
                return Ok(None);
            }
            let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
                | OpenFlags::SQLITE_OPEN_NO_MUTEX
                | OpenFlags::SQLITE_OPEN_URI;
            let connection = Connection::open_with_flags(&self.path, flags)
                .with_context(|| format!("cannot open {} {}", self.whose, self.path.display()))?;
            connection.busy_timeout(BUSY_WAIT)?;
            connection.pragma_update(None, "query_only", true)?;
            self.connection = Some(connection);
        }
        Ok(self.connection.as_ref())
    }

    /// A number that changes whenever another connection commits (SQLite's
    /// `data_version`): what was read before still holds while it stays the same.
    /// `None` without a database.
    pub fn version(&mut self) -> Result<Option<i64>> {
        let Some(connection) = self.connection()? else {
            return Ok(None);
        };
        Ok(Some(connection.query_row(
            "PRAGMA data_version",
            [],
            |row| row.get(0),
        )?))
    }
}
