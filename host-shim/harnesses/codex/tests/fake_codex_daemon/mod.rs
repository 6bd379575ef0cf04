//! A stand-in for the Codex app-server daemon, for tests: it listens where the real
//! one does (a symlink in `CODEX_HOME/app-server-control/` to a socket in a private
//! folder under the temporary folder), speaks WebSocket and JSON-RPC as Codex 0.169.0
//! did to host-shim/harnesses/codex/suite/suite.py, and answers `thread/read`, `thread/resume` and
//! `turn/start` from a script, keeping every request. Before each answer it sends a
//! notification, and before a `turn/start` answer a request of its own, as the real
//! daemon may.

use serde_json::{Value, json};
use sha1::{Digest, Sha1};
use std::collections::HashMap;
use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// How the stand-in answers.
#[derive(Clone, Default)]
pub struct Script {
    /// Thread id → status type (`notLoaded` when missing).
    pub statuses: HashMap<String, String>,
    /// `turn/start` answers with an error.
    pub refuse_turns: bool,
    /// `thread/resume` answers with an error.
    pub refuse_resumes: bool,
    /// `turn/start` is answered this late.
    pub slow_turns: Option<std::time::Duration>,
    /// `turn/start` leaves the thread's rollout as it was (by default the turn's input
    /// is appended to it as a user message, as Codex records a turn it starts).
    pub unrecorded_turns: bool,
}

pub struct FakeDaemon {
    pub requests: Arc<Mutex<Vec<(String, Value)>>>,
    pub folder: PathBuf,
    socket: PathBuf,
}

impl FakeDaemon {
    /// Listens for `codex_home`'s daemon, answering as `script` says.
    pub fn start(codex_home: &Path, script: Script) -> FakeDaemon {
        static STARTED: AtomicUsize = AtomicUsize::new(0);
        let started = STARTED.fetch_add(1, Ordering::Relaxed);
        let folder = host_shim_testkit::scratch("fake-daemon", &started.to_string());
        std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o700)).unwrap();
        let socket = folder.join("s");
        let listener = UnixListener::bind(&socket).unwrap();
        let control = codex_home.join("app-server-control");
        std::fs::create_dir_all(&control).unwrap();
        let link = control.join("app-server-control.sock");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&socket, &link).unwrap();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&requests);
        let script = Arc::new(Mutex::new(script));
        let home = codex_home.to_path_buf();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                let _ = serve(stream, &home, &script, &kept);
            }
        });
        FakeDaemon {
            requests,
            folder,
            socket,
        }
    }

    /// The methods asked, in order.
    pub fn methods(&self) -> Vec<String> {
        let requests = self.requests.lock().unwrap();
        requests.iter().map(|(m, _)| m.clone()).collect()
    }

    /// The text of every `turn/start`, in order.
    pub fn turn_texts(&self) -> Vec<String> {
        let requests = self.requests.lock().unwrap();
        (requests.iter())
            .filter(|(m, _)| m == "turn/start")
            .map(|(_, p)| p["input"][0]["text"].as_str().unwrap().to_string())
            .collect()
    }
}

impl Drop for FakeDaemon {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.socket);
        let _ = std::fs::remove_dir_all(&self.folder);
    }
}

/// Appends `text` to `thread`'s rollout under `home` as the person's message, as Codex
/// records the input of a turn it starts.
fn record_turn(home: &Path, thread: &str, text: &str) {
    let mut folders = vec![home.join("sessions")];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                folders.push(path);
            } else if path.to_string_lossy().contains(thread) {
                let item = json!({"timestamp": "2026-12-05T00:00:00.000Z", "type": "response_item",
                    "payload": {"type": "message", "role": "user",
                                "content": [{"type": "input_text", "text": text}]}});
                let mut file = std::fs::OpenOptions::new()
                    .append(true)
                    .open(&path)
                    .unwrap();
                writeln!(file, "{item}").unwrap();
                return;
            }
        }
    }
}

fn serve(
    mut stream: UnixStream,
    home: &Path,
    script: &Mutex<Script>,
    requests: &Mutex<Vec<(String, Value)>>,
) -> std::io::Result<()> {
    // The upgrade.
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        let mut byte = [0u8; 1];
        if stream.read(&mut byte)? == 0 {
            return Ok(());
        }
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let key = (head.lines())
        .find_map(|l| l.strip_prefix("Sec-WebSocket-Key: "))
        .unwrap_or_default()
        .trim()
        .to_string();
    let digest = Sha1::digest(format!("{key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11"));
    let accept = base64_of(&digest);
    write!(
        stream,
        "HTTP/1.1 101 Switching Protocols\r\nconnection: Upgrade\r\nupgrade: websocket\r\nsec-websocket-accept: {accept}\r\n\r\n"
    )?;
    loop {
        let Some(message) = read_client_text(&mut stream)? else {
            return Ok(());
        };
        let message: Value = serde_json::from_str(&message).unwrap();
        let (Some(method), Some(id)) = (message["method"].as_str(), message.get("id")) else {
            continue; // a notification (`initialized`) or an answer to our request
        };
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        requests
            .lock()
            .unwrap()
            .push((method.to_string(), params.clone()));
        send(
            &mut stream,
            &json!({"method": "remoteControl/status/changed", "params": {"status": "disabled"}}),
        )?;
        let mut script = script.lock().unwrap();
        let thread = params["threadId"].as_str().unwrap_or_default().to_string();
        let answer = match method {
            "initialize" => json!({"id": id, "result": {"userAgent": "fake/0.169.0"}}),
            "thread/read" => {
                let status = (script.statuses.get(&thread).cloned())
                    .unwrap_or_else(|| "notLoaded".to_string());
                json!({"id": id, "result": {"thread": {"id": thread, "status": {"type": status}}}})
            }
            "thread/resume" if script.refuse_resumes => {
                json!({"id": id, "error": {"code": -32600, "message": "no rollout found"}})
            }
            "thread/resume" => {
                script.statuses.insert(thread.clone(), "idle".to_string());
                json!({"id": id, "result": {"thread": {"id": thread, "status": {"type": "idle"}}}})
            }
            "turn/start" if script.refuse_turns => {
                json!({"id": id, "error": {"code": -32600, "message": "thread is shutting down"}})
            }
            "turn/start" => {
                if let Some(late) = script.slow_turns {
                    std::thread::sleep(late);
                }
                if !script.unrecorded_turns {
                    let text = params["input"][0]["text"].as_str().unwrap_or_default();
                    record_turn(home, &thread, text);
                }
                send(
                    &mut stream,
                    &json!({"id": 900, "method": "item/tool/requestUserInput", "params": {}}),
                )?;
                json!({"id": id, "result": {"turn": {"id": "turn-1", "status": "inProgress"}}})
            }
            _ => json!({"id": id, "error": {"code": -32601, "message": "unknown method"}}),
        };
        send(&mut stream, &answer)?;
    }
}

/// One text message from the client (masked frames, unfragmented); `None` at a close
/// or the connection's end.
fn read_client_text(stream: &mut UnixStream) -> std::io::Result<Option<String>> {
    let mut head = [0u8; 2];
    if stream.read_exact(&mut head).is_err() {
        return Ok(None);
    }
    let mut len = u64::from(head[1] & 0x7F);
    if len == 126 {
        let mut b = [0u8; 2];
        stream.read_exact(&mut b)?;
        len = u64::from(u16::from_be_bytes(b));
    } else if len == 127 {
        let mut b = [0u8; 8];
        stream.read_exact(&mut b)?;
        len = u64::from_be_bytes(b);
    }
    assert!(head[1] & 0x80 != 0, "a client frame must be masked");
    let mut mask = [0u8; 4];
    stream.read_exact(&mut mask)?;
    let mut payload = vec![0u8; len as usize];
    stream.read_exact(&mut payload)?;
    payload
        .iter_mut()
        .enumerate()
        .for_each(|(i, b)| *b ^= mask[i % 4]);
    if head[0] & 0x0F == 0x8 {
        return Ok(None);
    }
    Ok(Some(String::from_utf8(payload).unwrap()))
}

fn send(stream: &mut UnixStream, message: &Value) -> std::io::Result<()> {
    let payload = message.to_string().into_bytes();
    let mut frame = vec![0x81];
    if payload.len() < 126 {
        frame.push(payload.len() as u8);
    } else {
        frame.push(126);
        frame.extend_from_slice(&(payload.len() as u16).to_be_bytes());
    }
    frame.extend_from_slice(&payload);
    stream.write_all(&frame)
}

/// RFC 4648 base64, written apart from the client's own, so the handshake checks it.
fn base64_of(bytes: &[u8]) -> String {
    let alphabet: Vec<char> = ('A'..='Z')
        .chain('a'..='z')
        .chain('0'..='9')
        .chain(['+', '/'])
        .collect();
    let bits: Vec<bool> = (bytes.iter())
        .flat_map(|b| (0..8).rev().map(move |i| b >> i & 1 == 1))
        .collect();
    let mut out: String = (bits.chunks(6))
        .map(|six| {
            let value = (0..6).fold(0, |v, i| {
                v << 1 | usize::from(*six.get(i).unwrap_or(&false))
            });
            alphabet[value]
        })
        .collect();
    while !out.len().is_multiple_of(4) {
        out.push('=');
    }
    out
}
