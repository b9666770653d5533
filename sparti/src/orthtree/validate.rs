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

#[cfg(test)]
mod tests {
    //! `validate()` catches each kind of corruption of an octree or
    //! quadtree: the trees are broken by hand here, since no public
    //! operation can break them. (The BSP's and the loose trees' are in
    //! their own `validate.rs`.)

    use glam::Vec2;

    use crate::kernel::corruption;
    use crate::orthtree::{NodeState, Quadtree};
    use crate::store::NONE;
    use crate::{OrthtreeConfig, Shape};

    /// A 64 x 64 world with objects at several depths, one straddling the
    /// root's centre, one the centre of the root's lower left child, one
    /// static, an idle leaf and one pending insertion.
    fn tree() -> Quadtree<u32> {
        let config = OrthtreeConfig {
            world: corruption::world(64.0, 64.0),
            min_node_size: 1.0,
            ..Default::default()
        };
        corruption::populate(
            Quadtree::with_config(config),
            &[
                (32.0, 32.0, 2.0, 0, false), // straddles the centre
                (5.0, 5.0, 0.5, 1, true),
                (10.0, 50.0, 0.5, 2, false),
                (50.0, 5.0, 0.5, 3, false),
                (6.0, 7.0, 0.5, 4, false),
                (16.0, 16.0, 1.0, 7, false), // straddles (16, 16)
            ],
            (50.0, 50.0, 0.5),
            (1.0, 1.0, 0.5),
        )
    }

    fn breaks(what: &str, corrupt: impl FnOnce(&mut Quadtree<u32>)) {
        corruption::breaks(tree, what, corrupt);
    }

    /// A child of the root that holds objects below it, a node below it
    /// that holds objects, and one of those objects' slots.
    fn child_node_and_slot(t: &Quadtree<u32>) -> (u32, u32, u32) {
        let r = &t.core.nodes[t.core.root as usize];
        let live = |n: u32| t.core.nodes[n as usize].life.state != NodeState::Free;
        let c = r
            .children
            .into_iter()
            .find(|&c| c != NONE && live(c) && t.core.nodes[c as usize].child_count > 0)
            .unwrap();
        let n = corruption::first_filled(&t.core, c);
        (c, n, t.core.items(n)[0].slot())
    }

    #[test]
    fn validate_catches_each_corruption() {
        corruption::breaks_lifecycle(tree);
        breaks("centre outside its bounds", |t| {
            let (_, n, _) = child_node_and_slot(t);
            let b = t.core.nodes[n as usize].bounds;
            t.core.nodes[n as usize].center = b.max + Vec2::ONE;
        });
        breaks("is not octant", |t| {
            let (c, _, _) = child_node_and_slot(t);
            t.core.nodes[c as usize].bounds.max.y += 1.0;
        });
        breaks("level", |t| {
            let (c, _, _) = child_node_and_slot(t);
            t.core.nodes[c as usize].level += 1;
        });
        breaks("names parent", |t| {
            let (c, _, _) = child_node_and_slot(t);
            t.core.nodes[c as usize].parent = NONE;
        });
        breaks("child count", |t| {
            let root = t.core.root as usize;
            t.core.nodes[root].child_count += 1;
        });
        breaks("sticks out of it", |t| {
            let (_, _, slot) = child_node_and_slot(t);
            corruption::reshape(&mut t.core, slot, Shape::sphere(Vec2::new(60.0, 60.0), 1.0));
        });
        breaks("touches an ancestor's split plane", |t| {
            // The object in the root's lower left child [0, 32]^2, moved
            // within the child's closed bounds onto its face x = 32, the
            // root's split plane.
            let (slot, n) = corruption::slot_and_node(t, &t.core, &7);
            let b = t.core.nodes[n as usize].bounds;
            assert_eq!((b.min, b.max), (Vec2::ZERO, Vec2::splat(32.0)));
            corruption::reshape(
                &mut t.core,
                slot,
                Shape::cuboid(Vec2::new(31.0, 16.0), Vec2::ONE),
            );
        });
        breaks("fits a child", |t| {
            // Shrink the straddling object in place, into one quadrant.
            let root = t.core.root;
            let slot = t.core.items(root)[0].slot();
            corruption::reshape(&mut t.core, slot, Shape::sphere(Vec2::new(20.0, 20.0), 1.0));
        });
        breaks("static flag", |t| {
            let root = t.core.root;
            t.core.items_mut(root)[0].set_static(true);
        });
        breaks("points elsewhere", |t| {
            let (_, _, slot) = child_node_and_slot(t);
            t.core.store.place_mut(slot).pos += 1;
        });
        breaks("free node", |t| {
            let (c, _, _) = child_node_and_slot(t);
            t.core.free_nodes.push(c);
        });
    }
}
