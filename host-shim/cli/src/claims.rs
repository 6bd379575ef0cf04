//! `host-shim claims [release ID]`: the claims every session of this state folder (or
//! cluster) holds, for the person running them, and their say over any of them: a
//! claim released here ends for everyone at once, and the audit log records who
//! released it (`released`, from its holder's id: the log names claims by holder).

use crate::flags::ClaimsArgs;
use anyhow::{Context, Result, bail};
use host_shim::contract::latest::{ChangeKind, Claim, ClaimChange};
use host_shim::inbox::claims::ClaimsWritten;

/// Writes tried while sessions change the claims meanwhile.
const ATTEMPTS: usize = 8;

pub fn run(args: &ClaimsArgs) -> Result<()> {
    let inbox = args.state.inbox()?;
    let Some(id) = args.id.as_deref().filter(|_| args.action.is_some()) else {
        if args.id.is_some() {
            bail!(
                "say what to do with {}: host-shim claims release ID",
                args.id.as_deref().unwrap_or("")
            );
        }
        let at = inbox.read_claims()?;
        print!("{}", listing(&at.claims, host_shim::call_stamp::now_ms()));
        return Ok(());
    };
    for _ in 0..ATTEMPTS {
        let at = inbox.read_claims()?;
        let Some(claim) = at.claims.iter().find(|c| c.id == id).cloned() else {
            let known: Vec<&str> = at.claims.iter().map(|c| c.id.as_str()).collect();
            bail!(
                "no claim has the id {id} (the claims now: {}); `host-shim claims` lists them",
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            );
        };
        let kept: Vec<Claim> = at.claims.iter().filter(|c| c.id != id).cloned().collect();
        let change = ClaimChange {
            kind: ChangeKind::Released,
            claim: claim.clone(),
        };
        match inbox
            .write_claims(at.revision, &kept, &[change])
            .context("the claims could not be written")?
        {
            ClaimsWritten::Written(_) => {
                println!(
                    "released {id} (held by {}): {}",
                    claim.holder,
                    claim.paths.join(", ")
                );
                return Ok(());
            }
            ClaimsWritten::Stale => continue,
        }
    }
    bail!("sessions changed the claims {ATTEMPTS} times while releasing {id}; run it again")
}

/// One line per claim, soonest end first; a claim whose time is up reads as ended (the
/// plugin drops it at the next claim or write check).
pub(crate) fn listing(claims: &[Claim], now_ms: i64) -> String {
    if claims.is_empty() {
        return "no claims\n".to_string();
    }
    let mut sorted: Vec<&Claim> = claims.iter().collect();
    sorted.sort_by_key(|c| (c.ends_at_ms, c.id.clone()));
    let mut out = String::new();
    for claim in sorted {
        let until = chrono::DateTime::from_timestamp_millis(claim.ends_at_ms).map_or_else(
            || claim.ends_at_ms.to_string(),
            |t| t.format("%Y-%m-%d %H:%M UTC").to_string(),
        );
        let ended = if claim.ends_at_ms <= now_ms {
            " (ended)"
        } else {
            ""
        };
        out.push_str(&format!(
            "{} {} {} until {until}{ended}: {}",
            claim.id,
            claim.holder,
            claim.mode.as_str(),
            claim.paths.join(", ")
        ));
        if !claim.reason.is_empty() {
            out.push_str(&format!(" ({:?})", claim.reason));
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use host_shim::contract::latest::ClaimMode;

    #[test]
    fn claims_are_listed_soonest_end_first_and_ended_ones_say_so() {
        let claim = |id: &str, ends_at_ms: i64| Claim {
            id: id.to_string(),
            holder: "s-a".to_string(),
            paths: vec!["/w/src/**".to_string()],
            mode: ClaimMode::Exclusive,
            reason: "split".to_string(),
            made_at_ms: 0,
            ends_at_ms,
            seen_live_ms: 0,
        };
        assert_eq!(listing(&[], 0), "no claims\n");
        assert_eq!(
            listing(
                &[claim("c-2", 1_796_598_000_000), claim("c-1", 60_000)],
                120_000
            ),
            "c-1 s-a exclusive until 1970-01-01 00:01 UTC (ended): /w/src/** (\"split\")\n\
             c-2 s-a exclusive until 2026-12-06 23:00 UTC: /w/src/** (\"split\")\n"
        );
    }
}
