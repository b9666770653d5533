//! Hostile input, for every structure: a clear error or a defined answer,
//! never a panic, a hang or a silently lost object.

use glam::{Vec2, Vec3};
use sparti::{
    Aabb, BruteForce, Bsp2, Bsp3, BspConfig, Cone, Error, Filter, ObjectDesc, Octree, Plane,
    Quadtree, Ray, Shape, SpatialIndex, Sphere, Vector,
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
        Err(Error::NegativeSize)
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
    for m in [0.0, -1.0, f32::NAN, f32::INFINITY, 1e31] {
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
