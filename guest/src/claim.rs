//! `sessions_claim`: a session says which paths it is working on, so that other trees'
//! sessions neither claim them exclusively nor write there (their harness asks
//! [`crate::write_check`]) until the claim is released, its time is up, or its holder
//! is gone. It reads and writes only the host's claim set (`claims`).

use crate::args::{ArgResult, Args};
use crate::claims::{
    Board, ChangeFailure, Decision, Holders, MAX_CLAIMS_PER_SESSION, MAX_PATHS, PATH_MAX_CHARS,
    REASON_MAX_CHARS, Trees, change, conflicts, describe, new_id, write_claim_lines,
};
use crate::glob;
use crate::host::{ChangeKind, Claim, ClaimChange, ClaimMode, Claims, SessionQuery};
use crate::scope::{Places, Reach};
use crate::settings::Settings;
use crate::text::{Answer, Refusal, RefusalCode, shorten};

pub const NAME: &str = "sessions_claim";
const TAKES: &[&str] = &["paths", "mode", "minutes", "reason", "release"];
/// A claim's length when the call names none (or the deployment's cap, when shorter).
const DEFAULT_MINUTES: u32 = 60;

/// Validated arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClaimRequest {
    /// As the model wrote them (made absolute when the caller's workspace is known).
    pub paths: Vec<String>,
    pub mode: ClaimMode,
    pub minutes: u32,
    pub reason: String,
    /// Release the caller's claims on `paths` (all of them when `paths` is empty).
    pub release: bool,
    /// What the deployment lets the caller see (`readScope`): holders outside it are
    /// not named.
    pub reach: Reach,
    pub grace_minutes: u32,
}

impl ClaimRequest {
    pub fn parse(arguments: &str, settings: &Settings) -> ArgResult<ClaimRequest> {
        let args = Args::parse(arguments, NAME, TAKES)?;
        let release = args.boolean("release")?.unwrap_or(false);
        let paths = args
            .strings("paths", MAX_PATHS, PATH_MAX_CHARS)?
            .unwrap_or_default();
        if paths.is_empty() && !release {
            return Err(format!(
                "invalid arguments: paths is required (1 to {MAX_PATHS} files, folders or globs \
                 such as src/** relative to your workspace), unless release is true"
            ));
        }
        let mode = match args.choice("mode", &["exclusive", "shared"])? {
            Some("shared") => ClaimMode::Shared,
            _ => ClaimMode::Exclusive,
        };
        let cap = settings.max_claim_minutes;
        let minutes = args
            .integer("minutes", 1, u64::from(cap))?
            .map_or(DEFAULT_MINUTES.min(cap), |m| m as u32);
        let reason = args
            .string("reason", REASON_MAX_CHARS)?
            .unwrap_or("")
            .to_string();
        Ok(ClaimRequest {
            paths,
            mode,
            minutes,
            reason,
            release,
            reach: settings.read_scope.reach(),
            grace_minutes: settings.claim_grace_minutes,
        })
    }
}

fn refusal(code: RefusalCode, cause: String, next: &str) -> Answer {
    Refusal::of(NAME, code, cause, next)
}

fn failed(failure: ChangeFailure) -> Answer {
    let cause = match failure {
        ChangeFailure::Unavailable(why) => format!(
            "the claims could not be read or stored ({}); nothing changed",
            shorten(&why, 200)
        ),
        ChangeFailure::Busy => {
            "other sessions changed the claims each time this call tried; nothing changed"
                .to_string()
        }
    };
    refusal(RefusalCode::Rejected, cause, "call sessions_claim again.")
}

/// Runs one claim or release for `caller`; `call_id` makes the new claim's id.
pub fn run<H: SessionQuery + Claims>(
    host: &mut H,
    caller: &str,
    call_id: &str,
    request: &ClaimRequest,
) -> Answer {
    let mut places = Places::new(caller);
    let workspace = places.lookup(host, caller).and_then(|header| header.cwd);
    let mut paths = Vec::with_capacity(request.paths.len());
    for (index, pattern) in request.paths.iter().enumerate() {
        match glob::absolute(pattern, workspace.as_deref()) {
            Ok(path) if !paths.contains(&path) => paths.push(path),
            Ok(_) => {}
            Err(why) => {
                return Answer::refused(
                    RefusalCode::InvalidArguments,
                    format!(
                        "invalid arguments: paths[{index}] ({}) {why}",
                        shorten(pattern, 80)
                    ),
                );
            }
        }
    }
    let answered = if request.release {
        change(host, &mut places, request.grace_minutes, |_, _, board| {
            release(board, caller, &paths)
        })
    } else {
        change(
            host,
            &mut places,
            request.grace_minutes,
            |host, places, board| claim(host, places, board, caller, call_id, request, &paths),
        )
    };
    answered.unwrap_or_else(failed)
}

fn claim<H: SessionQuery>(
    host: &mut H,
    places: &mut Places,
    board: &Board,
    caller: &str,
    call_id: &str,
    request: &ClaimRequest,
    paths: &[String],
) -> Decision<Answer> {
    let trees = Trees::of(host, places, &board.live);
    let conflicting = conflicts(board, &trees, caller, paths, request.mode);
    if !conflicting.is_empty() {
        let holders = Holders::of(host, places, request.reach, &conflicting);
        let mut cause = format!(
            "{} of another session's tree overlap{} what you asked to claim {}:",
            if conflicting.len() == 1 {
                "a claim"
            } else {
                "claims"
            },
            if conflicting.len() == 1 { "s" } else { "" },
            request.mode.as_str()
        );
        write_claim_lines(&mut cause, &conflicting, &holders);
        return Decision::Answer(refusal(
            RefusalCode::Claimed,
            cause,
            "nothing was claimed. Message the holder with sessions_send to agree who works \
             there, wait until the claim ends, or claim other paths (a shared claim coexists \
             with other shared ones).",
        ));
    }
    // The same paths claimed again by the caller: the one claim, renewed.
    let again = board.held_by(caller).find(|c| same_paths(&c.paths, paths));
    if again.is_none() && board.held_by(caller).count() >= MAX_CLAIMS_PER_SESSION {
        return Decision::Answer(refusal(
            RefusalCode::InvalidArguments,
            format!(
                "this session holds {MAX_CLAIMS_PER_SESSION} claims, the most one session may \
                 hold at once"
            ),
            "release one you are done with (sessions_claim with release: true and its paths), \
             or claim a wider glob instead of several.",
        ));
    }
    let now = board.now_ms;
    let made = Claim {
        id: match again {
            Some(claim) => claim.id.clone(),
            None => new_id(
                &[
                    caller.as_bytes(),
                    call_id.as_bytes(),
                    &now.to_le_bytes(),
                    &board.revision.to_le_bytes(),
                    paths.join("\n").as_bytes(),
                ],
                &board.live,
            ),
        },
        holder: caller.to_string(),
        paths: paths.to_vec(),
        mode: request.mode,
        reason: request.reason.clone(),
        made_at_ms: again.map_or(now, |c| c.made_at_ms),
        ends_at_ms: now + i64::from(request.minutes) * 60_000,
        seen_live_ms: now,
    };
    let text = format!(
        "claimed {}\nOther sessions' claims and writes there are refused until then (a shared \
         claim lets other shared claims in). Release it when you are done: sessions_claim \
         with release: true and these paths (or none, for all your claims).",
        describe(&made)
    );
    let mut claims: Vec<Claim> = (board.live.iter())
        .filter(|c| Some(c.id.as_str()) != again.map(|a| a.id.as_str()))
        .cloned()
        .collect();
    claims.push(made.clone());
    let mut changes = board.lapsed_changes();
    changes.push(ClaimChange {
        kind: ChangeKind::Made,
        claim: made,
    });
    Decision::Write(claims, changes, Answer::ok(text))
}

fn same_paths(a: &[String], b: &[String]) -> bool {
    a.len() == b.len() && a.iter().all(|p| b.contains(p))
}

/// Releases the caller's claims on `paths` (each pattern a given path covers; a claim
/// left with none ends), or all of them when `paths` is empty.
fn release(board: &Board, caller: &str, paths: &[String]) -> Decision<Answer> {
    let mut claims = Vec::with_capacity(board.live.len());
    let mut changes = board.lapsed_changes();
    let mut released = Vec::new();
    let mut narrowed = Vec::new();
    for claim in &board.live {
        if claim.holder != caller {
            claims.push(claim.clone());
            continue;
        }
        let kept: Vec<String> = (claim.paths.iter())
            .filter(|p| !paths.is_empty() && !paths.iter().any(|given| glob::covers(given, p)))
            .cloned()
            .collect();
        if kept.is_empty() {
            released.push(describe(claim));
            changes.push(ClaimChange {
                kind: ChangeKind::Released,
                claim: claim.clone(),
            });
        } else if kept.len() < claim.paths.len() {
            let narrower = Claim {
                paths: kept,
                ..claim.clone()
            };
            narrowed.push(describe(&narrower));
            changes.push(ClaimChange {
                kind: ChangeKind::Made,
                claim: narrower.clone(),
            });
            claims.push(narrower);
        } else {
            claims.push(claim.clone());
        }
    }
    if released.is_empty() && narrowed.is_empty() {
        let yours: Vec<String> = board.held_by(caller).map(describe).collect();
        let text = if yours.is_empty() {
            "released nothing: this session holds no claim.".to_string()
        } else {
            format!(
                "released nothing: none of your claims is on those paths. Yours:\n- {}",
                yours.join("\n- ")
            )
        };
        return Decision::Answer(Answer::ok(text));
    }
    let mut text = String::new();
    for line in &released {
        text.push_str("released ");
        text.push_str(line);
        text.push('\n');
    }
    for line in &narrowed {
        text.push_str("still claimed ");
        text.push_str(line);
        text.push('\n');
    }
    text.push_str("Other sessions may claim and write there now.");
    Decision::Write(claims, changes, Answer::ok(text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{FakeHost, session};
    use crate::write_check::{self, WriteCheck};

    const NOW: i64 = 1_796_598_000_000; // 2026-12-06 23:00 UTC

    fn team() -> FakeHost {
        let mut host = FakeHost {
            now_ms: NOW,
            ..FakeHost::default()
        };
        host.add(
            session("alice", 1)
                .cwd("/work/repo")
                .live(true)
                .title("Refactor store"),
        );
        host.add(
            session("alice-kid", 2)
                .parent("alice")
                .cwd("/work/repo")
                .live(true),
        );
        host.add(
            session("bob", 3)
                .cwd("/work/repo")
                .live(true)
                .title("Fix docs"),
        );
        host
    }

    fn call(host: &mut FakeHost, caller: &str, arguments: &str) -> Answer {
        call_with(host, caller, arguments, &Settings::default())
    }

    fn call_with(
        host: &mut FakeHost,
        caller: &str,
        arguments: &str,
        settings: &Settings,
    ) -> Answer {
        match ClaimRequest::parse(arguments, settings) {
            Ok(request) => run(host, caller, "call-1", &request),
            Err(text) => Answer::refused(RefusalCode::InvalidArguments, text),
        }
    }

    fn check(host: &mut FakeHost, caller: &str, paths: &[&str]) -> WriteCheck {
        let paths: Vec<String> = paths.iter().map(|p| p.to_string()).collect();
        write_check::run(host, caller, &Settings::default(), &paths)
    }

    #[test]
    fn a_grant_says_what_was_claimed_its_id_mode_and_end() {
        let mut host = team();
        let answer = call(
            &mut host,
            "alice",
            r#"{"paths": ["src/**", "Cargo.toml"], "minutes": 30, "reason": "splitting the store"}"#,
        );
        assert_eq!(answer.refusal, None, "{}", answer.text);
        let claim = &host.claims[0];
        assert!(claim.id.starts_with("c-") && claim.id.len() == 14);
        assert_eq!(claim.paths, ["/work/repo/src/**", "/work/repo/Cargo.toml"]);
        assert_eq!(claim.ends_at_ms, NOW + 30 * 60_000);
        assert_eq!(
            answer.text.lines().next().unwrap(),
            format!(
                "claimed {} (exclusive, until 2026-12-06 23:30 UTC, \"splitting the store\"): \
                 /work/repo/src/**, /work/repo/Cargo.toml",
                claim.id
            )
        );
        assert_eq!(host.claim_changes.len(), 1);
        assert_eq!(host.claim_changes[0].kind, ChangeKind::Made);
    }

    #[test]
    fn another_trees_overlapping_claim_is_refused_naming_its_holder() {
        let mut host = team();
        call(
            &mut host,
            "alice",
            r#"{"paths": ["src/**"], "reason": "store split"}"#,
        );
        let answer = call(&mut host, "bob", r#"{"paths": ["src/lib.rs"]}"#);
        assert_eq!(answer.refusal, Some(RefusalCode::Claimed));
        let id = &host.claims[0].id;
        assert_eq!(
            answer.text,
            format!(
                "sessions_claim refused (claimed): a claim of another session's tree overlaps \
                 what you asked to claim exclusive:\n- alice \"Refactor store\" holds {id} \
                 (exclusive, until 2026-12-07 00:00 UTC, \"store split\"): /work/repo/src/**\n\
                 Next step: nothing was claimed. Message the holder with sessions_send to agree \
                 who works there, wait until the claim ends, or claim other paths (a shared \
                 claim coexists with other shared ones)."
            )
        );
        assert_eq!(host.claims.len(), 1, "nothing was claimed");
        // Elsewhere is free.
        let answer = call(&mut host, "bob", r#"{"paths": ["docs/**"]}"#);
        assert_eq!(answer.refusal, None, "{}", answer.text);
    }

    #[test]
    fn one_tree_never_blocks_itself_and_shared_claims_coexist() {
        let mut host = team();
        call(&mut host, "alice", r#"{"paths": ["src/**"]}"#);
        let answer = call(&mut host, "alice-kid", r#"{"paths": ["src/a.rs"]}"#);
        assert_eq!(answer.refusal, None, "{}", answer.text);
        assert_eq!(
            check(&mut host, "alice-kid", &["src/a.rs"]),
            WriteCheck::Allowed
        );

        let mut host = team();
        call(
            &mut host,
            "alice",
            r#"{"paths": ["src/**"], "mode": "shared"}"#,
        );
        let shared = call(
            &mut host,
            "bob",
            r#"{"paths": ["src/**"], "mode": "shared"}"#,
        );
        assert_eq!(shared.refusal, None, "{}", shared.text);
        let exclusive = call(&mut host, "bob", r#"{"paths": ["src/a.rs"]}"#);
        assert_eq!(exclusive.refusal, Some(RefusalCode::Claimed));
        // Two shared holders write side by side; a third session may not.
        assert_eq!(check(&mut host, "bob", &["src/a.rs"]), WriteCheck::Allowed);
        host.add(session("carol", 4).cwd("/work/repo").live(true));
        assert!(matches!(
            check(&mut host, "carol", &["src/a.rs"]),
            WriteCheck::Refused { .. }
        ));
    }

    #[test]
    fn a_write_into_another_trees_claim_is_refused_until_the_claim_ends() {
        let mut host = team();
        call(
            &mut host,
            "alice",
            r#"{"paths": ["src/**"], "minutes": 5, "reason": "split"}"#,
        );
        let WriteCheck::Refused { text, claims } =
            check(&mut host, "bob", &["src/lib.rs", "README.md"])
        else {
            panic!("not refused");
        };
        assert_eq!(claims, [host.claims[0].id.clone()]);
        assert!(
            text.starts_with(
                "write refused (claimed): /work/repo/src/lib.rs is claimed by another session:\n\
                 - alice \"Refactor store\" holds c-"
            ),
            "{text}"
        );
        assert!(text.ends_with(
            "Next step: nothing was written. Message the holder with sessions_send to ask for \
             the files, wait until the claim ends (the same write goes through then), or work \
             on other files."
        ));
        assert_eq!(
            check(&mut host, "bob", &["/work/repo/README.md"]),
            WriteCheck::Allowed
        );
        host.now_ms = NOW + 5 * 60_000;
        assert_eq!(
            check(&mut host, "bob", &["src/lib.rs"]),
            WriteCheck::Allowed
        );
        assert!(host.claims.is_empty(), "the lapsed claim was dropped");
        assert_eq!(host.claim_changes.last().unwrap().kind, ChangeKind::Lapsed);
    }

    #[test]
    fn a_claim_lapses_when_its_holder_is_gone_for_the_grace_period() {
        let mut host = team();
        call(&mut host, "alice", r#"{"paths": ["src/**"]}"#);
        host.sessions[0].header.live = false;
        host.now_ms = NOW + 9 * 60_000;
        assert!(matches!(
            check(&mut host, "bob", &["src/a.rs"]),
            WriteCheck::Refused { .. }
        ));
        host.now_ms = NOW + 10 * 60_000;
        assert_eq!(check(&mut host, "bob", &["src/a.rs"]), WriteCheck::Allowed);
        // A holder seen live is written down as seen, so its grace starts later.
        let mut host = team();
        call(&mut host, "alice", r#"{"paths": ["src/**"]}"#);
        host.now_ms = NOW + 30 * 60_000;
        check(&mut host, "bob", &["docs/x"]);
        assert_eq!(host.claims[0].seen_live_ms, NOW + 30 * 60_000);
        host.sessions[0].header.live = false;
        host.now_ms = NOW + 39 * 60_000;
        assert!(matches!(
            check(&mut host, "bob", &["src/a.rs"]),
            WriteCheck::Refused { .. }
        ));
    }

    #[test]
    fn release_ends_the_claims_on_the_paths_given_or_all() {
        let mut host = team();
        call(&mut host, "alice", r#"{"paths": ["src/a.rs", "src/b.rs"]}"#);
        call(&mut host, "alice", r#"{"paths": ["docs/**"]}"#);
        let answer = call(
            &mut host,
            "alice",
            r#"{"release": true, "paths": ["src/a.rs"]}"#,
        );
        assert!(
            answer.text.starts_with("still claimed c-"),
            "{}",
            answer.text
        );
        assert_eq!(host.claims.len(), 2);
        assert!(
            host.claims
                .iter()
                .any(|c| c.paths == ["/work/repo/src/b.rs"])
        );
        let answer = call(
            &mut host,
            "alice",
            r#"{"release": true, "paths": ["src/**"]}"#,
        );
        assert!(answer.text.starts_with("released c-"), "{}", answer.text);
        let answer = call(&mut host, "alice", r#"{"release": true}"#);
        assert!(
            answer.text.contains("/work/repo/docs/**"),
            "{}",
            answer.text
        );
        assert!(host.claims.is_empty());
        let answer = call(&mut host, "alice", r#"{"release": true}"#);
        assert_eq!(
            answer.text,
            "released nothing: this session holds no claim."
        );
        // Another's claim is not the caller's to release.
        call(&mut host, "bob", r#"{"paths": ["docs/**"]}"#);
        call(&mut host, "alice", r#"{"release": true}"#);
        assert_eq!(host.claims.len(), 1);
    }

    #[test]
    fn claiming_the_same_paths_again_renews_the_one_claim() {
        let mut host = team();
        call(&mut host, "alice", r#"{"paths": ["src/**"], "minutes": 5}"#);
        let id = host.claims[0].id.clone();
        host.now_ms = NOW + 60_000;
        call(
            &mut host,
            "alice",
            r#"{"paths": ["./src/**"], "minutes": 20, "mode": "shared"}"#,
        );
        assert_eq!(host.claims.len(), 1);
        assert_eq!(host.claims[0].id, id);
        assert_eq!(host.claims[0].mode, ClaimMode::Shared);
        assert_eq!(host.claims[0].ends_at_ms, NOW + 21 * 60_000);
    }

    #[test]
    fn bad_arguments_are_named() {
        let mut host = team();
        for (arguments, error) in [
            (
                "{}",
                "invalid arguments: paths is required (1 to 32 files, folders or globs such as \
                 src/** relative to your workspace), unless release is true",
            ),
            (
                r#"{"paths": "src"}"#,
                "invalid arguments: paths must be an array of strings (got \"src\")",
            ),
            (
                r#"{"paths": ["a", 1]}"#,
                "invalid arguments: paths must be an array of strings (got an array)",
            ),
            (
                r#"{"paths": ["a"], "minutes": 241}"#,
                "invalid arguments: minutes must be an integer from 1 to 240 (got 241)",
            ),
            (
                r#"{"paths": ["a"], "mode": "mine"}"#,
                "invalid arguments: mode must be one of \"exclusive\", \"shared\" (got \"mine\")",
            ),
            (
                r#"{"paths": ["../elsewhere"]}"#,
                "invalid arguments: paths[0] (../elsewhere) is outside your workspace \
                 (/work/repo); claim only paths inside it",
            ),
        ] {
            let answer = call(&mut host, "alice", arguments);
            assert_eq!(
                answer.refusal,
                Some(RefusalCode::InvalidArguments),
                "{arguments}"
            );
            assert_eq!(answer.text, error, "{arguments}");
        }
        let many: Vec<String> = (0..33).map(|i| format!("\"f{i}\"")).collect();
        let answer = call(
            &mut host,
            "alice",
            &format!("{{\"paths\": [{}]}}", many.join(",")),
        );
        assert_eq!(
            answer.text,
            "invalid arguments: paths must have at most 32 items (got 33)"
        );
        let capped = Settings {
            max_claim_minutes: 30,
            ..Settings::default()
        };
        call_with(&mut host, "alice", r#"{"paths": ["a"]}"#, &capped);
        assert_eq!(host.claims[0].ends_at_ms, NOW + 30 * 60_000);
    }

    #[test]
    fn a_session_holds_at_most_sixteen_claims() {
        let mut host = team();
        for i in 0..MAX_CLAIMS_PER_SESSION {
            let answer = call(&mut host, "alice", &format!(r#"{{"paths": ["f{i}"]}}"#));
            assert_eq!(answer.refusal, None);
        }
        let answer = call(&mut host, "alice", r#"{"paths": ["one-more"]}"#);
        assert_eq!(answer.refusal, Some(RefusalCode::InvalidArguments));
        assert!(answer.text.contains("holds 16 claims"), "{}", answer.text);
    }

    #[test]
    fn a_changed_set_is_read_again_and_an_unreachable_store_changes_nothing() {
        let mut host = team();
        host.stale_writes = 3;
        let answer = call(&mut host, "alice", r#"{"paths": ["src"]}"#);
        assert_eq!(answer.refusal, None, "{}", answer.text);
        assert_eq!(host.claims.len(), 1);

        let mut host = team();
        host.stale_writes = 100;
        let answer = call(&mut host, "alice", r#"{"paths": ["src"]}"#);
        assert_eq!(answer.refusal, Some(RefusalCode::Rejected));
        assert!(
            answer.text.contains("other sessions changed the claims"),
            "{}",
            answer.text
        );

        let mut host = team();
        host.claims_unavailable = Some("the cluster has no leader".to_string());
        let answer = call(&mut host, "alice", r#"{"paths": ["src"]}"#);
        assert_eq!(
            answer.text,
            "sessions_claim refused (rejected): the claims could not be read or stored (the \
             cluster has no leader); nothing changed\nNext step: call sessions_claim again."
        );
        assert_eq!(
            check(&mut host, "bob", &["src/a.rs"]),
            WriteCheck::Unchecked(
                "claims were not checked for this write: they could not be read (the cluster \
                 has no leader)."
                    .to_string()
            )
        );
    }

    #[test]
    fn a_holder_outside_the_read_scope_is_not_named() {
        let mut host = team();
        call(&mut host, "alice", r#"{"paths": ["src/**"]}"#);
        let own = Settings {
            read_scope: crate::scope::ReadScope::SelfOnly,
            ..Settings::default()
        };
        let answer = call_with(&mut host, "bob", r#"{"paths": ["src/a.rs"]}"#, &own);
        assert!(
            answer
                .text
                .contains("- a session outside what this deployment lets you see holds c-"),
            "{}",
            answer.text
        );
        assert!(!answer.text.contains("alice"), "{}", answer.text);
    }

    #[test]
    fn rows_count_a_sessions_claims_and_its_read_lists_them() {
        let mut host = team();
        call(
            &mut host,
            "alice",
            r#"{"paths": ["src/**"], "reason": "split"}"#,
        );
        call(
            &mut host,
            "alice",
            r#"{"paths": ["docs"], "mode": "shared"}"#,
        );
        let settings = Settings::default();
        let request = crate::list::ListRequest::parse("{}", &settings).unwrap();
        let listing = crate::list::run(&mut host, "bob", &request).unwrap();
        let alice = listing.lines().find(|l| l.starts_with("- alice ")).unwrap();
        assert!(alice.ends_with(" | claims=2"), "{alice}");
        let bob = listing.lines().find(|l| l.starts_with("- bob ")).unwrap();
        assert!(!bob.contains("claims="), "{bob}");

        let request =
            crate::read::ReadRequest::parse(r#"{"session_id": "alice"}"#, &settings).unwrap();
        let read = crate::read::run(&mut host, "bob", &request).unwrap().text;
        let lines: Vec<&str> = read.lines().filter(|l| l.starts_with("claim c-")).collect();
        assert_eq!(lines.len(), 2, "{read}");
        assert!(
            lines[0]
                .ends_with("(exclusive, until 2026-12-07 00:00 UTC, \"split\"): /work/repo/src/**"),
            "{}",
            lines[0]
        );
        assert!(lines[1].ends_with("(shared, until 2026-12-07 00:00 UTC): /work/repo/docs"));
        // A claim that ended is neither counted nor listed.
        host.now_ms = NOW + 61 * 60_000;
        let request = crate::list::ListRequest::parse("{}", &settings).unwrap();
        let listing = crate::list::run(&mut host, "bob", &request).unwrap();
        assert!(!listing.contains("claims="), "{listing}");
    }

    #[test]
    fn a_write_of_more_files_than_one_check_looks_at_is_said_unchecked() {
        let mut host = team();
        let many: Vec<String> = (0..=write_check::MAX_PATHS)
            .map(|i| format!("f{i}"))
            .collect();
        let paths: Vec<&str> = many.iter().map(String::as_str).collect();
        assert_eq!(
            check(&mut host, "bob", &paths),
            WriteCheck::Unchecked(
                "claims were not checked for this write: it names 257 files, more than the 256 \
                 one check looks at."
                    .to_string()
            )
        );
    }

    #[test]
    fn a_holder_on_another_machine_is_named_with_it() {
        let mut host = team();
        host.add(
            session("remote", 5)
                .cwd("/work/repo")
                .live(true)
                .machine("beta")
                .title("Far"),
        );
        call(&mut host, "remote", r#"{"paths": ["src/**"]}"#);
        let answer = call(&mut host, "alice", r#"{"paths": ["src/a.rs"]}"#);
        assert!(
            answer.text.contains("\n- remote \"Far\" on beta holds c-"),
            "{}",
            answer.text
        );
    }
}
