//! The `parsers` fuzzing harness on stable, in `cargo test`: every input of
//! its seed corpus (`fuzz/corpus/parsers`) and any regression input
//! (`fuzz/regressions/parsers`) goes through the scene and query parsers,
//! and what parses is replayed through the brute force, a tree and a BSP,
//! which must agree (see `fuzz/README.md`).

#[path = "../../../fuzz/src/parsers.rs"]
mod parsers;

use std::path::Path;

fn replay_dir(dir: &str) -> usize {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(dir);
    let Ok(entries) = std::fs::read_dir(&path) else {
        return 0;
    };
    let mut files: Vec<_> = entries
        .map(|e| e.expect("entry").path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    for f in &files {
        let data = std::fs::read(f).expect("readable");
        let r = std::panic::catch_unwind(|| parsers::run(&data));
        assert!(r.is_ok(), "fuzz input {} fails", f.display());
    }
    files.len()
}

#[test]
fn parsers_seed_corpus_and_regressions_pass() {
    assert!(
        replay_dir("fuzz/corpus/parsers") > 0,
        "the seed corpus is empty"
    );
    replay_dir("fuzz/regressions/parsers");
}
