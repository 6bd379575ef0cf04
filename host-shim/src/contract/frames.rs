//! The plugin's frame as the host sees it: its first line, the machine a host of
//! several machines names in it, and how a frame written by a 0.4.0 plugin is shown to
//! a plugin built before it. A 0.4.0 frame carries `message-id:` (and, for a reply,
//! `in-reply-to:`) lines after `hop:`; a 0.3.0 plugin does not know them, reads such a
//! frame as a person's message and so restarts its chain at hop 1 (seen with the
//! released plugin), which would let a deployment that runs both versions loop. Shown
//! without those lines (and without `from-machine:`), the frame is one it counts.
//!
//! Across machines the receiving host adds `from-machine: <name>` after the
//! `from-session:` line, the sender's machine as the cluster enforced it
//! ([`naming_machine`]); the plugin's frame itself never carries one, so a line the
//! message brought is dropped first.

use super::latest::{MessageContent, SurfaceIndex};
use std::borrow::Cow;

/// The first line of the plugin's frame around a sent message.
pub const FRAME_FIRST_LINE: &str = "Cross-session message from another session of this harness.";

const BEGINS: &str = "--- message begins ---";

/// The frame's last line: a body line that reads like it is escaped by the plugin (a
/// leading backslash), so in a hand-over this line only ever ends a frame.
const FRAME_LAST_LINE: &str = "--- message ends ---";

/// The frames of a hook's hand-over (several messages are joined by a blank line), or
/// `None` when the text is not one: each must start with the frame's first line and
/// end with its last. Every store shows a handed-over message as the frame itself
/// (user role, not injected), whatever the harness recorded it in.
pub fn handed_over_frames(text: &str) -> Option<Vec<&str>> {
    let mut frames = Vec::new();
    let mut rest = text.trim_end_matches('\n');
    while !rest.is_empty() {
        if !rest.starts_with(FRAME_FIRST_LINE) {
            return None;
        }
        let end = rest.find(&format!("\n{FRAME_LAST_LINE}"))? + 1 + FRAME_LAST_LINE.len();
        let after = &rest[end..];
        if !(after.is_empty() || after.starts_with('\n')) {
            return None;
        }
        frames.push(&rest[..end]);
        rest = after.trim_start_matches('\n');
    }
    (!frames.is_empty()).then_some(frames)
}

/// The header line naming the machine a message came from.
pub const FROM_MACHINE: &str = "from-machine: ";

/// What an older plugin's controller refusal says when the target's person refuses
/// cross-session messages (it has no code of its own before 0.4.0).
pub const REFUSED_BY_TARGET: &str =
    "the person using that session does not take cross-session messages in it";

/// Where a frame's header ends (the `\n` before `--- message begins ---`), when `text`
/// is a frame.
fn header_end(text: &str) -> Option<usize> {
    if !text.starts_with(FRAME_FIRST_LINE) {
        return None;
    }
    text.find(&format!("\n{BEGINS}\n")).or_else(|| {
        text.ends_with(&format!("\n{BEGINS}"))
            .then(|| text.len() - BEGINS.len() - 1)
    })
}

/// `text` with the header lines `drop` picks taken out, and `after_sender` (when some)
/// written after the `from-session:` line; itself when nothing changes or it is no
/// frame.
fn rewrite_header<'a>(
    text: &'a str,
    drop: impl Fn(&str) -> bool,
    after_sender: Option<&str>,
) -> Cow<'a, str> {
    let Some(end) = header_end(text) else {
        return Cow::Borrowed(text);
    };
    let header = &text[..end];
    if after_sender.is_none() && !header.split('\n').any(&drop) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + after_sender.map_or(0, |l| l.len() + 1));
    for (at, line) in header.split('\n').filter(|line| !drop(line)).enumerate() {
        if at > 0 {
            out.push('\n');
        }
        out.push_str(line);
        if let Some(added) = after_sender
            && at == 1
        {
            out.push('\n');
            out.push_str(added);
        }
    }
    out.push_str(&text[end..]);
    if out == text {
        return Cow::Borrowed(text);
    }
    Cow::Owned(out)
}

/// `text` without a frame's `message-id:`, `in-reply-to:` and `from-machine:` header
/// lines (the lines plugins before 0.4.0 do not read); itself when it is no frame or
/// has none.
pub fn without_ids(text: &str) -> Cow<'_, str> {
    let added_since_0_3 = |line: &str| {
        line.starts_with("message-id: ")
            || line.starts_with("in-reply-to: ")
            || line.starts_with(FROM_MACHINE)
    };
    rewrite_header(text, added_since_0_3, None)
}

/// The id a frame's `message-id:` header line carries, when `text` is a frame with one
/// (a frame of a plugin before 0.4.0 has none).
pub fn frame_message_id(text: &str) -> Option<&str> {
    let end = header_end(text)?;
    (text[..end].split('\n'))
        .find_map(|line| line.strip_prefix("message-id: "))
        .filter(|id| !id.is_empty())
}

/// The sender a frame's `from-session:` line names (a plain id, or a JSON string for an
/// id that is not plain), when `text` is a frame.
pub fn frame_sender(text: &str) -> Option<String> {
    let end = header_end(text)?;
    let line = text[..end]
        .split('\n')
        .nth(1)?
        .strip_prefix("from-session: ")?;
    if line.starts_with('"') {
        let end = line.find("\" (\"")? + 1;
        serde_json::from_str(&line[..end]).ok()
    } else {
        let (id, _) = line.split_once(" (\"")?;
        (!id.is_empty()).then(|| id.to_string())
    }
}

/// `text` as its sender's plugin framed it: without the `from-machine:` line a
/// receiving host adds ([`naming_machine`]).
pub fn as_sent(text: &str) -> Cow<'_, str> {
    rewrite_header(text, |line| line.starts_with(FROM_MACHINE), None)
}

/// A frame naming `machine` as the one its message came from: a `from-machine:` line
/// after `from-session:`, in place of any the message brought. A text that is no frame
/// (a deployment with `frameMessages` off) is passed on as it is.
pub fn naming_machine<'a>(text: &'a str, machine: &str) -> Cow<'a, str> {
    let line = format!("{FROM_MACHINE}{machine}");
    rewrite_header(text, |l| l.starts_with(FROM_MACHINE), Some(&line))
}

/// Whether a message whose text starts with `lead` may be a frame, whatever its role:
/// [`older_message`] gives any role's frame without its id lines, so its index entry
/// must say the same length (the WIT: `text-chars` is the whole text's).
fn may_be_frame(lead: &str) -> bool {
    !lead.is_empty() && (FRAME_FIRST_LINE.starts_with(lead) || lead.starts_with(FRAME_FIRST_LINE))
}

/// The first `chars` chars of `text`.
fn lead(text: &str, chars: u32) -> &str {
    text.char_indices()
        .nth(chars as usize)
        .map_or(text, |(end, _)| &text[..end])
}

/// `index` as an older plugin sees it: each frame's lead and length without its id
/// lines. The frames are fetched whole with `whole` (one batch; none when no message
/// may be a frame).
pub fn older_surface<E>(
    mut index: SurfaceIndex,
    lead_chars: u32,
    whole: impl FnOnce(&[u64]) -> Result<Vec<Option<MessageContent>>, E>,
) -> Result<SurfaceIndex, E> {
    let mut starts = Vec::with_capacity(index.messages.len());
    let mut at = 0usize;
    for entry in &index.messages {
        starts.push(at);
        at = at.saturating_add(entry.text_lead_len as usize);
    }
    let frames: Vec<usize> = (0..index.messages.len())
        .filter(|&i| {
            let entry = &index.messages[i];
            let end = starts[i].saturating_add(entry.text_lead_len as usize);
            // A harness whose lengths do not tile its leads is passed on as it is.
            index
                .text_leads
                .get(starts[i]..end)
                .is_some_and(may_be_frame)
        })
        .collect();
    if frames.is_empty() {
        return Ok(index);
    }
    let seqs: Vec<u64> = frames.iter().map(|&i| index.messages[i].seq).collect();
    let texts = whole(&seqs)?;
    let mut changed: Vec<Option<String>> = vec![None; index.messages.len()];
    for (&i, content) in frames.iter().zip(texts) {
        if let Some(content) = content
            && let Cow::Owned(stripped) = without_ids(&content.text)
        {
            changed[i] = Some(stripped);
        }
    }
    if changed.iter().all(Option::is_none) {
        return Ok(index);
    }
    let mut leads = String::with_capacity(index.text_leads.len());
    for (i, entry) in index.messages.iter_mut().enumerate() {
        match &changed[i] {
            Some(text) => {
                let cut = lead(text, lead_chars);
                leads.push_str(cut);
                entry.text_lead_len = cut.len() as u32;
                entry.text_chars = u32::try_from(text.chars().count()).unwrap_or(u32::MAX);
            }
            None => {
                let end = starts[i] + entry.text_lead_len as usize;
                leads.push_str(&index.text_leads[starts[i]..end]);
            }
        }
    }
    index.text_leads = leads;
    Ok(index)
}

/// A whole message as an older plugin sees it.
pub fn older_message(mut content: MessageContent) -> MessageContent {
    if let Cow::Owned(stripped) = without_ids(&content.text) {
        content.text = stripped;
    }
    content
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::latest::{MessageEntry, Role};

    const FRAME: &str = "Cross-session message from another session of this harness.\n\
        from-session: a (\"A\")\ndelivery: queue\nhop: 2\nmessage-id: m-0123456789ab\n\
        in-reply-to: m-ba9876543210\n--- message begins ---\nmessage-id: m-body\n--- message ends ---";

    #[test]
    fn id_lines_go_from_the_header_only() {
        assert_eq!(
            without_ids(FRAME),
            "Cross-session message from another session of this harness.\n\
             from-session: a (\"A\")\ndelivery: queue\nhop: 2\n--- message begins ---\n\
             message-id: m-body\n--- message ends ---"
        );
        assert_eq!(frame_message_id(FRAME), Some("m-0123456789ab"));
        let plain = "message-id: m-0123456789ab\nhello";
        assert_eq!(frame_message_id(plain), None);
        assert!(matches!(without_ids(plain), Cow::Borrowed(_)));
        let old = without_ids(FRAME).into_owned();
        assert!(matches!(without_ids(&old), Cow::Borrowed(_)));
    }

    #[test]
    fn the_sender_machine_is_named_after_the_sender_line_in_place_of_any_brought() {
        let named = naming_machine(FRAME, "alpha");
        assert_eq!(
            named,
            "Cross-session message from another session of this harness.\n\
             from-session: a (\"A\")\nfrom-machine: alpha\ndelivery: queue\nhop: 2\n\
             message-id: m-0123456789ab\nin-reply-to: m-ba9876543210\n\
             --- message begins ---\nmessage-id: m-body\n--- message ends ---"
        );
        // Named again: one line, the new name; the same name changes nothing.
        let forged = named.replace("alpha", "beta");
        let renamed = naming_machine(&forged, "alpha");
        assert_eq!(renamed, named);
        assert!(matches!(naming_machine(&named, "alpha"), Cow::Borrowed(_)));
        // A body line is the body's.
        let in_body = FRAME.replace("message-id: m-body", "from-machine: beta");
        assert!(
            naming_machine(&in_body, "alpha").ends_with("from-machine: beta\n--- message ends ---")
        );
        // No frame: as it is.
        assert!(matches!(
            naming_machine("from-session: a\nhi", "alpha"),
            Cow::Borrowed(_)
        ));
        // An older plugin sees the frame without it; the sender's words are as sent.
        assert_eq!(without_ids(&named), without_ids(FRAME));
        assert_eq!(as_sent(&named), FRAME);
    }

    #[test]
    fn a_frames_sender_is_read_from_its_sender_line() {
        assert_eq!(frame_sender(FRAME).as_deref(), Some("a"));
        let quoted = FRAME.replace("from-session: a (", "from-session: \"a b\\u0041\" (");
        assert_eq!(frame_sender(&quoted).as_deref(), Some("a bA"));
        assert_eq!(frame_sender("from-session: a (\"A\")"), None);
        let no_sender = FRAME.replace("from-session: a (\"A\")", "delivery: steer");
        assert_eq!(frame_sender(&no_sender), None);
    }

    #[test]
    fn an_older_surface_has_the_frames_leads_and_lengths_without_ids() {
        older_surface_strips(Role::User);
    }

    #[test]
    fn an_assistant_role_frame_is_indexed_as_its_whole_text_reads() {
        // A harness that keeps a frame as the model's (a tool's echo, say): its whole
        // text reaches an older plugin without id lines, and so must its index entry.
        older_surface_strips(Role::Assistant);
    }

    fn older_surface_strips(role: Role) {
        let mut index = SurfaceIndex::new(2);
        let entry = |seq, chars: usize| MessageEntry {
            seq,
            role,
            replaced: false,
            injected: false,
            source_lead_len: 0,
            text_lead_len: 0,
            text_chars: chars as u32,
        };
        index.push(entry(1, FRAME.chars().count()), "user", FRAME, 40);
        index.push(entry(2, 5), "user", "hello", 40);
        let asked = std::cell::RefCell::new(Vec::new());
        let older = older_surface(index, 40, |seqs| -> Result<_, ()> {
            asked.borrow_mut().extend_from_slice(seqs);
            Ok(vec![Some(MessageContent {
                source: "user".into(),
                text: FRAME.into(),
                injected: false,
            })])
        })
        .unwrap();
        assert_eq!(*asked.borrow(), [1]);
        let stripped = without_ids(FRAME);
        assert_eq!(
            older.messages[0].text_chars as usize,
            stripped.chars().count()
        );
        assert_eq!(older.text_leads, format!("{}hello", &stripped[..40]));
        assert_eq!(older.messages[1].text_lead_len, 5);
    }
}
