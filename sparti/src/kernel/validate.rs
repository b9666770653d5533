//! The invariants every tree shares, checked once for all families: the
//! kernel walks the tree from the root and checks the pool (every node
//! reached once or free, links, child counts), the objects' filing (each
//! filed once, its slot pointing back, its copies up to date, the pending
//! queue), and the lifecycle of lazy pruning; at each root, node,
//! child and object it asks the family for its own rules (geometry and
//! placement). Also the statistics every tree reports.

use super::{Core, FIRST_LIFESPAN, Family, MAX_LIFESPAN, NodeState, PoolNode};
use crate::geometry::Vector;
use crate::index::Entry;
use crate::store::NONE;
use crate::traverse::TreeNode;
use crate::{TreeStats, ValidationError};

/// Returns a [`ValidationError`] with the message unless the condition
/// holds.
macro_rules! ensure {
    ($cond:expr, $($arg:tt)*) => {
        if !$cond {
            return Err($crate::ValidationError(format!($($arg)*)));
        }
    };
}
pub(crate) use ensure;

/// The rules every orthtree child meets, tight or loose: a slot of this
/// dimension, one level down (`levels`: the parent's and the child's), its
/// cell exactly octant `k` of the parent's (`is_octant`).
///
/// # Errors
/// The first broken rule.
pub(crate) fn check_octant<V: Vector>(
    (n, k, c): (u32, usize, u32),
    levels: (u16, u16),
    is_octant: bool,
) -> Result<(), ValidationError> {
    ensure!(
        k < 1 << V::DIM,
        "node {n} has child slot {k} in {}D",
        V::DIM
    );
    ensure!(levels.0 > 0 && levels.1 == levels.0 - 1, "child {c} level");
    ensure!(is_octant, "child {c} cell is not octant {k} of {n}");
    Ok(())
}

/// Every invariant of a tree: the family's rules at its root, nodes,
/// children and objects, within the kernel's walk and checks.
///
/// # Errors
/// The first broken invariant: always a bug in sparti.
pub(crate) fn check_tree<V: Vector, T, S: Family<V, T>>(s: &S) -> Result<(), ValidationError> {
    let core = s.core();
    let nodes = &core.nodes;
    s.check_root()?;
    let mut seen = vec![false; nodes.len()];
    let mut filed = 0usize;
    if core.root != NONE {
        ensure!(
            (core.root as usize) < nodes.len(),
            "root {} out of the pool",
            core.root
        );
        let r = &nodes[core.root as usize];
        ensure!(r.parent() == NONE, "root has a parent");
        ensure!(
            r.life().state == NodeState::Live,
            "root is {:?}",
            r.life().state
        );
        let mut stack = vec![core.root];
        while let Some(n) = stack.pop() {
            ensure!(!seen[n as usize], "node {n} reached twice");
            seen[n as usize] = true;
            let node = &nodes[n as usize];
            let life = node.life();
            ensure!(life.state != NodeState::Free, "free node {n} in the tree");
            s.check_node(n)?;
            let mut count = 0;
            for (k, &c) in node.children().iter().enumerate() {
                if c == NONE {
                    continue;
                }
                ensure!((c as usize) < nodes.len(), "child {c} out of the pool");
                count += 1;
                let child = &nodes[c as usize];
                ensure!(
                    child.parent() == n,
                    "child {c} of {n} names parent {}",
                    child.parent()
                );
                s.check_child(n, k, c)?;
                stack.push(c);
            }
            ensure!(count == life.child_count as usize, "node {n} child count");
            for (pos, &it) in core.items(n).iter().enumerate() {
                filed += 1;
                core.check_item(n, pos, it)?;
                s.check_place(n, &core.item(it))?;
            }
            let empty_leaf = node.block().is_empty() && life.child_count == 0;
            if n != core.root {
                ensure!(
                    (life.state == NodeState::Idle) == empty_leaf,
                    "node {n} is {:?} but empty leaf = {empty_leaf}",
                    life.state
                );
            }
            if life.state == NodeState::Idle {
                ensure!(life.listed, "idle node {n} is not listed for pruning");
                // Due within its lifespan from now.
                let left = life.due.wrapping_sub(core.idle.clock());
                ensure!(
                    (1..=life.lifespan).contains(&left),
                    "idle node {n} outlived its lifespan"
                );
            }
            ensure!(
                (FIRST_LIFESPAN..=MAX_LIFESPAN).contains(&life.lifespan)
                    && life.lifespan.is_power_of_two(),
                "node {n} lifespan {}",
                life.lifespan
            );
        }
    }
    core.check_queue_and_lists(seen, filed)
}

impl<V: Vector, T, N: PoolNode<V>> Core<V, T, N> {
    /// The entry's slot points back to it and its static flag is its
    /// object's.
    fn check_item(&self, n: u32, pos: usize, it: Entry) -> Result<(), ValidationError> {
        let s = self.store.place(it.slot());
        let Some(o) = self.store.get_obj(it.slot()) else {
            return Err(ValidationError(format!(
                "node {n} item {pos} names a free slot"
            )));
        };
        ensure!(
            s.node == n && s.pos as usize == pos,
            "slot of node {n} item {pos} points elsewhere"
        );
        ensure!(
            it.is_static() == o.is_static,
            "node {n} item {pos} static flag out of date"
        );
        Ok(())
    }

    /// After the walk (`seen`: the nodes reached; `filed`: the objects
    /// found in them): the pending queue, the object count, the free list
    /// and the idle list.
    fn check_queue_and_lists(
        &self,
        mut seen: Vec<bool>,
        filed: usize,
    ) -> Result<(), ValidationError> {
        let nodes = &self.nodes;
        for (pos, &slot) in self.pending.iter().enumerate() {
            let s = self.store.place(slot);
            ensure!(
                self.store.get_obj(slot).is_some(),
                "pending slot {slot} is free"
            );
            ensure!(
                s.node == NONE && s.pos as usize == pos,
                "pending slot {slot} misfiled"
            );
        }
        ensure!(
            filed + self.pending.len() == self.store.len(),
            "{filed} filed + {} pending != {} objects",
            self.pending.len(),
            self.store.len()
        );
        let unlayered = self.store.objs().iter().flatten().filter(|o| o.layer == 0);
        ensure!(
            unlayered.count() == self.store.unlayered(),
            "the store counts {} objects on no layer",
            self.store.unlayered()
        );
        for &f in &self.free_nodes {
            ensure!((f as usize) < nodes.len(), "free node {f} out of the pool");
            ensure!(
                !seen[f as usize],
                "free node {f} is in the tree or listed twice"
            );
            let life = nodes[f as usize].life();
            ensure!(life.state == NodeState::Free, "free node {f} state");
            ensure!(!life.listed, "free node {f} is listed as idle");
            seen[f as usize] = true;
        }
        ensure!(
            seen.iter().all(|&s| s),
            "a node is neither in the tree nor free"
        );
        let clock = self.idle.clock();
        let mut sorted = Vec::with_capacity(self.idle.len());
        for (n, step) in self.idle.entries() {
            ensure!((n as usize) < nodes.len(), "idle node {n} out of the pool");
            let life = nodes[n as usize].life();
            ensure!(life.listed, "idle list names unlisted node {n}");
            ensure!(
                life.state != NodeState::Free,
                "idle list names free node {n}"
            );
            let ahead = step.wrapping_sub(clock);
            ensure!(
                (1..=MAX_LIFESPAN).contains(&ahead),
                "idle node {n} waits {ahead} steps"
            );
            // An idle node is looked at no later than it is due.
            ensure!(
                life.state != NodeState::Idle || ahead <= life.due.wrapping_sub(clock),
                "idle node {n} is looked at after it is due"
            );
            sorted.push(n);
        }
        let listed = nodes.iter().filter(|n| n.life().listed).count();
        ensure!(
            listed == self.idle.len(),
            "{listed} nodes marked listed, {} in the idle list",
            self.idle.len()
        );
        sorted.sort_unstable();
        sorted.dedup();
        ensure!(sorted.len() == self.idle.len(), "idle list has duplicates");
        self.check_blocks()
    }

    /// The object lists' blocks: inside the array, within their room, no
    /// two overlapping, the room of none lost (what no block holds is
    /// counted abandoned), and the room past each list empty.
    fn check_blocks(&self) -> Result<(), ValidationError> {
        let items = self.entries();
        let total = items.len();
        let mut blocks: Vec<(u32, u32, u32)> = Vec::new();
        let mut objects = 0;
        for (n, node) in self.nodes.iter().enumerate() {
            let b = node.block();
            objects += b.len();
            ensure!(
                b.len > 0 || b.cap == 0,
                "node {n}: an empty list keeps room"
            );
            ensure!(
                b.cap > 0 || b.start == 0,
                "node {n}: a list without room starts at {}",
                b.start
            );
            ensure!(
                b.len <= b.cap,
                "node {n}: list of {} in room for {}",
                b.len,
                b.cap
            );
            ensure!(
                b.start as usize + b.cap as usize <= total,
                "node {n}: list's room past the array's end"
            );
            if node.life().state == NodeState::Free {
                ensure!(b.cap == 0, "free node {n} keeps room for objects");
            }
            if b.cap > 0 {
                blocks.push((b.start, b.cap, n as u32));
            }
            for it in &items[b.range().end..(b.start + b.cap) as usize] {
                ensure!(it.is_room(), "node {n}: an object past the end of its list");
            }
        }
        let held: usize = blocks.iter().map(|b| b.1 as usize).sum();
        for (cap, free) in self.lists.free.iter().enumerate() {
            for &start in free {
                ensure!(
                    start as usize + cap <= total,
                    "a free list's room past the array's end"
                );
                blocks.push((start, cap as u32, NONE));
            }
        }
        blocks.sort_unstable();
        for w in blocks.windows(2) {
            ensure!(
                w[0].0 + w[0].1 <= w[1].0,
                "the lists of nodes {} and {} overlap (NONE: free room)",
                w[0].2,
                w[1].2
            );
        }
        ensure!(
            held + self.lists.abandoned == total,
            "{held} held + {} abandoned != {total} in the lists' array",
            self.lists.abandoned
        );
        ensure!(
            objects == self.lists.objects(),
            "{objects} objects in the lists, {} counted",
            self.lists.objects()
        );
        Ok(())
    }
}

/// The statistics of a tree: nodes, leaves, depth, objects per node,
/// and the memory its arrays hold.
pub(crate) fn tree_stats<V: Vector, T, S: Family<V, T>>(s: &S) -> TreeStats {
    let core = s.core();
    let mut st = TreeStats {
        objects: core.store.len(),
        pending: core.pending.len(),
        ..TreeStats::default()
    };
    st.memory_bytes = core.memory_bytes() + s.own_memory();
    s.nodes_depth_first(&mut |_, depth, count| {
        st.nodes += 1;
        st.max_depth = st.max_depth.max(depth);
        if st.objects_per_node.len() <= count {
            st.objects_per_node.resize(count + 1, 0);
        }
        st.objects_per_node[count] += 1;
    });
    if core.root != NONE {
        st.leaves = core
            .nodes
            .iter()
            .filter(|n| {
                let life = n.life();
                life.state != NodeState::Free && life.child_count == 0
            })
            .count();
    }
    st
}

/// What every family's corruption tests share (their own `validate.rs`
/// breaks a tree by hand, since no public operation can, and checks that
/// `validate()` names the break).
#[cfg(test)]
pub(crate) mod corruption {
    use glam::Vec2;

    use crate::geometry::{Aabb, Shape, Vector};
    use crate::kernel::{Core, Family, NodeState, PoolNode};
    use crate::store::NONE;
    use crate::traverse::TreeNode;
    use crate::{Error, Handle, ObjectDesc, SpatialIndex};

    /// The world `[0, w] x [0, h]` of a family's test tree.
    pub(crate) fn world(w: f32, h: f32) -> Option<Aabb<Vec2>> {
        Some(Aabb::new(Vec2::ZERO, Vec2::new(w, h)).unwrap())
    }

    /// Fills the new tree `t` with discs `(x, y, radius, value, static)` and
    /// builds it; then builds one more disc, `gone`, and removes it
    /// (leaving an idle leaf), and queues one more, `pending`, value 99.
    pub(crate) fn populate<S: SpatialIndex<Vec2, u32> + Family<Vec2, u32>>(
        t: Result<S, Error>,
        discs: &[(f32, f32, f32, u32, bool)],
        gone: (f32, f32, f32),
        pending: (f32, f32, f32),
    ) -> S {
        let mut t = t.unwrap();
        let disc =
            |(x, y, r): (f32, f32, f32), v| ObjectDesc::new(Shape::sphere(Vec2::new(x, y), r), v);
        for &(x, y, r, v, is_static) in discs {
            t.insert(disc((x, y, r), v).with_static(is_static)).unwrap();
        }
        let gone = t.insert(disc(gone, 98)).unwrap();
        t.flush();
        t.remove(gone).unwrap();
        t.insert(disc(pending, 99)).unwrap();
        t.validate().unwrap();
        assert!(t.core().idle.len() > 0 && !t.core().pending.is_empty());
        t
    }

    /// The first node at or below `n` that holds objects, following each
    /// node's first child.
    pub(crate) fn first_filled<V: Vector, T, N: TreeNode<V>>(
        core: &Core<V, T, N>,
        mut n: u32,
    ) -> u32 {
        while core.items(n).is_empty() {
            n = core.nodes[n as usize]
                .children()
                .iter()
                .copied()
                .find(|&c| c != NONE)
                .unwrap();
        }
        n
    }

    /// Builds a tree with `tree`, breaks it with `corrupt`, and checks
    /// that `validate()` fails with a message containing `what`.
    pub(crate) fn breaks<V: Vector, T, S: SpatialIndex<V, T>>(
        tree: fn() -> S,
        what: &str,
        corrupt: impl FnOnce(&mut S),
    ) {
        let mut t = tree();
        t.validate().unwrap();
        corrupt(&mut t);
        match t.validate() {
            Ok(()) => panic!("validate() missed: {what}"),
            Err(e) => assert!(e.0.contains(what), "expected {what:?}, got {e}"),
        }
    }

    /// The breaks of the kernel's own state every family's `validate()`
    /// must name, on trees from `tree` (an idle leaf and a queued object
    /// in each, see [`populate`]): the pending queue emptied behind the
    /// store's back, an idle leaf marked live, an idle leaf past its
    /// lifespan.
    pub(crate) fn breaks_lifecycle<V: Vector, T, S: SpatialIndex<V, T> + Family<V, T>>(
        tree: fn() -> S,
    ) {
        breaks(tree, "filed +", |t| t.core_mut().pending.clear());
        breaks(tree, "empty leaf", |t| {
            let core = t.core_mut();
            let n = core.idle.any() as usize;
            core.nodes[n].pool().life.state = NodeState::Live;
        });
        breaks(tree, "outlived", |t| {
            let core = t.core_mut();
            let n = core.idle.any() as usize;
            core.nodes[n].pool().life.due = core.idle.clock();
        });
    }

    /// The slot of the object whose value is `v`, and the node it is in.
    pub(crate) fn slot_and_node<V: Vector, T: PartialEq, S: SpatialIndex<V, T>>(
        t: &S,
        core: &Core<V, T, impl TreeNode<V>>,
        v: &T,
    ) -> (u32, u32) {
        let h: Handle = t.objects().find(|(_, o)| o.value == *v).unwrap().0;
        (h.index(), core.store.place(h.index()).node)
    }

    /// Gives object `slot` a new shape in place, in the store (the tree
    /// is not told).
    pub(crate) fn reshape<V: Vector, T, N: TreeNode<V>>(
        core: &mut Core<V, T, N>,
        slot: u32,
        shape: Shape<V>,
    ) {
        core.store.obj_mut(slot).shape = shape;
    }
}
