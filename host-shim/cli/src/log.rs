//! `host-shim log`: the state folder's audit log, for the person running the sessions:
//! one line per acceptance and hand-over, oldest first, or JSON as the log keeps it.

use crate::flags::LogArgs;
use anyhow::Result;
use host_shim::inbox::AuditLog;
use host_shim::inbox::audit::{AuditEvent, AuditRecord};
use std::io::Write;
use std::time::Duration;

/// How often `--follow` looks for new records.
const FOLLOW_EVERY: Duration = Duration::from_millis(500);

pub fn run(args: &LogArgs) -> Result<()> {
    let log = AuditLog::open(&args.state.root()?, false)?;
    let (records, unreadable, mut cursor) = log.read_all();
    for problem in &unreadable {
        eprintln!("host-shim log: skipped {problem}");
    }
    let out = &mut std::io::stdout().lock();
    print(out, &records, args.json)?;
    if !args.follow {
        return Ok(());
    }
    loop {
        std::thread::sleep(FOLLOW_EVERY);
        let (new, next) = log.read_from(cursor);
        print(out, &new, args.json)?;
        cursor = next;
    }
}

fn print(out: &mut impl Write, records: &[AuditRecord], json: bool) -> Result<()> {
    for record in records {
        if json {
            writeln!(out, "{}", serde_json::to_string(record)?)?;
        } else {
            writeln!(out, "{}", line(record))?;
            if let Some(body) = &record.body {
                for text in body.lines() {
                    writeln!(out, "    {text}")?;
                }
            }
        }
    }
    out.flush()?;
    Ok(())
}

/// `2026-12-03T21:00:00.123Z accepted     s-a -> s-b queue hop=2 214 chars sha256=…`
fn line(record: &AuditRecord) -> String {
    let at = chrono::DateTime::from_timestamp_millis(i64::try_from(record.at_ms).unwrap_or(0))
        .map_or_else(
            || record.at_ms.to_string(),
            |t| t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string(),
        );
    let event = match record.event {
        AuditEvent::Accepted => "accepted",
        AuditEvent::Offered => "offered",
        AuditEvent::HandedOver => "handed-over",
        AuditEvent::WaitingAgain => "waiting-again",
        AuditEvent::Refused => "refused",
        AuditEvent::Claimed => "claimed",
        AuditEvent::Released => "released",
        AuditEvent::Lapsed => "lapsed",
        AuditEvent::WriteRefused => "write-refused",
    };
    let from = if record.from.is_empty() {
        "?"
    } else {
        &record.from
    };
    if let Some(claim) = &record.claim {
        // `… claimed     s-a c-… exclusive until … /w/src/** ("why")`; a refused
        // write names the writer first, then the holder.
        let holder = match record.to.as_str() {
            "" => String::new(),
            holder => format!(" in {holder}'s"),
        };
        let until = chrono::DateTime::from_timestamp_millis(claim.ends_at_ms).map_or_else(
            || claim.ends_at_ms.to_string(),
            |t| t.format("%Y-%m-%dT%H:%MZ").to_string(),
        );
        let mut line = format!(
            "{at} {event:<11} {from}{holder} {} {} until {until} {}",
            claim.id,
            claim.mode,
            claim.paths.join(" ")
        );
        if !claim.reason.is_empty() {
            line.push_str(&format!(" ({:?})", claim.reason));
        }
        return line;
    }
    let mut line = format!(
        "{at} {event:<11} {from} -> {} {} hop={} {} chars sha256={}",
        record.to,
        record.mode.as_str(),
        record.hop,
        record.chars,
        record.sha256
    );
    if let Some(code) = &record.refusal {
        line.push_str(&format!(" ({code})"));
    }
    line
}
