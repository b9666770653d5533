//! Records the commit the binary is built from (`SPARTI_BENCH_COMMIT`),
//! so that a report names the code it measured wherever the binary runs
//! (a copy carried to another machine, or run outside the checkout).

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
        .filter(|s| !s.is_empty())
}

fn main() {
    let commit = git(&["rev-parse", "--short", "HEAD"]).map_or_else(
        || "unknown".to_string(),
        |c| {
            // Changes to tracked files not yet committed.
            let dirty = git(&["status", "--porcelain", "--untracked-files=no"]).is_some();
            if dirty { format!("{c}+changes") } else { c }
        },
    );
    println!("cargo:rustc-env=SPARTI_BENCH_COMMIT={commit}");
    // Run again when HEAD moves (a commit, a checkout), the index changes
    // (a file staged) or a source of the crates the binary is built from
    // changes (so that `+changes` is current). Once a build script names
    // what it watches, cargo watches nothing else for it. Only paths that
    // exist: cargo takes a missing one as changed, and would run this
    // script at every build.
    for dir in [
        "src",
        "../sparti/src",
        "../sparti-scenes/src",
        "../sparti-cli/src",
        "../Cargo.lock",
    ] {
        if std::path::Path::new(dir).exists() {
            println!("cargo:rerun-if-changed={dir}");
        }
    }
    // (`--git-path` answers relative to this package's folder, or
    // absolute in a worktree: cargo takes either.)
    let branch = git(&["symbolic-ref", "-q", "HEAD"]);
    let watched = ["HEAD", "index", "packed-refs"]
        .into_iter()
        .chain(branch.as_deref());
    for path in watched {
        if let Some(p) = git(&["rev-parse", "--git-path", path])
            && std::path::Path::new(&p).exists()
        {
            println!("cargo:rerun-if-changed={p}");
        }
    }
}
