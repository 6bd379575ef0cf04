//! Deployment settings: the harness's JSON object with camelCase keys, validated here
//! so every host gets the same errors.

use crate::host::DeliveryMode;
use crate::json_object::{JsonValue, ObjectError, TopLevel};
use crate::scope::{ReadScope, SendScope};
use crate::text::{describe_value, shorten};

/// Per-deployment settings, with the defaults of the spec.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    pub enabled: bool,
    pub max_list_results: u32,
    pub max_read_messages: u32,
    pub max_message_chars: u32,
    pub max_send_chars: u32,
    pub default_send_mode: DeliveryMode,
    pub frame_messages: bool,
    pub allow_resume: bool,
    pub include_injected_by_default: bool,
    /// The longest chain of cross-session messages one person's message can start.
    pub max_hops: u32,
    pub read_scope: ReadScope,
    pub send_scope: SendScope,
    /// The longest `await_reply_seconds` a send may ask; 0 turns the argument off.
    pub max_await_seconds: u32,
    /// Sends from one session to one target per window; 0 is no cap.
    pub max_sends_per_target: u32,
    /// Sends from one session to any per window; 0 is no cap.
    pub max_sends: u32,
    /// The window the caps count in.
    pub send_window_minutes: u32,
    /// Whether a read may show tool calls (`include_actions`).
    pub allow_actions: bool,
    /// The longest claim a session may make, in minutes.
    pub max_claim_minutes: u32,
    /// How long a claim outlives its holder's last sight live, in minutes.
    pub claim_grace_minutes: u32,
}

/// `maxHops`'s range.
pub const MAX_HOPS_RANGE: std::ops::RangeInclusive<u64> = 1..=64;

/// `maxAwaitSeconds`'s range: an hour at most, so a call never waits past what a
/// harness's tool timeout allows.
pub const MAX_AWAIT_RANGE: std::ops::RangeInclusive<u64> = 0..=3600;

/// `sendWindowMinutes`'s range: a minute to a week.
pub const SEND_WINDOW_RANGE: std::ops::RangeInclusive<u64> = 1..=10_080;

/// `maxClaimMinutes`' and `claimGraceMinutes`' range: a minute to a week.
pub const CLAIM_MINUTES_RANGE: std::ops::RangeInclusive<u64> = 1..=10_080;

impl Default for Settings {
    fn default() -> Self {
        Settings {
            enabled: true,
            max_list_results: 50,
            max_read_messages: 50,
            max_message_chars: 4000,
            max_send_chars: 8000,
            default_send_mode: DeliveryMode::Queue,
            frame_messages: true,
            allow_resume: true,
            include_injected_by_default: false,
            max_hops: 5,
            read_scope: ReadScope::All,
            send_scope: SendScope::All,
            max_await_seconds: 120,
            max_sends_per_target: 20,
            max_sends: 60,
            send_window_minutes: 60,
            allow_actions: true,
            max_claim_minutes: 240,
            claim_grace_minutes: 10,
        }
    }
}

const KNOWN_KEYS: &str = "enabled, maxListResults, maxReadMessages, maxMessageChars, \
     maxSendChars, defaultSendMode, frameMessages, allowResume, includeInjectedByDefault, \
     maxHops, readScope, sendScope, maxAwaitSeconds, maxSendsPerTarget, maxSends, \
     sendWindowMinutes, allowActions, maxClaimMinutes, claimGraceMinutes";

impl Settings {
    /// Parses the deployment JSON. Empty text or `null` means all defaults. The error
    /// names the key, what it takes and what it got.
    pub fn from_json(text: &str) -> Result<Settings, String> {
        let members = match TopLevel::parse(text) {
            Ok(TopLevel::Null) => return Ok(Settings::default()),
            Ok(TopLevel::Object(members)) => members,
            Ok(TopLevel::Other(other)) => {
                return Err(format!(
                    "invalid settings: expected a JSON object (got {})",
                    describe_value(&other)
                ));
            }
            Err(ObjectError::Syntax(message)) => {
                return Err(format!("invalid settings: not valid JSON ({message})"));
            }
            Err(ObjectError::Duplicate(key)) => {
                return Err(format!(
                    "invalid settings: \"{}\" is given more than once; give each key once",
                    shorten(&key, 40)
                ));
            }
            Err(ObjectError::NotUnicode(key)) => {
                return Err(format!(
                    "invalid settings: {}",
                    crate::args::not_unicode_words(&key, "key")
                ));
            }
            Err(ObjectError::TooManyMembers) => {
                return Err(format!(
                    "invalid settings: more than {} keys (known keys: {KNOWN_KEYS})",
                    crate::json_object::MAX_MEMBERS
                ));
            }
        };
        let mut settings = Settings::default();
        for (key, value) in &members {
            match key.as_str() {
                "enabled" => settings.enabled = flag(key, value)?,
                "maxListResults" => settings.max_list_results = count(key, value)?,
                "maxReadMessages" => settings.max_read_messages = count(key, value)?,
                "maxMessageChars" => settings.max_message_chars = count(key, value)?,
                "maxSendChars" => settings.max_send_chars = count(key, value)?,
                "defaultSendMode" => {
                    settings.default_send_mode = value
                        .as_str()
                        .and_then(DeliveryMode::parse)
                        .ok_or_else(|| wrong(key, "\"queue\" or \"steer\"", value))?
                }
                "frameMessages" => settings.frame_messages = flag(key, value)?,
                "allowResume" => settings.allow_resume = flag(key, value)?,
                "includeInjectedByDefault" => {
                    settings.include_injected_by_default = flag(key, value)?
                }
                "maxHops" => {
                    settings.max_hops = value
                        .as_u64()
                        .filter(|n| MAX_HOPS_RANGE.contains(n))
                        .and_then(|n| u32::try_from(n).ok())
                        .ok_or_else(|| wrong(key, "an integer from 1 to 64", value))?
                }
                "readScope" => {
                    settings.read_scope = value
                        .as_str()
                        .and_then(ReadScope::parse)
                        .ok_or_else(|| wrong(key, ReadScope::TAKES, value))?
                }
                "sendScope" => {
                    settings.send_scope = value
                        .as_str()
                        .and_then(SendScope::parse)
                        .ok_or_else(|| wrong(key, SendScope::TAKES, value))?
                }
                "maxAwaitSeconds" => {
                    settings.max_await_seconds =
                        ranged(key, value, MAX_AWAIT_RANGE, "an integer from 0 to 3600")?
                }
                "maxSendsPerTarget" => {
                    settings.max_sends_per_target = ranged(
                        key,
                        value,
                        0..=u64::from(u32::MAX),
                        "an integer from 0 (no cap) to 4294967295",
                    )?
                }
                "maxSends" => {
                    settings.max_sends = ranged(
                        key,
                        value,
                        0..=u64::from(u32::MAX),
                        "an integer from 0 (no cap) to 4294967295",
                    )?
                }
                "sendWindowMinutes" => {
                    settings.send_window_minutes = ranged(
                        key,
                        value,
                        SEND_WINDOW_RANGE,
                        "an integer from 1 to 10080 (a week)",
                    )?
                }
                "allowActions" => settings.allow_actions = flag(key, value)?,
                "maxClaimMinutes" | "claimGraceMinutes" => {
                    let minutes = ranged(
                        key,
                        value,
                        CLAIM_MINUTES_RANGE,
                        "an integer from 1 to 10080 (a week)",
                    )?;
                    if key == "maxClaimMinutes" {
                        settings.max_claim_minutes = minutes;
                    } else {
                        settings.claim_grace_minutes = minutes;
                    }
                }
                unknown => {
                    return Err(format!(
                        "invalid settings: unknown key \"{}\" (known keys: {KNOWN_KEYS})",
                        shorten(unknown, 40)
                    ));
                }
            }
        }
        Ok(settings)
    }
}

fn wrong(key: &str, takes: &str, got: &JsonValue) -> String {
    format!(
        "invalid settings: {key} must be {takes} (got {})",
        describe_value(got)
    )
}

fn flag(key: &str, value: &JsonValue) -> Result<bool, String> {
    value
        .as_bool()
        .ok_or_else(|| wrong(key, "true or false", value))
}

fn ranged(
    key: &str,
    value: &JsonValue,
    range: std::ops::RangeInclusive<u64>,
    takes: &str,
) -> Result<u32, String> {
    value
        .as_u64()
        .filter(|n| range.contains(n))
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(|| wrong(key, takes, value))
}

fn count(key: &str, value: &JsonValue) -> Result<u32, String> {
    let all = 1..=u64::from(u32::MAX);
    ranged(key, value, all, "an integer from 1 to 4294967295")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_and_null_mean_defaults() {
        assert_eq!(Settings::from_json(""), Ok(Settings::default()));
        assert_eq!(Settings::from_json(" null "), Ok(Settings::default()));
        assert_eq!(Settings::from_json("{}"), Ok(Settings::default()));
    }

    #[test]
    fn every_key_is_read() {
        let settings = Settings::from_json(
            r#"{"enabled":false,"maxListResults":3,"maxReadMessages":4,"maxMessageChars":5,
            "maxSendChars":6,"defaultSendMode":"steer","frameMessages":false,
            "allowResume":false,"includeInjectedByDefault":true,"maxHops":64,
            "readScope":"tree","sendScope":"none","maxAwaitSeconds":0,"maxSendsPerTarget":0,
            "maxSends":7,"sendWindowMinutes":10080,"allowActions":false,
            "maxClaimMinutes":30,"claimGraceMinutes":2}"#,
        )
        .unwrap();
        assert_eq!(
            settings,
            Settings {
                enabled: false,
                max_list_results: 3,
                max_read_messages: 4,
                max_message_chars: 5,
                max_send_chars: 6,
                default_send_mode: DeliveryMode::Steer,
                frame_messages: false,
                allow_resume: false,
                include_injected_by_default: true,
                max_hops: 64,
                read_scope: ReadScope::Tree,
                send_scope: SendScope::None,
                max_await_seconds: 0,
                max_sends_per_target: 0,
                max_sends: 7,
                send_window_minutes: 10080,
                allow_actions: false,
                max_claim_minutes: 30,
                claim_grace_minutes: 2,
            }
        );
    }

    #[test]
    fn a_key_given_twice_is_refused() {
        assert_eq!(
            Settings::from_json(r#"{"allowResume": true, "allowResume": false}"#).unwrap_err(),
            "invalid settings: \"allowResume\" is given more than once; give each key once"
        );
    }

    #[test]
    fn unknown_key_is_named() {
        let err = Settings::from_json(r#"{"maxListResult": 3}"#).unwrap_err();
        assert!(
            err.starts_with("invalid settings: unknown key \"maxListResult\""),
            "{err}"
        );
        assert!(err.contains("maxListResults"), "{err}");
    }

    #[test]
    fn wrong_types_are_named_with_what_was_given() {
        assert_eq!(
            Settings::from_json(r#"{"enabled": "yes"}"#).unwrap_err(),
            "invalid settings: enabled must be true or false (got \"yes\")"
        );
        assert_eq!(
            Settings::from_json(r#"{"maxSendChars": 0}"#).unwrap_err(),
            "invalid settings: maxSendChars must be an integer from 1 to 4294967295 (got 0)"
        );
        assert_eq!(
            Settings::from_json(r#"{"defaultSendMode": "later"}"#).unwrap_err(),
            "invalid settings: defaultSendMode must be \"queue\" or \"steer\" (got \"later\")"
        );
        for (settings, error) in [
            (
                r#"{"maxHops": 0}"#,
                "maxHops must be an integer from 1 to 64 (got 0)",
            ),
            (
                r#"{"maxHops": 65}"#,
                "maxHops must be an integer from 1 to 64 (got 65)",
            ),
            (
                r#"{"maxHops": "5"}"#,
                "maxHops must be an integer from 1 to 64 (got \"5\")",
            ),
            (
                r#"{"readScope": "team"}"#,
                "readScope must be \"all\", \"workspace\", \"tree\" or \"self\" (got \"team\")",
            ),
            (
                r#"{"maxAwaitSeconds": 3601}"#,
                "maxAwaitSeconds must be an integer from 0 to 3600 (got 3601)",
            ),
            (
                r#"{"maxSends": -1}"#,
                "maxSends must be an integer from 0 (no cap) to 4294967295 (got -1)",
            ),
            (
                r#"{"sendWindowMinutes": 0}"#,
                "sendWindowMinutes must be an integer from 1 to 10080 (a week) (got 0)",
            ),
            (
                r#"{"claimGraceMinutes": 0}"#,
                "claimGraceMinutes must be an integer from 1 to 10080 (a week) (got 0)",
            ),
            (
                r#"{"sendScope": "self"}"#,
                "sendScope must be \"all\", \"workspace\", \"tree\" or \"none\" (got \"self\")",
            ),
        ] {
            assert_eq!(
                Settings::from_json(settings).unwrap_err(),
                format!("invalid settings: {error}")
            );
        }
        assert!(
            Settings::from_json("[1]")
                .unwrap_err()
                .contains("expected a JSON object")
        );
        assert!(
            Settings::from_json("{")
                .unwrap_err()
                .contains("not valid JSON")
        );
    }
}
