//! Behaviours specific to the orthtrees: lazy build (L2), moves (L3),
//! leaving the world (L4), pruning (L5), degenerate input (L6), statics (P2).

use glam::{Vec2, Vec3};
use sparti::{
    Aabb, BruteForce, Error, Filter, ObjectDesc, Octree, OrthtreeConfig, OutOfBounds, Quadtree,
    Shape, SpatialIndex,
};

fn world(lo: f32, hi: f32) -> Option<Aabb<Vec3>> {
    Some(Aabb::new(Vec3::splat(lo), Vec3::splat(hi)).unwrap())
}

fn ball(x: f32, y: f32, z: f32, r: f32) -> Shape<Vec3> {
    Shape::sphere(Vec3::new(x, y, z), r)
}

#[test]
fn insertions_are_queued_until_the_build_step() {
    let mut t = Octree::<u32>::new();
    let descs = (0..100)
        .map(|i| ObjectDesc::new(ball(i as f32, 0.0, 0.0, 0.4), i))
        .collect();
    t.insert_many(descs).unwrap();
    t.insert(ObjectDesc::new(ball(5.0, 5.0, 5.0, 1.0), 100))
        .unwrap();
    assert_eq!(t.stats().pending, 101);
    assert_eq!(t.stats().nodes, 0);
    t.validate().unwrap();
    let mut out = Vec::new();
    t.query_radius(Vec3::ZERO, 0.5, Filter::ALL, &mut out);
    assert_eq!(out.len(), 1, "a query sees the queued objects");
    // Queries run on `&self`: they build nothing, and test the queued
    // objects one by one (counted).
    assert_eq!(t.stats().pending, 101);
    assert_eq!(t.counters().pending_tests, 101);
    t.flush();
    let st = t.stats();
    assert_eq!(st.pending, 0);
    t.reset_counters();
    t.query_radius(Vec3::ZERO, 0.5, Filter::ALL, &mut out);
    assert_eq!(out.len(), 1, "the same answer from the tree");
    assert_eq!(t.counters().pending_tests, 0);
    assert!(st.nodes > 10, "the build made a real tree: {st:?}");
    t.validate().unwrap();
}

#[test]
fn pending_objects_can_be_moved_and_removed_before_the_build() {
    let mut t = Octree::<u32>::new();
    let a = t
        .insert(ObjectDesc::new(ball(0.0, 0.0, 0.0, 1.0), 0))
        .unwrap();
    let b = t
        .insert(ObjectDesc::new(ball(10.0, 0.0, 0.0, 1.0), 1))
        .unwrap();
    let c = t
        .insert(ObjectDesc::new(ball(20.0, 0.0, 0.0, 1.0), 2))
        .unwrap();
    t.update(b, ball(1.0, 0.0, 0.0, 1.0)).unwrap();
    assert_eq!(t.remove(a).unwrap(), 0);
    t.validate().unwrap();
    assert_eq!(t.stats().pending, 2);
    let mut pairs = Vec::new();
    t.pairs(&mut pairs);
    assert!(pairs.is_empty());
    t.update(c, ball(2.0, 0.0, 0.0, 1.0)).unwrap();
    t.pairs(&mut pairs);
    assert_eq!(pairs.len(), 1);
    assert_eq!((pairs[0].a, pairs[0].b), (b, c));
}

#[test]
fn a_moved_object_climbs_then_sinks_as_deep_as_it_fits() {
    let mut t = Octree::<u32>::with_config(OrthtreeConfig {
        world: world(0.0, 64.0),
        ..Default::default()
    })
    .unwrap();
    // Two far apart small objects: the root splits and each sinks.
    let a = t
        .insert(ObjectDesc::new(ball(1.0, 1.0, 1.0, 0.25), 0))
        .unwrap();
    let b = t
        .insert(ObjectDesc::new(ball(40.0, 40.0, 40.0, 0.25), 1))
        .unwrap();
    t.flush();
    t.validate().unwrap();
    // A third object in the same corner as `a` makes its leaf split deeper.
    let c = t
        .insert(ObjectDesc::new(ball(1.0, 1.0, 3.0, 0.25), 2))
        .unwrap();
    t.flush();
    t.validate().unwrap();
    let deep = t.stats().max_depth;
    assert!(deep >= 4, "depth {deep}");
    // Move `c` across the world: it must climb to the root and sink into
    // the far corner, and the tree stays valid all along.
    for step in 0..60 {
        let p = 3.0 + step as f32;
        t.update(c, ball(p, p, p, 0.25)).unwrap();
        t.validate().unwrap();
    }
    // A large object that straddles the root's centre stays at the root.
    t.update(a, ball(32.0, 32.0, 32.0, 4.0)).unwrap();
    t.validate().unwrap();
    let mut out = Vec::new();
    t.query_aabb(
        &Aabb::new(Vec3::splat(30.0), Vec3::splat(30.5)).unwrap(),
        Filter::ALL,
        &mut out,
    );
    assert_eq!(out, vec![a]);
    let _ = b;
}

#[test]
fn the_root_grows_to_hold_an_object_that_leaves_it() {
    let mut t = Octree::<u32>::with_config(OrthtreeConfig {
        world: world(0.0, 16.0),
        ..Default::default()
    })
    .unwrap();
    let a = t
        .insert(ObjectDesc::new(ball(1.0, 1.0, 1.0, 0.5), 0))
        .unwrap();
    let b = t
        .insert(ObjectDesc::new(ball(15.0, 15.0, 15.0, 0.5), 1))
        .unwrap();
    t.flush();
    let before = t.root_bounds().unwrap();
    assert_eq!(before.size(), Vec3::splat(16.0));
    t.update(b, ball(-1000.0, 500.0, 3000.0, 2.0)).unwrap();
    t.validate().unwrap();
    let after = t.root_bounds().unwrap();
    assert!(after.contains(&before) && after.contains(&t.get(b).unwrap().aabb));
    assert!(
        after.size().x.log2().fract() == 0.0,
        "side stays a power of two"
    );
    // And queries find both where they are.
    let mut out = Vec::new();
    t.query_radius(
        Vec3::new(-1000.0, 500.0, 3000.0),
        0.1,
        Filter::ALL,
        &mut out,
    );
    assert_eq!(out, vec![b]);
    t.query_radius(Vec3::ONE, 0.1, Filter::ALL, &mut out);
    assert_eq!(out, vec![a]);
}

#[test]
fn reject_policy_refuses_and_leaves_the_object_unchanged() {
    let mut t = Octree::<u32>::with_config(OrthtreeConfig {
        world: world(0.0, 16.0),
        out_of_bounds: OutOfBounds::Reject,
        ..Default::default()
    })
    .unwrap();
    assert_eq!(
        t.insert(ObjectDesc::new(ball(20.0, 1.0, 1.0, 0.5), 9)),
        Err(Error::OutsideWorld)
    );
    let a = t
        .insert(ObjectDesc::new(ball(1.0, 1.0, 1.0, 0.5), 0))
        .unwrap();
    t.flush();
    assert_eq!(
        t.update(a, ball(16.0, 1.0, 1.0, 0.5)),
        Err(Error::OutsideWorld)
    );
    assert_eq!(t.get(a).unwrap().shape, ball(1.0, 1.0, 1.0, 0.5));
    assert_eq!(t.len(), 1);
    t.validate().unwrap();
}

#[test]
fn remove_policy_evicts_and_reports_the_object() {
    let mut t = Octree::<u32>::with_config(OrthtreeConfig {
        world: world(0.0, 16.0),
        out_of_bounds: OutOfBounds::Remove,
        ..Default::default()
    })
    .unwrap();
    let a = t
        .insert(ObjectDesc::new(ball(1.0, 1.0, 1.0, 0.5), 7))
        .unwrap();
    let b = t
        .insert(ObjectDesc::new(ball(3.0, 1.0, 1.0, 0.5), 8))
        .unwrap();
    t.flush();
    t.update(a, ball(-5.0, 1.0, 1.0, 0.5)).unwrap();
    assert_eq!(t.get(a), Err(Error::StaleHandle(a)));
    assert_eq!(t.len(), 1);
    assert_eq!(t.take_evicted(), vec![(a, 7)]);
    assert!(t.take_evicted().is_empty());
    assert!(t.get(b).is_ok());
    t.validate().unwrap();
}

/// A world where object `b` alternates between two octants of the root, so
/// the octant it leaves becomes an empty leaf.
fn lifespan_tree() -> (Octree<u32>, sparti::Handle) {
    let mut t = Octree::<u32>::with_config(OrthtreeConfig {
        world: world(0.0, 64.0),
        ..Default::default()
    })
    .unwrap();
    t.insert(ObjectDesc::new(ball(1.0, 1.0, 1.0, 0.25), 0))
        .unwrap();
    let b = t
        .insert(ObjectDesc::new(ball(40.0, 40.0, 40.0, 0.25), 1))
        .unwrap();
    t.flush();
    assert_eq!(t.stats().nodes, 3, "root and two leaves");
    (t, b)
}

const HERE: (f32, f32, f32) = (40.0, 40.0, 40.0);
const THERE: (f32, f32, f32) = (20.0, 40.0, 40.0);

fn go(t: &mut Octree<u32>, b: sparti::Handle, p: (f32, f32, f32)) {
    t.update(b, ball(p.0, p.1, p.2, 0.25)).unwrap();
    t.validate().unwrap();
}

/// Frames an empty leaf survives: `end_frame` calls until the node count drops.
fn frames_until_pruned(t: &mut Octree<u32>) -> usize {
    let nodes = t.stats().nodes;
    for f in 1..=200 {
        t.end_frame();
        t.validate().unwrap();
        if t.stats().nodes < nodes {
            return f;
        }
    }
    panic!("never pruned");
}

#[test]
fn an_empty_leaf_is_pruned_after_eight_frames() {
    let (mut t, b) = lifespan_tree();
    go(&mut t, b, THERE);
    assert_eq!(t.stats().nodes, 4, "the left leaf is still there");
    assert_eq!(frames_until_pruned(&mut t), 8);
    assert_eq!(t.stats().nodes, 3);
}

#[test]
fn a_reused_leaf_doubles_its_lifespan_up_to_64() {
    let (mut t, b) = lifespan_tree();
    // Leave HERE's leaf, come back before it dies: its lifespan doubles.
    // Each round trip reuses both leaves once.
    for _ in 0..5 {
        go(&mut t, b, THERE);
        for _ in 0..3 {
            t.end_frame();
        }
        go(&mut t, b, HERE);
    }
    // THERE's leaf was reused 4 times (8 -> 128, capped at 64).
    assert_eq!(frames_until_pruned(&mut t), 64);
    // And HERE's leaf, reused 5 times, is capped at 64 too.
    go(&mut t, b, THERE);
    let survived = frames_until_pruned(&mut t);
    assert_eq!(survived, 64);
}

#[test]
fn one_reuse_doubles_the_lifespan_to_sixteen() {
    let (mut t, b) = lifespan_tree();
    go(&mut t, b, THERE); // HERE's leaf idle, lifespan 8
    t.end_frame();
    go(&mut t, b, HERE); // reused: 16; THERE's leaf idle with 8
    assert_eq!(frames_until_pruned(&mut t), 8, "THERE's leaf, never reused");
    go(&mut t, b, THERE); // HERE's leaf idle with 16
    assert_eq!(frames_until_pruned(&mut t), 16);
}

#[test]
fn pruning_reclaims_whole_branches_and_reuses_the_pool() {
    let mut t = Octree::<u32>::with_config(OrthtreeConfig {
        world: world(0.0, 1024.0),
        ..Default::default()
    })
    .unwrap();
    let a = t
        .insert(ObjectDesc::new(ball(1.0, 1.0, 1.0, 0.1), 0))
        .unwrap();
    let b = t
        .insert(ObjectDesc::new(ball(1.0, 1.0, 2.0, 0.1), 1))
        .unwrap();
    t.flush();
    let deep = t.stats();
    assert!(deep.nodes > 8, "{deep:?}");
    t.remove(a).unwrap();
    t.remove(b).unwrap();
    for _ in 0..64 * 12 {
        t.end_frame();
        t.validate().unwrap();
    }
    assert_eq!(t.stats().nodes, 1, "only the root is left");
    let mem = t.stats().memory_bytes;
    // The same again: the pool is reused, memory does not grow.
    for round in 0..5 {
        let a = t
            .insert(ObjectDesc::new(ball(1.0, 1.0, 1.0, 0.1), round))
            .unwrap();
        let b = t
            .insert(ObjectDesc::new(ball(1.0, 1.0, 2.0, 0.1), round))
            .unwrap();
        t.flush();
        t.remove(a).unwrap();
        t.remove(b).unwrap();
        for _ in 0..64 * 12 {
            t.end_frame();
        }
        t.validate().unwrap();
    }
    assert_eq!(t.stats().memory_bytes, mem);
}

#[test]
fn a_static_object_high_in_the_tree_meets_every_moving_object_below() {
    // The article's sample code misses these pairs: a big static object
    // lives near the root, moving objects deep below it.
    let mut t = Octree::<u32>::with_config(OrthtreeConfig {
        world: world(0.0, 256.0),
        ..Default::default()
    })
    .unwrap();
    let mut b = BruteForce::<Vec3, u32>::new();
    let floor = ObjectDesc::new(
        Shape::cuboid(Vec3::new(128.0, 1.0, 128.0), Vec3::new(128.0, 1.0, 128.0)),
        0,
    )
    .with_static(true);
    t.insert(floor.clone()).unwrap();
    b.insert(floor).unwrap();
    // Static crates deep in the tree, touching the floor: never paired with it.
    for i in 0..20 {
        let d =
            ObjectDesc::new(ball(10.0 + i as f32 * 11.0, 2.5, 7.0, 0.5), 100 + i).with_static(true);
        t.insert(d.clone()).unwrap();
        b.insert(d).unwrap();
    }
    // Moving balls resting on the floor, deep in the tree.
    for i in 0..20 {
        let d = ObjectDesc::new(ball(10.0 + i as f32 * 11.0, 2.5, 60.0, 1.0), 200 + i);
        t.insert(d.clone()).unwrap();
        b.insert(d).unwrap();
    }
    t.flush();
    let (mut pt, mut pb) = (Vec::new(), Vec::new());
    t.pairs(&mut pt);
    b.pairs(&mut pb);
    pt.sort();
    pb.sort();
    assert_eq!(pt.len(), 20, "each moving ball touches the floor");
    assert_eq!(pt, pb);
    assert!(t.stats().max_depth >= 4);
}

#[test]
fn a_million_objects_at_one_point_keep_the_depth_bounded() {
    let mut t = Octree::<u32>::with_config(OrthtreeConfig {
        world: world(0.0, 1024.0),
        ..Default::default()
    })
    .unwrap();
    let p = Vec3::new(3.3, 7.7, 1.1);
    let descs = (0..1_000_000)
        .map(|i| ObjectDesc::new(Shape::sphere(p, 0.0), i))
        .collect();
    t.insert_many(descs).unwrap();
    t.flush();
    let st = t.stats();
    assert_eq!(st.objects, 1_000_000);
    assert!(
        st.max_depth <= 10,
        "depth {} for a 1024 world and unit nodes",
        st.max_depth
    );
    assert!(st.nodes <= 11, "{} nodes", st.nodes);
    let mut out = Vec::new();
    t.query_radius(p, 0.0, Filter::ALL, &mut out);
    assert_eq!(out.len(), 1_000_000);
    t.query_radius(p + Vec3::X, 0.5, Filter::ALL, &mut out);
    assert!(out.is_empty());
}

#[test]
fn objects_at_the_coordinate_limit_work_and_beyond_it_are_refused() {
    let mut t = Octree::<u32>::new();
    let mut b = BruteForce::<Vec3, u32>::new();
    for (i, x) in [-1e18f32, 1e18, 0.0, 0.5, 1e17].into_iter().enumerate() {
        let d = ObjectDesc::new(ball(x, 0.0, 0.0, 1.0), i as u32);
        t.insert(d.clone()).unwrap();
        b.insert(d).unwrap();
    }
    // Beyond 2^60, every structure refuses, the brute force included.
    let d = ObjectDesc::new(ball(2e18, 0.0, 0.0, 1.0), 99);
    assert_eq!(t.insert(d.clone()), Err(Error::WorldTooLarge));
    assert_eq!(b.insert(d), Err(Error::WorldTooLarge));
    t.flush();
    let (mut pt, mut pb) = (Vec::new(), Vec::new());
    t.pairs(&mut pt);
    b.pairs(&mut pb);
    assert_eq!(pt, pb);
    assert_eq!(pt.len(), 1, "0.0 and 0.5 touch");
    t.validate().unwrap();
    let h = t.objects().next().unwrap().0;
    assert_eq!(
        t.update(h, ball(-3e18, 0.0, 0.0, 1.0)),
        Err(Error::WorldTooLarge)
    );
    assert_eq!(
        b.update(h, ball(-3e18, 0.0, 0.0, 1.0)),
        Err(Error::WorldTooLarge)
    );
    t.validate().unwrap();
}

#[test]
fn regression_objects_moved_to_touch_across_a_split_plane_pair_up() {
    // Found by the BSP's fuzzing: a move used a closed containment test, so
    // two boxes touching the plane x = 32 from either side stayed in sibling
    // subtrees and their pair was never tested.
    let mut t = Octree::<u32>::with_config(OrthtreeConfig {
        world: world(0.0, 64.0),
        ..Default::default()
    })
    .unwrap();
    let a = t
        .insert(ObjectDesc::new(
            Shape::Box(Aabb::new(Vec3::new(1.0, 1.0, 1.0), Vec3::new(2.0, 2.0, 2.0)).unwrap()),
            0,
        ))
        .unwrap();
    let b = t
        .insert(ObjectDesc::new(
            Shape::Box(Aabb::new(Vec3::new(60.0, 1.0, 1.0), Vec3::new(61.0, 2.0, 2.0)).unwrap()),
            1,
        ))
        .unwrap();
    t.flush();
    t.update(
        a,
        Shape::Box(Aabb::new(Vec3::new(31.0, 1.0, 1.0), Vec3::new(32.0, 2.0, 2.0)).unwrap()),
    )
    .unwrap();
    t.update(
        b,
        Shape::Box(Aabb::new(Vec3::new(32.0, 1.0, 1.0), Vec3::new(33.0, 2.0, 2.0)).unwrap()),
    )
    .unwrap();
    t.validate().unwrap();
    let mut pairs = Vec::new();
    t.pairs(&mut pairs);
    assert_eq!(pairs.len(), 1);
}

#[test]
fn regression_a_root_widened_for_rounding_leaves_no_stray_node() {
    let mut t = Octree::<u32>::new();
    let lo = Vec3::new(-0.75 * f32::EPSILON / 2.0, 0.0, 0.0);
    t.insert(ObjectDesc::new(
        Shape::Box(Aabb::new(lo, Vec3::ONE).unwrap()),
        0,
    ))
    .unwrap();
    t.flush();
    t.validate().unwrap();
    for _ in 0..8 {
        t.end_frame();
    }
    t.validate().unwrap();
}

#[test]
fn regression_a_sphere_below_the_float_spacing_is_still_found() {
    let c = Vec3::new(-131.9859, -131.9859, -131.98589);
    let mut t = Octree::<u32>::new();
    let mut b = BruteForce::<Vec3, u32>::new();
    t.insert(ObjectDesc::new(Shape::sphere(c, 2.686659e-6), 0))
        .unwrap();
    b.insert(ObjectDesc::new(Shape::sphere(c, 2.686659e-6), 0))
        .unwrap();
    t.insert(ObjectDesc::new(ball(0.0, 0.0, 0.0, 1.0), 1))
        .unwrap();
    b.insert(ObjectDesc::new(ball(0.0, 0.0, 0.0, 1.0), 1))
        .unwrap();
    let q = sparti::Sphere::new(Vec3::new(-131.9859, -131.98592, -131.9859), 2e-5).unwrap();
    let (mut ot, mut ob) = (Vec::new(), Vec::new());
    t.query_sphere(&q, Filter::ALL, &mut ot);
    b.query_sphere(&q, Filter::ALL, &mut ob);
    assert_eq!(ob.len(), 1);
    assert_eq!(ot, ob);
}

#[test]
fn quadtree_lifespans_and_growth_work_in_2d() {
    let mut t = Quadtree::<u32>::with_config(OrthtreeConfig {
        world: Some(Aabb::new(Vec2::ZERO, Vec2::splat(64.0)).unwrap()),
        ..Default::default()
    })
    .unwrap();
    t.insert(ObjectDesc::new(Shape::sphere(Vec2::ONE, 0.25), 0))
        .unwrap();
    let b = t
        .insert(ObjectDesc::new(Shape::sphere(Vec2::splat(40.0), 0.25), 1))
        .unwrap();
    t.flush();
    assert_eq!(t.stats().nodes, 3);
    t.update(b, Shape::sphere(Vec2::new(20.0, 40.0), 0.25))
        .unwrap();
    assert_eq!(t.stats().nodes, 4);
    for _ in 0..8 {
        t.end_frame();
    }
    assert_eq!(t.stats().nodes, 3);
    t.update(b, Shape::sphere(Vec2::new(-500.0, 9000.0), 0.25))
        .unwrap();
    t.validate().unwrap();
    assert!(
        t.root_bounds()
            .unwrap()
            .contains_point(Vec2::new(-500.0, 9000.0))
    );
}
