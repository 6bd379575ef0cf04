//! `host-shim setup codex` on scratch homes: what it writes, that a second run changes
//! nothing, that `--remove` gives the person's files back byte for byte, that the dry
//! run writes nothing, and that a broken file stops it before anything is written.
//! (The real Codex running with what it writes: `suite/suite.py`.)

use host_shim_testkit::command::{binary, files, json, ok, read};
use std::path::{Path, PathBuf};
use std::process::Output;

fn scratch(name: &str) -> PathBuf {
    host_shim_testkit::command::scratch("setup-codex", name)
}

fn setup_codex(home: &Path, codex_home: &Path, extra: &[&str]) -> Output {
    host_shim_testkit::command::in_home(home)
        .args(["setup", "codex"])
        .args(extra)
        .env("CODEX_HOME", codex_home)
        .output()
        .unwrap()
}

fn codex_gets_its_server_and_hooks_once_and_gives_them_back() {
    let home = scratch("codex-fresh");
    let codex = home.join("codex-home");
    let said = ok(&setup_codex(&home, &codex, &[]));
    host_shim_testkit::has(&said, "Codex is set up");
    host_shim_testkit::has(&said, "Hooks need review");
    let config = read(&codex.join("config.toml"));
    assert_eq!(
        config,
        format!(
            "[mcp_servers.session-tools]\ncommand = \"{}\"\nargs = [\"mcp\", \"--codex-home\", \"{}\"]\n",
            binary(),
            codex.display()
        )
    );
    let hooks = json(&codex.join("hooks.json"));
    for event in ["SessionStart", "UserPromptSubmit", "Stop"] {
        assert_eq!(
            hooks["hooks"][event][0]["hooks"][0]["command"],
            format!("{} codex-hook", binary()),
            "{event}"
        );
    }
    // Before each apply_patch, the pre-write hook with the server's flags.
    let writing = &hooks["hooks"]["PreToolUse"][0];
    assert_eq!(writing["matcher"], "apply_patch");
    assert_eq!(
        writing["hooks"][0]["command"],
        format!(
            "{} codex-write-hook --codex-home {}",
            binary(),
            codex.display()
        )
    );
    let before = files(&home);
    assert!(ok(&setup_codex(&home, &codex, &[])).contains("set up already: nothing changed"));
    assert_eq!(files(&home), before);
    ok(&setup_codex(&home, &codex, &["--remove"]));
    assert_eq!(files(&home), vec![]);
}

fn codexs_config_keeps_its_comments_and_order_and_comes_back_byte_for_byte() {
    let home = scratch("codex-existing");
    let codex = home.join(".codex");
    std::fs::create_dir_all(&codex).unwrap();
    let config = "# mine\nmodel = \"gpt-5\" # the one I like\n\n[mcp_servers.github]\ncommand = \"gh-mcp\"\n\n[projects.\"/home/ada/shop\"]\ntrust_level = \"trusted\"\n";
    let hooks = "{\n  \"hooks\": {\n    \"Stop\": [\n      {\n        \"hooks\": [\n          {\n            \"type\": \"command\",\n            \"command\": \"notify-send done\"\n          }\n        ]\n      }\n    ]\n  }\n}\n";
    std::fs::write(codex.join("config.toml"), config).unwrap();
    std::fs::write(codex.join("hooks.json"), hooks).unwrap();
    let before = files(&home);
    // HOME's .codex, as Codex finds it without CODEX_HOME.
    let run = |extra: &[&str]| {
        host_shim_testkit::command::in_home(&home)
            .args(["setup", "codex", "--state-dir", "/srv/state"])
            .args(extra)
            .output()
            .unwrap()
    };
    ok(&run(&[]));
    // The server beside the person's other server; every other line as it was.
    let server = format!(
        "[mcp_servers.session-tools]\ncommand = \"{}\"\nargs = [\"mcp\", \"--codex-home\", \"{}\", \"--state-dir\", \"/srv/state\"]\n\n",
        binary(),
        codex.display()
    );
    let expected = config.replace("[projects.", &format!("{server}[projects."));
    assert_eq!(read(&codex.join("config.toml")), expected);
    let stop = json(&codex.join("hooks.json"))["hooks"]["Stop"].clone();
    assert_eq!(stop[0]["hooks"][0]["command"], "notify-send done");
    assert_eq!(
        stop[1]["hooks"][0]["command"],
        format!("{} codex-hook --state-dir /srv/state", binary())
    );
    ok(&run(&["--remove"]));
    assert_eq!(files(&home), before);
}

fn a_broken_codex_config_is_named_and_nothing_is_written() {
    let home = scratch("codex-broken");
    let codex = home.join("codex-home");
    std::fs::create_dir_all(&codex).unwrap();
    std::fs::write(codex.join("config.toml"), "model = \n").unwrap();
    let err = host_shim_testkit::command::failed(&setup_codex(&home, &codex, &[]));
    host_shim_testkit::has(&err, "config.toml is not valid TOML");
    host_shim_testkit::has(&err, "nothing was changed");
    assert!(!codex.join("hooks.json").exists());
    std::fs::write(codex.join("config.toml"), "mcp_servers = 3\n").unwrap();
    let err = String::from_utf8(setup_codex(&home, &codex, &[]).stderr).unwrap();
    host_shim_testkit::has(&err, "\"mcp_servers\" in ");
    host_shim_testkit::has(&err, "is not a table");
}

host_shim_testkit::tests![
    codex_gets_its_server_and_hooks_once_and_gives_them_back,
    codexs_config_keeps_its_comments_and_order_and_comes_back_byte_for_byte,
    a_broken_codex_config_is_named_and_nothing_is_written,
];
