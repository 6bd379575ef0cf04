//! The 0.3.0 imports, answered by the [`Guard`] from the current calls (so the same
//! bounds hold), converted by the 0.3.0 contract module. A frame a 0.4.0 plugin wrote
//! reaches a 0.3.0 plugin without its id lines (`crate::contract::frames`), so the
//! loop guard of a deployment running both versions still counts its hop.

use super::Guard;
use crate::contract::frames::{older_message, older_surface};
use crate::contract::latest::{DeliveryState, MessageIds};
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
    fn list_sessions(&mut self) -> wasmtime::Result<query::SessionIndex> {
        Ok(Guard::list_sessions(self)?.into())
    }

    fn get_session(&mut self, id: String) -> wasmtime::Result<Option<query::SessionHeader>> {
        Ok(Guard::get_session(self, &id)?.map(Into::into))
    }

    fn get_sessions(
        &mut self,
        ids: Vec<String>,
    ) -> wasmtime::Result<Vec<Option<query::SessionHeader>>> {
        let headers = Guard::get_sessions(self, &ids)?;
        Ok(headers.into_iter().map(|h| h.map(Into::into)).collect())
    }

    fn title_snapshots(&mut self, ids: Vec<String>) -> wasmtime::Result<Vec<Option<String>>> {
        Guard::title_snapshots(self, &ids)
    }

    fn get_surface(
        &mut self,
        id: String,
        lead_chars: u32,
    ) -> wasmtime::Result<Option<query::SurfaceIndex>> {
        let Some(index) = Guard::get_surface(self, &id, lead_chars)? else {
            return Ok(None);
        };
        let index = older_surface(index, lead_chars, |seqs| {
            Guard::get_messages(self, &id, seqs)
        })?;
        Ok(Some(surface_index(index)))
    }

    fn get_messages(
        &mut self,
        id: String,
        seqs: Vec<u64>,
    ) -> wasmtime::Result<Vec<Option<query::MessageContent>>> {
        let messages = Guard::get_messages(self, &id, &seqs)?;
        Ok((messages.into_iter())
            .map(|m| {
                m.map(older_message).map(|m| query::MessageContent {
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
        let ids = MessageIds::none();
        let answer = Guard::deliver(self, target, body, mode.into(), may_wake, key, ids)?;
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
