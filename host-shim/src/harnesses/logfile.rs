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

/// Opens a harness's record for reading, only when it is a regular file (through a
/// symlink, as the harness itself would read it): opened without blocking, so a FIFO
/// or a device planted among the records is an error, never a listing that waits or
/// reads without end.
pub fn open_record(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    Ok(file)
}

/// The whole record at `path` (see [`open_record`]).
pub fn read_record(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    open_record(path)?.read_to_end(&mut bytes)?;
    Ok(bytes)
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

/// The most bytes of a record read to witness a hand-over: its end. A frame an offer
/// gave is written into the record as the harness takes the hook's answer, and the
/// offer is settled at the session's next hook (or offered again after
/// [`crate::inbox::OFFERS_EXPIRE_AFTER`]), long before the record grows this much past
/// it; a record of any size costs at most this much per look.
pub const WITNESS_BYTES: u64 = 32 << 20;

/// Where a hand-over's witness reads a record from.
#[derive(Clone, Copy, Debug)]
pub enum ReadFrom<'a> {
    /// Its end: its last [`WITNESS_BYTES`].
    End,
    /// Where it stood when these offers (their message ids) were made
    /// ([`crate::inbox::record_marks`]), told from the file opened for the read: the
    /// least mark of them that fits that file, or its end when one of them has none.
    Offers(&'a [String]),
}

/// The record at `path` as a hand-over's witness reads it: its whole lines from
/// `from`, and within its last [`WITNESS_BYTES`] (from the first line that starts
/// inside them); empty when it does not exist yet. Only a regular file is read (opened
/// without blocking: a FIFO or a device such as `/dev/zero` named by a hook's input is
/// an error, never a wait or a read without end), and opened once: the marks are
/// checked against the file read.
pub fn witness_since(path: &Path, from: ReadFrom<'_>) -> std::io::Result<Vec<u8>> {
    let (mut file, meta) = match crate::os::open_regular(path, u64::MAX) {
        Ok(opened) => opened,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(err) => return Err(err),
    };
    let from = match from {
        ReadFrom::End => 0,
        ReadFrom::Offers(ids) => crate::inbox::record_marks::from(path, &meta, ids),
    };
    witnessed(&mut file, meta.len(), from)
}

/// The lines of an open record of `len` bytes from byte `from` (a line begun before it
/// is not read), within its last [`WITNESS_BYTES`].
fn witnessed(file: &mut std::fs::File, len: u64, from: u64) -> std::io::Result<Vec<u8>> {
    let start = len.saturating_sub(WITNESS_BYTES).max(from.min(len));
    if start == 0 {
        return read_range(file, 0, len);
    }
    // One byte before: whether a line starts at `start` or inside the window, whose
    // part there is not whole here.
    let bytes = read_range(file, start - 1, len)?;
    let first = bytes
        .iter()
        .position(|&b| b == b'\n')
        .map_or(bytes.len(), |at| at + 1);
    Ok(bytes[first..].to_vec())
}

/// Each whole line of the record at `path` as [`witness_since`] reads it from `from`
/// (a last line without a line feed is left until it is whole); none when it does not
/// exist yet. What a store reads to witness a hand-over.
pub fn each_whole_line(
    path: &Path,
    from: ReadFrom<'_>,
    mut take: impl FnMut(&[u8]),
) -> std::io::Result<()> {
    let bytes = witness_since(path, from)?;
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
    let mut file = open_record(path)?;
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
                // chunk starts where the head's lines ended. The chunk ends with the line
                // feed before `parsed_from`: only one before that ends that piece (else
                // a line longer than the step would be read as empty, forever).
                let skip = if start == head_end {
                    0
                } else {
                    let before_last = &chunk[..chunk.len().saturating_sub(1)];
                    match before_last.iter().position(|&b| b == b'\n') {
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
    use std::path::PathBuf;

    #[test]
    fn lines_say_which_are_whole() {
        let all: Vec<_> = lines(b"a\nb\nc").collect();
        assert_eq!(
            all,
            [(&b"a"[..], true), (&b"b"[..], true), (&b"c"[..], false)]
        );
    }

    /// `read(path)` ends within 10 s, or the test fails (a FIFO read would wait forever).
    fn ends<T: Send + 'static>(
        read: fn(&Path) -> std::io::Result<T>,
        path: &Path,
    ) -> std::io::Result<T> {
        let (done, finished) = std::sync::mpsc::channel();
        let path = path.to_path_buf();
        std::thread::spawn(move || done.send(read(&path)));
        (finished.recv_timeout(std::time::Duration::from_secs(10))).expect("the read ended")
    }

    #[test]
    fn a_device_or_a_fifo_named_as_the_record_is_an_error_at_once() {
        let fifo = host_shim_testkit::scratch("logfile", "fifo").join("record");
        let name = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid C string; mkfifo only makes the file.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        // What a hook's witness reads and what a listing opens records with, alike (a
        // FIFO would block a plain open); each harness's witness tries its own reader.
        for path in [PathBuf::from("/dev/zero"), fifo.clone()] {
            let err = ends(|path| witness_since(path, ReadFrom::End), &path).unwrap_err();
            assert!(err.to_string().contains("not a regular file"), "{err}");
            let err = ends(|path| open_record(path).map(drop), &path).unwrap_err();
            assert!(err.to_string().contains("not a regular file"), "{err}");
        }
        std::fs::remove_file(&fifo).unwrap();
    }

    #[test]
    fn a_huge_record_is_read_at_its_end_only() {
        use std::io::Write;
        let path = host_shim_testkit::scratch("logfile", "huge").join("record");
        let mut file = std::fs::File::create(&path).unwrap();
        // 200 MiB of earlier lines (a sparse file), then the last lines.
        file.write_all(b"{\"early\": 1}\n").unwrap();
        file.set_len(200 << 20).unwrap();
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        file.write_all(b"\n{\"last\": 1}\n{\"half\": ").unwrap();
        let tail = witness_since(&path, ReadFrom::End).unwrap();
        assert!(tail.len() as u64 <= WITNESS_BYTES, "{}", tail.len());
        let mut whole = Vec::new();
        each_whole_line(&path, ReadFrom::End, |line| whole.push(line.to_vec())).unwrap();
        assert_eq!(whole.last().map(Vec::as_slice), Some(&b"{\"last\": 1}"[..]));
        assert!(!whole.iter().any(|line| line.starts_with(b"{\"early")));
        // From where it stood at an offer: only what was appended since.
        crate::inbox::record_marks::mark(&path, &["m-000000000001"]);
        file.write_all(b"1}\n{\"frame\": 1}\n").unwrap();
        let offers = ["m-000000000001".to_string()];
        let since = witness_since(&path, ReadFrom::Offers(&offers)).unwrap();
        assert_eq!(since, b"{\"frame\": 1}\n");
        let marks = crate::inbox::record_marks::marks_file(&path).unwrap();
        std::fs::remove_file(marks).unwrap();
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn a_line_that_starts_where_the_record_stood_is_read_whole() {
        let path = host_shim_testkit::scratch("logfile", "from").join("record");
        std::fs::write(&path, "{\"a\": 1}\n{\"b\": 2}\n").unwrap();
        let read = |from| {
            let (mut file, meta) = crate::os::open_regular(&path, u64::MAX).unwrap();
            let bytes = witnessed(&mut file, meta.len(), from).unwrap();
            (lines(&bytes).filter(|(_, whole)| *whole))
                .map(|(line, _)| line.to_vec())
                .collect::<Vec<_>>()
        };
        assert_eq!(read(9), [b"{\"b\": 2}".to_vec()]);
        // Inside a line: that line began before, and is not read.
        assert_eq!(read(4), [b"{\"b\": 2}".to_vec()]);
        assert_eq!(read(0).len(), 2);
        // Past the end (a file cut since): read as the end.
        assert_eq!(read(1000), Vec::<Vec<u8>>::new());
        std::fs::remove_file(&path).unwrap();
    }

    /// Facts that are the latest once a line says `LATEST`.
    #[derive(Default)]
    struct Latest {
        seen: bool,
        lines: usize,
    }

    impl LineFacts for Latest {
        fn take_line(&mut self, line: &[u8]) {
            self.seen |= line.starts_with(b"LATEST");
            self.lines += 1;
        }
        fn then(self, later: Self) -> Self {
            Latest {
                seen: self.seen || later.seen,
                lines: self.lines + later.lines,
            }
        }
        fn has_latest(&self) -> bool {
            self.seen
        }
    }

    #[test]
    fn a_line_longer_than_the_tail_step_is_stepped_over_to_the_latest_facts() {
        // What a Copilot stream holds after a 1 MB tool call: lines far longer than a
        // step back, then short ones; the latest facts lie above them.
        let path = host_shim_testkit::scratch("logfile", "long-line").join("record");
        let mut text = "head\n".repeat(20_000);
        text.push_str("LATEST\n");
        for _ in 0..3 {
            text.push_str(&"x".repeat(1_000_000));
            text.push('\n');
        }
        text.push_str(&"short\n".repeat(10));
        std::fs::write(&path, &text).unwrap();
        let stamp = Stamp::of(&path).unwrap();
        let (done, finished) = std::sync::mpsc::channel();
        let read = path.clone();
        std::thread::spawn(move || done.send(index::<Latest>(&read, stamp, None).unwrap()));
        let (windowed, bytes) =
            (finished.recv_timeout(std::time::Duration::from_secs(20))).expect("the index ends");
        assert!(windowed.facts.seen);
        assert!(bytes < 2 * text.len() as u64, "{bytes}");
        std::fs::remove_file(&path).unwrap();
    }
}
