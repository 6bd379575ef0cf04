//! Sessions on several machines, through NATS JetStream: what every machine's
//! `host-shim` processes share so a session on one machine lists, reads and messages a
//! session on another.
//!
//! - [`NatsInbox`] ([`inbox`]): the inbox, an [`host_shim::InboxBackend`] over one
//!   key-value bucket; a message sent on one machine waits there until the target's
//!   machine hands it over, exactly as the local state folder's inbox does on one.
//! - [`Machines`] ([`machines`]): the other machines' sessions as one more
//!   [`host_shim::Store`]: listed from what each machine published, read by asking
//!   that machine's host, messaged through the shared inbox.
//! - [`MachineHost`] ([`host`]): what a machine's long-lived host (its MCP server) runs
//!   besides: it publishes the machine's sessions and liveness, and answers the other
//!   machines' reads of them.
//! - [`ClusterFile`] ([`config`]): where the cluster is and what this machine is
//!   called, from one file; [`Cluster`] joins it.
//!
//! Subjects and keys, under the deployment's bucket name `<b>` (a machine's name and a
//! session id are each one subject token; a session id's `.` is written `=`):
//!
//! ```text
//! KV <b>        m.<machine>.<session>.<sender machine>.<name>   a message ([`inbox`])
//!               s.<machine>.<session>.<sender machine>.<name>   its claim or hand-over mark
//!               p.<machine>.<session>     what the session's person lets in
//!               d.<machine>               the sessions a machine published
//!               probe.<machine>           never written: where a machine asks the
//!                                         leader how far writes stand ([`lookup`])
//! KV <b>-live   <machine>                 the machine's live sessions (expires: its TTL)
//! st.<b>.<machine>.read                   a read of one of the machine's sessions, or
//!                                         word of a message stored for one
//! ```
//!
//! Trust model: the cluster is the deployment's. Which machine may write what is its
//! NATS configuration (credentials, the subject permissions [`permissions`] writes:
//! each machine writes messages only as their sender, marks and lists only its own, and
//! reads only the messages it sent or is sent),
//! which the connection presents ([`ClusterFile`]: a credentials file, TLS); without
//! them, whoever may write the bucket may write any key. What comes back
//! from the bucket or another machine is data: checked, bounded, never trusted to name
//! this machine's sessions.
//!
//! The NATS client is asynchronous; this crate runs it on a small runtime of its own
//! (one worker thread) and waits for each step on the caller's thread, so it works
//! from plain threads and from inside another runtime's blocking tasks alike. The kit
//! (`host-shim`) stays free of any async runtime; a host without a cluster file never
//! loads this.

pub mod config;
pub mod host;
pub mod inbox;
pub mod ledger;
mod lookup;
pub mod machines;
pub mod permissions;
mod watch;
mod wire;

pub use config::{ClusterFile, MachineName};
pub use host::MachineHost;
pub use inbox::{CLAIM_EXPIRES, NatsInbox};
pub use machines::Machines;

use anyhow::{Context, Result, anyhow, bail};
use async_nats::jetstream::{self, kv};
use futures_util::StreamExt;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The longest one step may take before it is an error (a leader election takes up to
/// about ten seconds).
pub const STEP_TIMEOUT: Duration = Duration::from_secs(15);

/// One step's work, made again for each try.
type Work<T> = Pin<Box<dyn Future<Output = Result<T>> + Send>>;

/// One connection to the cluster, and the runtime its client runs on.
pub struct Connection {
    /// The machine this connection writes as.
    machine: String,
    runtime: tokio::runtime::Runtime,
    client: async_nats::Client,
    jetstream: jetstream::Context,
    /// The server's last word that this machine's user may not publish or subscribe
    /// somewhere, and when it came ([`Connection::refused_since`]).
    refused: Arc<Mutex<Option<(Instant, String)>>>,
    /// Told when such a word comes, so a step waiting for an answer that will not come
    /// stops waiting.
    refusal_heard: Arc<tokio::sync::Notify>,
}

impl Connection {
    /// Connects as the cluster file says (servers, credentials, TLS, this machine's
    /// reply prefix).
    pub fn open(file: &ClusterFile) -> Result<Arc<Connection>> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .context("cannot start the NATS client's runtime")?;
        let machine = file.machine.to_string();
        let file = file.clone();
        let refused = Arc::new(Mutex::new(None));
        let refusal_heard = Arc::new(tokio::sync::Notify::new());
        let (kept, told) = (refused.clone(), refusal_heard.clone());
        let (client, jetstream) = run_on(&runtime, async move {
            let options = (file.connect_options().await?).event_callback(move |event| {
                if note_refusal(&kept, event) {
                    told.notify_waiters();
                }
                async {}
            });
            let servers = file.servers.join(",");
            let client = options
                .connect(file.servers.as_slice())
                .await
                .with_context(|| format!("cannot connect to NATS at {servers}"))?;
            // Made inside the runtime: the context starts a task of its own.
            let jetstream = jetstream::new(client.clone());
            Ok((client, jetstream))
        })?;
        Ok(Arc::new(Connection {
            machine,
            runtime,
            client,
            jetstream,
            refused,
            refusal_heard,
        }))
    }

    /// Runs `work` once on this connection's runtime and waits for it.
    fn once<T: Send + 'static>(
        &self,
        work: impl Future<Output = Result<T>> + Send + 'static,
    ) -> Result<T> {
        run_on(&self.runtime, work)
    }

    /// Starts `work` on this connection's runtime without waiting for it.
    fn detach(&self, work: impl Future<Output = ()> + Send + 'static) {
        self.runtime.spawn(work);
    }

    /// Runs one step and waits for it. A step that fails while a stream has no leader
    /// (NATS answers "no responders" during an election, 4 to 9 seconds) or times out
    /// is tried again, until [`STEP_TIMEOUT`] has passed.
    ///
    /// A request the server refuses for the user's permissions gets no answer, only
    /// the server's word on the side: a step that hears such a word stops and fails,
    /// naming it.
    fn step<T: Send + 'static>(&self, work: impl Fn() -> Work<T>) -> Result<T> {
        let began = Instant::now();
        let deadline = began + STEP_TIMEOUT;
        loop {
            let (attempt, heard) = (work(), self.refusal_heard.clone());
            let raced = async move {
                let refused = heard.notified();
                match futures_util::future::select(attempt, Box::pin(refused)).await {
                    futures_util::future::Either::Left((answer, _)) => answer,
                    futures_util::future::Either::Right(_) => {
                        Err(anyhow!("the server refused a request"))
                    }
                }
            };
            let err = match run_on(&self.runtime, raced) {
                Ok(answer) => return Ok(answer),
                Err(err) => err,
            };
            if let Some(refusal) = self.refused_since(began) {
                let what_to_do = if refusal.contains("$JS.API.STREAM.MSG.GET.") {
                    "The bucket is not set up for the reads its users may make (direct gets): run host-shim doctor once with the deployment administrator's cluster file, which sets it up (docs/nats.md, \"Upgrading a deployment\")"
                } else {
                    "Its permissions are not the ones this version needs: give it the user block host_shim_nats::permissions writes (docs/nats.md, \"Credentials\")"
                };
                bail!(
                    "the cluster refused machine {}'s NATS user: {refusal}. {what_to_do}",
                    self.machine
                );
            }
            if !transient(&err) || Instant::now() >= deadline {
                return Err(err);
            }
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    /// The server's word that a request was refused for the user's permissions, if
    /// one came since `since`.
    fn refused_since(&self, since: Instant) -> Option<String> {
        let refused = self.refused.lock().unwrap_or_else(|held| held.into_inner());
        (refused.as_ref())
            .filter(|(at, _)| *at >= since)
            .map(|(_, text)| text.clone())
    }

    /// The bucket `name`, made when missing (`replicas` copies, each key's last value,
    /// older than `max_age` gone when it is not zero), read from its stream's leader.
    fn bucket(&self, name: &str, replicas: usize, max_age: Duration) -> Result<kv::Store> {
        let (context, name) = (self.jetstream.clone(), name.to_string());
        self.once(async move { open_bucket(&context, &name, replicas, max_age).await })
    }

    /// Every live entry of `store` whose key matches `filter` (a subject pattern under
    /// the bucket), with its revision.
    fn entries(&self, store: &kv::Store, filter: &str) -> Result<Vec<Entry>> {
        self.entries_since(store, filter, None)
    }

    /// [`Connection::entries`] written since `since_ns` (ns since the epoch, by the
    /// cluster's clock, give or take [`CLOCKS_APART`]), every value of each: for keys
    /// written once, the bucket's recent ones without a walk over the older.
    fn entries_since(
        &self,
        store: &kv::Store,
        filter: &str,
        since_ns: Option<u128>,
    ) -> Result<Vec<Entry>> {
        let (store, filter, inbox) = (store.clone(), filter.to_string(), self.client.new_inbox());
        let since = match since_ns {
            None => None,
            Some(ns) => {
                let ns = ns.saturating_sub(CLOCKS_APART.as_nanos());
                Some(async_nats::datetime::from_nanos(ns as i128).map_err(|e| anyhow!("{e}"))?)
            }
        };
        self.step(move || {
            let (store, filter, inbox) = (store.clone(), filter.clone(), inbox.clone());
            Box::pin(async move { entries(&store, &filter, inbox, since).await })
        })
    }

    /// One key's value (none when it has none).
    fn get(&self, store: &kv::Store, key: &str) -> Result<Option<bytes::Bytes>> {
        Ok(self.entry(store, key)?.map(|(value, _)| value))
    }

    /// One key's value and revision (none when it has none), as of now
    /// ([`lookup::last_entry`]).
    fn entry(&self, store: &kv::Store, key: &str) -> Result<Option<(bytes::Bytes, u64)>> {
        let (store, key) = (store.clone(), key.to_string());
        let (context, machine) = (self.jetstream.clone(), self.machine.clone());
        self.step(move || {
            let (store, key) = (store.clone(), key.clone());
            let (context, machine) = (context.clone(), machine.clone());
            Box::pin(async move { lookup::last_entry(&context, &store, &machine, &key).await })
        })
    }

    /// The stream sequence of the last write under `filter` in `store`, as the
    /// stream's leader holds it now (0: none; [`lookup::last_sequence`]).
    fn last_sequence(&self, store: &kv::Store, filter: &str) -> Result<u64> {
        let (store, filter) = (store.clone(), filter.to_string());
        let (context, machine) = (self.jetstream.clone(), self.machine.clone());
        self.step(move || {
            let (store, filter) = (store.clone(), filter.clone());
            let (context, machine) = (context.clone(), machine.clone());
            Box::pin(
                async move { lookup::last_sequence(&context, &store, &machine, &filter).await },
            )
        })
    }

    /// Writes `value` at `key`, whatever was there.
    fn put(&self, store: &kv::Store, key: &str, value: Vec<u8>) -> Result<()> {
        let (store, key, value) = (store.clone(), key.to_string(), bytes::Bytes::from(value));
        self.step(move || {
            let (store, key, value) = (store.clone(), key.clone(), value.clone());
            Box::pin(async move {
                store
                    .put(&key, value)
                    .await
                    .map_err(|err| anyhow!("cannot write {key}: {err}"))?;
                Ok(())
            })
        })
    }
}

/// Keeps the server's word that this connection's user may not publish or subscribe
/// somewhere. Changing a bucket's set-up is tried by every host and allowed only to
/// the deployment's administrator: its refusal is expected, not kept. Whether `event`
/// was a word kept.
fn note_refusal(refused: &Mutex<Option<(Instant, String)>>, event: async_nats::Event) -> bool {
    let async_nats::Event::ServerError(async_nats::ServerError::Other(text)) = event else {
        return false;
    };
    if !text.to_lowercase().contains("permissions violation")
        || text.contains("$JS.API.STREAM.UPDATE.")
    {
        return false;
    }
    let mut refused = refused.lock().unwrap_or_else(|held| held.into_inner());
    *refused = Some((Instant::now(), text));
    true
}

/// How far the clocks of a machine and of the cluster may be apart, for a read of
/// what was written since a time: read from that much earlier.
pub const CLOCKS_APART: Duration = Duration::from_secs(300);

/// A key, its last value and its revision.
type Entry = (String, bytes::Bytes, u64);

/// Whether an error is one an election or a moved connection gives, which the same
/// step may not give a moment later. "No stream found" is what a node answers for a
/// stream whose leader it has not learnt yet (seen on 2.15.1 with the leader killed).
fn transient(err: &anyhow::Error) -> bool {
    let text = format!("{err:#}").to_lowercase();
    [
        "no responders",
        "no stream found",
        "timed out",
        "timeout",
        "did not answer",
        "disconnected",
        "broken pipe",
    ]
    .iter()
    .any(|word| text.contains(word))
}

/// The bucket, made when missing, set up for reads a deployment can confine (direct
/// gets) and for messages that expire.
/// Right after a cluster starts (or loses a node) its metadata leader may still be
/// chosen: tried again for up to [`STEP_TIMEOUT`].
async fn open_bucket(
    context: &jetstream::Context,
    bucket: &str,
    replicas: usize,
    max_age: Duration,
) -> Result<kv::Store> {
    let deadline = tokio::time::Instant::now() + STEP_TIMEOUT - Duration::from_secs(1);
    loop {
        let tried: Result<kv::Store> = async {
            if context.get_key_value(bucket).await.is_err() {
                context
                    .create_key_value(kv::Config {
                        bucket: bucket.to_string(),
                        description: "session-tools".to_string(),
                        history: 1,
                        max_age,
                        num_replicas: replicas,
                        storage: jetstream::stream::StorageType::File,
                        ..Default::default()
                    })
                    .await
                    .map_err(|err| anyhow!("cannot make the bucket {bucket}: {err}"))?;
            }
            let mut stream = context
                .get_stream(format!("KV_{bucket}"))
                .await
                .map_err(|err| anyhow!("cannot open the bucket {bucket}: {err}"))?;
            let mut config = stream
                .info()
                .await
                .map_err(|err| anyhow!("cannot read the bucket {bucket}: {err}"))?
                .config
                .clone();
            // Reads of single keys name the key in the subject, where permissions can
            // hold a machine to its own (`lookup`). Best effort, as below: a bucket
            // without it is read from its leader, by those who may.
            if !config.allow_direct {
                config.allow_direct = true;
                set_up(context, config.clone()).await;
            }
            // Each message expires on its own (the cluster file's keepDays). Best effort:
            // a machine's user may not change a bucket the deployment made, and a
            // bucket without it keeps its messages.
            if !config.allow_message_ttl {
                config.allow_message_ttl = true;
                set_up(context, config).await;
            }
            context
                .get_key_value(bucket)
                .await
                .map_err(|err| anyhow!("cannot open the bucket {bucket}: {err}"))
        }
        .await;
        match tried {
            Ok(store) => return Ok(store),
            Err(err) if tokio::time::Instant::now() >= deadline => return Err(err),
            Err(_) => tokio::time::sleep(Duration::from_millis(250)).await,
        }
    }
}

/// Changes a bucket's set-up, if this user may: a machine's user may not (the server
/// answers it with nothing), so it is not waited for long; an administrator's change
/// takes milliseconds.
async fn set_up(context: &jetstream::Context, config: jetstream::stream::Config) {
    let _ = tokio::time::timeout(Duration::from_secs(2), context.update_stream(config)).await;
}

/// Runs `work` on `runtime` and waits for it on this thread (which may be inside
/// another runtime: nothing blocks a runtime's own workers).
fn run_on<T: Send + 'static>(
    runtime: &tokio::runtime::Runtime,
    work: impl Future<Output = Result<T>> + Send + 'static,
) -> Result<T> {
    let (done, result) = std::sync::mpsc::channel();
    runtime.spawn(async move {
        let answer = match tokio::time::timeout(STEP_TIMEOUT, work).await {
            Ok(answer) => answer,
            Err(_) => Err(anyhow!(
                "NATS did not answer within {} s",
                STEP_TIMEOUT.as_secs()
            )),
        };
        let _ = done.send(answer);
    });
    result
        .recv()
        .map_err(|_| anyhow!("the NATS client's runtime stopped"))?
}

/// The last value of each key under `filter`, read with an ordered consumer that ends
/// when it has caught up (no key: nothing), and is deleted then: a consumer left to
/// its inactivity timeout (30 s) would count against the stream's consumers, and a
/// busy host reads many times a second.
async fn entries(
    store: &kv::Store,
    filter: &str,
    deliver_subject: String,
    since: Option<async_nats::datetime::DateTime>,
) -> Result<Vec<Entry>> {
    let subject = format!("{}{filter}", store.prefix);
    let deliver_policy = match since {
        None => jetstream::consumer::DeliverPolicy::LastPerSubject,
        Some(start_time) => jetstream::consumer::DeliverPolicy::ByStartTime { start_time },
    };
    let consumer = store
        .stream
        .create_consumer(jetstream::consumer::push::OrderedConfig {
            // Named, so its filter is in the subject of the request that makes it,
            // where a deployment's permissions see it.
            name: Some(nuid::next().to_string()),
            deliver_subject,
            filter_subject: subject,
            deliver_policy,
            replay_policy: jetstream::consumer::ReplayPolicy::Instant,
            ..Default::default()
        })
        .await
        .map_err(|err| anyhow!("cannot read the bucket: {err}"))?;
    let name = consumer.cached_info().name.clone();
    let read = read_all(consumer, store).await;
    // Best effort: one the server could not delete now ends at its timeout.
    let _ = store.stream.delete_consumer(&name).await;
    read
}

async fn read_all(
    consumer: jetstream::consumer::Consumer<jetstream::consumer::push::OrderedConfig>,
    store: &kv::Store,
) -> Result<Vec<Entry>> {
    let mut found = Vec::new();
    if consumer.cached_info().num_pending == 0 {
        return Ok(found);
    }
    let mut messages = consumer
        .messages()
        .await
        .map_err(|err| anyhow!("cannot read the bucket: {err}"))?;
    while let Some(message) = messages.next().await {
        let message = message.map_err(|err| anyhow!("cannot read the bucket: {err}"))?;
        let info = message
            .info()
            .map_err(|err| anyhow!("an entry without its metadata: {err}"))?;
        let (pending, revision) = (info.pending, info.stream_sequence);
        let deleted = (message.headers.as_ref())
            .and_then(|h| h.get("KV-Operation"))
            .is_some_and(|op| matches!(op.as_str(), "DEL" | "PURGE"));
        if !deleted {
            let key = message
                .subject
                .strip_prefix(store.prefix.as_str())
                .unwrap_or(&message.subject)
                .to_string();
            found.push((key, message.payload.clone(), revision));
        }
        if pending == 0 {
            break;
        }
    }
    Ok(found)
}

/// A cluster joined as one machine: the connection, the shared inbox, and what the
/// cluster file says.
pub struct Cluster {
    file: ClusterFile,
    connection: Arc<Connection>,
    inbox: Arc<NatsInbox>,
}

impl Cluster {
    /// Connects and opens the deployment's buckets (made when missing).
    pub fn join(file: ClusterFile) -> Result<Cluster> {
        let connection = Connection::open(&file)?;
        let inbox = NatsInbox::open(connection.clone(), &file.bucket, file.replicas)?.taking(&file);
        Ok(Cluster {
            file,
            connection,
            inbox: Arc::new(inbox),
        })
    }

    /// This machine's name.
    pub fn machine(&self) -> &str {
        self.file.machine.as_str()
    }

    /// The shared inbox.
    pub fn inbox(&self) -> Arc<NatsInbox> {
        self.inbox.clone()
    }

    /// The other machines' sessions, as a store whose deliveries go to `inbox` (the
    /// shared inbox, as this process audits it).
    pub fn machines(&self, inbox: host_shim::SharedInbox) -> Result<Machines> {
        Machines::open(
            self.connection.clone(),
            &self.file,
            inbox,
            (*self.inbox).clone(),
        )
    }

    /// The machines that published their sessions, this one included: each machine's
    /// name, how many sessions it published and how many of them run now, by name.
    pub fn machines_seen(&self) -> Result<Vec<(String, usize, usize)>> {
        let directory = machines::Directory::open(&self.connection, &self.file, &self.inbox)?;
        let mut seen: std::collections::BTreeMap<String, (usize, usize)> = Default::default();
        for remote in directory.remotes()? {
            let counts = seen.entry(remote.machine).or_default();
            counts.0 += 1;
            counts.1 += usize::from(remote.live);
        }
        Ok(seen
            .into_iter()
            .map(|(m, (all, live))| (m, all, live))
            .collect())
    }

    /// Publishes this machine's sessions (`local`: the stores of this machine only) and
    /// answers other machines' reads of them, until the returned host is dropped.
    pub fn serve(&self, local: host_shim::Harnesses) -> Result<MachineHost> {
        MachineHost::start(self.connection.clone(), &self.file, local)
    }
}
