//! Who made a call, as the harness itself says it: a hook the harness runs before each
//! MCP call of ours stamps the session that makes it (a subagent's own id, with its
//! parent), and the MCP server takes the caller from the stamp, never from the model's
//! arguments. A harness whose MCP client names no session per call (one server for a
//! session and all its subagents) is told apart this way.
//!
//! A stamp is a JSON object: `session`, `parent` (a subagent's), `call` (the
//! harness's id for the call), `issued` (ms since the epoch) and `mac`, an HMAC-SHA256
//! over those and the call's tool and arguments (keys sorted), with a key only this
//! user's processes read. The server takes a stamp only when its MAC holds for the
//! call it came with, and only for [`FRESH_MS`] after it was made.
//!
//! Trust model: the key is 32 random bytes in the state folder's `call-stamp.key`
//! (the folder is this user's alone), created `0600` by the first hook that needs it,
//! whole or not at all (written aside, then linked into place); the server only reads
//! it. A model cannot write a stamp: the harness carries it outside the arguments the
//! model writes (Copilot CLI: in the request's `_meta`), and a stamp made for one call
//! does not hold for other arguments or after its minutes. A process of this user
//! that reads the key can stamp (a model with a shell runs as this user too): the
//! boundary is the user's, as for every file the stores read.

use anyhow::{Context, Result, bail};
use sha2::{Digest, Sha256};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// The key's file in the state folder.
pub const KEY_FILE: &str = "call-stamp.key";

/// How long a stamp holds after it was made: a call reaches its server in
/// milliseconds; this leaves room for a busy machine.
pub const FRESH_MS: i64 = 5 * 60 * 1000;

const KEY_BYTES: usize = 32;

/// Who made a call, as a stamp names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stamped {
    /// The session that made the call (a subagent's own id inside a subagent).
    pub session: String,
    /// The subagent's parent session; none for a top-level session.
    pub parent: Option<String>,
    /// The harness's id for the call (kept when the harness retries it).
    pub call: String,
}

/// Why a call's stamp was not taken, in words a model and a person can act on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unstamped {
    /// The call came without one.
    Missing,
    /// The stamp is not one a hook makes (not an object of the fields, or its MAC does
    /// not hold for this call).
    NotMade,
    /// It was made more than [`FRESH_MS`] ago (or in the future).
    Stale,
    /// The state folder has no key: no hook has stamped a call yet.
    NoKey,
}

impl Unstamped {
    /// The sentence a refused call is answered with; `fix` is what sets the hook up.
    pub fn explain(&self, fix: &str) -> String {
        let why = match self {
            Unstamped::Missing => "the call came without the stamp the harness's hook puts on it",
            Unstamped::NotMade => {
                "the call's stamp was not made by the harness's hook for this call"
            }
            Unstamped::Stale => "the call's stamp is too old",
            Unstamped::NoKey => "the state folder has no stamp key, so no hook of ours has run",
        };
        format!(
            "host-shim mcp cannot tell which session made this call: {why}; nothing was run. \
             Run `{fix}` (it installs the hook that stamps each call), then start the session again"
        )
    }
}

/// The secret a hook stamps with and the server checks with.
pub struct StampKey {
    bytes: [u8; KEY_BYTES],
}

impl StampKey {
    /// Where the key of the state folder `root` is.
    pub fn path(root: &Path) -> PathBuf {
        root.join(KEY_FILE)
    }

    /// The key of the state folder `root`; none when no hook has made it yet.
    pub fn load(root: &Path) -> Result<Option<StampKey>> {
        let path = StampKey::path(root);
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(err) => {
                return Err(err).with_context(|| format!("cannot read {}", path.display()));
            }
        };
        let Ok(bytes) = <[u8; KEY_BYTES]>::try_from(bytes.as_slice()) else {
            bail!(
                "{} is not a stamp key ({} bytes, not {KEY_BYTES}): remove it, and the next hook makes a new one",
                path.display(),
                bytes.len()
            );
        };
        Ok(Some(StampKey { bytes }))
    }

    /// The key of the state folder `root` (this user's alone, already open), made now
    /// when there is none: written aside and linked into place, so two hooks at once
    /// agree on one key.
    pub fn load_or_create(root: &Path) -> Result<StampKey> {
        crate::os::trusted_dir(root).map_err(|why| {
            anyhow::anyhow!(
                "state folder {}: {why}; name one only you can write with --state-dir",
                root.display()
            )
        })?;
        if let Some(key) = StampKey::load(root)? {
            return Ok(key);
        }
        let mut bytes = [0u8; KEY_BYTES];
        fill_random(&mut bytes)?;
        let aside = root.join(format!("{KEY_FILE}.{}", std::process::id()));
        let written = (|| -> std::io::Result<()> {
            let mut file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&aside)?;
            file.write_all(&bytes)?;
            file.sync_all()
        })();
        let linked = written.and_then(|()| std::fs::hard_link(&aside, StampKey::path(root)));
        let _ = std::fs::remove_file(&aside);
        match linked {
            Ok(()) => Ok(StampKey { bytes }),
            // Another hook made it first: its key is the one.
            Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => StampKey::load(root)?
                .context("the stamp key vanished as it was made; run the hook again"),
            Err(err) => Err(err).with_context(|| {
                format!(
                    "cannot write the stamp key {}",
                    StampKey::path(root).display()
                )
            }),
        }
    }

    /// The stamp for `who` making the call of `tool` with `arguments`, at `now_ms`.
    pub fn stamp(
        &self,
        who: &Stamped,
        tool: &str,
        arguments: &serde_json::Value,
        now_ms: i64,
    ) -> serde_json::Value {
        let mac = self.mac(who, now_ms, tool, arguments);
        let mut stamp = serde_json::json!({
            "session": who.session,
            "call": who.call,
            "issued": now_ms,
            "mac": mac,
        });
        if let Some(parent) = &who.parent {
            stamp["parent"] = serde_json::Value::from(parent.as_str());
        }
        stamp
    }

    /// Who made the call of `tool` with `arguments`, when `stamp` holds for it at
    /// `now_ms`.
    pub fn check(
        &self,
        stamp: &serde_json::Value,
        tool: &str,
        arguments: &serde_json::Value,
        now_ms: i64,
    ) -> Result<Stamped, Unstamped> {
        let text = |key: &str| stamp.get(key).and_then(serde_json::Value::as_str);
        let (Some(session), Some(call), Some(issued), Some(mac)) = (
            text("session"),
            text("call"),
            stamp.get("issued").and_then(serde_json::Value::as_i64),
            text("mac"),
        ) else {
            return Err(Unstamped::NotMade);
        };
        let parent = match stamp.get("parent") {
            None => None,
            Some(serde_json::Value::String(parent)) => Some(parent.clone()),
            Some(_) => return Err(Unstamped::NotMade),
        };
        let who = Stamped {
            session: session.to_string(),
            parent,
            call: call.to_string(),
        };
        let expected = self.mac(&who, issued, tool, arguments);
        if !same(expected.as_bytes(), mac.as_bytes()) {
            return Err(Unstamped::NotMade);
        }
        if (now_ms - issued).abs() > FRESH_MS {
            return Err(Unstamped::Stale);
        }
        Ok(who)
    }

    fn mac(&self, who: &Stamped, issued: i64, tool: &str, arguments: &serde_json::Value) -> String {
        // Each field on a line of its own, as JSON (no field can end another early).
        let mut message = String::from("session-tools call stamp v1\n");
        for field in [
            serde_json::Value::from(who.session.as_str()),
            serde_json::Value::from(who.parent.as_deref()),
            serde_json::Value::from(who.call.as_str()),
            serde_json::Value::from(issued),
            serde_json::Value::from(tool),
        ] {
            message.push_str(&field.to_string());
            message.push('\n');
        }
        canonical(arguments, &mut message);
        hex(&hmac_sha256(&self.bytes, message.as_bytes()))
    }
}

/// `value` as JSON with every object's keys sorted, so the hook and the server agree
/// however the harness ordered them in between.
fn canonical(value: &serde_json::Value, out: &mut String) {
    match value {
        serde_json::Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (n, key) in keys.into_iter().enumerate() {
                if n > 0 {
                    out.push(',');
                }
                out.push_str(&serde_json::Value::from(key.as_str()).to_string());
                out.push(':');
                canonical(&map[key], out);
            }
            out.push('}');
        }
        serde_json::Value::Array(items) => {
            out.push('[');
            for (n, item) in items.iter().enumerate() {
                if n > 0 {
                    out.push(',');
                }
                canonical(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// HMAC (RFC 2104) over SHA-256.
fn hmac_sha256(key: &[u8; KEY_BYTES], message: &[u8]) -> [u8; 32] {
    let mut padded = [0u8; 64];
    padded[..KEY_BYTES].copy_from_slice(key);
    let pad = |with: u8| padded.map(|b| b ^ with);
    let inner = Sha256::new()
        .chain_update(pad(0x36))
        .chain_update(message)
        .finalize();
    Sha256::new()
        .chain_update(pad(0x5c))
        .chain_update(inner)
        .finalize()
        .into()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Equal, in time that does not depend on where they differ.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Fills `out` from the kernel's random source.
fn fill_random(out: &mut [u8]) -> Result<()> {
    let mut filled = 0;
    while filled < out.len() {
        let got = random_bytes(&mut out[filled..]);
        if got < 0 {
            let err = std::io::Error::last_os_error();
            if err.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(err).context("cannot read random bytes for the stamp key");
        }
        filled += got as usize;
    }
    Ok(())
}

/// Some of `out` from the kernel's random source: how many bytes, or -1 (errno set).
#[cfg(any(target_os = "linux", target_os = "android"))]
fn random_bytes(out: &mut [u8]) -> isize {
    // SAFETY: the pointer and length describe `out`.
    unsafe { libc::getrandom(out.as_mut_ptr().cast(), out.len(), 0) }
}

/// Some of `out` from the kernel's random source: how many bytes, or -1 (errno set).
/// getentropy gives at most 256 bytes a call (macOS and the BSDs have no getrandom).
#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn random_bytes(out: &mut [u8]) -> isize {
    let len = out.len().min(256);
    // SAFETY: the pointer and length describe the first `len` bytes of `out`.
    match unsafe { libc::getentropy(out.as_mut_ptr().cast(), len) } {
        0 => len as isize,
        _ => -1,
    }
}

/// Milliseconds since the epoch now.
pub fn now_ms() -> i64 {
    (crate::inbox::now_ns() / 1_000_000) as i64
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn folder(name: &str) -> PathBuf {
        host_shim_testkit::scratch("call-stamp", name)
    }

    fn sub() -> Stamped {
        Stamped {
            session: "child".into(),
            parent: Some("parent".into()),
            call: "call_1".into(),
        }
    }

    #[test]
    fn hmac_matches_rfc_4231_case_1() {
        // RFC 4231 test case 1, its 20-byte key zero-padded to 32 bytes (HMAC pads a
        // short key with zeros, so the digest is the RFC's).
        let mut key = [0u8; KEY_BYTES];
        key[..20].copy_from_slice(&[0x0b; 20]);
        assert_eq!(
            hex(&hmac_sha256(&key, b"Hi There")),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
        );
    }

    #[test]
    fn a_stamp_holds_for_its_call_only_and_only_while_fresh() {
        let root = folder("holds");
        let key = StampKey::load_or_create(&root).unwrap();
        let arguments = json!({"session_id": "x", "message": "hi", "mode": "queue"});
        let stamp = key.stamp(&sub(), "sessions_send", &arguments, 1_000_000);
        // The harness may order the keys differently on the way.
        let reordered = json!({"mode": "queue", "message": "hi", "session_id": "x"});
        assert_eq!(
            key.check(&stamp, "sessions_send", &reordered, 1_000_500),
            Ok(sub())
        );
        let other = json!({"session_id": "y", "message": "hi", "mode": "queue"});
        assert_eq!(
            key.check(&stamp, "sessions_send", &other, 1_000_500),
            Err(Unstamped::NotMade)
        );
        assert_eq!(
            key.check(&stamp, "sessions_read", &arguments, 1_000_500),
            Err(Unstamped::NotMade)
        );
        assert_eq!(
            key.check(
                &stamp,
                "sessions_send",
                &arguments,
                1_000_000 + FRESH_MS + 1
            ),
            Err(Unstamped::Stale)
        );
        // Naming another session (or dropping the parent) breaks the MAC.
        for (field, value) in [("session", json!("parent")), ("parent", json!(null))] {
            let mut forged = stamp.clone();
            forged[field] = value;
            if forged["parent"].is_null() {
                forged.as_object_mut().unwrap().remove("parent");
            }
            assert_eq!(
                key.check(&forged, "sessions_send", &arguments, 1_000_500),
                Err(Unstamped::NotMade),
                "{field}"
            );
        }
        assert_eq!(
            key.check(&json!("a string"), "sessions_send", &arguments, 1_000_500),
            Err(Unstamped::NotMade)
        );
        // Another key made it: not ours.
        let elsewhere = StampKey::load_or_create(&folder("elsewhere")).unwrap();
        assert_eq!(
            elsewhere.check(&stamp, "sessions_send", &arguments, 1_000_500),
            Err(Unstamped::NotMade)
        );
    }

    #[test]
    fn the_key_is_made_once_private_and_a_damaged_one_is_named() {
        use std::os::unix::fs::PermissionsExt;
        let root = folder("key");
        assert!(StampKey::load(&root).unwrap().is_none());
        let first = StampKey::load_or_create(&root).unwrap();
        let again = StampKey::load_or_create(&root).unwrap();
        assert_eq!(first.bytes, again.bytes);
        let mode = std::fs::metadata(StampKey::path(&root))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        // Nothing written aside is left behind.
        let names: Vec<_> = std::fs::read_dir(&root)
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(names, [KEY_FILE]);
        std::fs::write(StampKey::path(&root), b"short").unwrap();
        let err = StampKey::load(&root).err().unwrap().to_string();
        assert!(
            err.contains("is not a stamp key") && err.contains("remove it"),
            "{err}"
        );
    }
}
