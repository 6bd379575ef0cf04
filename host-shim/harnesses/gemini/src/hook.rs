//! `host-shim gemini-hook`: a Gemini CLI command hook (`hooks` in
//! `~/.gemini/settings.json`), told its event by the input's `hook_event_name`:
//!
//! - `BeforeTool` of one of our tools (`mcp_<server>_<tool>`): the call's arguments
//!   with the stamp of the session making it ([`STAMP_ARGUMENT`], [`host_shim::call_stamp`]),
//!   as `hookSpecificOutput.tool_input`, which replaces the arguments Gemini sends.
//!   Arguments that hold the stamp's field already (the model wrote it) are
//!   refused, `{"decision": "deny", "reason": …}`, which the model is told. Gemini CLI
//!   0.61.0 gives a subagent's hooks its parent's `session_id`, so a subagent's call is
//!   stamped, and taken, as its parent's. Another tool's call: `{}`.
//! - `BeforeAgent`: everything waiting, as `hookSpecificOutput.additionalContext`,
//!   which Gemini puts after the prompt in a `<hook_context>` block. `SessionStart`
//!   hands nothing over (it registers the session's Gemini process): Gemini puts its
//!   context before the prompt, and on a resume drops a user message that begins with
//!   `<hook_context>` from the history, the person's words with it (0.61.0's
//!   `convertSessionToClientHistory`); the same turn's `BeforeAgent` hands it over.
//! - `AfterTool`: the `steer` messages, as context Gemini appends to the tool's result.
//! - `AfterAgent`: the `steer` messages and the oldest `queue` one, as
//!   `{"decision": "deny", "reason": …}`: Gemini makes the reason a new prompt of the
//!   same session, one turn per queued message.
//! - Anything else, or nothing waiting: `{}`.
//!
//! Trust model: the input is Gemini's, run as this user; its `session_id` is made a
//! plain name before it names a folder, and its `transcript_path` is only read, as the
//! record that witnesses a hand-over (each of the four places above is in the session
//! file: [`super::handed_over_ids`]). Bad input is an error that names it, and nothing
//! is taken from the inbox.

use super::STAMP_ARGUMENT;
use anyhow::Result;
use host_shim::inbox::{
    HookReport, InboxBackend, Takes, Witness, answer_nothing, hand_over_as_json, write_hook_answer,
};
use host_shim_profile::SERVER;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The most text one answer carries (as for the other harnesses' hooks).
pub const ANSWER_CHARS: usize = 10_000;

/// The events this hook answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Event {
    SessionStart,
    BeforeAgent,
    BeforeTool,
    AfterTool,
    AfterAgent,
}

impl Event {
    fn named(name: &str) -> Option<Event> {
        Some(match name {
            "SessionStart" => Event::SessionStart,
            "BeforeAgent" => Event::BeforeAgent,
            "BeforeTool" => Event::BeforeTool,
            "AfterTool" => Event::AfterTool,
            "AfterAgent" => Event::AfterAgent,
            _ => return None,
        })
    }

    /// What it takes from the inbox; none for a tool call, which is stamped.
    fn takes(self) -> Option<Takes> {
        match self {
            // What a `SessionStart` hook adds Gemini puts before the prompt, as the
            // message's first text; on a resume 0.61.0 drops a user message that begins
            // with `<hook_context>` from the history, the person's words with it. A
            // `BeforeAgent` hook's goes after the prompt, and stays: everything waiting
            // is handed over there, at the same turn.
            Event::SessionStart => None,
            Event::BeforeAgent => Some(Takes::All),
            Event::AfterTool => Some(Takes::Steer),
            Event::AfterAgent => Some(Takes::SteerAndOldestQueued),
            Event::BeforeTool => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Event::SessionStart => "SessionStart",
            Event::BeforeAgent => "BeforeAgent",
            Event::BeforeTool => "BeforeTool",
            Event::AfterTool => "AfterTool",
            Event::AfterAgent => "AfterAgent",
        }
    }
}

/// A hook's input, read once.
pub struct HookInput {
    json: serde_json::Value,
    session: String,
    event: Option<Event>,
    /// The tool argument whose text is not Unicode (a lone surrogate escape; empty: an
    /// argument's name), if one is.
    not_unicode: Option<String>,
}

impl HookInput {
    /// Reads the hook's stdin; bad input is an error that names it.
    pub fn read(input: &[u8]) -> Result<HookInput> {
        let (json, session) =
            host_shim::inbox::hook_json(input, "gemini-hook", "Gemini CLI", "session_id")?;
        let event = (json.get("hook_event_name").and_then(|e| e.as_str())).and_then(Event::named);
        // Read as U+FFFD, such an argument could only be passed on altered.
        let not_unicode = host_shim::json::member_not_unicode(input, "tool_input");
        Ok(HookInput {
            json,
            session,
            event,
            not_unicode,
        })
    }

    /// Whether this is a tool call to stamp ([`stamp`]), which needs no inbox.
    pub fn is_tool_call(&self) -> bool {
        self.event == Some(Event::BeforeTool)
    }

    /// Whether this is a session's start, whose Gemini process [`register`] records.
    pub fn is_session_start(&self) -> bool {
        self.event == Some(Event::SessionStart)
    }
}

/// Registers the session a `SessionStart` hook names as run by the Gemini process that
/// runs the hook (the nearest of the hook's ancestors started as `gemini`), in
/// `presence`'s live registry: live while that process runs. Without such an ancestor
/// (a hook run by hand), nothing is registered.
pub fn register(presence: &host_shim::presence::LocalPresence, input: &HookInput) -> Result<()> {
    let Some(pid) = gemini_process() else {
        return Ok(());
    };
    presence.register_process(pid, &input.session)
}

/// The nearest ancestor of this process started as Gemini CLI (a program argument
/// named `gemini` or `gemini.js`), within a few generations.
fn gemini_process() -> Option<u32> {
    let mut pid = host_shim::os::parent_pid(std::process::id())?;
    for _ in 0..8 {
        let gemini = host_shim::os::command_line(pid).iter().take(3).any(|word| {
            let name = std::path::Path::new(word)
                .file_name()
                .and_then(|n| n.to_str());
            matches!(name, Some("gemini" | "gemini.js"))
        });
        if gemini {
            return Some(pid);
        }
        pid = host_shim::os::parent_pid(pid).filter(|&parent| parent > 1)?;
    }
    None
}

/// Answers a `BeforeTool` hook: a call of our server's tools (named [`SERVER`] by
/// setup) gets the stamp of the session making it, made with the key in the state
/// folder `state_root` (made there when it is the first); one whose arguments hold the
/// stamp's field already is denied; any other call, `{}`.
pub fn stamp(input: &HookInput, state_root: &Path, out: &mut dyn Write) -> Result<HookReport> {
    let json = &input.json;
    let prefix = format!("mcp_{SERVER}_");
    let tool_name = json.get("tool_name").and_then(|t| t.as_str()).unwrap_or("");
    let answer = match tool_name.strip_prefix(&prefix) {
        None => serde_json::json!({}),
        Some(from_name) => {
            // The server's own name for the tool, as it will be called.
            let tool = (json
                .pointer("/mcp_context/tool_name")
                .and_then(|t| t.as_str()))
            .unwrap_or(from_name);
            let arguments = match json.get("tool_input") {
                Some(serde_json::Value::Object(arguments)) => arguments.clone(),
                _ => serde_json::Map::new(),
            };
            if let Some(argument) = &input.not_unicode {
                // The stamped arguments replace the call's: never with U+FFFD in them.
                serde_json::json!({"decision": "deny",
                    "reason": host_shim::json::not_unicode_refusal(argument)})
            } else if arguments.contains_key(STAMP_ARGUMENT) {
                serde_json::json!({"decision": "deny", "reason": format!(
                    "{STAMP_ARGUMENT} is set by Gemini CLI's hook, never by the model: call {tool_name} again without it"
                )})
            } else {
                let who = host_shim::call_stamp::Stamped {
                    session: input.session.clone(),
                    parent: None,
                    call: String::new(),
                };
                let key = host_shim::call_stamp::StampKey::load_or_create(state_root)?;
                let object = serde_json::Value::Object(arguments.clone());
                let stamp = key.stamp(&who, tool, &object, host_shim::call_stamp::now_ms());
                let mut stamped = arguments;
                stamped.insert(STAMP_ARGUMENT.to_string(), stamp);
                serde_json::json!({"hookSpecificOutput": {
                    "hookEventName": "BeforeTool", "tool_input": stamped}})
            }
        }
    };
    write_hook_answer(out, &answer)?;
    Ok(HookReport::default())
}

/// Answers one hook: the answer goes to `out` (`{}` when there is nothing to give);
/// messages come from `inbox`, and the session file Gemini names (`transcript_path`)
/// witnesses each hand-over.
pub fn answer(
    inbox: &dyn InboxBackend,
    input: &HookInput,
    out: &mut dyn Write,
) -> Result<HookReport> {
    let Some((event, takes)) = input.event.and_then(|e| Some((e, e.takes()?))) else {
        return answer_nothing(out);
    };
    let transcript = (input.json.get("transcript_path").and_then(|p| p.as_str()))
        .filter(|p| !p.is_empty())
        .map(PathBuf::from);
    let witness = Witness::file(transcript.as_deref(), super::handed_over_ids);
    hand_over_as_json(
        inbox,
        &input.session,
        takes,
        ANSWER_CHARS,
        witness,
        out,
        |text| match event {
            Event::AfterAgent => serde_json::json!({"decision": "deny", "reason": text}),
            _ => serde_json::json!({"hookSpecificOutput": {
            "hookEventName": event.name(), "additionalContext": text}}),
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use host_shim::contract::latest::DeliveryMode;
    use host_shim::inbox::StateDir;

    const SESSION: &str = "b01a3b06-c777-4606-8ab1-457b46f29e4b";

    fn state() -> StateDir {
        host_shim_testkit::fresh_state("gemini-hook").0
    }

    fn run(state: &StateDir, event: &str, extra: serde_json::Value) -> serde_json::Value {
        let mut input = serde_json::json!({"session_id": SESSION, "hook_event_name": event,
            "transcript_path": "/nowhere/session.jsonl", "cwd": "/w"});
        for (key, value) in extra.as_object().unwrap() {
            input[key] = value.clone();
        }
        let input = HookInput::read(input.to_string().as_bytes()).unwrap();
        let mut out = Vec::new();
        match input.is_tool_call() {
            true => stamp(&input, state.root(), &mut out).unwrap(),
            false => answer(state, &input, &mut out).unwrap(),
        };
        serde_json::from_slice(&out).unwrap()
    }

    fn spool(state: &StateDir, body: &str, mode: DeliveryMode, key: &str) {
        host_shim_testkit::spool(state, SESSION, (body, mode, key));
    }

    #[test]
    fn each_event_is_answered_in_its_shape_with_what_it_takes() {
        let state = state();
        let none = serde_json::json!({});
        assert_eq!(run(&state, "AfterAgent", none.clone()), none);
        spool(&state, "first", DeliveryMode::Queue, "k1");
        spool(&state, "second", DeliveryMode::Queue, "k2");
        spool(&state, "now", DeliveryMode::Steer, "k3");
        let context = |event: &str, text: &str| serde_json::json!({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}});
        // A session's start hands nothing over (Gemini would put it where a resume drops
        // it, the prompt with it): the same turn's BeforeAgent does.
        assert_eq!(run(&state, "SessionStart", none.clone()), none);
        assert_eq!(
            run(&state, "AfterTool", none.clone()),
            context("AfterTool", "now")
        );
        assert_eq!(
            run(&state, "AfterAgent", none.clone()),
            serde_json::json!({"decision": "deny", "reason": "first"})
        );
        assert_eq!(
            run(&state, "BeforeAgent", serde_json::json!({"prompt": "hi"})),
            context("BeforeAgent", "second")
        );
        assert_eq!(run(&state, "SessionEnd", none.clone()), none);
    }

    #[test]
    fn our_tools_calls_are_stamped_and_a_stamp_the_model_wrote_is_denied() {
        use host_shim::call_stamp::{StampKey, now_ms};
        let state = state();
        let call = |tool: &str, input: serde_json::Value| {
            serde_json::json!({"tool_name": tool, "tool_input": input,
                "mcp_context": {"server_name": "session-tools", "tool_name": "sessions_list"}})
        };
        let other = run(
            &state,
            "BeforeTool",
            call("run_shell_command", serde_json::json!({"command": "ls"})),
        );
        assert_eq!(other, serde_json::json!({}));
        let answer = run(
            &state,
            "BeforeTool",
            call(
                "mcp_session-tools_sessions_list",
                serde_json::json!({"scope": "all"}),
            ),
        );
        let stamped = &answer["hookSpecificOutput"]["tool_input"];
        assert_eq!(stamped["scope"], "all");
        let key = StampKey::load(state.root()).unwrap().unwrap();
        let who = key
            .check(
                &stamped[STAMP_ARGUMENT],
                "sessions_list",
                &serde_json::json!({"scope": "all"}),
                now_ms(),
            )
            .unwrap();
        assert_eq!(who.session, SESSION);
        let forged = run(
            &state,
            "BeforeTool",
            call(
                "mcp_session-tools_sessions_list",
                serde_json::json!({"scope": "all", STAMP_ARGUMENT: {"session": "someone"}}),
            ),
        );
        assert_eq!(forged["decision"], "deny");
        assert!(
            forged["reason"]
                .as_str()
                .unwrap()
                .contains("never by the model"),
            "{forged}"
        );
    }

    #[test]
    fn a_call_whose_argument_is_not_unicode_is_denied_naming_it_and_never_passed_on_altered() {
        let state = state();
        // Legal JSON, as Gemini CLI's JSON.stringify writes a lone surrogate.
        let input = format!(
            r#"{{"session_id": "{SESSION}", "hook_event_name": "BeforeTool", "cwd": "/w",
                "tool_name": "mcp_session-tools_sessions_send",
                "tool_input": {{"session_id": "s-b", "message": "SURR-\ud800-MARK"}}}}"#
        );
        let input = HookInput::read(input.as_bytes()).unwrap();
        let mut out = Vec::new();
        stamp(&input, state.root(), &mut out).unwrap();
        let answer: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(
            answer,
            serde_json::json!({"decision": "deny", "reason": host_shim::json::not_unicode_refusal("message")})
        );
        // Any other event of such input is read, not failed.
        let prompt = format!(
            r#"{{"session_id": "{SESSION}", "hook_event_name": "BeforeAgent", "prompt": "\udfff"}}"#
        );
        assert!(HookInput::read(prompt.as_bytes()).is_ok());
    }

    #[test]
    fn bad_input_is_a_clear_error() {
        let err = |bytes: &[u8]| HookInput::read(bytes).err().unwrap().to_string();
        assert!(err(b"nope").contains("not JSON"));
        assert!(err(b"{}").contains("no session_id"));
        assert!(err(br#"{"session_id": "../x"}"#).contains("not a session id"));
    }
}
