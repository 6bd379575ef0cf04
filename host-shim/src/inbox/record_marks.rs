//! Where a session's record stood when messages were offered to it, so that the hook
//! that settles those offers reads only what the harness appended since, not the
//! record's end again at every hook while an offer waits.
//!
//! Before a hand-over answers with messages, [`mark`] notes the record's length and
//! file identity (device, inode, birth time) with the messages' ids. A frame the harness writes for
//! them lies past that length: it writes its record by appending, and only once it has
//! the answer. [`from`] gives the least length noted for the offers being settled, or
//! 0 when any of them has no mark (the reader then reads the record's end, bounded as
//! before: [`crate::harnesses::logfile::WITNESS_BYTES`]).
//!
//! Trust model: the marks are a cache of this user's alone, one small file per record
//! in `$TMPDIR/session-tools-marks-<uid>` (`0700`, checked like the state folder; files
//! `0600`), named by a hash of the record's path (nothing a record or a message says
//! chooses a path). A mark is believed only for the same file (device, inode and birth
//! time: a file system that cannot tell a file's birth gets no marks) and no
//! further than the record's length now; a mark that is lost, damaged or does not fit
//! reads as none, which costs one bounded read of the record's end, never a hand-over
//! missed. Each file keeps its newest marks only (about 64 KiB of them), and a file not
//! written for [`MARKS_KEPT`] is removed as another record's first marks are noted (its
//! offers long settled, or settled by reading the record's end).

use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// How long a record's marks are kept unwritten before they go.
pub const MARKS_KEPT: std::time::Duration = std::time::Duration::from_secs(30 * 24 * 3600);

/// A marks file past this size is cut to its newer half at the next mark (a mark lost
/// so reads as none).
const KEPT_BYTES: u64 = 64 << 10;

/// Notes that `ids` are about to be offered to the session whose record is the file at
/// `record`. Quietly does nothing when it cannot (the settling then reads the end).
pub fn mark(record: &Path, ids: &[&str]) {
    let Ok((_, meta)) = crate::os::open_regular(record, u64::MAX) else {
        return;
    };
    let (Some(file), Some(path)) = (identity(&meta), marks_file(record)) else {
        return;
    };
    let len = meta.len();
    let lines: String = (ids.iter())
        .filter(|id| is_plain(id))
        .map(|id| format!("{file} {len} {id}\n"))
        .collect();
    if lines.is_empty() {
        return;
    }
    match std::fs::metadata(&path) {
        Ok(meta) if meta.len() > KEPT_BYTES => keep_newer_half(&path),
        Ok(_) => {}
        // A record's first marks: those of records long quiet go.
        Err(_) => crate::os::remove_older_than(&folder(), MARKS_KEPT, |_| true),
    }
    let appended = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&path)
        .and_then(|mut marks| marks.write_all(lines.as_bytes()));
    if let Err(err) = appended {
        eprintln!(
            "host-shim: cannot note where {} stood ({err})",
            record.display()
        );
    }
}

/// Where to read the file at `record`, opened with `meta`, from to see every frame of
/// the offers `ids`: the least length noted for them, or 0 when any has no mark that
/// fits that file.
pub fn from(record: &Path, meta: &std::fs::Metadata, ids: &[String]) -> u64 {
    let (Some(file), Some(path)) = (identity(meta), marks_file(record)) else {
        return 0;
    };
    let now = meta.len();
    let Ok(bytes) = crate::os::read_regular(&path, 2 * KEPT_BYTES) else {
        return 0;
    };
    let text = String::from_utf8_lossy(&bytes);
    let noted = |id: &str| {
        (text.lines())
            .filter_map(|line| {
                let mut words = line.split(' ');
                let (same, len) = (words.next()? == file, words.next()?);
                let ours = same && words.next() == Some(id) && words.next().is_none();
                ours.then(|| len.parse::<u64>().ok()).flatten()
            })
            .min()
    };
    let mut least = u64::MAX;
    for id in ids {
        match noted(id) {
            Some(len) => least = least.min(len),
            None => return 0,
        }
    }
    match least {
        u64::MAX => 0,
        len if len > now => 0,
        len => len,
    }
}

/// Which file `meta` is of (device, inode and birth time: an inode freed and used
/// again is another file); none when it cannot be told.
fn identity(meta: &std::fs::Metadata) -> Option<String> {
    let born = meta
        .created()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?;
    Some(format!("{}:{}:{}", meta.dev(), meta.ino(), born.as_nanos()))
}

/// The folder of the marks (`$TMPDIR/session-tools-marks-<uid>`; `host-shim
/// remove-state` removes it with the rest of the tools' own files).
pub fn folder() -> PathBuf {
    std::env::temp_dir().join(format!(
        "session-tools-marks-{}",
        crate::os::effective_uid()
    ))
}

/// The marks file of the record at `record`, its folder made (this user's alone).
pub(crate) fn marks_file(record: &Path) -> Option<PathBuf> {
    let folder = folder();
    crate::os::trusted_dir(&folder).ok()?;
    Some(folder.join(format!(
        "{:016x}",
        fnv1a(record.as_os_str().as_encoded_bytes())
    )))
}

/// An id as a frame carries one: letters, digits and `-`, and short.
fn is_plain(id: &str) -> bool {
    !id.is_empty() && id.len() <= 64 && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

/// Rewrites the marks file with its newer half (whole lines).
fn keep_newer_half(path: &Path) {
    let Ok(bytes) = crate::os::read_regular(path, 2 * KEPT_BYTES) else {
        let _ = std::fs::remove_file(path);
        return;
    };
    let half = &bytes[bytes.len() / 2..];
    let newer = half
        .iter()
        .position(|&b| b == b'\n')
        .map_or(&[][..], |at| &half[at + 1..]);
    let fresh = path.with_extension(format!("{}", std::process::id()));
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&fresh)
        .and_then(|mut file| file.write_all(newer))
        .and_then(|()| std::fs::rename(&fresh, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&fresh);
    }
}

/// FNV-1a, 64 bits: a name for a path that stays the same from build to build.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record's path in a folder of the test's own (`test`), made anew.
    fn record(test: &str, name: &str) -> PathBuf {
        host_shim_testkit::scratch("marks", test).join(name)
    }

    #[test]
    fn the_least_length_noted_for_the_offers_and_none_when_one_lacks_a_mark() {
        let path = record("least", "a.jsonl");
        std::fs::write(&path, "one\n").unwrap();
        mark(&path, &["m-000000000001"]);
        std::fs::write(&path, "one\ntwo\n").unwrap();
        mark(&path, &["m-000000000002", "m-000000000003"]);
        let ids = |ids: &[&str]| ids.iter().map(|id| id.to_string()).collect::<Vec<_>>();
        assert_eq!(from_now(&path, &ids(&["m-000000000002"])), 8);
        assert_eq!(
            from_now(&path, &ids(&["m-000000000003", "m-000000000001"])),
            4
        );
        // Offered again later: the first mark still counts.
        mark(&path, &["m-000000000001"]);
        assert_eq!(from_now(&path, &ids(&["m-000000000001"])), 4);
        // An offer with no mark (made elsewhere): read the end.
        assert_eq!(
            from_now(&path, &ids(&["m-000000000002", "m-00000000dead"])),
            0
        );
        // Another file at the same path (a new inode), or one shorter than noted.
        std::fs::remove_file(&path).unwrap();
        std::fs::write(&path, "one\ntwo\n").unwrap();
        assert_eq!(from_now(&path, &ids(&["m-000000000002"])), 0);
        mark(&path, &["m-000000000004"]);
        let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        file.set_len(2).unwrap();
        assert_eq!(from_now(&path, &ids(&["m-000000000004"])), 0);
        // No record: nothing noted. Ids not ours: nothing noted, nothing believed.
        let none = path.with_file_name("none.jsonl");
        mark(&none, &["m-000000000001"]);
        assert!(!marks_file(&none).unwrap().exists());
        mark(&path, &["../../etc", "has space"]);
        assert_eq!(from_now(&path, &ids(&["has space"])), 0);
        cleaned(&path);
    }

    #[test]
    fn a_full_marks_file_keeps_its_newer_marks() {
        let path = record("full", "b.jsonl");
        std::fs::write(&path, "x\n").unwrap();
        for i in 0..3000 {
            mark(&path, &[&format!("m-{i:012}")]);
        }
        let marks = marks_file(&path).unwrap();
        assert!(std::fs::metadata(&marks).unwrap().len() <= 2 * KEPT_BYTES);
        let newest = vec![format!("m-{:012}", 2999)];
        assert_eq!(from_now(&path, &newest), 2);
        assert_eq!(from_now(&path, &[format!("m-{:012}", 0)]), 0);
        cleaned(&path);
    }

    #[test]
    fn a_records_first_marks_remove_the_marks_of_records_long_quiet() {
        let quiet = record("quiet", "old.jsonl");
        std::fs::write(&quiet, "x\n").unwrap();
        mark(&quiet, &["m-000000000001"]);
        let old = marks_file(&quiet).unwrap();
        let long_ago = std::time::SystemTime::now() - MARKS_KEPT - MARKS_KEPT / 30;
        std::fs::File::options()
            .write(true)
            .open(&old)
            .unwrap()
            .set_modified(long_ago)
            .unwrap();
        let busy = quiet.with_file_name("new.jsonl");
        std::fs::write(&busy, "y\n").unwrap();
        mark(&busy, &["m-000000000002"]);
        assert!(!old.exists(), "the quiet record's marks went");
        assert_eq!(from_now(&busy, &["m-000000000002".to_string()]), 2);
        // Marks written since are kept, and read.
        mark(&quiet, &["m-000000000003"]);
        mark(&busy, &["m-000000000004"]);
        assert_eq!(from_now(&quiet, &["m-000000000003".to_string()]), 2);
        cleaned(&busy);
        let _ = std::fs::remove_file(marks_file(&quiet).unwrap());
    }

    /// What [`from`] says of the record at `path`, opened now.
    fn from_now(path: &Path, ids: &[String]) -> u64 {
        from(path, &std::fs::metadata(path).unwrap(), ids)
    }

    /// Removes the test's record, its folder and its marks.
    fn cleaned(path: &Path) {
        let _ = std::fs::remove_file(marks_file(path).unwrap());
        std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
    }
}
