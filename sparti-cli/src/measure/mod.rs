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

use std::time::{Duration, Instant};

use sparti::{Aabb, Handle, Neighbor, ObjectDesc, RayHit, Shape, SpatialIndex, Vector};

use crate::catalogue::IndexJob;
pub use crate::catalogue::{Config, Structure};

mod plan;
mod results;

pub use plan::{PlanSource, ScenePlan, check_scene, typical_size};
pub use results::{Difference, Run, Timing, median};

use crate::queries::{self, Query};

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::Replayer;
    use crate::scene::{Scene, parse_scene};
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
