//! The `parsers` fuzzing harness on stable, in `cargo test`: every input of
//! its seed corpus (`fuzz/corpus/parsers`) and any regression input
//! (`fuzz/regressions/parsers`) goes through the scene and query parsers,
//! and what parses is replayed through the brute force, a tree and a BSP,
//! which must agree (see `fuzz/README.md`).

#[path = "../../../fuzz/src/parsers.rs"]
mod parsers;
#[path = "../../../fuzz/src/replay.rs"]
mod replay;

/// Every file of `dir` through the `parsers` harness.
fn replay_dir(dir: &str) -> usize {
    replay::replay_dir(dir, parsers::run)
}

#[test]
fn parsers_seed_corpus_and_regressions_pass() {
    assert!(
        replay_dir("fuzz/corpus/parsers") > 0,
        "the seed corpus is empty"
    );
    replay_dir("fuzz/regressions/parsers");
}
