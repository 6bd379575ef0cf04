//! `host-shim doctor`: looks over what the tools need on this machine and names each
//! problem with the one command that fixes it. For each harness found (its command on
//! PATH or its folder there): its version against the one the project tests, the MCP
//! server's registration and that it starts and lists the tools, the hooks (and
//! Codex's trust in them) and the permission (OpenCode: the plugin file, the server it
//! runs, the package it imports); then the state folder: its ownership and
//! mode, messages that have waited more than an hour, registrations of processes that
//! are gone. Exits non-zero when something is wrong.
//!
//! Trust model: it reads the person's own configuration and state folder, changes
//! nothing, and starts only the server their harness would start (the registered
//! command, over stdio, told nothing but MCP's handshake and `tools/list`), which it
//! stops after its answer or after 30 seconds.

use crate::flags::DoctorArgs;
use crate::setup::json::{Json, JsonFile};
use crate::setup::{
    claude as claude_setup, codex as codex_setup, hooks, opencode as opencode_setup,
};
use anyhow::Result;
use host_shim::inbox::{InboxBackend, StateDir};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// The versions the real-client suites run (`tests/claude_code/package.json`,
/// `tests/codex/package.json`, `tests/opencode/package.json`; a test keeps these equal).
pub const TESTED_CLAUDE: &str = "2.1.328";
pub const TESTED_CODEX: &str = "0.169.0";
pub const TESTED_OPENCODE: &str = "1.18.33";

/// How long a waiting message may wait before the doctor calls it stuck.
const STUCK: Duration = Duration::from_secs(3600);

/// What the doctor found, in order, for a person.
#[derive(Default)]
struct Report {
    problems: usize,
}

impl Report {
    fn heading(&self, what: &str) {
        println!("{what}");
    }

    fn ok(&self, what: &str) {
        println!("  ok       {what}");
    }

    fn note(&self, what: &str) {
        println!("  note     {what}");
    }

    fn problem(&mut self, what: &str, fix: &str) {
        self.problems += 1;
        println!("  PROBLEM  {what}\n           fix: {fix}");
    }
}

pub fn run(args: &DoctorArgs) -> Result<bool> {
    let mut report = Report::default();
    let setup_flag = |harness: &str| {
        let mut fix = format!("host-shim setup {harness}");
        if let Some(state) = &args.places.state_dir {
            fix.push_str(&format!(" --state-dir {}", state.display()));
        }
        fix
    };
    let mut found = 0;
    let claude = claude_setup::Places::find(args.places.claude_config.as_deref())?;
    let claude_version = version("claude");
    if claude_version.is_some() || claude.config_file.exists() || claude.settings_file.exists() {
        found += 1;
        check_claude(&mut report, &claude, claude_version, &setup_flag("claude"));
    }
    let codex_home = codex_setup::codex_home(args.places.codex_home.as_deref())?;
    let codex_version = version("codex");
    if codex_version.is_some() || codex_home.exists() {
        found += 1;
        check_codex(
            &mut report,
            &codex_home,
            codex_version,
            &setup_flag("codex"),
        );
    }
    let opencode_config = opencode_setup::config_dir(args.places.opencode_config.as_deref())?;
    let opencode_db = opencode_setup::database(args.places.opencode_db.as_deref())?;
    let opencode_version = version("opencode");
    if opencode_version.is_some() || opencode_config.exists() || opencode_db.exists() {
        found += 1;
        check_opencode(
            &mut report,
            &opencode_config,
            &opencode_db,
            opencode_version,
            &setup_flag("opencode"),
        );
    }
    if found == 0 {
        report.heading("No harness found");
        report.note(
            "none of `claude`, `codex` and `opencode` is on PATH, and none of ~/.claude, ~/.codex and ~/.config/opencode exists",
        );
    }
    check_state(&mut report, args.places.state_dir.clone(), &claude.projects);
    check_cluster(&mut report, args.places.state_dir.clone());
    println!();
    if report.problems == 0 {
        println!("Nothing wrong found.");
    } else {
        let s = if report.problems == 1 { "" } else { "s" };
        println!("{} problem{s} found; each names its fix.", report.problems);
    }
    Ok(report.problems == 0)
}

/// `command --version`'s first word, when the command runs.
fn version(command: &str) -> Option<String> {
    let output = Command::new(command)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&output.stdout);
    // `2.1.328 (Claude Code)`, `codex-cli 0.169.0`.
    text.split_whitespace()
        .find(|word| word.starts_with(|c: char| c.is_ascii_digit()))
        .map(str::to_string)
}

fn check_version(report: &mut Report, name: &str, found: Option<String>, tested: &str) {
    match found {
        Some(found) if found == tested => report.ok(&format!("{name} {found}, the version the tools are tested with")),
        Some(found) => report.note(&format!(
            "{name} {found}; the tools are tested with {tested} (they may work; what is tested is in the README)"
        )),
        None => report.note(&format!("{name}'s command is not on PATH here")),
    }
}

fn check_claude(
    report: &mut Report,
    places: &claude_setup::Places,
    version: Option<String>,
    fix: &str,
) {
    report.heading("Claude Code");
    check_version(report, "Claude Code", version, TESTED_CLAUDE);
    match JsonFile::read(&places.config_file) {
        Err(err) => report.problem(&format!("{err:#}"), &format!("fix that file, then {fix}")),
        Ok(config) => {
            let server = (config.object.get("mcpServers"))
                .and_then(|servers| servers.get(claude_setup::SERVER));
            let command = server.and_then(|s| s.get("command")).and_then(Json::as_str);
            let args: Vec<String> = match server.and_then(|s| s.get("args")) {
                Some(Json::Array(args)) => args
                    .iter()
                    .filter_map(Json::as_str)
                    .map(str::to_string)
                    .collect(),
                _ => Vec::new(),
            };
            match command {
                None => report.problem(
                    &format!(
                        "no `session-tools` MCP server in {}",
                        places.config_file.display()
                    ),
                    fix,
                ),
                Some(command) => check_server(report, command, &args, fix),
            }
        }
    }
    match JsonFile::read(&places.settings_file) {
        Err(err) => report.problem(&format!("{err:#}"), &format!("fix that file, then {fix}")),
        Ok(settings) => {
            let shown = places.settings_file.display();
            let allowed = match settings
                .object
                .get("permissions")
                .and_then(|p| p.get("allow"))
            {
                Some(Json::Array(allow)) => allow
                    .iter()
                    .any(|p| p.as_str() == Some(claude_setup::PERMISSION)),
                _ => false,
            };
            if allowed {
                report.ok(&format!(
                    "the permission `{}` is in {shown}",
                    claude_setup::PERMISSION
                ));
            } else {
                report.problem(
                    &format!(
                        "no permission `{}` in {shown}: a session without a person to ask is refused the tools",
                        claude_setup::PERMISSION
                    ),
                    fix,
                );
            }
            let hooks = settings.object.get("hooks");
            check_hooks(
                report,
                hooks,
                &claude_setup::EVENTS,
                claude_setup::HOOK,
                &shown.to_string(),
                fix,
            );
        }
    }
}

fn check_codex(report: &mut Report, home: &Path, version: Option<String>, fix: &str) {
    report.heading("Codex");
    check_version(report, "Codex", version, TESTED_CODEX);
    let config_file = home.join("config.toml");
    let config = codex_setup::read_text(&config_file)
        .and_then(|text| codex_setup::parse_toml(text.as_deref().unwrap_or(""), &config_file));
    let hooks_file = home.join("hooks.json");
    match &config {
        Err(err) => report.problem(&format!("{err:#}"), &format!("fix that file, then {fix}")),
        Ok(config) => {
            let server = config
                .get("mcp_servers")
                .and_then(|servers| servers.get(codex_setup::SERVER));
            let command = server
                .and_then(|s| s.get("command"))
                .and_then(|c| c.as_str());
            let args: Vec<String> = (server
                .and_then(|s| s.get("args"))
                .and_then(|a| a.as_array()))
            .map(|args| {
                args.iter()
                    .filter_map(|a| a.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
            match command {
                None => report.problem(
                    &format!(
                        "no [mcp_servers.session-tools] in {}",
                        config_file.display()
                    ),
                    fix,
                ),
                Some(command) => check_server(report, command, &args, fix),
            }
        }
    }
    let shown = hooks_file.display().to_string();
    match JsonFile::read(&hooks_file) {
        Err(err) => report.problem(&format!("{err:#}"), &format!("fix that file, then {fix}")),
        Ok(hooks_json) => {
            let hooks = hooks_json.object.get("hooks");
            let all_there = check_hooks(
                report,
                hooks,
                &codex_setup::EVENTS,
                codex_setup::HOOK,
                &shown,
                fix,
            );
            // Codex runs a hook only once its person trusted it: config.toml's
            // `[hooks.state."<hooks.json>:<event>:<group>:<hook>"] trusted_hash`.
            if let (true, Ok(config), Some(Json::Object(events))) = (all_there, &config, hooks) {
                let untrusted: Vec<&str> = (codex_setup::EVENTS.iter())
                    .filter(|event| {
                        let Some(Json::Array(groups)) = events.get(event.name) else {
                            return true;
                        };
                        let Some(group) = groups
                            .iter()
                            .position(|g| hooks::is_setups(g, codex_setup::HOOK))
                        else {
                            return true;
                        };
                        let key = format!("{shown}:{}:{group}:0", snake(event.name));
                        let trusted = (config.get("hooks").and_then(|h| h.get("state")))
                            .and_then(|state| state.get(key.as_str()))
                            .and_then(|entry| entry.get("trusted_hash"))
                            .is_some();
                        !trusted
                    })
                    .map(|event| event.name)
                    .collect();
                if untrusted.is_empty() {
                    report.ok("Codex trusts the hooks");
                } else {
                    report.problem(
                        &format!(
                            "Codex has not been told to trust the hook on {} (it runs no hook it does not trust)",
                            untrusted.join(", ")
                        ),
                        "run `codex` and choose \"Trust all and continue\" when it says \"Hooks need review\" (or type /hooks)",
                    );
                }
            }
        }
    }
}

fn check_opencode(
    report: &mut Report,
    config: &Path,
    db: &Path,
    version: Option<String>,
    fix: &str,
) {
    report.heading("OpenCode");
    check_version(report, "OpenCode", version, TESTED_OPENCODE);
    let file = config.join("plugin").join(opencode_setup::FILE_NAME);
    match opencode_setup::host_of(&file) {
        Err(err) => report.problem(&format!("{err:#}"), fix),
        Ok(None) => report.problem(
            &format!(
                "no plugin file {}: OpenCode's sessions have no tools",
                file.display()
            ),
            fix,
        ),
        Ok(Some((command, args))) => check_server(report, &command, &args, fix),
    }
    let package = config.join("node_modules/@opencode-ai/plugin/package.json");
    if !package.is_file() {
        report.note(&format!(
            "@opencode-ai/plugin is not in {} yet: OpenCode installs it at its next start (from the npm registry; offline, run `npm install @opencode-ai/plugin@{TESTED_OPENCODE}` there)",
            config.display()
        ));
    }
    if !db.is_file() {
        report.note(&format!(
            "no database at {} yet: OpenCode writes it at its first session",
            db.display()
        ));
    }
}

/// `SessionStart` → `session_start`, as Codex names events in its trust keys.
fn snake(event: &str) -> String {
    let mut out = String::new();
    for (i, ch) in event.chars().enumerate() {
        if ch.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(ch.to_ascii_lowercase());
    }
    out
}

/// Each event has setup's hook and its binary is there; whether all were.
fn check_hooks(
    report: &mut Report,
    hooks: Option<&Json>,
    events: &[hooks::Event],
    hook: &str,
    file: &str,
    fix: &str,
) -> bool {
    let mut missing = Vec::new();
    let mut binaries = Vec::new();
    for event in events {
        let groups = match hooks.and_then(|h| h.get(event.name)) {
            Some(Json::Array(groups)) => groups.as_slice(),
            _ => &[],
        };
        let command = (groups.iter())
            .filter(|g| hooks::is_setups(g, hook))
            .filter_map(|g| match g.get("hooks") {
                Some(Json::Array(handlers)) => handlers.first(),
                _ => None,
            })
            .filter_map(|h| h.get("command").and_then(Json::as_str))
            .next();
        match command {
            None => missing.push(event.name),
            Some(command) => binaries.push(hooks::program(command)),
        }
    }
    if missing.is_empty() {
        report.ok(&format!("the hooks (`host-shim {hook}`) are in {file}"));
    } else {
        report.problem(
            &format!(
                "no `host-shim {hook}` hook on {} in {file}: messages for its sessions wait",
                missing.join(", ")
            ),
            fix,
        );
    }
    binaries.sort();
    binaries.dedup();
    for binary in &binaries {
        if !Path::new(binary).is_file() {
            report.problem(&format!("the hooks run {binary}, which is not there"), fix);
        }
    }
    missing.is_empty()
}

/// The registered server starts and lists the three tools.
fn check_server(report: &mut Report, command: &str, args: &[String], fix: &str) {
    if !Path::new(command).is_file() {
        report.problem(
            &format!("the MCP server's command {command} is not there"),
            fix,
        );
        return;
    }
    match list_tools(command, args) {
        Ok(tools) if tools.len() == 3 => report.ok(&format!(
            "the MCP server ({command}) starts and lists {}",
            tools.join(", ")
        )),
        Ok(tools) => report.problem(
            &format!(
                "the MCP server ({command}) lists {} tools, not the three: {}",
                tools.len(),
                tools.join(", ")
            ),
            "check the server's --settings (enabled: false lists none)",
        ),
        Err(err) => report.problem(
            &format!("the MCP server ({command}) did not answer: {err:#}"),
            fix,
        ),
    }
}

/// Starts `command args…`, asks MCP's `initialize` and `tools/list`, and returns the
/// tools' names; stops the server after, or after 30 seconds.
fn list_tools(command: &str, args: &[String]) -> Result<Vec<String>> {
    let mut child = Command::new(command)
        .args(args)
        .env_remove("CLAUDE_CODE_SESSION_ID")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let mut stdin = child.stdin.take().expect("piped");
    let lines = [
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"host-shim doctor","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
    ];
    for line in lines {
        writeln!(stdin, "{line}")?;
    }
    let stdout = child.stdout.take().expect("piped");
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let Ok(message) = serde_json::from_str::<serde_json::Value>(&line) else {
                continue;
            };
            if message["id"] == 1 {
                let _ = sender.send(message);
                break;
            }
        }
    });
    let answer = receiver.recv_timeout(Duration::from_secs(30));
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    let answer =
        answer.map_err(|_| anyhow::anyhow!("no answer to tools/list within 30 seconds"))?;
    let tools = (answer["result"]["tools"].as_array())
        .ok_or_else(|| anyhow::anyhow!("its answer to tools/list was {answer}"))?;
    Ok(tools
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .collect())
}

fn check_state(report: &mut Report, flag: Option<PathBuf>, claude_projects: &Path) {
    let Some(root) = flag.or_else(host_shim::inbox::default_dir) else {
        report.heading("State folder");
        report.problem(
            "no state folder: neither HOME nor XDG_STATE_HOME is set",
            "set HOME, or pass --state-dir DIR",
        );
        return;
    };
    report.heading(&format!("State folder {}", root.display()));
    if std::fs::symlink_metadata(&root).is_err() {
        report.ok("not created yet (the first send or registration creates it, 0700)");
        return;
    }
    let inbox = match StateDir::open(&root) {
        Ok(inbox) => inbox,
        Err(err) => {
            let why = format!("{err:#}");
            let fix = if why.contains("not a directory") {
                format!(
                    "use a real folder: pass --state-dir DIR (or remove {})",
                    root.display()
                )
            } else if why.contains("owned by uid") {
                "use a folder of your own: pass --state-dir DIR".to_string()
            } else {
                format!("chmod 700 {}", root.display())
            };
            report.problem(&why, &fix);
            return;
        }
    };
    // Writable by others is refused above; readable shows what sessions say to each other.
    let mode = std::fs::metadata(&root).map_or(0, |m| {
        use std::os::unix::fs::PermissionsExt;
        m.permissions().mode() & 0o777
    });
    if mode & 0o077 == 0 {
        report.ok("yours alone (owned by you, mode 700)");
    } else {
        report.problem(
            &format!(
                "others can read it (mode {mode:o}): the messages between your sessions are in it"
            ),
            &format!("chmod 700 {}", root.display()),
        );
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let mut stuck = 0;
    for session in inbox.sessions().unwrap_or_default() {
        let Ok(contents) = inbox.waiting(&session) else {
            continue;
        };
        let old: Vec<_> = (contents.messages.iter())
            .filter(|w| now.saturating_sub(w.message.accepted_at_ns) > STUCK.as_nanos())
            .collect();
        let Some(oldest) = old.iter().map(|w| w.message.accepted_at_ns).min() else {
            continue;
        };
        stuck += 1;
        let hours = now.saturating_sub(oldest) / 3_600_000_000_000;
        let count = if old.len() == 1 {
            "1 message has".to_string()
        } else {
            format!("{} messages have", old.len())
        };
        let held = inbox
            .inbound(&session)
            .is_ok_and(|p| p != host_shim::contract::latest::InboundPolicy::Accept);
        let fix = if held {
            format!("host-shim inbound {session} accept (its person holds what comes in)")
        } else if is_claude_session(claude_projects, &session) {
            format!("claude --resume {session} (its next prompt takes them)")
        } else {
            format!("codex resume {session} (its next prompt takes them)")
        };
        report.problem(
            &format!("{count} waited more than an hour for {session} (the oldest {hours} h)"),
            &fix,
        );
    }
    if stuck == 0 {
        report.ok("no message has waited more than an hour");
    }
    let presence = match host_shim::claude::presence::LocalPresence::open(&root) {
        Ok(presence) => presence,
        Err(err) => {
            report.problem(
                &format!("{err:#}"),
                &format!("chmod 700 {}", root.display()),
            );
            return;
        }
    };
    let dead = presence.dead_registrations();
    if dead.is_empty() {
        report.ok("no registration of a process that is gone");
    }
    for (path, session) in dead {
        report.problem(
            &format!(
                "{session} is registered live by a process that is gone ({})",
                path.display()
            ),
            &format!("rm {} (the next listing sweeps it too)", path.display()),
        );
    }
}

/// Whether a Claude Code transcript of `session` is in `projects`.
fn is_claude_session(projects: &Path, session: &str) -> bool {
    (std::fs::read_dir(projects).into_iter().flatten().flatten())
        .any(|project| project.path().join(format!("{session}.jsonl")).is_file())
}

/// The state folder's cluster file, when there is one: readable, the cluster reached,
/// and which machines publish their sessions in it.
fn check_cluster(report: &mut Report, flag: Option<PathBuf>) {
    let Some(file) = flag
        .or_else(host_shim::inbox::default_dir)
        .map(|root| root.join("cluster.json"))
        .filter(|file| file.is_file())
    else {
        return;
    };
    report.heading(&format!("Cluster ({})", file.display()));
    let read = match host_shim_nats::ClusterFile::read(&file) {
        Ok(read) => read,
        Err(err) => {
            report.problem(
                &format!("{err:#}"),
                &format!("edit {} (docs/nats.md lists its fields)", file.display()),
            );
            return;
        }
    };
    let machine = read.machine.clone();
    let joined = match host_shim_nats::Cluster::join(read) {
        Ok(joined) => joined,
        Err(err) => {
            report.problem(
                &format!("cannot join the cluster: {err:#}"),
                &format!("check that the servers in {} run and this machine reaches them, with the credentials it names", file.display()),
            );
            return;
        }
    };
    report.ok(&format!("joined as machine {machine}"));
    match joined.machines_seen() {
        Ok(seen) if seen.is_empty() => report.note(
            "no machine has published its sessions yet (a machine's host-shim mcp does, while a session runs)",
        ),
        Ok(seen) => {
            for (name, sessions, live) in seen {
                let me = if name == machine.as_str() { " (this machine)" } else { "" };
                report.ok(&format!("machine {name}{me}: {sessions} sessions published, {live} live"));
            }
        }
        Err(err) => report.problem(
            &format!("cannot read the machines' lists: {err:#}"),
            "check the cluster's health (nats server check jetstream) and this machine's permissions on the bucket",
        ),
    }
}
