//! The parser harness: arbitrary bytes to the scene-file and query-file
//! parsers of the `sparti` tool (`sparti_scenes::files::scene`,
//! `sparti_scenes::files::queries`).
//!
//! The input is split at its first NUL byte: the part before is a scene
//! file, the part after a query file (without a NUL, both parsers get the
//! whole input). Parsing must never panic; errors must name lines that
//! exist, at most `MAX_ERRORS` of them, in line order. When a scene parses,
//! its first frames are replayed through the brute force and through a tree
//! and a BSP, whose pairs must equal the brute force's, as must their
//! answers to the queries that parse.

use sparti::glam::{Vec2, Vec3};
use sparti::{BruteForce, Bsp, Orthtree, Vector};
use sparti_scenes::files::queries::{Query, parse_queries};
use sparti_scenes::files::replay::Replayer;
use sparti_scenes::files::scene::{Dim, LineError, MAX_ERRORS, Scene, parse_scene};

/// Frames replayed at most, to keep each run short.
const MAX_FRAMES: usize = 12;

fn check_errors(bytes: &[u8], errors: &[LineError], what: &str) {
    let lines = bytes.split(|&b| b == b'\n').count();
    assert!(!errors.is_empty(), "{what}: Err without an error");
    assert!(
        errors.len() <= MAX_ERRORS,
        "{what}: {} errors",
        errors.len()
    );
    for e in errors {
        assert!(
            e.line <= lines,
            "{what}: error on line {} of {lines}: {e:?}",
            e.line
        );
    }
    assert!(
        errors.windows(2).all(|w| w[0].line <= w[1].line),
        "{what}: errors not in line order"
    );
}

/// Replays the scene through the brute force, a tree and a BSP, comparing
/// pairs each frame and query answers on every frame replayed.
fn replay<V: Vector>(scene: &Scene, queries: &[Query<V>]) {
    let mut brute = Replayer::new(BruteForce::<V, u64>::new(), "brute");
    let mut tree = Replayer::new(Orthtree::<V, u64>::new(), "tree");
    let mut bsp = Replayer::new(Bsp::<V, u64>::new(), "bsp");
    for frame in scene.frames.iter().take(MAX_FRAMES) {
        let rb = brute.apply(frame);
        let rt = tree.apply(frame);
        let rp = bsp.apply(frame);
        // Every structure refuses the same rows (coordinates beyond
        // sparti's limit): the same line, or none.
        let line = |r: &Result<(), LineError>| r.as_ref().err().map(|e| e.line);
        assert_eq!(line(&rb), line(&rt), "tree refused another row");
        assert_eq!(line(&rb), line(&rp), "bsp refused another row");
        if rb.is_err() {
            return;
        }
        let pairs = brute.pairs();
        assert_eq!(tree.pairs(), pairs, "tree pairs, frame {}", frame.number);
        assert_eq!(bsp.pairs(), pairs, "bsp pairs, frame {}", frame.number);
        for q in queries {
            let a = brute.query(q);
            assert_eq!(tree.query(q), a, "tree, query line {}", q.line);
            assert_eq!(bsp.query(q), a, "bsp, query line {}", q.line);
        }
        brute.end_frame();
        tree.end_frame();
        bsp.end_frame();
    }
}

fn queries_for<V: Vector>(bytes: &[u8]) -> Vec<Query<V>> {
    match parse_queries::<V>(bytes) {
        Ok(q) => q,
        Err(e) => {
            check_errors(bytes, &e, "query file");
            Vec::new()
        }
    }
}

/// Runs one input.
pub fn run(data: &[u8]) {
    let (scene_bytes, query_bytes) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, data),
    };
    let q2 = queries_for::<Vec2>(query_bytes);
    let q3 = queries_for::<Vec3>(query_bytes);
    match parse_scene(scene_bytes) {
        Ok(scene) => {
            assert_eq!(
                parse_scene(scene_bytes).as_ref(),
                Ok(&scene),
                "parsing is deterministic"
            );
            assert!(
                scene.frames.windows(2).all(|w| w[0].number < w[1].number),
                "frames in increasing order"
            );
            for f in &scene.frames {
                assert!(!f.rows.is_empty(), "a frame without rows");
                for r in &f.rows {
                    assert!(
                        r.center.iter().chain(&r.size).all(|x| x.is_finite()),
                        "a non-finite number parsed: {r:?}"
                    );
                    assert!(r.size.iter().all(|&x| x >= 0.0), "a negative size: {r:?}");
                }
            }
            match scene.dim {
                Dim::Two => replay::<Vec2>(&scene, &q2),
                Dim::Three => replay::<Vec3>(&scene, &q3),
            }
        }
        Err(e) => check_errors(scene_bytes, &e, "scene file"),
    }
}
