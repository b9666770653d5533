//! The tool's integration tests, in one test binary (one link instead of
//! one per file). Each module is one subject; run one with its name as a
//! filter, for example `cargo test -p sparti-cli --test it cli::`.

mod checker;
mod util;

mod bench;
mod cli;
mod demo;
mod fuzz_replay;
