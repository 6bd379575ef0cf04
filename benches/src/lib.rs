//! The benchmarks live in `benches/tools.rs`: `cargo bench -p benches`.
