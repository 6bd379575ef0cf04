//! The host's side of the sandbox: every import the plugin calls passes through a
//! [`Guard`] before it reaches the harness. The guard counts what the plugin asked for,
//! records what the inbox accepted (so nothing accepted goes unreported, whatever
//! happens to the call), and bounds what a plugin can make the host do. Past a bound
//! it ends the call from inside the import, with an error that names the bound, and
//! forwards nothing more.

mod older;

/// `add_to_linker` for a version whose world the guard answers whole: its imports, each
/// answered by the [`Guard`] `guard` finds in the store's data.
macro_rules! world_linker {
    () => {
        /// Adds the version's imports to `linker`, each answered by the [`Guard`]
        /// `guard` finds in the store's data.
        pub fn add_to_linker<T: 'static, H: Harness>(
            linker: &mut Linker<T>,
            guard: fn(&mut T) -> &mut Guard<H>,
        ) -> wasmtime::Result<()> {
            Plugin::add_to_linker::<T, HasSelf<Guard<H>>>(linker, guard)
        }
    };
}
use world_linker;
pub(crate) mod since_v0_1_0;
pub(crate) mod since_v0_2_0;
pub(crate) mod since_v0_3_0;
pub(crate) mod since_v0_4_0;
pub(crate) mod since_v0_5_0;
pub(crate) mod since_v0_6_0;

use crate::contract::latest::{
    Claim, ClaimChange, ClaimSet, Delivered, DeliveryMode, DeliveryRefusal, DeliveryState,
    InboxCount, MessageContent, SendCounts, SessionHeader, SessionIndex, SurfaceIndex, ToolAction,
    WriteFailure,
};
use crate::inbox::claims::ClaimsWritten;

/// The most bytes of a tool call's input handed to the plugin (the WIT's bound).
pub const ACTION_INPUT_BYTES: usize = 1024;

/// Cuts `text` to at most `max` bytes, at a char boundary.
fn cut_at_char(text: &mut String, max: usize) {
    if text.len() > max {
        let mut end = max;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
}
use crate::harness::{Harness, HistoryAsk};
use crate::inbox::delivery::DeliveryRequest;
use crate::inbox::{KEYS_KEPT, KEYS_KEPT_FOR};
use serde::{Deserialize, Serialize};
use std::fmt;

/// What a plugin may make the host do in one call. Each is counted before the host
/// does the work it bounds. A policy file holds each as a field of its own
/// (`crate::Policy`); an omitted one keeps its default.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct HostBounds {
    /// `deliver` calls the inbox accepts per tool call (a send delivers once).
    pub deliveries_per_call: u32,
    /// `deliver` calls per tool call, accepted or refused (a send makes one).
    pub delivery_attempts_per_call: u32,
    /// Bytes of one delivery key (the plugin's `LEN:CALLERCALLID`); a longer key
    /// breaks the contract.
    pub key_bytes: usize,
    /// Bytes of one delivered body (the framed body of a full `maxSendChars` message
    /// is about 33 KB).
    pub body_bytes: usize,
    /// Ids or seqs in one batch (`get-sessions`, `title-snapshots`, `get-messages`).
    pub ids_per_batch: usize,
    /// Bytes of host data handed to the plugin in one call, all imports together.
    pub lowered_bytes: usize,
    /// Bytes of one session id the plugin passes (a target, a sender, an id of a
    /// batch), checked before the harness is asked. The ids harnesses serve are UUIDs
    /// or names of that kind; the default leaves room for any id a host lists (the
    /// plugin passes listed ids back) and stops a megabyte one.
    pub id_bytes: usize,
    /// Bytes the plugin hands the host in one call, all imports together (ids,
    /// bodies, keys), counted before the harness is asked.
    pub lifted_bytes: usize,
    /// Seconds a send may await its reply after the call, whatever the plugin asks
    /// (`answer.await-reply`); the plugin's own `maxAwaitSeconds` is at most an hour.
    pub await_seconds: u32,
    /// `claims.write` calls per tool call (a claim retries while others write; the
    /// plugin tries 8 times).
    pub claim_writes_per_call: u32,
}

impl Default for HostBounds {
    fn default() -> Self {
        HostBounds {
            deliveries_per_call: 1,
            delivery_attempts_per_call: 4,
            key_bytes: 1024,
            body_bytes: 256 << 10,
            ids_per_batch: 100_000,
            lowered_bytes: 256 << 20,
            id_bytes: 64 << 10,
            lifted_bytes: 64 << 20,
            await_seconds: 3600,
            claim_writes_per_call: 16,
        }
    }
}

/// Counts of host calls made during one tool call.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct HostStats {
    /// `list-sessions` calls.
    pub header_lists: u32,
    /// `get-session` calls.
    pub header_gets: u32,
    /// `get-sessions` calls.
    pub header_batches: u32,
    /// Ids asked for across all header batches.
    pub header_ids_asked: u32,
    /// `title-snapshots` calls.
    pub title_batches: u32,
    /// Ids asked for across all title batches.
    pub title_ids_asked: u32,
    /// `get-surface` calls.
    pub surface_reads: u32,
    /// `get-messages` calls.
    pub message_batches: u32,
    /// Whole messages asked for across all message batches.
    pub messages_asked: u32,
    /// `inbox-status` calls.
    pub inbox_status_reads: u32,
    /// `action-seqs` calls.
    pub action_seq_reads: u32,
    /// `get-actions` calls.
    pub action_batches: u32,
    /// Messages whose tool calls were asked for across all action batches.
    pub actions_asked: u32,
    /// `send-history` calls.
    pub send_histories: u32,
    /// `deliver` calls, accepted or not.
    pub delivery_attempts: u32,
    /// Deliveries the inbox accepted (repeats of a key not counted).
    pub deliveries: u32,
    /// Deliveries the inbox answered as repeats of an earlier one with the same key.
    pub repeats: u32,
    /// Cold sessions woken by a delivery.
    pub wakes: u32,
    /// `claims.read` calls.
    pub claim_reads: u32,
    /// `claims.write` calls, written or not.
    pub claim_writes: u32,
    /// Bytes of host data handed to the plugin (strings and their records).
    pub lowered_bytes: u64,
    /// Bytes the plugin handed the host (ids, bodies, keys).
    pub lifted_bytes: u64,
}

/// One message the inbox accepted, as `--deliveries` writes it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Delivery {
    pub target: String,
    pub mode: DeliveryMode,
    pub body: String,
    pub woke: bool,
    /// Where the message was when the inbox accepted it.
    pub state: DeliveryState,
    /// The delivery key (empty when the call had no id).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub key: String,
}

/// Why the host ended a call from inside an import.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HostStop {
    /// The plugin tried to deliver more than `deliveries_per_call` times.
    Deliveries { limit: u32 },
    /// The plugin called `deliver` more than `delivery_attempts_per_call` times.
    DeliveryAttempts { limit: u32 },
    /// A delivery key was longer than `key_bytes`.
    KeyBytes { limit: usize, size: usize },
    /// A delivery key came back with another target, mode or body than the first
    /// delivery under it.
    KeyReused { key: String },
    /// A delivered body was longer than `body_bytes`.
    BodyBytes { limit: usize, size: usize },
    /// A batch asked for more than `ids_per_batch` ids or seqs.
    Batch {
        what: &'static str,
        limit: usize,
        size: usize,
    },
    /// The plugin was handed more than `lowered_bytes` of host data in one call.
    LoweredBytes { limit: usize },
    /// The plugin wrote the claims more than `claim_writes_per_call` times.
    ClaimWrites { limit: u32 },
    /// The plugin passed a session id longer than `id_bytes`.
    IdBytes {
        what: &'static str,
        limit: usize,
        size: usize,
    },
    /// The plugin handed the host more than `lifted_bytes` in one call.
    LiftedBytes { limit: usize },
    /// One answer of the host is larger than the plugin's whole memory.
    TooLargeForPlugin {
        what: String,
        size: usize,
        limit: usize,
    },
    /// The harness could not answer a question, and says why
    /// ([`crate::SessionQuery::unanswered`]): a session on a machine that did not answer.
    Unanswered { why: String },
}

impl fmt::Display for HostStop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HostStop::Deliveries { limit } => write!(
                f,
                "the plugin tried to deliver more than {limit} message(s) in one call; the host stopped it"
            ),
            HostStop::DeliveryAttempts { limit } => write!(
                f,
                "the plugin called deliver more than {limit} times in one call; the host stopped it"
            ),
            HostStop::KeyBytes { limit, size } => write!(
                f,
                "the plugin passed a delivery key of {size} bytes, past the contract's {limit}; nothing was delivered"
            ),
            HostStop::KeyReused { key } => write!(
                f,
                "the delivery key {:?} was used before for another target, mode or body; nothing was delivered (a harness must not reuse call ids)",
                key.chars().take(80).collect::<String>()
            ),
            HostStop::BodyBytes { limit, size } => write!(
                f,
                "the plugin tried to deliver a body of {size} bytes, past the host's limit of {limit} bytes; nothing was delivered"
            ),
            HostStop::Batch { what, limit, size } => write!(
                f,
                "the plugin asked for {size} {what} in one batch, past the host's limit of {limit}"
            ),
            HostStop::LoweredBytes { limit } => write!(
                f,
                "the plugin asked the host for more than {limit} bytes of session data in one call"
            ),
            HostStop::ClaimWrites { limit } => write!(
                f,
                "the plugin wrote the claims more than {limit} times in one call; the host stopped it"
            ),
            HostStop::IdBytes { what, limit, size } => write!(
                f,
                "the plugin passed {what} of {size} bytes, past the host's limit of {limit} bytes for a session id; the harness was not asked"
            ),
            HostStop::LiftedBytes { limit } => write!(
                f,
                "the plugin handed the host more than {limit} bytes in one call; the host stopped it"
            ),
            HostStop::TooLargeForPlugin { what, size, limit } => write!(
                f,
                "{what} is {size} bytes, more than the plugin's memory limit of {limit} bytes, so the host cannot hand it over; raise the memory limit or trim the session"
            ),
            HostStop::Unanswered { why } => f.write_str(why),
        }
    }
}

/// What a runtime delivered under each key, across its calls: a key that comes back
/// with another target, mode or body is a contract breach (a harness reusing call
/// ids), which the call reports instead of answering it as a repeat. Kept as an
/// inbox keeps its keys: the last [`KEYS_KEPT`], each for [`KEYS_KEPT_FOR`].
#[derive(Debug, Default)]
pub struct KeyLedger {
    fingerprints: std::collections::HashMap<String, u64>,
    order: std::collections::VecDeque<(String, std::time::Instant)>,
}

impl KeyLedger {
    /// Whether `key` may carry this delivery (never seen, or seen with the same one);
    /// remembers it.
    fn admits(&mut self, key: &str, target: &str, mode: DeliveryMode, body: &str) -> bool {
        use std::hash::{Hash, Hasher};
        let now = std::time::Instant::now();
        while let Some((old, at)) = self.order.front() {
            if now.duration_since(*at) < KEYS_KEPT_FOR {
                break;
            }
            self.fingerprints.remove(old);
            self.order.pop_front();
        }
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        (target, mode.as_str(), body).hash(&mut hasher);
        let fingerprint = hasher.finish();
        if let Some(first) = self.fingerprints.get(key) {
            return *first == fingerprint;
        }
        if self.order.len() == KEYS_KEPT
            && let Some((oldest, _)) = self.order.pop_front()
        {
            self.fingerprints.remove(&oldest);
        }
        self.fingerprints.insert(key.to_string(), fingerprint);
        self.order.push_back((key.to_string(), now));
        true
    }
}

/// A call's host: the harness behind the bounds and the counters.
pub struct Guard<H> {
    pub harness: H,
    keys: std::sync::Arc<std::sync::Mutex<KeyLedger>>,
    bounds: HostBounds,
    memory_limit: usize,
    pub stats: HostStats,
    pub deliveries: Vec<Delivery>,
    pub stopped: Option<HostStop>,
}

impl<H: Harness> Guard<H> {
    /// A guard for one call: the harness is told a call begins.
    pub fn new(
        mut harness: H,
        caller: &str,
        keys: std::sync::Arc<std::sync::Mutex<KeyLedger>>,
        bounds: HostBounds,
        memory_limit: usize,
    ) -> Guard<H> {
        harness.begin_call(caller);
        Guard {
            harness,
            keys,
            bounds,
            memory_limit,
            stats: HostStats::default(),
            deliveries: Vec::new(),
            stopped: None,
        }
    }

    /// The harness back, told the call has ended.
    pub fn into_harness(mut self) -> H {
        self.harness.end_call();
        self.harness
    }

    fn stop<T>(&mut self, why: HostStop) -> wasmtime::Result<T> {
        let message = why.to_string();
        self.stopped = Some(why);
        Err(wasmtime::Error::msg(message))
    }

    /// Accounts for `size` bytes about to be handed to the plugin, an answer the
    /// harness just gave: a harness that could not answer ends the call saying why.
    fn lower(&mut self, what: impl FnOnce() -> String, size: usize) -> wasmtime::Result<()> {
        if let Some(why) = self.harness.unanswered() {
            return self.stop(HostStop::Unanswered { why });
        }
        if size > self.memory_limit {
            return self.stop(HostStop::TooLargeForPlugin {
                what: what(),
                size,
                limit: self.memory_limit,
            });
        }
        self.stats.lowered_bytes = self.stats.lowered_bytes.saturating_add(size as u64);
        if self.stats.lowered_bytes > self.bounds.lowered_bytes as u64 {
            return self.stop(HostStop::LoweredBytes {
                limit: self.bounds.lowered_bytes,
            });
        }
        Ok(())
    }
}

/// Bytes a claim takes in the plugin's memory (or in the host's, lifted).
fn claim_size(claim: &Claim) -> usize {
    64 + claim.id.len()
        + claim.holder.len()
        + claim.reason.len()
        + claim.paths.iter().map(|p| 8 + p.len()).sum::<usize>()
}

/// Bytes a value takes in the plugin's memory once lowered (strings, plus the records
/// and list slots that hold them), near enough to bound it.
fn header_size(header: &SessionHeader) -> usize {
    64 + header.id.len()
        + header.origin.len()
        + header.parent_id.as_ref().map_or(0, String::len)
        + header.cwd.as_ref().map_or(0, String::len)
        + header.preset.as_ref().map_or(0, String::len)
        + header.machine.as_ref().map_or(0, String::len)
}

/// The distinct items of a batch, first seen first, and for each asked item the
/// position of its answer among them: the harness answers each item once, however
/// often the plugin repeats it.
fn distinct<T: Clone + Eq + std::hash::Hash>(items: &[T]) -> (Vec<T>, Vec<usize>) {
    let mut first: std::collections::HashMap<&T, usize> = std::collections::HashMap::new();
    let mut unique = Vec::new();
    let places = (items.iter())
        .map(|item| {
            *first.entry(item).or_insert_with(|| {
                unique.push(item.clone());
                unique.len() - 1
            })
        })
        .collect();
    (unique, places)
}

/// The answer to every asked item, from the answers to the distinct ones (a harness
/// that answered short leaves `None` for the rest).
fn expand<T: Clone>(answers: Vec<Option<T>>, places: &[usize]) -> Vec<Option<T>> {
    if answers.len() == places.len() && places.iter().enumerate().all(|(i, &p)| i == p) {
        return answers; // nothing repeated
    }
    places
        .iter()
        .map(|&p| answers.get(p).cloned().flatten())
        .collect()
}

/// Counts one batch call and the items it asks for.
fn count(calls: &mut u32, asked: &mut u32, items: usize) {
    *calls += 1;
    *asked = asked.saturating_add(u32::try_from(items).unwrap_or(u32::MAX));
}

/// What the plugin may ask of the harness, each through the guard: counted, bounded,
/// and accounted for in lowered bytes. Every contract version's imports call these.
impl<H: Harness> Guard<H> {
    fn batch(&mut self, what: &'static str, size: usize) -> wasmtime::Result<()> {
        if size > self.bounds.ids_per_batch {
            return self.stop(HostStop::Batch {
                what,
                limit: self.bounds.ids_per_batch,
                size,
            });
        }
        Ok(())
    }

    /// Accounts for `ids`, about to be passed to the harness as `what`: each at most
    /// `id_bytes`, all of a call's at most `lifted_bytes` with what else it passed.
    fn lift_ids<'a>(
        &mut self,
        what: &'static str,
        ids: impl IntoIterator<Item = &'a str>,
    ) -> wasmtime::Result<()> {
        let mut total = 0usize;
        for id in ids {
            if id.len() > self.bounds.id_bytes {
                return self.stop(HostStop::IdBytes {
                    what,
                    limit: self.bounds.id_bytes,
                    size: id.len(),
                });
            }
            total = total.saturating_add(id.len());
        }
        self.lift(total)
    }

    /// Accounts for `size` bytes the plugin handed the host.
    fn lift(&mut self, size: usize) -> wasmtime::Result<()> {
        self.stats.lifted_bytes = self.stats.lifted_bytes.saturating_add(size as u64);
        if self.stats.lifted_bytes > self.bounds.lifted_bytes as u64 {
            return self.stop(HostStop::LiftedBytes {
                limit: self.bounds.lifted_bytes,
            });
        }
        Ok(())
    }

    /// Accounts for a batch's whole answer, repeats included, before it is built.
    fn lower_batch(
        &mut self,
        what: impl FnOnce() -> String,
        sizes: &[usize],
        places: &[usize],
    ) -> wasmtime::Result<()> {
        let size = places.iter().fold(8usize, |total, &p| {
            total.saturating_add(sizes.get(p).copied().unwrap_or(8))
        });
        self.lower(what, size)
    }

    pub(crate) fn list_sessions(&mut self) -> wasmtime::Result<SessionIndex> {
        self.stats.header_lists += 1;
        let index = self.harness.list_sessions();
        let size = 16 + index.ids.len() + 24 * index.entries.len();
        self.lower(
            || format!("the index of {} sessions", index.entries.len()),
            size,
        )?;
        Ok(index)
    }

    pub(crate) fn get_session(&mut self, id: &str) -> wasmtime::Result<Option<SessionHeader>> {
        self.stats.header_gets += 1;
        self.lift_ids("a session id", [id])?;
        let header = self.harness.get_session(id);
        let size = 8 + header.as_ref().map_or(0, header_size);
        self.lower(|| format!("the header of session {id:?}"), size)?;
        Ok(header)
    }

    pub(crate) fn get_sessions(
        &mut self,
        ids: &[String],
    ) -> wasmtime::Result<Vec<Option<SessionHeader>>> {
        let stats = &mut self.stats;
        count(
            &mut stats.header_batches,
            &mut stats.header_ids_asked,
            ids.len(),
        );
        self.batch("headers", ids.len())?;
        self.lift_ids(
            "an id in a batch of headers",
            ids.iter().map(String::as_str),
        )?;
        let (unique, places) = distinct(ids);
        let headers = self.harness.get_sessions(&unique);
        let sizes: Vec<usize> = (headers.iter())
            .map(|header| 8 + header.as_ref().map_or(0, header_size))
            .collect();
        self.lower_batch(
            || format!("the batch of {} headers", ids.len()),
            &sizes,
            &places,
        )?;
        Ok(expand(headers, &places))
    }

    pub(crate) fn title_snapshots(
        &mut self,
        ids: &[String],
    ) -> wasmtime::Result<Vec<Option<String>>> {
        let stats = &mut self.stats;
        count(
            &mut stats.title_batches,
            &mut stats.title_ids_asked,
            ids.len(),
        );
        self.batch("titles", ids.len())?;
        self.lift_ids("an id in a batch of titles", ids.iter().map(String::as_str))?;
        let (unique, places) = distinct(ids);
        let titles = self.harness.title_snapshots(&unique);
        let sizes: Vec<usize> = (titles.iter())
            .map(|title| 12 + title.as_ref().map_or(0, String::len))
            .collect();
        self.lower_batch(
            || format!("the batch of {} titles", ids.len()),
            &sizes,
            &places,
        )?;
        Ok(expand(titles, &places))
    }

    pub(crate) fn get_surface(
        &mut self,
        id: &str,
        lead_chars: u32,
    ) -> wasmtime::Result<Option<SurfaceIndex>> {
        self.stats.surface_reads += 1;
        self.lift_ids("a session id", [id])?;
        let surface = self.harness.get_surface(id, lead_chars);
        let size = 32
            + surface.as_ref().map_or(0, |s| {
                s.source_leads.len() + s.text_leads.len() + 32 * s.messages.len()
            });
        self.lower(|| format!("the surface index of session {id:?}"), size)?;
        Ok(surface)
    }

    pub(crate) fn get_messages(
        &mut self,
        id: &str,
        seqs: &[u64],
    ) -> wasmtime::Result<Vec<Option<MessageContent>>> {
        let stats = &mut self.stats;
        count(
            &mut stats.message_batches,
            &mut stats.messages_asked,
            seqs.len(),
        );
        self.batch("messages", seqs.len())?;
        self.lift_ids("a session id", [id])?;
        self.lift(seqs.len().saturating_mul(8))?;
        let (unique, places) = distinct(seqs);
        let messages = self.harness.get_messages(id, &unique);
        let sizes: Vec<usize> = (messages.iter())
            .map(|m| 20 + m.as_ref().map_or(0, |m| m.source.len() + m.text.len()))
            .collect();
        self.lower_batch(
            || format!("the batch of {} messages of session {id:?}", seqs.len()),
            &sizes,
            &places,
        )?;
        Ok(expand(messages, &places))
    }

    pub(crate) fn inbox_status(
        &mut self,
        target: &str,
        sender: &str,
    ) -> wasmtime::Result<InboxCount> {
        self.stats.inbox_status_reads += 1;
        self.lift_ids("an inbox-status session id", [target, sender])?;
        self.lower(|| "an inbox count".to_string(), 8)?;
        Ok(self.harness.inbox_status(target, sender))
    }

    pub(crate) fn action_seqs(&mut self, id: &str) -> wasmtime::Result<Vec<u64>> {
        self.stats.action_seq_reads += 1;
        self.lift_ids("a session id", [id])?;
        let seqs = self.harness.action_seqs(id);
        let size = 8 + 8 * seqs.len();
        self.lower(|| format!("the action seqs of session {id:?}"), size)?;
        Ok(seqs)
    }

    pub(crate) fn get_actions(
        &mut self,
        id: &str,
        seqs: &[u64],
    ) -> wasmtime::Result<Vec<Vec<ToolAction>>> {
        let stats = &mut self.stats;
        count(
            &mut stats.action_batches,
            &mut stats.actions_asked,
            seqs.len(),
        );
        self.batch("actions", seqs.len())?;
        self.lift_ids("a session id", [id])?;
        self.lift(seqs.len().saturating_mul(8))?;
        let (unique, places) = distinct(seqs);
        let mut actions = self.harness.get_actions(id, &unique);
        // The WIT's bound on an input, kept for a harness that passes more.
        for action in actions.iter_mut().flatten() {
            cut_at_char(&mut action.input, ACTION_INPUT_BYTES);
        }
        let sizes: Vec<usize> = (actions.iter())
            .map(|calls| {
                (calls.iter()).fold(12, |total, a| total + 24 + a.name.len() + a.input.len())
            })
            .collect();
        self.lower_batch(
            || format!("the actions of {} messages of session {id:?}", seqs.len()),
            &sizes,
            &places,
        )?;
        let answers = expand(actions.into_iter().map(Some).collect(), &places);
        Ok(answers.into_iter().map(Option::unwrap_or_default).collect())
    }

    pub(crate) fn send_history(&mut self, ask: &HistoryAsk) -> wasmtime::Result<SendCounts> {
        self.stats.send_histories += 1;
        if ask.key.len() > self.bounds.key_bytes {
            return self.stop(HostStop::KeyBytes {
                limit: self.bounds.key_bytes,
                size: ask.key.len(),
            });
        }
        self.lift_ids("a send-history session id", [ask.sender, ask.target])?;
        self.lift(ask.key.len())?;
        let mut history = (self.harness).send_history(ask);
        // At most `limit` times each, whatever the harness answered.
        history.to_target_times.truncate(ask.limit as usize);
        history.to_any_times.truncate(ask.limit as usize);
        let size = 40 + 8 * (history.to_target_times.len() + history.to_any_times.len());
        self.lower(|| "a send history".to_string(), size)?;
        Ok(history)
    }

    pub(crate) fn read_claims(&mut self) -> wasmtime::Result<Result<ClaimSet, String>> {
        self.stats.claim_reads += 1;
        let read = match self.harness.claims_inbox() {
            None => Err("this harness keeps no claims".to_string()),
            Some(inbox) => inbox.read_claims().map_err(|err| format!("{err:#}")),
        };
        let answer = read.map(|at| ClaimSet {
            claims: at.claims,
            revision: at.revision,
            now_ms: crate::call_stamp::now_ms(),
        });
        let size = match &answer {
            Ok(set) => set.claims.iter().fold(24, |total, c| total + claim_size(c)),
            Err(why) => 8 + why.len(),
        };
        self.lower(|| "the claims".to_string(), size)?;
        Ok(answer)
    }

    pub(crate) fn write_claims(
        &mut self,
        revision: u64,
        claims: &[Claim],
        changes: &[ClaimChange],
    ) -> wasmtime::Result<Result<u64, WriteFailure>> {
        if self.stats.claim_writes >= self.bounds.claim_writes_per_call {
            return self.stop(HostStop::ClaimWrites {
                limit: self.bounds.claim_writes_per_call,
            });
        }
        self.stats.claim_writes += 1;
        let size = (claims.iter().map(claim_size))
            .chain(changes.iter().map(|change| claim_size(&change.claim)))
            .sum();
        self.lift(size)?;
        let Some(inbox) = self.harness.claims_inbox() else {
            return Ok(Err(WriteFailure::Unavailable(
                "this harness keeps no claims".to_string(),
            )));
        };
        Ok(match inbox.write_claims(revision, claims, changes) {
            Ok(ClaimsWritten::Written(revision)) => Ok(revision),
            Ok(ClaimsWritten::Stale) => Err(WriteFailure::Stale),
            Err(err) => Err(WriteFailure::Unavailable(format!("{err:#}"))),
        })
    }

    pub(crate) fn deliver(
        &mut self,
        request: &DeliveryRequest,
    ) -> wasmtime::Result<Result<Delivered, DeliveryRefusal>> {
        let DeliveryRequest {
            target,
            body,
            mode,
            key,
            ids,
            ..
        } = *request;
        if self.stats.deliveries >= self.bounds.deliveries_per_call {
            return self.stop(HostStop::Deliveries {
                limit: self.bounds.deliveries_per_call,
            });
        }
        if self.stats.delivery_attempts >= self.bounds.delivery_attempts_per_call {
            return self.stop(HostStop::DeliveryAttempts {
                limit: self.bounds.delivery_attempts_per_call,
            });
        }
        self.stats.delivery_attempts += 1;
        if body.len() > self.bounds.body_bytes {
            return self.stop(HostStop::BodyBytes {
                limit: self.bounds.body_bytes,
                size: body.len(),
            });
        }
        if key.len() > self.bounds.key_bytes {
            return self.stop(HostStop::KeyBytes {
                limit: self.bounds.key_bytes,
                size: key.len(),
            });
        }
        self.lift_ids("a delivery target", [target])?;
        self.lift_ids(
            "a message id",
            std::iter::once(ids.message_id.as_str()).chain(ids.in_reply_to.as_deref()),
        )?;
        self.lift(body.len().saturating_add(key.len()))?;
        let admitted = key.is_empty()
            || (self.keys.lock())
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .admits(key, target, mode, body);
        if !admitted {
            let key = key.to_string();
            return self.stop(HostStop::KeyReused { key });
        }
        let answer = (self.harness).deliver(request);
        match &answer {
            // Delivered before, under the same key: nothing new to record.
            Ok(delivered) if delivered.repeat => self.stats.repeats += 1,
            Ok(delivered) => {
                self.stats.deliveries += 1;
                if delivered.woke {
                    self.stats.wakes += 1;
                }
                self.deliveries.push(Delivery {
                    target: target.to_string(),
                    mode,
                    body: body.to_string(),
                    woke: delivered.woke,
                    state: delivered.state,
                    key: key.to_string(),
                });
            }
            Err(_) => {}
        }
        Ok(answer)
    }
}
