//! Plugins built against the released 0.3.0 contract (`wit/since_v0.3.0/`), served over
//! the same harness as current ones, as Zed keeps `since_vX.Y.Z`. Each 0.3.0 import is
//! answered from the current calls through the same guard (so the same bounds hold;
//! `crate::guard::since_v0_3_0`), converted here from [`latest`]. What 0.3.0 has no
//! word for is left out or said in its words: a session's inbound and machine, a
//! message's actions, a delivery held for its person (waiting), a target's person
//! refusing messages (the controller's refusal). A frame a 0.4.0 plugin wrote is shown
//! without its id lines (`super::frames`), so a 0.3.0 plugin counts its hop.

use super::latest as current;
use super::request::CallRequest;
use wasmtime::Store;

wasmtime::component::bindgen!({
    path: "../wit/since_v0.3.0",
    world: "plugin",
    imports: { default: trappable },
});

use exports::harness::sessions::tools::Refusal;
use harness::sessions::session_query as query;

super::convert::same_shape_conversions!(harness::sessions::session_query, harness::sessions::inbox);
super::convert::index_conversions!(harness::sessions::session_query);

/// A surface index in 0.3.0's shape (the frames' leads and lengths already without
/// their id lines).
pub(crate) fn surface_index(index: current::SurfaceIndex) -> query::SurfaceIndex {
    query::SurfaceIndex {
        messages: (index.messages.into_iter())
            .map(|m| query::MessageEntry {
                seq: m.seq,
                role: m.role.into(),
                replaced: m.replaced,
                injected: m.injected,
                source_lead_len: m.source_lead_len,
                text_lead_len: m.text_lead_len,
                text_chars: m.text_chars,
            })
            .collect(),
        source_leads: index.source_leads,
        text_leads: index.text_leads,
        captured_through_seq: index.captured_through_seq,
    }
}

super::convert::refusals_into_current! {
    InvalidArguments, UnknownTool, NotFound, NotMessageable, NotPermitted, LoopGuard,
    ResumeDisabled, EmptyBody, Rejected
}

super::convert::older_catalog!(annotated);

// A 0.3.0 send never awaits a reply.
super::convert::call_fn!(
    |answer: exports::harness::sessions::tools::Answer| current::Answer {
        text: answer.text,
        refusal: answer.refusal.map(Into::into),
        await_reply: None,
    }
);
