//! Builds the plugin component so that plain `cargo build`/`test`/`run` do everything:
//! a nested cargo builds `guest/` for `wasm32-unknown-unknown` (in `OUT_DIR`), and
//! `wit-component` wraps the core module into a component whose only imports are the
//! world's. The CLI embeds it; `host-shim plugin --out FILE` writes it out for a
//! harness. Nothing is written outside `OUT_DIR`.

use anyhow::Result;
use std::path::PathBuf;

fn main() -> Result<()> {
    let root = build_support::workspace_root(2)?;
    let out_dir = PathBuf::from(std::env::var("OUT_DIR")?);
    build_support::rerun_if_changed(
        &root,
        &[
            "guest/src",
            "guest/Cargo.toml",
            "wit",
            "Cargo.lock",
            "Cargo.toml",
            ".cargo/config.toml",
        ],
    );
    let core = build_support::build_guest(
        &root,
        &out_dir.join("guest"),
        "session-tools",
        "session_tools",
    )?;
    let component = build_support::to_component(&core)?;
    let embedded = out_dir.join("plugin.wasm");
    std::fs::write(&embedded, &component)?;
    println!("cargo:rustc-env=PLUGIN_WASM={}", embedded.display());
    Ok(())
}
