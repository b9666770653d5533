//! The loose octree and loose quadtree against the brute force on the
//! standard scenes (2D and 3D), with several settings.

use crate::common::{rng, run_all, same_pairs, standard_scenes, vec_in};
use glam::{Vec2, Vec3};
use rand::Rng;
use sparti::{
    Aabb, BruteForce, LooseConfig, LooseOctree, LooseQuadtree, ObjectDesc, OutOfBounds, Shape,
    SpatialIndex, Vector,
};

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

/// A crowd whose nodes hold more than 64 objects (the lists a rewrite of
/// the lists' array leaves room to grow in place) while a share of the
/// objects changes node every frame, so that lists move, their room is
/// abandoned and the array is rewritten: `validate()` and the brute
/// force's pairs every frame, moved by `update` and by `update_many` on
/// alternate frames.
fn crowd_changing_nodes<V: Vector, S: SpatialIndex<V, u32>>(make: impl Fn() -> S) {
    let mut r = rng(0xC20D);
    let side = 10.0;
    let n = 1_200;
    let mut centers: Vec<V> = (0..n)
        .map(|_| vec_in(&mut r, V::ZERO, V::splat(side)))
        .collect();
    let radii: Vec<f32> = (0..n).map(|_| r.random_range(0.4..=0.8)).collect();
    let shape = |c: V, i: usize| Shape::sphere(c, radii[i]);
    let (mut s, mut b) = (make(), BruteForce::<V, u32>::new());
    let descs = |i: usize, c: V| ObjectDesc::new(shape(c, i), i as u32);
    let hs = s
        .insert_many((0..n).map(|i| descs(i, centers[i])).collect())
        .unwrap();
    let hb = b
        .insert_many((0..n).map(|i| descs(i, centers[i])).collect())
        .unwrap();
    s.flush();
    let crowded = |s: &S| s.stats().objects_per_node.len() > 65;
    assert!(crowded(&s), "the scene must fill nodes past 64 objects");
    for frame in 0..24 {
        let mut moves = Vec::with_capacity(n);
        for (i, c) in centers.iter_mut().enumerate() {
            let step: V = vec_in(&mut r, V::splat(-0.6), V::splat(0.6));
            *c = (*c + step).max(V::ZERO).min(V::splat(side));
            moves.push((i, shape(*c, i)));
        }
        if frame % 2 == 0 {
            for &(i, sh) in &moves {
                s.update(hs[i], sh).unwrap();
            }
        } else {
            let batch: Vec<_> = moves.iter().map(|&(i, sh)| (hs[i], sh)).collect();
            s.update_many(&batch).unwrap();
        }
        for &(i, sh) in &moves {
            b.update(hb[i], sh).unwrap();
        }
        s.validate().unwrap();
        s.end_frame();
        s.validate().unwrap();
        assert!(
            !same_pairs(&s, &b).is_empty(),
            "frame {frame}: a crowd has pairs"
        );
        assert!(crowded(&s), "frame {frame}: the nodes stay crowded");
    }
}

#[test]
fn crowded_nodes_changing_nodes_match_brute_force() {
    crowd_changing_nodes::<Vec3, _>(LooseOctree::<u32>::new);
    crowd_changing_nodes::<Vec2, _>(LooseQuadtree::<u32>::new);
    crowd_changing_nodes::<Vec3, _>(sparti::Octree::<u32>::new);
    crowd_changing_nodes::<Vec2, _>(sparti::Quadtree::<u32>::new);
}
