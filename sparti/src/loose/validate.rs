//! Invariants and statistics.

use super::LooseOrthtree;
use crate::geometry::{Aabb, Vector};
use crate::index::Item;
use crate::orthtree::NodeState;
use crate::store::{NONE, Slot};
use crate::{Object, TreeStats, ValidationError};

macro_rules! ensure {
    ($cond:expr, $($arg:tt)*) => {
        if !$cond {
            return Err(ValidationError(format!($($arg)*)));
        }
    };
}

impl<V: Vector, T> LooseOrthtree<V, T> {
    /// Checks every invariant of the tree:
    /// - the pads: non-negative and non-decreasing with the level (what
    ///   makes loose bounds nest);
    /// - the pool: every node is reachable from the root exactly once or is
    ///   on the free list; parent and child links agree; child counts are
    ///   right; levels drop by one per generation; each child's cell is its
    ///   octant of the parent's cell; each node's loose bounds are its cell
    ///   enlarged by its level's pad, and lie inside its parent's;
    /// - the objects: each is filed once, with its slot pointing back and
    ///   its copied box and flag up to date, in exactly the node the
    ///   placement rule gives: the node's loose bounds hold its box; its
    ///   centre lies in the node's cell and the centre's path from the root
    ///   leads to the node; the node has the level computed from the
    ///   object's size, or is the root and below it, or is above it only
    ///   because it is a leaf within the leaf capacity or because the child
    ///   the centre leads to cannot hold the box (rounding);
    ///   queued objects are in the pending list;
    /// - the lifecycle: every empty leaf but the root is idle and listed,
    ///   lifespans are 8 to 64; the free and idle lists are consistent.
    pub(crate) fn check_invariants(&self) -> Result<(), ValidationError> {
        ensure!(
            self.pads[0] >= 0.0 && self.pads.windows(2).all(|w| w[0] <= w[1]),
            "pads are not non-decreasing"
        );
        let mut seen = vec![false; self.core.nodes.len()];
        let mut filed = 0usize;
        if self.core.root == NONE {
            ensure!(self.config.world.is_none(), "a preset world but no root");
        } else {
            ensure!(
                (self.core.root as usize) < self.core.nodes.len(),
                "root {} out of the pool",
                self.core.root
            );
            let r = &self.core.nodes[self.core.root as usize];
            ensure!(r.parent == NONE, "root has a parent");
            ensure!(r.state == NodeState::Live, "root is {:?}", r.state);
            if let Some(w) = &self.config.world {
                ensure!(
                    r.cell.min.all_le(w.min)
                        && (0..V::DIM).all(|i| w.max.get(i) < r.cell.max.get(i)),
                    "root cell {:?} does not hold the world {w:?}",
                    r.cell
                );
            }
            let mut stack = vec![self.core.root];
            while let Some(n) = stack.pop() {
                ensure!(!seen[n as usize], "node {n} reached twice");
                seen[n as usize] = true;
                let node = &self.core.nodes[n as usize];
                ensure!(node.state != NodeState::Free, "free node {n} in the tree");
                ensure!(
                    node.cell.min.all_le(node.center) && node.center.all_le(node.cell.max),
                    "node {n} centre outside its cell"
                );
                ensure!(
                    node.loose == Self::loosen(&node.cell, self.pad(node.level)),
                    "node {n} loose bounds are not its cell enlarged by its pad"
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
                    ensure!(
                        (c as usize) < self.core.nodes.len(),
                        "child {c} out of the pool"
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
                        child.cell == Self::child_cell(node, k),
                        "child {c} cell is not octant {k} of {n}"
                    );
                    ensure!(
                        node.loose.contains(&child.loose),
                        "child {c} loose bounds stick out of its parent {n}'s"
                    );
                    stack.push(c);
                }
                ensure!(count == node.child_count as usize, "node {n} child count");
                for (pos, it) in node.items.iter().enumerate() {
                    filed += 1;
                    let s = self.core.store.slot(it.slot);
                    self.check_item(n, pos, it, s)?;
                    self.check_place(n, &it.aabb)?;
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
            ensure!(
                (f as usize) < self.core.nodes.len(),
                "free node {f} out of the pool"
            );
            ensure!(
                !seen[f as usize],
                "free node {f} is in the tree or listed twice"
            );
            ensure!(
                self.core.nodes[f as usize].state == NodeState::Free,
                "free node {f} state"
            );
            ensure!(
                !self.core.nodes[f as usize].listed,
                "free node {f} is listed as idle"
            );
            seen[f as usize] = true;
        }
        ensure!(
            seen.iter().all(|&s| s),
            "a node is neither in the tree nor free"
        );
        for &n in &self.core.idle {
            ensure!(
                (n as usize) < self.core.nodes.len(),
                "idle node {n} out of the pool"
            );
            ensure!(
                self.core.nodes[n as usize].listed,
                "idle list names an unlisted node {n}"
            );
        }
        let mut sorted = self.core.idle.clone();
        sorted.sort_unstable();
        sorted.dedup();
        ensure!(
            sorted.len() == self.core.idle.len(),
            "idle list has duplicates"
        );
        let listed = self.core.nodes.iter().filter(|n| n.listed).count();
        ensure!(
            listed == self.core.idle.len(),
            "{listed} nodes think they are listed, the idle list has {}",
            self.core.idle.len()
        );
        Ok(())
    }

    /// The item's slot points back to it and its copies are up to date.
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

    /// The object with box `aabb` is in exactly the node the placement rule
    /// gives (see `check_invariants`).
    fn check_place(&self, n: u32, aabb: &Aabb<V>) -> Result<(), ValidationError> {
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

    pub(crate) fn tree_stats(&self) -> TreeStats {
        let mut st = TreeStats {
            objects: self.core.store.len(),
            pending: self.core.pending.len(),
            ..TreeStats::default()
        };
        let items_capacity: usize = self.core.nodes.iter().map(|n| n.items.capacity()).sum();
        st.memory_bytes = self.core.memory_bytes()
            + items_capacity * size_of::<Item<V>>()
            + self.pads.capacity() * size_of::<f32>()
            + self.flat.with(|f| f.map_or(0, |f| f.memory()));
        self.for_each_cell(|_, _, depth, count| {
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
