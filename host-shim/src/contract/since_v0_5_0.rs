//! Plugins built against the released 0.5.0 contract (`wit/since_v0.5.0/`), as Zed
//! keeps `since_vX.Y.Z`. 0.6.0 added claims (an import, a tool, the export
//! `check-write` and the refusal `claimed`) and the delivery state `wake-started`, and
//! did not change `session-query`, so that is [`super::latest`]'s own (`with:`; the
//! guard links it under 0.5.0's name), and the inbox and the exported tools convert
//! here. A 0.5.0 plugin makes no claims and is never asked about a write; a wake only
//! started reads to it as a message waiting.

use super::latest as current;
use super::request::CallRequest;
use wasmtime::Store;

wasmtime::component::bindgen!({
    path: "../wit/since_v0.5.0",
    world: "plugin",
    imports: { default: trappable },
    with: {
        "harness:sessions/session-query@0.5.0": crate::contract::latest::harness::sessions::session_query,
    },
});

use exports::harness::sessions::tools::{Refusal, ReplyWait};
use harness::sessions::inbox;

super::convert::keyed_inbox_conversions!(undecided: inbox::DeliveryRefusal::Undecided);

super::convert::refusals_into_current! {
    InvalidArguments, UnknownTool, NotFound, NotMessageable, NotPermitted,
    RefusedByTarget, LoopGuard, RateLimited, ResumeDisabled, EmptyBody, Rejected, Undecided
}

super::convert::older_answers!();

super::convert::older_catalog!(annotated);

super::convert::call_fn!(answer);
