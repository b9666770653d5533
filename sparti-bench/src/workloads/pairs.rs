//! The dynamic pairs workloads (`pairs3d`, `pairs2d`): the moving scene,
//! every implementation's frames timed, their pairs checked equal.

use std::time::Instant;

use sparti::Vector;
use sparti::glam::{Vec2, Vec3};

use crate::pairs::{BroccoliDyn, BvhDyn, Dim, Dynamic, ParryDyn, RapierDyn, RstarDyn, SpartiDyn};
use crate::report::{Report, Row};
use crate::{Plan, SPARTI, median, scene, sparti_name};

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

pub fn pairs3d(plan: &Plan, rep: &mut Report) {
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

pub fn pairs2d(plan: &Plan, rep: &mut Report) {
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

/// Rounds of a dynamic measurement: the implementations take turns, each
/// running its share of the timed frames in every round (see [`dynamic`]).
const ROUNDS: usize = 5;

/// One implementation under measurement: its state, its own copy of the
/// scene, and what its timed frames gave.
struct Running<V: Vector> {
    name: &'static str,
    is_sparti: bool,
    imp: Box<dyn Dynamic<V>>,
    scene: scene::Scene<V>,
    samples: Vec<f64>,
    counts: Vec<usize>,
    out: Vec<(u32, u32)>,
}

/// Times every implementation on the moving scene at each N. The
/// implementations take turns: in each of [`ROUNDS`] rounds, each runs one
/// untimed frame (its caches warm again after the others ran) and then
/// its share of the timed frames, every one on its own copy of the scene,
/// which moves the same way for all. A burst of load from elsewhere on a
/// shared machine, which lasts seconds, then falls on every
/// implementation's frames alike instead of on one implementation's whole
/// measurement, and the ratios hold up better from run to run.
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
        let mut running = Vec::new();
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
            running.push(Running {
                name,
                is_sparti,
                imp,
                scene,
                samples: Vec::with_capacity(frames),
                counts: Vec::with_capacity(frames),
                out,
            });
        }
        let rounds = ROUNDS.min(frames).max(1);
        for round in 0..rounds {
            // This round's share of the timed frames.
            let share = frames * (round + 1) / rounds - frames * round / rounds;
            for r in &mut running {
                r.scene.step();
                r.imp.frame(&r.scene, &mut r.out);
                for _ in 0..share {
                    r.scene.step();
                    let t = Instant::now();
                    r.imp.frame(&r.scene, &mut r.out);
                    r.samples.push(t.elapsed().as_nanos() as f64 / n as f64);
                    r.counts.push(r.out.len());
                }
            }
        }
        // (name, per-frame pair counts, last frame's sorted pairs)
        let mut reference: Option<Reference> = None;
        for r in running {
            let Running {
                name,
                is_sparti,
                imp,
                samples,
                counts,
                mut out,
                ..
            } = r;
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
