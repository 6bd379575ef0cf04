//! Embedding the plugin in a Rust harness: the harness implements the WIT's two host
//! interfaces for its own state, and host-shim runs each tool call in a fresh sandboxed
//! instance over it. The README shows this file; `cargo test` compiles it and
//! `cargo run -p host-shim --example embed` runs it.

use host_shim::{
    AnsweredKeys, CallRequest, Delivered, DeliveryMode, DeliveryRefusal, DeliveryState, Inbox,
    InboxCount, MessageContent, Runtime, SessionHeader, SessionIndex, SessionQuery, SurfaceIndex,
};
use std::collections::BTreeMap;

/// A harness's own state: here, a map of sessions, an inbox per session (sender and
/// body of each message waiting for the session's next turn), and the answer given to
/// each delivery key (so a retried call delivers once).
#[derive(Default)]
struct MyHarness {
    sessions: BTreeMap<String, (SessionHeader, String)>,
    inboxes: BTreeMap<String, Vec<(String, String)>>,
    answered: AnsweredKeys,
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
        let waiting = (self.inboxes.get(target).into_iter().flatten())
            .filter(|(from, _)| from == sender)
            .count();
        // This harness never hands messages over in the example.
        InboxCount {
            waiting: waiting as u32,
            handed_over: 0,
        }
    }
}

impl Inbox for MyHarness {
    fn deliver(
        &mut self,
        target: &str,
        body: &str,
        _mode: DeliveryMode,
        may_wake: bool,
        key: &str,
    ) -> Result<Delivered, DeliveryRefusal> {
        let (sessions, inboxes) = (&mut self.sessions, &mut self.inboxes);
        self.answered.once(key, || match sessions.get_mut(target) {
            None => Err(DeliveryRefusal::NotFound),
            Some((header, _)) if !header.live && !may_wake => Err(DeliveryRefusal::WouldNeedWake),
            Some((header, _)) => {
                let woke = !header.live;
                header.live = true;
                // The call context names the sender; the plugin's key carries it too.
                let sender = host_shim::inbox::key_sender(key).unwrap_or_default();
                inboxes
                    .entry(target.to_string())
                    .or_default()
                    .push((sender.to_string(), body.to_string()));
                // It waits for the target's next turn: say so, not "handed over".
                Ok(Delivered {
                    woke,
                    repeat: false,
                    state: DeliveryState::Waiting,
                })
            }
        })
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
    // The product plugin; a harness reads its plugin folder's plugin.wasm instead.
    let plugin_bytes = host_shim_plugin::PLUGIN_WASM;
    let runtime: Runtime<MyHarness> =
        Runtime::with_options(plugin_bytes, &host_shim::RuntimeOptions::default())?;

    let mut harness = MyHarness::default();
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
    println!("b's inbox: {:?}", report.harness.inboxes["b"]);
    Ok(())
}
