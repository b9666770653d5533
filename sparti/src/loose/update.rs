//! Moving and removing objects, and pruning empty branches.

use super::LooseOrthtree;
use crate::geometry::{Aabb, Vector};
use crate::kernel::{Move, leave_world};
use crate::store::NONE;
use crate::{Error, OutOfBounds};

impl<V: Vector, T> LooseOrthtree<V, T> {
    /// Moves or resizes an object. If its node still holds it
    /// ([`LooseOrthtree::settles`]: the node's loose bounds hold its box,
    /// its centre is in the root's cell and its size gives the same level),
    /// only the shape changes (the move is recorded: see `kernel::Moved`).
    /// Otherwise it climbs to the first ancestor on its new path from the
    /// root and descends from there to its level, by its centre.
    #[inline]
    pub(crate) fn update_boxed(&mut self, m: Move<V>) -> Result<(), Error> {
        if self.core.store.place(m.slot).node == NONE {
            // Still queued for the build: the build will place it, unless
            // it left the world under a policy that refuses or removes it
            // (as the octree and the BSP do).
            let remove = self.config.out_of_bounds == OutOfBounds::Remove;
            return self.core.move_queued(m, self.admit(&m.aabb), remove);
        }
        let (p, e) = Self::extent(&m.aabb);
        // Fast path: the object's node still holds it (then so does the
        // root: loose bounds nest), so only the shape changes; the move is
        // recorded for the node's query box.
        let n = self.core.store.place(m.slot).node;
        if self.settles(n, &m.aabb, p, e) {
            let o = self.core.store.obj_mut(m.slot);
            o.shape = m.shape;
            self.core.moved_in_place(m.slot);
            self.moves.in_place += 1;
            return Ok(());
        }
        if !self.fits_root(&m.aabb, p) && leave_world(self, &m, |t| t.grow_to(&m.aabb, p))? {
            return Ok(());
        }
        // The place is read after any growth, which may have lifted the object.
        let (n, pos) = self.core.set_shape(m.slot, m.shape);
        if self.settles(n, &m.aabb, p, e) {
            self.core.moved_in_place(m.slot);
            self.moves.in_place += 1;
            return Ok(());
        }
        self.core.unfile_at(n, pos);
        // The first ancestor whose cell holds the centre, whose level is at
        // least the object's and whose loose bounds hold the box is on the
        // object's path from the root: loose bounds nest, so every node above
        // it holds the box too. The root always qualifies.
        let mut up = n;
        loop {
            let node = &self.core.nodes[up as usize];
            if up == self.core.root
                || (e <= self.pad(node.level)
                    && Self::in_cell(&node.cell, p)
                    && node.loose.contains(&m.aabb))
            {
                break;
            }
            up = node.parent;
        }
        self.place(up, m.slot);
        self.core.note_if_empty(n);
        self.moves.relocated += 1;
        Ok(())
    }

    /// The fast path of a move (see [`LooseOrthtree::settles`]).
    pub(crate) fn keeps(&self, n: u32, aabb: &Aabb<V>) -> bool {
        let (p, e) = Self::extent(aabb);
        self.settles(n, aabb, p, e)
    }
}
