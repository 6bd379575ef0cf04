//! Claude Code's own registry of running sessions: `~/.claude/sessions/<pid>.json`,
//! written by every Claude Code 2.1.328 process (interactive or `claude -p`) while it
//! runs and removed when it ends: `{"pid", "sessionId", "procStart", "status", …}`. A
//! session listed there runs now, whether or not a server of ours serves it.
//!
//! Each record also names the session's messaging socket (`messagingSocketPath`) and
//! whether it is idle (`status`); beside it Claude Code keeps, for this user's other
//! sessions, the token that socket takes from a peer (`<pid>.<sha256 of the socket
//! path>.key`, mode 0600: `{"peerToken": …}`). [`SessionRegistry::peer`] reads both, so
//! the host can hand a message to a running session that has no server of ours, as
//! another of this user's Claude sessions would.
//!
//! Trust model: the folder is Claude Code's, read only and only when this user owns it
//! and nobody else can write it; records and key files are bounded JSON data read
//! without following symlinks; a record counts only while its process runs with the
//! start time it recorded (`procStart`, Linux's `/proc/<pid>/stat` field 22), so a
//! stale file or a reused pid reads as gone. A key file is read only by the name
//! derived from its own record's pid and socket, a token only when it is Claude Code's
//! 32 hex digits, and a token is used only on that record's socket, never logged or
//! written. Nothing in a record selects a command.

use host_shim::os::same_process;
use serde::Deserialize;
use std::collections::HashSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

/// The largest record read.
const MAX_RECORD_BYTES: u64 = 64 << 10;

/// The registry folder (`~/.claude/sessions`).
#[derive(Clone, Debug)]
pub struct SessionRegistry {
    dir: PathBuf,
    /// The records as last read, by the folder's modification time: a session's file
    /// comes and goes with its process (which changes the folder's time); what a record
    /// says of its process (pid, session, start) never changes while it runs, so only
    /// whether each process still runs is looked at again.
    read: Arc<Mutex<Option<RecordsRead>>>,
}

/// The records of one read of the folder, and the folder's time then.
type RecordsRead = (SystemTime, Vec<Record>);

#[derive(Clone, Debug, Deserialize)]
struct Record {
    pid: u32,
    #[serde(rename = "sessionId")]
    session_id: String,
    /// Claude Code writes the start as a string of digits.
    #[serde(rename = "procStart", default, deserialize_with = "digits")]
    proc_start: Option<u64>,
    /// The session's messaging socket (interactive sessions).
    #[serde(rename = "messagingSocketPath", default)]
    socket: Option<String>,
    /// `idle` between turns.
    #[serde(default)]
    status: Option<String>,
    /// `interactive` for a session a person runs (a `claude -p` ends after its prompt:
    /// a message handed to it then could be lost).
    #[serde(default)]
    kind: Option<String>,
}

/// How this user's other sessions reach a running session (see [`SessionRegistry::peer`]).
#[derive(Debug)]
pub struct Peer {
    pub socket: super::idle::MessagingSocket,
    /// Between turns, as its record says now.
    pub idle: bool,
}

impl SessionRegistry {
    /// The registry beside a projects folder (`~/.claude/projects` → `~/.claude/sessions`).
    pub fn beside(projects: &Path) -> Option<SessionRegistry> {
        Some(SessionRegistry::at(&projects.parent()?.join("sessions")))
    }

    pub fn at(dir: &Path) -> SessionRegistry {
        SessionRegistry {
            dir: dir.to_path_buf(),
            read: Arc::default(),
        }
    }

    /// The sessions a running Claude Code process has registered (none when the folder
    /// is missing or not this user's alone).
    pub fn live_sessions(&self) -> HashSet<String> {
        let Ok(meta) = std::fs::symlink_metadata(&self.dir) else {
            return HashSet::new();
        };
        let trusted = meta.is_dir()
            && meta.uid() == host_shim::os::effective_uid()
            && meta.mode() & 0o022 == 0;
        let Some(modified) = meta.modified().ok().filter(|_| trusted) else {
            return HashSet::new();
        };
        let mut read = self.read.lock().unwrap_or_else(PoisonError::into_inner);
        if read.as_ref().is_none_or(|(at, _)| *at != modified) {
            *read = Some((modified, self.records()));
        }
        let records = read
            .as_ref()
            .map(|(_, records)| records.as_slice())
            .unwrap_or_default();
        (records.iter())
            .filter(|r| r.proc_start.is_some() && same_process(r.pid, r.proc_start))
            .map(|r| r.session_id.clone())
            .collect()
    }

    /// How to reach `session` as a peer does: its socket with the peer token Claude Code
    /// keeps for it, and whether it is idle, read afresh from its record; `None` when it
    /// does not run, lists no socket, or its key file is missing or not what Claude
    /// Code writes.
    pub fn peer(&self, session: &str) -> Option<Peer> {
        if !self.live_sessions().contains(session) {
            return None;
        }
        let pid = {
            let read = self.read.lock().unwrap_or_else(PoisonError::into_inner);
            let records = read.as_ref().map(|(_, records)| records.as_slice())?;
            records.iter().find(|r| r.session_id == session)?.pid
        };
        let bytes =
            host_shim::os::read_regular(&self.dir.join(format!("{pid}.json")), MAX_RECORD_BYTES)
                .ok()?;
        let record: Record = host_shim::json::from_slice(&bytes).ok()?;
        if record.session_id != session || record.pid != pid {
            return None;
        }
        if record.kind.as_deref() != Some("interactive") {
            return None;
        }
        let socket = record.socket.filter(|path| Path::new(path).is_absolute())?;
        use sha2::Digest;
        let key_name = format!("{pid}.{:x}.key", sha2::Sha256::digest(socket.as_bytes()));
        let key = host_shim::os::read_regular(&self.dir.join(key_name), MAX_RECORD_BYTES).ok()?;
        let key: serde_json::Value = host_shim::json::from_slice(&key).ok()?;
        let token = key["peerToken"]
            .as_str()
            .filter(|token| token.len() == 32 && token.bytes().all(|b| b.is_ascii_hexdigit()))?;
        Some(Peer {
            socket: super::idle::MessagingSocket::new(PathBuf::from(socket), token.to_string()),
            idle: record.status.as_deref() == Some("idle"),
        })
    }

    /// Every record whose file is named after its pid, read once.
    fn records(&self) -> Vec<Record> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut records = Vec::new();
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(pid) = (name.to_str())
                .and_then(|n| n.strip_suffix(".json"))
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            let Ok(bytes) = host_shim::os::read_regular(&entry.path(), MAX_RECORD_BYTES) else {
                continue;
            };
            if let Ok(record) = host_shim::json::from_slice::<Record>(&bytes)
                && record.pid == pid
            {
                records.push(record);
            }
        }
        records
    }
}

fn digits<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<u64>, D::Error> {
    let text = Option::<String>::deserialize(deserializer)?;
    Ok(text.and_then(|t| t.parse().ok()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_running_process_registered_by_claude_code_is_live_and_a_stale_file_is_not() {
        let dir = host_shim_testkit::scratch("registry", "live");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        let pid = std::process::id();
        let Some(started) = host_shim::os::process_start(pid) else {
            return; // no /proc: nothing to check against
        };
        let record = |session: &str, pid: u32, started: u64| {
            format!(
                r#"{{"pid":{pid},"sessionId":"{session}","procStart":"{started}","status":"idle","kind":"interactive"}}"#
            )
        };
        std::fs::write(
            dir.join(format!("{pid}.json")),
            record("running", pid, started),
        )
        .unwrap();
        // A pid reused by another process, and a process long gone.
        std::fs::write(dir.join("1.json"), record("reused", 1, 12345)).unwrap();
        std::fs::write(dir.join("999999999.json"), record("gone", 999_999_999, 1)).unwrap();
        // A name that is not the record's pid, and a token file, are not read as sessions.
        std::fs::write(dir.join("2.json"), record("misnamed", pid, started)).unwrap();
        std::fs::write(dir.join(format!("{pid}.abc.key")), r#"{"peerToken":"t"}"#).unwrap();
        let registry = SessionRegistry::at(&dir);
        assert_eq!(
            registry.live_sessions(),
            HashSet::from(["running".to_string()])
        );
        // A folder others can write is not believed.
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(registry.live_sessions().is_empty());
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_running_session_is_reached_through_its_socket_with_its_peer_token() {
        use std::io::BufRead;
        let dir = host_shim_testkit::scratch("registry", "peer");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        let pid = std::process::id();
        let Some(started) = host_shim::os::process_start(pid) else {
            return;
        };
        let socket = dir.join("peer.sock");
        let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        let record = |status: &str, kind: &str| {
            serde_json::json!({"pid": pid, "sessionId": "s1", "procStart": started.to_string(),
                "status": status, "kind": kind, "messagingSocketPath": socket})
            .to_string()
        };
        std::fs::write(
            dir.join(format!("{pid}.json")),
            record("idle", "interactive"),
        )
        .unwrap();
        let registry = SessionRegistry::at(&dir);
        assert!(registry.peer("s1").is_none(), "no key file yet");
        use sha2::Digest;
        let key = dir.join(format!(
            "{pid}.{:x}.key",
            sha2::Sha256::digest(socket.to_string_lossy().as_bytes())
        ));
        std::fs::write(&key, r#"{"peerToken":"not a token"}"#).unwrap();
        assert!(registry.peer("s1").is_none(), "not Claude Code's token");
        let token = "0123456789abcdef0123456789abcdef";
        std::fs::write(&key, format!(r#"{{"peerToken":"{token}"}}"#)).unwrap();
        let peer = registry.peer("s1").unwrap();
        assert!(peer.idle);
        assert!(registry.peer("s2").is_none(), "not running");
        peer.socket.send("a framed message").unwrap();
        let (stream, _) = listener.accept().unwrap();
        let lines: Vec<String> = std::io::BufReader::new(stream)
            .lines()
            .map(Result::unwrap)
            .collect();
        assert_eq!(lines[0], format!(r#"{{"token":"{token}","type":"auth"}}"#));
        assert!(lines[1].contains("a framed message"));
        // At work, it says so; a `claude -p` is not handed anything.
        std::fs::write(
            dir.join(format!("{pid}.json")),
            record("busy", "interactive"),
        )
        .unwrap();
        assert!(!registry.peer("s1").unwrap().idle);
        std::fs::write(dir.join(format!("{pid}.json")), record("idle", "print")).unwrap();
        assert!(registry.peer("s1").is_none());
        let _ = std::fs::remove_dir_all(dir);
    }
}
