//! Timing structures frame by frame, for `sparti bench` and `sparti tune`.
//!
//! A workload is a [`Source`] of frames, each a list of [`Op`]s (insert,
//! move, remove) on numbered slots. [`measure`] builds a structure from a
//! [`Config`], feeds it frames and times each one with
//! [`std::time::Instant`], single-threaded: the frame's operations, then
//! every overlapping pair ([`SpatialIndex::for_each_pair`], counting the
//! pairs and fingerprinting them), then the workload's queries if it has
//! any (a scene's query file, answered every frame as a game would, their
//! results fingerprinted and their time also kept apart), then
//! [`SpatialIndex::end_frame`]. Making the operations (moving objects,
//! diffing scene frames) is not timed.
//!
//! The first frames are a warm-up (the first builds the tree); the figure
//! kept is the median of the measured frames. Every frame's pair count and
//! the fingerprints of its pairs and query results are kept, so that runs
//! of different structures on the same source can be checked against each
//! other ([`Run::first_difference`]).
//!
//! Scene files become a [`ScenePlan`]: each frame diffed against the one
//! before, as [`crate::replay`] does (absent ids removed in id order, then
//! rows in file order: new ids inserted, changed shapes updated, changed
//! layer, mask or static flag removed and inserted again). A short scene is
//! replayed several times: after its last frame comes a frame that brings
//! the objects back to the first frame's state.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use sparti::{Aabb, BruteForce, Handle, Neighbor, ObjectDesc, RayHit, Shape, SpatialIndex, Vector};

use crate::catalogue::IndexJob;
pub use crate::catalogue::{Config, Structure};

use crate::queries::{self, Query};
use crate::scene::{Change, Frame, Row, Scene};

/// One change to the objects of a workload. Slots number the objects
/// (densely, from 0); a slot is reused only after its object is removed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Op<V: Vector> {
    /// A new object in an empty slot.
    Insert {
        /// Its slot.
        slot: u32,
        /// Its shape.
        shape: Shape<V>,
        /// Layer bits.
        layer: u32,
        /// Mask bits.
        mask: u32,
        /// Static flag.
        is_static: bool,
        /// The scene file's line (0 for built-in scenarios), for messages.
        line: usize,
    },
    /// The object in a slot moves or changes size.
    Update {
        /// Its slot.
        slot: u32,
        /// Its new shape.
        shape: Shape<V>,
        /// The scene file's line (0 for built-in scenarios).
        line: usize,
    },
    /// The object in a slot is removed.
    Remove {
        /// Its slot.
        slot: u32,
        /// The scene file's line (0 for built-in scenarios).
        line: usize,
    },
}

/// A workload: an endless sequence of frames.
pub trait Source<V: Vector> {
    /// Writes the next frame's operations into `ops` (cleared first).
    fn next_frame(&mut self, ops: &mut Vec<Op<V>>);
}

/// How many frames to run and measure.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Timing {
    /// Frames run before measuring (the first one builds the tree).
    pub warm_up: usize,
    /// Measure at least this many frames...
    pub min_frames: usize,
    /// ... and keep measuring until they add up to this long ...
    pub min_time: Duration,
    /// ... but never more frames than this.
    pub max_frames: usize,
}

/// What one structure did on one workload.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Run {
    /// Seconds per measured frame.
    pub seconds: Vec<f64>,
    /// Pair tests ([`sparti::Counters::pair_tests`]) per measured frame.
    pub pair_tests: Vec<u64>,
    /// Live objects per measured frame.
    pub objects: Vec<usize>,
    /// Pairs found in every frame, warm-up included.
    pub pairs: Vec<usize>,
    /// An order-independent fingerprint of every frame's pairs (of slots).
    pub fingerprints: Vec<u64>,
    /// Seconds spent in the queries, per measured frame (a part of
    /// `seconds`; empty when the workload has no queries).
    pub query_seconds: Vec<f64>,
    /// A fingerprint of every frame's query results (0 without queries).
    pub query_fingerprints: Vec<u64>,
}

/// Where two runs first disagree ([`Run::first_difference`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Difference {
    /// The frame, 0-based, warm-up included.
    pub frame: usize,
    /// Pairs found by the run and by the reference in that frame.
    pub pairs: (usize, usize),
    /// True when the pairs agree and the query results do not.
    pub in_queries: bool,
}

impl Difference {
    /// What differs, for a message: `"{got} pairs, {reference} {want}"` or
    /// the query results.
    pub fn describe(&self, reference: &str) -> String {
        let (got, want) = self.pairs;
        if self.in_queries {
            format!("the same {got} pairs, but other query results than {reference}")
        } else if got == want {
            format!("{got} pairs, {reference} {want} (same count, different pairs)")
        } else {
            format!("{got} pairs, {reference} {want}")
        }
    }
}

/// The median of some numbers (0 when there are none).
pub fn median(values: &[f64]) -> f64 {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return 0.0;
    }
    v.sort_unstable_by(f64::total_cmp);
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    }
}

impl Run {
    /// Median milliseconds per frame.
    pub fn median_ms(&self) -> f64 {
        median(&self.seconds) * 1e3
    }

    /// Mean pair tests per measured frame.
    pub fn mean_pair_tests(&self) -> f64 {
        mean(self.pair_tests.iter().map(|&t| t as f64))
    }

    /// Mean live objects per measured frame.
    pub fn mean_objects(&self) -> f64 {
        mean(self.objects.iter().map(|&n| n as f64))
    }

    /// Mean pairs per frame over the measured frames.
    pub fn mean_pairs(&self) -> f64 {
        let skip = self.pairs.len() - self.seconds.len().min(self.pairs.len());
        mean(self.pairs[skip..].iter().map(|&n| n as f64))
    }

    /// Median milliseconds per frame spent in the queries (0 without).
    pub fn median_query_ms(&self) -> f64 {
        median(&self.query_seconds) * 1e3
    }

    /// The first frame where this run and `reference` found different
    /// pairs or query results, among the frames both ran.
    pub fn first_difference(&self, reference: &Run) -> Option<Difference> {
        let frames = self.pairs.len().min(reference.pairs.len());
        let queries = |r: &Run, i: usize| r.query_fingerprints.get(i).copied().unwrap_or(0);
        (0..frames).find_map(|i| {
            let pairs_differ = self.pairs[i] != reference.pairs[i]
                || self.fingerprints[i] != reference.fingerprints[i];
            let queries_differ = queries(self, i) != queries(reference, i);
            (pairs_differ || queries_differ).then_some(Difference {
                frame: i,
                pairs: (self.pairs[i], reference.pairs[i]),
                in_queries: !pairs_differ,
            })
        })
    }
}

fn mean(values: impl Iterator<Item = f64>) -> f64 {
    let (sum, n) = values.fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    if n == 0 { 0.0 } else { sum / n as f64 }
}

/// Why a measurement stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MeasureError {
    /// The scene file's line of the operation that failed (0 if none).
    pub line: usize,
    /// What went wrong.
    pub message: String,
}

/// A 64-bit mix of a pair of slots (splitmix64's finaliser).
fn mix(a: u32, b: u32) -> u64 {
    let (a, b) = (a.min(b), a.max(b));
    let mut z = (u64::from(a) << 32 | u64::from(b)).wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Builds the structure `config` describes (its root enclosing `world` if
/// given, growing if objects leave it) and measures it on `source`,
/// answering `queries` every frame after the pairs.
///
/// # Errors
/// The configuration is refused, or the structure refuses an object.
pub fn measure<V: Vector>(
    config: Config,
    world: Option<Aabb<V>>,
    source: &mut dyn Source<V>,
    queries: &[Query<V>],
    timing: &Timing,
) -> Result<Run, MeasureError> {
    /// The measurement, handed the structure the catalogue builds.
    struct Measure<'a, V: Vector> {
        source: &'a mut dyn Source<V>,
        queries: &'a [Query<V>],
        timing: &'a Timing,
    }
    impl<V: Vector> IndexJob<V, u32> for Measure<'_, V> {
        type Output = Result<Run, MeasureError>;
        fn run<S: SpatialIndex<V, u32> + 'static>(self, index: S) -> Self::Output {
            run(index, self.source, self.queries, self.timing)
        }
    }
    let job = Measure {
        source,
        queries,
        timing,
    };
    config.build(world, job).map_err(|e| MeasureError {
        line: 0,
        message: format!("the settings {} are refused: {e}", config.params()),
    })?
}

/// Applies one frame's operations.
fn apply<V: Vector, S: SpatialIndex<V, u32>>(
    index: &mut S,
    ops: &[Op<V>],
    handles: &mut Vec<Option<Handle>>,
) -> Result<(), MeasureError> {
    let fail = |line: usize, e: String| MeasureError { line, message: e };
    for op in ops {
        match *op {
            Op::Insert {
                slot,
                shape,
                layer,
                mask,
                is_static,
                line,
            } => {
                let desc = ObjectDesc::new(shape, slot)
                    .with_layer(layer)
                    .with_mask(mask)
                    .with_static(is_static);
                let h = index
                    .insert(desc)
                    .map_err(|e| fail(line, format!("an object was refused: {e}")))?;
                let i = slot as usize;
                if handles.len() <= i {
                    handles.resize(i + 1, None);
                }
                handles[i] = Some(h);
            }
            Op::Update { slot, shape, line } => {
                let h = handles
                    .get(slot as usize)
                    .copied()
                    .flatten()
                    .ok_or_else(|| fail(line, format!("slot {slot} is empty")))?;
                index
                    .update(h, shape)
                    .map_err(|e| fail(line, format!("a move was refused: {e}")))?;
            }
            Op::Remove { slot, line } => {
                let h = handles
                    .get_mut(slot as usize)
                    .and_then(Option::take)
                    .ok_or_else(|| fail(line, format!("slot {slot} is empty")))?;
                index
                    .remove(h)
                    .map_err(|e| fail(line, format!("a removal was refused: {e}")))?;
            }
        }
    }
    Ok(())
}

/// The buffers the queries answer into, kept from frame to frame.
struct Answers<V: Vector> {
    handles: Vec<Handle>,
    hits: Vec<RayHit<V>>,
    near: Vec<Neighbor>,
}

impl<V: Vector> Answers<V> {
    /// Answers every query on `index`; returns a fingerprint of the
    /// results that does not depend on the structure's order or handles:
    /// the objects a region or a ray meets (with the distances of the
    /// ray's hits), the distance of the nearest ray hit and of the k
    /// nearest (ties may be broken by other objects, rightly).
    fn answer<S: SpatialIndex<V, u32>>(&mut self, index: &S, queries: &[Query<V>]) -> u64 {
        let mut print = 0u64;
        let value = |h: Handle| index.get(h).map_or(u32::MAX, |o| o.value);
        for (n, q) in queries.iter().enumerate() {
            let n = n as u32;
            let f = q.filter;
            let mut region = |handles: &Vec<Handle>| {
                for &h in handles {
                    print = print.wrapping_add(mix(n, value(h)));
                }
            };
            match &q.op {
                queries::Op::Box(b) => {
                    index.query(b, f, &mut self.handles);
                    region(&self.handles);
                }
                queries::Op::Sphere(s) => {
                    index.query(s, f, &mut self.handles);
                    region(&self.handles);
                }
                queries::Op::Cone(c) => {
                    index.query(c, f, &mut self.handles);
                    region(&self.handles);
                }
                queries::Op::Frustum(fr) => {
                    index.query(fr, f, &mut self.handles);
                    region(&self.handles);
                }
                queries::Op::Ray(ray, max) => {
                    index.ray_all(ray, *max, f, &mut self.hits);
                    for h in &self.hits {
                        let d = mix(value(h.handle), h.distance.to_bits());
                        print = print.wrapping_add(mix(n, d as u32 ^ (d >> 32) as u32));
                    }
                }
                queries::Op::Nearest(ray, max) => {
                    let d = index
                        .ray_nearest(ray, *max, f)
                        .map_or(u32::MAX, |h| h.distance.to_bits());
                    print = print.wrapping_add(mix(n, d));
                }
                queries::Op::Knn(p, k) => {
                    index.nearest_k(*p, *k, f, &mut self.near);
                    for nb in &self.near {
                        print = print.wrapping_add(mix(n, nb.distance.to_bits()));
                    }
                }
            }
        }
        print
    }
}

fn run<V: Vector, S: SpatialIndex<V, u32>>(
    mut index: S,
    source: &mut dyn Source<V>,
    queries: &[Query<V>],
    timing: &Timing,
) -> Result<Run, MeasureError> {
    let mut ops = Vec::new();
    let mut handles = Vec::new();
    let mut out = Run::default();
    let mut measured = Duration::ZERO;
    let mut answers = Answers {
        handles: Vec::new(),
        hits: Vec::new(),
        near: Vec::new(),
    };
    for frame in 0.. {
        source.next_frame(&mut ops);
        index.reset_counters();
        let (mut count, mut fingerprint) = (0usize, 0u64);
        let start = Instant::now();
        apply(&mut index, &ops, &mut handles)?;
        index.for_each_pair(|_, _, a, b| {
            count += 1;
            fingerprint = fingerprint.wrapping_add(mix(a.value, b.value));
        });
        let asked = Instant::now();
        let query_print = if queries.is_empty() {
            0
        } else {
            answers.answer(&index, queries)
        };
        let in_queries = asked.elapsed();
        index.end_frame();
        let took = start.elapsed();
        out.pairs.push(count);
        out.fingerprints.push(fingerprint);
        out.query_fingerprints.push(query_print);
        if frame >= timing.warm_up {
            measured += took;
            out.seconds.push(took.as_secs_f64());
            if !queries.is_empty() {
                out.query_seconds.push(in_queries.as_secs_f64());
            }
            out.pair_tests.push(index.counters().pair_tests);
            out.objects.push(index.len());
            let n = out.seconds.len();
            if n >= timing.max_frames.max(1)
                || (n >= timing.min_frames && measured >= timing.min_time)
            {
                break;
            }
        }
    }
    Ok(out)
}

/// A scene file compiled into per-frame operations, replayable in a loop.
#[derive(Clone, Debug)]
pub struct ScenePlan<V: Vector> {
    /// The operations of each frame of the file.
    frames: Vec<Vec<Op<V>>>,
    /// The operations that take the last frame's objects back to the first's.
    wrap: Vec<Op<V>>,
    /// The most objects alive in one frame.
    pub max_objects: usize,
}

/// Diffs frames into operations; one slot per id for the whole scene.
struct Differ {
    slots: BTreeMap<u64, u32>,
    live: BTreeMap<u64, Row>,
}

impl Differ {
    fn slot(&mut self, id: u64) -> u32 {
        let n = self.slots.len() as u32;
        *self.slots.entry(id).or_insert(n)
    }

    fn diff<V: Vector>(&mut self, frame: &Frame) -> Vec<Op<V>> {
        let mut ops = Vec::new();
        let insert = |slot, row: &Row| Op::Insert {
            slot,
            shape: row.shape::<V>(),
            layer: row.layer,
            mask: row.mask,
            is_static: row.is_static,
            line: row.line,
        };
        for change in frame.changes(&self.live, |row| row) {
            let row = match change {
                Change::Gone(id) => {
                    let slot = self.slot(id);
                    if let Some(row) = self.live.remove(&id) {
                        ops.push(Op::Remove {
                            slot,
                            line: row.line,
                        });
                    }
                    continue;
                }
                Change::New(row) => {
                    ops.push(insert(self.slot(row.id), row));
                    row
                }
                Change::Refiled(row) => {
                    let slot = self.slot(row.id);
                    ops.push(Op::Remove {
                        slot,
                        line: row.line,
                    });
                    ops.push(insert(slot, row));
                    row
                }
                Change::Moved(row) => {
                    ops.push(Op::Update {
                        slot: self.slot(row.id),
                        shape: row.shape::<V>(),
                        line: row.line,
                    });
                    row
                }
                Change::Same(row) => row,
            };
            self.live.insert(row.id, *row);
        }
        ops
    }
}

impl<V: Vector> ScenePlan<V> {
    /// Compiles a parsed scene (of dimension `V::DIM`).
    pub fn new(scene: &Scene) -> Self {
        let mut d = Differ {
            slots: BTreeMap::new(),
            live: BTreeMap::new(),
        };
        let frames: Vec<Vec<Op<V>>> = scene.frames.iter().map(|f| d.diff(f)).collect();
        let wrap = scene.frames.first().map(|f| d.diff(f)).unwrap_or_default();
        let max_objects = scene.frames.iter().map(|f| f.rows.len()).max().unwrap_or(0);
        ScenePlan {
            frames,
            wrap,
            max_objects,
        }
    }

    /// Frames in the file.
    pub fn len(&self) -> usize {
        self.frames.len()
    }

    /// True when the scene has no frames.
    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }

    /// A source that plays the scene from its first frame, then again and
    /// again (each pass after the first starts with the wrap-around frame).
    pub fn source(&self) -> PlanSource<'_, V> {
        PlanSource {
            plan: self,
            next: 0,
        }
    }
}

/// Plays a [`ScenePlan`] in a loop.
pub struct PlanSource<'a, V: Vector> {
    plan: &'a ScenePlan<V>,
    next: usize,
}

impl<V: Vector> Source<V> for PlanSource<'_, V> {
    fn next_frame(&mut self, ops: &mut Vec<Op<V>>) {
        ops.clear();
        let n = self.plan.frames.len();
        let k = self.next;
        self.next += 1;
        if n == 0 {
            return;
        }
        let frame = if k < n {
            &self.plan.frames[k]
        } else {
            match (k - n) % n {
                0 => &self.plan.wrap,
                m => &self.plan.frames[m],
            }
        };
        ops.extend_from_slice(frame);
    }
}

/// Checks that every object of the scene can be held by sparti's structures
/// (they all refuse the same objects: coordinates beyond
/// [`sparti::MAX_COORDINATE`]), before anything is measured.
///
/// # Errors
/// The first refused row, with its line.
pub fn check_scene<V: Vector>(scene: &Scene) -> Result<(), crate::scene::LineError> {
    let mut brute = BruteForce::<V, ()>::new();
    for frame in &scene.frames {
        for row in &frame.rows {
            brute
                .insert(ObjectDesc::new(row.shape::<V>(), ()))
                .map_err(|e| {
                    crate::scene::LineError::new(
                        row.line,
                        format!("sparti's structures refuse object {}: {e}", row.id),
                    )
                })?;
        }
        brute.clear();
    }
    Ok(())
}

/// The typical size of a scene's objects: the median over its rows of an
/// object's largest extent (diameter, or twice the largest half extent).
/// 1 when the scene is empty or every object is a point.
pub fn typical_size(scene: &Scene) -> f32 {
    let sizes: Vec<f64> = scene
        .frames
        .iter()
        .flat_map(|f| f.rows.iter())
        .map(|r| {
            let m = if r.kind.is_round() {
                r.size[0]
            } else {
                r.size.iter().copied().fold(0.0, f32::max)
            };
            f64::from(m) * 2.0
        })
        .collect();
    let m = median(&sizes) as f32;
    if m > 0.0 && m.is_finite() { m } else { 1.0 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::Replayer;
    use crate::scene::parse_scene;
    use sparti::glam::Vec2;
    use sparti::{LooseConfig, LooseQuadtree, Quadtree};

    const TIMING: Timing = Timing {
        warm_up: 0,
        min_frames: 9,
        min_time: Duration::ZERO,
        max_frames: 9,
    };

    fn discs() -> Scene {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/discs2d.csv");
        parse_scene(&std::fs::read(path).unwrap()).unwrap()
    }

    #[test]
    fn plan_replays_like_the_replayer_in_a_loop() {
        let scene = discs();
        let plan = ScenePlan::<Vec2>::new(&scene);
        assert_eq!(plan.len(), scene.frames.len());
        let mut replayer = Replayer::new(Quadtree::<u64>::new(), "quadtree");
        let mut expected = Vec::new();
        for f in &scene.frames {
            replayer.apply(f).unwrap();
            expected.push(replayer.pairs().len());
            replayer.end_frame();
        }
        for config in [
            Config::Brute,
            Config::default_of(Structure::Loose),
            Config::Bsp {
                min_dimension: 2.0,
                leaf_capacity: 0,
            },
        ] {
            let run = measure::<Vec2>(config, None, &mut plan.source(), &[], &TIMING).unwrap();
            assert_eq!(run.pairs.len(), 9);
            let n = expected.len();
            // Pass one, then passes that start with the wrap-around frame.
            for (k, &p) in run.pairs.iter().enumerate() {
                let i = if k < n { k } else { (k - n) % n };
                assert_eq!(p, expected[i], "{config:?} frame {k}");
            }
        }
    }

    #[test]
    fn queries_are_timed_apart_and_their_results_checked() {
        let scene = discs();
        let plan = ScenePlan::<Vec2>::new(&scene);
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/discs2d.queries");
        let queries: Vec<Query<Vec2>> =
            crate::queries::parse_queries(&std::fs::read(path).unwrap()).unwrap();
        let with = |config: Config, qs: &[Query<Vec2>]| {
            measure::<Vec2>(config, None, &mut plan.source(), qs, &TIMING).unwrap()
        };
        let brute = with(Config::Brute, &queries);
        assert_eq!(brute.query_seconds.len(), brute.seconds.len());
        for (q, s) in brute.query_seconds.iter().zip(&brute.seconds) {
            assert!(0.0 < *q && q <= s, "the queries are a part of the frame");
        }
        assert!(brute.query_fingerprints.iter().all(|&f| f != 0));
        // Every structure answers as the brute force, frame after frame.
        for s in [Structure::Orthtree, Structure::Loose, Structure::Bsp] {
            let run = with(Config::default_of(s), &queries);
            assert_eq!(run.first_difference(&brute), None, "{s:?}");
        }
        // One query less: the same pairs, other query results.
        let fewer = with(Config::default_of(Structure::Orthtree), &queries[1..]);
        let d = fewer.first_difference(&brute).expect("a difference");
        assert!(d.in_queries && d.frame == 0, "{d:?}");
        // Without queries, none is timed.
        assert!(with(Config::Brute, &[]).query_seconds.is_empty());
    }

    #[test]
    fn first_difference_finds_counts_and_pairs_that_differ() {
        let run = |pairs: Vec<usize>, fingerprints: Vec<u64>| Run {
            pairs,
            fingerprints,
            ..Run::default()
        };
        let reference = run(vec![1, 2, 3], vec![10, 20, 30]);
        assert_eq!(
            run(vec![1, 2], vec![10, 20]).first_difference(&reference),
            None
        );
        let at = |frame, pairs, in_queries| {
            Some(Difference {
                frame,
                pairs,
                in_queries,
            })
        };
        assert_eq!(
            run(vec![1, 4, 3], vec![10, 20, 30]).first_difference(&reference),
            at(1, (4, 2), false)
        );
        // Same count, other pairs.
        assert_eq!(
            run(vec![1, 2, 3], vec![10, 20, 31]).first_difference(&reference),
            at(2, (3, 3), false)
        );
        // Same pairs, other query results.
        let mut asked = run(vec![1, 2, 3], vec![10, 20, 30]);
        asked.query_fingerprints = vec![0, 5, 0];
        assert_eq!(asked.first_difference(&reference), at(1, (2, 2), true));
        assert_ne!(mix(1, 2), mix(1, 3));
        assert_eq!(mix(1, 2), mix(2, 1));
    }

    #[test]
    fn configs_print_as_code_and_defaults_match_the_library() {
        assert_eq!(
            Config::default_of(Structure::Orthtree).code(3),
            "Octree::new()"
        );
        let c = Config::Loose {
            min_node_size: 2.0,
            looseness: 1.5,
            leaf_capacity: 0,
        };
        assert_eq!(
            c.code(2),
            "LooseQuadtree::with_config(LooseConfig { min_node_size: 2.0, looseness: 1.5, ..Default::default() }).expect(\"valid settings\")"
        );
        // The printed expression, pasted: a value of the structure's type.
        let _: LooseQuadtree<u32> = LooseQuadtree::with_config(LooseConfig {
            min_node_size: 2.0,
            looseness: 1.5,
            ..Default::default()
        })
        .expect("valid settings");
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(typical_size(&discs()) > 0.0);
    }
}
