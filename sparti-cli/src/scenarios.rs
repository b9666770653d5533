//! The built-in workloads of `sparti bench`, in 2D and 3D: the scene kit's
//! moving scenes (`sparti-scenes`: `uniform`, `clustered`, `flat`,
//! `bullets`, described on [`Scenario`]), each a [`Source`] of frames from
//! a fixed seed (every structure sees the same objects move the same way).
//! The `uniform` scenario is the moving scene of `sparti-bench` and its
//! Criterion bench.
//!
//! Frame 0 inserts every object; every later frame updates every moving
//! object once.

use sparti::Vector;
use sparti_scenes::Moving;
pub use sparti_scenes::Scenario;

use crate::measure::{Op, Source};

/// A built-in workload in motion, as frames of operations.
#[derive(Clone, Debug)]
pub struct Synthetic<V: Vector> {
    scene: Moving<V>,
    started: bool,
}

impl<V: Vector> Synthetic<V> {
    /// The scenario with `n` objects (at least 1).
    pub fn new(scenario: Scenario, n: usize) -> Self {
        Synthetic {
            scene: Moving::new(scenario, n),
            started: false,
        }
    }

    /// A region every object's bounds stay in, to give the structures as
    /// their world.
    pub fn world(&self) -> sparti::Aabb<V> {
        self.scene.world()
    }

    /// Number of objects.
    pub fn len(&self) -> usize {
        self.scene.len()
    }

    /// True when there are no objects (never: at least one is made).
    pub fn is_empty(&self) -> bool {
        self.scene.is_empty()
    }
}

impl<V: Vector> Source<V> for Synthetic<V> {
    fn next_frame(&mut self, ops: &mut Vec<Op<V>>) {
        ops.clear();
        let s = &mut self.scene;
        if !self.started {
            self.started = true;
            ops.extend((0..s.len()).map(|i| Op::Insert {
                slot: i as u32,
                shape: s.shape(i),
                layer: 1,
                mask: u32::MAX,
                is_static: s.is_static(i),
                line: 0,
            }));
            return;
        }
        s.step();
        ops.extend(
            (0..s.len())
                .filter(|&i| !s.is_static(i))
                .map(|i| Op::Update {
                    slot: i as u32,
                    shape: s.shape(i),
                    line: 0,
                }),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sparti::glam::{Vec2, Vec3};

    /// Frame 0 inserts every object once, later frames update only the
    /// moving ones, and every shape stays in the world.
    fn frames<V: Vector>(scenario: Scenario) {
        let mut s = Synthetic::<V>::new(scenario, 500);
        let world = s.world();
        let mut ops = Vec::new();
        let (mut inserted, mut updated) = (0, 0);
        for frame in 0..10 {
            s.next_frame(&mut ops);
            for op in &ops {
                match op {
                    Op::Insert { shape, .. } | Op::Update { shape, .. } => {
                        assert!(world.contains(&shape.aabb()), "{scenario:?} frame {frame}");
                        inserted += usize::from(matches!(op, Op::Insert { .. }));
                        updated += usize::from(matches!(op, Op::Update { .. }));
                    }
                    Op::Remove { .. } => panic!("no removals"),
                }
            }
        }
        assert_eq!(inserted, 500);
        let moving = if scenario == Scenario::Bullets {
            400
        } else {
            500
        };
        assert_eq!(updated, 9 * moving, "{scenario:?}");
    }

    #[test]
    fn frame_zero_inserts_and_the_others_move() {
        for sc in Scenario::ALL {
            frames::<Vec2>(sc);
            frames::<Vec3>(sc);
        }
    }
}
