//! The benchmarks live in `benches/`: `cargo bench -p benches` (`--bench tools`,
//! `claude`, `codex`, `opencode`, `copilot`). This library writes the big folders they share.

pub mod claude_projects;
pub mod codex_home;
pub mod copilot_home;
pub mod gemini_home;
pub mod openclaw_state;
pub mod opencode_db;

/// The two calls the store benchmarks time, as `caller`: a listing of every session
/// (`scope: all`) and a read of `target`.
pub fn list_and_read(
    caller: &str,
    target: &str,
) -> (host_shim::CallRequest, host_shim::CallRequest) {
    let list = host_shim::CallRequest {
        caller: caller.to_string(),
        tool: "sessions_list".into(),
        arguments: r#"{"scope": "all"}"#.into(),
        ..host_shim::CallRequest::default()
    };
    let read = host_shim::CallRequest {
        tool: "sessions_read".into(),
        arguments: format!(r#"{{"session_id": "{target}"}}"#),
        ..list.clone()
    };
    (list, read)
}
