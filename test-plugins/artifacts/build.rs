//! Builds the test plugins into components in `OUT_DIR` (wasmtime's
//! `crates/test-programs/artifacts` pattern): tests depend on this crate and get the
//! bytes as constants; nothing a user builds contains them.

use anyhow::Result;
use std::path::PathBuf;

fn main() -> Result<()> {
    let root = build_support::workspace_root(2)?;
    let out_dir = PathBuf::from(std::env::var("OUT_DIR")?);
    build_support::rerun_if_changed(&root, &["test-plugins/hostile", "wit", "Cargo.lock"]);
    let core = build_support::build_guest(
        &root,
        &out_dir.join("guest"),
        "hostile-plugin",
        "hostile_plugin",
    )?;
    let component = build_support::to_component(&core)?;
    let path = out_dir.join("hostile-plugin.wasm");
    std::fs::write(&path, component)?;
    println!("cargo:rustc-env=HOSTILE_PLUGIN_WASM={}", path.display());
    if std::env::var_os("CARGO_FEATURE_WASI").is_some() {
        build_support::rerun_if_changed(&root, &["test-plugins/wasip2"]);
        // A wasip2 build is already a component (rustc links it with wasm-component-ld).
        let component = build_support::build_for(
            "wasm32-wasip2",
            &root,
            &out_dir.join("guest"),
            "wasip2-plugin",
            "wasip2_plugin",
        )?;
        println!("cargo:rustc-env=WASIP2_PLUGIN_WASM={}", component.display());
    }
    Ok(())
}
