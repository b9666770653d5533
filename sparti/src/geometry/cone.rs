//! View cones (AI vision).

use super::Vector;
use crate::Error;

/// A view cone: everything whose centre lies within `range` of the `apex`
/// and within `half_angle` of the direction `dir` (the apex itself counts).
///
/// # Example
/// ```
/// use glam::Vec2;
/// use sparti::Cone;
/// let guard = Cone::new(Vec2::ZERO, Vec2::X, 30f32.to_radians(), 10.0).unwrap();
/// assert!(guard.contains_point(Vec2::new(5.0, 1.0)));
/// assert!(!guard.contains_point(Vec2::new(5.0, 5.0))); // 45 degrees off
/// assert!(!guard.contains_point(Vec2::new(11.0, 0.0))); // out of range
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cone<V: Vector> {
    /// The eye.
    pub apex: V,
    /// Unit view direction.
    pub dir: V,
    /// Half the opening angle in radians, in `[0, pi]`.
    pub half_angle: f32,
    /// Viewing distance.
    pub range: f32,
    cos_half_angle: f32,
}

impl<V: Vector> Cone<V> {
    /// A cone from apex, direction (any non-zero length), half-angle in
    /// **radians** (`0..=pi`; [`Cone::from_degrees`] takes degrees) and
    /// range (`>= 0`).
    ///
    /// # Errors
    /// [`Error::NonFinite`], [`Error::ZeroDirection`],
    /// [`Error::AngleOutOfRange`] for a half-angle outside `[0, pi]`, or
    /// [`Error::NegativeSize`] for a negative range.
    pub fn new(apex: V, dir: V, half_angle: f32, range: f32) -> Result<Self, Error> {
        if !apex.is_finite() || !dir.is_finite() || !half_angle.is_finite() || !range.is_finite() {
            return Err(Error::NonFinite);
        }
        let dir = dir.try_normalize().ok_or(Error::ZeroDirection)?;
        if !(0.0..=core::f32::consts::PI).contains(&half_angle) {
            return Err(Error::AngleOutOfRange);
        }
        if range < 0.0 {
            return Err(Error::NegativeSize);
        }
        Ok(Self {
            apex,
            dir,
            half_angle,
            range,
            cos_half_angle: half_angle.cos(),
        })
    }

    /// A cone whose half-angle is given in **degrees** (`0..=180`), as the
    /// query files take it.
    ///
    /// # Errors
    /// As [`Cone::new`].
    ///
    /// # Example
    /// ```
    /// use glam::Vec2;
    /// use sparti::{Cone, Error};
    /// let guard = Cone::from_degrees(Vec2::ZERO, Vec2::X, 30.0, 10.0).unwrap();
    /// assert!((guard.half_angle - 30f32.to_radians()).abs() < 1e-7);
    /// assert_eq!(Cone::from_degrees(Vec2::ZERO, Vec2::X, 200.0, 10.0), Err(Error::AngleOutOfRange));
    /// ```
    pub fn from_degrees(
        apex: V,
        dir: V,
        half_angle_degrees: f32,
        range: f32,
    ) -> Result<Self, Error> {
        let radians = half_angle_degrees.to_radians();
        // `to_radians` may round 180 degrees a hair above pi.
        let pi = core::f32::consts::PI;
        let radians = if half_angle_degrees <= 180.0 && radians > pi {
            pi
        } else {
            radians
        };
        Self::new(apex, dir, radians, range)
    }

    /// True when the point is within range and angle.
    #[inline]
    pub fn contains_point(&self, p: V) -> bool {
        let d = p - self.apex;
        let len2 = d.length_squared();
        // Each coordinate within range too: a squared distance below ~1e-38
        // underflows to 0, and the structures look for centres in the box
        // of the range around the apex (found by fuzzing).
        if len2 > self.range * self.range || d.abs().max_element() > self.range {
            return false;
        }
        if len2 == 0.0 || self.half_angle >= core::f32::consts::PI {
            // The apex itself, or a cone open all around: in range is enough
            // (rounding in the dot product would miss points straight behind).
            return true;
        }
        d.dot(self.dir) >= self.cos_half_angle * len2.sqrt()
    }
}
