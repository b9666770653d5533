//! What every tree family does the same way, written once and run for the
//! octree, the loose octree and the 3D BSP: insertions queued until the
//! build step, moves and removals of queued objects, the root's growth
//! (the orthtrees; the BSP grows one axis at a time), the lifespans of
//! empty leaves and the pruning of whole branches, a static object high in
//! the tree meeting the moving ones below it, a million objects at one
//! point, the coordinate limit, and the eviction of objects that leave a
//! world that does not grow.
//!
//! A family's own geometry (its world, where its leaves fall) is in its
//! setup here; what differs in the outcome (depths and node counts) is
//! asserted beside each call. Behaviours of one family only stay in its
//! own file (`octree.rs`, `loose.rs`, `bsp.rs`).

use glam::Vec3;

use crate::common::same_pairs;
use sparti::{
    Aabb, BruteForce, Bsp3, BspConfig, Error, Filter, Handle, LooseConfig, LooseOctree, ObjectDesc,
    Octree, OrthtreeConfig, OutOfBounds, Shape, SpatialIndex, TreeStats,
};

fn ball(x: f32, y: f32, z: f32, r: f32) -> Shape<Vec3> {
    Shape::sphere(Vec3::new(x, y, z), r)
}

fn cube(lo: f32, hi: f32) -> Aabb<Vec3> {
    Aabb::new(Vec3::splat(lo), Vec3::splat(hi)).unwrap()
}

/// An octree over the cube `[lo, hi]^3`, default settings otherwise.
fn octree(lo: f32, hi: f32) -> Octree<u32> {
    Octree::with_config(OrthtreeConfig {
        world: Some(cube(lo, hi)),
        ..Default::default()
    })
    .unwrap()
}

/// A loose octree over the cube `[lo, hi]^3` with the classic minimum node
/// size of 1 these tests' geometry is worked out for.
fn loose(lo: f32, hi: f32) -> LooseOctree<u32> {
    LooseOctree::with_config(LooseConfig {
        world: Some(cube(lo, hi)),
        min_node_size: 1.0,
        ..Default::default()
    })
    .unwrap()
}

/// A BSP over the box `world`, default settings otherwise.
fn bsp(world: Aabb<Vec3>) -> Bsp3<u32> {
    Bsp3::with_config(BspConfig {
        world: Some(world),
        ..Default::default()
    })
    .unwrap()
}

/// [`bsp`] with one object a leaf (the octree's rule; the default keeps
/// 8), so that a few objects build a tree of many levels.
fn bsp_one_a_leaf(world: Aabb<Vec3>) -> Bsp3<u32> {
    Bsp3::with_config(BspConfig {
        world: Some(world),
        leaf_capacity: 1,
        ..Default::default()
    })
    .unwrap()
}

/// 101 objects queued (a batch and one more), seen by a query before the
/// build (tested one by one, counted), then the same answer from the built
/// tree. `before_build` checks what the family shows of a queued object
/// (the last one inserted is given); the built tree is returned.
fn insertions_are_queued<S: SpatialIndex<Vec3, u32>>(
    mut t: S,
    before_build: impl FnOnce(&S, Handle),
) -> S {
    let descs = (0..100)
        .map(|i| ObjectDesc::new(ball(i as f32, 0.0, 0.0, 0.4), i))
        .collect();
    t.insert_many(descs).unwrap();
    let late = t
        .insert(ObjectDesc::new(ball(5.0, 5.0, 5.0, 1.0), 100))
        .unwrap();
    assert_eq!(t.stats().pending, 101);
    assert_eq!(t.stats().nodes, 0);
    before_build(&t, late);
    t.validate().unwrap();
    let mut out = Vec::new();
    t.query_radius(Vec3::ZERO, 0.5, Filter::ALL, &mut out);
    assert_eq!(out.len(), 1, "a query sees the queued objects");
    // Queries run on `&self`: they build nothing, and test the queued
    // objects one by one (counted).
    assert_eq!(t.stats().pending, 101);
    assert_eq!(t.counters().pending_tests, 101);
    t.flush();
    let st = t.stats();
    assert_eq!(st.pending, 0);
    t.reset_counters();
    t.query_radius(Vec3::ZERO, 0.5, Filter::ALL, &mut out);
    assert_eq!(out.len(), 1, "the same answer from the tree");
    assert_eq!(t.counters().pending_tests, 0);
    assert!(st.nodes > 10, "the build made a real tree: {st:?}");
    t.validate().unwrap();
    t
}

#[test]
fn insertions_are_queued_until_the_build_step() {
    insertions_are_queued(Octree::new(), |_, _| {});
    insertions_are_queued(LooseOctree::new(), |t, _| {
        assert!(t.root_bounds().is_none());
    });
    let t = insertions_are_queued(Bsp3::new(), |t, late| {
        assert_eq!(t.node_bounds_of(late).unwrap(), None);
    });
    // Without a preset world the BSP's root is the objects' bounds, thin
    // sides widened to the minimum dimension from the smallest corner.
    let union = t
        .objects()
        .map(|(_, o)| o.aabb())
        .reduce(|a, b| a.union(&b))
        .unwrap();
    let root = t.root_bounds().unwrap();
    assert_eq!(root.min, union.min);
    assert_eq!(root.max.x, union.max.x);
    assert!(root.contains(&union) && root.size().y < 7.0 && root.size().z < 7.0);
    t.validate().unwrap();
}

/// Objects queued after a build step find their pairs among the tree's
/// objects through its grid (still built: the tree's objects have not
/// changed); those searches are part of the pair search, which counts as
/// one grid search at most, and the pairs are all there.
fn queued_pairs_on_a_built_grid<S: SpatialIndex<Vec3, u32>>(mut t: S) {
    // A row of balls, each touching the next.
    let descs = (0..100)
        .map(|i| ObjectDesc::new(ball(i as f32, 0.0, 0.0, 0.6), i))
        .collect();
    t.insert_many(descs).unwrap();
    t.flush();
    t.reset_counters();
    let mut out = Vec::new();
    t.query_radius(Vec3::ZERO, 0.5, Filter::ALL, &mut out);
    assert_eq!(
        t.counters().grid_searches,
        1,
        "the grid answers after the build"
    );
    // Five more, far from each other, each touching two of the row.
    for i in 0..5u32 {
        let x = i as f32 * 10.0 + 0.5;
        t.insert(ObjectDesc::new(ball(x, 0.0, 0.0, 0.6), 100 + i))
            .unwrap();
    }
    t.reset_counters();
    let mut pairs = Vec::new();
    t.pairs(&mut pairs);
    let c = t.counters();
    assert_eq!(pairs.len(), 99 + 10, "{c:?}");
    assert!(c.pending_tests >= 5, "{c:?}");
    assert!(c.grid_searches <= 1, "{c:?}");
}

#[test]
fn queued_objects_find_their_pairs_on_the_built_grid() {
    queued_pairs_on_a_built_grid(octree(-10.0, 110.0));
    queued_pairs_on_a_built_grid(loose(-10.0, 110.0));
    queued_pairs_on_a_built_grid(bsp(cube(-10.0, 110.0)));
}

/// Frames of moves, each ended by the build step: with the grid built,
/// the step leaves the boxes a tree walk prunes by out of date, and the
/// queries search the grid; one more move (no build step after it) sends
/// the queries to the tree, whose first walk brings those boxes up to
/// date with every move since they last were (this frame's and the ones
/// before it). The objects are small balls far apart, moved by up to
/// four radii: most moves keep their node, and a box left out of date
/// hides the object from a query at its new centre. `many` moves every
/// object each frame (the boxes are then recomputed whole), otherwise a
/// few (their nodes only). Every answer is the brute force's, every
/// object is found at its centre, and `validate` holds after every step.
fn moves_across_build_steps<S: SpatialIndex<Vec3, u32>>(mut t: S, many: bool, seed: u64) {
    use crate::common::{in_cube, rng};
    use rand::Rng as _;
    let mut r = rng(seed);
    let mut b = BruteForce::new();
    let mut handles = Vec::new();
    let mut at = Vec::new();
    for i in 0..400u32 {
        let c = Vec3::new((i % 20) as f32 * 5.0, (i / 20) as f32 * 5.0, 50.0);
        let shape = Shape::sphere(c, 0.2);
        handles.push(t.insert(ObjectDesc::new(shape, i)).unwrap());
        b.insert(ObjectDesc::new(shape, i)).unwrap();
        at.push(c);
    }
    t.flush();
    b.flush();
    let points: Vec<Vec3> = (0..20).map(|_| in_cube(&mut r, 0.0, 100.0)).collect();
    let sorted = |mut v: Vec<Handle>| {
        v.sort();
        v
    };
    // The brute force's answers, and each object at its own centre.
    let ask = |t: &S, b: &BruteForce<Vec3, u32>, at: &[Vec3], what: &str| {
        let (mut x, mut y) = (Vec::new(), Vec::new());
        let (mut nx, mut ny) = (Vec::new(), Vec::new());
        for &p in &points {
            t.query_radius(p, 6.0, Filter::ALL, &mut x);
            b.query_radius(p, 6.0, Filter::ALL, &mut y);
            assert_eq!(
                sorted(x.clone()),
                sorted(y.clone()),
                "{what}: radius at {p}"
            );
            t.nearest_k(p, 5, Filter::ALL, &mut nx);
            b.nearest_k(p, 5, Filter::ALL, &mut ny);
            let d = |n: &[sparti::Neighbor]| n.iter().map(|n| n.distance).collect::<Vec<_>>();
            assert_eq!(d(&nx), d(&ny), "{what}: nearest at {p}");
        }
        for (&h, &c) in handles.iter().zip(at) {
            t.query_radius(c, 0.01, Filter::ALL, &mut x);
            assert!(x.contains(&h), "{what}: {h:?} not found at its centre {c}");
        }
    };
    let mut step = |t: &mut S, b: &mut BruteForce<Vec3, u32>, at: &mut [Vec3], k: usize| {
        let d = Vec3::new(
            r.random_range(-0.8..0.8),
            r.random_range(-0.8..0.8),
            r.random_range(-0.8..0.8),
        );
        at[k] += d;
        let shape = Shape::sphere(at[k], 0.2);
        t.update(handles[k], shape).unwrap();
        b.update(handles[k], shape).unwrap();
    };
    let asked = (2 * points.len() + handles.len()) as u64;
    for frame in 0..4 {
        let moved = if many { 400 } else { 3 };
        for k in 0..moved {
            step(&mut t, &mut b, &mut at, (k * 37 + frame * 11) % 400);
        }
        t.flush();
        t.validate().unwrap();
        t.reset_counters();
        ask(&t, &b, &at, "after the build step");
        let c = t.counters();
        assert_eq!(c.grid_searches, asked, "{c:?}");
        t.validate().unwrap();
        // One more move, no build step: the queries walk the tree.
        step(&mut t, &mut b, &mut at, (frame * 101 + 7) % 400);
        t.validate().unwrap();
        t.reset_counters();
        ask(&t, &b, &at, "after a move");
        let c = t.counters();
        assert_eq!(c.grid_searches, 0, "{c:?}");
        assert!(c.node_visits > 0, "{c:?}");
        t.validate().unwrap();
    }
}

#[test]
fn moves_across_build_steps_are_found_by_the_tree_walks() {
    for many in [false, true] {
        moves_across_build_steps(octree(-10.0, 110.0), many, 1);
        moves_across_build_steps(loose(-10.0, 110.0), many, 2);
        moves_across_build_steps(bsp(cube(-10.0, 110.0)), many, 3);
    }
}

fn pending_moves_and_removals<S: SpatialIndex<Vec3, u32>>(mut t: S) {
    let a = t
        .insert(ObjectDesc::new(ball(0.0, 0.0, 0.0, 1.0), 0))
        .unwrap();
    let b = t
        .insert(ObjectDesc::new(ball(10.0, 0.0, 0.0, 1.0), 1))
        .unwrap();
    let c = t
        .insert(ObjectDesc::new(ball(20.0, 0.0, 0.0, 1.0), 2))
        .unwrap();
    t.update(b, ball(1.0, 0.0, 0.0, 1.0)).unwrap();
    assert_eq!(t.remove(a).unwrap(), 0);
    t.validate().unwrap();
    assert_eq!(t.stats().pending, 2);
    let mut pairs = Vec::new();
    t.pairs(&mut pairs);
    assert!(pairs.is_empty());
    t.update(c, ball(2.0, 0.0, 0.0, 1.0)).unwrap();
    t.pairs(&mut pairs);
    assert_eq!(pairs.len(), 1);
    assert_eq!((pairs[0].a, pairs[0].b), (b, c));
}

#[test]
fn pending_objects_can_be_moved_and_removed_before_the_build() {
    pending_moves_and_removals(Octree::new());
    pending_moves_and_removals(LooseOctree::new());
    pending_moves_and_removals(Bsp3::new());
}

/// Two objects of `radius` in a world of 16; `b` moves far away (and
/// grows to `far_radius`): the root grows to hold it (its side stays a
/// power of two), and queries find both where they are. `root` gives the
/// tree's root bounds. Gives the handles.
fn the_root_grows<S: SpatialIndex<Vec3, u32>>(
    t: &mut S,
    (radius, far_radius): (f32, f32),
    root: impl Fn(&S) -> Aabb<Vec3>,
) -> (Handle, Handle) {
    let a = t
        .insert(ObjectDesc::new(ball(1.0, 1.0, 1.0, radius), 0))
        .unwrap();
    let b = t
        .insert(ObjectDesc::new(ball(15.0, 15.0, 15.0, radius), 1))
        .unwrap();
    t.flush();
    let before = root(t);
    assert_eq!(before.size(), Vec3::splat(16.0));
    t.update(b, ball(-1000.0, 500.0, 3000.0, far_radius))
        .unwrap();
    t.validate().unwrap();
    let after = root(t);
    assert!(after.contains(&before) && after.contains(&t.get(b).unwrap().aabb()));
    assert_eq!(
        after.size().x.log2().fract(),
        0.0,
        "side stays a power of two"
    );
    let mut out = Vec::new();
    let far = Vec3::new(-1000.0, 500.0, 3000.0);
    t.query_radius(far, 0.1, Filter::ALL, &mut out);
    assert_eq!(out, vec![b]);
    t.query_radius(Vec3::ONE, 0.1, Filter::ALL, &mut out);
    assert_eq!(out, vec![a]);
    (a, b)
}

#[test]
fn the_root_grows_to_hold_an_object_that_leaves_it() {
    let mut t = octree(0.0, 16.0);
    the_root_grows(&mut t, (0.5, 2.0), |t| t.root_bounds().unwrap());
    // The loose tree's world of 15 has a root of 16 (cells of 1).
    let mut t = loose(0.0, 15.0);
    let (a, b) = the_root_grows(&mut t, (0.45, 1.9), |t| t.root_bounds().unwrap());
    // Both still sink to the smallest cells.
    let root_level = t.root_bounds().unwrap().size().x.log2() as usize;
    assert_eq!(t.depth_of(a).unwrap(), Some(root_level));
    assert_eq!(t.depth_of(b).unwrap(), Some(root_level - 2));
}

/// A tree in which object `b` can alternate between two leaves, `here`
/// (where it is) and `there`, so that the leaf it leaves becomes an empty
/// leaf; `nodes` is the node count with `b` here and no empty leaf.
struct Lifespans<S> {
    t: S,
    b: Handle,
    here: Shape<Vec3>,
    there: Shape<Vec3>,
    nodes: usize,
}

impl<S: SpatialIndex<Vec3, u32>> Lifespans<S> {
    fn new(t: S, b: Handle, here: Shape<Vec3>, there: Shape<Vec3>) -> Self {
        let nodes = t.stats().nodes;
        t.validate().unwrap();
        Self {
            t,
            b,
            here,
            there,
            nodes,
        }
    }

    fn go_there(&mut self) {
        self.t.update(self.b, self.there).unwrap();
        self.t.validate().unwrap();
    }

    fn go_here(&mut self) {
        self.t.update(self.b, self.here).unwrap();
        self.t.validate().unwrap();
    }

    fn frames(&mut self, n: usize) {
        for _ in 0..n {
            self.t.end_frame();
        }
    }

    /// Frames an empty leaf survives: `end_frame` calls until the node
    /// count drops.
    fn frames_until_pruned(&mut self) -> usize {
        let nodes = self.t.stats().nodes;
        for f in 1..=200 {
            self.t.end_frame();
            self.t.validate().unwrap();
            if self.t.stats().nodes < nodes {
                return f;
            }
        }
        panic!("never pruned");
    }
}

const HERE: (f32, f32, f32) = (40.0, 40.0, 40.0);
const THERE: (f32, f32, f32) = (20.0, 40.0, 40.0);

/// `t` with an object at `a` and object `b` at `here`: a root and two
/// leaves.
fn two_leaves<S: SpatialIndex<Vec3, u32>>(
    mut t: S,
    a: Shape<Vec3>,
    here: Shape<Vec3>,
    there: Shape<Vec3>,
) -> Lifespans<S> {
    t.insert(ObjectDesc::new(a, 0)).unwrap();
    let b = t.insert(ObjectDesc::new(here, 1)).unwrap();
    t.flush();
    assert_eq!(t.stats().nodes, 3, "root and two leaves");
    Lifespans::new(t, b, here, there)
}

fn at(p: (f32, f32, f32), r: f32) -> Shape<Vec3> {
    ball(p.0, p.1, p.2, r)
}

/// An octree over `[0, 64]^3`: `b` alternates between two octants of the
/// root.
fn octree_lifespans() -> Lifespans<Octree<u32>> {
    let a = ball(1.0, 1.0, 1.0, 0.25);
    two_leaves(octree(0.0, 64.0), a, at(HERE, 0.25), at(THERE, 0.25))
}

/// A loose octree over a world of 60 (root 64, level 6) where objects of
/// radius 12 live in the root's children (level 5, pad 16): `b` alternates
/// between two of them.
fn loose_lifespans() -> Lifespans<LooseOctree<u32>> {
    let (here, there) = ((48.0, 48.0, 48.0), (16.0, 48.0, 48.0));
    let a = ball(8.0, 8.0, 8.0, 12.0);
    two_leaves(loose(0.0, 60.0), a, at(here, 12.0), at(there, 12.0))
}

/// A BSP over a 64-cube world with cells of at most 32: `a` in the lower x
/// half's lower y quarter, `b` in the upper x half (HERE); it alternates
/// with the lower half's upper y quarter (THERE), whose cell is built and
/// then pruned first, so that both cells start with a lifespan of 8.
fn bsp_lifespans() -> Lifespans<Bsp3<u32>> {
    let mut t = Bsp3::<u32>::with_config(BspConfig {
        world: Some(cube(0.0, 64.0)),
        min_dimension: 32.0,
        // One object a leaf (the octree's rule; the default keeps 8), so
        // that a few objects build a tree of several levels.
        leaf_capacity: 1,
        ..Default::default()
    })
    .unwrap();
    t.insert(ObjectDesc::new(ball(1.0, 1.0, 1.0, 0.25), 0))
        .unwrap();
    let d = t.insert(ObjectDesc::new(at(THERE, 0.25), 1)).unwrap();
    let b = t.insert(ObjectDesc::new(at(HERE, 0.25), 2)).unwrap();
    t.flush();
    assert_eq!(t.stats().nodes, 5, "root, two halves, two quarters");
    t.remove(d).unwrap();
    for _ in 0..8 {
        t.end_frame();
    }
    assert_eq!(t.stats().nodes, 4, "THERE's cell pruned");
    Lifespans::new(t, b, at(HERE, 0.25), at(THERE, 0.25))
}

fn empty_leaf_pruned_after_eight<S: SpatialIndex<Vec3, u32>>(mut l: Lifespans<S>) {
    l.go_there();
    assert_eq!(
        l.t.stats().nodes,
        l.nodes + 1,
        "the left leaf is still there"
    );
    assert_eq!(l.frames_until_pruned(), 8);
    assert_eq!(l.t.stats().nodes, l.nodes);
}

#[test]
fn an_empty_leaf_is_pruned_after_eight_frames() {
    empty_leaf_pruned_after_eight(octree_lifespans());
    empty_leaf_pruned_after_eight(loose_lifespans());
    empty_leaf_pruned_after_eight(bsp_lifespans());
}

fn one_reuse_doubles<S: SpatialIndex<Vec3, u32>>(mut l: Lifespans<S>) {
    l.go_there(); // HERE's leaf idle, lifespan 8
    l.frames(1);
    l.go_here(); // reused: 16; THERE's leaf idle with 8
    assert_eq!(l.frames_until_pruned(), 8, "THERE's leaf, never reused");
    l.go_there(); // HERE's leaf idle with 16
    assert_eq!(l.frames_until_pruned(), 16);
    // Round trips reuse both leaves: 8 doublings cap at 64.
    for _ in 0..8 {
        l.go_here();
        l.frames(1);
        l.go_there();
    }
    assert_eq!(l.frames_until_pruned(), 64, "HERE's leaf, capped");
}

#[test]
fn one_reuse_doubles_the_lifespan_to_sixteen() {
    one_reuse_doubles(octree_lifespans());
    one_reuse_doubles(loose_lifespans());
    one_reuse_doubles(bsp_lifespans());
}

fn reuses_cap_at_64<S: SpatialIndex<Vec3, u32>>(mut l: Lifespans<S>) {
    // Leave HERE's leaf, come back before it dies: its lifespan doubles.
    // Each round trip reuses both leaves once.
    for _ in 0..5 {
        l.go_there();
        l.frames(3);
        l.go_here();
    }
    // THERE's leaf was reused 4 times (8 -> 128, capped at 64).
    assert_eq!(l.frames_until_pruned(), 64);
    // And HERE's leaf, reused 5 times, is capped at 64 too.
    l.go_there();
    assert_eq!(l.frames_until_pruned(), 64);
}

#[test]
fn a_reused_leaf_doubles_its_lifespan_up_to_64() {
    reuses_cap_at_64(octree_lifespans());
    reuses_cap_at_64(loose_lifespans());
    reuses_cap_at_64(bsp_lifespans());
}

/// Two small objects at `a` and `b` build a deep tree; once removed, the
/// branches are pruned down to the root (checked every frame), and the
/// same burst `rounds` more times reuses the pool. Gives the tree's stats
/// when deep, its memory once first pruned, and its memory after each
/// round.
fn pruning_reclaims<S: SpatialIndex<Vec3, u32>>(
    mut t: S,
    a: Vec3,
    b: Vec3,
    frames: usize,
    rounds: u32,
) -> (TreeStats, usize, Vec<usize>) {
    let burst = |t: &mut S, value: u32| {
        let ha = t
            .insert(ObjectDesc::new(Shape::sphere(a, 0.1), value))
            .unwrap();
        let hb = t
            .insert(ObjectDesc::new(Shape::sphere(b, 0.1), value))
            .unwrap();
        t.flush();
        let deep = t.stats();
        t.remove(ha).unwrap();
        t.remove(hb).unwrap();
        deep
    };
    let deep = burst(&mut t, 0);
    for _ in 0..frames {
        t.end_frame();
        t.validate().unwrap();
    }
    assert_eq!(t.stats().nodes, 1, "only the root is left");
    let first = t.stats().memory_bytes;
    let mut mem = Vec::new();
    for round in 0..rounds {
        burst(&mut t, round);
        for _ in 0..frames {
            t.end_frame();
        }
        t.validate().unwrap();
        assert_eq!(t.stats().nodes, 1);
        mem.push(t.stats().memory_bytes);
    }
    (deep, first, mem)
}

#[test]
fn pruning_reclaims_whole_branches_and_reuses_the_pool() {
    let (a, b) = (Vec3::new(1.0, 1.0, 1.0), Vec3::new(1.0, 1.0, 2.0));
    let (deep, first, mem) = pruning_reclaims(octree(0.0, 1024.0), a, b, 64 * 12, 5);
    assert!(deep.nodes > 8, "{deep:?}");
    assert!(mem.iter().all(|&m| m == first), "{first} then {mem:?}");

    let (deep, first, mem) = pruning_reclaims(bsp_one_a_leaf(cube(0.0, 1024.0)), a, b, 64 * 40, 5);
    assert!(deep.nodes > 20, "{deep:?}");
    assert!(mem.iter().all(|&m| m == first), "{first} then {mem:?}");

    // The loose tree's two objects far apart: two chains of 10 under the
    // root. The first rounds may give item lists to nodes that had none
    // (reused nodes keep theirs), so its memory settles after a few.
    let far = Vec3::new(700.0, 1.0, 2.0);
    let (deep, _, mem) = pruning_reclaims(loose(0.0, 1000.0), a, far, 64 * 12, 12);
    assert_eq!(deep.nodes, 21, "two chains of 10 under the root: {deep:?}");
    assert!(
        mem[6..].iter().all(|&m| m == mem[6]),
        "memory settles: {mem:?}"
    );
}

/// A big static floor near the root, static crates and moving balls deep
/// below it: every moving ball touches the floor, no crate pairs with it
/// (the article's sample code misses these pairs). Gives the depth.
fn static_floor<S: SpatialIndex<Vec3, u32>>(mut t: S) -> usize {
    let mut b = BruteForce::<Vec3, u32>::new();
    let floor = ObjectDesc::new(
        Shape::cuboid(Vec3::new(128.0, 1.0, 128.0), Vec3::new(128.0, 1.0, 128.0)),
        0,
    )
    .with_static(true);
    t.insert(floor.clone()).unwrap();
    b.insert(floor).unwrap();
    // Static crates deep in the tree, touching the floor: never paired with it.
    for i in 0..20 {
        let d =
            ObjectDesc::new(ball(10.0 + i as f32 * 11.0, 2.5, 7.0, 0.5), 100 + i).with_static(true);
        t.insert(d.clone()).unwrap();
        b.insert(d).unwrap();
    }
    // Moving balls resting on the floor, deep in the tree.
    for i in 0..20 {
        let d = ObjectDesc::new(ball(10.0 + i as f32 * 11.0, 2.5, 60.0, 1.0), 200 + i);
        t.insert(d.clone()).unwrap();
        b.insert(d).unwrap();
    }
    t.flush();
    let pt = same_pairs(&t, &b);
    assert_eq!(pt.len(), 20, "each moving ball touches the floor");
    t.validate().unwrap();
    t.stats().max_depth
}

#[test]
fn a_static_object_high_in_the_tree_meets_every_moving_object_below() {
    assert!(static_floor(octree(0.0, 256.0)) >= 4);
    assert!(static_floor(loose(0.0, 256.0)) >= 6);
    let flat = Aabb::new(Vec3::ZERO, Vec3::new(256.0, 8.0, 256.0)).unwrap();
    assert!(static_floor(bsp(flat)) >= 4);
}

/// A million objects at one point: all found by a query there, none a
/// unit away, and the three nearest to a point a unit away are the first
/// three handles (ties go to the smaller handle). Gives the stats.
fn a_million_at_one_point<S: SpatialIndex<Vec3, u32>>(mut t: S) -> TreeStats {
    let p = Vec3::new(3.3, 7.7, 1.1);
    let descs = (0..1_000_000)
        .map(|i| ObjectDesc::new(Shape::sphere(p, 0.0), i))
        .collect();
    t.insert_many(descs).unwrap();
    t.flush();
    let st = t.stats();
    assert_eq!(st.objects, 1_000_000);
    let mut out = Vec::new();
    t.query_radius(p, 0.0, Filter::ALL, &mut out);
    assert_eq!(out.len(), 1_000_000);
    t.query_radius(p + Vec3::X, 0.5, Filter::ALL, &mut out);
    assert!(out.is_empty());
    let mut near = Vec::new();
    t.nearest_k(p + Vec3::X, 3, Filter::ALL, &mut near);
    assert_eq!(near.len(), 3);
    assert!(near.iter().all(|n| (n.distance - 1.0).abs() < 1e-6));
    assert_eq!(near[0].handle.index(), 0, "ties go to the smaller handle");
    st
}

#[test]
fn a_million_objects_at_one_point_in_an_octree_keep_the_depth_bounded() {
    let st = a_million_at_one_point(octree(0.0, 1024.0));
    assert!(
        st.max_depth <= 10,
        "depth {} for a 1024 world",
        st.max_depth
    );
    assert!(st.nodes <= 11, "{} nodes", st.nodes);
}

#[test]
fn a_million_objects_at_one_point_in_a_loose_octree_keep_it_bounded() {
    let st = a_million_at_one_point(loose(0.0, 1000.0));
    assert_eq!(st.max_depth, 10, "root 1024, smallest cells 1");
    assert_eq!(st.nodes, 11, "one chain");
}

#[test]
fn a_million_objects_at_one_point_in_a_bsp_keep_the_depth_bounded() {
    let st = a_million_at_one_point(bsp(cube(0.0, 1024.0)));
    // 10 halvings per axis from 1024 to 1.
    assert_eq!(st.max_depth, 30);
    assert_eq!(st.nodes, 31);
}

/// Objects out to 1e18 on both sides work (the same pairs and queries as
/// the brute force, also after moves around the extremes); beyond 2^60
/// every structure refuses, the brute force included.
fn the_coordinate_limit<S: SpatialIndex<Vec3, u32>>(mut t: S) {
    let mut b = BruteForce::<Vec3, u32>::new();
    for (i, x) in [-1e18f32, 1e18, 0.0, 0.5, 1e17, 1e18]
        .into_iter()
        .enumerate()
    {
        let d = ObjectDesc::new(ball(x, 0.0, 0.0, 1.0), i as u32);
        t.insert(d.clone()).unwrap();
        b.insert(d).unwrap();
    }
    let d = ObjectDesc::new(ball(2e18, 0.0, 0.0, 1.0), 99);
    assert_eq!(t.insert(d.clone()), Err(Error::WorldTooLarge));
    assert_eq!(b.insert(d), Err(Error::WorldTooLarge));
    t.flush();
    let pt = same_pairs(&t, &b);
    assert_eq!(pt.len(), 2, "0.0 and 0.5 touch, the two at 1e18 too");
    t.validate().unwrap();
    let h = t.objects().next().unwrap().0;
    let far = ball(-3e18, 0.0, 0.0, 1.0);
    assert_eq!(t.update(h, far), Err(Error::WorldTooLarge));
    assert_eq!(b.update(h, far), Err(Error::WorldTooLarge));
    t.validate().unwrap();
    // Move objects around the extremes: still consistent.
    let hs: Vec<Handle> = t.objects().map(|(h, _)| h).collect();
    for (i, &h) in hs.iter().enumerate() {
        let x = [1e18f32, -1e18, 3.0, 1e-30, -5e17, 0.25][i];
        let s = ball(x, 1e18 * (i % 2) as f32, 0.0, [0.0, 1e15, 2.0][i % 3]);
        t.update(h, s).unwrap();
        b.update(h, s).unwrap(); // same insertions, same handles
        t.validate().unwrap();
    }
    same_pairs(&t, &b);
    let (mut out, mut outb) = (Vec::new(), Vec::new());
    t.query_radius(Vec3::new(1e18, 0.0, 0.0), 1e15, Filter::ALL, &mut out);
    b.query_radius(Vec3::new(1e18, 0.0, 0.0), 1e15, Filter::ALL, &mut outb);
    assert_eq!(out.len(), 1);
    assert_eq!(out, outb);
}

#[test]
fn objects_at_the_coordinate_limit_work_and_beyond_it_are_refused() {
    the_coordinate_limit(Octree::new());
    the_coordinate_limit(Bsp3::new());
    for m in [1.0f32, 1e-3] {
        the_coordinate_limit(
            LooseOctree::with_config(LooseConfig {
                min_node_size: m,
                ..Default::default()
            })
            .unwrap(),
        );
    }
}

/// The trees' own list of evicted objects (not part of `SpatialIndex`).
trait Evicts {
    fn evicted(&mut self) -> Vec<(Handle, u32)>;
}

impl Evicts for Octree<u32> {
    fn evicted(&mut self) -> Vec<(Handle, u32)> {
        self.take_evicted()
    }
}

impl Evicts for LooseOctree<u32> {
    fn evicted(&mut self) -> Vec<(Handle, u32)> {
        self.take_evicted()
    }
}

impl Evicts for Bsp3<u32> {
    fn evicted(&mut self) -> Vec<(Handle, u32)> {
        self.take_evicted()
    }
}

/// Under `OutOfBounds::Remove` over the cube `[0, 16]^3`: a move out of
/// the world evicts the object (its handle stale, its value reported once
/// by `take_evicted`) and leaves the others; an insertion outside is
/// refused; an object still queued for the build is evicted the same way.
fn the_remove_policy<S: SpatialIndex<Vec3, u32> + Evicts>(mut t: S) {
    let a = t
        .insert(ObjectDesc::new(ball(1.0, 1.0, 1.0, 0.5), 7))
        .unwrap();
    let b = t
        .insert(ObjectDesc::new(ball(3.0, 1.0, 1.0, 0.5), 8))
        .unwrap();
    t.flush();
    t.update(a, ball(-5.0, 1.0, 1.0, 0.5)).unwrap();
    assert_eq!(t.get(a), Err(Error::StaleHandle(a)));
    assert_eq!(t.len(), 1);
    assert_eq!(t.evicted(), vec![(a, 7)]);
    assert!(t.evicted().is_empty());
    assert!(t.get(b).is_ok());
    assert_eq!(
        t.insert(ObjectDesc::new(ball(-5.0, 1.0, 1.0, 0.5), 9)),
        Err(Error::OutsideWorld)
    );
    t.validate().unwrap();
    // An object still queued for the build is evicted the same way.
    let c = t
        .insert(ObjectDesc::new(ball(5.0, 1.0, 1.0, 0.5), 10))
        .unwrap();
    assert_eq!(t.stats().pending, 1);
    t.update(c, ball(5.0, 40.0, 1.0, 0.5)).unwrap();
    assert_eq!(t.evicted(), vec![(c, 10)]);
    assert_eq!(t.len(), 1);
    t.validate().unwrap();
}

#[test]
fn the_remove_policy_evicts_and_reports_the_object() {
    let policy = OutOfBounds::Remove;
    the_remove_policy(
        Octree::with_config(OrthtreeConfig {
            world: Some(cube(0.0, 16.0)),
            out_of_bounds: policy,
            ..Default::default()
        })
        .unwrap(),
    );
    the_remove_policy(
        LooseOctree::with_config(LooseConfig {
            world: Some(cube(0.0, 16.0)),
            min_node_size: 1.0,
            out_of_bounds: policy,
            ..Default::default()
        })
        .unwrap(),
    );
    the_remove_policy(
        Bsp3::with_config(BspConfig {
            world: Some(cube(0.0, 16.0)),
            out_of_bounds: policy,
            ..Default::default()
        })
        .unwrap(),
    );
}
