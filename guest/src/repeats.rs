//! Finding ids a host lists more than once. A listing checks every id of the index, so
//! this is on the hot path: a first pass hashes each id into a small table of counts,
//! and only the ids that share a slot with another (a few percent of them) are
//! compared exactly, in order, so the first of a repeated id is the one kept. The hash
//! is a fast multiply-rotate (FxHash's); a host that crafts colliding ids slows only
//! its own call, which its deadline bounds.

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

/// Slots in the table of counts: about six per id of a 10,000-session index.
const SLOTS: usize = 1 << 16;

fn mix(hash: u64, word: u64) -> u64 {
    (hash.rotate_left(5) ^ word).wrapping_mul(SEED)
}

/// The id's hash: eight bytes at a time, then the tail with its length.
fn id_hash(id: &str) -> u64 {
    let mut chunks = id.as_bytes().chunks_exact(8);
    let mut hash = 0;
    for chunk in &mut chunks {
        hash = mix(
            hash,
            u64::from_le_bytes(chunk.try_into().unwrap_or_default()),
        );
    }
    let rest = chunks.remainder();
    let mut tail = [0u8; 8];
    tail[..rest.len()].copy_from_slice(rest);
    // The table takes the high bits: mix the low ones up.
    mix(hash, u64::from_le_bytes(tail) ^ (rest.len() as u64) << 59).rotate_left(26)
}

/// Hashes an id once more for the exact check (its hash was computed before).
#[derive(Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn write(&mut self, bytes: &[u8]) {
        self.0 = mix(self.0, bytes.len() as u64);
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.0 = mix(self.0, u64::from_le_bytes(word));
        }
    }

    fn finish(&self) -> u64 {
        self.0.rotate_left(26)
    }
}

/// For each id, in order, whether an earlier id is the same. `ids` is walked twice.
pub fn repeats<'a>(ids: impl Iterator<Item = &'a str> + Clone) -> Vec<bool> {
    let slot = |id: &str| (id_hash(id) >> 48) as usize % SLOTS;
    let mut counts = vec![0u8; SLOTS];
    for id in ids.clone() {
        let count = &mut counts[slot(id)];
        *count = count.saturating_add(1);
    }
    let mut seen: HashSet<&str, BuildHasherDefault<IdHasher>> = HashSet::default();
    ids.map(|id| counts[slot(id)] > 1 && !seen.insert(id))
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
    fn ids_that_share_a_slot_are_told_apart_exactly() {
        // More ids than slots: many share one, none repeats.
        let ids: Vec<String> = (0..3 * SLOTS).map(|i| format!("{i}")).collect();
        assert!(!repeats(ids.iter().map(String::as_str)).contains(&true));
    }
}
