//! Builds the plugin component so that plain `cargo build`/`test`/`run` do everything:
//! a nested cargo builds `guest/` for `wasm32-unknown-unknown` (with its own target
//! directory), `wit-component` wraps the core module into a component whose only
//! imports are the world's, and the result is embedded in the host-shim and copied to
//! `target/plugin/plugin.wasm` for harness authors to pick up. The same step builds
//! `test-plugins/hostile`, the deliberately bad plugin the limit tests load.

use anyhow::{Context, Result, bail};
use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

const WASM_TARGET: &str = "wasm32-unknown-unknown";

fn main() -> Result<()> {
    let manifest_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR")?);
    let root = manifest_dir
        .parent()
        .context("host-shim has no parent directory")?;
    let out_dir = PathBuf::from(env::var("OUT_DIR")?);
    for watched in [
        "guest/src",
        "guest/Cargo.toml",
        "test-plugins",
        "wit",
        "Cargo.lock",
        "Cargo.toml",
        ".cargo/config.toml",
    ] {
        println!("cargo:rerun-if-changed={}", root.join(watched).display());
    }

    ensure_wasm_target()?;
    let modules = build_guests(root)?;
    let component = to_component(&std::fs::read(modules.join("session_tools.wasm"))?)?;
    let hostile = to_component(&std::fs::read(modules.join("hostile_plugin.wasm"))?)?;

    let embedded = out_dir.join("plugin.wasm");
    std::fs::write(&embedded, &component)?;
    let hostile_path = out_dir.join("hostile-plugin.wasm");
    std::fs::write(&hostile_path, &hostile)?;
    println!(
        "cargo:rustc-env=HOSTILE_PLUGIN_WASM={}",
        hostile_path.display()
    );
    let published = root.join("target/plugin/plugin.wasm");
    std::fs::create_dir_all(published.parent().unwrap())?;
    std::fs::write(&published, &component)
        .with_context(|| format!("writing {}", published.display()))?;
    println!("cargo:rustc-env=PLUGIN_WASM={}", embedded.display());
    Ok(())
}

/// rustup does not install the targets listed in `rust-toolchain.toml` when
/// `RUSTUP_AUTO_INSTALL=0`, so add the wasm target here when the sysroot lacks it.
fn ensure_wasm_target() -> Result<()> {
    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let libdir = Command::new(&rustc)
        .args(["--print", "target-libdir", "--target", WASM_TARGET])
        .output()
        .with_context(|| format!("running {rustc} to find the {WASM_TARGET} sysroot"))?;
    let libdir = String::from_utf8_lossy(&libdir.stdout).trim().to_string();
    if !libdir.is_empty() && has_core_rlib(Path::new(&libdir)) {
        return Ok(());
    }
    println!("cargo:warning=installing the {WASM_TARGET} target with rustup");
    let status = Command::new("rustup")
        .args(["target", "add", WASM_TARGET])
        .status();
    match status {
        Ok(status) if status.success() => Ok(()),
        Ok(status) => bail!(
            "`rustup target add {WASM_TARGET}` failed ({status}); install the target and build again"
        ),
        Err(err) => bail!(
            "the {WASM_TARGET} target is missing and rustup could not be run ({err}); \
             install the target for this toolchain and build again"
        ),
    }
}

fn has_core_rlib(libdir: &Path) -> bool {
    std::fs::read_dir(libdir).is_ok_and(|entries| {
        entries.flatten().any(|entry| {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            name.starts_with("libcore-") && name.ends_with(".rlib")
        })
    })
}

/// Builds the guests' core modules with the `guest-release` profile; returns the
/// directory that holds them.
fn build_guests(root: &Path) -> Result<PathBuf> {
    let cargo = env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let target_dir = root.join("target/guest");
    let mut command = Command::new(cargo);
    command
        .current_dir(root)
        .args(["build", "--profile", "guest-release"])
        .args(["--package", "session-tools", "--package", "hostile-plugin"])
        .args(["--target", WASM_TARGET])
        .arg("--target-dir")
        .arg(&target_dir);
    // The outer build's flags and wrappers (clippy, coverage) are for the host, not
    // for the plugin.
    for var in [
        "CARGO_ENCODED_RUSTFLAGS",
        "RUSTFLAGS",
        "RUSTC_WRAPPER",
        "RUSTC_WORKSPACE_WRAPPER",
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_TARGET",
    ] {
        command.env_remove(var);
    }
    let status = command
        .status()
        .context("running the nested cargo build of the guests")?;
    if !status.success() {
        bail!("building the plugins (guest/, test-plugins/) for {WASM_TARGET} failed ({status})");
    }
    Ok(target_dir.join(WASM_TARGET).join("guest-release"))
}

/// Wraps the core module into a component; its imports are exactly the world's.
fn to_component(core: &[u8]) -> Result<Vec<u8>> {
    wit_component::ComponentEncoder::default()
        .module(core)?
        .validate(true)
        .encode()
        .context("encoding the plugin component")
}
