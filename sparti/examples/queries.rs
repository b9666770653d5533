//! Static-scene queries, build and memory: the figures of issue 4.
//!
//! Scene: N static spheres laid out as the dynamic-pairs workload (radius
//! uniform in [0.5, 1.5], centres uniform in a cube of side
//! `cbrt(N * 4/3 * pi * 9/2)`), fixed seed. Then, for each 3D structure
//! (world preset to the scene's cube):
//!
//! - `rays`: 100,000 rays, origin uniform in the cube, uniform random
//!   direction, max distance = the cube's side, `ray_nearest` one by one,
//!   then the same rays through `ray_nearest_batch`;
//! - `boxes`: 100,000 cubes of side 8, centres uniform in the cube,
//!   `query_aabb` one by one, then `query_aabb_batch`;
//! - `build`: `insert_many` + `flush` of 100,000 and 1,000,000 boxes (the
//!   spheres' bounding boxes), best of 3;
//! - `frustum`: 2,000 of the kit's camera frustums, `query_frustum` one
//!   by one;
//! - `nearest`: the 8 nearest objects of each of 20,000 points (the
//!   rays' origins), `nearest` one by one;
//! - `rayall`: every hit of 20,000 of the rays, each a quarter of the
//!   cube's side long, `ray_all` one by one;
//! - `refresh`: one ray query right after one object moved (the query
//!   recomputes the subtree boxes: the cost a frame pays once if it moves
//!   objects then queries), against a ray query alone;
//! - `memory`: `stats().memory_bytes` per object after the queries, and
//!   above the objects' own data (`size_of::<Object<Vec3, u32>>()` each).
//!
//! Each figure is given in wall time and, on Linux, in CPU time of the
//! measuring thread (`/proc/thread-self/schedstat`): on a shared machine
//! the second is what the work costs (the kernel updates it at its ticks,
//! so it is good to a few ms: fine for the 100k-query loops and the 1M
//! build, rough for the 100k build). For a batch, the CPU time of the
//! whole process (every thread) is printed beside its wall time.
//!
//! ```text
//! cargo run --release -p sparti --example queries                     # all
//! cargo run --release -p sparti --example queries -- octree rays      # a filter
//! cargo run --release -p sparti --features rayon --example queries    # batches on threads
//! ```
//! Settings can be tried through the environment: `SPARTI_N` (the
//! scene's objects, 100,000 unless set), `SPARTI_MIN` (octree
//! minimum node size), `SPARTI_LEAF` (loose leaf capacity), `SPARTI_BSP_LEAF`
//! (BSP leaf capacity).
//!
//! Arguments are words: a structure (`octree`, `loose`, `bsp`) and a part
//! (`rays`, `boxes`, `frustum`, `nearest`, `rayall`, `build`, `memory`,
//! `refresh`);
//! none means all.

use std::hint::black_box;
use std::time::Instant;

use glam::Vec3;
use sparti::{
    Aabb, Bsp3, BspConfig, Filter, Frustum, Handle, LooseConfig, LooseOctree, Object, ObjectDesc,
    Octree, OrthtreeConfig, Ray, RayHit, Shape, SpatialIndex,
};
use sparti_scenes::{Moving, Scenario, queries};

const N: usize = 100_000;
const QUERIES: usize = 100_000;

/// CPU time of the calling thread in seconds (Linux: `schedstat`, in
/// nanoseconds), or `None` elsewhere. The machine these figures come from
/// is shared: CPU time is what a query costs, wall time what it took.
fn thread_cpu() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: f64 = s.split_whitespace().next()?.parse().ok()?;
    Some(ns * 1e-9)
}

/// CPU time of the whole process, every thread, in seconds (Linux:
/// `/proc/self/stat`, in clock ticks of 10 ms), or `None` elsewhere.
fn process_cpu() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/stat").ok()?;
    let rest = &s[s.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

/// CPU seconds of every thread of the process so far, by thread id
/// (Linux: `/proc/self/task/*/schedstat`), to show how a batch was shared.
fn threads_cpu() -> Vec<(u64, f64)> {
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    let mut v: Vec<(u64, f64)> = dir
        .flatten()
        .filter_map(|e| {
            let tid = e.file_name().to_str()?.parse().ok()?;
            let s = std::fs::read_to_string(e.path().join("schedstat")).ok()?;
            let ns: f64 = s.split_whitespace().next()?.parse().ok()?;
            Some((tid, ns * 1e-9))
        })
        .collect();
    v.sort_by_key(|x| x.0);
    v
}

/// The CPU seconds each thread spent between two [`threads_cpu`] readings
/// (threads that spent less than 1 ms left out), as text.
fn shares(before: &[(u64, f64)], after: &[(u64, f64)]) -> String {
    after
        .iter()
        .map(|(t, c)| c - before.iter().find(|b| b.0 == *t).map_or(0.0, |b| b.1))
        .filter(|d| *d > 1e-3)
        .map(|d| format!("{d:.2}"))
        .collect::<Vec<_>>()
        .join(" + ")
}

/// Runs `f` and returns its result, wall seconds, this thread's CPU
/// seconds and the process's CPU seconds.
fn timed<R>(f: impl FnOnce() -> R) -> (R, f64, f64, f64) {
    let (c0, p0) = (thread_cpu().unwrap_or(0.0), process_cpu().unwrap_or(0.0));
    let t = Instant::now();
    let r = f();
    let wall = t.elapsed().as_secs_f64();
    let (c1, p1) = (thread_cpu().unwrap_or(0.0), process_cpu().unwrap_or(0.0));
    (r, wall, c1 - c0, p1 - p0)
}

/// N static spheres of the scene kit's uniform scene (as `sparti-bench`),
/// and the side of their cube.
fn spheres(n: usize, seed: u64) -> (Vec<Shape<Vec3>>, f32) {
    let scene = Moving::<Vec3>::with_seed(Scenario::Uniform, n, seed);
    ((0..n).map(|i| scene.shape(i)).collect(), scene.side())
}

/// The kit's rays, each as long as the cube's side.
fn rays(side: f32) -> Vec<(Ray<Vec3>, f32)> {
    queries::rays(QUERIES, side)
        .into_iter()
        .map(|r| (r, side))
        .collect()
}

/// The kit's box queries (cubes of side 8).
fn boxes(side: f32) -> Vec<Aabb<Vec3>> {
    queries::box_queries(QUERIES, side)
}

/// Static objects: the shapes, or their bounding boxes.
fn descs(shapes: &[Shape<Vec3>], is_box: bool) -> Vec<ObjectDesc<Vec3, u32>> {
    shapes
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let shape = if is_box { Shape::Box(s.aabb()) } else { *s };
            ObjectDesc::new(shape, i as u32).with_static(true)
        })
        .collect()
}

fn world(side: f32) -> Aabb<Vec3> {
    // Spheres reach 1.5 past the centres' cube.
    Aabb::new(Vec3::splat(-1.5), Vec3::splat(side + 1.5)).unwrap()
}

type Make = fn(Aabb<Vec3>) -> Box<dyn Bench>;

/// The part of [`SpatialIndex`] the bench drives, object-safe.
trait Bench {
    /// Inserts and builds; returns the seconds `insert_many` took.
    fn load(&mut self, descs: Vec<ObjectDesc<Vec3, u32>>) -> f64;
    fn rays(&mut self, rays: &[(Ray<Vec3>, f32)]) -> (usize, f32);
    fn rays_batch(&mut self, rays: &[(Ray<Vec3>, f32)], out: &mut Vec<Option<RayHit<Vec3>>>);
    fn boxes(&mut self, boxes: &[Aabb<Vec3>]) -> usize;
    fn boxes_batch(&mut self, boxes: &[Aabb<Vec3>], h: &mut Vec<Handle>, o: &mut Vec<usize>);
    /// Every object in each frustum: how many.
    fn frustums(&mut self, frustums: &[Frustum<Vec3>]) -> usize;
    /// The `k` nearest of each point: how many found, their distances'
    /// sum.
    fn knn(&mut self, points: &[Vec3], k: usize) -> (usize, f32);
    /// Every hit of each ray: how many.
    fn rays_all(&mut self, rays: &[(Ray<Vec3>, f32)]) -> usize;
    fn memory(&self) -> usize;
    fn shape(&self) -> String;
    fn work(&mut self) -> String;
    /// Seconds (wall: too short for `schedstat`, which the kernel updates
    /// at its ticks) of one ray query right after one object moved: the
    /// query pays the recomputation of the subtree boxes.
    fn ray_after_move(&mut self, ray: &(Ray<Vec3>, f32)) -> f64;
}

impl<S: SpatialIndex<Vec3, u32>> Bench for S {
    fn load(&mut self, descs: Vec<ObjectDesc<Vec3, u32>>) -> f64 {
        let t = Instant::now();
        self.insert_many(descs).unwrap();
        let queued = t.elapsed().as_secs_f64();
        self.flush();
        queued
    }
    fn rays(&mut self, rays: &[(Ray<Vec3>, f32)]) -> (usize, f32) {
        let (mut hits, mut sum) = (0, 0.0);
        for (r, d) in rays {
            if let Some(h) = self.ray_nearest(r, *d, Filter::ALL) {
                hits += 1;
                sum += h.distance;
            }
        }
        (hits, sum)
    }
    fn rays_batch(&mut self, rays: &[(Ray<Vec3>, f32)], out: &mut Vec<Option<RayHit<Vec3>>>) {
        self.ray_nearest_batch(rays, Filter::ALL, out);
    }
    fn boxes(&mut self, boxes: &[Aabb<Vec3>]) -> usize {
        let mut out = Vec::new();
        let mut total = 0;
        for b in boxes {
            self.query_aabb(b, Filter::ALL, &mut out);
            total += out.len();
        }
        total
    }
    fn boxes_batch(&mut self, boxes: &[Aabb<Vec3>], h: &mut Vec<Handle>, o: &mut Vec<usize>) {
        self.query_aabb_batch(boxes, Filter::ALL, h, o);
    }
    fn frustums(&mut self, frustums: &[Frustum<Vec3>]) -> usize {
        let mut out = Vec::new();
        let mut total = 0;
        for f in frustums {
            self.query_frustum(f, Filter::ALL, &mut out);
            total += out.len();
        }
        total
    }
    fn knn(&mut self, points: &[Vec3], k: usize) -> (usize, f32) {
        let (mut found, mut sum) = (0, 0.0);
        for &p in points {
            for (n, _) in self.nearest(p, k, Filter::ALL) {
                found += 1;
                sum += n.distance;
            }
        }
        (found, sum)
    }
    fn rays_all(&mut self, rays: &[(Ray<Vec3>, f32)]) -> usize {
        let mut out = Vec::new();
        let mut total = 0;
        for (r, d) in rays {
            self.ray_all(r, *d, Filter::ALL, &mut out);
            total += out.len();
        }
        total
    }
    fn memory(&self) -> usize {
        self.stats().memory_bytes
    }
    fn shape(&self) -> String {
        let st = self.stats();
        let biggest = st.objects_per_node.len().saturating_sub(1);
        format!(
            "{} nodes, depth {}, largest node holds {biggest} objects",
            st.nodes, st.max_depth
        )
    }
    fn ray_after_move(&mut self, ray: &(Ray<Vec3>, f32)) -> f64 {
        let (h, shape) = {
            let (h, o) = self.objects().next().expect("a scene");
            (h, o.shape)
        };
        self.update(h, shape).unwrap();
        let (_, wall, _, _) = timed(|| black_box(self.ray_nearest(&ray.0, ray.1, Filter::ALL)));
        wall
    }
    fn work(&mut self) -> String {
        let c = self.counters();
        self.reset_counters();
        let q = c.queries.max(1) as f64;
        format!(
            "per query: {:.1} node visits, {:.1} shape tests",
            c.node_visits as f64 / q,
            c.shape_tests as f64 / q
        )
    }
}

/// A setting from the environment (`SPARTI_<name>`), for trying options.
fn env_or<X: std::str::FromStr>(name: &str, default: X) -> X {
    std::env::var(format!("SPARTI_{name}"))
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn structures() -> Vec<(&'static str, Make)> {
    vec![
        ("octree", |w| {
            Box::new(
                Octree::<u32>::with_config(OrthtreeConfig {
                    world: Some(w),
                    min_node_size: env_or("MIN", 1.0),
                    ..Default::default()
                })
                .unwrap(),
            )
        }),
        ("loose", |w| {
            Box::new(
                LooseOctree::<u32>::with_config(LooseConfig {
                    world: Some(w),
                    leaf_capacity: env_or("LEAF", 0),
                    ..Default::default()
                })
                .unwrap(),
            )
        }),
        ("bsp", |w| {
            Box::new(
                Bsp3::<u32>::with_config(BspConfig {
                    world: Some(w),
                    leaf_capacity: env_or("BSP_LEAF", 1),
                    ..Default::default()
                })
                .unwrap(),
            )
        }),
    ]
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let want = |w: &str| {
        let named: Vec<&String> = args
            .iter()
            .filter(|a| ["octree", "loose", "bsp"].contains(&a.as_str()))
            .collect();
        named.is_empty() || named.iter().any(|a| *a == w)
    };
    let part = |w: &str| {
        let named: Vec<&String> = args
            .iter()
            .filter(|a| {
                [
                    "rays", "boxes", "frustum", "nearest", "rayall", "build", "memory", "refresh",
                ]
                .contains(&a.as_str())
            })
            .collect();
        named.is_empty() || named.iter().any(|a| *a == w)
    };
    let threads = if cfg!(feature = "rayon") {
        "rayon"
    } else {
        "1 thread"
    };
    // The scene's size: `SPARTI_N` (the figures of issue 4: 100,000).
    let scene_n = env_or("N", N);
    println!("sparti queries example ({threads}), N = {scene_n}");
    let (shapes, side) = spheres(scene_n, 0x5EED);
    let (rays, boxes) = (rays(side), boxes(side));
    for (name, make) in structures() {
        if !want(name) {
            continue;
        }
        let mut s = make(world(side));
        s.load(descs(&shapes, false));
        s.work();
        if part("rays") {
            let ((hits, sum), e, c, _) = timed(|| s.rays(&rays));
            let mut out = Vec::new();
            let t0 = threads_cpu();
            let (_, eb, cb, pb) = timed(|| s.rays_batch(&rays, &mut out));
            let split = shares(&t0, &threads_cpu());
            let bh = out.iter().flatten().count();
            let bs: f32 = out.iter().flatten().map(|h| h.distance).sum();
            assert_eq!((bh, bs), (hits, sum), "batch differs from the loop");
            let q = QUERIES as f64;
            println!(
                "{name:7} rays   single {:>9.0}/s wall {:>9.0}/s cpu | batch {:>9.0}/s wall, {:.2} s cpu on {:.2} s main-thread cpu ({hits} hits)",
                q / e,
                q / c,
                q / eb,
                pb,
                cb
            );
            println!("{name:7} rays   batch CPU s by thread: {split}");
            println!("{name:7} rays   {}", s.work());
        }
        if part("boxes") {
            let (total, e, c, _) = timed(|| s.boxes(&boxes));
            let (mut h, mut o) = (Vec::new(), Vec::new());
            let t0 = threads_cpu();
            let (_, eb, cb, pb) = timed(|| s.boxes_batch(&boxes, &mut h, &mut o));
            let split = shares(&t0, &threads_cpu());
            assert_eq!(h.len(), total, "batch differs from the loop");
            let q = QUERIES as f64;
            println!(
                "{name:7} boxes  single {:>9.0}/s wall {:>9.0}/s cpu | batch {:>9.0}/s wall, {:.2} s cpu on {:.2} s main-thread cpu ({total} found)",
                q / e,
                q / c,
                q / eb,
                pb,
                cb
            );
            println!("{name:7} boxes  batch CPU s by thread: {split}");
            println!("{name:7} boxes  {}", s.work());
        }
        if part("frustum") {
            let frustums = queries::frustums(2_000, side);
            let (found, e, c, _) = timed(|| s.frustums(&frustums));
            let q = frustums.len() as f64;
            println!(
                "{name:7} frustum: {:.1} us a query wall, {:.1} us cpu ({found} found)",
                e / q * 1e6,
                c / q * 1e6
            );
            println!("{name:7} frustum {}", s.work());
        }
        if part("nearest") {
            let points: Vec<Vec3> = rays[..20_000].iter().map(|r| r.0.origin).collect();
            let ((found, sum), e, c, _) = timed(|| s.knn(&points, 8));
            let q = points.len() as f64;
            println!(
                "{name:7} nearest 8: {:.2} us a query wall, {:.2} us cpu ({found} found, distances' sum {sum:.0})",
                e / q * 1e6,
                c / q * 1e6
            );
            println!("{name:7} nearest {}", s.work());
        }
        if part("rayall") {
            let short: Vec<(Ray<Vec3>, f32)> =
                rays[..20_000].iter().map(|r| (r.0, side * 0.25)).collect();
            let (hits, e, c, _) = timed(|| s.rays_all(&short));
            let q = short.len() as f64;
            println!(
                "{name:7} rayall: {:.2} us a query wall, {:.2} us cpu ({hits} hits)",
                e / q * 1e6,
                c / q * 1e6
            );
            println!("{name:7} rayall {}", s.work());
        }
        if part("refresh") {
            let mut t: Vec<f64> = (0..21).map(|i| s.ray_after_move(&rays[i])).collect();
            t.sort_by(f64::total_cmp);
            let (_, wall, _, _) = timed(|| s.rays(&rays[..1000]));
            println!(
                "{name:7} refresh one ray after one move: {:.2} ms wall (median of 21); a ray alone: {:.4} ms wall (mean of 1000)",
                t[10] * 1e3,
                wall
            );
        }
        if part("memory") {
            let m = s.memory();
            let own = core::mem::size_of::<Object<Vec3, u32>>();
            println!(
                "{name:7} memory {:.1} B/object, {:.1} B/object above the objects' own {own} B",
                m as f64 / scene_n as f64,
                (m as f64 - (scene_n * own) as f64) / scene_n as f64
            );
            println!("{name:7} tree   {}", s.shape());
        }
        drop(s);
        if part("build") {
            for n in [N, 1_000_000] {
                let (shapes, side) = spheres(n, 0xB11D);
                let (mut best, mut queue, mut cpu) = (f64::INFINITY, 0.0, f64::INFINITY);
                for _ in 0..3 {
                    let mut s = make(world(side));
                    let d = descs(&shapes, true);
                    let (q, e, c, _) = timed(|| s.load(d));
                    if e < best {
                        (best, queue) = (e, q);
                    }
                    cpu = cpu.min(c);
                    black_box(s.memory());
                }
                println!(
                    "{name:7} build  {n:>8} boxes: {:.1} ms wall (insert_many {:.1} ms, flush {:.1} ms), {:.1} ms cpu",
                    best * 1e3,
                    queue * 1e3,
                    (best - queue) * 1e3,
                    cpu * 1e3
                );
            }
        }
    }
}
