//! `--wake-command TEMPLATE`: how the host wakes a cold session a message was spooled
//! for. The template is split into words (single and double quotes group words; no
//! shell runs it), and in each word `{id}`, `{cwd}` and `{message_file}` are replaced by
//! the target's id, its working directory and the spooled message's path. The command
//! starts in the target's working directory when that exists, with no stdin; the host
//! does not wait for it.

use anyhow::{Result, bail};
use std::path::Path;
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
            command.current_dir(cwd);
        }
        command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        command
    }

    /// Starts the command for one target and lets it run; a thread reaps it.
    pub fn spawn(&self, id: &str, cwd: Option<&str>, message_file: &Path) -> std::io::Result<()> {
        let mut child = self.command(id, cwd, message_file).spawn()?;
        std::thread::spawn(move || child.wait());
        Ok(())
    }
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
}
