//! Test components, built by this crate's build script.

/// A plugin of the `plugin` world that misbehaves on purpose; the tool name picks the
/// misbehaviour (see `test-plugins/hostile`).
pub const HOSTILE_PLUGIN: &[u8] = include_bytes!(env!("HOSTILE_PLUGIN_WASM"));

/// A plugin built for `wasm32-wasip2` that imports WASI and tries to read a file, a
/// variable, its arguments and the network (see `test-plugins/wasip2`).
#[cfg(feature = "wasi")]
pub const WASIP2_PLUGIN: &[u8] = include_bytes!(env!("WASIP2_PLUGIN_WASM"));
