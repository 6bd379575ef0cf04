//! The 0.3.0 imports, answered by the [`Guard`] from the current calls (so the same
//! bounds hold), converted by the 0.3.0 contract module. A frame a 0.4.0 plugin wrote
//! reaches a 0.3.0 plugin without its id lines (`crate::contract::frames`), so the
//! loop guard of a deployment running both versions still counts its hop.

use super::Guard;
use crate::contract::latest::{Delivered, DeliveryState, MessageContent};
use crate::contract::since_v0_3_0::harness::sessions::{inbox, session_query as query};
use crate::contract::since_v0_3_0::{Plugin, surface_index};
use crate::harness::Harness;
use wasmtime::component::{HasSelf, Linker};

super::world_linker!();

impl<H: Harness> query::Host for Guard<H> {
    super::older::older_session_lookups! {
        surface: |index, _| surface_index(index),
        message: |m: MessageContent| query::MessageContent {
            source: m.source,
            text: m.text,
            injected: m.injected,
        },
    }

    fn inbox_status(
        &mut self,
        target: String,
        sender: String,
    ) -> wasmtime::Result<query::InboxCount> {
        let count = Guard::inbox_status(self, &target, &sender)?;
        Ok(query::InboxCount {
            waiting: count.waiting,
            handed_over: count.handed_over,
        })
    }
}

super::older::older_inbox!(|delivered: Delivered| inbox::Delivered {
    woke: delivered.woke,
    repeat: delivered.repeat,
    // Held for its person, or its wake only started: waiting, in 0.3.0's words.
    state: match delivered.state {
        DeliveryState::HandedOver => inbox::DeliveryState::HandedOver,
        DeliveryState::Waiting | DeliveryState::Held | DeliveryState::WakeStarted => {
            inbox::DeliveryState::Waiting
        }
    },
});
