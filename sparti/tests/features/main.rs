//! The tests of what the `rayon` and `serde` features change, in a test
//! binary of their own: the parallel pair search, batched queries and
//! moves, queries from many threads, saving and loading. `cargo test` runs
//! them without the features (the batches and the shared queries then take
//! their single-threaded paths; the parallel pairs and serde modules are
//! empty), and CI runs them again with both:
//!
//! ```text
//! cargo test -p sparti --features rayon,serde --test features
//! ```
//!
//! Apart from `tests/it` so that the run with the features compiles only
//! these modules and the shared suite's helpers (`tests/it/common`), not
//! the whole suite a second time.

// Without the `rayon` feature no module here uses `every_structure!`.
#[path = "../it/common/mod.rs"]
#[allow(unused_macros, unused_imports)]
mod common;

mod batch;
mod parallel_pairs;
mod serde;
mod shared_queries;
