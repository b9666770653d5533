//! `sparti demo bullets`: a machine gun's stream of fast bullets
//! crossing a 3D world of static obstacles, showing lazy pruning.
//!
//! The world is 320 x 240 x 240 units. A gun at the left wall fires one
//! bullet per frame along +x, its aim sweeping slowly up and down and left
//! and right with a little jitter; a bullet flies straight at 6 units per
//! frame and disappears when it touches an obstacle or leaves the world.
//! The bullets keep crossing the same cells, so an octree that pruned an
//! empty leaf at once would rebuild it a few frames later: with lazy pruning an empty
//! leaf lives 8 frames, and a leaf reused before it dies lives twice as
//! long (up to 64), so the hot cells along the stream stay allocated.
//!
//! The top-down picture projects onto (x, y), 2 pixels per unit:
//! obstacles grey, bullets red, node outlines (of every depth in z) cyan.

use std::fmt::Write as _;

use rand::Rng as _;
use sparti::Aabb;
use sparti::glam::Vec3;
use sparti_scenes::Rng;

use super::lane::{Body, Form, Lane, check_pairs, lane};
use super::render::{BACKGROUND, BULLET, Canvas, OBSTACLE};
use super::{Demo, churn_table, figures_table};
use crate::catalogue::{Config, Structure};

/// The world's far corner (the near one is the origin).
pub const WORLD: Vec3 = Vec3::new(320.0, 240.0, 240.0);
/// Pixels per world unit in the top-down picture.
pub const SCALE: f32 = 2.0;
/// Bullet speed, units per frame.
pub const SPEED: f32 = 6.0;
/// Bullet radius.
pub const BULLET_RADIUS: f32 = 0.5;
/// Static obstacles in the world.
pub const OBSTACLES: usize = 24;
/// Leaf side of the octrees: 320 = 5 * 2^6.
pub const MIN_NODE_SIZE: f32 = 5.0;
/// The lanes, in the order of the keys 1 to 4.
pub const STRUCTURES: [&str; 4] = ["octree", "loose-octree", "bsp", "brute"];

/// A bullet in flight.
#[derive(Clone, Copy, Debug)]
struct Bullet {
    id: usize,
    pos: Vec3,
    vel: Vec3,
}

/// The bullets demo.
pub struct Bullets {
    obstacles: Vec<Body>,
    bullets: Vec<Bullet>,
    next_id: usize,
    rng: Rng,
    lanes: Vec<Box<dyn Lane>>,
    frame: usize,
    seed: u64,
    fired: usize,
    hits: usize,
    in_flight: u64,
    /// Per-interval lines for the first lane: (frame, bullets, nodes,
    /// idle, created, pruned).
    log: Vec<String>,
    last_log: (u64, u64, u64),
}

impl Bullets {
    /// The obstacles (seeded) and every structure over the world.
    ///
    /// # Errors
    /// A structure's configuration was refused (a bug).
    pub fn new(seed: u64) -> Result<Self, String> {
        let mut rng = sparti_scenes::rng(seed);
        let obstacles: Vec<Body> = (0..OBSTACLES)
            .map(|id| {
                let half = Vec3::new(
                    rng.random_range(3.0..14.0),
                    rng.random_range(3.0..14.0),
                    rng.random_range(3.0..14.0),
                );
                let centre = Vec3::new(
                    rng.random_range(80.0..WORLD.x - 20.0),
                    rng.random_range(half.y..WORLD.y - half.y),
                    rng.random_range(half.z..WORLD.z - half.z),
                );
                Body {
                    id,
                    centre,
                    form: Form::Block(half),
                    is_static: true,
                }
            })
            .collect();
        let err = |e: sparti::Error| e.to_string();
        let world = Aabb::new(Vec3::ZERO, WORLD).map_err(err)?;
        let sized = |s: Structure, size: f32| Config::default_of(s).with_size(size);
        let lanes: Vec<Box<dyn Lane>> = vec![
            lane(sized(Structure::Orthtree, MIN_NODE_SIZE), world)?,
            lane(sized(Structure::Loose, MIN_NODE_SIZE), world)?,
            lane(sized(Structure::Bsp, 2.0 * MIN_NODE_SIZE), world)?,
            lane(Config::Brute, world)?,
        ];
        debug_assert!(lanes.iter().map(|l| l.name()).eq(STRUCTURES));
        Ok(Self {
            next_id: obstacles.len(),
            obstacles,
            bullets: Vec::new(),
            rng,
            lanes,
            frame: 0,
            seed,
            fired: 0,
            hits: 0,
            in_flight: 0,
            log: Vec::new(),
            last_log: (0, 0, 0),
        })
    }

    /// Moves the bullets, drops those leaving the world, fires one.
    fn advance(&mut self) {
        let r = BULLET_RADIUS + 0.01;
        for b in &mut self.bullets {
            b.pos += b.vel;
        }
        self.bullets.retain(|b| {
            b.pos.cmpge(Vec3::splat(r)).all() && b.pos.cmple(WORLD - Vec3::splat(r)).all()
        });
        let t = self.frame as f32;
        let yaw = 0.35 * (t * 0.013).sin() + self.rng.random_range(-0.02..0.02);
        let pitch = 0.25 * (t * 0.021).sin() + self.rng.random_range(-0.02..0.02);
        let dir = Vec3::new(
            yaw.cos() * pitch.cos(),
            yaw.sin() * pitch.cos(),
            pitch.sin(),
        );
        self.bullets.push(Bullet {
            id: self.next_id,
            pos: Vec3::new(4.0, WORLD.y / 2.0, WORLD.z / 2.0),
            vel: dir * SPEED,
        });
        self.next_id += 1;
        self.fired += 1;
    }

    fn bodies(&self) -> Vec<Body> {
        let mut v = self.obstacles.clone();
        v.extend(self.bullets.iter().map(|b| Body {
            id: b.id,
            centre: b.pos,
            form: Form::Ball(BULLET_RADIUS),
            is_static: false,
        }));
        v
    }
}

impl Demo for Bullets {
    fn name(&self) -> &'static str {
        "bullets"
    }

    fn size(&self) -> (usize, usize) {
        ((WORLD.x * SCALE) as usize, (WORLD.y * SCALE) as usize)
    }

    fn lanes(&self) -> &[Box<dyn Lane>] {
        &self.lanes
    }

    fn step(&mut self) -> Result<(), String> {
        self.advance();
        let bodies = self.bodies();
        for l in &mut self.lanes {
            l.frame(&bodies)?;
        }
        check_pairs(&self.lanes, self.frame)?;
        self.frame += 1;
        self.in_flight += self.bullets.len() as u64;
        // A bullet touching an obstacle is spent.
        let first_bullet = self.obstacles.len();
        let brute = self.lanes.last().expect("brute");
        let spent: std::collections::HashSet<usize> = brute
            .pairs()
            .iter()
            .flat_map(|&(a, b)| [a, b])
            .filter(|&id| id >= first_bullet)
            .collect();
        self.hits += spent.len();
        self.bullets.retain(|b| !spent.contains(&b.id));
        if self.frame.is_multiple_of(25) {
            let f = self.lanes[0].figures();
            let (c, p, i) = (f.created, f.pruned, f.idle);
            self.log.push(format!(
                "{:>6} {:>8} {:>6} {:>10.1} {:>8} {:>7}",
                self.frame,
                self.bullets.len(),
                f.last_nodes,
                (i - self.last_log.2) as f64 / 25.0,
                c - self.last_log.0,
                p - self.last_log.1,
            ));
            self.last_log = (c, p, i);
        }
        Ok(())
    }

    fn draw(&self, lane: usize, canvas: &mut Canvas) {
        canvas.clear(BACKGROUND);
        let s = SCALE;
        let mut obstacles = self.obstacles.clone();
        // Lower ones first, so the top-down view shows the highest.
        obstacles.sort_by(|a, b| a.centre.z.total_cmp(&b.centre.z));
        for o in &obstacles {
            if let Form::Block(h) = o.form {
                let (lo, hi) = (o.centre - h, o.centre + h);
                canvas.fill_rect(lo.x * s, lo.y * s, hi.x * s, hi.y * s, OBSTACLE);
            }
        }
        for b in &self.bullets {
            canvas.fill_disc(
                b.pos.x * s,
                b.pos.y * s,
                (BULLET_RADIUS * s).max(2.0),
                BULLET,
            );
        }
        let l = &self.lanes[lane];
        let nodes = super::draw_nodes(canvas, &l.nodes(), s);
        super::caption(canvas, l.name(), self.frame as u64, nodes);
    }

    fn report(&self) -> String {
        let frames = self.frame.max(1);
        let mut s = String::new();
        let _ = writeln!(
            s,
            "bullets: {} static obstacles in a {}x{}x{} world, one bullet per frame at {SPEED} units/frame \
             (radius {BULLET_RADIUS}), {} frames, seed {}",
            OBSTACLES, WORLD.x, WORLD.y, WORLD.z, self.frame, self.seed
        );
        let _ = writeln!(
            s,
            "fired {}, spent on obstacles {}, in flight {:.1} per frame (mean); octrees: leaf cells {MIN_NODE_SIZE}\n",
            self.fired,
            self.hits,
            self.in_flight as f64 / frames as f64
        );
        let _ = writeln!(
            s,
            "{} every 25 frames (lazy pruning keeps empty nodes alive):",
            STRUCTURES[0]
        );
        let _ = writeln!(
            s,
            "{:>6} {:>8} {:>6} {:>10} {:>8} {:>7}",
            "frame", "bullets", "nodes", "idle/frame", "created", "pruned"
        );
        for l in &self.log {
            let _ = writeln!(s, "{l}");
        }
        let _ = writeln!(
            s,
            "\nnode churn per frame (L5), mean over frames; left: sparti's lazy pruning, right: an estimate\n\
             for a tree that pruned every empty branch at once (the nodes holding objects in their subtree):"
        );
        s.push_str(&churn_table(&self.lanes));
        let _ = writeln!(
            s,
            "'idle': empty branches kept alive, waiting out their lifespan (8 frames, doubled on reuse up\n\
             to 64). 'created'/'pruned': nodes that appeared/disappeared since the frame before.\n"
        );
        s.push_str(&figures_table(&self.lanes));
        let _ = writeln!(
            s,
            "\nN counts bullets and obstacles; static obstacles are never tested against each other (P2).\n\
             Every structure's pairs equal the brute force's on all {} frames.",
            self.frame
        );
        s
    }
}
