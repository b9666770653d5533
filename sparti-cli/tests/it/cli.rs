//! Runs the `sparti` binary: every command and every index on the scenes
//! shipped in `scenes/`, against expected outputs that an independent
//! brute-force checker (`checker/`, no sparti code) regenerates; and every
//! kind of bad input, which must give exit code 2, a `FILE:LINE:` message
//! and nothing on stdout.
//!
//! `SPARTI_BLESS=1 cargo test -p sparti-cli --test it cli::` rewrites the
//! expected files from the checker.

use crate::checker;
use crate::util::{root, sparti, text};

use std::path::{Path, PathBuf};

/// The structures this build must provide, per dimension.
const INDEXES_2D: &[&str] = &["brute", "quadtree", "loose-quadtree", "bsp"];
const INDEXES_3D: &[&str] = &["brute", "octree", "loose-octree", "bsp"];

/// The shipped scenes: (name, indexes, frame for a `--frame` run).
const SCENES: &[(&str, &[&str], i64)] = &[("discs2d", INDEXES_2D, 1), ("bullets3d", INDEXES_3D, 2)];

fn scene_path(name: &str, ext: &str) -> PathBuf {
    root().join("scenes").join(format!("{name}.{ext}"))
}

/// Runs a command that must succeed and returns its stdout.
fn ok(args: &[&str]) -> String {
    let out = sparti(args);
    assert!(
        out.status.success(),
        "sparti {args:?}: {:?}\n{}",
        out.status,
        text(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "sparti {args:?}: {}",
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// Compares a regenerated expected output with the shipped file, or
/// rewrites the file under `SPARTI_BLESS`.
fn expected_file(path: &Path, regenerated: &str) {
    if std::env::var_os("SPARTI_BLESS").is_some() {
        std::fs::write(path, regenerated).unwrap();
        return;
    }
    let shipped = std::fs::read_to_string(path).unwrap();
    assert!(
        shipped == regenerated,
        "{} is out of date with the checker (SPARTI_BLESS=1 rewrites it)",
        path.display()
    );
}

#[test]
fn pairs_on_shipped_scenes_match_the_independent_checker_for_every_index() {
    for &(name, indexes, frame) in SCENES {
        let scene = scene_path(name, "csv");
        let data = checker::parse_scene(&std::fs::read_to_string(&scene).unwrap());
        let expected = checker::pairs(&data, None);
        expected_file(&scene_path(name, "pairs.csv"), &expected);
        assert!(expected.lines().count() > 20, "{name}: a scene with pairs");
        let s = scene.to_str().unwrap();
        let default = ok(&["pairs", s]);
        checker::compare(&expected, &default).unwrap_or_else(|e| panic!("{name} default: {e}"));
        let one = checker::pairs(&data, Some(frame));
        let f = frame.to_string();
        for index in indexes {
            let out = ok(&["pairs", s, "--index", index]);
            assert_eq!(
                out, default,
                "{name}: {index} differs from the default index"
            );
            let out = ok(&["pairs", s, "--index", index, "--frame", &f]);
            checker::compare(&one, &out).unwrap_or_else(|e| panic!("{name} {index} --frame: {e}"));
        }
    }
}

#[test]
fn queries_on_shipped_scenes_match_the_independent_checker_for_every_index() {
    for &(name, indexes, frame) in SCENES {
        let scene = scene_path(name, "csv");
        let queries = scene_path(name, "queries");
        let data = checker::parse_scene(&std::fs::read_to_string(&scene).unwrap());
        let qtext = std::fs::read_to_string(&queries).unwrap();
        let expected = checker::queries(&data, None, &qtext);
        expected_file(&scene_path(name, "query.csv"), &expected);
        let (s, q) = (scene.to_str().unwrap(), queries.to_str().unwrap());
        let default = ok(&["query", s, q]);
        checker::compare(&expected, &default).unwrap_or_else(|e| panic!("{name} default: {e}"));
        let at = checker::queries(&data, Some(frame), &qtext);
        assert_ne!(
            at, expected,
            "{name}: frame {frame} should answer differently"
        );
        let f = frame.to_string();
        for index in indexes {
            let out = ok(&["query", s, q, "--index", index]);
            assert_eq!(
                out, default,
                "{name}: {index} differs from the default index"
            );
            let out = ok(&["query", s, q, "--index", index, "--frame", &f]);
            checker::compare(&at, &out).unwrap_or_else(|e| panic!("{name} {index} --frame: {e}"));
        }
    }
}

#[test]
fn shipped_outputs_cover_every_query_kind() {
    for &(name, ..) in SCENES {
        let q = std::fs::read_to_string(scene_path(name, "queries")).unwrap();
        for kind in ["box", "sphere", "ray", "nearest", "cone", "knn", "layer="] {
            assert!(q.contains(kind), "{name}: no {kind} query");
        }
        let expected = std::fs::read_to_string(scene_path(name, "query.csv")).unwrap();
        assert!(expected.lines().count() > 30, "{name}: answers");
    }
    let q = std::fs::read_to_string(scene_path("bullets3d", "queries")).unwrap();
    assert!(q.contains("frustum"));
}

#[test]
fn unsuitable_indexes_are_clear_errors() {
    let s2 = scene_path("discs2d", "csv");
    let s3 = scene_path("bullets3d", "csv");
    let (s2, s3) = (s2.to_str().unwrap(), s3.to_str().unwrap());
    for (scene, name) in [
        (s2, "octree"),
        (s2, "loose-octree"),
        (s3, "quadtree"),
        (s3, "loose-quadtree"),
    ] {
        let out = sparti(&["pairs", scene, "--index", name]);
        assert_eq!(out.status.code(), Some(2), "{name}");
        assert!(out.stdout.is_empty());
        let err = text(&out.stderr);
        assert!(
            err.contains(&format!("index {name} is a")) && err.contains("scene"),
            "{err}"
        );
    }
    let out = sparti(&["pairs", s2, "--index", "kdtree"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
}

#[test]
fn absent_frames_and_missing_files_are_errors() {
    let s = scene_path("discs2d", "csv");
    let q = scene_path("discs2d", "queries");
    let (s, q) = (s.to_str().unwrap(), q.to_str().unwrap());
    for args in [
        vec!["pairs", s, "--frame", "3"],
        vec!["query", s, q, "--frame", "-1"],
        vec!["pairs", "/nonexistent/scene.csv"],
        vec!["query", s, "/nonexistent/queries.txt"],
    ] {
        let out = sparti(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
        assert!(!out.stderr.is_empty(), "{args:?}");
    }
    let err = text(&sparti(&["pairs", s, "--frame", "3"]).stderr);
    assert!(
        err.contains("frame 3 is not in the scene (it has 4 frames numbered 0 to 5)"),
        "{err}"
    );
}

/// A scratch file under the target directory.
fn scratch(name: &str, content: &[u8]) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("sparti-cli-tests");
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, content).unwrap();
    p
}

/// Checks a rejected run: exit 2, nothing on stdout, `FILE:LINE: ` then a
/// message containing `want` on stderr.
fn rejected(args: &[&str], file: &Path, line: usize, want: &str) {
    let out = sparti(args);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(
        out.stdout.is_empty(),
        "{args:?}: stdout {}",
        text(&out.stdout)
    );
    let prefix = format!("{}:{line}: ", file.display());
    assert!(
        err.starts_with(&prefix),
        "{args:?}: expected `{prefix}...`, got {err}"
    );
    assert!(err.contains(want), "{args:?}: expected `{want}` in {err}");
}

const H3: &str = "frame,id,kind,x,y,z,r,hx,hy,hz,layer,mask,static\n";

#[test]
fn every_malformed_scene_is_rejected_with_its_line() {
    let row = "0,1,sphere,0,0,0,1,,,,,,\n";
    let cases: Vec<(&str, String, usize, &str)> = vec![
        ("empty", String::new(), 1, "no header"),
        ("comments only", "# nothing\n\n".into(), 2, "no header"),
        (
            "missing column",
            "frame,id,x,y,z,r\n0,1,0,0,0,1\n".into(),
            1,
            "column `kind`",
        ),
        (
            "missing z column",
            "frame,id,kind,x,y,r\n0,1,sphere,0,0,1\n".into(),
            2,
            "column `z`",
        ),
        (
            "missing value",
            format!("{H3}0,1,sphere,0,,0,1,,,,,,\n"),
            2,
            "missing value for `y`",
        ),
        (
            "missing size",
            format!("{H3}{row}0,2,box,0,0,0,,1,,1,,,\n"),
            3,
            "missing value for `hy`",
        ),
        (
            "short row",
            format!("{H3}0,1,sphere,0,0,0,1\n"),
            2,
            "values but the header",
        ),
        (
            "bad number",
            format!("{H3}0,1,sphere,0,zero,0,1,,,,,,\n"),
            2,
            "not a number",
        ),
        ("bad id", format!("{H3}0,x,sphere,0,0,0,1,,,,,,\n"), 2, "id"),
        (
            "bad frame",
            format!("{H3}one,1,sphere,0,0,0,1,,,,,,\n"),
            2,
            "frame",
        ),
        ("NaN", format!("{H3}0,1,sphere,0,0,NaN,1,,,,,,\n"), 2, "NaN"),
        (
            "infinity",
            format!("{H3}0,1,sphere,0,0,0,inf,,,,,,\n"),
            2,
            "infinite",
        ),
        (
            "overflow",
            format!("{H3}0,1,sphere,1e39,0,0,1,,,,,,\n"),
            2,
            "f32 range",
        ),
        (
            "negative radius",
            format!("{H3}{row}0,2,sphere,0,0,0,-1,,,,,,\n"),
            3,
            "negative radius",
        ),
        (
            "negative half extent",
            format!("{H3}0,1,box,0,0,0,,1,-1,1,,,\n"),
            2,
            "negative half extent hy",
        ),
        (
            "unknown kind",
            format!("{H3}{row}0,2,cube,0,0,0,1,,,,,,\n"),
            3,
            "unknown kind `cube`",
        ),
        (
            "2D and 3D",
            format!("{H3}{row}0,2,circle,0,0,,1,,,,,,\n"),
            3,
            "2D kind `circle` in a 3D scene",
        ),
        (
            "frames out of order",
            format!("{H3}1,1,sphere,0,0,0,1,,,,,,\n{row}"),
            3,
            "frame 0 after frame 1",
        ),
        (
            "id twice",
            format!("{H3}{row}{row}"),
            3,
            "id 1 appears twice in frame 0",
        ),
        (
            "bad layer",
            format!("{H3}0,1,sphere,0,0,0,1,,,,L1,,\n"),
            2,
            "layer",
        ),
        (
            "bad mask",
            format!("{H3}0,1,sphere,0,0,0,1,,,,,-1,\n"),
            2,
            "mask",
        ),
        (
            "bad static",
            format!("{H3}0,1,sphere,0,0,0,1,,,,,,yes\n"),
            2,
            "static",
        ),
        (
            "duplicate column",
            "frame,id,kind,x,y,z,id\n".into(),
            1,
            "twice",
        ),
        (
            "box overflowing f32",
            format!("{H3}0,1,box,3e38,0,0,,3e38,1,1,,,\n"),
            2,
            "overflow",
        ),
    ];
    let good_q = scratch("good.queries", b"box 0 0 0 1 1 1\n");
    for (i, (what, content, line, want)) in cases.iter().enumerate() {
        let f = scratch(&format!("bad-scene-{i}.csv"), content.as_bytes());
        let fs = f.to_str().unwrap();
        let q = good_q.to_str().unwrap();
        for args in [
            vec!["pairs", fs],
            vec!["query", fs, q],
            vec!["pairs", fs, "--index", "brute"],
        ] {
            eprintln!("case: {what}");
            rejected(&args, &f, *line, want);
        }
    }
    // Raw bytes that are not UTF-8.
    let f = scratch(
        "bad-scene-bytes.csv",
        b"frame,id,kind,x,y,z,r\n0,1,sphere,0,0,0,\xff\n",
    );
    rejected(&["pairs", f.to_str().unwrap()], &f, 2, "UTF-8");
}

#[test]
fn every_malformed_query_file_is_rejected_with_its_line() {
    let scene = scene_path("bullets3d", "csv");
    let scene2 = scene_path("discs2d", "csv");
    let cases: &[(&str, usize, &str)] = &[
        ("warp 1 2 3\n", 1, "unknown query `warp`"),
        ("# c\nbox 0 0 0 1 1\n", 2, "takes 6 values"),
        ("sphere 0 0 0 1 2\n", 1, "takes 4 values"),
        ("knn 0 0 0\n", 1, "takes 4 values"),
        ("frustum 1 0 0 1\n", 1, "takes 24 values"),
        ("box 0 NaN 0 1 1 1\n", 1, "NaN"),
        ("sphere 0 0 0 inf\n", 1, "infinite"),
        ("sphere 0 0 0 one\n", 1, "not a number"),
        ("ray 0 0 0 0 0 0 10\n", 1, "zero direction"),
        ("nearest 0 0 0 0 0 0 10\n", 1, "zero direction"),
        ("cone 0 0 0 0 0 0 30 10\n", 1, "zero direction"),
        ("box 0 0 0 1 1 1 layer=red\n", 1, "bad layer"),
        ("box 0 0 0 1 1 1 layer=4294967296\n", 1, "bad layer"),
        ("box 0 0 0 layer=1 1 1 1\n", 1, "last token"),
        ("box 1 1 1 0 0 0\n", 1, "MIN > MAX"),
        ("sphere 0 0 0 -1\n", 1, "negative radius"),
        ("ray 0 0 0 1 0 0 -1\n", 1, "negative MAXDIST"),
        ("cone 0 0 0 1 0 0 200 10\n", 1, "half-angle"),
        ("knn 0 0 0 -2\n", 1, "non-negative integer"),
        ("knn 0 0 3e18 1\n", 1, "beyond sparti's limit"),
        (
            "frustum 0 0 0 1 1 0 0 1 1 0 0 1 1 0 0 1 1 0 0 1 1 0 0 1\n",
            1,
            "plane 1",
        ),
    ];
    for (i, (content, line, want)) in cases.iter().enumerate() {
        let f = scratch(&format!("bad-{i}.queries"), content.as_bytes());
        let args = ["query", scene.to_str().unwrap(), f.to_str().unwrap()];
        rejected(&args, &f, *line, want);
        rejected(
            &[&args[..], &["--index", "brute"]].concat(),
            &f,
            *line,
            want,
        );
    }
    // 2D scene: 3D points and frustums are errors.
    for (content, want) in [
        ("box 0 0 0 1 1 1\n", "takes 4 values"),
        (
            "frustum 1 0 0 1 1 0 0 1 1 0 0 1 1 0 0 1 1 0 0 1 1 0 0 1\n",
            "3D query",
        ),
    ] {
        let f = scratch("bad-2d.queries", content.as_bytes());
        rejected(
            &["query", scene2.to_str().unwrap(), f.to_str().unwrap()],
            &f,
            1,
            want,
        );
    }
}

#[test]
fn a_bad_scene_is_reported_before_a_bad_query_file_and_every_bad_line_is_listed() {
    let s = scratch(
        "two-bad.csv",
        format!("{H3}0,1,sphere,x,0,0,1,,,,,,\n0,2,sphere,0,0,0,-1,,,,,,\n").as_bytes(),
    );
    let q = scratch("two-bad.queries", b"warp\n");
    let out = sparti(&["query", s.to_str().unwrap(), q.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 2, "{err}");
    assert!(lines[0].starts_with(&format!("{}:2: ", s.display())));
    assert!(lines[1].starts_with(&format!("{}:3: ", s.display())));
}

#[test]
fn edge_case_files_that_are_valid() {
    // Header only: no frames, no pairs; queries find nothing.
    let s = scratch("header-only.csv", H3.as_bytes());
    let q = scratch("edge.queries", b"# nothing but comments\n\n");
    assert_eq!(ok(&["pairs", s.to_str().unwrap()]), "frame,a,b\n");
    assert_eq!(
        ok(&["query", s.to_str().unwrap(), q.to_str().unwrap()]),
        "query,id,distance\n"
    );
    let q2 = scratch("edge2.queries", b"knn 0 0 0 5\nsphere 0 0 0 100\n");
    assert_eq!(
        ok(&["query", s.to_str().unwrap(), q2.to_str().unwrap()]),
        "query,id,distance\n"
    );
    // CRLF, BOM, spaces, upper case, hex bits, true/false, extra columns, and
    // a K larger than the scene.
    let s = scratch(
        "odd.csv",
        "\u{feff}Frame , ID,Kind,X,Y,Z,R,note,Layer,Mask,Static\r\n\
         7,18446744073709551615,SPHERE,0,0,0,1,hello,0x1,0b1,false\r\n\
         7,0,sphere,2,0,0,1,,1,,TRUE\r\n"
            .as_bytes(),
    );
    assert_eq!(
        ok(&["pairs", s.to_str().unwrap()]),
        "frame,a,b\n7,0,18446744073709551615\n"
    );
    let q = scratch(
        "odd.queries",
        b"KNN 0 0 0 99\r\nray -5 0 0 1 0 0 100 layer=0x1\n",
    );
    assert_eq!(
        ok(&[
            "query",
            s.to_str().unwrap(),
            q.to_str().unwrap(),
            "--frame",
            "7"
        ]),
        "query,id,distance\n0,18446744073709551615,0\n0,0,1\n1,18446744073709551615,4\n1,0,6\n"
    );
}

#[test]
fn objects_beyond_the_library_limits_are_reported_on_their_line() {
    // Valid f32 coordinates beyond what sparti's structures accept (2^60):
    // every index refuses, naming the row's line.
    let s = scratch(
        "far.csv",
        format!("{H3}0,1,sphere,0,0,0,1,,,,,,\n0,2,sphere,1e35,0,0,1,,,,,,\n").as_bytes(),
    );
    let fs = s.to_str().unwrap();
    for index in ["brute", "octree", "bsp"] {
        rejected(
            &["pairs", fs, "--index", index],
            &s,
            3,
            &format!("the {index} index refused object 2"),
        );
    }
}

/// A small deterministic generator for the fuzz test.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[test]
fn mangled_files_never_crash_the_tool() {
    let scene = std::fs::read(scene_path("bullets3d", "csv")).unwrap();
    let queries = std::fs::read(scene_path("bullets3d", "queries")).unwrap();
    let junk: &[&[u8]] = &[
        b",",
        b"\n",
        b"-",
        b"e99",
        b"nan",
        b"#",
        b"0",
        b"\xff",
        b"1e-45",
        b"  ",
        b"box",
        b"layer=",
        b"9999999999999999999999",
    ];
    let mut rng = Lcg(42);
    for round in 0..60 {
        let mangle = |src: &[u8], rng: &mut Lcg| {
            let mut v = src.to_vec();
            for _ in 0..1 + rng.below(4) {
                let at = rng.below(v.len());
                match rng.below(3) {
                    0 => {
                        let end = (at + rng.below(8)).min(v.len());
                        v.drain(at..end);
                    }
                    _ => {
                        let j = junk[rng.below(junk.len())];
                        v.splice(at..at, j.iter().copied());
                    }
                }
            }
            v
        };
        let s = scratch(&format!("fuzz-{round}.csv"), &mangle(&scene, &mut rng));
        let q = scratch(
            &format!("fuzz-{round}.queries"),
            &mangle(&queries, &mut rng),
        );
        for index in ["brute", "octree", "bsp"] {
            for args in [
                vec!["pairs", s.to_str().unwrap(), "--index", index],
                vec![
                    "query",
                    s.to_str().unwrap(),
                    q.to_str().unwrap(),
                    "--index",
                    index,
                ],
            ] {
                let out = sparti(&args);
                let code = out.status.code();
                assert!(
                    code == Some(0) || code == Some(2),
                    "round {round} {args:?}: {code:?} {}",
                    text(&out.stderr)
                );
                if code == Some(2) {
                    assert!(out.stdout.is_empty());
                    let err = text(&out.stderr);
                    assert!(err.contains(":"), "{err}");
                }
            }
        }
    }
}

/// The first fenced block of `lang` after `after` in the README.
fn readme_block(lang: &str, after: &str) -> String {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let from = readme.find(after).expect("section");
    let start =
        readme[from..].find(&format!("```{lang}\n")).expect("block") + from + lang.len() + 4;
    let end = readme[start..].find("```").unwrap() + start;
    readme[start..end].to_string()
}

#[test]
fn the_readme_examples_run_as_documented() {
    let s = scratch(
        "readme.csv",
        readme_block("csv", "## Scene files").as_bytes(),
    );
    let q = scratch(
        "readme.queries",
        readme_block("text", "## Query files").as_bytes(),
    );
    let (s, q) = (s.to_str().unwrap(), q.to_str().unwrap());
    assert_eq!(
        ok(&["pairs", s]),
        "frame,a,b\n0,1,7\n0,1,8\n1,1,7\n1,1,8\n1,7,8\n"
    );
    let data = checker::parse_scene(&std::fs::read_to_string(s).unwrap());
    let qtext = std::fs::read_to_string(q).unwrap();
    let out = ok(&["query", s, q]);
    checker::compare(&checker::queries(&data, None, &qtext), &out).unwrap();
    assert_eq!(
        out.lines().filter(|l| l.starts_with("6,")).count(),
        3,
        "{out}"
    );
}
