//! Behaviours specific to the orthtrees: moves (L3), leaving the world
//! (L4), the quadtree's lifespans and growth, degenerate input (L6). What
//! every family does the same way (the lazy build, lifespans and pruning,
//! statics, one point, the coordinate limit) is in `behaviour.rs`.

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
