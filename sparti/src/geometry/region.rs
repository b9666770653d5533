//! Query regions: each query shape is a small type driving one traversal
//! routine per structure (the model of rstar's `SelectionFunction`).

use super::{Aabb, Cone, Frustum, Shape, Sphere, Vector};

/// How a region relates to a node's bounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Overlap {
    /// No object inside the bounds can match: skip the subtree.
    Outside,
    /// Some objects inside the bounds may match: test them one by one.
    Partial,
    /// Every object inside the bounds matches: accept the subtree whole.
    Inside,
}

/// A query region: a box, a sphere, a frustum or a view cone.
///
/// Structures call [`Region::classify`] on node bounds to prune or accept
/// whole subtrees, then [`Region::matches`] on each remaining object.
pub trait Region<V: Vector> {
    /// How the region relates to a box holding objects.
    fn classify(&self, bounds: &Aabb<V>) -> Overlap;
    /// True when the object (its exact shape) is selected by the region.
    fn matches(&self, shape: &Shape<V>) -> bool;
}

impl Overlap {
    /// `Outside` unless the region meets the box, `Inside` when it holds
    /// it whole, else `Partial`.
    #[inline]
    pub(crate) fn of(meets: bool, holds: impl FnOnce() -> bool) -> Self {
        if !meets {
            Overlap::Outside
        } else if holds() {
            Overlap::Inside
        } else {
            Overlap::Partial
        }
    }
}

impl<V: Vector> Region<V> for Aabb<V> {
    #[inline]
    fn classify(&self, b: &Aabb<V>) -> Overlap {
        Overlap::of(self.intersects(b), || self.contains(b))
    }
    #[inline]
    fn matches(&self, shape: &Shape<V>) -> bool {
        shape.intersects_aabb(self)
    }
}

impl<V: Vector> Region<V> for Sphere<V> {
    #[inline]
    fn classify(&self, b: &Aabb<V>) -> Overlap {
        Overlap::of(b.intersects_sphere(self), || self.contains_aabb(b))
    }
    #[inline]
    fn matches(&self, shape: &Shape<V>) -> bool {
        shape.intersects_sphere(self)
    }
}

impl<V: Vector> Region<V> for Frustum<V> {
    #[inline]
    fn classify(&self, b: &Aabb<V>) -> Overlap {
        Overlap::of(self.intersects_aabb(b), || self.contains_aabb(b))
    }
    #[inline]
    fn matches(&self, shape: &Shape<V>) -> bool {
        match shape {
            Shape::Sphere(s) => self.intersects_sphere(s),
            Shape::Box(b) => self.intersects_aabb(b),
        }
    }
}

impl<V: Vector> Region<V> for Cone<V> {
    #[inline]
    fn classify(&self, b: &Aabb<V>) -> Overlap {
        // An object's centre lies in its bounds, hence in the node's bounds:
        // a node out of range of the apex holds no match.
        if b.distance_squared_to_point(self.apex) > self.range * self.range {
            Overlap::Outside
        } else {
            Overlap::Partial
        }
    }
    #[inline]
    fn matches(&self, shape: &Shape<V>) -> bool {
        self.contains_point(shape.center())
    }
}
