//! The 0.3.0 imports, answered by the [`Guard`] from the current calls (so the same
//! bounds hold), converted by the 0.3.0 contract module. A frame a 0.4.0 plugin wrote
//! reaches a 0.3.0 plugin without its id lines (`crate::contract::frames`), so the
//! loop guard of a deployment running both versions still counts its hop.

use super::Guard;
use crate::contract::latest::DeliveryState;
use crate::contract::since_v0_3_0::harness::sessions::{inbox, session_query as query};
use crate::contract::since_v0_3_0::{Plugin, surface_index};
use crate::harness::Harness;
use wasmtime::component::{HasSelf, Linker};

/// Adds the 0.3.0 imports to `linker`, each answered by the [`Guard`] `guard` finds
/// in the store's data.
pub fn add_to_linker<T: 'static, H: Harness>(
    linker: &mut Linker<T>,
    guard: fn(&mut T) -> &mut Guard<H>,
) -> wasmtime::Result<()> {
    Plugin::add_to_linker::<T, HasSelf<Guard<H>>>(linker, guard)
}

impl<H: Harness> query::Host for Guard<H> {
    super::older::older_session_lookups!();

    fn get_surface(
        &mut self,
        id: String,
        lead_chars: u32,
    ) -> wasmtime::Result<Option<query::SurfaceIndex>> {
        Ok(self
            .older_surface_index(&id, lead_chars)?
            .map(surface_index))
    }

    fn get_messages(
        &mut self,
        id: String,
        seqs: Vec<u64>,
    ) -> wasmtime::Result<Vec<Option<query::MessageContent>>> {
        let messages = self.older_messages(&id, &seqs)?;
        Ok((messages.into_iter())
            .map(|m| {
                m.map(|m| query::MessageContent {
                    source: m.source,
                    text: m.text,
                    injected: m.injected,
                })
            })
            .collect())
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

impl<H: Harness> inbox::Host for Guard<H> {
    fn deliver(
        &mut self,
        target: String,
        body: String,
        mode: inbox::DeliveryMode,
        may_wake: bool,
        key: String,
    ) -> wasmtime::Result<Result<inbox::Delivered, inbox::DeliveryRefusal>> {
        let answer = self.deliver_without_ids(target, body, mode.into(), may_wake, key)?;
        Ok(answer
            .map(|delivered| inbox::Delivered {
                woke: delivered.woke,
                repeat: delivered.repeat,
                // Held for its person: waiting, in 0.3.0's words.
                state: match delivered.state {
                    DeliveryState::HandedOver => inbox::DeliveryState::HandedOver,
                    DeliveryState::Waiting | DeliveryState::Held => inbox::DeliveryState::Waiting,
                },
            })
            .map_err(Into::into))
    }
}
