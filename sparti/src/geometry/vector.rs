//! The dimension abstraction: one source for 2D and 3D.
//!
//! Every shape and structure in sparti is generic over a [`Vector`], which is
//! implemented for [`glam::Vec2`] (2D) and [`glam::Vec3`] (3D). The trait is
//! small on purpose: it names the handful of component-wise operations the
//! trees need, and leaves arithmetic to the glam operators.

use core::fmt::Debug;
use core::ops::{Add, Div, Mul, Neg, Sub};

use glam::{Vec2, Vec3};

/// A point or direction in 2D or 3D space: implemented for [`Vec2`] and [`Vec3`].
///
/// Structures use [`Vector::DIM`] to size their children (`2^DIM` per node in
/// the orthtrees) and the component accessors to split along an axis.
pub trait Vector:
    Copy
    + Debug
    + PartialEq
    + Default
    + Send
    + Sync
    + 'static
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<f32, Output = Self>
    + Mul<Self, Output = Self>
    + Div<f32, Output = Self>
    + Neg<Output = Self>
{
    /// Number of components: 2 or 3.
    const DIM: usize;
    /// All components zero.
    const ZERO: Self;
    /// All components one.
    const ONE: Self;

    /// A vector with every component set to `v`.
    fn splat(v: f32) -> Self;
    /// Component `i` (`i < DIM`).
    fn get(self, i: usize) -> f32;
    /// This vector with component `i` replaced by `v`.
    fn with(self, i: usize, v: f32) -> Self;
    /// The unit vector along axis `i`.
    fn unit(i: usize) -> Self {
        Self::ZERO.with(i, 1.0)
    }
    /// Component-wise minimum.
    fn min(self, o: Self) -> Self;
    /// Component-wise maximum.
    fn max(self, o: Self) -> Self;
    /// Component-wise absolute value.
    fn abs(self) -> Self;
    /// Dot product.
    fn dot(self, o: Self) -> f32;
    /// Smallest component.
    fn min_element(self) -> f32;
    /// Largest component.
    fn max_element(self) -> f32;
    /// True when every component is finite (neither NaN nor infinite).
    fn is_finite(self) -> bool;
    /// True when `self[i] <= o[i]` for every component.
    fn all_le(self, o: Self) -> bool;
    /// True when `self[i] < o[i]` for some component.
    fn any_lt(self, o: Self) -> bool {
        (0..Self::DIM).any(|i| self.get(i) < o.get(i))
    }
    /// Squared length.
    fn length_squared(self) -> f32 {
        self.dot(self)
    }
    /// Length.
    fn length(self) -> f32 {
        self.length_squared().sqrt()
    }
    /// Squared distance to `o`.
    fn distance_squared(self, o: Self) -> f32 {
        (self - o).length_squared()
    }
    /// Distance to `o`.
    fn distance(self, o: Self) -> f32 {
        (self - o).length()
    }
    /// This vector scaled to unit length, or `None` when it is zero or not
    /// finite. Scaled by its largest component first, so tiny and huge
    /// vectors normalise without underflow or overflow.
    fn try_normalize(self) -> Option<Self> {
        let m = self.abs().max_element();
        if !(m.is_finite() && m > 0.0) {
            return None;
        }
        let s = self / m;
        let n = s / s.length();
        n.is_finite().then_some(n)
    }
    /// Index of the largest component (the first one on ties).
    fn max_axis(self) -> usize {
        let mut best = 0;
        for i in 1..Self::DIM {
            if self.get(i) > self.get(best) {
                best = i;
            }
        }
        best
    }
}

impl Vector for Vec2 {
    const DIM: usize = 2;
    const ZERO: Self = Vec2::ZERO;
    const ONE: Self = Vec2::ONE;

    #[inline]
    fn splat(v: f32) -> Self {
        Vec2::splat(v)
    }
    #[inline]
    fn get(self, i: usize) -> f32 {
        self[i]
    }
    #[inline]
    fn with(mut self, i: usize, v: f32) -> Self {
        self[i] = v;
        self
    }
    #[inline]
    fn min(self, o: Self) -> Self {
        Vec2::min(self, o)
    }
    #[inline]
    fn max(self, o: Self) -> Self {
        Vec2::max(self, o)
    }
    #[inline]
    fn abs(self) -> Self {
        Vec2::abs(self)
    }
    #[inline]
    fn dot(self, o: Self) -> f32 {
        Vec2::dot(self, o)
    }
    #[inline]
    fn min_element(self) -> f32 {
        Vec2::min_element(self)
    }
    #[inline]
    fn max_element(self) -> f32 {
        Vec2::max_element(self)
    }
    #[inline]
    fn is_finite(self) -> bool {
        Vec2::is_finite(self)
    }
    #[inline]
    fn all_le(self, o: Self) -> bool {
        (self.x <= o.x) & (self.y <= o.y)
    }
    #[inline]
    fn any_lt(self, o: Self) -> bool {
        self.x < o.x || self.y < o.y
    }
}

impl Vector for Vec3 {
    const DIM: usize = 3;
    const ZERO: Self = Vec3::ZERO;
    const ONE: Self = Vec3::ONE;

    #[inline]
    fn splat(v: f32) -> Self {
        Vec3::splat(v)
    }
    #[inline]
    fn get(self, i: usize) -> f32 {
        self[i]
    }
    #[inline]
    fn with(mut self, i: usize, v: f32) -> Self {
        self[i] = v;
        self
    }
    #[inline]
    fn min(self, o: Self) -> Self {
        Vec3::min(self, o)
    }
    #[inline]
    fn max(self, o: Self) -> Self {
        Vec3::max(self, o)
    }
    #[inline]
    fn abs(self) -> Self {
        Vec3::abs(self)
    }
    #[inline]
    fn dot(self, o: Self) -> f32 {
        Vec3::dot(self, o)
    }
    #[inline]
    fn min_element(self) -> f32 {
        Vec3::min_element(self)
    }
    #[inline]
    fn max_element(self) -> f32 {
        Vec3::max_element(self)
    }
    #[inline]
    fn is_finite(self) -> bool {
        Vec3::is_finite(self)
    }
    #[inline]
    fn all_le(self, o: Self) -> bool {
        (self.x <= o.x) & (self.y <= o.y) & (self.z <= o.z)
    }
    #[inline]
    fn any_lt(self, o: Self) -> bool {
        self.x < o.x || self.y < o.y || self.z < o.z
    }
}
