//! Waking an open, idle Claude Code session without a person: through Claude Code's
//! own messaging socket.
//!
//! Claude Code 2.1.328 gives each interactive session a Unix socket for messages
//! from other sessions, and hands its path and a token to the session's MCP servers
//! (`CLAUDE_CODE_MESSAGING_SOCKET`, `CLAUDE_CODE_MESSAGING_TOKEN`). A client writes an
//! auth line, then one line per user message; the session runs a turn with it, shown
//! to its model as "Another Claude session sent a message:" followed by the text and
//! Claude Code's note that a peer sent it. `host-shim mcp`, serving that session,
//! watches the session's inbox and, while the session is idle (its last hook was a
//! `Stop` that handed nothing over), hands waiting messages over through the socket.
//! A session at work gets them from its hooks as before.
//!
//! Trust model: the token is this process's own (from its environment), used only on
//! the path Claude Code gave in the same environment, and never written anywhere. A
//! message is offered only once the socket took all of it (the spool's claim, answer,
//! mark), so a socket that fails leaves it waiting for the next hook; it is handed over
//! once the session's transcript shows it, as a hook's hand-over is.

use super::hook::ANSWER_CHARS;
use anyhow::{Context, Result};
use host_shim::inbox::{SharedInbox, Shown, Takes, Witness, hand_over_waiting};
use host_shim::presence::Presence;
use std::io::Write;
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// How often the inbox of an idle session is looked at.
pub const WATCH_EVERY: Duration = Duration::from_millis(500);

/// A session's messaging socket, as Claude Code handed it to this process.
#[derive(Clone)]
pub struct MessagingSocket {
    path: PathBuf,
    token: String,
}

impl std::fmt::Debug for MessagingSocket {
    // The token stays out of logs.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MessagingSocket")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl MessagingSocket {
    /// A socket and the token it takes.
    pub fn new(path: PathBuf, token: String) -> MessagingSocket {
        MessagingSocket { path, token }
    }

    /// The socket of an interactive session, from this process's environment; `None`
    /// without one, and for `claude -p` (`CLAUDE_CODE_ENTRYPOINT` other than `cli`),
    /// which ends after its prompt: a message handed to it there could be lost.
    pub fn from_env() -> Option<MessagingSocket> {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        if var("CLAUDE_CODE_ENTRYPOINT").as_deref() != Some("cli") {
            return None;
        }
        Some(MessagingSocket {
            path: PathBuf::from(var("CLAUDE_CODE_MESSAGING_SOCKET")?),
            token: var("CLAUDE_CODE_MESSAGING_TOKEN")?,
        })
    }

    /// Sends `text` as one user message.
    pub fn send(&self, text: &str) -> Result<()> {
        let mut stream = UnixStream::connect(&self.path)
            .with_context(|| format!("cannot connect to {}", self.path.display()))?;
        stream.set_write_timeout(Some(Duration::from_secs(5)))?;
        let auth = serde_json::json!({"type": "auth", "token": self.token});
        let message =
            serde_json::json!({"type": "user", "message": {"role": "user", "content": text}});
        stream
            .write_all(format!("{auth}\n{message}\n").as_bytes())
            .and_then(|()| stream.flush())
            .and_then(|()| stream.shutdown(std::net::Shutdown::Write))
            .with_context(|| format!("cannot write to {}", self.path.display()))
    }
}

/// Offers what waits for `session` through `socket` if the session is idle and its
/// person does not hold inbound, after settling earlier offers against the session's
/// transcript (`record` reads what it shows); the messages offered.
pub fn hand_over_if_idle(
    inbox: &SharedInbox,
    presence: &dyn Presence,
    session: &str,
    socket: &MessagingSocket,
    record: &mut dyn FnMut(&[String]) -> Result<Shown>,
) -> Result<usize> {
    if !presence.is_idle(session) {
        return Ok(0);
    }
    let report = hand_over_waiting(
        &**inbox,
        session,
        Takes::All,
        ANSWER_CHARS,
        Witness::Record(Box::new(record)),
        |text| socket.send(text),
    )?;
    if !report.handed_over.is_empty() {
        // It runs a turn now; its Stop hook says when it is idle again.
        presence.set_idle(session, false)?;
    }
    Ok(report.handed_over.len())
}

/// Watches `session`'s inbox for as long as the process runs (a thread of `host-shim
/// mcp`); its transcript, looked for under `projects`, witnesses each hand-over.
pub fn watch(
    inbox: SharedInbox,
    presence: Arc<dyn Presence>,
    session: String,
    socket: MessagingSocket,
    projects: PathBuf,
) {
    // Its end (bounded): an offer through the socket notes no place in the record.
    let mut record = |_: &[String]| match super::transcript_in(&projects, &session) {
        Some(path) => super::handed_over_ids(&path, host_shim::harnesses::logfile::ReadFrom::End),
        None => Ok(Shown::new()),
    };
    loop {
        if let Err(err) = hand_over_if_idle(&inbox, &*presence, &session, &socket, &mut record) {
            eprintln!("host-shim mcp: a message for {session} waits for its next hook: {err:#}");
            std::thread::sleep(WATCH_EVERY * 10);
        }
        std::thread::sleep(WATCH_EVERY);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use host_shim::contract::latest::DeliveryMode;
    use host_shim::inbox::{MemoryInbox, SpooledMessage};
    use host_shim::presence::LocalPresence;
    use std::io::{BufRead, BufReader};
    use std::os::unix::net::UnixListener;

    fn scratch(name: &str) -> PathBuf {
        host_shim_testkit::scratch("idle-unit", name)
    }

    /// A transcript that shows nothing yet.
    fn nothing_shown(_: &[String]) -> anyhow::Result<Shown> {
        Ok(Shown::new())
    }

    /// The watcher works from the inbox trait: here over the in-memory backend.
    fn put(inbox: &SharedInbox, body: &str, mode: DeliveryMode) {
        inbox
            .put(&SpooledMessage::new("s1", mode, body, "", false))
            .unwrap();
    }

    #[test]
    fn an_idle_session_gets_what_waits_through_its_socket_once() {
        let dir = scratch("idle");
        let inbox: SharedInbox = Arc::new(MemoryInbox::new());
        let presence = LocalPresence::open(&dir.join("state")).unwrap();
        let path = dir.join("cc.sock");
        let listener = UnixListener::bind(&path).unwrap();
        let socket = MessagingSocket {
            path,
            token: "secret".into(),
        };
        put(&inbox, "one", DeliveryMode::Queue);
        put(&inbox, "two", DeliveryMode::Steer);
        // At work: nothing is handed over.
        assert_eq!(
            hand_over_if_idle(&inbox, &presence, "s1", &socket, &mut nothing_shown).unwrap(),
            0
        );
        presence.set_idle("s1", true).unwrap();
        let reader = std::thread::spawn(move || {
            let (stream, _) = listener.accept().unwrap();
            BufReader::new(stream)
                .lines()
                .map(|l| serde_json::from_str::<serde_json::Value>(&l.unwrap()).unwrap())
                .collect::<Vec<_>>()
        });
        assert_eq!(
            hand_over_if_idle(&inbox, &presence, "s1", &socket, &mut nothing_shown).unwrap(),
            2
        );
        let lines = reader.join().unwrap();
        assert_eq!(
            lines,
            [
                serde_json::json!({"type": "auth", "token": "secret"}),
                serde_json::json!({"type": "user", "message": {"role": "user", "content": "one\n\ntwo"}}),
            ]
        );
        // Given once (messages without ids, which no transcript can show, are handed over
        // with the answer); the session works now.
        assert!(inbox.waiting("s1").unwrap().messages.is_empty());
        assert!(!presence.is_idle("s1"));
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_socket_that_fails_leaves_the_messages_waiting() {
        let dir = scratch("fails");
        let inbox: SharedInbox = Arc::new(MemoryInbox::new());
        let presence = LocalPresence::open(&dir.join("state")).unwrap();
        let socket = MessagingSocket {
            path: dir.join("nobody-listens.sock"),
            token: "t".into(),
        };
        put(&inbox, "one", DeliveryMode::Queue);
        presence.set_idle("s1", true).unwrap();
        assert!(hand_over_if_idle(&inbox, &presence, "s1", &socket, &mut nothing_shown).is_err());
        assert_eq!(inbox.waiting("s1").unwrap().messages.len(), 1);
        assert!(presence.is_idle("s1"));
        let _ = std::fs::remove_dir_all(dir);
    }
}
