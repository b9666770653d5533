//! Moving spheres (3D) and circles (2D), one frame per iteration: every
//! object moves (bouncing off the walls of its cube or square) and its bounds
//! are updated, then every overlapping pair is found (`SpatialIndex::pairs`
//! into a reused `Vec`).
//!
//! Workload: N objects, radius uniform in [0.5, 1.5], centres uniform in a
//! cube of side `cbrt(N * 4/3 * pi * 9 / 2)` (3D) or a square of side
//! `sqrt(N * pi * (4 + 1/6) / 2)` (2D), which gives each object about two
//! overlapping neighbours, speed uniform in [0, 0.1] per frame in a random
//! direction, fixed seed: the scene kit's `uniform` scene (`sparti-scenes`),
//! as in `sparti-bench` itself. The structures are the `sparti` tool's
//! catalogue, named as on its command line (`octree`, `loose-quadtree`...).
//!
//! ```text
//! cargo bench -p sparti-bench --bench pairs                 # everything (~4 min)
//! cargo bench -p sparti-bench --bench pairs -- pairs3d/bsp  # a filter
//! ```

use std::hint::black_box;
use std::time::Duration;

use criterion::{
    BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group, criterion_main,
};
use sparti::glam::{Vec2, Vec3};
use sparti::{Handle, ObjectDesc, Pair, Shape, SpatialIndex, Vector};
use sparti_cli::catalogue::{Config, IndexJob, Structure};
use sparti_scenes::{Moving, Scenario};

/// Frames run before measuring, so the tree has settled into its moving
/// shape (objects re-filed, idle leaves created).
const WARM_UP_FRAMES: usize = 10;

/// The moving objects: the scene `sparti-bench` itself runs, the scene
/// kit's uniform scenario (same seed, same generator).
type Scene<V> = Moving<V>;

fn shape<V: Vector>(scene: &Scene<V>, i: usize) -> Shape<V> {
    scene.shape(i)
}

fn insert<V: Vector, S: SpatialIndex<V, ()>>(scene: &Scene<V>, index: &mut S) -> Vec<Handle> {
    let descs = (0..scene.len())
        .map(|i| ObjectDesc::new(shape(scene, i), ()))
        .collect();
    let handles = index.insert_many(descs).expect("valid spheres");
    index.flush();
    handles
}

/// Moves every object (centres bounce off the walls) and updates its
/// bounds.
fn step<V: Vector, S: SpatialIndex<V, ()>>(
    scene: &mut Scene<V>,
    index: &mut S,
    handles: &[Handle],
) {
    scene.step();
    for (i, &h) in handles.iter().enumerate() {
        index.update(h, shape(scene, i)).expect("inside the world");
    }
    index.end_frame();
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
    seconds: 6,
    flat: true,
};

/// A structure holding a warmed-up scene.
struct Bench<V: Vector, S> {
    scene: Scene<V>,
    index: S,
    handles: Vec<Handle>,
    pairs: Vec<Pair>,
}

impl<V: Vector, S: SpatialIndex<V, ()>> Bench<V, S> {
    fn new(name: &str, scene: Scene<V>, mut index: S) -> Self {
        let n = scene.len();
        let handles = insert(&scene, &mut index);
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
        let (c, st) = (b.index.counters(), b.index.stats());
        eprintln!(
            "{}d/{name}/{n}: {} pairs, {} pair tests ({:.1} per object), {} bound tests, {} nodes, depth {}",
            V::DIM,
            b.pairs.len(),
            c.pair_tests,
            c.pair_tests as f64 / n as f64,
            c.bound_tests,
            st.nodes,
            st.max_depth
        );
        b
    }

    /// One frame: move and update everything, then find the pairs.
    fn frame(&mut self) -> usize {
        step(&mut self.scene, &mut self.index, &self.handles);
        self.index.pairs(&mut self.pairs);
        self.pairs.len()
    }
}

/// A warmed-up structure's frame: each call runs one, giving the pair
/// count.
type Frame = Box<dyn FnMut() -> usize>;

/// Warms up the structure the catalogue built on the scene.
struct WarmUp<'a, V: Vector> {
    name: &'a str,
    scene: Scene<V>,
}

impl<V: Vector> IndexJob<V, ()> for WarmUp<'_, V> {
    type Output = Frame;
    fn run<S: SpatialIndex<V, ()> + 'static>(self, index: S) -> Frame {
        let mut bench = Bench::new(self.name, self.scene, index);
        Box::new(move || bench.frame())
    }
}

/// Benchmarks one structure of the `sparti` tool's catalogue (default
/// settings, its world the region the objects stay in, so it never grows)
/// on one scene size. The scene is built and warmed up on first use, so
/// benchmarks left out by a filter cost nothing.
fn bench_one<V: Vector>(c: &mut Criterion, structure: Structure, n: usize, timing: Timing) {
    let name = structure.name(V::DIM);
    let mut group = c.benchmark_group(format!("pairs{}d", V::DIM));
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
    let mut frame: Option<Frame> = None;
    group.bench_function(BenchmarkId::new(name, n), |b| {
        let frame = frame.get_or_insert_with(|| {
            let scene = Moving::<V>::new(Scenario::Uniform, n);
            Config::default_of(structure)
                .build(Some(scene.world()), WarmUp { name, scene })
                .expect("valid configuration")
        });
        b.iter(|| black_box(frame()));
    });
    group.finish();
}

/// Every structure of one dimension.
fn dimension<V: Vector>(c: &mut Criterion) {
    let sizes = [(1_000, QUICK), (10_000, QUICK), (100_000, SLOW)];
    for s in [Structure::Orthtree, Structure::Loose, Structure::Bsp] {
        for (n, timing) in sizes {
            bench_one::<V>(c, s, n, timing);
        }
    }
    for (n, timing) in [(1_000, QUICK), (10_000, SLOW)] {
        bench_one::<V>(c, Structure::Brute, n, timing);
    }
}

fn pairs(c: &mut Criterion) {
    dimension::<Vec3>(c);
    dimension::<Vec2>(c);
}

criterion_group!(benches, pairs);
criterion_main!(benches);
