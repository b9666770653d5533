//! Region, ray and k-nearest queries (Q1-Q6): one traversal each, the
//! region queries driven by the query's [`Region`].

use super::Bsp;
use crate::geometry::{Overlap, Ray, Region, Vector};
use crate::index::{Neighbor, closer, sort_hits};
use crate::store::NONE;
use crate::{Filter, Handle, RayHit};

impl<V: Vector, T> Bsp<V, T> {
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
            stack,
            counters,
            root,
            ..
        } = self;
        stack.clear();
        // Second field: 1 when the subtree lies wholly inside the region.
        stack.push((*root, 0));
        while let Some((n, inside)) = stack.pop() {
            let node = &nodes[n as usize];
            counters.node_visits += 1;
            let inside = inside == 1
                || match region.classify(&node.bounds) {
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
                    stack.push((c, u32::from(inside)));
                }
            }
        }
    }

    /// Nearest hit: nodes are visited nearest entry first, and a node whose
    /// entry lies beyond the best hit so far is skipped.
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
            ray_stack: stack,
            ..
        } = self;
        let mut best: Option<RayHit<V>> = None;
        // (entry distance, node), visited nearest first.
        stack.clear();
        if let Some((t0, _)) = ray.clip_aabb(&nodes[*root as usize].bounds, max_dist) {
            stack.push((t0, *root));
        }
        while let Some((t_enter, n)) = stack.pop() {
            let limit = best.map_or(max_dist, |b| b.distance);
            if t_enter > limit {
                continue;
            }
            counters.node_visits += 1;
            let node = &nodes[n as usize];
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
            // The children the ray enters within the best distance so far,
            // the farther pushed first so the nearer is popped first (on a
            // tie, the lower half first).
            let limit = best.map_or(max_dist, |b| b.distance);
            let entry = |c: u32| {
                (c != NONE)
                    .then(|| ray.clip_aabb(&nodes[c as usize].bounds, limit))
                    .flatten()
                    .map(|(t0, _)| (t0, c))
            };
            match (entry(node.children[0]), entry(node.children[1])) {
                (Some(lo), Some(hi)) if hi.0 < lo.0 => stack.extend_from_slice(&[lo, hi]),
                (Some(lo), Some(hi)) => stack.extend_from_slice(&[hi, lo]),
                (Some(x), None) | (None, Some(x)) => stack.push(x),
                (None, None) => {}
            }
        }
        best
    }

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
        stack.push((*root, 0));
        while let Some((n, _)) = stack.pop() {
            let node = &nodes[n as usize];
            if ray.clip_aabb(&node.bounds, max_dist).is_none() {
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
            stack.extend(
                node.children
                    .iter()
                    .filter(|&&c| c != NONE)
                    .map(|&c| (c, 0)),
            );
        }
        sort_hits(out);
    }
}

impl<V: Vector, T> Bsp<V, T> {
    /// Best-first k-nearest search: nodes by distance to their bounds, the
    /// search ending when the nearest unvisited node is farther than the
    /// k-th best object.
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
                .bounds
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
                        .bounds
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
