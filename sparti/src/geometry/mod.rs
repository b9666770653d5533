//! Geometry on glam: shapes, exact tests, and the 2D/3D abstraction.
//!
//! This layer knows nothing of trees. Everything is generic over
//! [`Vector`], implemented for [`glam::Vec2`] and [`glam::Vec3`].

mod aabb;
mod cone;
mod frustum;
mod ray;
mod region;
mod shape;
mod sphere;
mod vector;

pub use aabb::Aabb;
pub use cone::Cone;
pub use frustum::{Frustum, Plane};
pub use ray::{Ray, RayIntersection};
pub use region::{Overlap, Region};
pub use shape::{ContactPoint, Shape};
pub use sphere::Sphere;
pub(crate) use sphere::{BATCH, boxes_of};
pub use vector::Vector;
