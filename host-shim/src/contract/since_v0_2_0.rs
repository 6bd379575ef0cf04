//! Plugins built against the released 0.2.0 contract (`wit/since_v0.2.0/`), served over
//! the same harness as current ones, as Zed keeps `since_vX.Y.Z`. Each 0.2.0 import is
//! answered from the current calls through the same guard (so the same bounds hold;
//! `crate::guard::since_v0_2_0`), converted here from [`latest`]; what 0.2.0 has no word for is left
//! out: a delivery's state, the inbox counts and a catalog's annotations. A 0.2.0
//! plugin knows injected text only by its prefix (`super::injected`).

use super::injected::{WRAPPER_CLOSE, WRAPPER_OPEN, marked_injected};
use super::latest as current;
use super::request::CallRequest;
use std::borrow::Cow;
use wasmtime::Store;

wasmtime::component::bindgen!({
    path: "../wit/since_v0.2.0",
    world: "plugin",
    imports: { default: trappable },
});

use exports::harness::sessions::tools::Refusal;
use harness::sessions::session_query as query;

super::convert::same_shape_conversions!(harness::sessions::session_query, harness::sessions::inbox);
super::convert::index_conversions!(harness::sessions::session_query);

/// The first `chars` chars of `text`.
fn lead(text: &str, chars: usize) -> &str {
    text.char_indices()
        .nth(chars)
        .map_or(text, |(end, _)| &text[..end])
}

/// A surface index in 0.2.0's shape, each injected message's lead and length as its
/// marked text has them (decided on the lead, as the plugin decides).
pub(crate) fn surface_index(index: current::SurfaceIndex, lead_chars: u32) -> query::SurfaceIndex {
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
            role: entry.role.into(),
            replaced: entry.replaced,
            source_lead_len: entry.source_lead_len,
            text_lead_len: text_lead.len() as u32,
            text_chars,
        });
    }
    out
}

super::convert::refusals_into_current! {
    InvalidArguments, UnknownTool, NotFound, NotMessageable, ResumeDisabled, EmptyBody,
    Rejected
}

// No annotations: 0.2.0 has none.
super::convert::older_catalog!(bare);

super::convert::call_fn!(
    |answer: exports::harness::sessions::tools::Answer| current::Answer {
        text: answer.text,
        refusal: answer.refusal.map(Into::into),
        await_reply: None,
    }
);

#[cfg(test)]
mod tests {
    use super::*;

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
