//! Memory is given back where the soak test (`tests/soak.rs`) found it was
//! not: a pruned node kept the largest item list it ever held, in the free
//! pool, for ever. (Nodes now hold blocks of the kernel's one array of
//! lists, whose room is recycled and which shrinks when it holds room for
//! more than three times the objects.)

use sparti::{
    Bsp2, Bsp3, LooseOctree, LooseQuadtree, ObjectDesc, Octree, Quadtree, Shape, SpatialIndex,
    Vector,
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
