//! What `sessions_claim`, a write check, a listing and a read share about claims: the
//! set as one call sees it (ended claims dropped, holders seen live refreshed), the
//! trees claims are weighed by, conflicts, the one text every claim is shown in, and
//! the write that retries while others changed the set.

use crate::glob;
use crate::host::{
    ChangeKind, Claim, ClaimChange, ClaimMode, ClaimSet, Claims, SessionQuery, WriteFailure,
};
use crate::hygiene::{fold_title, show_id};
use crate::scope::{Places, Reach};
use crate::text::shorten;

/// Most patterns one claim holds.
pub const MAX_PATHS: usize = 32;
/// Most chars of one pattern as the model writes it.
pub const PATH_MAX_CHARS: usize = 1024;
/// Most chars of a claim's reason (as a title).
pub const REASON_MAX_CHARS: usize = 80;
/// Most claims one session holds at once.
pub const MAX_CLAIMS_PER_SESSION: usize = 16;
/// Most claims a listing's row counts or a refusal names one by one.
pub const CLAIMS_SHOWN: usize = 8;
/// How often a holder seen live is written down again.
pub const SEEN_LIVE_EVERY_MS: i64 = 60_000;
/// Writes tried while other sessions change the set meanwhile.
pub const WRITE_ATTEMPTS: usize = 8;

/// The claims as one call sees them: those still running, and what ended since the
/// set was written (kept to record as lapsed with the next write).
pub struct Board {
    pub revision: u64,
    pub now_ms: i64,
    pub live: Vec<Claim>,
    pub lapsed: Vec<Claim>,
    /// Some holder's `seen_live_ms` was brought up to now.
    pub refreshed: bool,
}

impl Board {
    /// Reads the set and sorts it: a claim whose end passed, or whose holder has not
    /// been seen live for the grace period, has lapsed; a holder live now is written
    /// down as seen (at most once a minute).
    pub fn load<H: SessionQuery + Claims>(
        host: &mut H,
        places: &mut Places,
        grace_minutes: u32,
    ) -> Result<Board, String> {
        let ClaimSet {
            claims,
            revision,
            now_ms,
        } = host.read_claims()?;
        let holders: Vec<&str> = claims.iter().map(|c| c.holder.as_str()).collect();
        places.learn(host, &holders);
        let grace_ms = grace_of(grace_minutes);
        let mut board = Board {
            revision,
            now_ms,
            live: Vec::with_capacity(claims.len()),
            lapsed: Vec::new(),
            refreshed: false,
        };
        for mut claim in claims {
            let holder_live = places.header(&claim.holder).is_some_and(|h| h.live);
            if holder_live && now_ms - claim.seen_live_ms >= SEEN_LIVE_EVERY_MS {
                claim.seen_live_ms = now_ms;
                board.refreshed = true;
            }
            if running(&claim, now_ms, holder_live, grace_ms) {
                board.live.push(claim);
            } else {
                board.lapsed.push(claim);
            }
        }
        Ok(board)
    }

    /// The running claims `holder` made.
    pub fn held_by<'a>(&'a self, holder: &'a str) -> impl Iterator<Item = &'a Claim> + 'a {
        self.live.iter().filter(move |c| c.holder == holder)
    }

    /// The lapsed claims as changes, for the next write.
    pub fn lapsed_changes(&self) -> Vec<ClaimChange> {
        (self.lapsed.iter())
            .map(|claim| ClaimChange {
                kind: ChangeKind::Lapsed,
                claim: claim.clone(),
            })
            .collect()
    }

    /// Whether a write would record something on its own (lapses, or a holder seen).
    pub fn worth_writing(&self) -> bool {
        self.refreshed || !self.lapsed.is_empty()
    }
}

/// The tree (root session) of the caller and of each holder of `claims`; a holder
/// whose root is unknown is its own tree.
pub struct Trees {
    caller: String,
    holders: Vec<(String, String)>,
}

impl Trees {
    pub fn of<H: SessionQuery>(host: &mut H, places: &mut Places, claims: &[Claim]) -> Trees {
        let caller = places.caller_root(host).unwrap_or_default();
        let ids = holders_of(claims.iter());
        let roots = places.roots(host, &ids);
        let holders = (ids.into_iter().zip(roots))
            .map(|(id, root)| (id.to_string(), root.unwrap_or_else(|| id.to_string())))
            .collect();
        Trees { caller, holders }
    }

    /// Whether `holder` is of the caller's tree (the caller itself included).
    pub fn is_callers(&self, holder: &str, caller: &str) -> bool {
        if holder == caller {
            return true;
        }
        let root = (self.holders.iter())
            .find(|(id, _)| id == holder)
            .map_or(holder, |(_, root)| root.as_str());
        !self.caller.is_empty() && root == self.caller
    }
}

/// The holders of `claims`, each once, first seen first (a few: no sort needed).
fn holders_of<'a>(claims: impl Iterator<Item = &'a Claim>) -> Vec<&'a str> {
    let mut ids: Vec<&str> = Vec::new();
    for claim in claims {
        if !ids.contains(&claim.holder.as_str()) {
            ids.push(&claim.holder);
        }
    }
    ids
}

/// Whether any pattern of `a` could overlap any of `b`.
pub fn paths_overlap(a: &[String], b: &[String]) -> bool {
    a.iter().any(|x| b.iter().any(|y| glob::overlap(x, y)))
}

/// Whether any pattern of `claim` covers the written `path`.
pub fn covers(claim: &Claim, path: &str) -> bool {
    claim
        .paths
        .iter()
        .any(|pattern| glob::covers(pattern, path))
}

/// A time as claims show it: UTC, to the minute (`2026-12-06 23:10 UTC`).
pub fn utc_minute(ms: i64) -> String {
    let minutes = ms.div_euclid(60_000);
    let days = minutes.div_euclid(1440);
    let of_day = minutes.rem_euclid(1440);
    // Days since 1970-01-01 to a civil date (Howard Hinnant's `civil_from_days`).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02} UTC",
        of_day / 60,
        of_day % 60
    )
}

/// `claimGraceMinutes` in milliseconds.
fn grace_of(minutes: u32) -> i64 {
    i64::from(minutes) * 60_000
}

/// Whether `claim` still runs at `now_ms`, its holder live now or not: its time is not
/// up, and its holder is live or was seen live within the grace period.
fn running(claim: &Claim, now_ms: i64, holder_live: bool, grace_ms: i64) -> bool {
    claim.ends_at_ms > now_ms
        && (holder_live || claim.seen_live_ms.saturating_add(grace_ms) > now_ms)
}

/// A read's lines for the claims `holder` holds (`claim c-… (…): paths`, at most
/// [`CLAIMS_SHOWN`]), from one read without writing; nothing when it holds none or the
/// claims cannot be read.
pub fn write_held<H: Claims>(
    out: &mut String,
    host: &mut H,
    (holder, live): (&str, bool),
    grace_minutes: u32,
) {
    let Ok(set) = host.read_claims() else {
        return;
    };
    let grace_ms = grace_of(grace_minutes);
    let held: Vec<&Claim> = (set.claims.iter())
        .filter(|c| c.holder == holder && running(c, set.now_ms, live, grace_ms))
        .collect();
    for claim in held.iter().take(CLAIMS_SHOWN) {
        out.push_str(
            "
claim ",
        );
        out.push_str(&describe(claim));
    }
    if held.len() > CLAIMS_SHOWN {
        out.push_str(&format!(
            "
(and {} more claims)",
            held.len() - CLAIMS_SHOWN
        ));
    }
}

/// How many running claims each of `holders` holds (`holders`: an id and whether it
/// is live now), counted from one read without writing; none when the claims cannot
/// be read (a listing then shows no counts).
pub fn counts<H: Claims>(host: &mut H, holders: &[(&str, bool)], grace_minutes: u32) -> Vec<usize> {
    let Ok(set) = host.read_claims() else {
        return vec![0; holders.len()];
    };
    let grace_ms = grace_of(grace_minutes);
    (holders.iter())
        .map(|(holder, live)| {
            (set.claims.iter())
                .filter(|c| c.holder == *holder && running(c, set.now_ms, *live, grace_ms))
                .count()
        })
        .collect()
}

/// Who a holder is, for others: its id and title (and machine when named), or, outside
/// the caller's `readScope`, that it cannot be shown.
pub struct Holders {
    shown: Vec<(String, String)>,
}

impl Holders {
    /// Learns the holders of `claims` the caller may see, with their titles in one
    /// batch.
    pub fn of<H: SessionQuery>(
        host: &mut H,
        places: &mut Places,
        reach: Reach,
        claims: &[&Claim],
    ) -> Holders {
        let ids = holders_of(claims.iter().copied());
        places.learn(host, &ids);
        let asked: Vec<(&str, bool)> = (ids.iter())
            .map(|id| (*id, places.header(id).is_some_and(|h| h.is_subagent())))
            .collect();
        let inside = places.reaches(host, reach, &asked);
        let visible: Vec<String> = (ids.iter().zip(inside))
            .filter(|(_, inside)| *inside)
            .map(|(id, _)| id.to_string())
            .collect();
        let titles = if visible.is_empty() {
            Vec::new()
        } else {
            host.title_snapshots(&visible)
        };
        let shown = (visible.iter().enumerate())
            .map(|(at, id)| {
                let title = fold_title(titles.get(at).cloned().flatten().as_deref());
                let machine = (places.header(id))
                    .and_then(|h| h.machine.as_deref())
                    .map(|m| format!(" on {}", shorten(m, 40)))
                    .unwrap_or_default();
                (id.clone(), format!("{} \"{title}\"{machine}", show_id(id)))
            })
            .collect();
        Holders { shown }
    }

    /// The holder as a line names it.
    pub fn name(&self, holder: &str) -> &str {
        (self.shown.iter()).find(|(id, _)| id == holder).map_or(
            "a session outside what this deployment lets you see",
            |(_, shown)| shown.as_str(),
        )
    }
}

/// One claim as every text shows it:
/// `c-… (exclusive, until 2026-12-06 23:10 UTC, "reason"): /a/**, /b`.
pub fn describe(claim: &Claim) -> String {
    let reason = shorten(&claim.reason, REASON_MAX_CHARS);
    let reason = if reason.is_empty() {
        String::new()
    } else {
        format!(", \"{}\"", crate::text::quoted(&reason))
    };
    let paths: Vec<String> = claim.paths.iter().map(|p| shorten(p, 200)).collect();
    format!(
        "{} ({}, until {}{reason}): {}",
        show_id(&claim.id),
        claim.mode.as_str(),
        utc_minute(claim.ends_at_ms),
        paths.join(", ")
    )
}

/// A new claim id: `c-` and 12 hex digits from what makes this claim, another than
/// any in `taken`.
pub fn new_id(seed: &[&[u8]], taken: &[Claim]) -> String {
    let mut salt = 0u32;
    loop {
        let salt_bytes = salt.to_le_bytes();
        let mut parts: Vec<&[u8]> = seed.to_vec();
        parts.push(&salt_bytes);
        let id = format!("c-{:012x}", crate::frame::fnv1a(&parts) & 0xffff_ffff_ffff);
        if !taken.iter().any(|c| c.id == id) {
            return id;
        }
        salt += 1;
    }
}

/// What one attempt at changing the set decided.
pub enum Decision<T> {
    /// Write these claims with these changes, then answer with `T`.
    Write(Vec<Claim>, Vec<ClaimChange>, T),
    /// Answer with `T`, writing nothing.
    Answer(T),
}

/// Why [`change`] gave up.
pub enum ChangeFailure {
    /// The set could not be read or stored: the host's reason.
    Unavailable(String),
    /// Others kept changing it ([`WRITE_ATTEMPTS`] times).
    Busy,
}

/// Reads the set, lets `decide` change it, and writes it at the revision read; when
/// another session changed it meanwhile, reads and decides again.
pub fn change<H: SessionQuery + Claims, T>(
    host: &mut H,
    places: &mut Places,
    grace_minutes: u32,
    mut decide: impl FnMut(&mut H, &mut Places, &Board) -> Decision<T>,
) -> Result<T, ChangeFailure> {
    for _ in 0..WRITE_ATTEMPTS {
        let board = Board::load(host, places, grace_minutes).map_err(ChangeFailure::Unavailable)?;
        match decide(host, places, &board) {
            Decision::Answer(answer) => return Ok(answer),
            Decision::Write(claims, changes, answer) => {
                match host.write_claims(board.revision, &claims, &changes) {
                    Ok(_) => return Ok(answer),
                    Err(WriteFailure::Stale) => continue,
                    Err(WriteFailure::Unavailable(why)) => {
                        return Err(ChangeFailure::Unavailable(why));
                    }
                }
            }
        }
    }
    Err(ChangeFailure::Busy)
}

/// The claims of `board` that conflict with `paths` claimed in `mode` by the caller:
/// other trees' overlapping claims, where either is exclusive.
pub fn conflicts<'a>(
    board: &'a Board,
    trees: &Trees,
    caller: &str,
    paths: &[String],
    mode: ClaimMode,
) -> Vec<&'a Claim> {
    (board.live.iter())
        .filter(|c| !trees.is_callers(&c.holder, caller))
        .filter(|c| mode == ClaimMode::Exclusive || c.mode == ClaimMode::Exclusive)
        .filter(|c| paths_overlap(&c.paths, paths))
        .collect()
}

/// The lines naming `claims` one by one (at most [`CLAIMS_SHOWN`], then how many more).
pub fn write_claim_lines(out: &mut String, claims: &[&Claim], holders: &Holders) {
    for claim in claims.iter().take(CLAIMS_SHOWN) {
        out.push_str("\n- ");
        out.push_str(holders.name(&claim.holder));
        out.push_str(" holds ");
        out.push_str(&describe(claim));
    }
    if claims.len() > CLAIMS_SHOWN {
        out.push_str(&format!("\n- and {} more", claims.len() - CLAIMS_SHOWN));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_shown_in_utc_to_the_minute() {
        assert_eq!(utc_minute(0), "1970-01-01 00:00 UTC");
        assert_eq!(utc_minute(1_796_598_659_000), "2026-12-06 23:10 UTC");
        assert_eq!(utc_minute(951_782_400_000), "2000-02-29 00:00 UTC");
        assert_eq!(utc_minute(-60_000), "1969-12-31 23:59 UTC");
    }

    #[test]
    fn new_ids_are_claim_shaped_and_not_taken() {
        let id = new_id(&[b"caller", b"call"], &[]);
        assert!(id.starts_with("c-") && id.len() == 14, "{id}");
        assert!(
            id[2..]
                .chars()
                .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
        );
        let taken = Claim {
            id: id.clone(),
            holder: "x".into(),
            paths: vec![],
            mode: ClaimMode::Shared,
            reason: String::new(),
            made_at_ms: 0,
            ends_at_ms: 0,
            seen_live_ms: 0,
        };
        assert_ne!(new_id(&[b"caller", b"call"], &[taken]), id);
    }
}
