//! The 0.2.0 imports, answered by the [`Guard`] from the current calls (so the same
//! bounds hold), converted by the 0.2.0 contract module; a 0.4.0 frame without its id
//! lines, as a 0.2.0 plugin knew frames (`crate::contract::frames`).

use super::Guard;
use crate::contract::injected::marked_injected;
use crate::contract::latest::Delivered;
use crate::contract::since_v0_2_0::harness::sessions::{inbox, session_query as query};
use crate::contract::since_v0_2_0::{Plugin, surface_index};
use crate::harness::Harness;
use wasmtime::component::{HasSelf, Linker};

super::world_linker!();

impl<H: Harness> query::Host for Guard<H> {
    super::older::older_session_lookups!();

    fn get_surface(
        &mut self,
        id: String,
        lead_chars: u32,
    ) -> wasmtime::Result<Option<query::SurfaceIndex>> {
        let index = self.older_surface_index(&id, lead_chars)?;
        Ok(index.map(|index| surface_index(index, lead_chars)))
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
                    text: marked_injected(&m.text, m.injected).into_owned(),
                    source: m.source,
                })
            })
            .collect())
    }
}

super::older::older_inbox!(|delivered: Delivered| inbox::Delivered {
    woke: delivered.woke,
    repeat: delivered.repeat,
});
