//! The deliveries file (`--deliveries`): what the inbox accepted. `host-shim call`
//! writes one call's as a JSON array of [`Delivery`] records, replacing the file in one
//! step (a sibling temporary file, synced, then renamed over it), so a reader never
//! sees half a file and a failed write leaves the previous file as it was.
//! `host-shim mcp` appends each call's, one JSON record per line.

use crate::guard::Delivery;
use anyhow::{Context, Result};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// Replaces `path` with `bytes` in one step.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let temporary = temporary_of(path);
    // This user's alone (a registration, a deliveries file): no reader beside them.
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&temporary)?;
    let written = file.write_all(bytes).and_then(|()| file.sync_all());
    drop(file);
    match written.and_then(|()| std::fs::rename(&temporary, path)) {
        Ok(()) => Ok(()),
        Err(err) => {
            let _ = std::fs::remove_file(&temporary);
            Err(err)
        }
    }
}

/// The file this process writes `path` through: `<name>.tmp<pid>` beside it.
pub fn temporary_of(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".tmp{}", std::process::id()));
    path.with_file_name(name)
}

/// Replaces the file with exactly these deliveries (`[]` for none).
pub fn write(path: &Path, deliveries: &[Delivery]) -> Result<()> {
    let json = serde_json::to_string_pretty(deliveries)? + "\n";
    write_atomically(path, json.as_bytes())
        .with_context(|| format!("cannot write deliveries file {}", path.display()))
}

/// Appends these deliveries to `path`, one JSON record per line (JSON Lines), in one
/// write, synced: a long-lived server adds what each call delivered without reading or
/// rewriting what the file already holds. A missing file is created.
pub fn append(path: &Path, deliveries: &[Delivery]) -> Result<()> {
    let mut lines = String::new();
    for delivery in deliveries {
        lines.push_str(&serde_json::to_string(delivery)?);
        lines.push('\n');
    }
    let appended = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .and_then(|mut file| {
            file.write_all(lines.as_bytes())?;
            file.sync_data()
        });
    appended.with_context(|| format!("cannot append to deliveries file {}", path.display()))
}
