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
