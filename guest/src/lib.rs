//! The session tools: `sessions_list`, `sessions_read`, `sessions_send` and
//! `sessions_claim`, and the check a harness asks before a session writes files.
//!
//! Everything here is plain Rust over the [`host::SessionQuery`], [`host::Claims`] and
//! [`host::Inbox`] traits, so it runs natively in tests and benchmarks. The wasm build adds one thin
//! adapter (`bindings.rs`) that implements those traits over the component's imports.

pub mod actions;
pub mod args;
pub mod catalog;
pub mod claim;
pub mod claims;
pub mod frame;
pub mod glob;
pub mod host;
pub mod hygiene;
pub mod json_object;
pub mod list;
pub mod read;
mod repeats;
pub mod scope;
pub mod send;
pub mod settings;
pub mod text;
pub mod write_check;

#[cfg(any(test, feature = "testing"))]
pub mod invariants;
#[cfg(any(test, feature = "testing"))]
pub mod testing;

#[cfg(any(target_arch = "wasm32", test))]
mod arena;
#[cfg(target_arch = "wasm32")]
mod bindings;

pub use catalog::ToolSpec;
pub use settings::Settings;
pub use text::{Answer, RefusalCode, ReplyWait};
pub use write_check::WriteCheck;

use host::{Claims, HostError, Inbox, SessionQuery};

/// The tools a deployment registers: none when it is disabled.
pub fn catalog(settings: &Settings) -> Vec<ToolSpec> {
    if settings.enabled {
        catalog::tools(settings)
    } else {
        Vec::new()
    }
}

/// [`catalog()`] from the deployment's settings JSON.
pub fn catalog_for(settings_json: &str) -> Result<Vec<ToolSpec>, String> {
    Ok(catalog(&Settings::from_json(settings_json)?))
}

/// Runs one tool call and returns what the model sees, refusals included (with their
/// code). The error is the host's: its answers broke the contract.
pub fn call<H: SessionQuery + Claims + Inbox>(
    host: &mut H,
    caller: &str,
    call_id: &str,
    settings: &Settings,
    tool: &str,
    arguments: &str,
) -> Result<Answer, HostError> {
    let invalid = |text| Ok(Answer::refused(RefusalCode::InvalidArguments, text));
    match tool {
        list::NAME => match list::ListRequest::parse(arguments, settings) {
            Ok(request) => list::run(host, caller, &request).map(Answer::ok),
            Err(text) => invalid(text),
        },
        read::NAME => match read::ReadRequest::parse(arguments, settings) {
            Ok(request) => read::run(host, caller, &request),
            Err(text) => invalid(text),
        },
        send::NAME => match send::SendRequest::parse(arguments, settings) {
            Ok(request) => send::run(host, caller, call_id, settings, &request),
            Err(text) => invalid(text),
        },
        claim::NAME => match claim::ClaimRequest::parse(arguments, settings) {
            Ok(request) => Ok(claim::run(host, caller, call_id, &request)),
            Err(text) => invalid(text),
        },
        unknown => Ok(Answer::refused(
            RefusalCode::UnknownTool,
            format!(
                "unknown tool \"{}\": the tools are sessions_list, sessions_read, sessions_send \
                 and sessions_claim.",
                text::shorten(unknown, 60)
            ),
        )),
    }
}

/// [`call`] from the deployment's settings JSON. The error is for the harness author:
/// invalid settings, tools called on a disabled deployment, or a host that broke the
/// contract.
pub fn call_with_settings<H: SessionQuery + Claims + Inbox>(
    host: &mut H,
    caller: &str,
    call_id: &str,
    settings_json: &str,
    tool: &str,
    arguments: &str,
) -> Result<Answer, String> {
    let settings = Settings::from_json(settings_json)?;
    if !settings.enabled {
        return Err(
            "the session tools are disabled in this deployment (\"enabled\": false); \
             they are not in the catalog and cannot be called"
                .to_string(),
        );
    }
    call(host, caller, call_id, &settings, tool, arguments).map_err(|HostError(fault)| fault)
}

/// Whether `caller` may write `paths` now (`tools.check-write`), from the deployment's
/// settings JSON. A disabled deployment makes no claims and checks nothing. The error
/// is for the harness author: invalid settings.
pub fn check_write_with_settings<H: SessionQuery + Claims>(
    host: &mut H,
    caller: &str,
    settings_json: &str,
    paths: &[String],
) -> Result<WriteCheck, String> {
    let settings = Settings::from_json(settings_json)?;
    if !settings.enabled {
        return Ok(WriteCheck::Allowed);
    }
    Ok(write_check::run(host, caller, &settings, paths))
}

/// The end of a send that awaited its reply (`tools.reply-awaited`): `accepted` is
/// the text of the answer that asked to wait, `reply` the reply's whole body as the
/// host took it for the caller (none when none came). The error is as
/// [`call_with_settings`]'s.
pub fn reply_awaited_with_settings(
    settings_json: &str,
    accepted: &str,
    wait: &ReplyWait,
    reply: Option<&str>,
) -> Result<Answer, String> {
    let settings = Settings::from_json(settings_json)?;
    if !settings.enabled {
        return Err(
            "the session tools are disabled in this deployment (\"enabled\": false); \
             no send could have awaited a reply"
                .to_string(),
        );
    }
    Ok(send::reply_awaited(accepted, wait, reply, &settings))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{FakeHost, session};

    #[test]
    fn unknown_tools_are_refused_with_the_three_names() {
        let mut host = FakeHost::default();
        assert_eq!(
            call(&mut host, "me", "", &Settings::default(), "sessions_kill", "{}"),
            Ok(Answer::refused(
                RefusalCode::UnknownTool,
                "unknown tool \"sessions_kill\": the tools are sessions_list, sessions_read, sessions_send and sessions_claim.".to_string()
            ))
        );
    }

    #[test]
    fn a_disabled_deployment_has_no_tools() {
        assert!(catalog_for(r#"{"enabled": false}"#).unwrap().is_empty());
        assert_eq!(catalog_for("").unwrap().len(), 4);
        let mut host = FakeHost::default();
        host.add(session("a", 1));
        assert!(
            call_with_settings(
                &mut host,
                "me",
                "",
                r#"{"enabled":false}"#,
                "sessions_list",
                ""
            )
            .is_err()
        );
    }

    #[test]
    fn bad_settings_are_errors_for_the_host() {
        assert!(
            catalog_for(r#"{"maxListResults": "ten"}"#)
                .unwrap_err()
                .contains("maxListResults")
        );
        let mut host = FakeHost::default();
        let err = call_with_settings(&mut host, "me", "", "[", "sessions_list", "").unwrap_err();
        assert!(err.starts_with("invalid settings"), "{err}");
    }

    #[test]
    fn argument_errors_name_the_argument_whatever_the_tool() {
        let mut host = FakeHost::default();
        let settings = Settings::default();
        let mut refusal = |tool: &str, arguments: &str| {
            let answer = call(&mut host, "me", "", &settings, tool, arguments).unwrap();
            assert_eq!(answer.refusal, Some(RefusalCode::InvalidArguments));
            answer.text
        };
        assert_eq!(
            refusal("sessions_list", r#"{"limit": 500}"#),
            "invalid arguments: limit must be an integer from 1 to 200 (got 500)"
        );
        assert_eq!(
            refusal("sessions_read", r#"{"session_id":"a","max_messages":0}"#),
            "invalid arguments: max_messages must be an integer from 1 to 100 (got 0)"
        );
        assert!(
            refusal("sessions_read", "{}").starts_with("invalid arguments: session_id is required")
        );
        assert!(
            refusal("sessions_send", r#"{"session_id":"a"}"#)
                .starts_with("invalid arguments: message is required")
        );
    }

    #[test]
    fn a_malformed_index_is_the_hosts_error() {
        let mut host = FakeHost::default();
        host.add(session("a", 1));
        host.add(session("é", 2));
        host.garble_index = true;
        let mut garbled = host;
        let err = call_with_settings(&mut garbled, "me", "", "", "sessions_list", "").unwrap_err();
        assert_eq!(
            err,
            "session-query.list-sessions returned a malformed index (ids): entry 0 says 2 bytes, which ends inside a character"
        );
        // A read of an unknown id offers near ids from the same index.
        let err = call_with_settings(
            &mut garbled,
            "me",
            "",
            "",
            "sessions_read",
            r#"{"session_id":"b"}"#,
        )
        .unwrap_err();
        assert!(err.contains("malformed index"), "{err}");
    }
}
