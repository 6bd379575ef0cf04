//! What the build scripts share: make sure the wasm target is installed, build guest
//! crates of this workspace for it with a nested cargo (its own target directory, the
//! `guest-release` profile), and wrap a core module into a component whose imports are
//! exactly its world's.

use anyhow::{Context, Result, bail};
use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

pub const WASM_TARGET: &str = "wasm32-unknown-unknown";

/// The workspace root, from a member's manifest directory (`CARGO_MANIFEST_DIR`).
pub fn workspace_root(levels_up: usize) -> Result<PathBuf> {
    let mut dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR")?);
    for _ in 0..levels_up {
        dir = dir
            .parent()
            .context("the manifest directory has no parent")?
            .to_path_buf();
    }
    Ok(dir)
}

/// Tells cargo to run the build script again when any of `paths` (relative to the
/// workspace root) changes.
pub fn rerun_if_changed(root: &Path, paths: &[&str]) {
    for path in paths {
        println!("cargo:rerun-if-changed={}", root.join(path).display());
    }
}

/// rustup does not install the targets listed in `rust-toolchain.toml` when
/// `RUSTUP_AUTO_INSTALL=0`, so add a wasm target here when the sysroot lacks it.
pub fn ensure_target(target: &str) -> Result<()> {
    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let libdir = Command::new(&rustc)
        .args(["--print", "target-libdir", "--target", target])
        .output()
        .with_context(|| format!("running {rustc} to find the {target} sysroot"))?;
    let libdir = String::from_utf8_lossy(&libdir.stdout).trim().to_string();
    if !libdir.is_empty() && has_core_rlib(Path::new(&libdir)) {
        return Ok(());
    }
    println!("cargo:warning=installing the {target} target with rustup");
    let status = Command::new("rustup")
        .args(["target", "add", target])
        .status();
    match status {
        Ok(status) if status.success() => Ok(()),
        Ok(status) => bail!(
            "`rustup target add {target}` failed ({status}); install the target and build again"
        ),
        Err(err) => bail!(
            "the {target} target is missing and rustup could not be run ({err}); \
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

/// Builds `package` of the workspace at `root` for `wasm32-unknown-unknown` with the
/// `guest-release` profile into `target_dir`; returns the core module's path
/// (`artifact` is the library's file stem, e.g. `session_tools`).
pub fn build_guest(
    root: &Path,
    target_dir: &Path,
    package: &str,
    artifact: &str,
) -> Result<PathBuf> {
    build_for(WASM_TARGET, root, target_dir, package, artifact)
}

/// [`build_guest`] for another wasm target (`wasm32-wasip2` gives a component).
pub fn build_for(
    target: &str,
    root: &Path,
    target_dir: &Path,
    package: &str,
    artifact: &str,
) -> Result<PathBuf> {
    ensure_target(target)?;
    let cargo = env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut command = Command::new(cargo);
    command
        .current_dir(root)
        .args(["build", "--profile", "guest-release", "--package", package])
        .args(["--target", target])
        .arg("--target-dir")
        .arg(target_dir);
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
        .with_context(|| format!("running the nested cargo build of {package}"))?;
    if !status.success() {
        bail!("building {package} for {target} failed ({status})");
    }
    Ok(target_dir
        .join(target)
        .join("guest-release")
        .join(format!("{artifact}.wasm")))
}

/// Wraps a core module into a component; its imports are exactly the world's.
pub fn to_component(core_module: &Path) -> Result<Vec<u8>> {
    let core =
        std::fs::read(core_module).with_context(|| format!("reading {}", core_module.display()))?;
    wit_component::ComponentEncoder::default()
        .module(&core)?
        .validate(true)
        .encode()
        .context("encoding the component")
}
