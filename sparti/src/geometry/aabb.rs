//! Axis-aligned bounding boxes.

use super::{Sphere, Vector};
use crate::Error;

/// An axis-aligned box given by its `min` and `max` corners (`min <= max`).
///
/// Boxes are closed: two boxes that share a face overlap ("touching included"),
/// and a box of zero size is a point.
///
/// # Example
/// ```
/// use glam::Vec3;
/// use sparti::Aabb;
/// let a = Aabb::new(Vec3::ZERO, Vec3::ONE).unwrap();
/// let b = Aabb::from_center_half_extents(Vec3::splat(1.5), Vec3::splat(0.5)).unwrap();
/// assert!(a.intersects(&b)); // they touch at the corner (1, 1, 1)
/// ```
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Aabb<V: Vector> {
    /// The smallest corner.
    pub min: V,
    /// The largest corner.
    pub max: V,
}

impl<V: Vector> Aabb<V> {
    /// The inverted box: `union` with it gives the other box, and it meets
    /// nothing. The start of a fold of boxes, and the box of nothing.
    #[inline]
    pub(crate) fn empty() -> Self {
        Self {
            min: V::splat(f32::INFINITY),
            max: V::splat(f32::NEG_INFINITY),
        }
    }

    /// A box from its corners.
    ///
    /// # Errors
    /// [`Error::NonFinite`] when a coordinate is NaN or infinite,
    /// [`Error::InvertedBox`] when `min > max` on some axis.
    pub fn new(min: V, max: V) -> Result<Self, Error> {
        let b = Self { min, max };
        b.check()?;
        Ok(b)
    }

    /// A box from its centre and half extents.
    ///
    /// # Errors
    /// [`Error::NonFinite`] for NaN or infinite input (or a box so large its
    /// corners overflow), [`Error::NegativeSize`] for a negative half extent.
    pub fn from_center_half_extents(center: V, half: V) -> Result<Self, Error> {
        if !center.is_finite() || !half.is_finite() {
            return Err(Error::NonFinite);
        }
        if half.any_lt(V::ZERO) {
            return Err(Error::NegativeSize);
        }
        Self::new(center - half, center + half)
    }

    /// A box holding exactly one point.
    pub fn from_point(p: V) -> Self {
        Self { min: p, max: p }
    }

    /// Checks that the box is finite and not inverted.
    ///
    /// # Errors
    /// [`Error::NonFinite`] or [`Error::InvertedBox`].
    pub fn check(&self) -> Result<(), Error> {
        if !self.min.is_finite() || !self.max.is_finite() {
            return Err(Error::NonFinite);
        }
        if !self.min.all_le(self.max) {
            return Err(Error::InvertedBox);
        }
        // The extent must be finite too, or centre/size computations overflow.
        if !(self.max - self.min).is_finite() {
            return Err(Error::NonFinite);
        }
        Ok(())
    }

    /// Centre point.
    #[inline]
    pub fn center(&self) -> V {
        (self.min + self.max) * 0.5
    }

    /// Size along each axis (`max - min`).
    #[inline]
    pub fn size(&self) -> V {
        self.max - self.min
    }

    /// Half the size along each axis.
    #[inline]
    pub fn half_extents(&self) -> V {
        (self.max - self.min) * 0.5
    }

    /// True when the boxes overlap or touch.
    #[inline]
    pub fn intersects(&self, o: &Self) -> bool {
        // `&`, not `&&`: branch-free, as pair loops run it millions of times.
        self.min.all_le(o.max) & o.min.all_le(self.max)
    }

    /// True when `o` lies entirely inside this box (boundaries included).
    #[inline]
    pub fn contains(&self, o: &Self) -> bool {
        self.min.all_le(o.min) && o.max.all_le(self.max)
    }

    /// True when the point lies inside this box (boundaries included).
    #[inline]
    pub fn contains_point(&self, p: V) -> bool {
        self.min.all_le(p) && p.all_le(self.max)
    }

    /// The smallest box holding both.
    #[inline]
    pub fn union(&self, o: &Self) -> Self {
        Self {
            min: self.min.min(o.min),
            max: self.max.max(o.max),
        }
    }

    /// The point of the box closest to `p` (`p` itself when inside).
    #[inline]
    pub fn closest_point(&self, p: V) -> V {
        p.max(self.min).min(self.max)
    }

    /// Squared distance from `p` to the box (0 inside).
    #[inline]
    pub fn distance_squared_to_point(&self, p: V) -> f32 {
        self.closest_point(p).distance_squared(p)
    }

    /// True when the box overlaps or touches the sphere.
    #[inline]
    pub fn intersects_sphere(&self, s: &Sphere<V>) -> bool {
        // The box test too: a squared distance below ~1e-38 underflows to
        // 0, and an exact test must never pass where the structures, which
        // prune by bounding boxes, cannot (found by fuzzing).
        self.distance_squared_to_point(s.center) <= s.radius * s.radius
            && self.intersects(&s.aabb())
    }

    /// Volume (area in 2D).
    pub fn volume(&self) -> f32 {
        let s = self.size();
        (0..V::DIM).map(|i| s.get(i)).product()
    }
}
