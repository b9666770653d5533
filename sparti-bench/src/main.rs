//! `sparti-bench`: sparti's structures against their peers (parry3d,
//! rapier3d, bvh, rstar, broccoli) on the workloads of issue 4, every
//! implementation given the same seeded input, every result checked equal.
//!
//! ```text
//! cargo run --release -p sparti-bench -- --quick            # about 1-2 minutes
//! cargo run --release -p sparti-bench                       # everything
//! cargo run --release -p sparti-bench -- --workload pairs3d --sizes 1000,10000
//! ```

mod alloc;
mod pairs;
mod report;
mod scene;
mod statics;
mod workloads;

use std::time::Instant;

use clap::Parser;
use sparti::glam::Vec3;
use sparti::{Aabb, Sphere, Vector};

use crate::report::Report;
use sparti_cli::catalogue::Structure;

#[global_allocator]
static GLOBAL: alloc::Counting = alloc::Counting;

/// The workloads, in the order they run.
const WORKLOADS: [&str; 9] = [
    "pairs3d", "pairs2d", "build3d", "build2d", "ray", "box", "frustum", "nearest", "memory",
];

#[derive(Parser, Debug)]
#[command(
    name = "sparti-bench",
    about = "sparti against parry3d, rapier3d, bvh, rstar and broccoli, with equal results checked"
)]
struct Args {
    /// A short run (about 1-2 minutes): fewer frames and queries, no
    /// 1,000,000-object sizes.
    #[arg(long)]
    quick: bool,
    /// Workloads to run (repeat or comma-separate): pairs3d, pairs2d,
    /// build3d, build2d, ray, box, frustum, nearest, memory. Default: all.
    #[arg(long, value_delimiter = ',')]
    workload: Vec<String>,
    /// Object counts for the dynamic pairs workloads (comma-separated).
    /// Default 1000,10000,100000,1000000 (--quick: 1000,10000,100000).
    #[arg(long, value_delimiter = ',')]
    sizes: Vec<usize>,
    /// Timed frames per pairs measurement (default 30; --quick 8). At
    /// 1,000,000 objects at most 10.
    #[arg(long)]
    frames: Option<usize>,
    /// Folder for results.md, results.csv, results.json and the plots.
    #[arg(long, default_value = "bench-results")]
    out: std::path::PathBuf,
}

/// Settings derived from the arguments.
pub(crate) struct Plan {
    pub(crate) quick: bool,
    pub(crate) sizes: Vec<usize>,
    pub(crate) frames: usize,
    pub(crate) warm_up: usize,
}

fn main() {
    let args = Args::parse();
    for w in &args.workload {
        if !WORKLOADS.contains(&w.as_str()) {
            eprintln!("unknown workload {w:?}; known: {}", WORKLOADS.join(", "));
            std::process::exit(2);
        }
    }
    let plan = Plan {
        quick: args.quick,
        sizes: if !args.sizes.is_empty() {
            args.sizes.clone()
        } else if args.quick {
            vec![1_000, 10_000, 100_000]
        } else {
            vec![1_000, 10_000, 100_000, 1_000_000]
        },
        frames: args.frames.unwrap_or(if args.quick { 8 } else { 30 }),
        warm_up: if args.quick { 3 } else { 10 },
    };
    let wanted = |w: &str| args.workload.is_empty() || args.workload.iter().any(|x| x == w);
    let command = std::env::args().collect::<Vec<_>>().join(" ");
    use workloads::*;
    let mut rep = Report::new(command, args.quick);
    let start = Instant::now();

    if wanted("pairs3d") {
        pairs3d(&plan, &mut rep);
    }
    if wanted("pairs2d") {
        pairs2d(&plan, &mut rep);
    }
    if wanted("build3d") {
        build3d(&plan, &mut rep);
    }
    if wanted("build2d") {
        build2d(&plan, &mut rep);
    }
    if wanted("ray") || wanted("box") {
        ray_and_box(&plan, &mut rep, wanted("ray"), wanted("box"));
    }
    if wanted("frustum") {
        frustum(&plan, &mut rep);
    }
    if wanted("nearest") {
        nearest(&plan, &mut rep);
    }
    if wanted("memory") {
        memory(&plan, &mut rep);
    }

    rep.elapsed = start.elapsed().as_secs_f64();
    let md = rep.markdown();
    println!("{md}");
    if let Err(e) = rep.write(&args.out) {
        eprintln!("cannot write results to {}: {e}", args.out.display());
        std::process::exit(2);
    }
    eprintln!("results written to {}", args.out.display());
    if !rep.failures.is_empty() {
        eprintln!("\nVERIFICATION FAILED: implementations disagree:");
        for f in &rep.failures {
            eprintln!("  - {f}");
        }
        std::process::exit(1);
    }
    eprintln!("verification: every implementation agreed in every workload");
}

/// The objects' own data, subtracted from every structure's bytes: a
/// sphere (centre and radius, 16 bytes) and a 4-byte id.
pub(crate) const OWN_BYTES: usize = std::mem::size_of::<Sphere<Vec3>>() + 4;

pub(crate) fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

// ------------------------------------------------------------ structures

/// sparti's structures in every workload, brute force last: the `sparti`
/// tool's catalogue (names, default settings, construction).
pub(crate) const SPARTI: [Structure; 4] = [
    Structure::Orthtree,
    Structure::Loose,
    Structure::Bsp,
    Structure::Brute,
];

/// A structure's name in the tables: its Rust type (`Octree`, `Bsp2`...).
pub(crate) fn sparti_name<V: Vector>(s: Structure) -> &'static str {
    s.type_name(V::DIM)
}

/// The world of a static scene of `n` objects of the pairs layout.
pub(crate) fn world_of<V: Vector>(n: usize) -> Aabb<V> {
    let side = scene::side(V::DIM, n);
    Aabb::new(V::splat(-2.0), V::splat(side + 2.0)).expect("finite")
}
