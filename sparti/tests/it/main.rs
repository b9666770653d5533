//! sparti's integration tests, in one test binary (one link instead of one
//! per file: a first `cargo test` compiles and links the shared suite once).
//! Each module is one subject; run one with its name as a filter, for
//! example `cargo test -p sparti --test it oracle::`.
//!
//! Two are kept apart. The soak test (`tests/soak.rs`) checks the whole
//! process's resident memory, which other tests running beside it in the
//! same process would disturb. The tests of what the `rayon` and `serde`
//! features change (`tests/features`) are a binary of their own, so that
//! CI's run with the features compiles only them.

mod common;

mod bad_input;
mod behaviour;
mod bsp;
mod bulk_build;
mod determinism;
mod fuzz_replay;
mod geometry;
mod loose;
mod memory;
mod octree;
mod oracle;
mod oracle_bsp;
mod oracle_loose;
mod stress;
