//! Runs `sparti bench` and `sparti tune`: they succeed on the shipped
//! scenes, print their tables, write well-formed SVG plots (one line per
//! structure) and an HTML report; and bad input exits with code 2 and a
//! `FILE:LINE:` message, with nothing on stdout. Tiny sizes (`--sizes`)
//! keep the debug build's run short.

use std::path::Path;

use crate::util::{root, sparti, temp_dir, text};

fn scene(name: &str) -> String {
    root().join("scenes").join(name).display().to_string()
}

/// The checks of a plot: an SVG document with one polyline per structure.
fn check_svg(path: &Path, structures: &[&str]) {
    let svg = std::fs::read_to_string(path).unwrap();
    assert!(svg.starts_with("<svg"), "{}", path.display());
    assert!(svg.trim_end().ends_with("</svg>"), "{}", path.display());
    assert!(svg.contains("xmlns=\"http://www.w3.org/2000/svg\""));
    assert_eq!(
        svg.matches("<polyline").count(),
        structures.len(),
        "{}",
        path.display()
    );
    for s in structures {
        assert!(
            svg.contains(&format!("<title>{s}</title>")),
            "{}: no line for {s}",
            path.display()
        );
    }
    // Every element opened is closed: tags balance.
    for tag in ["svg", "polyline", "title", "text"] {
        let open =
            svg.matches(&format!("<{tag} ")).count() + svg.matches(&format!("<{tag}>")).count();
        let close = svg.matches(&format!("</{tag}>")).count();
        assert_eq!(open, close, "{}: <{tag}> unbalanced", path.display());
    }
    assert!(!svg.contains("NaN") && !svg.contains("inf"));
}

#[test]
fn bench_quick_writes_the_table_the_plots_and_the_report() {
    let dir = temp_dir("bench-quick");
    let out_dir = dir.display().to_string();
    let discs = scene("discs2d.csv");
    let bullets = scene("bullets3d.csv");
    let out = sparti(&[
        "bench", "--quick", "--sizes", "150,300", "--out", &out_dir, &discs, &bullets,
    ]);
    let stdout = text(&out.stdout);
    assert!(
        out.status.success(),
        "{:?}\n{}",
        out.status,
        text(&out.stderr)
    );
    // The table: a header and one row per structure, scenario and size.
    let header = stdout.lines().next().unwrap();
    for col in [
        "scenario",
        "N",
        "structure",
        "ms/frame",
        "of it queries",
        "ns/object",
        "tests/object",
        "vs best",
    ] {
        assert!(header.contains(col), "{header}");
    }
    // The scenes' query files (beside them) are timed; the built-in
    // scenarios have no queries.
    let queries_cell = |l: &str| l.split_whitespace().nth(5).map(str::to_string);
    for l in stdout
        .lines()
        .filter(|l| l.contains(".csv") && !l.starts_with("note:"))
    {
        let cell = queries_cell(l).unwrap();
        assert!(cell.parse::<f64>().is_ok_and(|ms| ms > 0.0), "{l}");
    }
    for l in stdout.lines().filter(|l| l.contains(" uniform ")) {
        assert_eq!(queries_cell(l).as_deref(), Some("-"), "{l}");
    }
    assert!(
        stdout.contains("every frame also answers the 21 queries of"),
        "{stdout}"
    );
    for scenario in ["uniform", "clustered", "flat", "bullets"] {
        for (dim, structures) in [
            ("3D", ["brute", "octree", "loose-octree", "bsp"]),
            ("2D", ["brute", "quadtree", "loose-quadtree", "bsp"]),
        ] {
            for n in ["150", "300"] {
                for s in structures {
                    let row = stdout.lines().find(|l| {
                        let cells: Vec<&str> = l.split_whitespace().collect();
                        cells.len() >= 4
                            && cells[0] == dim
                            && cells[1] == scenario
                            && cells[2] == n
                            && cells[3] == s
                    });
                    assert!(row.is_some(), "no row {dim} {scenario} {n} {s}\n{stdout}");
                }
            }
            check_svg(
                &dir.join(format!("{}d-{scenario}.svg", &dim[..1])),
                &structures,
            );
        }
    }
    // The scene files are in the table too.
    assert!(
        stdout
            .lines()
            .any(|l| l.contains("discs2d.csv") && l.contains("loose-quadtree"))
    );
    assert!(
        stdout
            .lines()
            .any(|l| l.contains("bullets3d.csv") && l.contains("octree"))
    );
    let html = std::fs::read_to_string(dir.join("index.html")).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.trim_end().ends_with("</html>"));
    assert_eq!(html.matches("<img src=\"").count(), 8);
    assert!(html.contains("3d-uniform.svg") && html.contains("2d-bullets.svg"));
    assert!(html.contains("<table>") && html.contains("discs2d.csv"));
    let csv = std::fs::read_to_string(dir.join("results.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 2 * 4 * 2 * 4 + 2 * 4);
}

#[test]
fn tune_recommends_a_setting_with_figures() {
    let out = sparti(&["tune", &scene("discs2d.csv"), "--quick"]);
    let stdout = text(&out.stdout);
    assert!(
        out.status.success(),
        "{:?}\n{}",
        out.status,
        text(&out.stderr)
    );
    assert!(stdout.contains("2D, 4 frames"), "{stdout}");
    // The query file beside the scene is part of every frame.
    assert!(
        stdout.contains("then the 21 queries of") && stdout.contains("discs2d.queries"),
        "{stdout}"
    );
    let header = stdout
        .lines()
        .find(|l| l.starts_with("rank"))
        .expect("a table");
    for col in [
        "structure",
        "settings",
        "ms/frame",
        "of it queries",
        "tests/object",
        "speed vs default",
    ] {
        assert!(header.contains(col), "{header}");
    }
    // Rank 1 and the default are in the table; every 2D structure appears.
    assert!(stdout.lines().any(|l| l.trim_start().starts_with("1 ")));
    assert!(stdout.contains("quadtree (default)"));
    for s in ["brute", "quadtree", "loose-quadtree", "bsp"] {
        assert!(
            stdout
                .lines()
                .any(|l| l.split_whitespace().nth(1) == Some(s)),
            "no {s} row\n{stdout}"
        );
    }
    let rec = stdout
        .lines()
        .find(|l| l.starts_with("recommendation: "))
        .expect("a recommendation");
    assert!(rec.contains("ms per frame"), "{rec}");
    assert!(
        rec.contains("use ") || rec.contains("keep the default"),
        "{rec}"
    );
}

#[test]
fn tune_works_in_3d() {
    let out = sparti(&["tune", &scene("bullets3d.csv"), "--quick"]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(stdout.contains("octree (default)"), "{stdout}");
    assert!(stdout.contains("loose-octree") && stdout.contains("recommendation: "));
}

/// Bad input: exit code 2, a message on stderr, nothing on stdout.
fn bad(args: &[&str], expected: &str) {
    let out = sparti(args);
    assert_eq!(
        out.status.code(),
        Some(2),
        "sparti {args:?}: {}",
        text(&out.stderr)
    );
    assert!(
        out.stdout.is_empty(),
        "sparti {args:?}: {}",
        text(&out.stdout)
    );
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(expected),
        "sparti {args:?}: expected `{expected}` in\n{stderr}"
    );
}

#[test]
fn bad_input_exits_2_with_file_and_line() {
    let dir = temp_dir("bench-bad");
    let malformed = dir.join("malformed.csv");
    std::fs::write(
        &malformed,
        "frame,id,kind,x,y,r\n0,1,circle,0,0,1\n0,2,circle,1,NaN,1\n",
    )
    .unwrap();
    let too_far = dir.join("too-far.csv");
    std::fs::write(
        &too_far,
        "frame,id,kind,x,y,r\n0,1,circle,0,0,1\n0,2,circle,3e30,0,1\n",
    )
    .unwrap();
    let m = malformed.display().to_string();
    let f = too_far.display().to_string();
    let missing = dir.join("missing.csv").display().to_string();
    let out_dir = dir.join("report").display().to_string();
    bad(
        &["tune", &missing],
        &format!("{missing}: cannot read the file"),
    );
    bad(&["tune", &m], &format!("{m}:3: "));
    // A query file of the wrong dimension, named or beside the scene.
    let discs2d = scene("discs2d.queries");
    bad(
        &["tune", &scene("bullets3d.csv"), "--queries", &discs2d],
        &format!("{discs2d}:3: box takes 6 values in 3D"),
    );
    let beside = dir.join("beside.csv");
    std::fs::copy(scene("bullets3d.csv"), &beside).unwrap();
    std::fs::copy(scene("discs2d.queries"), dir.join("beside.queries")).unwrap();
    let b = beside.display().to_string();
    let bq = dir.join("beside.queries").display().to_string();
    bad(&["tune", &b], &format!("{bq}:3: "));
    bad(
        &["bench", "--quick", "--out", &out_dir, &b],
        &format!("{bq}:3: "),
    );
    bad(&["tune", &f], &format!("{f}:3: "));
    bad(
        &["bench", "--quick", "--out", &out_dir, &missing],
        &format!("{missing}: cannot read"),
    );
    bad(
        &["bench", "--quick", "--out", &out_dir, &m],
        &format!("{m}:3: "),
    );
    bad(&["bench", "--sizes", "0", "--out", &out_dir], "--sizes");
    bad(&["tune"], "SCENE");
    // Nothing was measured, so no report was written.
    assert!(!dir.join("report").exists());
}
