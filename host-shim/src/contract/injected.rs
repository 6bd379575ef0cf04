//! Injected text as plugins before 0.3.0 know it: by a prefix only. Their adapters
//! (`since_v0_1_0`, `since_v0_2_0`) wrap a message the harness says it injected in
//! `<system-reminder>`, unless a prefix the plugin knows marks it already, so such a
//! plugin hides and marks it as it did when the Claude store wrapped such text itself.

use std::borrow::Cow;

/// The prefixes (after leading white space) by which plugins before 0.3.0 know a
/// harness-injected message.
const KNOWN_PREFIXES: &[&str] = &[
    "<system-reminder>",
    "[MNEMON]",
    "MNEMON RUNTIME MEMORY SNAPSHOT",
    "Current runtime context.",
];
pub(crate) const WRAPPER_OPEN: &str = "<system-reminder>\n";
pub(crate) const WRAPPER_CLOSE: &str = "\n</system-reminder>";

/// A message's text as a plugin before 0.3.0 must see it to know it was injected:
/// wrapped when the harness says so and no known prefix says it already. A message
/// with no text stays empty (the WIT: an empty wrapper is no message text).
pub(crate) fn marked_injected(text: &str, injected: bool) -> Cow<'_, str> {
    if injected
        && !text.is_empty()
        && !KNOWN_PREFIXES
            .iter()
            .any(|p| text.trim_start().starts_with(p))
    {
        Cow::Owned(format!("{WRAPPER_OPEN}{text}{WRAPPER_CLOSE}"))
    } else {
        Cow::Borrowed(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn injected_text_is_wrapped_unless_a_known_prefix_marks_it() {
        assert_eq!(
            marked_injected("lint passed", true),
            "<system-reminder>\nlint passed\n</system-reminder>"
        );
        assert_eq!(marked_injected("  [MNEMON] x", true), "  [MNEMON] x");
        assert_eq!(marked_injected("a person", false), "a person");
        // No text: nothing to wrap, as the index says (no empty block).
        assert_eq!(marked_injected("", true), "");
    }
}
