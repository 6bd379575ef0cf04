//! `host-shim doctor` over Codex's set-up broken on purpose, one mistake at a
//! time: each is found, named, and given its fix; a sound set-up has nothing wrong.

use host_shim_testkit::command::{Home, problems};

fn codex_hooks_not_yet_trusted_are_named_until_codex_trusts_them() {
    let home = Home::new("codex");
    home.setup("codex");
    let (ok, text) = home.doctor();
    assert!(!ok);
    assert!(
        text.contains(
            "Codex has not been told to trust the hook on SessionStart, UserPromptSubmit, Stop, PreToolUse"
        ) && text.contains("Trust all and continue"),
        "{text}"
    );
    // What Codex writes when its person trusts them: the hand-over hooks first, then
    // the pre-write hook too.
    let hooks = home.root.join(".codex/hooks.json");
    let config_file = home.root.join(".codex/config.toml");
    let trust = |events: &[&str]| {
        let mut config = std::fs::read_to_string(&config_file).unwrap();
        for event in events {
            config.push_str(&format!(
                "\n[hooks.state.\"{}:{event}:0:0\"]\ntrusted_hash = \"sha256:00\"\n",
                hooks.display()
            ));
        }
        std::fs::write(&config_file, config).unwrap();
    };
    trust(&["session_start", "user_prompt_submit", "stop"]);
    let (ok, text) = home.doctor();
    assert!(
        !ok && text.contains("Codex has not been told to trust the hook on PreToolUse ("),
        "{text}"
    );
    trust(&["pre_tool_use"]);
    let (ok, text) = home.doctor();
    assert!(ok && text.contains("Codex trusts the hooks"), "{text}");
}

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
    host_shim_testkit::has(
        &text,
        "Codex is here but not set up for the tools; to set it up: host-shim setup codex",
    );
    // Set up, then half taken out by hand: a problem again, with its fix.
    let (ok, text) = home.doctor_with_broken("codex", ".codex/hooks.json", |h| {
        h["hooks"].as_object_mut().unwrap().remove("Stop");
    });
    assert!(
        !ok && text.contains("no `host-shim codex-hook` hook on Stop"),
        "{text}"
    );
}

host_shim_testkit::tests![
    codex_hooks_not_yet_trusted_are_named_until_codex_trusts_them,
    a_harness_folder_never_set_up_is_a_note_not_a_problem,
];
