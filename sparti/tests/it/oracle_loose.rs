//! The loose octree and loose quadtree against the brute force on the
//! standard scenes (2D and 3D), with several settings.

use crate::common::{run_all, standard_scenes};
use glam::{Vec2, Vec3};
use sparti::{Aabb, LooseConfig, LooseOctree, LooseQuadtree, OutOfBounds};

#[test]
fn loose_octree_matches_brute_force() {
    run_all(&standard_scenes::<Vec3>(60.0), LooseOctree::<u32>::new);
}

#[test]
fn loose_quadtree_matches_brute_force() {
    run_all(&standard_scenes::<Vec2>(60.0), LooseQuadtree::<u32>::new);
}

#[test]
fn loose_octree_with_looseness_1_5_matches_brute_force() {
    let make = || {
        LooseOctree::<u32>::with_config(LooseConfig {
            looseness: 1.5,
            ..Default::default()
        })
        .unwrap()
    };
    run_all(&standard_scenes::<Vec3>(60.0), make);
}

#[test]
fn loose_quadtree_with_looseness_1_5_matches_brute_force() {
    let make = || {
        LooseQuadtree::<u32>::with_config(LooseConfig {
            looseness: 1.5,
            ..Default::default()
        })
        .unwrap()
    };
    run_all(&standard_scenes::<Vec2>(60.0), make);
}

#[test]
fn loose_octree_with_small_nodes_and_preset_world_matches_brute_force() {
    let make = || {
        LooseOctree::<u32>::with_config(LooseConfig {
            world: Some(Aabb::new(Vec3::splat(-10.0), Vec3::splat(10.0)).unwrap()),
            min_node_size: 0.125,
            looseness: 2.0,
            out_of_bounds: OutOfBounds::Grow,
            leaf_capacity: 0,
        })
        .unwrap()
    };
    run_all(&standard_scenes::<Vec3>(60.0), make);
}

#[test]
fn loose_quadtree_with_small_nodes_preset_world_and_looseness_1_5_matches_brute_force() {
    let make = || {
        LooseQuadtree::<u32>::with_config(LooseConfig {
            world: Some(Aabb::new(Vec2::splat(-10.0), Vec2::splat(10.0)).unwrap()),
            min_node_size: 0.125,
            looseness: 1.5,
            out_of_bounds: OutOfBounds::Grow,
            leaf_capacity: 0,
        })
        .unwrap()
    };
    run_all(&standard_scenes::<Vec2>(60.0), make);
}

#[test]
fn loose_quadtree_with_large_nodes_and_high_looseness_matches_brute_force() {
    let make = || {
        LooseQuadtree::<u32>::with_config(LooseConfig {
            min_node_size: 16.0,
            looseness: 3.0,
            ..Default::default()
        })
        .unwrap()
    };
    run_all(&standard_scenes::<Vec2>(60.0), make);
}

#[test]
fn loose_octree_with_leaf_capacity_1_matches_brute_force() {
    let make = || {
        LooseOctree::<u32>::with_config(LooseConfig {
            leaf_capacity: 1,
            ..Default::default()
        })
        .unwrap()
    };
    run_all(&standard_scenes::<Vec3>(60.0), make);
}

#[test]
fn loose_quadtree_with_leaf_capacity_3_and_looseness_1_5_matches_brute_force() {
    let make = || {
        LooseQuadtree::<u32>::with_config(LooseConfig {
            leaf_capacity: 3,
            looseness: 1.5,
            world: Some(Aabb::new(Vec2::splat(-10.0), Vec2::splat(10.0)).unwrap()),
            ..Default::default()
        })
        .unwrap()
    };
    run_all(&standard_scenes::<Vec2>(60.0), make);
}
