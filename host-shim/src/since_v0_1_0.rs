//! Plugins built against the released 0.1.0 contract (`wit/since_v0.1.0/`), served over
//! the same harness as current ones, as Zed keeps `since_vX.Y.Z`. Each 0.1.0 import is
//! answered from the current calls through the same [`Guard`] (so the same bounds
//! hold): a listing's headers are the index's sessions fetched in one header batch, a
//! surface is its index with every message fetched whole (injected text marked as for
//! 0.2.0, `since_v0_2_0::marked_injected`), and deliveries carry no key. A
//! 0.1.0 plugin's answers carry no refusal code, and its catalog no annotations.

use crate::bindings::{self as current, ContractVersion};
use crate::guard::Guard;
use crate::harness::Harness;
use crate::runtime::CallRequest;
use crate::since_v0_2_0::marked_injected;
use wasmtime::Store;
use wasmtime::component::{HasSelf, Linker};

wasmtime::component::bindgen!({
    path: "../wit/since_v0.1.0",
    world: "plugin",
    imports: { default: trappable },
});

use harness::sessions::{inbox, session_query as query};

pub const VERSION: ContractVersion = ContractVersion::V0_1_0;

fn header(h: current::SessionHeader) -> query::SessionHeader {
    query::SessionHeader {
        id: h.id,
        created_at_ms: h.created_at_ms,
        live: h.live,
        parent_id: h.parent_id,
        origin: h.origin,
        cwd: h.cwd,
        preset: h.preset,
    }
}

fn role(role: current::Role) -> query::Role {
    match role {
        current::Role::User => query::Role::User,
        current::Role::Assistant => query::Role::Assistant,
        current::Role::System => query::Role::System,
    }
}

/// The index's ids, in entry order; an index whose lengths do not tile its ids gives
/// the ids up to the first that does not fit.
fn index_ids(index: &current::SessionIndex) -> Vec<String> {
    let mut ids = Vec::with_capacity(index.entries.len());
    let mut at = 0usize;
    for entry in &index.entries {
        let end = at.saturating_add(entry.id_len as usize);
        let Some(id) = index.ids.get(at..end) else {
            break;
        };
        ids.push(id.to_string());
        at = end;
    }
    ids
}

impl<H: Harness> query::Host for Guard<H> {
    fn list_sessions(&mut self) -> wasmtime::Result<Vec<query::SessionHeader>> {
        let index = Guard::list_sessions(self)?;
        let headers = Guard::get_sessions(self, &index_ids(&index))?;
        Ok(headers.into_iter().flatten().map(header).collect())
    }

    fn get_session(&mut self, id: String) -> wasmtime::Result<Option<query::SessionHeader>> {
        Ok(Guard::get_session(self, &id)?.map(header))
    }

    fn title_snapshots(&mut self, ids: Vec<String>) -> wasmtime::Result<Vec<Option<String>>> {
        Guard::title_snapshots(self, &ids)
    }

    fn get_surface(&mut self, id: String) -> wasmtime::Result<Option<query::ModelSurface>> {
        let Some(index) = Guard::get_surface(self, &id, 0)? else {
            return Ok(None);
        };
        let seqs: Vec<u64> = index.messages.iter().map(|m| m.seq).collect();
        let contents = Guard::get_messages(self, &id, &seqs)?;
        let messages = index
            .messages
            .into_iter()
            .zip(contents)
            // A message gone between the two calls is gone from this surface.
            .filter_map(|(entry, content)| {
                let content = content?;
                let injected = entry.injected || content.injected;
                let text = match marked_injected(&content.text, injected) {
                    std::borrow::Cow::Owned(marked) => marked,
                    std::borrow::Cow::Borrowed(_) => content.text,
                };
                Some(query::SurfaceMessage {
                    seq: entry.seq,
                    role: role(entry.role),
                    source: content.source,
                    replaced: entry.replaced,
                    parts: if entry.text_chars == 0 && text.is_empty() {
                        Vec::new()
                    } else {
                        vec![query::ContentPart::Text(text)]
                    },
                })
            })
            .collect();
        Ok(Some(query::ModelSurface {
            messages,
            captured_through_seq: index.captured_through_seq,
        }))
    }
}

impl<H: Harness> inbox::Host for Guard<H> {
    fn deliver(
        &mut self,
        target: String,
        body: String,
        mode: inbox::DeliveryMode,
        may_wake: bool,
    ) -> wasmtime::Result<Result<inbox::Delivered, inbox::DeliveryRefusal>> {
        let mode = match mode {
            inbox::DeliveryMode::Queue => current::DeliveryMode::Queue,
            inbox::DeliveryMode::Steer => current::DeliveryMode::Steer,
        };
        let answer = Guard::deliver(self, target, body, mode, may_wake, String::new())?;
        Ok(match answer {
            Ok(delivered) => Ok(inbox::Delivered {
                woke: delivered.woke,
            }),
            Err(current::DeliveryRefusal::NotFound) => Err(inbox::DeliveryRefusal::NotFound),
            Err(current::DeliveryRefusal::WouldNeedWake) => {
                Err(inbox::DeliveryRefusal::WouldNeedWake)
            }
            Err(current::DeliveryRefusal::Rejected(reason)) => {
                Err(inbox::DeliveryRefusal::Rejected(reason))
            }
        })
    }
}

/// A 0.1.0 tool spec in the current shape (no annotations: 0.1.0 has none).
pub fn tool_spec(spec: exports::harness::sessions::tools::ToolSpec) -> current::Tool {
    current::Tool {
        name: spec.name,
        description: spec.description,
        input_schema: spec.input_schema,
        annotations: None,
    }
}

/// Adds the 0.1.0 imports to `linker`, each answered by the [`Guard`] `guard` finds
/// in the store's data.
pub fn add_to_linker<T: 'static, H: Harness>(
    linker: &mut Linker<T>,
    guard: fn(&mut T) -> &mut Guard<H>,
) -> wasmtime::Result<()> {
    Plugin::add_to_linker::<T, HasSelf<Guard<H>>>(linker, guard)
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

/// One call, its answer in the current shape (a 0.1.0 answer has no refusal code and
/// takes no call id).
pub fn call<T: 'static>(
    pre: &PluginPre<T>,
    store: &mut Store<T>,
    request: &CallRequest,
) -> wasmtime::Result<Result<current::Answer, String>> {
    let plugin = pre.instantiate(&mut *store)?;
    let text = plugin.harness_sessions_tools().call_call(
        store,
        &request.caller,
        &request.settings,
        &request.tool,
        &request.arguments,
    )?;
    Ok(text.map(|text| current::Answer {
        text,
        refusal: None,
    }))
}
