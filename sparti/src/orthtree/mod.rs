//! The orthtrees: the octree (S1, 3D) and the quadtree (S2, 2D), one
//! generic source.
//!
//! Split by operation, one `impl` block a file: `insert.rs` (lazy bulk build,
//! placement, growth), `update.rs` (moves, removal, pruning), `queries.rs`,
//! `pairs.rs`, `validate.rs` (invariants and statistics).

mod insert;
mod pairs;
mod update;
mod validate;

use glam::{Vec2, Vec3};

use crate::geometry::{Aabb, Ray, Region, Shape, Vector};
use crate::index::{Item, Neighbor};
use crate::store::{NONE, Store};
use crate::traverse::{Scratch, SubBounds, Tree, TreeNode};
use crate::{
    Counters, Error, Filter, Handle, LayerMatrix, Object, ObjectDesc, RayHit, SpatialIndex,
    TreeStats, ValidationError,
};

pub(crate) use crate::index::{MAX_COORDINATE, within_limits};

/// What an orthtree does with an object outside its root region (L4).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OutOfBounds {
    /// The root doubles towards the object until it holds it (default).
    #[default]
    Grow,
    /// The insertion or update fails with [`Error::OutsideWorld`]; the object
    /// stays as it was.
    Reject,
    /// An update that leaves the world removes the object and files its
    /// handle and value in [`Orthtree::take_evicted`]; an insertion outside
    /// the world fails with [`Error::OutsideWorld`].
    Remove,
}

/// Settings of an [`Orthtree`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OrthtreeConfig<V: Vector> {
    /// The region the root must enclose at first. `None`: the bounds of the
    /// objects of the first build.
    pub world: Option<Aabb<V>>,
    /// Nodes whose side is at most this do not split (default 1). The root's
    /// side is this times a power of two.
    pub min_node_size: f32,
    /// What happens to objects outside the root region.
    pub out_of_bounds: OutOfBounds,
}

impl<V: Vector> Default for OrthtreeConfig<V> {
    fn default() -> Self {
        Self {
            world: None,
            min_node_size: 1.0,
            out_of_bounds: OutOfBounds::Grow,
        }
    }
}

/// Frames an empty leaf lives at first (L5).
pub(crate) const FIRST_LIFESPAN: u8 = 8;
/// The longest lifespan an empty leaf can earn by being reused (L5).
pub(crate) const MAX_LIFESPAN: u8 = 64;
/// The item capacity a pruned node keeps for its reuse. Without a cap,
/// every pooled node kept the largest item list it ever held, and a steady
/// stream of objects made memory creep up for ever (the soak test saw +43%
/// between frames 10,000 and 100,000).
pub(crate) const FREED_ITEMS_CAPACITY: usize = 8;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NodeState {
    /// In the tree, holding objects or children (or the root).
    Live,
    /// In the tree, empty, counting down to its pruning.
    Idle,
    /// On the free list.
    Free,
}

/// A node of the pool. Children are indices into the pool, `NONE` if absent.
#[derive(Clone, Debug)]
pub(crate) struct Node<V: Vector> {
    /// The node's region (tight).
    pub bounds: Aabb<V>,
    /// The split point: the children's shared corner. Stored, not recomputed,
    /// so children tile their parent exactly even after the root grows.
    pub center: V,
    /// The objects filed here.
    pub items: Vec<Item<V>>,
    /// Child `k` covers the half of each axis `i` given by bit `i` of `k`
    /// (set: the upper half).
    pub children: [u32; 8],
    pub parent: u32,
    /// `log2(side / min_node_size)`: 0 for nodes that cannot split.
    pub level: u16,
    pub child_count: u8,
    pub state: NodeState,
    /// Frames an empty leaf lives before it is pruned (8, doubling to 64).
    pub lifespan: u8,
    /// Frames spent idle so far.
    pub idle_frames: u8,
    /// True while the node has an entry in the idle list.
    pub listed: bool,
}

/// A dynamic octree (3D) or quadtree (2D): the tree of the octree article,
/// with every node split into `2^DIM` equal children created only where
/// objects are.
///
/// - The root is a cube (square) whose side is `min_node_size` times a power
///   of two, enclosing the world; it doubles when an object leaves it (L4).
/// - An object lives in the deepest node that fully contains it; a leaf
///   holding one object does not split, nor does a node of the minimum size.
/// - Insertions are queued and built in one pass on the next query (L2).
/// - A moved object climbs to the first ancestor that contains it, then
///   sinks as deep as it fits (L3).
/// - Empty leaves are pruned after 8 idle frames; a leaf reused before its
///   death doubles its lifespan, up to 64 (L5).
///
/// Pairs are found in one pass: the objects of a node against each other
/// and against those of its ancestors (P1).
///
/// # Memory layout
/// Nodes live in one pool addressed by `u32` index with a free list; each
/// node keeps its objects' boxes in its own `Vec`, reused when the node is.
///
/// # Example
/// ```
/// use glam::Vec3;
/// use sparti::{ObjectDesc, Octree, OrthtreeConfig, Shape, SpatialIndex};
/// let mut tree = Octree::with_config(OrthtreeConfig { min_node_size: 2.0, ..Default::default() }).unwrap();
/// for i in 0..100 {
///     let p = Vec3::new(i as f32 * 3.0, 0.0, 0.0);
///     tree.insert(ObjectDesc::new(Shape::sphere(p, 1.0), i)).unwrap();
/// }
/// tree.flush(); // the lazy build, otherwise done by the first query
/// tree.validate().unwrap();
/// assert!(tree.stats().max_depth > 3);
/// ```
pub struct Orthtree<V: Vector, T> {
    config: OrthtreeConfig<V>,
    store: Store<Object<V, T>>,
    nodes: Vec<Node<V>>,
    free_nodes: Vec<u32>,
    root: u32,
    /// Objects inserted but not yet built into the tree (L2).
    pending: Vec<u32>,
    /// Empty leaves counting down (L5).
    idle: Vec<u32>,
    /// A spare buffer for `idle` while it is aged.
    idle_spare: Vec<u32>,
    /// Objects removed by the `Remove` policy, for the caller to collect.
    evicted: Vec<(Handle, T)>,
    matrix: LayerMatrix,
    counters: Counters,
    /// Buffers of the shared queries.
    scratch: Scratch,
    /// The boxes around the subtrees' objects, for the queries.
    sub: SubBounds<V>,
    // Scratch buffers, kept to avoid allocating per operation.
    work: Vec<(u32, u32)>,
    stack: Vec<(u32, u32)>,
    ancestors: Vec<Item<V>>,
    sorted: Vec<Item<V>>,
    pair_stack: Vec<(u32, u32, u32)>,
}

/// The octree (S1).
pub type Octree<T = ()> = Orthtree<Vec3, T>;
/// The quadtree (S2).
pub type Quadtree<T = ()> = Orthtree<Vec2, T>;

impl<V: Vector, T> Default for Orthtree<V, T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<V: Vector, T> Orthtree<V, T> {
    /// An empty tree with the default settings.
    pub fn new() -> Self {
        Self::with_config(OrthtreeConfig::default()).expect("the default configuration is valid")
    }

    /// An empty tree with the given settings.
    ///
    /// # Errors
    /// [`Error::InvalidConfig`] for a minimum node size that is not finite,
    /// not positive or above [`MAX_COORDINATE`](crate::MAX_COORDINATE), or a
    /// world box that is malformed or beyond it.
    pub fn with_config(config: OrthtreeConfig<V>) -> Result<Self, Error> {
        let m = config.min_node_size;
        if !(m.is_finite() && m > 0.0 && m <= MAX_COORDINATE) {
            return Err(Error::InvalidConfig(
                "min_node_size must be finite, > 0 and <= 2^60",
            ));
        }
        if let Some(w) = &config.world {
            if w.check().is_err() || !within_limits(w) {
                return Err(Error::InvalidConfig(
                    "world must be a finite box within +-2^60",
                ));
            }
        }
        Ok(Self {
            config,
            store: Store::default(),
            nodes: Vec::new(),
            free_nodes: Vec::new(),
            root: NONE,
            pending: Vec::new(),
            idle: Vec::new(),
            idle_spare: Vec::new(),
            evicted: Vec::new(),
            matrix: LayerMatrix::ALL,
            counters: Counters::default(),
            scratch: Scratch::default(),
            sub: SubBounds::default(),
            work: Vec::new(),
            stack: Vec::new(),
            ancestors: Vec::new(),
            sorted: Vec::new(),
            pair_stack: Vec::new(),
        })
    }

    /// The settings.
    pub fn config(&self) -> &OrthtreeConfig<V> {
        &self.config
    }

    /// The root region, once the tree is built.
    pub fn root_bounds(&self) -> Option<Aabb<V>> {
        (self.root != NONE).then(|| self.nodes[self.root as usize].bounds)
    }

    /// Takes the objects removed by the [`OutOfBounds::Remove`] policy since
    /// the last call, with their values.
    pub fn take_evicted(&mut self) -> Vec<(Handle, T)> {
        core::mem::take(&mut self.evicted)
    }

    /// Calls `f(bounds, depth, object_count)` for every node, parents before
    /// children: for drawing the tree (M3).
    fn nodes_depth_first(&self, mut f: impl FnMut(&Aabb<V>, usize, usize)) {
        if self.root == NONE {
            return;
        }
        let root_level = self.nodes[self.root as usize].level as usize;
        let mut stack = vec![self.root];
        while let Some(n) = stack.pop() {
            let node = &self.nodes[n as usize];
            f(
                &node.bounds,
                root_level - node.level as usize,
                node.items.len(),
            );
            stack.extend(node.children.iter().copied().filter(|&c| c != NONE));
        }
    }

    /// The child index of the octant of `node` that holds `aabb`, or `None`
    /// when it touches or straddles a split plane through the node's centre.
    ///
    /// Strict on both sides: an object touching a split plane stays in the
    /// node, so objects of two sibling subtrees are strictly apart and can
    /// never touch; the pair search relies on it.
    #[inline]
    pub(crate) fn octant_of(node: &Node<V>, aabb: &Aabb<V>) -> Option<usize> {
        let mut k = 0;
        for i in 0..V::DIM {
            let c = node.center.get(i);
            if aabb.min.get(i) > c {
                k |= 1 << i;
            } else if aabb.max.get(i) >= c {
                return None;
            }
        }
        Some(k)
    }

    /// The bounds of child `k` of a node.
    #[inline]
    pub(crate) fn child_bounds(node: &Node<V>, k: usize) -> Aabb<V> {
        let mut b = node.bounds;
        for i in 0..V::DIM {
            if k & (1 << i) != 0 {
                b.min = b.min.with(i, node.center.get(i));
            } else {
                b.max = b.max.with(i, node.center.get(i));
            }
        }
        b
    }
}

impl<V: Vector, T> SpatialIndex<V, T> for Orthtree<V, T> {
    fn insert(&mut self, desc: ObjectDesc<V, T>) -> Result<Handle, Error> {
        let obj = Object::from_desc(desc)?;
        self.admit(&obj.aabb)?;
        let h = self.store.insert(obj)?;
        self.push_pending(h.index);
        Ok(h)
    }

    fn insert_many(&mut self, descs: Vec<ObjectDesc<V, T>>) -> Result<Vec<Handle>, Error> {
        self.sub.mark_stale();
        for d in &descs {
            d.shape.check()?;
            self.admit(&d.shape.aabb())?;
        }
        let mut out = Vec::with_capacity(descs.len());
        self.pending.reserve(descs.len());
        self.store.reserve(descs.len());
        for d in descs {
            out.push(self.insert(d)?);
        }
        Ok(out)
    }

    fn update(&mut self, h: Handle, shape: Shape<V>) -> Result<(), Error> {
        // The object's box may have changed in place in its node: mark it
        // (the nodes it left or entered are marked as it is filed).
        let r = self.update_shape(h, shape);
        if let Ok(slot) = self.store.resolve(h) {
            let n = self.store.slot(slot).node;
            if n != NONE {
                self.sub.mark_node(n);
            }
        }
        r
    }

    fn remove(&mut self, h: Handle) -> Result<T, Error> {
        let slot = self.store.resolve(h)?;
        self.detach(slot);
        Ok(self.store.remove(slot).value)
    }

    fn get(&self, h: Handle) -> Result<&Object<V, T>, Error> {
        self.store.get(h)
    }

    fn value_mut(&mut self, h: Handle) -> Result<&mut T, Error> {
        self.store.value_mut(h)
    }

    fn len(&self) -> usize {
        self.store.len()
    }

    fn objects<'a>(&'a self) -> impl Iterator<Item = (Handle, &'a Object<V, T>)>
    where
        T: 'a,
    {
        self.store.objects()
    }

    fn clear(&mut self) {
        self.sub.mark_stale();
        self.store.clear();
        self.nodes.clear();
        self.free_nodes.clear();
        self.root = NONE;
        self.pending.clear();
        self.idle.clear();
    }

    fn flush(&mut self) {
        self.build_pending();
    }

    fn end_frame(&mut self) {
        self.age_idle_nodes();
    }

    fn query<R: Region<V>>(&mut self, region: &R, filter: Filter, out: &mut Vec<Handle>) {
        self.build_pending();
        self.sub.refresh(&self.nodes, self.root);
        Tree {
            nodes: &self.nodes,
            root: self.root,
            store: &self.store,
            sub: &self.sub,
        }
        .query(&mut self.scratch, &mut self.counters, region, filter, out);
    }

    fn ray_nearest(&mut self, ray: &Ray<V>, max_dist: f32, filter: Filter) -> Option<RayHit<V>> {
        self.build_pending();
        self.sub.refresh(&self.nodes, self.root);
        Tree {
            nodes: &self.nodes,
            root: self.root,
            store: &self.store,
            sub: &self.sub,
        }
        .ray_nearest(&mut self.scratch, &mut self.counters, ray, max_dist, filter)
    }

    fn ray_all(&mut self, ray: &Ray<V>, max_dist: f32, filter: Filter, out: &mut Vec<RayHit<V>>) {
        self.build_pending();
        self.sub.refresh(&self.nodes, self.root);
        Tree {
            nodes: &self.nodes,
            root: self.root,
            store: &self.store,
            sub: &self.sub,
        }
        .ray_all(
            &mut self.scratch,
            &mut self.counters,
            ray,
            max_dist,
            filter,
            out,
        );
    }

    fn nearest_k(&mut self, point: V, k: usize, filter: Filter, out: &mut Vec<Neighbor>) {
        self.build_pending();
        self.sub.refresh(&self.nodes, self.root);
        Tree {
            nodes: &self.nodes,
            root: self.root,
            store: &self.store,
            sub: &self.sub,
        }
        .nearest(&mut self.scratch, &mut self.counters, point, k, filter, out);
    }

    fn ray_nearest_batch(
        &mut self,
        rays: &[(Ray<V>, f32)],
        filter: Filter,
        out: &mut Vec<Option<RayHit<V>>>,
    ) where
        T: Sync,
    {
        self.build_pending();
        self.sub.refresh(&self.nodes, self.root);
        Tree {
            nodes: &self.nodes,
            root: self.root,
            store: &self.store,
            sub: &self.sub,
        }
        .ray_nearest_batch(&mut self.scratch, &mut self.counters, rays, filter, out);
    }

    fn query_aabb_batch(
        &mut self,
        boxes: &[Aabb<V>],
        filter: Filter,
        handles: &mut Vec<Handle>,
        offsets: &mut Vec<usize>,
    ) where
        T: Sync,
    {
        self.build_pending();
        self.sub.refresh(&self.nodes, self.root);
        Tree {
            nodes: &self.nodes,
            root: self.root,
            store: &self.store,
            sub: &self.sub,
        }
        .query_batch(
            &mut self.scratch,
            &mut self.counters,
            boxes,
            filter,
            handles,
            offsets,
        );
    }

    fn set_layer_matrix(&mut self, matrix: LayerMatrix) {
        self.matrix = matrix;
    }

    fn layer_matrix(&self) -> &LayerMatrix {
        &self.matrix
    }

    fn for_each_pair<F>(&mut self, f: F)
    where
        F: FnMut(Handle, Handle, &Object<V, T>, &Object<V, T>),
    {
        self.build_pending();
        self.find_pairs(f);
    }

    fn counters(&self) -> Counters {
        self.counters
    }

    fn reset_counters(&mut self) {
        self.counters = Counters::default();
    }

    fn stats(&self) -> TreeStats {
        let mut stats = self.tree_stats();
        stats.memory_bytes += self.sub.memory_bytes();
        stats
    }

    fn for_each_node<F: FnMut(&Aabb<V>, usize, usize)>(&self, f: F) {
        self.nodes_depth_first(f);
    }

    fn validate(&self) -> Result<(), ValidationError> {
        self.check_invariants()?;
        self.sub
            .check(&self.nodes, self.root)
            .map_err(ValidationError)
    }
}

impl<V: Vector> TreeNode<V> for Node<V> {
    #[inline]
    fn items(&self) -> &[Item<V>] {
        &self.items
    }
    #[inline]
    fn children(&self) -> &[u32] {
        &self.children
    }
    #[inline]
    fn parent(&self) -> u32 {
        self.parent
    }
}
