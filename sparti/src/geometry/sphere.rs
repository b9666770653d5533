//! Spheres (circles in 2D).

use super::{Aabb, Vector};
use crate::Error;

/// A ball given by its centre and radius (a circle in 2D). Closed: touching
/// counts as overlapping.
///
/// # Example
/// ```
/// use glam::Vec2;
/// use sparti::Sphere;
/// let a = Sphere::new(Vec2::ZERO, 1.0).unwrap();
/// let b = Sphere::new(Vec2::new(2.0, 0.0), 1.0).unwrap();
/// assert!(a.intersects(&b)); // touching
/// assert!(Sphere::new(Vec2::ZERO, -1.0).is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Sphere<V: Vector> {
    /// Centre.
    pub center: V,
    /// Radius, `>= 0`.
    pub radius: f32,
}

impl<V: Vector> Sphere<V> {
    /// A sphere from centre and radius.
    ///
    /// # Errors
    /// [`Error::NonFinite`] for NaN or infinite input, [`Error::NegativeSize`]
    /// for a negative radius.
    pub fn new(center: V, radius: f32) -> Result<Self, Error> {
        let s = Self { center, radius };
        s.check()?;
        Ok(s)
    }

    /// Checks that the sphere is finite with a non-negative radius.
    ///
    /// # Errors
    /// [`Error::NonFinite`] or [`Error::NegativeSize`].
    pub fn check(&self) -> Result<(), Error> {
        if !self.center.is_finite() || !self.radius.is_finite() {
            return Err(Error::NonFinite);
        }
        if self.radius < 0.0 {
            return Err(Error::NegativeSize);
        }
        self.aabb().check()
    }

    /// The bounding box: `center -+ radius`, widened by one float step on a
    /// side where rounding would cut the sphere (as for a radius below the
    /// float spacing at the centre), so it always holds the whole sphere.
    #[inline]
    pub fn aabb(&self) -> Aabb<V> {
        let r = V::splat(self.radius);
        let (mut min, mut max) = (self.center - r, self.center + r);
        let rad = f64::from(self.radius);
        for i in 0..V::DIM {
            // f32 values and their differences are exact in f64 here.
            let c = f64::from(self.center.get(i));
            if c - f64::from(min.get(i)) < rad {
                min = min.with(i, min.get(i).next_down());
            }
            if f64::from(max.get(i)) - c < rad {
                max = max.with(i, max.get(i).next_up());
            }
        }
        Aabb { min, max }
    }

    /// True when the spheres overlap or touch.
    #[inline]
    pub fn intersects(&self, o: &Self) -> bool {
        let r = self.radius + o.radius;
        // The box test too: see `Aabb::intersects_sphere` (underflow).
        self.center.distance_squared(o.center) <= r * r && self.aabb().intersects(&o.aabb())
    }

    /// True when the point is inside or on the sphere.
    #[inline]
    pub fn contains_point(&self, p: V) -> bool {
        self.center.distance_squared(p) <= self.radius * self.radius
    }

    /// True when the whole box lies inside the sphere.
    pub fn contains_aabb(&self, b: &Aabb<V>) -> bool {
        // The farthest corner from the centre, component by component.
        let d = (b.min - self.center).abs().max((b.max - self.center).abs());
        // The box test too: see `Aabb::intersects_sphere` (underflow).
        d.length_squared() <= self.radius * self.radius && self.aabb().contains(b)
    }
}
