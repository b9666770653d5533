//! Soak test (issue 6): a machine gun in a world of static obstacles fires
//! bullets that live 60 frames, so objects are spawned and despawned every
//! frame, for every structure. Checked on every frame: `validate()` (every
//! `SOAK_VALIDATE_EVERY`th frame, default every frame); on sampled frames
//! (every `SOAK_SAMPLE`th): pairs, contact events and queries of every kind
//! equal to the brute force's. Memory must stay flat:
//!
//! - the peak resident memory of the soak's process (Linux: `Rss` of
//!   `/proc/self/smaps_rollup`, read on every sampled frame; it counts the
//!   structure, the brute force and the test's buffers) at the end is at
//!   most 1.1 times the peak up to the checkpoint (frame 10,000; frame 960
//!   in short runs);
//! - the structure's own figure (`stats().memory_bytes`, its arrays'
//!   capacities) at the end is at most 1.1 times its value half-way. It is
//!   printed at the checkpoint too, but not compared with it: the arrays
//!   (the node pool, the lists' array) keep the capacity of their peak, and
//!   it takes a while (about 200,000 frames in the long run, when each node
//!   kept a list of its own) until the peak is reached; after that it is
//!   flat.
//!
//! The node pool and free lists are reused, so nothing grows once the
//! stream is steady.
//!
//! The soak runs in a process of its own: the test starts this test binary
//! again with only itself selected, so that the suite's other tests, which
//! run on the harness's other threads, do not count in its memory.
//!
//! Short form (by default in `cargo test`): 2,000 frames per structure,
//! checkpoint at frame 960 (two full patterns of the gun).
//! Long form, by hand (release; prints the figures):
//!
//! ```sh
//! SOAK_FRAMES=1000000 cargo test --release -p sparti --test it soak:: -- --nocapture
//! ```
//!
//! `SOAK_REPORT_EVERY=N` prints the figures every `N` frames.
//! `SOAK_STRUCTURES` (comma-separated: octree, quadtree, loose-octree,
//! loose-quadtree, bsp3, bsp2) runs only some structures.

use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};
use std::time::Instant;

use glam::{Vec2, Vec3};
use sparti::{
    Aabb, BruteForce, Bsp2, Bsp3, Cone, ContactEvents, Filter, Frustum, LooseOctree, LooseQuadtree,
    ObjectDesc, Octree, Plane, Quadtree, Ray, Shape, SpatialIndex, Sphere, Vector,
};
use sparti_scenes::XorShift;

/// The process's resident memory now (`Rss` of `/proc/self/smaps_rollup`,
/// bytes), 0 where there is no such file (not Linux). `smaps_rollup` walks
/// the page tables, so it is exact, where `VmHWM` and `VmRSS` of
/// `/proc/self/status` come from approximate per-CPU counters (a first
/// version of this test saw `VmHWM` go down). Read without `unsafe`:
/// sparti and its tests have none.
fn rss() -> usize {
    std::fs::read_to_string("/proc/self/smaps_rollup")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Rss:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<usize>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.replace('_', "").parse().ok())
        .unwrap_or(default)
}

/// World side; the gun sits at the centre.
const SIDE: f32 = 200.0;
/// Frames a bullet lives.
const LIFE: u64 = 60;
/// Bullets fired per frame.
const RATE: usize = 2;
/// Bullet speed, units per frame: a bullet crosses 180 units, most of the
/// world, in its life.
const SPEED: f32 = 3.0;
const OBSTACLES: u32 = 60;
/// Frames the gun takes to sweep round once.
const SWEEP: u64 = 240;

struct Bullet<V> {
    handles: (sparti::Handle, sparti::Handle),
    pos: V,
    vel: V,
    born: u64,
}

/// What a run measured.
struct Figures {
    name: String,
    frames: u64,
    seconds: f64,
    checkpoint: u64,
    mem_checkpoint: usize,
    mem_half: usize,
    mem_end: usize,
    peak_checkpoint: usize,
    peak_end: usize,
    nodes_checkpoint: usize,
    nodes_end: usize,
    pairs_seen: u64,
    samples: u64,
}

fn ids<V: Vector, S: SpatialIndex<V, u32>>(s: &S, hs: &[sparti::Handle]) -> Vec<u32> {
    let mut v: Vec<u32> = hs.iter().map(|&h| s.get(h).unwrap().value).collect();
    v.sort_unstable();
    v
}

fn soak<V: Vector, S: SpatialIndex<V, u32>>(name: &str, mut s: S, frames: u64) -> Figures {
    let name = name.to_string();
    let validate_every = env("SOAK_VALIDATE_EVERY", 1).max(1);
    let sample = env("SOAK_SAMPLE", if frames > 100_000 { 97 } else { 7 }).max(1);
    // Short runs: after two full patterns of the gun (4 * SWEEP frames).
    let checkpoint = if frames >= 50_000 {
        10_000
    } else {
        (4 * SWEEP).min(frames / 2)
    };
    let report = env("SOAK_REPORT_EVERY", 0);
    let mut b = BruteForce::<V, u32>::new();
    let mut r = XorShift(0x2545_F491_4F6C_DD1D);
    let centre = V::splat(SIDE * 0.5);
    // Static obstacles: spheres and boxes scattered in the world.
    for i in 0..OBSTACLES {
        let mut c = V::ZERO;
        for k in 0..V::DIM {
            c = c.with(k, r.next_unit() * SIDE);
        }
        let shape = if i % 2 == 0 {
            Shape::sphere(c, 2.0 + r.next_unit() * 6.0)
        } else {
            Shape::cuboid(c, V::splat(1.0 + r.next_unit() * 5.0))
        };
        let d = ObjectDesc::new(shape, i).with_static(true).with_layer(2);
        s.insert(d.clone()).unwrap();
        b.insert(d).unwrap();
    }
    let mut bullets: std::collections::VecDeque<Bullet<V>> = Default::default();
    let (mut ev_s, mut ev_b) = (ContactEvents::new(), ContactEvents::new());
    let (mut ps, mut pb) = (Vec::new(), Vec::new());
    let (mut out_s, mut out_b) = (Vec::new(), Vec::new());
    let (mut hits_s, mut hits_b) = (Vec::new(), Vec::new());
    let (mut near_s, mut near_b) = (Vec::new(), Vec::new());
    let mut next_id = OBSTACLES;
    let mut fig = Figures {
        name: name.clone(),
        frames,
        seconds: 0.0,
        checkpoint,
        mem_checkpoint: 0,
        mem_half: 0,
        mem_end: 0,
        peak_checkpoint: 0,
        peak_end: 0,
        nodes_checkpoint: 0,
        nodes_end: 0,
        pairs_seen: 0,
        samples: 0,
    };
    // The peak of the resident memory, read on every sampled frame.
    let mut peak = rss();
    let start = Instant::now();
    for frame in 0..frames {
        // Despawn the bullets whose time is up.
        while bullets.front().is_some_and(|x| frame - x.born >= LIFE) {
            let x = bullets.pop_front().unwrap();
            assert_eq!(s.remove(x.handles.0), b.remove(x.handles.1));
        }
        // Move the others.
        for x in &mut bullets {
            x.pos = x.pos + x.vel;
            let shape = Shape::sphere(x.pos, 0.25);
            s.update(x.handles.0, shape).unwrap();
            b.update(x.handles.1, shape).unwrap();
        }
        // Fire: the gun sweeps round every SWEEP frames (and up and down
        // every 2 * SWEEP frames in 3D), so the pattern repeats and the
        // stream is steady long before the checkpoint.
        let phase = (frame % (2 * SWEEP)) as f32 / SWEEP as f32 * core::f32::consts::PI;
        for k in 0..RATE {
            let a = 2.0 * phase + k as f32 * 0.4;
            let mut dir = V::ZERO.with(0, a.cos()).with(1, a.sin());
            if V::DIM == 3 {
                dir = dir.with(2, phase.sin() * 0.5);
            }
            let vel = dir.try_normalize().unwrap() * SPEED;
            let d = ObjectDesc::new(Shape::sphere(centre, 0.25), next_id).with_layer(1);
            next_id = next_id.wrapping_add(1).max(OBSTACLES);
            let hs = s.insert(d.clone()).unwrap();
            let hb = b.insert(d).unwrap();
            assert_eq!(hs, hb, "{name}: handles diverge");
            bullets.push_back(Bullet {
                handles: (hs, hb),
                pos: centre,
                vel,
                born: frame,
            });
        }
        // The frame's pairs and events (the game does this every frame).
        ev_s.update(&s);
        if frame % validate_every == 0
            && let Err(e) = s.validate()
        {
            panic!("{name}: frame {frame}: validate(): {e}");
        }
        if frame % sample == 0 {
            peak = peak.max(rss());
            fig.samples += 1;
            ev_b.update(&b);
            assert_eq!(
                ev_s.touching(),
                ev_b.touching(),
                "{name}: frame {frame}: pairs"
            );
            fig.pairs_seen += ev_s.touching().len() as u64;
            // Events are compared between consecutive sampled frames of the
            // brute force; on a sample, what touches is the same.
            s.pairs(&mut ps);
            b.pairs(&mut pb);
            ps.sort_unstable();
            pb.sort_unstable();
            assert_eq!(ps, pb, "{name}: frame {frame}: pairs");
            // Queries of every kind around the gun and a random point.
            let mut p = V::ZERO;
            for k in 0..V::DIM {
                p = p.with(k, r.next_unit() * SIDE);
            }
            let bx = Aabb::new(p - V::splat(20.0), p + V::splat(20.0)).unwrap();
            s.query_aabb(&bx, Filter::ALL, &mut out_s);
            b.query_aabb(&bx, Filter::ALL, &mut out_b);
            assert_eq!(ids(&s, &out_s), ids(&b, &out_b), "{name}: {frame}: box");
            let sp = Sphere::new(centre, 30.0 + r.next_unit() * 60.0).unwrap();
            s.query_sphere(&sp, Filter::layers(1), &mut out_s);
            b.query_sphere(&sp, Filter::layers(1), &mut out_b);
            assert_eq!(ids(&s, &out_s), ids(&b, &out_b), "{name}: {frame}: sphere");
            let planes = core::array::from_fn(|i| {
                let axis = i % V::DIM;
                let sign = if i % 2 == 0 { 1.0 } else { -1.0 };
                let n = V::ZERO.with(axis, sign);
                Plane::new(n, 25.0 - n.dot(p)).unwrap()
            });
            let f = Frustum::new(planes);
            s.query_frustum(&f, Filter::ALL, &mut out_s);
            b.query_frustum(&f, Filter::ALL, &mut out_b);
            assert_eq!(ids(&s, &out_s), ids(&b, &out_b), "{name}: {frame}: frustum");
            let dir = (p - centre)
                .try_normalize()
                .unwrap_or(V::ONE.try_normalize().unwrap());
            let cone = Cone::new(centre, dir, 0.4, 150.0).unwrap();
            s.query_cone(&cone, Filter::ALL, &mut out_s);
            b.query_cone(&cone, Filter::ALL, &mut out_b);
            assert_eq!(ids(&s, &out_s), ids(&b, &out_b), "{name}: {frame}: cone");
            let ray = Ray::new(p, dir).unwrap();
            s.ray_all(&ray, SIDE, Filter::ALL, &mut hits_s);
            b.ray_all(&ray, SIDE, Filter::ALL, &mut hits_b);
            let key = |h: &sparti::RayHit<V>| (h.handle, h.distance);
            assert!(
                hits_s.iter().map(key).eq(hits_b.iter().map(key)),
                "{name}: {frame}: ray_all"
            );
            assert_eq!(
                s.ray_nearest(&ray, SIDE, Filter::ALL),
                b.ray_nearest(&ray, SIDE, Filter::ALL),
                "{name}: {frame}: ray_nearest"
            );
            s.nearest_k(p, 5, Filter::ALL, &mut near_s);
            b.nearest_k(p, 5, Filter::ALL, &mut near_b);
            assert_eq!(near_s, near_b, "{name}: {frame}: nearest_k");
        }
        s.end_frame();
        b.end_frame();
        assert_eq!(s.len(), OBSTACLES as usize + bullets.len());
        if report > 0 && (frame + 1) % report == 0 {
            let st = s.stats();
            println!(
                "soak {name}: frame {}: structure memory {} B, nodes {}, peak RSS {} B, {:.1} s",
                frame + 1,
                st.memory_bytes,
                st.nodes,
                peak,
                start.elapsed().as_secs_f64()
            );
        }
        if frame + 1 == frames / 2 {
            fig.mem_half = s.stats().memory_bytes;
        }
        if frame + 1 == checkpoint {
            fig.mem_checkpoint = s.stats().memory_bytes;
            fig.nodes_checkpoint = s.stats().nodes;
            fig.peak_checkpoint = peak.max(rss());
        }
    }
    fig.seconds = start.elapsed().as_secs_f64();
    let st = s.stats();
    s.validate().unwrap();
    fig.mem_end = st.memory_bytes;
    fig.nodes_end = st.nodes;
    fig.peak_end = peak.max(rss());
    println!(
        "soak {name}: {} frames in {:.1} s ({:.1} us/frame), {} live objects; structure memory {} B at frame {}, {} B half-way, {} B at the end; process peak RSS {} B at frame {} -> {} B at the end; nodes {} -> {}; {} sampled frames compared, {} pairs seen on them",
        fig.frames,
        fig.seconds,
        fig.seconds * 1e6 / fig.frames as f64,
        s.len(),
        fig.mem_checkpoint,
        fig.checkpoint,
        fig.mem_half,
        fig.mem_end,
        fig.peak_checkpoint,
        fig.checkpoint,
        fig.peak_end,
        fig.nodes_checkpoint,
        fig.nodes_end,
        fig.samples,
        fig.pairs_seen,
    );
    assert!(fig.pairs_seen > 0, "{name}: the bullets never hit anything");
    fig
}

/// Memory is flat when the process peak at the end is at most 1.1 times
/// the peak at the checkpoint, and the structure's figure at the end at
/// most 1.1 times its figure half-way (see the file's documentation).
fn flat(fig: &Figures) -> Vec<String> {
    let mut bad = Vec::new();
    if fig.mem_end as f64 > 1.1 * fig.mem_half as f64 {
        bad.push(format!(
            "{}: structure memory grew: {} B at frame {} -> {} B",
            fig.name,
            fig.mem_half,
            fig.frames / 2,
            fig.mem_end
        ));
    }
    if fig.peak_end as f64 > 1.1 * fig.peak_checkpoint as f64 {
        bad.push(format!(
            "{}: process peak RSS grew: {} B at frame {} -> {} B",
            fig.name, fig.peak_checkpoint, fig.checkpoint, fig.peak_end
        ));
    }
    bad
}

/// Set in the environment of the process the soak test starts for itself.
const CHILD: &str = "SPARTI_SOAK_CHILD";

/// The soak runs in a process of its own, this test binary started again
/// with only this test selected: its memory check reads the whole
/// process's resident memory, which the suite's other tests, running
/// beside it on the harness's threads, would disturb. The child's output
/// is printed here (shown on a failure or with `--nocapture`), line by
/// line as it comes, so a long run reports as it goes.
#[test]
fn soak_machine_gun_every_structure() {
    if std::env::var_os(CHILD).is_some() {
        machine_gun();
        return;
    }
    let exe = std::env::current_exe().expect("the test binary's path");
    let mut child = Command::new(exe)
        .args([
            "--exact",
            "soak::soak_machine_gun_every_structure",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the soak's own process starts");
    let mut err = child.stderr.take().expect("piped");
    let errors = std::thread::spawn(move || {
        let mut s = String::new();
        err.read_to_string(&mut s).map(|_| s)
    });
    let mut summaries = 0;
    let mut passed = false;
    for line in BufReader::new(child.stdout.take().expect("piped")).lines() {
        let line = line.expect("the soak's output");
        println!("{line}");
        // (The harness may print the test's name at the start of the line.)
        summaries += usize::from(line.contains("soak ") && line.contains(" frames in "));
        passed |= line.starts_with("test result: ok. 1 passed");
    }
    let status = child.wait().expect("the soak's process ends");
    eprint!(
        "{}",
        errors.join().expect("reader").expect("the soak's errors")
    );
    assert!(status.success(), "the soak's process failed ({status})");
    // A child that selected no test would pass too: it must have run the
    // soak, and printed the figures of every structure asked for.
    assert!(passed, "the soak's process ran no test");
    let wanted = STRUCTURES.iter().filter(|n| asked(n)).count();
    assert!(wanted > 0, "SOAK_STRUCTURES names none of {STRUCTURES:?}");
    assert_eq!(summaries, wanted, "structures soaked");
}

/// The structures' names, as `SOAK_STRUCTURES` gives them.
const STRUCTURES: [&str; 6] = [
    "octree",
    "quadtree",
    "loose-octree",
    "loose-quadtree",
    "bsp3",
    "bsp2",
];

/// Whether `SOAK_STRUCTURES` (comma-separated; all when unset) asks for
/// the structure `name`.
fn asked(name: &str) -> bool {
    let only = std::env::var("SOAK_STRUCTURES").unwrap_or_default();
    only.is_empty() || only.split(',').any(|x| x.trim() == name)
}

fn machine_gun() {
    let frames = env("SOAK_FRAMES", 2_000);
    let mut figs = Vec::new();
    if asked("octree") {
        figs.push(soak::<Vec3, _>("octree", Octree::<u32>::new(), frames));
    }
    if asked("quadtree") {
        figs.push(soak::<Vec2, _>("quadtree", Quadtree::<u32>::new(), frames));
    }
    if asked("loose-octree") {
        figs.push(soak::<Vec3, _>(
            "loose-octree",
            LooseOctree::<u32>::new(),
            frames,
        ));
    }
    if asked("loose-quadtree") {
        figs.push(soak::<Vec2, _>(
            "loose-quadtree",
            LooseQuadtree::<u32>::new(),
            frames,
        ));
    }
    if asked("bsp3") {
        figs.push(soak::<Vec3, _>("bsp3", Bsp3::<u32>::new(), frames));
    }
    if asked("bsp2") {
        figs.push(soak::<Vec2, _>("bsp2", Bsp2::<u32>::new(), frames));
    }
    let bad: Vec<String> = figs.iter().flat_map(flat).collect();
    assert!(bad.is_empty(), "memory not flat:\n{}", bad.join("\n"));
}
