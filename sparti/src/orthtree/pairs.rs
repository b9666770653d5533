//! All overlapping pairs in one pass (P1, P2): the objects of each node
//! against each other and against those of its ancestors.

use super::Orthtree;
use crate::geometry::Vector;
use crate::index::{Item, report_pair};
use crate::kernel::Core;
use crate::store::{NONE, Store};
use crate::{Counters, Handle, LayerMatrix, Object};

/// Below this many candidate pairs in a node, plain loops beat sorting.
const SWEEP_MIN_PAIRS: usize = 48;

impl<V: Vector, T> Orthtree<V, T> {
    /// Depth-first over the tree with a buffer of ancestor objects. Each node
    /// keeps, as its candidates, only the ancestor objects that overlap its
    /// own bounds: an ancestor object that misses a node misses its whole
    /// subtree. The candidates of a node are a segment of one buffer, so
    /// nothing is allocated per node or per frame.
    ///
    /// Within a node, objects are tested against each other and against the
    /// candidates by sweep and prune along the axis where the node's objects
    /// spread most: only boxes whose intervals overlap on that axis are
    /// compared. That keeps crowded nodes (the objects straddling the root's
    /// split planes) from costing the square of their count.
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
            sorted,
        } = &mut scratch;
        buf.clear();
        stack.clear();
        let mut ctx = PairCtx {
            store,
            matrix,
            counters,
            f,
        };
        // (node, its parent's candidate segment `buf[start..end]`)
        stack.push((*root, 0, 0));
        while let Some((n, parent_start, parent_end)) = stack.pop() {
            ctx.counters.node_visits += 1;
            let node = &nodes[n as usize];
            // Later segments belong to finished sibling subtrees.
            buf.truncate(parent_end as usize);
            let start = buf.len();
            ctx.counters.bound_tests += u64::from(parent_end - parent_start);
            for i in parent_start as usize..parent_end as usize {
                let c = buf[i];
                if c.aabb.intersects(&node.bounds) {
                    buf.push(c);
                }
            }
            let mid = buf.len();
            let items = &node.items;
            // A static object stored high up meets every moving object below
            // it: the candidates hold every ancestor object reaching here.
            let cands = &mut buf[start..mid];
            if items.len() * (items.len() + cands.len()) < SWEEP_MIN_PAIRS {
                for (i, a) in items.iter().enumerate() {
                    for b in items[i + 1..].iter().chain(cands.iter()) {
                        ctx.test(a, b);
                    }
                }
            } else {
                let axis = spread_axis(items);
                sorted.clear();
                sorted.extend_from_slice(items);
                let key = |it: &Item<V>| it.aabb.min.get(axis);
                sorted.sort_unstable_by(|a, b| key(a).total_cmp(&key(b)));
                cands.sort_unstable_by(|a, b| key(a).total_cmp(&key(b)));
                ctx.sweep_self(sorted, axis);
                ctx.sweep_two(sorted, cands, axis);
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

/// The pair search's buffers.
pub(crate) struct PairScratch<V: Vector> {
    /// Depth-first stack: (node, its parent's candidate segment).
    pub stack: Vec<(u32, u32, u32)>,
    /// Ancestor objects, one segment per level of the descent.
    pub ancestors: Vec<Item<V>>,
    /// A crowded node's objects, sorted for the sweep (the octree's).
    pub sorted: Vec<Item<V>>,
}

impl<V: Vector> Default for PairScratch<V> {
    fn default() -> Self {
        Self {
            stack: Vec::new(),
            ancestors: Vec::new(),
            sorted: Vec::new(),
        }
    }
}

impl<V: Vector> PairScratch<V> {
    /// Bytes held.
    pub fn memory(&self) -> usize {
        self.stack.capacity() * size_of::<(u32, u32, u32)>()
            + (self.ancestors.capacity() + self.sorted.capacity()) * size_of::<Item<V>>()
    }
}

/// The axis along which the objects' centres spread most.
fn spread_axis<V: Vector>(items: &[Item<V>]) -> usize {
    let (mut lo, mut hi) = (V::splat(f32::INFINITY), V::splat(f32::NEG_INFINITY));
    for it in items {
        let c = it.aabb.min + it.aabb.max;
        lo = lo.min(c);
        hi = hi.max(c);
    }
    (hi - lo).max_axis()
}

/// What a pair test needs, borrowed apart from the tree's nodes.
struct PairCtx<'a, V: Vector, T, F> {
    store: &'a Store<Object<V, T>>,
    matrix: &'a LayerMatrix,
    counters: &'a mut Counters,
    f: &'a mut F,
}

impl<V: Vector, T, F> PairCtx<'_, V, T, F>
where
    F: FnMut(Handle, Handle, &Object<V, T>, &Object<V, T>),
{
    /// The box test, inlined into the loops; the rare overlap goes to the
    /// out-of-line exact test.
    #[inline(always)]
    fn test(&mut self, a: &Item<V>, b: &Item<V>) {
        self.counters.pair_tests += 1;
        if a.aabb.intersects(&b.aabb) & !(a.is_static & b.is_static) {
            self.overlap(a, b);
        }
    }

    #[inline(never)]
    fn overlap(&mut self, a: &Item<V>, b: &Item<V>) {
        self.counters.shape_tests += 1;
        report_pair(self.store, self.matrix, a.slot, b.slot, self.f);
    }

    /// Every pair of one list sorted by `min[axis]` whose intervals on the
    /// axis overlap.
    fn sweep_self(&mut self, list: &[Item<V>], axis: usize) {
        for (i, a) in list.iter().enumerate() {
            let end = a.aabb.max.get(axis);
            for b in &list[i + 1..] {
                if b.aabb.min.get(axis) > end {
                    break;
                }
                self.test(a, b);
            }
        }
    }

    /// Every pair across two lists sorted by `min[axis]` whose intervals on
    /// the axis overlap, each once: walk both in order of `min`, and test the
    /// current box against the boxes of the other list that start before it
    /// ends.
    fn sweep_two(&mut self, xs: &[Item<V>], ys: &[Item<V>], axis: usize) {
        let (mut i, mut j) = (0, 0);
        while i < xs.len() && j < ys.len() {
            if xs[i].aabb.min.get(axis) <= ys[j].aabb.min.get(axis) {
                let a = &xs[i];
                let end = a.aabb.max.get(axis);
                for b in &ys[j..] {
                    if b.aabb.min.get(axis) > end {
                        break;
                    }
                    self.test(a, b);
                }
                i += 1;
            } else {
                let b = &ys[j];
                let end = b.aabb.max.get(axis);
                for a in &xs[i..] {
                    if a.aabb.min.get(axis) > end {
                        break;
                    }
                    self.test(a, b);
                }
                j += 1;
            }
        }
    }
}
