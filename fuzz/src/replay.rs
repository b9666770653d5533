//! Replays the files of a corpus folder through a harness, on stable: the
//! tests of sparti (`ops`) and of the `sparti` tool (`parsers`) run the
//! seed corpora and the regressions this way, including this file by path.

use std::path::Path;

/// Runs `run` on every file of `dir` (relative to the repository root), in
/// name order, and returns how many there were (0 when the folder does not
/// exist).
///
/// # Panics
/// Naming the first file whose run panics.
pub fn replay_dir(dir: &str, run: impl Fn(&[u8]) + std::panic::RefUnwindSafe) -> usize {
    // Every crate that includes this file sits one level below the root.
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
        let r = std::panic::catch_unwind(|| run(&data));
        assert!(r.is_ok(), "fuzz input {} fails", f.display());
    }
    files.len()
}
