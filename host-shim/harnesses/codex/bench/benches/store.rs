//! The Codex store on a big CODEX_HOME: 1,000 threads of 3 MB each (written once under
//! the temporary folder in Codex 0.169.0's rollout shape, then reused), listed and read
//! through the component, beside the other stores' figures (both with Claude Code's
//! in one server: `benches/benches/together.rs`).
//! `cargo bench -p host-shim-codex-bench`. The rollouts sit in the page cache after the
//! first run: these are the store's costs, not the disk's.

use benches::{StoreTimings, Timed};
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use host_shim_codex::CodexStore;
use host_shim_codex_bench::{codex_home, id};
use std::io::Write;
use std::path::{Path, PathBuf};

fn codex(c: &mut Criterion) {
    let home = codex_home();
    let state_folder = benches::BenchState::new("codex");
    let open = || CodexStore::open(&home, state_folder.inbox.clone());
    let timings = StoreTimings {
        cached_list: "sessions_list, cached (stat every rollout)",
        first_read: "sessions_read of a 3 MB thread, first (parse it whole)",
        cached_read: "sessions_read of a 3 MB thread, cached",
        ..StoreTimings::new(
            "codex store, 1,000 threads of 3 MB",
            1000,
            "open the store: bounded reads of every rollout",
        )
    };
    let (list, read) = benches::list_and_read(&id(0), &id(1));
    let Timed {
        mut group,
        mut cached,
    } = benches::store_timings(c, &timings, open, &(list, read.clone()));
    // A live thread: it grew since the store last looked (one line appended before
    // each read; the rollout is cut back after).
    let grown = rollout_of(&home, 1);
    let length = std::fs::metadata(&grown).unwrap().len();
    group.bench_function(
        "sessions_read of a 3 MB thread that grew since the last call",
        |b| {
            b.iter_batched(
                || append_turn(&grown),
                |()| cached.again(&read),
                BatchSize::PerIteration,
            )
        },
    );
    std::fs::OpenOptions::new()
        .write(true)
        .open(&grown)
        .unwrap()
        .set_len(length)
        .unwrap();
    group.finish();
}

/// The rollout of thread `n`.
fn rollout_of(home: &Path, n: usize) -> PathBuf {
    let day = home.join(format!("sessions/2026/11/{:02}", 1 + n % 28));
    day.join(format!(
        "rollout-2026-11-{:02}T10-00-00-{}.jsonl",
        1 + n % 28,
        id(n)
    ))
}

/// One more of the person's messages at the rollout's end, as a live thread grows
/// (each with the next ordinal, as Codex numbers them).
fn append_turn(path: &Path) {
    static ORDINAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1_000_000);
    let ordinal = ORDINAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut file = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    writeln!(
        file,
        r#"{{"timestamp":"2026-11-02T11:00:00.000Z","ordinal":{ordinal},"type":"response_item","payload":{{"type":"message","role":"user","content":[{{"type":"input_text","text":"One more thing."}}]}}}}"#
    )
    .unwrap();
}

criterion_group!(benches, codex);
criterion_main!(benches);
