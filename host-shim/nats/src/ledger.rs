//! What this machine handed over, remembered on its own disk: a hand-over gives the
//! messages to the harness, then marks them in the cluster; when the mark does not get
//! there (the host killed in between, the cluster gone), the claim stays and, once it
//! is stale, another hand-over would give the same messages again. Each message's key
//! is written here (and synced) as soon as the harness has taken it, so the next
//! hand-over on this machine marks it instead of giving it twice. The cluster's
//! duplicate window is not what keeps a message once: this is.
//!
//! One line per message key, appended by any process of the machine (hooks, servers)
//! with `O_APPEND`; read whole when a stale claim is found, which is rare. Keys older
//! than [`KEPT_FOR`] (their accepted time is in the key) are dropped when the file is
//! rewritten, past [`REWRITE_PAST`] bytes.
//!
//! Trust model: a file of the user's own state folder, created 0600; a line that is not
//! a key is ignored. Someone who can write it can only make this machine mark a
//! message it was handed over as handed over, never hand one over.

use anyhow::{Context, Result};
use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long a handed-over key is remembered (a claim goes stale in a minute).
pub const KEPT_FOR: Duration = Duration::from_secs(7 * 24 * 3600);

/// Past this size the file is rewritten without the keys older than [`KEPT_FOR`].
pub const REWRITE_PAST: u64 = 4 << 20;

/// The file of a machine's handed-over keys.
#[derive(Clone, Debug)]
pub struct Ledger {
    path: PathBuf,
}

impl Ledger {
    /// The ledger in `state` (the machine's state folder, made when missing).
    pub fn in_folder(state: &Path) -> Result<Ledger> {
        std::fs::create_dir_all(state)
            .with_context(|| format!("cannot make the state folder {}", state.display()))?;
        Ok(Ledger {
            path: state.join("handed-over-in-cluster"),
        })
    }

    /// Remembers `keys` as handed over here, on disk before it returns.
    pub fn remember<'a>(&self, keys: impl IntoIterator<Item = &'a str>) -> Result<()> {
        let mut lines = String::new();
        for key in keys {
            lines.push_str(key);
            lines.push('\n');
        }
        let mut file = open_appending(&self.path)?;
        file.write_all(lines.as_bytes())
            .and_then(|()| file.sync_data())
            .with_context(|| format!("cannot write {}", self.path.display()))?;
        if file.metadata().map_or(0, |m| m.len()) > REWRITE_PAST {
            self.rewrite()?;
        }
        Ok(())
    }

    /// The keys handed over here (none when the file is not there yet).
    pub fn handed_over(&self) -> Result<HashSet<String>> {
        match std::fs::read_to_string(&self.path) {
            Ok(text) => Ok(text.lines().map(str::to_string).collect()),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(HashSet::new()),
            Err(err) => Err(err).with_context(|| format!("cannot read {}", self.path.display())),
        }
    }

    /// The file again without the keys older than [`KEPT_FOR`], replaced at once.
    fn rewrite(&self) -> Result<()> {
        let since = host_shim::inbox::now_ns().saturating_sub(KEPT_FOR.as_nanos());
        let kept: String = (self.handed_over()?.into_iter())
            .filter(|key| accepted_ns(key).is_some_and(|ns| ns >= since))
            .map(|key| key + "\n")
            .collect();
        host_shim::record::write_atomically(&self.path, kept.as_bytes())
            .with_context(|| format!("cannot rewrite {}", self.path.display()))
    }
}

/// When the message a key names was accepted (`m.<session>.<ns>-<nuid>`).
fn accepted_ns(key: &str) -> Option<u128> {
    let last = key.rsplit('.').next()?;
    last.split('-').next()?.parse().ok()
}

fn open_appending(path: &Path) -> Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options
        .open(path)
        .with_context(|| format!("cannot open {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_remembered_across_openings_and_old_ones_go_when_rewritten() {
        let dir = host_shim_testkit::temp_folder("ledger");
        let _ = std::fs::remove_dir_all(&dir);
        let ledger = Ledger::in_folder(&dir).unwrap();
        assert!(ledger.handed_over().unwrap().is_empty());
        let now = host_shim::inbox::now_ns();
        let fresh = format!("m.ses-a.{now:020}-n1");
        let old = format!("m.ses-a.{:020}-n0", now - 2 * KEPT_FOR.as_nanos());
        ledger.remember([fresh.as_str(), old.as_str()]).unwrap();
        let again = Ledger::in_folder(&dir).unwrap().handed_over().unwrap();
        assert!(again.contains(&fresh) && again.contains(&old));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&ledger.path)
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        ledger.rewrite().unwrap();
        let kept = ledger.handed_over().unwrap();
        assert!(kept.contains(&fresh) && !kept.contains(&old), "{kept:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
