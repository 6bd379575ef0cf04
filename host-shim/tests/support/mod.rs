//! What the kit's tests over a harness's real files share.

// Each test file uses the part it needs.
#![allow(dead_code)]

use std::path::Path;

/// A copy of the folder `from` at `to`, for a test that writes into what a real
/// harness wrote.
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// One call of `tool` with `arguments` by `caller` through the real plugin over
/// `store`: the answer's text, and the store back (what it kept, to look at or call
/// again). A call id said again is a retry of the same call.
pub fn call_through_plugin<H: host_shim::Harness>(
    store: H,
    caller: &str,
    call_id: &str,
    tool: &str,
    arguments: &str,
) -> (String, H) {
    let runtime: host_shim::Runtime<H> = host_shim::Runtime::with_options(
        host_shim_plugin::PLUGIN_WASM,
        &host_shim::RuntimeOptions::default(),
    )
    .unwrap();
    let request = host_shim::CallRequest {
        caller: caller.to_string(),
        call_id: call_id.to_string(),
        tool: tool.to_string(),
        arguments: arguments.to_string(),
        ..host_shim::CallRequest::default()
    };
    let report = runtime.call(store, &request);
    (report.answer.unwrap().text, report.harness)
}
