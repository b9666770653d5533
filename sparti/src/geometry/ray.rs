//! Rays and their exact tests against boxes and spheres.

use super::{Aabb, Sphere, Vector};
use crate::Error;

/// A half-line from `origin` along the unit vector `dir`.
///
/// Distances along a ray are in world units, since `dir` is normalised by
/// [`Ray::new`]. A ray that starts inside a shape hits it at distance 0.
///
/// # Example
/// ```
/// use glam::Vec3;
/// use sparti::{Ray, Sphere};
/// let ray = Ray::new(Vec3::ZERO, Vec3::new(2.0, 0.0, 0.0)).unwrap();
/// let s = Sphere::new(Vec3::new(5.0, 0.0, 0.0), 1.0).unwrap();
/// let hit = ray.cast_sphere(&s, 100.0).unwrap();
/// assert_eq!(hit.distance, 4.0);
/// assert_eq!(hit.normal, Vec3::new(-1.0, 0.0, 0.0));
/// assert!(Ray::new(Vec3::ZERO, Vec3::ZERO).is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ray<V: Vector> {
    /// Start point.
    pub origin: V,
    /// Unit direction.
    pub dir: V,
}

/// Where a ray meets a shape.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RayIntersection<V: Vector> {
    /// Distance from the ray origin, `>= 0`.
    pub distance: f32,
    /// The point hit: `origin + dir * distance`.
    pub point: V,
    /// The outward surface normal at the point (unit length). For a ray
    /// starting inside the shape it is `-dir`.
    pub normal: V,
}

impl<V: Vector> Ray<V> {
    /// A ray from an origin and a direction of any non-zero length.
    ///
    /// # Errors
    /// [`Error::NonFinite`] for NaN or infinite input, [`Error::ZeroDirection`]
    /// when `dir` cannot be normalised.
    pub fn new(origin: V, dir: V) -> Result<Self, Error> {
        if !origin.is_finite() || !dir.is_finite() {
            return Err(Error::NonFinite);
        }
        let dir = dir.try_normalize().ok_or(Error::ZeroDirection)?;
        Ok(Self { origin, dir })
    }

    /// The point at distance `t`.
    #[inline]
    pub fn at(&self, t: f32) -> V {
        self.origin + self.dir * t
    }

    /// Entry and exit distances of the ray's line through the box, clipped
    /// to `[0, max_dist]`, or `None` when it misses. The slab test, with
    /// axis-parallel rays handled without dividing by zero.
    #[inline]
    pub fn clip_aabb(&self, b: &Aabb<V>, max_dist: f32) -> Option<(f32, f32)> {
        let mut t0 = 0.0f32;
        let mut t1 = max_dist;
        for i in 0..V::DIM {
            let o = self.origin.get(i);
            let d = self.dir.get(i);
            let (lo, hi) = (b.min.get(i), b.max.get(i));
            if d == 0.0 {
                if o < lo || o > hi {
                    return None;
                }
            } else {
                // Divide rather than multiply by 1 / d: for a tiny (subnormal)
                // d, 1 / d is infinite and an origin on the face plane would
                // give 0 * inf = NaN, dropping the hit.
                let (mut a, mut c) = ((lo - o) / d, (hi - o) / d);
                if a > c {
                    core::mem::swap(&mut a, &mut c);
                }
                t0 = t0.max(a);
                t1 = t1.min(c);
                if t0 > t1 {
                    return None;
                }
            }
        }
        Some((t0, t1))
    }

    /// The first point where the ray meets the box within `max_dist`.
    pub fn cast_aabb(&self, b: &Aabb<V>, max_dist: f32) -> Option<RayIntersection<V>> {
        let (t, _) = self.clip_aabb(b, max_dist)?;
        let point = self.at(t);
        let normal = if b.contains_point(self.origin) {
            -self.dir
        } else {
            // The face hit is the slab whose entry distance is t: the axis
            // where the point lies on the box face the ray comes from.
            let mut best = 0;
            let mut best_t = f32::NEG_INFINITY;
            for i in 0..V::DIM {
                let d = self.dir.get(i);
                if d == 0.0 {
                    continue;
                }
                let face = if d > 0.0 { b.min.get(i) } else { b.max.get(i) };
                let ti = (face - self.origin.get(i)) / d;
                if ti > best_t {
                    best_t = ti;
                    best = i;
                }
            }
            let sign = if self.dir.get(best) > 0.0 { -1.0 } else { 1.0 };
            V::unit(best) * sign
        };
        Some(RayIntersection {
            distance: t,
            point,
            normal,
        })
    }

    /// The first point where the ray meets the sphere within `max_dist`.
    pub fn cast_sphere(&self, s: &Sphere<V>, max_dist: f32) -> Option<RayIntersection<V>> {
        let mut hit = self.cast_sphere_unchecked(s, max_dist)?;
        // A hit must also meet the sphere's bounding box, no nearer than
        // where the ray enters it: squared distances below ~1e-38 underflow
        // to 0, and the structures, which clip rays to bounding boxes and
        // prune by entry distance, would not report it (found by fuzzing).
        let (entry, _) = self.clip_aabb(&s.aabb(), max_dist)?;
        if hit.distance < entry {
            // The sphere lies in its box: it is hit no nearer than the box.
            hit.distance = entry;
            hit.point = self.at(entry);
            hit.normal = (hit.point - s.center).try_normalize().unwrap_or(-self.dir);
        }
        Some(hit)
    }

    fn cast_sphere_unchecked(&self, s: &Sphere<V>, max_dist: f32) -> Option<RayIntersection<V>> {
        let m = self.origin - s.center;
        let c = m.length_squared() - s.radius * s.radius;
        if c <= 0.0 {
            // The origin is inside or on the sphere: a hit at distance 0,
            // unless max_dist is negative (as for boxes, nothing is hit).
            if max_dist < 0.0 {
                return None;
            }
            return Some(RayIntersection {
                distance: 0.0,
                point: self.origin,
                normal: -self.dir,
            });
        }
        let b = m.dot(self.dir);
        if b > 0.0 {
            return None; // outside and pointing away
        }
        // Distance along the ray to the closest approach and the squared
        // distance of that point to the centre, computed in a form that
        // does not lose precision far from the sphere.
        let closest = m - self.dir * b;
        let h2 = s.radius * s.radius - closest.length_squared();
        if h2 < 0.0 {
            return None;
        }
        let t = (-b - h2.sqrt()).max(0.0);
        if t > max_dist {
            return None;
        }
        let point = self.at(t);
        let normal = (point - s.center).try_normalize().unwrap_or(-self.dir);
        Some(RayIntersection {
            distance: t,
            point,
            normal,
        })
    }
}
