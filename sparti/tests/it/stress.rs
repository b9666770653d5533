//! A longer run of the shared suite, by hand: every structure on the
//! standard scenes with many more seeds and three world sizes.
//!
//! ```text
//! SEEDS=60 cargo test --release -p sparti --test it stress:: -- --ignored --nocapture
//! ```
//!
//! (60 seeds: 14,040 scene runs, about 4 minutes on 2 cores.)

use crate::common::{Scene, run_scene, standard_scenes};
use glam::{Vec2, Vec3};
use sparti::{Bsp2, Bsp3, LooseOctree, LooseQuadtree, Octree, Quadtree, Vector};

/// The standard scenes with other seeds; `validate()` once per frame.
fn reseeded<V: Vector>(side: f32, seed: u64) -> Vec<Scene<V>> {
    let mut scenes = standard_scenes::<V>(side);
    for (i, s) in scenes.iter_mut().enumerate() {
        s.seed = seed * 100 + i as u64;
        s.validate_each = false;
    }
    scenes
}

#[test]
#[ignore = "long: run by hand with --ignored"]
fn every_structure_on_many_seeds() {
    let seeds: u64 = std::env::var("SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    for seed in 1..=seeds {
        for side in [20.0, 60.0, 300.0] {
            for s in reseeded::<Vec3>(side, seed) {
                run_scene(&s, Octree::<u32>::new);
                run_scene(&s, LooseOctree::<u32>::new);
                run_scene(&s, Bsp3::<u32>::new);
            }
            for s in reseeded::<Vec2>(side, seed) {
                run_scene(&s, Quadtree::<u32>::new);
                run_scene(&s, LooseQuadtree::<u32>::new);
                run_scene(&s, Bsp2::<u32>::new);
            }
        }
        eprintln!("seed {seed}: every structure agreed with the brute force");
    }
}
