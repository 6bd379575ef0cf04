//! `host-shim doctor`: looks over what the tools need on this machine and names each
//! problem with the one command that fixes it. For each harness found (its command on
//! PATH or its folder there): its version against the one the project tests, then its
//! profile's checks (the MCP server's registration and that it starts and lists the
//! tools, the hooks, the permission; each harness's folder says which); then the state
//! folder: its ownership and mode, messages that have waited more than an hour,
//! registrations of processes that are gone; then the cluster, when there is one.
//! Exits non-zero when something is wrong. The checks every harness shares are in
//! the profile crate's `checks.rs` ([`check_server`], [`check_hooks`]).
//!
//! [`check_server`]: host_shim_profile::checks::check_server
//! [`check_hooks`]: host_shim_profile::checks::check_hooks
//!
//! Trust model: it reads the person's own configuration and state folder, changes
//! nothing, and starts only the server their harness would start (the registered
//! command, over stdio, told nothing but MCP's handshake and `tools/list`), which it
//! stops after its answer or after 30 seconds.

pub use host_shim_profile::checks;

use crate::flags::DoctorArgs;
use crate::setup::change::Commands;
use anyhow::Result;
use checks::{Report, check_version};
use clap::ArgMatches;
use host_shim::inbox::{InboxBackend, StateDir};
use host_shim_profile::{HarnessProfile, SetupInputs};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

/// How long a waiting message may wait before the doctor calls it stuck.
const STUCK: Duration = Duration::from_secs(3600);

pub fn run(args: &DoctorArgs) -> Result<bool> {
    let given = &args.places.harnesses;
    let mut report = Report::new(
        crate::VERSION,
        (given.profiles().iter())
            .filter_map(|p| p.mcp_client().caller_env)
            .collect(),
    );
    let places = given.matches();
    let mut found = 0;
    for profile in given.profiles() {
        let version = version(profile.command());
        if version.is_none() && !profile.found(places)? {
            continue;
        }
        found += 1;
        let mut fix = format!("host-shim setup {}", profile.name());
        if let Some(state) = &args.places.state_dir {
            fix.push_str(&format!(" --state-dir {}", state.display()));
        }
        report.heading(profile.title());
        check_version(
            &mut report,
            profile.title(),
            version,
            profile.tested_version(),
        );
        // A harness the person never set up for the tools is theirs to choose: a note.
        if !set_up_here(*profile, places) {
            report.note(&format!(
                "{} is here but not set up for the tools; to set it up: {fix}",
                profile.title()
            ));
            continue;
        }
        profile.check(places, &mut report, &fix);
    }
    if found == 0 {
        let and = |words: Vec<String>| crate::flags::listed(&words, "and");
        report.heading("No harness found");
        report.note(&format!(
            "none of {} is on PATH, and none of {} exists",
            and(given
                .profiles()
                .iter()
                .map(|p| format!("`{}`", p.command()))
                .collect()),
            and(given
                .profiles()
                .iter()
                .map(|p| p.home_hint().to_string())
                .collect()),
        ));
    }
    check_state(&mut report, args.places.state_dir.clone(), |session| {
        (given.profiles().iter()).find_map(|profile| profile.resume(places, session))
    });
    check_cluster(&mut report, args.places.state_dir.clone());
    println!();
    if report.problems() == 0 {
        println!("Nothing wrong found.");
    } else {
        let s = if report.problems() == 1 { "" } else { "s" };
        println!(
            "{} problem{s} found; each names its fix.",
            report.problems()
        );
    }
    Ok(report.problems() == 0)
}

/// Whether any of setup's entries is in the harness's files: what `setup --remove`
/// would take out. A file setup cannot read counts as set up, so its check names it.
pub(crate) fn set_up_here(profile: &dyn HarnessProfile, places: &ArgMatches) -> bool {
    let commands = Commands::new("host-shim".to_string(), vec!["mcp".to_string()], None);
    let removal = SetupInputs {
        remove: true,
        commands: &commands,
    };
    match profile.setup(places, &removal) {
        Ok(changes) => changes.iter().any(|change| change.before != change.after),
        Err(_) => true,
    }
}

/// `command --version`'s first word, when the command runs.
fn version(command: &str) -> Option<String> {
    let output = Command::new(command)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&output.stdout);
    // The first word that starts with a digit: `1.2.3 (Name)`, `name-cli 1.2.3`, and
    // Copilot CLI's sentence `GitHub Copilot CLI 1.0.102.` (its full stop is not the
    // version's).
    text.split_whitespace()
        .find(|word| word.starts_with(|c: char| c.is_ascii_digit()))
        .map(|word| word.trim_end_matches('.').to_string())
}

/// The state folder; `resume` names the command that resumes a session of a harness
/// here.
fn check_state(
    report: &mut Report,
    flag: Option<PathBuf>,
    resume: impl Fn(&str) -> Option<String>,
) {
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
    let mut damaged = 0;
    for session in inbox.sessions().unwrap_or_default() {
        let contents = match inbox.waiting(&session) {
            Ok(contents) => contents,
            Err(err) => {
                damaged += 1;
                report.problem(
                    &format!("the inbox of {session} cannot be read: {err:#}"),
                    "mend or remove what it names (the hooks of that session fail until then)",
                );
                continue;
            }
        };
        // A file that is no message is never delivered; the others still wait.
        for unreadable in &contents.unreadable {
            damaged += 1;
            report.problem(
                unreadable,
                "remove the file it names (it holds no message that can be delivered; the others wait as before)",
            );
        }
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
        } else {
            match resume(&session) {
                Some(command) => format!("{command} (its next prompt takes them)"),
                None => format!(
                    "resume {session} in its harness (its next prompt takes them; no harness here holds it)"
                ),
            }
        };
        report.problem(
            &format!("{count} waited more than an hour for {session} (the oldest {hours} h)"),
            &fix,
        );
    }
    if stuck == 0 {
        report.ok("no message has waited more than an hour");
    }
    // A person's say over a session that cannot be read refuses every send to it and
    // fails its hooks: set it again.
    let inbound = std::fs::read_dir(root.join("inbound"))
        .into_iter()
        .flatten();
    for session in inbound
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
    {
        if let Err(err) = inbox.inbound(&session) {
            damaged += 1;
            report.problem(
                &format!("{err:#}"),
                &format!("host-shim inbound {session} accept (or hold, or refuse)"),
            );
        }
    }
    if damaged == 0 {
        report.ok("every message file and inbound setting reads");
    }
    let presence = match host_shim::LocalPresence::open(&root) {
        Ok(presence) => presence,
        Err(err) => {
            report.problem(
                &format!("{err:#}"),
                &format!("chmod 700 {}", root.display()),
            );
            return;
        }
    };
    // The host's own bookkeeping: a registration of a process that ended (every
    // headless run leaves one) is swept here as a listing sweeps it, not a problem.
    let swept = presence.sweep_dead_registrations();
    match swept.len() {
        0 => report.ok("no registration of a process that is gone"),
        n => report.ok(&format!(
            "swept {n} registration{} of a process that is gone ({})",
            if n == 1 { "" } else { "s" },
            crate::flags::listed(&swept, "and")
        )),
    }
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
