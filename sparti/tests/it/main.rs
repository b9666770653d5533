//! sparti's integration tests, in one test binary (one link instead of one
//! per file: a first `cargo test` compiles and links the shared suite once).
//! Each module is one subject; run one with its name as a filter, for
//! example `cargo test -p sparti --test it oracle::`.
//!
//! Each test binary compiles every structure's code again (the trees are
//! generic), so the suite keeps to as few as it can:
//! - the soak test (`soak.rs`) checks the resident memory of a whole
//!   process, which the other tests running beside it would disturb: it
//!   runs in a process of its own, this binary started again with only
//!   that test selected;
//! - the batches and the queries from many threads (`../features/batch.rs`,
//!   `../features/shared_queries.rs`) run here on their single-threaded
//!   paths, and again, on rayon's threads, in the features' binary
//!   (`tests/features`), which only `--features rayon,serde` builds, so
//!   that CI's run with the features compiles only them.

mod common;

mod bad_input;
#[path = "../features/batch.rs"]
mod batch;
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
#[path = "../features/shared_queries.rs"]
mod shared_queries;
mod soak;
mod stress;
