//! The session-tools plugin, `plugin.wasm`, as bytes: this crate's build script builds
//! `guest/` for `wasm32-unknown-unknown` and wraps it into a component whose only
//! imports are the world's. The CLI embeds it; a harness that embeds the library
//! passes these bytes (or its own plugin's) to `host_shim::Runtime::with_options`.

/// The plugin component built from this workspace's `guest/`.
pub const PLUGIN_WASM: &[u8] = include_bytes!(env!("PLUGIN_WASM"));
