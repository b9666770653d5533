//! Fuzzing harnesses for sparti (run with cargo-fuzz; see `fuzz/README.md`).
//!
//! - [`ops`]: operation sequences run against every structure and the
//!   brute force side by side.
//! - [`parsers`]: arbitrary bytes fed to the scene-file and query-file
//!   parsers of the `sparti` tool.
//! - [`replay`]: a corpus folder replayed through a harness (the tests of
//!   sparti and the tool include it).

pub mod ops;
pub mod parsers;
pub mod replay;
