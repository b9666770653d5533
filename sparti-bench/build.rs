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
            // Changes to tracked files not yet committed (as they were
            // when this script last ran: it runs again when HEAD, the
            // branch or the index changes, not at every edit).
            let dirty = git(&["status", "--porcelain", "--untracked-files=no"]).is_some();
            if dirty { format!("{c}+changes") } else { c }
        },
    );
    println!("cargo:rustc-env=SPARTI_BENCH_COMMIT={commit}");
    // Built again when HEAD moves (a commit, a checkout) or a tracked
    // file changes (cargo watches the package's own files; the ones
    // below cover the commit).
    // (Only files that exist: cargo takes a missing one as changed.)
    let branch = git(&["symbolic-ref", "-q", "HEAD"]);
    let watched = ["HEAD", "index", "packed-refs"]
        .into_iter()
        .chain(branch.as_deref());
    for path in watched {
        if let Some(p) = git(&["rev-parse", "--path-format=absolute", "--git-path", path])
            && std::path::Path::new(&p).exists()
        {
            println!("cargo:rerun-if-changed={p}");
        }
    }
}
