//! Times the bulk build of `sparti-bench`'s build workloads (`insert_many`
//! of the scene kit's static boxes, then `flush`) with one structure, for
//! profilers (`perf record`, callgrind).
//!
//! ```text
//! cargo run --release -p sparti --example build -- loose2 1000000 5
//! ```
//! Structures: `oct3`, `loose3`, `bsp3`, `quad2`, `loose2`, `bsp2`, each
//! with its default settings over the benchmark's world.
//!
//! `SPREAD=2` moves the boxes' centres twice as far apart (their sizes
//! kept: a sparser scene, in a world as much larger), and `PAIRS=1`
//! times the pair search of each build's tree too (the best of three
//! searches, every box a moving object), with its box tests an object:
//! ```text
//! SPREAD=2 PAIRS=1 cargo run --release -p sparti --example build -- loose3 200000 3
//! ```

use std::time::Instant;

use glam::{Vec2, Vec3};
use sparti::{
    Aabb, Bsp, BspConfig, LooseConfig, LooseOrthtree, ObjectDesc, Orthtree, OrthtreeConfig, Shape,
    SpatialIndex, Vector,
};

fn run<V: Vector, S: SpatialIndex<V, u32>>(n: usize, reps: usize, make: impl Fn(Aabb<V>) -> S) {
    let spread: f32 = std::env::var("SPREAD")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1.0);
    let pairs = std::env::var("PAIRS").is_ok_and(|v| v == "1");
    let mut boxes: Vec<Aabb<V>> = sparti_scenes::queries::boxes::<V>(n);
    // At the default spread the boxes stay bit for bit the benchmark's.
    if spread != 1.0 {
        for b in &mut boxes {
            let (c, h) = (b.center() * spread, (b.max - b.min) * 0.5);
            *b = Aabb {
                min: c - h,
                max: c + h,
            };
        }
    }
    let side = sparti_scenes::side(V::DIM, n) * spread;
    let world = Aabb::new(V::splat(-2.0), V::splat(side + 2.0)).expect("finite");
    let mut times = Vec::new();
    for _ in 0..reps {
        let descs: Vec<ObjectDesc<V, u32>> = boxes
            .iter()
            .enumerate()
            .map(|(i, b)| ObjectDesc::new(Shape::Box(*b), i as u32))
            .collect();
        let mut index = make(world);
        let f0 = page_faults();
        let t = Instant::now();
        index.insert_many(descs).expect("valid boxes");
        let t1 = Instant::now();
        let f1 = page_faults();
        index.flush();
        let t2 = Instant::now();
        let f2 = page_faults();
        let searched = pairs.then(|| search(&mut index, n));
        times.push((
            (t1 - t).as_secs_f64() * 1e3,
            (t2 - t1).as_secs_f64() * 1e3,
            f1.zip(f0).map(|(b, a)| b - a),
            f2.zip(f1).map(|(b, a)| b - a),
            searched,
        ));
        drop(index);
    }
    for (a, b, fa, fb, searched) in times {
        print!(
            "insert_many {a:.1} ms, flush {b:.1} ms, total {:.1} ms",
            a + b
        );
        if let (Some(fa), Some(fb)) = (fa, fb) {
            print!(" (page faults {fa} + {fb})");
        }
        if let Some((ms, found, tests)) = searched {
            print!("; pairs {ms:.2} ms ({found} pairs, {tests:.1} box tests an object)");
        }
        println!();
    }
}

/// The best of three pair searches of `index` (`n` objects): its time in
/// ms, the pairs found and the box tests an object of one search.
fn search<V: Vector, S: SpatialIndex<V, u32>>(index: &mut S, n: usize) -> (f64, usize, f64) {
    let mut out = Vec::new();
    let mut best = f64::INFINITY;
    index.reset_counters();
    for _ in 0..3 {
        out.clear();
        let t = Instant::now();
        index.pairs(&mut out);
        best = best.min(t.elapsed().as_secs_f64() * 1e3);
    }
    let tests = index.counters().pair_tests as f64 / 3.0 / n.max(1) as f64;
    (best, out.len(), tests)
}

/// The process's minor page faults so far (Linux: `/proc/self/stat`),
/// `None` elsewhere: a build's new memory costs one each 4 KiB page.
fn page_faults() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Field 10, counted after the command's name (which may hold spaces).
    let rest = &stat[stat.rfind(')')? + 2..];
    rest.split(' ').nth(7)?.parse().ok()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let which = args.get(1).map_or("loose2", String::as_str);
    let n: usize = args
        .get(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let reps: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(3);
    let orth = |w| OrthtreeConfig {
        world: Some(w),
        ..Default::default()
    };
    match which {
        "oct3" => run::<Vec3, _>(n, reps, |w| Orthtree::with_config(orth(w)).expect("valid")),
        "quad2" => run::<Vec2, _>(n, reps, |w| {
            Orthtree::with_config(OrthtreeConfig {
                world: Some(w),
                ..Default::default()
            })
            .expect("valid")
        }),
        "loose3" => run::<Vec3, _>(n, reps, |w| {
            LooseOrthtree::with_config(LooseConfig {
                world: Some(w),
                ..Default::default()
            })
            .expect("valid")
        }),
        "loose2" => run::<Vec2, _>(n, reps, |w| {
            LooseOrthtree::with_config(LooseConfig {
                world: Some(w),
                ..Default::default()
            })
            .expect("valid")
        }),
        "bsp3" => run::<Vec3, _>(n, reps, |w| {
            Bsp::with_config(BspConfig {
                world: Some(w),
                ..Default::default()
            })
            .expect("valid")
        }),
        "bsp2" => run::<Vec2, _>(n, reps, |w| {
            Bsp::with_config(BspConfig {
                world: Some(w),
                ..Default::default()
            })
            .expect("valid")
        }),
        other => eprintln!("unknown structure {other}"),
    }
}
