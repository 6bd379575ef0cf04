//! Any number of harnesses' sessions as one: the sessions of every store in one listing,
//! and every other question and each delivery answered by the store that holds the
//! session. `host-shim --claude-projects DIR --codex-home DIR` serves Claude Code's
//! sessions and Codex's threads together this way, so a session of either can read and
//! message one of the other; with one inbox, each hands over from it by its own
//! harness's hook. A new harness is one more [`Store`] in the list.
//!
//! A model tells the harnesses apart in a listing by the preset (Claude Code's models
//! are Anthropic's, a Codex thread shows its own) and in a read by the source label
//! (`model:anthropic/…` against `model:<provider>/…`).

pub mod corpus;
pub mod logfile;
pub mod plugin_session;
#[cfg(feature = "sqlite")]
pub mod sqlite;
pub mod surface;

use crate::contract::latest::{
    Delivered, DeliveryRefusal, InboxCount, MessageContent, SendCounts, SessionHeader,
    SessionIndex, SurfaceIndex, ToolAction,
};
use crate::harness::{HistoryAsk, Inbox, SessionQuery};
use crate::inbox::SharedInbox;
use crate::inbox::delivery::DeliveryRequest;
use std::any::Any;
use std::collections::HashMap;

/// Where an MCP client names the calling session and the call, as one harness's client
/// sends them: data an MCP server reads, never a branch on the harness. Each harness's
/// module declares its own (`claude::MCP_CLIENT`, `codex::MCP_CLIENT`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct McpClient {
    /// Who sends these, for a person told how to name the caller (`Claude Code`).
    pub who: &'static str,
    /// The environment variable the client sets for the servers it starts, naming the
    /// session the server serves (Claude Code: `CLAUDE_CODE_SESSION_ID`).
    pub caller_env: Option<&'static str>,
    /// The key of each `tools/call`'s `_meta` naming the calling session (Codex:
    /// `threadId`).
    pub caller_meta: Option<&'static str>,
    /// The key of each `tools/call`'s `_meta` naming the call, kept across the client's
    /// retries (Claude Code: `claudecode/toolUseId`; Codex: `callId`).
    pub call_id_meta: Option<&'static str>,
    /// Where the client carries a hook's stamp of the calling session and the call
    /// ([`crate::call_stamp`]), for a client whose calls name neither: while its
    /// `caller_env` is set, every call must carry one.
    pub stamps: Option<StampedCalls>,
}

/// How a client's calls carry their stamp (see [`McpClient::stamps`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StampedCalls {
    /// Where in a `tools/call` the stamp is.
    pub carrier: StampCarrier,
    /// The environment variable the client sets for the servers it starts: while it
    /// is set, the server runs under this client and every call must carry a stamp
    /// (Copilot CLI: `COPILOT_AGENT_SESSION_ID`; Gemini CLI: `GEMINI_CLI`).
    pub under_env: &'static str,
    /// The command that installs the hook that stamps (`host-shim setup copilot`).
    pub set_up_by: &'static str,
}

/// Where a stamp rides in a `tools/call`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StampCarrier {
    /// Under this key of the request's `_meta`, which the model never sees (Copilot
    /// CLI's `preMcpToolCall` hook sets it).
    Meta(&'static str),
    /// As this argument, which the server takes out before the plugin sees the
    /// arguments (Gemini CLI's `BeforeTool` hook adds it; the hook refuses a call
    /// whose model wrote it).
    Argument(&'static str),
}

/// One harness's sessions as a list of stores serves them: both interfaces, and what
/// the host asks of a store besides.
pub trait Store: SessionQuery + Inbox + Send + Any {
    /// The harness's name (`corpus`, `claude-code`, `codex`).
    fn harness(&self) -> &'static str;

    /// Lines of the harness's logs the last listing could not read (damaged, or still
    /// being written), for `--stats`.
    fn skipped_lines(&self) -> u64 {
        0
    }
}

/// The sessions of every store as one harness. An id two stores hold is answered by the
/// first.
pub struct Harnesses {
    stores: Vec<Box<dyn Store>>,
    /// Which store holds each session seen so far (ids are never reused), so a question
    /// about one harness's session is not asked of another first: a store asked for an
    /// id it does not hold may look through its whole folder again.
    holders: HashMap<String, usize>,
    /// This machine's name, when the stores serve sessions of several machines.
    machine: Option<String>,
}

impl Harnesses {
    pub fn new(stores: Vec<Box<dyn Store>>) -> Harnesses {
        Harnesses {
            stores,
            holders: HashMap::new(),
            machine: None,
        }
    }

    /// The stores serve sessions of several machines (one of them a store of other
    /// machines' sessions): a header that names no machine is this one's, `name`.
    pub fn on_machine(mut self, name: &str) -> Harnesses {
        self.machine = Some(name.to_string());
        self
    }

    /// A header as the caller sees it: this machine named when it has a name.
    fn placed(&self, mut header: SessionHeader) -> SessionHeader {
        if let (None, Some(name)) = (&header.machine, &self.machine) {
            header.machine = Some(name.clone());
        }
        header
    }

    /// The stores, in the order they are asked.
    pub fn stores(&self) -> &[Box<dyn Store>] {
        &self.stores
    }

    /// The first store of type `S`, to reach what only that harness has.
    pub fn find_mut<S: Store>(&mut self) -> Option<&mut S> {
        (self.stores.iter_mut()).find_map(|store| (&mut **store as &mut dyn Any).downcast_mut())
    }

    /// Lines the stores could not read, all together.
    pub fn skipped_lines(&self) -> u64 {
        self.stores.iter().map(|store| store.skipped_lines()).sum()
    }

    /// The store that holds the session, asking each in turn only when not known yet.
    fn holder_of(&mut self, id: &str) -> Option<usize> {
        if let Some(&at) = self.holders.get(id) {
            return Some(at);
        }
        let at = (0..self.stores.len()).find(|&at| self.stores[at].get_session(id).is_some())?;
        self.holders.insert(id.to_string(), at);
        Some(at)
    }

    /// A batch: each id asked of the store known to hold it; an unknown one of each
    /// store in turn until one answers. Each store is asked at most once.
    fn batch<T>(
        &mut self,
        ids: &[String],
        ask: impl Fn(&mut dyn Store, &[String]) -> Vec<Option<T>>,
    ) -> Vec<Option<T>> {
        let mut answers: Vec<Option<T>> = std::iter::repeat_with(|| None).take(ids.len()).collect();
        let known: Vec<Option<usize>> =
            ids.iter().map(|id| self.holders.get(id).copied()).collect();
        for at in 0..self.stores.len() {
            let asked: Vec<usize> = (0..ids.len())
                .filter(|&i| match known[i] {
                    Some(holder) => holder == at,
                    None => answers[i].is_none(),
                })
                .collect();
            if asked.is_empty() {
                continue;
            }
            let given = ask(&mut *self.stores[at], &picked(ids, &asked));
            for (i, answer) in asked.into_iter().zip(given) {
                if answer.is_some() {
                    self.holders.entry(ids[i].clone()).or_insert(at);
                }
                answers[i] = answer;
            }
        }
        answers
    }
}

/// The ids at `at`, in that order.
fn picked(ids: &[String], at: &[usize]) -> Vec<String> {
    at.iter().map(|&i| ids[i].clone()).collect()
}

impl SessionQuery for Harnesses {
    fn begin_call(&mut self, caller: &str) {
        self.stores
            .iter_mut()
            .for_each(|store| store.begin_call(caller));
    }

    fn end_call(&mut self) {
        self.stores.iter_mut().for_each(|store| store.end_call());
    }

    fn list_sessions(&mut self) -> SessionIndex {
        let mut index = SessionIndex {
            ids: String::new(),
            entries: Vec::new(),
        };
        for at in 0..self.stores.len() {
            let more = self.stores[at].list_sessions();
            for id in ids_of(&more) {
                self.holders.entry(id).or_insert(at);
            }
            index.ids.push_str(&more.ids);
            index.entries.extend(more.entries);
        }
        index
    }

    fn get_session(&mut self, id: &str) -> Option<SessionHeader> {
        let at = self.holder_of(id)?;
        let header = self.stores[at].get_session(id)?;
        Some(self.placed(header))
    }

    fn get_sessions(&mut self, ids: &[String]) -> Vec<Option<SessionHeader>> {
        let headers = self.batch(ids, |store, ids| store.get_sessions(ids));
        (headers.into_iter())
            .map(|header| header.map(|header| self.placed(header)))
            .collect()
    }

    fn title_snapshots(&mut self, ids: &[String]) -> Vec<Option<String>> {
        self.batch(ids, |store, ids| store.title_snapshots(ids))
    }

    fn get_surface(&mut self, id: &str, lead_chars: u32) -> Option<SurfaceIndex> {
        let at = self.holder_of(id)?;
        self.stores[at].get_surface(id, lead_chars)
    }

    fn get_messages(&mut self, id: &str, seqs: &[u64]) -> Vec<Option<MessageContent>> {
        match self.holder_of(id) {
            Some(at) => self.stores[at].get_messages(id, seqs),
            None => vec![None; seqs.len()],
        }
    }

    fn inbox_status(&mut self, target: &str, sender: &str) -> InboxCount {
        // The sender may be another harness's session: the target's store counts what
        // the inbox holds from it.
        match self.holder_of(target) {
            Some(at) => self.stores[at].inbox_status(target, sender),
            None => InboxCount::NONE,
        }
    }

    fn action_seqs(&mut self, id: &str) -> Vec<u64> {
        match self.holder_of(id) {
            Some(at) => self.stores[at].action_seqs(id),
            None => Vec::new(),
        }
    }

    fn get_actions(&mut self, id: &str, seqs: &[u64]) -> Vec<Vec<ToolAction>> {
        match self.holder_of(id) {
            Some(at) => self.stores[at].get_actions(id, seqs),
            None => vec![Vec::new(); seqs.len()],
        }
    }

    fn send_history(&mut self, ask: &HistoryAsk) -> SendCounts {
        // The sender's sends to every harness's sessions are in the one inbox its own
        // store delivers to.
        let at = (self.holder_of(ask.sender))
            .or(self.holder_of(ask.target))
            .unwrap_or(0);
        match self.stores.get_mut(at) {
            Some(store) => store.send_history(ask),
            None => SendCounts::none_now(),
        }
    }

    fn unanswered(&mut self) -> Option<String> {
        self.stores.iter_mut().find_map(|store| store.unanswered())
    }
}

/// The ids of an index, in entry order.
pub fn ids_of(index: &SessionIndex) -> Vec<String> {
    let mut at = 0;
    let mut ids = Vec::with_capacity(index.entries.len());
    for entry in &index.entries {
        let end = at + entry.id_len as usize;
        if let Some(id) = index.ids.get(at..end) {
            ids.push(id.to_string());
        }
        at = end;
    }
    ids
}

impl Inbox for Harnesses {
    fn deliver(&mut self, request: &DeliveryRequest) -> Result<Delivered, DeliveryRefusal> {
        match self.holder_of(request.target) {
            Some(at) => self.stores[at].deliver(request),
            None => Err(DeliveryRefusal::NotFound),
        }
    }

    fn reply_inbox(&mut self) -> Option<SharedInbox> {
        self.stores.iter_mut().find_map(|store| store.reply_inbox())
    }

    // Every store of one command shares its inbox, and so its claims.
    fn claims_inbox(&mut self) -> Option<SharedInbox> {
        self.stores
            .iter_mut()
            .find_map(|store| store.claims_inbox())
    }

    fn arrived(&mut self, target: &str, handle: &str, may_wake: bool) -> Option<Delivered> {
        let at = self.holder_of(target)?;
        self.stores[at].arrived(target, handle, may_wake)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::latest::DeliveryMode;
    use crate::harnesses::corpus::{Corpus, CorpusHost, Session};
    use std::sync::Arc;

    fn host(ids: &[&str]) -> CorpusHost {
        let sessions = ids
            .iter()
            .enumerate()
            .map(|(i, id)| {
                let mut session = Session::new(id, i as i64);
                session.title = Some(format!("title of {id}"));
                session
            })
            .collect();
        CorpusHost::new(Arc::new(Corpus::new(None, sessions)))
    }

    /// A store that notes every id it is asked about.
    struct Asked {
        inner: CorpusHost,
        ids: Vec<String>,
    }

    impl Store for Asked {
        fn harness(&self) -> &'static str {
            "asked"
        }
    }

    impl SessionQuery for Asked {
        fn list_sessions(&mut self) -> SessionIndex {
            self.inner.list_sessions()
        }
        fn get_session(&mut self, id: &str) -> Option<SessionHeader> {
            self.ids.push(id.to_string());
            self.inner.get_session(id)
        }
        fn get_sessions(&mut self, ids: &[String]) -> Vec<Option<SessionHeader>> {
            self.ids.extend_from_slice(ids);
            self.inner.get_sessions(ids)
        }
        fn title_snapshots(&mut self, ids: &[String]) -> Vec<Option<String>> {
            self.ids.extend_from_slice(ids);
            self.inner.title_snapshots(ids)
        }
        fn get_surface(&mut self, id: &str, lead_chars: u32) -> Option<SurfaceIndex> {
            self.ids.push(id.to_string());
            self.inner.get_surface(id, lead_chars)
        }
        fn get_messages(&mut self, id: &str, seqs: &[u64]) -> Vec<Option<MessageContent>> {
            self.ids.push(id.to_string());
            self.inner.get_messages(id, seqs)
        }
        fn inbox_status(&mut self, target: &str, sender: &str) -> InboxCount {
            self.ids.push(target.to_string());
            self.inner.inbox_status(target, sender)
        }
    }

    impl Inbox for Asked {
        fn deliver(&mut self, request: &DeliveryRequest) -> Result<Delivered, DeliveryRefusal> {
            self.ids.push(request.target.to_string());
            self.inner.deliver(request)
        }
    }

    fn asked(ids: &[&str]) -> Box<dyn Store> {
        Box::new(Asked {
            inner: host(ids),
            ids: Vec::new(),
        })
    }

    /// What the store at `at` was asked about.
    fn asked_of(harnesses: &Harnesses, at: usize) -> &[String] {
        let store = &*harnesses.stores()[at] as &dyn Any;
        &store.downcast_ref::<Asked>().unwrap().ids
    }

    #[test]
    fn one_listing_and_each_question_to_the_store_that_holds_the_session() {
        let mut three = Harnesses::new(vec![
            Box::new(host(&["a1", "a2"])),
            Box::new(host(&["b1"])),
            Box::new(host(&["c1"])),
        ]);
        let index = three.list_sessions();
        assert_eq!(index.ids, "a1a2b1c1");
        assert_eq!(index.entries.len(), 4);
        let ids: Vec<String> = ["c1", "b1", "a2", "nobody"].map(String::from).to_vec();
        let titles = three.title_snapshots(&ids);
        assert_eq!(
            titles,
            [
                Some("title of c1".to_string()),
                Some("title of b1".to_string()),
                Some("title of a2".to_string()),
                None
            ]
        );
        assert!(three.get_session("c1").is_some());
        let delivered =
            three.deliver(&DeliveryRequest::new("c1", "hi", DeliveryMode::Queue).may_wake(true));
        assert!(delivered.is_ok());
        let corpus = three.find_mut::<CorpusHost>().unwrap();
        assert!(
            !corpus.session("a1").unwrap().header.live,
            "the first store"
        );
        assert_eq!(
            three
                .deliver(&DeliveryRequest::new("nobody", "hi", DeliveryMode::Queue).may_wake(true)),
            Err(DeliveryRefusal::NotFound)
        );
    }

    #[test]
    fn a_session_of_one_store_is_not_asked_of_the_others_once_known() {
        // Known from a listing.
        let mut two = Harnesses::new(vec![asked(&["a1"]), asked(&["b1"])]);
        two.list_sessions();
        let b1 = vec!["b1".to_string()];
        assert!(two.get_session("b1").is_some());
        assert_eq!(two.title_snapshots(&b1), [Some("title of b1".to_string())]);
        assert!(two.get_surface("b1", 10).is_some());
        two.get_messages("b1", &[1]);
        two.inbox_status("b1", "a1");
        assert!(
            two.deliver(&DeliveryRequest::new("b1", "hi", DeliveryMode::Queue).may_wake(true))
                .is_ok()
        );
        assert!(asked_of(&two, 0).is_empty(), "{:?}", asked_of(&two, 0));
        assert_eq!(asked_of(&two, 1).len(), 6);
        // Known from the first answer: the first store is asked once, then no more.
        let mut two = Harnesses::new(vec![asked(&["a1"]), asked(&["b1"])]);
        assert!(two.get_sessions(&b1)[0].is_some());
        assert!(two.get_surface("b1", 10).is_some());
        assert!(two.get_session("b1").is_some());
        assert_eq!(asked_of(&two, 0), ["b1"]);
        // An id none holds is asked of each, and refused.
        assert_eq!(
            two.deliver(&DeliveryRequest::new("nobody", "hi", DeliveryMode::Queue).may_wake(true)),
            Err(DeliveryRefusal::NotFound)
        );
    }
}
