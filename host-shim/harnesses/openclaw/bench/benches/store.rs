//! The OpenClaw store on a big state folder: 1,000 sessions of about 3 MB each in one
//! agent's database (written once under the temporary folder in OpenClaw 2026.9.6's
//! table layout, then reused), listed and read through the component, beside the other
//! stores' figures. `cargo bench -p host-shim-openclaw-bench`. The database sits in the
//! page cache after the first run: these are the store's costs, not the disk's.

use criterion::{Criterion, criterion_group, criterion_main};
use host_shim::{LocalPresence, StateDir};
use host_shim_openclaw::OpenClawStore;
use host_shim_openclaw_bench::{SESSIONS, id, openclaw_state};
use std::sync::Arc;

fn openclaw(c: &mut Criterion) {
    let state = openclaw_state();
    let state_root = std::env::temp_dir().join(format!(
        "session-tools-bench-openclaw-inbox-{}",
        std::process::id()
    ));
    let inbox: host_shim::SharedInbox = Arc::new(StateDir::open(&state_root).unwrap());
    let presence = Arc::new(LocalPresence::open(&state_root).unwrap());
    benches::store_group(
        c,
        "openclaw store, 1,000 sessions of 3 MB",
        "open the database, one query",
        SESSIONS,
        || OpenClawStore::open(&state, inbox.clone(), presence.clone()),
        benches::list_and_read(&id(0), &id(1)),
    );
    let _ = std::fs::remove_dir_all(state_root);
}

criterion_group!(benches, openclaw);
criterion_main!(benches);
