//! Moving and removing objects (L3), and pruning empty branches (L5).

use super::Bsp;
use crate::geometry::{Shape, Vector};
use crate::orthtree::{FREED_ITEMS_CAPACITY, NodeState, within_limits};
use crate::store::NONE;
use crate::{Error, Handle, OutOfBounds};

impl<V: Vector, T> Bsp<V, T> {
    /// Moves or resizes an object: starts from its node, climbs to the first
    /// ancestor that holds it (contains it without touching a split plane
    /// of the ancestor's own ancestors, see [`Bsp::holds`]), then sinks as
    /// deep as it fits (L3).
    pub(crate) fn update_shape(&mut self, h: Handle, shape: Shape<V>) -> Result<(), Error> {
        let slot = self.core.store.resolve(h)?;
        let aabb = shape.checked_aabb()?;
        if !within_limits(&aabb) {
            return Err(Error::WorldTooLarge);
        }
        // The world is the root once built, the preset world before; a tree
        // without either takes whatever its first build is given.
        let world = self.root_bounds().or(self.config.world);
        if world.is_some_and(|w| !w.contains(&aabb)) {
            match self.config.out_of_bounds {
                // A queued object is placed, growing the root, by the build.
                OutOfBounds::Grow if self.core.root != NONE => self.grow_to(&aabb)?,
                OutOfBounds::Grow => {}
                OutOfBounds::Reject => return Err(Error::OutsideWorld),
                OutOfBounds::Remove => {
                    self.detach(slot);
                    let obj = self.core.store.remove(slot);
                    self.core.evicted.push((h, obj.value));
                    return Ok(());
                }
            }
        }
        if self.core.store.slot(slot).node == NONE {
            // Still queued: the build will place it.
            let o = self.core.store.obj_mut(slot);
            o.shape = shape;
            o.aabb = aabb;
            return Ok(());
        }
        let o = self.core.store.obj_mut(slot);
        o.shape = shape;
        o.aabb = aabb;
        // Read the place after any growth, which may have lifted the object.
        let (n, pos) = {
            let s = self.core.store.slot(slot);
            (s.node, s.pos as usize)
        };
        self.update_visits += 1;
        let node = &self.core.nodes[n as usize];
        // Fast path: still inside its node, and no deeper place for it (a
        // leaf within its capacity keeps its objects whatever their size).
        if Self::holds(node, &aabb)
            && (!node.splits
                || (node.child_count == 0
                    && node.items.len() <= self.config.leaf_capacity as usize)
                || Self::side_of(node, &aabb).is_none())
        {
            self.core.nodes[n as usize].items[pos].aabb = aabb;
            return Ok(());
        }
        self.unfile_at(n, pos);
        let mut up = n;
        while !Self::holds(&self.core.nodes[up as usize], &aabb) {
            up = self.core.nodes[up as usize].parent;
            self.update_visits += 1;
        }
        // `place` examines `up` again: count it once.
        self.update_visits += self.place(up, slot) - 1;
        self.note_if_empty(n);
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
        // Work on the list while parents made empty by pruning are listed in
        // a second buffer (kept between frames: no allocation per frame).
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
