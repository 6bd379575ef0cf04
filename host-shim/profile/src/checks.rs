//! What `doctor` reports, and the checks every harness's profile shares: its version
//! against the tested one, the hooks setup wrote, and that the registered MCP server
//! starts and lists the tools.

use crate::hooks;
use crate::json::Json;
use anyhow::Result;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// What the doctor found, in order, for a person.
pub struct Report {
    problems: usize,
    /// What the harnesses' clients set for the servers they start, naming a session:
    /// not passed on to a server the doctor starts, which serves no session.
    client_env: Vec<&'static str>,
    /// The checking command's version: a configured server of another is a problem.
    version: &'static str,
}

impl Report {
    /// A report for the command of `version`, whose servers are started without
    /// `client_env`.
    pub fn new(version: &'static str, client_env: Vec<&'static str>) -> Report {
        Report {
            problems: 0,
            client_env,
            version,
        }
    }

    /// How many problems were found.
    pub fn problems(&self) -> usize {
        self.problems
    }

    pub fn heading(&self, what: &str) {
        println!("{what}");
    }

    pub fn ok(&self, what: &str) {
        println!("  ok       {what}");
    }

    pub fn note(&self, what: &str) {
        println!("  note     {what}");
    }

    pub fn problem(&mut self, what: &str, fix: &str) {
        self.problems += 1;
        println!("  PROBLEM  {what}\n           fix: {fix}");
    }

    /// A file doctor could not read: what is wrong with it, and to fix it before `fix`.
    pub fn unreadable(&mut self, err: &anyhow::Error, fix: &str) {
        self.problem(&format!("{err:#}"), &format!("fix that file, then {fix}"));
    }
}

/// A harness plugin's file is what this host-shim's setup writes (`current`): one an
/// earlier setup wrote may lack what came since (a tool, the check before each file
/// write that keeps other sessions' claims). Whether it is; a file that is not there is
/// the caller's to name.
pub fn check_plugin_file(report: &mut Report, file: &Path, current: &str, fix: &str) -> bool {
    match std::fs::read_to_string(file) {
        Ok(text) if text == current => true,
        Ok(_) => {
            report.problem(
                &format!(
                    "{} is not what this host-shim's setup writes (an earlier setup's?): it may lack a tool, or the check before each file write that keeps other sessions' claims",
                    file.display()
                ),
                fix,
            );
            false
        }
        Err(err) => {
            report.problem(&format!("cannot read {}: {err}", file.display()), fix);
            false
        }
    }
}

/// The MCP server `name` setup wrote under `mcpServers` in `config`, the JSON read from
/// `file`: when it is there, that it starts and lists the tools; when not, a problem
/// naming the file. Whether it is there.
pub fn check_server_in(
    report: &mut Report,
    config: &crate::json::Object,
    file: &Path,
    name: &str,
    fix: &str,
) -> bool {
    match crate::json::server_in(config, name) {
        (Some(command), args) => {
            check_server(report, &command, &args, fix);
            true
        }
        (None, _) => {
            report.problem(
                &format!("no `{name}` MCP server in {}", file.display()),
                fix,
            );
            false
        }
    }
}

pub fn check_version(report: &mut Report, name: &str, found: Option<String>, tested: &str) {
    match found {
        Some(found) if found == tested => report.ok(&format!("{name} {found}, the version the tools are tested with")),
        Some(found) => report.note(&format!(
            "{name} {found}; the tools are tested with {tested} (they may work; what is tested is in the README)"
        )),
        None => report.note(&format!("{name}'s command is not on PATH here")),
    }
}

/// Each event has setup's hook and its binary is there; whether all were.
pub fn check_hooks(
    report: &mut Report,
    hooks: Option<&Json>,
    events: &[hooks::Event],
    hook: &str,
    file: &str,
    fix: &str,
) -> bool {
    let without = "messages for its sessions wait";
    check_hooks_for(report, (hooks, events, hook), file, fix, without)
}

/// [`check_hooks`] for a harness's pre-write hook ([`crate::WriteHook`]).
pub fn check_write_hook(
    report: &mut Report,
    (hooks, events, hook): (Option<&Json>, &[hooks::Event], &str),
    file: &str,
    fix: &str,
) -> bool {
    let without = "its sessions' writes are not checked against other sessions' claims";
    check_hooks_for(report, (hooks, events, hook), file, fix, without)
}

/// [`check_hooks`] for a hook whose absence means `without` (`its writes are not
/// checked against claims`).
fn check_hooks_for(
    report: &mut Report,
    (hooks, events, hook): (Option<&Json>, &[hooks::Event], &str),
    file: &str,
    fix: &str,
    without: &str,
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
                "no `host-shim {hook}` hook on {} in {file}: {without}",
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

/// The tools the plugin offers (contract 0.6.0), in catalog order.
pub const TOOLS: [&str; 4] = [
    "sessions_list",
    "sessions_read",
    "sessions_send",
    "sessions_claim",
];

/// The registered server is there, is this command's version, starts and lists the
/// plugin's tools; a server in a Cargo build folder is noted (`cargo clean` removes it).
pub fn check_server(report: &mut Report, command: &str, args: &[String], fix: &str) {
    if !Path::new(command).is_file() {
        report.problem(
            &format!(
                "the MCP server's command {command} is not there (moved, deleted, or its \
                 build folder cleaned): the harness starts without the tools"
            ),
            fix,
        );
        return;
    }
    if let Some(folder) = crate::build_folder_of(Path::new(command)) {
        report.note(&crate::build_folder_warning(Path::new(command), &folder));
    }
    match list_tools(command, args, &report.client_env) {
        Ok((version, _)) if version != report.version => report.problem(
            &format!(
                "the MCP server's command {command} is host-shim {version}, not this one \
                 ({}): the harness runs another version than the one you are checking with",
                report.version
            ),
            &format!("{fix} (with the host-shim you mean to keep; it writes its own path)"),
        ),
        Ok((_, tools)) if tools == TOOLS => report.ok(&format!(
            "the MCP server ({command}) starts and lists {}",
            tools.join(", ")
        )),
        Ok((_, tools)) => report.problem(
            &format!(
                "the MCP server ({command}) lists {} tools, not the plugin's {}: {}",
                tools.len(),
                TOOLS.len(),
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
/// server's version and the tools' names; stops the server after, or after 30 seconds.
fn list_tools(
    command: &str,
    args: &[String],
    client_env: &[&str],
) -> Result<(String, Vec<String>)> {
    let mut server = Command::new(command);
    for name in client_env {
        server.env_remove(name);
    }
    let mut child = server
        .args(args)
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
        let mut version = None;
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let Ok(message) = host_shim::json::from_str::<serde_json::Value>(&line) else {
                continue;
            };
            if message["id"] == 0 {
                version = message["result"]["serverInfo"]["version"]
                    .as_str()
                    .map(str::to_string);
            }
            if message["id"] == 1 {
                let _ = sender.send((version, message));
                break;
            }
        }
    });
    let answer = receiver.recv_timeout(Duration::from_secs(30));
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    let (version, answer) =
        answer.map_err(|_| anyhow::anyhow!("no answer to tools/list within 30 seconds"))?;
    let tools = (answer["result"]["tools"].as_array())
        .ok_or_else(|| anyhow::anyhow!("its answer to tools/list was {answer}"))?;
    let version = version.unwrap_or_else(|| "of no version it names".to_string());
    let tools = (tools.iter())
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .collect();
    Ok((version, tools))
}
