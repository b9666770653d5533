//! Moving and removing objects, and pruning empty branches.

use super::{Orthtree, OutOfBounds};
use crate::Error;
use crate::geometry::{Aabb, Vector};
use crate::kernel::{Move, leave_world};
use crate::store::NONE;

impl<V: Vector, T> Orthtree<V, T> {
    /// Moves or resizes an object: climbs to the first ancestor that contains
    /// it, then sinks as deep as it fits.
    #[inline]
    pub(crate) fn update_boxed(&mut self, m: Move<V>) -> Result<(), Error> {
        let n = self.core.store.place(m.slot).node;
        if n == NONE {
            // Still queued for the build: the build will place it.
            let remove = self.config.out_of_bounds == OutOfBounds::Remove;
            return self.core.move_queued(m, self.admit(&m.aabb), remove);
        }
        let root_bounds = self.core.nodes[self.core.root as usize].bounds;
        if !root_bounds.contains(&m.aabb) && leave_world(self, &m, |t| t.grow_to(&m.aabb))? {
            return Ok(());
        }
        // The place is read after any growth, which may have lifted the object.
        let (n, pos) = self.core.set_shape(m.slot, m.shape);
        if self.keeps(n, &m.aabb) {
            self.core.moved_in_place(m.slot);
            return Ok(());
        }
        self.core.unfile_at(n, pos);
        let mut up = n;
        while !self.holds(up, &m.aabb) {
            up = self.core.nodes[up as usize].parent;
        }
        self.place(up, m.slot);
        self.core.note_if_empty(n);
        Ok(())
    }

    /// The fast path of a move: node `n` still holds the box, and there
    /// is no deeper place for it (a lone object in a leaf stays put
    /// whatever its size).
    pub(crate) fn keeps(&self, n: u32, aabb: &Aabb<V>) -> bool {
        let node = &self.core.nodes[n as usize];
        self.holds(n, aabb)
            && (node.level == 0
                || (node.child_count == 0 && node.items.len() == 1)
                || Self::octant_of(node, aabb).is_none())
    }

    /// True when node `n` may hold an object with this box: inside its bounds,
    /// and not touching any of its faces that lie on an ancestor's split
    /// plane (every face not on the root's boundary does). An object
    /// touching such a plane belongs above it, or a touching pair across the
    /// plane would sit in two sibling subtrees and never be tested.
    pub(crate) fn holds(&self, n: u32, b: &Aabb<V>) -> bool {
        let node = &self.core.nodes[n as usize].bounds;
        let root = &self.core.nodes[self.core.root as usize].bounds;
        (0..V::DIM).all(|i| {
            let (lo, hi) = (node.min.get(i), node.max.get(i));
            let lo_ok = b.min.get(i) > lo || (lo == root.min.get(i) && b.min.get(i) == lo);
            let hi_ok = b.max.get(i) < hi || (hi == root.max.get(i) && b.max.get(i) == hi);
            lo_ok && hi_ok
        })
    }
}
