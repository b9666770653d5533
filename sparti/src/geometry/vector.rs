//! The dimension abstraction: one source for 2D and 3D.
//!
//! Every shape and structure in sparti is generic over a [`Vector`], which is
//! implemented for [`glam::Vec2`] (2D) and [`glam::Vec3`] (3D). The trait is
//! small on purpose: it names the handful of component-wise operations the
//! trees need, and leaves arithmetic to the glam operators.

use core::fmt::Debug;
use core::ops::{Add, Div, Mul, Neg, Sub};

use glam::{Vec2, Vec3};

/// A point or direction in 2D or 3D space: implemented for [`Vec2`] and [`Vec3`]
/// (and, with the feature `glam033`, for glam 0.33's, which Bevy 0.20 uses).
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

/// Methods of [`Vector`] that call the glam type's own method of the same
/// name: groups of names sharing a signature (the arguments after `self`).
macro_rules! forward_to_glam {
    ($ty:ident, $([$($name:ident),*] $args:tt -> $ret:ty),* $(,)?) => {
        $($(forward_to_glam!(@one $ty, $name $args -> $ret);)*)*
    };
    (@one $ty:ident, $name:ident ($($arg:ident: $at:ty),*) -> $ret:ty) => {
        #[inline]
        fn $name(self $(, $arg: $at)*) -> $ret {
            $ty::$name(self $(, $arg)*)
        }
    };
}

/// Implements [`Vector`] for a glam vector type by forwarding to its own
/// methods; `all_le` and `any_lt` are given, as they are written per
/// dimension (branch-free `&` for the first).
macro_rules! impl_vector {
    ($ty:ident, $dim:expr, all_le: $le:expr, any_lt: $lt:expr) => {
        impl Vector for $ty {
            const DIM: usize = $dim;
            const ZERO: Self = $ty::ZERO;
            const ONE: Self = $ty::ONE;

            #[inline]
            fn splat(v: f32) -> Self {
                $ty::splat(v)
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
            forward_to_glam!(
                $ty,
                [min, max] (o: Self) -> Self,
                [abs] () -> Self,
                [dot] (o: Self) -> f32,
                [min_element, max_element] () -> f32,
                [is_finite] () -> bool,
            );
            #[inline]
            fn all_le(self, o: Self) -> bool {
                let f: fn(Self, Self) -> bool = $le;
                f(self, o)
            }
            #[inline]
            fn any_lt(self, o: Self) -> bool {
                let f: fn(Self, Self) -> bool = $lt;
                f(self, o)
            }
        }
    };
}

/// [`Vector`] for the `Vec2` and `Vec3` in scope (glam's, of one version
/// or another).
macro_rules! impl_vectors {
    () => {
        impl_vector!(
            Vec2,
            2,
            all_le: |a, o| (a.x <= o.x) & (a.y <= o.y),
            any_lt: |a, o| a.x < o.x || a.y < o.y
        );
        impl_vector!(
            Vec3,
            3,
            all_le: |a, o| (a.x <= o.x) & (a.y <= o.y) & (a.z <= o.z),
            any_lt: |a, o| a.x < o.x || a.y < o.y || a.z < o.z
        );
    };
}

impl_vectors!();

/// [`Vector`] for the vectors of glam 0.33, the version Bevy 0.20 is
/// built on (feature `glam033`): a Bevy game passes its own `Vec2` and
/// `Vec3` to sparti as they are (`Orthtree<bevy::math::Vec3, T>`).
#[cfg(feature = "glam033")]
mod glam033_vectors {
    use super::Vector;
    use glam033::{Vec2, Vec3};

    impl_vectors!();
}
