//! The deployment's `readScope` and `sendScope`: which sessions a caller may see at all,
//! and which of those it may message. A session's place is its root (the top-level
//! session reached by following parents, at most [`MAX_STEPS`] of them) and its
//! workspace path; both come from headers, asked for in batches, each header once per
//! call.

use crate::host::{SessionHeader, SessionQuery};
use crate::hygiene::fold_line;
use crate::repeats::IdHash;
use std::collections::HashMap;

/// Parents followed from a session to find its root; a longer chain has no root.
pub const MAX_STEPS: usize = 16;

/// How far a scope reaches from the caller, narrowest first: each reaches every
/// session the narrower ones do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Reach {
    /// No session (`sendScope: none`).
    Nothing,
    /// The caller and the sessions whose parent it is (`readScope: self`).
    Own,
    /// Every session with the caller's root.
    Tree,
    /// The tree, plus every session whose workspace path equals, lies inside or
    /// contains the caller's.
    Workspace,
    /// Every session.
    All,
}

/// `readScope`: which sessions the tools can see.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadScope {
    SelfOnly,
    Tree,
    Workspace,
    All,
}

impl ReadScope {
    pub const TAKES: &'static str = "\"all\", \"workspace\", \"tree\" or \"self\"";

    pub fn parse(text: &str) -> Option<ReadScope> {
        Some(match text {
            "all" => ReadScope::All,
            "workspace" => ReadScope::Workspace,
            "tree" => ReadScope::Tree,
            "self" => ReadScope::SelfOnly,
            _ => return None,
        })
    }

    pub fn reach(self) -> Reach {
        match self {
            ReadScope::SelfOnly => Reach::Own,
            ReadScope::Tree => Reach::Tree,
            ReadScope::Workspace => Reach::Workspace,
            ReadScope::All => Reach::All,
        }
    }
}

/// `sendScope`: which of the visible sessions `sessions_send` may deliver to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendScope {
    None,
    Tree,
    Workspace,
    All,
}

impl SendScope {
    pub const TAKES: &'static str = "\"all\", \"workspace\", \"tree\" or \"none\"";

    pub fn parse(text: &str) -> Option<SendScope> {
        Some(match text {
            "all" => SendScope::All,
            "workspace" => SendScope::Workspace,
            "tree" => SendScope::Tree,
            "none" => SendScope::None,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            SendScope::None => "none",
            SendScope::Tree => "tree",
            SendScope::Workspace => "workspace",
            SendScope::All => "all",
        }
    }

    pub fn reach(self) -> Reach {
        match self {
            SendScope::None => Reach::Nothing,
            SendScope::Tree => Reach::Tree,
            SendScope::Workspace => Reach::Workspace,
            SendScope::All => Reach::All,
        }
    }
}

/// A workspace path as compared: its components after the single-line fold, and
/// whether it starts at a root. `None` for a missing or empty path.
fn components(cwd: Option<&str>) -> Option<(bool, Vec<String>)> {
    let folded = fold_line(cwd?);
    if folded.is_empty() {
        return None;
    }
    let rooted = folded.starts_with(['/', '\\']);
    let parts = folded
        .split(['/', '\\'])
        .filter(|part| !part.is_empty())
        .map(str::to_string)
        .collect();
    Some((rooted, parts))
}

/// One path equals, lies inside or contains the other, by whole components.
fn related(a: &(bool, Vec<String>), b: &(bool, Vec<String>)) -> bool {
    let shorter = a.1.len().min(b.1.len());
    a.0 == b.0 && a.1[..shorter] == b.1[..shorter]
}

/// The places of sessions as learnt during one call: every header asked for once.
pub struct Places {
    caller: String,
    /// Headers asked for so far; `None` for an id the host does not know.
    headers: HashMap<String, Option<SessionHeader>, IdHash>,
    /// The caller's root (`None`: it has none), once found.
    caller_root: Option<Option<String>>,
    caller_path: Option<Option<(bool, Vec<String>)>>,
}

impl Places {
    pub fn new(caller: &str) -> Places {
        Places {
            caller: caller.to_string(),
            headers: HashMap::default(),
            caller_root: None,
            caller_path: None,
        }
    }

    /// Keeps a header the call already has, so it is not asked for again.
    pub fn note(&mut self, header: &SessionHeader) {
        if !self.headers.contains_key(&header.id) {
            (self.headers).insert(header.id.clone(), Some(header.clone()));
        }
    }

    /// A header learnt so far.
    pub fn header(&self, id: &str) -> Option<&SessionHeader> {
        self.headers.get(id).and_then(Option::as_ref)
    }

    /// The header of `id`, asked for unless known.
    pub fn lookup(&mut self, host: &mut impl SessionQuery, id: &str) -> Option<SessionHeader> {
        self.learn(host, &[id]);
        self.header(id).cloned()
    }

    /// Asks for the headers of `ids` not known yet, in one batch.
    pub fn learn(&mut self, host: &mut impl SessionQuery, ids: &[&str]) {
        let mut unknown: Vec<String> = Vec::new();
        for id in ids {
            if !self.headers.contains_key(*id) {
                // Marked asked at once, so an id repeated in `ids` is asked once.
                self.headers.insert(id.to_string(), None);
                unknown.push(id.to_string());
            }
        }
        if unknown.is_empty() {
            return;
        }
        let answers = host.get_sessions(&unknown);
        for (id, header) in unknown.into_iter().zip(answers) {
            // A short answer leaves the rest unknown; a header under another id is not
            // this session's.
            if let Some(header) = header.filter(|h| h.id == id) {
                self.headers.insert(id, Some(header));
            }
        }
    }

    /// The roots of `ids`, following parents a batch per step.
    pub fn roots(&mut self, host: &mut impl SessionQuery, ids: &[&str]) -> Vec<Option<String>> {
        let mut at: Vec<Option<String>> = ids.iter().map(|id| Some(id.to_string())).collect();
        let mut roots: Vec<Option<String>> = vec![None; ids.len()];
        for _ in 0..=MAX_STEPS {
            let asked: Vec<&str> = at.iter().flatten().map(String::as_str).collect();
            self.learn(host, &asked);
            let mut open = false;
            for (place, root) in at.iter_mut().zip(roots.iter_mut()) {
                let Some(id) = place.take() else { continue };
                let Some(header) = self.header(&id) else {
                    continue; // an unknown session has no root
                };
                if !header.is_subagent() {
                    *root = Some(id);
                } else if let Some(parent) = header.parent_id.as_ref().filter(|p| !p.is_empty()) {
                    *place = Some(parent.clone());
                    open = true;
                }
            }
            if !open {
                break;
            }
        }
        roots
    }

    pub fn caller_root(&mut self, host: &mut impl SessionQuery) -> Option<String> {
        if self.caller_root.is_none() {
            let caller = self.caller.clone();
            let root = self.roots(host, &[&caller]).pop().flatten();
            self.caller_root = Some(root);
        }
        self.caller_root.clone().flatten()
    }

    fn caller_path(&mut self, host: &mut impl SessionQuery) -> Option<(bool, Vec<String>)> {
        if self.caller_path.is_none() {
            let caller = self.caller.clone();
            self.learn(host, &[caller.as_str()]);
            let path = components(self.header(&caller).and_then(|h| h.cwd.as_deref()));
            self.caller_path = Some(path);
        }
        self.caller_path.clone().flatten()
    }

    /// Whether `reach` takes in each of `ids` (`subagent` as the index says: a
    /// top-level session is its own root, so only subagents need their parents).
    pub fn reaches(
        &mut self,
        host: &mut impl SessionQuery,
        reach: Reach,
        ids: &[(&str, bool)],
    ) -> Vec<bool> {
        match reach {
            Reach::All => return vec![true; ids.len()],
            Reach::Nothing => return vec![false; ids.len()],
            Reach::Own | Reach::Tree | Reach::Workspace => {}
        }
        let mut inside: Vec<bool> = ids.iter().map(|(id, _)| *id == self.caller).collect();
        if reach == Reach::Own {
            let subagents: Vec<&str> = ids
                .iter()
                .filter(|(_, sub)| *sub)
                .map(|(id, _)| *id)
                .collect();
            self.learn(host, &subagents);
            for ((id, subagent), inside) in ids.iter().zip(inside.iter_mut()) {
                *inside |= *subagent
                    && self
                        .header(id)
                        .is_some_and(|h| h.parent_id.as_deref() == Some(self.caller.as_str()));
            }
            return inside;
        }
        if reach == Reach::Workspace
            && let Some(mine) = self.caller_path(host)
        {
            let all: Vec<&str> = ids.iter().map(|(id, _)| *id).collect();
            self.learn(host, &all);
            for ((id, _), inside) in ids.iter().zip(inside.iter_mut()) {
                let theirs = components(self.header(id).and_then(|h| h.cwd.as_deref()));
                *inside |= theirs.is_some_and(|theirs| related(&mine, &theirs));
            }
        }
        let Some(root) = self.caller_root(host) else {
            return inside;
        };
        // Positions of the subagents still outside.
        let mut subagents = Vec::new();
        for (at, (id, subagent)) in ids.iter().enumerate() {
            if inside[at] {
                continue;
            }
            // The index's word that it is top-level, or the header's when one is known.
            let top_level = match self.header(id) {
                Some(header) => !header.is_subagent(),
                None => !*subagent,
            };
            if top_level {
                inside[at] = *id == root;
            } else {
                subagents.push(at);
            }
        }
        if !subagents.is_empty() {
            let asked: Vec<&str> = subagents.iter().map(|&at| ids[at].0).collect();
            for (at, their_root) in subagents.into_iter().zip(self.roots(host, &asked)) {
                inside[at] = their_root.as_deref() == Some(root.as_str());
            }
        }
        inside
    }

    /// Whether `reach` takes in the session of `header`.
    pub fn reaches_one(
        &mut self,
        host: &mut impl SessionQuery,
        reach: Reach,
        header: &SessionHeader,
    ) -> bool {
        if reach == Reach::All {
            return true;
        }
        self.note(header);
        self.reaches(host, reach, &[(&header.id, header.is_subagent())])[0]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{FakeHost, session};

    fn family() -> FakeHost {
        let mut host = FakeHost::default();
        host.add(session("root", 1).cwd("/work/app"));
        host.add(session("me", 2).parent("root").cwd("/work/app/api"));
        host.add(session("my-kid", 3).parent("me"));
        host.add(session("sibling", 4).parent("root").cwd("/elsewhere"));
        host.add(session("other", 5).cwd("/work/app/api/v2"));
        host.add(session("other-kid", 6).parent("other"));
        host.add(session("stranger", 7).cwd("/work/application"));
        host.add(session("pathless", 8));
        host.add(session("loop-a", 9).parent("loop-b"));
        host.add(session("loop-b", 10).parent("loop-a"));
        host
    }

    fn reached(host: &mut FakeHost, caller: &str, reach: Reach) -> Vec<String> {
        let ids: Vec<(String, bool)> = host
            .sessions
            .iter()
            .map(|s| (s.header.id.clone(), s.header.is_subagent()))
            .collect();
        let asked: Vec<(&str, bool)> = ids.iter().map(|(id, s)| (id.as_str(), *s)).collect();
        let inside = Places::new(caller).reaches(host, reach, &asked);
        (ids.iter().zip(inside))
            .filter(|(_, inside)| *inside)
            .map(|((id, _), _)| id.clone())
            .collect()
    }

    #[test]
    fn each_scope_takes_in_what_the_spec_says() {
        let mut host = family();
        assert_eq!(reached(&mut host, "me", Reach::Own), ["me", "my-kid"]);
        assert_eq!(
            reached(&mut host, "me", Reach::Tree),
            ["root", "me", "my-kid", "sibling"]
        );
        // The tree, plus a path equal to, inside or containing /work/app/api by
        // whole components (not /work/application).
        assert_eq!(
            reached(&mut host, "me", Reach::Workspace),
            ["root", "me", "my-kid", "sibling", "other"]
        );
        assert_eq!(reached(&mut host, "me", Reach::All).len(), 10);
        assert!(reached(&mut host, "me", Reach::Nothing).is_empty());
        // A session with no path adds nothing, and a caller with none gets its tree.
        assert_eq!(
            reached(&mut host, "pathless", Reach::Workspace),
            ["pathless"]
        );
    }

    #[test]
    fn parents_are_followed_a_batch_per_step_and_a_loop_has_no_root() {
        let mut host = family();
        assert_eq!(reached(&mut host, "loop-a", Reach::Tree), ["loop-a"]);
        assert!(
            host.calls
                .iter()
                .filter(|c| c.starts_with("get-sessions"))
                .count()
                <= MAX_STEPS + 2
        );
        let mut host = family();
        reached(&mut host, "my-kid", Reach::Tree);
        // The caller's chain, then the other subagents' parents, each header once.
        let asked: Vec<&String> = host.calls.iter().collect();
        assert_eq!(
            asked,
            [
                "get-sessions my-kid",
                "get-sessions me",
                "get-sessions root",
                "get-sessions sibling,other-kid,loop-a,loop-b",
                "get-sessions other",
            ]
        );
    }
}
