//! A harness's session logs as JSON Lines files that grow at their end (Claude Code's
//! transcripts, Codex's rollouts): a file's identity for the caches, its whole lines,
//! and the facts a listing needs read from bounded windows. Every store reads its logs
//! through here, so each does the same bounded work: a file is first read at its head
//! and tail (stepping further back only while the latest facts are missing), then only
//! what was appended since.
//!
//! Trust model: the files are the harness's, written by a process of this user, read
//! only; a line that is not a record is counted and skipped, never an error, and a last
//! line without a line feed is left until it is whole.

use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::SystemTime;

/// Bytes read from the start of a log the first time it is listed.
pub const HEAD_BYTES: u64 = 64 << 10;
/// Bytes read from the end of a log the first time it is listed, and the size of each
/// further step back while its latest facts lie further up.
pub const TAIL_BYTES: u64 = 64 << 10;
/// The most bytes appended since the last listing that are read forward into a log's
/// facts; a log that grew more is read afresh.
pub const APPEND_BYTES: u64 = 1 << 20;

/// A file's identity for the caches: which file (device and inode), its size and
/// modification time. The same file grown is read on from where the last read ended;
/// another file at the path is read afresh.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stamp {
    pub file: (u64, u64),
    pub len: u64,
    pub modified: SystemTime,
}

impl Stamp {
    pub fn of(path: &Path) -> Option<Stamp> {
        let meta = std::fs::metadata(path).ok()?;
        Some(Stamp {
            file: (meta.dev(), meta.ino()),
            len: meta.len(),
            modified: meta.modified().ok()?,
        })
    }

    /// Whether `self` is `earlier`'s file, grown (or unchanged) past `offset`.
    pub fn grew_from(&self, earlier: &Stamp, offset: u64) -> bool {
        self.file == earlier.file && self.len >= offset && self.len >= earlier.len
    }
}

/// Milliseconds since the Unix epoch of an RFC 3339 time.
pub fn rfc3339_ms(text: &str) -> Option<i64> {
    chrono::DateTime::parse_from_rfc3339(text)
        .ok()
        .map(|time| time.timestamp_millis())
}

/// Milliseconds since the Unix epoch of a file time.
pub fn system_time_ms(time: SystemTime) -> i64 {
    time.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// The bytes of `file` from `start` to `end`.
pub fn read_range(file: &mut std::fs::File, start: u64, end: u64) -> std::io::Result<Vec<u8>> {
    let mut buffer = Vec::with_capacity((end - start) as usize);
    file.seek(SeekFrom::Start(start))?;
    file.take(end - start).read_to_end(&mut buffer)?;
    Ok(buffer)
}

/// Each whole line of the log at `path`, read at once (a last line without a line feed
/// is left until it is whole); none when the log does not exist yet. What a store reads
/// when it must see all of a session, not a listing's windows: the witness of a
/// hand-over.
pub fn each_whole_line(path: &Path, mut take: impl FnMut(&[u8])) -> std::io::Result<()> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(err) => return Err(err),
    };
    for (line, whole) in lines(&bytes) {
        if whole {
            take(line);
        }
    }
    Ok(())
}

/// The lines of `buffer`, each with whether a line feed ended it.
pub fn lines(buffer: &[u8]) -> impl Iterator<Item = (&[u8], bool)> {
    let mut rest = buffer;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        match rest.iter().position(|&b| b == b'\n') {
            Some(end) => {
                let line = &rest[..end];
                rest = &rest[end + 1..];
                Some((line, true))
            }
            None => {
                let line = rest;
                rest = &[];
                Some((line, false))
            }
        }
    })
}

/// What a store gathers from a log's lines for a listing: the first value of some
/// facts, the latest of others.
pub trait LineFacts: Default {
    /// Takes one whole line that is not blank (a line that is not a record is counted
    /// by the store as skipped).
    fn take_line(&mut self, line: &[u8]);
    /// These facts (from earlier in the file) followed by `later`'s.
    fn then(self, later: Self) -> Self;
    /// Whether the latest facts a listing needs are known: reading back from the tail
    /// stops there.
    fn has_latest(&self) -> bool;
}

/// The facts of `buffer`'s complete lines (skipping its first piece unless
/// `starts_at_line`), and how many bytes those lines and the piece before them take (a
/// last piece without a line feed is not read: the window or the writer cut it).
pub fn facts_of<F: LineFacts>(buffer: &[u8], starts_at_line: bool) -> (F, u64) {
    let mut facts = F::default();
    let mut consumed = 0;
    for (index, (line, complete)) in lines(buffer).enumerate() {
        if !complete {
            break;
        }
        consumed += line.len() as u64 + 1;
        if (index == 0 && !starts_at_line) || line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        facts.take_line(line);
    }
    (facts, consumed)
}

/// A log's facts as a listing last read them.
#[derive(Debug)]
pub struct Windowed<F> {
    pub stamp: Stamp,
    /// Bytes of whole lines read so far: the next read starts here.
    pub consumed: u64,
    pub facts: F,
}

/// A log's facts now: from `previous` when the file only grew by at most
/// [`APPEND_BYTES`] (reading what was appended), else afresh from its first
/// [`HEAD_BYTES`] and last [`TAIL_BYTES`], stepping further back only while the latest
/// facts are not found. Returns the bytes read too.
pub fn index<F: LineFacts>(
    path: &Path,
    stamp: Stamp,
    previous: Option<Windowed<F>>,
) -> std::io::Result<(Windowed<F>, u64)> {
    let mut file = std::fs::File::open(path)?;
    let (facts, consumed, read) = match previous {
        Some(previous)
            if stamp.grew_from(&previous.stamp, previous.consumed)
                && stamp.len - previous.consumed <= APPEND_BYTES =>
        {
            let appended = read_range(&mut file, previous.consumed, stamp.len)?;
            let (later, consumed) = facts_of::<F>(&appended, true);
            (
                previous.facts.then(later),
                previous.consumed + consumed,
                appended.len() as u64,
            )
        }
        _ if stamp.len <= HEAD_BYTES + TAIL_BYTES => {
            let all = read_range(&mut file, 0, stamp.len)?;
            let (facts, consumed) = facts_of::<F>(&all, true);
            (facts, consumed, all.len() as u64)
        }
        _ => {
            let head = read_range(&mut file, 0, HEAD_BYTES)?;
            let (head_facts, head_end) = facts_of::<F>(&head, true);
            let tail_start = stamp.len - TAIL_BYTES;
            let tail = read_range(&mut file, tail_start, stamp.len)?;
            let (mut later, tail_consumed) = facts_of::<F>(&tail, false);
            let mut read = (head.len() + tail.len()) as u64;
            // Where the lines read so far begin: the tail's first whole line.
            let mut parsed_from = match tail.iter().position(|&b| b == b'\n') {
                Some(end) => tail_start + end as u64 + 1,
                None => stamp.len,
            };
            let mut step = TAIL_BYTES;
            while !later.has_latest() && parsed_from > head_end {
                let start = parsed_from.saturating_sub(step).max(head_end);
                let chunk = read_range(&mut file, start, parsed_from)?;
                read += chunk.len() as u64;
                // The chunk's first piece is the end of a line above it, unless the
                // chunk starts where the head's lines ended.
                let skip = if start == head_end {
                    0
                } else {
                    match chunk.iter().position(|&b| b == b'\n') {
                        Some(end) => end + 1,
                        None => {
                            step *= 2; // one line longer than the step: a bigger one
                            continue;
                        }
                    }
                };
                let (earlier, _) = facts_of::<F>(&chunk[skip..], true);
                later = earlier.then(later);
                parsed_from = start + skip as u64;
            }
            (head_facts.then(later), tail_start + tail_consumed, read)
        }
    };
    Ok((
        Windowed {
            stamp,
            consumed,
            facts,
        },
        read,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_say_which_are_whole() {
        let all: Vec<_> = lines(b"a\nb\nc").collect();
        assert_eq!(
            all,
            [(&b"a"[..], true), (&b"b"[..], true), (&b"c"[..], false)]
        );
    }
}
