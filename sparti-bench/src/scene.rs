//! The seeded inputs every implementation receives, from the workspace's
//! scene kit (`sparti-scenes`): the uniform scene of moving spheres or
//! circles, static boxes, rays, box queries and camera frustums. The
//! Criterion bench `benches/pairs.rs` runs the same moving scene.

use sparti::glam::Vec3;
use sparti::{Aabb, Frustum, Vector};
use sparti_scenes::{Moving, Scenario};

pub use sparti_scenes::queries::{box_queries, boxes, frustums, rays};
pub use sparti_scenes::side;

/// N moving spheres (3D) or circles (2D), bouncing off the walls: the
/// kit's uniform scenario.
pub type Scene<V> = Moving<V>;

/// The moving scene of N objects.
pub fn uniform<V: Vector>(n: usize) -> Scene<V> {
    Moving::new(Scenario::Uniform, n)
}

/// The exact test every implementation applies to its candidate pairs:
/// sparti's own sphere-sphere (circle-circle) test.
#[inline]
pub fn overlap<V: Vector>(scene: &Scene<V>, a: usize, b: usize) -> bool {
    scene.sphere(a).intersects(&scene.sphere(b))
}

/// Frustum against a box given by its corners, with sparti's own test
/// (`Frustum::intersects_aabb`: the box is out when its positive vertex is
/// behind one plane), for peers whose nodes are not sparti boxes.
#[inline]
pub fn frustum_hits_box(f: &Frustum<Vec3>, min: Vec3, max: Vec3) -> bool {
    f.intersects_aabb(&Aabb { min, max })
}
