//! Behaviours specific to the BSP (S4): splits across the largest side,
//! the minimum dimension, flat worlds, moves from the current node (L3),
//! growth (L4), degenerate input (L6), bad settings. What every family
//! does the same way (the lazy build, lifespans and pruning, statics, one
//! point, the coordinate limit) is in `behaviour.rs`.

use glam::{Vec2, Vec3};
use rand::Rng;

use crate::common::same_pairs;
use sparti::{
    Aabb, BruteForce, Bsp2, Bsp3, BspConfig, Error, Filter, Handle, ObjectDesc, OutOfBounds, Shape,
    SpatialIndex,
};

fn rect(x0: f32, y0: f32, x1: f32, y1: f32) -> Aabb<Vec2> {
    Aabb::new(Vec2::new(x0, y0), Vec2::new(x1, y1)).unwrap()
}

fn disc(x: f32, y: f32, r: f32) -> Shape<Vec2> {
    Shape::sphere(Vec2::new(x, y), r)
}

fn ball(x: f32, y: f32, z: f32, r: f32) -> Shape<Vec3> {
    Shape::sphere(Vec3::new(x, y, z), r)
}

/// The article's window: 640 x 480.
fn window(min_dimension: f32, leaf_capacity: u32) -> Bsp2<u32> {
    Bsp2::with_config(BspConfig {
        world: Some(rect(0.0, 0.0, 640.0, 480.0)),
        min_dimension,
        leaf_capacity,
        out_of_bounds: OutOfBounds::Grow,
    })
    .unwrap()
}

fn nodes_at_depth<V: sparti::Vector, T>(t: &sparti::Bsp<V, T>, d: usize) -> Vec<Aabb<V>> {
    let mut out = Vec::new();
    t.for_each_node(|b, depth, _| {
        if depth == d {
            out.push(*b);
        }
    });
    out
}

#[test]
fn the_first_split_of_a_640x480_world_is_vertical_at_x_320() {
    let mut t = window(1.0, 1);
    t.insert(ObjectDesc::new(disc(100.0, 100.0, 5.0), 0))
        .unwrap();
    t.insert(ObjectDesc::new(disc(500.0, 100.0, 5.0), 1))
        .unwrap();
    t.flush();
    t.validate().unwrap();
    assert_eq!(t.root_bounds(), Some(rect(0.0, 0.0, 640.0, 480.0)));
    let mut halves = nodes_at_depth(&t, 1);
    halves.sort_by(|a, b| a.min.x.total_cmp(&b.min.x));
    assert_eq!(
        halves,
        vec![rect(0.0, 0.0, 320.0, 480.0), rect(320.0, 0.0, 640.0, 480.0)]
    );
    // The 320 x 480 halves are taller than wide: they split across y = 240.
    t.insert(ObjectDesc::new(disc(100.0, 400.0, 5.0), 2))
        .unwrap();
    t.flush();
    t.validate().unwrap();
    let mut quarters = nodes_at_depth(&t, 2);
    quarters.sort_by(|a, b| a.min.y.total_cmp(&b.min.y));
    assert_eq!(
        quarters,
        vec![rect(0.0, 0.0, 320.0, 240.0), rect(0.0, 240.0, 320.0, 480.0)]
    );
}

#[test]
fn cells_under_32x32_in_the_articles_window_are_20x30() {
    // min_dimension 32: a node splits while its largest side exceeds 32.
    // 640 x 480 -> 320 x 480 -> 320 x 240 -> ... -> 40 x 30 -> 20 x 30.
    let mut t = window(32.0, 0);
    let a = t.insert(ObjectDesc::new(disc(10.0, 10.0, 1.0), 0)).unwrap();
    let b = t
        .insert(ObjectDesc::new(disc(630.0, 470.0, 1.0), 1))
        .unwrap();
    t.flush();
    t.validate().unwrap();
    assert_eq!(
        t.node_bounds_of(a).unwrap(),
        Some(rect(0.0, 0.0, 20.0, 30.0))
    );
    assert_eq!(
        t.node_bounds_of(b).unwrap(),
        Some(rect(620.0, 450.0, 640.0, 480.0))
    );
    assert_eq!(t.stats().max_depth, 9, "5 cuts across x, 4 across y");
    let mut sizes = Vec::new();
    t.for_each_node(|b, _, _| sizes.push(b.size()));
    assert!(sizes.contains(&Vec2::new(40.0, 30.0)), "40 > 32 splits");
    assert!(sizes.iter().all(|s| s.x >= 20.0 && s.y >= 30.0));
}

#[test]
fn the_articles_scene_tests_a_few_percent_of_the_pairs() {
    // 100 discs bouncing in the window, cells under 32 x 32 (M1): the
    // article measured 3.2% of N(N-1) at best.
    let mut r = crate::common::rng(7);
    let mut t = window(32.0, 0);
    let mut b = BruteForce::<Vec2, u32>::new();
    let mut discs = Vec::new();
    for i in 0..100 {
        let p = Vec2::new(r.random_range(8.0..632.0), r.random_range(8.0..472.0));
        let v = Vec2::new(r.random_range(-3.0..3.0), r.random_range(-3.0..3.0));
        let d = ObjectDesc::new(Shape::sphere(p, 6.0), i);
        discs.push((t.insert(d.clone()).unwrap(), b.insert(d).unwrap(), p, v));
    }
    let (mut pt, mut pb) = (Vec::new(), Vec::new());
    let mut tests = 0;
    for _ in 0..50 {
        for (ht, hb, p, v) in &mut discs {
            *p += *v;
            if p.x < 6.0 || p.x > 634.0 {
                v.x = -v.x;
            }
            if p.y < 6.0 || p.y > 474.0 {
                v.y = -v.y;
            }
            t.update(*ht, Shape::sphere(*p, 6.0)).unwrap();
            b.update(*hb, Shape::sphere(*p, 6.0)).unwrap();
        }
        t.reset_counters();
        t.pairs(&mut pt);
        b.pairs(&mut pb);
        tests += t.counters().pair_tests;
        let ids = |s: &dyn Fn(Handle) -> u32, v: &[sparti::Pair]| {
            let mut x: Vec<(u32, u32)> = v.iter().map(|p| (s(p.a), s(p.b))).collect();
            x.sort_unstable();
            x
        };
        assert_eq!(
            ids(&|h| t.get(h).unwrap().value, &pt),
            ids(&|h| b.get(h).unwrap().value, &pb)
        );
        t.end_frame();
        t.validate().unwrap();
    }
    let share = tests as f64 / 50.0 / (100.0 * 99.0);
    eprintln!("pair tests: {:.2}% of N(N-1)", share * 100.0);
    // The article's best figure; this scene gives about 1.2%.
    assert!(share < 0.032, "{:.2}% of N(N-1)", share * 100.0);
    assert!(t.stats().share_of_nodes_with_at_most(5) > 0.99);
}

#[test]
fn a_flat_world_gets_cells_that_are_not_flat_slivers() {
    // 1000 x 1000 x 4 with cells of at most 1: cut across x and y until
    // about 4 wide, then across z too. Equal cuts on every axis, as in an
    // octree over the world box, would give 0.98 x 0.98 x 0.004 slivers.
    let mut t = Bsp3::<u32>::with_config(BspConfig {
        world: Some(Aabb::new(Vec3::ZERO, Vec3::new(1000.0, 1000.0, 4.0)).unwrap()),
        leaf_capacity: 0,
        ..Default::default()
    })
    .unwrap();
    let mut r = crate::common::rng(3);
    for i in 0..2000 {
        let p = Vec3::new(
            r.random_range(0.0..1000.0),
            r.random_range(0.0..1000.0),
            r.random_range(0.5..3.5),
        );
        t.insert(ObjectDesc::new(ball(p.x, p.y, p.z, 0.2), i))
            .unwrap();
    }
    let probe = t
        .insert(ObjectDesc::new(ball(123.4, 567.8, 2.7, 0.01), 9999))
        .unwrap();
    t.flush();
    t.validate().unwrap();
    assert_eq!(
        t.node_bounds_of(probe).unwrap().unwrap().size(),
        Vec3::new(0.976_562_5, 0.976_562_5, 1.0),
        "the deepest cells are cubes, near enough"
    );
    let mut checked = 0;
    t.for_each_node(|b, _, _| {
        let s = b.size();
        if s.max_element() <= 8.0 {
            checked += 1;
            assert!(s.max_element() <= 2.0 * s.min_element(), "flat cell {s:?}");
        }
    });
    assert!(checked > 1000);
    let st = t.stats();
    // The first 14 levels only cut x and y (1000 -> 7.8), the z axis is cut
    // twice (4 -> 1), x and y 3 more times each: 22 levels.
    assert_eq!(st.max_depth, 22);
    let n = 2001.0;
    t.reset_counters();
    t.pairs(&mut Vec::new());
    assert!((t.counters().pair_tests as f64) < n * (n - 1.0) / 2.0 * 0.01);
}

#[test]
fn a_move_searches_from_the_current_node() {
    let mut t = Bsp2::<u32>::with_config(BspConfig {
        world: Some(rect(0.0, 0.0, 1024.0, 1024.0)),
        // One object a leaf (the octree's rule; the default keeps 8), so
        // that a few objects build a tree of several levels.
        leaf_capacity: 1,
        ..Default::default()
    })
    .unwrap();
    let a = t.insert(ObjectDesc::new(disc(1.5, 1.5, 0.1), 0)).unwrap();
    let b = t.insert(ObjectDesc::new(disc(2.5, 1.5, 0.1), 1)).unwrap();
    let c = t
        .insert(ObjectDesc::new(disc(1000.0, 1000.0, 0.1), 2))
        .unwrap();
    t.flush();
    t.validate().unwrap();
    let depth = t.stats().max_depth as u64;
    assert!(depth >= 16, "depth {depth}");
    assert_eq!(t.node_bounds_of(a).unwrap(), Some(rect(0.0, 0.0, 2.0, 4.0)));
    assert_eq!(t.node_bounds_of(b).unwrap(), Some(rect(2.0, 0.0, 4.0, 4.0)));
    // Within its cell: its own node only.
    t.reset_counters();
    t.update(a, disc(1.0, 3.0, 0.1)).unwrap();
    assert_eq!(t.update_visits(), 1);
    // Into the neighbouring cell: its node, the parent, and down again
    // (the neighbour's leaf splits, b moving down one level too).
    t.reset_counters();
    t.update(a, disc(2.5, 3.5, 0.1)).unwrap();
    t.validate().unwrap();
    assert_eq!(t.node_bounds_of(a).unwrap(), Some(rect(2.0, 2.0, 4.0, 4.0)));
    assert_eq!(t.node_bounds_of(b).unwrap(), Some(rect(2.0, 0.0, 4.0, 2.0)));
    let near = t.update_visits();
    assert!(near <= 6, "{near} visits for a move next door");
    // Across the world: up to the root and down the other side.
    t.reset_counters();
    t.update(a, disc(1000.0, 1001.0, 0.1)).unwrap();
    t.validate().unwrap();
    assert!(t.update_visits() > depth, "{} visits", t.update_visits());
    let mut out = Vec::new();
    t.query_radius(Vec2::new(1000.0, 1000.5), 0.5, Filter::ALL, &mut out);
    out.sort();
    assert_eq!(out, vec![a, c]);
}

#[test]
fn the_root_grows_towards_an_object_one_axis_at_a_time() {
    let mut t = window(1.0, 1);
    let a = t.insert(ObjectDesc::new(disc(10.0, 10.0, 1.0), 0)).unwrap();
    let b = t
        .insert(ObjectDesc::new(disc(600.0, 400.0, 1.0), 1))
        .unwrap();
    t.flush();
    // Out in x and y: y first (the thinner side, 480 -> 960), then x
    // (640 -> 1280): both steps split across the largest side.
    t.update(b, disc(1000.0, 900.0, 1.0)).unwrap();
    t.validate().unwrap();
    assert_eq!(t.root_bounds(), Some(rect(0.0, 0.0, 1280.0, 960.0)));
    let mut halves = nodes_at_depth(&t, 1);
    halves.sort_by(|p, q| p.min.x.total_cmp(&q.min.x));
    assert_eq!(
        halves,
        vec![
            rect(0.0, 0.0, 640.0, 960.0),
            rect(640.0, 0.0, 1280.0, 960.0)
        ]
    );
    assert_eq!(nodes_at_depth(&t, 2)[0], rect(0.0, 0.0, 640.0, 480.0));
    // Downwards and far away.
    t.update(b, disc(-5000.0, 100.0, 1.0)).unwrap();
    t.validate().unwrap();
    let root = t.root_bounds().unwrap();
    assert!(root.contains(&rect(-5001.0, 0.0, 640.0, 480.0)));
    let mut out = Vec::new();
    t.query_radius(Vec2::new(-5000.0, 100.0), 0.5, Filter::ALL, &mut out);
    assert_eq!(out, vec![b]);
    t.query_radius(Vec2::new(10.0, 10.0), 0.5, Filter::ALL, &mut out);
    assert_eq!(out, vec![a]);
}

#[test]
fn a_flat_world_grows_along_its_thin_axis() {
    let world = Aabb::new(Vec3::ZERO, Vec3::new(1000.0, 1000.0, 4.0)).unwrap();
    let mut t = Bsp3::<u32>::with_config(BspConfig {
        world: Some(world),
        ..Default::default()
    })
    .unwrap();
    let a = t
        .insert(ObjectDesc::new(ball(10.0, 10.0, 2.0, 1.0), 0))
        .unwrap();
    let b = t
        .insert(ObjectDesc::new(ball(900.0, 900.0, 2.0, 1.0), 1))
        .unwrap();
    t.flush();
    t.update(b, ball(900.0, 900.0, 100.0, 1.0)).unwrap();
    t.validate().unwrap();
    let root = t.root_bounds().unwrap();
    // Only z grew, by doublings of 4: 4 -> 8 -> ... -> 128.
    assert_eq!(
        root,
        Aabb::new(Vec3::ZERO, Vec3::new(1000.0, 1000.0, 128.0)).unwrap()
    );
    // The old world is still a node, its subtree kept.
    let mut found = false;
    t.for_each_node(|bnd, depth, _| found |= *bnd == world && depth == 5);
    assert!(found, "the world box is a node 5 levels down");
    assert_eq!(
        t.node_bounds_of(b).unwrap().unwrap().min.z,
        64.0,
        "b sinks into the new upper half"
    );
    let mut out = Vec::new();
    t.query_aabb(&world, Filter::ALL, &mut out);
    assert_eq!(out, vec![a]);
}

#[test]
fn objects_on_the_old_roots_face_move_up_after_growth() {
    let mut t = window(1.0, 0);
    // Touches the right face x = 640 and sinks deep, being small.
    let edge = t
        .insert(ObjectDesc::new(
            Shape::cuboid(Vec2::new(639.5, 10.0), Vec2::splat(0.5)),
            0,
        ))
        .unwrap();
    let inner = t
        .insert(ObjectDesc::new(disc(600.0, 10.0, 0.5), 1))
        .unwrap();
    t.flush();
    assert_ne!(t.node_bounds_of(edge).unwrap(), t.root_bounds());
    // Growth to the right makes x = 640 the new root's split plane.
    t.update(inner, disc(700.0, 10.0, 0.5)).unwrap();
    t.validate().unwrap();
    assert_eq!(t.root_bounds(), Some(rect(0.0, 0.0, 1280.0, 480.0)));
    assert_eq!(t.node_bounds_of(edge).unwrap(), t.root_bounds());
    let mut pairs = Vec::new();
    t.update(inner, disc(641.0, 10.0, 1.0)).unwrap();
    t.pairs(&mut pairs);
    assert_eq!(pairs.len(), 1, "they touch across the plane");
}

#[test]
fn reject_and_remove_policies() {
    let cfg = |p| BspConfig {
        world: Some(rect(0.0, 0.0, 64.0, 32.0)),
        out_of_bounds: p,
        ..Default::default()
    };
    let mut t = Bsp2::<u32>::with_config(cfg(OutOfBounds::Reject)).unwrap();
    assert_eq!(
        t.insert(ObjectDesc::new(disc(70.0, 1.0, 0.5), 9)),
        Err(Error::OutsideWorld)
    );
    let a = t.insert(ObjectDesc::new(disc(1.0, 1.0, 0.5), 0)).unwrap();
    t.flush();
    assert_eq!(t.update(a, disc(1.0, 32.0, 0.5)), Err(Error::OutsideWorld));
    assert_eq!(t.get(a).unwrap().shape, disc(1.0, 1.0, 0.5));
    assert_eq!(t.root_bounds(), Some(rect(0.0, 0.0, 64.0, 32.0)));
    t.validate().unwrap();

    let mut t = Bsp2::<u32>::with_config(cfg(OutOfBounds::Remove)).unwrap();
    let a = t.insert(ObjectDesc::new(disc(1.0, 1.0, 0.5), 7)).unwrap();
    let b = t.insert(ObjectDesc::new(disc(3.0, 1.0, 0.5), 8)).unwrap();
    t.flush();
    t.update(a, disc(-5.0, 1.0, 0.5)).unwrap();
    assert_eq!(t.get(a), Err(Error::StaleHandle(a)));
    assert_eq!(t.len(), 1);
    assert_eq!(t.take_evicted(), vec![(a, 7)]);
    assert!(t.take_evicted().is_empty());
    assert!(t.get(b).is_ok());
    assert_eq!(
        t.insert(ObjectDesc::new(disc(100.0, 1.0, 0.5), 9)),
        Err(Error::OutsideWorld)
    );
    // An object still queued for the build is evicted the same way.
    let c = t.insert(ObjectDesc::new(disc(5.0, 1.0, 0.5), 10)).unwrap();
    assert_eq!(t.node_bounds_of(c).unwrap(), None);
    t.update(c, disc(5.0, 40.0, 0.5)).unwrap();
    assert_eq!(t.take_evicted(), vec![(c, 10)]);
    assert_eq!(t.len(), 1);
    t.validate().unwrap();
}

#[test]
fn a_minimum_dimension_below_the_coordinates_precision_stays_bounded() {
    // Cells of 1e-30 cannot exist at x = 1e6 (f32 steps of 1/16 there):
    // splitting stops where the middle no longer falls strictly inside.
    let mut t = Bsp3::<u32>::with_config(BspConfig {
        min_dimension: 1e-30,
        ..Default::default()
    })
    .unwrap();
    let mut b = BruteForce::<Vec3, u32>::new();
    for i in 0..200 {
        let d = ObjectDesc::new(ball(1e6 + (i % 7) as f32 * 0.0625, 5.0, 5.0, 0.0), i);
        t.insert(d.clone()).unwrap();
        b.insert(d).unwrap();
    }
    t.flush();
    t.validate().unwrap();
    assert!(t.stats().max_depth < 200, "{:?}", t.stats().max_depth);
    t.flush();
    same_pairs(&t, &b);
    // Growth far away from there works too.
    let h = t.objects().next().unwrap().0;
    t.update(h, ball(-3e7, 1e9, -2.0, 0.0)).unwrap();
    t.validate().unwrap();
}

/// (The coordinate limit itself is checked for every family in
/// `behaviour.rs`.)
#[test]
fn a_tiny_world_grows_to_the_coordinate_limit_in_every_direction() {
    let mut t = Bsp2::<u32>::with_config(BspConfig {
        world: Some(rect(0.0, 0.0, 1e-6, 1e-6)),
        ..Default::default()
    })
    .unwrap();
    let h = t.insert(ObjectDesc::new(disc(0.0, 0.0, 0.0), 0)).unwrap();
    t.flush();
    t.update(h, disc(-1e18, 1e18, 1e16)).unwrap();
    t.validate().unwrap();
    assert!(t.root_bounds().unwrap().contains(&t.get(h).unwrap().aabb()));
}

#[test]
fn bad_configurations_are_refused() {
    for m in [0.0, -1.0, f32::NAN, f32::INFINITY, 1e31] {
        let c = BspConfig::<Vec3> {
            min_dimension: m,
            ..Default::default()
        };
        assert!(
            matches!(Bsp3::<u32>::with_config(c), Err(Error::InvalidConfig(_))),
            "{m}"
        );
    }
    let bad_worlds = [
        Aabb {
            min: Vec2::ONE,
            max: Vec2::ZERO,
        },
        Aabb {
            min: Vec2::new(f32::NAN, 0.0),
            max: Vec2::ONE,
        },
        Aabb {
            min: Vec2::ZERO,
            max: Vec2::new(f32::INFINITY, 1.0),
        },
        Aabb {
            min: Vec2::ZERO,
            max: Vec2::new(1e31, 1.0),
        },
    ];
    for w in bad_worlds {
        let c = BspConfig {
            world: Some(w),
            ..Default::default()
        };
        assert!(
            matches!(Bsp2::<u32>::with_config(c), Err(Error::InvalidConfig(_))),
            "{w:?}"
        );
    }
    // Any leaf capacity is fine, and a world of zero thickness too.
    let c = BspConfig {
        world: Some(rect(0.0, 0.0, 10.0, 0.0)),
        leaf_capacity: u32::MAX,
        ..Default::default()
    };
    let mut t = Bsp2::<u32>::with_config(c).unwrap();
    t.insert(ObjectDesc::new(disc(5.0, 0.0, 1.0), 0)).unwrap();
    t.insert(ObjectDesc::new(disc(5.5, 0.0, 0.0), 1)).unwrap();
    let mut pairs = Vec::new();
    t.pairs(&mut pairs);
    assert_eq!(pairs.len(), 1);
    t.validate().unwrap();
}

#[test]
fn objects_that_move_onto_a_split_plane_from_both_sides_still_pair() {
    // Each object stays within its half's bounds (closed boxes), but
    // touching the plane x = 32 puts it in the root: otherwise the two
    // would sit in sibling subtrees and their contact be missed.
    let mut t = Bsp3::<u32>::with_config(BspConfig {
        world: Some(Aabb::new(Vec3::ZERO, Vec3::splat(64.0)).unwrap()),
        // One object a leaf (the octree's rule; the default keeps 8), so
        // that a few objects build a tree of several levels.
        leaf_capacity: 1,
        ..Default::default()
    })
    .unwrap();
    let cube = |x0: f32| {
        Shape::Box(Aabb::new(Vec3::new(x0, 1.0, 1.0), Vec3::new(x0 + 1.0, 2.0, 2.0)).unwrap())
    };
    let a = t.insert(ObjectDesc::new(cube(1.0), 0)).unwrap();
    let b = t.insert(ObjectDesc::new(cube(60.0), 1)).unwrap();
    t.flush();
    assert_eq!(t.stats().nodes, 3);
    t.update(a, cube(31.0)).unwrap();
    t.validate().unwrap();
    t.update(b, cube(32.0)).unwrap();
    t.validate().unwrap();
    let root = t.root_bounds();
    assert_eq!(t.node_bounds_of(a).unwrap(), root);
    assert_eq!(t.node_bounds_of(b).unwrap(), root);
    let mut pairs = Vec::new();
    t.pairs(&mut pairs);
    assert_eq!(pairs.len(), 1);
    // Deeper: the face of a quarter that is the root's split plane.
    t.update(a, cube(10.0)).unwrap();
    t.update(b, cube(20.0)).unwrap();
    t.flush();
    t.update(
        a,
        Shape::Box(Aabb::new(Vec3::new(31.0, 40.0, 1.0), Vec3::new(32.0, 41.0, 2.0)).unwrap()),
    )
    .unwrap();
    t.update(
        b,
        Shape::Box(Aabb::new(Vec3::new(32.0, 40.5, 1.0), Vec3::new(33.0, 41.5, 2.0)).unwrap()),
    )
    .unwrap();
    t.validate().unwrap();
    t.pairs(&mut pairs);
    assert_eq!(pairs.len(), 1);
}

#[test]
fn a_world_of_zero_thickness_grows_along_it() {
    // A 10 x 0 world: growth along y cannot double a zero side, so it adds
    // the minimum dimension; the old root stays a (zero-height) child.
    let mut t = Bsp2::<u32>::with_config(BspConfig {
        world: Some(rect(0.0, 0.0, 10.0, 0.0)),
        ..Default::default()
    })
    .unwrap();
    let a = t.insert(ObjectDesc::new(disc(5.0, 0.0, 0.0), 0)).unwrap();
    let b = t.insert(ObjectDesc::new(disc(7.0, 0.0, 0.0), 1)).unwrap();
    t.flush();
    t.update(b, disc(5.0, 0.5, 0.1)).unwrap();
    t.validate().unwrap();
    assert_eq!(t.root_bounds(), Some(rect(0.0, 0.0, 10.0, 1.0)));
    // `a` lies on the new split plane y = 0: it moved up to the root.
    assert_eq!(t.node_bounds_of(a).unwrap(), t.root_bounds());
    // `b` is in the upper child, whose bounds are the whole root's (the
    // split lies on the root's lower face).
    let mut depth_of_b = None;
    let b_box = t.get(b).unwrap().aabb();
    t.for_each_node(|bounds, depth, count| {
        if count == 1 && depth == 1 && bounds.contains(&b_box) {
            depth_of_b = Some(depth);
        }
    });
    assert_eq!(depth_of_b, Some(1));
    // `b` comes down onto the plane: it belongs to the root too, and
    // touches `a`.
    t.update(
        b,
        Shape::Box(Aabb::new(Vec2::new(4.9, 0.0), Vec2::new(5.1, 0.2)).unwrap()),
    )
    .unwrap();
    t.validate().unwrap();
    assert_eq!(t.node_bounds_of(b).unwrap(), t.root_bounds());
    let mut pairs = Vec::new();
    t.pairs(&mut pairs);
    assert_eq!(pairs.len(), 1);
}
