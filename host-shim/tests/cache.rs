//! The compiled-component cache trusts only what this user wrote and what hashes say it
//! wrote. One test per attack: each would have run foreign machine code, crashed, hung
//! or clobbered a file before; now each costs a compile at most.

use host_shim::runtime::cache::{self, ENTRY_HEADER_BYTES};
use host_shim::{CorpusHost, LoadKind, Runtime, RuntimeOptions};
use host_shim_plugin::PLUGIN_WASM;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use test_plugin_artifacts::HOSTILE_PLUGIN;

fn cache_dir(name: &str) -> PathBuf {
    let dir = host_shim_testkit::temp_folder("cache").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn load(bytes: &[u8], dir: &Path) -> Runtime<CorpusHost> {
    let options = RuntimeOptions {
        cache_dir: Some(dir.to_path_buf()),
        ..RuntimeOptions::default()
    };
    Runtime::with_options(bytes, &options).unwrap()
}

fn entry(dir: &Path) -> PathBuf {
    let runtime = load(PLUGIN_WASM, dir);
    cache::entry_path(dir, runtime.engine(), PLUGIN_WASM)
}

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    names.sort();
    names
}

/// The plugin still answers, from a fresh compile.
fn recompiles_and_serves(dir: &Path) {
    let runtime = load(PLUGIN_WASM, dir);
    assert_eq!(runtime.load_kind(), LoadKind::Compiled);
    assert_eq!(runtime.catalog("").unwrap().len(), 4);
}

#[test]
fn the_first_load_compiles_and_later_loads_do_not() {
    let dir = cache_dir("warm");
    let first = load(PLUGIN_WASM, &dir);
    assert_eq!(first.load_kind(), LoadKind::Compiled);
    let second = load(PLUGIN_WASM, &dir);
    assert_eq!(second.load_kind(), LoadKind::FromCache);
    assert_eq!(second.catalog("").unwrap().len(), 4);
    let entry = cache::entry_path(&dir, second.engine(), PLUGIN_WASM);
    assert_eq!(
        names(&dir),
        [entry.file_name().unwrap().to_string_lossy().to_string()]
    );
    let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700, "the directory is private");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn overwritten_machine_code_is_never_run() {
    let dir = cache_dir("overwritten");
    let entry = entry(&dir);
    let mut bytes = std::fs::read(&entry).unwrap();
    // Overwrite a stretch of the compiled code (what an attacker would replace with
    // their own instructions); the recorded hash no longer matches.
    let start = ENTRY_HEADER_BYTES + bytes.len() / 3;
    for byte in &mut bytes[start..start + 4096] {
        *byte = 0xcc;
    }
    std::fs::write(&entry, &bytes).unwrap();
    recompiles_and_serves(&dir);
    assert_eq!(load(PLUGIN_WASM, &dir).load_kind(), LoadKind::FromCache);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn flipped_bytes_cost_a_compile_never_a_crash() {
    let dir = cache_dir("flipped");
    let entry = entry(&dir);
    let original = std::fs::read(&entry).unwrap();
    for step in 0..12 {
        let mut bytes = original.clone();
        for k in 0..8 {
            let at = (step * 7919 + k * 104_729) % bytes.len();
            bytes[at] ^= 0x5a;
        }
        std::fs::write(&entry, &bytes).unwrap();
        recompiles_and_serves(&dir);
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn another_plugins_entry_under_this_name_is_not_loaded() {
    let dir = cache_dir("renamed");
    let ours = entry(&dir);
    let hostile = load(HOSTILE_PLUGIN, &dir);
    let theirs = cache::entry_path(&dir, hostile.engine(), HOSTILE_PLUGIN);
    assert!(theirs.exists());
    std::fs::rename(&theirs, &ours).unwrap();
    let runtime = load(PLUGIN_WASM, &dir);
    assert_eq!(runtime.load_kind(), LoadKind::Compiled);
    let names: Vec<String> = runtime
        .catalog("")
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(
        names,
        [
            "sessions_list",
            "sessions_read",
            "sessions_send",
            "sessions_claim"
        ]
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_directory_others_can_write_is_not_used() {
    let dir = cache_dir("shared");
    let entry = entry(&dir);
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    // Even an entry this user wrote is not trusted there: anyone could have replaced it.
    assert!(entry.exists());
    recompiles_and_serves(&dir);
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    assert_eq!(load(PLUGIN_WASM, &dir).load_kind(), LoadKind::FromCache);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
#[ignore = "needs root (only root can give a file to another user): .ci/run runs it as root with --ignored"]
fn a_directory_or_entry_owned_by_another_user_is_not_used() {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    assert!(
        root,
        "run as root: only root can give a file to another user"
    );
    let dir = cache_dir("foreign");
    let entry = entry(&dir);
    let nobody = 65534;
    std::os::unix::fs::chown(&entry, Some(nobody), Some(nobody)).unwrap();
    recompiles_and_serves(&dir);
    std::os::unix::fs::chown(&dir, Some(nobody), Some(nobody)).unwrap();
    recompiles_and_serves(&dir);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_fifo_at_the_entry_is_not_waited_on() {
    let dir = cache_dir("fifo");
    let entry = entry(&dir);
    std::fs::remove_file(&entry).unwrap();
    let path = std::ffi::CString::new(entry.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
    recompiles_and_serves(&dir);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_symlinked_entry_is_not_followed() {
    let dir = cache_dir("symlink");
    let entry = entry(&dir);
    let elsewhere = dir.with_extension("real");
    std::fs::rename(&entry, &elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &entry).unwrap();
    recompiles_and_serves(&dir);
    std::fs::remove_dir_all(dir).unwrap();
    std::fs::remove_file(elsewhere).unwrap();
}

#[test]
fn the_temporary_file_never_goes_through_a_planted_symlink() {
    let dir = cache_dir("planted");
    let entry = entry(&dir);
    std::fs::remove_file(&entry).unwrap();
    let victim = dir.with_extension("victim");
    std::fs::write(&victim, "precious").unwrap();
    let temporary = dir.join(format!(
        ".{}.tmp{}",
        entry.file_name().unwrap().to_string_lossy(),
        std::process::id()
    ));
    std::os::unix::fs::symlink(&victim, &temporary).unwrap();
    recompiles_and_serves(&dir);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert!(
        !entry.exists(),
        "no entry was written through the planted name"
    );
    std::fs::remove_dir_all(dir).unwrap();
    std::fs::remove_file(victim).unwrap();
}

#[test]
fn clean_up_removes_only_this_tools_stale_entries() {
    let dir = cache_dir("cleanup");
    let ours = entry(&dir);
    let stale = dir.join("plugin-00000000000000000000000000000000-0000000000000000.cwasm");
    std::fs::copy(&ours, &stale).unwrap();
    let foreign = dir.join("plugin-another-tool.cwasm");
    std::fs::write(&foreign, "another tool's file").unwrap();
    std::fs::remove_file(&ours).unwrap();
    recompiles_and_serves(&dir);
    assert!(ours.exists());
    assert!(!stale.exists(), "this tool's stale entry is removed");
    assert_eq!(
        std::fs::read_to_string(&foreign).unwrap(),
        "another tool's file",
        "another tool's file stays"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn another_plugin_is_another_key_and_replaces_the_stale_entry() {
    let dir = cache_dir("replace");
    let runtime = load(PLUGIN_WASM, &dir);
    let old = cache::entry_path(&dir, runtime.engine(), PLUGIN_WASM);
    let other = load(HOSTILE_PLUGIN, &dir);
    assert_eq!(other.load_kind(), LoadKind::Compiled);
    let new = cache::entry_path(&dir, other.engine(), HOSTILE_PLUGIN);
    assert_ne!(old, new);
    assert!(!old.exists() && new.exists());
    std::fs::remove_dir_all(dir).unwrap();
}
