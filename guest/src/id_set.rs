//! A set of borrowed ids for finding repeats in a session index. A listing checks
//! every id the host lists, so the hash is a fast multiply-rotate (FxHash's) rather
//! than std's SipHash, which alone would cost more than the rest of a listing. The ids
//! come from the host: a host that crafts colliding ids slows only its own call, which
//! its deadline bounds.

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

#[derive(Default)]
pub struct FastHasher {
    hash: u64,
}

impl FastHasher {
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for FastHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            self.add(u64::from_le_bytes(chunk.try_into().unwrap_or_default()));
        }
        let mut tail = [0u8; 8];
        let rest = chunks.remainder();
        tail[..rest.len()].copy_from_slice(rest);
        self.add(u64::from_le_bytes(tail) ^ (rest.len() as u64) << 59);
    }

    fn write_u8(&mut self, byte: u8) {
        self.add(u64::from(byte));
    }

    fn finish(&self) -> u64 {
        // The table picks buckets from the low bits and tags from the high ones: mix
        // both.
        self.hash.rotate_left(26)
    }
}

pub type IdSet<'a> = HashSet<&'a str, BuildHasherDefault<FastHasher>>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeats_are_found_and_distinct_ids_kept() {
        let ids: Vec<String> = (0..10_000).map(|i| format!("session-{i:05}")).collect();
        let mut set = IdSet::default();
        assert!(ids.iter().all(|id| set.insert(id.as_str())));
        assert!(!set.insert("session-04242"));
        // Ids that differ only past the first eight bytes, or only in length.
        assert!(set.insert("session-0"));
        assert!(set.insert("session-0\0"));
        assert!(set.insert(""));
        assert!(!set.insert(""));
    }
}
