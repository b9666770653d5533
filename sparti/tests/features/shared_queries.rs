//! Queries take `&self`: one index, queried from many threads at once,
//! gives the brute force's answers on every structure, 2D and 3D, and the
//! counters add up over the threads. Queries that meet insertions not yet
//! built (no `flush`) are exact too: the queued objects are tested one by
//! one, and counted.

use std::thread;

use glam::{Vec2, Vec3};
use rand::Rng;

use crate::common::{Rng64, in_cube, pair_values, sphere_or_box};
use sparti::{
    Aabb, BruteForce, Bsp2, Bsp3, Filter, LooseOctree, LooseQuadtree, ObjectDesc, Octree, Quadtree,
    Ray, Shape, SpatialIndex, Vector,
};

const SIDE: f32 = 100.0;
const THREADS: usize = 4;
const QUERIES_PER_THREAD: usize = 60;

fn assert_send_sync<S: Send + Sync>() {}

#[test]
fn every_structure_is_send_and_sync() {
    assert_send_sync::<Octree<u32>>();
    assert_send_sync::<Quadtree<u32>>();
    assert_send_sync::<LooseOctree<u32>>();
    assert_send_sync::<LooseQuadtree<u32>>();
    assert_send_sync::<Bsp2<u32>>();
    assert_send_sync::<Bsp3<u32>>();
    assert_send_sync::<BruteForce<Vec2, u32>>();
    assert_send_sync::<BruteForce<Vec3, u32>>();
}

/// One query of the mix each thread runs.
#[derive(Clone, Copy)]
enum Query<V: Vector> {
    Box(Aabb<V>),
    Radius(V, f32),
    RayNearest(Ray<V>, f32),
    RayAll(Ray<V>, f32),
    Nearest(V, usize),
}

fn random_query<V: Vector>(r: &mut Rng64) -> Query<V> {
    let p: V = in_cube(r, -10.0, SIDE + 10.0);
    let mut dir: V = in_cube(r, -1.0, 1.0);
    if dir.length() < 1e-3 {
        dir = V::ZERO.with(0, 1.0);
    }
    match r.random_range(0..5) {
        0 => Query::Box(Aabb::new(p, p + in_cube::<V>(r, 0.0, 25.0)).unwrap()),
        1 => Query::Radius(p, r.random_range(0.0..15.0)),
        2 => Query::RayNearest(Ray::new(p, dir).unwrap(), r.random_range(0.0..150.0)),
        3 => Query::RayAll(Ray::new(p, dir).unwrap(), r.random_range(0.0..150.0)),
        _ => Query::Nearest(p, r.random_range(0..12)),
    }
}

/// A query's answer as values and distance bits, in a canonical order for
/// the sets (box, radius) and the structure's order for the rest.
fn answer<V: Vector, S: SpatialIndex<V, u32>>(s: &S, q: &Query<V>) -> Vec<(u32, u32)> {
    let value = |h| s.get(h).unwrap().value;
    match *q {
        Query::Box(b) => {
            let mut out = Vec::new();
            s.query_aabb(&b, Filter::ALL, &mut out);
            let mut v: Vec<_> = out.into_iter().map(|h| (value(h), 0)).collect();
            v.sort_unstable();
            v
        }
        Query::Radius(p, rad) => {
            let mut out = Vec::new();
            s.query_radius(p, rad, Filter::ALL, &mut out);
            let mut v: Vec<_> = out.into_iter().map(|h| (value(h), 0)).collect();
            v.sort_unstable();
            v
        }
        Query::RayNearest(ray, max) => s
            .ray_nearest(&ray, max, Filter::ALL)
            .map(|h| (value(h.handle), h.distance.to_bits()))
            .into_iter()
            .collect(),
        Query::RayAll(ray, max) => {
            let mut out = Vec::new();
            s.ray_all(&ray, max, Filter::ALL, &mut out);
            out.iter()
                .map(|h| (value(h.handle), h.distance.to_bits()))
                .collect()
        }
        Query::Nearest(p, k) => {
            let mut out = Vec::new();
            s.nearest_k(p, k, Filter::ALL, &mut out);
            out.iter()
                .map(|n| (value(n.handle), n.distance.to_bits()))
                .collect()
        }
    }
}

/// Runs the query mix on `THREADS` threads at once, a pair search on one
/// more, and checks every answer against the brute force's.
fn all_threads_agree<V: Vector, S: SpatialIndex<V, u32> + Sync>(
    s: &S,
    b: &BruteForce<V, u32>,
    queries: &[Vec<Query<V>>],
    what: &str,
) {
    let (answers, pairs) = thread::scope(|sc| {
        let workers: Vec<_> = queries
            .iter()
            .map(|qs| sc.spawn(move || qs.iter().map(|q| answer(s, q)).collect::<Vec<_>>()))
            .collect();
        let pairs = sc.spawn(|| pair_values(s));
        let answers: Vec<Vec<_>> = workers.into_iter().map(|w| w.join().unwrap()).collect();
        (answers, pairs.join().unwrap())
    });
    for (t, (qs, got)) in queries.iter().zip(&answers).enumerate() {
        for (i, (q, got)) in qs.iter().zip(got).enumerate() {
            assert_eq!(*got, answer(b, q), "{what}: thread {t}, query {i}");
        }
    }
    let expected = pair_values(b);
    assert!(
        !expected.is_empty(),
        "{what}: a scene without pairs proves nothing"
    );
    assert_eq!(pairs, expected, "{what}: pairs");
}

fn shared_queries<V: Vector, S: SpatialIndex<V, u32> + Sync>(make: impl Fn() -> S, seed: u64) {
    let mut r = crate::common::rng(seed);
    let (mut s, mut b) = (make(), BruteForce::<V, u32>::new());
    let desc = |r: &mut Rng64, i: u32| {
        let shape = sphere_or_box::<V>(r, SIDE);
        ObjectDesc::new(shape, i).with_static(r.random_bool(0.2))
    };
    // A built tree, moved and thinned...
    let first: Vec<_> = (0..1500).map(|i| desc(&mut r, i)).collect();
    let handles = s.insert_many(first.clone()).unwrap();
    let hb = b.insert_many(first).unwrap();
    s.flush();
    for (k, (&h, &g)) in handles.iter().zip(&hb).enumerate() {
        if k % 11 == 0 {
            s.remove(h).unwrap();
            b.remove(g).unwrap();
        } else if k % 3 == 0 {
            let shape = Shape::sphere(in_cube::<V>(&mut r, 0.0, SIDE), 1.5);
            s.update(h, shape).unwrap();
            b.update(g, shape).unwrap();
        }
    }
    // ...and insertions not yet built.
    for i in 1500..1800 {
        let d = desc(&mut r, i);
        s.insert(d.clone()).unwrap();
        b.insert(d).unwrap();
    }
    s.validate().unwrap();
    // The trees queue the 300 (the brute force has no queue).
    let queued = s.stats().pending;
    assert!(queued == 300 || queued == 0, "{queued} queued");
    let queries: Vec<Vec<Query<V>>> = (0..THREADS)
        .map(|_| {
            (0..QUERIES_PER_THREAD)
                .map(|_| random_query(&mut r))
                .collect()
        })
        .collect();

    s.reset_counters();
    all_threads_agree(&s, &b, &queries, "before the build step");
    let c = s.counters();
    assert_eq!(
        c.queries,
        (THREADS * QUERIES_PER_THREAD) as u64,
        "every thread's queries are counted"
    );
    assert!(
        c.pending_tests >= (THREADS * QUERIES_PER_THREAD * queued) as u64,
        "the queued objects were tested by every query: {c:?}"
    );
    assert_eq!(s.stats().pending, queued, "a query builds nothing");

    s.flush();
    s.validate().unwrap();
    assert_eq!(s.stats().pending, 0);
    s.reset_counters();
    all_threads_agree(&s, &b, &queries, "after the build step");
    let c = s.counters();
    assert_eq!(c.queries, (THREADS * QUERIES_PER_THREAD) as u64);
    assert_eq!(c.pending_tests, 0, "nothing is queued after flush");

    // Moves after the build: the query boxes are brought up to date by the
    // first query, once, while the other threads wait for it.
    for (k, (&h, &g)) in handles.iter().zip(&hb).enumerate() {
        if k % 11 != 0 && k % 5 == 0 {
            let shape = Shape::sphere(in_cube::<V>(&mut r, 0.0, SIDE), 0.7);
            s.update(h, shape).unwrap();
            b.update(g, shape).unwrap();
        }
    }
    s.validate().unwrap();
    all_threads_agree(&s, &b, &queries, "after moves, without a build step");
    s.validate().unwrap();
}

#[test]
fn octree_answers_many_threads_at_once() {
    shared_queries(Octree::<u32>::new, 1);
}

#[test]
fn quadtree_answers_many_threads_at_once() {
    shared_queries(Quadtree::<u32>::new, 2);
}

#[test]
fn loose_octree_answers_many_threads_at_once() {
    shared_queries(LooseOctree::<u32>::new, 3);
}

#[test]
fn loose_quadtree_answers_many_threads_at_once() {
    shared_queries(LooseQuadtree::<u32>::new, 4);
}

#[test]
fn bsp3_answers_many_threads_at_once() {
    shared_queries(Bsp3::<u32>::new, 5);
}

#[test]
fn bsp2_answers_many_threads_at_once() {
    shared_queries(Bsp2::<u32>::new, 6);
}

#[test]
fn brute_force_answers_many_threads_at_once() {
    shared_queries(BruteForce::<Vec3, u32>::new, 7);
}
