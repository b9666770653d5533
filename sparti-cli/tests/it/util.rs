//! What the tool's tests share: the repository's root, running the `sparti`
//! binary, its output as text, fresh folders.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository's root (the shipped scenes are in `scenes/`).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Runs the `sparti` binary of this build with `args`.
pub fn sparti(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sparti"))
        .args(args)
        .output()
        .expect("the binary runs")
}

/// Output bytes as text.
pub fn text(b: &[u8]) -> String {
    String::from_utf8(b.to_vec()).expect("UTF-8 output")
}

/// A fresh empty folder `name` under the target folder.
pub fn temp_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
