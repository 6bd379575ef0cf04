//! Sizes are measured, not timed, so they may be asserted: the plugin stays within its
//! budget (`plugin.wasm` ≤ 200 KB, with serde_json reading arguments and settings).

use host_shim_plugin::PLUGIN_WASM;

#[test]
fn the_plugin_stays_within_200_kb() {
    assert!(
        PLUGIN_WASM.len() <= 200_000,
        "plugin.wasm is {} bytes; the budget is 200,000",
        PLUGIN_WASM.len()
    );
}
