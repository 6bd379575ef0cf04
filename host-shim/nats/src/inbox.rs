//! The inbox on one JetStream key-value bucket that every machine's hosts share (keys:
//! the crate's opening).
//!
//! Each step is one of JetStream's atomic operations: a delivery key is claimed by
//! creating its `k.` entry (create fails when it exists, in any process on any machine),
//! whose value names the message's own key, which whoever finds it missing creates
//! (create again: one wins), so a put that stopped half-way is finished by its retry
//! and never doubled; a hand-over claims each message by updating it at the revision it
//! read (compare and set), answers, then marks it handed over, or gives the claims back.
//! A claim older than [`CLAIM_EXPIRES`] belongs to a hand-over that died and is taken
//! again.
//!
//! Trust model: anyone who may write the bucket may put messages for any session in
//! it (the deployment's permissions say who may). What it reads back is data: an entry
//! that is not a message is named in `unreadable` and left where it is.

use crate::ledger::Ledger;
use crate::{Connection, Entry, STEP_TIMEOUT, Work};
use anyhow::{Context, Result, anyhow, bail};
use async_nats::jetstream::kv;
use host_shim::contract::latest::{DeliveryState, InboundPolicy, InboxCount};
use host_shim::inbox::{
    Handle, InboxBackend, InboxContents, Located, Put, Sent, SpooledMessage, Waiting, now_ns,
};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// How long a hand-over's claim holds; an older one is taken again.
pub const CLAIM_EXPIRES: Duration = Duration::from_secs(60);

/// Where a message is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
enum State {
    Waiting,
    /// A hand-over has it; `claimed_at_ns` says since when.
    Claimed,
    HandedOver,
}

/// A message's entry.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Stored {
    message: SpooledMessage,
    state: State,
    #[serde(default)]
    claimed_at_ns: u128,
}

/// Message entries (key, message, revision), oldest first, and what could not be read.
type Messages = (Vec<(String, Stored, u64)>, Vec<String>);

/// An inbox in one bucket of a NATS JetStream deployment (a clone shares its
/// connection).
#[derive(Clone)]
pub struct NatsInbox {
    connection: Arc<Connection>,
    kv: kv::Store,
    /// What this machine handed over, when it keeps a ledger.
    ledger: Option<Ledger>,
    claim_expires: Duration,
}

/// Whether an update lost a race: the key's revision was no longer the one expected.
/// JetStream 2.15 answers with its error 10164 ("wrong last sequence"), which
/// async-nats 0.51 does not sort under `WrongLastRevision` (only the older 10071).
fn lost_race(err: &kv::UpdateError) -> bool {
    err.kind() == kv::UpdateErrorKind::WrongLastRevision
        || err.to_string().contains("wrong last sequence")
}

/// A session id as one subject token.
pub(crate) fn token(session: &str) -> Result<String> {
    host_shim::inbox::checked_id(session).map_err(|why| anyhow!(why))?;
    Ok(session.replace('.', "="))
}

fn key_hash(key: &str) -> String {
    let digest = Sha256::digest(key.as_bytes());
    digest[..16].iter().map(|b| format!("{b:02x}")).collect()
}

impl NatsInbox {
    /// The inbox in `bucket` on `connection`, the bucket made when missing with
    /// `replicas` copies (3 for a cluster).
    pub fn open(connection: Arc<Connection>, bucket: &str, replicas: usize) -> Result<NatsInbox> {
        let kv = connection.bucket(bucket, replicas, Duration::ZERO)?;
        Ok(NatsInbox {
            connection,
            kv,
            ledger: None,
            claim_expires: CLAIM_EXPIRES,
        })
    }

    /// Remembers what this machine hands over in its state folder `state` ([`Ledger`]),
    /// so a message handed over whose mark never reached the cluster is marked by the
    /// next hand-over here, not given again.
    pub fn remembering(mut self, state: &Path) -> Result<NatsInbox> {
        self.ledger = Some(Ledger::in_folder(state)?);
        Ok(self)
    }

    /// A claim older than `after` is taken again ([`CLAIM_EXPIRES`] by default).
    pub fn claims_expire_after(mut self, after: Duration) -> NatsInbox {
        self.claim_expires = after;
        self
    }

    /// When a claim made before it is stale.
    fn stale_before(&self) -> u128 {
        now_ns().saturating_sub(self.claim_expires.as_nanos())
    }

    /// The keys this machine handed over (none without a ledger).
    fn handed_over_here(&self) -> Result<HashSet<String>> {
        match &self.ledger {
            Some(ledger) => ledger.handed_over(),
            None => Ok(HashSet::new()),
        }
    }

    /// Marks a message handed over at `revision` (this machine handed it over and the
    /// mark did not get there); whether it was still there to mark.
    fn mark_handed_over(&self, key: &str, stored: Stored, revision: u64) -> Result<bool> {
        let handed = Stored {
            state: State::HandedOver,
            ..stored
        };
        Ok(self.swap(key, &handed, revision)?.is_some())
    }

    /// One step on this inbox's bucket (see [`Connection::step`]).
    fn step<T: Send + 'static>(&self, work: impl Fn(kv::Store) -> Work<T>) -> Result<T> {
        self.connection.step(|| work(self.kv.clone()))
    }

    fn entries(&self, filter: &str) -> Result<Vec<Entry>> {
        self.connection.entries(&self.kv, filter)
    }

    /// A message entry by its key, with its revision.
    fn stored(&self, key: &str) -> Result<Option<(Stored, u64)>> {
        let key = key.to_string();
        self.step(move |kv| {
            let key = key.clone();
            Box::pin(async move {
                let Some(entry) = kv.entry(&key).await? else {
                    return Ok(None);
                };
                if entry.operation != kv::Operation::Put {
                    return Ok(None);
                }
                let stored: Stored = serde_json::from_slice(&entry.value)
                    .with_context(|| format!("{key} is not a message"))?;
                Ok(Some((stored, entry.revision)))
            })
        })
    }

    /// Writes `stored` at `key` if its revision is still `revision`; whether it was.
    fn swap(&self, key: &str, stored: &Stored, revision: u64) -> Result<Option<u64>> {
        let (key, value) = (
            key.to_string(),
            bytes::Bytes::from(serde_json::to_vec(stored)?),
        );
        self.step(move |kv| {
            let (key, value) = (key.clone(), value.clone());
            Box::pin(async move {
                match kv.update(&key, value, revision).await {
                    Ok(revision) => Ok(Some(revision)),
                    Err(err) if lost_race(&err) => Ok(None),
                    Err(err) => Err(anyhow!("cannot update {key}: {err}")),
                }
            })
        })
    }

    /// Creates `key` with `value`; false when it exists already. An update expecting
    /// no earlier value of the key (revision 0): JetStream refuses it, whoever wrote
    /// first, on whatever node (no key of this inbox is ever deleted).
    fn create(&self, key: &str, value: Vec<u8>) -> Result<bool> {
        let (key, value) = (key.to_string(), bytes::Bytes::from(value));
        self.step(move |kv| {
            let (key, value) = (key.clone(), value.clone());
            Box::pin(async move {
                match kv.update(&key, value, 0).await {
                    Ok(_) => Ok(true),
                    Err(err) if lost_race(&err) => Ok(false),
                    Err(err) => Err(anyhow!("cannot create {key}: {err}")),
                }
            })
        })
    }

    /// Creates `key` with `value` (`None`), or reads the value another writer put there
    /// first (`Some`). A writer that won a race may not have its write applied yet when
    /// the loser looks, and may yet fail: this asks again, briefly, until one of the two
    /// holds.
    fn create_or_read(&self, key: &str, value: Vec<u8>) -> Result<Option<bytes::Bytes>> {
        let deadline = std::time::Instant::now() + STEP_TIMEOUT;
        loop {
            if self.create(key, value.clone())? {
                return Ok(None);
            }
            if let Some(there) = self.get(key)? {
                return Ok(Some(there));
            }
            if std::time::Instant::now() >= deadline {
                bail!("{key} is taken, yet nothing is there");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn get(&self, key: &str) -> Result<Option<bytes::Bytes>> {
        self.connection.get(&self.kv, key)
    }

    /// The messages of `session` (all states), oldest first, and what could not be read.
    fn messages_of(&self, session: &str) -> Result<Messages> {
        self.messages_under(&format!("m.{}.*", token(session)?))
    }

    fn messages_under(&self, filter: &str) -> Result<Messages> {
        let mut messages = Vec::new();
        let mut unreadable = Vec::new();
        for (key, value, revision) in self.entries(filter)? {
            match serde_json::from_slice::<Stored>(&value) {
                Ok(stored) => messages.push((key, stored, revision)),
                Err(err) => unreadable.push(format!("{key}: not a message ({err})")),
            }
        }
        messages.sort_by_key(|(_, stored, _)| stored.message.accepted_at_ns);
        Ok((messages, unreadable))
    }
}

fn located(stored: Stored) -> Located {
    Located {
        state: match stored.state {
            State::HandedOver => DeliveryState::HandedOver,
            _ => DeliveryState::Waiting,
        },
        message: stored.message,
    }
}

impl InboxBackend for NatsInbox {
    fn find(&self, session: &str, key: &str) -> Result<Option<Located>> {
        if key.is_empty() {
            return Ok(None);
        }
        let index = format!("k.{}.{}", token(session)?, key_hash(key));
        let Some(name) = self.get(&index)? else {
            return Ok(None);
        };
        let name = String::from_utf8(name.to_vec()).context("a key index that is not text")?;
        Ok(self.stored(&name)?.map(|(stored, _)| located(stored)))
    }

    fn find_identical(
        &self,
        session: &str,
        sender: &str,
        body: &str,
        within: Duration,
    ) -> Result<Option<Located>> {
        if sender.is_empty() {
            return Ok(None);
        }
        let since = now_ns().saturating_sub(within.as_nanos());
        let (messages, _) = self.messages_of(session)?;
        Ok((messages.into_iter().rev())
            .map(|(_, stored, _)| stored)
            .find(|s| {
                s.message.sender == sender
                    && s.message.accepted_at_ns >= since
                    && s.message.same_words(body)
            })
            .map(located))
    }

    fn count_from(&self, session: &str, sender: &str) -> Result<InboxCount> {
        let mut count = InboxCount::NONE;
        if sender.is_empty() {
            return Ok(count);
        }
        let (messages, _) = self.messages_of(session)?;
        for (_, stored, _) in messages {
            if stored.message.sender != sender {
                continue;
            }
            match stored.state {
                State::HandedOver => count.handed_over += 1,
                _ => count.waiting += 1,
            }
        }
        Ok(count)
    }

    fn put_unseen(&self, message: &SpooledMessage) -> Result<Put> {
        let session = token(&message.target)?;
        let stored = Stored {
            message: message.clone(),
            state: State::Waiting,
            claimed_at_ns: 0,
        };
        let mut name = format!(
            "m.{session}.{:020}-{}",
            message.accepted_at_ns,
            nuid::next()
        );
        if !message.key.is_empty() {
            let index = format!("k.{session}.{}", key_hash(&message.key));
            // Taken, its message is the answer; a put that stopped before writing it is
            // finished here, under the name it chose.
            match self.create_or_read(&index, name.clone().into_bytes())? {
                None => {}
                Some(taken) => {
                    name = String::from_utf8(taken.to_vec())
                        .context("a key index that is not text")?;
                }
            }
        }
        match self.create_or_read(&name, serde_json::to_vec(&stored)?)? {
            None => Ok(Put::New(Handle::new(name))),
            Some(first) => {
                let first: Stored = serde_json::from_slice(&first)
                    .with_context(|| format!("{name} is not a message"))?;
                Ok(Put::Repeat(first.message))
            }
        }
    }

    fn waiting(&self, session: &str) -> Result<InboxContents> {
        let (messages, unreadable) = self.messages_of(session)?;
        let stale = self.stale_before();
        let (mut reclaimed, mut fresh) = (Vec::new(), Vec::new());
        let mut handed_here = None;
        for (key, stored, revision) in messages {
            let dead_claim = stored.state == State::Claimed && stored.claimed_at_ns < stale;
            if dead_claim {
                // Handed over here by a host that died before its mark: marked now.
                let here = match &mut handed_here {
                    Some(here) => here,
                    None => handed_here.insert(self.handed_over_here()?),
                };
                if here.contains(&key) {
                    self.mark_handed_over(&key, stored, revision)?;
                    continue;
                }
            }
            let waiting = Waiting {
                handle: Handle::new(key),
                message: stored.message,
            };
            match stored.state {
                State::Waiting => fresh.push(waiting),
                State::Claimed if dead_claim => reclaimed.push(waiting),
                _ => {}
            }
        }
        reclaimed.extend(fresh);
        Ok(InboxContents {
            messages: reclaimed,
            unreadable,
        })
    }

    fn hand_over(
        &self,
        session: &str,
        picked: Vec<Waiting>,
        answer: &mut dyn FnMut(&[SpooledMessage]) -> Result<()>,
    ) -> Result<Vec<SpooledMessage>> {
        let prefix = format!("m.{}.", token(session)?);
        let stale = self.stale_before();
        let mut claimed = Vec::new();
        for waiting in picked {
            let key = waiting.handle.as_str().to_string();
            if !key.starts_with(&prefix) {
                bail!("{key} is not a message of {session}");
            }
            let Some((stored, revision)) = self.stored(&key)? else {
                continue;
            };
            let free = stored.state == State::Waiting
                || (stored.state == State::Claimed && stored.claimed_at_ns < stale);
            if !free {
                continue;
            }
            if stored.state == State::Claimed && self.handed_over_here()?.contains(&key) {
                self.mark_handed_over(&key, stored, revision)?;
                continue;
            }
            let claim = Stored {
                state: State::Claimed,
                claimed_at_ns: now_ns(),
                ..stored
            };
            if let Some(revision) = self.swap(&key, &claim, revision)? {
                claimed.push((key, claim, revision));
            }
        }
        if claimed.is_empty() {
            return Ok(Vec::new());
        }
        let messages: Vec<SpooledMessage> =
            claimed.iter().map(|(_, s, _)| s.message.clone()).collect();
        if let Err(err) = answer(&messages) {
            for (key, claim, revision) in &claimed {
                let back = Stored {
                    state: State::Waiting,
                    claimed_at_ns: 0,
                    ..claim.clone()
                };
                let _ = self.swap(key, &back, *revision);
            }
            return Err(err);
        }
        // The harness has them: remembered here first (a local write), then marked in
        // the cluster; a mark that does not get there is made by the next hand-over.
        if let Some(ledger) = &self.ledger {
            ledger.remember(claimed.iter().map(|(key, _, _)| key.as_str()))?;
        }
        for (key, claim, revision) in claimed {
            if !self.mark_handed_over(&key, claim, revision)? {
                bail!("{key} changed while it was being handed over");
            }
        }
        Ok(messages)
    }

    fn sent_since(&self, sender: &str, since_ns: u128) -> Result<Vec<Sent>> {
        if sender.is_empty() {
            return Ok(Vec::new());
        }
        let (messages, _) = self.messages_under("m.*.*")?;
        Ok((messages.into_iter())
            .map(|(_, stored, _)| stored.message)
            .filter(|m| m.sender == sender && m.accepted_at_ns >= since_ns)
            .map(|m| Sent {
                target: m.target,
                accepted_at_ns: m.accepted_at_ns,
                key: m.key,
            })
            .collect())
    }

    fn inbound(&self, session: &str) -> Result<InboundPolicy> {
        let Some(value) = self.get(&format!("p.{}", token(session)?))? else {
            return Ok(InboundPolicy::Accept);
        };
        match value.as_ref() {
            b"hold" => Ok(InboundPolicy::Hold),
            b"refuse" => Ok(InboundPolicy::Refuse),
            _ => Ok(InboundPolicy::Accept),
        }
    }

    fn set_inbound(&self, session: &str, policy: InboundPolicy) -> Result<()> {
        let key = format!("p.{}", token(session)?);
        (self.connection).put(&self.kv, &key, policy.as_str().as_bytes().to_vec())
    }
}
