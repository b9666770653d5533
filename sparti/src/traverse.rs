//! The queries every tree shares (Q1-Q6): one region traversal, two ray
//! traversals and one k-nearest search, written once over the
//! [`TreeNode`] view of a node pool.
//!
//! A tree only says, for each node, the box that holds every object of its
//! subtree (tight bounds for the octree and the BSP, loose bounds for the
//! loose trees), the node's own objects and its children.

use core::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::geometry::{Overlap, Ray, Region, Vector};
use crate::index::{Candidate, Item, Knn, Neighbor, closer, sort_hits};
use crate::store::{NONE, Store};
use crate::{Counters, Filter, Handle, Object, RayHit};

/// What the shared queries need to know of a tree node.
pub(crate) trait TreeNode<V: Vector> {
    /// A box holding every object of the node's subtree.
    fn bounds(&self) -> &crate::Aabb<V>;
    /// The objects filed in the node itself.
    fn items(&self) -> &[Item<V>];
    /// Child node indices; `NONE` for an absent child.
    fn children(&self) -> &[u32];
}

/// The buffers of the shared queries, kept in each tree so that a query
/// allocates nothing once they are warm.
#[derive(Default)]
pub(crate) struct Scratch {
    /// Depth-first stack: (node, subtree wholly inside the region).
    stack: Vec<(u32, bool)>,
    /// Best-first heap for rays: nodes by entry distance.
    heap: BinaryHeap<Reverse<Candidate>>,
    /// The k-nearest state.
    knn: Knn,
}

/// A tree as the shared queries see it.
pub(crate) struct Tree<'a, V: Vector, T, N> {
    pub nodes: &'a [N],
    /// The root node, or `NONE` for an empty tree.
    pub root: u32,
    pub store: &'a Store<Object<V, T>>,
}

/// A node as a heap entry: its index in a handle's place.
#[inline]
fn node_key(distance: f32, node: u32) -> Reverse<Candidate> {
    Reverse(Candidate {
        distance,
        handle: Handle {
            index: node,
            generation: 0,
        },
    })
}

impl<V: Vector, T, N: TreeNode<V>> Tree<'_, V, T, N> {
    #[inline]
    fn node(&self, n: u32) -> &N {
        &self.nodes[n as usize]
    }

    #[inline]
    fn hit(&self, slot: u32, x: crate::RayIntersection<V>) -> RayHit<V> {
        RayHit {
            handle: self.store.handle(slot),
            distance: x.distance,
            point: x.point,
            normal: x.normal,
        }
    }

    /// Objects selected by a region, depth-first; a subtree whose bounds lie
    /// wholly inside the region is accepted without testing its objects (Q3).
    pub fn query<R: Region<V>>(
        &self,
        scratch: &mut Scratch,
        counters: &mut Counters,
        region: &R,
        filter: Filter,
        out: &mut Vec<Handle>,
    ) {
        out.clear();
        counters.queries += 1;
        if self.root == NONE {
            return;
        }
        let stack = &mut scratch.stack;
        stack.clear();
        stack.push((self.root, false));
        while let Some((n, inside)) = stack.pop() {
            let node = self.node(n);
            counters.node_visits += 1;
            let inside = inside
                || match region.classify(node.bounds()) {
                    Overlap::Outside => continue,
                    Overlap::Inside => true,
                    Overlap::Partial => false,
                };
            for it in node.items() {
                let o = self.store.obj(it.slot);
                if !filter.accepts(o.layer) {
                    continue;
                }
                let hit = inside
                    || match region.classify(&it.aabb) {
                        Overlap::Outside => false,
                        Overlap::Inside => true,
                        Overlap::Partial => {
                            counters.shape_tests += 1;
                            region.matches(&o.shape)
                        }
                    };
                if hit {
                    out.push(self.store.handle(it.slot));
                }
            }
            for &c in node.children() {
                if c != NONE {
                    stack.push((c, inside));
                }
            }
        }
    }

    /// The nearest hit, best first: nodes come off a heap by the distance at
    /// which the ray enters their bounds, and the search ends when the
    /// nearest remaining node is entered beyond the best hit so far. A node
    /// entered exactly at the best distance is still visited, for the tie
    /// rule (the smaller handle wins).
    pub fn ray_nearest(
        &self,
        scratch: &mut Scratch,
        counters: &mut Counters,
        ray: &Ray<V>,
        max_dist: f32,
        filter: Filter,
    ) -> Option<RayHit<V>> {
        counters.queries += 1;
        if self.root == NONE || max_dist.is_nan() || max_dist < 0.0 {
            return None;
        }
        let heap = &mut scratch.heap;
        heap.clear();
        let mut best: Option<RayHit<V>> = None;
        if let Some((t0, _)) = ray.clip_aabb(self.node(self.root).bounds(), max_dist) {
            heap.push(node_key(t0, self.root));
        }
        while let Some(Reverse(key)) = heap.pop() {
            let limit = best.map_or(max_dist, |b| b.distance);
            if key.distance > limit {
                break;
            }
            counters.node_visits += 1;
            let node = self.node(key.handle.index);
            for it in node.items() {
                let limit = best.map_or(max_dist, |b| b.distance);
                if ray.clip_aabb(&it.aabb, limit).is_none() {
                    continue;
                }
                let o = self.store.obj(it.slot);
                if !filter.accepts(o.layer) {
                    continue;
                }
                counters.shape_tests += 1;
                if let Some(x) = o.shape.cast_ray(ray, limit) {
                    let hit = self.hit(it.slot, x);
                    if closer(&hit, &best) {
                        best = Some(hit);
                    }
                }
            }
            let limit = best.map_or(max_dist, |b| b.distance);
            for &c in node.children() {
                if c != NONE {
                    if let Some((t0, _)) = ray.clip_aabb(self.node(c).bounds(), limit) {
                        heap.push(node_key(t0, c));
                    }
                }
            }
        }
        heap.clear();
        best
    }

    /// Every hit within `max_dist`, sorted by distance then handle.
    pub fn ray_all(
        &self,
        scratch: &mut Scratch,
        counters: &mut Counters,
        ray: &Ray<V>,
        max_dist: f32,
        filter: Filter,
        out: &mut Vec<RayHit<V>>,
    ) {
        out.clear();
        counters.queries += 1;
        if self.root == NONE || max_dist.is_nan() || max_dist < 0.0 {
            return;
        }
        let stack = &mut scratch.stack;
        stack.clear();
        stack.push((self.root, false));
        while let Some((n, _)) = stack.pop() {
            let node = self.node(n);
            if ray.clip_aabb(node.bounds(), max_dist).is_none() {
                continue;
            }
            counters.node_visits += 1;
            for it in node.items() {
                if ray.clip_aabb(&it.aabb, max_dist).is_none() {
                    continue;
                }
                let o = self.store.obj(it.slot);
                if !filter.accepts(o.layer) {
                    continue;
                }
                counters.shape_tests += 1;
                if let Some(x) = o.shape.cast_ray(ray, max_dist) {
                    out.push(self.hit(it.slot, x));
                }
            }
            for &c in node.children() {
                if c != NONE {
                    stack.push((c, false));
                }
            }
        }
        sort_hits(out);
    }

    /// Best-first k-nearest search: nodes by distance to their bounds, the
    /// search ending when the nearest unvisited node is farther than the
    /// k-th best object.
    pub fn nearest(
        &self,
        scratch: &mut Scratch,
        counters: &mut Counters,
        point: V,
        k: usize,
        filter: Filter,
        out: &mut Vec<Neighbor>,
    ) {
        out.clear();
        counters.queries += 1;
        if self.root == NONE || k == 0 || !point.is_finite() {
            return;
        }
        let knn = &mut scratch.knn;
        knn.start(k);
        let dist = |n: &N| n.bounds().distance_squared_to_point(point).sqrt();
        knn.push_node(self.root, dist(self.node(self.root)));
        while let Some(n) = knn.pop_node() {
            counters.node_visits += 1;
            let node = self.node(n);
            for it in node.items() {
                if it.aabb.distance_squared_to_point(point).sqrt() > knn.bound() {
                    continue;
                }
                let o = self.store.obj(it.slot);
                if !filter.accepts(o.layer) {
                    continue;
                }
                counters.shape_tests += 1;
                knn.offer(self.store.handle(it.slot), o.shape.distance_to_point(point));
            }
            for &c in node.children() {
                if c != NONE {
                    let d = dist(self.node(c));
                    if d <= knn.bound() {
                        knn.push_node(c, d);
                    }
                }
            }
        }
        knn.finish(out);
    }
}
