//! Query sets: static boxes for the bulk builds, rays, box queries and
//! camera frustums, each seeded and spread over the uniform scenario's
//! cube (see [`side`]).

use sparti::glam::Vec3;
use sparti::glam::camera::rh::{proj::directx, view};
use sparti::{Aabb, Frustum, Ray, Vector};

use rand::Rng as _;

use crate::moving::SEED;
use crate::{direction, rng, side, vec_in};

/// `n` static boxes for the bulk builds: centres uniform in the uniform
/// scenario's cube (or square) for `n` objects, half extents uniform in
/// [0.25, 0.75] on each axis.
///
/// # Example
/// ```
/// use sparti::glam::Vec2;
/// let boxes = sparti_scenes::queries::boxes::<Vec2>(100);
/// assert_eq!(boxes.len(), 100);
/// ```
pub fn boxes<V: Vector>(n: usize) -> Vec<Aabb<V>> {
    let mut rng = rng(SEED ^ 0xB0C5);
    let side = side(V::DIM, n);
    (0..n)
        .map(|_| {
            let c: V = vec_in(&mut rng, V::ZERO, V::splat(side));
            let mut h = V::ZERO;
            for i in 0..V::DIM {
                h = h.with(i, rng.random_range(0.25..=0.75));
            }
            Aabb {
                min: c - h,
                max: c + h,
            }
        })
        .collect()
}

/// `n` rays: origin uniform in the cube of side `side`, uniform direction.
pub fn rays(n: usize, side: f32) -> Vec<Ray<Vec3>> {
    let mut rng = rng(SEED ^ 0x4A75);
    (0..n)
        .map(|_| {
            let o: Vec3 = vec_in(&mut rng, Vec3::ZERO, Vec3::splat(side));
            let d: Vec3 = direction(&mut rng);
            Ray::new(o, d).expect("unit direction")
        })
        .collect()
}

/// `n` cubes of side 8, centres uniform in the cube of side `side`.
pub fn box_queries(n: usize, side: f32) -> Vec<Aabb<Vec3>> {
    let mut rng = rng(SEED ^ 0xB0B0);
    (0..n)
        .map(|_| {
            let c: Vec3 = vec_in(&mut rng, Vec3::ZERO, Vec3::splat(side));
            Aabb {
                min: c - Vec3::splat(4.0),
                max: c + Vec3::splat(4.0),
            }
        })
        .collect()
}

/// Far plane of the cameras of [`frustums`].
pub const FAR: f32 = 50.0;

/// `n` camera frustums: eye uniform in the cube of side `side`, random
/// view direction, 60 degree vertical field of view, aspect 16:9, near
/// 0.1, far [`FAR`].
///
/// # Example
/// ```
/// let cameras = sparti_scenes::queries::frustums(10, 100.0);
/// assert_eq!(cameras.len(), 10);
/// ```
pub fn frustums(n: usize, side: f32) -> Vec<Frustum<Vec3>> {
    let mut rng = rng(SEED ^ 0xF057);
    let proj = directx::perspective(60f32.to_radians(), 16.0 / 9.0, 0.1, FAR);
    (0..n)
        .map(|_| {
            let eye: Vec3 = vec_in(&mut rng, Vec3::ZERO, Vec3::splat(side));
            let dir: Vec3 = direction(&mut rng);
            let up = if dir.y.abs() > 0.9 { Vec3::X } else { Vec3::Y };
            let view = view::look_to_mat4(eye, dir, up);
            Frustum::from_view_projection(proj * view).expect("regular camera")
        })
        .collect()
}
