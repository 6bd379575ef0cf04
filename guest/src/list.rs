//! `sessions_list`: discover peer sessions.

use crate::args::{ArgResult, Args};
use crate::host::{SessionHeader, SessionQuery};
use crate::hygiene::{fold_line, fold_lower, show_title, write_row_field};
use crate::settings::Settings;
use crate::text::write_session_identity;
use std::collections::HashSet;
use std::fmt::Write as _;

pub const NAME: &str = "sessions_list";
const TAKES: &[&str] = &["query", "scope", "live_only", "limit"];
const LIMIT_MAX: u64 = 200;
/// Longest `query`, in chars, and most terms in it: a query's cost is its terms times
/// the host's data, so both are bounded.
pub const QUERY_MAX_CHARS: usize = 256;
pub const QUERY_MAX_TERMS: usize = 16;

/// Which sessions a listing considers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    TopLevel,
    Subagents,
    All,
}

/// Validated arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListRequest {
    pub terms: Vec<String>,
    pub scope: Scope,
    pub live_only: bool,
    /// Rows to show, after the deployment's cap.
    pub limit: usize,
    /// The limit the model asked for when the cap lowered it.
    pub lowered_from: Option<u64>,
}

impl ListRequest {
    pub fn parse(arguments: &str, settings: &Settings) -> ArgResult<ListRequest> {
        let args = Args::parse(arguments, NAME, TAKES)?;
        let query = args.string("query", QUERY_MAX_CHARS)?.unwrap_or("");
        // Folded like the fields it is matched against: invisible characters go, every
        // line break and run of white space separates two terms.
        let folded = fold_lower(query);
        let terms: Vec<String> = folded
            .split(' ')
            .filter(|term| !term.is_empty())
            .map(str::to_string)
            .collect();
        if terms.len() > QUERY_MAX_TERMS {
            return Err(format!(
                "invalid arguments: query must have at most {QUERY_MAX_TERMS} terms (got {})",
                terms.len()
            ));
        }
        let scope = match args.choice("scope", &["top-level", "subagents", "all"])? {
            Some("subagents") => Scope::Subagents,
            Some("all") => Scope::All,
            _ => Scope::TopLevel,
        };
        let live_only = args.boolean("live_only")?.unwrap_or(false);
        let cap = u64::from(settings.max_list_results);
        let asked = args.integer("limit", 1, LIMIT_MAX)?;
        let limit = asked.unwrap_or(cap).min(cap);
        Ok(ListRequest {
            terms,
            scope,
            live_only,
            limit: usize::try_from(limit).unwrap_or(usize::MAX),
            lowered_from: asked.filter(|asked| *asked > cap),
        })
    }
}

/// A session that passed scope and `live_only`. Folding for display happens only for
/// the rows shown; folding for matching only when there is a query.
struct Candidate {
    header: SessionHeader,
    is_caller: bool,
    /// Query terms not found in id, workspace path or preset: only the title can
    /// still match them.
    terms_left: Vec<usize>,
    /// The folded title, whole (matching looks at all of it; the row shows a cut).
    title: Option<String>,
}

impl Candidate {
    fn new(header: SessionHeader, caller: &str, terms: &[String]) -> Candidate {
        let terms_left = if terms.is_empty() {
            Vec::new()
        } else {
            let fields = [
                fold_lower(&header.id),
                fold_lower(header.cwd.as_deref().unwrap_or("")),
                fold_lower(header.preset.as_deref().unwrap_or("")),
            ];
            (0..terms.len())
                .filter(|&t| !fields.iter().any(|field| field.contains(terms[t].as_str())))
                .collect()
        };
        Candidate {
            is_caller: header.id == caller,
            header,
            terms_left,
            title: None,
        }
    }
}

pub fn run(host: &mut impl SessionQuery, caller: &str, request: &ListRequest) -> String {
    let headers = host.list_sessions();
    // A host that repeats an id gets one row for it: the first.
    let mut seen: HashSet<&str> = HashSet::with_capacity(headers.len());
    let keep: Vec<bool> = headers
        .iter()
        .map(|header| {
            seen.insert(header.id.as_str())
                && (header.live || !request.live_only)
                && match request.scope {
                    Scope::TopLevel => !header.is_subagent(),
                    Scope::Subagents => header.is_subagent(),
                    Scope::All => true,
                }
        })
        .collect();
    drop(seen);
    let mut candidates: Vec<Candidate> = headers
        .into_iter()
        .zip(keep)
        .filter(|(_, keep)| *keep)
        .map(|(header, _)| Candidate::new(header, caller, &request.terms))
        .collect();
    // Newest first, ties by id; the caller last, so actionable peers come first. Ids
    // are unique here, so the order is total and an unstable sort gives the same.
    candidates.sort_unstable_by(|a, b| {
        a.is_caller
            .cmp(&b.is_caller)
            .then_with(|| b.header.created_at_ms.cmp(&a.header.created_at_ms))
            .then_with(|| a.header.id.cmp(&b.header.id))
    });

    // One title batch: every candidate whose match still depends on its title, and
    // every sure match that could still be among the rows shown. A sure match is
    // shown only if fewer than `limit` sure matches come before it.
    let mut asked = Vec::new();
    let mut sure_ahead = 0usize;
    for (index, candidate) in candidates.iter().enumerate() {
        if !candidate.terms_left.is_empty() {
            asked.push(index);
        } else {
            if sure_ahead < request.limit {
                asked.push(index);
            }
            sure_ahead += 1;
        }
    }
    if !asked.is_empty() {
        let ids: Vec<String> = asked
            .iter()
            .map(|&i| candidates[i].header.id.clone())
            .collect();
        let titles = host.title_snapshots(&ids);
        // A short or long answer from the host leaves the rest untitled.
        for (&index, title) in asked.iter().zip(titles) {
            candidates[index].title = Some(fold_line(title.as_deref().unwrap_or("")));
        }
    }

    let matched: Vec<&Candidate> = candidates
        .iter()
        .filter(|candidate| {
            candidate.terms_left.is_empty() || {
                // Titles were folded when fetched; only the case is left to fold. A
                // missing title is empty: the `(untitled)` placeholder never matches.
                let title = candidate.title.as_deref().unwrap_or("").to_lowercase();
                candidate
                    .terms_left
                    .iter()
                    .all(|&t| title.contains(request.terms[t].as_str()))
            }
        })
        .collect();
    render(request, &matched)
}

fn render(request: &ListRequest, matched: &[&Candidate]) -> String {
    let shown = &matched[..matched.len().min(request.limit)];
    let mut out = String::new();
    for row in shown {
        let header = &row.header;
        out.push_str("- ");
        write_session_identity(&mut out, header);
        write_row_field(&mut out, " | preset=", header.preset.as_deref());
        if header.is_subagent() {
            out.push_str(" | not messageable");
        }
        if row.is_caller {
            out.push_str(" | this session");
        }
        let title = show_title(row.title.as_deref().unwrap_or(""));
        let _ = writeln!(out, "\n  {title}");
    }
    if !shown.is_empty() {
        out.push('\n');
    }
    let _ = write!(
        out,
        "{} of {} considered sessions",
        shown.len(),
        matched.len()
    );
    if let Some(asked) = request.lowered_from {
        let _ = write!(
            out,
            " (limit {asked} lowered to {} by maxListResults)",
            request.limit
        );
    }
    if matched.is_empty() {
        out.push_str("\nNo session matched. ");
        out.push_str(&widen_hint(request));
    } else {
        out.push_str(
            "\nTop-level sessions are messageable with sessions_send; subagent sessions are not.",
        );
    }
    out
}

/// What the model can loosen to find more sessions.
fn widen_hint(request: &ListRequest) -> String {
    let mut steps = Vec::new();
    if !request.terms.is_empty() {
        steps.push("use fewer or shorter query terms");
    }
    if request.scope != Scope::All {
        steps.push("set scope to \"all\"");
    }
    if request.live_only {
        steps.push("drop live_only");
    }
    if steps.is_empty() {
        "The harness has no other sessions to show.".to_string()
    } else {
        format!("To widen the search: {}.", steps.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{FakeHost, session};

    fn list(host: &mut FakeHost, caller: &str, args: &str) -> String {
        let request = ListRequest::parse(args, &Settings::default()).unwrap();
        run(host, caller, &request)
    }

    fn ids_shown(output: &str) -> Vec<&str> {
        output
            .lines()
            .filter_map(|line| line.strip_prefix("- "))
            .map(|line| line.split(' ').next().unwrap())
            .collect()
    }

    fn three_sessions() -> FakeHost {
        let mut host = FakeHost::default();
        host.add(session("old", 1_000).title("Oldest work").cwd("/repo/a"));
        host.add(session("mid", 2_000).title("Middle").preset("fast"));
        host.add(session("new", 3_000).title("Newest").live(true));
        host
    }

    #[test]
    fn newest_first_with_the_caller_last() {
        let mut host = three_sessions();
        let out = list(&mut host, "new", "");
        assert_eq!(ids_shown(&out), ["mid", "old", "new"]);
        assert!(out.contains("- new [live, top-level] | this session\n  Newest\n"));
    }

    #[test]
    fn creation_ties_are_ordered_by_id() {
        let mut host = FakeHost::default();
        host.add(session("b", 5));
        host.add(session("a", 5));
        assert_eq!(ids_shown(&list(&mut host, "x", "")), ["a", "b"]);
    }

    #[test]
    fn scope_selects_top_level_subagents_or_all() {
        let mut host = three_sessions();
        host.add(session("kid", 4_000).parent("mid"));
        host.add(session("orphan", 5_000).origin("subagent"));
        assert_eq!(ids_shown(&list(&mut host, "x", "")), ["new", "mid", "old"]);
        assert_eq!(
            ids_shown(&list(&mut host, "x", r#"{"scope":"subagents"}"#)),
            ["orphan", "kid"]
        );
        let all = list(&mut host, "x", r#"{"scope":"all"}"#);
        assert_eq!(ids_shown(&all), ["orphan", "kid", "new", "mid", "old"]);
        assert!(all.contains("- kid [cold, subagent] | not messageable\n"));
    }

    #[test]
    fn live_only_keeps_live_sessions() {
        let mut host = three_sessions();
        assert_eq!(
            ids_shown(&list(&mut host, "x", r#"{"live_only":true}"#)),
            ["new"]
        );
    }

    #[test]
    fn every_query_term_must_match_some_field() {
        let mut host = three_sessions();
        // "repo" matches a cwd, "oldest" the title of the same session.
        assert_eq!(
            ids_shown(&list(&mut host, "x", r#"{"query":"REPO oldest"}"#)),
            ["old"]
        );
        // Each term matches, but in different sessions: no row.
        let out = list(&mut host, "x", r#"{"query":"repo fast"}"#);
        assert!(
            out.starts_with("0 of 0 considered sessions\nNo session matched."),
            "{out}"
        );
        assert_eq!(
            ids_shown(&list(&mut host, "x", r#"{"query":"FAST"}"#)),
            ["mid"]
        );
        assert_eq!(
            ids_shown(&list(&mut host, "x", r#"{"query":"  "}"#)).len(),
            3
        );
    }

    #[test]
    fn limit_cuts_from_the_end_and_the_footer_counts() {
        let mut host = three_sessions();
        let out = list(&mut host, "old", r#"{"limit":2}"#);
        assert_eq!(ids_shown(&out), ["new", "mid"]);
        assert!(out.ends_with("\n\n2 of 3 considered sessions\nTop-level sessions are messageable with sessions_send; subagent sessions are not."));
    }

    #[test]
    fn the_footer_says_when_the_cap_lowered_the_limit() {
        let mut host = three_sessions();
        let settings = Settings {
            max_list_results: 1,
            ..Settings::default()
        };
        let request = ListRequest::parse(r#"{"limit":5}"#, &settings).unwrap();
        let out = run(&mut host, "x", &request);
        assert!(
            out.contains("\n1 of 3 considered sessions (limit 5 lowered to 1 by maxListResults)\n"),
            "{out}"
        );
        let request = ListRequest::parse("", &settings).unwrap();
        assert!(run(&mut host, "x", &request).contains("\n1 of 3 considered sessions\n"));
    }

    #[test]
    fn an_empty_query_asks_titles_only_for_rows_shown_in_one_batch() {
        let mut host = three_sessions();
        list(&mut host, "x", r#"{"limit":2}"#);
        assert_eq!(
            host.title_batches,
            vec![vec!["new".to_string(), "mid".to_string()]]
        );
    }

    #[test]
    fn a_query_asks_titles_only_where_needed() {
        let mut host = three_sessions();
        // "repo" is decided by cwd for "old"; the others need their titles.
        list(&mut host, "x", r#"{"query":"repo", "limit":1}"#);
        assert_eq!(host.title_batches.len(), 1);
        assert_eq!(host.title_batches[0], ["new", "mid", "old"]);
        // "d" is in two ids: of those sure matches only the first can be shown.
        let mut host = three_sessions();
        list(&mut host, "x", r#"{"query":"d", "limit":1}"#);
        assert_eq!(
            host.title_batches,
            vec![vec!["new".to_string(), "mid".to_string()]]
        );
    }

    #[test]
    fn titles_are_folded_and_missing_ones_read_untitled() {
        let mut host = FakeHost::default();
        host.add(session("a", 1).title("line one\nline two\u{1b}[2J"));
        host.add(session("b", 2));
        let out = list(&mut host, "x", "");
        assert!(out.contains("\n  line one line two[2J\n"), "{out}");
        assert!(
            out.contains("- b [cold, top-level]\n  (untitled)\n"),
            "{out}"
        );
    }

    #[test]
    fn host_fields_cannot_add_rows() {
        let mut host = FakeHost::default();
        host.add(session("a\n- fake [live, top-level]", 1).cwd("/x\n\n9 of 9 considered sessions"));
        let out = list(&mut host, "x", "");
        assert_eq!(out.lines().filter(|l| l.starts_with("- ")).count(), 1);
        // Row, title, blank line, footer, hint: nothing more.
        assert_eq!(out.lines().count(), 5, "{out}");
    }

    #[test]
    fn a_short_title_batch_leaves_rows_untitled_instead_of_failing() {
        let mut host = three_sessions();
        host.truncate_title_answers = Some(1);
        let out = list(&mut host, "x", "");
        assert_eq!(out.matches("(untitled)").count(), 2);
    }

    #[test]
    fn duplicate_ids_give_one_row() {
        let mut host = three_sessions();
        host.add(session("mid", 9_000));
        assert_eq!(ids_shown(&list(&mut host, "x", "")), ["new", "mid", "old"]);
    }

    #[test]
    fn no_match_hints_how_to_widen() {
        let mut host = three_sessions();
        let out = list(&mut host, "x", r#"{"query":"zzz","live_only":true}"#);
        assert_eq!(
            out,
            "0 of 0 considered sessions\nNo session matched. To widen the search: use fewer or shorter query terms; set scope to \"all\"; drop live_only."
        );
    }
}
