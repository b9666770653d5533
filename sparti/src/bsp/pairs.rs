//! All overlapping pairs in one pass (P1, P2): the objects of each node
//! against each other and against those of its ancestors.

use super::Bsp;
use crate::geometry::Vector;
use crate::index::report_pair;
use crate::kernel::Core;
use crate::orthtree::PairScratch;
use crate::store::NONE;
use crate::{Counters, Handle, Object};

impl<V: Vector, T> Bsp<V, T> {
    /// Depth-first over the tree with a stack of ancestor objects. Each node
    /// keeps, as its candidates, only the ancestor objects that overlap its
    /// own bounds: an ancestor object that misses a node misses its whole
    /// subtree. The candidates of a node are a segment of one buffer, so
    /// nothing is allocated per node or per frame.
    pub(crate) fn find_pairs<F>(&self, counters: &mut Counters, f: &mut F)
    where
        F: FnMut(Handle, Handle, &Object<V, T>, &Object<V, T>),
    {
        let Core {
            nodes,
            store,
            root,
            matrix,
            ..
        } = &self.core;
        let mut scratch = self.pair_scratch.take();
        let PairScratch {
            stack,
            ancestors: buf,
            ..
        } = &mut scratch;
        buf.clear();
        stack.clear();
        // (node, its parent's candidate segment `buf[start..end]`)
        stack.push((*root, 0, 0));
        while let Some((n, parent_start, parent_end)) = stack.pop() {
            counters.node_visits += 1;
            let node = &nodes[n as usize];
            // Later segments belong to finished sibling subtrees.
            buf.truncate(parent_end as usize);
            let start = buf.len();
            for i in parent_start as usize..parent_end as usize {
                let c = buf[i];
                if c.aabb.intersects(&node.bounds) {
                    buf.push(c);
                }
            }
            let mid = buf.len();
            let items = &node.items;
            for (i, a) in items.iter().enumerate() {
                // Against the rest of this node, then every ancestor object
                // that reaches this node: a static object stored high up
                // still meets every moving object below it.
                for b in items[i + 1..].iter().chain(buf[start..mid].iter()) {
                    counters.pair_tests += 1;
                    if a.aabb.intersects(&b.aabb) && !(a.is_static && b.is_static) {
                        counters.shape_tests += 1;
                        report_pair(store, matrix, a.slot, b.slot, f);
                    }
                }
            }
            if node.child_count > 0 {
                buf.extend_from_slice(items);
                let end = buf.len() as u32;
                for &c in &node.children {
                    if c != NONE {
                        stack.push((c, start as u32, end));
                    }
                }
            }
        }
        self.pair_scratch.put(scratch);
    }
}
