//! Planes and frustums.

use glam::{Mat4, Vec3, Vec4};

use super::{Aabb, Sphere, Vector};
use crate::Error;

/// A plane (a line in 2D): a point `p` is inside when `normal · p + d >= 0`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Plane<V: Vector> {
    /// Unit normal, pointing into the inside half-space.
    pub normal: V,
    /// Offset: `normal · p + d` is the signed distance of `p`.
    pub d: f32,
}

impl<V: Vector> Plane<V> {
    /// A plane from any non-zero normal; normal and offset are scaled so the
    /// normal has unit length.
    ///
    /// # Errors
    /// [`Error::NonFinite`] for NaN or infinite input,
    /// [`Error::DegeneratePlane`] for a zero normal.
    pub fn new(normal: V, d: f32) -> Result<Self, Error> {
        if !normal.is_finite() || !d.is_finite() {
            return Err(Error::NonFinite);
        }
        let n = normal.try_normalize().ok_or(Error::DegeneratePlane)?;
        // Divide by the length scaled by the largest component (as
        // `try_normalize` does): `normal.length()` overflows for huge normals
        // (giving d = 0) and is inexact or zero for tiny ones.
        let m = normal.abs().max_element();
        let d = (d / m) / (normal / m).length();
        if !d.is_finite() {
            return Err(Error::DegeneratePlane);
        }
        Ok(Self { normal: n, d })
    }

    /// Signed distance of a point (positive inside).
    #[inline]
    pub fn signed_distance(&self, p: V) -> f32 {
        self.normal.dot(p) + self.d
    }

    /// The box corner farthest along the normal (the "positive vertex").
    #[inline]
    fn positive_vertex(&self, b: &Aabb<V>) -> V {
        self.corner(b.max, b.min)
    }

    /// The box corner farthest against the normal (the "negative vertex").
    #[inline]
    fn negative_vertex(&self, b: &Aabb<V>) -> V {
        self.corner(b.min, b.max)
    }

    /// The corner taking `along`'s coordinate on the axes where the normal
    /// is not negative, `against`'s on the others.
    #[inline]
    fn corner(&self, along: V, against: V) -> V {
        let mut p = against;
        for i in 0..V::DIM {
            if self.normal.get(i) >= 0.0 {
                p = p.with(i, along.get(i));
            }
        }
        p
    }
}

/// A convex volume bounded by six planes: the camera's view frustum.
///
/// An object is culled only when it lies wholly outside one plane (the
/// standard plane test): it is conservative, so an object near a frustum
/// corner may be reported although it is just outside. In 2D the planes are
/// lines; repeat a plane if you need fewer than six.
///
/// # Example
/// ```
/// use glam::Vec3;
/// use glam::camera::rh::{proj::directx, view};
/// use sparti::{Aabb, Frustum};
/// let proj = directx::perspective(1.0, 1.0, 0.1, 100.0);
/// let view = view::look_at_mat4(Vec3::ZERO, Vec3::new(0.0, 0.0, -1.0), Vec3::Y);
/// let f = Frustum::from_view_projection(proj * view).unwrap();
/// let ahead = Aabb::from_center_half_extents(Vec3::new(0.0, 0.0, -10.0), Vec3::ONE).unwrap();
/// let behind = Aabb::from_center_half_extents(Vec3::new(0.0, 0.0, 10.0), Vec3::ONE).unwrap();
/// assert!(f.intersects_aabb(&ahead));
/// assert!(!f.intersects_aabb(&behind));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Frustum<V: Vector> {
    /// The bounding planes, normals pointing inwards.
    pub planes: [Plane<V>; 6],
}

impl<V: Vector> Frustum<V> {
    /// A frustum from six planes.
    pub fn new(planes: [Plane<V>; 6]) -> Self {
        Self { planes }
    }

    /// False when the box lies wholly outside one plane.
    #[inline]
    pub fn intersects_aabb(&self, b: &Aabb<V>) -> bool {
        self.planes
            .iter()
            .all(|p| p.signed_distance(p.positive_vertex(b)) >= 0.0)
    }

    /// True when the box lies wholly inside every plane.
    #[inline]
    pub fn contains_aabb(&self, b: &Aabb<V>) -> bool {
        self.planes
            .iter()
            .all(|p| p.signed_distance(p.negative_vertex(b)) >= 0.0)
    }

    /// `Outside` when the box lies wholly outside one plane, `Inside` when
    /// it lies wholly inside every plane, else `Partial`: the answers of
    /// [`Frustum::intersects_aabb`] and [`Frustum::contains_aabb`], in one
    /// pass over the planes.
    #[inline]
    pub(crate) fn classify_aabb(&self, b: &Aabb<V>) -> crate::Overlap {
        let mut inside = true;
        for p in &self.planes {
            if p.signed_distance(p.positive_vertex(b)) < 0.0 {
                return crate::Overlap::Outside;
            }
            inside &= p.signed_distance(p.negative_vertex(b)) >= 0.0;
        }
        if inside {
            crate::Overlap::Inside
        } else {
            crate::Overlap::Partial
        }
    }

    /// False when the sphere lies wholly outside one plane.
    #[inline]
    pub fn intersects_sphere(&self, s: &Sphere<V>) -> bool {
        // The box test too: `signed_distance + radius` can round a tiny
        // gap away, and the structures, which test bounding boxes first,
        // would not report the sphere (found by fuzzing).
        self.sphere_centre_within(s) && self.intersects_aabb(&s.aabb())
    }

    /// The plane part of [`Frustum::intersects_sphere`]: the centre within
    /// the radius of every plane's inside.
    #[inline]
    pub(crate) fn sphere_centre_within(&self, s: &Sphere<V>) -> bool {
        self.planes
            .iter()
            .all(|p| p.signed_distance(s.center) >= -s.radius)
    }

    /// True when the point is inside every plane.
    #[inline]
    pub fn contains_point(&self, q: V) -> bool {
        self.planes.iter().all(|p| p.signed_distance(q) >= 0.0)
    }
}

impl Frustum<Vec3> {
    /// The frustum of a view-projection matrix (`projection * view`) for
    /// clip-space depth in `[0, 1]` (wgpu, Vulkan, Metal, DirectX; glam's
    /// `camera::*::proj::directx` and `vulkan` projections), including
    /// reversed depth and infinite far planes (`perspective_infinite`,
    /// `perspective_infinite_reverse`).
    ///
    /// # Errors
    /// [`Error::NonFinite`] or [`Error::DegeneratePlane`] for a singular matrix.
    pub fn from_view_projection(m: Mat4) -> Result<Self, Error> {
        let (r0, r1, r2, r3) = (m.row(0), m.row(1), m.row(2), m.row(3));
        Self::from_rows([r3 + r0, r3 - r0, r3 + r1, r3 - r1, r2, r3 - r2])
    }

    /// Like [`Frustum::from_view_projection`] for OpenGL's clip space (depth
    /// in `[-1, 1]`, glam's `camera::*::proj::opengl` projections).
    ///
    /// # Errors
    /// [`Error::NonFinite`] or [`Error::DegeneratePlane`] for a singular matrix.
    pub fn from_view_projection_gl(m: Mat4) -> Result<Self, Error> {
        let (r0, r1, r2, r3) = (m.row(0), m.row(1), m.row(2), m.row(3));
        Self::from_rows([r3 + r0, r3 - r0, r3 + r1, r3 - r1, r3 + r2, r3 - r2])
    }

    fn from_rows(rows: [Vec4; 6]) -> Result<Self, Error> {
        let mut planes = [None; 6];
        for (p, r) in planes.iter_mut().zip(rows) {
            // A row `(0, 0, 0, w)` with `w > 0` holds for every point: the
            // far plane of an infinite perspective (or the near plane of an
            // infinite reversed-depth one). It bounds nothing; a copy of
            // another plane stands in for it below.
            if r.truncate() == Vec3::ZERO && r.w > 0.0 && r.w.is_finite() {
                continue;
            }
            *p = Some(Plane::new(r.truncate(), r.w)?);
        }
        let fill = planes.iter().flatten().next().copied();
        let fill = fill.ok_or(Error::DegeneratePlane)?;
        Ok(Self {
            planes: planes.map(|p| p.unwrap_or(fill)),
        })
    }
}
