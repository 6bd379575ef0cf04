//! An in-memory host for the core's unit tests: records every call it answers, so a
//! test can say which session was touched, how, and in what order. Its controller
//! follows host-shim's in-memory semantics (`host-shim/src/corpus.rs`): an accepted
//! delivery makes the target live and, handed over (the default), appends the body as
//! its newest user message; a session set to keep deliveries waiting keeps them in
//! its inbox; a session whose person holds inbound keeps them held, one that refuses
//! it refuses them. `inbox-status` answers the scripted counts; `send-history` counts
//! the deliveries it took, each at the host's clock (`now_ms`) when it took it.

use crate::host::*;
use std::collections::HashMap;

/// One part of a fake message: the host joins the text parts; the other kinds never
/// cross the contract.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Part {
    Text(String),
    Reasoning,
    ToolCall,
    ToolOutput,
}

/// One message as the fake host holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FakeMessage {
    pub seq: u64,
    pub role: Role,
    pub source: String,
    pub replaced: bool,
    /// The host says the harness injected it.
    pub injected: bool,
    pub parts: Vec<Part>,
    /// The tool calls it made (`get-actions`).
    pub actions: Vec<ToolAction>,
}

impl FakeMessage {
    /// The text parts joined by a line feed; `None` without a text part.
    pub fn text(&self) -> Option<String> {
        let mut texts = self.parts.iter().filter_map(|part| match part {
            Part::Text(text) => Some(text.as_str()),
            _ => None,
        });
        let mut joined = texts.next()?.to_string();
        for text in texts {
            joined.push('\n');
            joined.push_str(text);
        }
        Some(joined)
    }
}

/// An index over whole headers, in their order: how an in-memory host builds one.
pub fn index_of<'a>(headers: impl IntoIterator<Item = &'a SessionHeader>) -> SessionIndex {
    let mut index = SessionIndex::default();
    for header in headers {
        index.ids.push_str(&header.id);
        index.entries.push(SessionEntry {
            id_len: u32::try_from(header.id.len()).unwrap_or(u32::MAX),
            created_at_ms: header.created_at_ms,
            live: header.live,
            subagent: header.is_subagent(),
        });
    }
    index
}

/// The first `chars` chars of `text` (all of it when shorter).
fn lead(text: &str, chars: u32) -> &str {
    match text.char_indices().nth(chars as usize) {
        Some((end, _)) => &text[..end],
        None => text,
    }
}

/// Adds one message, given whole, to a surface index: how an in-memory host builds one.
pub fn push_message(index: &mut SurfaceIndex, message: &FakeMessage, lead_chars: u32) {
    let text = message.text();
    let text = text.as_deref().unwrap_or("");
    let source_lead = lead(&message.source, lead_chars);
    let text_lead = lead(text, lead_chars);
    index.source_leads.push_str(source_lead);
    index.text_leads.push_str(text_lead);
    index.messages.push(MessageEntry {
        seq: message.seq,
        role: message.role,
        replaced: message.replaced,
        injected: message.injected,
        source_lead_len: source_lead.len() as u32,
        text_lead_len: text_lead.len() as u32,
        text_chars: u32::try_from(text.chars().count()).unwrap_or(u32::MAX),
    });
}

/// A fake session's surface.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FakeSurface {
    pub messages: Vec<FakeMessage>,
    pub captured_through_seq: u64,
}

#[derive(Clone, Debug)]
pub struct FakeSession {
    pub header: SessionHeader,
    pub title: Option<String>,
    pub surface: FakeSurface,
    /// The controller refuses deliveries with this reason.
    pub reject: Option<String>,
    /// The inbox cannot tell whether it stored a delivery, for this reason (nothing
    /// is stored).
    pub undecided: Option<String>,
    /// Where an accepted delivery is now: handed over (appended to the surface) or
    /// waiting (kept out of it).
    pub delivery_state: DeliveryState,
    /// Scripted inbox counts per sender.
    pub inbox: Vec<(String, InboxCount)>,
}

pub fn session(id: &str, created_at_ms: i64) -> FakeSession {
    FakeSession {
        header: SessionHeader {
            id: id.to_string(),
            created_at_ms,
            live: false,
            parent_id: None,
            origin: "user".to_string(),
            cwd: None,
            preset: None,
            inbound: Inbound::Accept,
            machine: None,
        },
        title: None,
        surface: FakeSurface::default(),
        reject: None,
        undecided: None,
        delivery_state: DeliveryState::HandedOver,
        inbox: Vec::new(),
    }
}

impl FakeSession {
    pub fn title(mut self, title: &str) -> Self {
        self.title = Some(title.to_string());
        self
    }
    pub fn cwd(mut self, cwd: &str) -> Self {
        self.header.cwd = Some(cwd.to_string());
        self
    }
    pub fn preset(mut self, preset: &str) -> Self {
        self.header.preset = Some(preset.to_string());
        self
    }
    pub fn live(mut self, live: bool) -> Self {
        self.header.live = live;
        self
    }
    pub fn parent(mut self, parent: &str) -> Self {
        self.header.parent_id = Some(parent.to_string());
        self
    }
    pub fn origin(mut self, origin: &str) -> Self {
        self.header.origin = origin.to_string();
        self
    }
    pub fn inbound(mut self, inbound: Inbound) -> Self {
        self.header.inbound = inbound;
        self
    }
    pub fn machine(mut self, machine: &str) -> Self {
        self.header.machine = Some(machine.to_string());
        self
    }
    pub fn reject(mut self, reason: &str) -> Self {
        self.reject = Some(reason.to_string());
        self
    }
    /// Its inbox answers every delivery `undecided` with `reason`.
    pub fn undecided(mut self, reason: &str) -> Self {
        self.undecided = Some(reason.to_string());
        self
    }
    /// Deliveries to it are accepted and kept waiting.
    pub fn keeps_waiting(mut self) -> Self {
        self.delivery_state = DeliveryState::Waiting;
        self
    }
    /// When cold, a delivery starts its wake command (`wake-started`, not `woke`) and
    /// the message waits; when live, it waits.
    pub fn wakes_by_command(mut self) -> Self {
        self.delivery_state = DeliveryState::WakeStarted;
        self
    }
    /// Scripted inbox counts of `sender`'s messages to it.
    pub fn inbox_from(mut self, sender: &str, waiting: u32, handed_over: u32) -> Self {
        let count = InboxCount {
            waiting,
            handed_over,
        };
        self.inbox.push((sender.to_string(), count));
        self
    }
    pub fn captured_through(mut self, seq: u64) -> Self {
        self.surface.captured_through_seq = seq;
        self
    }
    /// Adds a message with the given parts.
    pub fn message(mut self, seq: u64, role: Role, source: &str, parts: Vec<Part>) -> Self {
        self.surface.messages.push(FakeMessage {
            seq,
            role,
            source: source.to_string(),
            replaced: false,
            injected: false,
            parts,
            actions: Vec::new(),
        });
        self
    }
    /// Adds a tool call to the last added message.
    pub fn action(mut self, name: &str, input: &str, status: ActionStatus) -> Self {
        if let Some(last) = self.surface.messages.last_mut() {
            last.actions.push(ToolAction {
                name: name.to_string(),
                input: input.to_string(),
                status,
            });
        }
        self
    }
    /// Adds a message with one text part.
    pub fn text(self, seq: u64, role: Role, source: &str, text: &str) -> Self {
        self.message(seq, role, source, vec![Part::Text(text.to_string())])
    }
    /// Marks the last added message as injected by the harness (the host says so).
    pub fn injected(mut self) -> Self {
        if let Some(last) = self.surface.messages.last_mut() {
            last.injected = true;
        }
        self
    }
    /// Marks the last added message as replaced.
    pub fn replaced(mut self) -> Self {
        if let Some(last) = self.surface.messages.last_mut() {
            last.replaced = true;
        }
        self
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Delivery {
    pub target: String,
    pub body: String,
    pub mode: DeliveryMode,
    pub may_wake: bool,
    pub woke: bool,
    pub key: String,
    pub ids: MessageIds,
    pub state: DeliveryState,
    /// The host's clock when it took the delivery.
    pub at_ms: i64,
    /// The sender (the caller of the call that delivered it).
    pub sender: String,
}

#[derive(Default)]
pub struct FakeHost {
    pub sessions: Vec<FakeSession>,
    pub title_batches: Vec<Vec<String>>,
    /// Answer title batches with only this many entries (a misbehaving host).
    pub truncate_title_answers: Option<usize>,
    pub deliveries: Vec<Delivery>,
    /// Every call in order, e.g. `get-session a`, `deliver a`.
    pub calls: Vec<String>,
    /// The controller's answer per delivery key, so a repeated key delivers nothing.
    pub answered: HashMap<String, Result<Delivered, DeliveryRefusal>>,
    /// Headers say every session is live, whatever the controller finds at delivery
    /// (a session that went cold between the two).
    pub headers_say_live: bool,
    /// The index's first id length is one byte too long (a host that breaks the
    /// contract).
    pub garble_index: bool,
    /// The host's clock, in ms since the epoch.
    pub now_ms: i64,
    /// Who calls now: the sender deliveries are counted for (empty: every delivery
    /// counts as the sender's asked about).
    pub caller: String,
    /// The claim set the host keeps, its revision, and every change written.
    pub claims: Vec<Claim>,
    pub claims_revision: u64,
    pub claim_changes: Vec<ClaimChange>,
    /// The claims store answers this instead (a store that cannot be reached).
    pub claims_unavailable: Option<String>,
    /// Writes answered `stale` before one is taken (others changing the set).
    pub stale_writes: u32,
}

impl Claims for FakeHost {
    fn read_claims(&mut self) -> Result<ClaimSet, String> {
        self.calls.push("read-claims".to_string());
        if let Some(why) = &self.claims_unavailable {
            return Err(why.clone());
        }
        Ok(ClaimSet {
            claims: self.claims.clone(),
            revision: self.claims_revision,
            now_ms: self.now_ms,
        })
    }

    fn write_claims(
        &mut self,
        revision: u64,
        claims: &[Claim],
        changes: &[ClaimChange],
    ) -> Result<u64, WriteFailure> {
        self.calls.push("write-claims".to_string());
        if let Some(why) = &self.claims_unavailable {
            return Err(WriteFailure::Unavailable(why.clone()));
        }
        if self.stale_writes > 0 {
            self.stale_writes -= 1;
            self.claims_revision += 1;
            return Err(WriteFailure::Stale);
        }
        if revision != self.claims_revision {
            return Err(WriteFailure::Stale);
        }
        self.claims = claims.to_vec();
        self.claims_revision += 1;
        self.claim_changes.extend_from_slice(changes);
        Ok(self.claims_revision)
    }
}

impl FakeHost {
    pub fn add(&mut self, session: FakeSession) {
        self.sessions.push(session);
    }

    fn find(&self, id: &str) -> Option<&FakeSession> {
        self.sessions.iter().find(|s| s.header.id == id)
    }

    pub fn is_live(&self, id: &str) -> bool {
        self.find(id).is_some_and(|s| s.header.live)
    }
}

impl SessionQuery for FakeHost {
    fn list_sessions(&mut self) -> SessionIndex {
        self.calls.push("list-sessions".to_string());
        let mut index = index_of(self.sessions.iter().map(|s| &s.header));
        if let (true, Some(first)) = (self.garble_index, index.entries.first_mut()) {
            first.id_len += 1;
        }
        index
    }

    fn get_session(&mut self, id: &str) -> Option<SessionHeader> {
        self.calls.push(format!("get-session {id}"));
        let mut header = self.find(id)?.header.clone();
        header.live |= self.headers_say_live;
        Some(header)
    }

    fn get_sessions(&mut self, ids: &[String]) -> Vec<Option<SessionHeader>> {
        self.calls.push(format!("get-sessions {}", ids.join(",")));
        ids.iter()
            .map(|id| self.find(id).map(|s| s.header.clone()))
            .collect()
    }

    fn title_snapshots(&mut self, ids: &[String]) -> Vec<Option<String>> {
        self.calls
            .push(format!("title-snapshots {}", ids.join(",")));
        self.title_batches.push(ids.to_vec());
        let mut titles: Vec<Option<String>> = ids
            .iter()
            .map(|id| self.find(id).and_then(|s| s.title.clone()))
            .collect();
        if let Some(keep) = self.truncate_title_answers {
            titles.truncate(keep);
        }
        titles
    }

    fn get_surface(&mut self, id: &str, lead_chars: u32) -> Option<SurfaceIndex> {
        self.calls.push(format!("get-surface {id}"));
        let surface = &self.find(id)?.surface;
        let mut index = SurfaceIndex {
            captured_through_seq: surface.captured_through_seq,
            ..SurfaceIndex::default()
        };
        for message in &surface.messages {
            push_message(&mut index, message, lead_chars);
        }
        Some(index)
    }

    fn get_messages(&mut self, id: &str, seqs: &[u64]) -> Vec<Option<MessageContent>> {
        self.calls.push(format!("get-messages {id} {seqs:?}"));
        let surface = self.find(id).map(|s| &s.surface);
        seqs.iter()
            .map(|seq| {
                let message = surface?.messages.iter().find(|m| m.seq == *seq)?;
                Some(MessageContent {
                    source: message.source.clone(),
                    text: message.text().unwrap_or_default(),
                    injected: message.injected,
                })
            })
            .collect()
    }

    fn action_seqs(&mut self, id: &str) -> Vec<u64> {
        self.calls.push(format!("action-seqs {id}"));
        (self.find(id).into_iter())
            .flat_map(|s| &s.surface.messages)
            .filter(|m| !m.actions.is_empty())
            .map(|m| m.seq)
            .collect()
    }

    fn get_actions(&mut self, id: &str, seqs: &[u64]) -> Vec<Vec<ToolAction>> {
        self.calls.push(format!("get-actions {id} {seqs:?}"));
        let surface = self.find(id).map(|s| &s.surface);
        seqs.iter()
            .map(|seq| {
                let message = surface.and_then(|s| s.messages.iter().find(|m| m.seq == *seq));
                message.map(|m| m.actions.clone()).unwrap_or_default()
            })
            .collect()
    }

    fn send_history(
        &mut self,
        sender: &str,
        target: &str,
        window_minutes: u32,
        limit: u32,
        key: &str,
    ) -> SendCounts {
        self.calls.push(format!("send-history {sender} {target}"));
        let since = self.now_ms - i64::from(window_minutes) * 60_000;
        let mine: Vec<&Delivery> = (self.deliveries.iter().rev())
            .filter(|d| (d.sender.is_empty() || d.sender == sender) && d.at_ms > since)
            .collect();
        let to_target: Vec<i64> = (mine.iter())
            .filter(|d| d.target == target)
            .map(|d| d.at_ms)
            .collect();
        let to_any: Vec<i64> = mine.iter().map(|d| d.at_ms).collect();
        SendCounts {
            now_ms: self.now_ms,
            to_target: to_target.len() as u32,
            to_any: to_any.len() as u32,
            to_target_times: to_target.into_iter().take(limit as usize).collect(),
            to_any_times: to_any.into_iter().take(limit as usize).collect(),
            key_accepted: !key.is_empty() && self.answered.get(key).is_some_and(Result::is_ok),
        }
    }

    fn inbox_status(&mut self, target: &str, sender: &str) -> InboxCount {
        self.calls.push(format!("inbox-status {target} {sender}"));
        // Both zero when either session is unknown (the WIT).
        if self.find(sender).is_none() {
            return InboxCount::default();
        }
        (self.find(target).into_iter())
            .flat_map(|s| &s.inbox)
            .find(|(from, _)| from == sender)
            .map(|(_, count)| *count)
            .unwrap_or_default()
    }
}

impl Inbox for FakeHost {
    fn deliver(
        &mut self,
        target: &str,
        body: &str,
        mode: DeliveryMode,
        may_wake: bool,
        key: &str,
        ids: &MessageIds,
    ) -> Result<Delivered, DeliveryRefusal> {
        self.calls.push(format!("deliver {target}"));
        if let Some(first) = self.answered.get(key) {
            return first.clone().map(|delivered| Delivered {
                repeat: true,
                ..delivered
            });
        }
        let answer = self.accept(target, body, mode, may_wake, key, ids);
        if !key.is_empty() {
            self.answered.insert(key.to_string(), answer.clone());
        }
        answer
    }
}

impl FakeHost {
    fn accept(
        &mut self,
        target: &str,
        body: &str,
        mode: DeliveryMode,
        may_wake: bool,
        key: &str,
        ids: &MessageIds,
    ) -> Result<Delivered, DeliveryRefusal> {
        let Some(index) = self.sessions.iter().position(|s| s.header.id == target) else {
            return Err(DeliveryRefusal::NotFound);
        };
        let session = &mut self.sessions[index];
        if let Some(reason) = &session.reject {
            return Err(DeliveryRefusal::Rejected(reason.clone()));
        }
        if let Some(reason) = &session.undecided {
            return Err(DeliveryRefusal::Undecided(reason.clone()));
        }
        if session.header.inbound == Inbound::Refuse {
            return Err(DeliveryRefusal::RefusedByTarget);
        }
        let woke = !session.header.live;
        if woke && !may_wake {
            return Err(DeliveryRefusal::WouldNeedWake);
        }
        let state = match (session.header.inbound, session.delivery_state) {
            (Inbound::Hold, _) => DeliveryState::Held,
            (_, DeliveryState::WakeStarted) if !woke => DeliveryState::Waiting,
            (_, state) => state,
        };
        let delivered = Delivered {
            woke: woke && state != DeliveryState::WakeStarted,
            repeat: false,
            state,
            message_id: ids.message_id.clone(),
        };
        let delivery = Delivery {
            target: target.to_string(),
            body: body.to_string(),
            mode,
            may_wake,
            woke,
            key: key.to_string(),
            ids: ids.clone(),
            state,
            at_ms: self.now_ms,
            sender: self.caller.clone(),
        };
        if state != DeliveryState::HandedOver {
            session.header.live = true;
            self.deliveries.push(delivery);
            return Ok(delivered);
        }
        let surface = &mut session.surface;
        let highest = surface.messages.iter().map(|m| m.seq).max().unwrap_or(0);
        let Some(seq) = highest.max(surface.captured_through_seq).checked_add(1) else {
            return Err(DeliveryRefusal::Rejected(
                "the session is full: its last message already has the largest seq".to_string(),
            ));
        };
        session.header.live = true;
        surface.messages.push(FakeMessage {
            seq,
            role: Role::User,
            source: "user".to_string(),
            replaced: false,
            injected: false,
            parts: vec![Part::Text(body.to_string())],
            actions: Vec::new(),
        });
        surface.captured_through_seq = seq;
        self.deliveries.push(delivery);
        Ok(delivered)
    }
}
