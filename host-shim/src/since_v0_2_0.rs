//! Plugins built against the released 0.2.0 contract (`wit/since_v0.2.0/`), served over
//! the same harness as 0.3.0 ones, as Zed keeps `since_vX.Y.Z`. Each 0.2.0 import is
//! answered from the current calls through the same [`Guard`] (so the same bounds
//! hold); what 0.2.0 has no word for is left out: a delivery's state, the inbox counts
//! and a catalog's annotations. A 0.2.0 plugin knows injected text only by its prefix,
//! so a message the harness says it injected reaches it wrapped in `<system-reminder>`
//! unless it already starts with a prefix the plugin knows (`marked_injected`): it
//! hides and marks it as it did when the Claude store wrapped such text itself.

use crate::bindings::{self as current, ContractVersion};
use crate::guard::Guard;
use crate::harness::Harness;
use crate::runtime::CallRequest;
use std::borrow::Cow;
use wasmtime::Store;
use wasmtime::component::{HasSelf, Linker};

wasmtime::component::bindgen!({
    path: "../wit/since_v0.2.0",
    world: "plugin",
    imports: { default: trappable },
});

use exports::harness::sessions::tools::Refusal;
use harness::sessions::{inbox, session_query as query};

pub const VERSION: ContractVersion = ContractVersion::V0_2_0;

/// The prefixes (after leading white space) by which plugins before 0.3.0 know a
/// harness-injected message.
const KNOWN_PREFIXES: &[&str] = &[
    "<system-reminder>",
    "[MNEMON]",
    "MNEMON RUNTIME MEMORY SNAPSHOT",
    "Current runtime context.",
];
const WRAPPER_OPEN: &str = "<system-reminder>\n";
const WRAPPER_CLOSE: &str = "\n</system-reminder>";

/// A message's text as a plugin before 0.3.0 must see it to know it was injected:
/// wrapped when the harness says so and no known prefix says it already. A message
/// with no text stays empty (the WIT: an empty wrapper is no message text).
pub(crate) fn marked_injected(text: &str, injected: bool) -> Cow<'_, str> {
    if injected
        && !text.is_empty()
        && !KNOWN_PREFIXES
            .iter()
            .any(|p| text.trim_start().starts_with(p))
    {
        Cow::Owned(format!("{WRAPPER_OPEN}{text}{WRAPPER_CLOSE}"))
    } else {
        Cow::Borrowed(text)
    }
}

fn header(h: current::SessionHeader) -> query::SessionHeader {
    query::SessionHeader {
        id: h.id,
        created_at_ms: h.created_at_ms,
        live: h.live,
        parent_id: h.parent_id,
        origin: h.origin,
        cwd: h.cwd,
        preset: h.preset,
    }
}

fn role(role: current::Role) -> query::Role {
    match role {
        current::Role::User => query::Role::User,
        current::Role::Assistant => query::Role::Assistant,
        current::Role::System => query::Role::System,
    }
}

/// The first `chars` chars of `text`.
fn lead(text: &str, chars: usize) -> &str {
    text.char_indices()
        .nth(chars)
        .map_or(text, |(end, _)| &text[..end])
}

/// A surface index in 0.2.0's shape, each injected message's lead and length as its
/// marked text has them (decided on the lead, as the plugin decides).
fn surface_index(index: current::SurfaceIndex, lead_chars: u32) -> query::SurfaceIndex {
    let mut out = query::SurfaceIndex {
        messages: Vec::with_capacity(index.messages.len()),
        source_leads: index.source_leads,
        text_leads: String::with_capacity(index.text_leads.len()),
        captured_through_seq: index.captured_through_seq,
    };
    let mut at = 0usize;
    for entry in index.messages {
        let end = at.saturating_add(entry.text_lead_len as usize);
        // A harness whose lengths do not tile its leads gets its index passed on as
        // it is, for the plugin to refuse.
        let text_lead = index.text_leads.get(at..end).unwrap_or("");
        at = end;
        let whole = entry.text_chars <= lead_chars;
        let marked = marked_injected(text_lead, entry.injected && entry.text_chars > 0);
        let (text_lead, text_chars) = match marked {
            Cow::Borrowed(kept) => (kept.to_string(), entry.text_chars),
            Cow::Owned(_) => {
                let added = (WRAPPER_OPEN.len() + WRAPPER_CLOSE.len()) as u32;
                let marked = if whole {
                    format!("{WRAPPER_OPEN}{text_lead}{WRAPPER_CLOSE}")
                } else {
                    format!("{WRAPPER_OPEN}{text_lead}")
                };
                let cut = lead(&marked, lead_chars as usize).to_string();
                (cut, entry.text_chars.saturating_add(added))
            }
        };
        out.text_leads.push_str(&text_lead);
        out.messages.push(query::MessageEntry {
            seq: entry.seq,
            role: role(entry.role),
            replaced: entry.replaced,
            source_lead_len: entry.source_lead_len,
            text_lead_len: text_lead.len() as u32,
            text_chars,
        });
    }
    out
}

impl<H: Harness> query::Host for Guard<H> {
    fn list_sessions(&mut self) -> wasmtime::Result<query::SessionIndex> {
        let index = Guard::list_sessions(self)?;
        Ok(query::SessionIndex {
            ids: index.ids,
            entries: (index.entries.into_iter())
                .map(|e| query::SessionEntry {
                    id_len: e.id_len,
                    created_at_ms: e.created_at_ms,
                    live: e.live,
                    subagent: e.subagent,
                })
                .collect(),
        })
    }

    fn get_session(&mut self, id: String) -> wasmtime::Result<Option<query::SessionHeader>> {
        Ok(Guard::get_session(self, &id)?.map(header))
    }

    fn get_sessions(
        &mut self,
        ids: Vec<String>,
    ) -> wasmtime::Result<Vec<Option<query::SessionHeader>>> {
        let headers = Guard::get_sessions(self, &ids)?;
        Ok(headers.into_iter().map(|h| h.map(header)).collect())
    }

    fn title_snapshots(&mut self, ids: Vec<String>) -> wasmtime::Result<Vec<Option<String>>> {
        Guard::title_snapshots(self, &ids)
    }

    fn get_surface(
        &mut self,
        id: String,
        lead_chars: u32,
    ) -> wasmtime::Result<Option<query::SurfaceIndex>> {
        let index = Guard::get_surface(self, &id, lead_chars)?;
        Ok(index.map(|index| surface_index(index, lead_chars)))
    }

    fn get_messages(
        &mut self,
        id: String,
        seqs: Vec<u64>,
    ) -> wasmtime::Result<Vec<Option<query::MessageContent>>> {
        let messages = Guard::get_messages(self, &id, &seqs)?;
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

impl<H: Harness> inbox::Host for Guard<H> {
    fn deliver(
        &mut self,
        target: String,
        body: String,
        mode: inbox::DeliveryMode,
        may_wake: bool,
        key: String,
    ) -> wasmtime::Result<Result<inbox::Delivered, inbox::DeliveryRefusal>> {
        let mode = match mode {
            inbox::DeliveryMode::Queue => current::DeliveryMode::Queue,
            inbox::DeliveryMode::Steer => current::DeliveryMode::Steer,
        };
        let answer = Guard::deliver(self, target, body, mode, may_wake, key)?;
        Ok(match answer {
            Ok(delivered) => Ok(inbox::Delivered {
                woke: delivered.woke,
                repeat: delivered.repeat,
            }),
            Err(current::DeliveryRefusal::NotFound) => Err(inbox::DeliveryRefusal::NotFound),
            Err(current::DeliveryRefusal::WouldNeedWake) => {
                Err(inbox::DeliveryRefusal::WouldNeedWake)
            }
            Err(current::DeliveryRefusal::Rejected(reason)) => {
                Err(inbox::DeliveryRefusal::Rejected(reason))
            }
        })
    }
}

fn refusal(refusal: Refusal) -> current::Refusal {
    match refusal {
        Refusal::InvalidArguments => current::Refusal::InvalidArguments,
        Refusal::UnknownTool => current::Refusal::UnknownTool,
        Refusal::NotFound => current::Refusal::NotFound,
        Refusal::NotMessageable => current::Refusal::NotMessageable,
        Refusal::ResumeDisabled => current::Refusal::ResumeDisabled,
        Refusal::EmptyBody => current::Refusal::EmptyBody,
        Refusal::Rejected => current::Refusal::Rejected,
    }
}

/// Adds the 0.2.0 imports to `linker`, each answered by the [`Guard`] `guard` finds
/// in the store's data.
pub fn add_to_linker<T: 'static, H: Harness>(
    linker: &mut Linker<T>,
    guard: fn(&mut T) -> &mut Guard<H>,
) -> wasmtime::Result<()> {
    Plugin::add_to_linker::<T, HasSelf<Guard<H>>>(linker, guard)
}

/// The catalog, in the current shape (no annotations: 0.2.0 has none).
pub fn catalog<T: 'static>(
    pre: &PluginPre<T>,
    store: &mut Store<T>,
    settings: &str,
) -> wasmtime::Result<Result<Vec<current::Tool>, String>> {
    let plugin = pre.instantiate(&mut *store)?;
    let tools = plugin
        .harness_sessions_tools()
        .call_catalog(store, settings)?;
    Ok(tools.map(|tools| {
        (tools.into_iter())
            .map(|spec| current::Tool {
                name: spec.name,
                description: spec.description,
                input_schema: spec.input_schema,
                annotations: None,
            })
            .collect()
    }))
}

/// One call, its answer in the current shape.
pub fn call<T: 'static>(
    pre: &PluginPre<T>,
    store: &mut Store<T>,
    request: &CallRequest,
) -> wasmtime::Result<Result<current::Answer, String>> {
    let plugin = pre.instantiate(&mut *store)?;
    let answer = plugin.harness_sessions_tools().call_call(
        store,
        &request.caller,
        &request.call_id,
        &request.settings,
        &request.tool,
        &request.arguments,
    )?;
    Ok(answer.map(|answer| current::Answer {
        text: answer.text,
        refusal: answer.refusal.map(refusal),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn injected_text_is_wrapped_unless_a_known_prefix_marks_it() {
        assert_eq!(
            marked_injected("lint passed", true),
            "<system-reminder>\nlint passed\n</system-reminder>"
        );
        assert_eq!(marked_injected("  [MNEMON] x", true), "  [MNEMON] x");
        assert_eq!(marked_injected("a person", false), "a person");
        // No text: nothing to wrap, as the index says (no empty block).
        assert_eq!(marked_injected("", true), "");
    }

    #[test]
    fn an_index_gives_marked_leads_and_lengths() {
        let mut index = current::SurfaceIndex::new(9);
        let entry = |seq, injected| current::MessageEntry {
            seq,
            role: current::Role::User,
            replaced: false,
            injected,
            source_lead_len: 0,
            text_lead_len: 0,
            text_chars: 0,
        };
        let long = "x".repeat(50);
        for (seq, text, injected) in [
            (1, "short", true),
            (2, long.as_str(), true),
            (3, "plain", false),
        ] {
            let mut e = entry(seq, injected);
            e.text_chars = text.chars().count() as u32;
            index.push(e, "user", text, 40);
        }
        let old = surface_index(index, 40);
        let wrapped = "<system-reminder>\nshort\n</system-reminder>";
        assert_eq!(old.messages[0].text_chars, wrapped.len() as u32);
        assert_eq!(old.messages[1].text_chars, 50 + 37);
        assert_eq!(old.messages[2].text_chars, 5);
        let leads: Vec<u32> = old.messages.iter().map(|m| m.text_lead_len).collect();
        assert_eq!(leads, [40, 40, 5]);
        assert!(
            old.text_leads
                .starts_with("<system-reminder>\nshort\n</system-remi")
        );
        assert!(old.text_leads.ends_with("xxxplain"));
    }
}
