//! The static query workloads (`ray`, `box`, `frustum`) and the memory
//! held per object (`memory`).

use std::time::Instant;

use sparti::glam::Vec3;
use sparti::{Aabb, Sphere};
use sparti_cli::catalogue::Structure;

use crate::report::{Report, Row};
use crate::statics::{BvhStatic, Hit, ParryStatic, RstarStatic, Static3, sparti_static};
use crate::{OWN_BYTES, Plan, SPARTI, alloc, median, scene, sparti_name, world_of};

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

pub fn ray_and_box(plan: &Plan, rep: &mut Report, do_ray: bool, do_box: bool) {
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

pub fn frustum(plan: &Plan, rep: &mut Report) {
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

// ------------------------------------------------------------ nearest

/// A query's k nearest: object id and distance, nearest first.
/// Every query's k nearest, one after another, and where each query's end
/// lies: kept flat so that the timed loop allocates nothing.
struct Neighbors {
    all: Vec<(u32, f32)>,
    ends: Vec<usize>,
}

impl Neighbors {
    fn with_capacity(queries: usize, k: usize) -> Self {
        Self {
            all: Vec::with_capacity(queries * k),
            ends: Vec::with_capacity(queries),
        }
    }
    fn clear(&mut self) {
        self.all.clear();
        self.ends.clear();
    }
    fn push(&mut self, found: &[(u32, f32)]) {
        self.all.extend_from_slice(found);
        self.ends.push(self.all.len());
    }
    /// Query `i`'s neighbours.
    fn of(&self, i: usize) -> &[(u32, f32)] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.all[start..self.ends[i]]
    }
}

/// The same k nearest: each place holds the same object, or (a tie, or
/// rounding) the same distance.
fn same_nearest(a: &[(u32, f32)], b: &[(u32, f32)]) -> bool {
    let close = |x: f32, y: f32| (x - y).abs() <= 1e-4 * (1.0 + x.abs().max(y.abs()));
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.0 == y.0 || close(x.1, y.1))
}

/// The 8 nearest objects of points uniform in the scene's cube, 100,000
/// static spheres; the implementations without a k-nearest query are left
/// out.
pub fn nearest(plan: &Plan, rep: &mut Report) {
    let (n, k) = (100_000, 8);
    let (spheres, side) = spheres_of(n);
    let world = world_of::<Vec3>(n);
    let nq = if plan.quick { 20_000 } else { 100_000 };
    // The rays' origins: uniform in the cube.
    let points: Vec<Vec3> = scene::rays(nq, side).iter().map(|r| r.origin).collect();
    let mut reference: Option<(&str, Neighbors)> = None;
    let mut out = Vec::new();
    for (name, is_sparti, make) in static_impls(true) {
        let brute = name == "BruteForce";
        let m = if brute {
            if plan.quick { 200 } else { 1_000 }
        } else {
            nq
        };
        let mut imp = make(world);
        imp.build(&spheres);
        if !imp.nearest(points[0], k, &mut out) {
            eprintln!("nearest N={n} {name}: no k-nearest query");
            continue;
        }
        let mut samples = Vec::new();
        let mut found = Neighbors::with_capacity(m, k);
        for _ in 0..if brute { 1 } else { query_reps(plan) } {
            found.clear();
            let t = Instant::now();
            for &p in &points[..m] {
                imp.nearest(p, k, &mut out);
                found.push(&out);
            }
            samples.push(m as f64 / t.elapsed().as_secs_f64());
        }
        drop(imp);
        let med = median(&samples);
        let sum: f64 = found.all.iter().map(|x| f64::from(x.1)).sum();
        eprintln!("nearest N={n} {name}: {med:.0} queries/s (distances' sum {sum:.0})");
        rep.push(Row {
            workload: "nearest".into(),
            n,
            name: name.into(),
            sparti: is_sparti,
            oracle: brute,
            unit: "queries/s",
            higher_is_better: true,
            samples,
            check: format!("{} found in {m} queries", found.all.len()),
            extra: Vec::new(),
        });
        match &reference {
            None => reference = Some((name, found)),
            Some((r, rf)) => {
                if let Some(i) = (0..m).find(|&i| !same_nearest(rf.of(i), found.of(i))) {
                    rep.fail(format!(
                        "nearest: {name} differs from {r} at point {i}: {:?} against {:?}",
                        found.of(i),
                        rf.of(i)
                    ));
                }
            }
        }
    }
}

// ------------------------------------------------------------ memory

pub fn memory(plan: &Plan, rep: &mut Report) {
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
