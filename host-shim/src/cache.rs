//! The compiled-component cache: compiling the plugin with Cranelift costs far more
//! than loading machine code already compiled, so a runtime keeps the compiled form on
//! disk, keyed by the plugin's SHA-256 and the engine's compatibility hash. A change
//! of either is a new key (and a compile); stale entries are removed on write.

use anyhow::{Context, Result};
use sha2::{Digest, Sha256};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};
use wasmtime::Engine;
use wasmtime::component::Component;

/// How a runtime got its compiled component.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoadKind {
    /// Compiled now (no cache, or a cache miss).
    Compiled,
    /// Loaded from the cache; nothing was compiled.
    FromCache,
}

const PREFIX: &str = "plugin-";
const SUFFIX: &str = ".cwasm";

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

/// The default cache directory: `$XDG_CACHE_HOME/session-tools`, else
/// `~/.cache/session-tools`.
pub fn default_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))?;
    Some(base.join("session-tools"))
}

/// Loads the component from `dir` when an entry matches, else compiles it and writes
/// the entry. A cache that cannot be read or written costs a compile, never a failure.
pub fn load(engine: &Engine, plugin: &[u8], dir: &Path) -> Result<(Component, LoadKind)> {
    let path = entry_path(dir, engine, plugin);
    if path.exists() {
        // SAFETY: the file was written by `precompile_component` of an engine with the
        // same compatibility hash (it is in the file name), into a directory this
        // process owns; wasmtime checks the header again before using it.
        if let Ok(component) = unsafe { Component::deserialize_file(engine, &path) } {
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
    let _ = write_entry(dir, &path, &compiled);
    Ok((component, LoadKind::Compiled))
}

/// Writes atomically (a temporary file, then a rename) and drops stale entries.
fn write_entry(dir: &Path, path: &Path, compiled: &[u8]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    for entry in std::fs::read_dir(dir)?.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with(PREFIX) && name.ends_with(SUFFIX) && entry.path() != path {
            let _ = std::fs::remove_file(entry.path());
        }
    }
    let temporary = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&temporary, compiled)?;
    std::fs::rename(&temporary, path)
}
