//! Output hygiene and shared text rendering. Host data is untrusted: every single-line
//! field goes through [`fold_line`], every multi-line body through [`escape_body`],
//! and every refusal through [`Refusal`], so no host value can add a row or a header.

use crate::host::{SessionHeader, SessionQuery};
use crate::json::Json;
use std::fmt::Write as _;

/// Longest title shown, in chars, including the closing `…` of a cut.
pub const TITLE_MAX_CHARS: usize = 80;

/// What an empty or missing title reads as.
pub const UNTITLED: &str = "(untitled)";

/// Folds a host value onto one line: line breaks and runs of white space become one
/// space, other control characters (C0, C1, ESC) are dropped, the ends are trimmed.
pub fn fold_line(raw: &str) -> String {
    if is_folded_ascii(raw) {
        return raw.to_string();
    }
    let mut out = String::with_capacity(raw.len());
    let mut pending_space = false;
    for ch in raw.chars() {
        if ch.is_whitespace() {
            pending_space = true;
        } else if ch.is_control() {
            // Dropped without breaking a run of white space around it.
        } else {
            if pending_space && !out.is_empty() {
                out.push(' ');
            }
            pending_space = false;
            out.push(ch);
        }
    }
    out
}

/// Printable ASCII with single inner spaces folds to itself: the common case, checked
/// byte by byte without building a new string.
fn is_folded_ascii(raw: &str) -> bool {
    let bytes = raw.as_bytes();
    let edges_clean =
        bytes.first().is_none_or(|b| *b != b' ') && bytes.last().is_none_or(|b| *b != b' ');
    edges_clean
        && bytes.iter().all(|b| (b' '..=b'~').contains(b))
        && !bytes.windows(2).any(|pair| pair == b"  ")
}

/// [`fold_line`], lowercased for case-insensitive matching.
pub fn fold_lower(raw: &str) -> String {
    if is_folded_ascii(raw) {
        return raw.to_ascii_lowercase();
    }
    fold_line(raw).to_lowercase()
}

/// A title as shown: folded, at most [`TITLE_MAX_CHARS`] chars, `(untitled)` when
/// missing or empty.
pub fn fold_title(raw: Option<&str>) -> String {
    let folded = fold_line(raw.unwrap_or(""));
    if folded.is_empty() {
        return UNTITLED.to_string();
    }
    match folded.char_indices().nth(TITLE_MAX_CHARS - 1) {
        // More than the limit: keep one char less and close with the ellipsis.
        Some((cut, _)) if folded[cut..].chars().nth(1).is_some() => {
            let mut short = folded[..cut].to_string();
            short.push('…');
            short
        }
        _ => folded,
    }
}

/// Writes a session's identity as every tool shows it:
/// `ID [live|cold, top-level|subagent]`, then ` | cwd=PATH` when it has one.
pub fn write_session_identity(out: &mut String, header: &SessionHeader) {
    let _ = write!(
        out,
        "{} [{}, {}]",
        fold_line(&header.id),
        if header.live { "live" } else { "cold" },
        if header.is_subagent() {
            "subagent"
        } else {
            "top-level"
        }
    );
    let cwd = fold_line(header.cwd.as_deref().unwrap_or(""));
    if !cwd.is_empty() {
        let _ = write!(out, " | cwd={cwd}");
    }
}

/// Characters after which a new line begins, for body escaping. Wider than `\n` so
/// that no renderer's idea of a line break can start an unescaped line.
fn is_line_break(ch: char) -> bool {
    matches!(
        ch,
        '\n' | '\r' | '\u{0b}' | '\u{0c}' | '\u{85}' | '\u{2028}' | '\u{2029}'
    )
}

/// Writes a body keeping its lines, but a line that begins with `---` or `\` gets one
/// more leading `\`: no body line can pass for a message header or a frame line, and
/// removing one leading `\` from such lines restores the body.
pub fn escape_body_into(out: &mut String, body: &str) {
    let mut at_line_start = true;
    let mut rest = body;
    while !rest.is_empty() {
        if at_line_start && (rest.starts_with("---") || rest.starts_with('\\')) {
            out.push('\\');
        }
        let mut chars = rest.chars();
        let ch = chars.next().unwrap_or_default();
        out.push(ch);
        at_line_start = is_line_break(ch);
        rest = chars.as_str();
    }
}

/// [`escape_body_into`] into a new string.
pub fn escape_body(body: &str) -> String {
    let mut out = String::with_capacity(body.len() + 8);
    escape_body_into(&mut out, body);
    out
}

/// Splits `text` after `max_chars` chars: the kept prefix and how many chars were cut.
/// Never splits a character.
pub fn cut_chars(text: &str, max_chars: usize) -> (&str, usize) {
    match text.char_indices().nth(max_chars) {
        Some((at, _)) => (&text[..at], text[at..].chars().count()),
        None => (text, 0),
    }
}

/// Number of Unicode scalar values, the unit of every count in the tools.
pub fn char_count(text: &str) -> usize {
    text.chars().count()
}

/// A JSON value as shown in "(got …)": compact JSON, at most 40 chars, one line.
pub fn describe_value(value: &Json) -> String {
    let json = match value {
        Json::Array(items) if items.is_empty() => "[]".to_string(),
        Json::Array(_) => "an array".to_string(),
        Json::Object(_) => "an object".to_string(),
        other => other.to_json(),
    };
    shorten(&json, 40)
}

/// Folds and caps a value quoted back to the model, so an echo stays short.
pub fn shorten(raw: &str, max_chars: usize) -> String {
    let folded = fold_line(raw);
    let (kept, cut) = cut_chars(&folded, max_chars);
    if cut == 0 {
        folded
    } else {
        format!("{kept}…")
    }
}

/// A refused call: a code, its cause and the next step, as text for the model.
pub struct Refusal {
    pub tool: &'static str,
    pub code: &'static str,
    pub cause: String,
    pub next: String,
}

impl Refusal {
    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = write!(
            out,
            "{} refused ({}): {}\nNext step: {}",
            self.tool, self.code, self.cause, self.next
        );
        out
    }
}

/// Up to three known ids that look like `wanted` (prefix or substring either way,
/// case-insensitive), closest first; shown on `not-found` so a model can correct a
/// mistyped or shortened id.
pub fn near_ids<'a>(wanted: &str, known: impl Iterator<Item = &'a str>) -> Vec<String> {
    let wanted = wanted.trim().to_lowercase();
    if wanted.is_empty() {
        return Vec::new();
    }
    let mut scored: Vec<(usize, String)> = known
        .filter_map(|id| {
            let lower = id.to_lowercase();
            let common = lower
                .chars()
                .zip(wanted.chars())
                .take_while(|(a, b)| a == b)
                .count();
            let related = lower.contains(&wanted)
                || (!lower.is_empty() && wanted.contains(&lower))
                || common >= 4.max(char_count(&wanted) / 2);
            related.then(|| (common, fold_line(id)))
        })
        .filter(|(_, id)| !id.is_empty())
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    scored.dedup_by(|a, b| a.1 == b.1);
    scored.into_iter().take(3).map(|(_, id)| id).collect()
}

/// The `not-found` refusal for `id`, offering near ids from the host's listing (asked
/// only now, on the failure path).
pub fn not_found(host: &mut impl SessionQuery, tool: &'static str, id: &str) -> Refusal {
    let known = host.list_sessions();
    let near = near_ids(id, known.iter().map(|header| header.id.as_str()));
    Refusal {
        tool,
        code: "not-found",
        cause: format!("no session has the id \"{}\".", shorten(id, 100)),
        next: format!(
            "re-run sessions_list for a valid id. {}",
            near_ids_sentence(&near)
        ),
    }
}

/// The sentence that offers near ids, or says there are none.
pub fn near_ids_sentence(near: &[String]) -> String {
    if near.is_empty() {
        "No known id is close to it.".to_string()
    } else {
        format!("Near ids: {}.", near.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fold_line_joins_lines_and_runs_of_space() {
        assert_eq!(fold_line("  a\n\n b\t\r\nc  "), "a b c");
        assert_eq!(fold_line("a\u{2028}b"), "a b");
    }

    #[test]
    fn fold_line_drops_control_characters() {
        assert_eq!(fold_line("\u{1b}[31mred\u{1b}[0m"), "[31mred[0m");
        assert_eq!(fold_line("a\u{0}b\u{7f}c\u{9b}d"), "abcd");
        assert_eq!(fold_line("a \u{1b} b"), "a b");
    }

    #[test]
    fn the_ascii_fast_path_agrees_with_the_general_fold() {
        for raw in [
            "plain",
            "two words",
            " lead",
            "trail ",
            "dou  ble",
            "",
            "A~!",
            "tab\there",
            "é x",
        ] {
            let general: String = {
                let mut out = String::new();
                for word in raw.split_whitespace() {
                    if !out.is_empty() {
                        out.push(' ');
                    }
                    out.push_str(word);
                }
                out
            };
            assert_eq!(fold_line(raw), general, "{raw:?}");
            assert_eq!(fold_lower(raw), general.to_lowercase(), "{raw:?}");
        }
    }

    #[test]
    fn fold_title_caps_at_80_chars_with_ellipsis() {
        let exact = "é".repeat(80);
        assert_eq!(fold_title(Some(&exact)), exact);
        let long = "é".repeat(81);
        let shown = fold_title(Some(&long));
        assert_eq!(shown.chars().count(), 80);
        assert!(shown.ends_with("é…"));
    }

    #[test]
    fn fold_title_reads_untitled_when_missing_or_blank() {
        assert_eq!(fold_title(None), "(untitled)");
        assert_eq!(fold_title(Some(" \n\t ")), "(untitled)");
    }

    #[test]
    fn escape_body_marks_header_and_backslash_lines() {
        assert_eq!(
            escape_body("--- user (seq 1, user) ---\nok\n\\x\n ---"),
            "\\--- user (seq 1, user) ---\nok\n\\\\x\n ---"
        );
        assert_eq!(escape_body("a\r--- b"), "a\r\\--- b");
        assert_eq!(escape_body("-- not a header"), "-- not a header");
    }

    #[test]
    fn cut_chars_counts_chars_not_bytes() {
        assert_eq!(cut_chars("héllo", 2), ("hé", 3));
        assert_eq!(cut_chars("héllo", 5), ("héllo", 0));
        assert_eq!(cut_chars("🦀🦀🦀", 1), ("🦀", 2));
    }

    #[test]
    fn describe_value_shortens_and_folds() {
        let long = Json::String("x\n".repeat(50));
        let shown = describe_value(&long);
        assert_eq!(shown.chars().count(), 41);
        assert!(shown.starts_with("\"x\\nx"));
        assert_eq!(describe_value(&Json::parse("[1]").unwrap()), "an array");
    }

    #[test]
    fn near_ids_prefers_longest_shared_prefix() {
        let known = ["session-abc1", "session-abd2", "other", "session-abc9"];
        assert_eq!(
            near_ids("session-abc", known.iter().copied()),
            vec!["session-abc1", "session-abc9", "session-abd2"]
        );
        assert!(near_ids("zzzz", known.iter().copied()).is_empty());
    }
}
