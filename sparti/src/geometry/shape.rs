//! The shapes objects can have, and the exact tests between them.

use super::{Aabb, Ray, RayIntersection, Sphere, Vector};
use crate::Error;

/// The bounds of an object: a sphere (circle in 2D) or an axis-aligned box
/// (rectangle in 2D).
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Shape<V: Vector> {
    /// A ball.
    Sphere(Sphere<V>),
    /// An axis-aligned box.
    Box(Aabb<V>),
}

/// How two overlapping shapes touch: the geometric part of a contact record.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactPoint<V: Vector> {
    /// A point in the overlap (the midpoint of the deepest points for two
    /// spheres, the centre of the overlap for two boxes).
    pub point: V,
    /// Unit normal pointing from the first shape towards the second: moving
    /// the second shape by `normal * depth` separates them.
    pub normal: V,
    /// Penetration depth, `>= 0` (0 when the shapes just touch).
    pub depth: f32,
}

impl<V: Vector> From<Sphere<V>> for Shape<V> {
    fn from(s: Sphere<V>) -> Self {
        Shape::Sphere(s)
    }
}

impl<V: Vector> From<Aabb<V>> for Shape<V> {
    fn from(b: Aabb<V>) -> Self {
        Shape::Box(b)
    }
}

impl<V: Vector> Shape<V> {
    /// A sphere shape (not yet checked; [`Shape::check`] or an insertion
    /// checks it).
    pub fn sphere(center: V, radius: f32) -> Self {
        Shape::Sphere(Sphere { center, radius })
    }

    /// A box shape from its centre and half extents (not yet checked).
    pub fn cuboid(center: V, half_extents: V) -> Self {
        Shape::Box(Aabb {
            min: center - half_extents,
            max: center + half_extents,
        })
    }

    /// A circle: [`Shape::sphere`] under its 2D name.
    ///
    /// # Example
    /// ```
    /// use glam::Vec2;
    /// use sparti::{ObjectDesc, Quadtree, Shape, SpatialIndex};
    /// let mut tree = Quadtree::<&str>::new();
    /// tree.insert(ObjectDesc::new(Shape::circle(Vec2::ZERO, 1.0), "coin")).unwrap();
    /// tree.insert(ObjectDesc::new(Shape::rect(Vec2::new(1.5, 0.0), Vec2::new(1.0, 0.5)), "crate")).unwrap();
    /// let mut pairs = Vec::new();
    /// tree.pairs(&mut pairs);
    /// assert_eq!(pairs.len(), 1);
    /// ```
    pub fn circle(center: V, radius: f32) -> Self {
        Self::sphere(center, radius)
    }

    /// A rectangle from its centre and half extents: [`Shape::cuboid`]
    /// under its 2D name.
    pub fn rect(center: V, half_extents: V) -> Self {
        Self::cuboid(center, half_extents)
    }

    /// The same shape moved by `offset`.
    ///
    /// # Example
    /// ```
    /// use glam::Vec2;
    /// use sparti::Shape;
    /// let here = Shape::circle(Vec2::ZERO, 1.0);
    /// assert_eq!(here.translated(Vec2::X).center(), Vec2::X);
    /// ```
    pub fn translated(&self, offset: V) -> Self {
        match *self {
            Shape::Sphere(s) => Shape::Sphere(Sphere {
                center: s.center + offset,
                radius: s.radius,
            }),
            Shape::Box(b) => Shape::Box(Aabb {
                min: b.min + offset,
                max: b.max + offset,
            }),
        }
    }

    /// Checks that the shape is finite and well formed.
    ///
    /// # Errors
    /// [`Error::NonFinite`], [`Error::NegativeSize`] or [`Error::InvertedBox`].
    pub fn check(&self) -> Result<(), Error> {
        match self {
            Shape::Sphere(s) => s.check(),
            Shape::Box(b) => b.check(),
        }
    }

    /// Checks the shape (as [`check`](Self::check)) and returns its
    /// bounding box, computed once.
    ///
    /// # Errors
    /// As [`check`](Self::check).
    #[inline]
    pub fn checked_aabb(&self) -> Result<Aabb<V>, Error> {
        match self {
            Shape::Sphere(s) => s.checked_aabb(),
            Shape::Box(b) => b.check().map(|()| *b),
        }
    }

    /// The bounding box.
    #[inline]
    pub fn aabb(&self) -> Aabb<V> {
        match self {
            Shape::Sphere(s) => s.aabb(),
            Shape::Box(b) => *b,
        }
    }

    /// The centre.
    #[inline]
    pub fn center(&self) -> V {
        match self {
            Shape::Sphere(s) => s.center,
            Shape::Box(b) => b.center(),
        }
    }

    /// True when the shapes overlap or touch.
    #[inline]
    pub fn intersects(&self, o: &Shape<V>) -> bool {
        match (self, o) {
            (Shape::Sphere(a), Shape::Sphere(b)) => a.intersects(b),
            (Shape::Sphere(s), Shape::Box(b)) | (Shape::Box(b), Shape::Sphere(s)) => {
                b.intersects_sphere(s)
            }
            (Shape::Box(a), Shape::Box(b)) => a.intersects(b),
        }
    }

    /// [`intersects`](Self::intersects) for two shapes whose bounding boxes
    /// are known (`ba` is this shape's, `bb` the other's, as
    /// [`aabb`](Self::aabb) gives them): the same answer, without computing
    /// the boxes again. The pair searches call it with the boxes they keep.
    #[inline]
    pub(crate) fn intersects_with_boxes(&self, ba: &Aabb<V>, o: &Shape<V>, bb: &Aabb<V>) -> bool {
        self.intersects_where_boxes_meet(o) & ba.intersects(bb)
    }

    /// [`Shape::intersects_with_boxes`] for two shapes whose boxes are
    /// known to meet (tested by the caller on the same values): the exact
    /// test alone.
    #[inline]
    pub(crate) fn intersects_where_boxes_meet(&self, o: &Shape<V>) -> bool {
        match (self, o) {
            (Shape::Sphere(a), Shape::Sphere(b)) => {
                let r = a.radius + b.radius;
                a.center.distance_squared(b.center) <= r * r
            }
            (Shape::Sphere(s), Shape::Box(b)) | (Shape::Box(b), Shape::Sphere(s)) => {
                b.distance_squared_to_point(s.center) <= s.radius * s.radius
            }
            (Shape::Box(_), Shape::Box(_)) => true,
        }
    }

    /// True when the shape overlaps or touches the box.
    #[inline]
    pub fn intersects_aabb(&self, b: &Aabb<V>) -> bool {
        match self {
            Shape::Sphere(s) => b.intersects_sphere(s),
            Shape::Box(a) => a.intersects(b),
        }
    }

    /// True when the shape overlaps or touches the sphere.
    #[inline]
    pub fn intersects_sphere(&self, s: &Sphere<V>) -> bool {
        match self {
            Shape::Sphere(a) => a.intersects(s),
            Shape::Box(b) => b.intersects_sphere(s),
        }
    }

    /// Squared distance from a point to the shape (0 inside).
    #[inline]
    pub fn distance_squared_to_point(&self, p: V) -> f32 {
        match self {
            Shape::Sphere(s) => {
                let d = (s.center.distance(p) - s.radius).max(0.0);
                d * d
            }
            Shape::Box(b) => b.distance_squared_to_point(p),
        }
    }

    /// Distance from a point to the shape (0 inside).
    #[inline]
    pub fn distance_to_point(&self, p: V) -> f32 {
        match self {
            Shape::Sphere(s) => (s.center.distance(p) - s.radius).max(0.0),
            Shape::Box(b) => b.distance_squared_to_point(p).sqrt(),
        }
    }

    /// The first point where the ray meets the shape within `max_dist`.
    #[inline]
    pub fn cast_ray(&self, ray: &Ray<V>, max_dist: f32) -> Option<RayIntersection<V>> {
        match self {
            Shape::Sphere(s) => ray.cast_sphere(s, max_dist),
            Shape::Box(b) => ray.cast_aabb(b, max_dist),
        }
    }

    /// The contact between two shapes, or `None` when they do not touch.
    /// Agrees with [`Shape::intersects`]: a contact exists exactly when the
    /// shapes overlap or touch.
    pub fn contact(&self, o: &Shape<V>) -> Option<ContactPoint<V>> {
        match (self, o) {
            (Shape::Sphere(a), Shape::Sphere(b)) => sphere_sphere(a, b),
            (Shape::Sphere(s), Shape::Box(b)) => sphere_box(s, b),
            (Shape::Box(b), Shape::Sphere(s)) => sphere_box(s, b).map(|c| ContactPoint {
                normal: -c.normal,
                ..c
            }),
            (Shape::Box(a), Shape::Box(b)) => box_box(a, b),
        }
    }
}

fn sphere_sphere<V: Vector>(a: &Sphere<V>, b: &Sphere<V>) -> Option<ContactPoint<V>> {
    if !a.intersects(b) {
        return None;
    }
    let d = b.center - a.center;
    let dist = d.length();
    // Not `d / dist`: for centres ~1e-20 apart the squared length is
    // subnormal and `dist` inexact, which would give a non-unit normal.
    let normal = d.try_normalize().unwrap_or(V::unit(0));
    let depth = (a.radius + b.radius - dist).max(0.0);
    Some(ContactPoint {
        point: a.center + normal * (a.radius - depth * 0.5),
        normal,
        depth,
    })
}

fn sphere_box<V: Vector>(s: &Sphere<V>, b: &Aabb<V>) -> Option<ContactPoint<V>> {
    if !b.intersects_sphere(s) {
        return None;
    }
    let q = b.closest_point(s.center);
    let dv = q - s.center;
    let d2 = dv.length_squared();
    if d2 > 0.0 {
        let dist = d2.sqrt();
        return Some(ContactPoint {
            point: q,
            // Not `dv / dist`, which is not unit length when `d2` is subnormal.
            normal: dv.try_normalize().unwrap_or(dv / dist),
            depth: (s.radius - dist).max(0.0),
        });
    }
    // The centre is inside the box: leave through the nearest face. The box
    // lies on the other side of that face, so the normal points away from it.
    let mut best = (f32::INFINITY, 0usize, 1.0f32);
    for i in 0..V::DIM {
        let to_min = s.center.get(i) - b.min.get(i);
        let to_max = b.max.get(i) - s.center.get(i);
        if to_min < best.0 {
            best = (to_min, i, 1.0);
        }
        if to_max < best.0 {
            best = (to_max, i, -1.0);
        }
    }
    // The centre may also lie outside by less than the squared distance can
    // represent (d2 underflowed to 0): then the distance to the face is
    // negative and so could the depth be.
    Some(ContactPoint {
        point: s.center,
        normal: V::unit(best.1) * best.2,
        depth: (s.radius + best.0).max(0.0),
    })
}

fn box_box<V: Vector>(a: &Aabb<V>, b: &Aabb<V>) -> Option<ContactPoint<V>> {
    if !a.intersects(b) {
        return None;
    }
    let lo = a.min.max(b.min);
    let hi = a.max.min(b.max);
    // Per axis, how far `b` must move to clear `a`: forwards `a.max - b.min`,
    // backwards `b.max - a.min`. This is the overlap `hi - lo` unless one
    // box spans the other on that axis, where the overlap understates it.
    let forward = a.max - b.min;
    let backward = b.max - a.min;
    let push = forward.min(backward);
    let mut axis = 0;
    for i in 1..V::DIM {
        if push.get(i) < push.get(axis) {
            axis = i;
        }
    }
    let (sign, depth) = if forward.get(axis) <= backward.get(axis) {
        (1.0, forward.get(axis))
    } else {
        (-1.0, backward.get(axis))
    };
    Some(ContactPoint {
        point: (lo + hi) * 0.5,
        normal: V::unit(axis) * sign,
        depth: depth.max(0.0),
    })
}
