//! Errors.

use crate::Handle;

/// Why an operation was refused. Nothing is changed when an operation fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// A coordinate, radius or distance is NaN or infinite (or large enough
    /// that the box computed from it overflows).
    #[error("a coordinate or size is NaN or infinite")]
    NonFinite,
    /// A radius, half extent, range or angle is negative or out of range.
    #[error("a radius, half extent or range is negative")]
    NegativeSize,
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
    /// More than `u32::MAX - 1` objects.
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
