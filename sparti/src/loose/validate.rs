//! The loose trees' own invariants, checked within the kernel's walk
//! (`kernel/validate.rs`, which checks the pool, the filing of objects and
//! the lifecycle).

use super::LooseOrthtree;
use crate::ValidationError;
use crate::geometry::{Aabb, Vector};
use crate::kernel::ensure;
use crate::store::NONE;

impl<V: Vector, T> LooseOrthtree<V, T> {
    /// The pads are non-negative and non-decreasing with the level (what
    /// makes loose bounds nest); a preset world has a root from the start
    /// (or, with an automatic minimum node size, from the first build),
    /// whose cell holds the world.
    pub(crate) fn check_root(&self) -> Result<(), ValidationError> {
        if self.pads.is_empty() {
            // The minimum node size waits for the first build.
            ensure!(
                self.config.min_node_size == 0.0 && self.core.root == NONE,
                "no pads, yet a minimum node size or a root"
            );
            return Ok(());
        }
        ensure!(
            self.pads[0] >= 0.0 && self.pads.windows(2).all(|w| w[0] <= w[1]),
            "pads are not non-decreasing"
        );
        if self.core.root == NONE {
            ensure!(self.config.world.is_none(), "a preset world but no root");
        } else if let Some(w) = &self.config.world {
            let r = &self.core.nodes[self.core.root as usize];
            ensure!(
                r.cell.min.all_le(w.min) && (0..V::DIM).all(|i| w.max.get(i) < r.cell.max.get(i)),
                "root cell {:?} does not hold the world {w:?}",
                r.cell
            );
        }
        Ok(())
    }

    /// Node `n`'s split point lies in its cell, and its loose bounds are
    /// its cell enlarged by its level's pad.
    pub(crate) fn check_node(&self, n: u32) -> Result<(), ValidationError> {
        let node = &self.core.nodes[n as usize];
        ensure!(
            node.cell.min.all_le(node.center) && node.center.all_le(node.cell.max),
            "node {n} centre outside its cell"
        );
        ensure!(
            node.loose == Self::loosen(&node.cell, self.pad(node.level)),
            "node {n} loose bounds are not its cell enlarged by its pad"
        );
        Ok(())
    }

    /// Child `c` of node `n`, in slot `k`: a slot of this dimension, one
    /// level down, its cell exactly octant `k` of the parent's, its loose
    /// bounds inside the parent's.
    pub(crate) fn check_child(&self, n: u32, k: usize, c: u32) -> Result<(), ValidationError> {
        let (node, child) = (&self.core.nodes[n as usize], &self.core.nodes[c as usize]);
        let is_octant = k < 1 << V::DIM && child.cell == Self::child_cell(node, k);
        crate::kernel::check_octant::<V>((n, k, c), (node.level, child.level), is_octant)?;
        ensure!(
            node.loose.contains(&child.loose),
            "child {c} loose bounds stick out of its parent {n}'s"
        );
        Ok(())
    }

    /// The object with box `aabb` may be in node `n` ([`settles`]): the
    /// node's loose bounds hold its box; its centre lies in the root's
    /// cell; the node has the level computed from the object's size, or is
    /// the root and below it, or is above it only because it is a leaf
    /// within the leaf capacity or because the child the centre leads to
    /// cannot hold the box (rounding).
    ///
    /// [`settles`]: LooseOrthtree::settles
    pub(crate) fn check_place(&self, n: u32, aabb: &Aabb<V>) -> Result<(), ValidationError> {
        let node = &self.core.nodes[n as usize];
        let (p, e) = Self::extent(aabb);
        ensure!(
            node.loose.contains(aabb),
            "object {aabb:?} in node {n} sticks out of its loose bounds {:?}",
            node.loose
        );
        // (Its centre may lie outside the node's cell: a moved object stays
        // in the nearest node that still contains it; see `settles`.)
        ensure!(
            Self::in_cell(&self.core.nodes[self.core.root as usize].cell, p),
            "object in node {n} has its centre outside the root's cell"
        );
        let t = self.target_level(e);
        ensure!(
            self.pad(t) >= e && (t == 0 || self.pad(t - 1) < e),
            "level {t} computed for half extent {e} is not the smallest whose pad covers it"
        );
        if node.level < t {
            ensure!(
                n == self.core.root,
                "object of level {t} in node {n} of level {}",
                node.level
            );
        } else if node.level > t {
            let k = Self::route(node.center, p);
            let room = node.child_count == 0 && node.items.len() <= self.config.leaf_capacity;
            ensure!(
                room || !self.child_loose(node, k).contains(aabb),
                "object of level {t} in node {n} of level {} fits its child {k} \
                 (node: {} objects, {} children, leaf capacity {})",
                node.level,
                node.items.len(),
                node.child_count,
                self.config.leaf_capacity
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    //! `validate()` catches each kind of corruption of a loose tree: the
    //! trees are broken by hand here, since no public operation can break
    //! them.

    use glam::Vec2;

    use crate::kernel::corruption;
    use crate::loose::LooseQuadtree;
    use crate::{LooseConfig, Shape};

    /// A world of 60 (root cell 64, level 6; cells of 1 at level 0, pads of
    /// half a cell): objects of levels 5, 3 and 0, one static, an idle
    /// leaf and one pending insertion.
    fn tree() -> LooseQuadtree<u32> {
        let world = corruption::world(60.0, 60.0);
        corruption::populate(
            LooseQuadtree::with_config(LooseConfig {
                world,
                min_node_size: 1.0,
                ..Default::default()
            }),
            &[
                (8.0, 8.0, 12.0, 0, false),   // level 5
                (10.0, 50.0, 0.25, 1, false), // level 0
                (50.0, 10.0, 0.25, 2, true),
                (44.0, 44.0, 3.0, 3, false), // level 3, cell [40, 48)^2
            ],
            (50.0, 50.0, 0.25),
            (1.0, 1.0, 0.25),
        )
    }

    fn breaks(what: &str, corrupt: impl FnOnce(&mut LooseQuadtree<u32>)) {
        corruption::breaks(tree, what, corrupt);
    }

    fn slot_and_node(t: &LooseQuadtree<u32>, v: u32) -> (u32, u32) {
        corruption::slot_and_node(t, &t.core, &v)
    }

    #[test]
    fn validate_catches_each_corruption() {
        corruption::breaks_lifecycle(tree);
        breaks("centre outside its cell", |t| {
            let (_, n) = slot_and_node(t, 1);
            let cell = t.core.nodes[n as usize].cell;
            t.core.nodes[n as usize].center = cell.max + Vec2::ONE;
        });
        breaks("not its cell enlarged by its pad", |t| {
            let (_, n) = slot_and_node(t, 1);
            t.core.nodes[n as usize].loose.max.x += 1.0;
        });
        breaks("is not octant", |t| {
            // The level-5 object's node, a child of the root: its cell
            // taller, its loose bounds made to match the new cell.
            let (_, c) = slot_and_node(t, 0);
            let node = &mut t.core.nodes[c as usize];
            assert_eq!(node.level, 5);
            node.cell.max.y += 1.0;
            let (cell, level) = (node.cell, node.level);
            t.core.nodes[c as usize].loose = LooseQuadtree::<u32>::loosen(&cell, t.pad(level));
        });
        breaks("names parent", |t| {
            let (_, c) = slot_and_node(t, 0);
            t.core.nodes[c as usize].parent = crate::store::NONE;
        });
        breaks("sticks out of its loose bounds", |t| {
            let (slot, _) = slot_and_node(t, 1);
            corruption::reshape(
                &mut t.core,
                slot,
                Shape::sphere(Vec2::new(58.0, 58.0), 0.25),
            );
        });
        breaks("centre outside the root's cell", |t| {
            // The level-5 object moved, in place, to a centre below the
            // root's cell (its box still in its node's loose bounds).
            let (slot, n) = slot_and_node(t, 0);
            let loose = t.core.nodes[n as usize].loose;
            let root_cell = t.core.nodes[t.core.root as usize].cell;
            let c = Vec2::new(8.0, root_cell.min.y - 0.5);
            assert!(loose.contains(&Shape::sphere(c, 12.0).aabb()));
            corruption::reshape(&mut t.core, slot, Shape::sphere(c, 12.0));
        });
        breaks("of level 4 in node", |t| {
            // Grown past its level's pad (4), still inside the loose bounds.
            let (slot, _) = slot_and_node(t, 3);
            corruption::reshape(&mut t.core, slot, Shape::sphere(Vec2::splat(44.0), 5.0));
        });
        breaks("fits its child", |t| {
            // Shrunk in place: its level is now 0, and the node has no
            // leaf capacity to keep it.
            let (slot, _) = slot_and_node(t, 3);
            corruption::reshape(&mut t.core, slot, Shape::sphere(Vec2::splat(44.0), 0.25));
        });
        breaks("static flag", |t| {
            let (slot, n) = slot_and_node(t, 2);
            let pos = t.core.store.place(slot).pos as usize;
            t.core.items_mut(n)[pos].set_static(false);
        });
    }

    /// The level from an object's size is the smallest whose pad covers
    /// it, for sizes around every level's pad, in trees of several node
    /// sizes and loosenesses.
    #[test]
    fn the_level_from_a_size_is_the_first_whose_pad_covers_it() {
        for (m, looseness) in [(1.0f32, 2.0f32), (0.37, 1.5), (3.0e-3, 3.0), (1.0, 1.001)] {
            let mut t = LooseQuadtree::<u32>::with_config(LooseConfig {
                min_node_size: m,
                looseness,
                ..Default::default()
            })
            .unwrap();
            t.set_min_node_size(m);
            let first = |e: f32| {
                (0..super::super::LEVELS)
                    .find(|&l| t.pads[l] >= e)
                    .unwrap_or(super::super::LEVELS - 1)
            };
            let mut sizes = vec![
                0.0,
                f32::MIN_POSITIVE,
                1e-30,
                1.0,
                1e30,
                f32::MAX,
                f32::INFINITY,
            ];
            for l in 0..40 {
                let p = t.pads[l];
                sizes.extend([p, p.next_up(), p.next_down(), p * 0.75, p * 1.5]);
            }
            for e in sizes {
                if e >= 0.0 {
                    assert_eq!(usize::from(t.target_level(e)), first(e), "e = {e}, m = {m}");
                }
            }
        }
    }
}
