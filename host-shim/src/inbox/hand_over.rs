//! What every harness's hand-over does with what waits in the inbox (a hook adapter,
//! Codex's daemon, OpenCode's plugin): settle earlier offers against the target's own
//! record, pick the messages the moment takes, within the answer's size, and offer
//! them through the backend. An answer written is only an offer: a hook killed after
//! writing it exits without success and the harness drops what it said. A message is
//! handed over once the target's record (its transcript, rollout or database) shows
//! its `message-id`, and offered again when the record still does not show it after
//! [`OFFERS_EXPIRE_AFTER`].

use super::{InboxBackend, OFFERS_EXPIRE_AFTER, Shown, SpooledMessage, Waiting};
use crate::contract::latest::{DeliveryMode, InboundPolicy};
use crate::harnesses::logfile::ReadFrom;
use anyhow::{Context, Result};
use std::path::Path;

/// Reads what a record shows, given the message ids of the offers to settle.
pub type RecordReader<'a> = Box<dyn FnMut(&[String]) -> Result<Shown> + 'a>;

/// What witnesses a hand-over.
pub enum Witness<'a> {
    /// The target's own record: what it shows, read when offers are to be settled
    /// (given their message ids).
    Record(RecordReader<'a>),
    /// The record in a file the harness appends to (a hook's `transcript_path`): read
    /// by `read` from where it stood when the offers to settle were made
    /// ([`ReadFrom::Offers`]), each offer's place noted before it is made.
    File {
        path: &'a Path,
        read: fn(&Path, ReadFrom<'_>) -> Result<Shown>,
    },
    /// The answer, for a way in the target's record does not keep (OpenClaw keeps the
    /// turn a plugin starts, not a prompt hook's text): an answer written is a
    /// hand-over, and earlier offers, made the recorded way, are settled against the
    /// record as with [`Witness::Record`].
    AnswerBesideRecord(RecordReader<'a>),
    /// Nothing but the answer (a harness whose record does not keep what a hand-over
    /// gave it): an answer written is a hand-over.
    Answer,
}

impl<'a> Witness<'a> {
    /// The record in the file at `place` (a hook's `transcript_path`), read by `read`
    /// from a place in it; nothing but the answer without one.
    pub fn file(
        place: Option<&'a Path>,
        read: fn(&Path, ReadFrom<'_>) -> Result<Shown>,
    ) -> Witness<'a> {
        match place {
            Some(path) => Witness::File { path, read },
            None => Witness::Answer,
        }
    }
}

/// What a hand-over handed over, and what it could not read.
#[derive(Debug, Default)]
pub struct HookReport {
    /// The messages given in this answer (offered, or handed over where only the
    /// answer witnesses it).
    pub handed_over: Vec<SpooledMessage>,
    /// Earlier offers the target's record showed: handed over now.
    pub confirmed: Vec<SpooledMessage>,
    /// Messages the event takes that were waiting (a concurrent hand-over may have
    /// claimed some first).
    pub picked: usize,
    /// What in the inbox is not a message, each with what is wrong.
    pub unreadable: Vec<String>,
}

/// What a command hook's input says that Claude Code's and Codex's hooks both send
/// (each sends more): the session and the event, and what our hooks read besides.
#[derive(Debug)]
pub struct CommandHookInput {
    /// The session the hook runs in, a plain id.
    pub session: String,
    /// The event (`Stop`, `UserPromptSubmit`, …).
    pub event: String,
    /// The subagent it runs for, when it runs in one.
    pub agent_id: Option<String>,
    /// The session's working folder.
    pub cwd: Option<String>,
    /// The session's record (a transcript, a rollout): what witnesses a hand-over.
    pub transcript_path: Option<String>,
    /// Before or after a tool call (`PreToolUse`, `PostToolUse`): the tool's name.
    pub tool_name: Option<String>,
    /// Before or after a tool call: the tool's input, as the model gave it.
    pub tool_input: Option<serde_json::Value>,
}

impl CommandHookInput {
    /// The input of `host-shim <command>`, run as `harness`'s command hook; an error
    /// naming what was wrong and how the hook is run.
    pub fn read(input: &[u8], command: &str, harness: &str) -> Result<CommandHookInput> {
        let (json, session) = hook_json(input, command, harness, "session_id")?;
        let text = |field: &str| json.get(field).and_then(|v| v.as_str()).map(str::to_string);
        let Some(event) = text("hook_event_name") else {
            anyhow::bail!(
                "the hook input has no hook_event_name; run host-shim {command} as a {harness} command hook"
            );
        };
        Ok(CommandHookInput {
            session,
            event,
            agent_id: text("agent_id"),
            cwd: text("cwd"),
            transcript_path: text("transcript_path"),
            tool_name: text("tool_name"),
            tool_input: json.get("tool_input").cloned(),
        })
    }
}

/// The most text one answer of a Claude Code or Codex hook carries: Claude Code's cap on
/// what a hook adds to the context, which Codex's hooks share.
pub const COMMAND_HOOK_ANSWER_CHARS: usize = 10_000;

/// A hook's stdin read as JSON, and the session it names at `field`, made a plain id;
/// an error naming what was wrong and that `host-shim <command>` runs as `harness`'s
/// command hook.
pub fn hook_json(
    input: &[u8],
    command: &str,
    harness: &str,
    field: &str,
) -> Result<(serde_json::Value, String)> {
    let run_as = format!("run host-shim {command} as a {harness} command hook");
    let json: serde_json::Value = crate::json::from_slice(input).map_err(|err| {
        anyhow::anyhow!(
            "the hook input is not JSON ({err}); {run_as} (it reads the hook's JSON on stdin)"
        )
    })?;
    let Some(session) = json.get(field).and_then(|s| s.as_str()) else {
        anyhow::bail!("the hook input has no {field}; {run_as}");
    };
    let session = super::checked_id(session)
        .map_err(|why| anyhow::anyhow!("the hook input's {field} is not a session id: {why}"))?
        .to_string();
    Ok((json, session))
}

/// A hook's answer, one JSON line on `out`, flushed: what the harness reads once the
/// hook exits.
pub fn write_hook_answer(out: &mut dyn std::io::Write, answer: &serde_json::Value) -> Result<()> {
    writeln!(out, "{answer}")
        .and_then(|()| out.flush())
        .context("cannot write the hook's answer")
}

/// A hook's answer of nothing, for a harness that reads only a JSON object (`{}`).
pub fn answer_nothing(out: &mut dyn std::io::Write) -> Result<HookReport> {
    write_hook_answer(out, &serde_json::json!({}))?;
    Ok(HookReport::default())
}

/// [`hand_over_waiting`] for a harness whose hooks always answer with a JSON object:
/// the messages' text in the object `answer` makes of it, else `{}`
/// ([`answer_nothing`]).
pub fn hand_over_as_json(
    inbox: &dyn InboxBackend,
    session: &str,
    takes: Takes,
    cap: usize,
    witness: Witness<'_>,
    out: &mut dyn std::io::Write,
    answer: impl FnOnce(&str) -> serde_json::Value,
) -> Result<HookReport> {
    let mut answered = false;
    let report = hand_over_waiting(inbox, session, takes, cap, witness, |text| {
        answered = true;
        write_hook_answer(out, &answer(text))
    })?;
    if !answered {
        answer_nothing(out)?;
    }
    Ok(report)
}

/// Which waiting messages a hand-over takes (oldest first, in each case).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Takes {
    /// The `steer` messages: the running turn takes them at its next step.
    Steer,
    /// The `steer` messages and the oldest `queue` one: a turn that ends continues
    /// with one queued message, so each becomes its own turn.
    SteerAndOldestQueued,
    /// Everything waiting: a turn or a session is starting.
    All,
}

/// Settles `session`'s earlier offers against `witness`, then picks the waiting
/// messages `takes` names, at most `cap` chars of them (at least one), and offers them,
/// `answer` giving the harness their joined text ([`InboxBackend::offer`]; handed over
/// at once where only the answer witnesses it). Nothing is given while the session's
/// person holds its inbound.
pub fn hand_over_waiting(
    inbox: &dyn InboxBackend,
    session: &str,
    takes: Takes,
    cap: usize,
    witness: Witness<'_>,
    answer: impl FnOnce(&str) -> Result<()>,
) -> Result<HookReport> {
    let mut marks = None;
    let (mut shown, offers): (RecordReader, bool) = match witness {
        Witness::Record(shown) => (shown, true),
        Witness::File { path, read } => {
            marks = Some(path);
            let from = move |ids: &[String]| read(path, ReadFrom::Offers(ids));
            (Box::new(from), true)
        }
        Witness::AnswerBesideRecord(shown) => (shown, false),
        Witness::Answer => (Box::new(|_: &[String]| Ok(Shown::new())), false),
    };
    let settled = inbox.settle(session, OFFERS_EXPIRE_AFTER, &mut *shown)?;
    let mut report = HookReport {
        confirmed: settled.handed_over,
        ..HookReport::default()
    };
    if inbox.inbound(session)? == InboundPolicy::Hold {
        return Ok(report);
    }
    let contents = inbox.waiting(session)?;
    let is_steer = |w: &Waiting| w.message.mode == DeliveryMode::Steer;
    let oldest_queued = contents.messages.iter().position(|w| !is_steer(w));
    let picked: Vec<Waiting> = (contents.messages.into_iter().enumerate())
        .filter(|(i, w)| match takes {
            Takes::Steer => is_steer(w),
            Takes::SteerAndOldestQueued => is_steer(w) || Some(*i) == oldest_queued,
            Takes::All => true,
        })
        .map(|(_, w)| w)
        .collect();
    let picked = within_answer_cap(picked, cap);
    report.picked = picked.len();
    report.unreadable = contents.unreadable;
    if !picked.is_empty() {
        let mut answer = Some(answer);
        let mut once = |messages: &[SpooledMessage]| match answer.take() {
            Some(answer) => answer(&joined(messages)),
            None => anyhow::bail!("a hand-over answers once"),
        };
        if let Some(record) = marks {
            let ids: Vec<&str> = picked
                .iter()
                .map(|w| w.message.message_id.as_str())
                .collect();
            super::record_marks::mark(record, &ids);
        }
        report.handed_over = match offers {
            true => inbox.offer(session, picked, &mut once)?,
            false => inbox.hand_over(session, picked, &mut once)?,
        };
    }
    Ok(report)
}

/// Messages handed over together: their bodies, oldest first, joined by a blank line.
pub fn joined(messages: &[SpooledMessage]) -> String {
    messages
        .iter()
        .map(|m| m.body.as_str())
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// The first messages whose text, joined by blank lines, fits in `cap` chars; at
/// least one.
pub fn within_answer_cap(picked: Vec<Waiting>, cap: usize) -> Vec<Waiting> {
    let mut chars = 0;
    let mut kept = Vec::new();
    for waiting in picked {
        let more = waiting.message.body.chars().count() + if kept.is_empty() { 0 } else { 2 };
        if !kept.is_empty() && chars + more > cap {
            break;
        }
        chars += more;
        kept.push(waiting);
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::latest::MessageIds;
    use crate::inbox::MemoryInbox;
    use std::sync::Mutex;

    /// The lines the last settling read.
    static READ: Mutex<Vec<String>> = Mutex::new(Vec::new());

    /// A record of one frame id per line.
    fn read_ids(path: &Path, from: ReadFrom<'_>) -> Result<Shown> {
        let bytes = crate::harnesses::logfile::witness_since(path, from)?;
        let lines: Vec<String> = (String::from_utf8_lossy(&bytes).lines())
            .map(str::to_string)
            .collect();
        *READ.lock().unwrap() = lines.clone();
        Ok(lines.into_iter().collect())
    }

    #[test]
    fn an_offer_is_settled_from_where_the_record_stood_when_it_was_made() {
        let dir = host_shim_testkit::scratch("hand-over", "from-mark");
        let record = dir.join("record.jsonl");
        std::fs::write(&record, "m-0000000000aa\nearlier lines\n").unwrap();
        let inbox = MemoryInbox::new();
        let ids = MessageIds {
            message_id: "m-000000000001".to_string(),
            in_reply_to: None,
        };
        let message = SpooledMessage::new("s1", DeliveryMode::Queue, "hi", "k1", false);
        inbox.put(&message.with_ids(&ids)).unwrap();
        let hand = |inbox: &MemoryInbox| {
            let witness = Witness::file(Some(&record), read_ids);
            hand_over_waiting(inbox, "s1", Takes::All, 100, witness, |_| Ok(())).unwrap()
        };
        assert_eq!(hand(&inbox).handed_over.len(), 1);
        // The harness writes the frame as it takes the answer, then more.
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&record)
            .unwrap();
        std::io::Write::write_all(&mut file, b"m-000000000001\nlater\n").unwrap();
        let report = hand(&inbox);
        // Read from where the record stood at the offer: what was there before is not.
        assert_eq!(*READ.lock().unwrap(), ["m-000000000001", "later"]);
        assert_eq!(report.confirmed.len(), 1, "{report:?}");
        // Its marks go with it (the marks folder is this user's, shared).
        let _ = std::fs::remove_file(super::super::record_marks::marks_file(&record).unwrap());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
