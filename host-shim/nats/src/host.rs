//! What a machine's long-lived host runs for the other machines, while it runs: it
//! publishes the machine's sessions (`d.<machine>`, written when they change) and
//! which of them are live (`<machine>` in the live bucket, written every third of the
//! TTL, so it expires when no host of the machine is left), answers other machines'
//! reads of its sessions (`st.<bucket>.<machine>.read`, a queue group: one of the
//! machine's hosts answers each), and, told on the same subject that another machine
//! stored a message for one of its sessions, does with it what its harness does with a
//! message at once (an idle session given it as a new turn, a wake command started).
//!
//! It works over a [`Harnesses`] of this machine's stores only, its own (opened beside
//! the ones the host's calls use), on one thread of its own: a read from another
//! machine never waits for a lock a call of this machine holds while it waits for that
//! machine in turn.
//!
//! Trust model: a read is another machine's question, data: parsed, bounded (the
//! answer must fit the cluster's message size), answered from this machine's stores
//! only, never a change. Word of an arrived message changes nothing the cluster does
//! not already hold: it names a message already stored for one of this machine's
//! sessions, which is handed over by this machine's rules (what the session's person
//! lets in, whether it may be woken) and only while it waits, once (the inbox's
//! claim); a word naming no waiting message does nothing. Which machines may ask is
//! the deployment's subject permissions.

use crate::config::ClusterFile;
use crate::config::MachineName;
use crate::config::live_bucket;
use crate::connection::Connection;
use crate::wire::{
    Action, Arrival, Ask, Live, Message, Published, PublishedSession, Reply, Surface,
};
use anyhow::{Result, anyhow};
use async_nats::jetstream::kv;
use futures_util::StreamExt;
use host_shim::{Harnesses, Inbox, SessionQuery};
use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The largest published list, in bytes (a NATS message is at most 1 MB by default):
/// past it the oldest cold sessions are left out.
pub const PUBLISHED_BYTES: usize = 512 * 1024;

/// How often a host publishes at most when told to ([`MachineHost::refresher`]).
pub const REFRESH_AT_MOST: Duration = Duration::from_millis(50);

/// The queue group a machine's hosts answer reads in.
const HOSTS: &str = "session-tools-hosts";

enum Job {
    /// Publish soon (at most one publish per [`REFRESH_AT_MOST`]).
    Refresh,
    Read {
        ask: bytes::Bytes,
        reply: async_nats::Subject,
    },
    Stop,
}

/// The machine's publisher and read responder; dropping it stops both and, when no
/// session of this machine is left live, takes its heartbeat out at once.
pub struct MachineHost {
    jobs: mpsc::Sender<Job>,
    thread: Option<std::thread::JoinHandle<()>>,
    listener: tokio::task::AbortHandle,
}

/// The thread's state.
struct Publisher {
    connection: Arc<Connection>,
    directory: kv::Store,
    live: kv::Store,
    machine: MachineName,
    /// Which sessions the machine shares ([`ClusterFile::shares`]).
    file: ClusterFile,
    local: Harnesses,
    /// What this host last wrote, so an unchanged list is not written again.
    last: Option<Published>,
}

impl MachineHost {
    pub(crate) fn start(
        connection: Arc<Connection>,
        file: &ClusterFile,
        local: Harnesses,
    ) -> Result<MachineHost> {
        let directory = connection.bucket(&file.bucket, file.replicas, Duration::ZERO)?;
        let live = connection.bucket(&live_bucket(&file.bucket), file.replicas, file.live_ttl)?;
        let mut publisher = Publisher {
            connection: connection.clone(),
            directory,
            live,
            machine: file.machine.clone(),
            file: file.clone(),
            local,
            last: None,
        };
        // The first heartbeat before anything else: a host that cannot publish says so
        // as it starts.
        publisher.publish()?;
        let (jobs, queue) = mpsc::channel();
        let subject = format!("st.{}.{}.read", file.bucket, file.machine);
        let client = connection.client.clone();
        let subscriber = connection.once(async move {
            client
                .queue_subscribe(subject.clone(), HOSTS.to_string())
                .await
                .map_err(|err| anyhow!("cannot answer reads on {subject}: {err}"))
        })?;
        let forward = jobs.clone();
        let listener = connection
            .runtime
            .spawn(async move {
                let mut subscriber = subscriber;
                while let Some(message) = subscriber.next().await {
                    if let Some(reply) = message.reply {
                        let job = Job::Read {
                            ask: message.payload,
                            reply,
                        };
                        if forward.send(job).is_err() {
                            break;
                        }
                    }
                }
            })
            .abort_handle();
        let beat = file.live_ttl / 3;
        let thread = std::thread::Builder::new()
            .name(format!("session-tools {}", file.machine))
            .spawn(move || publisher.run(queue, beat))
            .map_err(|err| anyhow!("cannot start the machine's publisher: {err}"))?;
        Ok(MachineHost {
            jobs,
            thread: Some(thread),
            listener,
        })
    }
}

impl MachineHost {
    /// What tells the host to publish the machine's sessions again now, e.g. as a call
    /// begins (a session made since the last heartbeat is listed within a moment, not
    /// at the next beat). Cheap; calls close together make one publish per
    /// [`REFRESH_AT_MOST`].
    pub fn refresher(&self) -> impl Fn() + Send + Sync + 'static {
        let jobs = self.jobs.clone();
        move || {
            let _ = jobs.send(Job::Refresh);
        }
    }
}

impl Drop for MachineHost {
    fn drop(&mut self) {
        self.listener.abort();
        let _ = self.jobs.send(Job::Stop);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Publisher {
    fn run(mut self, queue: mpsc::Receiver<Job>, beat: Duration) {
        let mut next_beat = Instant::now() + beat;
        let mut last_beat = Instant::now();
        loop {
            let wait = next_beat.saturating_duration_since(Instant::now());
            match queue.recv_timeout(wait) {
                Ok(Job::Refresh) => {
                    let soonest = (last_beat + REFRESH_AT_MOST).max(Instant::now());
                    next_beat = next_beat.min(soonest);
                }
                Ok(Job::Read { ask, reply }) => self.answer(&ask, reply),
                Ok(Job::Stop) | Err(mpsc::RecvTimeoutError::Disconnected) => break,
                Err(mpsc::RecvTimeoutError::Timeout) => {}
            }
            if Instant::now() >= next_beat {
                // A beat that fails (the cluster away) is tried at the next.
                if let Err(err) = self.publish() {
                    eprintln!("host-shim: cannot publish this machine's sessions: {err:#}");
                }
                last_beat = Instant::now();
                next_beat = last_beat + beat;
            }
        }
        self.stop();
    }

    /// This machine's sessions, newest first, and which are live; the list cut to
    /// [`PUBLISHED_BYTES`] (live sessions kept).
    fn sessions(&mut self) -> (Published, Live) {
        let local = &mut self.local;
        local.begin_call("");
        let index = local.list_sessions();
        let ids = host_shim::harnesses::ids_of(&index);
        let headers = local.get_sessions(&ids);
        let titles = local.title_snapshots(&ids);
        local.end_call();
        let mut sessions: Vec<(bool, PublishedSession)> = (headers.into_iter().zip(titles))
            .filter_map(|(header, title)| {
                let header = header.filter(|h| self.file.shares(h.cwd.as_deref()))?;
                Some((header.live, PublishedSession::of(&header, title)))
            })
            .collect();
        sessions.sort_by_key(|(_, s)| std::cmp::Reverse(s.created_at_ms));
        let live = Live {
            live: (sessions.iter())
                .filter(|(live, _)| *live)
                .map(|(_, s)| s.id.clone())
                .collect(),
        };
        let mut size = 0;
        let published = Published {
            accept_from: (self.file.accept_from.as_ref())
                .map(|machines| machines.iter().map(|m| m.to_string()).collect()),
            sessions: (sessions.into_iter())
                .filter(|(live, session)| {
                    size += 64 + serde_json::to_vec(session).map_or(0, |v| v.len());
                    *live || size <= PUBLISHED_BYTES
                })
                .map(|(_, session)| session)
                .collect(),
        };
        (published, live)
    }

    /// One heartbeat: the list when it changed, the live sessions always.
    fn publish(&mut self) -> Result<()> {
        let (published, live) = self.sessions();
        self.write_list(published)?;
        let key = self.machine.as_str().to_string();
        (self.connection).put(&self.live, &key, serde_json::to_vec(&live)?)
    }

    /// The machine's list, when it changed since this host last wrote it.
    fn write_list(&mut self, published: Published) -> Result<()> {
        if self.last.as_ref() != Some(&published) {
            let key = format!("d.{}", self.machine);
            (self.connection).put(&self.directory, &key, serde_json::to_vec(&published)?)?;
            self.last = Some(published);
        }
        Ok(())
    }

    /// The host stops: the list as it is now (a session made during this host's last
    /// seconds is listed), and the heartbeat kept only while another host of this
    /// machine has live sessions (that host's next beat keeps it), else taken out.
    fn stop(&mut self) {
        let (published, live) = self.sessions();
        let key = self.machine.as_str().to_string();
        let done = self
            .write_list(published)
            .and_then(|()| match live.live.is_empty() {
                true => {
                    let (store, key) = (self.live.clone(), key);
                    self.connection.once(async move {
                        store
                            .purge(&key)
                            .await
                            .map_err(|err| anyhow!("cannot take the heartbeat out: {err}"))
                    })
                }
                false => serde_json::to_vec(&live)
                    .map_err(anyhow::Error::from)
                    .and_then(|value| self.connection.put(&self.live, &key, value)),
            });
        if let Err(err) = done {
            eprintln!(
                "host-shim: {err:#}; this machine reads as running until its heartbeat expires"
            );
        }
    }

    /// Answers one read; an answer too large for the cluster says so instead.
    fn answer(&mut self, ask: &[u8], reply: async_nats::Subject) {
        let answer = match host_shim::json::from_slice::<Ask>(ask) {
            Ok(ask) => self.read(ask),
            Err(err) => Reply::Refused {
                why: format!("the question is not one this host reads ({err})"),
            },
        };
        let mut payload = serde_json::to_vec(&answer).unwrap_or_default();
        let limit = self.connection.client.server_info().max_payload;
        if payload.len() > limit {
            let refused = Reply::Refused {
                why: format!(
                    "the answer is {} bytes, more than the cluster's message limit of {limit} bytes; read fewer messages at once",
                    payload.len()
                ),
            };
            payload = serde_json::to_vec(&refused).unwrap_or_default();
        }
        let client = self.connection.client.clone();
        let sent = self.connection.once(async move {
            client
                .publish(reply, payload.into())
                .await
                .map_err(|err| anyhow!("cannot answer a read: {err}"))
        });
        if let Err(err) = sent {
            eprintln!("host-shim: {err:#}");
        }
    }

    fn read(&mut self, ask: Ask) -> Reply {
        let local = &mut self.local;
        local.begin_call("");
        // A session this machine does not share is, to the others, no session.
        let id = match &ask {
            Ask::Surface { id, .. }
            | Ask::Messages { id, .. }
            | Ask::ActionSeqs { id }
            | Ask::Actions { id, .. }
            | Ask::Arrived { id, .. } => id,
        };
        // Looked up only when the machine shares some sessions, not all.
        let shared = self.file.publish_paths.is_none()
            || (local.get_session(id)).is_some_and(|h| self.file.shares(h.cwd.as_deref()));
        if !shared {
            local.end_call();
            return Reply::no_session(&ask);
        }
        let reply = match ask {
            Ask::Surface { id, lead_chars } => Reply::Surface {
                surface: local
                    .get_surface(&id, lead_chars)
                    .as_ref()
                    .map(Surface::from),
            },
            Ask::Messages { id, seqs } => Reply::Messages {
                messages: (local.get_messages(&id, &seqs).into_iter())
                    .map(|m| m.map(Message::from))
                    .collect(),
            },
            Ask::ActionSeqs { id } => Reply::ActionSeqs {
                seqs: local.action_seqs(&id),
            },
            Ask::Actions { id, seqs } => Reply::Actions {
                actions: (local.get_actions(&id, &seqs).into_iter())
                    .map(|calls| calls.into_iter().map(Action::from).collect())
                    .collect(),
            },
            Ask::Arrived {
                id,
                handle,
                may_wake,
            } => Reply::Arrived {
                delivered: local
                    .arrived(&id, &handle, may_wake)
                    .as_ref()
                    .map(Arrival::of),
            },
        };
        local.end_call();
        reply
    }
}
