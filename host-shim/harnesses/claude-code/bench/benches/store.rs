//! The Claude Code store on a big folder: 1,000 sessions of 3 MB each (written once
//! under the temporary folder, then reused), listed and read through the component.
//! `cargo bench -p host-shim-claude-code-bench`. The transcripts sit in the page cache after
//! the first run: these are the store's costs, not the disk's.

use benches::{StoreTimings, Timed};
use criterion::{Criterion, criterion_group, criterion_main};
use host_shim::CallRequest;
use host_shim_claude_code::ClaudeStore;
use host_shim_claude_code_bench::{id, projects};
use host_shim_testkit::corpus::{SESSION_BYTES, SESSIONS};
use std::io::Write;

fn claude(c: &mut Criterion) {
    let projects = projects();
    let state_folder = benches::BenchState::new("claude");
    let open = || {
        ClaudeStore::open(
            &projects,
            state_folder.inbox.clone(),
            state_folder.presence.clone(),
            None,
        )
        .unwrap()
    };
    {
        let store = open();
        let reads = store.reads();
        println!(
            "first listing of {SESSIONS} transcripts of {} MB: {} summarized, {} KiB read",
            SESSION_BYTES >> 20,
            reads.summarized,
            reads.summary_bytes >> 10
        );
    }
    // The store lists as it opens: the first read is of a store as opened.
    let timings = StoreTimings {
        cached_list: "sessions_list, cached (stat every transcript)",
        listed_before_read: false,
        ..StoreTimings::new(
            "claude store, 1,000 sessions of 3 MB",
            SESSIONS,
            "open the store: bounded reads of every transcript",
        )
    };
    let (list, read) = benches::list_and_read(&id(0), &id(1));
    let calls = (list.clone(), read.clone());
    let Timed {
        mut group,
        mut cached,
    } = benches::store_timings(c, &timings, open, &calls);
    // A live store: one transcript is being written. Before each call a whole line is
    // appended to it (a copy of the folder's session 2, so the others stay as written).
    let live_path = projects
        .join("-home-bench-project-2")
        .join(format!("{}.jsonl", id(2)));
    let pristine = std::fs::read(&live_path).unwrap();
    let line = format!(
        "{{\"type\":\"assistant\",\"sessionId\":\"{}\",\"timestamp\":\"2026-11-03T11:00:00.000Z\",\"message\":{{\"role\":\"assistant\",\"model\":\"claude-opus-4-5-20251101\",\"content\":[{{\"type\":\"text\",\"text\":\"{}\"}}]}}}}\n",
        id(2),
        "w".repeat(400)
    );
    let append = || {
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&live_path)
            .unwrap();
        file.write_all(line.as_bytes()).unwrap();
    };
    let read_live = CallRequest {
        arguments: format!(r#"{{"session_id": "{}"}}"#, id(2)),
        ..read.clone()
    };
    group.bench_function(
        "sessions_list, live (one transcript appended to before each listing)",
        |b| {
            b.iter(|| {
                append();
                cached.again(&list)
            })
        },
    );
    group.bench_function(
        "sessions_read of a 3 MB session being written (a line appended before each read)",
        |b| {
            b.iter(|| {
                append();
                assert!(cached.again(&read_live).unwrap().contains("wwww"));
            })
        },
    );
    group.finish();
    std::fs::write(&live_path, pristine).unwrap();
}

criterion_group!(benches, claude);
criterion_main!(benches);
