//! The fuzzing harness on stable, in `cargo test`: every input of the `ops`
//! seed corpus (`fuzz/corpus/ops`) and every input that once was a finding
//! (`fuzz/regressions/ops`) is decoded into operations and run against all
//! six structures beside the brute force (see `fuzz/README.md`). Plus the
//! findings, each as a readable test.

#[path = "../../../fuzz/src/ops.rs"]
mod ops;
#[path = "../../../fuzz/src/replay.rs"]
mod replay;

use crate::common::every_structure;

use glam::{Vec2, Vec3};
use sparti::{
    Aabb, Cone, Filter, Frustum, LooseOctree, ObjectDesc, Plane, Ray, Shape, SpatialIndex, Sphere,
    Vector,
};

/// Every file of `dir` through the `ops` harness.
fn replay_dir(dir: &str) -> usize {
    replay::replay_dir(dir, ops::run)
}

#[test]
fn ops_seed_corpus_agrees_with_the_brute_force() {
    let n = replay_dir("fuzz/corpus/ops");
    assert!(n > 0, "the seed corpus is empty");
}

#[test]
fn ops_regressions_agree_with_the_brute_force() {
    let n = replay_dir("fuzz/regressions/ops");
    assert!(n > 0, "no regression input");
}

/// Finding 1 (fuzzing, `fuzz/regressions/ops/underflow-point-sphere-vs-box`):
/// a point (a sphere of radius 0) 2.2e-38 above a box was reported inside
/// it by the brute force, because the squared distance underflowed to 0,
/// while the trees, which compare bounding boxes first, did not report it.
/// The exact sphere tests now include the box test.
fn tiny_gaps_are_gaps<V: Vector, S: SpatialIndex<V, u32>>(mut s: S) {
    let gap = 2.2e-38;
    let p = V::ZERO.with(V::DIM - 1, gap);
    let point = s.insert(ObjectDesc::new(Shape::sphere(p, 0.0), 1)).unwrap();
    let mut out = Vec::new();
    s.query_aabb(&Aabb::new(V::ZERO, V::ZERO).unwrap(), Filter::ALL, &mut out);
    assert!(out.is_empty(), "a point {gap} away is not in a box");
    s.query_sphere(&Sphere::new(V::ZERO, 0.0).unwrap(), Filter::ALL, &mut out);
    assert!(out.is_empty(), "nor in a ball of radius 0");
    s.query_sphere(&Sphere::new(p, 0.0).unwrap(), Filter::ALL, &mut out);
    assert_eq!(out, vec![point], "a ball of radius 0 holds its own centre");
    // Two points that far apart do not touch; two at one place do.
    let other = s
        .insert(ObjectDesc::new(Shape::sphere(V::ZERO, 0.0), 2))
        .unwrap();
    let mut pairs = Vec::new();
    s.pairs(&mut pairs);
    assert!(pairs.is_empty(), "{pairs:?}");
    s.update(other, Shape::sphere(p, 0.0)).unwrap();
    s.pairs(&mut pairs);
    assert_eq!(pairs.len(), 1);
    s.validate().unwrap();
    // Finding 3 (`fuzz/regressions/ops/underflow-ray-origin-beside-point-sphere`):
    // a ray starting 1e-45 beside a point, pointing away, "started inside"
    // it for the brute force.
    s.clear();
    let beside = V::ZERO.with(0, 1e-45);
    s.insert(ObjectDesc::new(Shape::sphere(beside, 0.0), 3))
        .unwrap();
    let away = Ray::new(V::ZERO, V::ZERO.with(0, -1.0)).unwrap();
    assert_eq!(s.ray_nearest(&away, 0.0, Filter::ALL), None);
    assert_eq!(s.ray_nearest(&away, 10.0, Filter::ALL), None);
    let mut hits = Vec::new();
    s.ray_all(&away, 10.0, Filter::ALL, &mut hits);
    assert!(hits.is_empty());
    let towards = Ray::new(V::ZERO, V::ZERO.with(0, 1.0)).unwrap();
    assert!(s.ray_nearest(&towards, 10.0, Filter::ALL).is_some());
}

#[test]
fn tiny_gaps_do_not_underflow_into_contact() {
    assert!(
        !Aabb::new(Vec3::ZERO, Vec3::ZERO)
            .unwrap()
            .intersects_sphere(&Sphere::new(Vec3::new(0.0, 0.0, 2.2e-38), 0.0).unwrap())
    );
    assert!(
        !Sphere::new(Vec2::ZERO, 0.0)
            .unwrap()
            .intersects(&Sphere::new(Vec2::new(1e-38, 0.0), 0.0).unwrap())
    );
    every_structure!(brute, tiny_gaps_are_gaps);
}

/// Finding 2 (fuzzing, `fuzz/regressions/ops/octree-root-collapsed-far-from-origin`):
/// an octree whose first object sat at x = 1.37e11 made a root of side 1
/// there, which rounding collapsed to zero width (the float spacing at
/// 1.37e11 is 16384); the next object, at x = -5, needed the root to grow,
/// and doubling a zero side never grows: `build_pending` panicked. The root
/// now grows by at least its nominal side.
fn far_then_near<V: Vector, S: SpatialIndex<V, u32>>(mut s: S) {
    let far = V::ZERO.with(0, 137_438_945_000.0);
    let a = s
        .insert(ObjectDesc::new(Shape::sphere(far, 0.0), 1))
        .unwrap();
    s.pairs(&mut Vec::new()); // builds the tree around the first object
    let b = s
        .insert(ObjectDesc::new(
            Shape::sphere(V::ZERO.with(0, -5.0), 0.0),
            2,
        ))
        .unwrap();
    let mut pairs = Vec::new();
    s.pairs(&mut pairs);
    assert!(pairs.is_empty());
    s.validate().unwrap();
    let mut out = Vec::new();
    s.query_radius(V::ZERO, 10.0, Filter::ALL, &mut out);
    assert_eq!(out, vec![b]);
    s.query_radius(far, 1.0, Filter::ALL, &mut out);
    assert_eq!(out, vec![a]);
}

#[test]
fn a_root_collapsed_far_from_the_origin_still_grows() {
    every_structure!(far_then_near);
}

/// Finding 4 (`fuzz/regressions/ops/frustum-rounds-a-gap-away-for-a-sphere`):
/// a sphere whose top is at y = 0, against a frustum that keeps
/// y >= 1.9e-34: `signed_distance(centre) >= -radius` rounded the gap away
/// (-61 - 1.9e-34 is -61), so the brute force reported the sphere while the
/// trees, which test its bounding box, did not. The frustum's sphere test
/// now includes the box test.
fn frustum_gap<V: Vector, S: SpatialIndex<V, u32>>(mut s: S) {
    s.insert(ObjectDesc::new(
        Shape::sphere(V::ZERO.with(1, -61.0), 61.0),
        1,
    ))
    .unwrap();
    let up = V::ZERO.with(1, 1.0);
    let floor = Plane::new(up, -1.8768376e-34).unwrap(); // y >= 1.9e-34
    let f = Frustum::new([floor; 6]);
    let mut out = Vec::new();
    s.query_frustum(&f, Filter::ALL, &mut out);
    assert!(out.is_empty(), "{out:?}");
    let touching = Frustum::new([Plane::new(up, 0.0).unwrap(); 6]); // y >= 0
    s.query_frustum(&touching, Filter::ALL, &mut out);
    assert_eq!(out.len(), 1, "touching counts");
}

#[test]
fn a_frustum_does_not_round_a_gap_away() {
    every_structure!(brute, frustum_gap);
}

/// Finding 5 (`fuzz/regressions/ops/underflow-ray-inside-a-tiny-sphere-tie`):
/// a ray starting 1.7e-30 from a sphere of radius 9e-41 was "inside" it for
/// the brute force (hit at distance 0, squared distances underflowing), so
/// it tied at 0 with a large sphere really holding the origin and won the
/// tie by its smaller handle, while a loose octree, pruning by where the
/// ray enters the tiny sphere's box (1.7e-30), answered the large one. A
/// sphere is now never hit nearer than its box.
fn tiny_sphere_behind_the_origin<V: Vector, S: SpatialIndex<V, u32>>(mut s: S) {
    let tiny = s
        .insert(ObjectDesc::new(Shape::sphere(V::ZERO, 9.1834e-41), 1))
        .unwrap();
    let big = s
        .insert(ObjectDesc::new(
            Shape::sphere(V::ZERO.with(V::DIM - 1, 19.0), 34.13672),
            2,
        ))
        .unwrap();
    let ray = Ray::new(V::splat(1e-30), V::splat(-1.0)).unwrap();
    let hit = s.ray_nearest(&ray, 1.0, Filter::ALL).unwrap();
    assert_eq!((hit.handle, hit.distance), (big, 0.0));
    let mut hits = Vec::new();
    s.ray_all(&ray, 1.0, Filter::ALL, &mut hits);
    let got: Vec<_> = hits.iter().map(|h| h.handle).collect();
    assert_eq!(got, vec![big, tiny], "{hits:?}");
    assert!(hits[1].distance > 0.0);
}

#[test]
fn a_sphere_is_never_hit_nearer_than_its_box() {
    every_structure!(brute, tiny_sphere_behind_the_origin);
    let preset = || {
        LooseOctree::<u32>::with_config(sparti::LooseConfig {
            world: Some(Aabb::new(Vec3::splat(-8.0), Vec3::splat(8.0)).unwrap()),
            looseness: 3.0,
            leaf_capacity: 1,
            out_of_bounds: sparti::OutOfBounds::Reject,
            ..Default::default()
        })
        .unwrap()
    };
    tiny_sphere_behind_the_origin(preset());
}

/// Finding 6 (`fuzz/regressions/ops/sphere-query-rounded-centre-distance-far-from-origin`):
/// a sphere of radius `2^24` centred at `y = -1` and a query sphere of
/// radius 0.5 at `y = 2^24` are 1 apart from each other's boxes, but their
/// centre distance, `2^24 + 1`, rounds to `2^24`, as does the sum of the
/// radii: the brute force's exact test said they touch, while the trees
/// pruned the object by its box. A sphere query now also requires the
/// object's box to meet the sphere, the test the trees prune by.
fn rounded_centre_distance<V: Vector, S: SpatialIndex<V, u32>>(mut s: S) {
    let big = V::ZERO.with(1, -1.0);
    let h = s
        .insert(ObjectDesc::new(Shape::sphere(big, 16_777_216.0), 1))
        .unwrap();
    s.flush();
    let far = V::ZERO.with(0, -46.5).with(1, 16_777_216.0);
    let mut out = Vec::new();
    s.query_sphere(&Sphere::new(far, 0.5).unwrap(), Filter::ALL, &mut out);
    assert!(out.is_empty(), "{out:?}");
    // A hair closer, they meet for every structure.
    let near = V::ZERO.with(0, -46.5).with(1, 16_777_214.0);
    s.query_sphere(&Sphere::new(near, 0.5).unwrap(), Filter::ALL, &mut out);
    assert_eq!(out, vec![h]);
}

#[test]
fn a_sphere_query_agrees_with_the_boxes_far_from_the_origin() {
    every_structure!(brute, rounded_centre_distance);
}

/// Finding 9 (`fuzz/regressions/ops/cone-underflow-point-beside-the-apex`):
/// a point 2.35e-38 beside the apex of a cone of range 0 was "in range" for
/// the brute force (its squared distance underflows to 0), while the trees,
/// which look for centres within the box of the range around the apex, did
/// not see it. A cone now also requires each coordinate within range.
fn cone_underflow<V: Vector, S: SpatialIndex<V, u32>>(mut s: S) {
    let beside = V::ZERO.with(1, 2.350_988_6e-38);
    let h = s
        .insert(ObjectDesc::new(Shape::sphere(beside, 0.0), 1))
        .unwrap();
    s.flush();
    let mut out = Vec::new();
    let cone = Cone::new(V::ZERO, V::ZERO.with(0, -1.0), 0.0, 0.0).unwrap();
    s.query_cone(&cone, Filter::ALL, &mut out);
    assert!(out.is_empty(), "{out:?}");
    // In range (and on the axis), it is seen by every structure.
    let cone = Cone::new(V::ZERO, V::ZERO.with(1, 1.0), 0.0, 1e-37).unwrap();
    s.query_cone(&cone, Filter::ALL, &mut out);
    assert_eq!(out, vec![h]);
}

#[test]
fn a_cone_does_not_underflow_a_point_into_range() {
    every_structure!(brute, cone_underflow);
}
