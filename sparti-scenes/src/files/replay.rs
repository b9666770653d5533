//! Replaying a scene through a structure, frame by frame, and writing the
//! `pairs` and `query` outputs.
//!
//! Each frame: ids absent from it are removed (in id order), then its rows
//! are applied in file order: a new id is inserted, a row whose shape
//! changed is updated (moved or resized), a row whose layer, mask or static
//! flag changed is removed and inserted again (those are fixed at insertion
//! in sparti). Then the frame's answers are computed and
//! [`SpatialIndex::end_frame`] is called.
//!
//! Results name objects by their scene ids (the structure's user value), not
//! by sparti handles, and are put in the canonical order of the spec; ties
//! are broken by id whatever the structure's own tie-breaking (by handle).
//!
//! Distances are printed with Rust's `{}` for `f32`: the shortest decimal
//! that reads back as the same `f32`, without exponent (`0`, `2.5`,
//! `1.4142135`).

use std::collections::BTreeMap;
use std::fmt::Write;

use sparti::{Handle, Neighbor, ObjectDesc, RayHit, SpatialIndex, Vector};

use crate::files::queries::{Op, Query};
use crate::files::scene::{Change, Frame, LineError, Row, Scene};

/// A structure being fed a scene, with the live objects' handles.
pub struct Replayer<V: Vector, S: SpatialIndex<V, u64>> {
    index: S,
    /// The structure's name, for messages.
    name: &'static str,
    /// Live objects by id: handle and last row.
    live: BTreeMap<u64, (Handle, Row)>,
    _v: core::marker::PhantomData<V>,
}

impl<V: Vector, S: SpatialIndex<V, u64>> Replayer<V, S> {
    /// Starts a replay into an empty structure called `name` in messages.
    pub fn new(index: S, name: &'static str) -> Self {
        Self {
            index,
            name,
            live: BTreeMap::new(),
            _v: core::marker::PhantomData,
        }
    }

    /// The structure.
    pub fn index(&mut self) -> &mut S {
        &mut self.index
    }

    fn refused(&self, row: &Row, e: sparti::Error) -> LineError {
        LineError::new(
            row.line,
            format!("the {} index refused object {}: {e}", self.name, row.id),
        )
    }

    fn insert(&mut self, row: &Row) -> Result<(), LineError> {
        let desc = ObjectDesc::new(row.shape::<V>(), row.id)
            .with_layer(row.layer)
            .with_mask(row.mask)
            .with_static(row.is_static);
        let h = self.index.insert(desc).map_err(|e| self.refused(row, e))?;
        self.live.insert(row.id, (h, *row));
        Ok(())
    }

    /// Brings the structure to the state of `frame` (without `end_frame`).
    ///
    /// # Errors
    /// The structure refused an object (say, coordinates beyond what a tree
    /// can hold): the error names the row's line.
    pub fn apply(&mut self, frame: &Frame) -> Result<(), LineError> {
        for change in frame.changes(&self.live, |(_, row)| row) {
            match change {
                Change::Gone(id) => {
                    if let Some((h, row)) = self.live.remove(&id) {
                        self.index.remove(h).map_err(|e| self.refused(&row, e))?;
                    }
                }
                Change::New(row) => self.insert(row)?,
                Change::Refiled(row) => {
                    if let Some((h, _)) = self.live.remove(&row.id) {
                        self.index.remove(h).map_err(|e| self.refused(row, e))?;
                    }
                    self.insert(row)?;
                }
                Change::Moved(row) | Change::Same(row) => {
                    let Some(&(h, _)) = self.live.get(&row.id) else {
                        continue;
                    };
                    if matches!(change, Change::Moved(_)) {
                        self.index
                            .update(h, row.shape::<V>())
                            .map_err(|e| self.refused(row, e))?;
                    }
                    self.live.insert(row.id, (h, *row));
                }
            }
        }
        Ok(())
    }

    /// The scene id of a handle the structure returned.
    fn id(&self, h: Handle) -> u64 {
        // Handles come from the structure itself: always live.
        self.index.get(h).map_or(u64::MAX, |o| o.value)
    }

    /// The current frame's pairs as `(a, b)` ids, `a < b`, sorted.
    pub fn pairs(&mut self) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        self.index.for_each_pair(|_, _, oa, ob| {
            out.push((oa.value.min(ob.value), oa.value.max(ob.value)));
        });
        out.sort_unstable();
        out
    }

    /// Answers one query: `(id, distance)` rows in the spec's order.
    pub fn query(&mut self, q: &Query<V>) -> Vec<(u64, Option<f32>)> {
        let f = q.filter;
        let mut handles = Vec::new();
        let mut hits: Vec<RayHit<V>> = Vec::new();
        match &q.op {
            Op::Box(b) => self.index.query(b, f, &mut handles),
            Op::Sphere(s) => self.index.query(s, f, &mut handles),
            Op::Cone(c) => self.index.query(c, f, &mut handles),
            Op::Frustum(fr) => self.index.query(fr, f, &mut handles),
            Op::Ray(ray, max) => {
                self.index.ray_all(ray, *max, f, &mut hits);
                let rows = hits.iter().map(|h| (self.id(h.handle), h.distance));
                return by_distance(rows.collect());
            }
            Op::Nearest(ray, max) => {
                let Some(first) = self.index.ray_nearest(ray, *max, f) else {
                    return Vec::new();
                };
                // The structure breaks ties by handle; the spec by id: take
                // every hit at that distance and keep the smallest id.
                let d = first.distance;
                self.index.ray_all(ray, d, f, &mut hits);
                let best = hits
                    .iter()
                    .filter(|h| h.distance == d)
                    .map(|h| self.id(h.handle))
                    .min()
                    .unwrap_or_else(|| self.id(first.handle));
                return vec![(best, Some(clean(d)))];
            }
            Op::Knn(p, k) => return self.knn(*p, *k, f),
        }
        let mut ids: Vec<u64> = handles.iter().map(|&h| self.id(h)).collect();
        ids.sort_unstable();
        ids.into_iter().map(|id| (id, None)).collect()
    }

    /// The `k` nearest by distance then id. The structure breaks ties at the
    /// k-th distance by handle, so ask for more until every object at that
    /// distance is in.
    fn knn(&mut self, p: V, k: usize, f: sparti::Filter) -> Vec<(u64, Option<f32>)> {
        let n = self.index.len();
        let k = k.min(n);
        if k == 0 {
            return Vec::new();
        }
        let mut near: Vec<Neighbor> = Vec::new();
        let mut ask = k;
        loop {
            self.index.nearest_k(p, ask, f, &mut near);
            if near.len() < ask || ask >= n {
                break;
            }
            let kth = near[k - 1].distance;
            if near[ask - 1].distance > kth {
                break;
            }
            ask = ask.saturating_mul(2).min(n);
        }
        let rows = near.iter().map(|nb| (self.id(nb.handle), nb.distance));
        let mut rows = by_distance(rows.collect());
        rows.truncate(k);
        rows
    }

    /// Housekeeping at the end of a frame.
    pub fn end_frame(&mut self) {
        self.index.end_frame();
    }
}

/// `-0` as `0`, so it prints as `0`.
fn clean(d: f32) -> f32 {
    if d == 0.0 { 0.0 } else { d }
}

/// Sorts `(id, distance)` by distance then id.
fn by_distance(mut rows: Vec<(u64, f32)>) -> Vec<(u64, Option<f32>)> {
    rows.sort_unstable_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
    rows.into_iter()
        .map(|(id, d)| (id, Some(clean(d))))
        .collect()
}

/// `sparti pairs`: replays the scene and writes `frame,a,b` rows for every
/// frame, or only for the frame at position `only` in `scene.frames`.
///
/// # Errors
/// The structure refused an object.
pub fn pairs<V: Vector, S: SpatialIndex<V, u64>>(
    index: S,
    name: &'static str,
    scene: &Scene,
    only: Option<usize>,
    out: &mut String,
) -> Result<(), LineError> {
    out.push_str("frame,a,b\n");
    let mut r = Replayer::new(index, name);
    let last = only.unwrap_or(scene.frames.len().saturating_sub(1));
    for (i, frame) in scene.frames.iter().enumerate().take(last + 1) {
        r.apply(frame)?;
        if only.is_none_or(|o| o == i) {
            for (a, b) in r.pairs() {
                let _ = writeln!(out, "{},{a},{b}", frame.number);
            }
        }
        r.end_frame();
    }
    Ok(())
}

/// `sparti query`: replays the scene up to the frame at position `at` in
/// `scene.frames` (the last frame when `None`) and writes `query,id,distance`
/// rows for every query.
///
/// # Errors
/// The structure refused an object.
pub fn queries<V: Vector, S: SpatialIndex<V, u64>>(
    index: S,
    name: &'static str,
    scene: &Scene,
    at: Option<usize>,
    queries: &[Query<V>],
    out: &mut String,
) -> Result<(), LineError> {
    out.push_str("query,id,distance\n");
    let mut r = Replayer::new(index, name);
    let count = at.map_or(scene.frames.len(), |a| a + 1);
    for frame in &scene.frames[..count.min(scene.frames.len())] {
        r.apply(frame)?;
        r.end_frame();
    }
    for (n, q) in queries.iter().enumerate() {
        for (id, d) in r.query(q) {
            match d {
                Some(d) => writeln!(out, "{n},{id},{d}"),
                None => writeln!(out, "{n},{id},"),
            }
            .ok();
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::queries::parse_queries;
    use crate::files::scene::parse_scene;
    use sparti::glam::Vec2;
    use sparti::{BruteForce, Quadtree};

    const SCENE: &str = "frame,id,kind,x,y,r,layer,static\n\
        0,5,circle,0,0,1,1,0\n0,9,circle,2,0,1,1,1\n0,7,circle,10,0,1,1,0\n\
        1,5,circle,0,0,1,2,0\n1,9,circle,2,0,1,1,1\n1,8,circle,3,0,1,1,1\n\
        2,5,circle,9,0,1,2,0\n2,8,circle,3,0,1,1,0\n";

    fn handle_of<S: SpatialIndex<Vec2, u64>>(r: &Replayer<Vec2, S>, id: u64) -> Handle {
        r.live[&id].0
    }

    #[test]
    fn replay_inserts_updates_reinserts_and_removes() {
        let scene = parse_scene(SCENE.as_bytes()).unwrap();
        let mut r = Replayer::new(Quadtree::<u64>::new(), "quadtree");
        r.apply(&scene.frames[0]).unwrap();
        assert_eq!(r.pairs(), vec![(5, 9)]);
        let h5 = handle_of(&r, 5);
        r.end_frame();
        // 7 is gone, 8 new, 5 changed layer: removed and inserted again.
        r.apply(&scene.frames[1]).unwrap();
        assert_eq!(r.index().len(), 3);
        assert_ne!(handle_of(&r, 5), h5);
        assert!(r.index().get(h5).is_err());
        // 8 and 9 are both static: no pair.
        assert_eq!(r.pairs(), vec![(5, 9)]);
        let h5 = handle_of(&r, 5);
        r.end_frame();
        // 5 moved (same handle), 9 gone, 8 no longer static.
        r.apply(&scene.frames[2]).unwrap();
        assert_eq!(handle_of(&r, 5), h5);
        assert_eq!(r.index().len(), 2);
        assert_eq!(r.pairs(), vec![]);
        let objs: Vec<u64> = r.index().objects().map(|(_, o)| o.value).collect();
        assert_eq!(objs.len(), 2);
        assert!(
            r.index()
                .get(h5)
                .is_ok_and(|o| o.shape.center() == Vec2::new(9.0, 0.0))
        );
        assert!(r.index().objects().all(|(_, o)| !o.is_static));
    }

    #[test]
    fn outputs_are_in_the_spec_order() {
        let scene = parse_scene(SCENE.as_bytes()).unwrap();
        let mut out = String::new();
        pairs(
            BruteForce::<Vec2, u64>::new(),
            "brute",
            &scene,
            None,
            &mut out,
        )
        .unwrap();
        assert_eq!(out, "frame,a,b\n0,5,9\n1,5,9\n");
        out.clear();
        pairs(
            BruteForce::<Vec2, u64>::new(),
            "brute",
            &scene,
            Some(1),
            &mut out,
        )
        .unwrap();
        assert_eq!(out, "frame,a,b\n1,5,9\n");
        // Frame 1: 5 at 0 (layer 2), 9 at 2, 8 at 3. Ties at distance 1
        // between 5 and 9 are broken by id whatever the handles.
        let q = parse_queries::<Vec2>(
            b"knn 1 0 1\nnearest -5 0 1 0 100\nsphere 1 0 0 layer=1\nray 1 0 1 0 10\n",
        )
        .unwrap();
        out.clear();
        queries(
            Quadtree::<u64>::new(),
            "quadtree",
            &scene,
            Some(1),
            &q,
            &mut out,
        )
        .unwrap();
        assert_eq!(
            out,
            "query,id,distance\n0,5,0\n1,5,4\n2,9,\n3,5,0\n3,9,0\n3,8,1\n"
        );
    }
}
