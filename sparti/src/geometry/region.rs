//! Query regions: each query shape is a small type driving one traversal
//! routine per structure (the model of rstar's `SelectionFunction`).

use super::{Aabb, Cone, Frustum, Plane, Shape, Sphere, Vector};

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
    /// Whether [`Region::matches_meeting_box`] costs about as little as a
    /// branch (a box's or a sphere's distance test). The structures then
    /// make it on every object whose box meets the region, those whose
    /// box lies inside included (where its answer is known), instead of
    /// branching on which lie inside: in a query that selects dozens of
    /// objects, about one in five lies inside, at random, and the branch
    /// mispredicts. Results are the same either way. Default `false`.
    const CHEAP_EXACT_TEST: bool = false;

    /// Whether [`Region::classify`] classifies boxes exactly as the box
    /// [`Region::bounds`] does as a region (an [`Aabb`], or a region that
    /// wraps one and changes only [`Region::matches`] and
    /// [`Region::matches_meeting_box`]): a structure may then classify
    /// boxes against that box, many at once, instead of calling
    /// `classify` (the grid of a built tree does so, and calls `classify`
    /// on none of its boxes). Default `false`: no such promise.
    const CLASSIFIES_AS_BOUNDS: bool = false;

    /// How the region relates to a box holding objects.
    fn classify(&self, bounds: &Aabb<V>) -> Overlap;
    /// True when the object (its exact shape) is selected by the region.
    fn matches(&self, shape: &Shape<V>) -> bool;

    /// [`Region::matches`] for an object whose bounding box
    /// ([`Shape::aabb`]) the region is already known to meet
    /// ([`Region::classify`] did not say `Outside`): the structures call
    /// this one, so a region whose exact test begins with that box test
    /// can skip it. It must give what `matches` gives for such objects;
    /// the default calls `matches`.
    #[inline]
    fn matches_meeting_box(&self, shape: &Shape<V>) -> bool {
        self.matches(shape)
    }

    /// A box that every object the region can select meets, if the
    /// region has one: a structure may skip the objects outside it
    /// without calling [`Region::classify`] on each. `None` (the default)
    /// makes no such promise. The structures grow the box by a hair for
    /// rounding, so an exact bounding box is enough.
    ///
    /// ```
    /// use glam::Vec3;
    /// use sparti::{Region, Sphere};
    /// let s = Sphere::new(Vec3::ZERO, 2.0).unwrap();
    /// let b = s.bounds().unwrap();
    /// assert_eq!((b.min, b.max), (Vec3::splat(-2.0), Vec3::splat(2.0)));
    /// ```
    #[inline]
    fn bounds(&self) -> Option<Aabb<V>> {
        None
    }

    /// The six planes of a region that classifies boxes exactly as a
    /// [`Frustum`] of those planes does (a frustum, or a region that wraps
    /// one and changes only [`Region::matches`] and
    /// [`Region::matches_meeting_box`]): a structure may then classify
    /// boxes by the planes, many at once, instead of calling
    /// [`Region::classify`] (the grid of a built tree does so for a region
    /// without [`Region::bounds`], and calls `classify` on none of its
    /// boxes). `None` (the default) makes no such promise.
    ///
    /// ```
    /// use glam::Vec3;
    /// use sparti::{Frustum, Plane, Region};
    /// let p = Plane::new(Vec3::X, 1.0).unwrap();
    /// let f = Frustum::new([p; 6]);
    /// assert_eq!(f.planes(), Some(&[p; 6]));
    /// ```
    #[inline]
    fn planes(&self) -> Option<&[Plane<V>; 6]> {
        None
    }
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
    const CHEAP_EXACT_TEST: bool = true;
    const CLASSIFIES_AS_BOUNDS: bool = true;

    #[inline]
    fn bounds(&self) -> Option<Aabb<V>> {
        Some(*self)
    }
    #[inline]
    fn classify(&self, b: &Aabb<V>) -> Overlap {
        // Both tests, without a branch on either (whether a box lies
        // inside the query box is a coin toss in the grid's queries).
        let meets = self.intersects(b);
        let holds = self.min.all_le(b.min) & b.max.all_le(self.max);
        match u8::from(meets) + u8::from(meets & holds) {
            0 => Overlap::Outside,
            1 => Overlap::Partial,
            _ => Overlap::Inside,
        }
    }
    #[inline]
    fn matches(&self, shape: &Shape<V>) -> bool {
        shape.intersects_aabb(self)
    }
    /// The box test of [`Shape::intersects_aabb`] is the one already
    /// passed: a box then meets the region, a sphere does when its centre
    /// is within its radius of the region.
    #[inline]
    fn matches_meeting_box(&self, shape: &Shape<V>) -> bool {
        match shape {
            Shape::Sphere(s) => self.distance_squared_to_point(s.center) <= s.radius * s.radius,
            Shape::Box(_) => true,
        }
    }
}

impl<V: Vector> Region<V> for Sphere<V> {
    const CHEAP_EXACT_TEST: bool = true;

    #[inline]
    fn bounds(&self) -> Option<Aabb<V>> {
        // `|r|`: the tests square the radius.
        let r = V::splat(self.radius.abs());
        Some(Aabb {
            min: self.center - r,
            max: self.center + r,
        })
    }
    #[inline]
    fn classify(&self, b: &Aabb<V>) -> Overlap {
        Overlap::of(b.intersects_sphere(self), || self.contains_aabb(b))
    }
    /// The object's shape meets the sphere, and so does its box, as
    /// [`Region::classify`] tests it: the structures prune by that test, so
    /// the exact one must never pass where it fails. (Far from the origin
    /// the centres' distance rounds down: a sphere of radius `2^24` at
    /// `y = -1` and one of radius 0.5 at `y = 2^24` are 1 apart from each
    /// other's boxes, yet "touch" by their rounded centre distance. Found
    /// by fuzzing.)
    #[inline]
    fn matches(&self, shape: &Shape<V>) -> bool {
        match shape {
            Shape::Sphere(o) => o.aabb().intersects_sphere(self) && self.matches_meeting_box(shape),
            Shape::Box(b) => b.intersects_sphere(self),
        }
    }
    /// The box tests of [`Shape::intersects_sphere`] are the one already
    /// passed (the object's box against the sphere's, within `classify`):
    /// a box then meets the sphere (the rest of `classify`'s test), a
    /// sphere does when the centres are within the sum of the radii.
    #[inline]
    fn matches_meeting_box(&self, shape: &Shape<V>) -> bool {
        match shape {
            Shape::Sphere(o) => {
                let r = self.radius + o.radius;
                self.center.distance_squared(o.center) <= r * r
            }
            Shape::Box(_) => true,
        }
    }
}

impl<V: Vector> Region<V> for Frustum<V> {
    /// [`Frustum::intersects_aabb`] and [`Frustum::contains_aabb`] in one
    /// pass over the planes.
    #[inline]
    fn classify(&self, b: &Aabb<V>) -> Overlap {
        self.classify_aabb(b)
    }
    #[inline]
    fn planes(&self) -> Option<&[Plane<V>; 6]> {
        Some(&self.planes)
    }
    #[inline]
    fn matches(&self, shape: &Shape<V>) -> bool {
        match shape {
            Shape::Sphere(s) => self.intersects_sphere(s),
            Shape::Box(b) => self.intersects_aabb(b),
        }
    }
    /// The box test of [`Frustum::intersects_sphere`] (on the sphere's
    /// box) is the one already passed: a box then meets the frustum, a
    /// sphere does when its centre is within its radius of every plane.
    #[inline]
    fn matches_meeting_box(&self, shape: &Shape<V>) -> bool {
        match shape {
            Shape::Sphere(s) => self.sphere_centre_within(s),
            Shape::Box(_) => true,
        }
    }
}

impl<V: Vector> Region<V> for Cone<V> {
    #[inline]
    fn bounds(&self) -> Option<Aabb<V>> {
        // The selected objects' centres lie within range of the apex.
        let r = V::splat(self.range.abs());
        Some(Aabb {
            min: self.apex - r,
            max: self.apex + r,
        })
    }
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
