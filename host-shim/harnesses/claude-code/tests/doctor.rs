//! `host-shim doctor` over Claude Code's set-up broken on purpose, one mistake at a
//! time: each is found, named, and given its fix; a sound set-up has nothing wrong.

use host_shim_testkit::command::{Home, pinned, problems};

fn a_sound_claude_set_up_has_nothing_wrong_and_the_tested_version() {
    let home = Home::new("sound");
    home.command(
        "claude",
        &format!("{} (Claude Code)", pinned("@anthropic-ai/claude-code")),
    );
    home.setup("claude");
    let (ok, text) = home.doctor();
    assert!(ok, "{text}");
    host_shim_testkit::has(&text, "the version the tools are tested with");
    host_shim_testkit::has(
        &text,
        "starts and lists sessions_list, sessions_read, sessions_send",
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

fn each_broken_claude_part_is_named_with_its_fix() {
    let home = Home::new("broken-claude");
    let settings = ".claude/settings.json";
    // No permission.
    let (ok, text) = home.doctor_with_broken("claude", settings, |s| {
        s["permissions"]["allow"] = serde_json::json!([])
    });
    assert!(!ok);
    assert_eq!(problems(&text).len(), 1, "{text}");
    assert!(
        text.contains("PROBLEM  no permission `mcp__session-tools` in ")
            && text.contains("fix: host-shim setup claude --state-dir "),
        "{text}"
    );
    // No Stop hook.
    let (_, text) = home.doctor_with_broken("claude", settings, |s| {
        s["hooks"].as_object_mut().unwrap().remove("Stop");
    });
    host_shim_testkit::has(&text, "no `host-shim claude-hook` hook on Stop in ");
    // A server whose binary moved away.
    let (ok, text) = home.doctor_with_broken("claude", ".claude.json", |c| {
        c["mcpServers"]["session-tools"]["command"] = "/gone/host-shim".into();
    });
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

host_shim_testkit::tests![
    a_sound_claude_set_up_has_nothing_wrong_and_the_tested_version,
    each_broken_claude_part_is_named_with_its_fix,
];
