//! Two harnesses' sessions as one: the sessions of both in one listing, and every
//! other question and each delivery answered by the harness that holds the session.
//! `host-shim --claude-projects DIR --codex-home DIR` serves Claude Code's sessions and
//! Codex's threads together this way, so a session of either can read and message one
//! of the other; with one state folder, both hand over from the same inbox, each by
//! its own harness's hook.
//!
//! A model tells the harnesses apart in a listing by the preset (Claude Code's models
//! are Anthropic's, a Codex thread shows its own) and in a read by the source label
//! (`model:anthropic/…` against `model:<provider>/…`).

use crate::bindings::{
    Delivered, DeliveryMode, DeliveryRefusal, InboxCount, MessageContent, SessionHeader,
    SessionIndex, SurfaceIndex,
};
use crate::harness::{Inbox, SessionQuery};
use std::collections::HashMap;

/// The sessions of `first` and `second` as one harness. An id both hold is answered
/// by `first`.
pub struct Both<A, B> {
    pub first: A,
    pub second: B,
    /// Which harness holds each session seen so far (ids are never reused), so a
    /// question about one harness's session is not asked of the other first: a store
    /// asked for an id it does not hold looks through its whole folder again.
    sides: HashMap<String, Side>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    First,
    Second,
}

impl<A, B> Both<A, B> {
    pub fn new(first: A, second: B) -> Both<A, B> {
        Both {
            first,
            second,
            sides: HashMap::new(),
        }
    }
}

impl<A: SessionQuery, B: SessionQuery> Both<A, B> {
    /// The harness that holds the session, asking (`first`, then `second`) only when
    /// not known yet.
    fn side_of(&mut self, id: &str) -> Option<Side> {
        if let Some(&side) = self.sides.get(id) {
            return Some(side);
        }
        let side = if self.first.get_session(id).is_some() {
            Side::First
        } else if self.second.get_session(id).is_some() {
            Side::Second
        } else {
            return None;
        };
        self.sides.insert(id.to_string(), side);
        Some(side)
    }

    fn learn(&mut self, ids: impl IntoIterator<Item = String>, side: Side) {
        for id in ids {
            self.sides.entry(id).or_insert(side);
        }
    }

    /// A batch: each id asked of the harness known to hold it; an unknown one of
    /// `first`, then what `first` did not answer of `second`. Each harness is asked
    /// at most once.
    fn batch<T>(
        &mut self,
        ids: &[String],
        ask_first: impl FnOnce(&mut A, &[String]) -> Vec<Option<T>>,
        ask_second: impl FnOnce(&mut B, &[String]) -> Vec<Option<T>>,
    ) -> Vec<Option<T>> {
        let mut answers: Vec<Option<T>> = std::iter::repeat_with(|| None).take(ids.len()).collect();
        let known: Vec<Option<Side>> = ids.iter().map(|id| self.sides.get(id).copied()).collect();
        let for_first: Vec<usize> = (0..ids.len())
            .filter(|&i| known[i] != Some(Side::Second))
            .collect();
        if !for_first.is_empty() {
            let given = ask_first(&mut self.first, &picked(ids, &for_first));
            self.take_answers(ids, for_first, given, Side::First, &mut answers);
        }
        let for_second: Vec<usize> = (0..ids.len())
            .filter(|&i| match known[i] {
                Some(Side::Second) => true,
                Some(Side::First) => false,
                None => answers[i].is_none(),
            })
            .collect();
        if !for_second.is_empty() {
            let given = ask_second(&mut self.second, &picked(ids, &for_second));
            self.take_answers(ids, for_second, given, Side::Second, &mut answers);
        }
        answers
    }

    /// Puts `given`, the answers for the ids at `at`, in their places, noting that
    /// `side` holds each session it answered for.
    fn take_answers<T>(
        &mut self,
        ids: &[String],
        at: Vec<usize>,
        given: Vec<Option<T>>,
        side: Side,
        answers: &mut [Option<T>],
    ) {
        for (i, answer) in at.into_iter().zip(given) {
            if answer.is_some() {
                self.sides.entry(ids[i].clone()).or_insert(side);
            }
            answers[i] = answer;
        }
    }
}

/// The ids at `at`, in that order.
fn picked(ids: &[String], at: &[usize]) -> Vec<String> {
    at.iter().map(|&i| ids[i].clone()).collect()
}

impl<A: SessionQuery, B: SessionQuery> SessionQuery for Both<A, B> {
    fn begin_call(&mut self) {
        self.first.begin_call();
        self.second.begin_call();
    }

    fn end_call(&mut self) {
        self.first.end_call();
        self.second.end_call();
    }

    fn list_sessions(&mut self) -> SessionIndex {
        let mut index = self.first.list_sessions();
        let more = self.second.list_sessions();
        self.learn(ids_of(&index), Side::First);
        self.learn(ids_of(&more), Side::Second);
        index.ids.push_str(&more.ids);
        index.entries.extend(more.entries);
        index
    }

    fn get_session(&mut self, id: &str) -> Option<SessionHeader> {
        match self.side_of(id)? {
            Side::First => self.first.get_session(id),
            Side::Second => self.second.get_session(id),
        }
    }

    fn get_sessions(&mut self, ids: &[String]) -> Vec<Option<SessionHeader>> {
        self.batch(
            ids,
            |a, ids| a.get_sessions(ids),
            |b, ids| b.get_sessions(ids),
        )
    }

    fn title_snapshots(&mut self, ids: &[String]) -> Vec<Option<String>> {
        self.batch(
            ids,
            |a, ids| a.title_snapshots(ids),
            |b, ids| b.title_snapshots(ids),
        )
    }

    fn get_surface(&mut self, id: &str, lead_chars: u32) -> Option<SurfaceIndex> {
        match self.side_of(id)? {
            Side::First => self.first.get_surface(id, lead_chars),
            Side::Second => self.second.get_surface(id, lead_chars),
        }
    }

    fn get_messages(&mut self, id: &str, seqs: &[u64]) -> Vec<Option<MessageContent>> {
        match self.side_of(id) {
            Some(Side::First) => self.first.get_messages(id, seqs),
            Some(Side::Second) => self.second.get_messages(id, seqs),
            None => vec![None; seqs.len()],
        }
    }

    fn inbox_status(&mut self, target: &str, sender: &str) -> InboxCount {
        match self.side_of(target) {
            Some(Side::First) => self.first.inbox_status(target, sender),
            Some(Side::Second) => self.second.inbox_status(target, sender),
            None => InboxCount::NONE,
        }
    }
}

/// The ids of an index, in entry order.
fn ids_of(index: &SessionIndex) -> Vec<String> {
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

impl<A: SessionQuery + Inbox, B: SessionQuery + Inbox> Inbox for Both<A, B> {
    fn deliver(
        &mut self,
        target: &str,
        body: &str,
        mode: DeliveryMode,
        may_wake: bool,
        key: &str,
    ) -> Result<Delivered, DeliveryRefusal> {
        match self.side_of(target) {
            Some(Side::First) => self.first.deliver(target, body, mode, may_wake, key),
            Some(Side::Second) => self.second.deliver(target, body, mode, may_wake, key),
            None => Err(DeliveryRefusal::NotFound),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::{Corpus, CorpusHost, Session};
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

    #[test]
    fn one_listing_and_each_question_to_the_harness_that_holds_the_session() {
        let mut both = Both::new(host(&["a1", "a2"]), host(&["b1"]));
        let index = both.list_sessions();
        assert_eq!(index.ids, "a1a2b1");
        assert_eq!(index.entries.len(), 3);
        let ids: Vec<String> = ["b1", "a2", "nobody"].map(String::from).to_vec();
        let titles = both.title_snapshots(&ids);
        assert_eq!(
            titles,
            [
                Some("title of b1".to_string()),
                Some("title of a2".to_string()),
                None
            ]
        );
        assert!(both.get_session("b1").is_some());
        let delivered = both.deliver("b1", "hi", DeliveryMode::Queue, true, "");
        assert!(delivered.is_ok());
        assert!(both.second.session("b1").unwrap().header.live);
        assert!(!both.first.session("a1").unwrap().header.live);
        assert_eq!(
            both.deliver("nobody", "hi", DeliveryMode::Queue, true, ""),
            Err(DeliveryRefusal::NotFound)
        );
    }

    /// A harness that notes every id it is asked about.
    struct Asked<H> {
        inner: H,
        ids: Vec<String>,
    }

    impl<H: SessionQuery> SessionQuery for Asked<H> {
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

    impl<H: Inbox> Inbox for Asked<H> {
        fn deliver(
            &mut self,
            target: &str,
            body: &str,
            mode: DeliveryMode,
            may_wake: bool,
            key: &str,
        ) -> Result<Delivered, DeliveryRefusal> {
            self.ids.push(target.to_string());
            self.inner.deliver(target, body, mode, may_wake, key)
        }
    }

    fn asked(ids: &[&str]) -> Asked<CorpusHost> {
        Asked {
            inner: host(ids),
            ids: Vec::new(),
        }
    }

    #[test]
    fn a_session_of_one_harness_is_not_asked_of_the_other_once_known() {
        // Known from a listing.
        let mut both = Both::new(asked(&["a1"]), asked(&["b1"]));
        both.list_sessions();
        let b1 = vec!["b1".to_string()];
        assert!(both.get_session("b1").is_some());
        assert_eq!(both.title_snapshots(&b1), [Some("title of b1".to_string())]);
        assert!(both.get_surface("b1", 10).is_some());
        both.get_messages("b1", &[1]);
        both.inbox_status("b1", "a1");
        assert!(
            both.deliver("b1", "hi", DeliveryMode::Queue, true, "")
                .is_ok()
        );
        assert!(both.first.ids.is_empty(), "{:?}", both.first.ids);
        assert_eq!(both.second.ids.len(), 6);
        // Known from the first answer: `first` is asked once, then no more.
        let mut both = Both::new(asked(&["a1"]), asked(&["b1"]));
        assert!(both.get_sessions(&b1)[0].is_some());
        assert!(both.get_surface("b1", 10).is_some());
        assert!(both.get_session("b1").is_some());
        assert_eq!(both.first.ids, ["b1"]);
        // An id neither holds is asked of both, and refused.
        assert_eq!(
            both.deliver("nobody", "hi", DeliveryMode::Queue, true, ""),
            Err(DeliveryRefusal::NotFound)
        );
    }
}
