//! `sparti demo`: the bouncing discs of the BSP article and a machine
//! gun's bullets crossing a 3D world of obstacles, every structure
//! side by side on the same scene, checked against the brute force every
//! frame, shown live in a window or written headless to PNG frames and an
//! animated GIF, with the pair tests and objects-per-node figures (and
//! the node churn of lazy pruning) printed at the end.

pub mod bullets;
pub mod discs;
pub mod lane;
pub mod render;
pub mod window;

use std::fmt::Write as _;
use std::path::PathBuf;

use lane::Lane;
use render::{Canvas, GifWriter};

/// The options both demos share.
#[derive(Clone, Debug)]
pub struct Options {
    /// Frames to run; `None`: until the window closes (live) or the
    /// headless default.
    pub frames: Option<usize>,
    /// Write images instead of opening a window.
    pub headless: bool,
    /// Where the headless images go.
    pub out: PathBuf,
    /// Write every `every`-th frame (headless).
    pub every: usize,
    /// Random seed of the scene.
    pub seed: u64,
}

/// The animated GIF takes every `GIF_EVERY`-th frame (and the last).
pub const GIF_EVERY: usize = 2;

/// Frames a headless run makes when `--frames` is not given.
pub const HEADLESS_FRAMES: usize = 300;

/// A demo scene running every structure.
pub trait Demo {
    /// The short name, used for the GIF's file name (`discs`, `bullets`).
    fn name(&self) -> &'static str;
    /// Canvas size in pixels.
    fn size(&self) -> (usize, usize);
    /// The lanes, the brute force among them.
    fn lanes(&self) -> &[Box<dyn Lane>];
    /// One frame: move, run every structure, check their pairs against the
    /// brute force's, react to the contacts.
    ///
    /// # Errors
    /// A structure failed or found other pairs than the brute force.
    fn step(&mut self) -> Result<(), String>;
    /// Draws the scene and the nodes of lane `lane`.
    fn draw(&self, lane: usize, canvas: &mut Canvas);
    /// The figures printed at the end.
    fn report(&self) -> String;
}

/// Draws a structure's nodes (parents before children, as
/// [`Lane::nodes`] gives them) scaled by `scale`: the empty leaves that
/// lazy pruning keeps alive in [`render::IDLE`], then the others in
/// [`render::OUTLINE`] over them. Returns the nodes and the empty
/// leaves.
pub fn draw_nodes(canvas: &mut Canvas, nodes: &[lane::NodeBox], scale: f32) -> (usize, usize) {
    // Depth first: a node is a leaf when the next one is not deeper.
    let leaf = |i: usize| nodes.get(i + 1).is_none_or(|next| next.2 <= nodes[i].2);
    let idle: Vec<usize> = (0..nodes.len())
        .filter(|&i| nodes[i].3 == 0 && leaf(i))
        .collect();
    for &i in &idle {
        let (min, max, _, _) = nodes[i];
        canvas.outline_rect(
            min.x * scale,
            min.y * scale,
            max.x * scale,
            max.y * scale,
            render::IDLE,
        );
    }
    for (i, &(min, max, _, _)) in nodes.iter().enumerate() {
        if idle.binary_search(&i).is_err() {
            canvas.outline_rect(
                min.x * scale,
                min.y * scale,
                max.x * scale,
                max.y * scale,
                render::OUTLINE,
            );
        }
    }
    (nodes.len(), idle.len())
}

/// The caption every demo picture carries: the structure drawn, the frame,
/// and its nodes (how many are empty leaves kept alive).
pub fn caption(canvas: &mut Canvas, structure: &str, frame: u64, nodes: (usize, usize)) {
    let first = format!("{structure} - frame {frame}");
    let second = if nodes.0 == 0 {
        "no nodes: every pair tested".to_string()
    } else {
        format!("{} nodes, {} empty kept alive (dim)", nodes.0, nodes.1)
    };
    canvas.caption(&[&first, &second]);
}

/// Runs a demo headless: every `every`-th frame drawn with lane `lane`'s
/// nodes to `DIR/frame-NNNN.png`, every other frame appended to
/// `DIR/NAME.gif` (smooth at 30 pictures a second), and the last frame
/// drawn with each structure to `DIR/last-STRUCTURE.png`.
///
/// # Errors
/// The demo failed or a file could not be written.
pub fn run_headless(demo: &mut dyn Demo, lane: usize, opts: &Options) -> Result<(), String> {
    let frames = opts.frames.unwrap_or(HEADLESS_FRAMES);
    let every = opts.every.max(1);
    std::fs::create_dir_all(&opts.out)
        .map_err(|e| format!("{}: cannot create: {e}", opts.out.display()))?;
    let (w, h) = demo.size();
    let mut canvas = Canvas::new(w, h);
    let mut gif = GifWriter::create(&opts.out.join(format!("{}.gif", demo.name())), w, h, 3)?;
    for frame in 0..frames {
        demo.step()?;
        let last = frame + 1 == frames;
        let png = frame % every == 0 || last;
        let in_gif = frame % GIF_EVERY == 0 || last;
        if png || in_gif {
            demo.draw(lane, &mut canvas);
        }
        if png {
            canvas.save_png(&opts.out.join(format!("frame-{frame:04}.png")))?;
        }
        if in_gif {
            gif.add(&canvas)?;
        }
    }
    for (i, l) in demo.lanes().iter().enumerate() {
        demo.draw(i, &mut canvas);
        canvas.save_png(&opts.out.join(format!("last-{}.png", l.name())))?;
    }
    Ok(())
}

/// The pair-test table and objects-per-node histograms of every lane.
pub fn figures_table(lanes: &[Box<dyn Lane>]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<15} {:>10} {:>8} {:>9} {:>8} {:>9} {:>6} {:>6} {:>7} {:>8}",
        "structure",
        "tests/fr",
        "max",
        "%N(N-1)/2",
        "%N(N-1)",
        "nodes<=5",
        "nodes",
        "depth",
        "KiB",
        "us/frame"
    );
    for l in lanes {
        let f = l.figures();
        let frames = f.frames.max(1) as f64;
        let tests: u64 = f.tests.iter().sum();
        let half: u64 = f.half_reference.iter().sum();
        let share = 100.0 * tests as f64 / half.max(1) as f64;
        let _ = writeln!(
            s,
            "{:<15} {:>10.1} {:>8} {:>8.2}% {:>7.2}% {:>8.1}% {:>6} {:>6} {:>7.1} {:>8.1}",
            l.name(),
            tests as f64 / frames,
            f.tests.iter().max().copied().unwrap_or(0),
            share,
            share / 2.0,
            100.0 * f.small_nodes.iter().sum::<f64>() / frames,
            f.last_nodes,
            f.last_depth,
            f.last_memory as f64 / 1024.0,
            f.time.as_secs_f64() * 1e6 / frames,
        );
    }
    let _ = writeln!(
        s,
        "\nobjects per node, share of nodes over all frames, by objects held:"
    );
    let _ = writeln!(
        s,
        "{:<15} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6}",
        "structure", "0", "1", "2", "3", "4", "5", "6-10", ">10"
    );
    for l in lanes {
        let h = &l.figures().histogram;
        let total: u64 = h.iter().sum::<u64>().max(1);
        let pct = |r: std::ops::Range<usize>| {
            let c: u64 = r.filter_map(|k| h.get(k)).sum();
            100.0 * c as f64 / total as f64
        };
        let _ = writeln!(
            s,
            "{:<15} {:>5.1}% {:>5.1}% {:>5.1}% {:>5.1}% {:>5.1}% {:>5.1}% {:>5.1}% {:>5.1}%",
            l.name(),
            pct(0..1),
            pct(1..2),
            pct(2..3),
            pct(3..4),
            pct(4..5),
            pct(5..6),
            pct(6..11),
            pct(11..h.len().max(11)),
        );
    }
    s
}

/// The lazy-pruning table: node churn per lane, lazy pruning against an estimate of
/// eager pruning.
pub fn churn_table(lanes: &[Box<dyn Lane>]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<15} {:>8} {:>9} {:>9} {:>9} {:>9} | {:>8} {:>9} {:>9}",
        "structure",
        "nodes",
        "max nodes",
        "idle",
        "created",
        "pruned",
        "eager",
        "created",
        "pruned"
    );
    for l in lanes.iter().filter(|l| l.name() != "brute") {
        let f = l.figures();
        let frames = f.frames.max(1) as f64;
        let _ = writeln!(
            s,
            "{:<15} {:>8.1} {:>9} {:>9.1} {:>9.2} {:>9.2} | {:>8.1} {:>9.2} {:>9.2}",
            l.name(),
            f.nodes as f64 / frames,
            f.max_nodes,
            f.idle as f64 / frames,
            f.created as f64 / frames,
            f.pruned as f64 / frames,
            f.eager_nodes as f64 / frames,
            f.eager_created as f64 / frames,
            f.eager_pruned as f64 / frames,
        );
    }
    s
}
