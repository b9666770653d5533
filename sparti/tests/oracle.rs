//! Every structure against the brute force on the standard scenes (2D and
//! 3D), and the brute force against a direct computation.

mod common;

use common::{Scene, run_scene, standard_scenes};
use glam::{Vec2, Vec3};
use sparti::{Aabb, BruteForce, Octree, OrthtreeConfig, OutOfBounds, Quadtree, Vector};

fn run_all<V: Vector, S: sparti::SpatialIndex<V, u32>>(scenes: &[Scene<V>], make: impl Fn() -> S) {
    let mut total = 0;
    for s in scenes {
        let pairs = run_scene(s, &make);
        total += pairs;
    }
    assert!(
        total > 0,
        "the scenes produced no pairs at all: the test would prove nothing"
    );
}

#[test]
fn brute_force_matches_direct_computation_3d() {
    run_all(&standard_scenes::<Vec3>(60.0), BruteForce::<Vec3, u32>::new);
}

#[test]
fn brute_force_matches_direct_computation_2d() {
    run_all(&standard_scenes::<Vec2>(60.0), BruteForce::<Vec2, u32>::new);
}

#[test]
fn octree_matches_brute_force() {
    run_all(&standard_scenes::<Vec3>(60.0), Octree::<u32>::new);
}

#[test]
fn quadtree_matches_brute_force() {
    run_all(&standard_scenes::<Vec2>(60.0), Quadtree::<u32>::new);
}

#[test]
fn octree_with_small_nodes_and_preset_world_matches_brute_force() {
    let make = || {
        Octree::<u32>::with_config(OrthtreeConfig {
            world: Some(Aabb::new(Vec3::splat(-10.0), Vec3::splat(10.0)).unwrap()),
            min_node_size: 0.125,
            out_of_bounds: OutOfBounds::Grow,
        })
        .unwrap()
    };
    run_all(&standard_scenes::<Vec3>(60.0), make);
}

#[test]
fn quadtree_with_large_nodes_matches_brute_force() {
    let make = || {
        Quadtree::<u32>::with_config(OrthtreeConfig {
            min_node_size: 16.0,
            ..Default::default()
        })
        .unwrap()
    };
    run_all(&standard_scenes::<Vec2>(60.0), make);
}
