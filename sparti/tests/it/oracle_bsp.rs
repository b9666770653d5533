//! The BSP (2D and 3D) against the brute force on the standard scenes, with
//! the default settings, other minimum dimensions and leaf capacities,
//! preset worlds (flat 2.5D ones included) and every out-of-bounds policy
//! that keeps the scenes' objects.

use crate::common::{Layout, Scene, run_all, standard_scenes};
use glam::{Vec2, Vec3};
use sparti::{Aabb, Bsp2, Bsp3, BspConfig, OutOfBounds};

fn bsp3(config: BspConfig<Vec3>) -> impl Fn() -> Bsp3<u32> {
    move || Bsp3::<u32>::with_config(config).unwrap()
}

fn bsp2(config: BspConfig<Vec2>) -> impl Fn() -> Bsp2<u32> {
    move || Bsp2::<u32>::with_config(config).unwrap()
}

fn world3(min: Vec3, max: Vec3) -> Option<Aabb<Vec3>> {
    Some(Aabb::new(min, max).unwrap())
}

#[test]
fn bsp3_matches_brute_force() {
    run_all(&standard_scenes::<Vec3>(60.0), Bsp3::<u32>::new);
}

#[test]
fn bsp2_matches_brute_force() {
    run_all(&standard_scenes::<Vec2>(60.0), Bsp2::<u32>::new);
}

#[test]
fn bsp3_with_small_cells_and_a_preset_world_matches_brute_force() {
    run_all(
        &standard_scenes::<Vec3>(60.0),
        bsp3(BspConfig {
            world: world3(Vec3::splat(-10.0), Vec3::splat(10.0)),
            min_dimension: 0.125,
            ..Default::default()
        }),
    );
}

#[test]
fn bsp3_on_a_flat_preset_world_matches_brute_force() {
    // 1000 x 1000 x 4: the 2.5D level the BSP is for. The standard scenes
    // (a 60-unit cube and a 600 x 600 x 2 slab) stick out of it in Z, so
    // the root also grows along its thin axis.
    run_all(
        &standard_scenes::<Vec3>(60.0),
        bsp3(BspConfig {
            world: world3(Vec3::ZERO, Vec3::new(1000.0, 1000.0, 4.0)),
            ..Default::default()
        }),
    );
}

#[test]
fn bsp3_in_flat_worlds_matches_brute_force() {
    // Scenes that live in a 1000 x 1000 x 4 world, in a tree with that
    // world preset and in one that takes it from the objects.
    let ext = Vec3::new(1000.0, 1000.0, 4.0);
    let scenes = vec![
        Scene {
            objects: 400,
            size: (0.5, 6.0),
            speed: 5.0,
            ..Scene::new("flat, uniform", 21, ext)
        },
        Scene {
            objects: 300,
            layout: Layout::Clustered,
            size: (0.1, 2.0),
            static_share: 0.3,
            ..Scene::new("flat, clustered", 22, ext)
        },
        Scene {
            objects: 200,
            bounce: false,
            speed: 40.0,
            frames: 15,
            ..Scene::new("flat, leaving", 23, ext)
        },
    ];
    let flat = world3(Vec3::ZERO, ext);
    run_all(
        &scenes,
        bsp3(BspConfig {
            world: flat,
            min_dimension: 2.0,
            ..Default::default()
        }),
    );
    run_all(&scenes, Bsp3::<u32>::new);
}

#[test]
fn bsp3_with_sinking_objects_matches_brute_force() {
    // Leaf capacity 0: every object sinks as deep as it fits (the article's
    // placement).
    run_all(
        &standard_scenes::<Vec3>(60.0),
        bsp3(BspConfig {
            leaf_capacity: 0,
            min_dimension: 4.0,
            ..Default::default()
        }),
    );
}

#[test]
fn bsp2_with_large_leaves_and_large_cells_matches_brute_force() {
    run_all(
        &standard_scenes::<Vec2>(60.0),
        bsp2(BspConfig {
            min_dimension: 16.0,
            leaf_capacity: 6,
            ..Default::default()
        }),
    );
}

#[test]
fn bsp2_in_the_articles_window_matches_brute_force() {
    // 640 x 480, cells under 32 x 32, objects sinking to them.
    let ext = Vec2::new(640.0, 480.0);
    let scenes = vec![
        Scene {
            objects: 100,
            size: (4.0, 12.0),
            speed: 4.0,
            frames: 20,
            ..Scene::new("discs", 31, ext)
        },
        Scene {
            objects: 300,
            size: (1.0, 6.0),
            speed: 8.0,
            layout: Layout::Clustered,
            ..Scene::new("crowded discs", 32, ext)
        },
    ];
    let config = BspConfig {
        world: Some(Aabb::new(Vec2::ZERO, ext).unwrap()),
        min_dimension: 32.0,
        leaf_capacity: 0,
        out_of_bounds: OutOfBounds::Grow,
    };
    run_all(&scenes, bsp2(config));
    // A tiny preset world that every scene leaves at once.
    run_all(
        &standard_scenes::<Vec2>(60.0),
        bsp2(BspConfig {
            world: Some(Aabb::new(Vec2::splat(30.0), Vec2::new(30.5, 30.25)).unwrap()),
            min_dimension: 0.5,
            ..Default::default()
        }),
    );
}
