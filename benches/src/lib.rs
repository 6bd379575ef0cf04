//! The benchmarks live in `benches/`: `cargo bench -p benches` (`--bench tools`,
//! `claude`, `codex`, `opencode`). This library writes the big folders they share.

pub mod claude_projects;
pub mod codex_home;
pub mod opencode_db;
