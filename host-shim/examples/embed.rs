//! Embedding the plugin in a Rust harness: the harness implements the WIT's two host
//! interfaces for its own state, and host-shim runs each tool call in a fresh sandboxed
//! instance over it. The README shows this file; `cargo test` compiles it and
//! `cargo run -p host-shim --example embed` runs it.

use host_shim::{
    CallRequest, Delivered, DeliveryMode, DeliveryRefusal, Inbox, ModelSurface, Runtime,
    SessionHeader, SessionQuery,
};
use std::collections::BTreeMap;

/// A harness's own state: here, a map of sessions and an inbox per session.
#[derive(Default)]
struct MyHarness {
    sessions: BTreeMap<String, (SessionHeader, String)>,
    inboxes: BTreeMap<String, Vec<String>>,
}

impl SessionQuery for MyHarness {
    fn list_sessions(&mut self) -> Vec<SessionHeader> {
        self.sessions.values().map(|(h, _)| h.clone()).collect()
    }

    fn get_session(&mut self, id: &str) -> Option<SessionHeader> {
        self.sessions.get(id).map(|(h, _)| h.clone())
    }

    fn title_snapshots(&mut self, ids: &[String]) -> Vec<Option<String>> {
        ids.iter()
            .map(|id| self.sessions.get(id).map(|(_, title)| title.clone()))
            .collect()
    }

    fn get_surface(&mut self, id: &str) -> Option<ModelSurface> {
        self.sessions.get(id).map(|_| ModelSurface {
            messages: Vec::new(),
            captured_through_seq: 0,
        })
    }
}

impl Inbox for MyHarness {
    fn deliver(
        &mut self,
        target: &str,
        body: &str,
        _mode: DeliveryMode,
        may_wake: bool,
    ) -> Result<Delivered, DeliveryRefusal> {
        let Some((header, _)) = self.sessions.get_mut(target) else {
            return Err(DeliveryRefusal::NotFound);
        };
        let woke = !header.live;
        if woke && !may_wake {
            return Err(DeliveryRefusal::WouldNeedWake);
        }
        header.live = true;
        self.inboxes
            .entry(target.to_string())
            .or_default()
            .push(body.to_string());
        Ok(Delivered { woke })
    }
}

fn session(id: &str, created_at_ms: i64, live: bool) -> SessionHeader {
    SessionHeader {
        id: id.to_string(),
        created_at_ms,
        live,
        parent_id: None,
        origin: "user".to_string(),
        cwd: None,
        preset: None,
    }
}

fn main() -> anyhow::Result<()> {
    // Once: compile (or load) the plugin and link its two imports.
    let runtime: Runtime<MyHarness> = Runtime::new()?;

    let mut harness = MyHarness::default();
    for (id, title, live) in [("a", "Parser work", true), ("b", "Docs", false)] {
        harness
            .sessions
            .insert(id.into(), (session(id, 1, live), title.into()));
    }

    // Per tool call: a fresh instance over the harness's state, handed back after.
    let request = CallRequest {
        caller: "a".into(),
        tool: "sessions_send".into(),
        arguments: r#"{"session_id": "b", "message": "The parser landed."}"#.into(),
        ..CallRequest::default()
    };
    let report = runtime.call(harness, &request);
    println!("{}", report.answer?);
    let harness = report.harness;
    println!("b's inbox: {:?}", harness.inboxes["b"]);
    Ok(())
}
