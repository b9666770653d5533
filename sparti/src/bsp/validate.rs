//! Invariants and statistics.

use super::{Bsp, Node, layout};
use crate::geometry::Vector;
use crate::index::Item;
use crate::orthtree::{FIRST_LIFESPAN, MAX_LIFESPAN, NodeState};
use crate::store::{NONE, Slot};
use crate::{Object, TreeStats, ValidationError};

macro_rules! ensure {
    ($cond:expr, $($arg:tt)*) => {
        if !$cond {
            return Err(ValidationError(format!($($arg)*)));
        }
    };
}

impl<V: Vector, T> Bsp<V, T> {
    /// Checks every invariant of the tree:
    /// - the pool: every node is reachable from the root exactly once or is
    ///   on the free list; parent and child links agree; child counts are
    ///   right;
    /// - the geometry: an ordinary node splits across its largest side (the
    ///   first on ties) at its middle, and may split only while that side
    ///   exceeds the minimum dimension; a node made by growth is the root or
    ///   the child of another, and splits inside its bounds; each child's
    ///   bounds are exactly its half of the parent's;
    /// - the objects: each is filed once, in a node whose bounds contain it
    ///   without touching a face that is an ancestor's split plane (whose
    ///   strict faces are those of its parent plus its own split face),
    ///   with its slot pointing back, its copied box and flag up to date,
    ///   and in the deepest node that contains it (unless the node cannot
    ///   split, or is a leaf within its capacity); queued objects are in the
    ///   pending list;
    /// - the lifecycle: every empty leaf but the root is idle, listed and
    ///   not past its lifespan; lifespans are 8, 16, 32 or 64; the idle list
    ///   has no duplicates and names only listed nodes; the free list holds
    ///   exactly the free nodes.
    pub(crate) fn check_invariants(&self) -> Result<(), ValidationError> {
        let mut seen = vec![false; self.core.nodes.len()];
        let mut filed = 0usize;
        if self.core.root != NONE {
            let r = &self.core.nodes[self.core.root as usize];
            ensure!(r.parent == NONE, "root has a parent");
            ensure!(r.state == NodeState::Live, "root is {:?}", r.state);
            ensure!(r.strict == 0, "root has strict faces {:#b}", r.strict);
            let mut stack = vec![self.core.root];
            while let Some(n) = stack.pop() {
                ensure!(!seen[n as usize], "node {n} reached twice");
                seen[n as usize] = true;
                let node = &self.core.nodes[n as usize];
                ensure!(node.state != NodeState::Free, "free node {n} in the tree");
                self.check_geometry(n, node)?;
                let mut count = 0;
                for (k, &c) in node.children.iter().enumerate() {
                    if c == NONE {
                        continue;
                    }
                    count += 1;
                    let child = &self.core.nodes[c as usize];
                    ensure!(
                        child.parent == n,
                        "child {c} of {n} names parent {}",
                        child.parent
                    );
                    ensure!(
                        child.bounds == Self::child_bounds(node, k),
                        "child {c} bounds {:?} are not half {k} of {n} {:?} (axis {}, split {})",
                        child.bounds,
                        node.bounds,
                        node.axis,
                        node.split
                    );
                    ensure!(
                        child.strict == node.strict | Self::split_face(node.axis, k),
                        "child {c} of {n} strict faces {:#b}, not {:#b} plus its split",
                        child.strict,
                        node.strict
                    );
                    stack.push(c);
                }
                ensure!(count == node.child_count as usize, "node {n} child count");
                ensure!(
                    node.splits || count == 0,
                    "node {n} cannot split but has children"
                );
                for (pos, it) in node.items.iter().enumerate() {
                    filed += 1;
                    let s = self.core.store.slot(it.slot);
                    self.check_item(n, pos, it, s)?;
                    let o = s.get().expect("checked live");
                    ensure!(
                        node.bounds.contains(&o.aabb),
                        "object in node {n} sticks out of it"
                    );
                    ensure!(
                        Self::holds(node, &o.aabb),
                        "object in node {n} touches a split plane of an ancestor ({:?} in {:?}, strict faces {:#b})",
                        o.aabb,
                        node.bounds,
                        node.strict
                    );
                    let within_capacity = node.child_count == 0
                        && node.items.len() <= self.config.leaf_capacity as usize;
                    ensure!(
                        !node.splits || within_capacity || Self::side_of(node, &o.aabb).is_none(),
                        "object in node {n} fits a child ({} objects, {} children)",
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
                    (FIRST_LIFESPAN..=MAX_LIFESPAN).contains(&node.lifespan)
                        && node.lifespan.is_power_of_two(),
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
                !seen[f as usize],
                "free node {f} is in the tree or listed twice"
            );
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
        for &n in &self.core.idle {
            let node = &self.core.nodes[n as usize];
            ensure!(node.listed, "idle list names unlisted node {n}");
            ensure!(
                node.state != NodeState::Free,
                "idle list names free node {n}"
            );
        }
        let listed = self.core.nodes.iter().filter(|n| n.listed).count();
        ensure!(
            listed == self.core.idle.len(),
            "{listed} nodes marked listed, {} in the idle list",
            self.core.idle.len()
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

    /// The split of one node: the largest side's middle for an ordinary node,
    /// the face of the old root for a node made by growth.
    fn check_geometry(&self, n: u32, node: &Node<V>) -> Result<(), ValidationError> {
        let a = node.axis as usize;
        ensure!(a < V::DIM, "node {n} splits along axis {a} in {}D", V::DIM);
        ensure!(
            node.bounds.min.all_le(node.bounds.max),
            "node {n} bounds inverted"
        );
        if node.grown {
            ensure!(
                node.parent == NONE || self.core.nodes[node.parent as usize].grown,
                "growth node {n} below an ordinary node"
            );
            ensure!(node.splits, "growth node {n} cannot split");
            let (lo, hi) = (node.bounds.min.get(a), node.bounds.max.get(a));
            ensure!(
                lo <= node.split && node.split <= hi && lo < hi,
                "growth node {n} splits at {} outside [{lo}, {hi}]",
                node.split
            );
        } else {
            let (axis, split, splits) = layout(&node.bounds, self.config.min_dimension);
            ensure!(
                (node.axis, node.split, node.splits) == (axis, split, splits),
                "node {n} {:?} splits along {} at {} (may split: {}), not along its largest side {axis} at {split} ({splits})",
                node.bounds,
                node.axis,
                node.split,
                node.splits
            );
        }
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

#[cfg(test)]
mod tests {
    //! `validate()` catches each kind of corruption: the trees are broken by
    //! hand here, since no public operation can break them.

    use glam::Vec2;

    use crate::bsp::Bsp2;
    use crate::store::NONE;
    use crate::{Aabb, BspConfig, ObjectDesc, Shape, SpatialIndex};

    /// A 64 x 32 world with objects at several depths, one straddling the
    /// root's split, one the split of the root's upper half, one static, an
    /// idle leaf and one pending insertion.
    fn tree() -> Bsp2<u32> {
        let mut t = Bsp2::with_config(BspConfig {
            world: Some(Aabb::new(Vec2::ZERO, Vec2::new(64.0, 32.0)).unwrap()),
            ..Default::default()
        })
        .unwrap();
        let at = |x: f32, y: f32, r: f32, v| ObjectDesc::new(Shape::sphere(Vec2::new(x, y), r), v);
        t.insert(at(32.0, 16.0, 2.0, 0)).unwrap(); // straddles x = 32
        t.insert(at(48.0, 16.0, 1.0, 6)).unwrap(); // straddles x = 48
        t.insert(at(5.0, 5.0, 0.5, 1).with_static(true)).unwrap();
        t.insert(at(10.0, 25.0, 0.5, 2)).unwrap();
        t.insert(at(50.0, 5.0, 0.5, 3)).unwrap();
        let gone = t.insert(at(50.0, 28.0, 0.5, 4)).unwrap();
        t.flush();
        t.remove(gone).unwrap(); // leaves an idle leaf
        t.insert(at(1.0, 1.0, 0.5, 5)).unwrap(); // pending
        t.validate().unwrap();
        assert!(!t.core.idle.is_empty() && !t.core.pending.is_empty());
        t
    }

    fn breaks(what: &str, corrupt: impl FnOnce(&mut Bsp2<u32>)) {
        let mut t = tree();
        corrupt(&mut t);
        match t.validate() {
            Ok(()) => panic!("validate() missed: {what}"),
            Err(e) => assert!(e.0.contains(what), "expected {what:?}, got {e}"),
        }
    }

    /// The root's child holding objects, and a live slot filed in it.
    fn child_and_slot(t: &Bsp2<u32>) -> (u32, u32) {
        let r = &t.core.nodes[t.core.root as usize];
        let c = r.children.into_iter().find(|&c| c != NONE).unwrap();
        let mut n = c;
        while t.core.nodes[n as usize].items.is_empty() {
            n = t.core.nodes[n as usize]
                .children
                .into_iter()
                .find(|&c| c != NONE)
                .unwrap();
        }
        (c, t.core.nodes[n as usize].items[0].slot)
    }

    #[test]
    fn validate_catches_each_corruption() {
        breaks("are not half", |t| {
            let (c, _) = child_and_slot(t);
            t.core.nodes[c as usize].bounds.max.y += 1.0;
        });
        breaks("not along its largest side", |t| {
            t.core.nodes[t.core.root as usize].split = 30.0;
        });
        breaks("not along its largest side", |t| {
            let root = t.core.root as usize;
            t.core.nodes[root].axis = 1;
        });
        breaks("names parent", |t| {
            let (c, _) = child_and_slot(t);
            t.core.nodes[c as usize].parent = NONE;
        });
        breaks("child count", |t| {
            let root = t.core.root as usize;
            t.core.nodes[root].child_count += 1;
        });
        breaks("below an ordinary node", |t| {
            let (c, _) = child_and_slot(t);
            t.core.nodes[c as usize].grown = true;
        });
        breaks("fits a child", |t| {
            // Shrink the straddling object in place, into the lower half.
            let root = t.core.root as usize;
            let slot = t.core.nodes[root].items[0].slot;
            let shape = Shape::sphere(Vec2::new(20.0, 16.0), 1.0);
            let o = t.core.store.obj_mut(slot);
            o.shape = shape;
            o.aabb = shape.aabb();
            t.core.nodes[root].items[0].aabb = shape.aabb();
        });
        breaks("sticks out", |t| {
            let (_, slot) = child_and_slot(t);
            let s = t.core.store.slot(slot);
            let (n, pos) = (s.node as usize, s.pos as usize);
            let shape = Shape::sphere(Vec2::new(60.0, 30.0), 10.0);
            let o = t.core.store.obj_mut(slot);
            o.shape = shape;
            o.aabb = shape.aabb();
            t.core.nodes[n].items[pos].aabb = shape.aabb();
        });
        breaks("box out of date", |t| {
            let (_, slot) = child_and_slot(t);
            let s = t.core.store.slot(slot);
            let (n, pos) = (s.node as usize, s.pos as usize);
            t.core.nodes[n].items[pos].aabb.min.x -= 0.25;
        });
        breaks("static flag", |t| {
            let root = t.core.root as usize;
            t.core.nodes[root].items[0].is_static = true;
        });
        breaks("points elsewhere", |t| {
            let (_, slot) = child_and_slot(t);
            t.core.store.slot_mut(slot).pos += 1;
        });
        breaks("pending slot", |t| {
            let slot = t.core.pending[0];
            t.core.store.slot_mut(slot).pos = 7;
        });
        breaks("filed +", |t| {
            t.core.pending.clear();
        });
        breaks("free node", |t| {
            let (c, _) = child_and_slot(t);
            t.core.free_nodes.push(c);
        });
        breaks("neither in the tree nor free", |t| {
            t.core.nodes.push(t.core.nodes[0].clone());
        });
        breaks("empty leaf", |t| {
            let n = t.core.idle[0] as usize;
            t.core.nodes[n].state = crate::orthtree::NodeState::Live;
        });
        breaks("not listed", |t| {
            let n = t.core.idle.pop().unwrap() as usize;
            t.core.nodes[n].listed = false;
        });
        breaks("outlived", |t| {
            let n = t.core.idle[0] as usize;
            t.core.nodes[n].idle_frames = 8;
        });
        breaks("lifespan", |t| {
            let root = t.core.root as usize;
            t.core.nodes[root].lifespan = 12;
        });
        breaks("duplicates", |t| {
            let n = t.core.idle[0];
            t.core.idle.push(n);
            let m = t.core.root as usize;
            t.core.nodes[m].listed = true;
        });
        breaks("strict faces", |t| {
            let (c, _) = child_and_slot(t);
            t.core.nodes[c as usize].strict = 0;
        });
        breaks("root has strict faces", |t| {
            let root = t.core.root as usize;
            t.core.nodes[root].strict = 1;
        });
        breaks("touches a split plane", |t| {
            // Move the object of the upper half onto the root's split plane
            // x = 32, still within the half's (closed) bounds.
            let half = t.core.nodes[t.core.root as usize].children[1] as usize;
            let slot = t.core.nodes[half].items[0].slot;
            let shape = Shape::cuboid(Vec2::new(33.0, 16.0), Vec2::ONE);
            let o = t.core.store.obj_mut(slot);
            o.shape = shape;
            o.aabb = shape.aabb();
            t.core.nodes[half].items[0].aabb = shape.aabb();
        });
        breaks("may split: false", |t| {
            let root = t.core.root as usize;
            t.core.nodes[root].splits = false;
        });
    }
}
