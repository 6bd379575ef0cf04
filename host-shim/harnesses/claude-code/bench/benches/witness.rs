//! What a Claude Code hook reads while an offer waits for the transcript to show it,
//! over a transcript of 200 MB (written once under the temporary folder): from where
//! it stood when the offer was made (one line appended since), or, with no mark (an
//! offer made elsewhere), its last 32 MiB. `cargo bench -p host-shim-claude-code-bench
//! --bench witness`.

use criterion::{Criterion, criterion_group, criterion_main};
use host_shim::harnesses::logfile::ReadFrom;
use host_shim::inbox::{InboxBackend, MemoryInbox, SpooledMessage, record_marks};
use host_shim_claude_code::handed_over_ids;
use std::io::Write;

fn witness(c: &mut Criterion) {
    let dir = std::env::temp_dir().join("host-shim-bench-witness");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("long.jsonl");
    let line = format!(
        "{{\"type\":\"assistant\",\"sessionId\":\"s1\",\"message\":{{\"role\":\"assistant\",\"content\":[{{\"type\":\"text\",\"text\":\"{}\"}}]}}}}\n",
        "w".repeat(1000)
    );
    if std::fs::metadata(&path).map_or(true, |m| m.len() < 200 << 20) {
        let mut file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        for _ in 0..(200 << 20) / line.len() + 1 {
            file.write_all(line.as_bytes()).unwrap();
        }
    }
    // An id of this run's own: the marks of earlier runs stay in the temporary folder.
    let id = format!("m-{:012x}", host_shim::inbox::now_ns() & 0xffff_ffff_ffff);
    let ids = host_shim::contract::latest::MessageIds {
        message_id: id.clone(),
        in_reply_to: None,
    };
    let inbox = MemoryInbox::new();
    let message = SpooledMessage::new("s1", host_shim::DeliveryMode::Queue, "hi", "k1", false);
    inbox.put(&message.with_ids(&ids)).unwrap();
    let waiting = inbox.waiting("s1").unwrap().messages;
    record_marks::mark(&path, &[&id]);
    inbox.offer("s1", waiting, &mut |_| Ok(())).unwrap();
    // What the harness wrote after the answer (not the frame: the offer keeps waiting).
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    file.write_all(line.as_bytes()).unwrap();
    let settle = |from_mark: bool| {
        let settled = inbox.settle("s1", std::time::Duration::MAX, &mut |ids| {
            let from = match from_mark {
                true => ReadFrom::Offers(ids),
                false => ReadFrom::End,
            };
            handed_over_ids(&path, from)
        });
        assert!(settled.unwrap().handed_over.is_empty());
    };
    let mut group = c.benchmark_group("a hook's settling, transcript of 200 MB");
    group.bench_function(
        "from where it stood at the offer (one line appended)",
        |b| b.iter(|| settle(true)),
    );
    group.bench_function("with no mark: its last 32 MiB", |b| {
        b.iter(|| settle(false))
    });
    group.finish();
}

criterion_group!(benches, witness);
criterion_main!(benches);
