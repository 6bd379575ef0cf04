//! The deliveries file (`--deliveries`): what the inbox accepted, as a JSON array of
//! [`Delivery`] records. It is only ever replaced in one step (a sibling temporary
//! file, synced, then renamed over it), so a reader never sees half a file, and a
//! failed write leaves the previous file as it was.

use crate::guard::Delivery;
use anyhow::{Context, Result};
use std::io::Write;
use std::path::Path;

/// Replaces `path` with `bytes` in one step.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".tmp{}", std::process::id()));
    let temporary = path.with_file_name(name);
    let mut file = std::fs::File::create_new(&temporary)?;
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

/// Replaces the file with exactly these deliveries (`[]` for none).
pub fn write(path: &Path, deliveries: &[Delivery]) -> Result<()> {
    let json = serde_json::to_string_pretty(deliveries)? + "\n";
    write_atomically(path, json.as_bytes())
        .with_context(|| format!("cannot write deliveries file {}", path.display()))
}

/// Adds these deliveries to the ones the file holds (a missing or empty file holds
/// none); a file that is not such an array is an error, and is left as it was.
pub fn append(path: &Path, deliveries: &[Delivery]) -> Result<()> {
    let mut all: Vec<Delivery> = match std::fs::read_to_string(path) {
        Ok(text) if !text.trim().is_empty() => serde_json::from_str(&text).with_context(|| {
            format!(
                "{} is not a deliveries file (a JSON array of deliveries); move it or name another file",
                path.display()
            )
        })?,
        Ok(_) => Vec::new(),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(err) => {
            return Err(err).with_context(|| format!("cannot read deliveries file {}", path.display()));
        }
    };
    all.extend_from_slice(deliveries);
    write(path, &all)
}
