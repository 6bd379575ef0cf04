//! The CLI as a user meets it: exit codes, stdout, stderr and the files it writes.

mod common;

use std::path::PathBuf;
use std::process::Output;

fn host_shim(args: &[&str]) -> Output {
    // The compiled-plugin cache goes to a scratch directory, not the user's.
    common::host_shim()
        .env("XDG_CACHE_HOME", scratch("cache"))
        .args(args)
        .output()
        .expect("host-shim runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).unwrap()
}

fn scratch(name: &str) -> PathBuf {
    let dir = host_shim_testkit::temp_folder("cli");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

#[test]
fn the_demo_is_the_default_and_tours_the_tools() {
    let output = host_shim(&[]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    for expected in [
        "Catalog (4 tools,",
        "$ sessions_list {}",
        "considered sessions",
        "$ sessions_read",
        "…[truncated",
        "accepted for session-4b91c0de-7a3f-4c55-b2e8-93d1f0a6c7e1 | mode=queue",
        "sessions_send refused (not-messageable)",
        "invalid arguments: limit must be an integer from 1 to 200 (got 500)",
    ] {
        assert!(text.contains(expected), "demo lacks {expected:?}:\n{text}");
    }
    assert!(text.starts_with("Loaded plugin.wasm ("), "{text}");
    // `demo` is the same tour, now from the compiled-component cache; only the first
    // line (load time and kind) differs.
    let again = stdout(&host_shim(&["demo"]));
    assert_eq!(
        again.split_once('\n').unwrap().1,
        text.split_once('\n').unwrap().1
    );
}

#[test]
fn call_prints_the_tool_text_and_a_refusal_exits_zero() {
    let output = host_shim(&["call", "sessions_list", r#"{"limit": 1}"#]);
    assert!(output.status.success());
    assert_eq!(
        stdout(&output),
        "- session-e218a09e-8736-4483-9a04-2bf13608630c [cold, top-level] | cwd=/Users/example/.dsh | preset=standard\n  Fix the newapi reasoning-effort config\n\n1 of 5 considered sessions\nTop-level sessions are messageable with sessions_send; subagent sessions are not.\n"
    );
    let output = host_shim(&["call", "sessions_read", r#"{"session_id": "nope"}"#]);
    assert!(output.status.success());
    assert!(stdout(&output).starts_with("sessions_read refused (not-found)"));
}

#[test]
fn deliveries_and_stats_are_written_on_request() {
    let deliveries = scratch("deliveries.json");
    let output = host_shim(&[
        "call",
        "sessions_send",
        r#"{"session_id": "session-4b91c0de-7a3f-4c55-b2e8-93d1f0a6c7e1", "message": "hi", "mode": "steer"}"#,
        "--deliveries",
        deliveries.to_str().unwrap(),
        "--stats",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&deliveries).unwrap()).unwrap();
    let list = written.as_array().unwrap();
    assert_eq!(list.len(), 1);
    assert_eq!(
        list[0]["target"],
        "session-4b91c0de-7a3f-4c55-b2e8-93d1f0a6c7e1"
    );
    assert_eq!(list[0]["mode"], "steer");
    assert_eq!(list[0]["woke"], true);
    assert!(
        list[0]["body"]
            .as_str()
            .unwrap()
            .ends_with("--- message begins ---\nhi\n--- message ends ---")
    );
    let stats: serde_json::Value = serde_json::from_str(stderr(&output).trim()).unwrap();
    assert_eq!(stats["deliveries"], 1);
    assert_eq!(stats["wakes"], 1);
}

#[test]
fn a_refused_send_writes_an_empty_delivery_list() {
    let deliveries = scratch("none.json");
    let output = host_shim(&[
        "call",
        "sessions_send",
        r#"{"session_id": "019c3d96-79e0-4e6a-b7bf-ea46c224d701", "message": "hi"}"#,
        "--deliveries",
        deliveries.to_str().unwrap(),
    ]);
    assert!(output.status.success());
    assert_eq!(std::fs::read_to_string(&deliveries).unwrap().trim(), "[]");
}

#[test]
fn a_bad_corpus_file_is_one_clear_line_and_a_failure() {
    let corpus = scratch("bad-corpus.json");
    std::fs::write(&corpus, r#"{"sessions": [{"id": "a", "created_at": 5}]}"#).unwrap();
    let output = host_shim(&[
        "call",
        "sessions_list",
        "--corpus",
        corpus.to_str().unwrap(),
        "--caller",
        "a",
    ]);
    assert!(!output.status.success());
    let err = stderr(&output);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("host-shim: error: "), "{err}");
    host_shim_testkit::has(
        &err,
        "bad-corpus.json: at sessions[0].created_at: invalid type: integer `5`, expected a string",
    );
    let output = host_shim(&["call", "sessions_list", "--corpus", "/no/such/corpus.json"]);
    assert!(!output.status.success());
    assert!(stderr(&output).contains("cannot read corpus file /no/such/corpus.json"));
}

#[test]
fn bad_settings_fail_the_catalog_and_the_call() {
    let settings = scratch("bad-settings.json");
    std::fs::write(&settings, r#"{"maxSendChars": "lots"}"#).unwrap();
    for args in [
        vec!["catalog", "--settings", settings.to_str().unwrap()],
        vec![
            "call",
            "sessions_list",
            "--settings",
            settings.to_str().unwrap(),
        ],
    ] {
        let output = host_shim(&args);
        assert!(!output.status.success());
        let err = stderr(&output);
        host_shim_testkit::has(
            &err,
            "bad-settings.json: invalid settings: maxSendChars must be an integer",
        );
    }
}

#[test]
fn the_catalog_is_json_and_empty_when_disabled() {
    let output = host_shim(&["catalog"]);
    assert!(output.status.success());
    let tools: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    let names: Vec<&str> = tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, host_shim_profile::checks::TOOLS);
    assert_eq!(tools[0]["input_schema"]["type"], "object");
    assert_eq!(
        tools[0]["annotations"],
        serde_json::json!({"title": "List sessions", "readOnlyHint": true, "openWorldHint": false})
    );
    assert_eq!(tools[2]["annotations"]["idempotentHint"], true);
    let settings = scratch("disabled.json");
    std::fs::write(&settings, r#"{"enabled": false}"#).unwrap();
    let output = host_shim(&["catalog", "--settings", settings.to_str().unwrap()]);
    assert_eq!(stdout(&output).trim(), "[]");
}

#[test]
fn a_call_without_a_caller_says_how_to_give_one() {
    let corpus = scratch("no-caller.json");
    std::fs::write(&corpus, r#"{"sessions": []}"#).unwrap();
    let output = host_shim(&[
        "call",
        "sessions_list",
        "--corpus",
        corpus.to_str().unwrap(),
    ]);
    assert!(!output.status.success());
    assert!(stderr(&output).contains("pass --caller ID"));
}

const SEND_TO_BILLING: &str =
    r#"{"session_id": "session-4b91c0de-7a3f-4c55-b2e8-93d1f0a6c7e1", "message": "hi"}"#;

#[test]
fn an_accepted_send_is_recorded_when_a_limit_stops_the_call_afterwards() {
    let deliveries = scratch("after-failure.json");
    // An older file must not survive the call.
    std::fs::write(&deliveries, "stale").unwrap();
    let output = host_shim(&[
        "call",
        "sessions_send",
        SEND_TO_BILLING,
        "--output-bytes",
        "10",
        "--deliveries",
        deliveries.to_str().unwrap(),
        "--stats",
    ]);
    assert_eq!(output.status.code(), Some(1));
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&deliveries).unwrap()).unwrap();
    assert_eq!(written.as_array().unwrap().len(), 1);
    let err = stderr(&output);
    let lines: Vec<&str> = err.lines().collect();
    let stats: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
    assert_eq!(stats["deliveries"], 1);
    assert_eq!(
        lines[1],
        "host-shim: 1 delivery was accepted before the plugin was stopped"
    );
    assert!(
        lines[2].starts_with("host-shim: error: the plugin returned ")
            && lines[2].ends_with("bytes of text, past the output limit of 10 bytes"),
        "{err}"
    );
    assert!(stdout(&output).is_empty());
}

#[test]
fn arguments_come_from_stdin_or_a_file() {
    let mut child = common::host_shim()
        .env("XDG_CACHE_HOME", scratch("cache"))
        .args(["call", "sessions_list", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(br#"{"limit": 1}"#)
        .unwrap();
    let piped = child.wait_with_output().unwrap();
    assert!(piped.status.success());
    let file = scratch("args.json");
    std::fs::write(&file, r#"{"limit": 1}"#).unwrap();
    let from_file = host_shim(&[
        "call",
        "sessions_list",
        "--args-file",
        file.to_str().unwrap(),
    ]);
    let inline = host_shim(&["call", "sessions_list", r#"{"limit": 1}"#]);
    assert_eq!(stdout(&piped), stdout(&inline));
    assert_eq!(stdout(&from_file), stdout(&inline));
    assert!(stdout(&inline).contains("1 of 5 considered sessions"));
}

#[test]
fn the_plugin_command_writes_the_component_and_plugin_runs_it() {
    let out = scratch("written-plugin.wasm");
    let output = host_shim(&["plugin", "--out", out.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr(&output));
    let bytes = std::fs::read(&out).unwrap();
    assert_eq!(bytes, host_shim_plugin::PLUGIN_WASM);
    let via_file = host_shim(&[
        "call",
        "sessions_list",
        r#"{"limit": 1}"#,
        "--plugin",
        out.to_str().unwrap(),
    ]);
    let embedded = host_shim(&["call", "sessions_list", r#"{"limit": 1}"#]);
    assert!(via_file.status.success(), "{}", stderr(&via_file));
    assert_eq!(stdout(&via_file), stdout(&embedded));
    let missing = host_shim(&["catalog", "--plugin", "/nonexistent/plugin.wasm"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        stderr(&missing)
            .starts_with("host-shim: error: cannot read plugin /nonexistent/plugin.wasm")
    );
}

#[test]
fn a_corpus_with_a_byte_order_mark_loads_and_an_array_form_is_named() {
    let corpus = scratch("bom.json");
    std::fs::write(
        &corpus,
        "\u{feff}{\"caller\": \"me\", \"sessions\": [{\"id\": \"me\", \"created_at\": \"2026-01-01T00:00:00Z\"}]}",
    )
    .unwrap();
    let output = host_shim(&[
        "call",
        "sessions_list",
        "",
        "--corpus",
        corpus.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    std::fs::write(&corpus, r#"["me",[["me","2026-01-01T00:00:00Z",true]]]"#).unwrap();
    let output = host_shim(&[
        "call",
        "sessions_list",
        "",
        "--corpus",
        corpus.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        stderr(&output),
        format!(
            "host-shim: error: {}: at the top level: expected an object with named fields, got an array\n",
            corpus.display()
        )
    );
}

/// A harness with 200,000 sessions lists under the default limits: the listing crosses
/// one small entry per session (about 12 MB here), not every header.
#[test]
fn two_hundred_thousand_sessions_list_under_the_default_limits() {
    use std::fmt::Write as _;
    let mut corpus = String::from(r#"{"caller": "session-000001", "sessions": ["#);
    for i in 0..200_000 {
        if i > 0 {
            corpus.push(',');
        }
        let _ = write!(
            corpus,
            r#"{{"id": "session-{i:06}-4b91c0de-7a3f-4c55", "created_at": "2026-{:02}-{:02}T{:02}:00:00Z", "live": {}, "cwd": "/home/dev/repo-{}", "title": "Work item {i}"{}}}"#,
            1 + i % 12,
            1 + i % 28,
            i % 24,
            i % 7 == 0,
            i % 97,
            if i % 5 == 0 {
                r#", "origin": "subagent""#
            } else {
                ""
            }
        );
    }
    corpus.push_str("]}");
    let path = scratch("200k.json");
    std::fs::write(&path, corpus).unwrap();
    let output = host_shim(&[
        "call",
        "sessions_list",
        r#"{"scope": "all", "limit": 3}"#,
        "--corpus",
        path.to_str().unwrap(),
        "--stats",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    host_shim_testkit::has(&stdout(&output), "\n3 of 200000 considered sessions\n");
    let stats: serde_json::Value = serde_json::from_str(stderr(&output).trim()).unwrap();
    assert_eq!(stats["header_ids_asked"], 3);
    assert_eq!(stats["title_ids_asked"], 3);
    std::fs::remove_file(path).unwrap();
}

#[test]
fn a_policy_file_sets_the_limits_and_flags_override_it() {
    let policy = scratch("policy.json");
    std::fs::write(&policy, r#"{"output_bytes": 100, "deadline_ms": 5000}"#).unwrap();
    let listing = r#"{"scope":"all"}"#;
    let output = host_shim(&[
        "call",
        "sessions_list",
        listing,
        "--policy",
        policy.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(1));
    host_shim_testkit::has(&stderr(&output), "past the output limit of 100 bytes");
    let output = host_shim(&[
        "call",
        "sessions_list",
        listing,
        "--policy",
        policy.to_str().unwrap(),
        "--output-bytes",
        "100000",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    // A bad policy is named with its file and field, before anything runs.
    std::fs::write(&policy, r#"{"key_byte": 10}"#).unwrap();
    let output = host_shim(&[
        "call",
        "sessions_list",
        "--policy",
        policy.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(1));
    host_shim_testkit::has(&stderr(&output), "policy.json: unknown field `key_byte`");
}

#[test]
fn nats_user_prints_the_block_the_cluster_tests_run_with() {
    let run = |args: &[&str]| {
        common::host_shim()
            .arg("nats-user")
            .args(args)
            .output()
            .unwrap()
    };
    let out = run(&["build-box", "--password", "$2a$11$abc", "--bucket", "team"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let machine = host_shim_nats::MachineName::parse("build-box").unwrap();
    let expected = host_shim_nats::permissions::user_block("team", &machine, "$2a$11$abc");
    assert_eq!(String::from_utf8(out.stdout).unwrap(), expected + "\n");
    // Held to the sessions of the machines it reaches.
    let out = run(&["build-box", "--password", "p", "--reaches", "alpha, beta"]);
    let reaches = ["alpha", "beta"].map(|m| host_shim_nats::MachineName::parse(m).unwrap());
    let expected = host_shim_nats::permissions::user_block_reaching(
        "session-tools",
        &machine,
        "p",
        Some(&reaches),
    );
    assert_eq!(String::from_utf8(out.stdout).unwrap(), expected + "\n");
    // What cannot be a machine, a bucket or a password in the block is named.
    for (args, said) in [
        (&["a b", "--password", "p"][..], "cannot name a machine"),
        (
            &["m", "--password", "p", "--bucket", "a.b"],
            "--bucket: a bucket name",
        ),
        (
            &["m", "--password", "p\"q"],
            "cannot be written into the block",
        ),
    ] {
        let out = run(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains(said), "{err}");
    }
}

#[test]
fn a_reader_that_goes_ends_the_output_quietly() {
    // A read of about 200 KB, more than a pipe holds, so the writer meets the closed
    // pipe: `host-shim call … | head -c 1`.
    let corpus = scratch("long-corpus.json");
    let messages: Vec<_> = (1..=50)
        .map(|seq| {
            serde_json::json!({"seq": seq, "role": "user", "source": "user",
            "parts": [{"text": "long ".repeat(800)}]})
        })
        .collect();
    let sessions = serde_json::json!({"caller": "s-me", "sessions": [
        {"id": "s-me", "created_at": "2026-12-01T00:00:00Z", "live": true, "messages": []},
        {"id": "s-long", "created_at": "2026-12-01T00:00:00Z", "live": true, "messages": messages}]});
    std::fs::write(&corpus, sessions.to_string()).unwrap();
    host_shim_testkit::command::ends_quietly_when_its_reader_goes(
        common::host_shim()
            .env("XDG_CACHE_HOME", scratch("cache"))
            .args([
                "call",
                "--corpus",
                corpus.to_str().unwrap(),
                "sessions_read",
            ])
            .arg(r#"{"session_id": "s-long"}"#),
    );
}

#[test]
fn a_lone_surrogate_in_calls_arguments_is_refused_naming_it() {
    let output = host_shim(&[
        "call",
        "sessions_send",
        r#"{"session_id": "s-b", "message": "SURR-\ud800-MARK"}"#,
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    host_shim_testkit::begins(
        &stdout(&output),
        "invalid arguments: message is not Unicode text",
    );
}

#[test]
fn a_fifo_among_a_harnesss_records_never_stops_a_listing() {
    // A FIFO named like a transcript, with no writer: opened without blocking, skipped.
    let projects = scratch("fifo-projects");
    let _ = std::fs::remove_dir_all(&projects);
    let folder = projects.join("-work");
    std::fs::create_dir_all(&folder).unwrap();
    let fixture = common::claude_projects().join("-home-ada-shop");
    for entry in std::fs::read_dir(&fixture).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_file() {
            std::fs::copy(entry.path(), folder.join(entry.file_name())).unwrap();
        }
    }
    let fifo = std::ffi::CString::new(folder.join("0000-fifo.jsonl").to_str().unwrap()).unwrap();
    // SAFETY: a valid C string; mkfifo only makes the file.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    let mut child = common::host_shim()
        .env("XDG_CACHE_HOME", scratch("cache"))
        .args(["call", "--claude-projects", projects.to_str().unwrap()])
        .args(["--caller", "nobody", "sessions_list", r#"{"scope": "all"}"#])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > std::time::Duration::from_secs(20) {
            let _ = child.kill();
            panic!("the listing waited on the FIFO");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let output = child.wait_with_output().unwrap();
    host_shim_testkit::has(&stdout(&output), "considered sessions");
}

/// A person lists every session's claims and releases any of them; the release is the
/// claims' own write, so the audit log records it.
#[test]
fn claims_are_listed_and_a_person_releases_one() {
    use host_shim::contract::latest::{ChangeKind, Claim, ClaimChange, ClaimMode};
    use host_shim::inbox::{InboxBackend, StateDir};
    let state = scratch("claims-state");
    let state_arg = state.to_str().unwrap();
    let listed = host_shim(&["claims", "--state-dir", state_arg]);
    assert!(listed.status.success(), "{}", stderr(&listed));
    assert_eq!(stdout(&listed), "no claims\n");
    let claim = Claim {
        id: "c-0123456789ab".into(),
        holder: "s-a".into(),
        paths: vec!["/w/src/**".into()],
        mode: ClaimMode::Shared,
        reason: "split".into(),
        made_at_ms: 0,
        ends_at_ms: 4_102_444_800_000,
        seen_live_ms: 0,
    };
    let made = ClaimChange {
        kind: ChangeKind::Made,
        claim: claim.clone(),
    };
    StateDir::open(&state)
        .unwrap()
        .write_claims(0, &[claim], &[made])
        .unwrap();
    let listed = host_shim(&["claims", "--state-dir", state_arg]);
    assert_eq!(
        stdout(&listed),
        "c-0123456789ab s-a shared until 2100-01-01 00:00 UTC: /w/src/** (\"split\")\n"
    );
    let unknown = host_shim(&[
        "claims",
        "release",
        "c-ffffffffffff",
        "--state-dir",
        state_arg,
    ]);
    assert!(!unknown.status.success());
    assert!(
        stderr(&unknown)
            .contains("no claim has the id c-ffffffffffff (the claims now: c-0123456789ab)"),
        "{}",
        stderr(&unknown)
    );
    let released = host_shim(&[
        "claims",
        "release",
        "c-0123456789ab",
        "--state-dir",
        state_arg,
    ]);
    assert!(released.status.success(), "{}", stderr(&released));
    assert_eq!(
        stdout(&released),
        "released c-0123456789ab (held by s-a): /w/src/**\n"
    );
    assert_eq!(
        stdout(&host_shim(&["claims", "--state-dir", state_arg])),
        "no claims\n"
    );
    let log = stdout(&host_shim(&["log", "--state-dir", state_arg]));
    assert!(
        log.contains(
            " released    s-a c-0123456789ab shared until 2100-01-01T00:00Z /w/src/** (\"split\")"
        ),
        "{log}"
    );
}

/// A harness's hook asks `check-write` before a write: over Claude Code's own sessions,
/// a claim one session made keeps another's write out (exit status 2, the model's
/// text, a `write-refused` record), and leaves its other files alone.
#[test]
fn check_write_refuses_a_write_into_another_sessions_claim() {
    let state = scratch("check-write-state");
    let projects = common::claude_projects();
    let over = |args: &[&str]| -> Output {
        common::host_shim()
            .env("XDG_CACHE_HOME", scratch("cache"))
            .args(args)
            .args(["--claude-projects", projects.to_str().unwrap()])
            .args(["--state-dir", state.to_str().unwrap()])
            .output()
            .unwrap()
    };
    let (shop, notes) = (
        "11111111-aaaa-4aaa-8aaa-000000000001",
        "33333333-cccc-4ccc-8ccc-000000000003",
    );
    let claimed = over(&[
        "call",
        "--caller",
        shop,
        "sessions_claim",
        r#"{"paths": ["src/**"], "reason": "checkout"}"#,
    ]);
    assert!(
        stdout(&claimed).starts_with("claimed c-"),
        "{}{}",
        stdout(&claimed),
        stderr(&claimed)
    );
    let refused = over(&[
        "check-write",
        "--caller",
        notes,
        "/home/ada/shop/src/main.rs",
    ]);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(
        stdout(&refused).starts_with(&format!(
            "write refused (claimed): /home/ada/shop/src/main.rs is claimed by another session:\n- {shop} \"Checkout: split into steps\" holds c-"
        )),
        "{}",
        stdout(&refused)
    );
    let elsewhere = over(&["check-write", "--caller", notes, "/home/ada/shop/README.md"]);
    assert_eq!(
        (elsewhere.status.code(), stdout(&elsewhere).as_str()),
        (Some(0), "allowed\n")
    );
    // The holder's own write is its to make.
    let own = over(&["check-write", "--caller", shop, "src/main.rs"]);
    assert_eq!(stdout(&own), "allowed\n");
    let log = stdout(&host_shim(&["log", "--state-dir", state.to_str().unwrap()]));
    host_shim_testkit::has(&log, &format!(" write-refused {notes} in {shop}'s c-"));
    // The person's view: the holder's row counts its claim, and the claims are listed.
    let screen = stdout(&over(&["watch", "--once"]));
    assert!(
        (screen.lines()).any(|l| l.starts_with(&format!("  {shop}")) && l.contains("claims=1")),
        "{screen}"
    );
    host_shim_testkit::has(&screen, "Claims\n  c-");
    host_shim_testkit::has(&screen, &format!(" {shop} exclusive until "));
    // Claude Code's pre-write hook, with the server's flags: a deny with the same words.
    let hook = |tool: &str, path: &str| -> Output {
        let mut child = common::host_shim()
            .env("XDG_CACHE_HOME", scratch("cache"))
            .args([
                "claude-write-hook",
                "--claude-projects",
                projects.to_str().unwrap(),
            ])
            .args(["--state-dir", state.to_str().unwrap()])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let input = serde_json::json!({
            "session_id": notes, "hook_event_name": "PreToolUse",
            "tool_name": tool, "tool_input": {"file_path": path, "content": "x"},
        });
        use std::io::Write as _;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(input.to_string().as_bytes()).unwrap();
        drop(stdin);
        child.wait_with_output().unwrap()
    };
    let denied = hook("Write", "/home/ada/shop/src/main.rs");
    assert!(denied.status.success(), "{}", stderr(&denied));
    let answer: serde_json::Value = serde_json::from_slice(&denied.stdout).unwrap();
    let said = &answer["hookSpecificOutput"];
    assert_eq!(said["permissionDecision"], "deny");
    assert_eq!(
        said["permissionDecisionReason"].as_str().unwrap(),
        stdout(&refused).trim_end()
    );
    for (tool, path) in [
        ("Write", "/home/ada/shop/README.md"),
        ("Read", "/home/ada/shop/src/main.rs"),
    ] {
        let let_through = hook(tool, path);
        assert!(
            let_through.status.success() && let_through.stdout.is_empty(),
            "{tool} {path}: {}",
            stderr(&let_through)
        );
    }
}
