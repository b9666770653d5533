//! Errors.

use crate::Handle;

/// Why an operation was refused. Nothing is changed when an operation fails.
///
/// # Example
/// ```
/// use glam::Vec3;
/// use sparti::{Error, ObjectDesc, Octree, Shape, SpatialIndex};
/// let mut tree = Octree::<()>::new();
/// let bad = ObjectDesc::new(Shape::sphere(Vec3::new(f32::NAN, 0.0, 0.0), 1.0), ());
/// match tree.insert(bad) {
///     Err(Error::NonFinite) => {} // log it and skip the object
///     other => panic!("{other:?}"),
/// }
/// assert!(tree.is_empty()); // nothing changed
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// A coordinate, radius or distance is NaN or infinite (or large enough
    /// that the box computed from it overflows).
    #[error("a coordinate or size is NaN or infinite")]
    NonFinite,
    /// A radius, half extent or range is negative.
    #[error("a radius, half extent or range is negative")]
    NegativeSize,
    /// A view cone's half-angle is outside 0 to 180 degrees (0 to pi
    /// radians: [`Cone::new`](crate::Cone::new) takes radians,
    /// [`Cone::from_degrees`](crate::Cone::from_degrees) degrees).
    #[error("a view cone's half-angle is outside 0 to 180 degrees (0 to pi radians)")]
    AngleOutOfRange,
    /// A box has `min > max` on some axis.
    #[error("a box has min > max on some axis")]
    InvertedBox,
    /// A ray or cone direction has zero length.
    #[error("a direction has zero length")]
    ZeroDirection,
    /// A plane has a zero normal.
    #[error("a plane has a zero normal")]
    DegeneratePlane,
    /// The handle does not name a live object: it was removed, or it comes
    /// from another structure.
    #[error("stale handle {0:?}: the object was removed or never existed here")]
    StaleHandle(Handle),
    /// The object lies outside the world and the structure's
    /// [`OutOfBounds`](crate::OutOfBounds) policy does not let the world grow.
    #[error("the object lies outside the world")]
    OutsideWorld,
    /// A coordinate lies beyond [`MAX_COORDINATE`](crate::MAX_COORDINATE)
    /// (`2^60`, about `1.15e18`).
    #[error("a coordinate lies beyond the limit of +-2^60 (about 1.15e18)")]
    WorldTooLarge,
    /// More than `2^31 - 1` (2,147,483,647) objects.
    #[error("too many objects")]
    TooManyObjects,
    /// A configuration value is out of range.
    #[error("invalid configuration: {0}")]
    InvalidConfig(&'static str),
}

/// A broken invariant found by `validate()`: always a bug in sparti.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invariant violated: {0}")]
pub struct ValidationError(pub String);
