//! Times the bulk build of `sparti-bench`'s build workloads (`insert_many`
//! of the scene kit's static boxes, then `flush`) with one structure, for
//! profilers (`perf record`, callgrind).
//!
//! ```text
//! cargo run --release -p sparti --example build -- loose2 1000000 5
//! ```
//! Structures: `oct3`, `loose3`, `bsp3`, `quad2`, `loose2`, `bsp2`, each
//! with its default settings over the benchmark's world.

use std::time::Instant;

use glam::{Vec2, Vec3};
use sparti::{
    Aabb, Bsp, BspConfig, LooseConfig, LooseOrthtree, ObjectDesc, Orthtree, OrthtreeConfig, Shape,
    SpatialIndex, Vector,
};

fn run<V: Vector, S: SpatialIndex<V, u32>>(n: usize, reps: usize, make: impl Fn(Aabb<V>) -> S) {
    let boxes = sparti_scenes::queries::boxes::<V>(n);
    let side = sparti_scenes::side(V::DIM, n);
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
        times.push((
            (t1 - t).as_secs_f64() * 1e3,
            (t2 - t1).as_secs_f64() * 1e3,
            f1.zip(f0).map(|(b, a)| b - a),
            f2.zip(f1).map(|(b, a)| b - a),
        ));
        drop(index);
    }
    for (a, b, fa, fb) in times {
        print!(
            "insert_many {a:.1} ms, flush {b:.1} ms, total {:.1} ms",
            a + b
        );
        if let (Some(fa), Some(fb)) = (fa, fb) {
            print!(" (page faults {fa} + {fb})");
        }
        println!();
    }
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
