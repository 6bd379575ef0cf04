//! The contract's wasmtime bindings (`wit/plugin.wit`, `harness:sessions@0.1.0`). Every
//! import is generated trappable: the host's own guard ([`crate::guard`]) ends a call
//! from inside an import when the plugin asks past a host bound. A harness never sees
//! that: it implements [`crate::SessionQuery`] and [`crate::Inbox`], plain traits over
//! the types re-exported here.

wasmtime::component::bindgen!({
    path: "../wit",
    world: "plugin",
    imports: { default: trappable },
    additional_derives: [PartialEq, Eq],
});

pub use exports::harness::sessions::tools::ToolSpec;
pub use harness::sessions::inbox::{Delivered, DeliveryMode, DeliveryRefusal};
pub use harness::sessions::session_query::{
    ContentPart, ModelSurface, Role, SessionHeader, SurfaceMessage,
};
