//! `sessions_list`: discover peer sessions.

use crate::args::{ArgResult, Args};
use crate::host::{Claims, HostError, Inbound, SessionHeader, SessionQuery};
use crate::hygiene::{fold_line, fold_lower, show_title, write_id, write_row_field};
use crate::repeats::repeats;
use crate::scope::{Places, Reach};
use crate::settings::Settings;
use crate::text::write_identity;
use std::cmp::Ordering;
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
    /// What the deployment lets the caller see (`readScope`).
    pub reach: Reach,
    /// How long a claim outlives its holder's last sight live (`claimGraceMinutes`).
    pub claim_grace_minutes: u32,
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
            reach: settings.read_scope.reach(),
            claim_grace_minutes: settings.claim_grace_minutes,
        })
    }
}

/// A session that passed scope and `live_only`: the index's facts, borrowed. Kept
/// small, since a listing selects among every session.
#[derive(Clone, Copy)]
struct Candidate<'a> {
    id: &'a str,
    created_at_ms: i64,
    live: bool,
    subagent: bool,
    is_caller: bool,
    /// Query terms not found yet, one bit per term.
    terms_left: u32,
    /// Where this candidate's header and title are kept once fetched.
    details: u32,
}

/// Newest first, ties by id; the caller last, so actionable peers come first. Ids are
/// unique among candidates, so the order is total.
fn in_order(a: &Candidate, b: &Candidate) -> Ordering {
    a.is_caller
        .cmp(&b.is_caller)
        .then_with(|| b.created_at_ms.cmp(&a.created_at_ms))
        .then_with(|| a.id.cmp(b.id))
}

/// What a row shows beyond the index: fetched only for rows shown and for the
/// candidates a query must look at.
#[derive(Default)]
struct Details {
    header: Option<SessionHeader>,
    /// The folded title, whole (matching looks at all of it; the row shows a cut).
    title: Option<String>,
}

pub fn run(
    host: &mut (impl SessionQuery + Claims),
    caller: &str,
    request: &ListRequest,
) -> Result<String, HostError> {
    let index = host.list_sessions();
    let ids = index.ids()?;
    let all_terms = if request.terms.is_empty() {
        0
    } else {
        u32::MAX >> (32 - request.terms.len())
    };
    // A host that repeats an id gets one row for it: the first.
    let repeated = repeats(ids.clone());
    let mut candidates: Vec<Candidate> = index
        .entries
        .iter()
        .zip(ids)
        .zip(repeated)
        .filter(|((entry, _), repeated)| {
            !repeated
                && (entry.live || !request.live_only)
                && match request.scope {
                    Scope::TopLevel => !entry.subagent,
                    Scope::Subagents => entry.subagent,
                    Scope::All => true,
                }
        })
        .map(|((entry, id), _)| Candidate {
            id,
            created_at_ms: entry.created_at_ms,
            live: entry.live,
            subagent: entry.subagent,
            is_caller: id == caller,
            terms_left: all_terms,
            details: 0,
        })
        .collect();
    let mut details = Vec::new();
    let mut places = Places::new(caller);
    if request.reach != Reach::All {
        in_reach(
            host,
            &mut places,
            request.reach,
            &mut candidates,
            &mut details,
        );
    }

    if request.terms.is_empty() {
        // Every candidate matches: only the first `limit` in order are looked at again.
        let considered = candidates.len();
        let shown = first_in_order(&mut candidates, request.limit);
        fetch_headers(host, shown, &mut details, |_| true);
        fetch_titles(host, shown, &mut details, |_| true);
        let owners = owners_in_sight(host, &mut places, request.reach, shown, &details);
        let claims = claim_counts(host, request, shown);
        return Ok(render(
            request, shown, &details, &owners, &claims, considered,
        ));
    }

    candidates.sort_unstable_by(in_order);
    for candidate in &mut candidates {
        candidate.terms_left &= !matching_terms(&request.terms, &fold_lower(candidate.id));
    }
    // Each stage fetches what the candidates still undecided need, and what the sure
    // matches that could still be shown need: a sure match is shown only if fewer than
    // `limit` sure matches come before it.
    let wanted = |candidates: &[Candidate]| -> Vec<bool> {
        let mut sure_ahead = 0usize;
        candidates
            .iter()
            .map(|candidate| {
                candidate.terms_left != 0 || {
                    sure_ahead += 1;
                    sure_ahead <= request.limit
                }
            })
            .collect()
    };
    let want = wanted(&candidates);
    fetch_headers(host, &mut candidates, &mut details, |i| want[i]);
    for candidate in candidates.iter_mut().filter(|c| c.terms_left != 0) {
        if let Some(header) = details_of(&details, candidate).header.as_ref() {
            for field in [&header.cwd, &header.preset].into_iter().flatten() {
                candidate.terms_left &= !matching_terms(&request.terms, &fold_lower(field));
            }
        }
    }
    let want = wanted(&candidates);
    fetch_titles(host, &mut candidates, &mut details, |i| want[i]);
    for candidate in candidates.iter_mut().filter(|c| c.terms_left != 0) {
        // Titles were folded when fetched; only the case is left to fold. A missing
        // title is empty: the `(untitled)` placeholder never matches.
        let title = details_of(&details, candidate)
            .title
            .as_deref()
            .unwrap_or("")
            .to_lowercase();
        candidate.terms_left &= !matching_terms(&request.terms, &title);
    }
    candidates.retain(|candidate| candidate.terms_left == 0);
    let considered = candidates.len();
    let shown = &candidates[..considered.min(request.limit)];
    let owners = owners_in_sight(host, &mut places, request.reach, shown, &details);
    let claims = claim_counts(host, request, shown);
    Ok(render(
        request, shown, &details, &owners, &claims, considered,
    ))
}

/// How many running claims each shown row holds, from one read of the claims (none
/// read for an empty listing).
fn claim_counts(host: &mut impl Claims, request: &ListRequest, shown: &[Candidate]) -> Vec<usize> {
    if shown.is_empty() {
        return Vec::new();
    }
    let holders: Vec<(&str, bool)> = shown.iter().map(|row| (row.id, row.live)).collect();
    crate::claims::counts(host, &holders, request.claim_grace_minutes)
}

/// Whether each shown row's owner is inside `reach` (a subagent row names its owner
/// only then: outside it the owner does not exist for this caller). Owners' headers
/// are asked for in one batch, those the reach already read not again.
fn owners_in_sight<H: SessionQuery>(
    host: &mut H,
    places: &mut Places,
    reach: Reach,
    shown: &[Candidate],
    details: &[Details],
) -> Vec<bool> {
    let owner = |row: &Candidate| {
        let header = details.get(row.details as usize)?.header.as_ref()?;
        row.subagent.then_some(header.parent_id.as_deref()?)
    };
    let owners: Vec<&str> = shown.iter().filter_map(owner).collect();
    if reach == Reach::All || owners.is_empty() {
        return vec![true; shown.len()];
    }
    places.learn(host, &owners);
    let asked: Vec<(&str, bool)> = (owners.iter())
        .map(|id| (*id, places.header(id).is_some_and(|h| h.is_subagent())))
        .collect();
    let mut inside = places.reaches(host, reach, &asked).into_iter();
    (shown.iter())
        .map(|row| match owner(row) {
            Some(_) => inside.next().unwrap_or(false),
            None => true,
        })
        .collect()
}

/// Keeps the candidates `reach` takes in: outside it a session does not exist for
/// this caller. Headers asked for on the way are kept for the rows.
fn in_reach<H: SessionQuery>(
    host: &mut H,
    places: &mut Places,
    reach: Reach,
    candidates: &mut Vec<Candidate>,
    details: &mut Vec<Details>,
) {
    let asked: Vec<(&str, bool)> = candidates.iter().map(|c| (c.id, c.subagent)).collect();
    let inside = places.reaches(host, reach, &asked);
    let mut inside = inside.into_iter();
    candidates.retain(|_| inside.next().unwrap_or(false));
    for candidate in candidates.iter_mut() {
        if let Some(header) = places.header(candidate.id) {
            if details.is_empty() {
                details.push(Details::default());
            }
            candidate.details = details.len() as u32;
            details.push(Details {
                header: Some(header.clone()),
                title: None,
            });
        }
    }
}

/// The bits of the terms that occur in `field` (folded and lowercased).
fn matching_terms(terms: &[String], field: &str) -> u32 {
    terms
        .iter()
        .enumerate()
        .filter(|(_, term)| field.contains(term.as_str()))
        .fold(0, |bits, (t, _)| bits | 1 << t)
}

/// Moves the first `k` candidates in order to the front, sorted, without sorting the
/// rest, and returns them.
fn first_in_order<'c, 'a>(
    candidates: &'c mut [Candidate<'a>],
    k: usize,
) -> &'c mut [Candidate<'a>] {
    let k = k.min(candidates.len());
    if k > 0 && k < candidates.len() {
        candidates.select_nth_unstable_by(k - 1, in_order);
    }
    let first = &mut candidates[..k];
    first.sort_unstable_by(in_order);
    first
}

fn details_of<'d>(details: &'d [Details], candidate: &Candidate) -> &'d Details {
    &details[candidate.details as usize]
}

/// Gives every wanted candidate a details slot, and returns the wanted positions.
fn slots(
    candidates: &mut [Candidate],
    details: &mut Vec<Details>,
    want: impl Fn(usize) -> bool,
) -> Vec<usize> {
    let mut wanted = Vec::new();
    for (i, candidate) in candidates.iter_mut().enumerate() {
        if want(i) {
            if candidate.details == 0 {
                if details.is_empty() {
                    // Slot 0 stays empty: it stands for "nothing fetched".
                    details.push(Details::default());
                }
                candidate.details = details.len() as u32;
                details.push(Details::default());
            }
            wanted.push(i);
        }
    }
    wanted
}

/// One batch call for the wanted candidates' ids (`ask`), each answer kept in its
/// candidate's details (`keep`). A short or long answer from the host leaves the rest
/// without.
fn fetch<H: SessionQuery, T>(
    host: &mut H,
    candidates: &mut [Candidate],
    details: &mut Vec<Details>,
    want: impl Fn(usize) -> bool,
    ask: impl FnOnce(&mut H, &[String]) -> Vec<T>,
    keep: impl Fn(&mut Details, T),
) {
    let wanted = slots(candidates, details, want);
    if wanted.is_empty() {
        return;
    }
    let ids: Vec<String> = wanted
        .iter()
        .map(|&i| candidates[i].id.to_string())
        .collect();
    for (&i, answer) in wanted.iter().zip(ask(host, &ids)) {
        keep(&mut details[candidates[i].details as usize], answer);
    }
}

/// One `get-sessions` batch for the wanted candidates.
fn fetch_headers<H: SessionQuery>(
    host: &mut H,
    candidates: &mut [Candidate],
    details: &mut Vec<Details>,
    want: impl Fn(usize) -> bool,
) {
    // Headers the scope already asked for are not asked again.
    let known: Vec<bool> = (candidates.iter())
        .map(|c| {
            details
                .get(c.details as usize)
                .is_some_and(|d| d.header.is_some())
        })
        .collect();
    let ask = |host: &mut H, ids: &[String]| host.get_sessions(ids);
    let want = |i: usize| want(i) && !known[i];
    fetch(host, candidates, details, want, ask, |d, header| {
        d.header = header
    });
}

/// One `title-snapshots` batch for the wanted candidates, folded as they arrive.
fn fetch_titles<H: SessionQuery>(
    host: &mut H,
    candidates: &mut [Candidate],
    details: &mut Vec<Details>,
    want: impl Fn(usize) -> bool,
) {
    let ask = |host: &mut H, ids: &[String]| host.title_snapshots(ids);
    fetch(
        host,
        candidates,
        details,
        want,
        ask,
        |d, title: Option<String>| d.title = Some(fold_line(title.as_deref().unwrap_or(""))),
    );
}

fn render(
    request: &ListRequest,
    shown: &[Candidate],
    details: &[Details],
    owners_in_sight: &[bool],
    claims: &[usize],
    considered: usize,
) -> String {
    let mut out = String::new();
    for (at, row) in shown.iter().enumerate() {
        let fetched = details.get(row.details as usize);
        let header = fetched.and_then(|d| d.header.as_ref());
        out.push_str("- ");
        // Status and kind as the listing filtered on them; path and preset from the
        // header.
        write_identity(
            &mut out,
            row.id,
            row.live,
            row.subagent,
            header.and_then(|h| h.cwd.as_deref()),
        );
        write_row_field(
            &mut out,
            " | preset=",
            header.and_then(|h| h.preset.as_deref()),
        );
        write_row_field(
            &mut out,
            " | machine=",
            header.and_then(|h| h.machine.as_deref()),
        );
        if row.subagent {
            // Its owner when the caller may see it; an id, written by the id rule.
            let owner = header.and_then(|h| h.parent_id.as_deref());
            if let Some(owner) = owner.filter(|_| owners_in_sight[at]) {
                out.push_str(" | owner=");
                write_id(&mut out, owner);
            }
        } else if let Some(header) = header.filter(|h| h.inbound != Inbound::Accept) {
            let _ = write!(out, " | inbound={}", header.inbound.as_str());
        }
        if let Some(count) = claims.get(at).filter(|count| **count > 0) {
            let _ = write!(out, " | claims={count}");
        }
        if row.subagent {
            out.push_str(" | not messageable");
        }
        if row.is_caller {
            out.push_str(" | this session");
        }
        let title = show_title(fetched.and_then(|d| d.title.as_deref()).unwrap_or(""));
        let _ = writeln!(out, "\n  {title}");
    }
    if !shown.is_empty() {
        out.push('\n');
    }
    let _ = write!(out, "{} of {} considered sessions", shown.len(), considered);
    if let Some(asked) = request.lowered_from {
        let _ = write!(
            out,
            " (limit {asked} lowered to {} by maxListResults)",
            request.limit
        );
    }
    if considered == 0 {
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
        run(host, caller, &request).unwrap()
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
    fn read_scope_decides_what_is_listed_and_counted() {
        let mut host = FakeHost::default();
        host.add(session("root", 1).cwd("/w/app"));
        host.add(session("me", 2).parent("root").cwd("/w/app/api"));
        host.add(session("my-kid", 3).parent("me"));
        host.add(session("neighbour", 4).cwd("/w/app/api/v2").title("Near"));
        host.add(session("far", 5).cwd("/elsewhere"));
        let list_in = |host: &mut FakeHost, scope: &str| {
            let settings = Settings {
                read_scope: crate::scope::ReadScope::parse(scope).unwrap(),
                ..Settings::default()
            };
            let request = ListRequest::parse(r#"{"scope":"all"}"#, &settings).unwrap();
            run(host, "me", &request).unwrap()
        };
        let out = list_in(&mut host, "self");
        assert_eq!(ids_shown(&out), ["my-kid", "me"]);
        assert!(out.contains("\n2 of 2 considered sessions\n"), "{out}");
        assert_eq!(
            ids_shown(&list_in(&mut host, "tree")),
            ["my-kid", "root", "me"]
        );
        host.calls.clear();
        let out = list_in(&mut host, "workspace");
        assert_eq!(ids_shown(&out), ["neighbour", "my-kid", "root", "me"]);
        assert!(
            out.contains("- neighbour [cold, top-level] | cwd=/w/app/api/v2\n  Near\n"),
            "{out}"
        );
        // The headers the scope asked for serve the rows: one batch each, no more.
        assert_eq!(
            host.calls
                .iter()
                .filter(|c| c.starts_with("get-sessions"))
                .count(),
            2,
            "{:?}",
            host.calls
        );
        assert_eq!(ids_shown(&list_in(&mut host, "all")).len(), 5);
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
        assert!(all.contains("- kid [cold, subagent] | owner=mid | not messageable\n"));
        assert!(all.contains("- orphan [cold, subagent] | not messageable\n"));
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
        let out = run(&mut host, "x", &request).unwrap();
        assert!(
            out.contains("\n1 of 3 considered sessions (limit 5 lowered to 1 by maxListResults)\n"),
            "{out}"
        );
        let request = ListRequest::parse("", &settings).unwrap();
        assert!(
            run(&mut host, "x", &request)
                .unwrap()
                .contains("\n1 of 3 considered sessions\n")
        );
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
        assert!(out.contains("\n  line one line two\n"), "{out}");
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
