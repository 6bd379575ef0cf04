//! Plugins built against the released 0.1.0 contract (`wit/since_v0.1.0/`), served over
//! the same harness as current ones, as Zed keeps `since_vX.Y.Z`. Each 0.1.0 import is
//! answered from the current calls through the same guard (so the same bounds hold;
//! `crate::guard::since_v0_1_0`), converted from [`latest`]: a listing's headers are the
//! index's sessions fetched in one header batch, a surface is its index with every
//! message fetched whole (injected text marked by its prefix, `super::injected`), and
//! deliveries carry no key. A 0.1.0 plugin's answers carry no refusal code, and its
//! catalog no annotations.

use super::latest as current;
use super::request::CallRequest;
use wasmtime::Store;

wasmtime::component::bindgen!({
    path: "../wit/since_v0.1.0",
    world: "plugin",
    imports: { default: trappable },
});

super::convert::same_shape_conversions!(harness::sessions::session_query, harness::sessions::inbox);

/// A 0.1.0 tool spec in the current shape (no annotations: 0.1.0 has none).
pub fn tool_spec(spec: exports::harness::sessions::tools::ToolSpec) -> current::Tool {
    current::Tool {
        name: spec.name,
        description: spec.description,
        input_schema: spec.input_schema,
        annotations: None,
    }
}

/// The catalog, in the current shape.
pub fn catalog<T: 'static>(
    pre: &PluginPre<T>,
    store: &mut Store<T>,
    settings: &str,
) -> wasmtime::Result<Result<Vec<current::Tool>, String>> {
    let plugin = pre.instantiate(&mut *store)?;
    let tools = plugin
        .harness_sessions_tools()
        .call_catalog(store, settings)?;
    Ok(tools.map(|tools| tools.into_iter().map(tool_spec).collect()))
}

// A 0.1.0 answer is text: no refusal code.
super::convert::call_fn!(without call id, |text| current::Answer {
    text,
    refusal: None,
    await_reply: None,
});
