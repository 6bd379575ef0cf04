//! What the machines published (`d.<machine>`), as each reader of the watched lists
//! takes them: the inbox (where each session is) and the directory (every machine's
//! sessions).

use crate::watch::Watched;
use crate::wire::Published;
use anyhow::Result;

/// Each machine's published list (`d.<machine>`) that reads as one, by machine name.
pub(crate) fn lists(published: &Watched) -> Result<Vec<(String, Published)>> {
    published.read(|lists| {
        (lists.iter())
            .filter_map(|(key, kept)| {
                let machine = key.strip_prefix("d.")?;
                let list = host_shim::json::from_slice::<Published>(&kept.value).ok()?;
                Some((machine.to_string(), list))
            })
            .collect()
    })
}
