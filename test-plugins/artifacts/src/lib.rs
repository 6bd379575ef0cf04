//! Test components, built by this crate's build script.

/// A plugin of the `plugin` world that misbehaves on purpose; the tool name picks the
/// misbehaviour (see `test-plugins/hostile`).
pub const HOSTILE_PLUGIN: &[u8] = include_bytes!(env!("HOSTILE_PLUGIN_WASM"));
