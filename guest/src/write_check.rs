//! `tools.check-write`: asked by a harness before one of its sessions writes files.
//! A write is refused when a path falls in a live claim of another tree, unless the
//! caller's tree holds a shared claim covering it beside another tree's shared one
//! (shared claims are made to work side by side). The caller's own claims are kept
//! fresh (its writes show it live), and claims that ended are dropped, by a write
//! that is not retried: the next call does it again.

use crate::claims::{Board, Holders, SEEN_LIVE_EVERY_MS, Trees, covers, write_claim_lines};
use crate::glob;
use crate::host::{Claim, ClaimMode, Claims, SessionQuery};
use crate::scope::Places;
use crate::settings::Settings;
use crate::text::shorten;

/// What the harness does with the write (`tools.write-check`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WriteCheck {
    Allowed,
    /// Not performed: the text for the model, and the ids of the claims it fell in.
    Refused {
        text: String,
        claims: Vec<String>,
    },
    /// Performed unchecked; the text says why.
    Unchecked(String),
}

/// Most paths one check looks at (a patch may touch many files).
pub const MAX_PATHS: usize = 256;

pub fn run<H: SessionQuery + Claims>(
    host: &mut H,
    caller: &str,
    settings: &Settings,
    paths: &[String],
) -> WriteCheck {
    let mut places = Places::new(caller);
    let workspace = places.lookup(host, caller).and_then(|h| h.cwd);
    if paths.len() > MAX_PATHS {
        return WriteCheck::Unchecked(format!(
            "claims were not checked for this write: it names {} files, more than the \
             {MAX_PATHS} one check looks at.",
            paths.len()
        ));
    }
    let mut written = Vec::with_capacity(paths.len());
    for path in paths {
        match glob::written(path, workspace.as_deref()) {
            Some(path) => written.push(path),
            None => {
                return WriteCheck::Unchecked(format!(
                    "claims were not checked for this write: {} is relative and this session \
                     has no absolute workspace to take it from.",
                    shorten(path, 120)
                ));
            }
        }
    }
    let board = match Board::load(host, &mut places, settings.claim_grace_minutes) {
        Ok(board) => board,
        Err(why) => {
            return WriteCheck::Unchecked(format!(
                "claims were not checked for this write: they could not be read ({}).",
                shorten(&why, 200)
            ));
        }
    };
    let trees = Trees::of(host, &mut places, &board.live);
    let mut blocking: Vec<&Claim> = Vec::new();
    let mut blocked: Vec<&str> = Vec::new();
    for path in &written {
        let ours_shared = (board.live.iter()).any(|c| {
            c.mode == ClaimMode::Shared && trees.is_callers(&c.holder, caller) && covers(c, path)
        });
        let mut theirs = (board.live.iter())
            .filter(|c| !trees.is_callers(&c.holder, caller) && covers(c, path))
            .filter(|c| !(ours_shared && c.mode == ClaimMode::Shared))
            .peekable();
        if theirs.peek().is_some() {
            blocked.push(path);
        }
        for claim in theirs {
            if !blocking.iter().any(|b| b.id == claim.id) {
                blocking.push(claim);
            }
        }
    }
    keep_fresh(host, &board, caller);
    if blocking.is_empty() {
        return WriteCheck::Allowed;
    }
    let holders = Holders::of(host, &mut places, settings.read_scope.reach(), &blocking);
    let shown: Vec<String> = blocked.iter().take(4).map(|p| shorten(p, 200)).collect();
    let mut text = format!(
        "write refused (claimed): {}{} {} claimed by another session:",
        shown.join(", "),
        if blocked.len() > 4 {
            format!(" and {} more", blocked.len() - 4)
        } else {
            String::new()
        },
        if blocked.len() == 1 { "is" } else { "are" }
    );
    write_claim_lines(&mut text, &blocking, &holders);
    text.push_str(
        "\nNext step: nothing was written. Message the holder with sessions_send to ask for \
         the files, wait until the claim ends (the same write goes through then), or work on \
         other files.",
    );
    WriteCheck::Refused {
        text,
        claims: blocking.iter().map(|c| c.id.clone()).collect(),
    }
}

/// Writes the set once when the caller's claims are due to be marked seen (it is
/// writing, so it is live, whatever its header says) or claims lapsed: no retry, since
/// the next check does the same.
fn keep_fresh<H: Claims>(host: &mut H, board: &Board, caller: &str) {
    let now = board.now_ms;
    let mut due = false;
    let claims: Vec<Claim> = (board.live.iter())
        .map(|claim| {
            let mut claim = claim.clone();
            if claim.holder == caller && now - claim.seen_live_ms >= SEEN_LIVE_EVERY_MS {
                claim.seen_live_ms = now;
                due = true;
            }
            claim
        })
        .collect();
    if due || board.worth_writing() {
        let _ = host.write_claims(board.revision, &claims, &board.lapsed_changes());
    }
}
