//! Invariants and statistics.

use super::{NodeState, Orthtree};
use crate::geometry::Vector;
use crate::index::Item;
use crate::store::{NONE, Slot};
use crate::{Object, TreeStats, ValidationError};

macro_rules! ensure {
    ($cond:expr, $($arg:tt)*) => {
        if !$cond {
            return Err(ValidationError(format!($($arg)*)));
        }
    };
}

impl<V: Vector, T> Orthtree<V, T> {
    /// Checks every invariant of the tree:
    /// - the pool: every node is reachable from the root exactly once or is
    ///   on the free list; parent and child links agree; child counts are
    ///   right; each child's bounds are its octant of the parent's; levels
    ///   drop by one per generation;
    /// - the objects: each is filed once, in a node whose bounds contain it,
    ///   with its slot pointing back, its copied box and flag up to date,
    ///   and in the deepest node that contains it (unless it is a lone
    ///   object in a leaf, or the node has the minimum size); queued objects
    ///   are in the pending list;
    /// - the lifecycle: every empty leaf but the root is idle and listed.
    pub(crate) fn check_invariants(&self) -> Result<(), ValidationError> {
        let mut seen = vec![false; self.core.nodes.len()];
        let mut filed = 0usize;
        if self.core.root != NONE {
            let r = &self.core.nodes[self.core.root as usize];
            ensure!(r.parent == NONE, "root has a parent");
            let mut stack = vec![self.core.root];
            while let Some(n) = stack.pop() {
                ensure!(!seen[n as usize], "node {n} reached twice");
                seen[n as usize] = true;
                let node = &self.core.nodes[n as usize];
                ensure!(node.state != NodeState::Free, "free node {n} in the tree");
                ensure!(
                    node.bounds.min.all_le(node.center) && node.center.all_le(node.bounds.max),
                    "node {n} centre outside its bounds"
                );
                let mut count = 0;
                for (k, &c) in node.children.iter().enumerate() {
                    if c == NONE {
                        continue;
                    }
                    ensure!(
                        k < 1 << V::DIM,
                        "node {n} has child slot {k} in {}D",
                        V::DIM
                    );
                    count += 1;
                    let child = &self.core.nodes[c as usize];
                    ensure!(
                        child.parent == n,
                        "child {c} of {n} names parent {}",
                        child.parent
                    );
                    ensure!(
                        node.level > 0 && child.level == node.level - 1,
                        "child {c} level"
                    );
                    ensure!(
                        child.bounds == Self::child_bounds(node, k),
                        "child {c} bounds are not octant {k} of {n}"
                    );
                    stack.push(c);
                }
                ensure!(count == node.child_count as usize, "node {n} child count");
                for (pos, it) in node.items.iter().enumerate() {
                    filed += 1;
                    let s = self.core.store.slot(it.slot);
                    self.check_item(n, pos, it, s)?;
                    let o = s.get().expect("checked live");
                    ensure!(
                        self.holds(n, &o.aabb),
                        "object in node {n} sticks out of it or touches an ancestor's split plane"
                    );
                    let lone_in_leaf = node.child_count == 0 && node.items.len() == 1;
                    ensure!(
                        node.level == 0 || lone_in_leaf || Self::octant_of(node, &o.aabb).is_none(),
                        "object in node {n} fits a child (level {}, {} objects, {} children)",
                        node.level,
                        node.items.len(),
                        node.child_count
                    );
                }
                let empty_leaf = node.items.is_empty() && node.child_count == 0;
                if n != self.core.root {
                    ensure!(
                        (node.state == NodeState::Idle) == empty_leaf,
                        "node {n} is {:?} but empty leaf = {empty_leaf}",
                        node.state
                    );
                }
                if node.state == NodeState::Idle {
                    ensure!(node.listed, "idle node {n} is not listed for pruning");
                    ensure!(
                        node.idle_frames < node.lifespan,
                        "idle node {n} outlived its lifespan"
                    );
                }
                ensure!(
                    (8..=64).contains(&node.lifespan) && node.lifespan.is_power_of_two(),
                    "node {n} lifespan {}",
                    node.lifespan
                );
            }
        }
        for (pos, &slot) in self.core.pending.iter().enumerate() {
            let s = self.core.store.slot(slot);
            ensure!(s.get().is_some(), "pending slot {slot} is free");
            ensure!(
                s.node == NONE && s.pos as usize == pos,
                "pending slot {slot} misfiled"
            );
        }
        ensure!(
            filed + self.core.pending.len() == self.core.store.len(),
            "{filed} filed + {} pending != {} objects",
            self.core.pending.len(),
            self.core.store.len()
        );
        for &f in &self.core.free_nodes {
            ensure!(!seen[f as usize], "free node {f} is in the tree");
            ensure!(
                self.core.nodes[f as usize].state == NodeState::Free,
                "free node {f} state"
            );
            seen[f as usize] = true;
        }
        ensure!(
            seen.iter().all(|&s| s),
            "a node is neither in the tree nor free"
        );
        let listed = self
            .core
            .idle
            .iter()
            .filter(|&&n| self.core.nodes[n as usize].listed)
            .count();
        ensure!(
            listed == self.core.idle.len(),
            "idle list names an unlisted node"
        );
        let mut sorted = self.core.idle.clone();
        sorted.sort_unstable();
        sorted.dedup();
        ensure!(
            sorted.len() == self.core.idle.len(),
            "idle list has duplicates"
        );
        Ok(())
    }

    fn check_item(
        &self,
        n: u32,
        pos: usize,
        it: &Item<V>,
        s: &Slot<Object<V, T>>,
    ) -> Result<(), ValidationError> {
        let Some(o) = s.get() else {
            return Err(ValidationError(format!(
                "node {n} item {pos} names a free slot"
            )));
        };
        ensure!(
            s.node == n && s.pos as usize == pos,
            "slot of node {n} item {pos} points elsewhere"
        );
        ensure!(
            it.aabb == o.aabb && o.aabb == o.shape.aabb(),
            "node {n} item {pos} box out of date"
        );
        ensure!(
            it.is_static == o.is_static,
            "node {n} item {pos} static flag out of date"
        );
        Ok(())
    }

    pub(crate) fn tree_stats(&self) -> TreeStats {
        let mut st = TreeStats {
            objects: self.core.store.len(),
            pending: self.core.pending.len(),
            ..TreeStats::default()
        };
        let mut items_capacity = 0;
        for node in &self.core.nodes {
            items_capacity += node.items.capacity();
        }
        st.memory_bytes = self.core.memory_bytes()
            + items_capacity * size_of::<Item<V>>()
            + self.pair_scratch.with(|s| s.map_or(0, |s| s.memory()));
        self.nodes_depth_first(|_, depth, count| {
            st.nodes += 1;
            st.max_depth = st.max_depth.max(depth);
            if st.objects_per_node.len() <= count {
                st.objects_per_node.resize(count + 1, 0);
            }
            st.objects_per_node[count] += 1;
        });
        if self.core.root != NONE {
            st.leaves = self
                .core
                .nodes
                .iter()
                .filter(|n| n.state != NodeState::Free && n.child_count == 0)
                .count();
        }
        st
    }
}
