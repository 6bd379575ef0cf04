//! The inbox on one JetStream key-value bucket that every machine's hosts share. Each
//! key names the machines it concerns, so a deployment's subject permissions can hold
//! each machine to its own (`crate::permissions`):
//!
//! ```text
//! m.<target machine>.<session>.<sender machine>.<name>   a message, written once by its sender:
//!                                                        <name> is k<sha-256 of its delivery
//!                                                        key>, or <ns>-<nuid> without a key
//! s.<target machine>.<session>.<sender machine>.<name>   where the message is: claimed,
//!                                                        handed over (none: waiting),
//!                                                        written by the target's machine
//! p.<machine>.<session>                                  what the session's person lets in
//! ```
//!
//! A session's machine is the one whose published list names it (`d.<machine>`, read
//! at most every [`PLACES_KEPT`]); a session no list names is this machine's. The
//! sender's machine in a key is this host's own: under the permissions a machine can
//! write no other, so the key a hand-over reads names the sending machine as the
//! server enforced it, and the frame handed over names it (`from-machine:`); a message
//! whose sender is a session another machine lists is not handed over.
//!
//! Each step is one of JetStream's atomic operations: a message with a delivery key is
//! put by creating the key it names (create fails when it exists, in any process on any
//! machine: one write, and a second writer of the key reads the first's message); a
//! hand-over claims each message by creating or updating its `s.`
//! entry at the revision it read (compare and set), answers, then marks it offered, or
//! gives the claims back; an offer is marked handed over when the session's own record
//! shows it, and waits again when the record still does not after its time
//! ([`InboxBackend::settle`]). A claim older than [`CLAIM_EXPIRES`] belongs to a
//! hand-over that died: settled like an offer. (Where only the answer witnesses a
//! hand-over, [`InboxBackend::hand_over`] remembers it in the machine's ledger and marks
//! it handed over; a dead claim the ledger names is marked, not given again.) Each message and mark expires on its own (the cluster
//! file's `keepDays` after it was written), so the bucket does not grow for ever.
//!
//! Trust model: what the bucket holds is data: an entry that is not a message is named
//! in `unreadable` and left where it is; a mark that cannot be read counts as none.
//! Who may write which keys is the deployment's permissions.

use crate::config::STEP_TIMEOUT;
use crate::connection::{Connection, Entry, Work, transient};
use crate::ledger::Ledger;
use crate::lookup::{Decided, conditional_publish};
use crate::permissions::CLAIMS_KEY;
use crate::watch::Watched;
use anyhow::{Context, Result, anyhow, bail};
use async_nats::jetstream::kv;
use host_shim::contract::frames::{frame_sender, naming_machine};
use host_shim::contract::latest::{DeliveryState, InboundPolicy, InboxCount};
use host_shim::inbox::claims::{self, ClaimsAt, ClaimsWritten};
use host_shim::inbox::{
    Handed, Handing, Handle, InboxBackend, InboxContents, Located, Put, SameWords, Sent,
    SpooledMessage, Step, Waiting, now_ns,
};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a hand-over's claim holds; an older one is taken again.
pub const CLAIM_EXPIRES: Duration = Duration::from_secs(60);

/// How long what this machine sent is kept by its watch of it (the repeat window and
/// the default sending window both fit); a look further back walks the bucket.
pub const SENT_KEPT: Duration = Duration::from_secs(60 * 60);

/// How long which machine each session is on is kept before it is read again.
pub const PLACES_KEPT: Duration = Duration::from_secs(2);

/// How long a session no list names is taken as this machine's before the lists are
/// read again.
pub const PLACES_MISSED: Duration = Duration::from_millis(250);

/// Where a message is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
enum State {
    #[default]
    Waiting,
    /// A hand-over has it; `claimed_at_ns` says since when.
    Claimed,
    /// Given to its session, not yet seen in its record; `claimed_at_ns` says since
    /// when.
    Offered,
    HandedOver,
}

/// A message's `s.` entry.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
struct Mark {
    state: State,
    #[serde(default)]
    claimed_at_ns: u128,
}

/// A message with its mark and the mark's revision (0: no mark written yet).
struct Held {
    key: String,
    message: SpooledMessage,
    mark: Mark,
    revision: u64,
}

/// Which machine each session of the other machines is on, and when that was read.
type Places = Option<(Instant, HashMap<String, String>)>;

/// An inbox in one bucket of a NATS JetStream deployment (a clone shares its
/// connection).
#[derive(Clone)]
pub struct NatsInbox {
    connection: Arc<Connection>,
    kv: kv::Store,
    /// The machines' published lists (`d.<machine>`), watched: where each session is.
    published: Arc<Watched>,
    /// What this machine sent within [`SENT_KEPT`], watched: repeats and sending caps.
    sent: Arc<Watched>,
    /// This machine's name, as its keys say it.
    machine: String,
    places: Arc<Mutex<Places>>,
    /// What this machine handed over, when it keeps a ledger.
    ledger: Option<Ledger>,
    claim_expires: Duration,
    /// The machines whose messages this machine's sessions take (none: every one).
    accept_from: Option<Arc<Vec<String>>>,
    /// Whether the machine shares only some sessions (its cluster file's
    /// `publishPaths`): another machine's message to one it does not list stays.
    shares_some: bool,
    /// How long each message and mark written here is kept (none: for ever, in a
    /// bucket whose messages cannot expire on their own).
    keep: Option<Duration>,
    /// Told each step of a hand-over (tests kill the process at each one).
    observer: Option<fn(Step)>,
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

/// Whether `key` matches the subject pattern `filter`, whose `*` stands for one token.
fn subject_matches(filter: &str, key: &str) -> bool {
    let (mut filter, mut key) = (filter.split('.'), key.split('.'));
    loop {
        match (filter.next(), key.next()) {
            (None, None) => return true,
            (Some(f), Some(k)) if f == "*" || f == k => {}
            _ => return false,
        }
    }
}

/// The `s.` key of the message at `key` (`m.…`).
fn mark_key(key: &str) -> String {
    format!("s.{}", key.strip_prefix("m.").unwrap_or(key))
}

impl NatsInbox {
    /// The inbox in `bucket` on `connection` (whose machine it writes as), the bucket
    /// made when missing with `replicas` copies (3 for a cluster).
    pub fn open(connection: Arc<Connection>, bucket: &str, replicas: usize) -> Result<NatsInbox> {
        let kv = connection.bucket(bucket, replicas, Duration::ZERO)?;
        let published = Arc::new(Watched::new(connection.clone(), kv.clone(), "d.*"));
        let mine = format!("m.*.*.{}.*", connection.machine);
        let sent = Watched::recent(connection.clone(), kv.clone(), &mine, SENT_KEPT);
        Ok(NatsInbox {
            machine: connection.machine.clone(),
            connection,
            kv,
            published,
            sent: Arc::new(sent),
            places: Arc::new(Mutex::new(None)),
            ledger: None,
            claim_expires: CLAIM_EXPIRES,
            accept_from: None,
            shares_some: false,
            keep: None,
            observer: None,
        }
        .keeping(crate::config::KEEP_DEFAULT))
    }

    /// Each message and mark this inbox writes is kept for `keep` after it is written
    /// (a second at least), then the bucket lets it go; for ever when the bucket does
    /// not let messages expire on their own (made before that, by a deployment that has
    /// not turned it on).
    pub fn keeping(mut self, keep: Duration) -> NatsInbox {
        let expires = self.kv.stream.cached_info().config.allow_message_ttl;
        self.keep = expires.then_some(keep.max(Duration::from_secs(1)));
        self
    }

    /// Remembers what this machine hands over in its state folder `state` ([`Ledger`]),
    /// so a message handed over whose mark never reached the cluster is marked by the
    /// next hand-over here, not given again.
    pub fn remembering(mut self, state: &Path) -> Result<NatsInbox> {
        self.ledger = Some(Ledger::in_folder(state)?);
        Ok(self)
    }

    /// Takes other machines' messages as `file` says: only from its `acceptFrom`
    /// machines, only for the sessions it shares (`publishPaths`); keeps what it
    /// writes for its `keepDays`.
    pub fn taking(mut self, file: &crate::config::ClusterFile) -> NatsInbox {
        self.accept_from = (file.accept_from.as_ref())
            .map(|machines| Arc::new(machines.iter().map(|m| m.to_string()).collect()));
        self.shares_some = file.publish_paths.is_some();
        self.keeping(file.keep)
    }

    /// `observer` is told each step of a hand-over as it is done.
    pub fn observe(mut self, observer: fn(Step)) -> NatsInbox {
        self.observer = Some(observer);
        self
    }

    fn step_done(&self, step: Step) {
        if let Some(observer) = self.observer {
            observer(step);
        }
    }

    /// A claim older than `after` is taken again ([`CLAIM_EXPIRES`] by default).
    pub fn claims_expire_after(mut self, after: Duration) -> NatsInbox {
        self.claim_expires = after;
        self
    }

    /// The machine `session` is on: the one whose list names it, else this one.
    fn place(&self, session: &str) -> Result<String> {
        Ok((self.listed_on(session)?).unwrap_or_else(|| self.machine.clone()))
    }

    /// The machine whose list names `session`, if one does. The lists are read
    /// again when older than [`PLACES_KEPT`], or than [`PLACES_MISSED`] when they do
    /// not name the session (another machine may have just listed it).
    fn listed_on(&self, session: &str) -> Result<Option<String>> {
        let mut places = self.places.lock().unwrap_or_else(|held| held.into_inner());
        let found = |places: &Places| {
            let (read, found) = places.as_ref()?;
            match found.get(session) {
                Some(machine) if read.elapsed() < PLACES_KEPT => Some(Some(machine.clone())),
                None if read.elapsed() < PLACES_MISSED => Some(None),
                _ => None,
            }
        };
        Ok(match found(&places) {
            Some(known) => known,
            None => {
                *places = Some((Instant::now(), self.read_places()?));
                found(&places).flatten()
            }
        })
    }

    /// A waiting message as its session is given it: its frame names the machine that
    /// wrote it, as its key says (the server let only that machine write the key).
    /// Why not (`Err` inside), when another machine wrote it and this machine does not
    /// take its messages, or not for this session (the cluster file's `acceptFrom`,
    /// `publishPaths`), or when the message names as its sender a session another
    /// machine lists: a machine passing a message off as another machine's session's.
    fn as_handed(
        &self,
        key: &str,
        session: &str,
        mut message: SpooledMessage,
    ) -> Result<std::result::Result<Waiting, String>> {
        let Some(machine) = key.split('.').nth(3) else {
            return Ok(Err(format!("{key}: not a message key")));
        };
        if machine != self.machine {
            if let Some(machines) = &self.accept_from
                && !machines.iter().any(|m| m == machine)
            {
                return Ok(Err(format!(
                    "{key}: machine {machine} is not one this machine takes messages from (acceptFrom in its cluster file); left where it is"
                )));
            }
            if self.shares_some && self.listed_on(session)?.as_deref() != Some(&self.machine) {
                return Ok(Err(format!(
                    "{key}: machine {machine} wrote to session {session}, which this machine does not share (publishPaths in its cluster file); left where it is"
                )));
            }
        }
        let senders = [Some(message.sender.clone()), frame_sender(&message.body)];
        for sender in senders.into_iter().flatten().filter(|s| !s.is_empty()) {
            if let Some(on) = self.listed_on(&sender)?
                && on != machine
            {
                return Ok(Err(format!(
                    "{key}: machine {machine} wrote it, yet it names session {sender} of machine {on} as its sender; left where it is"
                )));
            }
        }
        if let Cow::Owned(named) = naming_machine(&message.body, machine) {
            message.body = named;
        }
        Ok(Ok(Waiting {
            handle: Handle::new(key.to_string()),
            message,
        }))
    }

    /// Which machine each listed session is on.
    fn read_places(&self) -> Result<HashMap<String, String>> {
        let lists = crate::published::lists(&self.published)?;
        Ok((lists.into_iter())
            .flat_map(|(machine, list)| {
                (list.sessions.into_iter()).map(move |session| (session.id, machine.clone()))
            })
            .collect())
    }

    /// The watch of the machines' published lists, shared with the directory.
    pub(crate) fn published(&self) -> Arc<Watched> {
        self.published.clone()
    }

    /// Which machine each listed session is on, as a listing just read it: kept as if
    /// read here.
    pub(crate) fn learn_places(&self, found: HashMap<String, String>) {
        let mut places = self.places.lock().unwrap_or_else(|held| held.into_inner());
        *places = Some((Instant::now(), found));
    }

    /// The message key of a message this machine sends to `session` under the delivery
    /// key `key` (one per delivery key: creating it is what puts the message once).
    fn keyed_name(&self, session: &str, key: &str) -> Result<String> {
        let keys = self.session_keys(session)?;
        Ok(format!("m.{keys}.{}.k{}", self.machine, key_hash(key)))
    }

    /// `<machine of session>.<session>`: where a session's keys start after their kind.
    fn session_keys(&self, session: &str) -> Result<String> {
        Ok(format!("{}.{}", self.place(session)?, token(session)?))
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

    /// One step on this inbox's bucket (see [`Connection::step`]).
    fn step<T: Send + 'static>(&self, work: impl Fn(kv::Store) -> Work<T>) -> Result<T> {
        self.connection.step(|| work(self.kv.clone()))
    }

    fn entries(&self, filter: &str) -> Result<Vec<Entry>> {
        self.connection.entries(&self.kv, filter)
    }

    fn get(&self, key: &str) -> Result<Option<bytes::Bytes>> {
        self.connection.get(&self.kv, key)
    }

    /// A message's mark and its revision (none yet: waiting, revision 0).
    fn mark_of(&self, key: &str) -> Result<(Mark, u64)> {
        Ok(match self.connection.entry(&self.kv, &mark_key(key))? {
            Some((value, revision)) => (
                host_shim::json::from_slice(&value).unwrap_or_default(),
                revision,
            ),
            None => (Mark::default(), 0),
        })
    }

    /// Writes `mark` for the message at `key` if the mark's revision is still
    /// `revision` (0: none written yet); its new revision, or none when it moved.
    fn set_mark(&self, key: &str, mark: Mark, revision: u64) -> Result<Option<u64>> {
        self.write_at(&mark_key(key), serde_json::to_vec(&mark)?, revision)
    }

    /// Writes `value` at `key` if its revision is still `revision` (0: the key has no
    /// value yet: JetStream refuses the write once anyone wrote it, on whatever node,
    /// until the value expires), kept for [`NatsInbox::keeping`]'s while; the new
    /// revision, or none when it moved.
    fn write_at(&self, key: &str, value: Vec<u8>, revision: u64) -> Result<Option<u64>> {
        let (key, value) = (key.to_string(), bytes::Bytes::from(value));
        let (context, keep) = (self.connection.jetstream.clone(), self.keep);
        self.step(move |kv| {
            let (key, value, context) = (key.clone(), value.clone(), context.clone());
            Box::pin(async move {
                // What `kv.update` sends, with how long the message is kept.
                let mut headers = async_nats::HeaderMap::new();
                let expected = async_nats::header::NATS_EXPECTED_LAST_SUBJECT_SEQUENCE;
                headers.insert(expected, revision.to_string().as_str());
                if let Some(keep) = keep {
                    let seconds = keep.as_secs().to_string();
                    headers.insert(async_nats::header::NATS_MESSAGE_TTL, seconds.as_str());
                }
                let subject = format!("{}{key}", kv.prefix);
                match conditional_publish(&context, &subject, headers, value).await {
                    Ok(Decided::Stored(sequence)) => Ok(Some(sequence)),
                    Ok(Decided::Refused(_)) => Ok(None),
                    Err(err) => Err(anyhow!("cannot write {key}: {err}")),
                }
            })
        })
    }

    /// Creates `key` with `value` (`None`), or reads the value another writer put there
    /// first (`Some`). A writer that won a race may not have its write applied yet when
    /// the loser looks, and may yet fail: this asks again, briefly, until one of the two
    /// holds.
    fn create_or_read(&self, key: &str, value: Vec<u8>) -> Result<Option<bytes::Bytes>> {
        let deadline = Instant::now() + STEP_TIMEOUT;
        loop {
            if self.write_at(key, value.clone(), 0)?.is_some() {
                return Ok(None);
            }
            if let Some(there) = self.get(key)? {
                return Ok(Some(there));
            }
            if Instant::now() >= deadline {
                bail!("{key} is taken, yet nothing is there");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The messages whose keys match `m.<keys>` with their marks, oldest first, and
    /// what could not be read.
    fn messages(&self, keys: &str) -> Result<(Vec<Held>, Vec<String>)> {
        let mut marks: HashMap<String, (Mark, u64)> = HashMap::new();
        for (key, value, revision) in self.entries(&format!("s.{keys}"))? {
            let mark = host_shim::json::from_slice(&value).unwrap_or_default();
            marks.insert(format!("m.{}", &key[2..]), (mark, revision));
        }
        let (mut messages, mut unreadable) = (Vec::new(), Vec::new());
        for (key, value, _) in self.entries(&format!("m.{keys}"))? {
            match host_shim::json::from_slice::<SpooledMessage>(&value) {
                Ok(message) => {
                    let (mark, revision) = marks.remove(&key).unwrap_or_default();
                    messages.push(Held {
                        key,
                        message,
                        mark,
                        revision,
                    });
                }
                Err(err) => unreadable.push(format!("{key}: not a message ({err})")),
            }
        }
        messages.sort_by_key(|held| held.message.accepted_at_ns);
        Ok((messages, unreadable))
    }

    /// The messages whose keys match `m.<keys>`, written since `since_ns`, without
    /// their marks (a message key is written once), in no order: from the watch of what
    /// this machine sent when `keys` names this machine as the sender and the time is
    /// within [`SENT_KEPT`], else by a walk of the bucket.
    fn messages_since(&self, keys: &str, since_ns: u128) -> Result<Vec<(String, SpooledMessage)>> {
        let filter = format!("m.{keys}");
        let sent_here = filter.split('.').nth(3) == Some(self.machine.as_str());
        if sent_here && now_ns().saturating_sub(since_ns) <= SENT_KEPT.as_nanos() {
            return self.sent.read(|sent| {
                (sent.iter())
                    .filter(|(key, _)| subject_matches(&filter, key))
                    .filter_map(|(key, kept)| {
                        Some((key.clone(), host_shim::json::from_slice(&kept.value).ok()?))
                    })
                    .collect()
            });
        }
        let entries = (self.connection).entries_since(&self.kv, &filter, Some(since_ns))?;
        Ok((entries.into_iter())
            .filter_map(|(key, value, _)| Some((key, host_shim::json::from_slice(&value).ok()?)))
            .collect())
    }

    /// This machine's sessions that have messages waiting (from any machine), for a
    /// view of the machine: one walk over its messages and their marks.
    pub fn sessions_waiting(&self) -> Result<Vec<String>> {
        let (messages, _) = self.messages(&format!("{}.*.*.*", self.machine))?;
        let mut sessions: Vec<String> = (messages.into_iter())
            .filter(|held| held.mark.state != State::HandedOver)
            .map(|held| held.message.target)
            .collect();
        sessions.sort();
        sessions.dedup();
        Ok(sessions)
    }

    /// The messages this machine sent to `session`.
    fn sent_to(&self, session: &str) -> Result<Vec<Held>> {
        let keys = format!("{}.{}.*", self.session_keys(session)?, self.machine);
        Ok(self.messages(&keys)?.0)
    }
}

impl NatsInbox {
    /// The message at `key`, where its mark says it is.
    fn located_at(&self, key: String, message: SpooledMessage) -> Result<Located> {
        let (mark, revision) = self.mark_of(&key)?;
        Ok(located(Held {
            key,
            message,
            mark,
            revision,
        }))
    }
}

fn located(held: Held) -> Located {
    Located {
        state: match held.mark.state {
            State::HandedOver => DeliveryState::HandedOver,
            _ => DeliveryState::Waiting,
        },
        message: held.message,
    }
}

/// A message a hand-over claimed: its key, the claim written and its revision.
struct Claimed {
    key: String,
    message: SpooledMessage,
    claim: Mark,
    revision: u64,
}

impl NatsInbox {
    /// Claims each of `picked` still waiting (one claimed first elsewhere is left out)
    /// and calls `answer` with the claimed messages; when it fails, the claims go back.
    fn claim_and_answer(
        &self,
        session: &str,
        picked: Vec<Waiting>,
        answer: &mut dyn FnMut(&[SpooledMessage]) -> Result<()>,
    ) -> Result<Vec<Claimed>> {
        let prefix = format!("m.{}.", self.session_keys(session)?);
        let mut claimed = Vec::new();
        for waiting in picked {
            let key = waiting.handle.as_str().to_string();
            if !key.starts_with(&prefix) {
                bail!("{key} is not a message of {session}");
            }
            let (mark, revision) = self.mark_of(&key)?;
            if mark.state != State::Waiting {
                continue;
            }
            let claim = Mark {
                state: State::Claimed,
                claimed_at_ns: now_ns(),
            };
            if let Some(revision) = self.set_mark(&key, claim, revision)? {
                claimed.push(Claimed {
                    key,
                    message: waiting.message,
                    claim,
                    revision,
                });
            }
        }
        if claimed.is_empty() {
            return Ok(claimed);
        }
        self.step_done(Step::Claimed);
        let messages: Vec<SpooledMessage> = claimed.iter().map(|c| c.message.clone()).collect();
        if let Err(err) = answer(&messages) {
            for claim in &claimed {
                let _ = self.set_mark(&claim.key, Mark::default(), claim.revision);
            }
            return Err(err);
        }
        self.step_done(Step::Answered);
        Ok(claimed)
    }

    /// Marks each claimed message as `state_of` says, from its claim: an offer or a
    /// hand-over dates from when it was claimed.
    fn mark_all(
        &self,
        claimed: &[Claimed],
        state_of: impl Fn(&SpooledMessage) -> State,
    ) -> Result<Vec<SpooledMessage>> {
        for claim in claimed {
            let mark = Mark {
                state: state_of(&claim.message),
                ..claim.claim
            };
            if self.set_mark(&claim.key, mark, claim.revision)?.is_none() {
                bail!("{} changed while it was being handed over", claim.key);
            }
        }
        if !claimed.is_empty() {
            self.step_done(Step::Marked);
        }
        Ok(claimed.iter().map(|c| c.message.clone()).collect())
    }
}

impl InboxBackend for NatsInbox {
    fn find(&self, session: &str, key: &str) -> Result<Option<Located>> {
        if key.is_empty() {
            return Ok(None);
        }
        let name = self.keyed_name(session, key)?;
        let Some(value) = self.get(&name)? else {
            return Ok(None);
        };
        let message: SpooledMessage = host_shim::json::from_slice(&value)
            .with_context(|| format!("{name} is not a message"))?;
        self.located_at(name, message).map(Some)
    }

    fn find_same_words(&self, ask: &SameWords) -> Result<Option<Located>> {
        let keys = format!("{}.{}.*", self.session_keys(ask.session)?, self.machine);
        let mut recent = self.messages_since(&keys, ask.since_ns)?;
        recent.sort_by_key(|(_, m)| std::cmp::Reverse(m.accepted_at_ns));
        let Some((key, message)) = recent.into_iter().find(|(_, m)| ask.is(m)) else {
            return Ok(None);
        };
        self.located_at(key, message).map(Some)
    }

    fn count_from(&self, session: &str, sender: &str) -> Result<InboxCount> {
        let mut count = InboxCount::NONE;
        if sender.is_empty() {
            return Ok(count);
        }
        for held in self.sent_to(session)? {
            if held.message.sender != sender {
                continue;
            }
            match held.mark.state {
                State::HandedOver => count.handed_over += 1,
                _ => count.waiting += 1,
            }
        }
        Ok(count)
    }

    fn put_unseen(&self, message: &SpooledMessage) -> Result<Put> {
        let name = match message.key.is_empty() {
            true => {
                let keys = format!("{}.{}", self.session_keys(&message.target)?, self.machine);
                format!("m.{keys}.{:020}-{}", message.accepted_at_ns, nuid::next())
            }
            false => self.keyed_name(&message.target, &message.key)?,
        };
        // Taken: the first message under the key is the answer. A write that went
        // unanswered to the end (a step's tries all timed out, or the last met an
        // election) may have been stored: the caller is told so, and a retry under the
        // key creates it at most once.
        let created = self.create_or_read(&name, serde_json::to_vec(message)?);
        let created = created.map_err(|err| match transient(&err) {
            true => host_shim::inbox::undecided(err),
            false => err,
        });
        match created? {
            None => Ok(Put::New(Handle::new(name))),
            Some(first) => {
                let first: SpooledMessage = host_shim::json::from_slice(&first)
                    .with_context(|| format!("{name} is not a message"))?;
                Ok(Put::Repeat(first))
            }
        }
    }

    fn waiting(&self, session: &str) -> Result<InboxContents> {
        let (messages, mut unreadable) =
            self.messages(&format!("{}.*.*", self.session_keys(session)?))?;
        let mut waiting = Vec::new();
        for held in messages {
            if held.mark.state != State::Waiting {
                continue; // claimed, offered (settled by `settle`) or handed over
            }
            match self.as_handed(&held.key, session, held.message)? {
                Ok(message) => waiting.push(message),
                Err(why) => unreadable.push(why),
            }
        }
        Ok(InboxContents {
            messages: waiting,
            unreadable,
        })
    }

    fn waiting_one(&self, session: &str, handle: &str) -> Result<Option<Waiting>> {
        if !handle.starts_with(&format!("m.{}.", self.session_keys(session)?)) {
            return Ok(None);
        }
        let Some(value) = self.get(handle)? else {
            return Ok(None);
        };
        let Ok(message) = host_shim::json::from_slice::<SpooledMessage>(&value) else {
            return Ok(None);
        };
        if self.mark_of(handle)?.0.state != State::Waiting {
            return Ok(None);
        }
        Ok(self.as_handed(handle, session, message)?.ok())
    }

    fn hand(&self, handing: Handing) -> Result<Vec<SpooledMessage>> {
        let claimed = self.claim_and_answer(handing.session, handing.picked, handing.answer)?;
        // No record can show a message without an id: handed over now.
        let offered = |message: &SpooledMessage| {
            handing.handed == Handed::Offered && !message.message_id.is_empty()
        };
        // What the harness has is remembered here first (a local write), then marked
        // in the cluster; a mark that does not get there is made by the next settling.
        if let Some(ledger) = &self.ledger {
            let handed = claimed.iter().filter(|claim| !offered(&claim.message));
            ledger.remember(handed.map(|claim| claim.key.as_str()))?;
        }
        self.mark_all(&claimed, |message| match offered(message) {
            true => State::Offered,
            false => State::HandedOver,
        })
    }

    fn settle(
        &self,
        session: &str,
        expire_after: Duration,
        shown: host_shim::inbox::ReadShown,
    ) -> Result<host_shim::inbox::Settled> {
        let mut settled = host_shim::inbox::Settled::default();
        // The marks first (one listing): most hooks find no offer, and read no message.
        let keys = self.session_keys(session)?;
        let (now, stale) = (now_ns(), self.stale_before());
        let mut open = Vec::new();
        for (key, value, revision) in self.entries(&format!("s.{keys}.*.*"))? {
            let mark: Mark = host_shim::json::from_slice(&value).unwrap_or_default();
            let unsettled = match mark.state {
                State::Offered => true,
                State::Claimed => mark.claimed_at_ns < stale,
                _ => false,
            };
            let message_key = format!("m.{}", &key[2..]);
            if !unsettled {
                continue;
            }
            let Some(value) = self.get(&message_key)? else {
                continue; // the message expired before its mark
            };
            let Ok(message) = host_shim::json::from_slice::<SpooledMessage>(&value) else {
                continue; // named by the next listing of what waits
            };
            open.push(Held {
                key: message_key,
                message,
                mark,
                revision,
            });
        }
        if open.is_empty() {
            return Ok(settled);
        }
        let ids: Vec<String> = open
            .iter()
            .map(|held| held.message.message_id.clone())
            .collect();
        let (shown, here) = (shown(&ids)?, self.handed_over_here()?);
        for held in open {
            let id = &held.message.message_id;
            let seen = (!id.is_empty() && shown.contains(id))
                || (held.mark.state == State::Claimed && here.contains(&held.key));
            let expired = now.saturating_sub(held.mark.claimed_at_ns) >= expire_after.as_nanos();
            let state = match (seen, held.mark.state) {
                (true, _) => State::HandedOver,
                // A dead claim's answer may have reached the harness: an offer from
                // when it was made.
                (false, State::Claimed) if !expired => State::Offered,
                (false, _) if expired => State::Waiting,
                _ => continue,
            };
            let mark = Mark { state, ..held.mark };
            if self.set_mark(&held.key, mark, held.revision)?.is_none() {
                continue; // another host settled it first
            }
            match state {
                State::HandedOver => settled.handed_over.push(held.message),
                State::Waiting => settled.waiting_again.push(held.message),
                _ => {}
            }
        }
        Ok(settled)
    }

    fn sent_since(&self, sender: &str, since_ns: u128) -> Result<Vec<Sent>> {
        if sender.is_empty() {
            return Ok(Vec::new());
        }
        let sent = self.messages_since(&format!("*.*.{}.*", self.machine), since_ns)?;
        Ok((sent.into_iter())
            .map(|(_, message)| message)
            .filter(|m| m.sender == sender && m.accepted_at_ns >= since_ns)
            .map(|m| Sent {
                target: m.target,
                accepted_at_ns: m.accepted_at_ns,
                key: m.key,
            })
            .collect())
    }

    fn inbound(&self, session: &str) -> Result<InboundPolicy> {
        let Some(value) = self.get(&format!("p.{}", self.session_keys(session)?))? else {
            return Ok(InboundPolicy::Accept);
        };
        match value.as_ref() {
            b"hold" => Ok(InboundPolicy::Hold),
            b"refuse" => Ok(InboundPolicy::Refuse),
            _ => Ok(InboundPolicy::Accept),
        }
    }

    fn set_inbound(&self, session: &str, policy: InboundPolicy) -> Result<()> {
        let key = format!("p.{}", self.session_keys(session)?);
        (self.connection).put(&self.kv, &key, policy.as_str().as_bytes().to_vec())
    }

    /// The claims of every machine: one key, its revision the stream's sequence.
    fn read_claims(&self) -> Result<ClaimsAt> {
        let Some((value, revision)) = self.connection.entry(&self.kv, CLAIMS_KEY)? else {
            return Ok(ClaimsAt::default());
        };
        let claims = claims::from_json(&value, "the cluster's claims (key c)")?;
        Ok(ClaimsAt { claims, revision })
    }

    /// Written only when the key's last write is still `revision` (JetStream checks it
    /// on the stream's leader, for every machine at once). A write whose
    /// acknowledgement never came is an error, and the plugin reads and decides again.
    fn write_claims(
        &self,
        revision: u64,
        claims: &[host_shim::contract::latest::Claim],
        _changes: &[host_shim::contract::latest::ClaimChange],
    ) -> Result<ClaimsWritten> {
        Ok(
            match self.write_at(CLAIMS_KEY, claims::to_json(claims), revision)? {
                Some(revision) => ClaimsWritten::Written(revision),
                None => ClaimsWritten::Stale,
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::subject_matches;

    #[test]
    fn a_star_stands_for_one_token() {
        assert!(subject_matches("m.*.*.alpha.*", "m.beta.s1.alpha.k00"));
        assert!(!subject_matches("m.*.*.alpha.*", "m.beta.s1.gamma.k00"));
        assert!(!subject_matches("m.*.*.alpha.*", "m.beta.s1.alpha"));
        assert!(!subject_matches("m.*.*.alpha.*", "m.beta.s1.alpha.k00.x"));
        assert!(subject_matches("m.beta.s1.alpha.*", "m.beta.s1.alpha.k00"));
        assert!(!subject_matches("m.beta.s1.alpha.*", "m.beta.s2.alpha.k00"));
    }
}
