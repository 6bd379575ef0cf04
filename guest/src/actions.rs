//! What a session did: one line per tool call (`[action] NAME: SUMMARY (STATUS)`),
//! made from the call's name, a one-line summary of its input and how it ended; never
//! its output. A summary passes the hygiene every line does, and what looks like a
//! secret reads `[redacted]` (the patterns are [`mask_secrets`]'s).

use crate::host::ToolAction;
use crate::hygiene::{TRUNCATION_MARKER, fold_field, fold_line};
use crate::json_object::{JsonValue, TopLevel};

/// A summary's most chars, its `…` included when cut (SPEC: "at most N chars; a cut
/// ends with `…`").
pub const SUMMARY_MAX_CHARS: usize = 80;

/// What replaces a secret.
pub const REDACTED: &str = "[redacted]";

/// Input keys whose value says what a call did, most telling first: a shell command, a
/// file, a search, an address, a task.
const TELLING_KEYS: &[&str] = &[
    "command",
    "cmd",
    "file_path",
    "filePath",
    "path",
    "pattern",
    "query",
    "url",
    "description",
    "prompt",
    "message",
    "session_id",
];

/// Words that make an assignment's value, a flag's value or a key's value a secret.
const SECRET_WORDS: &[&str] = &[
    "password",
    "passwd",
    "pwd",
    "secret",
    "token",
    "apikey",
    "api_key",
    "api-key",
    "access_key",
    "accesskey",
    "private_key",
    "credential",
    "auth",
];

/// Prefixes of well-known credentials (API keys and access tokens); a word that
/// starts with one and has at least 8 more token characters is a secret.
const SECRET_PREFIXES: &[&str] = &[
    "sk-",
    "sk_live_",
    "sk_test_",
    "rk_live_",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "xoxb-",
    "xoxp-",
    "xoxa-",
    "xoxs-",
    "AKIA",
    "ASIA",
    "AIza",
    "hf_",
    "npm_",
    "eyJ",
];

/// Writes each call as its own line after a message's text.
pub fn write_actions(out: &mut String, actions: &[ToolAction]) {
    for action in actions {
        let name = fold_field(&action.name);
        out.push_str("\n[action] ");
        let name = if name.is_empty() { "(unnamed)" } else { &name };
        out.push_str(&without_markers(name));
        let summary = summarize(&action.input);
        if !summary.is_empty() {
            out.push_str(": ");
            out.push_str(&without_markers(&summary));
        }
        out.push_str(" (");
        out.push_str(action.status.as_str());
        out.push(')');
    }
}

/// `text` with the plugin's truncation marker written `…\[truncated`, as in bodies:
/// only the plugin's own marker ends a message.
fn without_markers(text: &str) -> std::borrow::Cow<'_, str> {
    if text.contains(TRUNCATION_MARKER) {
        std::borrow::Cow::Owned(text.replace(TRUNCATION_MARKER, "…\\[truncated"))
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

/// A one-line summary of a call's input: the most telling string of a JSON object (a
/// command, a path, a query), else its plain members as `key=value`, else the input
/// itself; folded, secrets masked, cut to [`SUMMARY_MAX_CHARS`].
pub fn summarize(input: &str) -> String {
    let picked = match TopLevel::parse(input) {
        Ok(TopLevel::Object(members)) => pick(&members),
        Ok(TopLevel::Other(JsonValue::String(text))) => Some(text),
        _ => None,
    };
    let folded = fold_line(picked.as_deref().unwrap_or(input));
    cut(&mask_secrets(&folded), SUMMARY_MAX_CHARS)
}

/// The value a summary shows from an object's members; a member whose key names a
/// secret shows as [`REDACTED`].
fn pick(members: &[(String, JsonValue)]) -> Option<String> {
    let shown = |key: &str, text: &str| {
        if names_secret(key) {
            REDACTED.to_string()
        } else {
            text.to_string()
        }
    };
    for key in TELLING_KEYS {
        if let Some((key, JsonValue::String(text))) = members.iter().find(|(k, _)| k == key) {
            return Some(shown(key, text));
        }
    }
    // Otherwise its plain members, `key=value` each (nested values left out).
    let pairs: Vec<String> = (members.iter())
        .filter_map(|(key, value)| {
            let value = match value {
                JsonValue::String(text) => shown(key, text),
                JsonValue::Bool(flag) => flag.to_string(),
                JsonValue::Unsigned(n) => n.to_string(),
                JsonValue::Negative(n) => n.to_string(),
                _ => return None,
            };
            Some(format!("{key}={value}"))
        })
        .collect();
    (!pairs.is_empty()).then(|| pairs.join(" "))
}

/// `text` in at most `max_chars` chars: whole, or cut with `…` as its last.
fn cut(text: &str, max_chars: usize) -> String {
    if text.chars().count() <= max_chars {
        return text.to_string();
    }
    let end =
        (text.char_indices().nth(max_chars.saturating_sub(1))).map_or(text.len(), |(end, _)| end);
    let mut short = text[..end].trim_end().to_string();
    short.push('…');
    short
}

/// Whether a key or flag names a secret (`API_KEY`, `--password`, `auth_token`).
fn names_secret(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    SECRET_WORDS.iter().any(|word| key.contains(word))
}

fn is_token_char(ch: char) -> bool {
    ch.is_ascii_alphanumeric() || matches!(ch, '_' | '-' | '.' | '/' | '+' | '=')
}

/// Quotes and punctuation around a word that are kept when the word is masked.
fn is_wrapping(ch: char) -> bool {
    matches!(
        ch,
        '"' | '\'' | '`' | ',' | ';' | ')' | '(' | '{' | '}' | '[' | ']'
    )
}

/// Masks what looks like a secret in one folded line, word by word (words are what
/// the single spaces of a folded line separate):
/// - a credential with a well-known prefix (`sk-`, `ghp_`, `github_pat_`, `xoxb-`,
///   `AKIA`, `AIza`, `glpat-`, `hf_`, `npm_`, a JWT's `eyJ`, …) and 8 or more token
///   characters after it;
/// - the value of an assignment whose name holds a secret word (`password`, `passwd`,
///   `pwd`, `secret`, `token`, `api_key`, `apikey`, `access_key`, `private_key`,
///   `credential`, `auth`): `API_KEY=…`, `"token": "…"`, `password:…`;
/// - the word after such a flag (`--password …`, `--token …`) and after `Bearer` or
///   `Basic`;
/// - the user and password of a URL (`https://user:pass@host` reads
///   `https://[redacted]@host`).
pub fn mask_secrets(line: &str) -> String {
    let words: Vec<&str> = line.split(' ').collect();
    let mut out = String::with_capacity(line.len());
    let mut mask_next = false;
    for (at, word) in words.iter().enumerate() {
        if at > 0 {
            out.push(' ');
        }
        let core = word.trim_matches(is_wrapping);
        let lower = core.to_ascii_lowercase();
        let scheme = lower == "bearer" || lower == "basic";
        if mask_next && !word.is_empty() && !scheme {
            mask_next = false;
            out.push_str(&mask_whole(word));
            continue;
        }
        if scheme {
            mask_next = true;
            out.push_str(word);
            continue;
        }
        if let Some((name, value)) = split_assignment(word) {
            out.push_str(name);
            if value.trim_matches(is_wrapping).is_empty() {
                // `"token": "…"`: the value is the next word.
                out.push_str(value);
                mask_next = true;
            } else {
                out.push_str(&mask_whole(value));
            }
            continue;
        }
        if core.starts_with('-') && names_secret(core) {
            mask_next = true;
            out.push_str(word);
            continue;
        }
        if is_prefixed_secret(core) {
            out.push_str(&mask_whole(word));
            continue;
        }
        out.push_str(&mask_url_credentials(word));
    }
    out
}

/// `word` split after the `=` or `:` of an assignment whose name holds a secret word.
fn split_assignment(word: &str) -> Option<(&str, &str)> {
    let at = word.find(['=', ':'])?;
    let name = word[..at].trim_matches(|ch: char| is_wrapping(ch) || ch == '$' || ch == '-');
    if name.is_empty()
        || !name
            .chars()
            .all(|ch| ch.is_ascii_alphanumeric() || ch == '_' || ch == '-' || ch == '.')
    {
        return None;
    }
    // A URL's scheme is not an assignment.
    if word[at..].starts_with("://") {
        return None;
    }
    names_secret(name).then(|| word.split_at(at + 1))
}

/// A credential with a well-known prefix and at least 8 token characters after it.
fn is_prefixed_secret(core: &str) -> bool {
    SECRET_PREFIXES.iter().any(|prefix| {
        core.strip_prefix(prefix)
            .is_some_and(|rest| rest.len() >= 8 && rest.chars().all(is_token_char))
    })
}

/// The word as [`REDACTED`], keeping the quotes and punctuation around it.
fn mask_whole(word: &str) -> String {
    if word.contains(REDACTED) {
        return word.to_string(); // masked already
    }
    let start = word.len() - word.trim_start_matches(is_wrapping).len();
    let end = word.trim_end_matches(is_wrapping).len().max(start);
    format!("{}{REDACTED}{}", &word[..start], &word[end..])
}

/// `scheme://user:pass@host…` with the user and password masked.
fn mask_url_credentials(word: &str) -> String {
    let Some(scheme_end) = word.find("://") else {
        return word.to_string();
    };
    let authority_start = scheme_end + 3;
    let authority_end = word[authority_start..]
        .find(['/', '?', '#'])
        .map_or(word.len(), |at| authority_start + at);
    match word[authority_start..authority_end].rfind('@') {
        Some(at) => format!(
            "{}{REDACTED}{}",
            &word[..authority_start],
            &word[authority_start + at..]
        ),
        None => word.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::ActionStatus;

    #[test]
    fn a_summary_is_the_most_telling_input() {
        assert_eq!(
            summarize(r#"{"description":"run tests","command":"cargo test -p guest"}"#),
            "cargo test -p guest"
        );
        assert_eq!(
            summarize(r#"{"file_path":"/w/src/lib.rs","old_string":"a"}"#),
            "/w/src/lib.rs"
        );
        assert_eq!(
            summarize(r#"{"n":3,"other":"x y","deep":{"a":1}}"#),
            "n=3 other=x y"
        );
        assert_eq!(summarize("plain\n  text"), "plain text");
        assert_eq!(
            summarize(r#"{"command":["bash","-lc","ls"]}"#),
            r#"{"command":["bash","-lc","ls"]}"#
        );
        let long = format!(r#"{{"command":"{}"}}"#, "x".repeat(200));
        let cut = summarize(&long);
        assert_eq!(cut.chars().count(), 80);
        assert!(cut.ends_with('…'));
        // Exactly 80 is whole; 81 is cut to 80, its `…` among them.
        let at = |n: usize| format!(r#"{{"command":"{}"}}"#, "y".repeat(n));
        assert_eq!(summarize(&at(80)), "y".repeat(80));
        assert_eq!(summarize(&at(81)), format!("{}…", "y".repeat(79)));
        // Terminal escapes and line breaks are gone.
        assert_eq!(summarize("{\"command\":\"a\\u001b[31mb\\nc\"}"), "ab c");
    }

    #[test]
    fn secrets_read_redacted() {
        let cases = [
            ("export API_KEY=abc123def", "export API_KEY=[redacted]"),
            (
                "curl -H \"Authorization: Bearer abcdef123456\" x",
                "curl -H \"Authorization: Bearer [redacted]\" x",
            ),
            (
                "mysql --password hunter2 db",
                "mysql --password [redacted] db",
            ),
            (
                "git clone https://me:pa55@example.com/r.git",
                "git clone https://[redacted]@example.com/r.git",
            ),
            ("echo sk-proj1234567890abcdef", "echo [redacted]"),
            ("use ghp_ABCDEFGHIJKLMNOP now", "use [redacted] now"),
            ("AKIAABCDEFGHIJKLMNOP", "[redacted]"),
            ("{\"token\": \"zzz\"}", "{\"token\": \"[redacted]\"}"),
            ("password:'s3cret',", "password:'[redacted]',"),
            // Not secrets.
            ("cargo test -p guest", "cargo test -p guest"),
            ("https://example.com/a:b@c", "https://example.com/a:b@c"),
            ("sk-short", "sk-short"),
            ("tokens are counted", "tokens are counted"),
        ];
        for (line, want) in cases {
            assert_eq!(mask_secrets(line), want, "{line}");
        }
        // A key that names a secret shows none of its value.
        assert_eq!(summarize(r#"{"api_token":"abc"}"#), "api_token=[redacted]");
    }

    #[test]
    fn one_line_per_call_with_its_status() {
        let mut out = String::new();
        write_actions(
            &mut out,
            &[
                ToolAction {
                    name: "Bash".into(),
                    input: r#"{"command":"cargo test"}"#.into(),
                    status: ActionStatus::Ok,
                },
                ToolAction {
                    name: "Edit\nx".into(),
                    input: String::new(),
                    status: ActionStatus::Running,
                },
            ],
        );
        assert_eq!(
            out,
            "\n[action] Bash: cargo test (ok)\n[action] Edit x (running)"
        );
    }
}
