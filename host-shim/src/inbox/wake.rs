//! `--wake-command TEMPLATE`: how the host wakes a cold session a message was put in
//! the inbox for. The template is split into words (single and double quotes group
//! words; no shell runs it), and in each word `{id}`, `{cwd}` and `{message_file}` are
//! replaced by the target's id, its working directory and the path of a file holding
//! the message (as JSON: target, mode, body, key, accepted_at_ns, woke, sender). The
//! command starts in the target's working directory when that exists, with no stdin,
//! in a process group of its own (so it outlives the server that started it); the
//! host does not wait for it.
//!
//! Trust model: the message file is written from the inbox's answer, whatever backend
//! holds the message, into a folder of this user's alone
//! (`$TMPDIR/session-tools-wake-<uid>`, `0700`, checked like the state folder), `0600`,
//! and removed once the command exits; when the host ended first (a one-shot `call`, a
//! hook), the next wake removes it once it is an hour old ([`MESSAGE_FILE_KEPT`]), so
//! no message lies there longer. Nothing from a transcript or a message chooses the
//! command.

use crate::inbox::SpooledMessage;
use anyhow::{Result, bail};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const PLACEHOLDERS: &[&str] = &["{id}", "{cwd}", "{message_file}"];

/// A parsed wake command template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WakeCommand {
    words: Vec<String>,
}

impl WakeCommand {
    /// Parses a template; an error names what is wrong with it.
    pub fn parse(template: &str) -> Result<WakeCommand> {
        let mut words = Vec::new();
        let mut word: Option<String> = None;
        let mut quote: Option<char> = None;
        for c in template.chars() {
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some(_), c) => word.get_or_insert_with(String::new).push(c),
                (None, '\'' | '"') => {
                    quote = Some(c);
                    word.get_or_insert_with(String::new);
                }
                (None, c) if c.is_whitespace() => words.extend(word.take()),
                (None, c) => word.get_or_insert_with(String::new).push(c),
            }
        }
        if let Some(q) = quote {
            bail!("--wake-command: a {q} quote is not closed in {template:?}");
        }
        words.extend(word);
        if words.is_empty() {
            bail!("--wake-command is empty; give a command such as 'claude --resume {{id}}'");
        }
        for word in &words {
            let mut rest = word.as_str();
            while let Some(start) = rest.find('{') {
                let after = &rest[start..];
                match PLACEHOLDERS.iter().find(|p| after.starts_with(*p)) {
                    Some(p) => rest = &after[p.len()..],
                    None => bail!(
                        "--wake-command: {:?} is not a placeholder; the template may use {}",
                        after.split_inclusive('}').next().unwrap_or(after),
                        PLACEHOLDERS.join(", ")
                    ),
                }
            }
        }
        Ok(WakeCommand { words })
    }

    /// The command for one target, placeholders filled in.
    pub fn command(&self, id: &str, cwd: Option<&str>, message_file: &Path) -> Command {
        let fill = |word: &str| {
            word.replace("{id}", id)
                .replace("{cwd}", cwd.unwrap_or(""))
                .replace("{message_file}", &message_file.to_string_lossy())
        };
        let mut command = Command::new(fill(&self.words[0]));
        command.args(self.words[1..].iter().map(|w| fill(w)));
        if let Some(cwd) = cwd.filter(|cwd| Path::new(cwd).is_dir()) {
            // PWD too, as a shell sets it: OpenCode takes a session's folder from it.
            command.current_dir(cwd).env("PWD", cwd);
        }
        command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // A process group of its own: a harness that stops its server's process group
        // as the caller's turn ends does not stop the woken session with it. (Copilot CLI
        // stops a server's children by parent: its command detaches itself, copilot.md.)
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        command
    }

    /// Starts the command for `message`'s target and lets it run; a thread reaps it
    /// and removes the message file.
    pub fn spawn(&self, id: &str, cwd: Option<&str>, message: &SpooledMessage) -> Result<()> {
        let file = message_file(message)?;
        let mut child = match self.command(id, cwd, &file).spawn() {
            Ok(child) => child,
            Err(err) => {
                let _ = std::fs::remove_file(&file);
                return Err(err.into());
            }
        };
        std::thread::spawn(move || {
            let _ = child.wait();
            let _ = std::fs::remove_file(file);
        });
        Ok(())
    }
}

/// What a store's `accepted` does with a message put in the inbox for a cold target the
/// call may wake: starts `wake` for it when the delivery path decided to wake it;
/// whether it started. A command that cannot start leaves the message waiting for the
/// session's next start, and says so on stderr.
pub fn wake_for(
    wake: Option<&WakeCommand>,
    waiting: &crate::inbox::Waiting,
    cwd: Option<&str>,
) -> bool {
    let Some(wake) = wake.filter(|_| waiting.message.woke) else {
        return false;
    };
    let target = &waiting.message.target;
    match wake.spawn(target, cwd, &waiting.message) {
        Ok(()) => true,
        Err(err) => {
            eprintln!("host-shim: the wake command for {target} did not start: {err}");
            false
        }
    }
}

/// The wake step of a harness whose cold sessions only a wake command starts (Copilot
/// CLI, Gemini CLI): a cold target wakes when one is set, started once the message is
/// put ([`waiting_for_hooks`]).
pub fn woken_if_cold(
    wake: Option<&WakeCommand>,
    arriving: &crate::inbox::delivery::Arriving,
) -> crate::inbox::delivery::Woken<()> {
    crate::inbox::delivery::Woken {
        woke: !arriving.live && wake.is_some(),
        plan: (),
    }
}

/// What such a harness answers for a message put in the inbox: it waits for the
/// session's hooks, the wake command started when the path decided to wake the session
/// (in `cwd`, the session's folder).
pub fn waiting_for_hooks(
    wake: Option<&WakeCommand>,
    waiting: &crate::inbox::Waiting,
    cwd: Option<&str>,
) -> crate::contract::latest::Delivered {
    waiting_unless_started(waiting, wake_for(wake, waiting, cwd))
}

/// The answer for a message that waits in the inbox, its wake command `started` or
/// not: `wake-started` or `waiting`, never `woke` (a command takes seconds to run a
/// session, and the call cannot wait to see it).
pub fn waiting_unless_started(
    waiting: &crate::inbox::Waiting,
    started: bool,
) -> crate::contract::latest::Delivered {
    use crate::contract::latest::DeliveryState;
    crate::contract::latest::Delivered {
        woke: false,
        repeat: false,
        state: match started {
            true => DeliveryState::WakeStarted,
            false => DeliveryState::Waiting,
        },
        message_id: waiting.message.message_id.clone(),
    }
}

/// How long a wake command has to read its message file when the host that started it
/// ended first (a command reads it as it starts, in seconds).
pub const MESSAGE_FILE_KEPT: std::time::Duration = std::time::Duration::from_secs(3600);

/// The folder of the wake commands' message files (`$TMPDIR/session-tools-wake-<uid>`;
/// `host-shim remove-state` removes it).
pub fn folder() -> PathBuf {
    std::env::temp_dir().join(format!("session-tools-wake-{}", crate::os::effective_uid()))
}

/// Writes `message` to a new file of this user's alone, for a wake command to read,
/// first removing the files older than [`MESSAGE_FILE_KEPT`] that hosts which ended
/// before their commands left.
fn message_file(message: &SpooledMessage) -> Result<PathBuf> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let folder = folder();
    crate::os::trusted_dir(&folder)
        .map_err(|why| anyhow::anyhow!("wake folder {}: {why}", folder.display()))?;
    crate::os::remove_older_than(&folder, MESSAGE_FILE_KEPT, is_message_file);
    let path = folder.join(format!(
        "{}-{}-{}.json",
        std::process::id(),
        crate::inbox::now_ns(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)?;
    file.write_all(&serde_json::to_vec(message)?)?;
    Ok(path)
}

/// A message file's name (`<pid>-<ns>-<n>.json`).
fn is_message_file(name: &str) -> bool {
    name.ends_with(".json")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_quotes_and_placeholders() {
        let wake =
            WakeCommand::parse(r#"claude --resume {id} -p "a message is waiting: {message_file}""#)
                .unwrap();
        let command = wake.command("s1", Some("/nonexistent"), Path::new("/state/m.json"));
        let args: Vec<_> = command
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(command.get_program(), "claude");
        assert_eq!(
            args,
            [
                "--resume",
                "s1",
                "-p",
                "a message is waiting: /state/m.json"
            ]
        );
        // A working directory that does not exist is not used.
        assert_eq!(command.get_current_dir(), None);
    }

    #[test]
    fn a_message_file_a_host_left_goes_at_a_wake_an_hour_on() {
        let folder = host_shim_testkit::scratch("wake", "left");
        let written = |name: &str, age: u64| {
            let path = folder.join(name);
            let file = std::fs::File::create(&path).unwrap();
            let when = std::time::SystemTime::now() - std::time::Duration::from_secs(age);
            file.set_modified(when).unwrap();
            path
        };
        let left = written("1-1-0.json", MESSAGE_FILE_KEPT.as_secs() + 60);
        let fresh = written("1-2-0.json", 60);
        let other = written("notes.txt", MESSAGE_FILE_KEPT.as_secs() + 60);
        crate::os::remove_older_than(&folder, MESSAGE_FILE_KEPT, is_message_file);
        assert!(!left.exists(), "a file left an hour ago goes");
        assert!(fresh.exists(), "a command may still read a new one");
        assert!(other.exists(), "only message files are removed");
    }

    #[test]
    fn a_bad_template_is_named() {
        let err = WakeCommand::parse("claude --resume {session}")
            .unwrap_err()
            .to_string();
        assert!(err.contains("\"{session}\" is not a placeholder"), "{err}");
        let err = WakeCommand::parse("claude 'open").unwrap_err().to_string();
        assert!(err.contains("quote is not closed"), "{err}");
        assert!(WakeCommand::parse("  ").is_err());
        // A word can be empty when quoted.
        assert_eq!(WakeCommand::parse("x ''").unwrap().words, ["x", ""]);
    }

    #[test]
    fn a_started_command_is_told_as_a_wake_started_never_as_woke() {
        use crate::contract::latest::{DeliveryMode, DeliveryState};
        use crate::inbox::{Handle, Waiting};
        let message = |woke| Waiting {
            handle: Handle::new("h1"),
            message: SpooledMessage::new("s1", DeliveryMode::Queue, "hi", "", woke),
        };
        let answer = |wake: Option<&WakeCommand>, woke| {
            let delivered = waiting_for_hooks(wake, &message(woke), None);
            (delivered.woke, delivered.state)
        };
        let started = WakeCommand::parse("true").unwrap();
        assert_eq!(
            answer(Some(&started), true),
            (false, DeliveryState::WakeStarted)
        );
        // No command, none decided, or one that cannot start: the message waits.
        assert_eq!(answer(None, true), (false, DeliveryState::Waiting));
        assert_eq!(
            answer(Some(&started), false),
            (false, DeliveryState::Waiting)
        );
        let missing = WakeCommand::parse("/nonexistent/host-shim-wake").unwrap();
        assert_eq!(
            answer(Some(&missing), true),
            (false, DeliveryState::Waiting)
        );
        // The message files of this process (`<pid>-…`) go as their commands exit, or
        // at once when one cannot start: none is left in the user's folder.
        let ours = format!("{}-", std::process::id());
        let left = || {
            (std::fs::read_dir(folder()).into_iter().flatten().flatten())
                .filter(|entry| entry.file_name().to_string_lossy().starts_with(&ours))
                .count()
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while left() > 0 && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert_eq!(left(), 0, "a message file outlived its wake command");
    }
}
