//! Plugins built against the released 0.4.0 contract (`wit/since_v0.4.0/`), as Zed
//! keeps `since_vX.Y.Z`. 0.5.0 changed only what a delivery and a call may answer
//! (`undecided`), so `session-query` is [`super::latest`]'s own (`with:`; the guard links it
//! under 0.4.0's name), and only the inbox and the exported tools convert here. 0.4.0
//! has no word for an undecided write: it reads as the controller's refusal, whose
//! reason says the message may still arrive.

use super::latest as current;
use super::request::CallRequest;
use wasmtime::Store;

wasmtime::component::bindgen!({
    path: "../wit/since_v0.4.0",
    world: "plugin",
    imports: { default: trappable },
    with: {
        "harness:sessions/session-query@0.4.0": crate::contract::latest::harness::sessions::session_query,
    },
});

use exports::harness::sessions::tools::{Refusal, ReplyWait};
use harness::sessions::inbox;

super::convert::keyed_inbox_conversions!(undecided: |why: String| inbox::DeliveryRefusal::Rejected(
    super::convert::undecided_in_older_words(&why)
));

super::convert::refusals_into_current! {
    InvalidArguments, UnknownTool, NotFound, NotMessageable, NotPermitted,
    RefusedByTarget, LoopGuard, RateLimited, ResumeDisabled, EmptyBody, Rejected
}

super::convert::older_answers!();

super::convert::older_catalog!(annotated);

super::convert::call_fn!(answer);
