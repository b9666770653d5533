//! Runs the dynamic-pairs workload of `sparti-bench` (the scene kit's uniform
//! scene, as in `sparti-bench/benches/pairs.rs`) for a number of
//! frames with one structure, for profilers (`perf record`, callgrind).
//!
//! ```text
//! cargo run --release -p sparti --example frames -- loose3 100000 100
//! ```
//! Structures: `oct3`, `loose3`, `bsp3`, `quad2`, `loose2`, `bsp2`; with
//! `--features rayon`, the same with a `p` in front (`poct3`, `ploose3`,
//! `pbsp3`, `pquad2`, `ploose2`, `pbsp2`): the parallel pair search
//! (`par_pairs`, on `RAYON_NUM_THREADS` threads).
//! `MIN=4` sets the trees' minimum node size (the BSP's minimum dimension;
//! 0, automatic, leaves the BSP at its default 1), `CAP=8` the loose
//! trees' and the BSP's leaf capacity (0: their defaults), `BATCH=1`
//! moves the objects with one `update_many` a frame (on rayon's threads
//! with the feature) instead of one `update` each, `SHUFFLE=1` moves them
//! in a fixed random order instead of the order they were made in,
//! `ROWS=1` makes them in rows of space (sorted by the cell of their
//! centre in a 1024-per-axis grid, z, then y, then x: the order of the
//! kernel's grid), so that their slots follow space, as a game that made
//! its objects level by level would have them.
//! `SCENARIO=clustered` (or `flat`, `bullets`) runs another scenario of
//! the scene kit than `uniform`, the default.
//! `QUERIES=k` asks `k` radius queries (radius 4, around objects spread
//! over the scene) after each frame's pair search, as a game's other
//! systems do, and prints their time and how many searched the grid.
//! `STEP=flush` ends each frame's changes with `flush` instead of
//! `end_frame` (the README's frame: the grid is then sorted in "update"),
//! `STEP=after` calls `flush` after the pair search, before the queries
//! (the Bevy plugin's frame; timed with the queries).
//! The objects' new positions are computed first, untimed (the game's
//! work); "update" is the time of sparti's calls (`update` or
//! `update_many`, then `end_frame`), "pairs" that of the pair search.

use std::time::Instant;

use glam::{Vec2, Vec3};
use sparti::{
    Aabb, Bsp, BspConfig, LooseConfig, LooseOrthtree, ObjectDesc, Orthtree, OrthtreeConfig, Pair,
    SpatialIndex, Vector,
};
use sparti_scenes::{Moving, Scenario};

fn run<V: Vector, S: SpatialIndex<V, ()>>(
    n: usize,
    frames: usize,
    make: impl FnOnce(Aabb<V>) -> S,
    find: impl Fn(&mut S, &mut Vec<Pair>),
) {
    // The moving scene of sparti-bench and of `sparti bench`'s scenarios:
    // the scene kit's.
    let name = std::env::var("SCENARIO").unwrap_or_else(|_| "uniform".into());
    let Some(scenario) = Scenario::ALL.into_iter().find(|s| s.name() == name) else {
        eprintln!("unknown scenario {name}");
        return;
    };
    let mut scene = Moving::<V>::new(scenario, n);
    let world = scene.world();
    let mut index = make(world);
    // The order the objects are made in (their slots): the scene's, or
    // with `ROWS=1` rows of space (see the module's docs).
    let mut made: Vec<usize> = (0..n).collect();
    if std::env::var("ROWS").is_ok_and(|v| v == "1") {
        let row_key = |i: usize| {
            let b = scene.shape(i).aabb();
            let c = (b.min + b.max) * 0.5;
            (0..V::DIM).rev().fold(0u64, |k, a| {
                let f = (c.get(a) - world.min.get(a)) / (world.max.get(a) - world.min.get(a));
                k * 1024 + ((f * 1024.0) as u64).min(1023)
            })
        };
        made.sort_by_key(|&i| row_key(i));
    }
    let made_handles = index
        .insert_many(
            made.iter()
                .map(|&i| ObjectDesc::new(scene.shape(i), ()))
                .collect(),
        )
        .expect("valid");
    // The handle of each of the scene's objects.
    let mut handles = made_handles.clone();
    for (&i, &h) in made.iter().zip(&made_handles) {
        handles[i] = h;
    }
    index.flush();
    let mut pairs: Vec<Pair> = Vec::new();
    let mut upd = 0.0;
    let mut pai = 0.0;
    let batch = std::env::var("BATCH").is_ok_and(|v| v == "1");
    let mut moves = Vec::with_capacity(n);
    // The order of the moves: that of the handles, or a fixed shuffle.
    let mut order = made;
    if std::env::var("SHUFFLE").is_ok_and(|v| v == "1") {
        let mut r = sparti_scenes::XorShift(0x5EED_0F0D_E4E4);
        for i in (1..n).rev() {
            order.swap(i, (r.next_unit() * (i + 1) as f32) as usize % (i + 1));
        }
    }
    // Region queries after the pair search, as a game's other systems
    // (AI sight, explosions) ask within the frame: `QUERIES` radius
    // queries (radius 4) around objects spread over the scene.
    let queries: usize = std::env::var("QUERIES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    // The build step of each frame: `end_frame` before the pair search
    // (the default), `STEP=flush` a `flush` in its place (the frame of the
    // README), `STEP=after` `end_frame` before it and a `flush` after it
    // (untimed in "update" and "pairs": counted with the queries).
    let step = std::env::var("STEP").unwrap_or_default();
    let (flush_first, flush_after) = (step == "flush", step == "after");
    let mut found = Vec::new();
    let (mut que, mut grid_searches, mut hits) = (0.0, 0u64, 0usize);
    for _ in 0..frames {
        // The game's part (not timed): every object's new position.
        moves.clear();
        scene.step();
        moves.extend(order.iter().map(|&i| (handles[i], scene.shape(i))));
        // sparti's part: the moves, the build step, the pairs.
        let t = Instant::now();
        if batch {
            index.update_many(&moves).expect("inside");
        } else {
            for &(h, shape) in &moves {
                index.update(h, shape).expect("inside");
            }
        }
        if flush_first {
            index.flush();
        } else {
            index.end_frame();
        }
        let t2 = Instant::now();
        find(&mut index, &mut pairs);
        let t3 = Instant::now();
        upd += (t2 - t).as_secs_f64();
        pai += (t3 - t2).as_secs_f64();
        if queries > 0 {
            let before = index.counters().grid_searches;
            let t = Instant::now();
            if flush_after {
                index.flush();
            }
            for q in 0..queries {
                let c = scene.shape(q * n / queries).center();
                index.query_radius(c, 4.0, sparti::Filter::ALL, &mut found);
                hits += found.len();
            }
            que += t.elapsed().as_secs_f64();
            grid_searches += index.counters().grid_searches - before;
        }
    }
    if queries > 0 {
        println!(
            "queries after the pairs{}: {:.2} us a query, {hits} found, {grid_searches} of {} on the grid",
            if flush_after { " and a flush" } else { "" },
            que * 1e6 / (frames * queries) as f64,
            frames * queries
        );
    }
    index.reset_counters();
    find(&mut index, &mut pairs);
    let c = index.counters();
    let st = index.stats();
    println!(
        "pair tests/object {:.1}, shape tests/object {:.2}, bound tests/object {:.1}, node visits/object {:.2}, nodes {}, depth {}, held {:.1} bytes/object",
        c.pair_tests as f64 / n as f64,
        c.shape_tests as f64 / n as f64,
        c.bound_tests as f64 / n as f64,
        c.node_visits as f64 / n as f64,
        st.nodes,
        st.max_depth,
        st.memory_bytes as f64 / n as f64
    );
    let per = |s: f64| s * 1e9 / (frames * n) as f64;
    println!(
        "{} pairs; update {:.0} ns/object, pairs {:.0} ns/object, total {:.0}",
        pairs.len(),
        per(upd),
        per(pai),
        per(upd + pai)
    );
}

fn orth<V: Vector>(w: Aabb<V>, m: f32) -> Orthtree<V, ()> {
    Orthtree::with_config(OrthtreeConfig {
        world: Some(w),
        min_node_size: m,
        ..Default::default()
    })
    .expect("valid")
}

fn loose<V: Vector>(w: Aabb<V>, m: f32, cap: usize) -> LooseOrthtree<V, ()> {
    LooseOrthtree::with_config(LooseConfig {
        world: Some(w),
        min_node_size: m,
        leaf_capacity: cap,
        ..Default::default()
    })
    .expect("valid")
}

fn bsp<V: Vector>(w: Aabb<V>, m: f32, cap: usize) -> Bsp<V, ()> {
    Bsp::with_config(BspConfig {
        world: Some(w),
        // The BSP has no automatic size: 0 keeps its default.
        min_dimension: if m > 0.0 { m } else { 1.0 },
        leaf_capacity: if cap == 0 { 1 } else { cap as u32 },
        ..Default::default()
    })
    .expect("valid")
}

/// The sequential pair search of the trait.
fn seq<V: Vector, S: SpatialIndex<V, ()>>(t: &mut S, out: &mut Vec<Pair>) {
    t.pairs(out);
}

/// The parallel pair search of the trait.
#[cfg(feature = "rayon")]
fn par<V: Vector, S: SpatialIndex<V, ()>>(t: &mut S, out: &mut Vec<Pair>) {
    t.par_pairs(out);
}

fn main() {
    let env = |k: &str| std::env::var(k).ok();
    let m: f32 = env("MIN").and_then(|s| s.parse().ok()).unwrap_or(1.0);
    let cap: usize = env("CAP").and_then(|s| s.parse().ok()).unwrap_or(0);
    let args: Vec<String> = std::env::args().collect();
    let which = args.get(1).map_or("loose3", String::as_str);
    let n: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(100_000);
    let frames: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(50);
    match which {
        "oct3" => run::<Vec3, _>(n, frames, |w| orth(w, m), seq),
        "quad2" => run::<Vec2, _>(n, frames, |w| orth(w, m), seq),
        "loose3" => run::<Vec3, _>(n, frames, |w| loose(w, m, cap), seq),
        "loose2" => run::<Vec2, _>(n, frames, |w| loose(w, m, cap), seq),
        "bsp3" => run::<Vec3, _>(n, frames, |w| bsp(w, m, cap), seq),
        "bsp2" => run::<Vec2, _>(n, frames, |w| bsp(w, m, cap), seq),
        #[cfg(feature = "rayon")]
        "poct3" => run::<Vec3, _>(n, frames, |w| orth(w, m), par),
        #[cfg(feature = "rayon")]
        "pquad2" => run::<Vec2, _>(n, frames, |w| orth(w, m), par),
        #[cfg(feature = "rayon")]
        "ploose3" => run::<Vec3, _>(n, frames, |w| loose(w, m, cap), par),
        #[cfg(feature = "rayon")]
        "ploose2" => run::<Vec2, _>(n, frames, |w| loose(w, m, cap), par),
        #[cfg(feature = "rayon")]
        "pbsp3" => run::<Vec3, _>(n, frames, |w| bsp(w, m, cap), par),
        #[cfg(feature = "rayon")]
        "pbsp2" => run::<Vec2, _>(n, frames, |w| bsp(w, m, cap), par),
        other => eprintln!("unknown structure {other}"),
    }
}
