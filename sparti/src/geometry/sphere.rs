//! Spheres (circles in 2D).

use super::{Aabb, Vector};
use crate::Error;

/// `x` moved one float step up (`up`) or down when `go`, else `x`; for
/// finite `x`, without branches (the sphere box's widening, where the
/// condition is a coin toss and branches mispredict).
#[inline(always)]
fn step(x: f32, go: bool, up: bool) -> f32 {
    let b = x.to_bits();
    // On the bits, away from zero is +1 and towards zero -1: down is +1
    // for a negative `x`, up is +1 for a positive one. From a zero of the
    // other sign than the direction, -1 would wrap: the smallest
    // subnormal of the direction's sign instead.
    let negative = b >> 31 == 1;
    let plus_one = negative != up;
    let moved = if plus_one {
        b.wrapping_add(1)
    } else {
        b.wrapping_sub(1)
    };
    let from_zero = if up { 1 } else { 0x8000_0001 };
    let moved = if b & 0x7FFF_FFFF == 0 {
        from_zero
    } else {
        moved
    };
    f32::from_bits(if go && x.is_finite() { moved } else { b })
}

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
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
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
        self.checked_aabb().map(|_| ())
    }

    /// Checks the sphere (as [`check`](Self::check)) and returns its
    /// bounding box, computed once.
    ///
    /// # Errors
    /// [`Error::NonFinite`] or [`Error::NegativeSize`].
    #[inline]
    pub fn checked_aabb(&self) -> Result<Aabb<V>, Error> {
        if !self.center.is_finite() || !self.radius.is_finite() {
            return Err(Error::NonFinite);
        }
        if self.radius < 0.0 {
            return Err(Error::NegativeSize);
        }
        let b = self.aabb();
        // From a finite centre and radius, `min <= max`; only `c -+ r` can
        // overflow, which makes the extent infinite (or NaN).
        if !(b.max - b.min).is_finite() {
            return Err(Error::NonFinite);
        }
        Ok(b)
    }

    /// The bounding box: `center -+ radius`, widened by one float step on a
    /// side where rounding would cut the sphere (as for a radius below the
    /// float spacing at the centre), so it always holds the whole sphere.
    #[inline]
    pub fn aabb(&self) -> Aabb<V> {
        let (c, r) = (self.center, V::splat(self.radius));
        let (min, max) = (c - r, c + r);
        // The rounding errors of `c - r` and `c + r`, exactly (Knuth's
        // TwoSum): `c - r = min + e_min` and `c + r = max + e_max`. The box
        // cuts the sphere where `c - min < r`, that is `e_min < 0`, or where
        // `max - c < r`, that is `e_max > 0`: that side moves out one float
        // step. (This is the exact test the `f64` differences would give,
        // without leaving `f32`. Non-finite input gives NaN errors, which
        // move nothing; such boxes are refused by their check.)
        let t = min - c;
        let e_min = (c - (min - t)) + (-r - t);
        let u = max - c;
        let e_max = (c - (max - u)) + (r - u);
        let (mut lo, mut hi) = (min, max);
        for i in 0..V::DIM {
            lo = lo.with(i, step(min.get(i), e_min.get(i) < 0.0, false));
            hi = hi.with(i, step(max.get(i), e_max.get(i) > 0.0, true));
        }
        Aabb { min: lo, max: hi }
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

#[cfg(test)]
mod tests {
    use super::step;

    /// The branch-free step is the standard library's `next_up` and
    /// `next_down` on finite numbers (zeros and subnormals included),
    /// and leaves non-finite numbers and unmoved ones as they are.
    #[test]
    fn step_is_next_up_and_next_down() {
        let mut specials = vec![
            0.0f32,
            -0.0,
            f32::MIN_POSITIVE,
            -f32::MIN_POSITIVE,
            f32::from_bits(1),
            f32::from_bits(0x8000_0001),
            f32::MAX,
            f32::MIN,
            1.0,
            -1.0,
        ];
        // Every 2^12-th bit pattern: every exponent, both signs.
        specials.extend((0..=u32::MAX).step_by(4093).map(f32::from_bits));
        for x in specials {
            let bits = |v: f32| v.to_bits();
            if x.is_finite() {
                assert_eq!(
                    bits(step(x, true, true)),
                    bits(x.next_up()),
                    "up from {x:e}"
                );
                assert_eq!(
                    bits(step(x, true, false)),
                    bits(x.next_down()),
                    "down from {x:e}"
                );
            } else {
                assert_eq!(bits(step(x, true, true)), bits(x));
                assert_eq!(bits(step(x, true, false)), bits(x));
            }
            assert_eq!(bits(step(x, false, true)), bits(x));
            assert_eq!(bits(step(x, false, false)), bits(x));
        }
    }
}
