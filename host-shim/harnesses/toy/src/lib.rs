//! A toy harness, added as this folder alone (its test runs the command over the
//! command's list and the toy; it is never built into the command people run): its
//! sessions are text files in a folder (`--toy-sessions DIR`: `<id>.txt`, the first
//! line its title, each other line a message of its person), messages to them wait in
//! the state folder's inbox until `host-shim toy-hook` hands them over (an offer until the
//! session's record, the file of what the toy gave it, shows it), its MCP client
//! names the caller in `TOY_SESSION_ID` or a call's `_meta["toy/session"]`, `setup toy`
//! writes one file (`toy.json` in `--toy-config DIR`, default `~/.toy`) and `doctor`
//! checks that file's server.

use anyhow::{Context, Result, bail};
use clap::ArgMatches;
use host_shim::harnesses::surface::Surface;
use host_shim::inbox::{Desk, HookReport, Recipient, Takes, Witness, hand_over_waiting, shown_in};
use host_shim::{
    DeliveryRefusal, InboxCount, McpClient, MessageContent, SessionHeader, SessionIndex,
    SessionQuery, Store, SurfaceIndex,
};
use host_shim_profile::change::Change;
use host_shim_profile::checks::{Report, check_server};
use host_shim_profile::{HarnessProfile, HookCall, SetupInputs, StoreInputs, path_of};
use std::path::{Path, PathBuf};

pub struct Toy;

impl HarnessProfile for Toy {
    host_shim_profile::facts!(McpClient {
        who: "the toy client",
        caller_env: Some("TOY_SESSION_ID"),
        caller_meta: Some("toy/session"),
        call_id_meta: Some("toy/call"),
        stamps: None,
    });

    fn store(&self, place: &Path, with: &StoreInputs) -> Result<Box<dyn Store>> {
        Ok(Box::new(ToyStore {
            folder: place.to_path_buf(),
            desk: Desk::new(with.inbox.clone()),
        }))
    }

    fn sessions_place(&self, places: &ArgMatches) -> Result<PathBuf> {
        Ok(config(places)?.join("sessions"))
    }

    fn setup(&self, places: &ArgMatches, setup: &SetupInputs) -> Result<Vec<Change>> {
        let path = config(places)?.join("toy.json");
        let before = std::fs::read_to_string(&path).ok();
        let after = (!setup.remove).then(|| {
            let file = serde_json::json!({
                "command": setup.commands.binary,
                "args": setup.commands.server_args,
                "hook": setup.commands.hook("toy-hook"),
            });
            format!("{file:#}\n")
        });
        Ok(vec![Change {
            path,
            before,
            after,
            own_folder: None,
        }])
    }

    fn holds(&self, sessions: &Path, session: &str) -> bool {
        sessions.join(format!("{session}.txt")).is_file()
    }

    fn found(&self, places: &ArgMatches) -> Result<bool> {
        Ok(config(places)?.exists())
    }

    fn check(&self, places: &ArgMatches, report: &mut Report, fix: &str) {
        let file = match config(places) {
            Ok(config) => config.join("toy.json"),
            Err(err) => return report.problem(&format!("{err:#}"), fix),
        };
        let server = (std::fs::read_to_string(&file).ok())
            .and_then(|text| serde_json::from_str::<host_shim_profile::json::Json>(&text).ok());
        match host_shim_profile::json::command_and_args(server.as_ref()) {
            (Some(command), args) => check_server(report, &command, &args, fix),
            (None, _) => report.problem(&format!("no server in {}", file.display()), fix),
        }
    }

    /// `host-shim toy-hook`: what waits for the session, as text. Its input names the
    /// session and, like a transcript path, its record: the file where the toy appends
    /// each hand-over it took.
    fn answer_hook(&self, call: HookCall) -> Result<HookReport> {
        let HookCall { state, input, out } = call;
        let input: serde_json::Value = serde_json::from_slice(input).unwrap_or_default();
        let Some(session) = input["session"].as_str() else {
            bail!("the toy hook reads {{\"session\": ID, \"record\": FILE}} on stdin");
        };
        let record = input["record"].as_str().map(Path::new);
        // Its record is small: read whole, wherever it stood at an offer.
        let witness = Witness::file(record, |path, _| match std::fs::read_to_string(path) {
            Ok(given) => Ok(shown_in([given.as_str()])),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(Default::default()),
            Err(err) => Err(err.into()),
        });
        let inbox = state.inbox()?;
        hand_over_waiting(&*inbox, session, Takes::All, 10_000, witness, |text| {
            Ok(writeln!(out, "{text}")?)
        })
    }
}

fn config(places: &ArgMatches) -> Result<PathBuf> {
    match path_of(places, Toy.facts().places[0].long) {
        Some(dir) => Ok(dir.to_path_buf()),
        None => Ok(PathBuf::from(std::env::var_os("HOME").context("no HOME")?).join(".toy")),
    }
}

/// The toy's sessions: `<id>.txt` files, read at each question.
struct ToyStore {
    folder: PathBuf,
    desk: Desk,
}

impl ToyStore {
    /// The session's title and messages.
    fn read(&self, id: &str) -> Option<(String, Vec<String>)> {
        let text = std::fs::read_to_string(self.folder.join(format!("{id}.txt"))).ok()?;
        let mut lines = text.lines().map(str::to_string);
        Some((lines.next().unwrap_or_default(), lines.collect()))
    }

    fn header(&self, id: &str) -> Option<SessionHeader> {
        self.read(id)?;
        Some(SessionHeader {
            cwd: Some("/toy".to_string()),
            ..SessionHeader::top_level(id, 1_800_000_000_000)
        })
    }
}

impl Store for ToyStore {
    fn harness(&self) -> &'static str {
        "toy"
    }
}

impl SessionQuery for ToyStore {
    fn list_sessions(&mut self) -> SessionIndex {
        let mut ids: Vec<String> = (std::fs::read_dir(&self.folder)
            .into_iter()
            .flatten()
            .flatten())
        .filter_map(|entry| {
            entry
                .file_name()
                .to_str()?
                .strip_suffix(".txt")
                .map(str::to_string)
        })
        .collect();
        ids.sort();
        let headers: Vec<SessionHeader> = ids.iter().filter_map(|id| self.header(id)).collect();
        SessionIndex::of(headers.iter())
    }

    fn get_session(&mut self, id: &str) -> Option<SessionHeader> {
        self.header(id)
    }

    fn get_sessions(&mut self, ids: &[String]) -> Vec<Option<SessionHeader>> {
        ids.iter().map(|id| self.header(id)).collect()
    }

    fn title_snapshots(&mut self, ids: &[String]) -> Vec<Option<String>> {
        ids.iter()
            .map(|id| self.read(id).map(|(title, _)| title))
            .collect()
    }

    fn get_surface(&mut self, id: &str, lead_chars: u32) -> Option<SurfaceIndex> {
        let (_, messages) = self.read(id)?;
        Some(Surface::of_person_texts(&messages).index(lead_chars))
    }

    fn get_messages(&mut self, id: &str, seqs: &[u64]) -> Vec<Option<MessageContent>> {
        let surface = self.read(id).map(|(_, m)| Surface::of_person_texts(&m));
        Surface::messages(surface.as_ref(), seqs)
    }

    fn inbox_status(&mut self, target: &str, sender: &str) -> InboxCount {
        (self.desk.inbox().count_from(target, sender)).unwrap_or(InboxCount::NONE)
    }
}

/// Every toy session takes messages; they wait for its hook.
impl Recipient for ToyStore {
    type Plan = ();

    fn desk(&mut self) -> &mut Desk {
        &mut self.desk
    }

    fn resolve(&mut self, target: &str) -> Result<bool, DeliveryRefusal> {
        self.header(target)
            .map(|h| h.live)
            .ok_or(DeliveryRefusal::NotFound)
    }
}
