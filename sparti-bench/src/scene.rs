//! The seeded inputs every implementation receives: moving spheres or
//! circles, static boxes, rays, box queries and camera frustums. The
//! Criterion bench `benches/pairs.rs` includes this file, so it runs the
//! same moving scene.

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use sparti::glam::Vec3;
use sparti::glam::camera::rh::{proj::directx, view};
use sparti::{Aabb, Frustum, Ray, Sphere, Vector};

/// The seed of every scene.
pub const SEED: u64 = 0x5EED;
/// Radius range of the spheres and circles.
pub const RADIUS: (f32, f32) = (0.5, 1.5);
/// Largest speed, per frame.
pub const MAX_SPEED: f32 = 0.1;

/// Side of the cube (3D) or square (2D) that gives each object about two
/// overlapping neighbours.
pub fn side(dim: usize, n: usize) -> f32 {
    if dim == 3 {
        (n as f32 * 4.0 / 3.0 * std::f32::consts::PI * 9.0 / 2.0).cbrt()
    } else {
        (n as f32 * std::f32::consts::PI * (4.0 + 1.0 / 6.0) / 2.0).sqrt()
    }
}

/// A uniform direction: rejection sampling in the unit ball.
fn direction<V: Vector>(rng: &mut Pcg64) -> V {
    loop {
        let mut d = V::ZERO;
        for i in 0..V::DIM {
            d = d.with(i, rng.random_range(-1.0..=1.0));
        }
        let l = d.length_squared();
        if l > 1e-4 && l <= 1.0 {
            break d / l.sqrt();
        }
    }
}

fn point_in<V: Vector>(rng: &mut Pcg64, side: f32) -> V {
    let mut p = V::ZERO;
    for i in 0..V::DIM {
        p = p.with(i, rng.random_range(0.0..side));
    }
    p
}

/// N moving spheres (3D) or circles (2D), bouncing off the walls.
#[derive(Clone)]
pub struct Scene<V: Vector> {
    pub pos: Vec<V>,
    pub vel: Vec<V>,
    pub radius: Vec<f32>,
    pub side: f32,
}

impl<V: Vector> Scene<V> {
    /// The moving scene of N objects (the same in `benches/pairs.rs`).
    pub fn new(n: usize) -> Self {
        let mut rng = Pcg64::seed_from_u64(SEED);
        let mut s = Scene {
            pos: Vec::with_capacity(n),
            vel: Vec::with_capacity(n),
            radius: Vec::with_capacity(n),
            side: side(V::DIM, n),
        };
        for _ in 0..n {
            s.radius.push(rng.random_range(RADIUS.0..=RADIUS.1));
            s.pos.push(point_in(&mut rng, s.side));
            let dir: V = direction(&mut rng);
            s.vel.push(dir * rng.random_range(0.0..=MAX_SPEED));
        }
        s
    }

    pub fn len(&self) -> usize {
        self.pos.len()
    }

    /// The region every object's box stays in: the cube plus the largest
    /// radius (a sparti structure's world, so that none grows).
    pub fn world(&self) -> Aabb<V> {
        Aabb::new(
            V::splat(-RADIUS.1 - 0.01),
            V::splat(self.side + RADIUS.1 + 0.01),
        )
        .expect("finite")
    }

    #[inline]
    pub fn sphere(&self, i: usize) -> Sphere<V> {
        Sphere {
            center: self.pos[i],
            radius: self.radius[i],
        }
    }

    /// The exact test every implementation applies to its candidate pairs:
    /// sparti's own sphere-sphere (circle-circle) test.
    #[inline]
    pub fn overlap(&self, a: usize, b: usize) -> bool {
        self.sphere(a).intersects(&self.sphere(b))
    }

    /// Moves every object by its velocity, centres bouncing off the walls.
    /// Not timed.
    pub fn step(&mut self) {
        for i in 0..self.pos.len() {
            let mut p = self.pos[i] + self.vel[i];
            for axis in 0..V::DIM {
                let (x, v) = (p.get(axis), self.vel[i].get(axis));
                if x < 0.0 {
                    p = p.with(axis, -x);
                    self.vel[i] = self.vel[i].with(axis, -v);
                } else if x > self.side {
                    p = p.with(axis, 2.0 * self.side - x);
                    self.vel[i] = self.vel[i].with(axis, -v);
                }
            }
            self.pos[i] = p;
        }
    }
}

/// N static boxes for the bulk build: centres uniform in the pairs
/// workload's cube (or square) for this N, half extents uniform in
/// [0.25, 0.75] on each axis.
pub fn boxes<V: Vector>(n: usize) -> Vec<Aabb<V>> {
    let mut rng = Pcg64::seed_from_u64(SEED ^ 0xB0C5);
    let side = side(V::DIM, n);
    (0..n)
        .map(|_| {
            let c: V = point_in(&mut rng, side);
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

/// Random rays: origin uniform in the cube, uniform direction.
pub fn rays(n: usize, side: f32) -> Vec<Ray<Vec3>> {
    let mut rng = Pcg64::seed_from_u64(SEED ^ 0x4A75);
    (0..n)
        .map(|_| {
            let o: Vec3 = point_in(&mut rng, side);
            let d: Vec3 = direction(&mut rng);
            Ray::new(o, d).expect("unit direction")
        })
        .collect()
}

/// Cubes of side 8, centres uniform in the cube.
pub fn box_queries(n: usize, side: f32) -> Vec<Aabb<Vec3>> {
    let mut rng = Pcg64::seed_from_u64(SEED ^ 0xB0B0);
    (0..n)
        .map(|_| {
            let c: Vec3 = point_in(&mut rng, side);
            Aabb {
                min: c - Vec3::splat(4.0),
                max: c + Vec3::splat(4.0),
            }
        })
        .collect()
}

/// Far plane of the cameras.
pub const FAR: f32 = 50.0;

/// Camera frustums: eye uniform in the cube, random view direction,
/// 60 degree vertical field of view, aspect 16:9, near 0.1, far 50.
pub fn frustums(n: usize, side: f32) -> Vec<Frustum<Vec3>> {
    let mut rng = Pcg64::seed_from_u64(SEED ^ 0xF057);
    let proj = directx::perspective(60f32.to_radians(), 16.0 / 9.0, 0.1, FAR);
    (0..n)
        .map(|_| {
            let eye: Vec3 = point_in(&mut rng, side);
            let dir: Vec3 = direction(&mut rng);
            let up = if dir.y.abs() > 0.9 { Vec3::X } else { Vec3::Y };
            let view = view::look_to_mat4(eye, dir, up);
            Frustum::from_view_projection(proj * view).expect("regular camera")
        })
        .collect()
}

/// Frustum against a box given by its corners, with sparti's own test
/// (`Frustum::intersects_aabb`: the box is out when its positive vertex is
/// behind one plane), for peers whose nodes are not sparti boxes.
#[inline]
pub fn frustum_hits_box(f: &Frustum<Vec3>, min: Vec3, max: Vec3) -> bool {
    f.intersects_aabb(&Aabb { min, max })
}
