//! What the command does with the toy: each command over its profile, run as a person
//! and a harness would run it. This test binary is the command over every harness of
//! the command's list and the toy (`host_shim_testkit::tests!`), so the toy is added as
//! its folder alone: nothing else of the command or its tests is edited for it.

use std::path::{Path, PathBuf};

/// The command in a home of one test's own.
struct Command {
    home: PathBuf,
}

impl Command {
    fn new(name: &str) -> Command {
        Command {
            home: host_shim_testkit::command::scratch("toy", name),
        }
    }

    /// `host-shim ARGS…` with `stdin`: whether it succeeded, its stdout and stderr.
    fn run(&self, args: &[&str], stdin: &str) -> (bool, String, String) {
        self.run_with(args, stdin, &[])
    }

    /// As [`Command::run`], with `env` set besides.
    fn run_with(&self, args: &[&str], stdin: &str, env: &[(&str, &str)]) -> (bool, String, String) {
        let mut command = host_shim_testkit::command::in_home(&self.home);
        command.args(args).envs(env.iter().copied());
        let output = host_shim_testkit::command::output_with_stdin(&mut command, stdin);
        let text = |bytes: Vec<u8>| String::from_utf8(bytes).unwrap();
        (
            output.status.success(),
            text(output.stdout),
            text(output.stderr),
        )
    }

    /// A folder of this home's.
    fn folder(&self, name: &str) -> PathBuf {
        let path = self.home.join(name);
        std::fs::create_dir_all(&path).unwrap();
        path
    }

    fn text(path: &Path) -> String {
        std::fs::read_to_string(path).unwrap()
    }
}

/// The toy's own tests, then what every profile must hold, over the toy.
fn main() -> std::process::ExitCode {
    let mut tests = host_shim_testkit::named![
        help_names_the_toy,
        a_message_to_a_toy_session_waits_for_its_hook,
        the_toy_client_names_the_caller,
        setup_writes_the_toy_s_file_and_doctor_checks_its_server,
        setup_and_doctor_name_a_command_that_does_not_last_or_is_another_version,
    ];
    tests.extend(host_shim_testkit::profiles::checks(&host_shim_toy::Toy));
    host_shim_testkit::command::main(&[&host_shim_toy::Toy], tests)
}

/// A folder of two toy sessions, `a` and `b`.
fn sessions(command: &Command) -> String {
    let folder = command.folder("sessions");
    std::fs::write(
        folder.join("a.txt"),
        "Plan the garden\nWhat grows in shade?\n",
    )
    .unwrap();
    std::fs::write(folder.join("b.txt"), "Order the seeds\nTomatoes, basil.\n").unwrap();
    folder.to_str().unwrap().to_string()
}

fn help_names_the_toy() {
    let command = &Command::new("help_names_the_toy");
    let (ok, help, _) = command.run(&["--help"], "");
    assert!(
        ok && help.contains("toy-hook")
            && help.contains("Codex, OpenCode, GitHub Copilot CLI, Gemini CLI, OpenClaw and Toy"),
        "{help}"
    );
    let (_, setup, _) = command.run(&["setup", "--help"], "");
    host_shim_testkit::has(
        &setup,
        "gemini (Gemini CLI), openclaw (OpenClaw) or toy (Toy)",
    );
    host_shim_testkit::has(&setup, "--toy-config <DIR>");
}

fn a_message_to_a_toy_session_waits_for_its_hook() {
    let command = &Command::new("a_message_to_a_toy_session_waits_for_its_hook");
    let sessions = sessions(command);
    let over_toy = ["--toy-sessions", &sessions, "--caller", "a"];
    let call = |tool: &str, arguments: &str| {
        let (ok, out, err) = command.run(&[&["call", tool, arguments][..], &over_toy].concat(), "");
        assert!(ok, "{err}");
        out
    };
    let list = call("sessions_list", r#"{"scope": "all"}"#);
    host_shim_testkit::has(&list, "- b [cold, top-level] | cwd=/toy\n  Order the seeds");
    host_shim_testkit::has(&list, "- a [cold, top-level] | cwd=/toy | this session");
    let read = call("sessions_read", r#"{"session_id": "b"}"#);
    host_shim_testkit::has(&read, "Tomatoes, basil.");
    // With its call's id, so the message names its sender (and counts as the caller's).
    let send = r#"{"session_id": "b", "message": "Plant the basil by the tomatoes."}"#;
    let (ok, sent, err) = command.run(
        &[
            &["call", "sessions_send", send, "--call-id", "toy-1"][..],
            &over_toy,
        ]
        .concat(),
        "",
    );
    assert!(ok, "{err}");
    assert!(sent.starts_with("accepted for b | mode=queue"), "{sent}");
    // The toy's hook offers it; offered, it is not offered again, and it waits until
    // the session's record shows it.
    let record = Path::new(&sessions).join("b.given");
    let input = serde_json::json!({"session": "b", "record": record}).to_string();
    let (ok, given, err) = command.run(&["toy-hook"], &input);
    assert!(
        ok && given.contains("Plant the basil by the tomatoes."),
        "{given}{err}"
    );
    let (ok, out, _) = command.run(&["toy-hook"], &input);
    assert!(ok && out.is_empty(), "{out}");
    let read = call("sessions_read", r#"{"session_id": "b"}"#);
    host_shim_testkit::has(&read, "your messages to it: 1 waiting");
    // The toy took it (its record shows it): handed over at its next hook.
    std::fs::write(&record, &given).unwrap();
    let (ok, out, _) = command.run(&["toy-hook"], &input);
    assert!(ok && out.is_empty(), "{out}");
    let read = call("sessions_read", r#"{"session_id": "b"}"#);
    host_shim_testkit::has(&read, "your messages to it: 1 handed over");
    let (ok, _, err) = command.run(&["toy-hook"], "not json");
    assert!(
        !ok && err.contains(r#"the toy hook reads {"session": ID, "record": FILE} on stdin"#),
        "{err}"
    );
}

/// One `tools/call sessions_list` over MCP, `meta` its `_meta`: the listing's text.
fn listed_over_mcp(command: &Command, meta: &str, env: &[(&str, &str)]) -> String {
    let sessions = sessions(command);
    let lines = [
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"toy","version":"1"}}}"#.to_string(),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_string(),
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"sessions_list","arguments":{{"scope":"all"}},"_meta":{meta}}}}}"#
        ),
    ];
    let (ok, out, err) = command.run_with(
        &["mcp", "--toy-sessions", &sessions],
        &(lines.join("\n") + "\n"),
        env,
    );
    assert!(ok, "{err}");
    let answer = (out.lines())
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .find(|message| message["id"] == 1)
        .unwrap_or_else(|| panic!("no answer to the call: {out}{err}"));
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_string()
}

fn the_toy_client_names_the_caller() {
    let command = &Command::new("the_toy_client_names_the_caller");
    let text = listed_over_mcp(command, "{}", &[("TOY_SESSION_ID", "a")]);
    host_shim_testkit::has(&text, "- a [cold, top-level] | cwd=/toy | this session");
    let text = listed_over_mcp(command, r#"{"toy/session": "b"}"#, &[]);
    host_shim_testkit::has(&text, "- b [cold, top-level] | cwd=/toy | this session");
    // Without either, the call says every way to name it, the toy's among them.
    let text = listed_over_mcp(command, "{}", &[]);
    host_shim_testkit::has(
        &text,
        r#"names it in each call's _meta["toy/session"] (the toy client does)"#,
    );
}

fn setup_writes_the_toy_s_file_and_doctor_checks_its_server() {
    let command = &Command::new("setup_writes_the_toy_s_file_and_doctor_checks_its_server");
    let state = command.home.join("state");
    let state = state.to_str().unwrap();
    let (ok, out, err) = command.run(&["setup", "toy", "--state-dir", state], "");
    assert!(
        ok && out.contains("Toy is set up: the toy's sessions have the tools (sessions_list, sessions_read, sessions_send)."),
        "{out}{err}"
    );
    let file = command.home.join(".toy/toy.json");
    let written: serde_json::Value = serde_json::from_str(&Command::text(&file)).unwrap();
    let sessions = command.home.join(".toy/sessions");
    assert_eq!(
        written["args"],
        serde_json::json!(["mcp", "--toy-sessions", sessions, "--state-dir", state]),
        "{written}"
    );
    let (ok, out, _) = command.run(&["setup", "toy", "--state-dir", state], "");
    assert!(
        ok && out.contains("Toy was set up already: nothing changed."),
        "{out}"
    );
    let (ok, out, err) = command.run(&["doctor", "--state-dir", state], "");
    assert!(ok, "{out}{err}");
    host_shim_testkit::has(&out, "Toy\n  note     Toy's command is not on PATH here");
    host_shim_testkit::has(
        &out,
        "starts and lists sessions_list, sessions_read, sessions_send",
    );
    let (ok, out, _) = command.run(&["setup", "toy", "--remove", "--state-dir", state], "");
    assert!(ok && !file.exists(), "{out}");
    // Its folder here, nothing of setup's in it: the person's choice, a note.
    let (ok, out, _) = command.run(&["doctor", "--state-dir", state], "");
    assert!(
        ok && out.contains(&format!(
            "note     Toy is here but not set up for the tools; to set it up: host-shim setup toy --state-dir {state}"
        )),
        "{out}"
    );
    // Its file there but naming no server: a problem, with the fix.
    std::fs::write(&file, "{}\n").unwrap();
    let (ok, out, _) = command.run(&["doctor", "--state-dir", state], "");
    assert!(!ok, "{out}");
    assert!(
        out.contains(&format!("PROBLEM  no server in {}", file.display()))
            && out.contains(&format!("fix: host-shim setup toy --state-dir {state}")),
        "{out}"
    );
}

/// The command a harness runs must outlast the set-up: setup says so when it writes one
/// from a Cargo build folder; doctor names one that is gone, or of another version.
fn setup_and_doctor_name_a_command_that_does_not_last_or_is_another_version() {
    let command = &Command::new("setup_and_doctor_name_a_command_that_does_not_last");
    let state = command.home.join("state");
    let state = state.to_str().unwrap();
    // This test's command is in Cargo's target/: setup writes it, and says what lasts.
    let (ok, out, err) = command.run(&["setup", "toy", "--state-dir", state], "");
    assert!(ok, "{out}{err}");
    assert!(
        out.contains("is in a Cargo build folder (")
            && out.contains("`cargo clean` or a new build removes or replaces it")
            && out.contains("npm install -g @session-tools/host-shim"),
        "{out}"
    );
    let (ok, out, _) = command.run(&["doctor", "--state-dir", state], "");
    assert!(
        ok && out.contains("note     ") && out.contains("is in a Cargo build folder"),
        "{out}"
    );

    // A server of another version: a problem naming both versions, with the fix.
    let other = command.folder("elsewhere").join("host-shim");
    std::fs::write(
        &other,
        "#!/bin/sh\nread line\n\
         echo '{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"protocolVersion\":\"2025-06-18\",\
         \"capabilities\":{},\"serverInfo\":{\"name\":\"session-tools\",\"version\":\"0.0.1\"}}}'\n\
         read line\nread line\n\
         echo '{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[{\"name\":\"sessions_list\"},\
         {\"name\":\"sessions_read\"},{\"name\":\"sessions_send\"}]}}'\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&other, std::fs::Permissions::from_mode(0o755)).unwrap();
    let other = other.to_str().unwrap();
    let (ok, out, err) = command.run(
        &["setup", "toy", "--state-dir", state, "--binary", other],
        "",
    );
    assert!(ok && !out.contains("Cargo build folder"), "{out}{err}");
    let (ok, out, _) = command.run(&["doctor", "--state-dir", state], "");
    assert!(!ok, "{out}");
    let ours = env!("CARGO_PKG_VERSION");
    assert!(
        out.contains(&format!(
            "PROBLEM  the MCP server's command {other} is host-shim 0.0.1, not this one ({ours})"
        )) && out.contains(&format!(
            "fix: host-shim setup toy --state-dir {state} (with the host-shim you mean to keep"
        )),
        "{out}"
    );

    // The command gone (a deleted checkout, a cleaned build): a problem, with the fix.
    std::fs::remove_file(other).unwrap();
    let (ok, out, _) = command.run(&["doctor", "--state-dir", state], "");
    assert!(
        !ok && out.contains(&format!(
            "PROBLEM  the MCP server's command {other} is not there (moved, deleted, or its build folder cleaned)"
        )),
        "{out}"
    );
}
