//! Queries on static spheres (ray nearest hit, box query, frustum culling,
//! k nearest), one type per way of driving a structure. The exact tests are sparti's own
//! (`Ray::cast_sphere`, `Aabb::intersects_sphere`,
//! `Frustum::intersects_sphere`), the same for every implementation.

use sparti::glam::Vec3;
use sparti::{Aabb, Filter, Frustum, ObjectDesc, Ray, Shape, SpatialIndex, Sphere};

use sparti_cli::catalogue::{Config, IndexJob, Structure};

use crate::pairs::{BShape, bvh_shape, na_point};
use crate::scene::frustum_hits_box;

/// A nearest hit: object id and distance.
pub type Hit = Option<(u32, f32)>;

/// The distance from a point to a sphere's surface (0 inside): sparti's
/// own (`Shape::distance_to_point`), the same for every implementation.
#[inline]
fn sphere_distance(s: &Sphere<Vec3>, p: Vec3) -> f32 {
    Shape::Sphere(*s).distance_to_point(p)
}

pub trait Static3 {
    /// Builds the structure (untimed for the queries).
    fn build(&mut self, spheres: &[Sphere<Vec3>]);
    fn ray(&mut self, ray: &Ray<Vec3>, max: f32) -> Hit;
    fn boxq(&mut self, b: &Aabb<Vec3>) -> usize;
    fn frustum(&mut self, f: &Frustum<Vec3>) -> usize;
    /// The `k` objects nearest to `p` (by the distance to the sphere's
    /// surface, ties to the smaller id), nearest first, into `out`; false
    /// where the implementation has no k-nearest query.
    fn nearest(&mut self, _p: Vec3, _k: usize, _out: &mut Vec<(u32, f32)>) -> bool {
        false
    }
}

// ---------------------------------------------------------------- sparti

/// A sparti structure from the catalogue of the `sparti` tool (default
/// settings, the world preset): `insert_many` + `flush`, then
/// `ray_nearest`, `query_aabb`, `query_frustum` into a reused `Vec`.
pub struct SpartiStatic<S> {
    index: S,
    out: Vec<sparti::Handle>,
    near: Vec<sparti::Neighbor>,
}

/// The catalogue's `structure` over `world`, empty, for the query
/// workloads.
pub fn sparti_static(structure: Structure, world: Aabb<Vec3>) -> Box<dyn Static3> {
    Config::default_of(structure)
        .build(Some(world), Empty)
        .expect("valid configuration")
}

/// Hands a structure built by the catalogue to the query workloads.
struct Empty;

impl IndexJob<Vec3, u32> for Empty {
    type Output = Box<dyn Static3>;
    fn run<S: SpatialIndex<Vec3, u32> + 'static>(self, index: S) -> Self::Output {
        Box::new(SpartiStatic {
            index,
            out: Vec::new(),
            near: Vec::new(),
        })
    }
}

/// The objects as sparti descriptions, ids = indices.
pub fn descs(spheres: &[Sphere<Vec3>]) -> Vec<ObjectDesc<Vec3, u32>> {
    spheres
        .iter()
        .enumerate()
        .map(|(i, s)| ObjectDesc::new(Shape::Sphere(*s), i as u32))
        .collect()
}

impl<S: SpatialIndex<Vec3, u32>> Static3 for SpartiStatic<S> {
    fn build(&mut self, spheres: &[Sphere<Vec3>]) {
        assert!(self.index.is_empty(), "built once");
        self.index
            .insert_many(descs(spheres))
            .expect("valid spheres");
        self.index.flush();
    }
    fn ray(&mut self, ray: &Ray<Vec3>, max: f32) -> Hit {
        let index = &mut self.index;
        let h = index.ray_nearest(ray, max, Filter::ALL)?;
        Some((index.get(h.handle).expect("live").value, h.distance))
    }
    fn boxq(&mut self, b: &Aabb<Vec3>) -> usize {
        let index = &mut self.index;
        index.query_aabb(b, Filter::ALL, &mut self.out);
        self.out.len()
    }
    fn frustum(&mut self, f: &Frustum<Vec3>) -> usize {
        let index = &mut self.index;
        index.query_frustum(f, Filter::ALL, &mut self.out);
        self.out.len()
    }
    fn nearest(&mut self, p: Vec3, k: usize, out: &mut Vec<(u32, f32)>) -> bool {
        let index = &self.index;
        index.nearest_k(p, k, Filter::ALL, &mut self.near);
        out.clear();
        out.extend(
            self.near
                .iter()
                .map(|n| (index.get(n.handle).expect("live").value, n.distance)),
        );
        true
    }
}

// ---------------------------------------------------------------- parry3d

#[inline]
fn pv(v: Vec3) -> parry3d::math::Vector {
    parry3d::math::Vector::new(v.x, v.y, v.z)
}

#[inline]
fn gv(v: parry3d::math::Vector) -> Vec3 {
    Vec3::new(v.x, v.y, v.z)
}

pub fn parry_leaves(spheres: &[Sphere<Vec3>]) -> Vec<parry3d::bounding_volume::Aabb> {
    spheres
        .iter()
        .map(|s| {
            let b = s.aabb();
            parry3d::bounding_volume::Aabb::new(pv(b.min), pv(b.max))
        })
        .collect()
}

/// parry3d's `Bvh` (`from_leaves`, binned SAH): `cast_ray` with the exact
/// ray-sphere test as the leaf cost, `intersect_aabb` then the exact test,
/// `leaves` with sparti's frustum-box test on the nodes then the exact test.
/// The query is converted to parry's glam (0.33, through glamx) per query;
/// nodes' corners are converted back for the frustum test, per node.
#[derive(Default)]
pub struct ParryStatic {
    bvh: parry3d::partitioning::Bvh,
    spheres: Vec<Sphere<Vec3>>,
}

impl Static3 for ParryStatic {
    fn build(&mut self, spheres: &[Sphere<Vec3>]) {
        self.spheres = spheres.to_vec();
        self.bvh = parry3d::partitioning::Bvh::from_leaves(
            parry3d::partitioning::BvhBuildStrategy::Binned,
            &parry_leaves(spheres),
        );
    }
    fn ray(&mut self, ray: &Ray<Vec3>, max: f32) -> Hit {
        let pray = parry3d::query::Ray::new(pv(ray.origin), pv(ray.dir));
        let spheres = &self.spheres;
        self.bvh.cast_ray(&pray, max, |leaf, best| {
            ray.cast_sphere(&spheres[leaf as usize], best)
                .map(|h| h.distance)
        })
    }
    fn boxq(&mut self, b: &Aabb<Vec3>) -> usize {
        let q = parry3d::bounding_volume::Aabb::new(pv(b.min), pv(b.max));
        self.bvh
            .intersect_aabb(&q)
            .filter(|&i| b.intersects_sphere(&self.spheres[i as usize]))
            .count()
    }
    fn frustum(&mut self, f: &Frustum<Vec3>) -> usize {
        self.bvh
            .leaves(|n: &parry3d::partitioning::BvhNode| {
                frustum_hits_box(f, gv(n.mins()), gv(n.maxs()))
            })
            .filter(|&i| f.intersects_sphere(&self.spheres[i as usize]))
            .count()
    }
}

// ---------------------------------------------------------------- rstar

type Item = rstar::primitives::GeomWithData<rstar::primitives::Rectangle<[f32; 3]>, u32>;

pub fn rstar_items(spheres: &[Sphere<Vec3>]) -> Vec<Item> {
    spheres
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let b = s.aabb();
            rstar::primitives::GeomWithData::new(
                rstar::primitives::Rectangle::from_corners(b.min.to_array(), b.max.to_array()),
                i as u32,
            )
        })
        .collect()
}

#[inline]
fn env_box(e: &rstar::AABB<[f32; 3]>) -> Aabb<Vec3> {
    Aabb {
        min: Vec3::from_array(e.lower()),
        max: Vec3::from_array(e.upper()),
    }
}

/// Selects the nodes and leaves a ray segment crosses.
struct RaySel<'a> {
    ray: &'a Ray<Vec3>,
    max: f32,
}

impl rstar::SelectionFunction<Item> for RaySel<'_> {
    fn should_unpack_parent(&self, e: &rstar::AABB<[f32; 3]>) -> bool {
        self.ray.clip_aabb(&env_box(e), self.max).is_some()
    }
    fn should_unpack_leaf(&self, leaf: &Item) -> bool {
        use rstar::RTreeObject;
        self.ray
            .clip_aabb(&env_box(&leaf.envelope()), self.max)
            .is_some()
    }
}

/// Selects the nodes and leaves a frustum does not exclude.
struct FrustumSel<'a>(&'a Frustum<Vec3>);

impl rstar::SelectionFunction<Item> for FrustumSel<'_> {
    fn should_unpack_parent(&self, e: &rstar::AABB<[f32; 3]>) -> bool {
        self.0.intersects_aabb(&env_box(e))
    }
}

/// rstar (`bulk_load`): it has no ray query, so the ray is a
/// `SelectionFunction` (nodes whose box the segment crosses, sparti's
/// `Ray::clip_aabb`) and the nearest exact hit among the leaves found (no
/// early exit); `locate_in_envelope_intersecting` then the exact test for
/// boxes; a frustum `SelectionFunction` then the exact test; the k
/// nearest from `nearest_neighbor_iter_with_distance_2` (the leaves by the
/// distance to their boxes), each tested exactly, until a box lies beyond
/// the k-th best.
#[derive(Default)]
pub struct RstarStatic {
    tree: rstar::RTree<Item>,
    spheres: Vec<Sphere<Vec3>>,
}

impl Static3 for RstarStatic {
    fn build(&mut self, spheres: &[Sphere<Vec3>]) {
        self.spheres = spheres.to_vec();
        self.tree = rstar::RTree::bulk_load(rstar_items(spheres));
    }
    fn ray(&mut self, ray: &Ray<Vec3>, max: f32) -> Hit {
        let mut best: Hit = None;
        for it in self
            .tree
            .locate_with_selection_function(RaySel { ray, max })
        {
            let limit = best.map_or(max, |b| b.1);
            if let Some(h) = ray.cast_sphere(&self.spheres[it.data as usize], limit)
                && best.is_none_or(|b| h.distance < b.1 || (h.distance == b.1 && it.data < b.0))
            {
                best = Some((it.data, h.distance));
            }
        }
        best
    }
    fn boxq(&mut self, b: &Aabb<Vec3>) -> usize {
        let env = rstar::AABB::from_corners(b.min.to_array(), b.max.to_array());
        self.tree
            .locate_in_envelope_intersecting(env)
            .filter(|it| b.intersects_sphere(&self.spheres[it.data as usize]))
            .count()
    }
    fn frustum(&mut self, f: &Frustum<Vec3>) -> usize {
        self.tree
            .locate_with_selection_function(FrustumSel(f))
            .filter(|it| f.intersects_sphere(&self.spheres[it.data as usize]))
            .count()
    }
    fn nearest(&mut self, p: Vec3, k: usize, out: &mut Vec<(u32, f32)>) -> bool {
        out.clear();
        if k == 0 {
            return true;
        }
        let better = |a: &(u32, f32), b: &(u32, f32)| a.1 < b.1 || (a.1 == b.1 && a.0 < b.0);
        for (it, d2) in self
            .tree
            .nearest_neighbor_iter_with_distance_2(p.to_array())
        {
            // A box beyond the k-th best holds nothing better, nor does
            // any box after it.
            if out.len() == k && d2.sqrt() > out[k - 1].1 {
                break;
            }
            let c = (it.data, sphere_distance(&self.spheres[it.data as usize], p));
            if out.len() == k {
                if !better(&c, &out[k - 1]) {
                    continue;
                }
                out.pop();
            }
            let at = out.partition_point(|x| better(x, &c));
            out.insert(at, c);
        }
        true
    }
}

// ---------------------------------------------------------------- bvh

struct BvhFrustum<'a>(&'a Frustum<Vec3>);

impl bvh::aabb::IntersectsAabb<f32, 3> for BvhFrustum<'_> {
    fn intersects_aabb(&self, b: &bvh::aabb::Aabb<f32, 3>) -> bool {
        frustum_hits_box(
            self.0,
            Vec3::new(b.min.x, b.min.y, b.min.z),
            Vec3::new(b.max.x, b.max.y, b.max.z),
        )
    }
}

pub fn bvh_shapes(spheres: &[Sphere<Vec3>]) -> Vec<BShape> {
    spheres
        .iter()
        .enumerate()
        .map(|(i, s)| bvh_shape(s.center, s.radius, i as u32))
        .collect()
}

/// The `bvh` crate (`Bvh::build`, single thread): `nearest_traverse_iterator`
/// (leaves in order of the distance at which the ray enters their box),
/// stopping once a box is entered beyond the best hit; `traverse` (the
/// allocating, recursive one) with the query box or the frustum, then the
/// exact test.
#[derive(Default)]
pub struct BvhStatic {
    tree: Option<bvh::bvh::Bvh<f32, 3>>,
    shapes: Vec<BShape>,
    spheres: Vec<Sphere<Vec3>>,
}

impl Static3 for BvhStatic {
    fn build(&mut self, spheres: &[Sphere<Vec3>]) {
        self.spheres = spheres.to_vec();
        self.shapes = bvh_shapes(spheres);
        self.tree = Some(bvh::bvh::Bvh::build(&mut self.shapes));
    }
    fn ray(&mut self, ray: &Ray<Vec3>, max: f32) -> Hit {
        let tree = self.tree.as_ref().expect("built");
        let bray = bvh::ray::Ray::new(
            na_point(ray.origin),
            nalgebra::Vector3::new(ray.dir.x, ray.dir.y, ray.dir.z),
        );
        let mut best: Hit = None;
        for s in tree.nearest_traverse_iterator(&bray, &self.shapes) {
            let limit = best.map_or(max, |b| b.1);
            let b = &s.aabb;
            let entry = ray.clip_aabb(
                &Aabb {
                    min: Vec3::new(b.min.x, b.min.y, b.min.z),
                    max: Vec3::new(b.max.x, b.max.y, b.max.z),
                },
                max,
            );
            match entry {
                Some((t0, _)) if t0 > limit => break,
                None => continue,
                _ => {}
            }
            if let Some(h) = ray.cast_sphere(&self.spheres[s.id as usize], limit)
                && best.is_none_or(|b| h.distance < b.1 || (h.distance == b.1 && s.id < b.0))
            {
                best = Some((s.id, h.distance));
            }
        }
        best
    }
    fn boxq(&mut self, b: &Aabb<Vec3>) -> usize {
        let tree = self.tree.as_ref().expect("built");
        let q = bvh::aabb::Aabb::with_bounds(na_point(b.min), na_point(b.max));
        tree.traverse(&q, &self.shapes)
            .into_iter()
            .filter(|s| b.intersects_sphere(&self.spheres[s.id as usize]))
            .count()
    }
    fn frustum(&mut self, f: &Frustum<Vec3>) -> usize {
        let tree = self.tree.as_ref().expect("built");
        tree.traverse(&BvhFrustum(f), &self.shapes)
            .into_iter()
            .filter(|s| f.intersects_sphere(&self.spheres[s.id as usize]))
            .count()
    }
}
