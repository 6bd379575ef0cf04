//! A bucket's last values under one filter, kept in this process by one consumer that
//! pushes every write as it is made, for as long as the process holds it: what every
//! call would otherwise read by making a consumer, walking it and deleting it (two
//! proposals to the cluster's metadata leader each time, the most of a call's time).
//!
//! Before each use the copy is brought up to date: the stream's leader is asked for
//! the sequence of the last write under the filter (one small request, no proposal;
//! the consumer may run on a follower, which can lag the leader) and the use waits
//! until this process has taken that write. So a use sees every write the cluster
//! acknowledged before it, exactly as a walk would. A consumer that does not deliver
//! it in time (gone with its node, deleted, the cluster down and back), or that
//! skipped a delivery, is replaced by one that reads the filter afresh; a cluster that
//! does not answer is an error, as a walk's is.
//!
//! An entry removed by the bucket's age limit leaves no trace on the consumer: each
//! entry keeps how old it was when it came ([`Kept::age`]), for a reader that counts
//! age (the live bucket).
//!
//! Trust model: what the bucket holds is data, kept as it came; readers check it.

use crate::connection::{CLOCKS_APART, Connection};
use anyhow::{Result, anyhow, bail};
use async_nats::jetstream::{self, consumer, kv};
use futures_util::StreamExt;
use std::collections::BTreeMap;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};

/// How long a use waits for the last write to be delivered before it takes the
/// consumer for broken and starts another.
const DELIVERY_LAG: Duration = Duration::from_secs(2);

/// How long the server keeps the consumer once no process listens to it (this one
/// ended without deleting it).
const INACTIVE_AFTER: Duration = Duration::from_secs(30);

/// One key's last value, as the watch took it.
#[derive(Clone, Debug)]
pub(crate) struct Kept {
    pub(crate) value: bytes::Bytes,
    /// When it was written, as this process's clock reckons it (the server's time of
    /// the write, as old as it was when it came).
    written: Instant,
}

impl Kept {
    /// How long ago the value was written.
    pub(crate) fn age(&self) -> Duration {
        self.written.elapsed()
    }
}

/// The running consumer and what it delivered.
#[derive(Default)]
struct Taken {
    /// Which consumer this copy is of (another one's deliveries are not taken).
    consumer: Option<String>,
    entries: BTreeMap<String, Kept>,
    /// The consumer sequence of the last delivery taken.
    taken: u64,
    /// The stream sequence of the last delivery taken.
    through: u64,
    /// Why the consumer cannot be trusted any more (a skipped delivery, its end).
    broken: Option<String>,
    /// The task that takes deliveries.
    task: Option<tokio::task::AbortHandle>,
}

/// What a watch holds.
#[derive(Clone, Copy, Debug)]
enum Holds {
    /// Each key's last value.
    Last,
    /// Every write of about the last while (by the cluster's clock, give or take
    /// [`CLOCKS_APART`]): for keys written once.
    Recent(Duration),
}

/// A bucket's values under one filter, kept current (see the module's opening).
pub(crate) struct Watched {
    connection: Arc<Connection>,
    store: kv::Store,
    /// A subject pattern under the bucket (`d.*`, `>`).
    filter: String,
    holds: Holds,
    copy: Arc<(Mutex<Taken>, Condvar)>,
    /// Held while a consumer is started: calls on several threads start one.
    starting: Mutex<()>,
}

impl Watched {
    /// Watches each key's last value under `filter` in `store`; nothing is asked of the
    /// cluster until first used.
    pub(crate) fn new(connection: Arc<Connection>, store: kv::Store, filter: &str) -> Watched {
        Watched::holding(connection, store, filter, Holds::Last)
    }

    /// Watches what was written under `filter` in `store` within the last `keep` (and
    /// [`CLOCKS_APART`] more): each value older is let go.
    pub(crate) fn recent(
        connection: Arc<Connection>,
        store: kv::Store,
        filter: &str,
        keep: Duration,
    ) -> Watched {
        Watched::holding(connection, store, filter, Holds::Recent(keep))
    }

    fn holding(
        connection: Arc<Connection>,
        store: kv::Store,
        filter: &str,
        holds: Holds,
    ) -> Watched {
        Watched {
            connection,
            store,
            filter: filter.to_string(),
            holds,
            copy: Arc::new((Mutex::new(Taken::default()), Condvar::new())),
            starting: Mutex::new(()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Taken> {
        (self.copy.0.lock()).unwrap_or_else(|held| held.into_inner())
    }

    /// `read` of every entry under the filter, by key, current as of now. A consumer
    /// that does not deliver what the leader holds is replaced once (the new one reads
    /// afresh, riding out an election as each step does); a cluster that does not
    /// answer is an error.
    pub(crate) fn read<R>(&self, read: impl FnOnce(&BTreeMap<String, Kept>) -> R) -> Result<R> {
        let mut read = Some(read);
        let mut why = String::new();
        for _ in 0..2 {
            match self.try_read(&mut read) {
                Ok(Ok(answer)) => return Ok(answer),
                Ok(Err(broke)) => {
                    why = broke;
                    self.restart();
                }
                Err(err) => {
                    self.restart();
                    return Err(err);
                }
            }
        }
        bail!("the bucket's changes did not arrive, twice (last: {why})")
    }

    /// [`Watched::read`] once this process has taken every write under the filter that
    /// the stream's leader holds now; none when it does not arrive in time (the
    /// consumer is gone or skipped one: start another).
    fn try_read<R>(
        &self,
        read: &mut Option<impl FnOnce(&BTreeMap<String, Kept>) -> R>,
    ) -> Result<std::result::Result<R, String>> {
        let name = self.running()?;
        let last = self.last_written()?;
        let (mutex, arrived) = &*self.copy;
        let taken = mutex.lock().unwrap_or_else(|held| held.into_inner());
        let (mut taken, waited) = arrived
            .wait_timeout_while(taken, DELIVERY_LAG, |taken| {
                taken.consumer.as_deref() == Some(name.as_str())
                    && taken.broken.is_none()
                    && taken.through < last
            })
            .unwrap_or_else(|held| held.into_inner());
        if let Some(why) = &taken.broken {
            return Ok(Err(why.clone()));
        }
        if waited.timed_out() || taken.consumer.as_deref() != Some(name.as_str()) {
            return Ok(Err(format!(
                "write {last} was not delivered within {} s",
                DELIVERY_LAG.as_secs()
            )));
        }
        if let Holds::Recent(keep) = self.holds {
            let horizon = keep + CLOCKS_APART;
            taken.entries.retain(|_, kept| kept.age() <= horizon);
        }
        let read = read.take().expect("read once: an answer ends the tries");
        Ok(Ok(read(&taken.entries)))
    }

    /// The running consumer's name, started when there is none (by one thread).
    fn running(&self) -> Result<String> {
        let running = self.lock().consumer.clone();
        if let Some(name) = running {
            return Ok(name);
        }
        let _one = (self.starting.lock()).unwrap_or_else(|held| held.into_inner());
        let started = self.lock().consumer.clone();
        match started {
            Some(name) => Ok(name),
            None => self.start(),
        }
    }

    /// The stream sequence of the last write under the filter, as the stream's leader
    /// answers (a follower, where the consumer may run, can lag it); 0 for none.
    fn last_written(&self) -> Result<u64> {
        self.connection.last_sequence(&self.store, &self.filter)
    }

    /// Drops the consumer (deleted best effort, not waited for), so the next use
    /// starts another.
    fn restart(&self) {
        if let Some(deleting) = self.let_go() {
            self.connection.detach(deleting);
        }
    }

    /// Stops taking the consumer's deliveries; what deletes it, if there is one.
    fn let_go(&self) -> Option<impl Future<Output = ()> + Send + 'static> {
        let (name, task) = {
            let mut taken = self.lock();
            let name = taken.consumer.take();
            let task = taken.task.take();
            *taken = Taken::default();
            (name, task)
        };
        if let Some(task) = task {
            task.abort();
        }
        let stream = self.store.stream.clone();
        name.map(|name| async move {
            let _ = stream.delete_consumer(&name).await;
        })
    }

    /// Starts a consumer of what the watch holds and then of every write, taken by a
    /// task of the connection's runtime; its name.
    fn start(&self) -> Result<String> {
        let subject = format!("{}{}", self.store.prefix, self.filter);
        let (client, stream) = (self.connection.client.clone(), self.store.stream.clone());
        let context = self.connection.jetstream.clone();
        let (copy, prefix) = (self.copy.clone(), self.store.prefix.clone());
        let deliver_policy = match self.holds {
            Holds::Last => consumer::DeliverPolicy::LastPerSubject,
            Holds::Recent(keep) => {
                let since = SystemTime::now() - keep - CLOCKS_APART;
                let ns = since.duration_since(SystemTime::UNIX_EPOCH)?.as_nanos();
                let start_time =
                    async_nats::datetime::from_nanos(ns as i128).map_err(|err| anyhow!("{err}"))?;
                consumer::DeliverPolicy::ByStartTime { start_time }
            }
        };
        let started = self.connection.step(move || {
            let (client, stream, subject) = (client.clone(), stream.clone(), subject.clone());
            Box::pin(async move {
                let deliver_subject = client.new_inbox();
                // Listening before the consumer exists: nothing it sends is missed.
                let deliveries = client
                    .subscribe(deliver_subject.clone())
                    .await
                    .map_err(|err| anyhow!("cannot watch the bucket: {err}"))?;
                let made = stream
                    .create_consumer(consumer::push::Config {
                        // Named, so its filter is in the subject of the request that
                        // makes it, where a deployment's permissions see it.
                        name: Some(nuid::next().to_string()),
                        deliver_subject,
                        filter_subject: subject,
                        deliver_policy,
                        ack_policy: consumer::AckPolicy::None,
                        replay_policy: consumer::ReplayPolicy::Instant,
                        num_replicas: 1,
                        memory_storage: true,
                        inactive_threshold: INACTIVE_AFTER,
                        ..Default::default()
                    })
                    .await
                    .map_err(|err| anyhow!("cannot watch the bucket: {err}"))?;
                Ok((made.cached_info().name.clone(), deliveries))
            })
        })?;
        let (name, deliveries) = started;
        // The task takes its first delivery once this lock is let go, into a copy of
        // this consumer alone.
        let mut held = self.lock();
        let taking = take(deliveries, context, copy, prefix, name.clone());
        *held = Taken {
            consumer: Some(name.clone()),
            task: Some(self.connection.runtime.spawn(taking).abort_handle()),
            ..Taken::default()
        };
        Ok(name)
    }
}

impl Drop for Watched {
    /// The consumer is deleted before the process goes on (at most [`DELIVERY_LAG`]):
    /// one left behind would count against the stream's consumers until the server
    /// drops it, [`INACTIVE_AFTER`] later.
    fn drop(&mut self) {
        if let Some(deleting) = self.let_go() {
            let _ = self.connection.once(async move {
                let _ = tokio::time::timeout(DELIVERY_LAG, deleting).await;
                Ok(())
            });
        }
    }
}

/// Takes the consumer `name`'s deliveries into `copy` until they end or skip one.
async fn take(
    mut deliveries: async_nats::Subscriber,
    context: jetstream::Context,
    copy: Arc<(Mutex<Taken>, Condvar)>,
    prefix: String,
    name: String,
) {
    let (mutex, arrived) = &*copy;
    let broke = |why: String| {
        let mut held = mutex.lock().unwrap_or_else(|held| held.into_inner());
        if held.consumer.as_deref() == Some(name.as_str()) {
            held.broken = Some(why);
        }
        arrived.notify_all();
    };
    while let Some(message) = deliveries.next().await {
        // Status messages (no reply subject) carry nothing to keep.
        if message.reply.is_none() {
            continue;
        }
        let message = jetstream::Message {
            message,
            context: context.clone(),
        };
        let info = match message.info() {
            Ok(info) => (info.consumer_sequence, info.stream_sequence, info.published),
            Err(err) => return broke(format!("a delivery without its metadata: {err}")),
        };
        let (sequence, through, published) = info;
        let key = (message.subject.strip_prefix(prefix.as_str()))
            .unwrap_or(&message.subject)
            .to_string();
        let removed = (message.headers.as_ref())
            .and_then(|h| h.get("KV-Operation"))
            .is_some_and(|op| matches!(op.as_str(), "DEL" | "PURGE"));
        let mut held = mutex.lock().unwrap_or_else(|held| held.into_inner());
        if held.consumer.as_deref() != Some(name.as_str()) {
            return;
        }
        if sequence != held.taken + 1 {
            held.broken = Some(format!(
                "delivery {sequence} came after {}: one was skipped",
                held.taken
            ));
            arrived.notify_all();
            return;
        }
        (held.taken, held.through) = (sequence, through);
        if removed {
            held.entries.remove(&key);
        } else {
            let age = SystemTime::from(published).elapsed().unwrap_or_default();
            let now = Instant::now();
            let written = now.checked_sub(age).unwrap_or(now);
            let value = message.message.payload.clone();
            held.entries.insert(key, Kept { value, written });
        }
        drop(held);
        arrived.notify_all();
    }
    broke("its deliveries ended".to_string());
}
