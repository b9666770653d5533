//! Moving and removing objects (L3), and pruning empty branches (L5).

use super::LooseOrthtree;
use crate::geometry::{Shape, Vector};
use crate::orthtree::{FREED_ITEMS_CAPACITY, NodeState, within_limits};
use crate::store::NONE;
use crate::{Error, Handle, OutOfBounds};

impl<V: Vector, T> LooseOrthtree<V, T> {
    /// Moves or resizes an object (L3). If its node still holds it by the
    /// placement rule (the same cell holds its centre and its size gives
    /// the same level), only the copied box changes. Otherwise it climbs to
    /// the first ancestor on its new path from the root and descends from
    /// there to its level.
    pub(crate) fn update_shape(&mut self, h: Handle, shape: Shape<V>) -> Result<(), Error> {
        let slot = self.core.store.resolve(h)?;
        let aabb = shape.checked_aabb()?;
        if self.core.store.slot(slot).node == NONE {
            // Still queued for the build: the build will place it.
            self.admit(&aabb)?;
            let o = self.core.store.obj_mut(slot);
            o.shape = shape;
            o.aabb = aabb;
            return Ok(());
        }
        if !within_limits(&aabb) {
            return Err(Error::WorldTooLarge);
        }
        let (p, e) = Self::extent(&aabb);
        // Fast path: the object's node still holds it (then so does the
        // root: loose bounds nest), so only the copies of the box change.
        let (n, pos) = {
            let s = self.core.store.slot(slot);
            (s.node, s.pos as usize)
        };
        if self.settles(n, &aabb, p, e) {
            let o = self.core.store.obj_mut(slot);
            o.shape = shape;
            o.aabb = aabb;
            self.core.nodes[n as usize].items[pos].aabb = aabb;
            self.moves.in_place += 1;
            return Ok(());
        }
        if !self.fits_root(&aabb, p) {
            match self.config.out_of_bounds {
                OutOfBounds::Grow => self.grow_to(&aabb, p)?,
                OutOfBounds::Reject => return Err(Error::OutsideWorld),
                OutOfBounds::Remove => {
                    self.detach(slot);
                    let obj = self.core.store.remove(slot);
                    self.core.evicted.push((h, obj.value));
                    return Ok(());
                }
            }
        }
        let o = self.core.store.obj_mut(slot);
        o.shape = shape;
        o.aabb = aabb;
        // Read the place after any growth, which may have lifted the object.
        let (n, pos) = {
            let s = self.core.store.slot(slot);
            (s.node, s.pos as usize)
        };
        if self.settles(n, &aabb, p, e) {
            self.core.nodes[n as usize].items[pos].aabb = aabb;
            self.moves.in_place += 1;
            return Ok(());
        }
        self.unfile_at(n, pos);
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
                    && node.loose.contains(&aabb))
            {
                break;
            }
            up = node.parent;
        }
        self.place(up, slot);
        self.note_if_empty(n);
        self.moves.relocated += 1;
        Ok(())
    }

    /// Takes an object out of the tree or the pending queue (its slot stays
    /// allocated).
    pub(crate) fn detach(&mut self, slot: u32) {
        let (n, pos) = {
            let s = self.core.store.slot(slot);
            (s.node, s.pos as usize)
        };
        if n == NONE {
            self.core.unqueue(slot);
        } else {
            self.unfile_at(n, pos);
            self.note_if_empty(n);
        }
    }

    /// Starts the countdown of a node that has become an empty leaf.
    pub(crate) fn note_if_empty(&mut self, n: u32) {
        let node = &mut self.core.nodes[n as usize];
        if n == self.core.root || node.state != NodeState::Live {
            return;
        }
        if node.items.is_empty() && node.child_count == 0 {
            node.state = NodeState::Idle;
            node.idle_frames = 0;
            if !node.listed {
                node.listed = true;
                self.core.idle.push(n);
            }
        }
    }

    /// One frame passes for the empty leaves: those idle for their lifespan
    /// are pruned, which may leave their parent an empty leaf in turn (L5).
    pub(crate) fn age_idle_nodes(&mut self) {
        // Age the list while `note_if_empty` files newly empty parents in
        // the spare buffer; both keep their allocations.
        let mut idle = core::mem::replace(
            &mut self.core.idle,
            core::mem::take(&mut self.core.idle_spare),
        );
        let mut i = 0;
        while i < idle.len() {
            let n = idle[i];
            let node = &mut self.core.nodes[n as usize];
            if node.state != NodeState::Idle {
                // Reused since it was listed.
                node.listed = false;
                idle.swap_remove(i);
                continue;
            }
            node.idle_frames += 1;
            if node.idle_frames < node.lifespan {
                i += 1;
                continue;
            }
            idle.swap_remove(i);
            let parent = node.parent;
            node.listed = false;
            node.state = NodeState::Free;
            node.parent = NONE;
            node.items.shrink_to(FREED_ITEMS_CAPACITY);
            self.core.free_nodes.push(n);
            let p = &mut self.core.nodes[parent as usize];
            let k = p
                .children
                .iter()
                .position(|&c| c == n)
                .expect("a node is a child of its parent");
            p.children[k] = NONE;
            p.child_count -= 1;
            // The parent, if now an empty leaf, is listed in `self.core.idle`
            // and starts its countdown from the next frame.
            self.note_if_empty(parent);
        }
        idle.append(&mut self.core.idle);
        self.core.idle_spare = core::mem::replace(&mut self.core.idle, idle);
    }
}
