//! The connection to the cluster every part of this crate shares: the NATS client on
//! its own small runtime, each step waited for on the caller's thread, and the
//! key-value reads and conditional writes the inbox, the directory and the hosts make.

use crate::config::{ClusterFile, STEP_TIMEOUT};
use crate::lookup;
use anyhow::{Context, Result, anyhow, bail};
use async_nats::jetstream::{self, kv};
use futures_util::StreamExt;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One step's work, made again for each try.
pub(crate) type Work<T> = Pin<Box<dyn Future<Output = Result<T>> + Send>>;

/// One connection to the cluster, and the runtime its client runs on.
pub struct Connection {
    /// The machine this connection writes as.
    pub(crate) machine: String,
    pub(crate) runtime: tokio::runtime::Runtime,
    pub(crate) client: async_nats::Client,
    pub(crate) jetstream: jetstream::Context,
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
    pub(crate) fn once<T: Send + 'static>(
        &self,
        work: impl Future<Output = Result<T>> + Send + 'static,
    ) -> Result<T> {
        run_on(&self.runtime, work)
    }

    /// Starts `work` on this connection's runtime without waiting for it.
    pub(crate) fn detach(&self, work: impl Future<Output = ()> + Send + 'static) {
        self.runtime.spawn(work);
    }

    /// Runs one step and waits for it. A step that fails while a stream has no leader
    /// (NATS answers "no responders" during an election, 4 to 9 seconds) or times out
    /// is tried again, until [`STEP_TIMEOUT`] has passed.
    ///
    /// A request the server refuses for the user's permissions gets no answer, only
    /// the server's word on the side: a step that hears such a word stops and fails,
    /// naming it.
    pub(crate) fn step<T: Send + 'static>(&self, work: impl Fn() -> Work<T>) -> Result<T> {
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
    pub(crate) fn refused_since(&self, since: Instant) -> Option<String> {
        let refused = self.refused.lock().unwrap_or_else(|held| held.into_inner());
        (refused.as_ref())
            .filter(|(at, _)| *at >= since)
            .map(|(_, text)| text.clone())
    }

    /// The bucket `name`, made when missing (`replicas` copies, each key's last value,
    /// older than `max_age` gone when it is not zero), read from its stream's leader.
    pub(crate) fn bucket(
        &self,
        name: &str,
        replicas: usize,
        max_age: Duration,
    ) -> Result<kv::Store> {
        let (context, name) = (self.jetstream.clone(), name.to_string());
        self.once(async move { open_bucket(&context, &name, replicas, max_age).await })
    }

    /// Every live entry of `store` whose key matches `filter` (a subject pattern under
    /// the bucket), with its revision, as of now: no write the cluster acknowledged
    /// before is missed.
    pub(crate) fn entries(&self, store: &kv::Store, filter: &str) -> Result<Vec<Entry>> {
        self.entries_since(store, filter, None)
    }

    /// [`Connection::entries`] written since `since_ns` (ns since the epoch, by the
    /// cluster's clock, give or take [`CLOCKS_APART`]), every value of each: for keys
    /// written once, the bucket's recent ones without a walk over the older.
    pub(crate) fn entries_since(
        &self,
        store: &kv::Store,
        filter: &str,
        since_ns: Option<u128>,
    ) -> Result<Vec<Entry>> {
        let (store, filter, inbox) = (store.clone(), filter.to_string(), self.client.new_inbox());
        let (context, machine) = (self.jetstream.clone(), self.machine.clone());
        let since = match since_ns {
            None => None,
            Some(ns) => {
                let ns = ns.saturating_sub(CLOCKS_APART.as_nanos());
                Some(async_nats::datetime::from_nanos(ns as i128).map_err(|e| anyhow!("{e}"))?)
            }
        };
        self.step(move || {
            let (store, filter, inbox) = (store.clone(), filter.clone(), inbox.clone());
            let (context, machine) = (context.clone(), machine.clone());
            Box::pin(async move {
                let reader = Reader {
                    context: &context,
                    store: &store,
                    machine: &machine,
                };
                reader.entries(&filter, inbox, since).await
            })
        })
    }

    /// One key's value (none when it has none).
    pub(crate) fn get(&self, store: &kv::Store, key: &str) -> Result<Option<bytes::Bytes>> {
        Ok(self.entry(store, key)?.map(|(value, _)| value))
    }

    /// One key's value and revision (none when it has none), as of now
    /// ([`lookup::last_entry`]).
    pub(crate) fn entry(
        &self,
        store: &kv::Store,
        key: &str,
    ) -> Result<Option<(bytes::Bytes, u64)>> {
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
    pub(crate) fn last_sequence(&self, store: &kv::Store, filter: &str) -> Result<u64> {
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
    pub(crate) fn put(&self, store: &kv::Store, key: &str, value: Vec<u8>) -> Result<()> {
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
pub(crate) type Entry = (String, bytes::Bytes, u64);

/// Whether an error is one an election or a moved connection gives, which the same
/// step may not give a moment later. "No stream found" is what a node answers for a
/// stream whose leader it has not learnt yet (seen on 2.15.1 with the leader killed).
pub(crate) fn transient(err: &anyhow::Error) -> bool {
    let text = format!("{err:#}").to_lowercase();
    [
        "no responders",
        "no stream found",
        "timed out",
        "timeout",
        "did not answer",
        "disconnected",
        "broken pipe",
        // 503, error 10008: the cluster's metadata leader is being chosen (a node
        // that was paused or cut off rejoining); asked again, it answers.
        "temporarily unavailable",
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

/// What a read of a bucket's entries needs: the JetStream context the leader is asked
/// through, the bucket, and the machine whose probe key asks.
struct Reader<'a> {
    context: &'a jetstream::Context,
    store: &'a kv::Store,
    machine: &'a str,
}

impl Reader<'_> {
    /// The last value of each key under `filter` (or every value written since
    /// `since`), from a replica that has reached the last write the stream's leader
    /// holds under it. The ordered consumer reading them is placed on any replica of
    /// the stream, and a follower may lag the leader by writes the cluster has already
    /// acknowledged (a mark just set, read back by the next hook): a read from one
    /// that is behind is made again, within [`STEP_TIMEOUT`].
    async fn entries(
        &self,
        filter: &str,
        deliver_subject: String,
        since: Option<async_nats::datetime::DateTime>,
    ) -> Result<Vec<Entry>> {
        let deadline = tokio::time::Instant::now() + STEP_TIMEOUT;
        loop {
            let at = lookup::last_sequence(self.context, self.store, self.machine, filter).await?;
            let (found, reached) =
                read_once(self.store, filter, deliver_subject.clone(), since).await?;
            if reached >= at {
                return Ok(found);
            }
            if tokio::time::Instant::now() >= deadline {
                bail!(
                    "cannot read the bucket: the leader holds sequence {at} under {filter}, yet the replica read reached {reached}"
                );
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }
}

/// The entries under `filter`, read once with an ordered consumer that ends when it has
/// caught up (no key: nothing), and is deleted then (a consumer left to its inactivity
/// timeout, 30 s, would count against the stream's consumers, and a busy host reads
/// many times a second); with the stream sequence the consumer's replica had reached.
async fn read_once(
    store: &kv::Store,
    filter: &str,
    deliver_subject: String,
    since: Option<async_nats::datetime::DateTime>,
) -> Result<(Vec<Entry>, u64)> {
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

/// Every entry `consumer` delivers, and the stream sequence its replica had reached:
/// the last it delivered (a deletion's included), or, when nothing under the filter is
/// newer than where it started, the sequence just before that start.
async fn read_all(
    consumer: jetstream::consumer::Consumer<jetstream::consumer::push::OrderedConfig>,
    store: &kv::Store,
) -> Result<(Vec<Entry>, u64)> {
    let mut found = Vec::new();
    let info = consumer.cached_info();
    let mut reached = info.delivered.stream_sequence;
    if info.num_pending == 0 {
        return Ok((found, reached));
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
        reached = reached.max(revision);
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
    Ok((found, reached))
}

#[cfg(test)]
mod tests {
    use super::transient;

    #[test]
    fn what_a_step_tries_again_and_what_it_gives_up_on_at_once() {
        for said in [
            "cannot read the bucket: JetStream error: JetStream system temporarily unavailable (code 503, error code 10008)",
            "no responders",
            "timed out: didn't receive ack in time",
        ] {
            assert!(transient(&anyhow::anyhow!("{said}")), "{said}");
        }
        for said in [
            "Permissions Violation for Publish to \"$JS.API.DIRECT.GET\"",
            "wrong last sequence: 7",
        ] {
            assert!(!transient(&anyhow::anyhow!("{said}")), "{said}");
        }
    }
}
