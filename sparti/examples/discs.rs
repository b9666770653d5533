//! The bouncing discs of the BSP article, headless (T1, M1, M2).
//!
//! N discs bounce inside a 640x480 window, off the walls and off each other,
//! for a number of frames. The same scene runs through the octree (spheres at
//! z = 0), the quadtree, the loose quadtree, the BSP (split across the
//! largest side down to cells under 32x32, as in the article) and the brute
//! force; every frame each structure gets
//! every disc's new bounds, `end_frame()` and a contact search. The example
//! prints the pair tests per frame against the brute force's `N(N-1)/2`, the
//! share of nodes holding 5 objects or fewer, and the tree sizes, and checks
//! every frame that the trees find exactly the brute force's pairs.
//!
//! ```text
//! cargo run --release -p sparti --example discs -- [--frames N] [--discs N] [--seed N] [--min-node-size M]
//! ```

use std::process::ExitCode;
use std::time::{Duration, Instant};

use glam::{Vec2, Vec3};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use sparti::{
    Aabb, BruteForce, Bsp2, BspConfig, Contact, Handle, LooseConfig, LooseQuadtree, ObjectDesc,
    Octree, OrthtreeConfig, OutOfBounds, Quadtree, Shape, SpatialIndex, Vector,
};

const WIDTH: f32 = 640.0;
const HEIGHT: f32 = 480.0;
const RADIUS: (f32, f32) = (4.0, 10.0);
const SPEED: (f32, f32) = (0.5, 3.0);
/// The article's figures, for comparison.
const ARTICLE_SHARE: f64 = 3.2;
const ARTICLE_SMALL_NODES: f64 = 99.0;

struct Args {
    frames: usize,
    discs: usize,
    seed: u64,
    /// Leaf side of the trees. Default 20: 640 = 20 * 2^5, so the root is
    /// exactly 640x640 and the smallest cells are 20x20, under the article's
    /// 32x32.
    min_node_size: f32,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        frames: 1000,
        discs: 100,
        seed: 1,
        min_node_size: 20.0,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        if flag == "--help" || flag == "-h" {
            return Err(String::new());
        }
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let number = |v: &str| v.parse::<u64>().map_err(|e| format!("{flag} {v}: {e}"));
        match flag.as_str() {
            "--frames" => args.frames = number(&value)? as usize,
            "--discs" => args.discs = number(&value)? as usize,
            "--seed" => args.seed = number(&value)?,
            "--min-node-size" => {
                args.min_node_size = value
                    .parse()
                    .ok()
                    .filter(|m: &f32| m.is_finite() && *m > 0.0)
                    .ok_or_else(|| format!("{flag} {value}: not a positive number"))?;
            }
            _ => return Err(format!("unknown argument {flag}")),
        }
    }
    if args.frames == 0 || args.discs < 2 {
        return Err("need --frames >= 1 and --discs >= 2".into());
    }
    Ok(args)
}

/// A disc of the scene.
#[derive(Clone, Copy)]
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
fn step(discs: &mut [Disc]) {
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

/// The plane of the window in a structure's space: z = 0 in 3D.
trait Flat: Vector {
    fn from_xy(p: Vec2) -> Self;
    fn xy(self) -> Vec2;
}

impl Flat for Vec2 {
    fn from_xy(p: Vec2) -> Self {
        p
    }
    fn xy(self) -> Vec2 {
        self
    }
}

impl Flat for Vec3 {
    fn from_xy(p: Vec2) -> Self {
        p.extend(0.0)
    }
    fn xy(self) -> Vec2 {
        self.truncate()
    }
}

/// One structure running the scene, with its per-frame figures.
struct Runner<V: Flat, S: SpatialIndex<V, usize>> {
    name: &'static str,
    index: S,
    handles: Vec<Handle>,
    contacts: Vec<Contact<V>>,
    /// This frame's pairs as sorted disc indices.
    pairs: Vec<(usize, usize)>,
    /// Pair tests of each frame.
    tests: Vec<u64>,
    /// Share of nodes with at most 5 objects, each frame.
    small_nodes: Vec<f64>,
    /// Time spent in updates, `end_frame()` and the contact search.
    time: Duration,
}

impl<V: Flat, S: SpatialIndex<V, usize>> Runner<V, S> {
    fn new(name: &'static str, mut index: S, discs: &[Disc]) -> Result<Self, String> {
        let descs = discs
            .iter()
            .enumerate()
            .map(|(i, d)| ObjectDesc::new(Shape::sphere(V::from_xy(d.pos), d.radius), i))
            .collect();
        let handles = index
            .insert_many(descs)
            .map_err(|e| format!("{name}: insert: {e}"))?;
        Ok(Self {
            name,
            index,
            handles,
            contacts: Vec::new(),
            pairs: Vec::new(),
            tests: Vec::new(),
            small_nodes: Vec::new(),
            time: Duration::ZERO,
        })
    }

    /// One frame: new bounds for every disc, housekeeping, contacts.
    fn frame(&mut self, discs: &[Disc]) -> Result<(), String> {
        let start = Instant::now();
        self.index.reset_counters();
        for (d, &h) in discs.iter().zip(&self.handles) {
            let shape = Shape::sphere(V::from_xy(d.pos), d.radius);
            self.index
                .update(h, shape)
                .map_err(|e| format!("{}: update: {e}", self.name))?;
        }
        self.index.end_frame();
        self.index.contacts(&mut self.contacts);
        self.time += start.elapsed();

        self.tests.push(self.index.counters().pair_tests);
        self.small_nodes
            .push(self.index.stats().share_of_nodes_with_at_most(5));
        self.index
            .validate()
            .map_err(|e| format!("{}: {e}", self.name))?;
        self.pairs.clear();
        for c in &self.contacts {
            let a = self.index.get(c.a).map_err(|e| e.to_string())?.value;
            let b = self.index.get(c.b).map_err(|e| e.to_string())?.value;
            self.pairs.push((a.min(b), a.max(b)));
        }
        self.pairs.sort_unstable();
        Ok(())
    }

    /// The contacts as disc indices and 2D normals (from the first disc to
    /// the second).
    fn contacts_2d(&self) -> impl Iterator<Item = (usize, usize, Vec2)> + '_ {
        self.contacts.iter().map(|c| {
            let a = self.index.get(c.a).expect("live").value;
            let b = self.index.get(c.b).expect("live").value;
            (a, b, c.normal.xy())
        })
    }
}

/// Objects per node depth, summed over frames.
fn add_depths(tree: &Quadtree<usize>, by_depth: &mut Vec<u64>) {
    tree.for_each_node(|_, depth, count| {
        if by_depth.len() <= depth {
            by_depth.resize(depth + 1, 0);
        }
        by_depth[depth] += count as u64;
    });
}

fn diff(a: &[(usize, usize)], b: &[(usize, usize)]) -> String {
    let only_a: Vec<_> = a.iter().filter(|p| b.binary_search(p).is_err()).collect();
    let only_b: Vec<_> = b.iter().filter(|p| a.binary_search(p).is_err()).collect();
    format!("only in the tree: {only_a:?}; only in the brute force: {only_b:?}")
}

fn run(args: &Args) -> Result<(), String> {
    let n = args.discs;
    let mut discs = make_discs(n, args.seed);
    let energy = |d: &[Disc]| d.iter().map(|d| d.vel.length_squared()).sum::<f32>() / 2.0;
    let energy_start = energy(&discs);

    // The root is anchored at the world's smallest corner, so with z from
    // -m/2 to m/2 the lowest z cells are [-m/2, m/2]: discs at z = 0 narrower
    // than the cells (m >= 20) never straddle a z split plane and the octree
    // partitions the window like the quadtree. (Smaller cells are thinner
    // than the discs: the "2.5D problem" of the article.)
    let m = args.min_node_size;
    let half_z = (m / 2.0).max(RADIUS.1);
    let octree = Octree::with_config(OrthtreeConfig {
        world: Some(
            Aabb::new(
                Vec3::new(0.0, 0.0, -half_z),
                Vec3::new(WIDTH, HEIGHT, half_z),
            )
            .map_err(|e| e.to_string())?,
        ),
        min_node_size: m,
        out_of_bounds: OutOfBounds::Reject,
    })
    .map_err(|e| e.to_string())?;
    let quadtree = Quadtree::with_config(OrthtreeConfig {
        world: Some(Aabb::new(Vec2::ZERO, Vec2::new(WIDTH, HEIGHT)).map_err(|e| e.to_string())?),
        min_node_size: m,
        out_of_bounds: OutOfBounds::Reject,
    })
    .map_err(|e| e.to_string())?;
    let window = Aabb::new(Vec2::ZERO, Vec2::new(WIDTH, HEIGHT)).map_err(|e| e.to_string())?;
    let loose = LooseQuadtree::with_config(LooseConfig {
        world: Some(window),
        min_node_size: m,
        out_of_bounds: OutOfBounds::Reject,
        ..Default::default()
    })
    .map_err(|e| e.to_string())?;
    // The article's cells "under 32x32": a node splits while its largest
    // side exceeds 32, so the leaves of the 640x480 window are 20x30.
    let bsp = Bsp2::with_config(BspConfig {
        world: Some(window),
        min_dimension: 32.0,
        out_of_bounds: OutOfBounds::Reject,
        ..Default::default()
    })
    .map_err(|e| e.to_string())?;
    let mut oct = Runner::new("octree", octree, &discs)?;
    let mut quad = Runner::new("quadtree", quadtree, &discs)?;
    let mut loose = Runner::new("loose quad", loose, &discs)?;
    let mut bsp = Runner::new("bsp", bsp, &discs)?;
    let mut brute = Runner::new("brute force", BruteForce::<Vec2, usize>::new(), &discs)?;

    let mut contacts = (0usize, 0usize);
    let mut touches = Vec::new();
    let mut by_depth = Vec::new();
    for frame in 0..args.frames {
        step(&mut discs);
        oct.frame(&discs)?;
        quad.frame(&discs)?;
        loose.frame(&discs)?;
        bsp.frame(&discs)?;
        brute.frame(&discs)?;
        for (name, tree) in [
            ("octree", &oct.pairs),
            ("quadtree", &quad.pairs),
            ("loose quadtree", &loose.pairs),
            ("bsp", &bsp.pairs),
        ] {
            if *tree != brute.pairs {
                return Err(format!(
                    "frame {frame}: the {name} pairs differ from the brute force's: {}",
                    diff(tree, &brute.pairs)
                ));
            }
        }
        add_depths(&quad.index, &mut by_depth);
        contacts.0 += brute.pairs.len();
        contacts.1 = contacts.1.max(brute.pairs.len());
        touches.clear();
        touches.extend(quad.contacts_2d());
        // In disc order, so the motion does not depend on the order in
        // which a structure reports its pairs.
        touches.sort_unstable_by_key(|&(a, b, _)| (a, b));
        for &(a, b, normal) in &touches {
            collide(&mut discs, a, b, normal);
        }
    }

    let root = oct.index.root_bounds().expect("built");
    println!(
        "bouncing discs: {n} discs, radius [{}, {}), speed [{}, {}) px/frame, {WIDTH}x{HEIGHT}, {} frames, seed {}",
        RADIUS.0, RADIUS.1, SPEED.0, SPEED.1, args.frames, args.seed
    );
    println!(
        "trees: min_node_size {m} (leaf cells {m}x{m}), root side {}",
        root.size().x
    );
    println!(
        "contacts per frame: mean {:.1}, max {}; kinetic energy {:.1} -> {:.1}",
        contacts.0 as f64 / args.frames as f64,
        contacts.1,
        energy_start,
        energy(&discs)
    );
    println!();
    println!(
        "{:<11} {:^15}  {:^20}  {:^7}  {:^13}  {:^11}  {:>8}",
        "", "pair tests", "% of N(N-1)/2", "N(N-1)", "nodes <= 5", "last frame", "us per"
    );
    println!(
        "{:<11} {:>7} {:>7}  {:>6} {:>6} {:>6}  {:>7}  {:>6} {:>6}  {:>5} {:>5}  {:>8}",
        "structure",
        "mean",
        "max",
        "mean",
        "min",
        "max",
        "mean",
        "mean",
        "min",
        "nodes",
        "depth",
        "frame"
    );
    for r in [
        &oct as &dyn Report,
        &quad as &dyn Report,
        &loose as &dyn Report,
        &bsp as &dyn Report,
        &brute as &dyn Report,
    ] {
        r.report(n);
    }
    let frames = args.frames as f64;
    println!(
        "quadtree objects by node depth (mean over frames): {}",
        by_depth
            .iter()
            .enumerate()
            .map(|(d, &c)| format!("{d}: {:.1}", c as f64 / frames))
            .collect::<Vec<_>>()
            .join(", ")
    );
    println!();
    println!(
        "Pair tests count each pair once, so the reference is N(N-1)/2 = {}. The article \
         divides by\nN(N-1) = {} but tests each pair from both sides, so its {ARTICLE_SHARE}% \
         compares with the\n'% of N(N-1)/2' columns; the 'N(N-1)' column divides by N(N-1) \
         and is half of them.",
        n * (n - 1) / 2,
        n * (n - 1)
    );
    println!(
        "'nodes <= 5': share of nodes holding 5 objects or fewer (article: over \
         {ARTICLE_SMALL_NODES}%;\nthe brute force is one node holding all). 'us per frame': \
         updates + end_frame() + contacts.\nEvery tree's pairs equal the brute \
         force's on all {} frames; validate() passed every frame. The BSP splits\nacross the largest side down to 20x30 cells (min_dimension 32); the trees stop at m x m.",
        args.frames
    );
    Ok(())
}

/// The report of a runner, whatever its structure.
trait Report {
    fn report(&self, n: usize);
}

impl<V: Flat, S: SpatialIndex<V, usize>> Report for Runner<V, S> {
    fn report(&self, n: usize) {
        let frames = self.tests.len() as f64;
        let half = (n * (n - 1) / 2) as f64;
        let mean = self.tests.iter().sum::<u64>() as f64 / frames;
        let min = *self.tests.iter().min().expect("frames") as f64;
        let max = *self.tests.iter().max().expect("frames") as f64;
        let small_mean = 100.0 * self.small_nodes.iter().sum::<f64>() / frames;
        let small_min = 100.0 * self.small_nodes.iter().copied().fold(1.0, f64::min);
        let st = self.index.stats();
        println!(
            "{:<11} {:>7.0} {:>7.0}  {:>5.1}% {:>5.1}% {:>5.1}%  {:>6.1}%  {:>5.1}% {:>5.1}%  {:>5} {:>5}  {:>8.1}",
            self.name,
            mean,
            max,
            100.0 * mean / half,
            100.0 * min / half,
            100.0 * max / half,
            50.0 * mean / half,
            small_mean,
            small_min,
            st.nodes,
            st.max_depth,
            self.time.as_secs_f64() * 1e6 / frames,
        );
    }
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            if !e.is_empty() {
                eprintln!("error: {e}");
            }
            eprintln!(
                "usage: discs [--frames N] [--discs N] [--seed N] [--min-node-size M]\n\
                 defaults: 1000 frames, 100 discs, seed 1, min node size 20"
            );
            return if e.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            };
        }
    };
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
