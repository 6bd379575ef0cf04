//! Sizes are measured, not timed, so they may be asserted: the plugin stays within its
//! budget (`plugin.wasm` ≤ 240 KB, with serde_json reading arguments and settings).
//! The budget was 200 KB through contract 0.2.0 (193 KB); 0.3.0's scopes, chains and
//! escape stripping added about 30 KB (docs/performance.md).

use host_shim_plugin::PLUGIN_WASM;

#[test]
fn the_plugin_stays_within_240_kb() {
    assert!(
        PLUGIN_WASM.len() <= 240_000,
        "plugin.wasm is {} bytes; the budget is 240,000",
        PLUGIN_WASM.len()
    );
}
