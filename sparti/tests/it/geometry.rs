//! Property tests of the geometry layer, in 2D (`Vec2`) and 3D (`Vec3`).
//!
//! Every property is written once, generic over `V: Vector`, and run for
//! both dimensions by `for_both_dims!` (one test a property, each case a 2D
//! and a 3D case). The expected answers are computed
//! independently, in f64, from the definitions (per-axis intervals,
//! distances to clamped points, quadratic ray/sphere roots, slab intervals,
//! clip-space coordinates, angles). Where f32 rounding makes the answer
//! ambiguous the case is not judged: an expectation is only asserted when
//! the f64 reference is clear by a margin. Touching cases are built
//! deliberately from small integers (and integer Pythagorean tuples), where
//! f32 arithmetic is exact and "touching counts" can be checked exactly.

use std::f32::consts::{FRAC_PI_2, PI};

use glam::camera::rh::{proj::directx, view};
use glam::{DVec4, Mat4, Vec2, Vec3, Vec4};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use sparti::{Aabb, Cone, Error, Frustum, Overlap, Plane, Ray, Region, Shape, Sphere, Vector};

type TestResult = Result<(), TestCaseError>;

const CASES: u32 = 256;

/// Modest case counts, and no failure files written next to the tests.
fn config() -> ProptestConfig {
    ProptestConfig {
        failure_persistence: None,
        ..ProptestConfig::with_cases(CASES)
    }
}

// ---------------------------------------------------------------------------
// Helpers: f64 reference computations
// ---------------------------------------------------------------------------

fn from_fn<V: Vector>(mut f: impl FnMut(usize) -> f32) -> V {
    (0..V::DIM).fold(V::ZERO, |v, i| v.with(i, f(i)))
}

/// The components in f64.
fn p64<V: Vector>(v: V) -> Vec<f64> {
    (0..V::DIM).map(|i| v.get(i) as f64).collect()
}

fn dot64<V: Vector>(a: V, b: V) -> f64 {
    (0..V::DIM).map(|i| a.get(i) as f64 * b.get(i) as f64).sum()
}

fn len64<V: Vector>(v: V) -> f64 {
    dot64(v, v).sqrt()
}

fn dist64<V: Vector>(a: V, b: V) -> f64 {
    (0..V::DIM)
        .map(|i| (a.get(i) as f64 - b.get(i) as f64).powi(2))
        .sum::<f64>()
        .sqrt()
}

fn max_abs<V: Vector>(v: V) -> f64 {
    (0..V::DIM)
        .map(|i| (v.get(i) as f64).abs())
        .fold(0.0, f64::max)
}

/// Distance from the point to the box (0 inside), in f64.
fn box_dist64<V: Vector>(b: &Aabb<V>, p: &[f64]) -> f64 {
    (0..V::DIM)
        .map(|i| {
            let (lo, hi) = (b.min.get(i) as f64, b.max.get(i) as f64);
            (lo - p[i]).max(p[i] - hi).max(0.0).powi(2)
        })
        .sum::<f64>()
        .sqrt()
}

/// How deep the point is inside the box: the distance to the nearest face,
/// negative outside (on some axis).
fn box_depth64<V: Vector>(b: &Aabb<V>, p: &[f64]) -> f64 {
    (0..V::DIM)
        .map(|i| (p[i] - b.min.get(i) as f64).min(b.max.get(i) as f64 - p[i]))
        .fold(f64::INFINITY, f64::min)
}

/// The `2^DIM` corners of a box.
fn corners<V: Vector>(b: &Aabb<V>) -> Vec<V> {
    (0..1usize << V::DIM)
        .map(|m| {
            from_fn(|i| {
                if m & (1 << i) != 0 {
                    b.max.get(i)
                } else {
                    b.min.get(i)
                }
            })
        })
        .collect()
}

/// Signed distance of a point to a plane, in f64.
fn plane_sd64<V: Vector>(p: &Plane<V>, q: &[f64]) -> f64 {
    (0..V::DIM)
        .map(|i| p.normal.get(i) as f64 * q[i])
        .sum::<f64>()
        + p.d as f64
}

/// The point `origin + dir * t` in f64.
fn ray_at64<V: Vector>(ray: &Ray<V>, t: f64) -> Vec<f64> {
    (0..V::DIM)
        .map(|i| ray.origin.get(i) as f64 + ray.dir.get(i) as f64 * t)
        .collect()
}

/// Reference slab test in f64: the entry and exit distances of the ray
/// through the box grown by `grow` (shrunk when negative), clipped to
/// `[0, max_dist]`. Axes the ray does not move along are compared exactly
/// (no rounding is involved there), so rays lying in a face plane are judged
/// exactly.
fn slab64<V: Vector>(ray: &Ray<V>, b: &Aabb<V>, grow: f64, max_dist: f64) -> Option<(f64, f64)> {
    let (mut t0, mut t1) = (0.0f64, max_dist);
    for i in 0..V::DIM {
        let o = ray.origin.get(i) as f64;
        let d = ray.dir.get(i) as f64;
        let (lo, hi) = (b.min.get(i) as f64, b.max.get(i) as f64);
        if d == 0.0 {
            if o < lo || o > hi {
                return None;
            }
            continue;
        }
        let (lo, hi) = (lo - grow, hi + grow);
        if lo > hi {
            return None;
        }
        let (mut a, mut c) = ((lo - o) / d, (hi - o) / d);
        if a > c {
            std::mem::swap(&mut a, &mut c);
        }
        t0 = t0.max(a);
        t1 = t1.min(c);
        if t0 > t1 {
            return None;
        }
    }
    Some((t0, t1))
}

/// Reference ray/sphere entry distance in f64 for the sphere with its radius
/// grown by `grow`: 0 when the origin is inside.
fn sphere_entry64<V: Vector>(ray: &Ray<V>, s: &Sphere<V>, grow: f64, max_dist: f64) -> Option<f64> {
    let r = s.radius as f64 + grow;
    if r < 0.0 {
        return None;
    }
    let m: Vec<f64> = (0..V::DIM)
        .map(|i| ray.origin.get(i) as f64 - s.center.get(i) as f64)
        .collect();
    let d = p64(ray.dir);
    let a: f64 = d.iter().map(|x| x * x).sum();
    let b: f64 = m.iter().zip(&d).map(|(x, y)| x * y).sum();
    let c: f64 = m.iter().map(|x| x * x).sum::<f64>() - r * r;
    if c <= 0.0 {
        return (max_dist >= 0.0).then_some(0.0);
    }
    if b > 0.0 {
        return None;
    }
    let disc = b * b - a * c;
    if disc < 0.0 {
        return None;
    }
    let t = (-b - disc.sqrt()) / a;
    (t <= max_dist).then_some(t)
}

fn shape_scale<V: Vector>(s: &Shape<V>) -> f64 {
    let b = s.aabb();
    max_abs(b.min).max(max_abs(b.max))
}

fn is_unit<V: Vector>(v: V) -> bool {
    (len64(v) - 1.0).abs() <= 1e-5
}

// ---------------------------------------------------------------------------
// Strategies
// ---------------------------------------------------------------------------

/// A coordinate: a small integer (exact arithmetic, many shared faces) or any
/// float in a game-sized range.
fn coord() -> impl Strategy<Value = f32> + Clone {
    prop_oneof![(-20i32..=20).prop_map(|i| i as f32), -100.0f32..100.0]
}

fn vector<V: Vector>(c: impl Strategy<Value = f32> + Clone) -> impl Strategy<Value = V> + Clone {
    proptest::collection::vec(c, V::DIM).prop_map(|cs| from_fn(|i| cs[i]))
}

fn point<V: Vector>() -> impl Strategy<Value = V> + Clone {
    vector::<V>(coord())
}

fn int_point<V: Vector>() -> impl Strategy<Value = V> + Clone {
    vector::<V>((-20i32..=20).prop_map(|i| i as f32))
}

fn extent() -> impl Strategy<Value = f32> + Clone {
    prop_oneof![(0i32..=10).prop_map(|i| i as f32), 0.0f32..40.0]
}

fn aabb<V: Vector>() -> impl Strategy<Value = Aabb<V>> + Clone {
    (point::<V>(), vector::<V>(extent())).prop_map(|(min, s)| Aabb::new(min, min + s).unwrap())
}

fn int_aabb<V: Vector>() -> impl Strategy<Value = Aabb<V>> + Clone {
    (
        int_point::<V>(),
        vector::<V>((0i32..=8).prop_map(|i| i as f32)),
    )
        .prop_map(|(min, s)| Aabb::new(min, min + s).unwrap())
}

fn radius() -> impl Strategy<Value = f32> + Clone {
    prop_oneof![(0i32..=15).prop_map(|i| i as f32), 0.0f32..40.0]
}

fn sphere<V: Vector>() -> impl Strategy<Value = Sphere<V>> + Clone {
    (point::<V>(), radius()).prop_map(|(c, r)| Sphere::new(c, r).unwrap())
}

fn shape<V: Vector>() -> impl Strategy<Value = Shape<V>> + Clone {
    prop_oneof![
        sphere::<V>().prop_map(Shape::Sphere),
        aabb::<V>().prop_map(Shape::Box)
    ]
}

/// A direction component: often zero, one, or very small, so that
/// axis-parallel and nearly axis-parallel rays are common.
fn dir_comp() -> impl Strategy<Value = f32> + Clone {
    prop_oneof![
        3 => -1.0f32..1.0,
        1 => Just(0.0f32),
        1 => proptest::sample::select(vec![1.0f32, -1.0, 1e-7, -1e-7, 1e-30, -1e-30, 1e-40, -1e-40]),
    ]
}

fn direction<V: Vector>() -> impl Strategy<Value = V> + Clone {
    vector::<V>(dir_comp()).prop_filter("a direction must be normalisable", |d| {
        Ray::new(V::ZERO, *d).is_ok()
    })
}

/// How far a ray looks: usually finite, sometimes unbounded, rarely
/// negative (nothing can be hit then).
fn max_dist() -> impl Strategy<Value = f32> + Clone {
    prop_oneof![
        6 => 0.0f32..400.0,
        2 => (0i32..60).prop_map(|i| i as f32),
        2 => Just(f32::INFINITY),
        1 => -10.0f32..-1e-3,
    ]
}

/// Unit in [0, 1], often exactly 0 or 1 (boundaries).
fn unit() -> impl Strategy<Value = f32> + Clone {
    prop_oneof![3 => 0.0f32..=1.0, 1 => Just(0.0f32), 1 => Just(1.0f32)]
}

fn lerp(lo: f32, hi: f32, u: f32) -> f32 {
    (lo + (hi - lo) * u).max(lo).min(hi)
}

/// Integer vectors of integer length `n`: `(v, n)`.
const PYTHAGOREAN: [([i32; 3], i32); 10] = [
    ([1, 0, 0], 1),
    ([3, 4, 0], 5),
    ([5, 12, 0], 13),
    ([8, 15, 0], 17),
    ([6, 8, 0], 10),
    ([1, 2, 2], 3),
    ([2, 3, 6], 7),
    ([1, 4, 8], 9),
    ([4, 4, 7], 9),
    ([2, 10, 11], 15),
];

/// An integer vector of integer length, with its components permuted and
/// their signs flipped at random.
fn pythagorean<V: Vector>() -> impl Strategy<Value = (V, f32)> + Clone {
    let list: Vec<([i32; 3], i32)> = PYTHAGOREAN
        .iter()
        .filter(|(p, _)| p[V::DIM..].iter().all(|&c| c == 0))
        .copied()
        .collect();
    (
        proptest::sample::select(list),
        Just((0..V::DIM).collect::<Vec<_>>()).prop_shuffle(),
        proptest::collection::vec(any::<bool>(), V::DIM),
    )
        .prop_map(|((p, n), perm, neg)| {
            let v = from_fn(|i| {
                let c = p[perm[i]] as f32;
                if neg[i] { -c } else { c }
            });
            (v, n as f32)
        })
}

// ---------------------------------------------------------------------------
// Aabb
// ---------------------------------------------------------------------------

/// Pairs of boxes: independent, or sharing exactly a face plane.
fn aabb_pair<V: Vector>() -> impl Strategy<Value = (Aabb<V>, Aabb<V>)> {
    let touching = (
        aabb::<V>(),
        aabb::<V>(),
        0..V::DIM,
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(a, b, k, above, same_span)| {
            // b takes a's span on the other axes (so the boxes touch) or keeps
            // its own (so they may not).
            let b = if same_span {
                Aabb {
                    min: a.min,
                    max: a.max,
                }
            } else {
                b
            };
            let w = b.max.get(k) - b.min.get(k);
            let b = if above {
                let lo = a.max.get(k);
                Aabb {
                    min: b.min.with(k, lo),
                    max: b.max.with(k, lo + w),
                }
            } else {
                let hi = a.min.get(k);
                Aabb {
                    min: b.min.with(k, hi - w),
                    max: b.max.with(k, hi),
                }
            };
            (a, b)
        });
    prop_oneof![(aabb::<V>(), aabb::<V>()), touching]
}

fn check_aabb_pair<V: Vector>((a, b): (Aabb<V>, Aabb<V>)) -> TestResult {
    // Closed intervals overlap on every axis (touching counts).
    let overlap = (0..V::DIM).all(|i| a.min.get(i) <= b.max.get(i) && b.min.get(i) <= a.max.get(i));
    prop_assert_eq!(a.intersects(&b), overlap);
    prop_assert_eq!(b.intersects(&a), a.intersects(&b), "not symmetric");
    prop_assert_eq!(Shape::Box(a).intersects(&Shape::Box(b)), overlap);
    prop_assert_eq!(Shape::Box(a).intersects_aabb(&b), overlap);
    if overlap {
        // A common point exists: the max of the mins.
        let p = a.min.max(b.min);
        prop_assert!(a.contains_point(p) && b.contains_point(p));
    }

    let contains =
        (0..V::DIM).all(|i| a.min.get(i) <= b.min.get(i) && b.max.get(i) <= a.max.get(i));
    prop_assert_eq!(a.contains(&b), contains);
    if a.contains(&b) {
        prop_assert!(a.intersects(&b), "contains but does not intersect");
    }
    if b.contains(&a) {
        prop_assert!(b.intersects(&a), "contains but does not intersect");
    }
    prop_assert!(a.contains(&a) && a.intersects(&a));

    let u = a.union(&b);
    prop_assert!(
        u.contains(&a) && u.contains(&b),
        "union {u:?} misses a part"
    );
    for i in 0..V::DIM {
        prop_assert_eq!(u.min.get(i), a.min.get(i).min(b.min.get(i)));
        prop_assert_eq!(u.max.get(i), a.max.get(i).max(b.max.get(i)));
    }
    prop_assert!(u.intersects(&a) && u.intersects(&b));
    Ok(())
}

// ---------------------------------------------------------------------------
// Sphere/sphere and sphere/box
// ---------------------------------------------------------------------------

fn check_sphere_pair<V: Vector>((a, b): (Sphere<V>, Sphere<V>)) -> TestResult {
    let d = dist64(a.center, b.center);
    let sum = a.radius as f64 + b.radius as f64;
    let tol = 1e-5 * (1.0 + d + sum);
    let hit = a.intersects(&b);
    prop_assert_eq!(b.intersects(&a), hit, "not symmetric");
    prop_assert_eq!(Shape::Sphere(a).intersects(&Shape::Sphere(b)), hit);
    prop_assert_eq!(Shape::Sphere(a).intersects_sphere(&b), hit);
    if d < sum - tol {
        prop_assert!(hit, "centres {d} apart, radii sum {sum}: must intersect");
    } else if d > sum + tol {
        prop_assert!(
            !hit,
            "centres {d} apart, radii sum {sum}: must not intersect"
        );
    }
    Ok(())
}

/// Spheres whose centres are an integer vector of integer length apart, with
/// integer radii summing exactly to that length (touching), or a quarter
/// less (apart by a quarter). Everything is exact in f32.
fn touching_spheres<V: Vector>() -> impl Strategy<Value = (Sphere<V>, Sphere<V>, bool)> {
    (
        int_point::<V>(),
        pythagorean::<V>(),
        1i32..=4,
        0.0f32..=1.0,
        any::<bool>(),
    )
        .prop_map(|(a, (p, n), k, split, apart)| {
            let sum = n * k as f32;
            let mut r1 = (sum * split).floor();
            let mut r2 = sum - r1;
            if apart {
                if r1 >= r2 {
                    r1 -= 0.25;
                } else {
                    r2 -= 0.25;
                }
            }
            let sa = Sphere::new(a, r1).unwrap();
            let sb = Sphere::new(a + p * k as f32, r2).unwrap();
            (sa, sb, !apart)
        })
}

fn check_touching_spheres<V: Vector>((a, b, expected): (Sphere<V>, Sphere<V>, bool)) -> TestResult {
    prop_assert_eq!(a.intersects(&b), expected);
    prop_assert_eq!(b.intersects(&a), expected);
    prop_assert_eq!(Shape::Sphere(a).intersects(&Shape::Sphere(b)), expected);
    let c = Shape::Sphere(a).contact(&Shape::Sphere(b));
    prop_assert_eq!(c.is_some(), expected);
    if let Some(c) = c {
        prop_assert_eq!(c.depth, 0.0, "touching spheres have zero depth");
    }
    Ok(())
}

fn check_sphere_box<V: Vector>((s, b): (Sphere<V>, Aabb<V>)) -> TestResult {
    let d = box_dist64(&b, &p64(s.center));
    let r = s.radius as f64;
    let tol = 1e-5 * (1.0 + max_abs(s.center) + r + max_abs(b.min).max(max_abs(b.max)));
    let hit = b.intersects_sphere(&s);
    prop_assert_eq!(Shape::Box(b).intersects(&Shape::Sphere(s)), hit);
    prop_assert_eq!(Shape::Sphere(s).intersects(&Shape::Box(b)), hit);
    prop_assert_eq!(Shape::Sphere(s).intersects_aabb(&b), hit);
    prop_assert_eq!(Shape::Box(b).intersects_sphere(&s), hit);
    if d < r - tol {
        prop_assert!(
            hit,
            "box at distance {d} from the centre, radius {r}: must intersect"
        );
    } else if d > r + tol {
        prop_assert!(
            !hit,
            "box at distance {d} from the centre, radius {r}: must not intersect"
        );
    }
    // The closest point is the clamped centre.
    let q = b.closest_point(s.center);
    prop_assert!(b.contains_point(q));
    prop_assert!((dist64(q, s.center) - d).abs() <= tol);
    Ok(())
}

/// A sphere touching a box exactly: its centre is a surface point `q` of an
/// integer box plus an outward integer vector of integer length (the
/// radius), or a quarter further away.
fn touching_sphere_box<V: Vector>() -> impl Strategy<Value = (Sphere<V>, Aabb<V>, bool)> {
    (
        int_aabb::<V>(),
        pythagorean::<V>(),
        1i32..=3,
        proptest::collection::vec(0.0f32..=1.0, V::DIM),
        any::<bool>(),
    )
        .prop_map(|(b, (p, n), k, us, apart)| {
            let q = from_fn::<V>(|i| {
                let (lo, hi) = (b.min.get(i), b.max.get(i));
                if p.get(i) > 0.0 {
                    hi
                } else if p.get(i) < 0.0 {
                    lo
                } else {
                    (lo + ((hi - lo) * us[i]).floor()).min(hi)
                }
            });
            let r = n * k as f32 - if apart { 0.25 } else { 0.0 };
            (Sphere::new(q + p * k as f32, r).unwrap(), b, !apart)
        })
}

fn check_touching_sphere_box<V: Vector>(
    (s, b, expected): (Sphere<V>, Aabb<V>, bool),
) -> TestResult {
    prop_assert_eq!(b.intersects_sphere(&s), expected);
    prop_assert_eq!(Shape::Box(b).intersects(&Shape::Sphere(s)), expected);
    prop_assert_eq!(Shape::Sphere(s).intersects(&Shape::Box(b)), expected);
    prop_assert_eq!(Shape::Sphere(s).contact(&Shape::Box(b)).is_some(), expected);
    prop_assert_eq!(Shape::Box(b).contact(&Shape::Sphere(s)).is_some(), expected);
    Ok(())
}

// ---------------------------------------------------------------------------
// Rays
// ---------------------------------------------------------------------------

/// A ray and a box: the origin's coordinates are random, on a face plane of
/// the box, or inside its span, axis by axis; the direction is random or
/// aimed at a point of the box.
fn ray_box<V: Vector>() -> impl Strategy<Value = (Ray<V>, Aabb<V>, f32)> {
    (
        aabb::<V>(),
        proptest::collection::vec((0u8..5, coord(), unit()), V::DIM),
        direction::<V>(),
        any::<bool>(),
        proptest::collection::vec(unit(), V::DIM),
        max_dist(),
    )
        .prop_map(|(b, spec, dir, aim, target, max_dist)| {
            let origin = from_fn::<V>(|i| {
                let (k, c, u) = spec[i];
                let (lo, hi) = (b.min.get(i), b.max.get(i));
                match k {
                    0 | 1 => c,
                    2 => lo,
                    3 => hi,
                    _ => lerp(lo, hi, u),
                }
            });
            let aimed = from_fn::<V>(|i| lerp(b.min.get(i), b.max.get(i), target[i])) - origin;
            let dir = if aim && aimed.try_normalize().is_some() {
                aimed
            } else {
                dir
            };
            (Ray::new(origin, dir).unwrap(), b, max_dist)
        })
}

fn check_cast_aabb<V: Vector>((ray, b, max_dist): (Ray<V>, Aabb<V>, f32)) -> TestResult {
    let hit = ray.cast_aabb(&b, max_dist);
    let scale = 1.0 + max_abs(ray.origin).max(max_abs(b.min)).max(max_abs(b.max));
    let tol = 1e-5 * scale;
    let md = max_dist as f64;

    if max_dist < 0.0 {
        prop_assert_eq!(hit, None, "negative max_dist");
        prop_assert_eq!(ray.clip_aabb(&b, max_dist), None, "negative max_dist");
        return Ok(());
    }
    if b.contains_point(ray.origin) {
        // A ray starting inside (or on) the box hits it at distance 0.
        prop_assert!(hit.is_some(), "the origin is in the box, yet no hit");
        let h = hit.unwrap();
        prop_assert_eq!(h.distance, 0.0);
        prop_assert_eq!(h.point, ray.origin);
        prop_assert_eq!(h.normal, -ray.dir);
    }
    if let Some(h) = hit {
        prop_assert!(
            h.distance >= 0.0 && h.distance <= max_dist,
            "distance {} beyond max {max_dist}",
            h.distance
        );
        prop_assert_eq!(h.point, ray.origin + ray.dir * h.distance);
        prop_assert!(is_unit(h.normal), "normal {:?} not unit", h.normal);
        if !b.contains_point(ray.origin) {
            // The point lies on the surface, on the face the normal names,
            // and the ray comes through that face from outside.
            let p = p64(h.point);
            prop_assert!(
                box_dist64(&b, &p) <= tol,
                "hit point {:?} off the box",
                h.point
            );
            prop_assert!(
                box_depth64(&b, &p) <= tol,
                "hit point {:?} deep inside the box",
                h.point
            );
            let axes: Vec<usize> = (0..V::DIM).filter(|&i| h.normal.get(i) != 0.0).collect();
            prop_assert_eq!(axes.len(), 1, "normal {:?} is not an axis", h.normal);
            let k = axes[0];
            let n = h.normal.get(k);
            prop_assert_eq!(n.abs(), 1.0);
            let face = if n < 0.0 { b.min.get(k) } else { b.max.get(k) } as f64;
            prop_assert!(
                (p[k] - face).abs() <= tol,
                "hit point {:?} not on face {k} ({face})",
                h.point
            );
            prop_assert!(
                ray.dir.get(k) * n < 0.0,
                "the ray does not enter through the face"
            );
            let side = (ray.origin.get(k) as f64 - face) * n as f64;
            prop_assert!(side >= 0.0, "the origin is not outside the face hit");
        }
    }

    // Against the f64 slab test: the box shrunk by the tolerance is surely
    // hit, the box grown by it is surely missed.
    let slack = |t: f64| 1e-6 * (1.0 + t);
    let grown = slab64(&ray, &b, tol, md + tol);
    let shrunk = slab64(&ray, &b, -tol, md - tol);
    match hit {
        Some(h) => {
            let t = h.distance as f64;
            prop_assert!(
                grown.is_some(),
                "hit at {t} but the f64 slab test misses even the grown box"
            );
            let (g0, _) = grown.unwrap();
            prop_assert!(
                t >= g0 - slack(t),
                "hit at {t} before the grown box's entry {g0}"
            );
            if let Some((s0, _)) = shrunk {
                prop_assert!(
                    t <= s0 + slack(t),
                    "hit at {t} after the shrunk box's entry {s0}"
                );
            }
        }
        None => prop_assert!(
            shrunk.is_none(),
            "missed, but the f64 slab test hits {shrunk:?}"
        ),
    }

    // Dense sampling: a sample clearly inside means a hit no later than it.
    let t_end = if max_dist.is_finite() { md } else { 1000.0 };
    let n = 400;
    for j in 0..=n {
        let t = t_end * j as f64 / n as f64;
        if box_depth64(&b, &ray_at64(&ray, t)) > tol {
            prop_assert!(
                hit.is_some(),
                "sample at t = {t} is inside the box, but no hit"
            );
            let d = hit.unwrap().distance as f64;
            prop_assert!(
                d <= t + slack(t),
                "hit at {d}, but the sample at {t} is already inside"
            );
            break;
        }
    }
    Ok(())
}

fn check_clip_aabb<V: Vector>((ray, b, max_dist): (Ray<V>, Aabb<V>, f32)) -> TestResult {
    let clip = ray.clip_aabb(&b, max_dist);
    let cast = ray.cast_aabb(&b, max_dist);
    prop_assert_eq!(
        clip.is_some(),
        cast.is_some(),
        "clip {:?} vs cast {:?}",
        clip,
        cast
    );
    let Some((t0, t1)) = clip else { return Ok(()) };
    let scale = 1.0 + max_abs(ray.origin).max(max_abs(b.min)).max(max_abs(b.max));
    let tol = 1e-5 * scale;
    prop_assert_eq!(cast.unwrap().distance, t0);
    prop_assert!(
        0.0 <= t0 && t0 <= t1 && t1 <= max_dist,
        "bad interval {t0}..{t1}"
    );
    if t1.is_finite() {
        // The segment between entry and exit lies in the box, and the exit is
        // on the surface unless the ray was cut at max_dist.
        let mid = ray_at64(&ray, (t0 as f64 + t1 as f64) / 2.0);
        prop_assert!(box_dist64(&b, &mid) <= tol + 1e-6 * t1 as f64);
        let exit = ray_at64(&ray, t1 as f64);
        prop_assert!(box_dist64(&b, &exit) <= tol + 1e-6 * t1 as f64);
        if t1 < max_dist {
            prop_assert!(
                box_depth64(&b, &exit) <= tol + 1e-6 * t1 as f64,
                "exit point inside the box"
            );
        }
    }
    // The reference interval agrees.
    let md = max_dist as f64;
    if let Some((s0, s1)) = slab64(&ray, &b, -tol, md - tol) {
        let slack = 1e-6 * (1.0 + s1.min(1e12));
        prop_assert!(
            t0 as f64 <= s0 + slack && t1 as f64 >= s1 - slack,
            "{t0}..{t1} vs shrunk {s0}..{s1}"
        );
    }
    Ok(())
}

/// Axis-parallel rays with integer coordinates, often lying exactly in a face
/// plane of the box (touching counts: they hit): `(ray, box, max_dist,
/// expected hit distance)`.
fn axis_ray_box<V: Vector>() -> impl Strategy<Value = (Ray<V>, Aabb<V>, f32, Option<f32>)> {
    (
        int_aabb::<V>(),
        0..V::DIM,
        any::<bool>(),
        0i32..=5,
        proptest::collection::vec((0u8..4, 0.0f32..=1.0, 1i32..=3), V::DIM),
        0i32..=20,
    )
        .prop_map(|(b, axis, forward, gap, others, max_dist)| {
            let mut inside_others = true;
            let origin = from_fn::<V>(|i| {
                let (lo, hi) = (b.min.get(i), b.max.get(i));
                if i == axis {
                    return if forward {
                        lo - gap as f32
                    } else {
                        hi + gap as f32
                    };
                }
                let (k, u, off) = others[i];
                match k {
                    0 => lo, // in the face plane
                    1 => hi, // in the face plane
                    2 => (lo + ((hi - lo) * u).floor()).min(hi),
                    _ => {
                        inside_others = false;
                        if u < 0.5 {
                            lo - off as f32
                        } else {
                            hi + off as f32
                        }
                    }
                }
            });
            let dir = V::unit(axis) * if forward { 1.0 } else { -1.0 };
            let max_dist = max_dist as f32;
            let expected = (inside_others && gap as f32 <= max_dist).then_some(gap as f32);
            (Ray::new(origin, dir).unwrap(), b, max_dist, expected)
        })
}

fn check_axis_ray_box<V: Vector>(
    (ray, b, max_dist, expected): (Ray<V>, Aabb<V>, f32, Option<f32>),
) -> TestResult {
    let hit = ray.cast_aabb(&b, max_dist);
    prop_assert_eq!(hit.map(|h| h.distance), expected);
    let clip = ray.clip_aabb(&b, max_dist);
    prop_assert_eq!(clip.map(|c| c.0), expected);
    if let Some(h) = hit {
        prop_assert_eq!(h.point, ray.origin + ray.dir * h.distance);
        prop_assert!(b.contains_point(h.point));
        prop_assert_eq!(h.normal, -ray.dir);
        // Exits at the far face, or at max_dist.
        let axis = (0..V::DIM).find(|&i| ray.dir.get(i) != 0.0).unwrap();
        let width = b.max.get(axis) - b.min.get(axis);
        prop_assert_eq!(clip.unwrap().1, (h.distance + width).min(max_dist));
    }
    Ok(())
}

/// A ray and a sphere: the origin is random or inside/on the sphere, the
/// direction random or aimed near the centre.
fn ray_sphere<V: Vector>() -> impl Strategy<Value = (Ray<V>, Sphere<V>, f32)> {
    (
        sphere::<V>(),
        point::<V>(),
        0u8..3,
        vector::<V>(-1.0f32..1.0),
        direction::<V>(),
        any::<bool>(),
        vector::<V>(-1.2f32..1.2),
        max_dist(),
    )
        .prop_map(|(s, p, kind, off, dir, aim, jitter, max_dist)| {
            let origin = match kind {
                0 | 1 => p,
                _ => s.center + off * s.radius * 0.6,
            };
            let aimed = s.center + jitter * s.radius - origin;
            let dir = if aim && aimed.try_normalize().is_some() {
                aimed
            } else {
                dir
            };
            (Ray::new(origin, dir).unwrap(), s, max_dist)
        })
}

fn check_cast_sphere<V: Vector>((ray, s, max_dist): (Ray<V>, Sphere<V>, f32)) -> TestResult {
    let hit = ray.cast_sphere(&s, max_dist);
    prop_assert_eq!(Shape::Sphere(s).cast_ray(&ray, max_dist), hit);
    let r = s.radius as f64;
    let scale = 1.0 + max_abs(ray.origin).max(max_abs(s.center)) + r;
    let tol = 1e-5 * scale;
    let md = max_dist as f64;
    let od = dist64(ray.origin, s.center);

    if max_dist < 0.0 {
        prop_assert_eq!(hit, None, "negative max_dist");
        return Ok(());
    }
    if od < r - tol {
        prop_assert!(hit.is_some(), "the origin is inside the sphere, yet no hit");
    }
    if let Some(h) = hit {
        prop_assert!(
            h.distance >= 0.0 && h.distance <= max_dist,
            "distance {} beyond max {max_dist}",
            h.distance
        );
        prop_assert_eq!(h.point, ray.origin + ray.dir * h.distance);
        prop_assert!(is_unit(h.normal), "normal {:?} not unit", h.normal);
        if od < r - tol {
            prop_assert_eq!(h.distance, 0.0);
            prop_assert_eq!(h.point, ray.origin);
            prop_assert_eq!(h.normal, -ray.dir);
        } else if od > r + tol {
            // On the surface, with the outward normal.
            let pd = dist64(h.point, s.center);
            prop_assert!(
                (pd - r).abs() <= tol,
                "hit point at {pd} from the centre, radius {r}"
            );
            // The normal is the outward direction at the point (the f32
            // rounding of `point - center` matters for tiny spheres).
            if pd > 0.0 {
                let out: Vec<f64> = (0..V::DIM)
                    .map(|i| (h.point.get(i) as f64 - s.center.get(i) as f64) / pd)
                    .collect();
                let err = (0..V::DIM)
                    .map(|i| (out[i] - h.normal.get(i) as f64).abs())
                    .fold(0.0, f64::max);
                prop_assert!(
                    err <= 1e-5 + 1e-6 * scale / pd,
                    "normal {:?} not outward {out:?}",
                    h.normal
                );
            }
        }
    }

    // Against the f64 roots for the sphere shrunk and grown by tol.
    let slack = |t: f64| 1e-5 * (1.0 + t);
    let grown = sphere_entry64(&ray, &s, tol, md + tol);
    let shrunk = sphere_entry64(&ray, &s, -tol, md - tol);
    match hit {
        Some(h) => {
            let t = h.distance as f64;
            prop_assert!(
                grown.is_some(),
                "hit at {t}, but the f64 roots miss even the grown sphere"
            );
            prop_assert!(
                t >= grown.unwrap() - slack(t),
                "hit at {t} before the grown sphere's entry {grown:?}"
            );
            if let Some(s0) = shrunk {
                prop_assert!(
                    t <= s0 + slack(t),
                    "hit at {t} after the shrunk sphere's entry {s0}"
                );
            }
        }
        None => prop_assert!(
            shrunk.is_none(),
            "missed, but the f64 roots hit at {shrunk:?}"
        ),
    }

    // Dense sampling.
    let t_end = if max_dist.is_finite() { md } else { 1000.0 };
    let n = 400;
    for j in 0..=n {
        let t = t_end * j as f64 / n as f64;
        let p = ray_at64(&ray, t);
        let d = p
            .iter()
            .zip(p64(s.center))
            .map(|(a, b)| (a - b).powi(2))
            .sum::<f64>()
            .sqrt();
        if d < r - tol {
            prop_assert!(
                hit.is_some(),
                "sample at t = {t} is inside the sphere, but no hit"
            );
            let h = hit.unwrap().distance as f64;
            prop_assert!(
                h <= t + slack(t),
                "hit at {h}, but the sample at {t} is already inside"
            );
            break;
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Planes and frustums
// ---------------------------------------------------------------------------

/// Six planes with random (unnormalised) normals around a point `c` that
/// lies inside all of them by a random margin: `(frustum, c)`.
fn frustum_planes<V: Vector>() -> impl Strategy<Value = (Frustum<V>, V)> + Clone {
    (
        point::<V>(),
        proptest::collection::vec(
            (
                vector::<V>(-1.0f32..1.0).prop_filter("non-zero normal", |n| len64(*n) > 1e-3),
                0.0f32..60.0,
                0.1f32..10.0,
            ),
            6,
        ),
    )
        .prop_map(|(c, specs)| {
            let planes: Vec<Plane<V>> = specs
                .iter()
                .map(|&(n, margin, scale)| {
                    let n = n * scale;
                    let d = -n.dot(c) + margin * n.length();
                    Plane::new(n, d).unwrap()
                })
                .collect();
            (Frustum::new(planes.try_into().unwrap()), c)
        })
}

fn check_plane<V: Vector>((n, d, q): (V, f32, V)) -> TestResult {
    prop_assume!(max_abs(n) > 1e-4 * 10f64.powi(-30));
    let p = Plane::new(n, d);
    prop_assert!(p.is_ok(), "Plane::new({n:?}, {d}) = {p:?}");
    let p = p.unwrap();
    prop_assert!(is_unit(p.normal), "normal {:?} not unit", p.normal);
    // The same plane: the signed distance is (n.q + d) / |n|.
    let expected = (dot64(n, q) + d as f64) / len64(n);
    let tol = 1e-5 * (1.0 + max_abs(q) + (d as f64).abs() / len64(n));
    let got = p.signed_distance(q) as f64;
    prop_assert!(
        (got - expected).abs() <= tol,
        "signed distance {got}, expected {expected}"
    );
    // The normal points into the positive side, with the same orientation.
    prop_assert!(dot64(p.normal, n) > 0.0);
    Ok(())
}

/// A frustum and a box: the box's corners decide. It is "out" exactly when
/// one plane has every corner strictly outside, "contained" exactly when
/// every corner is inside every plane. (The f32 signed distance is monotone
/// in each coordinate, so the corner test is exact.)
fn check_frustum_box<V: Vector>(f: &Frustum<V>, b: &Aabb<V>) -> TestResult {
    let cs = corners(b);
    let out = f
        .planes
        .iter()
        .any(|p| cs.iter().all(|&c| p.signed_distance(c) < 0.0));
    prop_assert_eq!(f.intersects_aabb(b), !out);
    let inside = f
        .planes
        .iter()
        .all(|p| cs.iter().all(|&c| p.signed_distance(c) >= 0.0));
    prop_assert_eq!(f.contains_aabb(b), inside);
    prop_assert_eq!(inside, cs.iter().all(|&c| f.contains_point(c)));
    if inside {
        prop_assert!(f.intersects_aabb(b));
    }
    // Also against f64 signed distances, when no corner is ambiguous.
    let tol = 1e-4 * (1.0 + max_abs(b.min).max(max_abs(b.max)));
    let sds: Vec<Vec<f64>> = f
        .planes
        .iter()
        .map(|p| cs.iter().map(|&c| plane_sd64(p, &p64(c))).collect())
        .collect();
    if sds.iter().flatten().all(|s| s.abs() > tol) {
        let out64 = sds.iter().any(|row| row.iter().all(|&s| s < 0.0));
        let in64 = sds.iter().flatten().all(|&s| s > 0.0);
        prop_assert_eq!(f.intersects_aabb(b), !out64);
        prop_assert_eq!(f.contains_aabb(b), in64);
    }
    Ok(())
}

fn check_frustum_sphere<V: Vector>(f: &Frustum<V>, s: &Sphere<V>) -> TestResult {
    // Out exactly when the centre is farther than the radius behind a plane.
    let c = p64(s.center);
    let r = s.radius as f64;
    let tol = 1e-4 * (1.0 + max_abs(s.center) + r);
    let margins: Vec<f64> = f.planes.iter().map(|p| plane_sd64(p, &c) + r).collect();
    if margins.iter().all(|m| m.abs() > tol) {
        prop_assert_eq!(f.intersects_sphere(s), margins.iter().all(|&m| m > 0.0));
    }
    if f.contains_point(s.center) {
        prop_assert!(f.intersects_sphere(s));
    }
    Ok(())
}

/// Random-plane frusta with boxes and spheres near the inner point.
fn frustum_cases<V: Vector>() -> impl Strategy<Value = (Frustum<V>, Aabb<V>, Sphere<V>)> {
    (
        frustum_planes::<V>(),
        aabb::<V>(),
        sphere::<V>(),
        any::<bool>(),
    )
        .prop_map(|((f, c), b, s, near)| {
            if near {
                // Move the shapes next to the inner point.
                let bo = c - b.center();
                let b = Aabb {
                    min: b.min + bo * 0.9,
                    max: b.max + bo * 0.9,
                };
                let s = Sphere::new(c + (s.center - c) * 0.3, s.radius).unwrap();
                (f, b, s)
            } else {
                (f, b, s)
            }
        })
}

fn check_frustum_cases<V: Vector>((f, b, s): (Frustum<V>, Aabb<V>, Sphere<V>)) -> TestResult {
    check_frustum_box(&f, &b)?;
    check_frustum_sphere(&f, &s)?;
    check_frustum_as_region(&f, &b, &s)
}

/// The frustum as a query region: `classify` (one pass over the planes)
/// is the box tests' answer, and for a shape whose box it meets, the
/// structures' `matches_meeting_box` is `matches` (the full test).
fn check_frustum_as_region<V: Vector>(f: &Frustum<V>, b: &Aabb<V>, s: &Sphere<V>) -> TestResult {
    for bx in [*b, s.aabb()] {
        let want = if !f.intersects_aabb(&bx) {
            Overlap::Outside
        } else if f.contains_aabb(&bx) {
            Overlap::Inside
        } else {
            Overlap::Partial
        };
        prop_assert_eq!(f.classify(&bx), want);
    }
    for shape in [Shape::Box(*b), Shape::Sphere(*s)] {
        if f.classify(&shape.aabb()) != Overlap::Outside {
            prop_assert_eq!(f.matches_meeting_box(&shape), f.matches(&shape));
        }
    }
    Ok(())
}

/// A camera: a projection with clip depth in [0, 1] (perspective, reversed
/// depth, infinite far plane, infinite reversed, orthographic) times a
/// look-at view, with the eye and target anywhere.
fn camera() -> impl Strategy<Value = Mat4> {
    (
        point::<Vec3>(),
        point::<Vec3>(),
        0.3f32..2.5,
        0.5f32..2.0,
        0.05f32..2.0,
        1.0f32..300.0,
        0u8..5,
        1.0f32..50.0,
    )
        .prop_filter("view direction not parallel to up", |(eye, target, ..)| {
            let d = *target - *eye;
            d.length() > 1e-2 && d.normalize().dot(Vec3::Y).abs() < 0.99
        })
        .prop_map(|(eye, target, fov, aspect, near, depth, kind, half)| {
            let view = view::look_at_mat4(eye, target, Vec3::Y);
            let far = near + depth;
            let proj = match kind {
                0 => directx::perspective(fov, aspect, near, far),
                1 => directx::perspective(fov, aspect, far, near), // reversed depth
                2 => directx::perspective_infinite(fov, aspect, near),
                3 => directx::perspective_infinite_reverse(fov, aspect, near),
                _ => directx::orthographic(-half * aspect, half * aspect, -half, half, near, far),
            };
            proj * view
        })
}

/// A camera, a point given in normalised device coordinates (some outside
/// the view volume), and a box and a sphere around the eye's surroundings.
fn camera_case() -> impl Strategy<Value = (Mat4, Vec3, Aabb<Vec3>, Sphere<Vec3>)> {
    (
        camera(),
        (-1.3f32..1.3, -1.3f32..1.3, -0.3f32..1.3),
        aabb::<Vec3>(),
        sphere::<Vec3>(),
    )
        .prop_map(|(m, (x, y, z), b, s)| (m, Vec3::new(x, y, z), b, s))
}

fn check_camera((m, ndc, b, s): (Mat4, Vec3, Aabb<Vec3>, Sphere<Vec3>)) -> TestResult {
    let f = Frustum::from_view_projection(m);
    prop_assert!(f.is_ok(), "{f:?} for {m:?}");
    let f = f.unwrap();
    for p in &f.planes {
        prop_assert!(is_unit(p.normal));
    }
    // Unproject the NDC point in f64, round it to f32, and classify the
    // rounded point from its clip coordinates: inside iff -w <= x, y <= w
    // and 0 <= z <= w.
    let m64 = m.as_dmat4();
    let world = m64.inverse() * DVec4::new(ndc.x as f64, ndc.y as f64, ndc.z as f64, 1.0);
    let world = (world / world.w).truncate();
    let p = world.as_vec3();
    prop_assume!(p.is_finite());
    let clip = m64 * DVec4::new(p.x as f64, p.y as f64, p.z as f64, 1.0);
    let margins = [
        clip.w + clip.x,
        clip.w - clip.x,
        clip.w + clip.y,
        clip.w - clip.y,
        clip.z,
        clip.w - clip.z,
    ];
    let tol = 1e-4 * (clip.w.abs() + clip.x.abs() + clip.y.abs() + clip.z.abs() + 1e-3);
    if margins.iter().all(|m| m.abs() > tol) {
        let inside = margins.iter().all(|&m| m > 0.0);
        prop_assert_eq!(f.contains_point(p), inside, "clip {:?}", clip);
    }
    if f.contains_point(p) {
        // A point inside: every box and sphere holding it is reported.
        let bp = Aabb::from_point(p);
        prop_assert!(f.intersects_aabb(&bp) && f.contains_aabb(&bp));
        prop_assert!(f.intersects_sphere(&Sphere::new(p, 0.5).unwrap()));
    }
    // Boxes near the eye and the point.
    check_frustum_box(&f, &b)?;
    let near = Aabb::from_center_half_extents(p, b.half_extents()).unwrap();
    check_frustum_box(&f, &near)?;
    check_frustum_sphere(&f, &s)?;
    check_frustum_sphere(&f, &Sphere::new(p, s.radius).unwrap())?;
    Ok(())
}

// ---------------------------------------------------------------------------
// Contacts
// ---------------------------------------------------------------------------

/// A coordinate near zero: where tiny centre differences survive in f32.
fn tiny() -> impl Strategy<Value = f32> + Clone {
    proptest::sample::select(vec![
        0.0f32, 1e-22, -1e-22, 1e-20, -1e-20, 1e-30, -3e-39, 1e-6, -1e-6,
    ])
}

/// Pairs of shapes: random, centred (nearly) on the same point, or touching
/// exactly (or a quarter apart).
fn shape_pair<V: Vector>() -> impl Strategy<Value = (Shape<V>, Shape<V>)> {
    let near = (
        shape::<V>(),
        shape::<V>(),
        vector::<V>(tiny()),
        vector::<V>(tiny()),
    )
        .prop_map(|(a, b, ca, cb)| {
            let recentre = |s: Shape<V>, c: V| match s {
                Shape::Sphere(s) => Shape::sphere(c, s.radius),
                Shape::Box(b) => Shape::cuboid(c, b.half_extents()),
            };
            (recentre(a, ca), recentre(b, cb))
        });
    let touching = prop_oneof![
        touching_spheres::<V>().prop_map(|(a, b, _)| (Shape::Sphere(a), Shape::Sphere(b))),
        touching_sphere_box::<V>().prop_map(|(s, b, _)| (Shape::Sphere(s), Shape::Box(b))),
        touching_sphere_box::<V>().prop_map(|(s, b, _)| (Shape::Box(b), Shape::Sphere(s))),
        aabb_pair::<V>().prop_map(|(a, b)| (Shape::Box(a), Shape::Box(b))),
    ];
    prop_oneof![2 => (shape::<V>(), shape::<V>()), 2 => near, 1 => touching]
}

fn check_contact<V: Vector>((a, b): (Shape<V>, Shape<V>)) -> TestResult {
    let c = a.contact(&b);
    prop_assert_eq!(c.is_some(), a.intersects(&b), "contact {:?}", c);
    let rev = b.contact(&a);
    prop_assert_eq!(rev.is_some(), c.is_some(), "contact is not symmetric");
    let Some(c) = c else { return Ok(()) };
    prop_assert!(
        is_unit(c.normal),
        "normal {:?} not unit (length {})",
        c.normal,
        len64(c.normal)
    );
    prop_assert!(c.depth >= 0.0 && c.depth.is_finite(), "depth {}", c.depth);
    prop_assert!(c.point.is_finite());

    // Moving the second shape by normal * (depth + eps) separates them;
    // by normal * (depth - eps) it does not (the depth is not overstated).
    let eps = 1e-3 * (1.0 + shape_scale(&a).max(shape_scale(&b))) as f32;
    let apart = b.translated(c.normal * (c.depth + eps));
    prop_assert!(
        !a.intersects(&apart),
        "moving {b:?} by {:?} * ({} + {eps}) leaves it touching {a:?}",
        c.normal,
        c.depth
    );
    if c.depth > 2.0 * eps {
        let still = b.translated(c.normal * (c.depth - eps));
        prop_assert!(a.intersects(&still), "depth {} overstated", c.depth);
    }

    // Sphere/box in both orders: the same contact with the normal negated.
    if matches!(
        (a, b),
        (Shape::Sphere(_), Shape::Box(_)) | (Shape::Box(_), Shape::Sphere(_))
    ) {
        let r = rev.unwrap();
        prop_assert_eq!(r.normal, -c.normal);
        prop_assert_eq!(r.depth, c.depth);
        prop_assert_eq!(r.point, c.point);
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Cones
// ---------------------------------------------------------------------------

fn cone_case<V: Vector>() -> impl Strategy<Value = (Cone<V>, V)> {
    (
        point::<V>(),
        direction::<V>(),
        prop_oneof![3 => 0.0f32..=PI, 1 => proptest::sample::select(vec![0.0f32, FRAC_PI_2, PI])],
        prop_oneof![3 => 0.0f32..120.0, 1 => Just(0.0f32)],
        point::<V>(),
        0u8..5,
        0.0f32..130.0,
        proptest::sample::select(vec![0.99f32, 0.999, 1.001, 1.01]),
    )
        .prop_map(|(apex, dir, half, range, p, kind, t, f)| {
            let cone = Cone::new(apex, dir, half, range).unwrap();
            let p = match kind {
                0 | 1 => p,
                2 => apex + cone.dir * t,           // on the axis
                3 => apex + cone.dir * (range * f), // just inside or beyond range
                _ => apex,
            };
            (cone, p)
        })
}

fn check_cone<V: Vector>((cone, p): (Cone<V>, V)) -> TestResult {
    let got = cone.contains_point(p);
    let dist = dist64(p, cone.apex);
    let range = cone.range as f64;
    if p == cone.apex {
        prop_assert!(got, "the apex is in the cone");
        return Ok(());
    }
    let scale = 1.0 + max_abs(p).max(max_abs(cone.apex));
    let dtol = 1e-5 * (scale + range);
    if dist > range + dtol {
        prop_assert!(!got, "point {dist} from the apex, range {range}");
        return Ok(());
    }
    if dist < range - dtol {
        let d = p - cone.apex;
        let cos = (dot64(d, cone.dir) / (len64(d) * len64(cone.dir))).clamp(-1.0, 1.0);
        let angle = cos.acos();
        let half = cone.half_angle as f64;
        // The f32 cosine resolves angles near 0 and pi only to ~1e-3, and
        // rounding `p - apex` costs up to ~1e-7 * scale / dist radians.
        let atol = 2e-3 + 1e-6 * scale / dist;
        if angle < half - atol {
            prop_assert!(got, "angle {angle} < half angle {half}");
        } else if angle > half + atol {
            prop_assert!(!got, "angle {angle} > half angle {half}");
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Regions
// ---------------------------------------------------------------------------

/// Recipes for shapes inside some bounds: (is box, u, v, radius fraction).
type ShapeSpec = (bool, Vec<f32>, Vec<f32>, f32);

fn shape_specs<V: Vector>() -> impl Strategy<Value = Vec<ShapeSpec>> + Clone {
    proptest::collection::vec(
        (
            any::<bool>(),
            proptest::collection::vec(unit(), V::DIM),
            proptest::collection::vec(unit(), V::DIM),
            unit(),
        ),
        8,
    )
}

/// Shapes whose bounding boxes lie inside `b` (touching its faces often).
fn shapes_in<V: Vector>(b: &Aabb<V>, specs: &[ShapeSpec]) -> Vec<Shape<V>> {
    specs
        .iter()
        .map(|(is_box, u, v, frac)| {
            if *is_box {
                let p = from_fn::<V>(|i| lerp(b.min.get(i), b.max.get(i), u[i]));
                let q = from_fn::<V>(|i| lerp(b.min.get(i), b.max.get(i), v[i]));
                Shape::Box(Aabb::new(p.min(q), p.max(q)).unwrap())
            } else {
                let r = b.half_extents().min_element() * frac;
                let c = from_fn::<V>(|i| {
                    let (lo, hi) = (b.min.get(i) + r, b.max.get(i) - r);
                    if lo <= hi {
                        lerp(lo, hi, u[i])
                    } else {
                        b.center().get(i)
                    }
                });
                Shape::sphere(c, r)
            }
        })
        .filter(|s| b.contains(&s.aabb()))
        .collect()
}

/// `classify(bounds) == Inside` means every shape inside the bounds matches,
/// `Outside` that none does. `margin` is an f64 reference of how clearly a
/// shape matches (positive) or not (negative); cases within `tol` of the
/// boundary are not judged.
fn check_region<V: Vector, R: Region<V> + std::fmt::Debug>(
    region: &R,
    bounds: &Aabb<V>,
    shapes: &[Shape<V>],
    margin: impl Fn(&Shape<V>) -> f64,
    tol: f64,
) -> TestResult {
    let class = region.classify(bounds);
    for s in shapes {
        let m = margin(s);
        let matches = region.matches(s);
        if m > tol {
            prop_assert!(matches, "{s:?} should match {region:?} (margin {m})");
        } else if m < -tol {
            prop_assert!(!matches, "{s:?} should not match {region:?} (margin {m})");
        }
        match class {
            Overlap::Inside => prop_assert!(
                matches || m.abs() <= tol,
                "{region:?} says Inside for {bounds:?}, but {s:?} does not match (margin {m})"
            ),
            Overlap::Outside => prop_assert!(
                !matches || m.abs() <= tol,
                "{region:?} says Outside for {bounds:?}, but {s:?} matches (margin {m})"
            ),
            Overlap::Partial => {}
        }
    }
    Ok(())
}

fn region_tol<V: Vector>(bounds: &Aabb<V>, extra: f64) -> f64 {
    1e-4 * (1.0 + max_abs(bounds.min).max(max_abs(bounds.max)) + extra)
}

/// An Aabb region: random, or the bounds grown (often Inside), or the
/// bounds shifted away along an axis (often Outside).
fn aabb_region<V: Vector>() -> impl Strategy<Value = (Aabb<V>, Aabb<V>, Vec<ShapeSpec>)> {
    (
        aabb::<V>(),
        aabb::<V>(),
        0u8..3,
        vector::<V>(extent()),
        vector::<V>(extent()),
        shape_specs::<V>(),
    )
        .prop_map(|(bounds, random, kind, g1, g2, specs)| {
            let region = match kind {
                0 => random,
                1 => Aabb::new(bounds.min - g1, bounds.max + g2).unwrap(),
                _ => {
                    let shift = bounds.size() + g1 * 0.1;
                    Aabb::new(bounds.min + shift, bounds.max + shift + g2).unwrap()
                }
            };
            (region, bounds, specs)
        })
}

fn check_aabb_region<V: Vector>(
    (region, bounds, specs): (Aabb<V>, Aabb<V>, Vec<ShapeSpec>),
) -> TestResult {
    let shapes = shapes_in(&bounds, &specs);
    let tol = region_tol(&bounds, max_abs(region.min).max(max_abs(region.max)));
    check_region(
        &region,
        &bounds,
        &shapes,
        |s| match s {
            Shape::Sphere(s) => s.radius as f64 - box_dist64(&region, &p64(s.center)),
            Shape::Box(a) => (0..V::DIM)
                .map(|i| {
                    (region.max.get(i) as f64 - a.min.get(i) as f64)
                        .min(a.max.get(i) as f64 - region.min.get(i) as f64)
                })
                .fold(f64::INFINITY, f64::min),
        },
        tol,
    )
}

fn sphere_region<V: Vector>() -> impl Strategy<Value = (Sphere<V>, Aabb<V>, Vec<ShapeSpec>)> {
    (
        aabb::<V>(),
        vector::<V>(-1.5f32..1.5),
        prop_oneof![0.0f32..40.0, 20.0f32..150.0],
        shape_specs::<V>(),
    )
        .prop_map(|(bounds, off, r, specs)| {
            let c = bounds.center() + off * bounds.half_extents().max_element().max(1.0) * 2.0;
            (Sphere::new(c, r).unwrap(), bounds, specs)
        })
}

fn check_sphere_region<V: Vector>(
    (region, bounds, specs): (Sphere<V>, Aabb<V>, Vec<ShapeSpec>),
) -> TestResult {
    let shapes = shapes_in(&bounds, &specs);
    let tol = region_tol(&bounds, max_abs(region.center) + region.radius as f64);
    check_region(
        &region,
        &bounds,
        &shapes,
        |s| match s {
            Shape::Sphere(s) => {
                region.radius as f64 + s.radius as f64 - dist64(region.center, s.center)
            }
            Shape::Box(a) => region.radius as f64 - box_dist64(a, &p64(region.center)),
        },
        tol,
    )
}

fn frustum_region<V: Vector>() -> impl Strategy<Value = (Frustum<V>, Aabb<V>, Vec<ShapeSpec>)> {
    (
        frustum_planes::<V>(),
        aabb::<V>(),
        0.0f32..1.2,
        shape_specs::<V>(),
    )
        .prop_map(|((f, c), bounds, pull, specs)| {
            // Bounds pulled towards the inner point by a random amount.
            let shift = (c - bounds.center()) * pull;
            let bounds = Aabb::new(bounds.min + shift, bounds.max + shift).unwrap();
            (f, bounds, specs)
        })
}

fn frustum_margin<V: Vector>(f: &Frustum<V>, s: &Shape<V>) -> f64 {
    f.planes
        .iter()
        .map(|p| match s {
            Shape::Sphere(s) => plane_sd64(p, &p64(s.center)) + s.radius as f64,
            Shape::Box(b) => corners(b)
                .iter()
                .map(|&c| plane_sd64(p, &p64(c)))
                .fold(f64::NEG_INFINITY, f64::max),
        })
        .fold(f64::INFINITY, f64::min)
}

fn check_frustum_region<V: Vector>(
    (f, bounds, specs): (Frustum<V>, Aabb<V>, Vec<ShapeSpec>),
) -> TestResult {
    let shapes = shapes_in(&bounds, &specs);
    let tol = region_tol(&bounds, 0.0);
    check_region(&f, &bounds, &shapes, |s| frustum_margin(&f, s), tol)
}

fn cone_region<V: Vector>() -> impl Strategy<Value = (Cone<V>, Aabb<V>, Vec<ShapeSpec>)> {
    (
        aabb::<V>(),
        vector::<V>(-2.0f32..2.0),
        direction::<V>(),
        0.0f32..=PI,
        0.0f32..100.0,
        shape_specs::<V>(),
    )
        .prop_map(|(bounds, off, dir, half, range, specs)| {
            let apex = bounds.center() + off * bounds.half_extents().max_element().max(1.0) * 2.0;
            (Cone::new(apex, dir, half, range).unwrap(), bounds, specs)
        })
}

fn check_cone_region<V: Vector>(
    (cone, bounds, specs): (Cone<V>, Aabb<V>, Vec<ShapeSpec>),
) -> TestResult {
    let shapes = shapes_in(&bounds, &specs);
    let tol = region_tol(&bounds, max_abs(cone.apex) + cone.range as f64);
    let margin = |s: &Shape<V>| {
        let c = s.center();
        let d = c - cone.apex;
        let dist = len64(d);
        let range_margin = cone.range as f64 - dist;
        if dist == 0.0 {
            return range_margin;
        }
        let angle = (dot64(d, cone.dir) / (dist * len64(cone.dir)))
            .clamp(-1.0, 1.0)
            .acos();
        // An angle margin turned into a distance, with the f32 cosine's
        // resolution near 0 and pi.
        let angle_margin = (cone.half_angle as f64 - angle) * dist;
        let angle_margin = if angle_margin.abs() < 3e-3 * (1.0 + dist) {
            0.0
        } else {
            angle_margin
        };
        range_margin.min(angle_margin)
    };
    check_region(&cone, &bounds, &shapes, margin, tol)
}

// ---------------------------------------------------------------------------
// Constructors
// ---------------------------------------------------------------------------

fn bad_float() -> impl Strategy<Value = f32> + Clone {
    proptest::sample::select(vec![f32::NAN, f32::INFINITY, f32::NEG_INFINITY])
}

type CtorCase<V> = (V, V, f32, usize, f32, f32, i32);

fn ctor_case<V: Vector>() -> impl Strategy<Value = CtorCase<V>> {
    (
        point::<V>(),
        vector::<V>(extent()),
        bad_float(),
        0..V::DIM,
        0.001f32..50.0,
        0.0f32..=PI,
        prop_oneof![3 => Just(0i32), 1 => -30i32..=30],
    )
}

fn check_constructors<V: Vector>((p, size, bad, axis, pos, angle, e): CtorCase<V>) -> TestResult {
    let q = p + size;
    let corrupt = |v: V| v.with(axis, bad);

    // Aabb::new
    prop_assert_eq!(Aabb::new(p, q), Ok(Aabb { min: p, max: q }));
    prop_assert_eq!(Aabb::new(corrupt(p), q), Err(Error::NonFinite));
    prop_assert_eq!(Aabb::new(p, corrupt(q)), Err(Error::NonFinite));
    let inverted_max = q.with(axis, p.get(axis) - pos);
    prop_assert_eq!(Aabb::new(p, inverted_max), Err(Error::InvertedBox));
    prop_assert_eq!(
        Shape::Box(Aabb {
            min: p,
            max: inverted_max
        })
        .check(),
        Err(Error::InvertedBox)
    );
    // Aabb::from_center_half_extents
    let half = size * 0.5;
    let b = Aabb::from_center_half_extents(p, half);
    prop_assert_eq!(
        b,
        Ok(Aabb {
            min: p - half,
            max: p + half
        })
    );
    prop_assert_eq!(
        Aabb::from_center_half_extents(corrupt(p), half),
        Err(Error::NonFinite)
    );
    prop_assert_eq!(
        Aabb::from_center_half_extents(p, corrupt(half)),
        Err(Error::NonFinite)
    );
    prop_assert_eq!(
        Aabb::from_center_half_extents(p, half.with(axis, -pos)),
        Err(Error::NegativeSize)
    );

    // Sphere::new
    prop_assert_eq!(
        Sphere::new(p, pos),
        Ok(Sphere {
            center: p,
            radius: pos
        })
    );
    prop_assert_eq!(Sphere::new(p, 0.0).map(|s| s.radius), Ok(0.0));
    prop_assert_eq!(Sphere::new(corrupt(p), pos), Err(Error::NonFinite));
    prop_assert_eq!(Sphere::new(p, bad), Err(Error::NonFinite));
    prop_assert_eq!(Sphere::new(p, -pos), Err(Error::NegativeSize));
    prop_assert_eq!(Shape::sphere(p, -pos).check(), Err(Error::NegativeSize));
    prop_assert_eq!(Shape::sphere(p, bad).check(), Err(Error::NonFinite));
    prop_assert_eq!(Shape::sphere(p, pos).check(), Ok(()));

    // Ray::new: any finite non-zero direction, of any length, normalised.
    let dir = size.with(axis, pos) * 10f32.powi(e);
    let ray = Ray::new(p, dir);
    prop_assert!(ray.is_ok(), "{:?}", ray);
    let ray = ray.unwrap();
    prop_assert_eq!(ray.origin, p);
    prop_assert!(is_unit(ray.dir));
    let expected: Vec<f64> = p64(dir).iter().map(|c| c / len64(dir)).collect();
    prop_assert!(
        p64(ray.dir)
            .iter()
            .zip(&expected)
            .all(|(a, b)| (a - b).abs() <= 1e-6),
        "{:?} vs {expected:?}",
        ray.dir
    );
    prop_assert_eq!(Ray::new(p, V::ZERO), Err(Error::ZeroDirection));
    prop_assert_eq!(Ray::new(corrupt(p), dir), Err(Error::NonFinite));
    prop_assert_eq!(Ray::new(p, corrupt(dir)), Err(Error::NonFinite));

    // Plane::new
    prop_assert!(Plane::new(dir, pos).is_ok());
    prop_assert_eq!(Plane::new(V::ZERO, pos), Err(Error::DegeneratePlane));
    prop_assert_eq!(Plane::new(corrupt(dir), pos), Err(Error::NonFinite));
    prop_assert_eq!(Plane::new(dir, bad), Err(Error::NonFinite));

    // Cone::new: half-angle in [0, pi], range >= 0.
    let cone = Cone::new(p, dir, angle, pos);
    prop_assert!(cone.is_ok(), "{:?}", cone);
    let cone = cone.unwrap();
    prop_assert_eq!(cone.half_angle, angle);
    prop_assert_eq!(cone.dir, ray.dir);
    prop_assert!(Cone::new(p, dir, 0.0, 0.0).is_ok());
    prop_assert!(Cone::new(p, dir, PI, pos).is_ok());
    prop_assert_eq!(Cone::new(p, dir, -pos, pos), Err(Error::AngleOutOfRange));
    prop_assert_eq!(
        Cone::new(p, dir, PI + pos, pos),
        Err(Error::AngleOutOfRange)
    );
    prop_assert_eq!(
        Cone::new(p, dir, f32::from_bits(PI.to_bits() + 1), pos),
        Err(Error::AngleOutOfRange)
    );
    prop_assert_eq!(
        Cone::new(p, dir, -f32::MIN_POSITIVE, pos),
        Err(Error::AngleOutOfRange)
    );
    // Degrees: the same cone as radians, 0 and 180 included.
    let deg = angle.to_degrees();
    if let Ok(c) = Cone::from_degrees(p, dir, deg, pos) {
        prop_assert!((c.half_angle - angle).abs() <= 1e-6 * angle.max(1.0));
    } else {
        prop_assert!(deg > 180.0, "{deg} degrees refused");
    }
    prop_assert!(Cone::from_degrees(p, dir, 180.0, pos).is_ok());
    prop_assert!(Cone::from_degrees(p, dir, 0.0, pos).is_ok());
    prop_assert_eq!(
        Cone::from_degrees(p, dir, 180.0 + pos.max(1e-3), pos),
        Err(Error::AngleOutOfRange)
    );
    prop_assert_eq!(
        Cone::from_degrees(p, dir, -pos.max(1e-3), pos),
        Err(Error::AngleOutOfRange)
    );
    prop_assert_eq!(Cone::new(p, dir, angle, -pos), Err(Error::NegativeSize));
    prop_assert_eq!(Cone::new(p, V::ZERO, angle, pos), Err(Error::ZeroDirection));
    prop_assert_eq!(
        Cone::new(corrupt(p), dir, angle, pos),
        Err(Error::NonFinite)
    );
    prop_assert_eq!(
        Cone::new(p, corrupt(dir), angle, pos),
        Err(Error::NonFinite)
    );
    prop_assert_eq!(Cone::new(p, dir, bad, pos), Err(Error::NonFinite));
    prop_assert_eq!(Cone::new(p, dir, angle, bad), Err(Error::NonFinite));
    Ok(())
}

// ---------------------------------------------------------------------------
// Every property, in 2D and 3D
// ---------------------------------------------------------------------------

/// One property test for both dimensions: each case is a 2D and a 3D
/// case, both checked (one runner a property instead of two, which
/// halves what the test binary compiles of proptest's runner). A failure
/// of either fails the case, its message saying which; a case one
/// dimension rejects counts for the other.
macro_rules! for_both_dims {
    ($($name:ident: $strategy:ident => $check:ident;)*) => {
        mod both_dims {
            use super::*;
            proptest! {
                #![proptest_config(config())]
                $(#[test] fn $name(
                    case2 in $strategy::<Vec2>(),
                    case3 in $strategy::<Vec3>(),
                ) {
                    both($check(case2), $check(case3))?;
                })*
            }
        }
    };
}

/// The outcome of a case checked in 2D (`r2`) and 3D (`r3`): the first
/// failure, named by its dimension; a rejection only where both rejected.
fn both(r2: TestResult, r3: TestResult) -> TestResult {
    for (dim, r) in [("2D", &r2), ("3D", &r3)] {
        if let Err(TestCaseError::Fail(why)) = r {
            return Err(TestCaseError::fail(format!("{dim}: {why}")));
        }
    }
    match (r2, r3) {
        (Err(e), Err(_)) => Err(e),
        _ => Ok(()),
    }
}

fn sphere_pair<V: Vector>() -> impl Strategy<Value = (Sphere<V>, Sphere<V>)> {
    (sphere::<V>(), sphere::<V>())
}

/// Spheres of every scale: centres from game-sized to 1e18, radii from 0
/// and 1e-30 to 1e6, so that `c -+ r` rounds every way.
fn any_scale_sphere<V: Vector>() -> impl Strategy<Value = Sphere<V>> {
    let scaled = || (-1.0f32..1.0, -30i32..=18).prop_map(|(m, e)| m * 10f32.powi(e));
    (
        vector::<V>(prop_oneof![coord(), scaled()]),
        prop_oneof![
            Just(0.0f32),
            extent(),
            (0.0f32..1.0, -30i32..=6).prop_map(|(m, e)| m * 10f32.powi(e)),
        ],
    )
        .prop_map(|(center, radius)| Sphere { center, radius })
}

/// The sphere's box by the rule, decided exactly: `c -+ r` in `f32`, each
/// side moved out one float step where it cuts the sphere (`c - min < r` or
/// `max - c < r`). The differences are exact in `f64` unless the centre is
/// below `r / 2^28` in size (then `c -+ r` rounds to `-+r`, and the side
/// cuts the sphere exactly when the centre lies on the other side of 0).
/// The first version of `aabb` trusted `f64` there too, and cut spheres by
/// up to one part in 2^29 of their radius.
fn check_sphere_aabb_vs_f64<V: Vector>(s: Sphere<V>) -> TestResult {
    let r = V::splat(s.radius);
    let (mut min, mut max) = (s.center - r, s.center + r);
    let rad = f64::from(s.radius);
    for i in 0..V::DIM {
        let c = f64::from(s.center.get(i));
        let tiny = c != 0.0 && c.abs() * 2f64.powi(28) < rad;
        let (cut_min, cut_max) = if tiny {
            (c < 0.0, c > 0.0)
        } else {
            (
                c - f64::from(min.get(i)) < rad,
                f64::from(max.get(i)) - c < rad,
            )
        };
        if cut_min {
            min = min.with(i, min.get(i).next_down());
        }
        if cut_max {
            max = max.with(i, max.get(i).next_up());
        }
    }
    let b = s.aabb();
    prop_assert_eq!(b.min, min, "{:?}", s);
    prop_assert_eq!(b.max, max, "{:?}", s);
    prop_assert_eq!(s.checked_aabb(), Ok(b));
    Ok(())
}

fn sphere_box_pair<V: Vector>() -> impl Strategy<Value = (Sphere<V>, Aabb<V>)> {
    (sphere::<V>(), aabb::<V>())
}

/// A plane `n . p + d = 0` with the normal's length anywhere from 1e-30 to
/// 1e31 (the plane itself stays at a game-sized distance), and a point.
fn plane_case<V: Vector>() -> impl Strategy<Value = (V, f32, V)> {
    (
        vector::<V>(-10.0f32..10.0),
        -100.0f32..100.0,
        point::<V>(),
        prop_oneof![3 => Just(0i32), 1 => -30i32..=30],
    )
        .prop_map(|(n, d, p, e)| {
            let s = 10f32.powi(e);
            (n * s, d * s, p)
        })
}

for_both_dims! {
    aabb_intersects_contains_union: aabb_pair => check_aabb_pair;
    sphere_sphere_vs_distance: sphere_pair => check_sphere_pair;
    sphere_aabb_vs_exact_f64: any_scale_sphere => check_sphere_aabb_vs_f64;
    sphere_sphere_touching_exactly: touching_spheres => check_touching_spheres;
    sphere_box_vs_clamped_point: sphere_box_pair => check_sphere_box;
    sphere_box_touching_exactly: touching_sphere_box => check_touching_sphere_box;
    cast_aabb_vs_slabs_and_sampling: ray_box => check_cast_aabb;
    clip_aabb_agrees_with_cast_aabb: ray_box => check_clip_aabb;
    axis_parallel_rays_and_face_planes: axis_ray_box => check_axis_ray_box;
    cast_sphere_vs_roots_and_sampling: ray_sphere => check_cast_sphere;
    plane_new_normalises: plane_case => check_plane;
    frustum_from_planes_vs_corners: frustum_cases => check_frustum_cases;
    contact_agrees_and_separates: shape_pair => check_contact;
    cone_contains_point_vs_angle: cone_case => check_cone;
    region_aabb_classify: aabb_region => check_aabb_region;
    region_sphere_classify: sphere_region => check_sphere_region;
    region_frustum_classify: frustum_region => check_frustum_region;
    region_cone_classify: cone_region => check_cone_region;
    constructors_accept_and_reject: ctor_case => check_constructors;
}

proptest! {
    #![proptest_config(config())]

    /// `from_view_projection` against clip-space coordinates, and the
    /// corner rule for camera frusta.
    #[test]
    fn frustum_from_camera_vs_clip_space(case in camera_case()) {
        check_camera(case)?;
    }

    /// The Region rule for camera frusta.
    #[test]
    fn region_camera_frustum_classify(
        m in camera(),
        bounds in aabb::<Vec3>(),
        specs in shape_specs::<Vec3>(),
    ) {
        let f = Frustum::from_view_projection(m);
        prop_assert!(f.is_ok(), "{f:?} for {m:?}");
        let f = f.unwrap();
        let shapes = shapes_in(&bounds, &specs);
        check_region(&f, &bounds, &shapes, |s| frustum_margin(&f, s), region_tol(&bounds, 0.0))?;
    }
}

// ---------------------------------------------------------------------------
// Deterministic cases
// ---------------------------------------------------------------------------

#[test]
fn frustum_from_degenerate_matrices_is_refused() {
    assert_eq!(
        Frustum::from_view_projection(Mat4::ZERO),
        Err(Error::DegeneratePlane)
    );
    assert_eq!(
        Frustum::from_view_projection_gl(Mat4::ZERO),
        Err(Error::DegeneratePlane)
    );
    let mut m = directx::perspective(1.0, 1.0, 0.1, 100.0);
    m.x_axis = Vec4::new(f32::NAN, 0.0, 0.0, 0.0);
    assert_eq!(Frustum::from_view_projection(m), Err(Error::NonFinite));
}

#[test]
fn ray_in_a_face_plane_touches_the_box() {
    let b = Aabb::new(Vec3::ZERO, Vec3::ONE).unwrap();
    // Along the edge y = 0, z = 0 and across the face y = 1.
    for (origin, dir) in [
        (Vec3::new(-2.0, 0.0, 0.0), Vec3::X),
        (Vec3::new(-2.0, 1.0, 0.5), Vec3::X),
        (Vec3::new(-1.0, 1.0, -1.0), Vec3::new(1.0, 0.0, 1.0)),
    ] {
        let ray = Ray::new(origin, dir).unwrap();
        let hit = ray
            .cast_aabb(&b, 10.0)
            .expect("a ray in a face plane touches the box");
        assert!(b.distance_squared_to_point(hit.point) < 1e-12, "{hit:?}");
    }
    // Parallel to a face, just outside it: no hit.
    let ray = Ray::new(Vec3::new(-2.0, 1.0 + 1e-6, 0.5), Vec3::X).unwrap();
    assert_eq!(ray.cast_aabb(&b, 10.0), None);
    let ray = Ray::new(Vec2::new(-2.0, 1.0), Vec2::X).unwrap();
    let b2 = Aabb::new(Vec2::ZERO, Vec2::ONE).unwrap();
    assert_eq!(ray.cast_aabb(&b2, 10.0).map(|h| h.distance), Some(2.0));
}

// ---------------------------------------------------------------------------
// Regressions: bugs the properties found in src/geometry
// ---------------------------------------------------------------------------

/// `Ray::clip_aabb` multiplied by `1 / d`, infinite for a subnormal
/// direction component: with the origin on that face plane, `0 * inf = NaN`
/// and a ray starting on the box missed it.
#[test]
fn regression_ray_on_face_with_subnormal_direction_hits() {
    let b = Aabb::new(Vec2::ZERO, Vec2::new(0.0, 1.0)).unwrap();
    let ray = Ray::new(Vec2::ZERO, Vec2::new(-1.0, -1.58763e-40)).unwrap();
    assert!(ray.dir.y != 0.0 && (1.0 / ray.dir.y).is_infinite());
    assert_eq!(ray.clip_aabb(&b, 0.0), Some((0.0, 0.0)));
    let hit = ray.cast_aabb(&b, 0.0).expect("the origin lies on the box");
    assert_eq!(
        (hit.distance, hit.point, hit.normal),
        (0.0, Vec2::ZERO, -ray.dir)
    );

    let b = Aabb::new(Vec3::ZERO, Vec3::new(0.0, 1.0, 0.0)).unwrap();
    let ray = Ray::new(Vec3::ZERO, Vec3::new(0.0, -1.06874e-40, -1.0)).unwrap();
    assert_eq!(ray.cast_aabb(&b, 5.0).map(|h| h.distance), Some(0.0));
}

/// Box/box contact took the overlap `min(a.max, b.max) - max(a.min, b.min)`
/// as the depth: when one box spans the other on the chosen axis, moving
/// the second box by `normal * depth` did not separate them.
#[test]
fn regression_box_box_depth_when_one_box_spans_the_other() {
    let point = Shape::Box(Aabb::from_point(Vec2::ZERO));
    let wide = Shape::cuboid(Vec2::ZERO, Vec2::splat(0.5));
    let c = point.contact(&wide).unwrap();
    assert_eq!(c.depth, 0.5);
    assert!(!point.intersects(&wide.translated(c.normal * (c.depth + 1e-3))));

    let a = Shape::Box(Aabb::new(Vec3::ZERO, Vec3::splat(10.0)).unwrap());
    let b = Shape::Box(Aabb::new(Vec3::splat(4.0), Vec3::splat(6.0)).unwrap());
    for (x, y) in [(a, b), (b, a)] {
        let c = x.contact(&y).unwrap();
        assert_eq!(c.depth, 6.0, "{c:?}");
        assert!(!x.intersects(&y.translated(c.normal * (c.depth + 1e-3))));
        assert!(x.intersects(&y.translated(c.normal * (c.depth - 1e-3))));
    }
}

/// Sphere/sphere and sphere/box contacts divided by a length computed from
/// a subnormal squared length: centres ~1e-22 apart gave a normal 1% off
/// unit length.
#[test]
fn regression_contact_normal_unit_for_nearly_coincident_centres() {
    for d in [1e-20f32, 1e-21, 1e-22, 3e-23] {
        let a = Shape::sphere(Vec2::ZERO, 1.0);
        let b = Shape::sphere(Vec2::new(d, 0.0), 1.0);
        let c = a.contact(&b).unwrap();
        assert_eq!(c.normal, Vec2::X, "d = {d}");
        let b = Shape::sphere(Vec3::new(0.0, -1e-20, d), 1.0);
        let c = Shape::sphere(Vec3::new(0.0, -1e-20, 0.0), 0.0)
            .contact(&b)
            .unwrap();
        assert_eq!(c.normal, Vec3::Z, "d = {d}");
        let bx = Shape::Box(Aabb::new(Vec2::new(d, -1.0), Vec2::ONE).unwrap());
        let c = a.contact(&bx).unwrap();
        assert_eq!(c.normal, Vec2::X, "d = {d}");
        assert_eq!(bx.contact(&a).unwrap().normal, -Vec2::X, "d = {d}");
    }
}

/// Sphere/box contact with the centre outside the box by less than its
/// squared distance can represent took the inside branch and returned a
/// negative depth.
#[test]
fn regression_sphere_box_depth_never_negative() {
    let b = Shape::Box(Aabb::new(Vec3::new(-0.5, 0.0, -0.5), Vec3::new(0.5, 0.0, 0.5)).unwrap());
    // Radius 1e-30 at 1e-30 above the box: it touches (its squared
    // distance underflows to 0, which took the inside branch).
    let s = Shape::sphere(Vec3::new(0.0, 1e-30, 0.0), 1e-30);
    for c in [b.contact(&s).unwrap(), s.contact(&b).unwrap()] {
        assert!(c.depth >= 0.0, "{c:?}");
        assert!(c.depth <= 2e-30, "{c:?}");
    }
    // A point 1e-30 above the box does not touch it: the sphere tests
    // agree with the bounding boxes, which do not meet (fuzzing finding 1,
    // `fuzz_replay.rs` beside it). It used to touch with depth 0.
    let p = Shape::sphere(Vec3::new(0.0, 1e-30, 0.0), 0.0);
    assert_eq!(b.contact(&p), None);
    assert_eq!(p.contact(&b), None);
}

/// `Plane::new` divided the offset by `normal.length()`, which overflows for
/// huge normals (the offset became 0, moving the plane to the origin) and is
/// inexact or zero for tiny ones (wrong offset, or `DegeneratePlane`).
#[test]
fn regression_plane_new_with_huge_and_tiny_normals() {
    for s in [1e20f32, 1e30, 1e-20, 1e-25, 1e-35] {
        let p = Plane::new(Vec3::new(0.0, 0.0, -2.0 * s), 3.0 * s).unwrap();
        assert_eq!(p.normal, -Vec3::Z, "scale {s}");
        assert!((p.d - 1.5).abs() <= 1e-6, "scale {s}: d = {}", p.d);
        assert!(p.signed_distance(Vec3::new(0.0, 0.0, 1.5)).abs() <= 1e-6);
        let p = Plane::new(Vec2::new(3.0 * s, 4.0 * s), 10.0 * s).unwrap();
        assert!((p.d - 2.0).abs() <= 1e-6, "scale {s}: d = {}", p.d);
    }
}

/// `Ray::cast_sphere` returned a hit at distance 0 for an origin inside the
/// sphere even with a negative `max_dist` (`cast_aabb` returns `None`).
#[test]
fn regression_cast_sphere_with_negative_max_dist() {
    let s = Sphere::new(Vec3::ZERO, 1.0).unwrap();
    let ray = Ray::new(Vec3::ZERO, Vec3::Y).unwrap();
    assert_eq!(ray.cast_sphere(&s, -0.001), None);
    assert_eq!(ray.cast_sphere(&s, 0.0).map(|h| h.distance), Some(0.0));
    let b = Aabb::from_center_half_extents(Vec3::ZERO, Vec3::ONE).unwrap();
    assert_eq!(ray.cast_aabb(&b, -0.001), None);
}

/// `Frustum::from_view_projection` refused glam's infinite perspectives
/// (`directx::perspective_infinite`, `perspective_infinite_reverse`, the
/// usual reversed-depth camera) with `DegeneratePlane`: their far (or,
/// reversed, near) clip row is `(0, 0, 0, w)`, a plane holding everywhere.
#[test]
fn regression_frustum_from_infinite_perspective() {
    let eye = Vec3::new(1.0, 2.0, 3.0);
    let view = view::look_at_mat4(eye, Vec3::new(-4.0, 0.5, -7.0), Vec3::Y);
    let fwd = (Vec3::new(-4.0, 0.5, -7.0) - eye).normalize();
    for proj in [
        directx::perspective_infinite(1.0, 1.5, 0.1),
        directx::perspective_infinite_reverse(1.0, 1.5, 0.1),
    ] {
        let f = Frustum::from_view_projection(proj * view).unwrap();
        // Ahead at any distance: inside. Behind the eye: outside.
        for d in [1.0f32, 100.0, 1e6] {
            assert!(f.contains_point(eye + fwd * d), "{d} ahead");
            assert!(!f.contains_point(eye - fwd * d), "{d} behind");
        }
        let ahead = Aabb::from_center_half_extents(eye + fwd * 1e5, Vec3::ONE).unwrap();
        assert!(f.intersects_aabb(&ahead) && f.contains_aabb(&ahead));
        let behind = Aabb::from_center_half_extents(eye - fwd * 10.0, Vec3::ONE).unwrap();
        assert!(!f.intersects_aabb(&behind));
    }
}
