//! Shared text rendering: a session's identity line, echoes of the model's values,
//! refusals and near-id suggestions. Every host value goes through the rules of
//! [`crate::hygiene`] on its way here.

use crate::host::{HostError, SessionHeader, SessionQuery};
use crate::hygiene::{
    cut_chars, fold_line, show_id, write_id, write_quoted_inner, write_row_field,
};
use crate::json_object::{JsonValue, TopLevel};
use crate::scope::{Places, Reach};

/// Writes a session's identity as every tool shows it:
/// `ID [live|cold, top-level|subagent]`, then ` | cwd=PATH` when it has one.
pub fn write_session_identity(out: &mut String, header: &SessionHeader) {
    write_identity(
        out,
        &header.id,
        header.live,
        header.is_subagent(),
        header.cwd.as_deref(),
    );
    write_row_field(out, " | machine=", header.machine.as_deref());
}

/// [`write_session_identity`] from the facts themselves.
pub fn write_identity(out: &mut String, id: &str, live: bool, subagent: bool, cwd: Option<&str>) {
    write_id(out, id);
    out.push_str(match (live, subagent) {
        (true, false) => " [live, top-level]",
        (true, true) => " [live, subagent]",
        (false, false) => " [cold, top-level]",
        (false, true) => " [cold, subagent]",
    });
    write_row_field(out, " | cwd=", cwd);
}

/// The session a `session_id` argument names: the id matched exactly first, then, if
/// the argument is a JSON string literal (the form ids with odd characters are shown
/// in), its decoded value.
pub fn resolve_session(host: &mut impl SessionQuery, argument: &str) -> Option<SessionHeader> {
    if let Some(header) = host.get_session(argument) {
        return Some(header);
    }
    let Ok(TopLevel::Other(JsonValue::String(decoded))) = TopLevel::parse(argument) else {
        return None;
    };
    (decoded != argument)
        .then(|| host.get_session(&decoded))
        .flatten()
}

/// Number of Unicode scalar values, the unit of every count in the tools.
pub fn char_count(text: &str) -> usize {
    text.chars().count()
}

/// A JSON value as shown in "(got …)": compact JSON, at most 40 chars, one line.
pub fn describe_value(value: &JsonValue) -> String {
    shorten(&value.describe(), 40)
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

/// A folded value made safe to sit between double quotes.
pub fn quoted(folded: &str) -> String {
    let mut out = String::with_capacity(folded.len());
    write_quoted_inner(&mut out, folded);
    out
}

/// Why a call was refused (`tools.refusal`): the host learns it beside the text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RefusalCode {
    InvalidArguments,
    UnknownTool,
    NotFound,
    NotMessageable,
    NotPermitted,
    RefusedByTarget,
    LoopGuard,
    RateLimited,
    ResumeDisabled,
    EmptyBody,
    Rejected,
    /// The host could not tell whether a send's message was stored.
    Undecided,
    /// Another tree's claim covers what was asked (`sessions_claim`).
    Claimed,
}

impl RefusalCode {
    pub fn as_str(self) -> &'static str {
        match self {
            RefusalCode::InvalidArguments => "invalid-arguments",
            RefusalCode::UnknownTool => "unknown-tool",
            RefusalCode::NotFound => "not-found",
            RefusalCode::NotMessageable => "not-messageable",
            RefusalCode::NotPermitted => "not-permitted",
            RefusalCode::RefusedByTarget => "refused-by-target",
            RefusalCode::LoopGuard => "loop-guard",
            RefusalCode::RateLimited => "rate-limited",
            RefusalCode::ResumeDisabled => "resume-disabled",
            RefusalCode::EmptyBody => "empty-body",
            RefusalCode::Rejected => "rejected",
            RefusalCode::Undecided => "undecided",
            RefusalCode::Claimed => "claimed",
        }
    }
}

/// A reply a send asks the host to await after the call (`tools.reply-wait`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplyWait {
    pub target: String,
    pub message_id: String,
    pub seconds: u32,
}

/// One call's result for the model: the text, the refusal code when the text is a
/// refusal, and the reply to await when the send asked for one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer {
    pub text: String,
    pub refusal: Option<RefusalCode>,
    pub await_reply: Option<ReplyWait>,
}

impl Answer {
    pub fn ok(text: String) -> Answer {
        Answer {
            text,
            refusal: None,
            await_reply: None,
        }
    }

    pub fn refused(code: RefusalCode, text: String) -> Answer {
        Answer {
            text,
            refusal: Some(code),
            await_reply: None,
        }
    }
}

/// A refused call: a code, its cause and the next step, as text for the model.
pub struct Refusal {
    pub tool: &'static str,
    pub code: RefusalCode,
    pub cause: String,
    pub next: String,
}

impl Refusal {
    /// The answer of `tool` refusing with `code`: the cause, then the next step.
    pub fn of(tool: &'static str, code: RefusalCode, cause: String, next: &str) -> Answer {
        Refusal {
            tool,
            code,
            cause,
            next: next.to_string(),
        }
        .answer()
    }

    pub fn answer(&self) -> Answer {
        let text = format!(
            "{} refused ({}): {}\nNext step: {}",
            self.tool,
            self.code.as_str(),
            self.cause,
            self.next
        );
        Answer::refused(self.code, text)
    }
}

/// How many near ids a `not-found` refusal offers.
const NEAR_IDS_SHOWN: usize = 3;

/// Up to three known ids that look like `wanted` (prefix or substring either way,
/// case-insensitive), closest first; shown on `not-found` so a model can correct a
/// mistyped or shortened id.
pub fn near_ids<'a>(wanted: &str, known: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut near = related_ids(wanted, known.map(|id| (id, false)));
    near.truncate(NEAR_IDS_SHOWN);
    near.into_iter().map(|(shown, _)| shown).collect()
}

/// Every known id that looks like `wanted`, closest first: as shown, and as known with
/// whether the index calls it a subagent.
fn related_ids<'a>(
    wanted: &str,
    known: impl Iterator<Item = (&'a str, bool)>,
) -> Vec<(String, (&'a str, bool))> {
    let wanted = wanted.trim().to_lowercase();
    if wanted.is_empty() {
        return Vec::new();
    }
    let mut scored: Vec<(usize, String, (&str, bool))> = known
        .filter_map(|(id, subagent)| {
            let lower = id.to_lowercase();
            let common = lower
                .chars()
                .zip(wanted.chars())
                .take_while(|(a, b)| a == b)
                .count();
            let related = lower.contains(&wanted)
                || (!lower.is_empty() && wanted.contains(&lower))
                || common >= 4.max(char_count(&wanted) / 2);
            related.then(|| (common, show_id(id), (id, subagent)))
        })
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    scored.dedup_by(|a, b| a.1 == b.1);
    scored
        .into_iter()
        .map(|(_, shown, id)| (shown, id))
        .collect()
}

/// The `not-found` refusal for `id`, offering near ids from the host's listing (asked
/// only now, on the failure path), drawn only from the sessions `reach` takes in.
pub fn not_found(
    host: &mut impl SessionQuery,
    places: &mut Places,
    reach: Reach,
    tool: &'static str,
    id: &str,
) -> Result<Refusal, HostError> {
    let index = host.list_sessions();
    let known = index.ids()?.zip(index.entries.iter().map(|e| e.subagent));
    let mut related = related_ids(id, known);
    if reach != Reach::All {
        let asked: Vec<(&str, bool)> = related.iter().map(|(_, known)| *known).collect();
        let inside = places.reaches(host, reach, &asked);
        let mut inside = inside.into_iter();
        related.retain(|_| inside.next().unwrap_or(false));
    }
    let near: Vec<String> = (related.into_iter())
        .take(NEAR_IDS_SHOWN)
        .map(|(shown, _)| shown)
        .collect();
    Ok(Refusal {
        tool,
        code: RefusalCode::NotFound,
        cause: format!("no session has the id \"{}\".", quoted(&shorten(id, 100))),
        next: format!(
            "re-run sessions_list for a valid id. {}",
            near_ids_sentence(&near)
        ),
    })
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

    fn value(text: &str) -> JsonValue {
        match TopLevel::parse(text).unwrap() {
            TopLevel::Other(value) => value,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn describe_value_shortens_and_folds() {
        let long = JsonValue::String("x\n".repeat(50));
        let shown = describe_value(&long);
        assert_eq!(shown.chars().count(), 41);
        assert!(shown.starts_with("\"x\\nx"));
        assert_eq!(describe_value(&value("[1]")), "an array");
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

    #[test]
    fn near_ids_are_shown_by_the_id_rule() {
        let known = ["session-a b", "session-a|c"];
        assert_eq!(
            near_ids("session-a", known.iter().copied()),
            vec!["\"session-a b\"", "\"session-a|c\""]
        );
    }
}
