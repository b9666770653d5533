//! Memory is given back where the soak test (`tests/it/soak.rs`) found it was
//! not: a pruned node kept the largest item list it ever held, in the free
//! pool, for ever. (Nodes now hold blocks of the kernel's one array of
//! lists, whose room is recycled and which shrinks when it holds room for
//! more than three times the objects.)

use sparti::{
    Aabb, Bsp2, Bsp3, Filter, LooseOctree, LooseQuadtree, ObjectDesc, Octree, Quadtree, Shape,
    SpatialIndex, Vector,
};

/// 64 objects at one point fill one deep node; once they are removed and
/// the empty branch is pruned, the room of the node's list goes back and
/// the lists' array shrinks, so the structure's memory falls.
fn pruned_nodes_give_back_item_lists<V: Vector, S: SpatialIndex<V, u32>>(mut s: S) {
    s.insert(ObjectDesc::new(Shape::sphere(V::splat(100.0), 1.0), 0))
        .unwrap();
    s.flush();
    let mut populated = 0;
    let mut pruned = Vec::new();
    for _ in 0..3 {
        let hs: Vec<_> = (0..64)
            .map(|i| {
                s.insert(ObjectDesc::new(Shape::sphere(V::splat(10.0), 0.0), i + 1))
                    .unwrap()
            })
            .collect();
        s.flush();
        populated = s.stats().memory_bytes;
        for h in hs {
            s.remove(h).unwrap();
        }
        for _ in 0..200 {
            s.end_frame();
        }
        s.validate().unwrap();
        pruned.push(s.stats().memory_bytes);
    }
    assert!(
        pruned[2] < populated,
        "pruning gave nothing back: {populated} B populated, {} B pruned",
        pruned[2]
    );
    assert_eq!(
        pruned[1], pruned[2],
        "the same burst again costs nothing more"
    );
}

#[test]
fn pruned_nodes_give_back_their_item_lists() {
    pruned_nodes_give_back_item_lists(Octree::<u32>::new());
    pruned_nodes_give_back_item_lists(Quadtree::<u32>::new());
    pruned_nodes_give_back_item_lists(LooseOctree::<u32>::new());
    pruned_nodes_give_back_item_lists(LooseQuadtree::<u32>::new());
    pruned_nodes_give_back_item_lists(Bsp3::<u32>::new());
    pruned_nodes_give_back_item_lists(Bsp2::<u32>::new());
}

/// Counts the heap allocations made on this thread (the other tests of
/// this binary run on theirs).
struct Counting;

thread_local! {
    static ALLOCATIONS: core::cell::Cell<u64> = const { core::cell::Cell::new(0) };
}

// SAFETY: every call is passed on unchanged to the system allocator; the
// counter is a thread-local `Cell` without a destructor, touched only
// through `try_with` (no allocation, no panic during thread teardown).
unsafe impl std::alloc::GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
        // SAFETY: the caller's layout, as `GlobalAlloc::alloc` requires.
        unsafe { std::alloc::System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        // SAFETY: `ptr` came from `alloc` above with this layout.
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, size: usize) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
        // SAFETY: as `GlobalAlloc::realloc` requires, passed on.
        unsafe { std::alloc::System.realloc(ptr, layout, size) }
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

fn allocations() -> u64 {
    ALLOCATIONS.with(core::cell::Cell::get)
}

/// A game's frame on one thread, once warm: every object moved a little
/// with `update`, `end_frame`, the pairs into a kept `Vec`: no heap
/// allocation (the pair search's grid and buffers are kept).
fn a_warm_frame_allocates_nothing<V: Vector, S: SpatialIndex<V, u32>>(mut s: S) {
    let n = 3000u32;
    let pos = |i: u32, f: u32| -> V {
        let mut p = V::ZERO;
        for a in 0..V::DIM {
            let k = (i * 7919 + a as u32 * 104_729) % 1000;
            p = p.with(a, k as f32 * 0.11 + f as f32 * 0.001);
        }
        p
    };
    let hs: Vec<_> = (0..n)
        .map(|i| {
            s.insert(ObjectDesc::new(Shape::sphere(pos(i, 0), 0.6), i))
                .unwrap()
        })
        .collect();
    s.flush();
    let mut pairs = Vec::new();
    let mut frame = |s: &mut S, f: u32| {
        for (i, &h) in hs.iter().enumerate() {
            s.update(h, Shape::sphere(pos(i as u32, f), 0.6)).unwrap();
        }
        s.end_frame();
        s.pairs(&mut pairs);
        pairs.len()
    };
    for f in 1..4 {
        frame(&mut s, f);
    }
    // The iterator forms of the queries, as a game's systems call them.
    let queries = |s: &S| -> usize {
        let mut seen = 0;
        for i in (0..n).step_by(97) {
            let p = pos(i, 4);
            seen += s.objects_within(p, 3.0, Filter::ALL).count();
            let near = V::splat(1.5);
            let room = Aabb::new(p - near, p + near).unwrap();
            // Two iterators alive at once (two pool buffers).
            for ((_, a), (_, b)) in
                s.objects_in(&room, Filter::ALL)
                    .zip(s.nearest(p, 4, Filter::ALL))
            {
                seen += usize::from(a.value != u32::MAX && b.value != u32::MAX);
            }
        }
        seen
    };
    queries(&s);
    let before = allocations();
    let found = frame(&mut s, 4);
    let seen = queries(&s);
    let made = allocations() - before;
    assert!(found > 100, "too few pairs to prove anything: {found}");
    assert!(
        seen > 100,
        "too few objects found to prove anything: {seen}"
    );
    assert_eq!(made, 0, "a warm frame made {made} heap allocations");
}

#[test]
fn a_warm_frame_allocates_nothing_in_any_tree() {
    a_warm_frame_allocates_nothing(Octree::<u32>::new());
    a_warm_frame_allocates_nothing(Quadtree::<u32>::new());
    a_warm_frame_allocates_nothing(LooseOctree::<u32>::new());
    a_warm_frame_allocates_nothing(LooseQuadtree::<u32>::new());
    a_warm_frame_allocates_nothing(Bsp3::<u32>::new());
    a_warm_frame_allocates_nothing(Bsp2::<u32>::new());
}
