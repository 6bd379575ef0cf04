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

/// The sessions of `first` and `second` as one harness. An id both hold is answered
/// by `first`.
pub struct Both<A, B> {
    pub first: A,
    pub second: B,
}

impl<A: SessionQuery, B: SessionQuery> Both<A, B> {
    /// Whether `first` holds the session: it answers for it.
    fn in_first(&mut self, id: &str) -> bool {
        self.first.get_session(id).is_some()
    }

    /// A batch answered by `first`, and what it did not know by `second`.
    fn batch<T>(
        &mut self,
        ids: &[String],
        ask_first: impl FnOnce(&mut A, &[String]) -> Vec<Option<T>>,
        ask_second: impl FnOnce(&mut B, &[String]) -> Vec<Option<T>>,
    ) -> Vec<Option<T>> {
        let mut answers = ask_first(&mut self.first, ids);
        answers.resize_with(ids.len(), || None);
        let missing: Vec<usize> = (0..ids.len()).filter(|&i| answers[i].is_none()).collect();
        if missing.is_empty() {
            return answers;
        }
        let asked: Vec<String> = missing.iter().map(|&i| ids[i].clone()).collect();
        for (i, answer) in missing
            .into_iter()
            .zip(ask_second(&mut self.second, &asked))
        {
            answers[i] = answer;
        }
        answers
    }
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
        index.ids.push_str(&more.ids);
        index.entries.extend(more.entries);
        index
    }

    fn get_session(&mut self, id: &str) -> Option<SessionHeader> {
        self.first
            .get_session(id)
            .or_else(|| self.second.get_session(id))
    }

    fn get_sessions(&mut self, ids: &[String]) -> Vec<Option<SessionHeader>> {
        self.batch(
            ids,
            |a, ids| a.get_sessions(ids),
            |b, ids| b.get_sessions(ids),
        )
    }

    fn title_snapshots(&mut self, ids: &[String]) -> Vec<Option<String>> {
        // A session without a title is asked of `second` too, which does not know it.
        self.batch(
            ids,
            |a, ids| a.title_snapshots(ids),
            |b, ids| b.title_snapshots(ids),
        )
    }

    fn get_surface(&mut self, id: &str, lead_chars: u32) -> Option<SurfaceIndex> {
        self.first
            .get_surface(id, lead_chars)
            .or_else(|| self.second.get_surface(id, lead_chars))
    }

    fn get_messages(&mut self, id: &str, seqs: &[u64]) -> Vec<Option<MessageContent>> {
        if self.in_first(id) {
            self.first.get_messages(id, seqs)
        } else {
            self.second.get_messages(id, seqs)
        }
    }

    fn inbox_status(&mut self, target: &str, sender: &str) -> InboxCount {
        if self.in_first(target) {
            self.first.inbox_status(target, sender)
        } else {
            self.second.inbox_status(target, sender)
        }
    }
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
        if self.in_first(target) {
            self.first.deliver(target, body, mode, may_wake, key)
        } else {
            self.second.deliver(target, body, mode, may_wake, key)
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
        let mut both = Both {
            first: host(&["a1", "a2"]),
            second: host(&["b1"]),
        };
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
}
