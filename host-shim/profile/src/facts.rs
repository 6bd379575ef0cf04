//! A harness's fixed facts, declared as data in its crate's `harness.toml` (its names,
//! flags, help texts, hooks' words and the demo's), and read once per process by the
//! [`facts!`](crate::facts!) a profile writes. What differs in code (its store, its
//! hook's answer, its checks) stays in the profile's Rust.
//!
//! The file, every key a string unless said:
//!
//! ```toml
//! name = "copilot"                   # the name `setup` takes and a fix names
//! title = "GitHub Copilot CLI"       # how a person calls it
//! tested_package = "@github/copilot" # pinned in suite/package.json (or tested_version = "1.0.0")
//! home_hint = "~/.copilot"           # its folder as a person knows it
//! resume = "copilot --resume={id}"   # optional: resumes a session of its
//! set_up = "…"                       # what a person is told once setup wrote its files
//!
//! [sessions]                         # the flag naming where its sessions are
//! flag = "copilot-home"
//! value = "DIR"                      # optional: its value's name (DIR, FILE)
//! help = "…"
//! place_help = "…"                   # optional: its help on setup and doctor (its home)
//! home_env = "COPILOT_HOME"          # optional: the variable that moves its home
//!
//! [[places]]                         # optional, any number: other folders of its files
//! flag = "claude-config"
//! help = "…"
//!
//! [wake]                             # optional: the flag of a wake command
//! flag = "copilot-wake-command"
//! help = "…"
//! setup_help = "…"                   # optional: its help on setup
//!
//! [hook]                             # optional: `host-shim <command>`
//! command = "copilot-hook"
//! about = "…"
//!
//! [write_hook]                       # optional: its pre-write hook
//! command = "copilot-write-hook"
//! runs = "…"
//!
//! [tour]                             # the demo's words
//! sessions = "Copilot CLI's sessions"
//! none = "…"
//! page = "host-shim/harnesses/copilot/README.md"
//! ```
//!
//! The file is compiled into the crate: it is the crate's own source, trusted as its
//! Rust is. One that does not read as these facts is the crate's mistake, found by the
//! first command that lists the harnesses (every test of the command does): it panics
//! naming the file and the key.

use crate::pinned_version;
use crate::write::WriteHook;
use clap::{Arg, ArgMatches};
use toml_edit::{DocumentMut, Item, Table};

/// A harness's fixed facts, one value: what every command says of it and what every
/// profile would otherwise write the same way (read from its `harness.toml`).
pub struct Facts {
    /// The name `setup` takes and a fix names (`claude`).
    pub name: &'static str,
    /// How a person calls it (`Claude Code`).
    pub title: &'static str,
    /// The version its real-client suite runs, as that suite's package.json pins it.
    pub tested_version: &'static str,
    /// Its folder as a person knows it (`~/.claude`), for `doctor`'s "none found".
    pub home_hint: &'static str,
    /// What a person is told once `setup` wrote its files (naming the tools as its
    /// model sees them).
    pub set_up: &'static str,
    /// The flag naming where its sessions are, on `call`, `mcp`, `watch` and `demo`.
    pub sessions: PathFlag,
    /// That flag's help on `setup` and `doctor`, where the same folder also holds the
    /// harness's own files (its home); none where it does not.
    pub place_help: Option<&'static str>,
    /// The variable that moves its home, named when no home can be found (see
    /// [`crate::HarnessProfile::find_home`]).
    pub home_env: Option<&'static str>,
    /// The other flags naming where its own files are, on `setup` and `doctor`.
    pub places: Vec<PathFlag>,
    /// The flag of a wake command for a cold session, on `call`, `mcp` and `setup`.
    pub wake: Option<WakeFlag>,
    /// Its hook command (`host-shim claude-hook`), answered by
    /// [`crate::HarnessProfile::answer_hook`].
    pub hook: Option<Hook>,
    /// Its pre-write hook (`host-shim claude-write-hook`), which asks the plugin before a
    /// file-writing tool runs; none: its writes are not checked.
    pub write_hook: Option<WriteHook>,
    /// The demo's words for a tour of its sessions.
    pub tour: Tour,
    /// The command that resumes a session of its, `{id}` the session (`claude --resume
    /// {id}`), for `doctor`'s fix of messages that wait.
    pub resume: Option<&'static str>,
}

/// A flag naming a file or folder (`--claude-projects DIR`): its long name (also the
/// id a store finds its value by), its value's name and its help.
pub struct PathFlag {
    pub long: &'static str,
    pub value_name: &'static str,
    pub help: &'static str,
}

impl PathFlag {
    /// The flag, read as a path.
    pub fn arg(&self) -> Arg {
        self.arg_with(self.help)
    }

    pub(crate) fn arg_with(&self, help: &'static str) -> Arg {
        crate::path_flag(self.long, self.long, self.value_name, help)
    }
}

/// The flag of a harness's wake command: its long name (also its id), its help on
/// `call` and `mcp`, and on `setup` when setup writes it into the harness's server.
pub struct WakeFlag {
    pub long: &'static str,
    pub help: &'static str,
    pub setup_help: Option<&'static str>,
}

impl WakeFlag {
    pub(crate) fn arg(&self, help: &'static str) -> Arg {
        Arg::new(self.long)
            .long(self.long)
            .value_name("TEMPLATE")
            .help(help)
    }

    /// Its value on a `setup` command, when given.
    pub fn given<'a>(&self, flags: &'a ArgMatches) -> Option<&'a String> {
        flags.try_get_one::<String>(self.long).ok().flatten()
    }
}

/// A harness's hook command: `host-shim <command>` reads the hook's input on stdin and
/// writes its answer on stdout.
pub struct Hook {
    /// The subcommand (`claude-hook`).
    pub command: &'static str,
    /// Its help: what it hands over at which event.
    pub about: &'static str,
}

/// The demo's words for a harness's sessions.
pub struct Tour {
    /// What the sessions are, e.g. "Claude Code's sessions".
    pub sessions: &'static str,
    /// The error when there are none, e.g. "the projects folder holds no Claude Code
    /// sessions".
    pub none: &'static str,
    /// The page that lets them message each other.
    pub page: &'static str,
}

impl Facts {
    /// The facts `toml` (the text of `file`, a crate's `harness.toml`) declares; its
    /// `tested_package` is read from `package_json` (its suite's). Panics naming the
    /// file and key that do not read as facts.
    pub fn read(file: &str, toml: &str, package_json: Option<&'static str>) -> Facts {
        let document: DocumentMut =
            (toml.parse()).unwrap_or_else(|err| panic!("{file} is not TOML: {err}"));
        let top = Keys::of(file, "", document.as_table()).only(&[
            "name",
            "title",
            "tested_package",
            "tested_version",
            "home_hint",
            "resume",
            "set_up",
            "sessions",
            "places",
            "wake",
            "hook",
            "write_hook",
            "tour",
        ]);
        let tested_version = match (top.text("tested_package"), package_json) {
            (Some(package), Some(json)) => pinned_version(json, package),
            (Some(_), None) => panic!("{file}: tested_package needs the suite's package.json"),
            (None, _) => top.string("tested_version"),
        };
        let sessions = top.table(
            "sessions",
            &["flag", "value", "help", "place_help", "home_env"],
        );
        let tour = top.table("tour", &["sessions", "none", "page"]);
        Facts {
            name: top.string("name"),
            title: top.string("title"),
            tested_version,
            home_hint: top.string("home_hint"),
            set_up: top.string("set_up"),
            sessions: sessions.path_flag(),
            place_help: sessions.text("place_help"),
            home_env: sessions.text("home_env"),
            places: (top.tables("places", &["flag", "value", "help"]))
                .map(|place| place.path_flag())
                .collect(),
            wake: top
                .table_if("wake", &["flag", "help", "setup_help"])
                .map(|wake| WakeFlag {
                    long: wake.string("flag"),
                    help: wake.string("help"),
                    setup_help: wake.text("setup_help"),
                }),
            hook: top
                .table_if("hook", &["command", "about"])
                .map(|hook| Hook {
                    command: hook.string("command"),
                    about: hook.string("about"),
                }),
            write_hook: (top.table_if("write_hook", &["command", "runs"])).map(|hook| WriteHook {
                command: hook.string("command"),
                runs: hook.string("runs"),
            }),
            tour: Tour {
                sessions: tour.string("sessions"),
                none: tour.string("none"),
                page: tour.string("page"),
            },
            resume: top.text("resume"),
        }
    }
}

/// One table of a `harness.toml`, named for the panics.
struct Keys<'a> {
    file: &'a str,
    path: String,
    table: &'a Table,
}

impl<'a> Keys<'a> {
    fn of(file: &'a str, path: &str, table: &'a Table) -> Keys<'a> {
        Keys {
            file,
            path: path.to_string(),
            table,
        }
    }

    fn named(&self, key: &str) -> String {
        match self.path.as_str() {
            "" => key.to_string(),
            path => format!("{path}.{key}"),
        }
    }

    /// The string at `key`, when there; kept for the process's life (facts are read
    /// once per process).
    fn text(&self, key: &str) -> Option<&'static str> {
        let item = self.table.get(key)?;
        let text = (item.as_str())
            .unwrap_or_else(|| panic!("{}: {} is not a string", self.file, self.named(key)));
        Some(String::leak(text.to_string()))
    }

    fn string(&self, key: &str) -> &'static str {
        (self.text(key)).unwrap_or_else(|| panic!("{}: {} is missing", self.file, self.named(key)))
    }

    /// The table at `key` when there, whose keys are among `known`.
    fn table_if(&self, key: &str, known: &[&str]) -> Option<Keys<'a>> {
        let table = match self.table.get(key)? {
            Item::Table(table) => table,
            _ => panic!("{}: {} is not a table", self.file, self.named(key)),
        };
        Some(Keys::of(self.file, &self.named(key), table).only(known))
    }

    fn table(&self, key: &str, known: &[&str]) -> Keys<'a> {
        (self.table_if(key, known))
            .unwrap_or_else(|| panic!("{}: [{}] is missing", self.file, self.named(key)))
    }

    /// The tables of the array at `key`, each one's keys among `known`.
    fn tables(&self, key: &str, known: &'static [&'static str]) -> impl Iterator<Item = Keys<'a>> {
        let tables = self.table.get(key).map(|item| {
            (item.as_array_of_tables())
                .unwrap_or_else(|| panic!("{}: {} is not [[{key}]]", self.file, self.named(key)))
        });
        let (file, path) = (self.file, self.named(key));
        (tables.into_iter().flatten()).map(move |table| Keys::of(file, &path, table).only(known))
    }

    /// Panics on a key not among `known` (a misspelt one would be read as missing).
    fn only(self, known: &[&str]) -> Self {
        if let Some((key, _)) = self.table.iter().find(|(key, _)| !known.contains(key)) {
            panic!(
                "{}: {} is not a key of harness.toml",
                self.file,
                self.named(key)
            );
        }
        self
    }

    fn path_flag(&self) -> PathFlag {
        PathFlag {
            long: self.string("flag"),
            value_name: self.text("value").unwrap_or("DIR"),
            help: self.string("help"),
        }
    }
}

/// `fn facts(&self) -> &'static Facts` of a profile, from its crate's `harness.toml`
/// (and, given, the suite's `package.json` that pins its tested version, a path in
/// the crate), read once per process; and `fn mcp_client(&self)`, the [`McpClient`]
/// given (what its MCP client sends, code beside the data). Written inside the
/// profile's `impl HarnessProfile`.
///
/// [`McpClient`]: host_shim::McpClient
#[macro_export]
macro_rules! facts {
    ($package_json:literal, $mcp_client:expr) => {
        $crate::facts!(@read Some(include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/",
            $package_json
        ))), $mcp_client);
    };
    ($mcp_client:expr) => {
        $crate::facts!(@read None, $mcp_client);
    };
    (@read $package_json:expr, $mcp_client:expr) => {
        fn facts(&self) -> &'static $crate::Facts {
            static FACTS: std::sync::LazyLock<$crate::Facts> = std::sync::LazyLock::new(|| {
                $crate::Facts::read(
                    concat!(env!("CARGO_PKG_NAME"), "'s harness.toml"),
                    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/harness.toml")),
                    $package_json,
                )
            });
            &FACTS
        }

        fn mcp_client(&self) -> $crate::McpClient {
            $mcp_client
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOML: &str = r#"
name = "toy"
title = "Toy"
tested_version = "1.0.0"
home_hint = "~/.toy"
set_up = "the toy's sessions have the tools."

[sessions]
flag = "toy-sessions"
help = "The toy's sessions"

[[places]]
flag = "toy-config"
help = "Its folder"

[[places]]
flag = "toy-cache"
value = "FILE"
help = "Its cache"

[hook]
command = "toy-hook"
about = "The toy's hook"

[tour]
sessions = "The toy's sessions"
none = "none"
page = "host-shim/harnesses/toy/README.md"
"#;

    #[test]
    fn a_harness_toml_reads_as_its_facts() {
        let facts = Facts::read("toy.toml", TOML, None);
        assert_eq!(
            (facts.name, facts.title, facts.tested_version),
            ("toy", "Toy", "1.0.0")
        );
        assert_eq!(facts.sessions.long, "toy-sessions");
        let places: Vec<_> = (facts.places.iter())
            .map(|p| (p.long, p.value_name))
            .collect();
        assert_eq!(places, [("toy-config", "DIR"), ("toy-cache", "FILE")]);
        assert_eq!(facts.hook.as_ref().map(|h| h.command), Some("toy-hook"));
        assert!(facts.wake.is_none() && facts.write_hook.is_none() && facts.resume.is_none());
        assert_eq!(facts.place_help, None);
    }

    #[test]
    fn a_tested_package_is_read_from_the_suites_pin() {
        let toml = TOML.replace("tested_version = \"1.0.0\"", "tested_package = \"toy\"");
        let facts = Facts::read(
            "toy.toml",
            &toml,
            Some(r#"{"dependencies": {"toy": "2.3.4"}}"#),
        );
        assert_eq!(facts.tested_version, "2.3.4");
    }

    #[test]
    fn a_key_missing_or_of_another_kind_is_named_with_the_file() {
        let panics = |toml: String| {
            let read = std::panic::catch_unwind(|| Facts::read("toy.toml", &toml, None));
            let message = read.err().expect("not facts");
            (message.downcast_ref::<String>().cloned()).expect("a message")
        };
        let without_tour = TOML[..TOML.find("[tour]").unwrap()].to_string();
        let wrong = [
            (TOML.replace("title = \"Toy\"\n", ""), "title is missing"),
            (
                TOML.replace("flag = \"toy-sessions\"", "flag = 3"),
                "sessions.flag is not a string",
            ),
            (without_tour, "[tour] is missing"),
            (
                TOML.replace("[tour]", "[journey]"),
                "journey is not a key of harness.toml",
            ),
            (
                TOML.replace("[hook]", "[hook]\nabuot = \"x\""),
                "hook.abuot is not a key of harness.toml",
            ),
        ];
        for (toml, said) in wrong {
            assert_eq!(panics(toml), format!("toy.toml: {said}"));
        }
        assert!(panics("name = ".into()).starts_with("toy.toml is not TOML"));
    }
}
