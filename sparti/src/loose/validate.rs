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

    /// The object with box `aabb` is in exactly the node the placement rule
    /// gives: the node's loose bounds hold its box; its centre lies in the
    /// node's cell and the centre's path from the root leads to the node;
    /// the node has the level computed from the object's size, or is the
    /// root and below it, or is above it only because it is a leaf within
    /// the leaf capacity or because the child the centre leads to cannot
    /// hold the box (rounding).
    pub(crate) fn check_place(&self, n: u32, aabb: &Aabb<V>) -> Result<(), ValidationError> {
        let node = &self.core.nodes[n as usize];
        let (p, e) = Self::extent(aabb);
        ensure!(
            node.loose.contains(aabb),
            "object {aabb:?} in node {n} sticks out of its loose bounds {:?}",
            node.loose
        );
        ensure!(
            node.cell.contains_point(p),
            "object in node {n} has its centre {p:?} outside the cell {:?}",
            node.cell
        );
        let mut c = n;
        while c != self.core.root {
            let parent = self.core.nodes[c as usize].parent;
            let pn = &self.core.nodes[parent as usize];
            let k = Self::route(pn.center, p);
            ensure!(
                pn.children[k] == c,
                "object in node {n}: at node {parent} its centre leads to octant {k}, not to {c}"
            );
            c = parent;
        }
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
