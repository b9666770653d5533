//! Region and ray queries (Q1-Q5) and k nearest (Q6): one traversal each,
//! pruned by the nodes' loose bounds, which hold every object of their
//! subtree.

use core::cmp::Reverse;

use super::LooseOrthtree;
use crate::geometry::{Overlap, Ray, Region, Vector};
use crate::index::{Candidate, Neighbor, closer, sort_hits};
use crate::store::NONE;
use crate::{Filter, Handle, RayHit};

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

impl<V: Vector, T> LooseOrthtree<V, T> {
    /// Depth-first; a subtree whose loose bounds lie wholly inside the
    /// region is accepted without testing its objects (Q3).
    pub(crate) fn query_region<R: Region<V>>(
        &mut self,
        region: &R,
        filter: Filter,
        out: &mut Vec<Handle>,
    ) {
        out.clear();
        self.counters.queries += 1;
        if self.root == NONE {
            return;
        }
        let Self {
            nodes,
            store,
            region_stack: stack,
            counters,
            root,
            ..
        } = self;
        stack.clear();
        // Second field: true when the subtree lies wholly inside the region.
        stack.push((*root, false));
        while let Some((n, inside)) = stack.pop() {
            let node = &nodes[n as usize];
            counters.node_visits += 1;
            let inside = inside
                || match region.classify(&node.loose) {
                    Overlap::Outside => continue,
                    Overlap::Inside => true,
                    Overlap::Partial => false,
                };
            for it in &node.items {
                let o = store.obj(it.slot);
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
                    out.push(store.handle(it.slot));
                }
            }
            for &c in &node.children {
                if c != NONE {
                    stack.push((c, inside));
                }
            }
        }
    }

    /// Nearest hit, best first: nodes come off a heap by the distance at
    /// which the ray enters their loose bounds, and the search ends when the
    /// nearest remaining node is entered beyond the best hit so far. Ties go
    /// to the smaller handle: a node entered exactly at the best distance is
    /// still visited.
    pub(crate) fn cast_nearest(
        &mut self,
        ray: &Ray<V>,
        max_dist: f32,
        filter: Filter,
    ) -> Option<RayHit<V>> {
        self.counters.queries += 1;
        if self.root == NONE || max_dist.is_nan() || max_dist < 0.0 {
            return None;
        }
        let Self {
            nodes,
            store,
            counters,
            root,
            ray_heap: heap,
            ..
        } = self;
        let mut best: Option<RayHit<V>> = None;
        heap.clear();
        if let Some((t0, _)) = ray.clip_aabb(&nodes[*root as usize].loose, max_dist) {
            heap.push(node_key(t0, *root));
        }
        while let Some(Reverse(key)) = heap.pop() {
            let limit = best.map_or(max_dist, |b| b.distance);
            if key.distance > limit {
                break;
            }
            counters.node_visits += 1;
            let node = &nodes[key.handle.index as usize];
            for it in &node.items {
                let limit = best.map_or(max_dist, |b| b.distance);
                if ray.clip_aabb(&it.aabb, limit).is_none() {
                    continue;
                }
                let o = store.obj(it.slot);
                if !filter.accepts(o.layer) {
                    continue;
                }
                counters.shape_tests += 1;
                if let Some(x) = o.shape.cast_ray(ray, limit) {
                    let hit = RayHit {
                        handle: store.handle(it.slot),
                        distance: x.distance,
                        point: x.point,
                        normal: x.normal,
                    };
                    if closer(&hit, &best) {
                        best = Some(hit);
                    }
                }
            }
            let limit = best.map_or(max_dist, |b| b.distance);
            for &c in &node.children {
                if c != NONE {
                    if let Some((t0, _)) = ray.clip_aabb(&nodes[c as usize].loose, limit) {
                        heap.push(node_key(t0, c));
                    }
                }
            }
        }
        heap.clear();
        best
    }

    /// Every hit within `max_dist`, sorted by distance then handle.
    pub(crate) fn cast_all(
        &mut self,
        ray: &Ray<V>,
        max_dist: f32,
        filter: Filter,
        out: &mut Vec<RayHit<V>>,
    ) {
        out.clear();
        self.counters.queries += 1;
        if self.root == NONE || max_dist.is_nan() || max_dist < 0.0 {
            return;
        }
        let Self {
            nodes,
            store,
            stack,
            counters,
            root,
            ..
        } = self;
        stack.clear();
        stack.push(*root);
        while let Some(n) = stack.pop() {
            let node = &nodes[n as usize];
            if ray.clip_aabb(&node.loose, max_dist).is_none() {
                continue;
            }
            counters.node_visits += 1;
            for it in &node.items {
                if ray.clip_aabb(&it.aabb, max_dist).is_none() {
                    continue;
                }
                let o = store.obj(it.slot);
                if !filter.accepts(o.layer) {
                    continue;
                }
                counters.shape_tests += 1;
                if let Some(x) = o.shape.cast_ray(ray, max_dist) {
                    out.push(RayHit {
                        handle: store.handle(it.slot),
                        distance: x.distance,
                        point: x.point,
                        normal: x.normal,
                    });
                }
            }
            stack.extend(node.children.iter().copied().filter(|&c| c != NONE));
        }
        sort_hits(out);
    }

    /// Best-first k-nearest search: nodes by distance to their loose bounds,
    /// the search ending when the nearest unvisited node is farther than
    /// the k-th best object.
    pub(crate) fn nearest(&mut self, point: V, k: usize, filter: Filter, out: &mut Vec<Neighbor>) {
        out.clear();
        self.counters.queries += 1;
        if self.root == NONE || k == 0 || !point.is_finite() {
            return;
        }
        let Self {
            nodes,
            store,
            counters,
            root,
            knn,
            ..
        } = self;
        knn.start(k);
        knn.push_node(
            *root,
            nodes[*root as usize]
                .loose
                .distance_squared_to_point(point)
                .sqrt(),
        );
        while let Some(n) = knn.pop_node() {
            counters.node_visits += 1;
            let node = &nodes[n as usize];
            for it in &node.items {
                if it.aabb.distance_squared_to_point(point).sqrt() > knn.bound() {
                    continue;
                }
                let o = store.obj(it.slot);
                if !filter.accepts(o.layer) {
                    continue;
                }
                counters.shape_tests += 1;
                knn.offer(store.handle(it.slot), o.shape.distance_to_point(point));
            }
            for &c in &node.children {
                if c != NONE {
                    let d = nodes[c as usize]
                        .loose
                        .distance_squared_to_point(point)
                        .sqrt();
                    if d <= knn.bound() {
                        knn.push_node(c, d);
                    }
                }
            }
        }
        knn.finish(out);
    }
}
