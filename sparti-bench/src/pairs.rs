//! The dynamic pairs workload: every frame, update every object's bounds in
//! the structure, then find every overlapping pair with the exact sphere
//! (circle) test. One type per way of driving a structure.

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

use sparti::glam::{Vec2, Vec3};
use sparti::{Handle, ObjectDesc, Shape, SpatialIndex, Vector};

use sparti_cli::catalogue::{Config, IndexJob, Structure};

use crate::scene::{Scene, overlap};

/// One implementation of the workload. `frame` is the timed part: it reads
/// the objects' new centres from the scene (moved by the harness, untimed),
/// updates the structure and writes every overlapping pair as `(i, j)`,
/// `i < j`, object ids being their index in the scene.
pub trait Dynamic<V: Vector> {
    fn setup(&mut self, scene: &Scene<V>);
    fn frame(&mut self, scene: &Scene<V>, out: &mut Vec<(u32, u32)>);
}

#[inline]
fn ordered(a: u32, b: u32) -> (u32, u32) {
    if a < b { (a, b) } else { (b, a) }
}

/// A point as an array, for rstar.
pub trait Dim: Vector {
    type P: rstar::Point<Scalar = f32> + Copy;
    fn p(self) -> Self::P;
}

impl Dim for Vec2 {
    type P = [f32; 2];
    #[inline]
    fn p(self) -> [f32; 2] {
        self.to_array()
    }
}

impl Dim for Vec3 {
    type P = [f32; 3];
    #[inline]
    fn p(self) -> [f32; 3] {
        self.to_array()
    }
}

// ---------------------------------------------------------------- sparti

/// A sparti structure from the catalogue of the `sparti` tool (default
/// settings, the world preset to the region the scene's objects stay in),
/// built at `setup` once the scene is known.
pub struct SpartiDyn<V: Vector> {
    structure: Structure,
    built: Option<Box<dyn Dynamic<V>>>,
}

impl<V: Vector> SpartiDyn<V> {
    pub fn new(structure: Structure) -> Self {
        Self {
            structure,
            built: None,
        }
    }
}

impl<V: Vector> Dynamic<V> for SpartiDyn<V> {
    fn setup(&mut self, scene: &Scene<V>) {
        let mut built = Config::default_of(self.structure)
            .build(Some(scene.world()), Filled)
            .expect("valid configuration");
        built.setup(scene);
        self.built = Some(built);
    }

    fn frame(&mut self, scene: &Scene<V>, out: &mut Vec<(u32, u32)>) {
        self.built.as_mut().expect("set up").frame(scene, out);
    }
}

/// Hands a structure built by the catalogue to the workload, empty.
struct Filled;

impl<V: Vector> IndexJob<V, u32> for Filled {
    type Output = Box<dyn Dynamic<V>>;
    fn run<S: SpatialIndex<V, u32> + 'static>(self, index: S) -> Self::Output {
        Box::new(SpartiRun {
            index,
            handles: Vec::new(),
        })
    }
}

/// A sparti structure under the workload: `SpatialIndex::update` for every
/// object, `end_frame`, then `for_each_pair` (its exact test is the same
/// sphere test).
struct SpartiRun<S> {
    index: S,
    handles: Vec<Handle>,
}

impl<V: Vector, S: SpatialIndex<V, u32>> Dynamic<V> for SpartiRun<S> {
    fn setup(&mut self, scene: &Scene<V>) {
        assert!(self.index.is_empty(), "set up once");
        let descs = (0..scene.len())
            .map(|i| ObjectDesc::new(Shape::Sphere(scene.sphere(i)), i as u32))
            .collect();
        self.handles = self.index.insert_many(descs).expect("valid spheres");
        self.index.flush();
    }

    fn frame(&mut self, scene: &Scene<V>, out: &mut Vec<(u32, u32)>) {
        let index = &mut self.index;
        for (i, &h) in self.handles.iter().enumerate() {
            index
                .update(h, Shape::Sphere(scene.sphere(i)))
                .expect("inside the world");
        }
        index.end_frame();
        out.clear();
        index.for_each_pair(|_, _, a, b| out.push(ordered(a.value, b.value)));
    }
}

// ---------------------------------------------------------------- parry3d

fn parry_aabb(scene: &Scene<Vec3>, i: usize) -> parry3d::bounding_volume::Aabb {
    let (c, r) = (scene.center(i), scene.sphere(i).radius);
    parry3d::bounding_volume::Aabb::new(
        parry3d::math::Vector::new(c.x - r, c.y - r, c.z - r),
        parry3d::math::Vector::new(c.x + r, c.y + r, c.z + r),
    )
}

/// parry3d's `Bvh`: `insert_or_update_partially` for every leaf (no margin),
/// `refit`, then `traverse_bvtt_single_tree` (the tree against itself) with
/// the exact sphere test on each leaf pair.
#[derive(Default)]
pub struct ParryDyn {
    bvh: parry3d::partitioning::Bvh,
    ws: parry3d::partitioning::BvhWorkspace,
}

impl Dynamic<Vec3> for ParryDyn {
    fn setup(&mut self, scene: &Scene<Vec3>) {
        let leaves: Vec<_> = (0..scene.len()).map(|i| parry_aabb(scene, i)).collect();
        self.bvh = parry3d::partitioning::Bvh::from_leaves(
            parry3d::partitioning::BvhBuildStrategy::Binned,
            &leaves,
        );
    }

    fn frame(&mut self, scene: &Scene<Vec3>, out: &mut Vec<(u32, u32)>) {
        for i in 0..scene.len() {
            self.bvh
                .insert_or_update_partially(parry_aabb(scene, i), i as u32, 0.0);
        }
        self.bvh.refit(&mut self.ws);
        out.clear();
        self.bvh
            .traverse_bvtt_single_tree::<false>(&mut self.ws, &mut |a, b| {
                if overlap(scene, a as usize, b as usize) {
                    out.push(ordered(a, b));
                }
            });
    }
}

// ---------------------------------------------------------------- rapier3d

/// A fast hasher for the pair set (FxHash's multiply).
#[derive(Default)]
pub struct Fx(u64);

impl Hasher for Fx {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    #[inline]
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

type FxSet = HashSet<u64, BuildHasherDefault<Fx>>;

/// rapier3d's `BroadPhaseBvh` on its own: every frame each collider's
/// translation is set, `BroadPhaseBvh::update` is given every collider as
/// modified, its `AddPair`/`DeletePair` events maintain the candidate pair
/// set (as the narrow phase does), and the exact sphere test runs on every
/// candidate. A `CollisionPipeline` step at setup (untimed, with a
/// throw-away broad and narrow phase) clears the colliders' creation flags,
/// which only the pipelines can clear: otherwise every update removes and
/// re-inserts every leaf (the change-flag caveat of the issue). The
/// colliders have no rigid body (they count as fixed), so they are built
/// with `ActiveCollisionTypes::all()`, without which the broad phase drops
/// fixed-fixed pairs.
#[derive(Default)]
pub struct RapierDyn {
    colliders: rapier3d::prelude::ColliderSet,
    bodies: rapier3d::prelude::RigidBodySet,
    bp: rapier3d::prelude::BroadPhaseBvh,
    params: rapier3d::prelude::IntegrationParameters,
    handles: Vec<rapier3d::prelude::ColliderHandle>,
    /// Collider arena index to object id.
    id_of: Vec<u32>,
    events: Vec<rapier3d::prelude::BroadPhasePairEvent>,
    candidates: FxSet,
}

#[inline]
fn rapier_vec(v: Vec3) -> rapier3d::math::Vector {
    rapier3d::math::Vector::new(v.x, v.y, v.z)
}

impl Dynamic<Vec3> for RapierDyn {
    fn setup(&mut self, scene: &Scene<Vec3>) {
        use rapier3d::prelude::*;
        for i in 0..scene.len() {
            // Colliders without a body count as fixed: fixed-fixed pairs
            // must be enabled for the broad phase to report them.
            let c = ColliderBuilder::ball(scene.sphere(i).radius)
                .translation(rapier_vec(scene.center(i)))
                .active_collision_types(ActiveCollisionTypes::all())
                .build();
            let h = self.colliders.insert(c);
            let idx = h.into_raw_parts().0 as usize;
            if self.id_of.len() <= idx {
                self.id_of.resize(idx + 1, u32::MAX);
            }
            self.id_of[idx] = i as u32;
            self.handles.push(h);
        }
        // Clears the creation flags (PARENT, GROUPS, ...): see the type's doc.
        CollisionPipeline::new().step(
            0.0,
            &mut IslandManager::new(),
            &mut BroadPhaseBvh::new(),
            &mut NarrowPhase::new(),
            &mut self.bodies,
            &mut self.colliders,
            &(),
            &(),
        );
    }

    fn frame(&mut self, scene: &Scene<Vec3>, out: &mut Vec<(u32, u32)>) {
        use rapier3d::prelude::BroadPhasePairEvent;
        for (i, &h) in self.handles.iter().enumerate() {
            self.colliders
                .get_mut(h)
                .expect("live collider")
                .set_translation(rapier_vec(scene.center(i)));
        }
        // Drops the set's own modified list: every collider is passed below.
        let _ = self.colliders.take_modified();
        self.events.clear();
        self.bp.update(
            &self.params,
            &self.colliders,
            &self.bodies,
            &self.handles,
            &[],
            &mut self.events,
        );
        for e in &self.events {
            let (p, add) = match e {
                BroadPhasePairEvent::AddPair(p) => (p, true),
                BroadPhasePairEvent::DeletePair(p) => (p, false),
            };
            let a = self.id_of[p.collider1.into_raw_parts().0 as usize];
            let b = self.id_of[p.collider2.into_raw_parts().0 as usize];
            let (a, b) = ordered(a, b);
            let key = (u64::from(a) << 32) | u64::from(b);
            if add {
                self.candidates.insert(key);
            } else {
                self.candidates.remove(&key);
            }
        }
        out.clear();
        for &key in &self.candidates {
            let (a, b) = ((key >> 32) as u32, key as u32);
            if overlap(scene, a as usize, b as usize) {
                out.push((a, b));
            }
        }
    }
}

// ---------------------------------------------------------------- rstar

pub type RItem<V> =
    rstar::primitives::GeomWithData<rstar::primitives::Rectangle<<V as Dim>::P>, u32>;

pub fn rstar_item<V: Dim>(scene: &Scene<V>, i: usize) -> RItem<V> {
    let (c, r) = (scene.center(i), scene.sphere(i).radius);
    rstar::primitives::GeomWithData::new(
        rstar::primitives::Rectangle::from_corners((c - V::splat(r)).p(), (c + V::splat(r)).p()),
        i as u32,
    )
}

/// rstar: `RTree::bulk_load` of every object's box each frame (an R-tree
/// cannot move an object in place), then the tree joined with itself
/// (`intersection_candidates_with_other_tree`), keeping `i < j`, exact test.
#[derive(Default)]
pub struct RstarDyn;

impl<V: Dim> Dynamic<V> for RstarDyn {
    fn setup(&mut self, _scene: &Scene<V>) {}

    fn frame(&mut self, scene: &Scene<V>, out: &mut Vec<(u32, u32)>) {
        let items: Vec<RItem<V>> = (0..scene.len()).map(|i| rstar_item(scene, i)).collect();
        let tree = rstar::RTree::bulk_load(items);
        out.clear();
        for (a, b) in tree.intersection_candidates_with_other_tree(&tree) {
            if a.data < b.data && overlap(scene, a.data as usize, b.data as usize) {
                out.push((a.data, b.data));
            }
        }
    }
}

// ---------------------------------------------------------------- bvh

/// An object for the `bvh` crate: its box, id and node index.
#[derive(Clone)]
pub struct BShape {
    pub aabb: bvh::aabb::Aabb<f32, 3>,
    pub id: u32,
    node: usize,
}

impl bvh::aabb::Bounded<f32, 3> for BShape {
    fn aabb(&self) -> bvh::aabb::Aabb<f32, 3> {
        self.aabb
    }
}

impl bvh::bounding_hierarchy::BHShape<f32, 3> for BShape {
    fn set_bh_node_index(&mut self, i: usize) {
        self.node = i;
    }
    fn bh_node_index(&self) -> usize {
        self.node
    }
}

#[inline]
pub fn na_point(v: Vec3) -> nalgebra::Point3<f32> {
    nalgebra::Point3::new(v.x, v.y, v.z)
}

pub fn bvh_shape(c: Vec3, r: f32, id: u32) -> BShape {
    BShape {
        aabb: bvh::aabb::Aabb::with_bounds(
            na_point(c - Vec3::splat(r)),
            na_point(c + Vec3::splat(r)),
        ),
        id,
        node: 0,
    }
}

/// The `bvh` crate: it has no refit, so `Bvh::build` every frame (single
/// thread: the crate's `rayon` feature is off), then one `traverse` (the
/// allocating, recursive one: the non-allocating iterator panics past
/// depth 32) per object with its box, keeping `i < j`, exact test.
#[derive(Default)]
pub struct BvhDyn {
    shapes: Vec<BShape>,
}

impl Dynamic<Vec3> for BvhDyn {
    fn setup(&mut self, scene: &Scene<Vec3>) {
        self.shapes = (0..scene.len())
            .map(|i| bvh_shape(scene.center(i), scene.sphere(i).radius, i as u32))
            .collect();
    }

    fn frame(&mut self, scene: &Scene<Vec3>, out: &mut Vec<(u32, u32)>) {
        for s in &mut self.shapes {
            let i = s.id as usize;
            let (c, r) = (scene.center(i), scene.sphere(i).radius);
            s.aabb = bvh::aabb::Aabb::with_bounds(
                na_point(c - Vec3::splat(r)),
                na_point(c + Vec3::splat(r)),
            );
        }
        let tree = bvh::bvh::Bvh::build(&mut self.shapes);
        out.clear();
        for s in &self.shapes {
            for o in tree.traverse(&s.aabb, &self.shapes) {
                if s.id < o.id && overlap(scene, s.id as usize, o.id as usize) {
                    out.push((s.id, o.id));
                }
            }
        }
    }
}

// ---------------------------------------------------------------- broccoli

/// broccoli (2D): `Tree::new` on every object's rectangle each frame (its
/// trees are built per frame by design), then `find_colliding_pairs`, exact
/// circle test.
#[derive(Default)]
pub struct BroccoliDyn {
    rects: Vec<(broccoli::axgeom::Rect<f32>, u32)>,
}

impl Dynamic<Vec2> for BroccoliDyn {
    fn setup(&mut self, _scene: &Scene<Vec2>) {}

    fn frame(&mut self, scene: &Scene<Vec2>, out: &mut Vec<(u32, u32)>) {
        self.rects.clear();
        self.rects.extend((0..scene.len()).map(|i| {
            let (c, r) = (scene.center(i), scene.sphere(i).radius);
            (broccoli::rect(c.x - r, c.x + r, c.y - r, c.y + r), i as u32)
        }));
        out.clear();
        let mut tree = broccoli::Tree::new(&mut self.rects);
        tree.find_colliding_pairs(|a, b| {
            let (a, b) = (*a.unpack_inner(), *b.unpack_inner());
            if overlap(scene, a as usize, b as usize) {
                out.push(ordered(a, b));
            }
        });
    }
}
