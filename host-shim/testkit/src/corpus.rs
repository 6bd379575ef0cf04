//! What every store benchmark's corpus shares: its size, the turns that fill one
//! session, and the folder it is written into once and then reused. Each harness's
//! bench crate writes its own sessions in its harness's shape with these.

use std::path::{Path, PathBuf};

/// How many sessions a store benchmark's corpus holds.
pub const SESSIONS: usize = 1_000;

/// About how many bytes each of them holds.
pub const SESSION_BYTES: usize = 3 << 20;

/// What one turn's tool call printed: 16 KiB, the bulk of each turn.
pub fn tool_output() -> String {
    "o".repeat(16 << 10)
}

/// Turns 0, 1, 2, … of one session, each writing what `turn` writes and saying how many
/// bytes that was, until the session (`written` bytes before the first) holds
/// [`SESSION_BYTES`].
pub fn fill_with_turns(mut written: usize, mut turn: impl FnMut(usize) -> usize) {
    let mut next = 0;
    while written < SESSION_BYTES {
        written += turn(next);
        next += 1;
    }
}

/// The corpus `session-tools-bench-<name>` under the temporary folder: written by `write`
/// into the empty folder on the first run, reused after. A run stopped while writing
/// left no mark of completion, so the next run writes it again.
pub fn written_once(name: &str, write: impl FnOnce(&Path)) -> PathBuf {
    let root = std::env::temp_dir().join(format!("session-tools-bench-{name}"));
    let done = root.join(".complete");
    if !done.exists() {
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        write(&root);
        std::fs::write(&done, "").unwrap();
    }
    root
}

/// A database at `path` in WAL mode with the tables of `fixture` (what a real client
/// wrote) emptied by `clear`, then [`SESSIONS`] sessions, each written by `session`.
pub fn write_database(
    path: &Path,
    fixture: &str,
    clear: &str,
    mut session: impl FnMut(&rusqlite::Transaction<'_>, usize),
) {
    let mut db = rusqlite::Connection::open(path).unwrap();
    db.execute_batch("PRAGMA journal_mode = WAL; PRAGMA foreign_keys = OFF;")
        .unwrap();
    db.execute_batch(fixture).unwrap();
    db.execute_batch(clear).unwrap();
    let writing = db.transaction().unwrap();
    for n in 0..SESSIONS {
        session(&writing, n);
    }
    writing.commit().unwrap();
    db.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);")
        .unwrap();
}
