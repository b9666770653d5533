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

use std::time::Instant;

use clap::Parser;
use sparti::glam::{Vec2, Vec3};
use sparti::{Aabb, Filter, ObjectDesc, Shape, SpatialIndex, Sphere, Vector};

use crate::pairs::{BroccoliDyn, BvhDyn, Dim, Dynamic, ParryDyn, RapierDyn, RstarDyn, SpartiDyn};
use crate::report::{Report, Row};
use crate::statics::{BvhStatic, Hit, ParryStatic, RstarStatic, Static3, sparti_static};
use sparti_cli::catalogue::{Config, IndexJob, Structure};

#[global_allocator]
static GLOBAL: alloc::Counting = alloc::Counting;

/// The workloads, in the order they run.
const WORKLOADS: [&str; 8] = [
    "pairs3d", "pairs2d", "build3d", "build2d", "ray", "box", "frustum", "memory",
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
    /// build3d, build2d, ray, box, frustum, memory. Default: all.
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
struct Plan {
    quick: bool,
    sizes: Vec<usize>,
    frames: usize,
    warm_up: usize,
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

fn median(v: &[f64]) -> f64 {
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
const SPARTI: [Structure; 4] = [
    Structure::Orthtree,
    Structure::Loose,
    Structure::Bsp,
    Structure::Brute,
];

/// A structure's name in the tables: its Rust type (`Octree`, `Bsp2`...).
fn sparti_name<V: Vector>(s: Structure) -> &'static str {
    s.type_name(V::DIM)
}

/// The world of a static scene of `n` objects of the pairs layout.
fn world_of<V: Vector>(n: usize) -> Aabb<V> {
    let side = scene::side(V::DIM, n);
    Aabb::new(V::splat(-2.0), V::splat(side + 2.0)).expect("finite")
}

// ------------------------------------------------------------ dynamic pairs

/// One implementation of a dynamic workload: name, sparti or peer, maker.
type DynImpl<V> = (&'static str, bool, Box<dyn Fn() -> Box<dyn Dynamic<V>>>);

/// sparti's structures for a dynamic workload.
fn sparti_dyn<V: Vector>() -> Vec<DynImpl<V>> {
    SPARTI
        .iter()
        .map(|&s| -> DynImpl<V> {
            (
                sparti_name::<V>(s),
                true,
                Box::new(move || Box::new(SpartiDyn::<V>::new(s))),
            )
        })
        .collect()
}

fn pairs3d(plan: &Plan, rep: &mut Report) {
    let mut impls = sparti_dyn::<Vec3>();
    impls.extend::<[DynImpl<Vec3>; 4]>([
        (
            "parry3d Bvh",
            false,
            Box::new(|| Box::new(ParryDyn::default())),
        ),
        (
            "rapier3d BroadPhaseBvh",
            false,
            Box::new(|| Box::new(RapierDyn::default())),
        ),
        ("rstar", false, Box::new(|| Box::new(RstarDyn))),
        ("bvh", false, Box::new(|| Box::new(BvhDyn::default()))),
    ]);
    dynamic("pairs3d", plan, rep, &impls);
}

fn pairs2d(plan: &Plan, rep: &mut Report) {
    let mut impls = sparti_dyn::<Vec2>();
    impls.extend::<[DynImpl<Vec2>; 2]>([
        (
            "broccoli",
            false,
            Box::new(|| Box::new(BroccoliDyn::default())),
        ),
        ("rstar", false, Box::new(|| Box::new(RstarDyn))),
    ]);
    dynamic("pairs2d", plan, rep, &impls);
}

/// The first implementation's results at one N: name, pair count per timed
/// frame, the last frame's sorted pairs.
type Reference = (&'static str, Vec<usize>, Vec<(u32, u32)>);

/// Per-object cost above which an implementation is not run at 1,000,000
/// objects (its run would take minutes).
const SKIP_AT_1M_NS: f64 = 4_000.0;
/// Largest N for the brute force.
const BRUTE_MAX: usize = 10_000;

fn dynamic<V: Dim>(workload: &str, plan: &Plan, rep: &mut Report, impls: &[DynImpl<V>]) {
    let mut last_median: std::collections::HashMap<&str, f64> = Default::default();
    for &n in &plan.sizes {
        let big = n >= 1_000_000;
        let frames = if big {
            plan.frames.min(10)
        } else {
            plan.frames
        };
        let warm_up = if big { 3 } else { plan.warm_up };
        // (name, per-frame pair counts, last frame's sorted pairs)
        let mut reference: Option<Reference> = None;
        for (name, is_sparti, make) in impls {
            let (name, is_sparti) = (*name, *is_sparti);
            if name == "BruteForce" && n > BRUTE_MAX {
                continue;
            }
            if big && last_median.get(name).is_some_and(|&m| m > SKIP_AT_1M_NS) {
                rep.note(format!(
                    "{workload}: {name} not run at N = {n} (over {SKIP_AT_1M_NS} ns per object at the previous N)"
                ));
                eprintln!("{workload} N={n} {name}: skipped (too slow at the previous N)");
                continue;
            }
            let mut imp = make();
            let mut scene = scene::uniform::<V>(n);
            imp.setup(&scene);
            let mut out = Vec::new();
            for _ in 0..warm_up {
                scene.step();
                imp.frame(&scene, &mut out);
            }
            let mut samples = Vec::with_capacity(frames);
            let mut counts = Vec::with_capacity(frames);
            for _ in 0..frames {
                scene.step();
                let t = Instant::now();
                imp.frame(&scene, &mut out);
                samples.push(t.elapsed().as_nanos() as f64 / n as f64);
                counts.push(out.len());
            }
            drop(imp);
            out.sort_unstable();
            let m = median(&samples);
            last_median.insert(name, m);
            eprintln!(
                "{workload} N={n} {name}: {m:.1} ns/object/frame ({} pairs in the last frame)",
                out.len()
            );
            rep.push(Row {
                workload: workload.into(),
                n,
                name: name.into(),
                sparti: is_sparti,
                oracle: name == "BruteForce",
                unit: "ns/object/frame",
                higher_is_better: false,
                samples,
                check: format!("{} pairs", out.len()),
                extra: Vec::new(),
            });
            // The brute force runs first among equals when present: it is
            // listed after the trees, so compare everyone with the first
            // and then the brute force with the first too.
            match &reference {
                None => reference = Some((name, counts, out)),
                Some((rname, rcounts, rpairs)) => {
                    if *rcounts != counts || *rpairs != out {
                        let first = rcounts.iter().zip(&counts).position(|(a, b)| a != b);
                        let detail = match first {
                            Some(f) => format!(
                                "frame {f}: {} pairs for {rname}, {} for {name}",
                                rcounts[f], counts[f]
                            ),
                            None => {
                                let only_r = rpairs.iter().find(|p| out.binary_search(p).is_err());
                                let only_n = out.iter().find(|p| rpairs.binary_search(p).is_err());
                                format!(
                                    "same counts, different pair sets in the last frame (e.g. only {rname}: {only_r:?}, only {name}: {only_n:?})"
                                )
                            }
                        };
                        rep.fail(format!(
                            "{workload} N={n}: {name} differs from {rname}: {detail}"
                        ));
                    }
                }
            }
        }
    }
}

// ------------------------------------------------------------ static build

/// Reps of a build: median of these.
fn build_reps(plan: &Plan, n: usize) -> usize {
    match (plan.quick, n >= 1_000_000) {
        (true, _) => 3,
        (false, true) => 3,
        (false, false) => 5,
    }
}

fn build_sizes(plan: &Plan) -> Vec<usize> {
    if plan.quick {
        vec![100_000]
    } else {
        vec![100_000, 1_000_000]
    }
}

/// Check queries for a build: the number of (object, query) box overlaps
/// over 100 cubes of side 16, equal for every structure.
fn check_boxes<V: Vector>(n: usize) -> Vec<Aabb<V>> {
    let side = scene::side(V::DIM, n);
    (0..100)
        .map(|k| {
            let f = (k as f32 + 0.5) / 100.0;
            let mut c = V::ZERO;
            for i in 0..V::DIM {
                c = c.with(i, side * ((f * (i as f32 * 7.0 + 3.0)).fract()));
            }
            Aabb {
                min: c - V::splat(8.0),
                max: c + V::splat(8.0),
            }
        })
        .collect()
}

/// Times `insert_many` + `flush` of a sparti structure built by the
/// catalogue; gives ms and the check count.
struct TimedBuild<'a, V: Vector> {
    boxes: &'a [Aabb<V>],
    checks: &'a [Aabb<V>],
}

impl<V: Vector> IndexJob<V, u32> for TimedBuild<'_, V> {
    type Output = (f64, usize);
    fn run<S: SpatialIndex<V, u32> + 'static>(self, mut index: S) -> (f64, usize) {
        let descs: Vec<ObjectDesc<V, u32>> = self
            .boxes
            .iter()
            .enumerate()
            .map(|(i, b)| ObjectDesc::new(Shape::Box(*b), i as u32))
            .collect();
        let t = Instant::now();
        index.insert_many(descs).expect("valid boxes");
        index.flush();
        let ms = t.elapsed().as_secs_f64() * 1e3;
        let mut out = Vec::new();
        let mut count = 0;
        for c in self.checks {
            index.query_aabb(c, Filter::ALL, &mut out);
            count += out.len();
        }
        (ms, count)
    }
}

type BuildFn<V> = Box<dyn Fn(&[Aabb<V>], &[Aabb<V>]) -> (f64, usize)>;

fn run_builds<V: Vector>(
    workload: &str,
    plan: &Plan,
    rep: &mut Report,
    impls: Vec<(&'static str, bool, BuildFn<V>)>,
) {
    for n in build_sizes(plan) {
        let boxes = scene::boxes::<V>(n);
        let checks = check_boxes::<V>(n);
        let mut reference: Option<(&str, usize)> = None;
        for (name, is_sparti, f) in &impls {
            let mut samples = Vec::new();
            let mut count = 0;
            for _ in 0..build_reps(plan, n) {
                let (ms, c) = f(&boxes, &checks);
                samples.push(ms);
                count = c;
            }
            let m = median(&samples);
            eprintln!("{workload} N={n} {name}: {m:.2} ms ({count} check overlaps)");
            rep.push(Row {
                workload: workload.into(),
                n,
                name: (*name).into(),
                sparti: *is_sparti,
                oracle: false,
                unit: "ms",
                higher_is_better: false,
                samples,
                check: format!("{count} check overlaps"),
                extra: Vec::new(),
            });
            match reference {
                None => reference = Some((name, count)),
                Some((r, rc)) if rc != count => rep.fail(format!(
                    "{workload} N={n}: {name} finds {count} check overlaps, {r} {rc}"
                )),
                _ => {}
            }
        }
    }
}

/// sparti's three families (the catalogue's, world preset): the build
/// entries of both dimensions.
fn sparti_builds<V: Vector>() -> Vec<(&'static str, bool, BuildFn<V>)> {
    SPARTI[..3]
        .iter()
        .map(|&s| -> (&'static str, bool, BuildFn<V>) {
            (
                sparti_name::<V>(s),
                true,
                Box::new(move |boxes, checks| {
                    Config::default_of(s)
                        .build(
                            Some(world_of::<V>(boxes.len())),
                            TimedBuild { boxes, checks },
                        )
                        .expect("valid configuration")
                }),
            )
        })
        .collect()
}

/// rstar's bulk load, in either dimension.
fn rstar_build<V: Dim>() -> (&'static str, bool, BuildFn<V>) {
    (
        "rstar",
        false,
        Box::new(|b, c| {
            let items: Vec<_> = b
                .iter()
                .enumerate()
                .map(|(i, x)| {
                    rstar::primitives::GeomWithData::new(
                        rstar::primitives::Rectangle::from_corners(x.min.p(), x.max.p()),
                        i as u32,
                    )
                })
                .collect();
            let t = Instant::now();
            let tree = rstar::RTree::bulk_load(items);
            let ms = t.elapsed().as_secs_f64() * 1e3;
            let count = c
                .iter()
                .map(|q| {
                    tree.locate_in_envelope_intersecting(rstar::AABB::from_corners(
                        q.min.p(),
                        q.max.p(),
                    ))
                    .count()
                })
                .sum();
            (ms, count)
        }),
    )
}

fn build3d(plan: &Plan, rep: &mut Report) {
    let mut impls = sparti_builds::<Vec3>();
    impls.extend::<[(&'static str, bool, BuildFn<Vec3>); 3]>([
        (
            "parry3d Bvh",
            false,
            Box::new(|b, c| {
                let pv = |v: Vec3| parry3d::math::Vector::new(v.x, v.y, v.z);
                let leaves: Vec<_> = b
                    .iter()
                    .map(|x| parry3d::bounding_volume::Aabb::new(pv(x.min), pv(x.max)))
                    .collect();
                let t = Instant::now();
                let bvh = parry3d::partitioning::Bvh::from_leaves(
                    parry3d::partitioning::BvhBuildStrategy::Binned,
                    &leaves,
                );
                let ms = t.elapsed().as_secs_f64() * 1e3;
                let count = c
                    .iter()
                    .map(|q| {
                        bvh.intersect_aabb(&parry3d::bounding_volume::Aabb::new(
                            pv(q.min),
                            pv(q.max),
                        ))
                        .count()
                    })
                    .sum();
                (ms, count)
            }),
        ),
        rstar_build(),
        (
            "bvh",
            false,
            Box::new(|b, c| {
                let mut shapes: Vec<_> = b
                    .iter()
                    .enumerate()
                    .map(|(i, x)| {
                        let mut s = pairs::bvh_shape(Vec3::ZERO, 0.0, i as u32);
                        s.aabb = bvh::aabb::Aabb::with_bounds(
                            pairs::na_point(x.min),
                            pairs::na_point(x.max),
                        );
                        s
                    })
                    .collect();
                let t = Instant::now();
                let tree = bvh::bvh::Bvh::build(&mut shapes);
                let ms = t.elapsed().as_secs_f64() * 1e3;
                let count = c
                    .iter()
                    .map(|q| {
                        let q = bvh::aabb::Aabb::with_bounds(
                            pairs::na_point(q.min),
                            pairs::na_point(q.max),
                        );
                        tree.traverse(&q, &shapes).len()
                    })
                    .sum();
                (ms, count)
            }),
        ),
    ]);
    run_builds("build3d", plan, rep, impls);
}

fn build2d(plan: &Plan, rep: &mut Report) {
    let mut impls = sparti_builds::<Vec2>();
    impls.extend::<[(&'static str, bool, BuildFn<Vec2>); 2]>([
        (
            "broccoli",
            false,
            Box::new(|b, c| {
                let mut rects: Vec<(broccoli::axgeom::Rect<f32>, u32)> = b
                    .iter()
                    .enumerate()
                    .map(|(i, x)| (broccoli::rect(x.min.x, x.max.x, x.min.y, x.max.y), i as u32))
                    .collect();
                let t = Instant::now();
                let tree = broccoli::Tree::new(&mut rects);
                let ms = t.elapsed().as_secs_f64() * 1e3;
                drop(tree);
                // broccoli's rectangle query borrows the tree mutably per
                // query; the check counts overlaps on the tree's own element
                // order (every element is still there, reordered).
                let count = c
                    .iter()
                    .map(|q| {
                        rects
                            .iter()
                            .filter(|(r, _)| {
                                r.x.start <= q.max.x
                                    && q.min.x <= r.x.end
                                    && r.y.start <= q.max.y
                                    && q.min.y <= r.y.end
                            })
                            .count()
                    })
                    .sum();
                (ms, count)
            }),
        ),
        rstar_build(),
    ]);
    run_builds("build2d", plan, rep, impls);
}

// ------------------------------------------------------------ static queries

type StaticImpl = (
    &'static str,
    bool,
    Box<dyn Fn(Aabb<Vec3>) -> Box<dyn Static3> + Sync>,
);

fn static_impls(with_brute: bool) -> Vec<StaticImpl> {
    let sparti = |s: Structure| -> StaticImpl {
        (
            sparti_name::<Vec3>(s),
            true,
            Box::new(move |w| sparti_static(s, w)),
        )
    };
    let mut v: Vec<StaticImpl> = SPARTI[..3].iter().map(|&s| sparti(s)).collect();
    v.extend::<[StaticImpl; 3]>([
        (
            "parry3d Bvh",
            false,
            Box::new(|_| Box::new(ParryStatic::default())),
        ),
        (
            "rstar",
            false,
            Box::new(|_| Box::new(RstarStatic::default())),
        ),
        ("bvh", false, Box::new(|_| Box::new(BvhStatic::default()))),
    ]);
    if with_brute {
        v.push(sparti(Structure::Brute));
    }
    v
}

fn spheres_of(n: usize) -> (Vec<Sphere<Vec3>>, f32) {
    let s = scene::uniform::<Vec3>(n);
    ((0..n).map(|i| s.sphere(i)).collect(), s.side())
}

/// Equal nearest hits: the same object, or (a tie) the same distance.
fn same_hit(a: Hit, b: Hit, max: f32) -> bool {
    let close = |x: f32, y: f32| (x - y).abs() <= 1e-4 * (1.0 + x.abs().max(y.abs()));
    match (a, b) {
        (None, None) => true,
        (Some((ia, da)), Some((ib, db))) => ia == ib || close(da, db),
        // A grazing hit at the very end of the segment.
        (Some((_, d)), None) | (None, Some((_, d))) => close(d, max),
    }
}

fn query_reps(plan: &Plan) -> usize {
    if plan.quick { 1 } else { 3 }
}

fn ray_and_box(plan: &Plan, rep: &mut Report, do_ray: bool, do_box: bool) {
    let n = 100_000;
    let (spheres, side) = spheres_of(n);
    let world = world_of::<Vec3>(n);
    let nq = if plan.quick { 20_000 } else { 100_000 };
    let rays = scene::rays(nq, side);
    let boxes = scene::box_queries(nq, side);
    let max = side;
    let mut ref_hits: Option<(&str, Vec<Hit>)> = None;
    let mut ref_counts: Option<(&str, Vec<usize>)> = None;
    for (name, is_sparti, make) in static_impls(true) {
        let brute = name == "BruteForce";
        // The brute force checks a prefix of the queries only.
        let k = if brute {
            if plan.quick { 200 } else { 1_000 }
        } else {
            nq
        };
        let mut imp = make(world);
        imp.build(&spheres);
        if do_ray {
            let mut samples = Vec::new();
            let mut hits = Vec::new();
            for _ in 0..if brute { 1 } else { query_reps(plan) } {
                hits.clear();
                let t = Instant::now();
                for r in &rays[..k] {
                    hits.push(imp.ray(r, max));
                }
                samples.push(k as f64 / t.elapsed().as_secs_f64());
            }
            let m = median(&samples);
            let n_hits = hits.iter().filter(|h| h.is_some()).count();
            eprintln!("ray N={n} {name}: {m:.0} rays/s ({n_hits} of {k} rays hit)");
            rep.push(Row {
                workload: "ray".into(),
                n,
                name: name.into(),
                sparti: is_sparti,
                oracle: brute,
                unit: "rays/s",
                higher_is_better: true,
                samples,
                check: format!("{n_hits} of {k} rays hit"),
                extra: Vec::new(),
            });
            match &ref_hits {
                None => ref_hits = Some((name, hits)),
                Some((r, rh)) => {
                    if let Some(i) = (0..k).find(|&i| !same_hit(rh[i], hits[i], max)) {
                        rep.fail(format!(
                            "ray: {name} differs from {r} on ray {i}: {:?} against {:?}",
                            hits[i], rh[i]
                        ));
                    }
                }
            }
        }
        if do_box {
            let mut samples = Vec::new();
            let mut counts = Vec::new();
            for _ in 0..if brute { 1 } else { query_reps(plan) } {
                counts.clear();
                let t = Instant::now();
                for b in &boxes[..k] {
                    counts.push(imp.boxq(b));
                }
                samples.push(k as f64 / t.elapsed().as_secs_f64());
            }
            let m = median(&samples);
            let total: usize = counts.iter().sum();
            eprintln!("box N={n} {name}: {m:.0} queries/s ({total} objects found)");
            rep.push(Row {
                workload: "box".into(),
                n,
                name: name.into(),
                sparti: is_sparti,
                oracle: brute,
                unit: "queries/s",
                higher_is_better: true,
                samples,
                check: format!("{total} objects in {k} queries"),
                extra: Vec::new(),
            });
            match &ref_counts {
                None => ref_counts = Some((name, counts)),
                Some((r, rc)) => {
                    if let Some(i) = (0..k).find(|&i| rc[i] != counts[i]) {
                        rep.fail(format!(
                            "box: {name} finds {} objects in query {i}, {r} {}",
                            counts[i], rc[i]
                        ));
                    }
                }
            }
        }
    }
}

fn frustum(plan: &Plan, rep: &mut Report) {
    let n = if plan.quick { 100_000 } else { 1_000_000 };
    let nf = if plan.quick { 1_000 } else { 10_000 };
    let (spheres, side) = spheres_of(n);
    let world = world_of::<Vec3>(n);
    let frustums = scene::frustums(nf, side);
    let mut reference: Option<(&str, Vec<usize>)> = None;
    for (name, is_sparti, make) in static_impls(true) {
        let brute = name == "BruteForce";
        let k = if brute { 20 } else { nf };
        let mut imp = make(world);
        imp.build(&spheres);
        let mut samples = Vec::new();
        let mut counts = Vec::new();
        for _ in 0..if brute { 1 } else { query_reps(plan) } {
            counts.clear();
            let t = Instant::now();
            for f in &frustums[..k] {
                counts.push(imp.frustum(f));
            }
            samples.push(k as f64 / t.elapsed().as_secs_f64());
        }
        drop(imp);
        let m = median(&samples);
        let total: usize = counts.iter().sum();
        eprintln!("frustum N={n} {name}: {m:.0} frustums/s ({total} objects found)");
        rep.push(Row {
            workload: "frustum".into(),
            n,
            name: name.into(),
            sparti: is_sparti,
            oracle: brute,
            unit: "frustums/s",
            higher_is_better: true,
            samples,
            check: format!("{total} objects in {k} frustums"),
            extra: Vec::new(),
        });
        match &reference {
            None => reference = Some((name, counts)),
            Some((r, rc)) => {
                if let Some(i) = (0..k).find(|&i| rc[i] != counts[i]) {
                    rep.fail(format!(
                        "frustum: {name} finds {} objects in frustum {i}, {r} {}",
                        counts[i], rc[i]
                    ));
                }
            }
        }
    }
}

// ------------------------------------------------------------ memory

/// The objects' own data, subtracted from every structure's bytes: a
/// sphere (centre and radius, 16 bytes) and a 4-byte id.
pub const OWN_BYTES: usize = std::mem::size_of::<Sphere<Vec3>>() + 4;

fn memory(plan: &Plan, rep: &mut Report) {
    let n = if plan.quick { 100_000 } else { 1_000_000 };
    let (spheres, _) = spheres_of(n);
    let world = world_of::<Vec3>(n);
    for (name, is_sparti, make) in static_impls(false) {
        // In a fresh thread (bvh keeps per-thread bucket arrays after a
        // build: counted as its memory whatever ran before), after a small
        // build that keeps one-time allocations out of the count.
        let (peak, held) = std::thread::scope(|sc| {
            sc.spawn(|| {
                make(world).build(&spheres[..1_000]);
                let base = alloc::current();
                alloc::reset_peak();
                let mut imp = make(world);
                imp.build(&spheres);
                let r = (alloc::peak() - base, alloc::current() - base);
                drop(imp);
                r
            })
            .join()
            .expect("memory measurement")
        });
        // The peers' query types keep a copy of the spheres for the exact
        // tests (the caller's data): not the structure's.
        let copy = if is_sparti {
            0
        } else {
            n * std::mem::size_of::<Sphere<Vec3>>()
        };
        let held = held - copy;
        let per = held as f64 / n as f64;
        eprintln!(
            "memory N={n} {name}: {per:.1} bytes/object held, {:.1} peak during the build",
            (peak - copy) as f64 / n as f64
        );
        rep.push(Row {
            workload: "memory".into(),
            n,
            name: name.into(),
            sparti: is_sparti,
            oracle: false,
            unit: "bytes/object",
            higher_is_better: false,
            samples: vec![per],
            check: String::new(),
            extra: vec![
                ("above own data", per - OWN_BYTES as f64),
                ("peak during the build", (peak - copy) as f64 / n as f64),
            ],
        });
    }
}
