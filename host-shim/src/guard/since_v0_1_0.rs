//! The 0.1.0 imports, answered by the [`Guard`] from the current calls (so the same
//! bounds hold): a listing's headers are the index's sessions fetched in one header
//! batch, a surface is its index with every message fetched whole.

use super::Guard;
use crate::contract::frames::older_message;
use crate::contract::injected::marked_injected;
use crate::contract::latest::{self as current, Delivered};
use crate::contract::since_v0_1_0::Plugin;
use crate::contract::since_v0_1_0::harness::sessions::{inbox, session_query as query};
use crate::harness::Harness;
use wasmtime::component::{HasSelf, Linker};

/// The index's ids, in entry order; an index whose lengths do not tile its ids gives
/// the ids up to the first that does not fit.
fn index_ids(index: &current::SessionIndex) -> Vec<String> {
    let mut ids = Vec::with_capacity(index.entries.len());
    let mut at = 0usize;
    for entry in &index.entries {
        let end = at.saturating_add(entry.id_len as usize);
        let Some(id) = index.ids.get(at..end) else {
            break;
        };
        ids.push(id.to_string());
        at = end;
    }
    ids
}

super::world_linker!();

impl<H: Harness> query::Host for Guard<H> {
    fn list_sessions(&mut self) -> wasmtime::Result<Vec<query::SessionHeader>> {
        let index = Guard::list_sessions(self)?;
        let headers = Guard::get_sessions(self, &index_ids(&index))?;
        Ok(headers.into_iter().flatten().map(Into::into).collect())
    }

    fn get_session(&mut self, id: String) -> wasmtime::Result<Option<query::SessionHeader>> {
        self.older_header(&id)
    }

    fn title_snapshots(&mut self, ids: Vec<String>) -> wasmtime::Result<Vec<Option<String>>> {
        Guard::title_snapshots(self, &ids)
    }

    fn get_surface(&mut self, id: String) -> wasmtime::Result<Option<query::ModelSurface>> {
        let Some(index) = Guard::get_surface(self, &id, 0)? else {
            return Ok(None);
        };
        let seqs: Vec<u64> = index.messages.iter().map(|m| m.seq).collect();
        let contents = Guard::get_messages(self, &id, &seqs)?;
        let messages = index
            .messages
            .into_iter()
            .zip(contents)
            // A message gone between the two calls is gone from this surface.
            .filter_map(|(entry, content)| {
                let content = older_message(content?);
                let injected = entry.injected || content.injected;
                let text = match marked_injected(&content.text, injected) {
                    std::borrow::Cow::Owned(marked) => marked,
                    std::borrow::Cow::Borrowed(_) => content.text,
                };
                Some(query::SurfaceMessage {
                    seq: entry.seq,
                    role: entry.role.into(),
                    source: content.source,
                    replaced: entry.replaced,
                    parts: if entry.text_chars == 0 && text.is_empty() {
                        Vec::new()
                    } else {
                        vec![query::ContentPart::Text(text)]
                    },
                })
            })
            .collect();
        Ok(Some(query::ModelSurface {
            messages,
            captured_through_seq: index.captured_through_seq,
        }))
    }
}

// 0.1.0 has no delivery key: every send delivers.
super::older::older_inbox!(without key, |delivered: Delivered| inbox::Delivered {
    woke: delivered.woke,
});
