//! The prototype kernel of issue 10 (`linear.rs`) on the pairs3d workload,
//! in one binary with sparti's `LooseOctree` and parry3d's `Bvh`, each
//! driven exactly as `sparti-bench` drives them (`src/pairs.rs` and
//! `src/scene.rs` are compiled in as they are).
//!
//! ```text
//! CARGO_TARGET_DIR=/work/target-kernel cargo build --release -p sparti-bench --example kernel
//! K=/work/target-kernel/release/examples/kernel
//! $K bench --sizes 10000,100000,1000000 --frames 30   # timings
//! $K check                       # pair sets against the brute force, filters on
//! $K profile proto 100000 6      # N objects, 6 frames, untimed (cachegrind)
//! ```
//!
//! Implementations: `proto` (the kernel, levels from size down to cells of
//! side 1, as the loose octree's default `min_node_size` 1), `proto1` (the
//! kernel with `min_cell` 3: cells at least twice the largest radius, so
//! one level here), `loose` (sparti's LooseOctree), `parry` (parry3d's Bvh),
//! `brute` (sparti's BruteForce, N <= 10,000 only), `step` (the scene's
//! motion alone, to subtract from cachegrind's counts), `proto-refresh` and
//! `proto1-refresh` (the update alone, no pair search: profiling).

#[allow(dead_code)]
#[path = "../../src/scene.rs"]
mod scene;

#[allow(dead_code)]
#[path = "../../src/pairs.rs"]
mod pairs;

mod linear;

use std::time::Instant;

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use sparti::glam::Vec3;
use sparti::{BruteForce, LooseConfig, LooseOrthtree, Sphere};

use linear::{Config, LinearLoose, Meta};
use pairs::{Dynamic, ParryDyn, SpartiDyn};
use scene::Scene;

/// The prototype driven like the others: every object's new sphere read
/// from the scene, then every pair, `(i, j)` with `i < j`.
struct ProtoDyn {
    min_cell: f32,
    /// Refresh only, no pair search (profiling: the update's share).
    refresh_only: bool,
    k: Option<LinearLoose>,
}

fn proto_for(scene: &Scene<Vec3>, min_cell: f32) -> LinearLoose {
    // The root: the scene's world (as the sparti structures get it), as a cube.
    let w = scene.world();
    let side = (w.max - w.min).max_element();
    LinearLoose::new(Config {
        origin: w.min,
        side,
        min_cell,
    })
}

impl Dynamic<Vec3> for ProtoDyn {
    fn setup(&mut self, scene: &Scene<Vec3>) {
        let mut k = proto_for(scene, self.min_cell);
        k.build((0..scene.len() as u32).map(Meta::new).collect(), |s| {
            scene.sphere(s as usize)
        });
        self.k = Some(k);
    }

    fn frame(&mut self, scene: &Scene<Vec3>, out: &mut Vec<(u32, u32)>) {
        let k = self.k.as_mut().expect("set up");
        k.refresh(|s| scene.sphere(s as usize));
        out.clear();
        if self.refresh_only {
            return;
        }
        k.for_each_pair(|a, b| out.push(if a < b { (a, b) } else { (b, a) }));
    }
}

/// The scene's motion only (for cachegrind: subtracted from the others).
struct StepOnly;
impl Dynamic<Vec3> for StepOnly {
    fn setup(&mut self, _: &Scene<Vec3>) {}
    fn frame(&mut self, _: &Scene<Vec3>, out: &mut Vec<(u32, u32)>) {
        out.clear();
    }
}

fn loose(scene: &Scene<Vec3>) -> LooseOrthtree<Vec3, u32> {
    LooseOrthtree::with_config(LooseConfig {
        world: Some(scene.world()),
        ..Default::default()
    })
    .expect("valid configuration")
}

fn make(name: &str) -> Box<dyn Dynamic<Vec3>> {
    match name {
        "proto" | "proto-refresh" => Box::new(ProtoDyn {
            min_cell: 1.0,
            refresh_only: name.ends_with("refresh"),
            k: None,
        }),
        "proto1" | "proto1-refresh" => Box::new(ProtoDyn {
            min_cell: 2.0 * scene::RADIUS.1,
            refresh_only: name.ends_with("refresh"),
            k: None,
        }),
        "loose" => Box::new(SpartiDyn::new(loose)),
        "parry" => Box::new(ParryDyn::default()),
        "brute" => Box::new(SpartiDyn::new(|_: &Scene<Vec3>| {
            BruteForce::<Vec3, u32>::new()
        })),
        "step" => Box::new(StepOnly),
        _ => panic!("unknown implementation {name}"),
    }
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    }
}

fn arg<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
    args.iter()
        .position(|a| a == name)
        .map(|p| args[p + 1].as_str())
}

fn bench(args: &[String]) {
    let sizes: Vec<usize> = arg(args, "--sizes")
        .unwrap_or("10000,100000,1000000")
        .split(',')
        .map(|s| s.parse().unwrap())
        .collect();
    let frames: usize = arg(args, "--frames").map_or(30, |s| s.parse().unwrap());
    let warm = 3;
    let impls: Vec<String> = arg(args, "--impls")
        .unwrap_or("proto,proto1,loose,parry")
        .split(',')
        .map(String::from)
        .collect();
    let mut fail = false;
    println!(
        "pairs3d, ns per object per frame: median of {frames} frames (10 at N >= 1M) after {warm} warm-up frames; all implementations alive at once, each with its own copy of the scene, taking turns frame by frame (the order rotating), so that the machine's load falls on all alike"
    );
    for &n in &sizes {
        let frames = if n >= 1_000_000 { frames.min(10) } else { frames };
        let names: Vec<&String> = impls
            .iter()
            .filter(|name| !(*name == "brute" && n > 10_000))
            .collect();
        let mut imps: Vec<(Box<dyn Dynamic<Vec3>>, Scene<Vec3>, Vec<(u32, u32)>)> = names
            .iter()
            .map(|name| {
                let mut imp = make(name);
                let scene = Scene::<Vec3>::new(n);
                imp.setup(&scene);
                (imp, scene, Vec::new())
            })
            .collect();
        for (imp, scene, out) in imps.iter_mut() {
            for _ in 0..warm {
                scene.step();
                imp.frame(scene, out);
            }
        }
        let k = imps.len();
        let mut samples: Vec<Vec<f64>> = vec![Vec::new(); k];
        for f in 0..frames {
            let mut count0 = None;
            for r in 0..k {
                let ii = (f + r) % k;
                let (imp, scene, out) = &mut imps[ii];
                scene.step();
                let t = Instant::now();
                imp.frame(scene, out);
                samples[ii].push(t.elapsed().as_nanos() as f64 / n as f64);
                match count0 {
                    None => count0 = Some((ii, out.len())),
                    Some((i0, c)) if c != out.len() => {
                        fail = true;
                        eprintln!(
                            "MISMATCH N={n} frame {f}: {} has {} pairs, {} has {c}",
                            names[ii],
                            out.len(),
                            names[i0]
                        );
                    }
                    _ => {}
                }
            }
        }
        for (_, _, out) in imps.iter_mut() {
            out.sort_unstable();
        }
        for ii in 1..k {
            if imps[ii].2 != imps[0].2 {
                fail = true;
                eprintln!("MISMATCH N={n}: last frame's pair set of {} differs from {}'s", names[ii], names[0]);
            }
        }
        println!(
            "N = {n}: {} equal in every frame's count and the last frame's set ({} pairs)",
            names.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", "),
            imps[0].2.len()
        );
        drop(imps);
        let med: Vec<f64> = samples.iter().map(|s| median(s)).collect();
        for ii in 0..k {
            let mut v = samples[ii].clone();
            v.sort_by(|a, b| a.partial_cmp(b).unwrap());
            println!(
                "  {:7} {:8.1} ns/object/frame   (min {:.1}, max {:.1})",
                names[ii],
                med[ii],
                v[0],
                v[v.len() - 1]
            );
        }
        // parry over each prototype: ratio of the medians, and the median
        // of the per-frame ratios (frames adjacent in time).
        if let Some(pi) = names.iter().position(|s| *s == "parry") {
            for (ii, name) in names.iter().enumerate() {
                if ii == pi || name.as_str() == "brute" {
                    continue;
                }
                let per: Vec<f64> = samples[pi]
                    .iter()
                    .zip(&samples[ii])
                    .map(|(p, q)| p / q)
                    .collect();
                println!(
                    "  parry/{name}: {:.2}x (medians), {:.2}x (median of per-frame ratios)",
                    med[pi] / med[ii],
                    median(&per)
                );
            }
        }
    }
    if fail {
        std::process::exit(1);
    }
}

/// The same frames as `bench`, untimed, for cachegrind.
fn profile(args: &[String]) {
    let name = args[0].as_str();
    let n: usize = args[1].parse().unwrap();
    let frames: usize = args[2].parse().unwrap();
    let mut imp = make(name);
    let mut scene = Scene::<Vec3>::new(n);
    imp.setup(&scene);
    let mut out = Vec::new();
    let mut total = 0;
    for _ in 0..frames {
        scene.step();
        imp.frame(&scene, &mut out);
        total += out.len();
    }
    println!("{name} N={n} frames={frames} pairs={total}");
}

/// Pairs of a brute force with the filter, as slots `(a, b)`, `a < b`.
fn brute_pairs(spheres: &[Sphere<Vec3>], metas: &[Meta]) -> Vec<(u32, u32)> {
    let mut v = Vec::new();
    for i in 0..spheres.len() {
        for j in i + 1..spheres.len() {
            let r = spheres[i].radius + spheres[j].radius;
            if spheres[i].center.distance_squared(spheres[j].center) <= r * r * 1.0001
                && metas[i].pairs_with(&metas[j])
                && spheres[i].intersects(&spheres[j])
            {
                v.push((i as u32, j as u32));
            }
        }
    }
    v
}

/// Pair sets against the brute force with random layers, masks and static
/// flags (and with none), over several frames of motion, at 1k and 10k;
/// plus touching and coincident spheres and objects outside the world.
fn check() {
    for &(n, frames) in &[(1_000usize, 20usize), (10_000, 4)] {
        for filtered in [false, true] {
            for min_cell in [1.0, 3.0] {
                let mut scene = Scene::<Vec3>::new(n);
                let mut rng = Pcg64::seed_from_u64(7);
                let metas: Vec<Meta> = (0..n as u32)
                    .map(|s| {
                        if filtered {
                            Meta {
                                slot: s,
                                layer: 1 << rng.random_range(0..4),
                                mask: rng.random_range(0..16u32) | 1,
                                is_static: rng.random_bool(0.3) as u32,
                            }
                        } else {
                            Meta::new(s)
                        }
                    })
                    .collect();
                let mut k = proto_for(&scene, min_cell);
                k.build(metas.clone(), |s| scene.sphere(s as usize));
                let mut total = 0;
                for f in 0..frames {
                    if f > 0 {
                        for _ in 0..5 {
                            scene.step();
                        }
                        k.refresh(|s| scene.sphere(s as usize));
                    }
                    k.validate();
                    let mut got = Vec::new();
                    k.for_each_pair(|a, b| got.push(if a < b { (a, b) } else { (b, a) }));
                    got.sort_unstable();
                    let len = got.len();
                    got.dedup();
                    assert_eq!(len, got.len(), "a pair reported twice");
                    let spheres: Vec<_> = (0..n).map(|i| scene.sphere(i)).collect();
                    let want = brute_pairs(&spheres, &metas);
                    assert_eq!(got, want, "N={n} filtered={filtered} min_cell={min_cell} frame {f}");
                    total += len;
                }
                println!(
                    "check N={n} filtered={filtered} min_cell={min_cell}: {frames} frames equal to the brute force ({total} pairs), levels {:?}",
                    k.levels_used()
                );
            }
        }
    }
    linear::check_boxes();
    // Edge cases: touching, coincident, tiny, outside the world, mixed sizes.
    let mut rng = Pcg64::seed_from_u64(11);
    let mut spheres = Vec::new();
    for i in 0..3000 {
        let c = Vec3::new(
            rng.random_range(-5.0..25.0),
            rng.random_range(-5.0..25.0),
            rng.random_range(-5.0..25.0),
        );
        let r = match i % 5 {
            0 => rng.random_range(0.0..0.01),
            1 => rng.random_range(0.5..1.5),
            2 => rng.random_range(2.0..6.0),
            _ => rng.random_range(0.1..0.6),
        };
        spheres.push(Sphere { center: c, radius: r });
        if i % 7 == 0 {
            // touching along x, and a coincident copy
            spheres.push(Sphere {
                center: c + Vec3::new(r + 0.25, 0.0, 0.0),
                radius: 0.25,
            });
            spheres.push(Sphere { center: c, radius: r });
        }
    }
    let metas: Vec<Meta> = (0..spheres.len() as u32).map(Meta::new).collect();
    for min_cell in [0.05f32, 1.0, 3.0] {
        // World [0, 20]^3: some objects outside, some larger than the cells.
        let mut k = LinearLoose::new(Config {
            origin: Vec3::ZERO,
            side: 20.0,
            min_cell,
        });
        k.build(metas.clone(), |s| spheres[s as usize]);
        k.validate();
        let mut got = Vec::new();
        k.for_each_pair(|a, b| got.push(if a < b { (a, b) } else { (b, a) }));
        got.sort_unstable();
        let want = brute_pairs(&spheres, &metas);
        assert_eq!(got, want, "edge cases, min_cell {min_cell}");
        println!(
            "check edge cases ({} spheres, min_cell {min_cell}): {} pairs equal to the brute force, levels {:?}",
            spheres.len(),
            got.len(),
            k.levels_used()
        );
    }
}

/// Structure figures: levels, table size, memory.
fn info(args: &[String]) {
    for s in args {
        let n: usize = s.parse().unwrap();
        let scene = Scene::<Vec3>::new(n);
        for min_cell in [1.0, 3.0] {
            let mut k = proto_for(&scene, min_cell);
            k.build((0..n as u32).map(Meta::new).collect(), |s| {
                scene.sphere(s as usize)
            });
            let mut p = 0;
            k.for_each_pair(|_, _| p += 1);
            println!(
                "N={n} min_cell={min_cell}: levels (level, cell side, objects) {:?}; {} cells in the table; {:.1} bytes/object; {} pairs; rows {} chunks {} box hits {} (per object; 0 unless COUNT)",
                k.levels_used(),
                k.cells(),
                k.bytes() as f64 / n as f64,
                p,
                k.rows as f64 / n as f64,
                k.chunks as f64 / n as f64,
                k.box_hits as f64 / n as f64,
            );
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("bench") => bench(&args[1..]),
        Some("profile") => profile(&args[1..]),
        Some("check") => check(),
        Some("info") => info(&args[1..]),
        _ => eprintln!("usage: kernel bench|check|profile IMPL N FRAMES|info N..."),
    }
}
