//! All overlapping pairs in one pass (P1, P2): the objects of each node
//! against each other and against those of its ancestors.

use super::Orthtree;
use crate::brute::report_pair;
use crate::geometry::Vector;
use crate::store::NONE;
use crate::{Handle, Object};

impl<V: Vector, T> Orthtree<V, T> {
    pub(crate) fn find_pairs<F>(&mut self, mut f: F)
    where
        F: FnMut(Handle, Handle, &Object<V, T>, &Object<V, T>),
    {
        if self.root == NONE {
            return;
        }
        let Self {
            nodes,
            store,
            stack,
            ancestors,
            counters,
            root,
            ..
        } = self;
        stack.clear();
        ancestors.clear();
        // (node, number of ancestor items above it)
        stack.push((*root, 0));
        while let Some((n, base)) = stack.pop() {
            ancestors.truncate(base as usize);
            counters.node_visits += 1;
            let node = &nodes[n as usize];
            let items = &node.items;
            for (i, a) in items.iter().enumerate() {
                // Against the rest of this node, then every ancestor's
                // objects: a static object stored high up still meets every
                // moving object below it.
                for b in items[i + 1..].iter().chain(ancestors.iter()) {
                    counters.pair_tests += 1;
                    if a.aabb.intersects(&b.aabb) && !(a.is_static && b.is_static) {
                        counters.shape_tests += 1;
                        report_pair(store, a.slot, b.slot, &mut f);
                    }
                }
            }
            if node.child_count > 0 {
                ancestors.extend_from_slice(items);
                let depth = ancestors.len() as u32;
                for &c in &node.children {
                    if c != NONE {
                        stack.push((c, depth));
                    }
                }
            }
        }
    }
}
