//! The 0.2.0 imports, answered by the [`Guard`] from the current calls (so the same
//! bounds hold), converted by the 0.2.0 contract module; a 0.4.0 frame without its id
//! lines, as a 0.2.0 plugin knew frames (`crate::contract::frames`).

use super::Guard;
use crate::contract::injected::marked_injected;
use crate::contract::latest::{Delivered, MessageContent};
use crate::contract::since_v0_2_0::harness::sessions::{inbox, session_query as query};
use crate::contract::since_v0_2_0::{Plugin, surface_index};
use crate::harness::Harness;
use wasmtime::component::{HasSelf, Linker};

super::world_linker!();

impl<H: Harness> query::Host for Guard<H> {
    super::older::older_session_lookups! {
        surface: surface_index,
        message: |m: MessageContent| query::MessageContent {
            text: marked_injected(&m.text, m.injected).into_owned(),
            source: m.source,
        },
    }
}

super::older::older_inbox!(|delivered: Delivered| inbox::Delivered {
    woke: delivered.woke,
    repeat: delivered.repeat,
});
