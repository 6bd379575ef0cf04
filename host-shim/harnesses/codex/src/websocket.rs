//! The client side of a WebSocket (RFC 6455) over a byte stream: the HTTP upgrade,
//! masked text frames out, text frames in (fragments joined), pings answered, a close
//! ending the connection. Just what talking JSON-RPC to the Codex app-server daemon
//! over its Unix socket needs; no extensions, no subprotocols.
//!
//! Bounds: a handshake answer is at most [`MAX_HANDSHAKE_BYTES`] and a message at
//! most the `limit` the caller gives; past either the connection fails, so a peer
//! cannot make this process buffer without end. Time is bounded by the stream's own
//! read and write timeouts, which the caller sets.

use anyhow::{Context, Result, bail, ensure};
use sha1::{Digest, Sha1};
use std::io::{Read, Write};

/// The longest handshake answer read.
pub const MAX_HANDSHAKE_BYTES: usize = 16 * 1024;

/// The GUID RFC 6455 appends to the key to form `Sec-WebSocket-Accept`.
const ACCEPT_GUID: &str = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

const TEXT: u8 = 0x1;
const BINARY: u8 = 0x2;
const CONTINUATION: u8 = 0x0;
const CLOSE: u8 = 0x8;
const PING: u8 = 0x9;
const PONG: u8 = 0xA;

/// A connected WebSocket client.
pub struct WebSocket<S> {
    stream: S,
    /// Bytes read past what was consumed.
    pending: Vec<u8>,
    limit: usize,
}

impl<S: Read + Write> WebSocket<S> {
    /// Upgrades `stream` (already connected) to a WebSocket: sends the handshake for
    /// `host` and checks the answer is `101` with the right `Sec-WebSocket-Accept`.
    /// Messages read are at most `limit` bytes.
    pub fn upgrade(mut stream: S, host: &str, limit: usize) -> Result<WebSocket<S>> {
        let key = base64(&random_bytes::<16>());
        let request = format!(
            "GET / HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        );
        stream.write_all(request.as_bytes())?;
        stream.flush()?;
        let mut answer = Vec::new();
        let end = loop {
            if let Some(at) = find(&answer, b"\r\n\r\n") {
                break at;
            }
            ensure!(
                answer.len() <= MAX_HANDSHAKE_BYTES,
                "the WebSocket handshake answer is longer than {MAX_HANDSHAKE_BYTES} bytes"
            );
            let mut chunk = [0u8; 4096];
            let n = stream.read(&mut chunk)?;
            ensure!(
                n > 0,
                "the server closed the connection during the handshake"
            );
            answer.extend_from_slice(&chunk[..n]);
        };
        let head = String::from_utf8_lossy(&answer[..end]).into_owned();
        let pending = answer[end + 4..].to_vec();
        let mut lines = head.split("\r\n");
        let status = lines.next().unwrap_or_default();
        ensure!(
            status.split_whitespace().nth(1) == Some("101"),
            "the server did not switch to WebSocket: {status:?}"
        );
        let expected = base64(&Sha1::digest(format!("{key}{ACCEPT_GUID}").as_bytes()));
        let accept = lines
            .filter_map(|line| line.split_once(':'))
            .find(|(name, _)| name.trim().eq_ignore_ascii_case("sec-websocket-accept"))
            .map(|(_, value)| value.trim().to_string());
        ensure!(
            accept.as_deref() == Some(expected.as_str()),
            "the server's Sec-WebSocket-Accept does not answer our key"
        );
        Ok(WebSocket {
            stream,
            pending,
            limit,
        })
    }

    /// The stream beneath (to set its timeouts).
    pub fn stream(&self) -> &S {
        &self.stream
    }

    /// Sends one text message (one masked frame, as a client must).
    pub fn send_text(&mut self, text: &str) -> Result<()> {
        self.send_frame(TEXT, text.as_bytes())
    }

    /// The next text message; pings are answered and pongs skipped on the way. A
    /// close, or a binary message, is an error.
    pub fn read_text(&mut self) -> Result<String> {
        let mut message: Vec<u8> = Vec::new();
        let mut in_text = false;
        loop {
            let (fin, opcode, payload) = self.read_frame(message.len())?;
            match opcode {
                PING => self.send_frame(PONG, &payload)?,
                PONG => {}
                CLOSE => bail!("the server closed the WebSocket"),
                TEXT if !in_text => {
                    message = payload;
                    in_text = true;
                }
                CONTINUATION if in_text => message.extend_from_slice(&payload),
                BINARY => bail!("the server sent a binary message where JSON text was expected"),
                other => bail!("the server sent an unexpected WebSocket frame (opcode {other})"),
            }
            if in_text && fin && opcode != PING && opcode != PONG {
                return String::from_utf8(message)
                    .context("the server sent a text message that is not UTF-8");
            }
        }
    }

    /// Says goodbye (a close frame); errors are ignored, the connection ends anyway.
    pub fn close(mut self) {
        let _ = self.send_frame(CLOSE, &1000u16.to_be_bytes());
    }

    fn send_frame(&mut self, opcode: u8, payload: &[u8]) -> Result<()> {
        let mut frame = Vec::with_capacity(payload.len() + 14);
        frame.push(0x80 | opcode);
        match payload.len() {
            n if n < 126 => frame.push(0x80 | n as u8),
            n if n <= usize::from(u16::MAX) => {
                frame.push(0x80 | 126);
                frame.extend_from_slice(&(n as u16).to_be_bytes());
            }
            n => {
                frame.push(0x80 | 127);
                frame.extend_from_slice(&(n as u64).to_be_bytes());
            }
        }
        let mask = random_bytes::<4>();
        frame.extend_from_slice(&mask);
        frame.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
        self.stream.write_all(&frame)?;
        self.stream.flush()?;
        Ok(())
    }

    /// One frame: (fin, opcode, unmasked payload). `held` bytes of the message are
    /// already read; the whole message may not pass the limit.
    fn read_frame(&mut self, held: usize) -> Result<(bool, u8, Vec<u8>)> {
        let head = self.take(2)?;
        let (fin, opcode, masked) = (head[0] & 0x80 != 0, head[0] & 0x0F, head[1] & 0x80 != 0);
        let len = match head[1] & 0x7F {
            126 => u64::from(u16::from_be_bytes(self.take(2)?.try_into().unwrap())),
            127 => u64::from_be_bytes(self.take(8)?.try_into().unwrap()),
            n => u64::from(n),
        };
        ensure!(
            len <= (self.limit.saturating_sub(held)) as u64,
            "the server sent a WebSocket message longer than {} bytes",
            self.limit
        );
        let mask = if masked { Some(self.take(4)?) } else { None };
        let mut payload = self.take(len as usize)?;
        if let Some(mask) = mask {
            payload
                .iter_mut()
                .enumerate()
                .for_each(|(i, b)| *b ^= mask[i % 4]);
        }
        Ok((fin, opcode, payload))
    }

    /// Exactly `n` more bytes of the stream.
    fn take(&mut self, n: usize) -> Result<Vec<u8>> {
        while self.pending.len() < n {
            let mut chunk = vec![0u8; (n - self.pending.len()).clamp(4096, 64 * 1024)];
            let read = self.stream.read(&mut chunk)?;
            ensure!(read > 0, "the server closed the connection");
            self.pending.extend_from_slice(&chunk[..read]);
        }
        let rest = self.pending.split_off(n);
        Ok(std::mem::replace(&mut self.pending, rest))
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Bytes that differ per call and per process (the handshake key and frame masks only
/// need to be unpredictable to caches in between, not secret).
fn random_bytes<const N: usize>() -> [u8; N] {
    use std::hash::{BuildHasher, Hasher};
    let mut out = [0u8; N];
    for chunk in out.chunks_mut(8) {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or_default(),
        );
        let bytes = hasher.finish().to_le_bytes();
        chunk.copy_from_slice(&bytes[..chunk.len()]);
    }
    out
}

/// Standard base64 with padding.
pub fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = u32::from(b[0]) << 16 | u32::from(b[1]) << 8 | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    /// A stream that answers with prepared bytes and keeps what was written.
    struct Scripted {
        answer: Cursor<Vec<u8>>,
        written: Vec<u8>,
    }

    impl Read for Scripted {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            self.answer.read(buf)
        }
    }

    impl Write for Scripted {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.written.extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn base64_pads_as_rfc_4648_says() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
    }

    #[test]
    fn the_accept_of_rfc_6455s_example_key() {
        // RFC 6455, section 1.3.
        let accept = base64(&Sha1::digest(format!(
            "dGhlIHNhbXBsZSBub25jZQ=={ACCEPT_GUID}"
        )));
        assert_eq!(accept, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
    }

    #[test]
    fn a_server_that_does_not_answer_the_key_is_refused() {
        let answer = b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\
                       Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n";
        let stream = Scripted {
            answer: Cursor::new(answer.to_vec()),
            written: Vec::new(),
        };
        let err = WebSocket::upgrade(stream, "localhost", 1024).err().unwrap();
        assert!(
            format!("{err:#}").contains("Sec-WebSocket-Accept"),
            "{err:#}"
        );
    }

    #[test]
    fn a_plain_http_answer_is_refused() {
        let stream = Scripted {
            answer: Cursor::new(b"HTTP/1.1 404 Not Found\r\n\r\n".to_vec()),
            written: Vec::new(),
        };
        let err = WebSocket::upgrade(stream, "localhost", 1024).err().unwrap();
        assert!(format!("{err:#}").contains("did not switch"), "{err:#}");
    }

    /// A connected client reading `frames` (unmasked, as a server sends).
    fn reading(frames: Vec<u8>, limit: usize) -> WebSocket<Scripted> {
        WebSocket {
            stream: Scripted {
                answer: Cursor::new(frames),
                written: Vec::new(),
            },
            pending: Vec::new(),
            limit,
        }
    }

    fn frame(first: u8, payload: &[u8]) -> Vec<u8> {
        let mut out = vec![first];
        if payload.len() < 126 {
            out.push(payload.len() as u8);
        } else {
            out.push(126);
            out.extend_from_slice(&(payload.len() as u16).to_be_bytes());
        }
        out.extend_from_slice(payload);
        out
    }

    #[test]
    fn fragments_are_joined_and_pings_answered_between_them() {
        let mut frames = frame(TEXT, b"{\"a\":");
        frames.extend(frame(0x80 | PING, b"hi"));
        frames.extend(frame(0x80 | CONTINUATION, &[b'1'; 300]));
        let mut socket = reading(frames, 1024);
        let text = socket.read_text().unwrap();
        assert_eq!(text, format!("{{\"a\":{}", "1".repeat(300)));
        // The pong: fin + opcode, masked length 2, a 4-byte mask, the masked "hi".
        let written = &socket.stream.written;
        assert_eq!(&written[..2], &[0x80 | PONG, 0x80 | 2]);
        let mask = &written[2..6];
        let unmasked: Vec<u8> = written[6..]
            .iter()
            .enumerate()
            .map(|(i, b)| b ^ mask[i % 4])
            .collect();
        assert_eq!(unmasked, b"hi");
    }

    #[test]
    fn a_message_past_the_limit_fails_before_it_is_read() {
        let mut frames = frame(TEXT, &[b'x'; 100]);
        frames.extend(frame(0x80 | CONTINUATION, &[b'y'; 100]));
        let err = reading(frames, 150).read_text().unwrap_err();
        assert!(
            format!("{err:#}").contains("longer than 150 bytes"),
            "{err:#}"
        );
    }

    #[test]
    fn a_close_or_a_cut_connection_is_an_error() {
        let err = reading(frame(0x80 | CLOSE, &1000u16.to_be_bytes()), 64)
            .read_text()
            .unwrap_err();
        assert!(
            format!("{err:#}").contains("closed the WebSocket"),
            "{err:#}"
        );
        let err = reading(vec![0x81, 10, b'x'], 64).read_text().unwrap_err();
        assert!(
            format!("{err:#}").contains("closed the connection"),
            "{err:#}"
        );
    }

    #[test]
    fn sent_frames_are_masked_with_the_right_length_form() {
        let mut socket = reading(Vec::new(), 64);
        socket.send_text(&"z".repeat(200)).unwrap();
        let written = &socket.stream.written;
        assert_eq!(&written[..4], &[0x80 | TEXT, 0x80 | 126, 0, 200]);
        let mask = &written[4..8];
        let unmasked: Vec<u8> = written[8..]
            .iter()
            .enumerate()
            .map(|(i, b)| b ^ mask[i % 4])
            .collect();
        assert_eq!(unmasked, "z".repeat(200).as_bytes());
    }
}
