//! The parallel pair search (feature `rayon`) of every tree family (the
//! octree, the quadtree, the loose trees and the BSPs): on any number of
//! threads, the same pairs and contacts in the same order as the
//! single-threaded search, the same counters, and the brute force's pair
//! set.
//!
//! ```text
//! cargo test -p sparti --features rayon,serde --test features parallel_pairs::
//! ```
#![cfg(feature = "rayon")]

use rand::Rng;

use crate::common::{Rng64, in_cube};
use sparti::{
    BruteForce, Bsp2, Bsp3, Contact, Counters, Handle, LooseConfig, LooseOctree, LooseQuadtree,
    ObjectDesc, Octree, Pair, Quadtree, Shape, SpatialIndex, Vector,
};

/// How a scene spreads its objects.
#[derive(Clone, Copy, Debug)]
enum Layout {
    Uniform,
    Clustered,
    OnePoint,
}

struct Case {
    name: &'static str,
    seed: u64,
    objects: usize,
    side: f32,
    layout: Layout,
    /// Share of huge objects (a third of the world).
    huge: f64,
    static_share: f64,
    layers: bool,
}

/// Pools of 1, 2 and 5 threads.
fn pools() -> Vec<rayon::ThreadPool> {
    [1, 2, 5]
        .iter()
        .map(|&n| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .build()
                .expect("a thread pool")
        })
        .collect()
}

/// A search on `pool` (its pairs `many`, its counters `got`) equals the
/// one-thread search (`one`, `counters`): the same pairs in the same order,
/// the same counters.
fn assert_same_on_pool(
    name: &str,
    frame: usize,
    pool: &rayon::ThreadPool,
    (one, counters): (&[Pair], Counters),
    (many, got): (&[Pair], Counters),
) {
    let threads = pool.current_num_threads();
    assert_eq!(
        one, many,
        "{name}: frame {frame}: {threads} threads gave other pairs or another order"
    );
    assert_eq!(
        got, counters,
        "{name}: frame {frame}: counters differ on {threads} threads"
    );
}

/// A random shape of the case's layout (each frame draws new ones).
fn shape<V: Vector>(c: &Case, r: &mut Rng64, centres: &[V]) -> Shape<V> {
    let p = match c.layout {
        Layout::Uniform => in_cube(r, 0.0, c.side),
        Layout::Clustered => {
            let k = r.random_range(0..centres.len());
            centres[k] + in_cube::<V>(r, -3.0, 3.0)
        }
        Layout::OnePoint => V::splat(c.side / 2.0),
    };
    let size = if r.random_bool(c.huge) {
        c.side / 3.0
    } else {
        r.random_range(0.0..1.5)
    };
    if r.random_bool(0.5) {
        Shape::sphere(p, size)
    } else {
        let h = in_cube::<V>(r, 0.0, size.max(1e-3));
        Shape::cuboid(p, h)
    }
}

/// Runs a case for a few frames on a new tree and compares, every frame,
/// the parallel search on pools of 1, 2 and 5 threads with the
/// single-threaded one and with the brute force. Returns the number of
/// pairs seen.
fn run<V: Vector, S: SpatialIndex<V, u32> + Sync>(c: &Case, make: fn() -> S) -> usize {
    let mut r = crate::common::rng(c.seed);
    let centres: Vec<V> = (0..5).map(|_| in_cube(&mut r, 0.0, c.side)).collect();
    let mut tree = make();
    let mut brute = BruteForce::<V, u32>::new();
    let mut handles: Vec<(Handle, Handle)> = Vec::new();
    for i in 0..c.objects {
        let mut d = ObjectDesc::new(shape(c, &mut r, &centres), i as u32)
            .with_static(r.random_bool(c.static_share));
        if c.layers {
            d = d
                .with_layer(1 << r.random_range(0..3))
                .with_mask(r.random_range(1..8));
        }
        handles.push((
            tree.insert(d.clone()).expect("valid"),
            brute.insert(d).expect("valid"),
        ));
    }
    let pools = pools();
    let mut total = 0;
    for frame in 0..4 {
        let (mut one, mut many, mut expected) = (Vec::new(), Vec::new(), Vec::new());
        tree.reset_counters();
        tree.pairs(&mut one);
        let counters = tree.counters();
        brute.pairs(&mut expected);
        let ids = |t: &S, b: &BruteForce<V, u32>, p: &[Pair], tree_side| {
            let mut v: Vec<(u32, u32)> = p
                .iter()
                .map(|p| {
                    let (a, b) = if tree_side {
                        (t.get(p.a).unwrap().value, t.get(p.b).unwrap().value)
                    } else {
                        (b.get(p.a).unwrap().value, b.get(p.b).unwrap().value)
                    };
                    (a.min(b), a.max(b))
                })
                .collect();
            v.sort_unstable();
            v
        };
        assert_eq!(
            ids(&tree, &brute, &one, true),
            ids(&tree, &brute, &expected, false),
            "{}: frame {frame}: the tree's pairs differ from the brute force's",
            c.name
        );
        let mut contacts_one: Vec<Contact<V>> = Vec::new();
        tree.contacts(&mut contacts_one);
        for pool in &pools {
            tree.reset_counters();
            pool.install(|| tree.par_pairs(&mut many));
            assert_same_on_pool(
                c.name,
                frame,
                pool,
                (&one, counters),
                (&many, tree.counters()),
            );
            let mut contacts_many = Vec::new();
            pool.install(|| tree.par_contacts(&mut contacts_many));
            assert_eq!(contacts_one, contacts_many, "{}: contacts differ", c.name);
        }
        total += one.len();
        // Every object moves (or is respawned) before the next frame.
        for &(ht, hb) in &handles {
            let s = shape(c, &mut r, &centres);
            tree.update(ht, s).expect("valid");
            brute.update(hb, s).expect("valid");
        }
        tree.end_frame();
        tree.validate().expect("invariants hold");
    }
    total
}

fn cases() -> Vec<Case> {
    let base = Case {
        name: "uniform",
        seed: 1,
        objects: 3000,
        side: 60.0,
        layout: Layout::Uniform,
        huge: 0.0,
        static_share: 0.0,
        layers: false,
    };
    vec![
        Case { ..base },
        Case {
            name: "clustered",
            seed: 2,
            layout: Layout::Clustered,
            ..base
        },
        Case {
            name: "one point",
            seed: 3,
            objects: 400,
            layout: Layout::OnePoint,
            ..base
        },
        Case {
            name: "huge, static and layers",
            seed: 4,
            huge: 0.02,
            static_share: 0.3,
            layers: true,
            ..base
        },
        Case {
            name: "empty",
            seed: 5,
            objects: 0,
            ..base
        },
    ]
}

/// Every case on trees made by `make`.
fn all_cases<V: Vector, S: SpatialIndex<V, u32> + Sync>(make: fn() -> S) {
    let mut total = 0;
    for c in cases() {
        total += run::<V, S>(&c, make);
    }
    assert!(total > 1000, "too few pairs ({total}) to prove anything");
}

#[test]
fn octree_parallel_pairs_equal_sequential_pairs() {
    all_cases(Octree::<u32>::new);
}

#[test]
fn quadtree_parallel_pairs_equal_sequential_pairs() {
    all_cases(Quadtree::<u32>::new);
}

#[test]
fn loose_octree_parallel_pairs_equal_sequential_pairs() {
    all_cases(LooseOctree::<u32>::new);
}

#[test]
fn loose_quadtree_parallel_pairs_equal_sequential_pairs() {
    all_cases(|| {
        LooseQuadtree::<u32>::with_config(LooseConfig {
            min_node_size: 0.5,
            ..Default::default()
        })
        .expect("valid configuration")
    });
}

#[test]
fn bsp3_parallel_pairs_equal_sequential_pairs() {
    all_cases(Bsp3::<u32>::new);
}

#[test]
fn bsp2_parallel_pairs_equal_sequential_pairs() {
    all_cases(Bsp2::<u32>::new);
}

/// A scene large enough for the grid's build to be cut into pieces for
/// the threads (from 16,384 objects): each frame, a tree whose grid was
/// built on one thread (`pairs`) and copies of it whose grid was built on
/// pools of 1, 2 and 5 threads (`par_pairs` first, or `flush`) give the
/// same pairs in the same order and the same counters; `validate` checks
/// each threaded grid against the tree; the first frame's pairs are the
/// brute force's. Objects of several sizes (several grid levels), statics,
/// layers, removals (room in the lists) and a batch of moves each frame
/// (`update_many`, in phases on the threads).
fn large<V: Vector, S: SpatialIndex<V, u32> + Send + Sync>(make: fn() -> S) {
    let c = Case {
        name: "large",
        seed: 9,
        objects: 20_000,
        side: if V::DIM == 3 { 60.0 } else { 240.0 },
        layout: Layout::Uniform,
        huge: 0.002,
        static_share: 0.2,
        layers: true,
    };
    let mut r = crate::common::rng(c.seed);
    let pools = pools();
    let mut descs = Vec::new();
    for i in 0..c.objects {
        let mut s = shape::<V>(&c, &mut r, &[]);
        if r.random_bool(0.1) {
            // Larger objects: a coarser level of the grid.
            s = Shape::sphere(s.center(), r.random_range(2.0..8.0));
        }
        descs.push(
            ObjectDesc::new(s, i as u32)
                .with_static(r.random_bool(c.static_share))
                .with_layer(1 << r.random_range(0..3))
                .with_mask(r.random_range(1..8)),
        );
    }
    // The serial tree, and one copy per pool (the same operations).
    let mut trees: Vec<S> = (0..=pools.len()).map(|_| make()).collect();
    let mut handles = Vec::new();
    for t in &mut trees {
        handles = t.insert_many(descs.clone()).expect("valid");
    }
    let mut brute = BruteForce::<V, u32>::new();
    brute.insert_many(descs.clone()).expect("valid");
    let mut total = 0;
    for frame in 0..3 {
        let mut one = Vec::new();
        trees[0].end_frame();
        trees[0].reset_counters();
        trees[0].pairs(&mut one);
        let counters = trees[0].counters();
        if frame == 0 {
            assert_brute_force_pairs(c.name, &trees[0], &one, &brute);
        }
        for (k, pool) in pools.iter().enumerate() {
            let t = &mut trees[k + 1];
            let mut many = Vec::new();
            if frame % 2 == 0 {
                // The grid built by the parallel search.
                t.end_frame();
                t.reset_counters();
                pool.install(|| t.par_pairs(&mut many));
            } else {
                // The grid built by the build step on the threads.
                pool.install(|| t.flush());
                t.reset_counters();
                pool.install(|| t.par_pairs(&mut many));
            }
            assert_same_on_pool(c.name, frame, pool, (&one, counters), (&many, t.counters()));
            t.validate()
                .expect("invariants hold, the threaded grid included");
        }
        total += one.len();
        // A few objects leave (room in the lists), the rest move in one
        // batch, on each pool.
        let gone: Vec<usize> = (0..50).map(|_| r.random_range(0..handles.len())).collect();
        let moves: Vec<(Handle, Shape<V>)> = handles
            .iter()
            .enumerate()
            .filter(|(i, _)| !gone.contains(i))
            .map(|(_, &h)| (h, shape::<V>(&c, &mut r, &[])))
            .collect();
        for (k, t) in trees.iter_mut().enumerate() {
            for &i in &gone {
                let _ = t.remove(handles[i]);
            }
            if k == 0 {
                t.update_many(&moves).expect("valid moves");
            } else {
                pools[k - 1]
                    .install(|| t.update_many(&moves))
                    .expect("valid moves");
            }
            t.validate().expect("invariants hold");
        }
        handles.retain(|&h| trees[0].get(h).is_ok());
    }
    assert!(total > 10_000, "too few pairs ({total}) to prove anything");
}

#[test]
fn large_scenes_give_the_same_pairs_on_any_pool() {
    crate::common::every_structure!(makers, large);
}

/// A search with more pairs than the join of the tasks' results copies on
/// one thread (65,536): on pools of 1, 2 and 5 threads (the last joins on
/// the threads), the pairs come in the order `pairs` gives them, the same
/// for contacts; and the pair set is the brute force's.
fn many_pairs<V: Vector, S: SpatialIndex<V, u32> + Send + Sync>(make: fn() -> S) {
    let mut r = crate::common::rng(77);
    let n = 15_000u32;
    // About 100,000 pairs of unit spheres.
    let side = if V::DIM == 3 { 33.0 } else { 119.0 };
    let descs: Vec<_> = (0..n)
        .map(|i| ObjectDesc::new(Shape::sphere(in_cube::<V>(&mut r, 0.0, side), 1.0), i))
        .collect();
    let mut t = make();
    t.insert_many(descs.clone()).expect("valid");
    t.flush();
    let mut one = Vec::new();
    t.pairs(&mut one);
    assert!(
        one.len() > 1 << 16,
        "{} pairs: too few to be joined on the threads",
        one.len()
    );
    let mut contacts_one = Vec::new();
    t.contacts(&mut contacts_one);
    for pool in pools() {
        let threads = pool.current_num_threads();
        let mut many = Vec::new();
        pool.install(|| t.par_pairs(&mut many));
        assert!(
            one == many,
            "{threads} threads gave other pairs or another order"
        );
        let mut contacts: Vec<Contact<V>> = Vec::new();
        pool.install(|| t.par_contacts(&mut contacts));
        assert!(
            contacts_one == contacts,
            "{threads} threads gave other contacts or another order"
        );
    }
    let mut brute = BruteForce::<V, u32>::new();
    brute.insert_many(descs).expect("valid");
    assert_brute_force_pairs("many pairs", &t, &one, &brute);
}

/// `pairs`, found by `tree`, are the brute force's as a set (compared by
/// the objects' values).
fn assert_brute_force_pairs<V: Vector, S: SpatialIndex<V, u32>>(
    name: &str,
    tree: &S,
    pairs: &[Pair],
    brute: &BruteForce<V, u32>,
) {
    let value = |p: &Pair, h: &dyn Fn(Handle) -> u32| {
        let (a, b) = (h(p.a), h(p.b));
        (a.min(b), a.max(b))
    };
    let mut have: Vec<_> = pairs
        .iter()
        .map(|p| value(p, &|h| tree.get(h).unwrap().value))
        .collect();
    let mut want = Vec::new();
    brute.pairs(&mut want);
    let mut want: Vec<_> = want
        .iter()
        .map(|p| value(p, &|h| brute.get(h).unwrap().value))
        .collect();
    have.sort_unstable();
    want.sort_unstable();
    assert!(
        have == want,
        "{name}: the tree's pairs differ from the brute force's"
    );
}

#[test]
fn many_pairs_are_joined_in_order_on_any_pool() {
    many_pairs(Octree::<u32>::new);
    many_pairs(LooseOctree::<u32>::new);
    many_pairs(Bsp3::<u32>::new);
    many_pairs(LooseQuadtree::<u32>::new);
}

/// A scene of `n` unit spheres moved a little, every one in place or
/// nearly (so that every list entry's box is late), then one more object
/// filed (so that the next search sorts the grid anew and reads every
/// entry): the parallel search writes the late boxes on the threads.
fn moved_then_sorted<V: Vector, S: SpatialIndex<V, u32>>(
    make: fn() -> S,
    n: u32,
) -> (S, Vec<ObjectDesc<V, u32>>) {
    let mut r = crate::common::rng(91);
    let side = if V::DIM == 3 { 36.0 } else { 125.0 };
    let mut descs: Vec<_> = (0..n)
        .map(|i| ObjectDesc::new(Shape::sphere(in_cube::<V>(&mut r, 0.0, side), 1.0), i))
        .collect();
    let mut t = make();
    let handles = t.insert_many(descs.clone()).expect("valid");
    t.flush();
    for (d, &h) in descs.iter_mut().zip(&handles) {
        let Shape::Sphere(s) = d.shape else {
            unreachable!("spheres")
        };
        let step = in_cube::<V>(&mut r, -0.05, 0.05);
        d.shape = Shape::sphere(s.center + step, 1.0);
        t.update(h, d.shape).expect("inside the world");
    }
    let last = ObjectDesc::new(Shape::sphere(in_cube::<V>(&mut r, 0.0, side), 1.0), n);
    t.insert(last.clone()).expect("valid");
    descs.push(last);
    t.end_frame();
    (t, descs)
}

/// After a frame of moves in place, a new sort of the grid by the parallel
/// search (which writes every late entry's box on the threads, from
/// 16,384 entries) finds the pairs of the single-threaded search, in its
/// order, on pools of 1, 2 and 5 threads, and the brute force's pair set;
/// the tree then validates.
fn moves_then_a_new_sort<V: Vector, S: SpatialIndex<V, u32> + Send + Sync>(make: fn() -> S) {
    let n = 20_000;
    let (t, descs) = moved_then_sorted::<V, S>(make, n);
    let mut one = Vec::new();
    t.pairs(&mut one);
    t.validate().expect("valid after the search");
    for pool in pools() {
        let threads = pool.current_num_threads();
        let (t, _) = moved_then_sorted::<V, S>(make, n);
        let mut many = Vec::new();
        pool.install(|| t.par_pairs(&mut many));
        assert!(
            one == many,
            "{threads} threads gave other pairs or another order after moves in place"
        );
        t.validate().expect("valid after the parallel search");
    }
    let mut brute = BruteForce::<V, u32>::new();
    brute.insert_many(descs).expect("valid");
    assert_brute_force_pairs("moves, then a new sort", &t, &one, &brute);
}

#[test]
fn a_new_sort_after_moves_in_place_finds_the_pairs_on_any_pool() {
    moves_then_a_new_sort(LooseOctree::<u32>::new);
    moves_then_a_new_sort(Octree::<u32>::new);
    moves_then_a_new_sort(LooseQuadtree::<u32>::new);
}
