//! Claims kept beside the inbox (`claims` in the contract): the whole set at a
//! revision, replaced only at the revision read. The plugin decides everything about a
//! claim; a backend only stores the set and refuses a write made from an old read.
//!
//! In the state folder each revision is one file, `claims/<revision>.json` (the
//! revision zero-padded to 20 digits, so names sort as numbers), written to `tmp/`
//! and linked into place: a link fails when the name exists, so of two writers that
//! read one revision exactly one lands the next and the other is told `Stale`, with
//! no lock held by anyone. The newest file is the set; the two before it are kept for
//! readers that listed the folder just before a write, older ones are removed.
//!
//! Trust model: the folder is the state folder's (this user's alone, checked where it
//! is opened); files are read without following symlinks, bounded by
//! [`MAX_CLAIMS_BYTES`], and a file that is not a claim set is named with what to do.

use crate::contract::latest::{Claim, ClaimMode};
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The largest claim set read (a team of a hundred sessions holding sixteen claims of
/// 32 long globs each is well below it).
pub const MAX_CLAIMS_BYTES: u64 = 8 << 20;

/// Revisions kept behind the newest.
const KEPT_BEHIND: usize = 2;

/// The set at a revision (0: never written).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClaimsAt {
    pub claims: Vec<Claim>,
    pub revision: u64,
}

/// What a write did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClaimsWritten {
    /// The set is replaced; its new revision.
    Written(u64),
    /// The set changed since the revision read: nothing was written.
    Stale,
}

/// One claim as a file keeps it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct StoredClaim {
    pub id: String,
    pub holder: String,
    pub paths: Vec<String>,
    pub mode: String,
    #[serde(default)]
    pub reason: String,
    pub made_at_ms: i64,
    pub ends_at_ms: i64,
    pub seen_live_ms: i64,
}

impl From<&Claim> for StoredClaim {
    fn from(claim: &Claim) -> StoredClaim {
        StoredClaim {
            id: claim.id.clone(),
            holder: claim.holder.clone(),
            paths: claim.paths.clone(),
            mode: claim.mode.as_str().to_string(),
            reason: claim.reason.clone(),
            made_at_ms: claim.made_at_ms,
            ends_at_ms: claim.ends_at_ms,
            seen_live_ms: claim.seen_live_ms,
        }
    }
}

impl StoredClaim {
    /// The claim, or why it is not one.
    pub fn into_claim(self) -> Result<Claim> {
        let mode = ClaimMode::parse(&self.mode).with_context(|| {
            format!(
                "claim {} has the mode {:?}, which is no mode",
                self.id, self.mode
            )
        })?;
        Ok(Claim {
            id: self.id,
            holder: self.holder,
            paths: self.paths,
            mode,
            reason: self.reason,
            made_at_ms: self.made_at_ms,
            ends_at_ms: self.ends_at_ms,
            seen_live_ms: self.seen_live_ms,
        })
    }
}

/// A claim set as JSON text (one file, one KV value).
pub fn to_json(claims: &[Claim]) -> Vec<u8> {
    let stored: Vec<StoredClaim> = claims.iter().map(StoredClaim::from).collect();
    serde_json::to_vec(&stored).unwrap_or_default()
}

/// A claim set from its JSON text; `what` names where it came from.
pub fn from_json(bytes: &[u8], what: &str) -> Result<Vec<Claim>> {
    let stored: Vec<StoredClaim> = crate::json::from_slice(bytes).with_context(|| {
        format!("{what} is not a claim set; remove it (every claim in it ends) and claim again")
    })?;
    (stored.into_iter())
        .map(StoredClaim::into_claim)
        .collect::<Result<_>>()
        .with_context(|| format!("{what} holds a claim that is not one"))
}

/// The claim files of a state folder.
pub(super) struct ClaimFiles<'a> {
    pub root: &'a Path,
}

fn revision_of(name: &str) -> Option<u64> {
    let digits = name.strip_suffix(".json")?;
    (digits.len() == 20 && digits.bytes().all(|b| b.is_ascii_digit()))
        .then(|| digits.parse().ok())
        .flatten()
}

impl ClaimFiles<'_> {
    fn folder(&self) -> PathBuf {
        self.root.join("claims")
    }

    fn file(&self, revision: u64) -> PathBuf {
        self.folder().join(format!("{revision:020}.json"))
    }

    /// The revisions on disk, oldest first.
    fn revisions(&self) -> Result<Vec<u64>> {
        let folder = self.folder();
        let entries = match std::fs::read_dir(&folder) {
            Ok(entries) => entries,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(err) => {
                return Err(err).with_context(|| format!("cannot list {}", folder.display()));
            }
        };
        let mut revisions: Vec<u64> = entries
            .flatten()
            .filter_map(|entry| revision_of(&entry.file_name().to_string_lossy()))
            .collect();
        revisions.sort_unstable();
        Ok(revisions)
    }

    pub fn read(&self) -> Result<ClaimsAt> {
        // A writer may remove the file listed between the listing and the read: look
        // again then.
        for _ in 0..4 {
            let Some(&revision) = self.revisions()?.last() else {
                return Ok(ClaimsAt::default());
            };
            let path = self.file(revision);
            match crate::os::read_regular(&path, MAX_CLAIMS_BYTES) {
                Ok(bytes) => {
                    let claims = from_json(&bytes, &path.display().to_string())?;
                    return Ok(ClaimsAt { claims, revision });
                }
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => continue,
                Err(err) => {
                    return Err(err).with_context(|| format!("cannot read {}", path.display()));
                }
            }
        }
        anyhow::bail!(
            "the claims in {} changed four times while being read; try again",
            self.folder().display()
        )
    }

    pub fn write(&self, revision: u64, claims: &[Claim]) -> Result<ClaimsWritten> {
        let folder = self.folder();
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&folder)
            .with_context(|| format!("cannot create {}", folder.display()))?;
        if self.revisions()?.last().copied().unwrap_or(0) != revision {
            return Ok(ClaimsWritten::Stale);
        }
        let next = revision + 1;
        let tmp = self.root.join("tmp");
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&tmp)
            .with_context(|| format!("cannot create {}", tmp.display()))?;
        // Unique per writer, threads of one process included.
        static WRITERS: AtomicU64 = AtomicU64::new(0);
        let writer = WRITERS.fetch_add(1, Ordering::Relaxed);
        let temporary = tmp.join(format!("claims.{}.{writer}.{next}", std::process::id()));
        let written = (OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&temporary))
        .and_then(|mut file| {
            file.write_all(&to_json(claims))?;
            file.sync_all()
        });
        let linked = written.and_then(|()| std::fs::hard_link(&temporary, self.file(next)));
        let _ = std::fs::remove_file(&temporary);
        match linked {
            Ok(()) => {}
            Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => {
                return Ok(ClaimsWritten::Stale);
            }
            Err(err) => {
                return Err(err)
                    .with_context(|| format!("cannot write {}", self.file(next).display()));
            }
        }
        // A writer slower than three others may link a revision they already passed
        // (and removed the one it read): its set is then none of theirs, so it is
        // taken back and told stale. (One that others already built on is in theirs.)
        let revisions = self.revisions()?;
        let read_gone = revision > 0 && !revisions.contains(&revision);
        if read_gone || revisions.last().is_some_and(|newest| *newest > next) {
            let _ = std::fs::remove_file(self.file(next));
            return Ok(ClaimsWritten::Stale);
        }
        {
            let old = revisions.len().saturating_sub(KEPT_BEHIND + 1);
            for revision in &revisions[..old] {
                let _ = std::fs::remove_file(self.file(*revision));
            }
        }
        Ok(ClaimsWritten::Written(next))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claim(id: &str) -> Claim {
        Claim {
            id: id.to_string(),
            holder: "s".to_string(),
            paths: vec!["/w/src/**".to_string()],
            mode: ClaimMode::Exclusive,
            reason: "why".to_string(),
            made_at_ms: 1,
            ends_at_ms: 2,
            seen_live_ms: 1,
        }
    }

    fn scratch(name: &str) -> PathBuf {
        let dir = host_shim_testkit::temp_folder("claims").join(name);
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn a_missing_folder_is_no_claims_and_each_write_is_a_revision() {
        let root = scratch("revisions");
        let files = ClaimFiles { root: &root };
        assert_eq!(files.read().unwrap(), ClaimsAt::default());
        assert_eq!(
            files.write(0, &[claim("c-1")]).unwrap(),
            ClaimsWritten::Written(1)
        );
        let read = files.read().unwrap();
        assert_eq!((read.revision, read.claims), (1, vec![claim("c-1")]));
        for revision in 1..6 {
            files.write(revision, &[claim("c-2")]).unwrap();
        }
        // The newest and the two before it are kept.
        assert_eq!(files.revisions().unwrap(), [4, 5, 6]);
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn of_two_writers_of_one_revision_only_one_lands() {
        let root = scratch("stale");
        let files = ClaimFiles { root: &root };
        assert_eq!(
            files.write(0, &[claim("c-a")]).unwrap(),
            ClaimsWritten::Written(1)
        );
        assert_eq!(
            files.write(0, &[claim("c-b")]).unwrap(),
            ClaimsWritten::Stale
        );
        assert_eq!(files.read().unwrap().claims, [claim("c-a")]);
        // Two threads racing from one revision: exactly one lands each round.
        for round in 1..20u64 {
            let landed: Vec<ClaimsWritten> = std::thread::scope(|scope| {
                let handles: Vec<_> = (0..4)
                    .map(|i| {
                        let files = ClaimFiles { root: &root };
                        scope
                            .spawn(move || files.write(round, &[claim(&format!("c-{i}"))]).unwrap())
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap()).collect()
            });
            let written = landed
                .iter()
                .filter(|w| **w == ClaimsWritten::Written(round + 1));
            assert_eq!(written.count(), 1, "{landed:?}");
        }
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_file_that_is_no_claim_set_is_named_with_what_to_do() {
        let root = scratch("bad");
        let files = ClaimFiles { root: &root };
        std::fs::create_dir_all(root.join("claims")).unwrap();
        std::fs::write(files.file(3), b"{not json").unwrap();
        let err = format!("{:#}", files.read().unwrap_err());
        assert!(
            err.contains("00000000000000000003.json is not a claim set; remove it"),
            "{err}"
        );
        std::fs::write(files.file(4), br#"[{"id":"c","holder":"s","paths":[],"mode":"mine","made_at_ms":0,"ends_at_ms":0,"seen_live_ms":0}]"#).unwrap();
        let err = format!("{:#}", files.read().unwrap_err());
        assert!(err.contains("the mode \"mine\", which is no mode"), "{err}");
        std::fs::remove_dir_all(&root).unwrap();
    }
}
