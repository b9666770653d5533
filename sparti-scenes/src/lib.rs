//! Seeded scenes for sparti's tests, benchmarks, command-line tool and
//! demos, written once so that every one of them sees the same objects
//! move the same way.
//!
//! - [`Moving`]: N objects in motion, in one of four [`Scenario`]s
//!   (`uniform`, `clustered`, `flat`, `bullets`), used by `sparti bench`,
//!   `sparti-bench`, its Criterion bench and sparti's examples.
//! - [`discs`]: the bouncing discs of `sparti demo discs`.
//! - [`queries`]: static boxes, rays, box queries and camera frustums for
//!   the query workloads.
//! - [`files`]: recorded scenes, the scene-file and query-file formats of
//!   the `sparti` tool and their replay through any structure.
//! - The random helpers ([`rng`], [`vec_in`], [`in_cube`], [`direction`],
//!   and [`XorShift`] for results pinned by a hash) the test
//!   suite's own scene recipes draw from.
//!
//! Every generator takes or fixes a seed: the same call gives the same
//! scene on every machine (rand_pcg's `Pcg64`, whose output is pinned by
//! its crate).
//!
//! ```
//! use sparti::glam::Vec3;
//! use sparti::{ObjectDesc, Octree, OrthtreeConfig, SpatialIndex};
//! use sparti_scenes::{Moving, Scenario};
//!
//! let mut scene = Moving::<Vec3>::new(Scenario::Uniform, 1_000);
//! let mut tree = Octree::with_config(OrthtreeConfig {
//!     world: Some(scene.world()),
//!     ..Default::default()
//! })
//! .expect("valid settings");
//! let handles: Vec<_> = (0..scene.len())
//!     .map(|i| tree.insert(ObjectDesc::new(scene.shape(i), i)).expect("inside the world"))
//!     .collect();
//! scene.step();
//! for (i, &h) in handles.iter().enumerate() {
//!     tree.update(h, scene.shape(i)).expect("still inside");
//! }
//! // About two touching neighbours per object, by construction.
//! let mut pairs = Vec::new();
//! tree.pairs(&mut pairs);
//! assert!(pairs.len() > 500);
//! ```

pub mod discs;
pub mod files;
mod moving;
pub mod queries;

pub use moving::{MAX_SPEED, Moving, RADIUS, SEED, Scenario, side};

use rand::{Rng as _, SeedableRng};
use sparti::Vector;

/// The random generator of every scene.
pub type Rng = rand_pcg::Pcg64;

/// A generator from a seed.
pub fn rng(seed: u64) -> Rng {
    Rng::seed_from_u64(seed)
}

/// A random vector with components in `[lo, hi)` (a component where `lo`
/// is not below `hi` is `lo`).
pub fn vec_in<V: Vector>(rng: &mut Rng, lo: V, hi: V) -> V {
    let mut v = V::ZERO;
    for i in 0..V::DIM {
        let (a, b) = (lo.get(i), hi.get(i));
        v = v.with(i, if a < b { rng.random_range(a..b) } else { a });
    }
    v
}

/// A random vector with every component in `[lo, hi)`: a point in a cube.
pub fn in_cube<V: Vector>(rng: &mut Rng, lo: f32, hi: f32) -> V {
    vec_in(rng, V::splat(lo), V::splat(hi))
}

/// A uniform random unit vector (rejection sampling in the unit ball).
pub fn direction<V: Vector>(rng: &mut Rng) -> V {
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

/// A tiny xorshift generator written out here, for results pinned by a
/// hash (the determinism test, the soak test): they then never depend on
/// another crate's algorithm.
///
/// # Example
/// ```
/// let mut r = sparti_scenes::XorShift(0x9E37_79B9_7F4A_7C15);
/// let x = r.next_unit();
/// assert!((0.0..1.0).contains(&x));
/// ```
#[derive(Clone, Debug)]
pub struct XorShift(pub u64);

impl XorShift {
    /// The next number, uniform in `[0, 1)` (24 bits).
    pub fn next_unit(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sparti::glam::{Vec2, Vec3};

    #[test]
    fn directions_are_unit_and_points_in_their_box() {
        let mut r = rng(7);
        for _ in 0..1000 {
            let d: Vec3 = direction(&mut r);
            assert!((d.length() - 1.0).abs() < 1e-5, "{d}");
            let p: Vec2 = vec_in(&mut r, Vec2::new(-1.0, 2.0), Vec2::new(1.0, 2.0));
            assert!((-1.0..1.0).contains(&p.x) && p.y == 2.0, "{p}");
        }
    }

    #[test]
    fn the_same_seed_gives_the_same_scene() {
        let a: Vec<Vec3> = (0..5).map(|_| direction(&mut rng(3))).collect();
        let mut r = rng(3);
        let b: Vec3 = direction(&mut r);
        assert_eq!(a[0], b);
        assert_ne!(direction::<Vec3>(&mut r), b);
    }
}
