//! Saving and loading with the `serde` feature: an index's objects, as
//! descriptions, through JSON, into another structure, give the same
//! objects and the same pairs; settings, filters and layer matrices
//! round-trip too.
#![cfg(feature = "serde")]

use glam::{Vec2, Vec3};
use sparti::{
    Aabb, Bsp2, BspConfig, Filter, LayerMatrix, LooseConfig, LooseOctree, ObjectDesc, Octree,
    OrthtreeConfig, OutOfBounds, Quadtree, Shape, SpatialIndex,
};

/// The pairs of an index as sorted value pairs.
fn value_pairs<S: SpatialIndex<V, u32>, V: sparti::Vector>(s: &S) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    s.for_each_pair(|_, _, a, b| out.push((a.value.min(b.value), a.value.max(b.value))));
    out.sort_unstable();
    out
}

#[test]
fn a_saved_index_loads_into_any_structure_with_the_same_objects_and_pairs() {
    let mut r = crate::common::rng(7);
    let mut tree = Quadtree::<u32>::new();
    for i in 0..500u32 {
        let p: Vec2 = crate::common::vec_in(&mut r, Vec2::ZERO, Vec2::splat(60.0));
        let shape = if i % 3 == 0 {
            Shape::rect(p, Vec2::new(1.0, 0.5))
        } else {
            Shape::circle(p, 0.5 + (i % 7) as f32 * 0.2)
        };
        let d = ObjectDesc::new(shape, i)
            .with_layer(1 << (i % 3))
            .with_mask(if i % 5 == 0 { 1 } else { u32::MAX })
            .with_static(i % 4 == 0);
        tree.insert(d).unwrap();
    }
    tree.flush();
    let saved: Vec<ObjectDesc<Vec2, u32>> = tree.objects().map(|(_, o)| o.to_desc()).collect();
    let json = serde_json::to_string(&saved).unwrap();
    let back: Vec<ObjectDesc<Vec2, u32>> = serde_json::from_str(&json).unwrap();
    assert_eq!(back, saved);
    let mut bsp = Bsp2::<u32>::new();
    let handles = bsp.insert_many(back.clone()).unwrap();
    bsp.flush();
    bsp.validate().unwrap();
    for (h, d) in handles.iter().zip(&back) {
        let o = bsp.get(*h).unwrap();
        assert_eq!(o.to_desc(), *d);
    }
    let pairs = value_pairs(&tree);
    assert!(pairs.len() > 20, "the scene has pairs");
    assert_eq!(value_pairs(&bsp), pairs);
}

#[test]
fn settings_filters_and_layer_matrices_round_trip() {
    let world = Aabb::new(Vec3::splat(-10.0), Vec3::splat(10.0)).unwrap();
    let oc = OrthtreeConfig {
        world: Some(world),
        min_node_size: 2.0,
        out_of_bounds: OutOfBounds::Reject,
    };
    let j = serde_json::to_string(&oc).unwrap();
    assert_eq!(
        serde_json::from_str::<OrthtreeConfig<Vec3>>(&j).unwrap(),
        oc
    );
    Octree::<u32>::with_config(serde_json::from_str(&j).unwrap()).unwrap();
    let lc = LooseConfig::<Vec3> {
        min_node_size: 3.0,
        ..Default::default()
    };
    let j = serde_json::to_string(&lc).unwrap();
    assert_eq!(serde_json::from_str::<LooseConfig<Vec3>>(&j).unwrap(), lc);
    LooseOctree::<u32>::with_config(serde_json::from_str(&j).unwrap()).unwrap();
    let bc = BspConfig::<Vec2>::default();
    let j = serde_json::to_string(&bc).unwrap();
    assert_eq!(serde_json::from_str::<BspConfig<Vec2>>(&j).unwrap(), bc);
    let mut m = LayerMatrix::ALL;
    m.set(1, 2, false);
    let j = serde_json::to_string(&m).unwrap();
    assert_eq!(serde_json::from_str::<LayerMatrix>(&j).unwrap(), m);
    let f = Filter::layers(0b101);
    let j = serde_json::to_string(&f).unwrap();
    assert_eq!(serde_json::from_str::<Filter>(&j).unwrap(), f);
}
