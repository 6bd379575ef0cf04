//! What a store remembers within one tool call, and forgets between calls.

/// Answers a store keeps for the length of one tool call: the WIT asks that a call be
/// answered from one state, and a listing's rows ask the same question many times.
/// Between calls nothing is kept, and every question looks afresh.
pub struct CallMemo<K, V> {
    seen: Option<std::collections::HashMap<K, V>>,
}

impl<K, V> Default for CallMemo<K, V> {
    fn default() -> Self {
        CallMemo { seen: None }
    }
}

impl<K: Eq + std::hash::Hash, V: Copy> CallMemo<K, V> {
    /// A call begins: from now on each answer is kept until [`CallMemo::end`].
    pub fn begin(&mut self) {
        self.seen = Some(std::collections::HashMap::new());
    }

    /// The call ended: nothing is kept.
    pub fn end(&mut self) {
        self.seen = None;
    }

    /// The answer for `key`: the one kept in this call, else `look`'s (kept while a
    /// call runs).
    pub fn get_or<Q>(&mut self, key: &Q, look: impl FnOnce() -> V) -> V
    where
        K: std::borrow::Borrow<Q>,
        Q: ToOwned<Owned = K> + Eq + std::hash::Hash + ?Sized,
    {
        if let Some(&kept) = self.seen.as_ref().and_then(|seen| seen.get(key)) {
            return kept;
        }
        let value = look();
        if let Some(seen) = &mut self.seen {
            seen.insert(key.to_owned(), value);
        }
        value
    }
}
