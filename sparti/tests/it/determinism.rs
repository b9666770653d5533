//! Determinism: the same operations give the same pairs, query results and
//! events in the same order, run after run; and the canonical (sorted)
//! results of a fixed scenario are pinned by a hash.

use glam::{Vec2, Vec3};
use sparti::{
    BruteForce, Bsp2, Bsp3, ContactEvents, Filter, LooseOctree, LooseQuadtree, ObjectDesc, Octree,
    Quadtree, Ray, Shape, SpatialIndex, Vector,
};
use sparti_scenes::XorShift;

/// FNV-1a over 64-bit words: stable across platforms and Rust versions.
#[derive(Clone, Copy)]
struct Fnv(u64);

impl Fnv {
    fn new() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
    fn word(&mut self, w: u64) {
        for b in w.to_le_bytes() {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
}

/// Runs the fixed scenario: returns (hash of results in the structure's
/// order, hash of the canonical sorted results).
fn scenario<V: Vector, S: SpatialIndex<V, u32>>(mut s: S) -> (u64, u64) {
    let mut r = XorShift(0x9E37_79B9_7F4A_7C15);
    let side = 40.0;
    let point = |r: &mut XorShift| {
        let mut v = V::ZERO;
        for i in 0..V::DIM {
            v = v.with(i, r.next_unit() * side);
        }
        v
    };
    let mut handles = Vec::new();
    for i in 0..300u32 {
        let c = point(&mut r);
        let shape = if i % 3 == 0 {
            Shape::cuboid(c, V::splat(0.5 + r.next_unit()))
        } else {
            Shape::sphere(c, 0.5 + r.next_unit() * 1.5)
        };
        let d = ObjectDesc::new(shape, i)
            .with_static(i % 5 == 0)
            .with_layer(1 << (i % 3));
        handles.push(s.insert(d).unwrap());
    }
    let (mut raw, mut canon) = (Fnv::new(), Fnv::new());
    let mut events = ContactEvents::new();
    let (mut pairs, mut found, mut hits, mut near) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for frame in 0..30 {
        for (i, &h) in handles.iter().enumerate() {
            if i % 5 == 0 {
                continue;
            }
            let c = s.get(h).unwrap().shape.center();
            let step = point(&mut r) * (1.0 / side) - V::splat(0.5);
            let c = c + step;
            s.update(h, Shape::sphere(c, 1.0)).unwrap();
        }
        // Churn: replace one object per frame.
        let k = (frame * 7 + 3) % handles.len();
        if k % 5 != 0 {
            let v = s.remove(handles[k]).unwrap();
            handles[k] = s
                .insert(ObjectDesc::new(Shape::sphere(point(&mut r), 1.0), v))
                .unwrap();
        }
        s.pairs(&mut pairs);
        for p in &pairs {
            raw.word(p.a.to_bits());
            raw.word(p.b.to_bits());
        }
        let mut ids: Vec<(u32, u32)> = pairs
            .iter()
            .map(|p| (s.get(p.a).unwrap().value, s.get(p.b).unwrap().value))
            .map(|(a, b)| (a.min(b), a.max(b)))
            .collect();
        ids.sort_unstable();
        for (a, b) in ids {
            canon.word(u64::from(a) << 32 | u64::from(b));
        }
        events.update(&s);
        for p in events.started().iter().chain(events.stopped()) {
            raw.word(p.a.to_bits() ^ p.b.to_bits().rotate_left(1));
            canon.word(p.a.to_bits() ^ p.b.to_bits().rotate_left(1));
        }
        s.query_radius(point(&mut r), 8.0, Filter::layers(0b011), &mut found);
        for h in &found {
            raw.word(h.to_bits());
        }
        let mut ids: Vec<u32> = found.iter().map(|&h| s.get(h).unwrap().value).collect();
        ids.sort_unstable();
        for id in ids {
            canon.word(u64::from(id));
        }
        let mut dir = point(&mut r) - V::splat(side * 0.5);
        if dir.try_normalize().is_none() {
            dir = V::ONE;
        }
        let ray = Ray::new(point(&mut r), dir).unwrap();
        s.ray_all(&ray, side, Filter::ALL, &mut hits);
        for h in &hits {
            let w =
                u64::from(s.get(h.handle).unwrap().value) << 32 | u64::from(h.distance.to_bits());
            raw.word(w);
            canon.word(w);
        }
        s.nearest_k(point(&mut r), 5, Filter::ALL, &mut near);
        for n in &near {
            let w =
                u64::from(s.get(n.handle).unwrap().value) << 32 | u64::from(n.distance.to_bits());
            raw.word(w);
            canon.word(w);
        }
        s.end_frame();
    }
    (raw.0, canon.0)
}

fn check<V: Vector, S: SpatialIndex<V, u32>>(make: impl Fn() -> S) -> u64 {
    let (raw1, canon1) = scenario(make());
    let (raw2, canon2) = scenario(make());
    assert_eq!(
        raw1, raw2,
        "the same operations gave results in another order"
    );
    assert_eq!(canon1, canon2);
    canon1
}

#[test]
fn every_structure_is_deterministic_and_agrees_in_3d() {
    let brute = check(BruteForce::<Vec3, u32>::new);
    assert_eq!(check(Octree::<u32>::new), brute);
    assert_eq!(check(LooseOctree::<u32>::new), brute);
    assert_eq!(check(Bsp3::<u32>::new), brute);
    // Pinned: a change here means results changed for the same input.
    assert_eq!(brute, PINNED_3D, "canonical 3D results changed: {brute:#x}");
}

#[test]
fn every_structure_is_deterministic_and_agrees_in_2d() {
    let brute = check(BruteForce::<Vec2, u32>::new);
    assert_eq!(check(Quadtree::<u32>::new), brute);
    assert_eq!(check(LooseQuadtree::<u32>::new), brute);
    assert_eq!(check(Bsp2::<u32>::new), brute);
    assert_eq!(brute, PINNED_2D, "canonical 2D results changed: {brute:#x}");
}

const PINNED_3D: u64 = 0x5544_10e2_2b60_d002;
const PINNED_2D: u64 = 0x6b03_cccb_8baf_7c52;

/// The scenario run on 1, 2, 4 and 8 threads at once, each with its own
/// structure: every thread gets the single-threaded results in the same
/// order (sparti keeps no global state, so threads cannot disturb each
/// other).
fn same_on_threads<V: Vector, S: SpatialIndex<V, u32>>(make: fn() -> S) {
    let alone = scenario(make());
    for threads in [1, 2, 4, 8] {
        let results: Vec<(u64, u64)> = std::thread::scope(|sc| {
            let hs: Vec<_> = (0..threads)
                .map(|_| sc.spawn(move || scenario(make())))
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for r in results {
            assert_eq!(r, alone, "{threads} threads");
        }
    }
}

#[test]
fn results_are_the_same_on_any_number_of_threads() {
    crate::common::every_structure!(makers brute, same_on_threads);
}
