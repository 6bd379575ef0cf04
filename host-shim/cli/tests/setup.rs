//! `host-shim setup claude` (and `codex`, `opencode`) on scratch homes: what it writes, that a second run changes
//! nothing, that `--remove` gives the person's files back byte for byte, that the dry
//! run writes nothing, and that a broken file stops it before anything is written.
//! (The real Claude Code running with what it writes: `tests/claude_code/suite.py`.)

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Output;

mod common;

fn scratch(name: &str) -> PathBuf {
    common::scratch("setup", name)
}

fn setup(home: &Path, extra: &[&str]) -> Output {
    common::host_shim()
        .args(["setup", "claude"])
        .args(extra)
        .env("HOME", home)
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("XDG_DATA_HOME")
        .env_remove("CODEX_HOME")
        .output()
        .unwrap()
}

fn ok(output: &Output) -> String {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&read(path)).unwrap()
}

/// Every file under `dir`, setup's copies of previous bytes included, with its bytes.
fn files(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut all = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            all.extend(files(&path));
        } else {
            all.push((path.clone(), std::fs::read(&path).unwrap()));
        }
    }
    all.sort();
    all
}

fn binary() -> String {
    let path = PathBuf::from(env!("CARGO_BIN_EXE_host-shim"));
    path.canonicalize().unwrap().to_string_lossy().into_owned()
}

#[test]
fn a_fresh_home_gets_the_server_hooks_and_permission_once() {
    let home = scratch("fresh");
    let said = ok(&setup(&home, &[]));
    assert!(said.contains("Claude Code is set up"), "{said}");
    let config = json(&home.join(".claude.json"));
    assert_eq!(
        config["mcpServers"]["session-tools"],
        serde_json::json!({"type": "stdio", "command": binary(), "args": [
            "mcp", "--claude-projects", home.join(".claude/projects").to_string_lossy()],
            "env": {}})
    );
    let settings = json(&home.join(".claude/settings.json"));
    assert_eq!(
        settings["permissions"]["allow"],
        serde_json::json!(["mcp__session-tools"])
    );
    let hook = format!("{} claude-hook", binary());
    for event in ["SessionStart", "UserPromptSubmit", "PostToolUse", "Stop"] {
        let groups = settings["hooks"][event].as_array().unwrap();
        assert_eq!(groups.len(), 1, "{event}");
        assert_eq!(groups[0]["hooks"][0]["command"], hook.as_str(), "{event}");
    }
    assert_eq!(settings["hooks"]["PostToolUse"][0]["matcher"], "*");
    // Twice: nothing changes.
    let before = files(&home);
    let said = ok(&setup(&home, &[]));
    assert!(said.contains("set up already: nothing changed"), "{said}");
    assert_eq!(files(&home), before);
    // Removed: no file of setup's is left.
    let said = ok(&setup(&home, &["--remove"]));
    assert!(said.contains("removed: "), "{said}");
    assert_eq!(files(&home), vec![]);
}

#[test]
fn a_persons_files_keep_everything_else_and_come_back_byte_for_byte() {
    let home = scratch("existing");
    // As Claude Code writes them (two-space JSON, no last newline) and a person's own.
    let config = "{\n  \"numStartups\": 7,\n  \"mcpServers\": {\n    \"github\": {\n      \"type\": \"stdio\",\n      \"command\": \"gh-mcp\",\n      \"args\": [],\n      \"env\": {}\n    }\n  },\n  \"projects\": {}\n}";
    let settings = "{\n    \"model\": \"opus\",\n    \"permissions\": {\n        \"allow\": [\n            \"Bash(npm test)\"\n        ],\n        \"deny\": []\n    },\n    \"hooks\": {\n        \"Stop\": [\n            {\n                \"hooks\": [\n                    {\n                        \"type\": \"command\",\n                        \"command\": \"notify-send done\"\n                    }\n                ]\n            }\n        ]\n    }\n}\n";
    std::fs::write(home.join(".claude.json"), config).unwrap();
    std::fs::set_permissions(
        home.join(".claude.json"),
        std::fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    std::fs::write(home.join(".claude/settings.json"), settings).unwrap();
    let before = files(&home);
    ok(&setup(&home, &[]));
    // Everything else kept, in its order; the file's mode and indent kept.
    let written = read(&home.join(".claude.json"));
    assert!(
        written.starts_with("{\n  \"numStartups\": 7,\n  \"mcpServers\": {\n    \"github\""),
        "{written}"
    );
    assert!(!written.ends_with('\n'));
    let mode = std::fs::metadata(home.join(".claude.json"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    let settings_now = json(&home.join(".claude/settings.json"));
    assert_eq!(
        settings_now["permissions"]["allow"],
        serde_json::json!(["Bash(npm test)", "mcp__session-tools"])
    );
    let stop = settings_now["hooks"]["Stop"].as_array().unwrap();
    assert_eq!(stop.len(), 2);
    assert_eq!(stop[0]["hooks"][0]["command"], "notify-send done");
    assert!(read(&home.join(".claude/settings.json")).contains("\n    \"model\": \"opus\""));
    // The previous bytes beside each file.
    assert_eq!(
        read(&home.join(".claude.json.before-session-tools")),
        config
    );
    // Removed: byte for byte what the person had, file for file: setup's copies of
    // the previous bytes go with its entries.
    let said = ok(&setup(&home, &["--remove"]));
    assert!(said.contains("(setup's entries taken out)"), "{said}");
    assert_eq!(files(&home), before);
}

#[test]
fn a_moved_binary_replaces_its_old_entries_in_place() {
    let home = scratch("moved");
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    let old = serde_json::json!({"hooks": {"Stop": [
        {"hooks": [{"type": "command", "command": "/old/place/host-shim claude-hook"}]},
        {"hooks": [{"type": "command", "command": "say stopped"}]},
        {"hooks": [{"type": "command", "command": "/older/host-shim claude-hook --state-dir /s"}]}
    ]}});
    std::fs::write(home.join(".claude/settings.json"), old.to_string()).unwrap();
    ok(&setup(&home, &[]));
    let stop = json(&home.join(".claude/settings.json"))["hooks"]["Stop"].clone();
    let commands: Vec<&str> = (stop.as_array().unwrap().iter())
        .map(|g| g["hooks"][0]["command"].as_str().unwrap())
        .collect();
    assert_eq!(
        commands,
        [format!("{} claude-hook", binary()).as_str(), "say stopped"]
    );
}

#[test]
fn a_dry_run_prints_the_diff_and_writes_nothing() {
    let home = scratch("dry");
    let said = ok(&setup(
        &home,
        &["--dry-run", "--state-dir", "/srv/agents state"],
    ));
    assert!(said.contains("--- /dev/null\n+++ "), "{said}");
    assert!(said.contains("+      \"mcp__session-tools\""), "{said}");
    // A state folder with a space reaches the hook quoted for the shell.
    assert!(
        said.contains("claude-hook --state-dir '/srv/agents state'"),
        "{said}"
    );
    assert!(
        said.contains("\"--state-dir\",\n+        \"/srv/agents state\""),
        "{said}"
    );
    assert_eq!(files(&home), vec![]);
}

#[test]
fn a_broken_file_is_named_and_nothing_is_written() {
    let home = scratch("broken");
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    std::fs::write(home.join(".claude/settings.json"), "{\"model\": \"opus\",}").unwrap();
    let before = files(&home);
    let output = setup(&home, &[]);
    assert!(!output.status.success());
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(
        err.contains(".claude/settings.json is not valid JSON")
            && err.contains("nothing was changed. Fix or move it, then run setup again"),
        "{err}"
    );
    assert_eq!(files(&home), before, ".claude.json was not written either");
    // A key of the wrong kind is named too.
    std::fs::write(home.join(".claude/settings.json"), r#"{"hooks": []}"#).unwrap();
    let err = String::from_utf8(setup(&home, &[]).stderr).unwrap();
    assert!(
        err.contains("\"hooks\" in ") && err.contains("is not a JSON object"),
        "{err}"
    );
}

#[test]
fn claude_config_dir_keeps_both_files_in_that_folder() {
    let home = scratch("config-dir");
    let config_dir = home.join("elsewhere");
    let output = common::host_shim()
        .args(["setup", "claude"])
        .env("HOME", &home)
        .env("CLAUDE_CONFIG_DIR", &config_dir)
        .output()
        .unwrap();
    ok(&output);
    assert!(config_dir.join(".claude.json").exists());
    assert!(config_dir.join("settings.json").exists());
    assert!(!home.join(".claude.json").exists());
    assert_eq!(
        json(&config_dir.join(".claude.json"))["mcpServers"]["session-tools"]["args"][2],
        config_dir.join("projects").to_string_lossy().as_ref()
    );
}

fn setup_codex(home: &Path, codex_home: &Path, extra: &[&str]) -> Output {
    common::host_shim()
        .args(["setup", "codex"])
        .args(extra)
        .env("HOME", home)
        .env("CODEX_HOME", codex_home)
        .output()
        .unwrap()
}

#[test]
fn codex_gets_its_server_and_hooks_once_and_gives_them_back() {
    let home = scratch("codex-fresh");
    let codex = home.join("codex-home");
    let said = ok(&setup_codex(&home, &codex, &[]));
    assert!(
        said.contains("Codex is set up") && said.contains("Hooks need review"),
        "{said}"
    );
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
    let before = files(&home);
    assert!(ok(&setup_codex(&home, &codex, &[])).contains("set up already: nothing changed"));
    assert_eq!(files(&home), before);
    ok(&setup_codex(&home, &codex, &["--remove"]));
    assert_eq!(files(&home), vec![]);
}

#[test]
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
        common::host_shim()
            .args(["setup", "codex", "--state-dir", "/srv/state"])
            .args(extra)
            .env("HOME", &home)
            .env_remove("CODEX_HOME")
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

#[test]
fn a_broken_codex_config_is_named_and_nothing_is_written() {
    let home = scratch("codex-broken");
    let codex = home.join("codex-home");
    std::fs::create_dir_all(&codex).unwrap();
    std::fs::write(codex.join("config.toml"), "model = \n").unwrap();
    let output = setup_codex(&home, &codex, &[]);
    assert!(!output.status.success());
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(
        err.contains("config.toml is not valid TOML") && err.contains("nothing was changed"),
        "{err}"
    );
    assert!(!codex.join("hooks.json").exists());
    std::fs::write(codex.join("config.toml"), "mcp_servers = 3\n").unwrap();
    let err = String::from_utf8(setup_codex(&home, &codex, &[]).stderr).unwrap();
    assert!(
        err.contains("\"mcp_servers\" in ") && err.contains("is not a table"),
        "{err}"
    );
}

fn setup_opencode(home: &Path, extra: &[&str]) -> Output {
    common::host_shim()
        .args(["setup", "opencode"])
        .args(extra)
        .env("HOME", home)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_DATA_HOME")
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("CODEX_HOME")
        .output()
        .unwrap()
}

/// The command and arguments the OpenCode plugin file runs.
fn plugin_host(home: &Path) -> serde_json::Value {
    let file = read(&home.join(".config/opencode/plugin/session-tools.js"));
    let line = file
        .lines()
        .find_map(|line| line.strip_prefix("const HOST = "))
        .expect("the plugin file names its host");
    serde_json::from_str(line.trim_end_matches(';')).unwrap()
}

#[test]
fn opencode_gets_its_plugin_file_once_and_gives_it_back() {
    let home = scratch("opencode");
    let said = ok(&setup_opencode(&home, &[]));
    assert!(said.contains("OpenCode is set up"), "{said}");
    let db = home.join(".local/share/opencode/opencode.db");
    assert_eq!(
        plugin_host(&home),
        serde_json::json!({"command": binary(), "args": ["mcp", "--opencode-db", db.to_string_lossy()]})
    );
    let before = files(&home);
    let said = ok(&setup_opencode(&home, &[]));
    assert!(said.contains("set up already: nothing changed"), "{said}");
    assert_eq!(files(&home), before);
    ok(&setup_opencode(&home, &["--remove"]));
    assert_eq!(files(&home), vec![]);
    // The plugin folder setup made for the file goes with it; OpenCode's own stays.
    assert!(!home.join(".config/opencode/plugin").exists());
    assert!(home.join(".config/opencode").is_dir());
    // A file of that name that is not setup's is named and left alone.
    let plugin = home.join(".config/opencode/plugin/session-tools.js");
    std::fs::create_dir_all(plugin.parent().unwrap()).unwrap();
    std::fs::write(&plugin, "export const Mine = async () => ({});\n").unwrap();
    let refused = setup_opencode(&home, &[]);
    assert!(!refused.status.success());
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(said.contains("is not setup's file"), "{said}");
    assert_eq!(read(&plugin), "export const Mine = async () => ({});\n");
}

#[test]
fn setup_links_every_harness_it_finds_into_one_listing() {
    let home = scratch("linked");
    std::fs::create_dir_all(home.join(".claude/projects")).unwrap();
    std::fs::create_dir_all(home.join(".codex")).unwrap();
    let db = home.join(".local/share/opencode/opencode.db");
    std::fs::create_dir_all(db.parent().unwrap()).unwrap();
    std::fs::write(&db, "").unwrap();
    let all = serde_json::json!([
        "mcp",
        "--claude-projects",
        home.join(".claude/projects").to_string_lossy(),
        "--codex-home",
        home.join(".codex").to_string_lossy(),
        "--opencode-db",
        db.to_string_lossy(),
    ]);
    ok(&setup_opencode(&home, &[]));
    assert_eq!(plugin_host(&home)["args"], all);
    let claude = common::host_shim()
        .args(["setup", "claude"])
        .env("HOME", &home)
        .env_remove("XDG_DATA_HOME")
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("CODEX_HOME")
        .output()
        .unwrap();
    ok(&claude);
    let config = json(&home.join(".claude.json"));
    assert_eq!(config["mcpServers"]["session-tools"]["args"], all);
}

#[test]
fn opencode_s_wake_command_goes_into_the_plugin_file_checked() {
    let home = scratch("opencode-wake");
    let wake = "opencode run --session {id} 'A message is waiting.'";
    ok(&setup_opencode(&home, &["--opencode-wake-command", wake]));
    let args = plugin_host(&home)["args"].clone();
    let args: Vec<&str> = args
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(args[args.len() - 2..], ["--opencode-wake-command", wake]);
    let bad = setup_opencode(
        &home,
        &["--opencode-wake-command", "opencode run {session}"],
    );
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("is not a placeholder"));
    let other = setup(&home, &["--opencode-wake-command", wake]);
    assert!(!other.status.success());
    assert!(String::from_utf8_lossy(&other.stderr).contains("is for `host-shim setup opencode`"));
}

fn setup_copilot(home: &Path, extra: &[&str]) -> Output {
    common::host_shim()
        .args(["setup", "copilot"])
        .args(extra)
        .env("HOME", home)
        .env_remove("COPILOT_HOME")
        .env_remove("XDG_DATA_HOME")
        .env_remove("CODEX_HOME")
        .env_remove("CLAUDE_CONFIG_DIR")
        .output()
        .unwrap()
}

#[test]
fn copilot_gets_its_server_and_hooks_once_keeps_the_rest_and_gives_them_back() {
    let home = scratch("copilot");
    let config = home.join(".copilot/mcp-config.json");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    // As a person's own server reads, two-space JSON.
    let mine = "{\n  \"mcpServers\": {\n    \"mine\": {\n      \"type\": \"local\",\n      \"command\": \"my-server\",\n      \"args\": [],\n      \"tools\": [\n        \"*\"\n      ]\n    }\n  }\n}\n";
    std::fs::write(&config, mine).unwrap();
    let before = files(&home);
    let said = ok(&setup_copilot(&home, &[]));
    assert!(said.contains("GitHub Copilot CLI is set up"), "{said}");
    let servers = &json(&config)["mcpServers"];
    assert_eq!(servers["mine"]["command"], "my-server");
    let ours = &servers["session-tools"];
    assert_eq!(ours["type"], "local");
    assert_eq!(ours["command"], binary());
    assert_eq!(ours["tools"], serde_json::json!(["*"]));
    let args = ours["args"].as_array().unwrap();
    assert_eq!(args[0], "mcp");
    assert!(
        args.windows(2).any(|w| w[0] == "--copilot-home"
            && w[1] == home.join(".copilot").to_string_lossy().as_ref()),
        "{args:?}"
    );
    let hooks = json(&home.join(".copilot/hooks/session-tools.json"));
    assert_eq!(hooks["version"], 1);
    for event in [
        "sessionStart",
        "userPromptSubmitted",
        "preMcpToolCall",
        "postToolUse",
        "agentStop",
    ] {
        let bash = hooks["hooks"][event][0]["bash"].as_str().unwrap();
        assert!(bash.ends_with(" copilot-hook"), "{event}: {bash}");
    }
    // An earlier setup's hooks file (no preMcpToolCall) is setup's own: brought up to
    // this version's.
    let hooks_path = home.join(".copilot/hooks/session-tools.json");
    let mut earlier = hooks.clone();
    earlier["hooks"]
        .as_object_mut()
        .unwrap()
        .remove("preMcpToolCall");
    std::fs::write(&hooks_path, serde_json::to_string_pretty(&earlier).unwrap()).unwrap();
    ok(&setup_copilot(&home, &[]));
    assert_eq!(json(&hooks_path), hooks);
    // Again: nothing changes.
    let set_up = files(&home);
    let said = ok(&setup_copilot(&home, &[]));
    assert!(said.contains("set up already: nothing changed"), "{said}");
    assert_eq!(files(&home), set_up);
    // Removed: the person's files as they were, byte for byte, file for file.
    ok(&setup_copilot(&home, &["--remove"]));
    assert_eq!(files(&home), before);
    assert!(!home.join(".copilot/hooks").exists());
    // A hooks file of that name that is not setup's is named and left alone.
    let other = home.join(".copilot/hooks/session-tools.json");
    std::fs::create_dir_all(other.parent().unwrap()).unwrap();
    std::fs::write(&other, "{\"version\": 1, \"hooks\": {}}\n").unwrap();
    let refused = setup_copilot(&home, &[]);
    assert!(!refused.status.success());
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(said.contains("is not setup's hooks file"), "{said}");
    assert_eq!(read(&other), "{\"version\": 1, \"hooks\": {}}\n");
    assert_eq!(read(&config), mine);
}

fn setup_gemini(home: &Path, extra: &[&str]) -> Output {
    common::host_shim()
        .args(["setup", "gemini"])
        .args(extra)
        .env("HOME", home)
        .env_remove("GEMINI_CLI_HOME")
        .env_remove("COPILOT_HOME")
        .env_remove("XDG_DATA_HOME")
        .env_remove("CODEX_HOME")
        .env_remove("CLAUDE_CONFIG_DIR")
        .output()
        .unwrap()
}

#[test]
fn gemini_gets_its_trusted_server_and_hooks_once_keeps_the_rest_and_gives_them_back() {
    let home = scratch("gemini");
    let settings = home.join(".gemini/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    // As a person's settings read: their auth, a server and a hook of their own.
    let mine = "{\n  \"security\": {\n    \"auth\": {\n      \"selectedType\": \"gemini-api-key\"\n    }\n  },\n  \"mcpServers\": {\n    \"mine\": {\n      \"command\": \"my-server\"\n    }\n  },\n  \"hooks\": {\n    \"BeforeTool\": [\n      {\n        \"matcher\": \"run_shell_command\",\n        \"hooks\": [\n          {\n            \"type\": \"command\",\n            \"command\": \"my-check\"\n          }\n        ]\n      }\n    ]\n  }\n}\n";
    std::fs::write(&settings, mine).unwrap();
    let before = files(&home);
    let said = ok(&setup_gemini(&home, &[]));
    assert!(said.contains("Gemini CLI is set up"), "{said}");
    assert!(said.contains("GEMINI_CLI_TRUST_WORKSPACE=true"), "{said}");
    let written = json(&settings);
    assert_eq!(
        written["security"]["auth"]["selectedType"],
        "gemini-api-key"
    );
    assert_eq!(written["mcpServers"]["mine"]["command"], "my-server");
    let ours = &written["mcpServers"]["session-tools"];
    assert_eq!(ours["command"], binary());
    assert_eq!(ours["trust"], true);
    let args = ours["args"].as_array().unwrap();
    assert!(
        args.windows(2)
            .any(|w| w[0] == "--gemini-home"
                && w[1] == home.join(".gemini").to_string_lossy().as_ref()),
        "{args:?}"
    );
    let hooks = &written["hooks"];
    assert_eq!(hooks["BeforeTool"][0]["hooks"][0]["command"], "my-check");
    assert_eq!(hooks["BeforeTool"][1]["matcher"], "mcp_session-tools_.*");
    for event in [
        "SessionStart",
        "BeforeAgent",
        "BeforeTool",
        "AfterTool",
        "AfterAgent",
    ] {
        let groups = hooks[event].as_array().unwrap();
        let command = groups.last().unwrap()["hooks"][0]["command"]
            .as_str()
            .unwrap();
        assert!(command.contains(" gemini-hook"), "{event}: {command}");
    }
    // Again: nothing changes.
    let set_up = files(&home);
    let said = ok(&setup_gemini(&home, &[]));
    assert!(said.contains("set up already: nothing changed"), "{said}");
    assert_eq!(files(&home), set_up);
    // Removed: the person's file as it was, byte for byte.
    ok(&setup_gemini(&home, &["--remove"]));
    assert_eq!(files(&home), before);
    assert_eq!(read(&settings), mine);
}

fn setup_openclaw(home: &Path, extra: &[&str]) -> Output {
    common::host_shim()
        .args(["setup", "openclaw"])
        .args(extra)
        .env("HOME", home)
        .env_remove("OPENCLAW_STATE_DIR")
        .env_remove("OPENCLAW_CONFIG_PATH")
        .env_remove("GEMINI_CLI_HOME")
        .env_remove("COPILOT_HOME")
        .env_remove("XDG_DATA_HOME")
        .env_remove("CODEX_HOME")
        .env_remove("CLAUDE_CONFIG_DIR")
        .output()
        .unwrap()
}

#[test]
fn openclaw_gets_its_plugin_and_entry_once_keeps_the_rest_and_gives_them_back() {
    let home = scratch("openclaw");
    // Before OpenClaw's own onboarding wrote its config: refused, nothing written.
    let refused = setup_openclaw(&home, &[]);
    assert!(!refused.status.success());
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(said.contains("run `openclaw onboard`"), "{said}");
    assert!(!home.join(".openclaw").exists());
    let config = home.join(".openclaw/openclaw.json");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    // As a person's config reads: a model and a plugin of their own.
    let mine = "{\n  \"agents\": {\n    \"defaults\": {\n      \"model\": {\n        \"primary\": \"openai/gpt-5\"\n      }\n    }\n  },\n  \"plugins\": {\n    \"entries\": {\n      \"mine\": {\n        \"enabled\": true\n      }\n    }\n  }\n}\n";
    std::fs::write(&config, mine).unwrap();
    let before = files(&home);
    let said = ok(&setup_openclaw(&home, &[]));
    assert!(said.contains("OpenClaw is set up"), "{said}");
    assert!(said.contains("session-tools__sessions_list"), "{said}");
    let written = json(&config);
    assert_eq!(
        written["agents"]["defaults"]["model"]["primary"],
        "openai/gpt-5"
    );
    assert_eq!(written["plugins"]["entries"]["mine"]["enabled"], true);
    let ours = &written["plugins"]["entries"]["session-tools"];
    assert_eq!(ours["enabled"], true);
    assert_eq!(ours["hooks"]["allowConversationAccess"], true);
    assert_eq!(ours["config"]["command"], binary());
    let args = ours["config"]["args"].as_array().unwrap();
    assert_eq!(args[0], "mcp");
    assert!(
        args.windows(2).any(|w| w[0] == "--openclaw-state"
            && w[1] == home.join(".openclaw").to_string_lossy().as_ref()),
        "{args:?}"
    );
    // The plugin package, where `openclaw plugins install <folder>` would copy it.
    let plugin = home.join(".openclaw/extensions/session-tools");
    let manifest = json(&plugin.join("openclaw.plugin.json"));
    assert_eq!(manifest["id"], "session-tools");
    assert_eq!(
        manifest["contracts"]["tools"],
        serde_json::json!([
            "session-tools__sessions_list",
            "session-tools__sessions_read",
            "session-tools__sessions_send"
        ])
    );
    assert_eq!(
        json(&plugin.join("package.json"))["openclaw"]["extensions"][0],
        "./index.js"
    );
    assert!(read(&plugin.join("index.js")).starts_with("// session-tools for OpenClaw:"));
    // With a wake command: in the command the plugin runs, which takes it.
    let wake = "openclaw agent --session-id {id} --message 'A message is waiting.'";
    ok(&setup_openclaw(&home, &["--openclaw-wake-command", wake]));
    let host = json(&config)["plugins"]["entries"]["session-tools"]["config"].clone();
    let args: Vec<&str> = (host["args"].as_array().unwrap().iter())
        .map(|a| a.as_str().unwrap())
        .collect();
    assert!(
        args.windows(2)
            .any(|w| w == ["--openclaw-wake-command", wake]),
        "{args:?}"
    );
    let started = std::process::Command::new(host["command"].as_str().unwrap())
        .args(&args)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&started.stderr);
    assert!(said.contains("3 tools over stdio"), "{said}");
    ok(&setup_openclaw(&home, &[]));
    // Again: nothing changes.
    let set_up = files(&home);
    let said = ok(&setup_openclaw(&home, &[]));
    assert!(said.contains("set up already: nothing changed"), "{said}");
    assert_eq!(files(&home), set_up);
    // Removed: the person's files as they were, byte for byte, and no plugin folder.
    ok(&setup_openclaw(&home, &["--remove"]));
    assert_eq!(files(&home), before);
    assert_eq!(read(&config), mine);
    assert!(!plugin.exists());
    // A plugin of that name that is not setup's is named and left alone.
    std::fs::create_dir_all(&plugin).unwrap();
    std::fs::write(plugin.join("index.js"), "export default {};\n").unwrap();
    let refused = setup_openclaw(&home, &[]);
    assert!(!refused.status.success());
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(said.contains("is not setup's"), "{said}");
    assert_eq!(read(&plugin.join("index.js")), "export default {};\n");
    assert_eq!(read(&config), mine);
}
