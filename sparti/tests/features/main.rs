//! The tests of what the `rayon` and `serde` features change, in a test
//! binary of their own: the parallel pair search, batched queries and
//! moves, queries from many threads, saving and loading. Only a build with
//! both features makes it (`required-features` in `Cargo.toml`); CI runs
//!
//! ```text
//! cargo test -p sparti --features rayon,serde --test features
//! ```
//!
//! Apart from `tests/it` so that the run with the features compiles only
//! these modules and the shared suite's helpers (`tests/it/common`), not
//! the whole suite a second time. The batches and the shared queries
//! (`batch.rs`, `shared_queries.rs`) are in `tests/it` too, where `cargo
//! test` runs them without the features, on their single-threaded paths.

// These tests use only some of the shared suite's helpers.
#[path = "../it/common/mod.rs"]
#[allow(unused_macros, unused_imports)]
mod common;

mod batch;
mod parallel_pairs;
mod serde;
mod shared_queries;
