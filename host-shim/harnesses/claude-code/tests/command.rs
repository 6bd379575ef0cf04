//! The Claude Code store on the project's own fixtures (`host-shim/harnesses/claude-code/fixtures/projects`,
//! written in Claude Code's transcript format for these tests): the mapping, the
//! bounded cached listing, reads of the current surface, sends into the spool, and the
//! hook that hands them over, through the CLI a user runs and the library a harness
//! embeds.

use host_shim::{
    CallRequest, LocalPresence, Presence, Runtime, RuntimeOptions, SessionQuery, StateDir,
};
use host_shim_claude_code::{ClaudeStore, TranscriptReads};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Arc;

use host_shim_testkit::copy_tree;

const CALLER: &str = "11111111-aaaa-4aaa-8aaa-000000000001";
const RICH: &str = "22222222-bbbb-4bbb-8bbb-000000000002";
const SUMMARY: &str = "33333333-cccc-4ccc-8ccc-000000000003";
const PROMPT: &str = "44444444-dddd-4ddd-8ddd-000000000004";
const SLUG: &str = "55555555-eeee-4eee-8eee-000000000005";
const NEW_LAYOUT_AGENT: &str = "agent-a1b2c3d4";
const OLD_LAYOUT_AGENT: &str = "agent-e5f6a7b8";

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/projects")
}

/// A fresh folder for one test.
fn scratch(name: &str) -> PathBuf {
    host_shim_testkit::command::scratch("claude", name)
}

fn host_shim(args: &[&str], stdin: &str, state: &Path) -> Output {
    host_shim_with(args, stdin, state, &[])
}

/// [`host_shim`] with these variables set in its environment.
fn host_shim_with(args: &[&str], stdin: &str, state: &Path, env: &[(&str, &Path)]) -> Output {
    // The compiled-plugin cache goes to a scratch folder, not the user's.
    let mut command = host_shim_testkit::command::host_shim();
    command
        .arg("--cache-dir")
        .arg(std::env::temp_dir().join("host-shim-claude-cache"))
        .args(args)
        .arg("--state-dir")
        .arg(state)
        .envs(env.iter().copied());
    host_shim_testkit::command::output_with_stdin(&mut command, stdin)
}

/// `host-shim call TOOL ARGS --claude-projects FIXTURES --caller CALLER` and its text.
fn call(tool: &str, args: &str, state: &Path, extra: &[&str]) -> (String, String) {
    let projects = fixtures();
    let mut all = vec![
        "call",
        tool,
        args,
        "--claude-projects",
        projects.to_str().unwrap(),
        "--caller",
        CALLER,
    ];
    all.extend_from_slice(extra);
    let output = host_shim(&all, "", state);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    (
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

/// `sessions_read` of one session, all defaults.
fn read(session: &str, state: &Path) -> String {
    call(
        "sessions_read",
        &format!(r#"{{"session_id":"{session}"}}"#),
        state,
        &[],
    )
    .0
}

/// The transcript the hooks of `session` name: where [`hook_answer`] records what a
/// hook added, as Claude Code does.
fn transcript_of(session: &str, state: &Path) -> PathBuf {
    state.join(format!("transcript-{session}.jsonl"))
}

fn hook(event: &str, session: &str, state: &Path) -> Output {
    let input = serde_json::json!({
        "session_id": session,
        "transcript_path": transcript_of(session, state),
        "cwd": "/home/ada/shop",
        "hook_event_name": event,
    });
    host_shim(&["claude-hook"], &input.to_string(), state)
}

/// A hook's answer; the context it added goes into the session's transcript, as
/// Claude Code records it for a hook that exited with success (the next hook then
/// finds it there: handed over).
fn hook_answer(event: &str, session: &str, state: &Path) -> Option<serde_json::Value> {
    let output = hook(event, session, state);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = String::from_utf8(output.stdout).unwrap();
    let answer: serde_json::Value =
        (!text.is_empty()).then(|| serde_json::from_str(&text).expect("the answer is JSON"))?;
    let context = &answer["hookSpecificOutput"]["additionalContext"];
    let line = serde_json::json!({"type": "attachment", "attachment": {
        "type": "hook_additional_context", "content": [context], "hookEvent": event}});
    let mut transcript = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(transcript_of(session, state))
        .unwrap();
    std::io::Write::write_all(&mut transcript, format!("{line}\n").as_bytes()).unwrap();
    Some(answer)
}

/// A hook of `session` that hands nothing over, as the turn after a hand-over runs
/// one: it settles what the transcript shows.
fn next_hook(session: &str, state: &Path) {
    assert_eq!(hook_answer("PostToolUse", session, state), None);
}

fn store(projects: &Path, state: &Path) -> ClaudeStore {
    store_with(
        projects,
        state,
        Arc::new(LocalPresence::open(state).unwrap()),
    )
}

fn store_with(projects: &Path, state: &Path, presence: Arc<LocalPresence>) -> ClaudeStore {
    let inbox = Arc::new(StateDir::open(state).unwrap());
    ClaudeStore::open(projects, inbox, presence, None).unwrap()
}

fn the_listing_shows_every_session_and_subagent_with_its_title_source() {
    let state = scratch("listing");
    let (text, _) = call("sessions_list", r#"{"scope":"all"}"#, &state, &[]);
    for (id, line) in [
        (CALLER, "Checkout: split into steps"), // custom-title over an earlier ai-title
        (RICH, "Fix flaky payment tests"),      // ai-title
        (SUMMARY, "Notes sync design"),         // summary
        (PROMPT, "Draft the release notes for 2.3"), // the first real prompt
        (SLUG, "gentle-humming-otter"),         // the slug
        (
            NEW_LAYOUT_AGENT,
            "Search the payments crate for every call to SystemTime::now",
        ),
        (OLD_LAYOUT_AGENT, "Survey how other note apps merge edits"),
    ] {
        let row = text
            .lines()
            .position(|l| l.starts_with(&format!("- {id} ")))
            .unwrap_or_else(|| panic!("no row for {id}:\n{text}"));
        assert_eq!(text.lines().nth(row + 1).unwrap().trim(), line, "{text}");
    }
    host_shim_testkit::has(&text, "7 of 7 considered sessions");
    host_shim_testkit::has(
        &text,
        &format!(
            "- {NEW_LAYOUT_AGENT} [cold, subagent] | cwd=/home/ada/shop | preset=claude-haiku-4-5-20251001 | owner={RICH} | not messageable"
        ),
    );
    assert!(text.contains(&format!(
        "- {RICH} [cold, top-level] | cwd=/home/ada/shop | preset=claude-sonnet-4-5-20250929"
    )));
    assert!(text.contains(&format!("- {CALLER} [cold, top-level] | cwd=/home/ada/shop | preset=claude-opus-4-5-20251101 | this session")));
}

fn headers_name_parents_origins_and_creation_times() {
    let state = scratch("headers");
    let mut store = store(&fixtures(), &state);
    let ids: Vec<String> = [RICH, NEW_LAYOUT_AGENT, OLD_LAYOUT_AGENT, SLUG]
        .map(String::from)
        .to_vec();
    let headers: Vec<_> = store
        .get_sessions(&ids)
        .into_iter()
        .map(Option::unwrap)
        .collect();
    assert_eq!(headers[0].parent_id, None);
    assert_eq!(headers[0].origin, "user");
    // 2026-11-30T10:00:00.500Z, the first record with a timestamp (a snapshot is first).
    assert_eq!(headers[0].created_at_ms, 1_796_032_800_500);
    assert_eq!(headers[1].parent_id.as_deref(), Some(RICH));
    assert_eq!(headers[1].origin, "subagent");
    assert_eq!(headers[2].parent_id.as_deref(), Some(SUMMARY));
    assert_eq!(headers[2].origin, "subagent");
    assert_eq!(headers[3].cwd.as_deref(), Some("/home/ada/notes"));
    assert_eq!(store.get_session("no-such-session"), None);
}

fn a_read_shows_the_surface_after_the_last_compaction_and_nothing_the_model_did_not_say() {
    let state = scratch("read");
    let text = read(RICH, &state);
    assert_eq!(
        text,
        format!(
            "session {RICH} [cold, top-level] | cwd=/home/ada/shop\n\
             title: Fix flaky payment tests\n\
             readable messages: 3 | captured through seq: 21\n\
             --- assistant (seq 19, model:anthropic/claude-sonnet-4-5-20250929) ---\n\
             Done: RefundService now takes a Clock; the test uses a fixed one.\n\
             --- user (seq 17, user) ---\n\
             Go ahead and inject the clock\n\
             --- user (seq 15, user, replaced) ---\n\
             This session is being continued from a previous conversation that ran out of context. Summary: the refund test reads the wall clock twice; the fix is to inject a clock.\n"
        )
    );
    // Asked for: the injected reminder after the compaction, marked; still no thinking
    // or tool output, and nothing from before the compaction.
    let (text, _) = call(
        "sessions_read",
        &format!(r#"{{"session_id":"{RICH}","include_injected":true}}"#),
        &state,
        &[],
    );
    host_shim_testkit::has(
        &text,
        "--- user (seq 16, user, harness-injected) ---\n<system-reminder>\nTodo list",
    );
    for hidden in [
        "SECRET",
        "wall clock twice.\n",
        "screenshot",
        "payment test setup",
    ] {
        assert!(!text.contains(hidden), "{hidden:?} in:\n{text}");
    }
}

fn meta_records_are_on_the_surface_and_images_drop_out() {
    let state = scratch("meta");
    let text = read(PROMPT, &state);
    // The caveat (isMeta) and the slash command's output are sent to the model, but
    // Claude Code wrote them, not the person: on the surface as injected, so hidden
    // by default and marked when asked for.
    host_shim_testkit::lacks(&text, "Caveat: The messages below");
    host_shim_testkit::lacks(&text, "Set model to opus");
    host_shim_testkit::has(&text, "Draft the release notes for 2.3");
    let (text, _) = call(
        "sessions_read",
        &format!(r#"{{"session_id":"{PROMPT}","include_injected":true}}"#),
        &state,
        &[],
    );
    host_shim_testkit::has(
        &text,
        "--- user (seq 1, user, harness-injected) ---\nCaveat: The messages below",
    );
    host_shim_testkit::has(
        &text,
        "<local-command-stdout>Set model to opus</local-command-stdout>",
    );
    // Before a compaction an image travels with its text; only the text crosses.
    let projects = scratch("image-projects");
    copy_tree(&fixtures(), &projects);
    let path = projects.join(format!("-home-ada-shop/{RICH}.jsonl"));
    let text = std::fs::read_to_string(&path).unwrap();
    // Cut the transcript before its compaction.
    let before: String = text.lines().take(13).map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, before).unwrap();
    let mut store = store(&projects, &state);
    let surface = store.get_surface(RICH, 40).unwrap();
    let seqs: Vec<u64> = surface.messages.iter().map(|m| m.seq).collect();
    // Lines 2..=13: user and assistant records only (not the snapshot, progress or
    // queue-operation records).
    assert_eq!(seqs, [2, 3, 4, 5, 6, 7, 9, 11, 12, 13]);
    let image = store.get_messages(RICH, &[11]).pop().unwrap().unwrap();
    assert_eq!(image.text, "Here is the screenshot of the failure");
    let tool_result = &surface.messages[6];
    assert_eq!((tool_result.seq, tool_result.text_chars), (9, 0));
    let thinking = &surface.messages[3];
    assert_eq!((thinking.seq, thinking.text_chars), (5, 0));
}

fn damaged_and_half_written_lines_are_skipped_and_counted() {
    let state = scratch("damaged");
    let (text, stats) = call(
        "sessions_read",
        &format!(r#"{{"session_id":"{SLUG}"}}"#),
        &state,
        &["--stats"],
    );
    // Line 3 is damaged, line 5 is being written: the last record read is line 4.
    // (Line 1 is Claude Code's record of a slash command: injected, not counted.)
    host_shim_testkit::has(&text, "readable messages: 2 | captured through seq: 4");
    host_shim_testkit::lacks(&text, "still being writ");
    let stats: serde_json::Value = serde_json::from_str(stats.trim()).unwrap();
    assert_eq!(stats["skipped_lines"], 2, "{stats}");
    assert_eq!(stats["refusal"], serde_json::Value::Null);
}

fn a_listing_reads_only_bounded_windows_and_caches_them_by_size_and_time() {
    let state = scratch("bounded");
    let projects = scratch("bounded-projects");
    copy_tree(&fixtures(), &projects);
    // A 3 MB transcript: its first prompt at the start, its title at the end.
    let big = projects.join("-home-ada-notes/66666666-ffff-4fff-8fff-000000000006.jsonl");
    let id = "66666666-ffff-4fff-8fff-000000000006";
    let mut text = format!(
        "{{\"type\":\"user\",\"sessionId\":\"{id}\",\"cwd\":\"/home/ada/notes\",\"timestamp\":\"2026-11-26T00:00:00Z\",\"message\":{{\"role\":\"user\",\"content\":\"a long session\"}}}}\n"
    );
    let filler = format!(
        "{{\"type\":\"assistant\",\"sessionId\":\"{id}\",\"message\":{{\"role\":\"assistant\",\"model\":\"claude-opus-4-5-20251101\",\"content\":[{{\"type\":\"text\",\"text\":\"{}\"}}]}}}}\n",
        "x".repeat(1000)
    );
    while text.len() < 3 << 20 {
        text.push_str(&filler);
    }
    text.push_str(&format!(
        "{{\"type\":\"custom-title\",\"customTitle\":\"The long one\",\"sessionId\":\"{id}\"}}\n"
    ));
    std::fs::write(&big, &text).unwrap();

    let mut store = store(&projects, &state);
    let index = store.list_sessions();
    assert_eq!(index.entries.len(), 8);
    assert_eq!(
        store.title_snapshots(&[id.to_string()]),
        [Some("The long one".to_string())]
    );
    let first = store.reads();
    assert_eq!(first.summarized, 8);
    let small: u64 = walk(&fixtures())
        .iter()
        .map(|p| p.metadata().unwrap().len())
        .sum();
    assert_eq!(first.summary_bytes, small + 128 * 1024, "{first:?}");
    // Unchanged files are not read again (only stat'ed).
    store.list_sessions();
    assert_eq!(
        store.reads(),
        TranscriptReads {
            stats: first.stats + 8,
            ..first
        }
    );
    // A grown file is read on from where the last read ended: only what was
    // appended, and the new title shows.
    let renamed = format!(
        "{{\"type\":\"custom-title\",\"customTitle\":\"Renamed\",\"sessionId\":\"{id}\"}}\n"
    );
    append(&big, &renamed);
    store.list_sessions();
    let grown = store.reads();
    assert_eq!(grown.summarized, first.summarized + 1);
    assert_eq!(
        grown.summary_bytes,
        first.summary_bytes + renamed.len() as u64
    );
    assert_eq!(
        store.title_snapshots(&[id.to_string()]),
        [Some("Renamed".to_string())]
    );
    // Reading it parses it whole, once while it is unchanged.
    let surface = store.get_surface(id, 40).unwrap();
    assert!(surface.messages.len() > 2000);
    store.get_messages(id, &[2, 3]);
    assert_eq!(store.reads().parsed, 1);
    // Grown again, a read parses only the new lines.
    let before = store.reads();
    let said = format!(
        "{{\"type\":\"assistant\",\"sessionId\":\"{id}\",\"message\":{{\"id\":\"m9\",\"role\":\"assistant\",\"model\":\"claude-opus-5-5\",\"content\":[{{\"type\":\"text\",\"text\":\"appended\"}}]}}}}\n"
    );
    append(&big, &said);
    let grown = store.get_surface(id, 40).unwrap();
    assert_eq!(grown.messages.len(), surface.messages.len() + 1);
    let after = store.reads();
    assert_eq!(after.parsed, before.parsed);
    assert_eq!(
        after.surface_bytes,
        before.surface_bytes + said.len() as u64
    );
}

fn append(path: &Path, text: &str) {
    use std::io::Write;
    let mut file = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    file.write_all(text.as_bytes()).unwrap();
}

fn a_preset_far_from_both_ends_is_found_reading_back_from_the_end() {
    let state = scratch("far-preset");
    let projects = scratch("far-preset-projects");
    let id = "77777777-0000-4000-8000-000000000007";
    std::fs::create_dir_all(projects.join("-home-ada-far")).unwrap();
    let path = projects.join(format!("-home-ada-far/{id}.jsonl"));
    let record = |kind: &str, body: &str| {
        format!(
            "{{\"type\":\"{kind}\",\"sessionId\":\"{id}\",\"cwd\":\"/home/ada/far\",\"timestamp\":\"2026-12-01T00:00:00Z\",{body}}}\n"
        )
    };
    let mut text = record("user", r#""message":{"role":"user","content":"start"}"#);
    let reminder = record(
        "attachment",
        &format!(
            r#""attachment":{{"type":"skill_listing"}},"rendered":[{{"content":"<system-reminder>\n{}\n</system-reminder>"}}]"#,
            "s".repeat(2000)
        ),
    );
    while text.len() < 200_000 {
        text.push_str(&reminder);
    }
    text.push_str(&record(
        "assistant",
        r#""message":{"id":"m1","role":"assistant","model":"claude-opus-5-5","content":[{"type":"text","text":"the preset"}]}"#,
    ));
    // More than the tail window of reminders after it, as a few /compact leave.
    let mut after = String::new();
    while after.len() < 300_000 {
        after.push_str(&reminder);
    }
    text.push_str(&after);
    std::fs::write(&path, &text).unwrap();
    let mut store = store(&projects, &state);
    let header = store.get_session(id).unwrap();
    assert_eq!(header.preset.as_deref(), Some("claude-opus-5-5"));
    assert_eq!(header.cwd.as_deref(), Some("/home/ada/far"));
    // Read back from the end only as far as the preset, not the whole file.
    let read = store.reads().summary_bytes;
    assert!(
        read < text.len() as u64 - 50_000,
        "{read} bytes read of {}",
        text.len()
    );
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut all = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        if entry.file_type().unwrap().is_dir() {
            all.extend(walk(&entry.path()));
        } else {
            all.push(entry.path());
        }
    }
    all
}

fn a_send_lands_in_the_spool_once_and_the_stop_hook_hands_it_over_once() {
    let state = scratch("send");
    let send =
        format!(r#"{{"session_id":"{RICH}","message":"Please rebase on main before merging."}}"#);
    for _ in 0..2 {
        let (text, _) = call("sessions_send", &send, &state, &["--call-id", "toolu_01"]);
        assert!(
            text.starts_with(&format!(
                "accepted for {RICH} | mode=queue | chars=37 | hop=1 | id=m-"
            )),
            "{text}"
        );
    }
    let inbox = state.join("inbox").join(RICH);
    assert_eq!(std::fs::read_dir(&inbox).unwrap().count(), 1);
    // The sender's read of the target says its message waits (the spool's word).
    let own_line = |state: &Path| {
        let (text, _) = call(
            "sessions_read",
            &format!(r#"{{"session_id":"{RICH}"}}"#),
            state,
            &[],
        );
        text.lines().nth(3).map(str::to_string)
    };
    assert_eq!(
        own_line(&state).as_deref(),
        Some("your messages to it: 1 waiting in its inbox")
    );
    // Tool use and a new prompt do not take a queued message; nothing for others.
    assert_eq!(hook_answer("PostToolUse", RICH, &state), None);
    assert_eq!(hook_answer("Stop", SUMMARY, &state), None);
    let answer = hook_answer("Stop", RICH, &state).expect("the message is handed over");
    assert_eq!(answer["hookSpecificOutput"]["hookEventName"], "Stop");
    assert_eq!(answer.get("decision"), None);
    let reason = answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(reason.starts_with(&format!(
        "Cross-session message from another session of this harness.\nfrom-session: {CALLER} (\"Checkout: split into steps\")\ndelivery: queue\nhop: 1\nmessage-id: m-"
    )), "{reason}");
    host_shim_testkit::has(
        reason,
        "\n--- message begins ---\nPlease rebase on main before merging.\n--- message ends ---",
    );
    // Offered: it waits, for its sender, until the transcript shows it.
    assert_eq!(
        own_line(&state).as_deref(),
        Some("your messages to it: 1 waiting in its inbox")
    );
    // Handed over once: the next stop goes through, and a retried send is a repeat.
    assert_eq!(hook_answer("Stop", RICH, &state), None);
    assert_eq!(
        own_line(&state).as_deref(),
        Some("your messages to it: 1 handed over")
    );
    call("sessions_send", &send, &state, &["--call-id", "toolu_01"]);
    assert_eq!(hook_answer("SessionStart", RICH, &state), None);
    assert_eq!(std::fs::read_dir(&inbox).unwrap().count(), 0);
}

fn each_hook_event_takes_what_it_should() {
    let state = scratch("events");
    let send = |message: &str, mode: &str| {
        call(
            "sessions_send",
            &format!(r#"{{"session_id":"{RICH}","message":"{message}","mode":"{mode}"}}"#),
            &state,
            &[
                "--settings",
                settings_file(&state, r#"{"frameMessages": false}"#)
                    .to_str()
                    .unwrap(),
            ],
        )
    };
    send("first queued", "queue");
    send("second queued", "queue");
    send("steer now", "steer");
    // PostToolUse: the steer message, into the running turn.
    let answer = hook_answer("PostToolUse", RICH, &state).unwrap();
    assert_eq!(
        answer,
        serde_json::json!({"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "steer now"}})
    );
    // Stop: the oldest queued message only.
    assert_eq!(
        hook_answer("Stop", RICH, &state).unwrap(),
        serde_json::json!({"hookSpecificOutput": {"hookEventName": "Stop", "additionalContext": "first queued"}})
    );
    // Run by GitHub Copilot CLI (a trusted project's Claude Code hooks, COPILOT_CLI=1):
    // it stays out, and the messages wait for their own session's hooks.
    let input = serde_json::json!({"session_id": RICH, "hook_event_name": "Stop"});
    let copilot = [("COPILOT_CLI", Path::new("1"))];
    let output = host_shim_with(&["claude-hook"], &input.to_string(), &state, &copilot);
    assert!(
        output.status.success() && output.stdout.is_empty(),
        "{output:?}"
    );
    // A hook inside a subagent takes nothing; other events take nothing.
    let input = serde_json::json!({"session_id": RICH, "hook_event_name": "PostToolUse", "agent_id": "a1b2c3d4"});
    let output = host_shim(&["claude-hook"], &input.to_string(), &state);
    assert!(output.status.success() && output.stdout.is_empty());
    assert_eq!(hook_answer("SubagentStop", RICH, &state), None);
    // UserPromptSubmit: whatever waits.
    send("steer again", "steer");
    assert_eq!(
        hook_answer("UserPromptSubmit", RICH, &state).unwrap(),
        serde_json::json!({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "second queued\n\nsteer again"}})
    );
    // SessionStart: the same.
    send("after restart", "queue");
    assert_eq!(
        hook_answer("SessionStart", RICH, &state).unwrap(),
        serde_json::json!({"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "after restart"}})
    );
    assert_eq!(hook_answer("SessionStart", RICH, &state), None);
}

fn settings_file(dir: &Path, json: &str) -> PathBuf {
    let path = dir.join("settings.json");
    std::fs::write(&path, json).unwrap();
    path
}

fn a_hook_given_bad_input_says_what_it_needs_and_hands_nothing_over() {
    let state = scratch("bad-hook");
    call(
        "sessions_send",
        &format!(r#"{{"session_id":"{RICH}","message":"kept"}}"#),
        &state,
        &[],
    );
    for input in [
        "",
        "not json",
        r#"{"hook_event_name":"Stop"}"#,
        r#"{"session_id":"../x","hook_event_name":"Stop"}"#,
    ] {
        let output = host_shim(&["claude-hook"], input, &state);
        assert_eq!(output.status.code(), Some(1), "{input}");
        assert!(output.stdout.is_empty());
        let err = String::from_utf8(output.stderr).unwrap();
        assert!(
            err.contains("run host-shim claude-hook as a Claude Code command hook")
                || err.contains("is not a plain name"),
            "{err}"
        );
    }
    assert!(hook_answer("Stop", RICH, &state).is_some());
}

fn cold_targets_follow_allow_resume_and_live_ones_are_registered() {
    let state = scratch("live");
    let no_resume = settings_file(&state, r#"{"allowResume": false}"#);
    let send = format!(r#"{{"session_id":"{SUMMARY}","message":"hi"}}"#);
    let (text, _) = call(
        "sessions_send",
        &send,
        &state,
        &["--settings", no_resume.to_str().unwrap()],
    );
    host_shim_testkit::begins(&text, "sessions_send refused (resume-disabled)");
    // While a host-shim process serves the session, it is live.
    let registration = LocalPresence::open(&state)
        .unwrap()
        .register_live(SUMMARY)
        .unwrap();
    let (text, _) = call("sessions_list", r#"{"scope":"all"}"#, &state, &[]);
    host_shim_testkit::has(&text, &format!("- {SUMMARY} [live, top-level]"));
    let (text, _) = call(
        "sessions_send",
        &send,
        &state,
        &["--settings", no_resume.to_str().unwrap()],
    );
    assert!(
        text.starts_with(&format!(
            "accepted for {SUMMARY} | mode=queue | chars=2 | hop=1 | id=m-"
        )),
        "{text}"
    );
    drop(registration);
    let (text, _) = call("sessions_list", r#"{"scope":"all"}"#, &state, &[]);
    host_shim_testkit::has(&text, &format!("- {SUMMARY} [cold, top-level]"));
    // Unknown ids and subagents.
    let (text, _) = call(
        "sessions_send",
        r#"{"session_id":"nobody","message":"hi"}"#,
        &state,
        &[],
    );
    host_shim_testkit::begins(&text, "sessions_send refused (not-found)");
    let (text, _) = call(
        "sessions_send",
        &format!(r#"{{"session_id":"{OLD_LAYOUT_AGENT}","message":"hi"}}"#),
        &state,
        &[],
    );
    host_shim_testkit::begins(&text, "sessions_send refused (not-messageable)");
    host_shim_testkit::has(&text, SUMMARY);
}

fn the_wake_command_runs_for_a_cold_target_with_the_message_file() {
    let state = scratch("wake");
    let woken = state.join("woken.json");
    let template = format!("cp {{message_file}} {}", woken.display());
    let (text, _) = call(
        "sessions_send",
        &format!(r#"{{"session_id":"{PROMPT}","message":"wake up"}}"#),
        &state,
        &["--wake-command", &template],
    );
    assert!(
        text.starts_with(&format!(
            "accepted for {PROMPT} | mode=queue | chars=7 | hop=1 (started a wake for a cold \
             session) | id=m-"
        )),
        "{text}"
    );
    host_shim_testkit::has(
        &text,
        "\nThe message waits in that session's inbox and is handed over when",
    );
    // The command runs on its own; give it a moment.
    for _ in 0..100 {
        if woken.exists() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let copied: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&woken).unwrap()).unwrap();
    assert_eq!(copied["target"], PROMPT);
    assert!(copied["body"].as_str().unwrap().contains("wake up"));
    // The message still waits for the woken session's SessionStart hook.
    assert!(hook_answer("SessionStart", PROMPT, &state).is_some());
    // A bad template is refused before anything runs.
    let projects = fixtures();
    let output = host_shim(
        &[
            "call",
            "sessions_list",
            "--claude-projects",
            projects.to_str().unwrap(),
            "--caller",
            CALLER,
            "--wake-command",
            "claude --resume {session}",
        ],
        "",
        &state,
    );
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("\"{session}\" is not a placeholder"));
}

fn a_folder_that_is_not_a_projects_folder_is_named() {
    let state = scratch("bad-folder");
    let output = host_shim(
        &[
            "call",
            "sessions_list",
            "--claude-projects",
            "/no/such/folder",
            "--caller",
            CALLER,
        ],
        "",
        &state,
    );
    // A folder that does not exist yet (a new install) is an empty store.
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.starts_with("0 of 0 considered sessions"), "{text}");
    // A file is not a projects folder.
    let file = state.join("a-file");
    std::fs::write(&file, "").unwrap();
    let output = host_shim(
        &[
            "call",
            "sessions_list",
            "--claude-projects",
            file.to_str().unwrap(),
            "--caller",
            CALLER,
        ],
        "",
        &state,
    );
    assert_eq!(output.status.code(), Some(1));
    let err = String::from_utf8(output.stderr).unwrap();
    host_shim_testkit::has(&err, "a-file is not a folder");
    // --corpus and --claude-projects do not mix.
    let output = host_shim(
        &[
            "call",
            "sessions_list",
            "--claude-projects",
            "/x",
            "--corpus",
            "/y",
        ],
        "",
        &state,
    );
    assert_eq!(output.status.code(), Some(2));
}

fn the_library_serves_the_store_to_the_plugin() {
    let state = scratch("library");
    let runtime: Runtime<ClaudeStore> = Runtime::with_options(
        host_shim_plugin::PLUGIN_WASM,
        &RuntimeOptions {
            cache_dir: None,
            ..RuntimeOptions::default()
        },
    )
    .unwrap();
    let request = CallRequest {
        caller: CALLER.to_string(),
        tool: "sessions_list".to_string(),
        arguments: r#"{"query": "payment"}"#.to_string(),
        ..CallRequest::default()
    };
    let report = runtime.call(store(&fixtures(), &state), &request);
    let text = report.answer.unwrap().text;
    host_shim_testkit::has(&text, RICH);
    host_shim_testkit::lacks(&text, SUMMARY);
    assert_eq!(
        report.harness.reads(),
        TranscriptReads {
            summarized: 7,
            summary_bytes: walk(&fixtures())
                .iter()
                .map(|p| p.metadata().unwrap().len())
                .sum(),
            parsed: 0,
            surface_bytes: 0,
            // The listing's 7, then one per lookup of the ids the query looked at.
            stats: report.harness.reads().stats,
        }
    );
}

/// Every file under `dir` with its bytes and modification time.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>, std::time::SystemTime)> {
    let mut all: Vec<_> = walk(dir)
        .into_iter()
        .map(|path| {
            let modified = path.metadata().unwrap().modified().unwrap();
            (path.clone(), std::fs::read(&path).unwrap(), modified)
        })
        .collect();
    all.sort();
    all
}

fn the_demo_tours_the_sessions_and_no_transcript_is_ever_written() {
    let state = scratch("demo");
    let before = snapshot(&fixtures());
    let projects = fixtures();
    let output = host_shim(
        &["demo", "--claude-projects", projects.to_str().unwrap()],
        "",
        &state,
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = String::from_utf8(output.stdout).unwrap();
    // The newest top-level session calls; the next newest is read.
    assert!(
        text.starts_with(&format!(
            "Claude Code's sessions (7 of them), as the model in session {RICH} sees them:"
        )),
        "{text}"
    );
    host_shim_testkit::has(
        &text,
        &format!("$ sessions_read {{\"session_id\": \"{CALLER}\", \"max_messages\": 3}}"),
    );
    host_shim_testkit::has(&text, "Nothing was sent, and no log was touched.");
    // Sends, hand-overs and reads leave the transcripts as they were.
    call(
        "sessions_send",
        &format!(r#"{{"session_id":"{RICH}","message":"hello"}}"#),
        &state,
        &[],
    );
    assert!(hook_answer("SessionStart", RICH, &state).is_some());
    read(RICH, &state);
    assert_eq!(snapshot(&fixtures()), before);
}

fn one_answer_stays_within_claude_codes_context_cap_and_the_rest_wait() {
    let state = scratch("cap");
    let settings = settings_file(&state, r#"{"frameMessages": false}"#);
    for letter in ["a", "b", "c"] {
        call(
            "sessions_send",
            &format!(
                r#"{{"session_id":"{RICH}","message":"{}","mode":"steer"}}"#,
                letter.repeat(4000)
            ),
            &state,
            &["--settings", settings.to_str().unwrap()],
        );
    }
    let context = |answer: serde_json::Value| {
        answer["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap()
            .to_string()
    };
    // Two messages (8,002 chars) fit under 10,000; the third waits for the next hook.
    let first = context(hook_answer("UserPromptSubmit", RICH, &state).unwrap());
    assert_eq!(
        first,
        format!("{}\n\n{}", "a".repeat(4000), "b".repeat(4000))
    );
    let second = context(hook_answer("PostToolUse", RICH, &state).unwrap());
    assert_eq!(second, "c".repeat(4000));
    assert_eq!(hook_answer("UserPromptSubmit", RICH, &state), None);
}

fn a_spool_that_cannot_take_the_message_is_a_rejection_and_nothing_is_delivered() {
    let state = scratch("unusable");
    // The inbox folder's place is taken by a file: the message cannot be written.
    std::fs::create_dir_all(&state).unwrap();
    StateDir::open(&state).unwrap();
    std::fs::write(state.join("inbox"), "not a folder").unwrap();
    let (text, _) = call(
        "sessions_send",
        &format!(r#"{{"session_id":"{RICH}","message":"hi"}}"#),
        &state,
        &[],
    );
    host_shim_testkit::begins(&text, "sessions_send refused (rejected): ");
    host_shim_testkit::has(&text, "the inbox cannot take messages now");
    // What happened, without the machine's paths (the model's result is no place for them).
    host_shim_testkit::lacks(&text, state.to_str().unwrap());
    assert_eq!(
        std::fs::read_to_string(state.join("inbox")).unwrap(),
        "not a folder"
    );
    assert_eq!(std::fs::read_dir(state.join("tmp")).unwrap().count(), 0);
}

fn the_mcp_server_clears_its_registration_when_stopped_by_a_signal() {
    for signal in [
        libc_signal::SIGINT,
        libc_signal::SIGTERM,
        libc_signal::SIGHUP,
    ] {
        let state = scratch(&format!("signal-{signal}"));
        let mut child = host_shim_testkit::command::host_shim()
            .args(["--cache-dir"])
            .arg(std::env::temp_dir().join("host-shim-claude-cache"))
            .args(["mcp", "--claude-projects"])
            .arg(fixtures())
            .arg("--state-dir")
            .arg(&state)
            .env("CLAUDE_CODE_SESSION_ID", CALLER)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let live = state.join("live");
        // Registrations only: a registration being written is a temporary file first,
        // which a signal at that moment leaves behind (read as nothing).
        let registered = || {
            std::fs::read_dir(&live).map_or(0, |d| {
                d.flatten()
                    .filter(|e| e.file_name().to_string_lossy().ends_with(".json"))
                    .count()
            })
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while registered() == 0 && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert_eq!(registered(), 1, "the server registered its session");
        Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(child.id().to_string())
            .status()
            .unwrap();
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(128 + signal), "{status:?}");
        assert_eq!(registered(), 0, "signal {signal} cleared the registration");
    }
}

fn a_server_whose_session_has_no_transcript_registers_nothing() {
    // What `claude mcp list` starts: a session id with no transcript, stopped soon.
    let state = scratch("probe");
    let mut child = host_shim_testkit::command::host_shim()
        .args(["--cache-dir"])
        .arg(std::env::temp_dir().join("host-shim-claude-cache"))
        .args(["mcp", "--claude-projects"])
        .arg(fixtures())
        .arg("--state-dir")
        .arg(&state)
        .env(
            "CLAUDE_CODE_SESSION_ID",
            "99999999-0000-4000-8000-000000000009",
        )
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    let live = state.join("live");
    assert_eq!(std::fs::read_dir(&live).map_or(0, |d| d.count()), 0);
    // Claude Code stops it with SIGINT.
    Command::new("kill")
        .args(["-2", &child.id().to_string()])
        .status()
        .unwrap();
    child.wait().unwrap();
    assert_eq!(std::fs::read_dir(&live).map_or(0, |d| d.count()), 0);
}

/// Signal numbers on Linux, for `kill`.
mod libc_signal {
    pub const SIGHUP: i32 = 1;
    pub const SIGINT: i32 = 2;
    pub const SIGTERM: i32 = 15;
}

fn one_send_stats_each_transcript_it_needs_once_and_reads_the_live_registry_once() {
    let state = scratch("one-send");
    let presence = Arc::new(LocalPresence::open(&state).unwrap());
    let store = store_with(&fixtures(), &state, presence.clone());
    let before = store.reads();
    let runtime: Runtime<ClaudeStore> =
        Runtime::with_options(host_shim_plugin::PLUGIN_WASM, &RuntimeOptions::default()).unwrap();
    let request = CallRequest {
        caller: CALLER.to_string(),
        call_id: "toolu_01COUNT".to_string(),
        tool: "sessions_send".to_string(),
        arguments: format!(r#"{{"session_id":"{RICH}","message":"Counted."}}"#),
        ..CallRequest::default()
    };
    let report = runtime.call(store, &request);
    host_shim_testkit::begins(&report.answer.unwrap().text, "accepted for ");
    let after = report.harness.reads();
    // The target's header (one stat) and the sender's transcript (one stat, for its
    // surface, whose chain gives the hop, and its title); no transcript summarized
    // again, no rescan of the projects folder; the sender's surface parsed once.
    assert_eq!(after.stats - before.stats, 2, "{before:?} {after:?}");
    assert_eq!(after.summary_bytes, before.summary_bytes);
    assert_eq!(after.parsed - before.parsed, 1, "{before:?} {after:?}");
    // The live registry read once for the header and the delivery together.
    assert_eq!(presence.live_reads(), 1);
}

fn frames_handed_over_together_are_one_surface_message_with_its_own_seq() {
    // A Stop that hands two messages over at once: one attachment carrying both frames.
    let projects = scratch("two-frames").join("projects");
    let folder = projects.join("-home-ada-two");
    std::fs::create_dir_all(&folder).unwrap();
    let id = "d0000000-0000-4000-8000-00000000000d";
    let frame = |body: &str| {
        format!(
            "Cross-session message from another session of this harness.\nfrom-session: {CALLER} (\"t\")\ndelivery: queue\nhop: 1\n--- message begins ---\n{body}\n--- message ends ---"
        )
    };
    let lines = [
        serde_json::json!({"type": "user", "sessionId": id, "cwd": "/home/ada/two",
            "timestamp": "2026-12-01T00:00:00Z", "message": {"role": "user", "content": "hello"}}),
        serde_json::json!({"type": "attachment", "sessionId": id, "timestamp": "2026-12-01T00:00:01Z",
            "attachment": {"type": "hook_additional_context", "hookName": "Stop", "hookEvent": "Stop",
                "content": [format!("{}\n\n{}", frame("first"), frame("second"))]},
            "rendered": [{"content": "<system-reminder>\nStop hook additional context: …\n</system-reminder>"}]}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(folder.join(format!("{id}.jsonl")), text).unwrap();
    let mut store = store(&projects, &scratch("two-frames-state"));
    let surface = host_shim::SessionQuery::get_surface(&mut store, id, 40).unwrap();
    let seqs: Vec<u64> = surface.messages.iter().map(|m| m.seq).collect();
    assert_eq!(seqs, [1, 2], "one message per record, each its own seq");
    let whole = host_shim::SessionQuery::get_messages(&mut store, id, &[2]);
    let whole = whole[0].as_ref().unwrap();
    assert_eq!(
        whole.text,
        format!("{}\n\n{}", frame("first"), frame("second"))
    );
    assert!(!whole.injected);
}

fn the_session_a_server_serves_is_live_in_its_answers_before_its_registration_is_seen() {
    // Under load a server's first call can come before its registration lands: the
    // store knows whom it serves, so the caller's own row is never cold.
    let state = scratch("serving");
    let mut store = store(&fixtures(), &state);
    let row = |store: &mut ClaudeStore| store.get_session(CALLER).unwrap().live;
    assert!(!row(&mut store), "nobody registered it");
    store.set_serving(Some(CALLER.to_string()));
    assert!(row(&mut store));
    assert!(
        !store.get_session(RICH).unwrap().live,
        "only the one it serves"
    );
}

fn a_first_call_that_comes_before_its_transcript_waits_for_it() {
    // On a busy machine a new session's first call can reach its server before Claude
    // Code has written the session's transcript: the server looks again for the call's
    // record instead of answering at once as if the session were not its store's. Here
    // the record turns up in a subagent's transcript, so only an answer that waited
    // names the subagent.
    use host_shim_claude_code::mcp_session::subagent_of_call;
    const NEW: &str = "66666666-ffff-4fff-8fff-000000000006";
    let projects = scratch("first-call-projects");
    let folder = projects.join("-home-ada-new");
    std::fs::create_dir_all(&folder).unwrap();
    let harness = host_shim::Shared::new(store(&projects, &scratch("first-call-state")));
    harness.lock().set_serving(Some(NEW.to_string()));
    let record = |session: &str| {
        let call = serde_json::json!({"type": "assistant", "sessionId": session,
            "cwd": "/home/ada/new", "timestamp": "2026-12-01T00:00:00Z",
            "message": {"role": "assistant", "content": [{"type": "tool_use",
                "id": "toolu_first", "name": "mcp__session-tools__sessions_list", "input": {}}]}});
        format!("{call}\n")
    };
    let writer = {
        let folder = folder.clone();
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(300));
            let subagents = folder.join(NEW).join("subagents");
            std::fs::create_dir_all(&subagents).unwrap();
            std::fs::write(subagents.join("agent-f1r5t000.jsonl"), record(NEW)).unwrap();
            std::fs::write(folder.join(format!("{NEW}.jsonl")), record(NEW)).unwrap();
        })
    };
    let maker = subagent_of_call(&harness, NEW, "toolu_first");
    writer.join().unwrap();
    assert_eq!(maker.as_deref(), Some("agent-f1r5t000"));
}

fn a_claude_session_registers_once_its_transcript_exists_and_clears_when_dropped() {
    use host_shim_claude_code::mcp_session::ClaudeSession;
    let state = scratch("session");
    let presence = Arc::new(LocalPresence::open(&state).unwrap());
    let harness = host_shim::Shared::new(store_with(&fixtures(), &state, presence.clone()));
    // A session with a transcript: registered at once, and live in its own answers.
    let session = ClaudeSession::start(&harness, Some(CALLER));
    assert!(session.registered());
    assert!(presence.live_sessions().contains(CALLER));
    assert!(harness.lock().get_session(CALLER).unwrap().live);
    drop(session);
    assert!(presence.live_sessions().is_empty(), "dropped: cleared");
    // No caller: nothing starts.
    assert!(!ClaudeSession::start(&harness, None).registered());
}

fn watch_shows_each_message_waiting_then_handed_over_and_what_each_session_lets_in() {
    let state = scratch("watch");
    let projects = fixtures();
    let once = |state: &Path| {
        let output = host_shim(
            &[
                "watch",
                "--once",
                "--claude-projects",
                projects.to_str().unwrap(),
            ],
            "",
            state,
        );
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).unwrap()
    };
    let args = format!(r#"{{"session_id":"{PROMPT}","message":"Lunch is at noon."}}"#);
    assert!(
        call("sessions_send", &args, &state, &["--call-id", "toolu_W1"])
            .0
            .starts_with("accepted for ")
    );
    let view = once(&state);
    let line = format!("{CALLER} -> {PROMPT}  queue hop=1 ");
    assert!(
        view.lines().any(|l| l.starts_with("  ")
            && l.contains(&line[2..])
            && l.contains(" chars  waiting ")),
        "{view}"
    );
    // The target's row says a message waits; the sender's is there too.
    assert!(
        view.lines()
            .any(|l| l.starts_with(&format!("  {PROMPT}  claude-code")) && l.contains("1 waiting")),
        "{view}"
    );
    assert!(
        view.lines()
            .any(|l| l.starts_with(&format!("  {CALLER}  claude-code"))),
        "{view}"
    );
    // Handed over by the target's hook: the same message, now handed over.
    assert!(hook_answer("SessionStart", PROMPT, &state).is_some());
    next_hook(PROMPT, &state);
    let view = once(&state);
    let messages: Vec<&str> = view.lines().filter(|l| l.contains(" -> ")).collect();
    assert_eq!(messages.len(), 1, "{view}");
    assert!(messages[0].contains(" chars  handed over after "), "{view}");
    // What a person holds shows on the row.
    let output = host_shim(&["inbound", PROMPT, "hold"], "", &state);
    assert!(output.status.success());
    host_shim_testkit::has(&once(&state), "claude-code cold  inbound=hold");
}

fn the_audit_log_shows_each_acceptance_and_hand_over_once() {
    let state = scratch("audit");
    // Two sends (one with its body kept), one repeat, and a hook that hands both over.
    let send = |message: &str, call_id: &str, extra: &[&str]| {
        let args = format!(r#"{{"session_id":"{PROMPT}","message":"{message}"}}"#);
        let mut all = vec!["--call-id", call_id];
        all.extend_from_slice(extra);
        call("sessions_send", &args, &state, &all).0
    };
    assert!(send("Lunch is at noon.", "toolu_A1", &[]).starts_with("accepted for "));
    assert!(send("Lunch is at noon.", "toolu_A1", &[]).starts_with("accepted for "));
    assert!(send("Bring the map.", "toolu_A2", &["--log-bodies"]).starts_with("accepted for "));
    assert!(hook_answer("SessionStart", PROMPT, &state).is_some());
    next_hook(PROMPT, &state);
    let log = |extra: &[&str]| {
        let mut args = vec!["log"];
        args.extend_from_slice(extra);
        let output = host_shim(&args, "", &state);
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).unwrap()
    };
    let text = log(&[]);
    let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with("    ")).collect();
    assert_eq!(lines.len(), 6, "{text}");
    for (line, event) in lines.iter().zip([
        "accepted",
        "accepted",
        "offered",
        "offered",
        "handed-over",
        "handed-over",
    ]) {
        assert!(
            line.contains(&format!(" {event} "))
                && line.contains(&format!("{CALLER} -> {PROMPT} queue hop=1 ")),
            "{line}"
        );
    }
    // The body only where it was asked for, and never the first one's.
    host_shim_testkit::has(&text, "\n    Bring the map.\n");
    host_shim_testkit::lacks(&text, "Lunch is at noon.");
    let json: Vec<serde_json::Value> = (log(&["--json"]).lines())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(json.len(), 6);
    assert_eq!(json[0]["event"], "accepted");
    assert_eq!(json[0]["from"], CALLER);
    assert_eq!(json[0]["sha256"].as_str().unwrap().len(), 16);
    assert_eq!(json[2]["event"], "offered");
    assert_eq!(json[4]["event"], "handed-over");
    let hashes = |at: std::ops::Range<usize>| {
        let mut hashes: Vec<String> = json[at].iter().map(|j| j["sha256"].to_string()).collect();
        hashes.sort();
        hashes
    };
    assert_eq!(
        hashes(0..2),
        hashes(2..4),
        "the messages accepted are offered"
    );
    assert_eq!(hashes(2..4), hashes(4..6), "then handed over");
}

fn a_session_claude_code_lists_as_running_is_live_without_a_server_of_ours() {
    use std::os::unix::fs::PermissionsExt;
    // Claude Code 2.1.328 writes ~/.claude/sessions/<pid>.json while a session runs,
    // beside ~/.claude/projects; here this test process stands in for it.
    let home = scratch("registry").join(".claude");
    copy_tree(&fixtures(), &home.join("projects"));
    let registry = home.join("sessions");
    std::fs::create_dir_all(&registry).unwrap();
    std::fs::set_permissions(&registry, std::fs::Permissions::from_mode(0o700)).unwrap();
    let pid = std::process::id();
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let started = stat[stat.rfind(')').unwrap() + 1..]
        .split_whitespace()
        .nth(19)
        .unwrap()
        .to_string();
    let record = serde_json::json!({"pid": pid, "sessionId": SUMMARY, "procStart": started,
        "kind": "interactive", "status": "idle", "messagingSocketPath": "/tmp/cc-socks/x.sock"});
    std::fs::write(registry.join(format!("{pid}.json")), record.to_string()).unwrap();
    let state = scratch("registry-state");
    let mut store = store(&home.join("projects"), &state);
    assert!(
        store.get_session(SUMMARY).unwrap().live,
        "running in Claude Code"
    );
    assert!(!store.get_session(RICH).unwrap().live, "not running");
    std::fs::remove_file(registry.join(format!("{pid}.json"))).unwrap();
    assert!(
        !store.get_session(SUMMARY).unwrap().live,
        "its process ended"
    );
}

/// The person's say over inbound, set with `host-shim inbound`: a held session takes
/// messages but no hook hands them over until they are released; a refusing session
/// takes none; both show in the listing.
fn a_held_session_gets_its_messages_only_after_release_and_a_refusing_one_gets_none() {
    let state = scratch("inbound");
    let inbound = |policy: &[&str]| {
        let mut args = vec!["inbound", RICH];
        args.extend_from_slice(policy);
        let output = host_shim(&args, "", &state);
        assert!(output.status.success(), "{output:?}");
        String::from_utf8(output.stdout).unwrap()
    };
    assert_eq!(
        inbound(&[]),
        format!("{RICH}: inbound accept | no message waits\n")
    );
    assert!(inbound(&["hold"]).starts_with(&format!("{RICH}: inbound hold (held: ")));
    let send = format!(r#"{{"session_id":"{RICH}","message":"Review when you can."}}"#);
    let (text, _) = call("sessions_send", &send, &state, &["--call-id", "toolu_h1"]);
    assert!(
        text.trim_end().ends_with("\nThe person using that session holds incoming messages; it is handed over when they release them. Its reply will not return through this call; read it later with sessions_read."),
        "{text}"
    );
    let (list, _) = call("sessions_list", "", &state, &[]);
    assert!(
        list.lines()
            .any(|l| l.starts_with(&format!("- {RICH} ")) && l.ends_with(" | inbound=hold")),
        "{list}"
    );
    // Held: no hook of the session hands it over.
    for event in ["UserPromptSubmit", "Stop", "SessionStart"] {
        assert_eq!(hook_answer(event, RICH, &state), None, "{event}");
    }
    assert_eq!(
        inbound(&[]),
        format!("{RICH}: inbound hold | 1 message waits\n")
    );
    // Released: the next prompt takes it.
    assert!(inbound(&["accept"]).contains("released: 1 message waits"));
    let answer = hook_answer("UserPromptSubmit", RICH, &state).expect("handed over after release");
    let context = answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    host_shim_testkit::has(context, "Review when you can.");
    next_hook(RICH, &state);
    // Refusing: nothing is delivered, and the sender is told not to retry.
    inbound(&["refuse"]);
    let (text, _) = call("sessions_send", &send, &state, &["--call-id", "toolu_h2"]);
    assert!(
        text.starts_with(&format!(
            "sessions_send refused (refused-by-target): the person using {RICH} does not take cross-session messages in it."
        )),
        "{text}"
    );
    assert_eq!(
        std::fs::read_dir(state.join("inbox").join(RICH))
            .unwrap()
            .count(),
        0
    );
}

/// `host-shim mcp` over the fixtures as [`CALLER`], with `extra` flags, past MCP's
/// handshake: the server and its stdin.
fn mcp_server(state: &Path, extra: &[&str]) -> (std::process::Child, std::process::ChildStdin) {
    use std::io::Write;
    let mut child = host_shim_testkit::command::host_shim()
        .arg("--cache-dir")
        .arg(std::env::temp_dir().join("host-shim-claude-cache"))
        .args(["mcp", "--claude-projects"])
        .arg(fixtures())
        .args(["--caller", CALLER, "--state-dir"])
        .arg(state)
        .args(extra)
        .env_remove("CLAUDE_CODE_SESSION_ID")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for line in [
        serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "cli-test", "version": "1"}}}),
        serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ] {
        writeln!(stdin, "{line}").unwrap();
    }
    (child, stdin)
}

/// The first message that waits for `session`, once one does (up to 30 seconds).
fn first_waiting(inbox: &StateDir, session: &str) -> host_shim::inbox::SpooledMessage {
    use host_shim::inbox::InboxBackend;
    (0..600)
        .find_map(|_| {
            let waiting = inbox.waiting(session).ok()?.messages;
            if waiting.is_empty() {
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            waiting.into_iter().next()
        })
        .map(|w| w.message)
        .expect("the message reached the session's inbox")
}

/// RICH's answer to CALLER's message `id`, `words` in it, as RICH's own plugin frames
/// it and its store puts it into CALLER's inbox.
fn put_reply(inbox: &StateDir, id: &str, reply_id: &str, words: &str) {
    use host_shim::inbox::{InboxBackend, SpooledMessage};
    let reply = format!(
        "Cross-session message from another session of this harness.\nfrom-session: {RICH} (\"Fix flaky payment tests\")\ndelivery: queue\nhop: 2\nmessage-id: {reply_id}\nin-reply-to: {id}\n--- message begins ---\n{words}\n--- message ends ---"
    );
    let key = format!("{}:{RICH}toolu_{reply_id}", RICH.len());
    let message = SpooledMessage::new(CALLER, host_shim::DeliveryMode::Queue, &reply, &key, false)
        .with_ids(&host_shim::contract::latest::MessageIds {
            message_id: reply_id.into(),
            in_reply_to: Some(id.into()),
        });
    inbox.put(&message).unwrap();
}

/// A send that awaits its reply: `host-shim call` waits, holding no plugin instance,
/// until the reply lands in the caller's inbox (here put there as the target's store
/// would), shows it after the acceptance, and takes it: no hook of the caller hands it
/// over again. Without a reply, the wait ends and says so.
fn an_awaited_reply_is_shown_by_the_call_and_never_handed_over_again() {
    use host_shim::inbox::InboxBackend;
    let state = scratch("await");
    let projects = fixtures();
    let ask = format!(
        r#"{{"session_id":"{RICH}","message":"Did the payment tests pass?","await_reply_seconds":60}}"#
    );
    let child = host_shim_testkit::command::host_shim()
        .arg("--cache-dir")
        .arg(std::env::temp_dir().join("host-shim-claude-cache"))
        .args(["call", "sessions_send", &ask, "--claude-projects"])
        .arg(&projects)
        .args(["--caller", CALLER, "--call-id", "toolu_ask", "--state-dir"])
        .arg(&state)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The ask lands in the target's inbox; its id is the one the reply answers.
    let inbox = StateDir::open(&state).unwrap();
    let id = first_waiting(&inbox, RICH).message_id;
    assert!(id.starts_with("m-"), "{id}");
    put_reply(&inbox, &id, "m-00000000aaaa", "Yes: all 41 pass.");
    let output = child.wait_with_output().unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        text,
        format!(
            "accepted for {RICH} | mode=queue | chars=27 | hop=1 | id={id}\n\
             The message is queued in that session's inbox. Waiting up to 60 seconds for its reply.\n\
             reply from {RICH} (hop 2):\n\
             Yes: all 41 pass.\n"
        )
    );
    // Taken by the call: nothing waits for the caller, and its hooks hand nothing over.
    assert!(inbox.waiting(CALLER).unwrap().messages.is_empty());
    for event in ["UserPromptSubmit", "Stop"] {
        assert_eq!(hook_answer(event, CALLER, &state), None, "{event}");
    }
    // No reply: the wait ends after its seconds and says the reply will come later.
    let quick =
        format!(r#"{{"session_id":"{RICH}","message":"Still there?","await_reply_seconds":1}}"#);
    let (text, _) = call(
        "sessions_send",
        &quick,
        &state,
        &["--call-id", "toolu_ask2"],
    );
    assert!(
        text.ends_with(
            " Waiting up to 1 second for its reply.\nNo reply within 1 second; it will reach you like any other message.\n"
        ),
        "{text}"
    );
}

/// An MCP client that cancels a send awaiting its reply (`notifications/cancelled`,
/// Claude Code's Esc) ends the wait: the server serves the next call, and a reply that
/// comes after is not taken by the cancelled call (its answer is never sent) but
/// waits for the caller like any other message.
fn a_cancelled_call_ends_its_wait_for_a_reply() {
    use host_shim::inbox::InboxBackend;
    use std::io::{BufRead, BufReader, Write};
    let state = scratch("await-cancel");
    let (mut child, mut stdin) = mcp_server(&state, &[]);
    let mut say = |line: serde_json::Value| writeln!(stdin, "{line}").unwrap();
    say(
        serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "sessions_send", "arguments": {"session_id": RICH,
            "message": "Are the payment tests green?", "await_reply_seconds": 120}}}),
    );
    // Accepted and waiting: the ask is in the target's inbox.
    let inbox = StateDir::open(&state).unwrap();
    let id = first_waiting(&inbox, RICH).message_id;
    say(
        serde_json::json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 2, "reason": "the person pressed Esc"}}),
    );
    say(
        serde_json::json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "sessions_list", "arguments": {"scope": "all"}}}),
    );
    let mut responses = Vec::new();
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let response: serde_json::Value = serde_json::from_str(&line.unwrap()).unwrap();
        let last = response["id"] == 3;
        responses.push(response);
        if last {
            break;
        }
    }
    assert!(
        responses[responses.len() - 1]["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains(RICH),
        "the next call was answered: {responses:#?}"
    );
    // The reply comes after the cancel (a poll of the wait apart): the caller's own.
    std::thread::sleep(host_shim::inbox::REPLY_POLL * 2);
    put_reply(&inbox, &id, "m-00000000bbbb", "Green.");
    std::thread::sleep(host_shim::inbox::REPLY_POLL * 3);
    assert_eq!(inbox.waiting(CALLER).unwrap().messages.len(), 1);
    assert!(
        !responses.iter().any(|r| r["id"] == 2),
        "a cancelled call is not answered: {responses:#?}"
    );
    drop(stdin);
    let _ = child.wait();
    assert_eq!(inbox.waiting(RICH).unwrap().messages.len(), 1);
}

/// Claude Code's own `crossSessionInbound` setting is the person's say too: a user who
/// holds inbound in Claude Code's settings gets messages held by the tools, and no
/// hook hands them over; the stricter of it and `host-shim inbound` wins.
fn claude_codes_own_inbound_setting_is_obeyed_the_stricter_winning() {
    let state = scratch("cc-inbound-state");
    let config = scratch("cc-inbound-config");
    let projects = config.join("projects");
    copy_tree(&fixtures(), &projects);
    std::fs::write(
        config.join("settings.json"),
        r#"{"crossSessionInbound": "hold"}"#,
    )
    .unwrap();
    let run = |args: &[&str], stdin: &str| -> String {
        let output = host_shim_with(args, stdin, &state, &[("CLAUDE_CONFIG_DIR", &config)]);
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).unwrap()
    };
    let call = |tool: &str, args: &str| {
        let projects = projects.to_str().unwrap();
        run(
            &[
                "call",
                tool,
                args,
                "--claude-projects",
                projects,
                "--caller",
                CALLER,
            ],
            "",
        )
    };
    let send = format!(r#"{{"session_id":"{RICH}","message":"Ship it?"}}"#);
    let text = call("sessions_send", &send);
    host_shim_testkit::has(
        &text,
        "\nThe person using that session holds incoming messages;",
    );
    let list = call("sessions_list", "");
    assert!(
        list.lines()
            .any(|l| l.starts_with(&format!("- {RICH} ")) && l.ends_with("| inbound=hold")),
        "{list}"
    );
    let hook = serde_json::json!({
        "session_id": RICH, "cwd": "/home/ada/shop", "hook_event_name": "UserPromptSubmit",
    });
    assert_eq!(
        run(&["claude-hook"], &hook.to_string()),
        "",
        "a held message was handed over"
    );
    // The person's refusal through host-shim is stricter than Claude Code's hold.
    run(&["inbound", RICH, "refuse"], "");
    let again = format!(r#"{{"session_id":"{RICH}","message":"Again?"}}"#);
    let text = call("sessions_send", &again);
    host_shim_testkit::begins(&text, "sessions_send refused (refused-by-target):");
}

fn a_send_the_guard_rails_refuse_is_in_the_audit_log_and_marked_in_watch() {
    use std::io::{BufRead, BufReader, Write};
    let state = scratch("refused-logged");
    let settings = settings_file(&state, r#"{"maxSendsPerTarget": 1}"#);
    let (mut child, mut stdin) = mcp_server(&state, &["--settings", settings.to_str().unwrap()]);
    let mut say = |line: serde_json::Value| writeln!(stdin, "{line}").unwrap();
    // One after the other (calls in flight at once run at once).
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut answers = Vec::new();
    for (id, words) in [(1, "First note."), (2, "Second note.")] {
        say(
            serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "sessions_send", "arguments": {"session_id": PROMPT, "message": words}}}),
        );
        for line in lines.by_ref() {
            let response: serde_json::Value = serde_json::from_str(&line.unwrap()).unwrap();
            if response["id"] == id {
                answers.push(response["result"]["content"][0]["text"].to_string());
                break;
            }
        }
    }
    drop(stdin);
    let _ = child.wait();
    assert!(
        answers.iter().any(|a| a.contains("refused (rate-limited)")),
        "{answers:?}"
    );
    let output = host_shim(&["log"], "", &state);
    let log = String::from_utf8(output.stdout).unwrap();
    let refused: Vec<&str> = log.lines().filter(|l| l.contains(" refused ")).collect();
    assert_eq!(refused.len(), 1, "{log}");
    assert!(
        refused[0].contains(&format!("{CALLER} -> {PROMPT} queue hop=0 "))
            && refused[0].ends_with(" (rate-limited)"),
        "{log}"
    );
    let watched = host_shim(&["watch", "--once"], "", &state);
    let screen = String::from_utf8(watched.stdout).unwrap();
    assert!(
        screen
            .lines()
            .any(|l| l.contains(&format!("{CALLER} -> {PROMPT}"))
                && l.ends_with("REFUSED (rate-limited)")),
        "{screen}"
    );
}

host_shim_testkit::tests![
    the_listing_shows_every_session_and_subagent_with_its_title_source,
    headers_name_parents_origins_and_creation_times,
    a_read_shows_the_surface_after_the_last_compaction_and_nothing_the_model_did_not_say,
    meta_records_are_on_the_surface_and_images_drop_out,
    damaged_and_half_written_lines_are_skipped_and_counted,
    a_listing_reads_only_bounded_windows_and_caches_them_by_size_and_time,
    a_preset_far_from_both_ends_is_found_reading_back_from_the_end,
    a_send_lands_in_the_spool_once_and_the_stop_hook_hands_it_over_once,
    each_hook_event_takes_what_it_should,
    a_hook_given_bad_input_says_what_it_needs_and_hands_nothing_over,
    cold_targets_follow_allow_resume_and_live_ones_are_registered,
    the_wake_command_runs_for_a_cold_target_with_the_message_file,
    a_folder_that_is_not_a_projects_folder_is_named,
    the_library_serves_the_store_to_the_plugin,
    the_demo_tours_the_sessions_and_no_transcript_is_ever_written,
    one_answer_stays_within_claude_codes_context_cap_and_the_rest_wait,
    a_spool_that_cannot_take_the_message_is_a_rejection_and_nothing_is_delivered,
    the_mcp_server_clears_its_registration_when_stopped_by_a_signal,
    a_server_whose_session_has_no_transcript_registers_nothing,
    one_send_stats_each_transcript_it_needs_once_and_reads_the_live_registry_once,
    frames_handed_over_together_are_one_surface_message_with_its_own_seq,
    the_session_a_server_serves_is_live_in_its_answers_before_its_registration_is_seen,
    a_first_call_that_comes_before_its_transcript_waits_for_it,
    a_claude_session_registers_once_its_transcript_exists_and_clears_when_dropped,
    watch_shows_each_message_waiting_then_handed_over_and_what_each_session_lets_in,
    the_audit_log_shows_each_acceptance_and_hand_over_once,
    a_session_claude_code_lists_as_running_is_live_without_a_server_of_ours,
    a_held_session_gets_its_messages_only_after_release_and_a_refusing_one_gets_none,
    an_awaited_reply_is_shown_by_the_call_and_never_handed_over_again,
    a_cancelled_call_ends_its_wait_for_a_reply,
    claude_codes_own_inbound_setting_is_obeyed_the_stricter_winning,
    a_send_the_guard_rails_refuse_is_in_the_audit_log_and_marked_in_watch,
];
