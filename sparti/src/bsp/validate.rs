//! The BSP's own invariants, checked within the kernel's walk
//! (`kernel/validate.rs`, which checks the pool, the filing of objects and
//! the lifecycle).

use super::{Bsp, Node, layout};
use crate::ValidationError;
use crate::geometry::Vector;
use crate::index::Item;
use crate::kernel::ensure;
use crate::store::NONE;

impl<V: Vector, T> Bsp<V, T> {
    /// The root has no strict face (no ancestor's split plane bounds it).
    pub(crate) fn check_root(&self) -> Result<(), ValidationError> {
        if self.core.root != NONE {
            let r = &self.core.nodes[self.core.root as usize];
            ensure!(r.strict == 0, "root has strict faces {:#b}", r.strict);
        }
        Ok(())
    }

    /// Node `n`'s split (see [`Bsp::check_geometry`]); a node that cannot
    /// split has no children.
    pub(crate) fn check_node(&self, n: u32) -> Result<(), ValidationError> {
        let node = &self.core.nodes[n as usize];
        self.check_geometry(n, node)?;
        ensure!(
            node.splits || node.child_count == 0,
            "node {n} cannot split but has children"
        );
        Ok(())
    }

    /// Child `c` of node `n`, in slot `k`: its bounds exactly half `k` of
    /// the parent's, its strict faces the parent's plus its split face.
    pub(crate) fn check_child(&self, n: u32, k: usize, c: u32) -> Result<(), ValidationError> {
        let (node, child) = (&self.core.nodes[n as usize], &self.core.nodes[c as usize]);
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
        Ok(())
    }

    /// The object of item `it` lies in its node's bounds without touching
    /// a face that is an ancestor's split plane, and in the deepest node
    /// that contains it (unless the node cannot split, or is a leaf within
    /// its capacity).
    pub(crate) fn check_place(&self, n: u32, it: &Item<V>) -> Result<(), ValidationError> {
        let node = &self.core.nodes[n as usize];
        let aabb = &it.aabb;
        ensure!(
            node.bounds.contains(aabb),
            "object in node {n} sticks out of it"
        );
        ensure!(
            Self::holds(node, aabb),
            "object in node {n} touches a split plane of an ancestor ({:?} in {:?}, strict faces {:#b})",
            aabb,
            node.bounds,
            node.strict
        );
        let within_capacity =
            node.child_count == 0 && node.items.len() <= self.config.leaf_capacity as usize;
        ensure!(
            !node.splits || within_capacity || Self::side_of(node, aabb).is_none(),
            "object in node {n} fits a child ({} objects, {} children)",
            node.items.len(),
            node.child_count
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
}

#[cfg(test)]
mod tests {
    //! `validate()` catches each kind of corruption: the trees are broken by
    //! hand here, since no public operation can break them.

    use glam::Vec2;

    use crate::bsp::Bsp2;
    use crate::kernel::corruption;
    use crate::store::NONE;
    use crate::{BspConfig, Shape};

    /// A 64 x 32 world with objects at several depths, one straddling the
    /// root's split, one the split of the root's upper half, one static, an
    /// idle leaf and one pending insertion.
    fn tree() -> Bsp2<u32> {
        let t = Bsp2::with_config(BspConfig {
            world: corruption::world(64.0, 32.0),
            // One object a leaf: a tree of several levels from a few
            // objects, with an idle leaf.
            leaf_capacity: 1,
            ..Default::default()
        });
        corruption::populate(
            t,
            &[
                (32.0, 16.0, 2.0, 0, false), // straddles x = 32
                (48.0, 16.0, 1.0, 6, false), // straddles x = 48
                (5.0, 5.0, 0.5, 1, true),
                (10.0, 25.0, 0.5, 2, false),
                (50.0, 5.0, 0.5, 3, false),
            ],
            (50.0, 28.0, 0.5),
            (1.0, 1.0, 0.5),
        )
    }

    fn breaks(what: &str, corrupt: impl FnOnce(&mut Bsp2<u32>)) {
        corruption::breaks(tree, what, corrupt);
    }

    /// The root's child holding objects, and a live slot filed in it.
    fn child_and_slot(t: &Bsp2<u32>) -> (u32, u32) {
        let r = &t.core.nodes[t.core.root as usize];
        let c = r.children.into_iter().find(|&c| c != NONE).unwrap();
        let n = corruption::first_filled(&t.core, c);
        (c, t.core.items(n)[0].slot())
    }

    #[test]
    fn validate_catches_each_corruption() {
        corruption::breaks_lifecycle(tree);
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
            let slot = t.core.items_mut(root as u32)[0].slot();
            let shape = Shape::sphere(Vec2::new(20.0, 16.0), 1.0);
            corruption::reshape(&mut t.core, slot, shape);
        });
        breaks("sticks out", |t| {
            let (_, slot) = child_and_slot(t);
            let shape = Shape::sphere(Vec2::new(60.0, 30.0), 10.0);
            corruption::reshape(&mut t.core, slot, shape);
        });
        breaks("static flag", |t| {
            let root = t.core.root as usize;
            t.core.items_mut(root as u32)[0].set_static(true);
        });
        breaks("points elsewhere", |t| {
            let (_, slot) = child_and_slot(t);
            t.core.store.place_mut(slot).pos += 1;
        });
        breaks("pending slot", |t| {
            let slot = t.core.pending[0];
            t.core.store.place_mut(slot).pos = 7;
        });
        breaks("free node", |t| {
            let (c, _) = child_and_slot(t);
            t.core.free_nodes.push(c);
        });
        breaks("neither in the tree nor free", |t| {
            t.core.nodes.push(t.core.nodes[0].clone());
        });
        breaks("not listed", |t| {
            let n = t.core.idle.pop().unwrap() as usize;
            t.core.nodes[n].life.listed = false;
        });
        breaks("lifespan", |t| {
            let root = t.core.root as usize;
            t.core.nodes[root].life.lifespan = 12;
        });
        breaks("duplicates", |t| {
            let n = t.core.idle.any();
            t.core.idle.duplicate(n);
            let m = t.core.root as usize;
            t.core.nodes[m].life.listed = true;
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
            let slot = t.core.items_mut(half as u32)[0].slot();
            let shape = Shape::cuboid(Vec2::new(33.0, 16.0), Vec2::ONE);
            corruption::reshape(&mut t.core, slot, shape);
        });
        breaks("may split: false", |t| {
            let root = t.core.root as usize;
            t.core.nodes[root].splits = false;
        });
    }
}
