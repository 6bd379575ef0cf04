//! Copilot CLI's subagents. A subagent is no session folder of its own in Copilot CLI
//! 1.0.102: its events sit in its parent's `events.jsonl`, each with the subagent's
//! `agentId` (the id its hooks are given as `sessionId`), from `subagent.started`
//! (`agentDisplayName`, `agentDescription`, `model`) to `subagent.completed` or
//! `subagent.failed`. Two places find them:
//!
//! - Copilot's session store (`COPILOT_HOME/session-store.db`, SQLite), whose
//!   `assistant_usage_events` has a row per model request, a subagent's with its
//!   `agent_id` and parent `session_id`: one query lists every subagent that has asked
//!   its model anything, whatever the size of the streams ([`SessionStoreDb`]).
//! - The parent's stream read whole ([`Spans`]): for a live parent (its subagents as
//!   they start and end, before the store has a row), and for the title of a cold
//!   parent's subagent when one is asked for.
//!
//! Trust model: both are Copilot's, read only (the database opened read only, never
//! created, one statement per question, so Copilot's writers never wait on it); a row
//! or line that does not read is skipped and counted.

use super::events::Event;
use host_shim::harnesses::logfile::{Stamp, read_range, rfc3339_ms};
use host_shim::harnesses::sqlite::ReadOnlyDb;
use std::path::Path;

/// A subagent as Copilot's session store lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubagentRow {
    pub id: String,
    pub parent: String,
    /// Its first model request's time.
    pub created_ms: i64,
    /// Its newest model request's model.
    pub model: Option<String>,
}

/// Copilot's session store, read only, asked again only when it changed.
pub struct SessionStoreDb {
    db: ReadOnlyDb,
    read_at: Option<i64>,
    rows: Vec<SubagentRow>,
    /// Rows (or a whole query) that did not read, in the last listing.
    pub skipped: u64,
}

impl SessionStoreDb {
    /// The store in `home` (a `COPILOT_HOME`); none there yet is no subagents.
    pub fn open(home: &Path) -> SessionStoreDb {
        SessionStoreDb {
            db: ReadOnlyDb::at(
                &home.join("session-store.db"),
                "Copilot CLI's session store",
            ),
            read_at: None,
            rows: Vec::new(),
            skipped: 0,
        }
    }

    /// Every subagent the store has a model request of, oldest first. A store Copilot
    /// is writing is read as of its last commit; one that cannot be read (another
    /// schema, damage) gives none and counts one skip.
    pub fn subagents(&mut self) -> &[SubagentRow] {
        match self.db.version() {
            Ok(Some(version)) if self.read_at == Some(version) => {}
            Ok(Some(version)) => match self.query() {
                Ok((rows, skipped)) => {
                    self.rows = rows;
                    self.skipped = skipped;
                    self.read_at = Some(version);
                }
                Err(_) => {
                    self.rows.clear();
                    self.skipped = 1;
                    self.read_at = None;
                }
            },
            Ok(None) => {
                self.rows.clear();
                self.skipped = 0;
            }
            Err(_) => {
                self.rows.clear();
                self.skipped = 1;
            }
        }
        &self.rows
    }

    fn query(&mut self) -> anyhow::Result<(Vec<SubagentRow>, u64)> {
        let Some(connection) = self.db.connection()? else {
            return Ok((Vec::new(), 0));
        };
        let mut statement = connection.prepare_cached(
            "SELECT agent_id, session_id, MIN(created_at), \
             (SELECT model FROM assistant_usage_events newest \
              WHERE newest.agent_id = e.agent_id ORDER BY newest.id DESC LIMIT 1) \
             FROM assistant_usage_events e WHERE agent_id IS NOT NULL AND agent_id != '' \
             GROUP BY agent_id ORDER BY MIN(id)",
        )?;
        let mut rows = statement.query([])?;
        let (mut found, mut skipped) = (Vec::new(), 0);
        while let Some(row) = rows.next()? {
            let read = || -> rusqlite::Result<Option<SubagentRow>> {
                let id: String = row.get(0)?;
                let parent: String = row.get(1)?;
                let created: Option<String> = row.get(2)?;
                let plain = |id: &str| host_shim::inbox::checked_id(id).is_ok();
                Ok((plain(&id) && plain(&parent)).then(|| SubagentRow {
                    id,
                    parent,
                    created_ms: created.as_deref().and_then(rfc3339_ms).unwrap_or(0),
                    model: row.get(3).ok().flatten(),
                }))
            };
            match read() {
                Ok(Some(subagent)) => found.push(subagent),
                Ok(None) | Err(_) => skipped += 1,
            }
        }
        Ok((found, skipped))
    }
}

/// One subagent as its parent's stream shows it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Span {
    pub id: String,
    /// What the parent asked of it (`agentDescription`), else its name.
    pub title: Option<String>,
    pub created_ms: i64,
    pub model: Option<String>,
    /// It completed or failed.
    pub ended: bool,
}

/// The subagents of one stream, read whole (then only what is appended).
#[derive(Clone, Debug, Default)]
pub struct Spans {
    pub found: Vec<Span>,
    /// Lines that named a subagent event but did not read.
    pub skipped: u64,
}

/// What every line of a subagent's start or end holds: only such lines are parsed.
const MARK: &[u8] = b"\"subagent.";

impl Spans {
    /// The spans of `buffer`'s whole lines, and the bytes those lines take (a last
    /// line without its line feed is still being written: not read). Only the lines
    /// holding [`MARK`] are parsed; the rest is passed over by a substring search.
    fn of(buffer: &[u8]) -> (Spans, u64) {
        let consumed = memchr::memrchr(b'\n', buffer).map_or(0, |at| at + 1);
        let whole = &buffer[..consumed];
        let mut spans = Spans::default();
        let mut next_line = 0;
        for hit in memchr::memmem::find_iter(whole, MARK) {
            if hit < next_line {
                continue; // another mark on a line already taken
            }
            let start = memchr::memrchr(b'\n', &whole[..hit]).map_or(0, |at| at + 1);
            let end = hit + memchr::memchr(b'\n', &whole[hit..]).expect("whole lines");
            spans.take_line(&whole[start..end]);
            next_line = end + 1;
        }
        (spans, consumed as u64)
    }

    fn take_line(&mut self, line: &[u8]) {
        let Some(event) = Event::parse(line) else {
            self.skipped += 1;
            return;
        };
        let Some(id) = event
            .agent
            .as_deref()
            .filter(|id| host_shim::inbox::checked_id(id).is_ok())
        else {
            return;
        };
        match event.kind.as_str() {
            "subagent.started" => self.found.push(Span {
                id: id.to_string(),
                title: (event.text("agentDescription"))
                    .or(event.text("agentDisplayName"))
                    .map(str::to_string),
                created_ms: event.timestamp.as_deref().and_then(rfc3339_ms).unwrap_or(0),
                model: event.text("model").map(str::to_string),
                ended: false,
            }),
            "subagent.completed" | "subagent.failed" => {
                match self.found.iter_mut().find(|s| s.id == id) {
                    Some(span) => span.ended = true,
                    // Its start was in an earlier read: [`Spans::then`] joins them.
                    None => self.found.push(Span {
                        id: id.to_string(),
                        ended: true,
                        ..Span::default()
                    }),
                }
            }
            _ => {}
        }
    }

    /// These spans (from earlier in the stream) followed by `later`'s.
    fn then(mut self, later: Spans) -> Spans {
        for span in later.found {
            match self.found.iter_mut().find(|s| s.id == span.id) {
                Some(known) => known.ended |= span.ended,
                None => self.found.push(span),
            }
        }
        self.skipped += later.skipped;
        self
    }

    /// The subagent `id`'s span.
    pub fn span(&self, id: &str) -> Option<&Span> {
        self.found.iter().find(|s| s.id == id)
    }
}

/// A stream's spans as last read: from where, and up to which byte.
#[derive(Clone, Debug)]
pub struct ReadSpans {
    pub stamp: Stamp,
    consumed: u64,
    pub spans: Spans,
}

/// The spans of the stream at `path` now: `previous` when it is unchanged, with what
/// was appended when it grew, else read whole. None when it cannot be read.
pub fn spans_of(path: &Path, previous: Option<ReadSpans>) -> Option<ReadSpans> {
    let stamp = Stamp::of(path)?;
    let (spans, from) = match previous {
        Some(previous) if previous.stamp == stamp => return Some(previous),
        Some(previous) if stamp.grew_from(&previous.stamp, previous.consumed) => {
            (previous.spans, previous.consumed)
        }
        _ => (Spans::default(), 0),
    };
    let mut file = host_shim::harnesses::logfile::open_record(path).ok()?;
    let bytes = read_range(&mut file, from, stamp.len).ok()?;
    let (later, consumed) = Spans::of(&bytes);
    Some(ReadSpans {
        stamp,
        consumed: from + consumed,
        spans: spans.then(later),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(kind: &str, agent: &str, data: serde_json::Value, at: &str) -> String {
        serde_json::json!({"type": kind, "data": data, "agentId": agent, "timestamp": at})
            .to_string()
            + "\n"
    }

    #[test]
    fn a_stream_gives_its_subagents_as_they_start_and_end_read_on_as_it_grows() {
        let dir = host_shim_testkit::scratch("copilot-spans", "stream");
        let path = dir.join("events.jsonl");
        let started = line(
            "subagent.started",
            "a1",
            serde_json::json!({"agentDisplayName": "lister", "agentDescription": "list the files", "model": "m"}),
            "2026-12-05T10:01:54.780Z",
        );
        let other =
            "{\"type\":\"assistant.message\",\"data\":{\"content\":\"subagent.started\"}}\n";
        std::fs::write(&path, format!("{other}{started}{{\"type\":\"subagent.")).unwrap();
        let first = spans_of(&path, None).unwrap();
        assert_eq!(first.spans.found.len(), 1);
        let span = first.spans.span("a1").unwrap();
        assert_eq!(span.title.as_deref(), Some("list the files"));
        assert_eq!(span.model.as_deref(), Some("m"));
        assert_eq!(
            span.created_ms,
            rfc3339_ms("2026-12-05T10:01:54.780Z").unwrap()
        );
        assert!(!span.ended);
        // The last line was still being written; it ends the span once whole.
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        use std::io::Write;
        writeln!(file, "completed\",\"agentId\":\"a1\",\"data\":{{}}}}").unwrap();
        let later = spans_of(&path, Some(first)).unwrap();
        assert!(later.spans.span("a1").unwrap().ended);
        assert_eq!(later.spans.skipped, 0);
        // A damaged subagent line is counted, not a failure.
        std::fs::write(&path, "{\"type\":\"subagent.started\" broken\n").unwrap();
        assert_eq!(spans_of(&path, None).unwrap().spans.skipped, 1);
    }
}
