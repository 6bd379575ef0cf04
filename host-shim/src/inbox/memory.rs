//! An inbox in one process's memory: for the in-memory corpus, for tests, and for an
//! embedder whose harness hands messages over in the same process. Nothing outlives
//! the process, and nothing is shared with another one.
//!
//! Bounded: a handed-over message is kept for [`KEPT_HANDED_OVER`] (so a retried
//! delivery is still a repeat, and sending caps count it that long), then forgotten;
//! waiting messages are kept until they are handed over.

use super::{
    Handle, InboxBackend, InboxContents, Located, Put, Sent, SpooledMessage, Waiting, now_ns,
};
use super::{ReadShown, Settled};
use crate::contract::latest::{DeliveryState, InboundPolicy, InboxCount};
use anyhow::{Result, bail};
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

/// How long a handed-over message is remembered.
pub const KEPT_HANDED_OVER: Duration = Duration::from_secs(600);

/// The in-memory backend.
#[derive(Debug, Default)]
pub struct MemoryInbox {
    sessions: Mutex<Sessions>,
}

#[derive(Debug, Default)]
struct Sessions {
    by_session: HashMap<String, Vec<Entry>>,
    next_place: u64,
    /// What each session's person lets in, when they said.
    inbound: HashMap<String, InboundPolicy>,
    /// The claim set and its revision.
    claims: super::claims::ClaimsAt,
}

#[derive(Debug)]
struct Entry {
    place: u64,
    message: SpooledMessage,
    at: Place,
    /// When it was handed over (ns since the epoch).
    handed_at_ns: u128,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    Waiting,
    Claimed,
    /// Offered at this time (ns since the epoch), not yet seen in the target's record.
    Offered(u128),
    HandedOver,
}

impl Entry {
    fn located(&self) -> Located {
        Located {
            message: self.message.clone(),
            state: match self.at {
                Place::HandedOver => DeliveryState::HandedOver,
                Place::Waiting | Place::Claimed | Place::Offered(_) => DeliveryState::Waiting,
            },
        }
    }
}

impl MemoryInbox {
    pub fn new() -> MemoryInbox {
        MemoryInbox::default()
    }

    fn sessions(&self) -> MutexGuard<'_, Sessions> {
        // A hand-over that panicked gave its claims back as it unwound.
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Moves the entries at `places` of `session` from one place to another.
    fn move_all(&self, session: &str, places: &[u64], from: Place, to: Place) {
        let mut sessions = self.sessions();
        let now = now_ns();
        for entry in (sessions.by_session.get_mut(session).into_iter()).flatten() {
            if entry.at == from && places.contains(&entry.place) {
                entry.at = to;
                entry.handed_at_ns = now;
            }
        }
    }
}

impl Sessions {
    fn of(&self, session: &str) -> impl Iterator<Item = &Entry> {
        self.by_session.get(session).into_iter().flatten()
    }

    /// Forgets handed-over messages older than [`KEPT_HANDED_OVER`].
    fn forget_old(&mut self) {
        let since = now_ns().saturating_sub(KEPT_HANDED_OVER.as_nanos());
        for entries in self.by_session.values_mut() {
            entries.retain(|e| e.at != Place::HandedOver || e.handed_at_ns >= since);
        }
        self.by_session.retain(|_, entries| !entries.is_empty());
    }
}

/// Gives claims back when a hand-over's answer fails or unwinds.
struct Claims<'a> {
    inbox: &'a MemoryInbox,
    session: &'a str,
    places: Vec<u64>,
    kept: bool,
}

impl Drop for Claims<'_> {
    fn drop(&mut self) {
        if !self.kept {
            (self.inbox).move_all(self.session, &self.places, Place::Claimed, Place::Waiting);
        }
    }
}

impl MemoryInbox {
    /// Claims each of `picked` still waiting and calls `answer` with them, the claims
    /// given back when it fails or unwinds: the places claimed and their messages.
    fn claim_and_answer(
        &self,
        session: &str,
        picked: &[Waiting],
        answer: &mut dyn FnMut(&[SpooledMessage]) -> Result<()>,
    ) -> Result<(Vec<u64>, Vec<SpooledMessage>)> {
        let mut places = Vec::new();
        let mut messages = Vec::new();
        {
            let mut sessions = self.sessions();
            let mut entries = sessions.by_session.get_mut(session);
            for waiting in picked {
                let Ok(place) = waiting.handle.as_str().parse::<u64>() else {
                    bail!("{:?} is no message of this inbox", waiting.handle);
                };
                // One another hand-over claimed first is left out.
                let entry = (entries.iter_mut().flat_map(|entries| entries.iter_mut()))
                    .find(|e| e.place == place && e.at == Place::Waiting);
                if let Some(entry) = entry {
                    entry.at = Place::Claimed;
                    places.push(place);
                    messages.push(entry.message.clone());
                }
            }
        }
        if places.is_empty() {
            return Ok((places, messages));
        }
        // The answer runs without the lock: it may take time (a socket, a daemon).
        let mut claims = Claims {
            inbox: self,
            session,
            places,
            kept: false,
        };
        answer(&messages)?;
        claims.kept = true;
        Ok((std::mem::take(&mut claims.places), messages))
    }
}

impl InboxBackend for MemoryInbox {
    fn find(&self, session: &str, key: &str) -> Result<Option<Located>> {
        if key.is_empty() {
            return Ok(None);
        }
        let sessions = self.sessions();
        let found = sessions.of(session).find(|e| e.message.key == key);
        Ok(found.map(Entry::located))
    }

    fn find_same_words(&self, ask: &super::SameWords) -> Result<Option<Located>> {
        let sessions = self.sessions();
        let found = sessions.of(ask.session).find(|e| ask.is(&e.message));
        Ok(found.map(Entry::located))
    }

    fn count_from(&self, session: &str, sender: &str) -> Result<InboxCount> {
        let mut count = InboxCount::NONE;
        if sender.is_empty() {
            return Ok(count);
        }
        let sessions = self.sessions();
        for entry in sessions.of(session).filter(|e| e.message.sender == sender) {
            match entry.at {
                Place::HandedOver => count.handed_over += 1,
                Place::Waiting | Place::Claimed | Place::Offered(_) => count.waiting += 1,
            }
        }
        Ok(count)
    }

    fn put_unseen(&self, message: &SpooledMessage) -> Result<Put> {
        let mut sessions = self.sessions();
        sessions.forget_old();
        if !message.key.is_empty()
            && let Some(first) =
                (sessions.of(&message.target)).find(|e| e.message.key == message.key)
        {
            return Ok(Put::Repeat(first.message.clone()));
        }
        let place = sessions.next_place;
        sessions.next_place += 1;
        (sessions.by_session.entry(message.target.clone()))
            .or_default()
            .push(Entry {
                place,
                message: message.clone(),
                at: Place::Waiting,
                handed_at_ns: 0,
            });
        Ok(Put::New(Handle::new(place.to_string())))
    }

    fn waiting(&self, session: &str) -> Result<InboxContents> {
        let sessions = self.sessions();
        let mut messages: Vec<(u64, Waiting)> = (sessions.of(session))
            .filter(|e| e.at == Place::Waiting)
            .map(|e| {
                let waiting = Waiting {
                    handle: Handle::new(e.place.to_string()),
                    message: e.message.clone(),
                };
                (e.place, waiting)
            })
            .collect();
        messages.sort_by_key(|(place, w)| (w.message.accepted_at_ns, *place));
        Ok(InboxContents {
            messages: messages.into_iter().map(|(_, w)| w).collect(),
            unreadable: Vec::new(),
        })
    }

    fn hand(&self, handing: super::Handing) -> Result<Vec<SpooledMessage>> {
        let session = handing.session;
        let (places, messages) = self.claim_and_answer(session, &handing.picked, handing.answer)?;
        if handing.handed == super::Handed::Over {
            self.move_all(session, &places, Place::Claimed, Place::HandedOver);
            return Ok(messages);
        }
        let mut sessions = self.sessions();
        let now = now_ns();
        for entry in (sessions.by_session.get_mut(session).into_iter()).flatten() {
            if entry.at == Place::Claimed && places.contains(&entry.place) {
                // No record can show a message without an id: handed over now.
                entry.at = match entry.message.message_id.is_empty() {
                    true => Place::HandedOver,
                    false => Place::Offered(now),
                };
                entry.handed_at_ns = now;
            }
        }
        Ok(messages)
    }

    /// A claim here belongs to a hand-over running in this process (one that failed
    /// gave it back): only offers are settled.
    fn settle(&self, session: &str, expire_after: Duration, shown: ReadShown) -> Result<Settled> {
        let offered = |at: &Place| matches!(at, Place::Offered(_));
        let ids: Vec<String> = (self.sessions().of(session))
            .filter(|e| offered(&e.at))
            .map(|e| e.message.message_id.clone())
            .collect();
        if ids.is_empty() {
            return Ok(super::Settled::default());
        }
        // Read without the lock: the record may take time.
        let shown = shown(&ids)?;
        let (mut sessions, now) = (self.sessions(), now_ns());
        let mut settled = super::Settled::default();
        for entry in (sessions.by_session.get_mut(session).into_iter()).flatten() {
            let Place::Offered(at) = entry.at else {
                continue;
            };
            if shown.contains(&entry.message.message_id) {
                entry.at = Place::HandedOver;
                entry.handed_at_ns = now;
                settled.handed_over.push(entry.message.clone());
            } else if now.saturating_sub(at) >= expire_after.as_nanos() {
                entry.at = Place::Waiting;
                settled.waiting_again.push(entry.message.clone());
            }
        }
        Ok(settled)
    }

    fn sent_since(&self, sender: &str, since_ns: u128) -> Result<Vec<Sent>> {
        if sender.is_empty() {
            return Ok(Vec::new());
        }
        let sessions = self.sessions();
        Ok((sessions.by_session.values().flatten())
            .filter(|e| e.message.sender == sender && e.message.accepted_at_ns >= since_ns)
            .map(|e| Sent {
                target: e.message.target.clone(),
                accepted_at_ns: e.message.accepted_at_ns,
                key: e.message.key.clone(),
            })
            .collect())
    }

    fn inbound(&self, session: &str) -> Result<InboundPolicy> {
        let sessions = self.sessions();
        Ok(sessions
            .inbound
            .get(session)
            .copied()
            .unwrap_or(InboundPolicy::Accept))
    }

    fn set_inbound(&self, session: &str, policy: InboundPolicy) -> Result<()> {
        let mut sessions = self.sessions();
        match policy {
            InboundPolicy::Accept => sessions.inbound.remove(session),
            _ => sessions.inbound.insert(session.to_string(), policy),
        };
        Ok(())
    }

    fn read_claims(&self) -> Result<super::claims::ClaimsAt> {
        Ok(self.sessions().claims.clone())
    }

    fn write_claims(
        &self,
        revision: u64,
        claims: &[crate::contract::latest::Claim],
        _changes: &[crate::contract::latest::ClaimChange],
    ) -> Result<super::claims::ClaimsWritten> {
        let mut sessions = self.sessions();
        if sessions.claims.revision != revision {
            return Ok(super::claims::ClaimsWritten::Stale);
        }
        sessions.claims = super::claims::ClaimsAt {
            claims: claims.to_vec(),
            revision: revision + 1,
        };
        Ok(super::claims::ClaimsWritten::Written(revision + 1))
    }
}
