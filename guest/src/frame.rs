//! The provenance frame around a delivered body, and reading frames back: a send's hop
//! is one more than the hop of the chain its caller is in, and that chain is the
//! newest frame on the caller's own surface when no person's message came after it.

use crate::host::{DeliveryMode, HostError, Role, SessionQuery};
use crate::hygiene::{fold_title, write_body, write_id, write_quoted_inner};
use crate::read::{Kind, LEAD_CHARS, Readable, kind_from_leads, kind_of, newest_first};
use std::fmt::Write as _;

/// A frame's first line.
pub const FIRST_LINE: &str = "Cross-session message from another session of this harness.";
const BEGINS: &str = "--- message begins ---";
const ENDS: &str = "--- message ends ---";

/// The frame around `body`. The sender's id follows the id rule and its title cannot
/// close its quotes; the body is cleaned and its lines escaped, so it cannot end the
/// frame early or open a second one.
pub fn frame(
    sender: &str,
    sender_title: Option<&str>,
    mode: DeliveryMode,
    hop: u32,
    body: &str,
) -> String {
    let mut out = String::with_capacity(body.len() + 256);
    out.push_str(FIRST_LINE);
    out.push_str("\nfrom-session: ");
    write_id(&mut out, sender);
    out.push_str(" (\"");
    write_quoted_inner(&mut out, &fold_title(sender_title));
    let _ = write!(
        out,
        "\")\ndelivery: {}\nhop: {hop}\n{BEGINS}\n",
        mode.as_str()
    );
    write_body(&mut out, body, usize::MAX);
    out.push('\n');
    out.push_str(ENDS);
    out
}

/// The hop a frame carries, when `text` is one: its first line and header lines parse
/// (a frame without a `hop:` line, written by a 0.2.0 plugin, is hop 1).
pub fn hop_of(text: &str) -> Option<u32> {
    let mut lines = text.split('\n');
    if lines.next()? != FIRST_LINE {
        return None;
    }
    let sender = lines.next()?.strip_prefix("from-session: ")?;
    if !(sender.ends_with("\")") && sender.contains(" (\"")) {
        return None;
    }
    if !matches!(lines.next()?, "delivery: queue" | "delivery: steer") {
        return None;
    }
    match lines.next()? {
        BEGINS => Some(1),
        line => {
            let hop = line.strip_prefix("hop: ")?;
            if !hop.bytes().all(|b| b.is_ascii_digit()) || hop.starts_with('0') {
                return None;
            }
            let hop = hop.parse().ok()?;
            (lines.next()? == BEGINS).then_some(hop)
        }
    }
}

/// What a message of the caller's surface says about its chain, newest first.
enum Step {
    /// Neither a frame nor a person's message: look further back.
    Skip,
    /// A person's message: a new chain starts after it.
    Person,
    /// A frame with this hop.
    Frame(u32),
}

/// What a whole user-role message is to the chain.
fn step_of(role: Role, source: &str, text: &str, injected: bool) -> Step {
    if role != Role::User {
        return Step::Skip;
    }
    if let Some(hop) = hop_of(text) {
        return Step::Frame(hop);
    }
    match kind_of(role, source, text, injected) {
        Kind::Readable {
            injected: false,
            plugin_notice: false,
        } => Step::Person,
        _ => Step::Skip,
    }
}

/// The hop of the chain `caller` is in now: its surface's index, and one batch of
/// whole messages (the newest frame, and any message before it whose leads did not
/// settle what it is).
pub fn current_hop(host: &mut impl SessionQuery, caller: &str) -> Result<u32, HostError> {
    let Some(surface) = host.get_surface(caller, LEAD_CHARS) else {
        return Ok(0);
    };
    let (source_leads, text_leads) = surface.split_leads()?;
    // Only user-role messages with text can be a frame or a person's.
    let mut candidates: Vec<Readable> = (surface.messages.iter().enumerate())
        .filter(|(_, m)| m.role == Role::User && m.text_chars > 0)
        .map(|(entry, m)| Readable {
            entry,
            seq: m.seq,
            injected: m.injected,
            content: None,
        })
        .collect();
    candidates.sort_unstable_by_key(newest_first);
    // Messages whose whole text decides, newest first, up to the first the leads
    // settle as a person's message or that may be a frame.
    let mut to_fetch = Vec::new();
    for candidate in &candidates {
        let i = candidate.entry;
        let entry = &surface.messages[i];
        let lead = text_leads[i];
        let may_be_frame = FIRST_LINE.starts_with(lead) || lead.starts_with(FIRST_LINE);
        if may_be_frame && !lead.is_empty() {
            to_fetch.push(i);
            break;
        }
        match kind_from_leads(entry, source_leads[i], lead) {
            Kind::Unsettled => to_fetch.push(i),
            Kind::Readable {
                injected: false,
                plugin_notice: false,
            } if to_fetch.is_empty() => return Ok(0),
            Kind::Readable {
                injected: false,
                plugin_notice: false,
            } => break, // decided after the unsettled ones before it
            _ => {}
        }
    }
    if to_fetch.is_empty() {
        return Ok(0);
    }
    let seqs: Vec<u64> = to_fetch.iter().map(|&i| surface.messages[i].seq).collect();
    let whole = host.get_messages(caller, &seqs);
    for (&i, content) in to_fetch.iter().zip(whole) {
        // A message gone since the index was read says nothing.
        let Some(content) = content else { continue };
        let entry = &surface.messages[i];
        let injected = entry.injected || content.injected;
        match step_of(entry.role, &content.source, &content.text, injected) {
            Step::Skip => {}
            Step::Person => return Ok(0),
            Step::Frame(hop) => return Ok(hop),
        }
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{FakeHost, session};

    fn framed(hop: u32) -> String {
        frame(
            "peer",
            Some("Peer"),
            DeliveryMode::Queue,
            hop,
            "do the thing",
        )
    }

    #[test]
    fn a_frame_reads_back_its_hop() {
        assert_eq!(
            framed(2),
            "Cross-session message from another session of this harness.\n\
             from-session: peer (\"Peer\")\n\
             delivery: queue\n\
             hop: 2\n\
             --- message begins ---\n\
             do the thing\n\
             --- message ends ---"
        );
        assert_eq!(hop_of(&framed(2)), Some(2));
        // A 0.2.0 frame has no hop line: hop 1.
        let old = framed(7).replace("hop: 7\n", "");
        assert_eq!(hop_of(&old), Some(1));
        for broken in [
            framed(3).replace("hop: 3", "hop: 03"),
            framed(3).replace("hop: 3", "hop: 0"),
            framed(3).replace("hop: 3", "hop: three"),
            framed(3).replace("delivery: queue", "delivery: later"),
            framed(3).replace("from-session: peer (\"Peer\")", "from: peer"),
            framed(3).replacen("Cross-session", " Cross-session", 1),
            "Cross-session message from another session of this harness.".to_string(),
        ] {
            assert_eq!(hop_of(&broken), None, "{broken}");
        }
    }

    /// A message of the caller's surface: role, text, and whether the host says it
    /// was injected.
    type Said<'a> = (Role, &'a str, bool);

    fn caller_with(messages: &[Said]) -> FakeHost {
        let mut me = session("me", 1).live(true);
        for (seq, (role, text, injected)) in messages.iter().enumerate() {
            me = me.text(seq as u64 + 1, *role, "user", text);
            if *injected {
                me = me.injected();
            }
        }
        let mut host = FakeHost::default();
        host.add(me);
        host
    }

    #[test]
    fn the_newest_frame_is_the_chain_until_a_person_speaks() {
        let frame2 = framed(2);
        let cases: [(&[Said], u32); 6] = [
            (&[], 0),
            (&[(Role::User, "please review", false)], 0),
            (
                &[
                    (Role::User, "please review", false),
                    (Role::User, &frame2, false),
                ],
                2,
            ),
            // The model's own answer and injected text after it change nothing.
            (
                &[
                    (Role::User, &frame2, false),
                    (Role::Assistant, "on it", false),
                    (Role::User, "<system-reminder>x</system-reminder>", false),
                    (Role::User, "lint passed", true),
                ],
                2,
            ),
            // A person's message starts a new chain.
            (
                &[
                    (Role::User, &frame2, false),
                    (Role::User, "stop that", false),
                ],
                0,
            ),
            // Text that only starts like a frame is a person's.
            (
                &[
                    (Role::User, &frame2, false),
                    (Role::User, FIRST_LINE, false),
                ],
                0,
            ),
        ];
        for (messages, hop) in cases {
            let mut host = caller_with(messages);
            assert_eq!(current_hop(&mut host, "me"), Ok(hop), "{messages:?}");
            // The index, and at most one batch of whole messages.
            assert!(host.calls.len() <= 2, "{:?}", host.calls);
        }
    }
}
