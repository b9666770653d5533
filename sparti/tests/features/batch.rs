//! Batched queries give exactly what a loop of single queries gives, in the
//! same order, with the same counters: on every structure, 2D and 3D, and
//! (in the features' binary, `--features rayon,serde`) when the trees
//! answer them on threads. `tests/it` runs them too, on one thread.
//! Batches are larger than a thread task's chunk, so the threaded path runs.

use glam::{Vec2, Vec3};
use rand::Rng;

use crate::common::{Rng64, in_cube, pair_values, sphere_or_box};
use sparti::{
    Aabb, BruteForce, Bsp, BspConfig, Filter, Handle, LooseConfig, LooseOrthtree, ObjectDesc,
    Orthtree, OrthtreeConfig, Ray, RayHit, Shape, SpatialIndex, Vector,
};

const OBJECTS: usize = 3000;
const QUERIES: usize = 2000;
const SIDE: f32 = 100.0;

/// Fills a structure: spheres and boxes, some static, on random layers,
/// some inserted one by one after a first bulk build, a few removed, a few
/// moved (so the tree has been through updates, not just a build).
fn fill<V: Vector, S: SpatialIndex<V, u32>>(s: &mut S, seed: u64) {
    let mut r = crate::common::rng(seed);
    let desc = |r: &mut Rng64, i: u32| {
        let shape = sphere_or_box::<V>(r, SIDE);
        ObjectDesc::new(shape, i)
            .with_layer(1 << r.random_range(0..4))
            .with_static(r.random_bool(0.3))
    };
    let first: Vec<_> = (0..OBJECTS as u32 / 2).map(|i| desc(&mut r, i)).collect();
    let mut handles = s.insert_many(first).unwrap();
    s.flush();
    for i in OBJECTS as u32 / 2..OBJECTS as u32 {
        handles.push(s.insert(desc(&mut r, i)).unwrap());
    }
    for h in handles.iter().step_by(17) {
        s.remove(*h).unwrap();
    }
    for h in handles.iter().skip(5).step_by(13) {
        if s.get(*h).is_ok() {
            let c: V = in_cube(&mut r, 0.0, SIDE);
            s.update(*h, Shape::sphere(c, 1.0)).unwrap();
        }
    }
    s.validate().unwrap();
}

fn check<V: Vector, S: SpatialIndex<V, u32>>(mut s: S, seed: u64) {
    fill(&mut s, seed);
    let mut r = crate::common::rng(seed ^ 0xBA7C);
    let rays: Vec<(Ray<V>, f32)> = (0..QUERIES)
        .map(|i| {
            let o: V = in_cube(&mut r, -10.0, SIDE + 10.0);
            let d = loop {
                let d: V = in_cube(&mut r, -1.0, 1.0);
                if d.length() > 0.05 {
                    break d;
                }
            };
            // Every kind of limit, NaN and negative included.
            let max = match i % 50 {
                0 => f32::NAN,
                1 => -1.0,
                2 => f32::INFINITY,
                3 => 0.0,
                _ => r.random_range(0.0..SIDE * 1.5),
            };
            (Ray::new(o, d).unwrap(), max)
        })
        .collect();
    let boxes: Vec<Aabb<V>> = (0..QUERIES)
        .map(|_| {
            let a: V = in_cube(&mut r, -10.0, SIDE + 10.0);
            let size: V = in_cube(&mut r, 0.0, 20.0);
            Aabb::new(a, a + size).unwrap()
        })
        .collect();
    for filter in [Filter::ALL, Filter::layers(0b0101)] {
        // Rays: the loop, then the batch, with counters.
        s.reset_counters();
        let single: Vec<Option<RayHit<V>>> = rays
            .iter()
            .map(|(ray, max)| s.ray_nearest(ray, *max, filter))
            .collect();
        let c_single = s.counters();
        s.reset_counters();
        let mut batch = vec![None; 3]; // not empty: the batch clears it
        s.ray_nearest_batch(&rays, filter, &mut batch);
        assert_eq!(batch, single, "ray batch differs from the loop");
        assert_eq!(s.counters(), c_single, "ray batch counters");
        assert!(single.iter().flatten().count() > QUERIES / 10, "few hits");
        // Boxes.
        s.reset_counters();
        let mut one = Vec::new();
        let mut single: Vec<Vec<Handle>> = Vec::new();
        for b in &boxes {
            s.query_aabb(b, filter, &mut one);
            single.push(one.clone());
        }
        let c_single = s.counters();
        s.reset_counters();
        let (mut handles, mut offsets) = (vec![some_handle()], vec![7]);
        s.query_aabb_batch(&boxes, filter, &mut handles, &mut offsets);
        assert_eq!(offsets.len(), boxes.len() + 1);
        assert_eq!(offsets[0], 0);
        let batch: Vec<Vec<Handle>> = offsets
            .windows(2)
            .map(|w| handles[w[0]..w[1]].to_vec())
            .collect();
        assert_eq!(batch, single, "box batch differs from the loop");
        assert_eq!(s.counters(), c_single, "box batch counters");
        assert!(handles.len() > QUERIES, "few results");
    }
    // Empty batches.
    let (mut hits, mut handles, mut offsets) = (vec![None], vec![], vec![3]);
    s.ray_nearest_batch(&[], Filter::ALL, &mut hits);
    s.query_aabb_batch(&[], Filter::ALL, &mut handles, &mut offsets);
    assert!(hits.is_empty() && handles.is_empty());
    assert_eq!(offsets, vec![0]);
}

/// A handle to pre-fill output vectors with (the batch must clear them).
fn some_handle() -> Handle {
    let mut s = BruteForce::<Vec2, ()>::new();
    s.insert(ObjectDesc::new(Shape::sphere(Vec2::ZERO, 1.0), ()))
        .unwrap()
}

#[test]
fn octree_batches_match_single_queries() {
    check::<Vec3, _>(Orthtree::<Vec3, u32>::new(), 1);
    let preset = OrthtreeConfig {
        world: Some(Aabb::new(Vec3::ZERO, Vec3::splat(SIDE)).unwrap()),
        min_node_size: 0.5,
        ..Default::default()
    };
    check::<Vec3, _>(Orthtree::<Vec3, u32>::with_config(preset).unwrap(), 2);
}

#[test]
fn quadtree_batches_match_single_queries() {
    check::<Vec2, _>(Orthtree::<Vec2, u32>::new(), 3);
}

#[test]
fn loose_trees_batches_match_single_queries() {
    check::<Vec3, _>(LooseOrthtree::<Vec3, u32>::new(), 4);
    check::<Vec2, _>(LooseOrthtree::<Vec2, u32>::new(), 5);
    let capacity = LooseConfig {
        leaf_capacity: 8,
        ..Default::default()
    };
    check::<Vec3, _>(
        LooseOrthtree::<Vec3, u32>::with_config(capacity).unwrap(),
        6,
    );
}

#[test]
fn bsp_batches_match_single_queries() {
    check::<Vec3, _>(Bsp::<Vec3, u32>::new(), 7);
    check::<Vec2, _>(Bsp::<Vec2, u32>::new(), 8);
    let deep = BspConfig {
        leaf_capacity: 0,
        ..Default::default()
    };
    check::<Vec3, _>(Bsp::<Vec3, u32>::with_config(deep).unwrap(), 9);
}

#[test]
fn brute_force_batches_match_single_queries() {
    check::<Vec3, _>(BruteForce::<Vec3, u32>::new(), 10);
    check::<Vec2, _>(BruteForce::<Vec2, u32>::new(), 11);
}

/// The objects' values and boxes, and the pairs' values.
type State<V> = (Vec<(u32, Aabb<V>)>, Vec<(u32, u32)>);

/// The state of a structure, for comparing two that went through the same
/// moves.
fn state<V: Vector, S: SpatialIndex<V, u32>>(s: &S) -> State<V> {
    let mut objects: Vec<_> = s.objects().map(|(_, o)| (o.value, o.aabb())).collect();
    objects.sort_unstable_by_key(|x| x.0);
    (objects, pair_values(s))
}

/// `update_many` equals a loop of `update` (on the brute force and on the
/// structure itself), batches large enough for rayon's threads included;
/// a batch with one bad move changes nothing.
fn check_update_many<V: Vector, S: SpatialIndex<V, u32>>(make: impl Fn() -> S, seed: u64) {
    let mut r = crate::common::rng(seed);
    let (mut batched, mut looped, mut brute) = (make(), make(), BruteForce::<V, u32>::new());
    let n = 6000u32;
    let descs: Vec<_> = (0..n)
        .map(|i| ObjectDesc::new(Shape::sphere(in_cube::<V>(&mut r, 0.0, SIDE), 0.8), i))
        .collect();
    let hb = batched.insert_many(descs.clone()).unwrap();
    let hl = looped.insert_many(descs.clone()).unwrap();
    let hf = brute.insert_many(descs).unwrap();
    batched.flush();
    looped.flush();
    for frame in 0..3 {
        // Every object moves (some far, across the tree), some twice.
        let mut moves: Vec<(usize, Shape<V>)> = (0..n as usize)
            .map(|i| {
                let c = batched.get(hb[i]).unwrap().shape.center();
                let step: V = if i % 7 == 0 {
                    in_cube(&mut r, -30.0, 30.0)
                } else {
                    in_cube(&mut r, -1.0, 1.0)
                };
                (i, Shape::sphere(c + step, r.random_range(0.0..2.0)))
            })
            .collect();
        moves
            .extend((0..50).map(|k| (k * 13, Shape::sphere(in_cube::<V>(&mut r, 0.0, SIDE), 1.0))));
        let pick = |hs: &[Handle]| -> Vec<(Handle, Shape<V>)> {
            moves.iter().map(|&(i, s)| (hs[i], s)).collect()
        };
        batched.update_many(&pick(&hb)).unwrap();
        for (h, s) in pick(&hl) {
            looped.update(h, s).unwrap();
        }
        brute.update_many(&pick(&hf)).unwrap();
        batched.validate().unwrap();
        let now = state(&batched);
        assert!(
            !now.1.is_empty(),
            "frame {frame}: a scene without pairs proves nothing"
        );
        assert_eq!(now, state(&looped), "frame {frame}: batch against loop");
        assert_eq!(
            now,
            state(&brute),
            "frame {frame}: batch against brute force"
        );
    }
    // One bad move anywhere in a large batch: an error, and nothing moved.
    let before = state(&batched);
    for bad in [
        Shape::sphere(V::splat(f32::NAN), 1.0),
        Shape::sphere(V::splat(1e30), 1.0),
    ] {
        let mut moves: Vec<_> = hb
            .iter()
            .map(|&h| (h, Shape::sphere(V::splat(SIDE / 2.0), 1.0)))
            .collect();
        moves[4321].1 = bad;
        assert!(batched.update_many(&moves).is_err());
        assert_eq!(state(&batched), before, "a refused batch moved objects");
    }
    let removed = hb[77];
    batched.remove(removed).unwrap();
    let moves = [
        (hb[1], Shape::sphere(V::ZERO, 1.0)),
        (removed, Shape::sphere(V::ZERO, 1.0)),
    ];
    assert!(matches!(
        batched.update_many(&moves),
        Err(sparti::Error::StaleHandle(_))
    ));
    assert_ne!(batched.get(hb[1]).unwrap().shape.center(), V::ZERO);
    batched.validate().unwrap();
}

#[test]
fn update_many_equals_a_loop_of_updates() {
    check_update_many(Orthtree::<Vec3, u32>::new, 21);
    check_update_many(Orthtree::<Vec2, u32>::new, 22);
    check_update_many(LooseOrthtree::<Vec3, u32>::new, 23);
    check_update_many(LooseOrthtree::<Vec2, u32>::new, 24);
    check_update_many(Bsp::<Vec3, u32>::new, 25);
    check_update_many(Bsp::<Vec2, u32>::new, 26);
    check_update_many(BruteForce::<Vec3, u32>::new, 27);
}

/// A batch large enough for the phases without the `rayon` feature too
/// (262,144 moves), some objects moved twice far apart in it: the objects
/// end where a loop of `update` puts them, with the same pairs, and the
/// tree is valid.
#[test]
fn a_very_large_batch_equals_a_loop_of_updates() {
    let n = 270_000usize;
    let side = 400.0;
    let mut r = crate::common::rng(41);
    let descs: Vec<_> = (0..n as u32)
        .map(|i| ObjectDesc::new(Shape::sphere(in_cube::<Vec3>(&mut r, 0.0, side), 0.7), i))
        .collect();
    let (mut batched, mut looped) = (Orthtree::<Vec3, u32>::new(), Orthtree::<Vec3, u32>::new());
    let hb = batched.insert_many(descs.clone()).unwrap();
    let hl = looped.insert_many(descs).unwrap();
    batched.flush();
    looped.flush();
    // Most objects step a little, every 9th jumps across the world.
    let moves: Vec<(usize, Shape<Vec3>)> = (0..n)
        .map(|i| {
            let c = batched.get(hb[i]).unwrap().shape.center();
            let step: Vec3 = if i % 9 == 0 {
                in_cube(&mut r, -100.0, 100.0)
            } else {
                in_cube(&mut r, -0.3, 0.3)
            };
            (i, Shape::sphere(c + step, 0.7))
        })
        .collect();
    // Some objects move again at the end of the batch, many parts of the
    // phases later (the order of the parts shows: the second move wins).
    let mut moves = moves;
    moves.extend((0..300).map(|k| {
        let c = in_cube::<Vec3>(&mut r, 0.0, side);
        (k * 900, Shape::sphere(c, 0.7))
    }));
    let pick = |hs: &[Handle]| -> Vec<(Handle, Shape<Vec3>)> {
        moves.iter().map(|&(i, s)| (hs[i], s)).collect()
    };
    batched.update_many(&pick(&hb)).unwrap();
    for (h, s) in pick(&hl) {
        looped.update(h, s).unwrap();
    }
    batched.validate().unwrap();
    let now = state(&batched);
    assert!(now.1.len() > 1000, "too few pairs to prove anything");
    assert_eq!(now, state(&looped), "batch against loop");
}

/// Under the `Reject` policy a move out of the world refuses the whole
/// batch; under `Remove` the object is evicted, and a later move of it in
/// the same batch is skipped.
#[test]
fn update_many_keeps_the_out_of_bounds_policies() {
    let world = Some(Aabb::new(Vec3::ZERO, Vec3::splat(SIDE)).unwrap());
    let make = |policy| {
        Orthtree::<Vec3, u32>::with_config(OrthtreeConfig {
            world,
            out_of_bounds: policy,
            ..Default::default()
        })
        .unwrap()
    };
    let inside = |x: f32| Shape::sphere(Vec3::splat(x), 1.0);
    let outside = Shape::sphere(Vec3::splat(SIDE * 3.0), 1.0);
    let mut t = make(sparti::OutOfBounds::Reject);
    let hs: Vec<_> = (0..10)
        .map(|i| {
            t.insert(ObjectDesc::new(inside(10.0 + i as f32), i))
                .unwrap()
        })
        .collect();
    t.flush();
    let moves = [(hs[0], inside(50.0)), (hs[1], outside)];
    assert!(matches!(
        t.update_many(&moves),
        Err(sparti::Error::OutsideWorld)
    ));
    assert_eq!(t.get(hs[0]).unwrap().shape.center(), Vec3::splat(10.0));
    t.validate().unwrap();

    let mut t = make(sparti::OutOfBounds::Remove);
    let hs: Vec<_> = (0..10)
        .map(|i| {
            t.insert(ObjectDesc::new(inside(10.0 + i as f32), i))
                .unwrap()
        })
        .collect();
    t.flush();
    let moves = [
        (hs[1], outside),
        (hs[0], inside(50.0)),
        (hs[1], inside(60.0)),
    ];
    t.update_many(&moves).unwrap();
    assert_eq!(t.get(hs[0]).unwrap().shape.center(), Vec3::splat(50.0));
    assert!(t.get(hs[1]).is_err(), "evicted");
    let evicted = t.take_evicted();
    assert_eq!(evicted.len(), 1);
    assert_eq!(evicted[0].1, 1);
    t.validate().unwrap();
}

// Found by the `ops` fuzz target once it ran `update_many`: a loose tree
// under `OutOfBounds::Remove` refused (instead of evicting) a queued object
// moved outside its world, so `update_many` failed half-way, after earlier
// moves of the batch were applied (fuzz/regressions/ops/crash-*).

fn remove_policy_tree() -> LooseOrthtree<Vec2, u32> {
    LooseOrthtree::with_config(LooseConfig {
        world: Some(Aabb::new(Vec2::splat(-8.0), Vec2::splat(8.0)).unwrap()),
        min_node_size: 0.5,
        looseness: 1.5,
        out_of_bounds: sparti::OutOfBounds::Remove,
        leaf_capacity: 4,
    })
    .unwrap()
}

#[test]
fn update_many_is_all_or_nothing_under_remove() {
    let mut t = remove_policy_tree();
    let a = t
        .insert(ObjectDesc::new(Shape::sphere(Vec2::ZERO, 0.5), 0))
        .unwrap();
    let b = t
        .insert(ObjectDesc::new(Shape::sphere(Vec2::ONE, 0.5), 1))
        .unwrap();
    // Both still queued (no flush). Move a a little, b far outside the world.
    let moves = [
        (a, Shape::sphere(Vec2::new(1.0, 2.0), 0.5)),
        (b, Shape::cuboid(Vec2::ZERO, Vec2::new(55.5, 0.5))),
    ];
    let r = t.update_many(&moves);
    if r.is_err() {
        // The documented contract: an error changes nothing.
        assert_eq!(
            t.get(a).unwrap().shape.center(),
            Vec2::ZERO,
            "update_many returned {r:?} but moved `a` anyway"
        );
    }
    // What the octree/quadtree and the BSP do: b is evicted, a moved.
    assert_eq!(r, Ok(()));
    assert_eq!(t.take_evicted(), vec![(b, 1)]);
    assert_eq!(t.get(a).unwrap().shape.center(), Vec2::new(1.0, 2.0));
    t.validate().unwrap();
}

#[test]
fn update_of_a_queued_object_evicts_under_remove() {
    let mut t = remove_policy_tree();
    let b = t
        .insert(ObjectDesc::new(Shape::sphere(Vec2::ONE, 0.5), 1))
        .unwrap();
    // Queued (no flush): the Orthtree and Bsp evict here; the loose tree
    // answers Err(OutsideWorld) and keeps the object.
    let r = t.update(b, Shape::cuboid(Vec2::ZERO, Vec2::new(55.5, 0.5)));
    assert_eq!(r, Ok(()));
    assert_eq!(t.take_evicted(), vec![(b, 1)]);
}

/// With the `rayon` feature a large batch is applied in phases (the moves
/// that only change a box on the threads, the others in order): the
/// structure ends the same, its pairs in the same order, on pools of 1, 2
/// and 5 threads, and called from outside any pool (the test's own
/// thread: the batch and the pair search then enter rayon's global pool
/// once each), as a game's main thread calls them (a loop of `update` is
/// compared in `update_many_equals_a_loop_of_updates`).
#[cfg(feature = "rayon")]
fn check_update_many_on_pools<V: Vector, S: SpatialIndex<V, u32> + Send + Sync>(
    make: fn() -> S,
    seed: u64,
) {
    // `None`: on this thread, outside any pool.
    let run = |threads: Option<usize>| {
        let pool = threads.map(|t| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(t)
                .build()
                .unwrap()
        });
        let in_pool = |f: &mut (dyn FnMut() + Send)| match &pool {
            Some(p) => p.install(f),
            None => f(),
        };
        let mut r = crate::common::rng(seed);
        let mut s = make();
        let n = 5000usize;
        let descs: Vec<_> = (0..n as u32)
            .map(|i| ObjectDesc::new(Shape::sphere(in_cube::<V>(&mut r, 0.0, SIDE), 0.6), i))
            .collect();
        let hs = s.insert_many(descs).unwrap();
        s.flush();
        let mut frames = Vec::new();
        for _ in 0..3 {
            // Most objects step a little (they stay in their node), every
            // 9th jumps across the world, and some move twice.
            let mut moves: Vec<(Handle, Shape<V>)> = (0..n)
                .map(|i| {
                    let c = s.get(hs[i]).unwrap().shape.center();
                    let step: V = if i % 9 == 0 {
                        in_cube(&mut r, -40.0, 40.0)
                    } else {
                        in_cube(&mut r, -0.2, 0.2)
                    };
                    (hs[i], Shape::sphere(c + step, 0.6))
                })
                .collect();
            moves.extend((0..40).map(|k| {
                let c = in_cube::<V>(&mut r, 0.0, SIDE);
                (hs[k * 17], Shape::sphere(c, 0.6))
            }));
            let mut done = Ok(());
            in_pool(&mut || done = s.update_many(&moves));
            done.unwrap();
            s.validate().unwrap();
            let mut pairs = Vec::new();
            s.pairs(&mut pairs);
            // The parallel pair search, on the same pool: the same pairs
            // in the same order.
            let mut par = Vec::new();
            in_pool(&mut || s.par_pairs(&mut par));
            assert_eq!(par, pairs, "par_pairs against pairs");
            let ids: Vec<(u32, u32)> = pairs
                .iter()
                .map(|p| (s.get(p.a).unwrap().value, s.get(p.b).unwrap().value))
                .collect();
            frames.push((state(&s), ids));
            s.end_frame();
        }
        frames
    };
    let one = run(Some(1));
    assert!(!one[0].1.is_empty(), "a scene without pairs proves nothing");
    assert_eq!(run(Some(2)), one, "2 threads against 1");
    assert_eq!(run(Some(5)), one, "5 threads against 1");
    assert_eq!(run(None), one, "outside any pool against 1 thread");
}

#[cfg(feature = "rayon")]
#[test]
fn large_batches_give_the_same_on_any_pool() {
    check_update_many_on_pools(Orthtree::<Vec3, u32>::new, 31);
    check_update_many_on_pools(Orthtree::<Vec2, u32>::new, 32);
    check_update_many_on_pools(LooseOrthtree::<Vec3, u32>::new, 33);
    check_update_many_on_pools(LooseOrthtree::<Vec2, u32>::new, 34);
    check_update_many_on_pools(Bsp::<Vec3, u32>::new, 35);
    check_update_many_on_pools(Bsp::<Vec2, u32>::new, 36);
}

/// `update_many` on a pool of 4 threads (with `rayon`; else on this one).
fn on_threads<S: SpatialIndex<Vec3, u32> + Send>(
    s: &mut S,
    moves: &[(Handle, Shape<Vec3>)],
) -> Result<(), sparti::Error> {
    #[cfg(feature = "rayon")]
    {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(4)
            .build()
            .unwrap();
        pool.install(|| s.update_many(moves))
    }
    #[cfg(not(feature = "rayon"))]
    {
        s.update_many(moves)
    }
}

/// A large batch with two bad moves reports the first one's error, as a
/// loop would stop at it (with `rayon` the moves are checked on threads;
/// found by fuzzing: the threads' collect gave the later move's error).
#[test]
fn the_first_bad_move_of_a_large_batch_is_the_error() {
    let mut t = Orthtree::<Vec3, u32>::new();
    let hs = t
        .insert_many(
            (0..6000u32)
                .map(|i| ObjectDesc::new(Shape::sphere(Vec3::splat(i as f32 * 0.01), 0.5), i))
                .collect(),
        )
        .unwrap();
    t.flush();
    let mut moves: Vec<(Handle, Shape<Vec3>)> = hs
        .iter()
        .map(|&h| (h, Shape::sphere(Vec3::ONE, 0.5)))
        .collect();
    // Either side of the middle, where two threads each start a half.
    moves[2990].1 = Shape::sphere(Vec3::new(f32::NAN, 0.0, 0.0), 0.5);
    moves[3005].1 = Shape::sphere(Vec3::splat(1e30), 0.5);
    for _ in 0..20 {
        assert_eq!(on_threads(&mut t, &moves), Err(sparti::Error::NonFinite));
    }
    moves[2990].1 = Shape::sphere(Vec3::ONE, 0.5);
    assert_eq!(t.update_many(&moves), Err(sparti::Error::WorldTooLarge));
}
