//! Moving spheres, one frame per iteration: every object moves (bouncing off
//! the walls of its cube) and its bounds are updated, then every overlapping
//! pair is found (`SpatialIndex::pairs` into a reused `Vec`).
//!
//! Workload: N spheres, radius uniform in [0.5, 1.5], centres uniform in a
//! cube of side `cbrt(N * 4/3 * pi * 9 / 2)`, which gives each sphere about
//! two overlapping neighbours (`E[(r1 + r2)^3] = 9`), speed uniform in
//! [0, 0.1] per frame in a random direction, fixed seed.
//!
//! ```text
//! cargo bench -p sparti --bench pairs
//! ```

use std::hint::black_box;
use std::time::Duration;

use criterion::{
    BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group, criterion_main,
};
use glam::Vec3;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use sparti::{
    Aabb, BruteForce, Handle, ObjectDesc, Octree, OrthtreeConfig, Pair, Shape, SpatialIndex,
};

const SEED: u64 = 0x5EED;
const RADIUS: (f32, f32) = (0.5, 1.5);
const MAX_SPEED: f32 = 0.1;
/// Frames run before measuring, so the tree has settled into its moving
/// shape (objects re-filed, idle leaves created).
const WARM_UP_FRAMES: usize = 10;

/// The moving spheres.
struct Scene {
    pos: Vec<Vec3>,
    vel: Vec<Vec3>,
    radius: Vec<f32>,
    side: f32,
}

impl Scene {
    fn new(n: usize) -> Self {
        let mut rng = Pcg64::seed_from_u64(SEED);
        let side = (n as f32 * 4.0 / 3.0 * std::f32::consts::PI * 9.0 / 2.0).cbrt();
        let mut s = Scene {
            pos: Vec::with_capacity(n),
            vel: Vec::with_capacity(n),
            radius: Vec::with_capacity(n),
            side,
        };
        for _ in 0..n {
            s.radius.push(rng.random_range(RADIUS.0..=RADIUS.1));
            s.pos.push(Vec3::new(
                rng.random_range(0.0..side),
                rng.random_range(0.0..side),
                rng.random_range(0.0..side),
            ));
            // A uniform direction on the sphere.
            let z: f32 = rng.random_range(-1.0..=1.0);
            let phi = rng.random_range(0.0..std::f32::consts::TAU);
            let ring = (1.0 - z * z).max(0.0).sqrt();
            let dir = Vec3::new(ring * phi.cos(), ring * phi.sin(), z);
            s.vel.push(dir * rng.random_range(0.0..=MAX_SPEED));
        }
        s
    }

    /// The region every sphere's box stays in: the cube plus the largest
    /// radius.
    fn world(&self) -> Aabb<Vec3> {
        Aabb::new(Vec3::splat(-RADIUS.1), Vec3::splat(self.side + RADIUS.1)).expect("finite")
    }

    fn shape(&self, i: usize) -> Shape<Vec3> {
        Shape::sphere(self.pos[i], self.radius[i])
    }

    fn insert<S: SpatialIndex<Vec3, ()>>(&self, index: &mut S) -> Vec<Handle> {
        let descs = (0..self.pos.len())
            .map(|i| ObjectDesc::new(self.shape(i), ()))
            .collect();
        let handles = index.insert_many(descs).expect("valid spheres");
        index.flush();
        handles
    }

    /// Moves every sphere (centres bounce off the cube's walls) and updates
    /// its bounds.
    fn step<S: SpatialIndex<Vec3, ()>>(&mut self, index: &mut S, handles: &[Handle]) {
        for (i, &h) in handles.iter().enumerate() {
            let mut p = self.pos[i] + self.vel[i];
            for axis in 0..3 {
                if p[axis] < 0.0 {
                    p[axis] = -p[axis];
                    self.vel[i][axis] = -self.vel[i][axis];
                } else if p[axis] > self.side {
                    p[axis] = 2.0 * self.side - p[axis];
                    self.vel[i][axis] = -self.vel[i][axis];
                }
            }
            self.pos[i] = p;
            index.update(h, self.shape(i)).expect("inside the world");
        }
        index.end_frame();
    }
}

/// How long to measure one benchmark, and how: frames of over ~100 ms use
/// flat sampling (the same number of frames per sample), so that 10 samples
/// need 10 frames rather than Criterion's linear 55.
#[derive(Clone, Copy)]
struct Timing {
    seconds: u64,
    flat: bool,
}

const QUICK: Timing = Timing {
    seconds: 2,
    flat: false,
};
const SLOW: Timing = Timing {
    seconds: 8,
    flat: true,
};

/// A structure holding a warmed-up scene.
struct Bench<S> {
    scene: Scene,
    index: S,
    handles: Vec<Handle>,
    pairs: Vec<Pair>,
}

impl<S: SpatialIndex<Vec3, ()>> Bench<S> {
    fn new(name: &str, n: usize, make: impl FnOnce(&Scene) -> S) -> Self {
        let scene = Scene::new(n);
        let mut index = make(&scene);
        let handles = scene.insert(&mut index);
        let mut b = Bench {
            scene,
            index,
            handles,
            pairs: Vec::new(),
        };
        for _ in 0..WARM_UP_FRAMES {
            b.frame();
        }
        // One frame's figures, for the record (not timed).
        b.index.reset_counters();
        b.frame();
        let (tests, st) = (b.index.counters().pair_tests, b.index.stats());
        eprintln!(
            "{name}/{n}: {} pairs, {tests} pair tests ({:.1} per object), {} nodes, depth {}",
            b.pairs.len(),
            tests as f64 / n as f64,
            st.nodes,
            st.max_depth
        );
        b
    }

    /// One frame: move and update everything, then find the pairs.
    fn frame(&mut self) -> usize {
        self.scene.step(&mut self.index, &self.handles);
        self.index.pairs(&mut self.pairs);
        self.pairs.len()
    }
}

/// Benchmarks one structure on one scene size. The scene is built and
/// warmed up on first use, so benchmarks left out by a filter cost nothing.
fn bench_one<S: SpatialIndex<Vec3, ()>>(
    c: &mut Criterion,
    name: &str,
    n: usize,
    timing: Timing,
    make: impl FnOnce(&Scene) -> S,
) {
    let mut group = c.benchmark_group("pairs");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(timing.seconds))
        .sampling_mode(if timing.flat {
            SamplingMode::Flat
        } else {
            SamplingMode::Auto
        })
        .throughput(Throughput::Elements(n as u64));
    let mut make = Some(make);
    let mut bench: Option<Bench<S>> = None;
    group.bench_function(BenchmarkId::new(name, n), |b| {
        let bench =
            bench.get_or_insert_with(|| Bench::new(name, n, make.take().expect("built once")));
        b.iter(|| black_box(bench.frame()));
    });
    group.finish();
}

/// The octree with the default settings (minimum node size 1), its world
/// set to the region the spheres stay in, so it never grows.
fn octree(scene: &Scene) -> Octree<()> {
    Octree::with_config(OrthtreeConfig {
        world: Some(scene.world()),
        ..Default::default()
    })
    .expect("valid configuration")
}

fn pairs(c: &mut Criterion) {
    for (n, timing) in [(1_000, QUICK), (10_000, QUICK), (100_000, SLOW)] {
        bench_one(c, "octree", n, timing, octree);
    }
    for (n, timing) in [(1_000, QUICK), (10_000, SLOW)] {
        bench_one(c, "brute_force", n, timing, |_| BruteForce::new());
    }
}

criterion_group!(benches, pairs);
criterion_main!(benches);
