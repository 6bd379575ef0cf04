//! The OpenClaw store on a big state folder: 1,000 sessions of about 3 MB each in one
//! agent's database (written once under the temporary folder in OpenClaw 2026.9.6's
//! table layout, then reused), listed and read through the component, beside the other
//! stores' figures. `cargo bench -p host-shim-openclaw-bench`. The database sits in the
//! page cache after the first run: these are the store's costs, not the disk's.

use benches::StoreTimings;
use criterion::{Criterion, criterion_group, criterion_main};

use host_shim_openclaw::OpenClawStore;
use host_shim_openclaw_bench::{id, openclaw_state};
use host_shim_testkit::corpus::SESSIONS;

fn openclaw(c: &mut Criterion) {
    let state = openclaw_state();
    let state_folder = benches::BenchState::new("openclaw");
    let (inbox, presence) = (&state_folder.inbox, &state_folder.presence);
    let open = || OpenClawStore::open(&state, inbox.clone(), presence.clone());
    let timings = StoreTimings::new(
        "openclaw store, 1,000 sessions of 3 MB",
        SESSIONS,
        "open the database, one query",
    );
    benches::time_store(c, &timings, open, (&id(0), &id(1)));
}

criterion_group!(benches, openclaw);
criterion_main!(benches);
