//! All overlapping pairs in one pass (P1, P2).
//!
//! In a loose tree, "each node against its ancestors" is not enough: the
//! loose bounds of siblings overlap, so an object near the face of one cell
//! can touch an object filed in the neighbouring cell's subtree. The search
//! below covers those pairs too, each exactly once.
//!
//! # The scheme
//! Write `S(N)` for the objects of the subtree of `N` and `I(N)` for the
//! objects filed in `N` itself. The pairs within `S(N)` split, with no
//! overlap, into
//! 1. pairs within `I(N)`;
//! 2. pairs of `I(N)` with `S(C)` for each child `C` (ancestor-descendant);
//! 3. pairs within each `S(C)` (the same split, one level down);
//! 4. pairs of `S(C_i)` with `S(C_j)` for each two children `i < j`.
//!
//! First, one pass from the leaves up computes for each node the box
//! around the objects of its subtree, `B(N)` (objects are usually much
//! smaller than their node's pad, so these boxes prune far better than the
//! loose bounds, which overlap a block of 5 by 5 same-level neighbours at
//! looseness 2).
//!
//! A depth-first pass then does 1 and 2 as the tight octree does: each
//! node tests its objects against each other and against the objects of
//! its ancestors that overlap `B(N)` (kept as a stack of segments in one
//! buffer). For 4, a simultaneous descent of node pairs: the pairs of
//! `S(A)` with `S(B)`, for disjoint subtrees `A` and `B`, split (again with
//! no overlap), taking `X` the one of higher level and `Y` the other, into
//! `I(X)` with `S(Y)`, and `S(C)` with `S(Y)` for each child `C` of `X`.
//! The first is a walk of `Y`'s subtree; the second, more node pairs.
//!
//! Every object of `S(N)` lies inside `B(N)`, so a node pair, a walk step
//! or an ancestor object is dropped only when the boxes involved miss each
//! other, which proves that no pair is lost there. Since each split is a
//! partition, each unordered pair is tested exactly once. Splitting the
//! higher node keeps both sides of a node pair about the same size, so the
//! descent prunes on both sides.
//!
//! Nothing is allocated per node or per frame: the buffers are the tree's.

use super::{LooseOrthtree, Node};
use crate::geometry::{Aabb, Vector};
use crate::index::{Item, report_pair};
use crate::orthtree::NodeState;
use crate::store::{NONE, Store};
use crate::{Counters, Handle, LayerMatrix, Object};

/// What the pair search reads, and the counters it bumps.
struct Ctx<'a, V: Vector, T> {
    nodes: &'a [Node<V>],
    /// `sub[n]`: the box around every object of `S(n)` (empty: inverted).
    sub: &'a [Aabb<V>],
    store: &'a Store<Object<V, T>>,
    matrix: &'a LayerMatrix,
    counters: &'a mut Counters,
}

impl<V: Vector, T> Ctx<'_, V, T> {
    /// Box test, static-static skip, then the exact test via `report_pair`.
    #[inline]
    fn test<F>(&mut self, a: &Item<V>, b: &Item<V>, f: &mut F)
    where
        F: FnMut(Handle, Handle, &Object<V, T>, &Object<V, T>),
    {
        self.counters.pair_tests += 1;
        if a.aabb.intersects(&b.aabb) && !(a.is_static && b.is_static) {
            self.counters.shape_tests += 1;
            report_pair(self.store, self.matrix, a.slot, b.slot, f);
        }
    }

    /// Every pair of an object of `S(a)` with one of `S(b)`, for disjoint
    /// subtrees (whose object boxes overlap, or nothing is found).
    fn cross<F>(
        &mut self,
        a: u32,
        b: u32,
        stack: &mut Vec<(u32, u32)>,
        walk: &mut Vec<u32>,
        f: &mut F,
    ) where
        F: FnMut(Handle, Handle, &Object<V, T>, &Object<V, T>),
    {
        let (nodes, sub) = (self.nodes, self.sub);
        stack.clear();
        stack.push((a, b));
        while let Some((a, b)) = stack.pop() {
            self.counters.node_visits += 1;
            let (x, y) = if nodes[a as usize].level >= nodes[b as usize].level {
                (a, b)
            } else {
                (b, a)
            };
            let xn = &nodes[x as usize];
            if !xn.items.is_empty() {
                self.items_vs_subtree(xn, y, walk, f);
            }
            let yb = &sub[y as usize];
            for &c in &xn.children {
                if c != NONE && sub[c as usize].intersects(yb) {
                    stack.push((c, y));
                }
            }
        }
    }

    /// Every pair of an object of `I(x)` with one of `S(y)`, `y` not in the
    /// subtree of `x`: a walk of `y`'s subtree, pruned by the box around
    /// `x`'s objects.
    fn items_vs_subtree<F>(&mut self, x: &Node<V>, y: u32, walk: &mut Vec<u32>, f: &mut F)
    where
        F: FnMut(Handle, Handle, &Object<V, T>, &Object<V, T>),
    {
        let (nodes, sub) = (self.nodes, self.sub);
        let region = x.items[1..]
            .iter()
            .fold(x.items[0].aabb, |r, it| r.union(&it.aabb));
        walk.clear();
        if sub[y as usize].intersects(&region) {
            walk.push(y);
        }
        while let Some(m) = walk.pop() {
            self.counters.node_visits += 1;
            let mn = &nodes[m as usize];
            if !mn.items.is_empty() {
                let mb = &sub[m as usize];
                for a in &x.items {
                    if a.aabb.intersects(mb) {
                        for b in &mn.items {
                            self.test(a, b, f);
                        }
                    }
                }
            }
            for &c in &mn.children {
                if c != NONE && sub[c as usize].intersects(&region) {
                    walk.push(c);
                }
            }
        }
    }
}

/// True for the inverted box of a subtree without objects.
#[inline]
fn is_empty<V: Vector>(b: &Aabb<V>) -> bool {
    !b.min.all_le(b.max)
}

impl<V: Vector, T> LooseOrthtree<V, T> {
    /// Fills `sub_bounds[n]` with the box around every object of the
    /// subtree of `n` (inverted, so that it meets nothing, for a subtree
    /// without objects): a pass over the tree, children before parents.
    /// Objects are usually much smaller than their node's pad, so these
    /// boxes prune the pair search far better than loose bounds.
    fn subtree_bounds(&mut self) {
        let Self {
            nodes,
            sub_bounds: sub,
            stack: order,
            root,
            ..
        } = self;
        let empty = Aabb {
            min: V::splat(f32::MAX),
            max: V::splat(-f32::MAX),
        };
        sub.clear();
        sub.resize(nodes.len(), empty);
        // Parents before children in `order`, so children before parents
        // when it is read backwards.
        order.clear();
        order.push(*root);
        let mut i = 0;
        while i < order.len() {
            let n = order[i];
            // Idle nodes are empty leaves: their box stays empty.
            order.extend(
                nodes[n as usize]
                    .children
                    .iter()
                    .copied()
                    .filter(|&c| c != NONE && nodes[c as usize].state != NodeState::Idle),
            );
            i += 1;
        }
        for &n in order.iter().rev() {
            let node = &nodes[n as usize];
            let mut b = node.items.iter().fold(empty, |b, it| b.union(&it.aabb));
            for &c in &node.children {
                if c != NONE {
                    b = b.union(&sub[c as usize]);
                }
            }
            sub[n as usize] = b;
        }
    }

    pub(crate) fn find_pairs<F>(&mut self, mut f: F)
    where
        F: FnMut(Handle, Handle, &Object<V, T>, &Object<V, T>),
    {
        if self.root == NONE {
            return;
        }
        self.subtree_bounds();
        let Self {
            nodes,
            sub_bounds,
            store,
            pair_stack: stack,
            cross_stack,
            cands: buf,
            walk,
            counters,
            root,
            matrix,
            ..
        } = self;
        let mut cx = Ctx {
            nodes,
            sub: sub_bounds,
            store,
            matrix,
            counters,
        };
        let sub = cx.sub;
        let nodes = cx.nodes;
        buf.clear();
        stack.clear();
        // (node, its parent's segment `buf[start..end]`: the objects of the
        // parent and of its ancestors that reach the parent)
        stack.push((*root, 0, 0));
        while let Some((n, parent_start, parent_end)) = stack.pop() {
            cx.counters.node_visits += 1;
            let node = &nodes[n as usize];
            // Later segments belong to finished sibling subtrees.
            buf.truncate(parent_end as usize);
            let start = buf.len();
            let nb = &sub[n as usize];
            for i in parent_start as usize..parent_end as usize {
                let c = buf[i];
                if c.aabb.intersects(nb) {
                    buf.push(c);
                }
            }
            let mid = buf.len();
            // 1 and 2: this node's objects against each other and against
            // their ancestors'.
            let items = &node.items;
            for (i, a) in items.iter().enumerate() {
                for b in items[i + 1..].iter().chain(buf[start..mid].iter()) {
                    cx.test(a, b, &mut f);
                }
            }
            if node.child_count == 0 {
                continue;
            }
            // 4: each two children's subtrees against each other.
            if node.child_count > 1 {
                for (i, &a) in node.children.iter().enumerate() {
                    if a == NONE {
                        continue;
                    }
                    for &b in &node.children[i + 1..] {
                        if b != NONE && sub[a as usize].intersects(&sub[b as usize]) {
                            cx.cross(a, b, cross_stack, walk, &mut f);
                        }
                    }
                }
            }
            // 3: down into each child that holds objects.
            buf.extend_from_slice(items);
            let end = buf.len() as u32;
            for &c in &node.children {
                if c != NONE && !is_empty(&sub[c as usize]) {
                    stack.push((c, start as u32, end));
                }
            }
        }
    }
}
