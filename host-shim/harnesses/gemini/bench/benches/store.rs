//! The Gemini CLI store on a big `~/.gemini`: 1,000 sessions of 3 MB each and 100
//! subagents (written once under the temporary folder in Gemini CLI 0.61.0's shape,
//! then reused), listed and read through the component, beside the other stores'
//! figures. `cargo bench -p host-shim-gemini-bench`. The files sit in the page cache
//! after the first run: these are the store's costs, not the disk's.

use benches::StoreTimings;
use criterion::{Criterion, criterion_group, criterion_main};
use host_shim_gemini::GeminiStore;
use host_shim_gemini_bench::{SUBAGENTS, gemini_home, id};
use host_shim_testkit::corpus::SESSIONS;

fn gemini(c: &mut Criterion) {
    let home = gemini_home();
    let state_folder = benches::BenchState::new("gemini");
    let timings = StoreTimings::new(
        "gemini store, 1,000 sessions of 3 MB",
        SESSIONS + SUBAGENTS,
        "open the store: bounded reads of every session file",
    );
    let open = || GeminiStore::open(&home, state_folder.inbox.clone());
    benches::time_store(c, &timings, open, (&id(0), &id(1)));
}

criterion_group!(benches, gemini);
criterion_main!(benches);
