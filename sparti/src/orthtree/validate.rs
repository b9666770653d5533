//! The octree's and quadtree's own invariants, checked within the
//! kernel's walk (`kernel/validate.rs`, which checks the pool, the filing
//! of objects and the lifecycle).

use super::Orthtree;
use crate::ValidationError;
use crate::geometry::Vector;
use crate::index::Item;
use crate::kernel::ensure;

impl<V: Vector, T> Orthtree<V, T> {
    /// Node `n`'s split point lies in its bounds.
    pub(crate) fn check_node(&self, n: u32) -> Result<(), ValidationError> {
        let node = &self.core.nodes[n as usize];
        ensure!(
            node.bounds.min.all_le(node.center) && node.center.all_le(node.bounds.max),
            "node {n} centre outside its bounds"
        );
        Ok(())
    }

    /// Child `c` of node `n`, in slot `k`: a slot of this dimension, one
    /// level down, its bounds exactly octant `k` of the parent's.
    pub(crate) fn check_child(&self, n: u32, k: usize, c: u32) -> Result<(), ValidationError> {
        let (node, child) = (&self.core.nodes[n as usize], &self.core.nodes[c as usize]);
        let is_octant = k < 1 << V::DIM && child.bounds == Self::child_bounds(node, k);
        crate::kernel::check_octant::<V>((n, k, c), (node.level, child.level), is_octant)
    }

    /// The object of item `it` is in the deepest node that contains it: its
    /// node's bounds contain it (without touching a face that is an
    /// ancestor's split plane), and it fits no child, unless it is a lone
    /// object in a leaf or the node has the minimum size.
    pub(crate) fn check_place(&self, n: u32, it: &Item<V>) -> Result<(), ValidationError> {
        let node = &self.core.nodes[n as usize];
        ensure!(
            self.holds(n, &it.aabb),
            "object in node {n} sticks out of it or touches an ancestor's split plane"
        );
        let lone_in_leaf = node.child_count == 0 && node.items.len() == 1;
        ensure!(
            node.level == 0 || lone_in_leaf || Self::octant_of(node, &it.aabb).is_none(),
            "object in node {n} fits a child (level {}, {} objects, {} children)",
            node.level,
            node.items.len(),
            node.child_count
        );
        Ok(())
    }
}
