//! Handing messages to a Codex thread through the Codex app-server daemon, when one
//! runs (`codex app-server daemon start`): the one way the real Codex 0.169.0 takes a
//! message into an idle thread at once, with no hook and no person at the keyboard.
//!
//! The daemon listens on `CODEX_HOME/app-server-control/app-server-control.sock`,
//! JSON-RPC 2.0 (without the `"jsonrpc"` member), one message per WebSocket text
//! frame. This client says `initialize` and `initialized`, then uses three requests:
//! `thread/read` (the thread's status: `notLoaded`, `idle`, `active`, `systemError`),
//! `thread/resume` (the daemon loads a thread no process holds) and `turn/start` (a new
//! turn on an idle thread with the text as the person's message; on an active thread
//! the same request steers the text into the running turn, as the real daemon showed).
//! The answer to `turn/start` names the turn the text is in: that is when the message
//! counts as handed over.
//!
//! Trust model. The socket is the daemon of the user's own `CODEX_HOME` (Codex makes
//! it a symlink to a short path in a private folder under the temporary folder); it
//! is spoken to only when this user owns the link, the socket and that folder, and
//! nobody else can write the folder ([`host_shim::os::own_socket`]): otherwise a
//! message could go to someone else's process. Nothing the daemon answers is run or
//! opened: answers are parsed as JSON, at most [`MAX_MESSAGE_BYTES`] each, and the
//! whole exchange has a time budget (the caller's: the CLI gives it half a call's
//! deadline), every read and write giving up when it is spent, so a wedged daemon
//! costs a send that long and no more, and never makes the call miss its deadline.
//! Requests the daemon makes of this client (approvals) are answered with an error:
//! this client starts turns and leaves at once.
//!
//! Reach: the daemon holds the threads it resumed and those of an interactive
//! `codex --remote unix://`; a plain `codex` runs an app server of its own, with no
//! socket, and its threads get messages from the hooks.

use super::websocket::WebSocket;
use anyhow::{Context, Result, anyhow, bail};
use serde_json::{Value, json};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The largest message read from the daemon (its own limit is 16 MiB; the answers
/// read here are a thread's summary, without its turns).
pub const MAX_MESSAGE_BYTES: usize = 4 << 20;

/// Where the daemon of `codex_home` listens.
pub fn socket_path(codex_home: &Path) -> PathBuf {
    codex_home
        .join("app-server-control")
        .join("app-server-control.sock")
}

/// A thread's status as the daemon reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ThreadStatus {
    /// No process of the daemon holds the thread.
    NotLoaded,
    /// The daemon holds it and no turn runs.
    Idle,
    /// A turn runs.
    Active,
    /// Anything else (`systemError`, or a status a later Codex adds).
    Other(String),
}

/// A connection to the daemon, initialised.
pub struct AppServer {
    socket: WebSocket<UnixStream>,
    next_id: u64,
    /// When the exchange's time is spent.
    until: Instant,
}

impl AppServer {
    /// Connects to the daemon of `codex_home`: `Ok(None)` when none listens there.
    /// Everything said over this connection must end within `budget`.
    pub fn connect(codex_home: &Path, budget: Duration) -> Result<Option<AppServer>> {
        let until = Instant::now() + budget;
        let path = socket_path(codex_home);
        let socket = match host_shim::os::own_socket(&path) {
            Ok(Some(socket)) => socket,
            Ok(None) => return Ok(None),
            Err(why) => bail!("the Codex app-server daemon was not spoken to: {why}"),
        };
        let stream = match UnixStream::connect(&socket) {
            Ok(stream) => stream,
            // A socket a stopped daemon left behind.
            Err(err) if err.kind() == std::io::ErrorKind::ConnectionRefused => return Ok(None),
            Err(err) => return Err(err).context(format!("cannot connect to {}", socket.display())),
        };
        time_left(&stream, until)?;
        let socket = WebSocket::upgrade(stream, "localhost", MAX_MESSAGE_BYTES)
            .context("the Codex app-server daemon's socket did not speak WebSocket")?;
        let mut server = AppServer {
            socket,
            next_id: 1,
            until,
        };
        server.request(
            "initialize",
            json!({"clientInfo": {"name": "host-shim", "version": env!("CARGO_PKG_VERSION")}}),
        )?;
        server.notify("initialized")?;
        Ok(Some(server))
    }

    /// The thread's status (its turns are not read).
    pub fn thread_status(&mut self, thread: &str) -> Result<ThreadStatus> {
        let answer = self.request(
            "thread/read",
            json!({"threadId": thread, "includeTurns": false}),
        )?;
        let status = answer
            .pointer("/thread/status/type")
            .and_then(Value::as_str)
            .ok_or_else(|| anyhow!("thread/read answered without a thread status"))?;
        Ok(match status {
            "notLoaded" => ThreadStatus::NotLoaded,
            "idle" => ThreadStatus::Idle,
            "active" => ThreadStatus::Active,
            other => ThreadStatus::Other(other.to_string()),
        })
    }

    /// Has the daemon load a thread no process holds (its turns are not sent back).
    pub fn resume(&mut self, thread: &str) -> Result<()> {
        self.request(
            "thread/resume",
            json!({"threadId": thread, "excludeTurns": true}),
        )?;
        Ok(())
    }

    /// Gives `text` to the thread as the person's message: a new turn when it is idle,
    /// steered into the running turn when one runs. Returns the turn's id.
    pub fn start_turn(&mut self, thread: &str, text: &str) -> Result<String> {
        let answer = self.request(
            "turn/start",
            json!({"threadId": thread, "input": [{"type": "text", "text": text, "text_elements": []}]}),
        )?;
        answer
            .pointer("/turn/id")
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| anyhow!("turn/start answered without a turn id"))
    }

    /// Says goodbye.
    pub fn close(self) {
        self.socket.close();
    }

    fn notify(&mut self, method: &str) -> Result<()> {
        time_left(self.socket.stream(), self.until)?;
        self.socket
            .send_text(&json!({"method": method}).to_string())
    }

    /// Sends a request and waits for its answer, reading past notifications.
    fn request(&mut self, method: &str, params: Value) -> Result<Value> {
        let id = self.next_id;
        self.next_id += 1;
        let request = json!({"id": id, "method": method, "params": params});
        time_left(self.socket.stream(), self.until)?;
        self.socket.send_text(&request.to_string())?;
        loop {
            time_left(self.socket.stream(), self.until).with_context(|| {
                format!("no answer to {method} from the Codex app-server daemon")
            })?;
            let text = self.socket.read_text().with_context(|| {
                format!("no answer to {method} from the Codex app-server daemon")
            })?;
            let message: Value = host_shim::json::from_str(&text)
                .with_context(|| format!("the Codex app-server daemon sent a message that is not JSON while answering {method}"))?;
            match (message.get("id"), message.get("method")) {
                (Some(got), None) if got.as_u64() == Some(id) => {
                    if let Some(error) = message.get("error") {
                        let said = error.get("message").and_then(Value::as_str).unwrap_or("");
                        bail!("the Codex app-server daemon refused {method}: {said}");
                    }
                    return Ok(message.get("result").cloned().unwrap_or(Value::Null));
                }
                // A request of the daemon's own: this client serves none.
                (Some(their_id), Some(_)) => {
                    let refusal = json!({
                        "id": their_id,
                        "error": {"code": -32601, "message": "host-shim only starts turns"}
                    });
                    self.socket.send_text(&refusal.to_string())?;
                }
                _ => {} // a notification, or an answer to nothing this client asked
            }
        }
    }
}

/// Sets the stream's timeouts to the time left; an error when none is.
fn time_left(stream: &UnixStream, until: Instant) -> Result<()> {
    let left = until.saturating_duration_since(Instant::now());
    if left.is_zero() {
        bail!("the time for the Codex app-server daemon is spent");
    }
    stream.set_read_timeout(Some(left))?;
    stream.set_write_timeout(Some(left))?;
    Ok(())
}
