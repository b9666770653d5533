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

use sparti::Aabb;
use sparti::glam::{Vec2, Vec3};

use super::lane::{Body, Form, Lane, check_pairs, lane};
use super::render::{Canvas, DISC};
use super::{Demo, figures_table};
use crate::catalogue::{Config, Structure};
use sparti_scenes::discs::{self as scene, Disc};

/// The window, the discs' radii and speeds: the scene kit's.
pub use sparti_scenes::discs::{HEIGHT, RADIUS, SPEED, WIDTH};

/// Leaf side of the trees: 640 = 20 * 2^5, so the root is exactly 640x640
/// and the smallest cells are 20x20, under the article's 32x32.
pub const MIN_NODE_SIZE: f32 = 20.0;
/// The BSP splits a node while its largest side exceeds this (the
/// article's cells under 32x32: leaves of 20x30).
pub const BSP_MIN_DIMENSION: f32 = 32.0;
/// The lanes, in the order of the keys 1 to 5.
pub const STRUCTURES: [&str; 5] = ["quadtree", "loose-quadtree", "bsp", "octree", "brute"];

/// The bouncing discs demo.
pub struct Discs {
    discs: Vec<Disc>,
    lanes: Vec<Box<dyn Lane>>,
    frame: usize,
    seed: u64,
    contacts: (u64, usize),
    energy_start: f32,
}

impl Discs {
    /// `n` random discs (seeded), every structure built over the window.
    ///
    /// # Errors
    /// A structure's configuration was refused (a bug).
    pub fn new(n: usize, seed: u64) -> Result<Self, String> {
        let discs = scene::scatter(n, seed);
        let err = |e: sparti::Error| e.to_string();
        let window = Aabb::new(Vec2::ZERO, Vec2::new(WIDTH, HEIGHT)).map_err(err)?;
        let m = MIN_NODE_SIZE;
        // The root is anchored at the world's smallest corner, so with z
        // from -m/2 to m/2 the lowest z cells are [-m/2, m/2]: discs at
        // z = 0 narrower than the cells never straddle a z split plane and
        // the octree partitions the window like the quadtree.
        let half_z = (m / 2.0).max(RADIUS.1);
        let slab = Aabb::new(
            Vec3::new(0.0, 0.0, -half_z),
            Vec3::new(WIDTH, HEIGHT, half_z),
        )
        .map_err(err)?;
        let sized = |s: Structure, size: f32| Config::default_of(s).with_size(size);
        let lanes: Vec<Box<dyn Lane>> = vec![
            lane(sized(Structure::Orthtree, m), window)?,
            lane(sized(Structure::Loose, m), window)?,
            lane(sized(Structure::Bsp, BSP_MIN_DIMENSION), window)?,
            lane(sized(Structure::Orthtree, m), slab)?,
            lane(Config::Brute, window)?,
        ];
        debug_assert!(lanes.iter().map(|l| l.name()).eq(STRUCTURES));
        Ok(Self {
            energy_start: scene::energy(&discs),
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
        scene::step(&mut self.discs);
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
            scene::collide(&mut self.discs, a, b, normal.truncate());
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
            scene::energy(&self.discs)
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
