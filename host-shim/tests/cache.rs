//! The compiled-component cache: the first load compiles, later loads do not; a new
//! plugin or a damaged entry means a compile, never a failure.

use host_shim::{CorpusHost, LoadKind, PLUGIN_WASM, Runtime, RuntimeOptions, cache};
use test_plugin_artifacts::HOSTILE_PLUGIN as HOSTILE_PLUGIN_WASM;

fn cache_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("host-shim-cache-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn load(bytes: &[u8], dir: &std::path::Path) -> Runtime<CorpusHost> {
    let options = RuntimeOptions {
        cache_dir: Some(dir.to_path_buf()),
        ..RuntimeOptions::default()
    };
    Runtime::with_options(bytes, &options).unwrap()
}

fn entries(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    names.sort();
    names
}

#[test]
fn the_first_load_compiles_and_later_loads_do_not() {
    let dir = cache_dir("warm");
    let first = load(PLUGIN_WASM, &dir);
    assert_eq!(first.load_kind(), LoadKind::Compiled);
    let second = load(PLUGIN_WASM, &dir);
    assert_eq!(second.load_kind(), LoadKind::FromCache);
    assert_eq!(second.catalog("").unwrap().len(), 3);
    let entry = cache::entry_path(&dir, second.engine(), PLUGIN_WASM);
    assert_eq!(
        entries(&dir),
        [entry.file_name().unwrap().to_string_lossy().to_string()]
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn another_plugin_is_another_key_and_replaces_the_stale_entry() {
    let dir = cache_dir("replace");
    let runtime = load(PLUGIN_WASM, &dir);
    let old = cache::entry_path(&dir, runtime.engine(), PLUGIN_WASM);
    let other = load(HOSTILE_PLUGIN_WASM, &dir);
    assert_eq!(other.load_kind(), LoadKind::Compiled);
    let new = cache::entry_path(&dir, other.engine(), HOSTILE_PLUGIN_WASM);
    assert_ne!(old, new);
    assert!(!old.exists() && new.exists());
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_damaged_entry_is_recompiled() {
    let dir = cache_dir("damaged");
    let runtime = load(PLUGIN_WASM, &dir);
    let entry = cache::entry_path(&dir, runtime.engine(), PLUGIN_WASM);
    std::fs::write(&entry, b"not machine code").unwrap();
    let again = load(PLUGIN_WASM, &dir);
    assert_eq!(again.load_kind(), LoadKind::Compiled);
    assert_eq!(again.catalog("").unwrap().len(), 3);
    assert_eq!(load(PLUGIN_WASM, &dir).load_kind(), LoadKind::FromCache);
    std::fs::remove_dir_all(dir).unwrap();
}
