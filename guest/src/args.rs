//! The one argument validator. Every error is a single line,
//! `invalid arguments: NAME must be WHAT (got VALUE)`, written for the model to fix its
//! call from.

use crate::json_object::{JsonValue, ObjectError, TopLevel, member};
use crate::text::{describe_value, shorten};

/// A tool's arguments object, checked against the names the tool takes.
#[derive(Debug)]
pub struct Args {
    members: Vec<(String, JsonValue)>,
}

/// An argument error, already worded for the model.
pub type ArgResult<T> = Result<T, String>;

fn invalid(detail: impl std::fmt::Display) -> String {
    format!("invalid arguments: {detail}")
}

/// Why a member holding a lone surrogate escape is refused, naming it (`what`: an
/// argument or a setting); the same words for both.
pub fn not_unicode_words(key: &str, what: &str) -> String {
    let holder = match key {
        "" => format!("an {what}'s name"),
        key => shorten(key, 40),
    };
    format!(
        "{holder} is not Unicode text (a \\uD800–\\uDFFF escape, half of a UTF-16 surrogate \
         pair, stands alone in it); write it again with whole characters"
    )
}

impl Args {
    /// Parses the model's JSON text. Empty text or `null` reads as `{}`; anything but
    /// an object, a key given twice, or a name the tool does not take, is refused.
    pub fn parse(text: &str, tool: &str, takes: &[&str]) -> ArgResult<Args> {
        let members = match TopLevel::parse(text) {
            Ok(TopLevel::Null) => Vec::new(),
            Ok(TopLevel::Object(members)) => members,
            Ok(TopLevel::Other(other)) => {
                return Err(invalid(format!(
                    "expected a JSON object (got {})",
                    describe_value(&other)
                )));
            }
            Err(ObjectError::Syntax(message)) => {
                return Err(invalid(format!(
                    "not a valid JSON object ({}); send an object such as {{\"{}\": …}}",
                    shorten(&message, 80),
                    takes.first().copied().unwrap_or("query")
                )));
            }
            Err(ObjectError::Duplicate(key)) => {
                return Err(invalid(format!(
                    "\"{}\" is given more than once; give each argument once",
                    shorten(&key, 40)
                )));
            }
            Err(ObjectError::NotUnicode(key)) => {
                return Err(invalid(not_unicode_words(&key, "argument")));
            }
            Err(ObjectError::TooManyMembers) => {
                return Err(invalid(format!(
                    "the object has more than {} members; {tool} takes {}",
                    crate::json_object::MAX_MEMBERS,
                    takes.join(", ")
                )));
            }
        };
        if let Some((unknown, _)) = members
            .iter()
            .find(|(key, _)| !takes.contains(&key.as_str()))
        {
            return Err(invalid(format!(
                "unknown argument \"{}\"; {tool} takes {}",
                shorten(unknown, 40),
                takes.join(", ")
            )));
        }
        Ok(Args { members })
    }

    /// The value of `name`; an explicit `null` counts as absent.
    fn get(&self, name: &str) -> Option<&JsonValue> {
        member(&self.members, name).filter(|value| **value != JsonValue::Null)
    }

    /// An optional string of at most `max_chars` chars.
    pub fn string(&self, name: &str, max_chars: usize) -> ArgResult<Option<&str>> {
        match self.get(name) {
            None => Ok(None),
            Some(JsonValue::String(text)) => {
                // Counting stops one past the bound: a 10 MB string costs no more.
                if text.chars().nth(max_chars).is_some() {
                    return Err(invalid(format!(
                        "{name} must be at most {max_chars} characters (got {})",
                        text.chars().count()
                    )));
                }
                Ok(Some(text))
            }
            Some(other) => Err(invalid(format!(
                "{name} must be a string (got {})",
                describe_value(other)
            ))),
        }
    }

    /// A required string; `what` says what it is, for the missing case.
    pub fn required_string(&self, name: &str, what: &str, max_chars: usize) -> ArgResult<&str> {
        self.string(name, max_chars)?
            .ok_or_else(|| invalid(format!("{name} is required ({what})")))
    }

    /// A required session id: a string with something in it, at most
    /// [`SESSION_ID_MAX_CHARS`] chars.
    pub fn required_id(&self, name: &str, what: &str) -> ArgResult<&str> {
        let id = self.required_string(name, what, SESSION_ID_MAX_CHARS)?;
        if id.trim().is_empty() {
            return Err(invalid(format!(
                "{name} must be a non-empty session id ({what}) (got {})",
                describe_value(&JsonValue::String(id.to_string()))
            )));
        }
        Ok(id)
    }

    /// An optional array of at most `max_items` strings, each of at most `max_chars`
    /// chars (an empty array is `Some` of none).
    pub fn strings(
        &self,
        name: &str,
        max_items: usize,
        max_chars: usize,
    ) -> ArgResult<Option<Vec<String>>> {
        let items = match self.get(name) {
            None => return Ok(None),
            Some(JsonValue::Strings(items)) => items.as_slice(),
            Some(JsonValue::Array { empty: true, .. }) => &[],
            // Only an array longer than any argument takes is not kept.
            Some(JsonValue::Array { strings: true, .. }) => {
                return Err(invalid(format!(
                    "{name} must have at most {max_items} items (got more than {})",
                    crate::json_object::MAX_ITEMS
                )));
            }
            Some(other) => {
                return Err(invalid(format!(
                    "{name} must be an array of strings (got {})",
                    describe_value(other)
                )));
            }
        };
        if items.len() > max_items {
            return Err(invalid(format!(
                "{name} must have at most {max_items} items (got {})",
                items.len()
            )));
        }
        for (index, item) in items.iter().enumerate() {
            if item.chars().nth(max_chars).is_some() {
                return Err(invalid(format!(
                    "{name}[{index}] must be at most {max_chars} characters (got {})",
                    item.chars().count()
                )));
            }
        }
        Ok(Some(items.to_vec()))
    }

    /// An optional boolean.
    pub fn boolean(&self, name: &str) -> ArgResult<Option<bool>> {
        match self.get(name) {
            None => Ok(None),
            Some(JsonValue::Bool(flag)) => Ok(Some(*flag)),
            Some(other) => Err(invalid(format!(
                "{name} must be true or false (got {})",
                describe_value(other)
            ))),
        }
    }

    /// An optional integer within `low..=high`.
    pub fn integer(&self, name: &str, low: u64, high: u64) -> ArgResult<Option<u64>> {
        match self.get(name) {
            None => Ok(None),
            Some(value) => value
                .as_u64()
                .filter(|n| (low..=high).contains(n))
                .map(Some)
                .ok_or_else(|| {
                    invalid(format!(
                        "{name} must be an integer from {low} to {high} (got {})",
                        describe_value(value)
                    ))
                }),
        }
    }

    /// An optional string from a fixed set of choices.
    pub fn choice(&self, name: &str, choices: &[&'static str]) -> ArgResult<Option<&'static str>> {
        match self.get(name) {
            None => Ok(None),
            Some(value) => value
                .as_str()
                .and_then(|text| choices.iter().copied().find(|choice| *choice == text))
                .map(Some)
                .ok_or_else(|| {
                    let quoted: Vec<String> = choices.iter().map(|c| format!("\"{c}\"")).collect();
                    invalid(format!(
                        "{name} must be one of {} (got {})",
                        quoted.join(", "),
                        describe_value(value)
                    ))
                }),
        }
    }
}

/// Longest `session_id` argument: room for the JSON literal form of a 256-char id.
pub const SESSION_ID_MAX_CHARS: usize = 512;

#[cfg(test)]
mod tests {
    use super::*;

    const TAKES: &[&str] = &["query", "limit", "live_only", "scope"];

    fn parse(text: &str) -> ArgResult<Args> {
        Args::parse(text, "sessions_list", TAKES)
    }

    #[test]
    fn empty_text_and_null_read_as_an_empty_object() {
        for text in ["", "  ", "null", "{}"] {
            let args = parse(text).unwrap();
            assert_eq!(args.string("query", 10).unwrap(), None);
        }
    }

    #[test]
    fn non_objects_and_bad_json_are_refused() {
        assert_eq!(
            parse("[1,2]").unwrap_err(),
            "invalid arguments: expected a JSON object (got an array)"
        );
        assert_eq!(
            parse("\"hi\"").unwrap_err(),
            "invalid arguments: expected a JSON object (got \"hi\")"
        );
        assert!(
            parse("{\"limit\":")
                .unwrap_err()
                .starts_with("invalid arguments: not a valid JSON object")
        );
    }

    #[test]
    fn a_lone_surrogate_escape_is_refused_naming_the_argument_that_holds_it() {
        let words = "is not Unicode text (a \\uD800–\\uDFFF escape, half of a UTF-16 \
                     surrogate pair, stands alone in it); write it again with whole characters";
        for text in [
            r#"{"limit": 3, "query": "fig \ud800 tree"}"#,
            r#"{"query": "\udfff"}"#,
            r#"{"query": "\ud800\ud800"}"#,
            r#"{"query": "\ud800x"}"#,
        ] {
            assert_eq!(
                parse(text).unwrap_err(),
                format!("invalid arguments: query {words}"),
                "{text}"
            );
        }
        assert_eq!(
            parse(r#"{"q\ud800": 1}"#).unwrap_err(),
            format!("invalid arguments: an argument's name {words}")
        );
        // A pair is one character, and an escaped backslash before `ud800` no escape.
        let args = parse(r#"{"query": "\ud83c\udf51 \\ud800"}"#).unwrap();
        assert_eq!(args.string("query", 20).unwrap(), Some("🍑 \\ud800"));
    }

    #[test]
    fn unknown_arguments_are_named_with_the_known_ones() {
        assert_eq!(
            parse(r#"{"limt": 3}"#).unwrap_err(),
            "invalid arguments: unknown argument \"limt\"; sessions_list takes query, limit, live_only, scope"
        );
    }

    #[test]
    fn integers_are_checked_for_type_and_range() {
        let args = parse(r#"{"limit": 500}"#).unwrap();
        assert_eq!(
            args.integer("limit", 1, 200).unwrap_err(),
            "invalid arguments: limit must be an integer from 1 to 200 (got 500)"
        );
        for bad in ["0", "-1", "2.5", "\"3\"", "true"] {
            let args = parse(&format!("{{\"limit\": {bad}}}")).unwrap();
            assert!(args.integer("limit", 1, 200).is_err(), "{bad}");
        }
        let args = parse(r#"{"limit": 200}"#).unwrap();
        assert_eq!(args.integer("limit", 1, 200), Ok(Some(200)));
    }

    #[test]
    fn repeated_keys_are_refused() {
        assert_eq!(
            parse(r#"{"limit": 1, "limit": 300}"#).unwrap_err(),
            "invalid arguments: \"limit\" is given more than once; give each argument once"
        );
    }

    #[test]
    fn strings_are_bounded_and_the_bound_is_named() {
        let args = parse(r#"{"query": "ééé"}"#).unwrap();
        assert_eq!(args.string("query", 3), Ok(Some("ééé")));
        assert_eq!(
            args.string("query", 2).unwrap_err(),
            "invalid arguments: query must be at most 2 characters (got 3)"
        );
    }

    #[test]
    fn null_counts_as_absent() {
        let args = parse(r#"{"limit": null, "query": null}"#).unwrap();
        assert_eq!(args.integer("limit", 1, 200), Ok(None));
        assert_eq!(args.string("query", 10), Ok(None));
    }

    #[test]
    fn choices_and_booleans_say_what_they_take() {
        let args = parse(r#"{"scope": "everything", "live_only": 1}"#).unwrap();
        assert_eq!(
            args.choice("scope", &["top-level", "subagents", "all"])
                .unwrap_err(),
            "invalid arguments: scope must be one of \"top-level\", \"subagents\", \"all\" (got \"everything\")"
        );
        assert_eq!(
            args.boolean("live_only").unwrap_err(),
            "invalid arguments: live_only must be true or false (got 1)"
        );
    }
}
