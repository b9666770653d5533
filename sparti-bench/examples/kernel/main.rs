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

#[allow(dead_code, unused_imports)]
#[path = "../../src/scene.rs"]
mod scene;

#[allow(dead_code)]
#[path = "../../src/pairs.rs"]
mod pairs;

#[allow(dead_code)]
#[path = "../../src/statics.rs"]
mod statics;

mod linear;
mod linear2;

use std::time::Instant;

use rand::Rng;
use sparti::glam::{Vec2, Vec3};
use sparti::{Aabb, BruteForce, Filter, LooseConfig, LooseOrthtree, SpatialIndex, Sphere, Vector};

use linear::{Config, LinearLoose, Meta};
use linear2::{Config2, LinearLoose2};
use pairs::{BroccoliDyn, Dynamic, ParryDyn, SpartiDyn};
use scene::Scene;
use statics::{Hit, ParryStatic, SpartiStatic, Static3};

/// The prototype driven like the others: every object's new sphere read
/// from the scene, then every pair, `(i, j)` with `i < j`.
struct ProtoDyn {
    min_cell: f32,
    slot_order: bool,
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
        k.slot_order = self.slot_order;
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
        "proto" | "proto-refresh" | "protos" | "protos-refresh" => Box::new(ProtoDyn {
            min_cell: 1.0,
            slot_order: name.starts_with("protos"),
            refresh_only: name.ends_with("refresh"),
            k: None,
        }),
        "proto1" | "proto1-refresh" | "proto1s" | "proto1s-refresh" => Box::new(ProtoDyn {
            min_cell: 2.0 * sparti_scenes::RADIUS.1,
            slot_order: name.starts_with("proto1s"),
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
    bench_dyn::<Vec3>(args, "pairs3d", make, "proto,proto1,loose,parry", "parry")
}

fn bench2d(args: &[String]) {
    bench_dyn::<Vec2>(
        args,
        "pairs2d",
        make2,
        "proto2,proto2@1,loose,broccoli",
        "broccoli",
    )
}

/// One implementation in a bench: itself, its copy of the scene, its pairs.
type Running<V> = (Box<dyn Dynamic<V>>, Scene<V>, Vec<(u32, u32)>);

fn bench_dyn<V: Vector>(
    args: &[String],
    workload: &str,
    make: fn(&str) -> Box<dyn Dynamic<V>>,
    default_impls: &str,
    peer: &str,
) {
    let sizes: Vec<usize> = arg(args, "--sizes")
        .unwrap_or("10000,100000,1000000")
        .split(',')
        .map(|s| s.parse().unwrap())
        .collect();
    let frames: usize = arg(args, "--frames").map_or(30, |s| s.parse().unwrap());
    let warm = 3;
    let impls: Vec<String> = arg(args, "--impls")
        .unwrap_or(default_impls)
        .split(',')
        .map(String::from)
        .collect();
    let mut fail = false;
    println!(
        "{workload}, ns per object per frame: median of {frames} frames (10 at N >= 1M) after {warm} warm-up frames; all implementations alive at once, each with its own copy of the scene, taking turns frame by frame (the order rotating), so that the machine's load falls on all alike"
    );
    for &n in &sizes {
        let frames = if n >= 1_000_000 {
            frames.min(10)
        } else {
            frames
        };
        let names: Vec<&String> = impls
            .iter()
            .filter(|name| !(*name == "brute" && n > 10_000))
            .collect();
        let mut imps: Vec<Running<V>> = names
            .iter()
            .map(|name| {
                let mut imp = make(name);
                let scene = scene::uniform::<V>(n);
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
        let finds: Vec<bool> = names
            .iter()
            .map(|s| !s.ends_with("-refresh") && s.as_str() != "step")
            .collect();
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
                // The update-only and motion-only runs find no pairs.
                if !finds[ii] {
                    continue;
                }
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
        let finders: Vec<usize> = (0..k).filter(|&ii| finds[ii]).collect();
        let failed_before = fail;
        for &ii in finders.iter().skip(1) {
            if imps[ii].2 != imps[finders[0]].2 {
                fail = true;
                eprintln!(
                    "MISMATCH N={n}: last frame's pair set of {} differs from {}'s",
                    names[ii], names[finders[0]]
                );
            }
        }
        if fail == failed_before {
            println!(
                "N = {n}: {} equal in every frame's count and the last frame's set ({} pairs)",
                finders
                    .iter()
                    .map(|&ii| names[ii].as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                imps[finders[0]].2.len()
            );
        }
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
        // The peer over each other implementation: ratio of the medians,
        // and the median of the per-frame ratios (frames adjacent in time).
        if let Some(pi) = names.iter().position(|s| *s == peer) {
            for (ii, name) in names.iter().enumerate() {
                if ii == pi || name.as_str() == "brute" || !finds[ii] {
                    continue;
                }
                let per: Vec<f64> = samples[pi]
                    .iter()
                    .zip(&samples[ii])
                    .map(|(p, q)| p / q)
                    .collect();
                println!(
                    "  {peer}/{name}: {:.2}x (medians), {:.2}x (median of per-frame ratios)",
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
    let mut scene = scene::uniform::<Vec3>(n);
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
            for (min_cell, slot_order) in [(1.0, false), (3.0, false), (1.0, true), (3.0, true)] {
                let mut scene = scene::uniform::<Vec3>(n);
                let mut rng = sparti_scenes::rng(7);
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
                k.slot_order = slot_order;
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
                    assert_eq!(
                        got, want,
                        "N={n} filtered={filtered} min_cell={min_cell} frame {f}"
                    );
                    total += len;
                }
                println!(
                    "check N={n} filtered={filtered} min_cell={min_cell} slot_order={slot_order}: {frames} frames equal to the brute force ({total} pairs), levels {:?}",
                    k.levels_used()
                );
            }
        }
    }
    linear::check_boxes();
    // Edge cases: touching, coincident, tiny, outside the world, mixed sizes.
    let mut rng = sparti_scenes::rng(11);
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
        spheres.push(Sphere {
            center: c,
            radius: r,
        });
        if i % 7 == 0 {
            // touching along x, and a coincident copy
            spheres.push(Sphere {
                center: c + Vec3::new(r + 0.25, 0.0, 0.0),
                radius: 0.25,
            });
            spheres.push(Sphere {
                center: c,
                radius: r,
            });
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
        let scene = scene::uniform::<Vec3>(n);
        for (min_cell, slot_order) in [(1.0, false), (3.0, false), (3.0, true)] {
            let mut k = proto_for(&scene, min_cell);
            k.slot_order = slot_order;
            k.build((0..n as u32).map(Meta::new).collect(), |s| {
                scene.sphere(s as usize)
            });
            let mut p = 0;
            k.for_each_pair(|_, _| p += 1);
            println!(
                "N={n} min_cell={min_cell} slot_order={slot_order}: levels (level, cell side, objects) {:?}; {} cells in the table; {:.1} bytes/object; {} pairs; rows {} chunks {} box hits {} (per object; 0 unless COUNT)",
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

// ------------------------------------------------------------------ 2D

/// The 2D prototype driven like the others (as `ProtoDyn`).
struct ProtoDyn2 {
    min_cell: f32,
    slot_order: bool,
    /// Refresh only, no pair search (the update's share).
    refresh_only: bool,
    k: Option<LinearLoose2>,
}

fn proto2_for(scene: &Scene<Vec2>, min_cell: f32) -> LinearLoose2 {
    let w = scene.world();
    LinearLoose2::new(Config2 {
        origin: w.min,
        side: (w.max - w.min).max_element(),
        min_cell,
    })
}

impl Dynamic<Vec2> for ProtoDyn2 {
    fn setup(&mut self, scene: &Scene<Vec2>) {
        let mut k = proto2_for(scene, self.min_cell);
        k.slot_order = self.slot_order;
        k.build((0..scene.len() as u32).map(Meta::new).collect(), |s| {
            scene.sphere(s as usize)
        });
        self.k = Some(k);
    }

    fn frame(&mut self, scene: &Scene<Vec2>, out: &mut Vec<(u32, u32)>) {
        let k = self.k.as_mut().expect("set up");
        k.refresh(|s| scene.sphere(s as usize));
        out.clear();
        if self.refresh_only {
            return;
        }
        k.for_each_pair(|a, b| out.push(if a < b { (a, b) } else { (b, a) }));
    }
}

struct StepOnly2;
impl Dynamic<Vec2> for StepOnly2 {
    fn setup(&mut self, _: &Scene<Vec2>) {}
    fn frame(&mut self, _: &Scene<Vec2>, out: &mut Vec<(u32, u32)>) {
        out.clear();
    }
}

/// `proto2` (finest cell 3 = twice the largest radius: one level),
/// `proto2@C` (finest cell C), either with `-refresh` (the update alone);
/// `proto2s...`: the same, reading the circles in slot order (experiment);
/// `loose` (LooseQuadtree), `broccoli`, `brute`, `step`.
fn make2(name: &str) -> Box<dyn Dynamic<Vec2>> {
    if let Some(c) = name.strip_prefix("proto2") {
        let (c, slot_order) = match c.strip_prefix('s') {
            Some(c) => (c, true),
            None => (c, false),
        };
        let (c, refresh_only) = match c.strip_suffix("-refresh") {
            Some(c) => (c, true),
            None => (c, false),
        };
        let min_cell = c
            .strip_prefix('@')
            .map_or(2.0 * sparti_scenes::RADIUS.1, |c| c.parse().unwrap());
        return Box::new(ProtoDyn2 {
            min_cell,
            slot_order,
            refresh_only,
            k: None,
        });
    }
    match name {
        "loose" => Box::new(SpartiDyn::new(|s: &Scene<Vec2>| {
            LooseOrthtree::<Vec2, u32>::with_config(LooseConfig {
                world: Some(s.world()),
                ..Default::default()
            })
            .expect("valid configuration")
        })),
        "broccoli" => Box::new(BroccoliDyn::default()),
        "brute" => Box::new(SpartiDyn::new(|_: &Scene<Vec2>| {
            BruteForce::<Vec2, u32>::new()
        })),
        "step" => Box::new(StepOnly2),
        _ => panic!("unknown 2D implementation {name}"),
    }
}

fn brute_pairs2(spheres: &[Sphere<Vec2>], metas: &[Meta]) -> Vec<(u32, u32)> {
    let mut v = Vec::new();
    for i in 0..spheres.len() {
        for j in i + 1..spheres.len() {
            if metas[i].pairs_with(&metas[j]) && spheres[i].intersects(&spheres[j]) {
                v.push((i as u32, j as u32));
            }
        }
    }
    v
}

fn check2d() {
    for &(n, frames) in &[(1_000usize, 20usize), (10_000, 4)] {
        for filtered in [false, true] {
            for (min_cell, slot_order) in [
                (0.7f32, false),
                (3.0, false),
                (5.0, false),
                (0.7, true),
                (3.0, true),
            ] {
                let mut scene = scene::uniform::<Vec2>(n);
                let mut rng = sparti_scenes::rng(7);
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
                let mut k = proto2_for(&scene, min_cell);
                k.slot_order = slot_order;
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
                    assert_eq!(
                        got,
                        brute_pairs2(&spheres, &metas),
                        "2D N={n} filtered={filtered} min_cell={min_cell} frame {f}"
                    );
                    total += len;
                }
                println!(
                    "check 2D N={n} filtered={filtered} min_cell={min_cell} slot_order={slot_order}: {frames} frames equal to the brute force ({total} pairs), levels (cells per axis, side, objects) {:?}",
                    k.levels_used()
                );
            }
        }
    }
    // Edge cases: touching, coincident, tiny, mixed sizes, outside the world.
    let mut rng = sparti_scenes::rng(12);
    let mut spheres = Vec::new();
    for i in 0..4000 {
        let c = Vec2::new(rng.random_range(-5.0..45.0), rng.random_range(-5.0..45.0));
        let r = match i % 5 {
            0 => rng.random_range(0.0..0.01),
            1 => rng.random_range(0.5..1.5),
            2 => rng.random_range(2.0..9.0),
            _ => rng.random_range(0.1..0.6),
        };
        spheres.push(Sphere {
            center: c,
            radius: r,
        });
        if i % 7 == 0 {
            spheres.push(Sphere {
                center: c + Vec2::new(r + 0.25, 0.0),
                radius: 0.25,
            });
            spheres.push(Sphere {
                center: c,
                radius: r,
            });
        }
    }
    let metas: Vec<Meta> = (0..spheres.len() as u32).map(Meta::new).collect();
    let want = brute_pairs2(&spheres, &metas);
    for min_cell in [0.05f32, 1.0, 3.0, 7.0] {
        let mut k = LinearLoose2::new(Config2 {
            origin: Vec2::ZERO,
            side: 40.0,
            min_cell,
        });
        k.build(metas.clone(), |s| spheres[s as usize]);
        k.validate();
        let mut got = Vec::new();
        k.for_each_pair(|a, b| got.push(if a < b { (a, b) } else { (b, a) }));
        got.sort_unstable();
        assert_eq!(got, want, "2D edge cases, min_cell {min_cell}");
        println!(
            "check 2D edge cases ({} circles, min_cell {min_cell}): {} pairs equal to the brute force, levels {:?}",
            spheres.len(),
            got.len(),
            k.levels_used()
        );
    }
}

// ------------------------------------------------------------ queries

/// The static scene of sparti-bench's `ray` and `box` workloads (the pairs
/// layout's first frame at N) and the world sparti's structures get there.
fn static_scene(n: usize) -> (Vec<Sphere<Vec3>>, f32, Aabb<Vec3>) {
    let s = scene::uniform::<Vec3>(n);
    let side = s.side();
    let world = Aabb::new(Vec3::splat(-2.0), Vec3::splat(side + 2.0)).expect("finite");
    ((0..n).map(|i| s.sphere(i)).collect(), side, world)
}

/// The prototype on static spheres, `Static3` like the peers (frustum not
/// done).
struct ProtoStatic {
    min_cell: f32,
    world: Aabb<Vec3>,
    k: Option<LinearLoose>,
    out: Vec<u32>,
}

impl Static3 for ProtoStatic {
    fn build(&mut self, spheres: &[Sphere<Vec3>]) {
        let mut k = LinearLoose::new(Config {
            origin: self.world.min,
            side: (self.world.max - self.world.min).max_element(),
            min_cell: self.min_cell,
        });
        k.build((0..spheres.len() as u32).map(Meta::new).collect(), |s| {
            spheres[s as usize]
        });
        self.k = Some(k);
    }
    fn ray(&mut self, ray: &sparti::Ray<Vec3>, max: f32) -> Hit {
        self.k.as_ref().expect("built").ray_nearest(ray, max)
    }
    fn boxq(&mut self, b: &Aabb<Vec3>) -> usize {
        self.k.as_ref().expect("built").query_box(b, &mut self.out);
        self.out.len()
    }
    fn frustum(&mut self, _: &sparti::Frustum<Vec3>) -> usize {
        unimplemented!("frustum: not in this prototype")
    }
}

fn make_static(name: &str, world: Aabb<Vec3>) -> Box<dyn Static3> {
    match name {
        "proto" => Box::new(ProtoStatic {
            min_cell: 1.0,
            world,
            k: None,
            out: Vec::new(),
        }),
        "proto1" => Box::new(ProtoStatic {
            min_cell: 2.0 * sparti_scenes::RADIUS.1,
            world,
            k: None,
            out: Vec::new(),
        }),
        "loose" => Box::new(SpartiStatic::new(Box::new(move || {
            LooseOrthtree::<Vec3, u32>::with_config(LooseConfig {
                world: Some(world),
                ..Default::default()
            })
            .expect("valid configuration")
        }))),
        "parry" => Box::new(ParryStatic::default()),
        "null" => Box::new(NullStatic),
        _ => panic!("unknown static implementation {name}"),
    }
}

/// Answers nothing: the queries' generation alone, for cachegrind.
struct NullStatic;

impl Static3 for NullStatic {
    fn build(&mut self, _: &[Sphere<Vec3>]) {}
    fn ray(&mut self, _: &sparti::Ray<Vec3>, _: f32) -> Hit {
        None
    }
    fn boxq(&mut self, _: &Aabb<Vec3>) -> usize {
        0
    }
    fn frustum(&mut self, _: &sparti::Frustum<Vec3>) -> usize {
        0
    }
}

/// sparti's BruteForce: nearest hit (id, distance) and the sorted ids a box
/// touches.
struct Brute {
    index: BruteForce<Vec3, u32>,
    out: Vec<sparti::Handle>,
}

impl Brute {
    fn new(spheres: &[Sphere<Vec3>]) -> Self {
        let mut index = BruteForce::new();
        index.insert_many(statics::descs(spheres)).expect("valid");
        index.flush();
        Brute {
            index,
            out: Vec::new(),
        }
    }
    fn ray(&mut self, r: &sparti::Ray<Vec3>, max: f32) -> Hit {
        let h = self.index.ray_nearest(r, max, Filter::ALL)?;
        Some((self.index.get(h.handle).expect("live").value, h.distance))
    }
    fn boxq(&mut self, b: &Aabb<Vec3>) -> Vec<u32> {
        self.index.query_aabb(b, Filter::ALL, &mut self.out);
        let mut v: Vec<u32> = self
            .out
            .iter()
            .map(|&h| self.index.get(h).expect("live").value)
            .collect();
        v.sort_unstable();
        v
    }
}

/// Same object and bit-equal distance (or both none).
fn exact_hit(a: Hit, b: Hit) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some((ia, da)), Some((ib, db))) => ia == ib && da.to_bits() == db.to_bits(),
        _ => false,
    }
}

/// The prototypes' rays and boxes against sparti's BruteForce on `k`
/// queries: same hit object and distance, same sets. Returns a message.
fn check_queries_against_brute(n: usize, k: usize) -> String {
    let (spheres, side, world) = static_scene(n);
    let rays = scene::rays(k, side);
    let boxes = scene::box_queries(k, side);
    let mut brute = Brute::new(&spheres);
    let want_hits: Vec<Hit> = rays.iter().map(|r| brute.ray(r, side)).collect();
    let want_sets: Vec<Vec<u32>> = boxes.iter().map(|b| brute.boxq(b)).collect();
    let mut msg = String::new();
    for name in ["proto", "proto1"] {
        let mut p = ProtoStatic {
            min_cell: if name == "proto" {
                1.0
            } else {
                2.0 * sparti_scenes::RADIUS.1
            },
            world,
            k: None,
            out: Vec::new(),
        };
        p.build(&spheres);
        for (i, r) in rays.iter().enumerate() {
            let got = p.ray(r, side);
            assert!(
                exact_hit(got, want_hits[i]),
                "{name} N={n} ray {i}: {got:?}, brute force {:?}",
                want_hits[i]
            );
        }
        for (i, b) in boxes.iter().enumerate() {
            p.boxq(b);
            let mut got = p.out.clone();
            got.sort_unstable();
            assert_eq!(got, want_sets[i], "{name} N={n} box {i}");
        }
        msg += &format!(
            "check queries {name} N={n}: {k} rays (same object, bit-equal distance; {} hit) and {k} boxes (same sets, {} objects) equal to sparti's BruteForce; levels {:?}\n",
            want_hits.iter().filter(|h| h.is_some()).count(),
            want_sets.iter().map(Vec::len).sum::<usize>(),
            p.k.as_ref().unwrap().levels_used()
        );
    }
    msg
}

/// Edge cases for the queries: mixed sizes (several levels), objects
/// outside the world, rays starting outside, axis-parallel rays, rays from
/// inside spheres, boxes outside and degenerate, against the brute force.
fn check_query_edges() {
    let mut rng = sparti_scenes::rng(13);
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
        spheres.push(Sphere {
            center: c,
            radius: r,
        });
        if i % 11 == 0 {
            spheres.push(Sphere {
                center: c,
                radius: r,
            }); // coincident: ties
        }
    }
    let mut brute = Brute::new(&spheres);
    let mut rays = Vec::new();
    for i in 0..3000 {
        let o = Vec3::new(
            rng.random_range(-30.0..50.0),
            rng.random_range(-30.0..50.0),
            rng.random_range(-30.0..50.0),
        );
        let mut d = Vec3::new(
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
        );
        match i % 4 {
            0 => d = Vec3::X * d.x.signum(),
            1 => d.z = 0.0,
            _ => {}
        }
        let o = match spheres.get(i) {
            Some(s) if i % 9 == 0 => s.center,
            _ => o,
        };
        rays.push(sparti::Ray::new(o, d + Vec3::splat(1e-3)).unwrap());
    }
    let mut qboxes = Vec::new();
    for i in 0..2000 {
        let c = Vec3::new(
            rng.random_range(-30.0..50.0),
            rng.random_range(-30.0..50.0),
            rng.random_range(-30.0..50.0),
        );
        let h = if i % 5 == 0 {
            Vec3::ZERO
        } else {
            Vec3::new(
                rng.random_range(0.0..9.0),
                rng.random_range(0.0..9.0),
                rng.random_range(0.0..9.0),
            )
        };
        qboxes.push(Aabb {
            min: c - h,
            max: c + h,
        });
    }
    for min_cell in [0.05f32, 1.0, 3.0] {
        let mut k = LinearLoose::new(Config {
            origin: Vec3::ZERO,
            side: 20.0,
            min_cell,
        });
        k.build((0..spheres.len() as u32).map(Meta::new).collect(), |s| {
            spheres[s as usize]
        });
        for max in [7.5f32, 100.0] {
            for (i, r) in rays.iter().enumerate() {
                let got = k.ray_nearest(r, max);
                let want = brute.ray(r, max);
                assert!(
                    exact_hit(got, want),
                    "edge ray {i} max {max} min_cell {min_cell}: {got:?}, brute force {want:?}"
                );
            }
        }
        let mut out = Vec::new();
        let mut found = 0;
        for (i, b) in qboxes.iter().enumerate() {
            k.query_box(b, &mut out);
            out.sort_unstable();
            assert_eq!(out, brute.boxq(b), "edge box {i} min_cell {min_cell}");
            found += out.len();
        }
        println!(
            "check query edge cases ({} spheres, min_cell {min_cell}): {} rays x 2 limits and {} boxes ({found} objects) equal to sparti's BruteForce, levels {:?}",
            spheres.len(),
            rays.len(),
            qboxes.len(),
            k.levels_used()
        );
    }
}

/// Ray nearest and box queries on the static 100k scene, as sparti-bench's
/// `ray` and `box` workloads: 100,000 queries, `reps` passes, the
/// implementations taking turns pass by pass; rates are the medians of the
/// passes. Every implementation's answers are checked against the first's
/// (rays: sparti-bench's `same_hit`; boxes: the counts) and the prototypes'
/// against sparti's BruteForce on the first `--brute` queries (exact).
fn queries(args: &[String]) {
    let n: usize = arg(args, "--n").map_or(100_000, |s| s.parse().unwrap());
    let nq: usize = arg(args, "--queries").map_or(100_000, |s| s.parse().unwrap());
    let reps: usize = arg(args, "--reps").map_or(5, |s| s.parse().unwrap());
    let kb: usize = arg(args, "--brute").map_or(1_000, |s| s.parse().unwrap());
    let impls: Vec<String> = arg(args, "--impls")
        .unwrap_or("proto,proto1,loose,parry")
        .split(',')
        .map(String::from)
        .collect();
    print!("{}", check_queries_against_brute(n, kb));
    let (spheres, side, world) = static_scene(n);
    let rays = scene::rays(nq, side);
    let boxes = scene::box_queries(nq, side);
    let mut imps: Vec<Box<dyn Static3>> = impls
        .iter()
        .map(|name| {
            let mut imp = make_static(name, world);
            imp.build(&spheres);
            imp
        })
        .collect();
    let k = imps.len();
    let mut fail = false;
    for (what, unit) in [("ray", "rays/s"), ("box", "queries/s")] {
        let mut samples: Vec<Vec<f64>> = vec![Vec::new(); k];
        let mut answers: Vec<(Vec<Hit>, Vec<usize>)> = vec![(Vec::new(), Vec::new()); k];
        for rep in 0..reps {
            for r in 0..k {
                let ii = (rep + r) % k;
                let (hits, counts) = &mut answers[ii];
                hits.clear();
                counts.clear();
                let imp = &mut imps[ii];
                let t = Instant::now();
                if what == "ray" {
                    for q in &rays {
                        hits.push(imp.ray(q, side));
                    }
                } else {
                    for q in &boxes {
                        counts.push(imp.boxq(q));
                    }
                }
                samples[ii].push(nq as f64 / t.elapsed().as_secs_f64());
            }
        }
        for ii in 1..k {
            if what == "ray" {
                if let Some(i) =
                    (0..nq).find(|&i| !same_hit(answers[0].0[i], answers[ii].0[i], side))
                {
                    fail = true;
                    eprintln!(
                        "MISMATCH ray {i}: {} {:?}, {} {:?}",
                        impls[ii], answers[ii].0[i], impls[0], answers[0].0[i]
                    );
                }
            } else if answers[ii].1 != answers[0].1 {
                fail = true;
                eprintln!("MISMATCH box counts: {} and {}", impls[ii], impls[0]);
            }
        }
        let check = if what == "ray" {
            format!(
                "{} of {nq} rays hit",
                answers[0].0.iter().filter(|h| h.is_some()).count()
            )
        } else {
            format!("{} objects found", answers[0].1.iter().sum::<usize>())
        };
        println!(
            "{what}, N = {n}, {nq} queries, {unit}, median of {reps} passes (taking turns); all equal ({check})"
        );
        let med: Vec<f64> = samples.iter().map(|s| median(s)).collect();
        for ii in 0..k {
            let mut v = samples[ii].clone();
            v.sort_by(|a, b| a.partial_cmp(b).unwrap());
            println!(
                "  {:7} {:10.0} {unit}   (min {:.0}, max {:.0})",
                impls[ii],
                med[ii],
                v[0],
                v[v.len() - 1]
            );
        }
        if let Some(pi) = impls.iter().position(|s| s == "parry") {
            for ii in 0..k {
                if ii != pi {
                    println!("  {}/parry: {:.2}x", impls[ii], med[ii] / med[pi]);
                }
            }
        }
    }
    if fail {
        std::process::exit(1);
    }
}

/// sparti-bench's `same_hit`: the same object, or (a tie) the same distance.
fn same_hit(a: Hit, b: Hit, max: f32) -> bool {
    let close = |x: f32, y: f32| (x - y).abs() <= 1e-4 * (1.0 + x.abs().max(y.abs()));
    match (a, b) {
        (None, None) => true,
        (Some((ia, da)), Some((ib, db))) => ia == ib || close(da, db),
        (Some((_, d)), None) | (None, Some((_, d))) => close(d, max),
    }
}

/// 2D structure figures: levels, table size, memory.
fn info2(args: &[String]) {
    for s in args {
        let n: usize = s.parse().unwrap();
        let scene = scene::uniform::<Vec2>(n);
        for (min_cell, slot_order) in [(1.0, false), (3.0, false), (4.0, false), (3.0, true)] {
            let mut k = proto2_for(&scene, min_cell);
            k.slot_order = slot_order;
            k.build((0..n as u32).map(Meta::new).collect(), |s| {
                scene.sphere(s as usize)
            });
            let mut p = 0;
            k.for_each_pair(|_, _| p += 1);
            println!(
                "2D N={n} min_cell={min_cell} slot_order={slot_order}: levels (cells per axis, cell side, objects) {:?}; {} cells in the table; {:.1} bytes/object; {} pairs",
                k.levels_used(),
                k.cells(),
                k.bytes() as f64 / n as f64,
                p
            );
        }
    }
}

/// Untimed queries for cachegrind: `qprofile IMPL ray|box COUNT`.
fn qprofile(args: &[String]) {
    let (name, what, count) = (
        args[0].as_str(),
        args[1].as_str(),
        args[2].parse::<usize>().unwrap(),
    );
    let (spheres, side, world) = static_scene(100_000);
    let mut imp = make_static(name, world);
    imp.build(&spheres);
    let mut acc = 0usize;
    if what == "ray" {
        for q in &scene::rays(count, side) {
            acc += imp.ray(q, side).is_some() as usize;
        }
    } else if what == "box" {
        for q in &scene::box_queries(count, side) {
            acc += imp.boxq(q);
        }
    }
    println!("{name} {what} {count}: {acc}");
}

/// 2D profile for cachegrind: `profile2 IMPL N FRAMES`.
fn profile2(args: &[String]) {
    let (name, n, frames) = (
        args[0].as_str(),
        args[1].parse().unwrap(),
        args[2].parse::<usize>().unwrap(),
    );
    let mut imp = make2(name);
    let mut scene = scene::uniform::<Vec2>(n);
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

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("bench") => bench(&args[1..]),
        Some("profile") => profile(&args[1..]),
        Some("check") => {
            check();
            check2d();
            check_query_edges();
            print!("{}", check_queries_against_brute(100_000, 1_000));
        }
        Some("bench2d") => bench2d(&args[1..]),
        Some("info2") => info2(&args[1..]),
        Some("queries") => queries(&args[1..]),
        Some("qprofile") => qprofile(&args[1..]),
        Some("profile2") => profile2(&args[1..]),
        Some("info") => info(&args[1..]),
        _ => eprintln!(
            "usage: kernel bench|bench2d [--sizes A,B --frames F --impls X,Y] | queries [--reps R --impls X,Y] | check | profile IMPL N FRAMES | profile2 IMPL N FRAMES | qprofile IMPL ray|box COUNT | info N..."
        ),
    }
}
