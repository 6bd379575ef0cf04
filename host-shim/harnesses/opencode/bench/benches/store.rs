//! The OpenCode store on a big database: 1,000 sessions of about 3 MB each (written
//! once under the temporary folder in OpenCode 1.18.33's table layout, then reused),
//! listed and read through the component, beside the Claude and Codex stores' figures.
//! `cargo bench -p host-shim-opencode-bench`. The database sits in the page cache after
//! the first run: these are the store's costs, not the disk's.

use benches::StoreTimings;
use criterion::{Criterion, criterion_group, criterion_main};
use host_shim_opencode::OpenCodeStore;
use host_shim_opencode_bench::{id, opencode_db};

fn opencode(c: &mut Criterion) {
    let db = opencode_db();
    let state_folder = benches::BenchState::new("opencode");
    let (inbox, presence) = (&state_folder.inbox, &state_folder.presence);
    let open = || OpenCodeStore::open(&db, inbox.clone(), presence.clone());
    // Each read asks the database afresh: the first read is of a store as opened.
    let timings = StoreTimings {
        cached_list: "sessions_list, cached (nothing written since)",
        first_read: "sessions_read of a 3 MB session, first (one query)",
        listed_before_read: false,
        ..StoreTimings::new(
            "opencode store, 1,000 sessions of 3 MB",
            1000,
            "open the database, one query",
        )
    };
    benches::time_store(c, &timings, open, (&id(0), &id(1)));
}

criterion_group!(benches, opencode);
criterion_main!(benches);
