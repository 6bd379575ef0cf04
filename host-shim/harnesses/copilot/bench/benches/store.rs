//! The Copilot CLI store on a big COPILOT_HOME: 1,000 sessions of 3 MB each, each with a
//! subagent (written once under the temporary folder in Copilot CLI 1.0.102's shape,
//! then reused), listed and read through the component, beside the other stores'
//! figures.
//! `cargo bench -p host-shim-copilot-bench`. The streams sit in the page cache after the
//! first run: these are the store's costs, not the disk's.

use criterion::{Criterion, criterion_group, criterion_main};
use host_shim::StateDir;
use host_shim_copilot::CopilotStore;
use host_shim_copilot_bench::{copilot_home, id};
use std::sync::Arc;

fn copilot(c: &mut Criterion) {
    let home = copilot_home();
    let state_root = std::env::temp_dir().join(format!(
        "session-tools-bench-copilot-state-{}",
        std::process::id()
    ));
    let inbox: host_shim::SharedInbox = Arc::new(StateDir::open(&state_root).unwrap());
    benches::store_group(
        c,
        "copilot store, 1,000 sessions of 3 MB",
        "open the store: bounded reads of every event stream, one query of the session store",
        2000,
        || CopilotStore::open(&home, inbox.clone()),
        benches::list_and_read(&id(0), &id(1)),
    );
    let _ = std::fs::remove_dir_all(state_root);
}

criterion_group!(benches, copilot);
criterion_main!(benches);
