//! The Copilot CLI store on a big COPILOT_HOME: 1,000 sessions of 3 MB each, each with a
//! subagent (written once under the temporary folder in Copilot CLI 1.0.102's shape,
//! then reused), listed and read through the component, beside the other stores'
//! figures.
//! `cargo bench -p host-shim-copilot-bench`. The streams sit in the page cache after the
//! first run: these are the store's costs, not the disk's.

use benches::StoreTimings;
use criterion::{Criterion, criterion_group, criterion_main};
use host_shim_copilot::CopilotStore;
use host_shim_copilot_bench::{copilot_home, id};

fn copilot(c: &mut Criterion) {
    let home = copilot_home();
    let state_folder = benches::BenchState::new("copilot");
    let timings = StoreTimings::new(
        "copilot store, 1,000 sessions of 3 MB",
        2000,
        "open the store: bounded reads of every event stream, one query of the session store",
    );
    let open = || CopilotStore::open(&home, state_folder.inbox.clone());
    benches::time_store(c, &timings, open, (&id(0), &id(1)));
}

criterion_group!(benches, copilot);
criterion_main!(benches);
