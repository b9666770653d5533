//! N objects in motion, in one of four scenarios.

use rand::Rng as _;
use sparti::{Aabb, Shape, Sphere, Vector};

use crate::{Rng, direction, rng, vec_in};

/// The seed of every moving scene (see [`Moving::with_seed`] for others).
pub const SEED: u64 = 0x5EED;
/// Radius range of the moving spheres (circles).
pub const RADIUS: (f32, f32) = (0.5, 1.5);
/// Largest speed of the moving spheres, per frame.
pub const MAX_SPEED: f32 = 0.1;

/// How a [`Moving`] scene places and moves its objects.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Scenario {
    /// N spheres (circles) of radius 0.5 to 1.5, spread uniformly in a cube
    /// (square) sized so that each touches about two others (see [`side`]),
    /// moving up to 0.1 per frame and bouncing off the walls.
    Uniform,
    /// The same objects in 8 groups (crowds, squads) in a world twice as
    /// wide: a group's box holds its objects twice as densely as the
    /// uniform scenario, more so towards its centre (each coordinate the
    /// mean of three uniform ones); objects wander in their group's box
    /// while the groups drift across the world.
    Clustered,
    /// 2.5D: the uniform density in a slab 4 units thick (3D: wide in x and
    /// y, thin in z; 2D: a long corridor, thin in y).
    Flat,
    /// A fifth of the objects are static boxes (half extents 0.5 to 2)
    /// covering about a tenth of the world; the rest are bullets of radius
    /// 0.1 moving 1 to 3 units per frame, wrapping around the world.
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

/// The side of the cube (3D) or square (2D) in which `n` spheres of the
/// uniform scenario touch about two others each.
pub fn side(dim: usize, n: usize) -> f32 {
    // Written out rather than through `per_object`: the same rounding as
    // the figures of earlier benchmark runs.
    if dim == 3 {
        (n as f32 * 4.0 / 3.0 * std::f32::consts::PI * 9.0 / 2.0).cbrt()
    } else {
        (n as f32 * std::f32::consts::PI * (4.0 + 1.0 / 6.0) / 2.0).sqrt()
    }
}

/// Volume (area) per object giving about two overlapping neighbours to
/// spheres (circles) of radius 0.5 to 1.5.
fn per_object(dim: usize) -> f32 {
    if dim == 3 {
        4.0 / 3.0 * std::f32::consts::PI * 9.0 / 2.0
    } else {
        std::f32::consts::PI * (4.0 + 1.0 / 6.0) / 2.0
    }
}

/// How an object moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Motion {
    /// Bounces off the walls of its box.
    Bounce,
    /// Wraps around the world.
    Wrap,
    /// Never moves.
    Static,
}

/// A seeded scene of objects in motion: every call of [`Moving::step`]
/// moves every moving object by its velocity.
///
/// # Example
/// ```
/// use sparti::glam::Vec2;
/// use sparti_scenes::{Moving, Scenario};
///
/// let mut scene = Moving::<Vec2>::new(Scenario::Bullets, 500);
/// assert_eq!(scene.len(), 500);
/// assert!(scene.is_static(0)); // the obstacles come first
/// let before = scene.shape(499);
/// scene.step();
/// assert_ne!(scene.shape(499), before);
/// assert!(scene.world().contains(&scene.shape(499).aabb()));
/// ```
#[derive(Clone, Debug)]
pub struct Moving<V: Vector> {
    /// Each object's centre.
    pos: Vec<V>,
    /// Each object's position relative to its group's centre.
    rel: Vec<V>,
    vel: Vec<V>,
    /// The bounding sphere's radius (the sphere's own for spheres).
    radius: Vec<f32>,
    /// Half extents of the boxes (zero for spheres).
    half: Vec<V>,
    motion: Vec<Motion>,
    /// Each object's group (all in group 0 but for the clustered scenario).
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
    side: f32,
}

impl<V: Vector> Moving<V> {
    /// The scenario with `n` objects (at least 1), from [`SEED`].
    pub fn new(scenario: Scenario, n: usize) -> Self {
        Self::with_seed(scenario, n, SEED)
    }

    /// The scenario with `n` objects (at least 1), from `seed`.
    pub fn with_seed(scenario: Scenario, n: usize, seed: u64) -> Self {
        let n = n.max(1);
        let d = V::DIM;
        let mut rng = rng(seed);
        let side = side(d, n);
        let mut s = Moving {
            pos: Vec::with_capacity(n),
            rel: Vec::with_capacity(n),
            vel: Vec::with_capacity(n),
            radius: Vec::with_capacity(n),
            half: Vec::with_capacity(n),
            motion: Vec::with_capacity(n),
            group: Vec::with_capacity(n),
            centres: vec![V::ZERO],
            centre_vel: vec![V::ZERO],
            lo: V::ZERO,
            hi: V::splat(side),
            centre_lo: V::ZERO,
            centre_hi: V::ZERO,
            world: Aabb::new(V::ZERO, V::ONE).expect("finite"),
            side,
        };
        let mut margin = RADIUS.1;
        match scenario {
            Scenario::Uniform | Scenario::Flat => {
                if scenario == Scenario::Flat {
                    const THICKNESS: f32 = 4.0;
                    let wide = (n as f32 * per_object(d) / THICKNESS).powf(1.0 / (d - 1) as f32);
                    s.hi = (0..d).fold(V::ZERO, |v, i| {
                        v.with(i, if i == d - 1 { THICKNESS } else { wide })
                    });
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
                    s.centres.push(vec_in(&mut rng, s.centre_lo, s.centre_hi));
                    let speed = rng.random_range(0.0..0.05);
                    s.centre_vel.push(direction::<V>(&mut rng) * speed);
                }
                for i in 0..n {
                    s.moving_sphere(&mut rng, i % GROUPS);
                    // Denser towards the centre: the mean of three uniforms.
                    let p = (0..3).fold(V::ZERO, |a, _| a + vec_in(&mut rng, s.lo, s.hi)) / 3.0;
                    s.rel[i] = p;
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
                        let he = (0..d).fold(V::ZERO, |v, a| v.with(a, rng.random_range(0.5..2.0)));
                        s.rel.push(vec_in(&mut rng, s.lo, s.hi));
                        s.vel.push(V::ZERO);
                        s.radius.push(he.length());
                        s.half.push(he);
                        s.motion.push(Motion::Static);
                    } else {
                        s.rel.push(vec_in(&mut rng, s.lo, s.hi));
                        let speed = rng.random_range(1.0..3.0);
                        s.vel.push(direction::<V>(&mut rng) * speed);
                        s.radius.push(0.1);
                        s.half.push(V::ZERO);
                        s.motion.push(Motion::Wrap);
                    }
                    s.group.push(0);
                }
            }
        }
        let (lo, hi) = (s.centre_lo + s.lo, s.centre_hi + s.hi);
        let (margin, hair) = (V::splat(margin), V::splat(0.01));
        s.world = Aabb::new(lo - margin - hair, hi + margin + hair).expect("finite");
        s.pos = (0..n).map(|i| s.centres[s.group[i]] + s.rel[i]).collect();
        s
    }

    /// A moving sphere: radius, position, direction, speed, in this order.
    fn moving_sphere(&mut self, rng: &mut Rng, group: usize) {
        self.radius.push(rng.random_range(RADIUS.0..=RADIUS.1));
        self.rel.push(vec_in(rng, self.lo, self.hi));
        let dir: V = direction(rng);
        self.vel.push(dir * rng.random_range(0.0..=MAX_SPEED));
        self.half.push(V::ZERO);
        self.motion.push(Motion::Bounce);
        self.group.push(group);
    }

    /// Number of objects.
    pub fn len(&self) -> usize {
        self.pos.len()
    }

    /// True when there are no objects (never: at least one is made).
    pub fn is_empty(&self) -> bool {
        self.pos.is_empty()
    }

    /// A region every object's bounds stay in, to give the structures as
    /// their world (none of them then has to grow).
    pub fn world(&self) -> Aabb<V> {
        self.world
    }

    /// The side of the uniform scenario's cube for this many objects
    /// ([`side`]): the region the query workloads aim at.
    pub fn side(&self) -> f32 {
        self.side
    }

    /// Object `i`'s centre.
    #[inline]
    pub fn center(&self, i: usize) -> V {
        self.pos[i]
    }

    /// Object `i`'s bounding sphere: the object itself for the spheres of
    /// every scenario but the bullets' obstacles (boxes, whose bounding
    /// sphere may reach past [`Moving::world`]).
    #[inline]
    pub fn sphere(&self, i: usize) -> Sphere<V> {
        Sphere {
            center: self.pos[i],
            radius: self.radius[i],
        }
    }

    /// Object `i`'s shape: a sphere, or a box for the bullets' obstacles.
    #[inline]
    pub fn shape(&self, i: usize) -> Shape<V> {
        if self.motion[i] == Motion::Static {
            Shape::cuboid(self.pos[i], self.half[i])
        } else {
            Shape::sphere(self.pos[i], self.radius[i])
        }
    }

    /// Whether object `i` never moves (the bullets' obstacles).
    #[inline]
    pub fn is_static(&self, i: usize) -> bool {
        self.motion[i] == Motion::Static
    }

    /// Moves every moving object by its velocity (and every group by its
    /// own), bouncing off the walls of its box or wrapping around it.
    pub fn step(&mut self) {
        for g in 0..self.centres.len() {
            (self.centres[g], self.centre_vel[g]) = bounce(
                self.centres[g],
                self.centre_vel[g],
                self.centre_lo,
                self.centre_hi,
            );
        }
        for i in 0..self.pos.len() {
            match self.motion[i] {
                Motion::Static => continue,
                Motion::Bounce => {
                    (self.rel[i], self.vel[i]) = bounce(self.rel[i], self.vel[i], self.lo, self.hi);
                }
                Motion::Wrap => {
                    let (p, v) = (self.rel[i], self.vel[i]);
                    self.rel[i] = (0..V::DIM).fold(p, |p, a| {
                        let (lo, hi) = (self.lo.get(a), self.hi.get(a));
                        let mut x = p.get(a) + v.get(a);
                        if x < lo {
                            x += hi - lo;
                        } else if x > hi {
                            x -= hi - lo;
                        }
                        p.with(a, x.clamp(lo, hi))
                    });
                }
            }
            self.pos[i] = self.centres[self.group[i]] + self.rel[i];
        }
    }
}

/// Moves `p` by `v`, reflected into `[lo, hi]` on each axis (the velocity
/// reversed on the axes that hit a wall).
fn bounce<V: Vector>(mut p: V, mut v: V, lo: V, hi: V) -> (V, V) {
    for a in 0..V::DIM {
        let (x, w, lo, hi) = (p.get(a) + v.get(a), v.get(a), lo.get(a), hi.get(a));
        let (x, w) = if x < lo {
            ((2.0 * lo - x).min(hi), -w)
        } else if x > hi {
            ((2.0 * hi - x).max(lo), -w)
        } else {
            (x, w)
        };
        p = p.with(a, x);
        v = v.with(a, w);
    }
    (p, v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sparti::glam::{Vec2, Vec3};

    fn stays_inside<V: Vector>(scenario: Scenario) {
        let mut s = Moving::<V>::new(scenario, 500);
        let world = s.world();
        let start: Vec<Shape<V>> = (0..s.len()).map(|i| s.shape(i)).collect();
        for frame in 0..40 {
            for i in 0..s.len() {
                let b = s.shape(i).aabb();
                assert!(
                    world.min.all_le(b.min) && b.max.all_le(world.max),
                    "{scenario:?} {}D frame {frame}: {b:?} outside {world:?}",
                    V::DIM
                );
                assert!(s.sphere(i).aabb().min.all_le(b.min), "bounding sphere");
            }
            s.step();
        }
        for (i, before) in start.iter().enumerate() {
            assert_eq!(
                s.is_static(i),
                s.shape(i) == *before,
                "{scenario:?} object {i}"
            );
        }
    }

    #[test]
    fn objects_stay_in_the_world_and_only_the_static_ones_stay_put() {
        for sc in Scenario::ALL {
            stays_inside::<Vec2>(sc);
            stays_inside::<Vec3>(sc);
        }
    }

    #[test]
    fn each_sphere_touches_about_two_others_in_the_uniform_scenario() {
        let s = Moving::<Vec3>::new(Scenario::Uniform, 2_000);
        let mut touching = 0;
        for a in 0..s.len() {
            for b in a + 1..s.len() {
                touching += usize::from(s.sphere(a).intersects(&s.sphere(b)));
            }
        }
        let per_object = 2.0 * touching as f32 / s.len() as f32;
        assert!((1.5..2.5).contains(&per_object), "{per_object}");
    }
}
