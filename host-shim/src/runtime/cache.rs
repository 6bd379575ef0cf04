//! The compiled-component cache: compiling the plugin with Cranelift costs far more
//! than loading machine code already compiled, so a runtime keeps the compiled form on
//! disk, keyed by the plugin's SHA-256 and the engine's compatibility hash.
//!
//! Trust model. Loading an entry runs its machine code outside the sandbox, so an
//! entry is trusted only when this user wrote it and its hashes say what it is:
//!
//! - The directory is created `0700`. A directory that is not owned by the effective
//!   user, is writable by group or others, or is a symlink is not used: the plugin is
//!   compiled instead and one warning line goes to stderr. Whoever else could write
//!   there could plant machine code.
//! - An entry is opened without following symlinks and without blocking (a FIFO is not
//!   waited on), and must be a regular file owned by the effective user, not writable
//!   by group or others, and at most [`MAX_ENTRY_BYTES`].
//! - An entry starts with a header: a magic string, the SHA-256 of the plugin it was
//!   compiled from and the SHA-256 of the compiled bytes that follow. Both are checked
//!   before `Component::deserialize` (wasmtime then checks the engine's own header), so
//!   another plugin's entry under this name, or damaged bytes, cost a compile and a
//!   rewrite, never a crash. The hashes do not stop the owner of the directory from
//!   writing a matching entry: the directory check does.
//! - A new entry is written to a temporary file created exclusively (never through a
//!   planted file or symlink), synced, then renamed into place.
//! - Clean-up removes only this tool's own stale entries: files named like its entries
//!   that start with its magic.
//!
//! wasmtime's own `cache` feature is not used (it is not enabled).

use crate::os::effective_uid;
use anyhow::{Context, Result};
use sha2::{Digest, Sha256};
use std::fs::{File, OpenOptions};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::io::{Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use wasmtime::Engine;
use wasmtime::component::Component;

/// How a runtime got its compiled component.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoadKind {
    /// Compiled now (no cache, a cache miss, or a cache not trusted).
    Compiled,
    /// Loaded from the cache; nothing was compiled.
    FromCache,
}

const PREFIX: &str = "plugin-";
const SUFFIX: &str = ".cwasm";
/// Every entry starts with this, then the two hashes.
const MAGIC: &[u8; 24] = b"session-tools cwasm v1\n\0";
/// Bytes of an entry before the compiled code: the magic and the two hashes.
pub const ENTRY_HEADER_BYTES: usize = MAGIC.len() + 32 + 32;
/// The largest entry read (the plugin's compiled form is about 1 MB).
pub const MAX_ENTRY_BYTES: u64 = 64 << 20;

/// The cache file for `plugin` under `engine`'s settings.
pub fn entry_path(dir: &Path, engine: &Engine, plugin: &[u8]) -> PathBuf {
    let mut engine_hash = DefaultHasher::new();
    engine
        .precompile_compatibility_hash()
        .hash(&mut engine_hash);
    let digest = Sha256::digest(plugin);
    let plugin_hash: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
    dir.join(format!(
        "{PREFIX}{plugin_hash}-{:016x}{SUFFIX}",
        engine_hash.finish()
    ))
}

/// The default cache directory: `$XDG_CACHE_HOME/session-tools` when that is an
/// absolute path (a relative one is ignored, as the XDG spec says), else
/// `$HOME/.cache/session-tools`.
pub fn default_dir() -> Option<PathBuf> {
    dir_from(
        std::env::var_os("XDG_CACHE_HOME").map(PathBuf::from),
        std::env::var_os("HOME").map(PathBuf::from),
    )
}

fn dir_from(xdg_cache_home: Option<PathBuf>, home: Option<PathBuf>) -> Option<PathBuf> {
    crate::os::user_dir(xdg_cache_home, home, ".cache")
}

/// Opens a file that must be a regular file this user owns and only this user can
/// write, of bounded size; never follows a symlink, never blocks on a FIFO.
fn open_own_file(path: &Path) -> Option<File> {
    let (file, meta) = crate::os::open_regular(path, MAX_ENTRY_BYTES).ok()?;
    (meta.uid() == effective_uid() && meta.mode() & 0o022 == 0).then_some(file)
}

/// The compiled bytes of an entry, if its header says it holds `plugin` and its bytes
/// are what the header says.
fn read_entry(path: &Path, plugin_digest: &[u8]) -> Option<Vec<u8>> {
    let mut bytes = Vec::new();
    open_own_file(path)?
        .take(MAX_ENTRY_BYTES)
        .read_to_end(&mut bytes)
        .ok()?;
    let rest = bytes.strip_prefix(MAGIC.as_slice())?;
    let (recorded_plugin, rest) = rest.split_at_checked(32)?;
    let (recorded_body, body) = rest.split_at_checked(32)?;
    (recorded_plugin == plugin_digest && recorded_body == Sha256::digest(body).as_slice())
        .then(|| body.to_vec())
}

/// Loads the component from `dir` when a trusted entry matches, else compiles it and
/// writes the entry. A cache that cannot be trusted, read or written costs a compile,
/// never a failure.
pub fn load(engine: &Engine, plugin: &[u8], dir: &Path) -> Result<(Component, LoadKind)> {
    let trusted = crate::os::trusted_dir(dir);
    if let Err(why) = &trusted {
        eprintln!(
            "host-shim: warning: not using the compiled-plugin cache {}: {why}; compiling instead",
            dir.display()
        );
    }
    let path = entry_path(dir, engine, plugin);
    let plugin_digest = Sha256::digest(plugin);
    if trusted.is_ok()
        && let Some(compiled) = read_entry(&path, &plugin_digest)
    {
        // SAFETY: these bytes were written by `precompile_component` in this user's own
        // directory (checked above), their SHA-256 matches the one recorded with them,
        // and they were compiled from this very plugin; wasmtime checks the engine
        // header again before using them.
        if let Ok(component) = unsafe { Component::deserialize(engine, &compiled) } {
            return Ok((component, LoadKind::FromCache));
        }
    }
    let compiled = engine
        .precompile_component(plugin)
        .map_err(anyhow::Error::from)
        .context("loading the plugin component")?;
    // SAFETY: the bytes were produced by `precompile_component` of this very engine.
    let component = unsafe { Component::deserialize(engine, &compiled) }
        .map_err(anyhow::Error::from)
        .context("loading the compiled plugin component")?;
    if trusted.is_ok() {
        let _ = write_entry(dir, &path, &plugin_digest, &compiled);
    }
    Ok((component, LoadKind::Compiled))
}

/// Writes the entry atomically and drops this tool's stale entries.
fn write_entry(dir: &Path, path: &Path, plugin_digest: &[u8], compiled: &[u8]) -> Result<()> {
    for entry in std::fs::read_dir(dir)?.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let other = entry.path();
        if name.starts_with(PREFIX) && name.ends_with(SUFFIX) && other != path && is_ours(&other) {
            let _ = std::fs::remove_file(other);
        }
    }
    let file_name = path.file_name().context("an entry path has a file name")?;
    let mut temporary_name = std::ffi::OsString::from(".");
    temporary_name.push(file_name);
    temporary_name.push(format!(".tmp{}", std::process::id()));
    let temporary = dir.join(temporary_name);
    // Created exclusively: a file or symlink planted at this name makes the write fail
    // instead of going through it.
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&temporary)?;
    let written = file
        .write_all(MAGIC)
        .and_then(|()| file.write_all(plugin_digest))
        .and_then(|()| file.write_all(&Sha256::digest(compiled)))
        .and_then(|()| file.write_all(compiled))
        .and_then(|()| file.sync_all());
    drop(file);
    if let Err(err) = written.and_then(|()| std::fs::rename(&temporary, path)) {
        let _ = std::fs::remove_file(&temporary);
        return Err(err.into());
    }
    Ok(())
}

/// Whether a file is one of this tool's entries (so clean-up may remove it).
fn is_ours(path: &Path) -> bool {
    let Some(mut file) = open_own_file(path) else {
        return false;
    };
    let mut magic = [0u8; MAGIC.len()];
    file.read_exact(&mut magic).is_ok() && &magic == MAGIC
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_relative_xdg_cache_home_is_ignored() {
        assert_eq!(
            dir_from(Some("rel/cache".into()), Some("/home/me".into())),
            Some(PathBuf::from("/home/me/.cache/session-tools"))
        );
        assert_eq!(
            dir_from(Some("/xdg".into()), Some("/home/me".into())),
            Some(PathBuf::from("/xdg/session-tools"))
        );
        assert_eq!(dir_from(Some("rel".into()), Some("also-rel".into())), None);
        assert_eq!(dir_from(None, None), None);
    }
}
