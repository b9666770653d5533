//! Moving and removing objects, and pruning empty branches.

use super::Bsp;
use crate::Error;
use crate::geometry::{Aabb, Vector};
use crate::kernel::{Move, leave_world};
use crate::store::NONE;

impl<V: Vector, T> Bsp<V, T> {
    /// Moves or resizes an object: starts from its node, climbs to the first
    /// ancestor that holds it (contains it without touching a split plane
    /// of the ancestor's own ancestors, see [`Bsp::holds`]), then sinks as
    /// deep as it fits.
    #[inline]
    pub(crate) fn update_boxed(&mut self, m: Move<V>) -> Result<(), Error> {
        // The world is the root once built, the preset world before; a tree
        // without either takes whatever its first build is given.
        let world = self.root_bounds().or(self.config.world);
        // A queued object is placed, growing the root, by the build.
        let grow = |t: &mut Self| {
            if t.core.root == NONE {
                Ok(())
            } else {
                t.grow_to(&m.aabb)
            }
        };
        if world.is_some_and(|w| !w.contains(&m.aabb)) && leave_world(self, &m, grow)? {
            return Ok(());
        }
        if self.core.store.place(m.slot).node == NONE {
            // Still queued: the build will place it.
            self.core.set_queued_shape(m.slot, m.shape);
            return Ok(());
        }
        // The place is read after any growth, which may have lifted the object.
        let (n, pos) = self.core.set_shape(m.slot, m.shape);
        self.update_visits += 1;
        if self.keeps(n, &m.aabb) {
            self.core.moved_in_place(m.slot);
            return Ok(());
        }
        self.core.unfile_at(n, pos);
        let mut up = n;
        while !Self::holds(&self.core.nodes[up as usize], &m.aabb) {
            up = self.core.nodes[up as usize].parent;
            self.update_visits += 1;
        }
        // `place` examines `up` again: count it once.
        self.update_visits += self.place(up, m.slot) - 1;
        self.core.note_if_empty(n);
        Ok(())
    }

    /// The fast path of a move: node `n` still holds the box, and there
    /// is no deeper place for it (a leaf within its capacity keeps its
    /// objects whatever their size).
    pub(crate) fn keeps(&self, n: u32, aabb: &Aabb<V>) -> bool {
        let node = &self.core.nodes[n as usize];
        Self::holds(node, aabb)
            && (!node.splits
                || (node.child_count == 0
                    && node.items.len() <= self.config.leaf_capacity as usize)
                || Self::side_of(node, aabb).is_none())
    }
}
