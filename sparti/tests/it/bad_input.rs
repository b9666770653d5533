//! Hostile input, for every structure: a clear error or a defined answer,
//! never a panic, a hang or a silently lost object.

use glam::{Vec2, Vec3};

use crate::common::every_structure;
use sparti::{
    Aabb, BruteForce, Bsp2, Bsp3, BspConfig, Cone, Error, Filter, LooseConfig, LooseOctree,
    LooseQuadtree, ObjectDesc, Octree, Plane, Quadtree, Ray, Shape, SpatialIndex, Sphere, Vector,
};

fn bad_shapes<V: Vector>() -> Vec<(Shape<V>, Error)> {
    let nan = V::ONE.with(0, f32::NAN);
    let inf = V::ONE.with(V::DIM - 1, f32::INFINITY);
    vec![
        (Shape::sphere(nan, 1.0), Error::NonFinite),
        (Shape::sphere(inf, 1.0), Error::NonFinite),
        (Shape::sphere(V::ZERO, f32::NAN), Error::NonFinite),
        (Shape::sphere(V::ZERO, f32::INFINITY), Error::NonFinite),
        (Shape::sphere(V::ZERO, -1.0), Error::NegativeSize),
        (
            Shape::sphere(V::splat(f32::MAX), f32::MAX),
            Error::NonFinite,
        ),
        (
            Shape::Box(Aabb {
                min: V::ONE,
                max: V::ZERO,
            }),
            Error::InvertedBox,
        ),
        (
            Shape::Box(Aabb {
                min: V::ZERO,
                max: V::ONE.with(0, -1.0),
            }),
            Error::InvertedBox,
        ),
        (
            Shape::Box(Aabb {
                min: nan,
                max: V::ONE,
            }),
            Error::NonFinite,
        ),
        (
            Shape::Box(Aabb {
                min: V::splat(-f32::MAX),
                max: V::splat(f32::MAX),
            }),
            Error::NonFinite,
        ),
        (
            Shape::cuboid(V::ZERO, V::ONE.with(0, -0.5)),
            Error::InvertedBox,
        ),
    ]
}

/// Every bad shape is refused by insert, insert_many and update, and leaves
/// the structure as it was; stale handles are refused everywhere.
fn refuses_bad_input<V: Vector, S: SpatialIndex<V, u32>>(mut s: S) {
    let good = s
        .insert(ObjectDesc::new(Shape::sphere(V::ZERO, 1.0), 1))
        .unwrap();
    for (shape, err) in bad_shapes::<V>() {
        assert_eq!(
            s.insert(ObjectDesc::new(shape, 9)),
            Err(err),
            "insert {shape:?}"
        );
        assert_eq!(s.update(good, shape), Err(err), "update {shape:?}");
        let batch = vec![
            ObjectDesc::new(Shape::sphere(V::ONE, 1.0), 2),
            ObjectDesc::new(shape, 3),
        ];
        assert_eq!(s.insert_many(batch), Err(err), "insert_many {shape:?}");
        assert_eq!(s.len(), 1, "nothing inserted by a refused batch");
        assert_eq!(s.get(good).unwrap().shape, Shape::sphere(V::ZERO, 1.0));
        s.validate().unwrap();
    }
    // Stale handles: removed, removed twice, slot reused by another object.
    let h = s
        .insert(ObjectDesc::new(Shape::sphere(V::ONE, 1.0), 5))
        .unwrap();
    assert_eq!(s.remove(h), Ok(5));
    assert_eq!(s.remove(h), Err(Error::StaleHandle(h)));
    assert_eq!(s.get(h), Err(Error::StaleHandle(h)));
    assert_eq!(
        s.update(h, Shape::sphere(V::ONE, 1.0)),
        Err(Error::StaleHandle(h))
    );
    assert!(s.value_mut(h).is_err());
    let reused = s
        .insert(ObjectDesc::new(Shape::sphere(V::ONE, 1.0), 6))
        .unwrap();
    assert_eq!(reused.index(), h.index(), "the slot is reused");
    assert_ne!(reused, h);
    assert_eq!(
        s.get(h),
        Err(Error::StaleHandle(h)),
        "an old handle never names a new object"
    );
    assert_eq!(s.get(reused).unwrap().value, 6);
    *s.value_mut(reused).unwrap() = 7;
    assert_eq!(s.get(reused).unwrap().value, 7);
    s.validate().unwrap();
    // Zero-size objects are fine.
    let p = s
        .insert(ObjectDesc::new(Shape::sphere(V::splat(0.5), 0.0), 8))
        .unwrap();
    let q = s
        .insert(ObjectDesc::new(Shape::cuboid(V::splat(0.5), V::ZERO), 9))
        .unwrap();
    let mut pairs = Vec::new();
    s.pairs(&mut pairs);
    assert!(
        pairs.iter().any(|x| (x.a, x.b) == (p.min(q), p.max(q))),
        "two points at the same place touch"
    );
    s.clear();
    assert!(s.is_empty());
    assert!(s.get(good).is_err());
    s.validate().unwrap();
}

/// Queries on an empty structure, and degenerate query arguments, have
/// defined answers.
fn degenerate_queries<V: Vector, S: SpatialIndex<V, u32>>(mut s: S) {
    let mut out = vec![];
    let mut hits = vec![];
    let ray = Ray::new(V::ZERO, V::ONE).unwrap();
    s.query_radius(V::ZERO, 10.0, Filter::ALL, &mut out);
    assert!(out.is_empty());
    assert!(s.ray_nearest(&ray, 10.0, Filter::ALL).is_none());
    s.ray_all(&ray, 10.0, Filter::ALL, &mut hits);
    assert!(hits.is_empty());
    s.pairs(&mut vec![]);
    s.end_frame();
    s.validate().unwrap();
    s.insert(ObjectDesc::new(Shape::sphere(V::splat(2.0), 1.0), 1))
        .unwrap();
    // Radius NaN or negative: nothing. Max distance NaN or negative: nothing.
    out.push(sparti::Handle::clone(&s.objects().next().unwrap().0));
    s.query_radius(V::ZERO, f32::NAN, Filter::ALL, &mut out);
    assert!(out.is_empty());
    s.query_radius(V::splat(2.0), -1.0, Filter::ALL, &mut out);
    assert!(out.is_empty());
    assert!(s.ray_nearest(&ray, f32::NAN, Filter::ALL).is_none());
    assert!(s.ray_nearest(&ray, -1.0, Filter::ALL).is_none());
    s.ray_all(&ray, f32::NAN, Filter::ALL, &mut hits);
    assert!(hits.is_empty());
    // Infinite max distance is fine; a zero-length ray hits what contains
    // its origin.
    assert!(s.ray_nearest(&ray, f32::INFINITY, Filter::ALL).is_some());
    let inside = Ray::new(V::splat(2.0), V::ONE).unwrap();
    assert_eq!(
        s.ray_nearest(&inside, 0.0, Filter::ALL).map(|h| h.distance),
        Some(0.0)
    );
    // A filter with no layers finds nothing.
    s.query_radius(V::splat(2.0), 1.0, Filter::layers(0), &mut out);
    assert!(out.is_empty());
}

#[test]
fn brute_force_refuses_bad_input() {
    refuses_bad_input(BruteForce::<Vec3, u32>::new());
    refuses_bad_input(BruteForce::<Vec2, u32>::new());
    degenerate_queries(BruteForce::<Vec3, u32>::new());
    degenerate_queries(BruteForce::<Vec2, u32>::new());
}

#[test]
fn octree_refuses_bad_input() {
    refuses_bad_input(Octree::<u32>::new());
    degenerate_queries(Octree::<u32>::new());
}

#[test]
fn quadtree_refuses_bad_input() {
    refuses_bad_input(Quadtree::<u32>::new());
    degenerate_queries(Quadtree::<u32>::new());
}

#[test]
fn bsp3_refuses_bad_input() {
    refuses_bad_input(Bsp3::<u32>::new());
    degenerate_queries(Bsp3::<u32>::new());
    // Objects sinking as deep as they fit, in a preset world.
    let sinking = || {
        Bsp3::<u32>::with_config(BspConfig {
            world: Some(Aabb::new(Vec3::splat(-4.0), Vec3::splat(4.0)).unwrap()),
            leaf_capacity: 0,
            ..Default::default()
        })
        .unwrap()
    };
    refuses_bad_input(sinking());
    degenerate_queries(sinking());
}

#[test]
fn bsp2_refuses_bad_input() {
    refuses_bad_input(Bsp2::<u32>::new());
    degenerate_queries(Bsp2::<u32>::new());
}

#[test]
fn loose_octree_refuses_bad_input() {
    refuses_bad_input(LooseOctree::<u32>::new());
    degenerate_queries(LooseOctree::<u32>::new());
    // With a preset world the root exists before the first insertion.
    let preset = || {
        LooseOctree::<u32>::with_config(LooseConfig {
            world: Some(Aabb::new(Vec3::splat(-4.0), Vec3::splat(4.0)).unwrap()),
            looseness: 1.5,
            ..Default::default()
        })
        .unwrap()
    };
    refuses_bad_input(preset());
    degenerate_queries(preset());
}

#[test]
fn loose_quadtree_refuses_bad_input() {
    refuses_bad_input(LooseQuadtree::<u32>::new());
    degenerate_queries(LooseQuadtree::<u32>::new());
    let preset = || {
        LooseQuadtree::<u32>::with_config(LooseConfig {
            world: Some(Aabb::new(Vec2::splat(-4.0), Vec2::splat(4.0)).unwrap()),
            min_node_size: 0.25,
            ..Default::default()
        })
        .unwrap()
    };
    refuses_bad_input(preset());
    degenerate_queries(preset());
}

/// A refused batch leaves no trace: a twin that never saw it, given the
/// same calls after, gives the same handles, objects and pairs. Before its
/// bad object the batch has enough objects to take every free slot and new
/// ones (a store that took them and failed to give them back would show),
/// and objects follow it.
fn refused_batch_leaves_no_trace<V: Vector, S: SpatialIndex<V, u32>>(make: impl Fn() -> S) {
    let sphere = |i: u32| {
        let c = V::splat((i % 17) as f32 * 0.7).with(0, (i % 5) as f32);
        ObjectDesc::new(Shape::sphere(c, 0.5 + (i % 3) as f32), i)
    };
    for built in [false, true] {
        let (mut a, mut b) = (make(), make());
        for s in [&mut a, &mut b] {
            let hs = s.insert_many((0..20).map(sphere).collect()).unwrap();
            if built {
                s.flush();
            }
            for &h in hs.iter().step_by(3) {
                s.remove(h).unwrap();
            }
            s.insert(sphere(20)).unwrap();
        }
        let mut batch: Vec<_> = (100..110).map(sphere).collect();
        batch.push(ObjectDesc::new(Shape::sphere(V::splat(f32::NAN), 1.0), 999));
        batch.extend((110..115).map(sphere));
        assert_eq!(a.insert_many(batch), Err(Error::NonFinite));
        a.validate().unwrap();
        assert_eq!(a.len(), b.len(), "built: {built}");
        let ha = a.insert_many((200..212).map(sphere).collect()).unwrap();
        let hb = b.insert_many((200..212).map(sphere).collect()).unwrap();
        assert_eq!(
            ha, hb,
            "the same handles after a refused batch (built: {built})"
        );
        assert_eq!(a.insert(sphere(300)), b.insert(sphere(300)));
        let objects = |s: &S| -> Vec<(sparti::Handle, u32)> {
            s.objects().map(|(h, o)| (h, o.value)).collect()
        };
        assert_eq!(objects(&a), objects(&b));
        for s in [&mut a, &mut b] {
            s.flush();
            s.validate().unwrap();
        }
        let (mut pa, mut pb) = (vec![], vec![]);
        a.pairs(&mut pa);
        b.pairs(&mut pb);
        pa.sort_unstable();
        pb.sort_unstable();
        assert!(!pa.is_empty());
        assert_eq!(pa, pb, "built: {built}");
    }
}

#[test]
fn a_refused_batch_leaves_no_trace() {
    every_structure!(makers brute, refused_batch_leaves_no_trace);
}

#[test]
fn query_shapes_refuse_bad_input() {
    assert_eq!(Ray::new(Vec3::ZERO, Vec3::ZERO), Err(Error::ZeroDirection));
    assert_eq!(
        Ray::new(Vec3::ZERO, Vec3::splat(1e-30)).map(|r| r.dir.length().round()),
        Ok(1.0)
    );
    assert_eq!(Ray::new(Vec3::NAN, Vec3::X), Err(Error::NonFinite));
    assert_eq!(Plane::new(Vec3::ZERO, 1.0), Err(Error::DegeneratePlane));
    assert_eq!(Plane::new(Vec3::X, f32::NAN), Err(Error::NonFinite));
    assert_eq!(Sphere::new(Vec2::ZERO, -0.1), Err(Error::NegativeSize));
    assert_eq!(Aabb::new(Vec2::ONE, Vec2::ZERO), Err(Error::InvertedBox));
    assert_eq!(
        Cone::new(Vec2::ZERO, Vec2::ZERO, 0.5, 1.0),
        Err(Error::ZeroDirection)
    );
    assert_eq!(
        Cone::new(Vec2::ZERO, Vec2::X, 4.0, 1.0),
        Err(Error::AngleOutOfRange)
    );
    assert_eq!(
        Cone::new(Vec2::ZERO, Vec2::X, 0.5, -1.0),
        Err(Error::NegativeSize)
    );
    assert!(sparti::Frustum::from_view_projection(glam::Mat4::ZERO).is_err());
    assert!(sparti::Frustum::from_view_projection(glam::Mat4::NAN).is_err());
}

#[test]
fn bad_configurations_are_refused() {
    use sparti::OrthtreeConfig;
    // 0 is the automatic size (chosen at the first build), not an error.
    assert!(
        Octree::<u32>::with_config(OrthtreeConfig {
            min_node_size: 0.0,
            ..Default::default()
        })
        .is_ok()
    );
    for m in [-1.0, -f32::MIN_POSITIVE, f32::NAN, f32::INFINITY, 1e31] {
        let c = OrthtreeConfig::<Vec3> {
            min_node_size: m,
            ..Default::default()
        };
        assert!(
            matches!(Octree::<u32>::with_config(c), Err(Error::InvalidConfig(_))),
            "{m}"
        );
    }
    let c = OrthtreeConfig::<Vec3> {
        world: Some(Aabb {
            min: Vec3::ONE,
            max: Vec3::ZERO,
        }),
        ..Default::default()
    };
    assert!(matches!(
        Octree::<u32>::with_config(c),
        Err(Error::InvalidConfig(_))
    ));
}

#[test]
fn a_cone_open_all_around_sees_straight_behind() {
    let c = Cone::new(
        Vec3::ZERO,
        Vec3::new(0.3, -0.7, 0.2),
        core::f32::consts::PI,
        10.0,
    )
    .unwrap();
    for i in 1..100 {
        let p = -Vec3::new(0.3, -0.7, 0.2) * (i as f32 * 0.0917);
        assert!(c.contains_point(p), "{p}");
    }
    assert!(!c.contains_point(Vec3::splat(20.0)));
}

/// Coordinates of 1e30 (beyond the limit of 2^60, about 1.15e18) are
/// refused with `WorldTooLarge` by insert, insert_many and update, and
/// leave the structure unchanged; 1e18 is accepted; queries reaching 1e30
/// have a defined answer.
fn huge_coordinates<V: Vector, S: SpatialIndex<V, u32>>(mut s: S) {
    let a = s
        .insert(ObjectDesc::new(Shape::sphere(V::ZERO, 1.0), 1))
        .unwrap();
    for bad in [
        Shape::sphere(V::splat(1e30), 1.0),
        Shape::sphere(V::ZERO.with(0, -1e30), 1.0),
        Shape::sphere(V::ZERO, 1e30),
        Shape::cuboid(V::ZERO, V::splat(1e30)),
        Shape::sphere(V::splat(2e18), 0.0),
    ] {
        assert_eq!(s.insert(ObjectDesc::new(bad, 2)), Err(Error::WorldTooLarge));
        assert_eq!(
            s.insert_many(vec![ObjectDesc::new(bad, 2)]),
            Err(Error::WorldTooLarge)
        );
        assert_eq!(s.update(a, bad), Err(Error::WorldTooLarge));
        assert_eq!(s.len(), 1);
        assert_eq!(s.get(a).unwrap().shape, Shape::sphere(V::ZERO, 1.0));
    }
    let far = s
        .insert(ObjectDesc::new(Shape::sphere(V::splat(1e18), 1.0), 3))
        .unwrap();
    s.validate().unwrap();
    let mut out = Vec::new();
    let all = Aabb::new(V::splat(-1e30), V::splat(1e30)).unwrap();
    s.query_aabb(&all, Filter::ALL, &mut out);
    out.sort();
    assert_eq!(out, vec![a, far]);
    // A query sphere of radius 1e30: its radius squared overflows to
    // infinity, so it selects what meets its bounding box ([0, 2e30] on
    // every axis here): the ball at the origin too, although the centre is
    // 1.7e30 away.
    s.query_radius(V::splat(1e30), 1e30, Filter::ALL, &mut out);
    out.sort();
    assert_eq!(out, vec![a, far]);
    s.query_radius(V::splat(-3e30), 1e30, Filter::ALL, &mut out);
    assert!(out.is_empty());
    // A ray from 1e30 has a defined answer, the brute force's (at 1e30
    // the float spacing is 7.6e22: it resolves no object smaller than that).
    let mut b = BruteForce::<V, u32>::new();
    b.insert(ObjectDesc::new(Shape::sphere(V::ZERO, 1.0), 1))
        .unwrap();
    b.insert(ObjectDesc::new(Shape::sphere(V::splat(1e18), 1.0), 3))
        .unwrap();
    for (o, d) in [
        (V::splat(-1e30), V::ONE),
        (V::ZERO, V::ONE),
        (V::splat(1e30), -V::ONE),
    ] {
        let ray = Ray::new(o, d).unwrap();
        let (mut hs, mut hb) = (Vec::new(), Vec::new());
        s.ray_all(&ray, f32::INFINITY, Filter::ALL, &mut hs);
        b.ray_all(&ray, f32::INFINITY, Filter::ALL, &mut hb);
        assert_eq!(hs, hb);
    }
    // From 1e30 both objects are 1.7e30 away in f32: a tie, to the
    // smaller handle, as the brute force.
    let (mut ns, mut nb) = (Vec::new(), Vec::new());
    s.nearest_k(V::splat(1e30), 1, Filter::ALL, &mut ns);
    b.nearest_k(V::splat(1e30), 1, Filter::ALL, &mut nb);
    assert_eq!(ns, nb);
    assert_eq!(ns[0].handle, a);
    s.nearest_k(V::splat(1e18), 1, Filter::ALL, &mut ns);
    assert_eq!(ns[0].handle, far);
}

#[test]
fn coordinates_of_1e30_are_refused_with_world_too_large() {
    every_structure!(brute, huge_coordinates);
}

/// Every query on an empty structure (never filled, or emptied) finds
/// nothing, pairs and contact events are empty, and `end_frame` and
/// `validate` are fine.
fn empty_queries<V: Vector, S: SpatialIndex<V, u32>>(mut s: S) {
    for round in 0..2 {
        let (mut out, mut hits, mut near) = (vec![], vec![], vec![]);
        let bx = Aabb::new(V::splat(-10.0), V::splat(10.0)).unwrap();
        s.query_aabb(&bx, Filter::ALL, &mut out);
        assert!(out.is_empty());
        s.query_sphere(&Sphere::new(V::ZERO, 10.0).unwrap(), Filter::ALL, &mut out);
        assert!(out.is_empty());
        let plane = Plane::new(V::ONE, 100.0).unwrap();
        s.query_frustum(&sparti::Frustum::new([plane; 6]), Filter::ALL, &mut out);
        assert!(out.is_empty());
        let cone = Cone::new(V::ZERO, V::ONE, 1.0, 100.0).unwrap();
        s.query_cone(&cone, Filter::ALL, &mut out);
        assert!(out.is_empty());
        let ray = Ray::new(V::ZERO, V::ONE).unwrap();
        s.ray_all(&ray, f32::INFINITY, Filter::ALL, &mut hits);
        assert!(hits.is_empty());
        s.nearest_k(V::ZERO, 5, Filter::ALL, &mut near);
        assert!(near.is_empty());
        let mut pairs = vec![];
        s.pairs(&mut pairs);
        assert!(pairs.is_empty());
        let mut events = sparti::ContactEvents::new();
        events.update(&s);
        assert!(events.started().is_empty() && events.stopped().is_empty());
        s.end_frame();
        s.validate().unwrap();
        assert_eq!(s.stats().objects, 0);
        if round == 0 {
            // Fill, then empty it again: the same answers.
            let h = s
                .insert(ObjectDesc::new(Shape::sphere(V::ONE, 1.0), 1))
                .unwrap();
            s.flush();
            s.remove(h).unwrap();
        }
    }
}

#[test]
fn empty_structures_answer_every_query_with_nothing() {
    every_structure!(brute, empty_queries);
}

/// k = 0, and a NaN or infinite point, find nothing; k larger than the
/// number of objects finds them all, nearest first.
fn knn_edges<V: Vector, S: SpatialIndex<V, u32>>(mut s: S) {
    for i in 0..5 {
        s.insert(ObjectDesc::new(
            Shape::sphere(V::ZERO.with(0, i as f32 * 3.0), 1.0),
            i,
        ))
        .unwrap();
    }
    let mut near = vec![sparti::Neighbor {
        handle: s.objects().next().unwrap().0,
        distance: 0.0,
    }];
    s.nearest_k(V::ZERO, 0, Filter::ALL, &mut near);
    assert!(near.is_empty(), "k = 0 finds nothing");
    s.nearest_k(V::splat(f32::NAN), 3, Filter::ALL, &mut near);
    assert!(near.is_empty(), "a NaN point finds nothing");
    s.nearest_k(V::splat(f32::INFINITY), 3, Filter::ALL, &mut near);
    assert!(near.is_empty(), "an infinite point finds nothing");
    s.nearest_k(V::ZERO, usize::MAX, Filter::ALL, &mut near);
    let values: Vec<u32> = near
        .iter()
        .map(|n| s.get(n.handle).unwrap().value)
        .collect();
    assert_eq!(values, vec![0, 1, 2, 3, 4]);
    s.nearest_k(V::ZERO, 3, Filter::layers(0), &mut near);
    assert!(near.is_empty(), "a filter with no layers finds nothing");
}

#[test]
fn k_nearest_with_k_zero_or_a_non_finite_point_finds_nothing() {
    every_structure!(brute, knn_edges);
}

/// Degenerate frustums: a zero or NaN plane normal is refused
/// (`DegeneratePlane`, `NonFinite`); a frustum whose planes face each
/// other with no gap between them selects what touches that plane only,
/// one with a gap selects nothing, and six copies of one plane select the
/// half-space; every structure gives the brute force's answer.
fn degenerate_frustums<V: Vector, S: SpatialIndex<V, u32>>(mut s: S) {
    let mut b = BruteForce::<V, u32>::new();
    for i in 0..20u32 {
        let d = ObjectDesc::new(Shape::sphere(V::ZERO.with(0, i as f32 - 10.0), 0.4), i);
        s.insert(d.clone()).unwrap();
        b.insert(d).unwrap();
    }
    assert_eq!(Plane::new(V::ZERO, 1.0), Err(Error::DegeneratePlane));
    assert_eq!(Plane::new(V::splat(f32::NAN), 1.0), Err(Error::NonFinite));
    assert_eq!(Plane::new(V::ONE, f32::INFINITY), Err(Error::NonFinite));
    let x = V::ZERO.with(0, 1.0);
    let cases: [(sparti::Frustum<V>, usize); 3] = [
        // x >= 0.2 and x <= 0.2: only what touches x = 0.2 (the ball at 0).
        (
            sparti::Frustum::new([
                Plane::new(x, -0.2).unwrap(),
                Plane::new(-x, 0.2).unwrap(),
                Plane::new(x, -0.2).unwrap(),
                Plane::new(-x, 0.2).unwrap(),
                Plane::new(x, -0.2).unwrap(),
                Plane::new(-x, 0.2).unwrap(),
            ]),
            1,
        ),
        // x >= 5.5 and x <= 4.5: empty.
        (
            sparti::Frustum::new([
                Plane::new(x, -5.5).unwrap(),
                Plane::new(-x, 4.5).unwrap(),
                Plane::new(x, -5.5).unwrap(),
                Plane::new(-x, 4.5).unwrap(),
                Plane::new(x, -5.5).unwrap(),
                Plane::new(-x, 4.5).unwrap(),
            ]),
            0,
        ),
        // Six times x >= 0: the half-space.
        (sparti::Frustum::new([Plane::new(x, 0.0).unwrap(); 6]), 10),
    ];
    let (mut out_s, mut out_b) = (vec![], vec![]);
    for (f, n) in cases {
        s.query_frustum(&f, Filter::ALL, &mut out_s);
        b.query_frustum(&f, Filter::ALL, &mut out_b);
        out_s.sort();
        out_b.sort();
        assert_eq!(out_s, out_b);
        assert_eq!(out_s.len(), n, "{f:?}");
    }
}

#[test]
fn degenerate_frustums_are_refused_or_answered_as_the_brute_force() {
    every_structure!(brute, degenerate_frustums);
    assert!(sparti::Frustum::from_view_projection_gl(glam::Mat4::ZERO).is_err());
}

/// An object leaving the world at speed (a million units a frame, for 40
/// frames, then back) under the default policy (the root grows): never
/// lost, found by queries where it is, the structure valid every frame.
fn leaving_at_speed<V: Vector, S: SpatialIndex<V, u32>>(mut s: S) {
    for i in 0..10 {
        s.insert(ObjectDesc::new(
            Shape::sphere(V::splat(10.0 + i as f32), 0.5),
            i,
        ))
        .unwrap();
    }
    let h = s
        .insert(ObjectDesc::new(Shape::sphere(V::ZERO, 0.5), 99))
        .unwrap();
    let v = V::ONE.with(0, -1.0) * 1e6;
    let mut p = V::ZERO;
    let mut out = Vec::new();
    for frame in 0..80 {
        p = if frame < 40 { p + v } else { p - v };
        s.update(h, Shape::sphere(p, 0.5)).unwrap();
        s.end_frame();
        s.validate().unwrap();
        s.query_radius(p, 1.0, Filter::ALL, &mut out);
        assert_eq!(out, vec![h], "frame {frame}: the object is where it went");
        assert_eq!(s.len(), 11);
    }
    s.query_radius(V::splat(10.0), 30.0, Filter::ALL, &mut out);
    assert_eq!(out.len(), 11, "back home with the others");
}

#[test]
fn objects_leaving_the_world_at_speed_are_never_lost() {
    every_structure!(brute, leaving_at_speed);
}

/// A million zero-size objects at one point, in every structure: built,
/// valid, every one found by a query there, none elsewhere, k nearest
/// answered, depth bounded.
fn million_at_one_point<V: Vector, S: SpatialIndex<V, u32>>(mut s: S) {
    let p = V::splat(3.3);
    let descs = (0..1_000_000)
        .map(|i| ObjectDesc::new(Shape::sphere(p, 0.0), i))
        .collect();
    s.insert_many(descs).unwrap();
    s.flush();
    s.validate().unwrap();
    let st = s.stats();
    assert_eq!(st.objects, 1_000_000);
    assert!(st.max_depth <= 64, "depth {}", st.max_depth);
    let mut out = Vec::new();
    s.query_radius(p, 0.0, Filter::ALL, &mut out);
    assert_eq!(out.len(), 1_000_000);
    s.query_radius(p + V::ONE, 0.5, Filter::ALL, &mut out);
    assert!(out.is_empty());
    let mut near = Vec::new();
    s.nearest_k(p + V::ONE, 3, Filter::ALL, &mut near);
    assert_eq!(near.len(), 3);
    assert_eq!(near[0].handle.index(), 0, "ties go to the smaller handle");
}

#[test]
fn a_million_objects_at_one_point() {
    every_structure!(brute, million_at_one_point);
}

/// Query boxes built field by field (`Aabb`'s fields are public, so
/// `Aabb::new`'s refusal can be bypassed) with a lower bound above the
/// upper on some axis, or a NaN bound: every structure answers as the
/// brute force, with the objects queued and after the build step (the
/// grid's search), for one query and in a batch.
fn inverted_query_boxes<V: Vector, S: SpatialIndex<V, u32>>(mut s: S) {
    let mut b = BruteForce::<V, u32>::new();
    let mut r = crate::common::rng(17);
    for i in 0..600u32 {
        let d = ObjectDesc::new(crate::common::sphere_or_box(&mut r, 100.0), i);
        s.insert(d.clone()).unwrap();
        b.insert(d).unwrap();
    }
    let mut queries = Vec::new();
    for axis in 0..V::DIM {
        for (lo, hi) in [(60.0, 40.0), (50.5, 49.5), (100.0, 0.0), (f32::NAN, 50.0)] {
            let mut q = Aabb {
                min: V::splat(20.0),
                max: V::splat(80.0),
            };
            q.min = q.min.with(axis, lo);
            q.max = q.max.with(axis, hi);
            queries.push(q);
        }
    }
    // Inverted on every axis, and the whole world turned inside out.
    queries.push(Aabb {
        min: V::splat(55.0),
        max: V::splat(45.0),
    });
    queries.push(Aabb {
        min: V::splat(f32::INFINITY),
        max: V::splat(f32::NEG_INFINITY),
    });
    let (mut out_s, mut out_b) = (vec![], vec![]);
    let mut met = 0;
    for built in [false, true] {
        if built {
            s.flush();
            b.flush();
            s.reset_counters();
        }
        for q in &queries {
            s.query_aabb(q, Filter::ALL, &mut out_s);
            b.query_aabb(q, Filter::ALL, &mut out_b);
            out_s.sort();
            out_b.sort();
            assert_eq!(out_s, out_b, "{q:?}, after the build step: {built}");
            if (0..V::DIM).any(|i| q.min.get(i).is_nan()) {
                assert!(out_b.is_empty(), "a NaN bound meets nothing: {q:?}");
            }
            met += out_b.len();
        }
        let (mut hs, mut os, mut hb, mut ob) = (vec![], vec![], vec![], vec![]);
        s.query_aabb_batch(&queries, Filter::ALL, &mut hs, &mut os);
        b.query_aabb_batch(&queries, Filter::ALL, &mut hb, &mut ob);
        assert_eq!(os, ob, "batch offsets, after the build step: {built}");
        for w in os.windows(2) {
            hs[w[0]..w[1]].sort();
            hb[w[0]..w[1]].sort();
        }
        assert_eq!(hs, hb, "batch, after the build step: {built}");
    }
    s.validate().unwrap();
    // The objects reaching across an inverted axis's gap meet the box.
    assert!(met > 0, "no inverted query box met anything");
    // After the build step the grid answered: its search is covered too.
    assert!(s.counters().grid_searches > 0, "{:?}", s.counters());
}

#[test]
fn inverted_query_boxes_are_answered_as_the_brute_force() {
    every_structure!(inverted_query_boxes);
}
