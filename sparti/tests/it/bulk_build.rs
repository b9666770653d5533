//! The bulk build of a fresh tree (one partition pass over the queued
//! objects) makes the same tree as filing the objects one by one: the same
//! nodes, at the same depths, holding as many objects each.

use glam::{Vec2, Vec3};
use rand::Rng;
use sparti::{
    Aabb, Bsp, BspConfig, LooseConfig, LooseOrthtree, ObjectDesc, Orthtree, OrthtreeConfig, Shape,
    SpatialIndex, Vector,
};

fn shapes<V: Vector>(seed: u64, n: usize, side: f32) -> Vec<Shape<V>> {
    let mut r = crate::common::rng(seed);
    (0..n)
        .map(|i| {
            let mut c = V::ZERO;
            for k in 0..V::DIM {
                c = c.with(k, r.random_range(0.0..side));
            }
            // Some on the split planes of the first levels, some at one point.
            if i % 7 == 0 {
                c = c.with(0, side / 2.0);
            }
            if i % 11 == 0 {
                c = V::splat(side / 4.0);
            }
            let s = r.random_range(0.0..3.0f32);
            if i % 2 == 0 {
                Shape::sphere(c, s)
            } else {
                Shape::cuboid(c, V::splat(s * 0.5))
            }
        })
        .collect()
}

/// Every node as (depth, bounds, object count), sorted.
fn layout<V: Vector, S: SpatialIndex<V, u32>>(s: &S) -> Vec<(usize, Vec<u32>, usize)> {
    let mut v = Vec::new();
    s.for_each_node(|b: &Aabb<V>, depth, count| {
        let bits = (0..V::DIM)
            .flat_map(|i| [b.min.get(i).to_bits(), b.max.get(i).to_bits()])
            .collect();
        v.push((depth, bits, count));
    });
    v.sort();
    v
}

/// Builds the same objects in bulk and one by one (each flushed on its
/// own) and compares the trees. With every object inside a preset world,
/// neither build grows the root, and both start from the same one.
fn same_tree<V: Vector, S: SpatialIndex<V, u32>>(make: impl Fn() -> S, seed: u64) {
    same_tree_of(make, &shapes::<V>(seed, 2000, 64.0));
}

/// [`same_tree`] of given shapes.
fn same_tree_of<V: Vector, S: SpatialIndex<V, u32>>(make: impl Fn() -> S, shapes: &[Shape<V>]) {
    let mut bulk = make();
    let descs = shapes
        .iter()
        .enumerate()
        .map(|(i, s)| ObjectDesc::new(*s, i as u32))
        .collect();
    bulk.insert_many(descs).unwrap();
    bulk.flush();
    bulk.validate().unwrap();
    let mut one = make();
    for (i, s) in shapes.iter().enumerate() {
        one.insert(ObjectDesc::new(*s, i as u32)).unwrap();
        one.flush();
    }
    one.validate().unwrap();
    assert_eq!(
        layout(&bulk),
        layout(&one),
        "bulk and one-by-one trees differ"
    );
}

fn compare<V: Vector>(config: OrthtreeConfig<V>, seed: u64) {
    same_tree(|| Orthtree::<V, u32>::with_config(config).unwrap(), seed);
}

fn compare_bsp<V: Vector>(config: BspConfig<V>, seed: u64) {
    same_tree(|| Bsp::<V, u32>::with_config(config).unwrap(), seed);
}

#[test]
fn octree_bulk_build_is_one_by_one_build() {
    let world = Aabb::new(Vec3::splat(-4.0), Vec3::splat(68.0)).unwrap();
    for (seed, min) in [(1, 1.0), (2, 0.25), (3, 8.0)] {
        compare(
            OrthtreeConfig {
                world: Some(world),
                min_node_size: min,
                ..Default::default()
            },
            seed,
        );
    }
}

#[test]
fn quadtree_bulk_build_is_one_by_one_build() {
    let world = Aabb::new(Vec2::splat(-4.0), Vec2::splat(68.0)).unwrap();
    compare(
        OrthtreeConfig {
            world: Some(world),
            min_node_size: 1.0,
            ..Default::default()
        },
        5,
    );
}

#[test]
fn bsp_bulk_build_is_one_by_one_build() {
    for (seed, capacity, min) in [(7, 1, 1.0), (8, 0, 1.0), (9, 4, 0.5), (10, 2, 16.0)] {
        let config = BspConfig {
            world: Some(Aabb::new(Vec3::splat(-4.0), Vec3::splat(68.0)).unwrap()),
            leaf_capacity: capacity,
            min_dimension: min,
            ..Default::default()
        };
        compare_bsp(config, seed);
    }
    let world2 = Aabb::new(Vec2::splat(-4.0), Vec2::new(68.0, 90.0)).unwrap();
    compare_bsp(
        BspConfig {
            world: Some(world2),
            ..Default::default()
        },
        11,
    );
}

#[test]
fn loose_bulk_build_is_one_by_one_build() {
    for (seed, capacity, looseness) in [(12, 0, 2.0), (13, 1, 2.0), (14, 8, 1.5), (15, 0, 3.0)] {
        let config = LooseConfig {
            world: Some(Aabb::new(Vec3::splat(-4.0), Vec3::splat(68.0)).unwrap()),
            leaf_capacity: capacity,
            looseness,
            min_node_size: 1.0,
            ..Default::default()
        };
        same_tree(
            || LooseOrthtree::<Vec3, u32>::with_config(config).unwrap(),
            seed,
        );
    }
    let config = LooseConfig {
        world: Some(Aabb::new(Vec2::splat(-4.0), Vec2::splat(68.0)).unwrap()),
        leaf_capacity: 2,
        min_node_size: 1.0,
        ..Default::default()
    };
    same_tree(
        || LooseOrthtree::<Vec2, u32>::with_config(config).unwrap(),
        16,
    );
}

/// Far from the origin, with a node size that is no power of two, the
/// cells' `f32` bounds are rounded: the loose trees' bulk build, which
/// computes each object's cell in exact arithmetic, still makes the tree
/// filing one by one makes (objects whose cell the rounding moves are
/// filed one by one).
#[test]
fn loose_bulk_build_far_from_the_origin_is_one_by_one_build() {
    fn far<V: Vector>(seed: u64, at: f32) {
        let shapes: Vec<Shape<V>> = shapes::<V>(seed, 3000, 64.0)
            .into_iter()
            .map(|s| s.translated(V::splat(at)))
            .collect();
        for min_node_size in [0.37, 1.0] {
            let config = LooseConfig {
                world: Some(Aabb::new(V::splat(at - 4.0), V::splat(at + 68.0)).unwrap()),
                min_node_size,
                ..Default::default()
            };
            same_tree_of(
                || LooseOrthtree::<V, u32>::with_config(config).unwrap(),
                &shapes,
            );
        }
    }
    for (seed, at) in [(31, 1.0e5), (32, -3.3e5), (33, 7.77e6)] {
        far::<Vec3>(seed, at);
        far::<Vec2>(seed + 10, at);
    }
}

/// Left at 0 (the default), the minimum node size is chosen at the first
/// build: four times the median object's largest side, rounded up to a
/// power of two; `config()` tells it, and later builds keep it. The bulk
/// build and filing one by one agree once it is chosen.
#[test]
fn the_automatic_minimum_node_size_comes_from_the_first_build() {
    // Sizes 1 to 3 (median about 2): 4 x 2 = 8.
    let shapes = shapes::<Vec3>(21, 2000, 64.0);
    let descs: Vec<_> = shapes
        .iter()
        .enumerate()
        .map(|(i, s)| ObjectDesc::new(*s, i as u32))
        .collect();
    let mut sides: Vec<f32> = shapes
        .iter()
        .map(|s| {
            let b = s.aabb();
            (b.max - b.min).max_element()
        })
        .collect();
    sides.sort_by(f32::total_cmp);
    let want = (4.0 * sides[sides.len() / 2]).log2().ceil().exp2();
    assert!((4.0..=16.0).contains(&want), "{want}");
    let world = Aabb::new(Vec3::splat(-4.0), Vec3::splat(68.0)).unwrap();
    let mut oct = Orthtree::<Vec3, u32>::with_config(OrthtreeConfig {
        world: Some(world),
        ..Default::default()
    })
    .unwrap();
    assert_eq!(oct.config().min_node_size, 0.0, "not chosen before a build");
    oct.insert_many(descs.clone()).unwrap();
    oct.flush();
    oct.validate().unwrap();
    assert_eq!(oct.config().min_node_size, want);
    let mut loose = LooseOrthtree::<Vec3, u32>::with_config(LooseConfig {
        world: Some(world),
        ..Default::default()
    })
    .unwrap();
    loose.validate().unwrap();
    loose.insert_many(descs).unwrap();
    loose.flush();
    loose.validate().unwrap();
    assert_eq!(loose.config().min_node_size, want);
    // Chosen, the bulk build and one-by-one filing give the same tree.
    compare(*oct.config(), 22);
    same_tree(
        || LooseOrthtree::<Vec3, u32>::with_config(*loose.config()).unwrap(),
        23,
    );
    // Later builds keep it, whatever they hold.
    oct.insert(ObjectDesc::new(
        Shape::sphere(Vec3::splat(30.0), 20.0),
        9999,
    ))
    .unwrap();
    oct.flush();
    assert_eq!(oct.config().min_node_size, want);
    // Points only: a size from the region they span; nothing: 1.
    let mut points = Orthtree::<Vec3, u32>::new();
    for i in 0..10 {
        points
            .insert(ObjectDesc::new(
                Shape::sphere(Vec3::splat(i as f32 * 100.0), 0.0),
                i,
            ))
            .unwrap();
    }
    points.flush();
    points.validate().unwrap();
    assert_eq!(
        points.config().min_node_size,
        1.0,
        "900 x sqrt(3)... / 1024 rounds up to 1"
    );
    let mut one = Orthtree::<Vec3, u32>::new();
    one.insert(ObjectDesc::new(Shape::sphere(Vec3::ZERO, 0.0), 0))
        .unwrap();
    one.flush();
    one.validate().unwrap();
    assert_eq!(one.config().min_node_size, 1.0);
}
