//! `sparti demo discs`: the bouncing discs of the BSP article.
//!
//! N discs bounce inside a 640x480 window, off the walls and off each
//! other (two touching discs of equal mass exchange their velocity
//! components along the contact normal when they approach). The same scene
//! runs through the octree (discs as spheres at z = 0), the quadtree, the
//! loose quadtree, the BSP (split across the largest side down to cells
//! under 32x32, as in the article) and the brute force; every frame each
//! gets every disc's new bounds, `end_frame()` and a contact search, and
//! every structure's pairs must equal the brute force's.

use std::fmt::Write as _;

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use sparti::glam::{Vec2, Vec3};
use sparti::{
    Aabb, BruteForce, Bsp2, BspConfig, LooseConfig, LooseQuadtree, Octree, OrthtreeConfig,
    OutOfBounds, Quadtree,
};

use super::lane::{Body, Form, Lane, Runner, check_pairs};
use super::render::{Canvas, DISC};
use super::{Demo, figures_table};

/// Window width in pixels (and world units).
pub const WIDTH: f32 = 640.0;
/// Window height in pixels (and world units).
pub const HEIGHT: f32 = 480.0;
/// Disc radii are drawn from this range.
pub const RADIUS: (f32, f32) = (4.0, 10.0);
/// Disc speeds (pixels per frame) are drawn from this range.
pub const SPEED: (f32, f32) = (0.5, 3.0);
/// Leaf side of the trees: 640 = 20 * 2^5, so the root is exactly 640x640
/// and the smallest cells are 20x20, under the article's 32x32.
pub const MIN_NODE_SIZE: f32 = 20.0;
/// The BSP splits a node while its largest side exceeds this (the
/// article's cells under 32x32: leaves of 20x30).
pub const BSP_MIN_DIMENSION: f32 = 32.0;
/// The lanes, in the order of the keys 1 to 5.
pub const STRUCTURES: [&str; 5] = ["quadtree", "loose-quadtree", "bsp", "octree", "brute"];

/// A disc of the scene.
#[derive(Clone, Copy, Debug)]
struct Disc {
    pos: Vec2,
    vel: Vec2,
    radius: f32,
}

/// Random discs inside the window, not overlapping where room allows.
fn make_discs(n: usize, seed: u64) -> Vec<Disc> {
    let mut rng = Pcg64::seed_from_u64(seed);
    let mut discs: Vec<Disc> = Vec::with_capacity(n);
    for _ in 0..n {
        let radius = rng.random_range(RADIUS.0..RADIUS.1);
        let mut pos = Vec2::ZERO;
        for _ in 0..1000 {
            pos = Vec2::new(
                rng.random_range(radius..WIDTH - radius),
                rng.random_range(radius..HEIGHT - radius),
            );
            if discs
                .iter()
                .all(|d| d.pos.distance(pos) > d.radius + radius)
            {
                break;
            }
        }
        let angle = rng.random_range(0.0..std::f32::consts::TAU);
        let speed = rng.random_range(SPEED.0..SPEED.1);
        discs.push(Disc {
            pos,
            vel: Vec2::from_angle(angle) * speed,
            radius,
        });
    }
    discs
}

/// Moves every disc by its velocity and bounces it off the walls.
fn step_discs(discs: &mut [Disc]) {
    for d in discs {
        d.pos += d.vel;
        // A hair inside the walls: `WIDTH - r + r` may round above WIDTH,
        // and the trees refuse (OutOfBounds::Reject) what leaves the window.
        let margin = d.radius + 0.01;
        let (lo, hi) = (Vec2::splat(margin), Vec2::new(WIDTH, HEIGHT) - margin);
        for i in 0..2 {
            if d.pos[i] < lo[i] {
                d.pos[i] = lo[i];
                d.vel[i] = d.vel[i].abs();
            } else if d.pos[i] > hi[i] {
                d.pos[i] = hi[i];
                d.vel[i] = -d.vel[i].abs();
            }
        }
    }
}

/// Two touching discs of equal mass exchange their velocity components
/// along the contact normal, if they are approaching.
fn collide(discs: &mut [Disc], a: usize, b: usize, normal: Vec2) {
    let closing = (discs[b].vel - discs[a].vel).dot(normal);
    if closing < 0.0 {
        discs[a].vel += normal * closing;
        discs[b].vel -= normal * closing;
    }
}

/// The bouncing discs demo.
pub struct Discs {
    discs: Vec<Disc>,
    lanes: Vec<Box<dyn Lane>>,
    frame: usize,
    seed: u64,
    contacts: (u64, usize),
    energy_start: f32,
}

fn energy(d: &[Disc]) -> f32 {
    d.iter().map(|d| d.vel.length_squared()).sum::<f32>() / 2.0
}

impl Discs {
    /// `n` random discs (seeded), every structure built over the window.
    ///
    /// # Errors
    /// A structure's configuration was refused (a bug).
    pub fn new(n: usize, seed: u64) -> Result<Self, String> {
        let discs = make_discs(n, seed);
        let err = |e: sparti::Error| e.to_string();
        let window = Aabb::new(Vec2::ZERO, Vec2::new(WIDTH, HEIGHT)).map_err(err)?;
        let m = MIN_NODE_SIZE;
        // The root is anchored at the world's smallest corner, so with z
        // from -m/2 to m/2 the lowest z cells are [-m/2, m/2]: discs at
        // z = 0 narrower than the cells never straddle a z split plane and
        // the octree partitions the window like the quadtree.
        let half_z = (m / 2.0).max(RADIUS.1);
        let octree = Octree::with_config(OrthtreeConfig {
            world: Some(
                Aabb::new(
                    Vec3::new(0.0, 0.0, -half_z),
                    Vec3::new(WIDTH, HEIGHT, half_z),
                )
                .map_err(err)?,
            ),
            min_node_size: m,
            out_of_bounds: OutOfBounds::Reject,
        })
        .map_err(err)?;
        let quadtree = Quadtree::with_config(OrthtreeConfig {
            world: Some(window),
            min_node_size: m,
            out_of_bounds: OutOfBounds::Reject,
        })
        .map_err(err)?;
        let loose = LooseQuadtree::with_config(LooseConfig {
            world: Some(window),
            min_node_size: m,
            out_of_bounds: OutOfBounds::Reject,
            ..Default::default()
        })
        .map_err(err)?;
        let bsp = Bsp2::with_config(BspConfig {
            world: Some(window),
            min_dimension: BSP_MIN_DIMENSION,
            out_of_bounds: OutOfBounds::Reject,
            ..Default::default()
        })
        .map_err(err)?;
        let lanes: Vec<Box<dyn Lane>> = vec![
            Box::new(Runner::new(STRUCTURES[0], quadtree)),
            Box::new(Runner::new(STRUCTURES[1], loose)),
            Box::new(Runner::new(STRUCTURES[2], bsp)),
            Box::new(Runner::new(STRUCTURES[3], octree)),
            Box::new(Runner::new(STRUCTURES[4], BruteForce::<Vec2, usize>::new())),
        ];
        Ok(Self {
            energy_start: energy(&discs),
            discs,
            lanes,
            frame: 0,
            seed,
            contacts: (0, 0),
        })
    }

    fn bodies(&self) -> Vec<Body> {
        self.discs
            .iter()
            .enumerate()
            .map(|(id, d)| Body {
                id,
                centre: d.pos.extend(0.0),
                form: Form::Ball(d.radius),
                is_static: false,
            })
            .collect()
    }
}

impl Demo for Discs {
    fn name(&self) -> &'static str {
        "discs"
    }

    fn size(&self) -> (usize, usize) {
        (WIDTH as usize, HEIGHT as usize)
    }

    fn lanes(&self) -> &[Box<dyn Lane>] {
        &self.lanes
    }

    fn step(&mut self) -> Result<(), String> {
        step_discs(&mut self.discs);
        let bodies = self.bodies();
        for l in &mut self.lanes {
            l.frame(&bodies)?;
        }
        check_pairs(&self.lanes, self.frame)?;
        self.frame += 1;
        let brute = self.lanes.last().expect("brute");
        self.contacts.0 += brute.pairs().len() as u64;
        self.contacts.1 = self.contacts.1.max(brute.pairs().len());
        let mut touches = brute.touches();
        // In disc order, so the motion does not depend on the order in
        // which a structure reports its pairs.
        touches.sort_unstable_by_key(|&(a, b, _)| (a, b));
        for (a, b, normal) in touches {
            collide(&mut self.discs, a, b, normal.truncate());
        }
        Ok(())
    }

    fn draw(&self, lane: usize, canvas: &mut Canvas) {
        canvas.clear(super::render::BACKGROUND);
        for d in &self.discs {
            canvas.fill_disc(d.pos.x, d.pos.y, d.radius, DISC);
        }
        let l = &self.lanes[lane];
        let nodes = super::draw_nodes(canvas, &l.nodes(), 1.0);
        super::caption(canvas, l.name(), self.frame as u64, nodes);
    }

    fn report(&self) -> String {
        let n = self.discs.len();
        let frames = self.frame.max(1);
        let mut s = String::new();
        let _ = writeln!(
            s,
            "bouncing discs: {n} discs, radius [{}, {}), speed [{}, {}) px/frame, {WIDTH}x{HEIGHT}, {} frames, seed {}",
            RADIUS.0, RADIUS.1, SPEED.0, SPEED.1, self.frame, self.seed
        );
        let _ = writeln!(
            s,
            "trees: leaf cells {MIN_NODE_SIZE}x{MIN_NODE_SIZE}; bsp: split across the largest side while it exceeds {BSP_MIN_DIMENSION} (leaves 20x30)"
        );
        let _ = writeln!(
            s,
            "contacts per frame: mean {:.1}, max {}; kinetic energy {:.1} -> {:.1}\n",
            self.contacts.0 as f64 / frames as f64,
            self.contacts.1,
            self.energy_start,
            energy(&self.discs)
        );
        s.push_str(&figures_table(&self.lanes));
        let _ = writeln!(
            s,
            "\nPair tests count each unordered pair once, so the reference is N(N-1)/2 = {}. The article\n\
             divides by N(N-1) = {} but tests each pair from both sides, so its 3.2% compares with the\n\
             '%N(N-1)/2' column; '%N(N-1)' divides the same tests by N(N-1) and is half of it.\n\
             'nodes<=5': share of nodes holding 5 objects or fewer (article: over 99%; the brute\n\
             force is one node holding all). 'nodes', 'depth', 'KiB' (memory held): last frame.\n\
             'us/frame': updates + end_frame() + contacts (validate() is not timed). Every\n\
             structure's pairs equal the brute force's on all {} frames.",
            n * (n - 1) / 2,
            n * (n - 1),
            self.frame
        );
        s
    }
}
