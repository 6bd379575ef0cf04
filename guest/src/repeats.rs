//! Finding ids a host lists more than once. A listing checks every id of the index, so
//! this is on the hot path: a first pass hashes each id, in constant time, into a
//! small table of counts, and only the ids that share a slot with another (about one
//! in six) are compared exactly, in order, so the first of a repeated id is the one
//! kept. The hashes are a fast multiply-rotate (FxHash's); a host that crafts
//! colliding ids slows only its own call, which its deadline bounds.

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

/// Slots in the table of counts: four to eight per id, at most this many (six per
/// id of a 10,000-session index).
const MAX_SLOTS: usize = 1 << 16;

fn mix(hash: u64, word: u64) -> u64 {
    (hash.rotate_left(5) ^ word).wrapping_mul(SEED)
}

/// Eight bytes of `bytes` from `at` (zero-padded past the end), as a word: one load
/// when all eight are there (a short copy would be a call to `memcpy` in wasm).
fn word(bytes: &[u8], at: usize) -> u64 {
    if let Some(eight) = bytes.get(at..at + 8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(eight);
        return u64::from_le_bytes(word);
    }
    let tail = bytes.get(at..).unwrap_or_default();
    tail.iter()
        .enumerate()
        .fold(0, |word, (i, &byte)| word | u64::from(byte) << (8 * i))
}

/// The id's slot hash, in constant time: its length and its first, middle and last
/// eight bytes (ids that differ elsewhere share a slot and are told apart exactly).
fn slot_hash(id: &str) -> u64 {
    let bytes = id.as_bytes();
    let len = bytes.len();
    let last = len.saturating_sub(8);
    // The table takes the high bits of the last multiply, which every input bit
    // reaches.
    mix(
        mix(mix(len as u64, word(bytes, 0)), word(bytes, last / 2)),
        word(bytes, last),
    )
}

/// The whole id's hash, for the exact check of the ids that share a slot.
#[derive(Default)]
pub(crate) struct IdHasher(u64);

/// Hash maps and sets keyed by session id use this hasher: one hashing code in the
/// plugin, and fast on ids.
pub(crate) type IdHash = BuildHasherDefault<IdHasher>;

impl Hasher for IdHasher {
    fn write(&mut self, bytes: &[u8]) {
        self.0 = mix(self.0, bytes.len() as u64);
        for at in (0..bytes.len()).step_by(8) {
            self.0 = mix(self.0, word(bytes, at));
        }
    }

    fn finish(&self) -> u64 {
        self.0.rotate_left(26)
    }
}

/// For each id, in order, whether an earlier id is the same. `ids` is walked twice.
pub fn repeats<'a>(ids: impl ExactSizeIterator<Item = &'a str> + Clone) -> Vec<bool> {
    if ids.len() < 2 {
        return vec![false; ids.len()];
    }
    // Sized to the index, so a small listing allocates little.
    let slots = (ids.len() * 4).next_power_of_two().min(MAX_SLOTS);
    let shift = 64 - slots.trailing_zeros();
    let slot_of: Vec<u32> = ids
        .clone()
        .map(|id| (slot_hash(id) >> shift) as u32)
        .collect();
    let mut counts = vec![0u8; slots];
    for &slot in &slot_of {
        let count = &mut counts[slot as usize];
        *count = count.saturating_add(1);
    }
    let mut seen: HashSet<&str, IdHash> = HashSet::default();
    ids.zip(slot_of)
        .map(|(id, slot)| counts[slot as usize] > 1 && !seen.insert(id))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_of_a_repeated_id_is_kept_and_the_rest_marked() {
        let mut ids: Vec<String> = (0..10_000).map(|i| format!("session-{i:05}")).collect();
        ids.push("session-04242".to_string());
        ids.push("".to_string());
        ids.push("".to_string());
        // Ids that differ only past the first eight bytes, or only in length.
        ids.push("session-0".to_string());
        ids.push("session-0\0".to_string());
        let marks = repeats(ids.iter().map(String::as_str));
        let marked: Vec<usize> = (0..ids.len()).filter(|&i| marks[i]).collect();
        assert_eq!(marked, [10_000, 10_002]);
    }

    #[test]
    fn ids_that_differ_only_at_their_end_spread_over_the_slots() {
        // Sequential ids differ in their last bytes: they must not pile into few slots.
        let ids: Vec<String> = (0..10_000).map(|i| format!("session-{i:05}")).collect();
        let slots = (ids.len() * 4).next_power_of_two();
        let shift = 64 - slots.trailing_zeros();
        let mut used = std::collections::HashSet::new();
        for id in &ids {
            used.insert(slot_hash(id) >> shift);
        }
        assert!(used.len() > 8_000, "{} slots used", used.len());
    }

    #[test]
    fn ids_that_share_a_slot_are_told_apart_exactly() {
        // More ids than slots: many share one, none repeats.
        let ids: Vec<String> = (0..3 * MAX_SLOTS).map(|i| format!("{i}")).collect();
        assert!(!repeats(ids.iter().map(String::as_str)).contains(&true));
    }
}
