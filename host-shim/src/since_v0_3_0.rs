//! Plugins built against the current contract, 0.3.0 (`wit/plugin.wit`; its bindings
//! and types are [`crate::bindings`]): the imports answered by the [`Guard`], and how
//! the runtime calls the exports. One module per contract version, as Zed keeps
//! `since_vX.Y.Z`; [`crate::plugin`] dispatches between them.

use crate::bindings::harness::sessions::{inbox, session_query as query};
use crate::bindings::{
    Answer, Delivered, DeliveryMode, DeliveryRefusal, InboxCount, MessageContent, Plugin,
    PluginPre, SessionHeader, SessionIndex, SurfaceIndex, Tool,
};
use crate::guard::Guard;
use crate::harness::Harness;
use crate::runtime::CallRequest;
use wasmtime::Store;
use wasmtime::component::{HasSelf, Linker};

/// Adds the 0.3.0 imports to `linker`, each answered by the [`Guard`] `guard` finds
/// in the store's data.
pub fn add_to_linker<T: 'static, H: Harness>(
    linker: &mut Linker<T>,
    guard: fn(&mut T) -> &mut Guard<H>,
) -> wasmtime::Result<()> {
    Plugin::add_to_linker::<T, HasSelf<Guard<H>>>(linker, guard)
}

/// The catalog for the settings.
pub fn catalog<T: 'static>(
    pre: &PluginPre<T>,
    store: &mut Store<T>,
    settings: &str,
) -> wasmtime::Result<Result<Vec<Tool>, String>> {
    let plugin = pre.instantiate(&mut *store)?;
    let tools = plugin
        .harness_sessions_tools()
        .call_catalog(store, settings)?;
    Ok(tools.map(|tools| tools.into_iter().map(Tool::from).collect()))
}

/// One call.
pub fn call<T: 'static>(
    pre: &PluginPre<T>,
    store: &mut Store<T>,
    request: &CallRequest,
) -> wasmtime::Result<Result<Answer, String>> {
    let plugin = pre.instantiate(&mut *store)?;
    plugin.harness_sessions_tools().call_call(
        store,
        &request.caller,
        &request.call_id,
        &request.settings,
        &request.tool,
        &request.arguments,
    )
}

impl<H: Harness> query::Host for Guard<H> {
    fn list_sessions(&mut self) -> wasmtime::Result<SessionIndex> {
        Guard::list_sessions(self)
    }

    fn get_session(&mut self, id: String) -> wasmtime::Result<Option<SessionHeader>> {
        Guard::get_session(self, &id)
    }

    fn get_sessions(&mut self, ids: Vec<String>) -> wasmtime::Result<Vec<Option<SessionHeader>>> {
        Guard::get_sessions(self, &ids)
    }

    fn title_snapshots(&mut self, ids: Vec<String>) -> wasmtime::Result<Vec<Option<String>>> {
        Guard::title_snapshots(self, &ids)
    }

    fn get_surface(
        &mut self,
        id: String,
        lead_chars: u32,
    ) -> wasmtime::Result<Option<SurfaceIndex>> {
        Guard::get_surface(self, &id, lead_chars)
    }

    fn get_messages(
        &mut self,
        id: String,
        seqs: Vec<u64>,
    ) -> wasmtime::Result<Vec<Option<MessageContent>>> {
        Guard::get_messages(self, &id, &seqs)
    }

    fn inbox_status(&mut self, target: String, sender: String) -> wasmtime::Result<InboxCount> {
        Guard::inbox_status(self, &target, &sender)
    }
}

impl<H: Harness> inbox::Host for Guard<H> {
    fn deliver(
        &mut self,
        target: String,
        body: String,
        mode: DeliveryMode,
        may_wake: bool,
        key: String,
    ) -> wasmtime::Result<Result<Delivered, DeliveryRefusal>> {
        Guard::deliver(self, target, body, mode, may_wake, key)
    }
}
