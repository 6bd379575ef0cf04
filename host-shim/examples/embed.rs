//! Embedding the plugin in a Rust harness: the harness implements the WIT's two host
//! interfaces for its own state, and host-shim runs each tool call in a fresh sandboxed
//! instance over it. docs/embedding.md shows this file; `cargo test` compiles it and
//! `cargo run -p host-shim --example embed` runs it.

use host_shim::inbox::delivery::{Arriving, Woken};
use host_shim::inbox::{Desk, Recipient};
use host_shim::{
    CallRequest, DeliveryRefusal, InboxCount, MemoryInbox, MessageContent, Runtime, SessionHeader,
    SessionIndex, SessionQuery, SurfaceIndex,
};
use std::collections::BTreeMap;
use std::sync::Arc;

/// A harness's own state: here, a map of sessions, and the delivery desk over an inbox
/// (in memory here; `StateDir` is the durable one a harness's hooks hand over from).
/// The desk gives every harness the same delivery rules: a retried call delivers
/// once, the same words from the same sender within ten minutes are a repeat.
struct MyHarness {
    sessions: BTreeMap<String, (SessionHeader, String)>,
    desk: Desk,
}

impl SessionQuery for MyHarness {
    fn list_sessions(&mut self) -> SessionIndex {
        SessionIndex::of(self.sessions.values().map(|(h, _)| h))
    }

    fn get_session(&mut self, id: &str) -> Option<SessionHeader> {
        self.sessions.get(id).map(|(h, _)| h.clone())
    }

    fn get_sessions(&mut self, ids: &[String]) -> Vec<Option<SessionHeader>> {
        ids.iter().map(|id| self.get_session(id)).collect()
    }

    fn title_snapshots(&mut self, ids: &[String]) -> Vec<Option<String>> {
        ids.iter()
            .map(|id| self.sessions.get(id).map(|(_, title)| title.clone()))
            .collect()
    }

    fn get_surface(&mut self, id: &str, _lead_chars: u32) -> Option<SurfaceIndex> {
        // This harness keeps no messages; one that does pushes each with
        // `SurfaceIndex::push` and answers `get_messages` by seq.
        self.sessions.get(id).map(|_| SurfaceIndex::new(0))
    }

    fn get_messages(&mut self, _id: &str, seqs: &[u64]) -> Vec<Option<MessageContent>> {
        vec![None; seqs.len()]
    }

    fn inbox_status(&mut self, target: &str, sender: &str) -> InboxCount {
        if !self.sessions.contains_key(target) || !self.sessions.contains_key(sender) {
            return InboxCount::NONE;
        }
        let count = self.desk.inbox().count_from(target, sender);
        count.unwrap_or(InboxCount::NONE)
    }
}

/// What this harness adds to the one delivery path: who takes messages, and waking.
/// A `Recipient` is an `Inbox` through that path (its deliveries, a reply awaited in
/// the desk's inbox, a message another machine stored for it).
impl Recipient for MyHarness {
    type Plan = ();

    fn desk(&mut self) -> &mut Desk {
        &mut self.desk
    }

    fn resolve(&mut self, target: &str) -> Result<bool, DeliveryRefusal> {
        match self.sessions.get(target) {
            None => Err(DeliveryRefusal::NotFound),
            Some((header, _)) => Ok(header.live),
        }
    }

    fn wake(&mut self, arriving: &Arriving) -> Woken<()> {
        // A cold session starts with the message (here: it is marked live). The message
        // waits in the inbox for its next turn, which the default `accepted` says.
        if let Some((header, _)) = self.sessions.get_mut(arriving.target) {
            header.live = true;
        }
        Woken {
            woke: !arriving.live,
            plan: (),
        }
    }
}

fn session(id: &str, created_at_ms: i64, live: bool) -> SessionHeader {
    SessionHeader {
        live,
        ..SessionHeader::top_level(id, created_at_ms)
    }
}

fn main() -> anyhow::Result<()> {
    // Once: compile (or load) the plugin and link its two imports.
    // The product plugin; a harness reads its plugin folder's plugin.wasm instead.
    let plugin_bytes = host_shim_plugin::PLUGIN_WASM;
    let runtime: Runtime<MyHarness> =
        Runtime::with_options(plugin_bytes, &host_shim::RuntimeOptions::default())?;

    let mut harness = MyHarness {
        sessions: BTreeMap::new(),
        desk: Desk::new(Arc::new(MemoryInbox::new())),
    };
    for (id, title, live) in [("a", "Parser work", true), ("b", "Docs", false)] {
        harness
            .sessions
            .insert(id.into(), (session(id, 1, live), title.into()));
    }

    // Per tool call: a fresh instance over the harness's state, handed back after.
    let request = CallRequest {
        caller: "a".into(),
        call_id: "toolu_01".into(),
        tool: "sessions_send".into(),
        arguments: r#"{"session_id": "b", "message": "The parser landed."}"#.into(),
        ..CallRequest::default()
    };
    let report = runtime.call(harness, &request);
    let answer = report.answer?;
    // A refusal carries its code: a harness can count it or flag the result.
    println!("{} (refusal: {:?})", answer.text, answer.refusal);
    // The same call retried (same call id) is answered again but delivers nothing.
    let report = runtime.call(report.harness, &request);
    println!("{}", report.answer?.text);
    let waiting = report.harness.desk.inbox().waiting("b")?.messages;
    let bodies: Vec<&str> = waiting.iter().map(|w| w.message.body.as_str()).collect();
    println!("b's inbox: {bodies:?}");
    Ok(())
}
