//! The one argument validator. Every error is a single line,
//! `invalid arguments: NAME must be WHAT (got VALUE)`, written for the model to fix its
//! call from.

use crate::json::{self, Json};
use crate::text::{describe_value, shorten};

/// A tool's arguments object, checked against the names the tool takes.
#[derive(Debug)]
pub struct Args {
    members: Vec<(String, Json)>,
}

/// An argument error, already worded for the model.
pub type ArgResult<T> = Result<T, String>;

fn invalid(detail: impl std::fmt::Display) -> String {
    format!("invalid arguments: {detail}")
}

impl Args {
    /// Parses the model's JSON text. Empty text or `null` reads as `{}`; anything but
    /// an object, or a name the tool does not take, is refused.
    pub fn parse(text: &str, tool: &str, takes: &[&str]) -> ArgResult<Args> {
        let trimmed = text.trim();
        let members = if trimmed.is_empty() {
            Vec::new()
        } else {
            match Json::parse(trimmed) {
                Ok(Json::Null) => Vec::new(),
                Ok(Json::Object(members)) => members,
                Ok(other) => {
                    return Err(invalid(format!(
                        "expected a JSON object (got {})",
                        describe_value(&other)
                    )));
                }
                Err(err) => {
                    return Err(invalid(format!(
                        "not a valid JSON object ({}); send an object such as {{\"{}\": …}}",
                        shorten(&err.to_string(), 80),
                        takes.first().copied().unwrap_or("query")
                    )));
                }
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
    fn get(&self, name: &str) -> Option<&Json> {
        json::member(&self.members, name).filter(|value| !value.is_null())
    }

    /// An optional string.
    pub fn string(&self, name: &str) -> ArgResult<Option<&str>> {
        match self.get(name) {
            None => Ok(None),
            Some(Json::String(text)) => Ok(Some(text)),
            Some(other) => Err(invalid(format!(
                "{name} must be a string (got {})",
                describe_value(other)
            ))),
        }
    }

    /// A required string; `what` says what it is, for the missing case.
    pub fn required_string(&self, name: &str, what: &str) -> ArgResult<&str> {
        self.string(name)?
            .ok_or_else(|| invalid(format!("{name} is required ({what})")))
    }

    /// A required session id: a string with something in it.
    pub fn required_id(&self, name: &str, what: &str) -> ArgResult<&str> {
        let id = self.required_string(name, what)?;
        if id.trim().is_empty() {
            return Err(invalid(format!(
                "{name} must be a non-empty session id ({what}) (got {})",
                describe_value(&Json::String(id.to_string()))
            )));
        }
        Ok(id)
    }

    /// An optional boolean.
    pub fn boolean(&self, name: &str) -> ArgResult<Option<bool>> {
        match self.get(name) {
            None => Ok(None),
            Some(Json::Bool(flag)) => Ok(Some(*flag)),
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
            assert_eq!(args.string("query").unwrap(), None);
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
    fn null_counts_as_absent() {
        let args = parse(r#"{"limit": null, "query": null}"#).unwrap();
        assert_eq!(args.integer("limit", 1, 200), Ok(None));
        assert_eq!(args.string("query"), Ok(None));
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
