//! The 0.5.0 imports, answered by the [`Guard`]: `session-query` is the current one
//! (the same trait, linked under 0.5.0's name); `inbox.deliver` differs by what 0.5.0
//! has no word for (`wake-started`, converted by the 0.5.0 contract module); 0.5.0
//! imports no claims.

use super::Guard;
use crate::contract::latest::harness::sessions::session_query;
use crate::contract::since_v0_5_0::harness::sessions::inbox;
use crate::harness::Harness;
use crate::inbox::delivery::DeliveryRequest;
use wasmtime::component::{HasSelf, Linker};

super::since_v0_4_0::keyed_inbox_host!("0.5.0");
