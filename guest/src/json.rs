//! A small JSON reader for arguments and settings (RFC 8259). It replaces serde_json in
//! the plugin: the tools only need to read one object of scalars, and a general
//! serializer and float machinery cost more of `plugin.wasm` than all the tools
//! together. Numbers keep their text, so an echo shows what the model wrote.

use std::fmt::Write as _;

/// Nesting deeper than this is refused (the plugin's stack is small on purpose).
pub const MAX_DEPTH: usize = 128;

/// A parsed JSON value. Objects keep their members in order; a repeated key reads as
/// its last value.
#[derive(Clone, Debug, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    /// The number as written (already checked to be valid JSON).
    Number(String),
    String(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl Json {
    /// Parses a whole document: one value, white space around it, nothing else.
    pub fn parse(text: &str) -> Result<Json, String> {
        let mut parser = Parser {
            bytes: text.as_bytes(),
            text,
            at: 0,
        };
        parser.skip_space();
        let value = parser.value(0)?;
        parser.skip_space();
        if parser.at < parser.bytes.len() {
            return Err(parser.error("trailing characters"));
        }
        Ok(value)
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Json::Null)
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::String(text) => Some(text),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Json::Bool(flag) => Some(*flag),
            _ => None,
        }
    }

    /// A non-negative integer written without fraction or exponent.
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Json::Number(text) => text.parse().ok(),
            _ => None,
        }
    }

    /// The value of `key` in an object (the last one, if repeated).
    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(members) => member(members, key),
            _ => None,
        }
    }

    /// Compact JSON text of the value.
    pub fn to_json(&self) -> String {
        let mut out = String::new();
        self.write(&mut out);
        out
    }

    fn write(&self, out: &mut String) {
        match self {
            Json::Null => out.push_str("null"),
            Json::Bool(flag) => out.push_str(if *flag { "true" } else { "false" }),
            Json::Number(text) => out.push_str(text),
            Json::String(text) => write_string(out, text),
            Json::Array(items) => {
                out.push('[');
                for (index, item) in items.iter().enumerate() {
                    if index > 0 {
                        out.push(',');
                    }
                    item.write(out);
                }
                out.push(']');
            }
            Json::Object(members) => {
                out.push('{');
                for (index, (key, value)) in members.iter().enumerate() {
                    if index > 0 {
                        out.push(',');
                    }
                    write_string(out, key);
                    out.push(':');
                    value.write(out);
                }
                out.push('}');
            }
        }
    }
}

/// The value of `key` among an object's members: the last one, if repeated, as in
/// most JSON readers.
pub fn member<'a>(members: &'a [(String, Json)], key: &str) -> Option<&'a Json> {
    members.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v)
}

fn write_string(out: &mut String, text: &str) {
    out.push('"');
    for ch in text.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if c < ' ' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

struct Parser<'a> {
    bytes: &'a [u8],
    text: &'a str,
    at: usize,
}

impl Parser<'_> {
    /// An error naming the line and column (1-based, in chars) where it was found.
    fn error(&self, what: &str) -> String {
        let before = &self.text[..self.at.min(self.text.len())];
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
        format!("{what} at line {line} column {column}")
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn skip_space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn literal(&mut self, word: &str, value: Json) -> Result<Json, String> {
        if self.bytes[self.at..].starts_with(word.as_bytes()) {
            self.at += word.len();
            Ok(value)
        } else {
            Err(self.error("expected value"))
        }
    }

    fn value(&mut self, depth: usize) -> Result<Json, String> {
        match self.peek() {
            None => Err(self.error("EOF while parsing a value")),
            Some(b'n') => self.literal("null", Json::Null),
            Some(b't') => self.literal("true", Json::Bool(true)),
            Some(b'f') => self.literal("false", Json::Bool(false)),
            Some(b'"') => Ok(Json::String(self.string()?)),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b'[') => {
                if depth >= MAX_DEPTH {
                    return Err(self.error("recursion limit exceeded"));
                }
                self.at += 1;
                let mut items = Vec::new();
                self.skip_space();
                if self.peek() == Some(b']') {
                    self.at += 1;
                    return Ok(Json::Array(items));
                }
                loop {
                    self.skip_space();
                    items.push(self.value(depth + 1)?);
                    self.skip_space();
                    match self.peek() {
                        Some(b',') => self.at += 1,
                        Some(b']') => {
                            self.at += 1;
                            return Ok(Json::Array(items));
                        }
                        None => return Err(self.error("EOF while parsing a list")),
                        Some(_) => return Err(self.error("expected `,` or `]`")),
                    }
                }
            }
            Some(b'{') => {
                if depth >= MAX_DEPTH {
                    return Err(self.error("recursion limit exceeded"));
                }
                self.at += 1;
                let mut members = Vec::new();
                self.skip_space();
                if self.peek() == Some(b'}') {
                    self.at += 1;
                    return Ok(Json::Object(members));
                }
                loop {
                    self.skip_space();
                    match self.peek() {
                        Some(b'"') => {}
                        None => return Err(self.error("EOF while parsing an object")),
                        Some(_) => return Err(self.error("key must be a string")),
                    }
                    let key = self.string()?;
                    self.skip_space();
                    if self.peek() != Some(b':') {
                        return Err(self.error("expected `:`"));
                    }
                    self.at += 1;
                    self.skip_space();
                    let value = self.value(depth + 1)?;
                    members.push((key, value));
                    self.skip_space();
                    match self.peek() {
                        Some(b',') => self.at += 1,
                        Some(b'}') => {
                            self.at += 1;
                            return Ok(Json::Object(members));
                        }
                        None => return Err(self.error("EOF while parsing an object")),
                        Some(_) => return Err(self.error("expected `,` or `}`")),
                    }
                }
            }
            Some(_) => Err(self.error("expected value")),
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.at;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.at += 1;
        }
        self.at - start
    }

    fn number(&mut self) -> Result<Json, String> {
        let start = self.at;
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        match self.peek() {
            Some(b'0') => self.at += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(self.error("invalid number")),
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            if self.digits() == 0 {
                return Err(self.error("invalid number"));
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.at += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.at += 1;
            }
            if self.digits() == 0 {
                return Err(self.error("invalid number"));
            }
        }
        Ok(Json::Number(self.text[start..self.at].to_string()))
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let digits = self
            .bytes
            .get(self.at..self.at + 4)
            .ok_or_else(|| self.error("EOF while parsing a string"))?;
        let mut value = 0;
        for &digit in digits {
            let nibble = (digit as char)
                .to_digit(16)
                .ok_or_else(|| self.error("invalid escape"))?;
            value = value * 16 + nibble;
        }
        self.at += 4;
        Ok(value)
    }

    fn string(&mut self) -> Result<String, String> {
        self.at += 1; // the opening quote
        let mut out = String::new();
        loop {
            // Copy the run of plain characters up to the next quote, escape or control.
            let start = self.at;
            while let Some(b) = self.peek() {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.at += 1;
            }
            out.push_str(&self.text[start..self.at]);
            match self.peek() {
                None => return Err(self.error("EOF while parsing a string")),
                Some(b'"') => {
                    self.at += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.at += 1;
                    let escaped = self
                        .peek()
                        .ok_or_else(|| self.error("EOF while parsing a string"))?;
                    self.at += 1;
                    match escaped {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let first = self.hex4()?;
                            let code = match first {
                                0xD800..=0xDBFF => {
                                    if !self.bytes[self.at..].starts_with(b"\\u") {
                                        return Err(
                                            self.error("lone leading surrogate in hex escape")
                                        );
                                    }
                                    self.at += 2;
                                    let second = self.hex4()?;
                                    if !(0xDC00..=0xDFFF).contains(&second) {
                                        return Err(
                                            self.error("lone leading surrogate in hex escape")
                                        );
                                    }
                                    0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
                                }
                                0xDC00..=0xDFFF => {
                                    return Err(self.error("lone trailing surrogate in hex escape"));
                                }
                                code => code,
                            };
                            out.push(
                                char::from_u32(code).ok_or_else(|| self.error("invalid escape"))?,
                            );
                        }
                        _ => return Err(self.error("invalid escape")),
                    }
                }
                Some(_) => {
                    return Err(self.error(
                        "control character (\\u0000-\\u001F) found while parsing a string",
                    ));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_kind_of_value() {
        let value = Json::parse(
            r#" {"a": [1, -2.5e3, true, false, null], "b": "x\n\u00e9\ud83e\udd80", "c": {}} "#,
        )
        .unwrap();
        assert_eq!(
            value,
            Json::Object(vec![
                (
                    "a".into(),
                    Json::Array(vec![
                        Json::Number("1".into()),
                        Json::Number("-2.5e3".into()),
                        Json::Bool(true),
                        Json::Bool(false),
                        Json::Null
                    ])
                ),
                ("b".into(), Json::String("x\né🦀".into())),
                ("c".into(), Json::Object(vec![])),
            ])
        );
    }

    #[test]
    fn numbers_keep_their_text_and_only_plain_integers_are_u64() {
        assert_eq!(Json::parse("500").unwrap().as_u64(), Some(500));
        for text in ["2.5", "-1", "1e2", "5.0", "18446744073709551616"] {
            assert_eq!(Json::parse(text).unwrap().as_u64(), None, "{text}");
        }
        assert_eq!(Json::parse("1E+2").unwrap().to_json(), "1E+2");
    }

    #[test]
    fn a_repeated_key_reads_as_its_last_value() {
        let value = Json::parse(r#"{"limit": 1, "limit": 2}"#).unwrap();
        assert_eq!(value.get("limit").and_then(Json::as_u64), Some(2));
    }

    #[test]
    fn malformed_documents_are_refused_with_a_position() {
        for (text, error) in [
            ("{limit: 3}", "key must be a string at line 1 column 2"),
            ("[1,]", "expected value at line 1 column 4"),
            ("{\"a\":1} x", "trailing characters at line 1 column 9"),
            ("\"abc", "EOF while parsing a string at line 1 column 5"),
            ("01", "trailing characters at line 1 column 2"),
            ("-", "invalid number at line 1 column 2"),
            ("1.", "invalid number at line 1 column 3"),
            (
                "\"\\ud800\"",
                "lone leading surrogate in hex escape at line 1 column 8",
            ),
            (
                "\"\\udc00\"",
                "lone trailing surrogate in hex escape at line 1 column 8",
            ),
            (
                "\"a\tb\"",
                "control character (\\u0000-\\u001F) found while parsing a string at line 1 column 3",
            ),
            ("\"\\x\"", "invalid escape at line 1 column 4"),
            ("tru", "expected value at line 1 column 1"),
            ("\n  ]", "expected value at line 2 column 3"),
            ("", "EOF while parsing a value at line 1 column 1"),
        ] {
            assert_eq!(Json::parse(text).unwrap_err(), error, "{text:?}");
        }
    }

    #[test]
    fn nesting_is_capped() {
        let ok = "[".repeat(MAX_DEPTH) + &"]".repeat(MAX_DEPTH);
        assert!(Json::parse(&ok).is_ok());
        let deep = "[".repeat(10_000) + &"]".repeat(10_000);
        assert!(
            Json::parse(&deep)
                .unwrap_err()
                .starts_with("recursion limit exceeded")
        );
    }

    #[test]
    fn writing_escapes_what_json_requires() {
        let value = Json::String("a\"b\\c\n\u{1}é".into());
        assert_eq!(value.to_json(), r#""a\"b\\c\n\u0001é""#);
    }

    /// Differential check against serde_json on many small documents: the same
    /// documents are accepted, and they read the same.
    #[test]
    fn agrees_with_serde_json() {
        let pieces = [
            "{",
            "}",
            "[",
            "]",
            ",",
            ":",
            "\"a\"",
            "\"\\u00e9\"",
            "\"\\ud83e\\udd80\"",
            "1",
            "-0",
            "2.5",
            "1e5",
            "01",
            "true",
            "null",
            " ",
            "\"x",
            "\\",
            "\"\\n\"",
            "-",
            "1.",
            "[1,]",
            "{\"k\":1}",
        ];
        let mut seed = 0x1234_5678_9abc_def0u64;
        for _ in 0..20_000 {
            let mut doc = String::new();
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let mut s = seed;
            for _ in 0..(s % 7) {
                doc.push_str(pieces[(s % pieces.len() as u64) as usize]);
                s /= pieces.len() as u64;
            }
            let ours = Json::parse(&doc);
            let theirs = serde_json::from_str::<serde_json::Value>(&doc);
            // JSON has no range limit on numbers; serde_json refuses what overflows f64.
            if theirs
                .as_ref()
                .is_err_and(|e| e.to_string().starts_with("number out of range"))
            {
                continue;
            }
            assert_eq!(
                ours.is_ok(),
                theirs.is_ok(),
                "{doc:?}: {ours:?} vs {theirs:?}"
            );
            if let (Ok(ours), Ok(theirs)) = (ours, theirs) {
                let reread: serde_json::Value = serde_json::from_str(&ours.to_json()).unwrap();
                assert_eq!(reread, theirs, "{doc:?}");
            }
        }
    }
}
