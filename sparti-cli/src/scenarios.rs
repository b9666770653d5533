//! The built-in workloads of `sparti bench`, in 2D and 3D, each a
//! [`Source`] of frames made from a fixed seed (every structure sees the
//! same objects move the same way).
//!
//! - `uniform`: N spheres (circles) of radius 0.5 to 1.5, spread uniformly
//!   in a cube (square) sized so that each touches about two others,
//!   moving up to 0.1 per frame and bouncing off the walls (the Criterion
//!   bench's workload, `sparti-bench/benches/pairs.rs`).
//! - `clustered`: the same objects in 8 groups (crowds, squads) in a world
//!   twice as wide; a group's box holds its objects twice as densely as the
//!   uniform scenario, more so towards its centre (each coordinate the mean
//!   of three uniform ones); objects wander in their group's box while the
//!   groups drift across the world.
//! - `flat` (2.5D): the uniform density in a slab 4 units thick (3D: wide in
//!   x and y, thin in z; 2D: a long corridor, thin in y).
//! - `bullets`: a fifth of the objects are static boxes (half extents 0.5
//!   to 2) covering about a tenth of the world; the rest are bullets of
//!   radius 0.1 moving 1 to 3 units per frame, wrapping around the world.
//!
//! Frame 0 inserts every object; every later frame updates every moving
//! object once.

use sparti::{Aabb, Shape, Vector};

use crate::measure::{Op, Source};

/// The kinds of built-in workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Scenario {
    /// Uniformly spread moving objects.
    Uniform,
    /// Moving objects in drifting groups.
    Clustered,
    /// A thin slab or corridor (2.5D).
    Flat,
    /// Fast small objects among static obstacles.
    Bullets,
}

impl Scenario {
    /// Every scenario.
    pub const ALL: [Scenario; 4] = [
        Scenario::Uniform,
        Scenario::Clustered,
        Scenario::Flat,
        Scenario::Bullets,
    ];

    /// The scenario's name in tables and file names.
    pub fn name(self) -> &'static str {
        match self {
            Scenario::Uniform => "uniform",
            Scenario::Clustered => "clustered",
            Scenario::Flat => "flat",
            Scenario::Bullets => "bullets",
        }
    }
}

/// A small deterministic generator (splitmix64).
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[lo, hi)`.
    pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
        let unit = (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32;
        lo + (hi - lo) * unit
    }

    /// A uniform random direction times a length.
    fn direction<V: Vector>(&mut self, length: f32) -> V {
        loop {
            let d = (0..V::DIM).fold(V::ZERO, |d, i| d.with(i, self.range(-1.0, 1.0)));
            let l = d.length_squared();
            if l > 1e-4 && l <= 1.0 {
                return d * (length / l.sqrt());
            }
        }
    }

    /// A point uniform in the box `[lo, hi)`.
    fn point<V: Vector>(&mut self, lo: V, hi: V) -> V {
        (0..V::DIM).fold(V::ZERO, |p, i| p.with(i, self.range(lo.get(i), hi.get(i))))
    }
}

const SEED: u64 = 0x5EED_5EED;

/// How an object moves.
#[derive(Clone, Copy, Debug)]
enum Motion {
    /// Bounces off the walls of its box.
    Bounce,
    /// Wraps around the world.
    Wrap,
    /// Never moves.
    Static,
}

/// A built-in workload in motion.
#[derive(Clone, Debug)]
pub struct Synthetic<V: Vector> {
    /// Position of each object (relative to its group's centre when grouped).
    pos: Vec<V>,
    vel: Vec<V>,
    /// The shape at the origin (sphere radius or box half extents).
    shapes: Vec<Shape<V>>,
    motion: Vec<Motion>,
    /// Each object's group, for the clustered scenario.
    group: Vec<usize>,
    /// Group centres and velocities (one group with a fixed zero centre
    /// otherwise).
    centres: Vec<V>,
    centre_vel: Vec<V>,
    /// The box positions stay in (relative to the group's centre).
    lo: V,
    hi: V,
    /// The box group centres stay in.
    centre_lo: V,
    centre_hi: V,
    /// A region every object's bounds stay in.
    world: Aabb<V>,
    started: bool,
}

fn vec_from<V: Vector>(mut f: impl FnMut(usize) -> f32) -> V {
    (0..V::DIM).fold(V::ZERO, |v, i| v.with(i, f(i)))
}

impl<V: Vector> Synthetic<V> {
    /// The scenario with `n` objects (at least 1).
    pub fn new(scenario: Scenario, n: usize) -> Self {
        let n = n.max(1);
        let d = V::DIM;
        let mut rng = Rng::new(SEED ^ (n as u64) << 8 ^ scenario as u64);
        let nf = n as f32;
        // Volume (area) per object giving about two overlapping neighbours.
        let per_object = if d == 3 {
            4.0 / 3.0 * std::f32::consts::PI * 9.0 / 2.0
        } else {
            std::f32::consts::PI * (4.0 + 1.0 / 6.0) / 2.0
        };
        let side = (nf * per_object).powf(1.0 / d as f32);
        let mut s = Synthetic {
            pos: Vec::with_capacity(n),
            vel: Vec::with_capacity(n),
            shapes: Vec::with_capacity(n),
            motion: Vec::with_capacity(n),
            group: Vec::with_capacity(n),
            centres: vec![V::ZERO],
            centre_vel: vec![V::ZERO],
            lo: V::ZERO,
            hi: V::splat(side),
            centre_lo: V::ZERO,
            centre_hi: V::ZERO,
            world: Aabb::new(V::ZERO, V::ONE).expect("finite"),
            started: false,
        };
        let mut margin = 1.5f32;
        match scenario {
            Scenario::Uniform | Scenario::Flat => {
                if scenario == Scenario::Flat {
                    const THICKNESS: f32 = 4.0;
                    let wide = (nf * per_object / THICKNESS).powf(1.0 / (d - 1) as f32);
                    s.hi = vec_from(|i| if i == d - 1 { THICKNESS } else { wide });
                }
                for _ in 0..n {
                    s.moving_sphere(&mut rng, 0);
                }
            }
            Scenario::Clustered => {
                const GROUPS: usize = 8;
                // Objects per group in a box holding them twice as densely.
                let half = side / (2.0 * (2.0 * GROUPS as f32).powf(1.0 / d as f32));
                s.lo = V::splat(-half);
                s.hi = V::splat(half);
                s.centre_lo = V::splat(half);
                s.centre_hi = V::splat(2.0 * side - half);
                s.centres.clear();
                s.centre_vel.clear();
                for _ in 0..GROUPS {
                    s.centres.push(rng.point(s.centre_lo, s.centre_hi));
                    let speed = rng.range(0.0, 0.05);
                    s.centre_vel.push(rng.direction(speed));
                }
                for i in 0..n {
                    s.moving_sphere(&mut rng, i % GROUPS);
                    // Denser towards the centre: the mean of three uniforms.
                    let p = (0..3).fold(V::ZERO, |a, _| a + rng.point(s.lo, s.hi)) / 3.0;
                    s.pos[i] = p;
                }
            }
            Scenario::Bullets => {
                let obstacles = n / 5;
                let mean_volume = 2.5f32.powi(d as i32);
                let side = (obstacles.max(1) as f32 * mean_volume / 0.1).powf(1.0 / d as f32);
                s.hi = V::splat(side);
                margin = 2.0;
                for i in 0..n {
                    if i < obstacles {
                        let he: V = vec_from(|_| rng.range(0.5, 2.0));
                        s.pos.push(rng.point(s.lo, s.hi));
                        s.vel.push(V::ZERO);
                        s.shapes.push(Shape::cuboid(V::ZERO, he));
                        s.motion.push(Motion::Static);
                    } else {
                        s.pos.push(rng.point(s.lo, s.hi));
                        let speed = rng.range(1.0, 3.0);
                        s.vel.push(rng.direction(speed));
                        s.shapes.push(Shape::sphere(V::ZERO, 0.1));
                        s.motion.push(Motion::Wrap);
                    }
                    s.group.push(0);
                }
            }
        }
        let (lo, hi) = (s.centre_lo + s.lo, s.centre_hi + s.hi);
        s.world =
            Aabb::new(lo - V::splat(margin + 0.01), hi + V::splat(margin + 0.01)).expect("finite");
        s
    }

    fn moving_sphere(&mut self, rng: &mut Rng, group: usize) {
        let r = rng.range(0.5, 1.5);
        self.pos.push(rng.point(self.lo, self.hi));
        let speed = rng.range(0.0, 0.1);
        self.vel.push(rng.direction(speed));
        self.shapes.push(Shape::sphere(V::ZERO, r));
        self.motion.push(Motion::Bounce);
        self.group.push(group);
    }

    /// A region every object's bounds stay in, to give the structures as
    /// their world.
    pub fn world(&self) -> Aabb<V> {
        self.world
    }

    /// Number of objects.
    pub fn len(&self) -> usize {
        self.pos.len()
    }

    /// True when there are no objects (never: at least one is made).
    pub fn is_empty(&self) -> bool {
        self.pos.is_empty()
    }

    fn shape(&self, i: usize) -> Shape<V> {
        let c = self.centres[self.group[i]] + self.pos[i];
        match self.shapes[i] {
            Shape::Sphere(s) => Shape::sphere(c, s.radius),
            Shape::Box(b) => Shape::cuboid(c, (b.max - b.min) * 0.5),
        }
    }
}

/// Reflects `x` moving at `v` into `[lo, hi]`.
fn bounce(x: f32, v: f32, lo: f32, hi: f32) -> (f32, f32) {
    if x < lo {
        ((2.0 * lo - x).min(hi), -v)
    } else if x > hi {
        ((2.0 * hi - x).max(lo), -v)
    } else {
        (x, v)
    }
}

impl<V: Vector> Source<V> for Synthetic<V> {
    fn next_frame(&mut self, ops: &mut Vec<Op<V>>) {
        ops.clear();
        if !self.started {
            self.started = true;
            for i in 0..self.pos.len() {
                ops.push(Op::Insert {
                    slot: i as u32,
                    shape: self.shape(i),
                    layer: 1,
                    mask: u32::MAX,
                    is_static: matches!(self.motion[i], Motion::Static),
                    line: 0,
                });
            }
            return;
        }
        for g in 0..self.centres.len() {
            let (mut c, mut v) = (self.centres[g], self.centre_vel[g]);
            for a in 0..V::DIM {
                let (x, w) = bounce(
                    c.get(a) + v.get(a),
                    v.get(a),
                    self.centre_lo.get(a),
                    self.centre_hi.get(a),
                );
                c = c.with(a, x);
                v = v.with(a, w);
            }
            self.centres[g] = c;
            self.centre_vel[g] = v;
        }
        for i in 0..self.pos.len() {
            let (mut p, mut v) = (self.pos[i], self.vel[i]);
            match self.motion[i] {
                // Static objects never move (only ungrouped workloads have them).
                Motion::Static => continue,
                Motion::Bounce => {
                    for a in 0..V::DIM {
                        let (x, w) = bounce(
                            p.get(a) + v.get(a),
                            v.get(a),
                            self.lo.get(a),
                            self.hi.get(a),
                        );
                        p = p.with(a, x);
                        v = v.with(a, w);
                    }
                }
                Motion::Wrap => {
                    for a in 0..V::DIM {
                        let (lo, hi) = (self.lo.get(a), self.hi.get(a));
                        let mut x = p.get(a) + v.get(a);
                        if x < lo {
                            x += hi - lo;
                        } else if x > hi {
                            x -= hi - lo;
                        }
                        p = p.with(a, x.clamp(lo, hi));
                    }
                }
            }
            self.pos[i] = p;
            self.vel[i] = v;
            ops.push(Op::Update {
                slot: i as u32,
                shape: self.shape(i),
                line: 0,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sparti::glam::{Vec2, Vec3};

    fn stays_inside<V: Vector>(scenario: Scenario) {
        let mut s = Synthetic::<V>::new(scenario, 500);
        let world = s.world();
        let mut ops = Vec::new();
        let mut inserted = 0;
        for frame in 0..40 {
            s.next_frame(&mut ops);
            for op in &ops {
                match op {
                    Op::Insert { shape, .. } | Op::Update { shape, .. } => {
                        let b = shape.aabb();
                        assert!(
                            world.min.all_le(b.min) && b.max.all_le(world.max),
                            "{scenario:?} {}D frame {frame}: {b:?} outside {world:?}",
                            V::DIM
                        );
                        inserted += usize::from(matches!(op, Op::Insert { .. }));
                    }
                    Op::Remove { .. } => panic!("no removals"),
                }
            }
        }
        assert_eq!(inserted, 500);
    }

    #[test]
    fn objects_stay_in_the_world() {
        for sc in Scenario::ALL {
            stays_inside::<Vec2>(sc);
            stays_inside::<Vec3>(sc);
        }
    }
}
