//! The harnesses this command serves, one folder each: everything `host-shim` needs of
//! that harness (its profile, `crate::profile`). A new harness is a new folder here and
//! one line in [`ALL`].

pub mod claude;
pub mod codex;
pub mod copilot;
pub mod gemini;
pub mod openclaw;
pub mod opencode;

use crate::profile::HarnessProfile;

/// Every harness, in the order their stores are asked (an id two hold is the first's).
pub const ALL: &[&dyn HarnessProfile] = &[
    &claude::Claude,
    &codex::Codex,
    &opencode::OpenCode,
    &copilot::Copilot,
    &gemini::Gemini,
    &openclaw::OpenClaw,
];

#[cfg(test)]
mod tests {
    /// What setup prints after its change names each tool as the harness's model sees
    /// it: the same prefix on all three.
    #[test]
    fn each_harness_names_its_three_tools_whole_after_setup() {
        for profile in super::ALL {
            let words = profile
                .set_up()
                .split(|c: char| c.is_whitespace() || ",()".contains(c));
            let names: Vec<&str> = words.filter(|w| w.contains("sessions_")).take(3).collect();
            let prefix = names[0].strip_suffix("sessions_list").unwrap_or("?");
            assert_eq!(
                names,
                ["list", "read", "send"].map(|tool| format!("{prefix}sessions_{tool}")),
                "{}",
                profile.set_up()
            );
        }
    }
}
