//! The plugin's frame as the host sees it: its first line, and how a frame written by
//! a 0.4.0 plugin is shown to a plugin built before it. A 0.4.0 frame carries
//! `message-id:` (and, for a reply, `in-reply-to:`) lines after `hop:`; a 0.3.0 plugin
//! does not know them, reads such a frame as a person's message and so restarts its
//! chain at hop 1 (seen with the released plugin), which would let a deployment that
//! runs both versions loop. Shown without those lines, the frame is one it counts.

use super::latest::{MessageContent, Role, SurfaceIndex};
use std::borrow::Cow;

/// The first line of the plugin's frame around a sent message.
pub const FRAME_FIRST_LINE: &str = "Cross-session message from another session of this harness.";

const BEGINS: &str = "--- message begins ---";

/// What an older plugin's controller refusal says when the target's person refuses
/// cross-session messages (it has no code of its own before 0.4.0).
pub const REFUSED_BY_TARGET: &str =
    "the person using that session does not take cross-session messages in it";

/// `text` without a frame's `message-id:` and `in-reply-to:` header lines; itself when
/// it is no frame or has none.
pub fn without_ids(text: &str) -> Cow<'_, str> {
    if !text.starts_with(FRAME_FIRST_LINE) {
        return Cow::Borrowed(text);
    }
    let Some(begins) = text.find(&format!("\n{BEGINS}\n")).or_else(|| {
        text.ends_with(&format!("\n{BEGINS}"))
            .then(|| text.len() - BEGINS.len() - 1)
    }) else {
        return Cow::Borrowed(text);
    };
    let header = &text[..begins];
    let is_id_line =
        |line: &str| line.starts_with("message-id: ") || line.starts_with("in-reply-to: ");
    if !header.split('\n').any(is_id_line) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    for (at, line) in header
        .split('\n')
        .filter(|line| !is_id_line(line))
        .enumerate()
    {
        if at > 0 {
            out.push('\n');
        }
        out.push_str(line);
    }
    out.push_str(&text[begins..]);
    Cow::Owned(out)
}

/// Whether a message whose text starts with `lead` may be a frame.
fn may_be_frame(role: Role, lead: &str) -> bool {
    role == Role::User
        && !lead.is_empty()
        && (FRAME_FIRST_LINE.starts_with(lead) || lead.starts_with(FRAME_FIRST_LINE))
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
                .is_some_and(|lead| may_be_frame(entry.role, lead))
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
    use crate::contract::latest::MessageEntry;

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
        let plain = "message-id: m-0123456789ab\nhello";
        assert!(matches!(without_ids(plain), Cow::Borrowed(_)));
        let old = without_ids(FRAME).into_owned();
        assert!(matches!(without_ids(&old), Cow::Borrowed(_)));
    }

    #[test]
    fn an_older_surface_has_the_frames_leads_and_lengths_without_ids() {
        let mut index = SurfaceIndex::new(2);
        let entry = |seq, chars: usize| MessageEntry {
            seq,
            role: Role::User,
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
