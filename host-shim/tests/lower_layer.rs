//! The lower layer, for a harness that already runs wasmtime: it adds the plugin's
//! imports to its own `Linker` over its own store data, and calls the plugin in its
//! own `Store`, with no `Runtime` (as `wasmtime_wasi::p2::add_to_linker_sync` lets a
//! host keep its own engine).

use host_shim::guard::{Guard, KeyLedger};
use host_shim::plugin::{PluginPre, add_to_linker};
use host_shim::{CallRequest, ContractVersion, Corpus, CorpusHost, HostBounds};
use host_shim_plugin::PLUGIN_WASM;
use std::sync::{Arc, Mutex};
use wasmtime::component::{Component, Linker};
use wasmtime::{Engine, Store};

/// The harness's own store data: its state, with the guard around its sessions.
struct MyStoreData {
    guard: Guard<CorpusHost>,
    calls_made: u32,
}

fn guard(data: &mut MyStoreData) -> &mut Guard<CorpusHost> {
    &mut data.guard
}

#[test]
fn a_harness_links_the_plugin_into_its_own_engine_and_store() {
    let engine = Engine::default();
    let component = Component::from_binary(&engine, PLUGIN_WASM).unwrap();
    let mut linker: Linker<MyStoreData> = Linker::new(&engine);
    add_to_linker(&mut linker, ContractVersion::V0_6_0, guard).unwrap();
    let pre = PluginPre::new(
        ContractVersion::V0_6_0,
        linker.instantiate_pre(&component).unwrap(),
    )
    .unwrap();
    let keys: Arc<Mutex<KeyLedger>> = Arc::default();
    let corpus = Arc::new(Corpus::demo());
    let mut store = Store::new(
        &engine,
        MyStoreData {
            guard: Guard::new(
                CorpusHost::new(corpus.clone()),
                corpus.caller().unwrap(),
                keys,
                HostBounds::default(),
                64 << 20,
            ),
            calls_made: 0,
        },
    );
    let request = CallRequest {
        caller: corpus.caller().unwrap().to_string(),
        tool: "sessions_list".into(),
        arguments: r#"{"scope":"all"}"#.into(),
        ..CallRequest::default()
    };
    let answer = pre.call(&mut store, &request).unwrap().unwrap();
    store.data_mut().calls_made += 1;
    host_shim_testkit::has(&answer.text, "considered sessions");
    assert_eq!(answer.refusal, None);
    // The guard counted what the plugin asked of the harness.
    assert_eq!(store.data().guard.stats.header_lists, 1);
    assert_eq!(store.data().calls_made, 1);
    assert_eq!(pre.version(), ContractVersion::V0_6_0);
}
