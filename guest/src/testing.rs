//! An in-memory host for the core's unit tests: records every call it answers, so a
//! test can say which session was touched, how, and in what order. Its controller
//! follows host-shim's in-memory semantics (`host-shim/src/corpus.rs`): an accepted
//! delivery makes the target live and appends the body as its newest user message.

use crate::host::*;

#[derive(Clone, Debug)]
pub struct FakeSession {
    pub header: SessionHeader,
    pub title: Option<String>,
    pub surface: ModelSurface,
    /// The controller refuses deliveries with this reason.
    pub reject: Option<String>,
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
        },
        title: None,
        surface: ModelSurface::default(),
        reject: None,
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
    pub fn reject(mut self, reason: &str) -> Self {
        self.reject = Some(reason.to_string());
        self
    }
    pub fn captured_through(mut self, seq: u64) -> Self {
        self.surface.captured_through_seq = seq;
        self
    }
    /// Adds a message with the given parts.
    pub fn message(mut self, seq: u64, role: Role, source: &str, parts: Vec<ContentPart>) -> Self {
        self.surface.messages.push(SurfaceMessage {
            seq,
            role,
            source: source.to_string(),
            replaced: false,
            parts,
        });
        self
    }
    /// Adds a message with one text part.
    pub fn text(self, seq: u64, role: Role, source: &str, text: &str) -> Self {
        self.message(seq, role, source, vec![ContentPart::Text(text.to_string())])
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
    fn list_sessions(&mut self) -> Vec<SessionHeader> {
        self.calls.push("list-sessions".to_string());
        self.sessions.iter().map(|s| s.header.clone()).collect()
    }

    fn get_session(&mut self, id: &str) -> Option<SessionHeader> {
        self.calls.push(format!("get-session {id}"));
        self.find(id).map(|s| s.header.clone())
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

    fn get_surface(&mut self, id: &str) -> Option<ModelSurface> {
        self.calls.push(format!("get-surface {id}"));
        self.find(id).map(|s| s.surface.clone())
    }
}

impl Inbox for FakeHost {
    fn deliver(
        &mut self,
        target: &str,
        body: &str,
        mode: DeliveryMode,
        may_wake: bool,
    ) -> Result<Delivered, DeliveryRefusal> {
        self.calls.push(format!("deliver {target}"));
        let Some(index) = self.sessions.iter().position(|s| s.header.id == target) else {
            return Err(DeliveryRefusal::NotFound);
        };
        let session = &mut self.sessions[index];
        if let Some(reason) = &session.reject {
            return Err(DeliveryRefusal::Rejected(reason.clone()));
        }
        let woke = !session.header.live;
        if woke && !may_wake {
            return Err(DeliveryRefusal::WouldNeedWake);
        }
        session.header.live = true;
        let surface = &mut session.surface;
        let highest = surface.messages.iter().map(|m| m.seq).max().unwrap_or(0);
        let seq = highest.max(surface.captured_through_seq).saturating_add(1);
        surface.messages.push(SurfaceMessage {
            seq,
            role: Role::User,
            source: "user".to_string(),
            replaced: false,
            parts: vec![ContentPart::Text(body.to_string())],
        });
        surface.captured_through_seq = seq;
        self.deliveries.push(Delivery {
            target: target.to_string(),
            body: body.to_string(),
            mode,
            may_wake,
            woke,
        });
        Ok(Delivered { woke })
    }
}
