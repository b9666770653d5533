//! Behaviours specific to the loose trees (S3): level computed from size,
//! the in-place update fast path (L3), growth and policies (L4), degenerate
//! input (L6), and pairs across sibling subtrees (P1, P2). What every
//! family does the same way (the lazy build, lifespans and pruning,
//! statics, one point, the coordinate limit) is in `behaviour.rs`.

use crate::common::{rng, run_scene, same_pairs, standard_scenes, vec_in};
use glam::{Vec2, Vec3};
use rand::Rng;
use sparti::{
    Aabb, BruteForce, Error, Filter, Handle, LooseConfig, LooseOctree, LooseQuadtree, ObjectDesc,
    OutOfBounds, Shape, SpatialIndex, Vector,
};

fn world(lo: f32, hi: f32) -> Option<Aabb<Vec3>> {
    Some(Aabb::new(Vec3::splat(lo), Vec3::splat(hi)).unwrap())
}

fn ball(x: f32, y: f32, z: f32, r: f32) -> Shape<Vec3> {
    Shape::sphere(Vec3::new(x, y, z), r)
}

/// A loose octree with these settings; left automatic, the minimum node
/// size is the classic 1 these tests' geometry is worked out for.
fn tree(mut config: LooseConfig<Vec3>) -> LooseOctree<u32> {
    if config.min_node_size == 0.0 {
        config.min_node_size = 1.0;
    }
    LooseOctree::with_config(config).unwrap()
}

/// The level an object of half extent `e` belongs to, computed here in
/// `f64` straight from the definition: the smallest `l >= 0` with
/// `(looseness - 1) / 2 * min_node_size * 2^l >= e`.
fn expected_level(e: f64, looseness: f64, m: f64) -> i32 {
    let unit = (looseness - 1.0) / 2.0 * m;
    if e <= unit {
        0
    } else {
        (e / unit).log2().ceil() as i32
    }
}

#[test]
fn the_depth_of_an_object_is_computed_from_its_size() {
    for (looseness, m) in [(2.0f32, 1.0f32), (1.5, 1.0), (3.0, 0.5), (1.25, 2.0)] {
        let mut t = tree(LooseConfig {
            world: world(0.0, 1000.0),
            min_node_size: m,
            looseness,
            ..Default::default()
        });
        // The root: the smallest `m * 2^k` strictly larger than the world.
        let root = t.root_bounds().unwrap().size().x;
        assert!(root > 1000.0 && root / 2.0 <= 1000.0);
        let mut r = rng(7);
        let mut expected = Vec::new();
        for i in 0..2000u32 {
            let c: Vec3 = vec_in(&mut r, Vec3::ZERO, Vec3::splat(1000.0));
            let e = 10f32.powf(r.random_range(-3.0..2.5));
            let level = expected_level(f64::from(e), f64::from(looseness), f64::from(m));
            // Skip sizes a rounding away from a level boundary.
            let unit = f64::from(looseness - 1.0) / 2.0 * f64::from(m);
            let ratio = (f64::from(e) / unit).log2();
            if (ratio - ratio.round()).abs() < 1e-4 {
                continue;
            }
            // Spheres and boxes: the half extent is the largest half side.
            let shape = if i % 2 == 0 {
                Shape::sphere(c, e)
            } else {
                Shape::cuboid(c, Vec3::new(e, e * 0.5, 0.0))
            };
            let h = t.insert(ObjectDesc::new(shape, i)).unwrap();
            expected.push((h, level));
        }
        t.flush();
        t.validate().unwrap();
        // Objects near the edge whose box leaves the root's loose bounds
        // may have grown the root.
        let root = t.root_bounds().unwrap().size().x;
        let root_level = (root / m).log2() as i32;
        assert_eq!(root, m * 2f32.powi(root_level));
        let mut depths = std::collections::BTreeSet::new();
        for (h, level) in expected {
            let depth = (root_level - level).max(0) as usize;
            assert_eq!(
                t.depth_of(h).unwrap(),
                Some(depth),
                "looseness {looseness}, min size {m}: {:?}",
                t.get(h).unwrap().shape
            );
            depths.insert(depth);
        }
        assert!(depths.len() >= 6, "the sizes span many levels: {depths:?}");
    }
}

#[test]
fn an_object_on_a_split_plane_still_sinks_to_its_level() {
    // A tight octree keeps anything touching the root's centre planes at the
    // root; the loose tree places by centre and size.
    let mut t = tree(LooseConfig {
        world: world(0.0, 60.0),
        ..Default::default()
    });
    let h = t
        .insert(ObjectDesc::new(ball(32.0, 32.0, 32.0, 0.45), 0))
        .unwrap();
    assert_eq!(t.depth_of(h).unwrap(), None, "queued until the build");
    t.flush();
    assert_eq!(t.depth_of(h).unwrap(), Some(6));
    assert_eq!(t.stats().max_depth, 6);
    t.validate().unwrap();
}

#[test]
fn small_moves_inside_a_cell_are_done_in_place() {
    let mut t = tree(LooseConfig {
        world: world(0.0, 60.0),
        ..Default::default()
    });
    // Objects of half extent 3 live in cells of side 8 (pad 4).
    let hs: Vec<Handle> = (0..8)
        .map(|i| {
            let x = 4.0 + 8.0 * i as f32;
            t.insert(ObjectDesc::new(ball(x, 4.0, 4.0, 3.0), i))
                .unwrap()
        })
        .collect();
    t.flush();
    let nodes = t.stats().nodes;
    t.reset_counters();
    // Jitter every object inside its cell: 800 updates, all in place.
    let mut r = rng(3);
    for _ in 0..100 {
        for (i, &h) in hs.iter().enumerate() {
            let x = 8.0 * i as f32 + r.random_range(0.0..7.99);
            let y = r.random_range(0.0..7.99);
            // The radius changes too, but not the level: (2, 4] has pad 4.
            let rad = r.random_range(2.01..4.0);
            t.update(h, ball(x, y, 4.0, rad)).unwrap();
        }
    }
    t.validate().unwrap();
    let moves = t.update_counts();
    assert_eq!(moves.in_place, 800);
    assert_eq!(moves.relocated, 0);
    assert_eq!(t.stats().nodes, nodes, "no node made or emptied");
    // Leaving the loose bounds relocates (the cell [0, 8) with pad 4
    // reaches x = 12; the box now reaches 15.5), as does a change of size.
    t.update(hs[0], ball(12.5, 4.0, 4.0, 3.0)).unwrap();
    t.validate().unwrap();
    assert_eq!(t.update_counts().relocated, 1);
    let mut out = Vec::new();
    t.query_radius(Vec3::new(12.5, 4.0, 4.0), 0.0, Filter::ALL, &mut out);
    out.sort();
    assert_eq!(out, vec![hs[0], hs[1]]);
    // A centre that crosses into the next cell while the box stays in the
    // loose bounds (the cell [8, 16) reaches x = 20) stays in its node, and
    // the queries and the pair search still find it there.
    t.reset_counters();
    assert_eq!(t.update_counts().in_place, 0);
    let depth = t.depth_of(hs[1]).unwrap();
    t.update(hs[1], ball(16.5, 4.0, 4.0, 3.0)).unwrap();
    t.validate().unwrap();
    assert_eq!(t.update_counts().in_place, 1);
    assert_eq!(t.update_counts().relocated, 0);
    assert_eq!(t.depth_of(hs[1]).unwrap(), depth);
    t.query_radius(Vec3::new(19.25, 4.0, 4.0), 0.0, Filter::ALL, &mut out);
    assert!(out.contains(&hs[1]), "found past its cell: {out:?}");
    let mut pairs = Vec::new();
    t.pairs(&mut pairs);
    let h = t
        .insert(ObjectDesc::new(ball(19.0, 4.0, 4.0, 0.5), 8))
        .unwrap();
    t.flush();
    t.pairs(&mut pairs);
    assert!(
        pairs
            .iter()
            .any(|p| (p.a, p.b) == (hs[1], h) || (p.a, p.b) == (h, hs[1])),
        "paired past its cell"
    );
    t.validate().unwrap();
}

#[test]
fn a_resized_object_moves_to_the_level_of_its_new_size() {
    let mut t = tree(LooseConfig {
        world: world(0.0, 60.0),
        ..Default::default()
    });
    let h = t
        .insert(ObjectDesc::new(ball(20.0, 20.0, 20.0, 3.0), 0))
        .unwrap();
    t.insert(ObjectDesc::new(ball(50.0, 50.0, 50.0, 3.0), 1))
        .unwrap();
    t.flush();
    assert_eq!(t.depth_of(h).unwrap(), Some(3));
    // Shrink, in the same cell: it must sink (the cell no longer fits it
    // best). Then grow: it must climb. Pad of level l is 2^(l-1).
    for (rad, depth) in [(0.3, 6), (0.9, 5), (1.5, 4), (30.0, 0), (3.0, 3), (0.0, 6)] {
        t.update(h, ball(20.0, 20.0, 20.0, rad)).unwrap();
        t.validate().unwrap();
        assert_eq!(t.depth_of(h).unwrap(), Some(depth), "radius {rad}");
    }
    assert_eq!(t.update_counts().in_place, 0);
    assert_eq!(t.update_counts().relocated, 6);
}

#[test]
fn an_object_too_big_for_the_root_grows_it_and_is_lifted_by_later_growth() {
    let mut t = tree(LooseConfig {
        world: world(0.0, 16.0),
        ..Default::default()
    });
    // Root [0, 32)^3, level 5, pad 16: loose bounds [-16, 48]^3.
    assert_eq!(t.root_bounds().unwrap().size(), Vec3::splat(32.0));
    let big = t
        .insert(ObjectDesc::new(ball(8.0, 8.0, 8.0, 40.0), 0))
        .unwrap();
    t.flush();
    t.validate().unwrap();
    // It needs pad 64 (level 7); one doubling (level 6, pad 32) already
    // holds it, so it sits at the root, below its own level.
    assert_eq!(t.root_bounds().unwrap().size(), Vec3::splat(64.0));
    assert_eq!(t.depth_of(big).unwrap(), Some(0));
    // A far object makes the root grow again: the big one must move up to
    // the new root, and stay there at its own level.
    let far = t
        .insert(ObjectDesc::new(ball(3000.0, 8.0, 8.0, 0.5), 1))
        .unwrap();
    t.flush();
    t.validate().unwrap();
    let root_level = |t: &LooseOctree<u32>| t.root_bounds().unwrap().size().x.log2() as usize;
    assert!(root_level(&t) >= 12);
    assert_eq!(t.depth_of(big).unwrap(), Some(root_level(&t) - 7));
    t.update(far, ball(-9000.0, 8.0, 8.0, 0.5)).unwrap();
    t.validate().unwrap();
    assert!(root_level(&t) >= 14);
    assert_eq!(t.depth_of(big).unwrap(), Some(root_level(&t) - 7));
    let mut pairs = Vec::new();
    t.pairs(&mut pairs);
    assert!(pairs.is_empty());
}

#[test]
fn reject_policy_refuses_and_leaves_the_object_unchanged() {
    let mut t = tree(LooseConfig {
        world: world(0.0, 16.0),
        out_of_bounds: OutOfBounds::Reject,
        ..Default::default()
    });
    // The root cell is [0, 32)^3, its loose bounds [-16, 48]^3.
    assert_eq!(
        t.insert(ObjectDesc::new(ball(40.0, 1.0, 1.0, 0.5), 9)),
        Err(Error::OutsideWorld),
        "centre outside the root cell"
    );
    assert_eq!(
        t.insert(ObjectDesc::new(ball(30.0, 1.0, 1.0, 20.0), 9)),
        Err(Error::OutsideWorld),
        "box outside the root's loose bounds"
    );
    let a = t
        .insert(ObjectDesc::new(ball(1.0, 1.0, 1.0, 0.5), 0))
        .unwrap();
    t.flush();
    assert_eq!(
        t.update(a, ball(32.0, 1.0, 1.0, 0.5)),
        Err(Error::OutsideWorld)
    );
    assert_eq!(t.get(a).unwrap().shape, ball(1.0, 1.0, 1.0, 0.5));
    // Inside the loose bounds but with the centre in the cell: fine.
    t.update(a, ball(31.0, 1.0, 1.0, 10.0)).unwrap();
    assert_eq!(t.len(), 1);
    assert_eq!(t.root_bounds().unwrap().size(), Vec3::splat(32.0));
    t.validate().unwrap();
}

#[test]
fn pairs_across_sibling_subtrees_are_found_once() {
    // Small objects on both sides of the root's split planes sink into
    // different subtrees, yet overlap through their loose bounds.
    let mut t = tree(LooseConfig {
        world: world(0.0, 60.0),
        ..Default::default()
    });
    let mut b = BruteForce::<Vec3, u32>::new();
    let mut id = 0;
    for x in [31.6f32, 32.2] {
        for y in [31.7f32, 32.3] {
            for z in [31.8f32, 32.1] {
                let d = ObjectDesc::new(ball(x, y, z, 0.45), id);
                t.insert(d.clone()).unwrap();
                b.insert(d).unwrap();
                id += 1;
            }
        }
    }
    t.flush();
    let pt = same_pairs(&t, &b);
    assert!(pt.len() >= 12, "a real test: {} pairs", pt.len());
    // The eight objects are in eight different subtrees of the root.
    let st = t.stats();
    assert_eq!(st.objects_per_node[1], 8, "{st:?}");
}

#[test]
fn the_pair_search_tests_a_small_share_of_all_pairs() {
    let mut t = tree(LooseConfig::default());
    let mut b = BruteForce::<Vec3, u32>::new();
    let mut r = rng(11);
    for i in 0..2000 {
        let c: Vec3 = vec_in(&mut r, Vec3::ZERO, Vec3::splat(200.0));
        let d = ObjectDesc::new(Shape::sphere(c, r.random_range(0.2..2.0)), i);
        t.insert(d.clone()).unwrap();
        b.insert(d).unwrap();
    }
    t.flush();
    same_pairs(&t, &b);
    let c = t.counters();
    let all = 2000u64 * 1999 / 2;
    assert!(c.pair_tests > 0 && c.node_visits > 0);
    assert!(
        c.pair_tests * 100 < all,
        "{} pair tests, over 1% of {all}",
        c.pair_tests
    );
}

#[test]
fn many_objects_at_one_point_all_pair_up() {
    let mut t = LooseQuadtree::<u32>::new();
    let descs = (0..1000)
        .map(|i| ObjectDesc::new(Shape::sphere(Vec2::splat(5.0), 0.0), i))
        .collect();
    t.insert_many(descs).unwrap();
    let mut n = 0u64;
    t.for_each_pair(|_, _, _, _| n += 1);
    assert_eq!(n, 1000 * 999 / 2);
    t.validate().unwrap();
}

#[test]
fn huge_and_zero_size_objects_mix() {
    let mut t = LooseQuadtree::<u32>::new();
    let mut b = BruteForce::<Vec2, u32>::new();
    let shapes = [
        Shape::sphere(Vec2::ZERO, 1e18),
        Shape::sphere(Vec2::splat(3.0), 0.0),
        Shape::cuboid(Vec2::new(-7.0, 2.0), Vec2::ZERO),
        Shape::cuboid(Vec2::new(5e17, -5e17), Vec2::new(1e17, 0.0)),
        Shape::sphere(Vec2::splat(3.0), 0.0),
    ];
    for (i, s) in shapes.into_iter().enumerate() {
        t.insert(ObjectDesc::new(s, i as u32)).unwrap();
        b.insert(ObjectDesc::new(s, i as u32)).unwrap();
    }
    t.flush();
    let pt = same_pairs(&t, &b);
    assert_eq!(
        pt.len(),
        5,
        "the huge one touches all four, the two points each other"
    );
    t.validate().unwrap();
}

#[test]
fn with_a_leaf_capacity_objects_sink_only_where_crowded() {
    let mut t = tree(LooseConfig {
        world: world(0.0, 60.0),
        leaf_capacity: 1,
        ..Default::default()
    });
    // Root 64 (level 6); these objects' own level is 0 (depth 6).
    let a = t
        .insert(ObjectDesc::new(ball(10.0, 10.0, 10.0, 0.4), 0))
        .unwrap();
    t.flush();
    assert_eq!(t.depth_of(a).unwrap(), Some(0), "alone: the root has room");
    let b = t
        .insert(ObjectDesc::new(ball(50.0, 50.0, 50.0, 0.4), 1))
        .unwrap();
    t.flush();
    t.validate().unwrap();
    assert_eq!(t.depth_of(a).unwrap(), Some(1), "the full root split");
    assert_eq!(t.depth_of(b).unwrap(), Some(1));
    // A neighbour in a's octant: they split apart (cells of side 4).
    let c = t
        .insert(ObjectDesc::new(ball(13.0, 10.0, 10.0, 0.4), 2))
        .unwrap();
    t.flush();
    t.validate().unwrap();
    assert_eq!(t.depth_of(a).unwrap(), Some(4));
    assert_eq!(t.depth_of(c).unwrap(), Some(4));
    // Two in one cell of side 1 go down to their own level and stay there.
    let d = t
        .insert(ObjectDesc::new(ball(13.5, 10.0, 10.0, 0.4), 3))
        .unwrap();
    t.flush();
    t.validate().unwrap();
    assert_eq!(t.depth_of(c).unwrap(), Some(6));
    assert_eq!(t.depth_of(d).unwrap(), Some(6));
    // Moving inside its large leaf cell is done in place.
    t.reset_counters();
    t.update(b, ball(40.0, 60.0, 33.0, 0.4)).unwrap();
    t.update(b, ball(63.0, 32.5, 63.0, 0.4)).unwrap();
    assert_eq!(t.update_counts().in_place, 2);
    // Removal does not lift: a stays where it is (a leaf with room).
    t.remove(c).unwrap();
    t.validate().unwrap();
    assert_eq!(t.depth_of(a).unwrap(), Some(4));
    // An object larger than a leaf's pad stops at its level on the way.
    let big = t
        .insert(ObjectDesc::new(ball(11.0, 11.0, 11.0, 6.0), 4))
        .unwrap();
    t.flush();
    t.validate().unwrap();
    assert_eq!(t.depth_of(big).unwrap(), Some(2), "pad 8 for cells of 16");
    let mut pairs = Vec::new();
    t.pairs(&mut pairs);
    assert_eq!(pairs.len(), 2, "big touches a and d");
}

#[test]
fn a_leaf_capacity_keeps_sparse_worlds_small() {
    let count = |capacity| {
        let mut t = tree(LooseConfig {
            leaf_capacity: capacity,
            ..Default::default()
        });
        let mut r = rng(5);
        for i in 0..3000 {
            let c: Vec3 = vec_in(&mut r, Vec3::ZERO, Vec3::splat(2000.0));
            t.insert(ObjectDesc::new(Shape::sphere(c, 0.4), i)).unwrap();
        }
        t.flush();
        t.validate().unwrap();
        t.stats().nodes
    };
    let (chains, capped) = (count(0), count(1));
    assert!(
        capped * 3 < chains,
        "{capped} nodes with capacity 1, {chains} with 0"
    );
    let mut t = tree(LooseConfig {
        leaf_capacity: 1,
        world: world(0.0, 1000.0),
        ..Default::default()
    });
    let descs = (0..100_000)
        .map(|i| ObjectDesc::new(Shape::sphere(Vec3::splat(3.3), 0.0), i))
        .collect();
    t.insert_many(descs).unwrap();
    t.flush();
    assert_eq!(t.stats().nodes, 11, "one chain down to the smallest cell");
    t.validate().unwrap();
}

#[test]
fn bad_configurations_are_refused() {
    for k in [1.0f32, 0.5, 0.0, -2.0, f32::NAN, f32::INFINITY] {
        let c = LooseConfig::<Vec3> {
            looseness: k,
            ..Default::default()
        };
        assert!(
            matches!(
                LooseOctree::<u32>::with_config(c),
                Err(Error::InvalidConfig(_))
            ),
            "looseness {k}"
        );
    }
    // 0 is the automatic size (chosen at the first build), not an error.
    assert!(
        LooseQuadtree::<u32>::with_config(LooseConfig {
            min_node_size: 0.0,
            ..Default::default()
        })
        .is_ok()
    );
    for m in [-1.0f32, -f32::MIN_POSITIVE, f32::NAN, f32::INFINITY, 1e31] {
        let c = LooseConfig::<Vec2> {
            min_node_size: m,
            ..Default::default()
        };
        assert!(
            matches!(
                LooseQuadtree::<u32>::with_config(c),
                Err(Error::InvalidConfig(_))
            ),
            "min_node_size {m}"
        );
    }
    for w in [
        Aabb {
            min: Vec3::ONE,
            max: Vec3::ZERO,
        },
        Aabb {
            min: Vec3::ZERO,
            max: Vec3::splat(f32::NAN),
        },
        Aabb {
            min: Vec3::ZERO,
            max: Vec3::splat(1e31),
        },
    ] {
        let c = LooseConfig {
            world: Some(w),
            ..Default::default()
        };
        assert!(
            matches!(
                LooseOctree::<u32>::with_config(c),
                Err(Error::InvalidConfig(_))
            ),
            "world {w:?}"
        );
    }
    // Looseness just above 1 and very large are fine.
    for k in [1.0 + f32::EPSILON, 1000.0] {
        let mut t = tree(LooseConfig {
            looseness: k,
            ..Default::default()
        });
        t.insert(ObjectDesc::new(ball(1.0, 2.0, 3.0, 4.0), 0))
            .unwrap();
        t.flush();
        t.validate().unwrap();
    }
}

/// The trickier standard scenes with extreme settings, against the brute
/// force: looseness a hair above 1 (nearly everything at the root, which
/// grows to hold boxes), a high looseness (every node's loose bounds cover
/// most of the world), and tiny cells (deep chains).
#[test]
fn extreme_settings_match_brute_force() {
    fn scenes<V: Vector>(names: &[&str]) -> Vec<crate::common::Scene<V>> {
        standard_scenes::<V>(60.0)
            .into_iter()
            .filter(|s| names.contains(&s.name))
            .collect()
    }
    for (looseness, m) in [(1.0 + 4.0 * f32::EPSILON, 0.25), (16.0, 1.0), (2.0, 1e-3)] {
        let config = LooseConfig {
            looseness,
            min_node_size: m,
            ..Default::default()
        };
        for s in scenes::<Vec3>(&["uniform", "huge among tiny", "leaving the world"]) {
            run_scene(&s, || LooseOctree::<u32>::with_config(config).unwrap());
        }
        let config = LooseConfig {
            looseness,
            min_node_size: m,
            ..Default::default()
        };
        for s in scenes::<Vec2>(&["zero-size", "one point, moving apart"]) {
            run_scene(&s, || LooseQuadtree::<u32>::with_config(config).unwrap());
        }
    }
}
