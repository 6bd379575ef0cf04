//! JSON, read one way for every input the host takes: MCP requests, each hook's stdin,
//! `call`'s arguments, corpus and settings files, and the harnesses' own records.
//!
//! JSON may hold a `\uXXXX` escape of a lone UTF-16 surrogate (JavaScript's
//! `JSON.stringify` writes a lone surrogate of a string that way): legal JSON, but no
//! Unicode text. serde_json refuses such a string outright, which would fail a hook on
//! legal input or drop a line of a transcript. Here such a document is read with each
//! lone surrogate as U+FFFD, and the reader is told ([`Lenient::not_unicode`]): text
//! that travels on (a tool call's arguments) goes on as it was written, so the plugin
//! refuses it naming the argument; what a model sends is never altered on its way to a
//! session. Host data shown to a model (a transcript's line) reads with U+FFFD, as a
//! harness would show it.

use serde::de::DeserializeOwned;
use std::borrow::Cow;

/// A document read, and whether any of its text was not Unicode (a lone surrogate,
/// read as U+FFFD).
#[derive(Debug)]
pub struct Lenient<T> {
    pub value: T,
    pub not_unicode: bool,
}

/// Reads `bytes` as JSON of type `T`; a lone surrogate escape reads as U+FFFD.
pub fn from_slice<T: DeserializeOwned>(bytes: &[u8]) -> serde_json::Result<T> {
    read(bytes).map(|read| read.value)
}

/// [`from_slice`] for text.
pub fn from_str<T: DeserializeOwned>(text: &str) -> serde_json::Result<T> {
    from_slice(text.as_bytes())
}

/// Reads `bytes` as JSON of type `T`, saying whether it held a lone surrogate escape.
/// The error is serde_json's for the document as written.
pub fn read<T: DeserializeOwned>(bytes: &[u8]) -> serde_json::Result<Lenient<T>> {
    let err = match serde_json::from_slice(bytes) {
        Ok(value) => {
            return Ok(Lenient {
                value,
                not_unicode: false,
            });
        }
        Err(err) => err,
    };
    // Only a document that failed is looked at again, and only when it has one.
    match lone_surrogates_replaced(bytes) {
        Cow::Owned(replaced) => serde_json::from_slice(&replaced)
            .map(|value| Lenient {
                value,
                not_unicode: true,
            })
            .map_err(|_| err),
        Cow::Borrowed(_) => Err(err),
    }
}

/// `bytes` with each `\uXXXX` escape of a lone UTF-16 surrogate written `\ufffd` (a
/// pair stays a pair); itself when it has none. Only escapes count: `\\u…` is an
/// escaped backslash and a `u`.
pub fn lone_surrogates_replaced(bytes: &[u8]) -> Cow<'_, [u8]> {
    let unit_at = |at: usize| -> Option<u16> {
        let hex = bytes.get(at + 2..at + 6)?;
        let hex = std::str::from_utf8(hex).ok()?;
        (bytes.get(at + 1) == Some(&b'u'))
            .then(|| u16::from_str_radix(hex, 16).ok())
            .flatten()
    };
    let high = |u: u16| (0xD800..0xDC00).contains(&u);
    let low = |u: u16| (0xDC00..0xE000).contains(&u);
    let mut lone = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at] != b'\\' {
            at += 1;
            continue;
        }
        match unit_at(at) {
            Some(u)
                if high(u)
                    && bytes.get(at + 6) == Some(&b'\\')
                    && unit_at(at + 6).is_some_and(low) =>
            {
                at += 12
            }
            Some(u) if high(u) || low(u) => {
                lone.push(at);
                at += 6;
            }
            Some(_) => at += 6,
            None => at += 2,
        }
    }
    if lone.is_empty() {
        return Cow::Borrowed(bytes);
    }
    let mut out = Vec::with_capacity(bytes.len());
    let mut from = 0;
    for at in lone {
        out.extend_from_slice(&bytes[from..at]);
        out.extend_from_slice(b"\\ufffd");
        from = at + 6;
    }
    out.extend_from_slice(&bytes[from..]);
    Cow::Owned(out)
}

/// The first member (by name) of the object at `field` of the document `bytes` whose
/// text holds a lone surrogate escape (empty: a member's name holds one): the
/// argument a hook names when it refuses a call it cannot pass on unaltered.
pub fn member_not_unicode(bytes: &[u8], field: &str) -> Option<String> {
    use serde_json::value::RawValue;
    use std::collections::BTreeMap;
    if let Cow::Borrowed(_) = lone_surrogates_replaced(bytes) {
        return None;
    }
    // RawValue keeps a value's text as written, escapes unread.
    let top: BTreeMap<String, Box<RawValue>> = serde_json::from_slice(bytes).ok()?;
    let raw = top.get(field)?.get();
    let Ok(object) = serde_json::from_str::<BTreeMap<String, Box<RawValue>>>(raw) else {
        let named = matches!(lone_surrogates_replaced(raw.as_bytes()), Cow::Owned(_));
        return named.then(String::new);
    };
    (object.into_iter())
        .find(|(_, raw)| {
            matches!(
                lone_surrogates_replaced(raw.get().as_bytes()),
                Cow::Owned(_)
            )
        })
        .map(|(name, _)| name)
}

/// What a host says of an argument (empty: an argument's name) that is not Unicode
/// text, in the plugin's words for it.
pub fn not_unicode_refusal(argument: &str) -> String {
    let argument = match argument {
        "" => "an argument's name",
        name => name,
    };
    format!(
        "invalid arguments: {argument} is not Unicode text (a \\uD800–\\uDFFF escape, half of a \
         UTF-16 surrogate pair, stands alone in it); write it again with whole characters",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    #[test]
    fn a_lone_surrogate_reads_as_the_replacement_character_and_is_told() {
        let read = read::<Value>(br#"{"a":"x\ud800y","b":"\udfff","c":"\ud800\ud800"}"#).unwrap();
        assert!(read.not_unicode);
        assert_eq!(
            read.value,
            json!({"a": "x\u{fffd}y", "b": "\u{fffd}", "c": "\u{fffd}\u{fffd}"})
        );
    }

    #[test]
    fn pairs_escaped_backslashes_and_plain_text_are_read_as_serde_json_reads_them() {
        for text in [
            r#"{"a":"\ud83c\udf51"}"#,
            r#"{"a":"\\ud800"}"#,
            r#"{"a":"é \\\ud83c\udf51"}"#,
        ] {
            let read = read::<Value>(text.as_bytes()).unwrap();
            assert!(!read.not_unicode, "{text}");
            assert_eq!(read.value, serde_json::from_str::<Value>(text).unwrap());
        }
    }

    #[test]
    fn the_member_holding_a_lone_surrogate_is_named() {
        let input =
            br#"{"a": 1, "tool_input": {"session_id": "s", "message": "x\ud800", "z": "\udc00"}}"#;
        assert_eq!(
            member_not_unicode(input, "tool_input").as_deref(),
            Some("message")
        );
        let fine = br#"{"tool_input": {"message": "\\ud800 \ud83c\udf51"}}"#;
        assert_eq!(member_not_unicode(fine, "tool_input"), None);
        assert_eq!(member_not_unicode(input, "other"), None);
        let named = br#"{"tool_input": {"m\udc00": 1}}"#;
        assert_eq!(member_not_unicode(named, "tool_input").as_deref(), Some(""));
    }

    #[test]
    fn text_that_is_not_json_keeps_serde_jsons_error() {
        // A lone surrogate in a document that is not JSON anyway: serde_json's words.
        let err = from_slice::<Value>(br#"{"a":"\ud800""#).unwrap_err();
        assert!(err.to_string().contains("hex escape"), "{err}");
        let err = from_slice::<Value>(b"{\"a\": tru}").unwrap_err();
        assert!(err.to_string().starts_with("expected ident"), "{err}");
    }
}
