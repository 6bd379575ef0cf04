//! `host-shim doctor` over set-ups broken on purpose, one mistake at a time: each is
//! found, named, and given its fix; a sound set-up is "Nothing wrong found." (exit 0).

use host_shim::DeliveryMode;
use host_shim::inbox::{InboxBackend, SpooledMessage, StateDir};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

mod common;

fn scratch(name: &str) -> PathBuf {
    common::scratch("doctor", name)
}

/// A home with only `bin/` on PATH (fake `claude`/`codex` go there when a test wants).
struct Home {
    root: PathBuf,
}

impl Home {
    fn new(name: &str) -> Home {
        let root = scratch(name);
        std::fs::create_dir_all(root.join("bin")).unwrap();
        Home { root }
    }

    fn state(&self) -> PathBuf {
        self.root.join("state")
    }

    fn run(&self, args: &[&str]) -> (bool, String) {
        let output = common::host_shim()
            .args(args)
            .env("HOME", &self.root)
            .env("PATH", self.root.join("bin"))
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("CODEX_HOME")
            .env_remove("COPILOT_HOME")
            .env_remove("GEMINI_CLI_HOME")
            .env_remove("XDG_STATE_HOME")
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("XDG_DATA_HOME")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&output.stdout).into_owned()
            + &String::from_utf8_lossy(&output.stderr);
        (output.status.success(), text)
    }

    fn setup(&self, harness: &str) {
        let state = self.state();
        let (ok, text) = self.run(&["setup", harness, "--state-dir", state.to_str().unwrap()]);
        assert!(ok, "{text}");
    }

    fn doctor(&self) -> (bool, String) {
        let state = self.state();
        self.run(&["doctor", "--state-dir", state.to_str().unwrap()])
    }

    /// A fake harness command printing `version`.
    fn command(&self, name: &str, version: &str) {
        let path = self.root.join("bin").join(name);
        std::fs::write(&path, format!("#!/bin/sh\necho '{version}'\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    fn edit_json(&self, file: &str, edit: impl FnOnce(&mut serde_json::Value)) {
        let path = self.root.join(file);
        let mut value: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        edit(&mut value);
        std::fs::write(&path, value.to_string()).unwrap();
    }
}

/// The version a real-client suite pins (its package.json).
fn pinned(suite: &str, package: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests")
        .join(suite)
        .join("package.json");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    json["dependencies"][package].as_str().unwrap().to_string()
}

fn problems(text: &str) -> Vec<&str> {
    text.lines().filter(|l| l.contains("PROBLEM")).collect()
}

#[test]
fn a_sound_claude_set_up_has_nothing_wrong_and_the_tested_version() {
    let home = Home::new("sound");
    home.command(
        "claude",
        &format!(
            "{} (Claude Code)",
            pinned("claude_code", "@anthropic-ai/claude-code")
        ),
    );
    home.setup("claude");
    let (ok, text) = home.doctor();
    assert!(ok, "{text}");
    assert!(
        text.contains("the version the tools are tested with"),
        "{text}"
    );
    assert!(
        text.contains("starts and lists sessions_list, sessions_read, sessions_send"),
        "{text}"
    );
    assert!(text.ends_with("Nothing wrong found.\n"), "{text}");
    // Another version is a note, not a problem.
    home.command("claude", "9.9.9 (Claude Code)");
    let (ok, text) = home.doctor();
    assert!(
        ok && text.contains("Claude Code 9.9.9; the tools are tested with"),
        "{text}"
    );
}

#[test]
fn each_broken_claude_part_is_named_with_its_fix() {
    let home = Home::new("broken-claude");
    home.setup("claude");
    let settings = ".claude/settings.json";
    // No permission.
    home.edit_json(settings, |s| {
        s["permissions"]["allow"] = serde_json::json!([])
    });
    let (ok, text) = home.doctor();
    assert!(!ok);
    assert_eq!(problems(&text).len(), 1, "{text}");
    assert!(
        text.contains("PROBLEM  no permission `mcp__session-tools` in ")
            && text.contains("fix: host-shim setup claude --state-dir "),
        "{text}"
    );
    // No Stop hook.
    home.setup("claude");
    home.edit_json(settings, |s| {
        s["hooks"].as_object_mut().unwrap().remove("Stop");
    });
    let (_, text) = home.doctor();
    assert!(
        text.contains("no `host-shim claude-hook` hook on Stop in "),
        "{text}"
    );
    // A server whose binary moved away.
    home.setup("claude");
    home.edit_json(".claude.json", |c| {
        c["mcpServers"]["session-tools"]["command"] = "/gone/host-shim".into();
    });
    let (ok, text) = home.doctor();
    assert!(
        !ok && text.contains("the MCP server's command /gone/host-shim is not there"),
        "{text}"
    );
    // A settings file that is not JSON.
    std::fs::write(home.root.join(settings), "{,}").unwrap();
    let (ok, text) = home.doctor();
    assert!(
        !ok && text.contains("settings.json is not valid JSON"),
        "{text}"
    );
}

#[test]
fn codex_hooks_not_yet_trusted_are_named_until_codex_trusts_them() {
    let home = Home::new("codex");
    home.setup("codex");
    let (ok, text) = home.doctor();
    assert!(!ok);
    assert!(
        text.contains(
            "Codex has not been told to trust the hook on SessionStart, UserPromptSubmit, Stop"
        ) && text.contains("Trust all and continue"),
        "{text}"
    );
    // What Codex writes when its person trusts them.
    let hooks = home.root.join(".codex/hooks.json");
    let mut config = std::fs::read_to_string(home.root.join(".codex/config.toml")).unwrap();
    for event in ["session_start", "user_prompt_submit", "stop"] {
        config.push_str(&format!(
            "\n[hooks.state.\"{}:{event}:0:0\"]\ntrusted_hash = \"sha256:00\"\n",
            hooks.display()
        ));
    }
    std::fs::write(home.root.join(".codex/config.toml"), config).unwrap();
    let (ok, text) = home.doctor();
    assert!(ok && text.contains("Codex trusts the hooks"), "{text}");
}

#[test]
fn the_state_folder_s_modes_and_stuck_messages_are_named_and_dead_registrations_swept() {
    let home = Home::new("state");
    home.setup("claude");
    let state = home.state();
    let inbox = StateDir::open(&state).unwrap();
    // A registration of a process that is gone (a headless run that ended): the host's
    // own bookkeeping, swept, and nothing wrong.
    std::fs::create_dir_all(state.join("live")).unwrap();
    let dead = state.join("live/999999999.json");
    std::fs::write(
        &dead,
        r#"{"session_id": "s-dead", "pid": 999999999, "started": 1}"#,
    )
    .unwrap();
    let (ok, text) = home.doctor();
    assert!(
        ok && text.contains("ok       swept 1 registration of a process that is gone (s-dead)"),
        "{text}"
    );
    assert!(!dead.exists());
    // A message that waited two hours for a session no harness here knows.
    let mut message = SpooledMessage::new("s-stuck", DeliveryMode::Queue, "hello", "k1", false);
    message.accepted_at_ns -= 2 * 3_600_000_000_000;
    inbox.put(&message).unwrap();
    // A fresh one is no problem.
    inbox
        .put(&SpooledMessage::new(
            "s-fresh",
            DeliveryMode::Queue,
            "hi",
            "k2",
            false,
        ))
        .unwrap();
    let (ok, text) = home.doctor();
    assert!(!ok);
    assert!(
        text.contains(
            "PROBLEM  1 message has waited more than an hour for s-stuck (the oldest 2 h)"
        ) && text.contains("fix: resume s-stuck in its harness (its next prompt takes them; no harness here holds it)"),
        "{text}"
    );
    // A session of a harness here: that harness's own resume command.
    let project = home.root.join(".claude/projects/-work");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join("s-stuck.jsonl"), "").unwrap();
    let (_, text) = home.doctor();
    assert!(
        text.contains("fix: claude --resume s-stuck (its next prompt takes them)"),
        "{text}"
    );
    assert!(!text.contains("s-fresh"), "{text}");
    // Held by its person: the fix is theirs to release.
    inbox
        .set_inbound("s-stuck", host_shim::contract::latest::InboundPolicy::Hold)
        .unwrap();
    let (_, text) = home.doctor();
    assert!(
        text.contains("fix: host-shim inbound s-stuck accept"),
        "{text}"
    );
    // Readable by others; then writable by others (which the inbox refuses outright).
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o755)).unwrap();
    let (_, text) = home.doctor();
    assert!(
        text.contains("others can read it (mode 755)")
            && text.contains(&format!("fix: chmod 700 {}", state.display())),
        "{text}"
    );
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o777)).unwrap();
    let (_, text) = home.doctor();
    assert!(
        text.contains("others can write to it (mode 777)")
            && text.contains(&format!("fix: chmod 700 {}", state.display())),
        "{text}"
    );
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o700)).unwrap();
}

#[test]
fn a_harness_folder_never_set_up_is_a_note_not_a_problem() {
    // The administrator's machine: Claude Code set up, a CODEX_HOME Codex made, no
    // setup of Codex's.
    let home = Home::new("unrelated");
    home.setup("claude");
    std::fs::create_dir_all(home.root.join(".codex")).unwrap();
    std::fs::write(home.root.join(".codex/config.toml"), "model = \"gpt-5\"\n").unwrap();
    let (ok, text) = home.doctor();
    assert!(ok, "{text}");
    assert!(problems(&text).is_empty(), "{text}");
    assert!(
        text.contains(
            "Codex is here but not set up for the tools; to set it up: host-shim setup codex"
        ),
        "{text}"
    );
    // Set up, then half taken out by hand: a problem again, with its fix.
    home.setup("codex");
    home.edit_json(".codex/hooks.json", |h| {
        h["hooks"].as_object_mut().unwrap().remove("Stop");
    });
    let (ok, text) = home.doctor();
    assert!(
        !ok && text.contains("no `host-shim codex-hook` hook on Stop"),
        "{text}"
    );
}

#[test]
fn no_harness_here_says_so() {
    let home = Home::new("empty");
    let (ok, text) = home.doctor();
    assert!(ok, "{text}");
    assert!(text.contains("No harness found"), "{text}");
    assert!(text.contains("not created yet"), "{text}");
}

#[test]
fn opencode_s_plugin_file_and_the_server_it_runs_are_checked() {
    let home = Home::new("opencode");
    home.command("opencode", &pinned("opencode", "opencode-ai"));
    // Installed, never set up for the tools: the person's choice, a note with the
    // command that sets it up.
    let (ok, text) = home.doctor();
    assert!(ok, "{text}");
    assert!(
        text.contains("OpenCode 1.18.33, the version the tools are tested with"),
        "{text}"
    );
    let state = home.state();
    assert!(
        text.contains(&format!(
            "note     OpenCode is here but not set up for the tools; to set it up: host-shim setup opencode --state-dir {}",
            state.display()
        )),
        "{text}"
    );
    home.setup("opencode");
    let (ok, text) = home.doctor();
    assert!(ok, "{text}");
    assert!(
        text.contains("starts and lists sessions_list, sessions_read, sessions_send"),
        "{text}"
    );
    assert!(
        text.contains("@opencode-ai/plugin is not in ") && text.contains("no database at "),
        "{text}"
    );
    // The binary the file runs moved away.
    let file = home.root.join(".config/opencode/plugin/session-tools.js");
    let moved = std::fs::read_to_string(&file).unwrap().replacen(
        "\"command\":\"/",
        "\"command\":\"/nowhere/",
        1,
    );
    std::fs::write(&file, moved).unwrap();
    let (ok, text) = home.doctor();
    assert!(!ok, "{text}");
    assert!(
        problems(&text)
            .iter()
            .any(|p| p.contains("the MCP server's command /nowhere/")),
        "{text}"
    );
    // A file of that name setup did not write.
    std::fs::write(&file, "export const Mine = async () => ({});\n").unwrap();
    let (ok, text) = home.doctor();
    assert!(
        !ok && text.contains("is not a plugin file setup wrote"),
        "{text}"
    );
}

#[test]
fn copilot_s_server_hooks_and_version_sentence_are_checked() {
    let home = Home::new("copilot");
    // As Copilot CLI prints it: a sentence, its full stop after the version.
    let version = pinned("copilot", "@github/copilot");
    home.command(
        "copilot",
        &format!("GitHub Copilot CLI {version}.\nRun 'copilot update' to check for updates."),
    );
    home.setup("copilot");
    let (ok, text) = home.doctor();
    assert!(ok, "{text}");
    assert!(
        text.contains("the version the tools are tested with") && !text.contains("may work"),
        "{text}"
    );
    assert!(
        text.contains("runs host-shim copilot-hook at sessionStart, userPromptSubmitted"),
        "{text}"
    );
    // Without setup's hooks file, messages are never handed over: a problem, its fix.
    std::fs::remove_file(home.root.join(".copilot/hooks/session-tools.json")).unwrap();
    let (ok, text) = home.doctor();
    assert!(!ok);
    assert!(
        text.contains("no hooks file") && text.contains("fix: host-shim setup copilot"),
        "{text}"
    );
}

#[test]
fn gemini_s_trusted_server_hooks_and_session_retention_are_checked() {
    let home = Home::new("gemini");
    home.command("gemini", &pinned("gemini", "@google/gemini-cli"));
    std::fs::create_dir_all(home.root.join(".gemini")).unwrap();
    home.setup("gemini");
    let (ok, text) = home.doctor();
    assert!(ok, "{text}");
    assert!(
        text.contains("the version the tools are tested with")
            && text.contains("the hooks (`host-shim gemini-hook`) are in"),
        "{text}"
    );
    // Gemini's retention is on unless the person turned it off: a note, not a problem.
    assert!(text.contains("session retention is on"), "{text}");
    home.edit_json(".gemini/settings.json", |settings| {
        settings["general"] = serde_json::json!({"sessionRetention": {"enabled": false}});
        settings["mcpServers"]["session-tools"]
            .as_object_mut()
            .unwrap()
            .remove("trust");
    });
    let (ok, text) = home.doctor();
    assert!(!ok && !text.contains("session retention is on"), "{text}");
    assert!(
        text.contains("is not trusted") && text.contains("fix: host-shim setup gemini"),
        "{text}"
    );
}

#[test]
fn remove_state_removes_the_tools_own_folders_only_once_no_harness_uses_them() {
    let home = Home::new("remove-state");
    home.setup("claude");
    let state = home.state();
    let cache = home.root.join(".cache/session-tools");
    std::fs::create_dir_all(&cache).unwrap();
    let inbox = StateDir::open(&state).unwrap();
    inbox
        .put(&SpooledMessage::new(
            "s-b",
            DeliveryMode::Queue,
            "hi",
            "k1",
            false,
        ))
        .unwrap();
    let remove = |extra: &[&str]| {
        let mut args = vec!["remove-state", "--state-dir", state.to_str().unwrap()];
        args.extend(extra);
        home.run(&args)
    };
    // A harness still set up needs them: nothing removed, and the way out named.
    let (ok, text) = remove(&[]);
    assert!(
        !ok && text.contains("claude still set up for the tools")
            && text.contains("`host-shim setup claude --remove`"),
        "{text}"
    );
    assert!(state.exists() && cache.exists());
    let (ok, text) = home.run(&["setup", "claude", "--remove"]);
    assert!(ok, "{text}");
    // A message waiting would be lost: refused unless asked for.
    let (ok, text) = remove(&[]);
    assert!(
        !ok && text.contains("1 message still waits in the inbox")
            && text.contains("--discard-waiting"),
        "{text}"
    );
    assert!(state.exists());
    let (ok, text) = remove(&["--discard-waiting"]);
    assert!(ok, "{text}");
    assert!(
        text.contains(&format!("removed: {} (the state folder)", state.display()))
            && text.contains(&format!(
                "removed: {} (the compiled-plugin cache)",
                cache.display()
            )),
        "{text}"
    );
    assert!(!state.exists() && !cache.exists());
    let (ok, text) = remove(&[]);
    assert!(ok && text.contains("nothing changed"), "{text}");
}

#[test]
fn damaged_message_files_and_inbound_settings_are_named_and_inbound_mends_its_own() {
    let home = Home::new("damaged");
    home.setup("claude");
    let state = home.state();
    let inbox = StateDir::open(&state).unwrap();
    inbox
        .put(&SpooledMessage::new(
            "s-b",
            DeliveryMode::Queue,
            "fine",
            "k1",
            false,
        ))
        .unwrap();
    std::fs::write(state.join("inbox/s-b/k-bad.json"), "{half").unwrap();
    std::fs::create_dir_all(state.join("inbound")).unwrap();
    std::fs::write(state.join("inbound/s-b"), "maybe").unwrap();
    let (ok, text) = home.doctor();
    assert!(!ok, "{text}");
    assert!(
        text.contains("k-bad.json is not a spooled message")
            && text.contains("fix: remove the file it names"),
        "{text}"
    );
    assert!(
        text.contains("says \"maybe\", which is no inbound setting")
            && text.contains("fix: host-shim inbound s-b accept (or hold, or refuse)"),
        "{text}"
    );
    // The person's own command mends the setting.
    let (ok, text) = home.run(&[
        "inbound",
        "s-b",
        "hold",
        "--state-dir",
        state.to_str().unwrap(),
    ]);
    assert!(ok && text.contains("s-b: inbound hold"), "{text}");
    assert_eq!(
        inbox.inbound("s-b").unwrap(),
        host_shim::contract::latest::InboundPolicy::Hold
    );
    std::fs::remove_file(state.join("inbox/s-b/k-bad.json")).unwrap();
    let (ok, text) = home.doctor();
    assert!(ok, "{text}");
    assert!(
        text.contains("ok       every message file and inbound setting reads"),
        "{text}"
    );
}
