//! Sizes are measured, not timed, so they may be asserted: the plugin stays within its
//! budget (`plugin.wasm` ≤ 200 KB, with serde_json reading arguments and settings).

use host_shim::PLUGIN_WASM;

#[test]
fn the_plugin_stays_within_200_kb() {
    assert!(
        PLUGIN_WASM.len() <= 200_000,
        "plugin.wasm is {} bytes; the budget is 200,000",
        PLUGIN_WASM.len()
    );
}

#[test]
fn the_published_artifact_is_the_embedded_plugin() {
    let published =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/plugin/plugin.wasm");
    assert_eq!(std::fs::read(published).unwrap(), PLUGIN_WASM);
}
