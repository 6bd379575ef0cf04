//! The provenance frame around a delivered body, and reading frames back: a send's hop
//! is one more than the hop of the chain its caller is in, and that chain is the
//! newest frame on the caller's own surface when no person's message came after it.
//! Every frame carries its message id, and a reply the id it answers.

use crate::host::{DeliveryMode, HostError, MessageIds, Role, SessionQuery, SurfaceIndex};
use crate::hygiene::{fold_title, write_body, write_id, write_quoted_inner};
use crate::json_object::{JsonValue, TopLevel};
use crate::read::{Kind, Readable, kind_from_leads, kind_of, newest_first};
use std::fmt::Write as _;

/// A frame's first line.
pub const FIRST_LINE: &str = "Cross-session message from another session of this harness.";
const BEGINS: &str = "--- message begins ---";
const ENDS: &str = "--- message ends ---";
const MESSAGE_ID: &str = "message-id: ";
const IN_REPLY_TO: &str = "in-reply-to: ";
const FROM_MACHINE: &str = "from-machine: ";

/// A machine's name as hosts write it: 1 to 64 ASCII letters, digits, `-` or `_`.
fn is_machine_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && (name.bytes()).all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Whether `text` is a message id: `m-` and 12 lowercase hex digits.
pub fn is_message_id(text: &str) -> bool {
    text.len() == 14
        && text.starts_with("m-")
        && text[2..]
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// FNV-1a over the parts, each followed by a 0 byte so no two lists run together.
pub(crate) fn fnv1a(parts: &[&[u8]]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for &byte in part.iter().chain(&[0u8]) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    hash
}

/// A message's id, derived from its delivery key so a retried call carries the same
/// id; a call with no key derives it from caller, target, hop and body.
pub fn message_id(key: &str, caller: &str, target: &str, hop: u32, body: &str) -> String {
    let hash = if key.is_empty() {
        fnv1a(&[
            caller.as_bytes(),
            target.as_bytes(),
            &hop.to_le_bytes(),
            body.as_bytes(),
        ])
    } else {
        fnv1a(&[key.as_bytes()])
    };
    // Mixed (splitmix64's finalizer) so ids of similar keys look nothing alike.
    let mut mixed = hash;
    mixed = (mixed ^ (mixed >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    mixed = (mixed ^ (mixed >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    mixed ^= mixed >> 31;
    format!("m-{:012x}", mixed & 0xffff_ffff_ffff)
}

/// The frame around `body`. The sender's id follows the id rule and its title cannot
/// close its quotes; the body is cleaned and its lines escaped, so it cannot end the
/// frame early or open a second one.
pub fn frame(
    sender: &str,
    sender_title: Option<&str>,
    mode: DeliveryMode,
    hop: u32,
    ids: &MessageIds,
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
        "\")\ndelivery: {}\nhop: {hop}\n{MESSAGE_ID}{}\n",
        mode.as_str(),
        ids.message_id
    );
    if let Some(answered) = &ids.in_reply_to {
        let _ = writeln!(out, "{IN_REPLY_TO}{answered}");
    }
    out.push_str(BEGINS);
    out.push('\n');
    write_body(&mut out, body, usize::MAX);
    out.push('\n');
    out.push_str(ENDS);
    out
}

/// What a frame's header lines say.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrameHeader {
    /// The sender's id, as the id rule wrote it decoded.
    pub sender: String,
    pub hop: u32,
    pub message_id: Option<String>,
    pub in_reply_to: Option<String>,
    /// Where the body starts in the text (after the `--- message begins ---` line).
    pub body_start: usize,
}

/// The sender id of a `from-session:` line's value: a plain id up to the space, or a
/// JSON string literal; then ` ("…")`.
fn sender_of(line: &str) -> Option<String> {
    if !line.ends_with("\")") {
        return None;
    }
    if line.starts_with('"') {
        let end = line.find("\" (\"")? + 1;
        match TopLevel::parse(&line[..end]) {
            Ok(TopLevel::Other(JsonValue::String(id))) => Some(id),
            _ => None,
        }
    } else {
        let (id, _) = line.split_once(" (\"")?;
        (!id.is_empty()).then(|| id.to_string())
    }
}

/// The header of a frame, when `text` is one: its first line and header lines parse.
/// A frame without a `hop:` line (a 0.2.0 plugin's) is hop 1; one without a
/// `message-id:` line (0.3.0 and before) has no id.
pub fn parse_frame(text: &str) -> Option<FrameHeader> {
    let mut at = 0usize;
    let mut lines = text.split_inclusive('\n').map(|line| {
        at += line.len();
        line.strip_suffix('\n').unwrap_or(line)
    });
    if lines.next()? != FIRST_LINE {
        return None;
    }
    let sender = sender_of(lines.next()?.strip_prefix("from-session: ")?)?;
    let mut line = lines.next()?;
    // Across machines the receiving host names the sender's machine here.
    if let Some(machine) = line.strip_prefix(FROM_MACHINE) {
        if !is_machine_name(machine) {
            return None;
        }
        line = lines.next()?;
    }
    if !matches!(line, "delivery: queue" | "delivery: steer") {
        return None;
    }
    let mut line = lines.next()?;
    let mut hop = 1;
    if let Some(digits) = line.strip_prefix("hop: ") {
        if !digits.bytes().all(|b| b.is_ascii_digit()) || digits.starts_with('0') {
            return None;
        }
        hop = digits.parse().ok()?;
        line = lines.next()?;
    }
    let mut message_id = None;
    if let Some(id) = line.strip_prefix(MESSAGE_ID) {
        message_id = Some(is_message_id(id).then(|| id.to_string())?);
        line = lines.next()?;
    }
    let mut in_reply_to = None;
    if let Some(id) = line.strip_prefix(IN_REPLY_TO) {
        in_reply_to = Some(is_message_id(id).then(|| id.to_string())?);
        line = lines.next()?;
    }
    if line != BEGINS {
        return None;
    }
    drop(lines);
    Some(FrameHeader {
        sender,
        hop,
        message_id,
        in_reply_to,
        body_start: at,
    })
}

/// The hop a frame carries, when `text` is one.
pub fn hop_of(text: &str) -> Option<u32> {
    parse_frame(text).map(|header| header.hop)
}

/// A frame's body as its sender wrote it, cleaned: the lines between the header and
/// the closing line, with the escapes the frame added taken off (one leading `\` of
/// each line that has one, the `\` of `…\[truncated`).
pub fn body_of<'a>(text: &'a str, header: &FrameHeader) -> String {
    let body: &'a str = &text[header.body_start..];
    let body = body
        .strip_suffix(ENDS)
        .and_then(|rest| rest.strip_suffix('\n'))
        .unwrap_or(body);
    let mut out = String::with_capacity(body.len());
    for (at, line) in body.split('\n').enumerate() {
        if at > 0 {
            out.push('\n');
        }
        let line = line.strip_prefix('\\').unwrap_or(line);
        out.push_str(&line.replace("…\\[truncated", "…[truncated"));
    }
    out
}

/// What a message of the caller's surface says about its chain, newest first.
#[derive(PartialEq, Eq)]
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

/// Whether a message whose text starts with `lead` may be a frame.
fn may_be_frame(lead: &str) -> bool {
    !lead.is_empty() && (FIRST_LINE.starts_with(lead) || lead.starts_with(FIRST_LINE))
}

/// What the whole texts of the surface's entries at `at` say of the chain, fetched in
/// one batch; a message gone since the index was read says nothing (`Skip`).
fn whole_steps(
    host: &mut impl SessionQuery,
    caller: &str,
    surface: &SurfaceIndex,
    at: &[usize],
) -> Vec<Step> {
    let seqs: Vec<u64> = at.iter().map(|&i| surface.messages[i].seq).collect();
    let whole = host.get_messages(caller, &seqs);
    (at.iter().zip(whole))
        .map(|(&i, content)| match content {
            None => Step::Skip,
            Some(content) => {
                let entry = &surface.messages[i];
                let injected = entry.injected || content.injected;
                step_of(entry.role, &content.source, &content.text, injected)
            }
        })
        .collect()
}

/// The hop of the chain `caller` is in now, from its surface's index and one batch of
/// whole messages (the newest frame, and any message before it whose leads did not
/// settle what it is).
pub fn current_hop(
    host: &mut impl SessionQuery,
    caller: &str,
    surface: Option<&SurfaceIndex>,
) -> Result<u32, HostError> {
    let Some(surface) = surface else {
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
        if may_be_frame(lead) {
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
    for step in whole_steps(host, caller, surface, &to_fetch) {
        match step {
            Step::Skip => {}
            Step::Person => return Ok(0),
            Step::Frame(hop) => return Ok(hop),
        }
    }
    Ok(0)
}

/// The hop of the chain a reply to the frame at `replied_seq` (hop `replied_hop`)
/// goes on (SPEC: the replied frame's hop + 1 when no person's message came after it):
/// `replied_hop`, or 0 when a person spoke after it. Newer frames do not count: the
/// reply answers that one. The messages after it whose leads do not settle what they
/// are are fetched whole in one batch.
pub fn reply_chain_hop(
    host: &mut impl SessionQuery,
    caller: &str,
    surface: Option<&SurfaceIndex>,
    replied_seq: u64,
    replied_hop: u32,
) -> Result<u32, HostError> {
    let Some(surface) = surface else {
        return Ok(replied_hop);
    };
    let (source_leads, text_leads) = surface.split_leads()?;
    let mut to_fetch = Vec::new();
    for (i, entry) in surface.messages.iter().enumerate() {
        if entry.seq <= replied_seq || entry.role != Role::User || entry.text_chars == 0 {
            continue;
        }
        let lead = text_leads[i];
        if may_be_frame(lead) {
            to_fetch.push(i);
            continue;
        }
        match kind_from_leads(entry, source_leads[i], lead) {
            Kind::Unsettled => to_fetch.push(i),
            Kind::Readable {
                injected: false,
                plugin_notice: false,
            } => return Ok(0),
            _ => {}
        }
    }
    let person_after = !to_fetch.is_empty()
        && (whole_steps(host, caller, surface, &to_fetch).contains(&Step::Person));
    Ok(if person_after { 0 } else { replied_hop })
}

/// Frames fetched whole per batch while looking for the one a reply names: the one
/// answered is most often among the newest.
const REPLY_BATCH: usize = 8;

/// The frame on the caller's surface whose `message-id` is `id`, with its seq, newest
/// first, in batches of whole messages; `None` when no frame there has it.
pub fn find_frame(
    host: &mut impl SessionQuery,
    caller: &str,
    surface: Option<&SurfaceIndex>,
    id: &str,
) -> Result<Option<(u64, FrameHeader)>, HostError> {
    let Some(surface) = surface else {
        return Ok(None);
    };
    let (_, text_leads) = surface.split_leads()?;
    let mut frames: Vec<Readable> = (surface.messages.iter().enumerate())
        .filter(|(i, m)| m.role == Role::User && may_be_frame(text_leads[*i]))
        .map(|(entry, m)| Readable {
            entry,
            seq: m.seq,
            injected: m.injected,
            content: None,
        })
        .collect();
    frames.sort_unstable_by_key(newest_first);
    for batch in frames.chunks(REPLY_BATCH) {
        let seqs: Vec<u64> = batch.iter().map(|f| f.seq).collect();
        for (seq, content) in seqs.iter().zip(host.get_messages(caller, &seqs)) {
            let Some(content) = content else { continue };
            if let Some(header) = parse_frame(&content.text)
                && header.message_id.as_deref() == Some(id)
            {
                return Ok(Some((*seq, header)));
            }
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{FakeHost, session};

    fn framed(hop: u32) -> String {
        let ids = MessageIds {
            message_id: "m-0123456789ab".to_string(),
            in_reply_to: None,
        };
        frame(
            "peer",
            Some("Peer"),
            DeliveryMode::Queue,
            hop,
            &ids,
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
             message-id: m-0123456789ab\n\
             --- message begins ---\n\
             do the thing\n\
             --- message ends ---"
        );
        assert_eq!(hop_of(&framed(2)), Some(2));
        // A 0.3.0 frame has no id line; a 0.2.0 frame no hop line either: hop 1.
        let v3 = framed(7).replace("message-id: m-0123456789ab\n", "");
        assert_eq!(hop_of(&v3), Some(7));
        assert_eq!(parse_frame(&v3).unwrap().message_id, None);
        let old = v3.replace("hop: 7\n", "");
        assert_eq!(hop_of(&old), Some(1));
        let reply = framed(3).replace(
            "--- message begins",
            "in-reply-to: m-ffffffffffff\n--- message begins",
        );
        let header = parse_frame(&reply).unwrap();
        assert_eq!(
            (
                header.sender.as_str(),
                header.hop,
                header.in_reply_to.as_deref()
            ),
            ("peer", 3, Some("m-ffffffffffff"))
        );
        assert_eq!(body_of(&reply, &header), "do the thing");
        // Across machines the receiving host names the sender's machine.
        let remote = framed(4).replace("(\"Peer\")\n", "(\"Peer\")\nfrom-machine: build-box_2\n");
        let header = parse_frame(&remote).unwrap();
        assert_eq!((header.sender.as_str(), header.hop), ("peer", 4));
        assert_eq!(body_of(&remote, &header), "do the thing");
        for broken in [
            remote.replace("build-box_2", ""),
            remote.replace("build-box_2", "build box"),
            remote.replace("build-box_2", &"b".repeat(65)),
            remote.replace("hop: 4\n", "hop: 4\nfrom-machine: a\n"),
            framed(3).replace("hop: 3", "hop: 03"),
            framed(3).replace("hop: 3", "hop: 0"),
            framed(3).replace("hop: 3", "hop: three"),
            framed(3).replace("delivery: queue", "delivery: later"),
            framed(3).replace("from-session: peer (\"Peer\")", "from: peer"),
            framed(3).replacen("Cross-session", " Cross-session", 1),
            framed(3).replace("m-0123456789ab", "m-0123456789AB"),
            framed(3).replace("m-0123456789ab", "m-12"),
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
            let surface = host.get_surface("me", crate::read::LEAD_CHARS);
            assert_eq!(
                current_hop(&mut host, "me", surface.as_ref()),
                Ok(hop),
                "{messages:?}"
            );
            // The index, and at most one batch of whole messages.
            assert!(host.calls.len() <= 2, "{:?}", host.calls);
        }
    }

    #[test]
    fn ids_are_stable_per_key_and_well_formed() {
        let a = message_id("2:mec-1", "me", "peer", 1, "x");
        assert!(is_message_id(&a), "{a}");
        assert_eq!(a, message_id("2:mec-1", "me", "other", 3, "y"));
        assert_ne!(a, message_id("2:mec-2", "me", "peer", 1, "x"));
        let keyless = message_id("", "me", "peer", 1, "x");
        assert_eq!(keyless, message_id("", "me", "peer", 1, "x"));
        assert_ne!(keyless, message_id("", "me", "peer", 2, "x"));
        assert_ne!(keyless, message_id("", "mep", "eer", 1, "x"));
    }

    #[test]
    fn a_sender_written_as_a_literal_reads_back() {
        let ids = MessageIds {
            message_id: "m-0123456789ab".to_string(),
            in_reply_to: None,
        };
        let text = frame("a b\"c", None, DeliveryMode::Steer, 1, &ids, "x");
        assert_eq!(parse_frame(&text).unwrap().sender, "a b\"c");
    }
}
