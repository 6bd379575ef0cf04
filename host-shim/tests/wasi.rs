//! A plugin built by a stock toolchain (`wasm32-wasip2`) imports WASI besides the
//! world. With the `wasi` feature it runs with a deny-all WASI: it can read no file,
//! no variable and no argument, reach no network, and its stdio goes nowhere. Run with
//! `cargo test -p host-shim --features wasi,test-plugin-artifacts/wasi --test wasi`.
#![cfg(feature = "wasi")]

use host_shim::{CallRequest, Corpus, CorpusHost, Runtime};
use host_shim_plugin::PLUGIN_WASM;
use std::sync::Arc;
use test_plugin_artifacts::WASIP2_PLUGIN;

#[test]
fn a_wasip2_plugin_gets_a_wasi_that_grants_nothing() {
    let runtime: Runtime<CorpusHost> = Runtime::from_component(WASIP2_PLUGIN).unwrap();
    assert!(
        runtime
            .wasi_imports()
            .iter()
            .any(|name| name.starts_with("wasi:filesystem/")),
        "{:?}",
        runtime.wasi_imports()
    );
    // SAFETY: setting a variable before any thread reads the environment.
    unsafe { std::env::set_var("HOME", "/root-of-the-host") };
    let request = CallRequest {
        caller: "me".into(),
        tool: "probe".into(),
        ..CallRequest::default()
    };
    let report = runtime.call(CorpusHost::new(Arc::new(Corpus::demo())), &request);
    let text = report.answer.unwrap().text;
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("file: denied"), "{text}");
    assert!(lines[1].starts_with("dir: denied"), "{text}");
    assert!(lines[2].starts_with("cwd file: denied"), "{text}");
    assert!(lines[3].starts_with("HOME: denied"), "{text}");
    assert_eq!(lines[4..6], ["variables: 0", "arguments: 0"], "{text}");
    assert!(lines[6].starts_with("tcp: denied"), "{text}");
}

#[test]
fn our_plugin_still_imports_nothing_but_the_world() {
    let runtime: Runtime<CorpusHost> = Runtime::from_component(PLUGIN_WASM).unwrap();
    assert!(runtime.wasi_imports().is_empty());
}
