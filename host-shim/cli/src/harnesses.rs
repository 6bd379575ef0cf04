//! The harnesses this command serves: one crate each (`host-shim/harnesses/<name>/`,
//! its store and its profile), named once here. A new harness is a new crate and one
//! line in [`ALL`] (and its dependency line in this crate's Cargo.toml).

use host_shim_profile::HarnessProfile;

/// Every harness, in the order their stores are asked (an id two hold is the first's).
pub const ALL: &[&dyn HarnessProfile] = &[
    &host_shim_claude_code::Claude,
    &host_shim_codex::Codex,
    &host_shim_opencode::OpenCode,
    &host_shim_copilot::Copilot,
    &host_shim_gemini::Gemini,
    &host_shim_openclaw::OpenClaw,
];
