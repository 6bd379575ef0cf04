//! One JSON object read with serde_json, its members in the order written: the shape of
//! both the model's arguments and the deployment's settings.
//!
//! Only scalars, and arrays of at most [`MAX_ITEMS`] strings, are decoded. Other arrays
//! and objects inside it are skipped by serde_json without recursion and kept as their
//! kind, so no nesting or length of them makes the plugin hold more than the text it
//! was handed. A key given twice is refused rather
//! than resolved, so no two readers of the same text (a harness that checks the
//! schema, this plugin) can disagree about its value.
//!
//! Every value is read through `deserialize_any` with a visitor that answers every
//! kind itself: serde's "invalid type" errors format floats, and that machinery alone
//! would cost the plugin about 20 KB.

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// Most members an object may have: far more than any tool or the settings take, and
/// few enough that an object of a million tiny members is refused while it is read.
pub const MAX_MEMBERS: usize = 64;

/// Most strings an array may hold and still be kept ([`JsonValue::Strings`]): more
/// than any argument takes, so a longer one is refused by its length, not read.
pub const MAX_ITEMS: usize = 64;

/// A JSON value as the validators need it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JsonValue {
    Null,
    Bool(bool),
    /// A non-negative integer.
    Unsigned(u64),
    /// A negative integer.
    Negative(i64),
    /// A number with a fraction or an exponent (its digits are not kept).
    Fraction,
    String(String),
    /// A non-empty array of at most [`MAX_ITEMS`] items, every one a string.
    Strings(Vec<String>),
    /// Any other array, skipped: `items` counts its items (up to one past
    /// [`MAX_ITEMS`]), `strings` whether every one counted was a string.
    Array {
        empty: bool,
        items: usize,
        strings: bool,
    },
    /// An object, skipped.
    Object,
}

impl JsonValue {
    pub fn as_str(&self) -> Option<&str> {
        match self {
            JsonValue::String(text) => Some(text),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            JsonValue::Bool(flag) => Some(*flag),
            _ => None,
        }
    }

    /// A non-negative integer written without fraction or exponent.
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            JsonValue::Unsigned(n) => Some(*n),
            _ => None,
        }
    }

    /// Compact JSON for a scalar; words for a fraction, an array or an object.
    pub fn describe(&self) -> String {
        match self {
            JsonValue::Null => "null".to_string(),
            JsonValue::Bool(flag) => flag.to_string(),
            JsonValue::Unsigned(n) => n.to_string(),
            JsonValue::Negative(n) => n.to_string(),
            JsonValue::Fraction => "a number with a fraction or exponent".to_string(),
            JsonValue::String(text) => {
                serde_json::to_string(text).unwrap_or_else(|_| "a string".to_string())
            }
            JsonValue::Array { empty: true, .. } => "[]".to_string(),
            JsonValue::Array { .. } | JsonValue::Strings(_) => "an array".to_string(),
            JsonValue::Object => "an object".to_string(),
        }
    }
}

/// What a JSON text held at its top level.
#[derive(Debug, PartialEq)]
pub enum TopLevel {
    /// An object's members, in order; keys are unique.
    Object(Vec<(String, JsonValue)>),
    /// `null`, or empty text.
    Null,
    /// Anything else.
    Other(JsonValue),
}

/// Why a text is not one usable JSON object.
#[derive(Debug, PartialEq, Eq)]
pub enum ObjectError {
    /// Not JSON: serde_json's message (it names the line and column).
    Syntax(String),
    /// A key given twice.
    Duplicate(String),
    /// More than [`MAX_MEMBERS`] members.
    TooManyMembers,
    /// Legal JSON whose member (named; empty when the name itself) holds a `\uXXXX`
    /// escape of a lone UTF-16 surrogate: no Unicode text, refused rather than altered.
    NotUnicode(String),
}

impl TopLevel {
    /// Parses one JSON document; empty text (or only white space) reads as `null`.
    pub fn parse(text: &str) -> Result<TopLevel, ObjectError> {
        if text.trim().is_empty() {
            return Ok(TopLevel::Null);
        }
        let parsed: Parsed = serde_json::from_str(text).map_err(|err| {
            let message = err.to_string();
            if message.starts_with(TOO_MANY) {
                ObjectError::TooManyMembers
            } else if let Some(rest) = message.strip_prefix(NOT_UNICODE) {
                // The member's name, then serde_json's " at line … column …".
                let name = rest.rfind(" at line ").map_or(rest, |at| &rest[..at]);
                ObjectError::NotUnicode(name.to_string())
            } else {
                ObjectError::Syntax(message)
            }
        })?;
        match parsed {
            Parsed::Members(members) => {
                for (index, (key, _)) in members.iter().enumerate() {
                    if members[..index].iter().any(|(earlier, _)| earlier == key) {
                        return Err(ObjectError::Duplicate(key.clone()));
                    }
                }
                Ok(TopLevel::Object(members))
            }
            Parsed::Value(JsonValue::Null) => Ok(TopLevel::Null),
            Parsed::Value(other) => Ok(TopLevel::Other(other)),
        }
    }
}

/// The value of `name` among an object's members.
pub fn member<'a>(members: &'a [(String, JsonValue)], name: &str) -> Option<&'a JsonValue> {
    members
        .iter()
        .find(|(key, _)| key == name)
        .map(|(_, value)| value)
}

const TOO_MANY: &str = "too many members";
const NOT_UNICODE: &str = "not unicode: ";

/// serde_json's words for a `\uXXXX` escape of a lone surrogate in a string it must
/// decode as text (found nowhere else).
fn is_lone_surrogate(err: &impl fmt::Display) -> bool {
    let message = err.to_string();
    message.starts_with("unexpected end of hex escape")
        || message.starts_with("lone leading surrogate in hex escape")
}

fn not_unicode<E: de::Error>(name: &str) -> E {
    de::Error::custom(format_args!("{NOT_UNICODE}{name}"))
}

/// The top level: an object's members (repeats included, which a `serde_json::Map`
/// would merge), or one value.
enum Parsed {
    Members(Vec<(String, JsonValue)>),
    Value(JsonValue),
}

impl<'de> Deserialize<'de> for Parsed {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Parsed, D::Error> {
        deserializer.deserialize_any(ValueVisitor { top_level: true })
    }
}

impl<'de> Deserialize<'de> for JsonValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<JsonValue, D::Error> {
        match deserializer.deserialize_any(ValueVisitor { top_level: false })? {
            Parsed::Value(value) => Ok(value),
            Parsed::Members(_) => Ok(JsonValue::Object),
        }
    }
}

/// Answers every kind `deserialize_any` can hand over.
struct ValueVisitor {
    top_level: bool,
}

fn value<E>(value: JsonValue) -> Result<Parsed, E> {
    Ok(Parsed::Value(value))
}

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Parsed;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Parsed, A::Error> {
        if !self.top_level {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            return value(JsonValue::Object);
        }
        let mut members = Vec::new();
        loop {
            let key = match map.next_key::<String>() {
                Ok(Some(key)) => key,
                Ok(None) => break,
                Err(err) if is_lone_surrogate(&err) => return Err(not_unicode("")),
                Err(err) => return Err(err),
            };
            if members.len() == MAX_MEMBERS {
                return Err(de::Error::custom(TOO_MANY));
            }
            match map.next_value::<JsonValue>() {
                Ok(value) => members.push((key, value)),
                Err(err) if is_lone_surrogate(&err) => return Err(not_unicode(&key)),
                Err(err) => return Err(err),
            }
        }
        Ok(Parsed::Members(members))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Parsed, A::Error> {
        let mut kept = Vec::new();
        let mut items = 0usize;
        let mut strings = true;
        while items <= MAX_ITEMS {
            match seq.next_element::<Item>()? {
                None => break,
                Some(Item::Text(text)) => kept.push(text),
                Some(Item::Other) => strings = false,
            }
            items += 1;
        }
        // Past the bound the rest is only skipped.
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        if strings && (1..=MAX_ITEMS).contains(&items) {
            return value(JsonValue::Strings(kept));
        }
        value(JsonValue::Array {
            empty: items == 0,
            items,
            strings,
        })
    }

    fn visit_unit<E: de::Error>(self) -> Result<Parsed, E> {
        value(JsonValue::Null)
    }

    fn visit_bool<E: de::Error>(self, flag: bool) -> Result<Parsed, E> {
        value(JsonValue::Bool(flag))
    }

    fn visit_i64<E: de::Error>(self, n: i64) -> Result<Parsed, E> {
        // serde_json hands over non-negative integers as u64.
        value(JsonValue::Negative(n))
    }

    fn visit_u64<E: de::Error>(self, n: u64) -> Result<Parsed, E> {
        value(JsonValue::Unsigned(n))
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Parsed, E> {
        value(JsonValue::Fraction)
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Parsed, E> {
        value(JsonValue::String(text.to_string()))
    }

    fn visit_string<E: de::Error>(self, text: String) -> Result<Parsed, E> {
        value(JsonValue::String(text))
    }
}

/// One item of an array: a string kept, anything else skipped (a nested array or
/// object without recursion).
enum Item {
    Text(String),
    Other,
}

impl<'de> Deserialize<'de> for Item {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Item, D::Error> {
        deserializer.deserialize_any(ItemVisitor)
    }
}

struct ItemVisitor;

impl<'de> Visitor<'de> for ItemVisitor {
    type Value = Item;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Item, E> {
        Ok(Item::Text(text.to_string()))
    }

    fn visit_string<E: de::Error>(self, text: String) -> Result<Item, E> {
        Ok(Item::Text(text))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Item, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Item::Other)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Item, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Item::Other)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Item, E> {
        Ok(Item::Other)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Item, E> {
        Ok(Item::Other)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Item, E> {
        Ok(Item::Other)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Item, E> {
        Ok(Item::Other)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Item, E> {
        Ok(Item::Other)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn string(text: &str) -> JsonValue {
        JsonValue::String(text.to_string())
    }

    #[test]
    fn objects_keep_their_scalar_members_in_order() {
        assert_eq!(
            TopLevel::parse(r#"{"b": 1, "a": [true, null], "c": {"d": []}, "e": "x"}"#),
            Ok(TopLevel::Object(vec![
                ("b".to_string(), JsonValue::Unsigned(1)),
                (
                    "a".to_string(),
                    JsonValue::Array {
                        empty: false,
                        items: 2,
                        strings: false
                    }
                ),
                ("c".to_string(), JsonValue::Object),
                ("e".to_string(), string("x")),
            ]))
        );
    }

    #[test]
    fn empty_text_and_null_are_null_and_other_values_are_kept() {
        assert_eq!(TopLevel::parse("  "), Ok(TopLevel::Null));
        assert_eq!(TopLevel::parse(" null "), Ok(TopLevel::Null));
        assert_eq!(
            TopLevel::parse("[]"),
            Ok(TopLevel::Other(JsonValue::Array {
                empty: true,
                items: 0,
                strings: true
            }))
        );
        assert_eq!(TopLevel::parse("\"x\""), Ok(TopLevel::Other(string("x"))));
    }

    #[test]
    fn values_describe_themselves_as_written() {
        for (text, shown) in [
            ("-2.5", "a number with a fraction or exponent"),
            ("1e2", "a number with a fraction or exponent"),
            ("-7", "-7"),
            ("500", "500"),
            ("\"a\\nb\"", "\"a\\nb\""),
            ("[]", "[]"),
            ("[1]", "an array"),
            ("true", "true"),
        ] {
            match TopLevel::parse(text).unwrap() {
                TopLevel::Other(value) => assert_eq!(value.describe(), shown, "{text}"),
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn a_repeated_key_is_refused() {
        assert_eq!(
            TopLevel::parse(r#"{"limit": 1, "limit": 300}"#),
            Err(ObjectError::Duplicate("limit".to_string()))
        );
    }

    #[test]
    fn an_object_of_too_many_members_is_refused_while_read() {
        let members: Vec<String> = (0..=MAX_MEMBERS).map(|i| format!("\"k{i}\":1")).collect();
        assert_eq!(
            TopLevel::parse(&format!("{{{}}}", members.join(","))),
            Err(ObjectError::TooManyMembers)
        );
        let members: Vec<String> = (0..MAX_MEMBERS).map(|i| format!("\"k{i}\":1")).collect();
        assert!(TopLevel::parse(&format!("{{{}}}", members.join(","))).is_ok());
    }

    #[test]
    fn syntax_errors_carry_serde_jsons_position() {
        assert_eq!(
            TopLevel::parse("{\"a\":"),
            Err(ObjectError::Syntax(
                "EOF while parsing a value at line 1 column 5".to_string()
            ))
        );
    }

    #[test]
    fn deep_nesting_is_read_without_recursion() {
        let deep = format!("{{\"q\":{}{}}}", "[".repeat(100_000), "]".repeat(100_000));
        assert_eq!(
            TopLevel::parse(&deep),
            Ok(TopLevel::Object(vec![(
                "q".to_string(),
                JsonValue::Array {
                    empty: false,
                    items: 1,
                    strings: false
                }
            )]))
        );
    }

    #[test]
    fn arrays_of_strings_are_kept_up_to_the_bound() {
        assert_eq!(
            TopLevel::parse(r#"["a", "b\u00e9"]"#),
            Ok(TopLevel::Other(JsonValue::Strings(vec![
                "a".to_string(),
                "bé".to_string()
            ])))
        );
        let many: Vec<String> = (0..=MAX_ITEMS).map(|i| format!("\"{i}\"")).collect();
        assert_eq!(
            TopLevel::parse(&format!("[{}]", many.join(","))),
            Ok(TopLevel::Other(JsonValue::Array {
                empty: false,
                items: MAX_ITEMS + 1,
                strings: true
            }))
        );
        assert_eq!(
            TopLevel::parse(r#"{"p": ["a", ["\ud800"]]}"#),
            Ok(TopLevel::Object(vec![(
                "p".to_string(),
                JsonValue::Array {
                    empty: false,
                    items: 2,
                    strings: false
                }
            )]))
        );
        assert_eq!(
            TopLevel::parse(r#"{"p": ["a", "\ud800"]}"#),
            Err(ObjectError::NotUnicode("p".to_string()))
        );
    }
}
