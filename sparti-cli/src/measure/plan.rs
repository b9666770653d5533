//! Scene files as workloads: each frame diffed against the one before
//! into operations ([`ScenePlan`]), replayed in a loop ([`PlanSource`]);
//! and what is checked and derived from a scene before it is measured.

use std::collections::BTreeMap;

use sparti::{BruteForce, ObjectDesc, SpatialIndex, Vector};

use super::{Op, Source, median};
use crate::scene::{Change, Frame, Row, Scene};

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
