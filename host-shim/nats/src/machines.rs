//! The other machines' sessions, as one more store beside this machine's: listed from
//! what each machine published (`d.<machine>`), live as its heartbeat says (the live
//! bucket, whose entries expire), read by asking that machine's host
//! (`st.<bucket>.<machine>.read`), messaged through the shared inbox, where the target
//! machine's hooks and hand-overs take it as they take a local message: once stored,
//! the target's machine is told on the same subject, and its host does with the
//! message what its harness does at once (an idle session given it as a new turn).
//!
//! A read of a machine where no host runs (no session of it open, or the machine off)
//! fails at once (NATS answers "no responders"); one that does not answer in time
//! fails after the cluster file's `readTimeoutMs`. Either way the store says why
//! ([`host_shim::SessionQuery::unanswered`]) and the host ends the call with that
//! sentence: never a hang, never "no such session" for a session that exists.
//!
//! Trust model: what another machine published or answered is data, as a harness's
//! own files are: ids are checked, a machine's list is bounded, a damaged answer is
//! named and not shown. This machine's own sessions are never taken from the cluster:
//! its own published entry is skipped (its local stores answer for them).

use crate::config::MachineName;
use crate::config::{ClusterFile, live_bucket};
use crate::connection::Connection;
use crate::watch::Watched;
use crate::wire::{Ask, Live, PublishedSession, Reply};
use anyhow::{Result, anyhow};
use host_shim::contract::latest::{
    Delivered, DeliveryRefusal, DeliveryState, InboxCount, MessageContent, SendCounts,
    SessionHeader, SessionIndex, SurfaceIndex, ToolAction,
};
use host_shim::inbox::delivery::{Arriving, Woken};
use host_shim::inbox::{Desk, Recipient, SharedInbox, Waiting, send_history_or_none};
use host_shim::{SessionQuery, Store};
use std::collections::HashMap;
use std::sync::Arc;
use std::thread::ThreadId;
use std::time::Duration;

/// The most sessions taken from one machine's published list.
pub const SESSIONS_PER_MACHINE: usize = 10_000;

/// One session of another machine, as this call sees it.
pub(crate) struct Remote {
    pub(crate) machine: String,
    published: PublishedSession,
    pub(crate) live: bool,
    /// The machines whose messages its machine takes (none: every machine).
    accept_from: Option<Arc<Vec<String>>>,
}

/// Sessions of the other machines of the cluster.
pub struct Machines {
    connection: Arc<Connection>,
    directory: Directory,
    machine: MachineName,
    bucket: String,
    read_timeout: Duration,
    desk: Desk,
    /// The shared inbox, told where each session is whenever this store reads it.
    places: crate::inbox::NatsInbox,
    /// What the cluster said this call (read once per call): by id, and in order.
    seen: Option<(HashMap<String, usize>, Vec<Remote>)>,
    /// Why the last question on each thread went unanswered (calls on several threads
    /// share the store).
    unanswered: HashMap<ThreadId, String>,
}

impl Machines {
    pub(crate) fn open(
        connection: Arc<Connection>,
        file: &ClusterFile,
        inbox: SharedInbox,
        places: crate::inbox::NatsInbox,
    ) -> Result<Machines> {
        let directory = Directory::open(&connection, file, &places)?;
        Ok(Machines {
            connection,
            directory,
            machine: file.machine.clone(),
            bucket: file.bucket.clone(),
            read_timeout: file.read_timeout,
            desk: Desk::new(inbox),
            places,
            seen: None,
            unanswered: HashMap::new(),
        })
    }

    fn say(&mut self, why: String) {
        self.unanswered.insert(std::thread::current().id(), why);
    }

    /// The other machines' sessions, read once per call. A cluster that cannot be
    /// read leaves nothing, and says so.
    fn seen(&mut self) -> &(HashMap<String, usize>, Vec<Remote>) {
        if self.seen.is_none() {
            let read = self.directory.remotes();
            let remotes = match read {
                Ok(all) => {
                    // The shared inbox puts a message where its target is.
                    (self.places).learn_places(
                        (all.iter())
                            .map(|r| (r.published.id.clone(), r.machine.clone()))
                            .collect(),
                    );
                    (all.into_iter())
                        .filter(|r| r.machine != self.machine.as_str())
                        .collect()
                }
                Err(err) => {
                    self.say(format!(
                        "the cluster did not answer, so the sessions of other machines cannot be seen now ({err:#}). Try again in a moment."
                    ));
                    Vec::new()
                }
            };
            let mut remotes: Vec<Remote> = remotes;
            remotes.sort_by_key(|r| std::cmp::Reverse(r.published.created_at_ms));
            let mut by_id = HashMap::with_capacity(remotes.len());
            for (at, remote) in remotes.iter().enumerate() {
                by_id.entry(remote.published.id.clone()).or_insert(at);
            }
            self.seen = Some((by_id, remotes));
        }
        self.seen.as_ref().expect("read above")
    }

    fn remote(&mut self, id: &str) -> Option<&Remote> {
        let (by_id, remotes) = self.seen();
        by_id.get(id).map(|&at| &remotes[at])
    }

    fn header(&mut self, id: &str) -> Option<SessionHeader> {
        let remote = self.remote(id)?;
        let mut header = remote.published.header(&remote.machine, remote.live);
        header.inbound = self.desk.inbound(id);
        Some(header)
    }

    /// Asks the host of the machine `id` is on; none (and why, for the call) when the
    /// session is not another machine's or its machine does not answer.
    fn ask(&mut self, id: &str, ask: Ask) -> Option<Reply> {
        let machine = self.remote(id)?.machine.clone();
        match self.request(&machine, id, &ask) {
            Ok(reply) => Some(reply),
            Err(why) => {
                self.say(why);
                None
            }
        }
    }

    /// Asks `machine`'s host about its session `id`: its answer, or why there is none.
    fn request(&self, machine: &str, id: &str, ask: &Ask) -> Result<Reply, String> {
        let subject = format!("st.{}.{machine}.read", self.bucket);
        let payload = bytes::Bytes::from(serde_json::to_vec(ask).map_err(|e| e.to_string())?);
        let (client, timeout) = (self.connection.client.clone(), self.read_timeout);
        let answer = self.connection.once(async move {
            match tokio::time::timeout(timeout, client.request(subject, payload)).await {
                Err(_) => Err(Unreachable::Late),
                Ok(Err(err)) if err.kind() == async_nats::RequestErrorKind::NoResponders => {
                    Err(Unreachable::NoHost)
                }
                Ok(Err(err)) => Err(Unreachable::Other(err.to_string())),
                Ok(Ok(message)) => Ok(message.payload),
            }
            .map_err(|why| anyhow!(why))
        });
        Err(match answer {
            Ok(payload) => match host_shim::json::from_slice::<Reply>(&payload) {
                Ok(Reply::Refused { why }) => {
                    format!("machine {machine} could not answer the read of session {id}: {why}.")
                }
                Ok(reply) => return Ok(reply),
                Err(err) => format!(
                    "machine {machine} answered the read of session {id} with something that is not an answer ({err}): its host-shim may be another version."
                ),
            },
            Err(err) => match err.downcast::<Unreachable>() {
                Ok(Unreachable::NoHost) => format!(
                    "session {id} is on machine {machine}, where no session-tools host runs now (no session there is open, or the machine is off): nothing was read. Its listing row is what {machine} last published; a message sent to it waits until a session starts there."
                ),
                Ok(Unreachable::Late) => format!(
                    "machine {machine} did not answer the read of session {id} within {} ms: nothing was read. Try again in a moment.",
                    timeout.as_millis()
                ),
                Ok(Unreachable::Other(err)) => format!(
                    "the cluster could not carry the read of session {id} on machine {machine} ({err}): nothing was read. Try again in a moment."
                ),
                Err(err) => format!(
                    "the cluster could not carry the read of session {id} on machine {machine} ({err:#}): nothing was read. Try again in a moment."
                ),
            },
        })
    }
}

/// Why another machine's host gave no answer.
#[derive(Debug)]
enum Unreachable {
    NoHost,
    Late,
    Other(String),
}

impl std::fmt::Display for Unreachable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unreachable::NoHost => f.write_str("no responders"),
            Unreachable::Late => f.write_str("no answer in time"),
            Unreachable::Other(err) => f.write_str(err),
        }
    }
}

impl std::error::Error for Unreachable {}

/// What every machine published (`d.<machine>`) and which of its sessions run (the
/// live bucket), each watched ([`Watched`]): read current at each use without a walk
/// of either bucket.
pub(crate) struct Directory {
    /// Shared with the inbox, which reads from it where each session is.
    published: Arc<Watched>,
    live: Watched,
    /// How long a heartbeat holds: the live bucket's age limit (the server removes
    /// older ones; the watch keeps them, so they are told apart by age).
    live_for: Duration,
}

impl Directory {
    /// The deployment's directory, its published lists watched by `inbox`'s watch.
    pub(crate) fn open(
        connection: &Arc<Connection>,
        file: &ClusterFile,
        inbox: &crate::inbox::NatsInbox,
    ) -> Result<Directory> {
        let live = connection.bucket(&live_bucket(&file.bucket), file.replicas, file.live_ttl)?;
        let live_for = match live.stream.cached_info().config.max_age {
            Duration::ZERO => file.live_ttl,
            set => set,
        };
        Ok(Directory {
            published: inbox.published(),
            live: Watched::new(connection.clone(), live, ">"),
            live_for,
        })
    }

    /// Every machine's published sessions, each live when its machine's heartbeat (not
    /// older than the live bucket's age limit) names it.
    pub(crate) fn remotes(&self) -> Result<Vec<Remote>> {
        let running: HashMap<String, Vec<String>> = self.live.read(|beats| {
            (beats.iter())
                .filter(|(_, kept)| kept.age() < self.live_for)
                // An entry that is not a heartbeat counts as none: that machine's
                // sessions read as cold.
                .filter_map(|(machine, kept)| {
                    let beat = host_shim::json::from_slice::<Live>(&kept.value).ok()?;
                    Some((machine.clone(), beat.live))
                })
                .collect()
        })?;
        let mut all = Vec::new();
        for (machine, published) in crate::published::lists(&self.published)? {
            let live = running.get(&machine);
            let accept_from = published.accept_from.map(Arc::new);
            for session in published.sessions.into_iter().take(SESSIONS_PER_MACHINE) {
                if host_shim::inbox::checked_id(&session.id).is_err() {
                    continue;
                }
                all.push(Remote {
                    machine: machine.clone(),
                    live: live.is_some_and(|ids| ids.contains(&session.id)),
                    published: session,
                    accept_from: accept_from.clone(),
                });
            }
        }
        Ok(all)
    }
}

impl SessionQuery for Machines {
    fn begin_call(&mut self, caller: &str) {
        self.seen = None;
        self.desk.set_caller(caller);
    }

    fn end_call(&mut self) {
        self.seen = None;
        self.desk.end_call();
        self.unanswered.remove(&std::thread::current().id());
    }

    fn list_sessions(&mut self) -> SessionIndex {
        let (_, remotes) = self.seen();
        let headers: Vec<SessionHeader> = (remotes.iter())
            .map(|r| r.published.header(&r.machine, r.live))
            .collect();
        SessionIndex::of(&headers)
    }

    fn get_session(&mut self, id: &str) -> Option<SessionHeader> {
        self.header(id)
    }

    fn get_sessions(&mut self, ids: &[String]) -> Vec<Option<SessionHeader>> {
        ids.iter().map(|id| self.header(id)).collect()
    }

    fn title_snapshots(&mut self, ids: &[String]) -> Vec<Option<String>> {
        (ids.iter())
            .map(|id| self.remote(id).and_then(|r| r.published.title.clone()))
            .collect()
    }

    fn get_surface(&mut self, id: &str, lead_chars: u32) -> Option<SurfaceIndex> {
        let ask = Ask::Surface {
            id: id.to_string(),
            lead_chars,
        };
        match self.ask(id, ask)? {
            Reply::Surface { surface } => surface?.index(),
            _ => None,
        }
    }

    fn get_messages(&mut self, id: &str, seqs: &[u64]) -> Vec<Option<MessageContent>> {
        let ask = Ask::Messages {
            id: id.to_string(),
            seqs: seqs.to_vec(),
        };
        match self.ask(id, ask) {
            Some(Reply::Messages { messages }) if messages.len() == seqs.len() => (messages
                .into_iter())
            .map(|m| m.map(MessageContent::from))
            .collect(),
            _ => vec![None; seqs.len()],
        }
    }

    fn inbox_status(&mut self, target: &str, sender: &str) -> InboxCount {
        (self.desk.inbox())
            .count_from(target, sender)
            .unwrap_or(InboxCount::NONE)
    }

    fn action_seqs(&mut self, id: &str) -> Vec<u64> {
        match self.ask(id, Ask::ActionSeqs { id: id.to_string() }) {
            Some(Reply::ActionSeqs { seqs }) => seqs,
            _ => Vec::new(),
        }
    }

    fn get_actions(&mut self, id: &str, seqs: &[u64]) -> Vec<Vec<ToolAction>> {
        let ask = Ask::Actions {
            id: id.to_string(),
            seqs: seqs.to_vec(),
        };
        match self.ask(id, ask) {
            Some(Reply::Actions { actions }) if actions.len() == seqs.len() => (actions
                .into_iter())
            .map(|calls| calls.into_iter().map(|a| a.action()).collect())
            .collect(),
            _ => vec![Vec::new(); seqs.len()],
        }
    }

    fn send_history(&mut self, ask: &host_shim::HistoryAsk) -> SendCounts {
        send_history_or_none(&**self.desk.inbox(), ask)
    }

    fn unanswered(&mut self) -> Option<String> {
        self.unanswered.remove(&std::thread::current().id())
    }
}

impl Recipient for Machines {
    /// Whether the call may wake the target: its machine is told, and wakes it by its
    /// own rules (nothing wakes from here).
    type Plan = bool;

    fn desk(&mut self) -> &mut Desk {
        &mut self.desk
    }

    fn wake(&mut self, arriving: &Arriving) -> Woken<bool> {
        Woken {
            woke: false,
            plan: arriving.may_wake,
        }
    }

    /// The message is in the cluster: the target's machine is told, and its host does
    /// with it what its harness does with a message at once (an idle session given it
    /// as a new turn). Its answer says where the message is; a machine that does not
    /// answer leaves it waiting for its hooks, as accepted.
    fn accepted(&mut self, waiting: &Waiting, may_wake: bool) -> Delivered {
        let target = &waiting.message.target;
        let arrived = Ask::Arrived {
            id: target.clone(),
            handle: waiting.handle.as_str().to_string(),
            may_wake,
        };
        let machine = self.remote(target).map(|r| r.machine.clone());
        let told = machine.map(|machine| self.request(&machine, target, &arrived));
        match told {
            Some(Ok(Reply::Arrived {
                delivered: Some(arrival),
            })) => arrival.delivered(&waiting.message),
            _ => Delivered {
                woke: false,
                repeat: false,
                state: DeliveryState::Waiting,
                message_id: waiting.message.message_id.clone(),
            },
        }
    }

    fn resolve(&mut self, target: &str) -> Result<bool, DeliveryRefusal> {
        let me = self.machine.to_string();
        let Some(remote) = self.remote(target) else {
            return Err(DeliveryRefusal::NotFound);
        };
        if let Some(machines) = &remote.accept_from
            && !machines.contains(&me)
        {
            return Err(DeliveryRefusal::Rejected(format!(
                "machine {} takes no messages from machine {me} (its cluster file's acceptFrom); ask its person to add {me}",
                remote.machine
            )));
        }
        if let Some(owner) = &remote.published.parent_id {
            return Err(DeliveryRefusal::Rejected(format!(
                "a subagent has no inbox; message the session that owns it, {owner}"
            )));
        }
        Ok(remote.live)
    }
}

impl Store for Machines {
    fn harness(&self) -> &'static str {
        "machines"
    }
}
