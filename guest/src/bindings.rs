//! The thin edge between the component model and the tool core: wit-bindgen types in,
//! core types out, and back. No tool logic lives here.

wit_bindgen::generate!({
    path: "../wit",
    world: "plugin",
});

use crate::host;
use exports::harness::sessions::tools::{Guest, ToolSpec};
use harness::sessions::{inbox, session_query as query};

/// The imports of the world, as the core's host traits.
struct Imports;

fn header(h: query::SessionHeader) -> host::SessionHeader {
    host::SessionHeader {
        id: h.id,
        created_at_ms: h.created_at_ms,
        live: h.live,
        parent_id: h.parent_id,
        origin: h.origin,
        cwd: h.cwd,
        preset: h.preset,
    }
}

fn message(m: query::SurfaceMessage) -> host::SurfaceMessage {
    host::SurfaceMessage {
        seq: m.seq,
        role: match m.role {
            query::Role::User => host::Role::User,
            query::Role::Assistant => host::Role::Assistant,
            query::Role::System => host::Role::System,
        },
        source: m.source,
        replaced: m.replaced,
        parts: m
            .parts
            .into_iter()
            .map(|part| match part {
                query::ContentPart::Text(t) => host::ContentPart::Text(t),
                query::ContentPart::Reasoning => host::ContentPart::Reasoning,
                query::ContentPart::ToolCall => host::ContentPart::ToolCall,
                query::ContentPart::ToolOutput => host::ContentPart::ToolOutput,
            })
            .collect(),
    }
}

impl host::SessionQuery for Imports {
    fn list_sessions(&mut self) -> Vec<host::SessionHeader> {
        query::list_sessions().into_iter().map(header).collect()
    }

    fn get_session(&mut self, id: &str) -> Option<host::SessionHeader> {
        query::get_session(id).map(header)
    }

    fn title_snapshots(&mut self, ids: &[String]) -> Vec<Option<String>> {
        query::title_snapshots(ids)
    }

    fn get_surface(&mut self, id: &str) -> Option<host::ModelSurface> {
        query::get_surface(id).map(|surface| host::ModelSurface {
            messages: surface.messages.into_iter().map(message).collect(),
            captured_through_seq: surface.captured_through_seq,
        })
    }
}

impl host::Inbox for Imports {
    fn deliver(
        &mut self,
        target: &str,
        body: &str,
        mode: host::DeliveryMode,
        may_wake: bool,
    ) -> Result<host::Delivered, host::DeliveryRefusal> {
        let mode = match mode {
            host::DeliveryMode::Queue => inbox::DeliveryMode::Queue,
            host::DeliveryMode::Steer => inbox::DeliveryMode::Steer,
        };
        match inbox::deliver(target, body, mode, may_wake) {
            Ok(delivered) => Ok(host::Delivered {
                woke: delivered.woke,
            }),
            Err(inbox::DeliveryRefusal::NotFound) => Err(host::DeliveryRefusal::NotFound),
            Err(inbox::DeliveryRefusal::WouldNeedWake) => Err(host::DeliveryRefusal::WouldNeedWake),
            Err(inbox::DeliveryRefusal::Rejected(reason)) => {
                Err(host::DeliveryRefusal::Rejected(reason))
            }
        }
    }
}

struct Plugin;

impl Guest for Plugin {
    fn catalog(settings: String) -> Result<Vec<ToolSpec>, String> {
        Ok(crate::catalog_for(&settings)?
            .into_iter()
            .map(|tool| ToolSpec {
                name: tool.name.to_string(),
                description: tool.description.to_string(),
                input_schema: tool.input_schema,
            })
            .collect())
    }

    fn call(
        caller_id: String,
        settings: String,
        tool_name: String,
        arguments: String,
    ) -> Result<String, String> {
        crate::call_with_settings(&mut Imports, &caller_id, &settings, &tool_name, &arguments)
    }
}

export!(Plugin);
