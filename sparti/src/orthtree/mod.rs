//! The orthtrees: the octree (3D) and the quadtree (2D), one
//! generic source.
//!
//! Split by operation, one `impl` block a file: `insert.rs` (lazy bulk build,
//! placement, growth), `update.rs` (moves, removal, pruning), `validate.rs`
//! (invariants and statistics). The pair search is the kernel's, shared
//! with the BSP (`kernel/tight_pairs.rs`).

mod insert;
mod update;
mod validate;

use glam::{Vec2, Vec3};

use crate::geometry::{Aabb, Vector};
use crate::index::Item;
use crate::kernel::tight_pairs::{self, PairScratch};
use crate::kernel::{Core, Family, Spare};
use crate::store::NONE;
use crate::{Error, Handle, ValidationError};

pub(crate) use crate::index::within_limits;

/// What an orthtree does with an object outside its root region.
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
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
///
/// `min_node_size` matters most for speed: about the size of a typical
/// object is a good start (`sparti tune` measures it on a recorded scene).
///
/// # Example
/// ```
/// use glam::Vec3;
/// use sparti::{Aabb, Octree, OrthtreeConfig, OutOfBounds};
/// let config = OrthtreeConfig {
///     world: Some(Aabb::new(Vec3::splat(-500.0), Vec3::splat(500.0)).unwrap()),
///     min_node_size: 2.0, // objects about 2 units across
///     out_of_bounds: OutOfBounds::Reject, // the level has walls
/// };
/// let tree: Octree<u32> = Octree::with_config(config).unwrap();
/// assert!(Octree::<u32>::with_config(OrthtreeConfig { min_node_size: -1.0, ..config }).is_err());
/// # drop(tree);
/// ```
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OrthtreeConfig<V: Vector> {
    /// The region the root must enclose at first. `None`: the bounds of the
    /// objects of the first build.
    pub world: Option<Aabb<V>>,
    /// Nodes whose side is at most this do not split. The root's side is
    /// this times a power of two. Default 0: chosen at the first build,
    /// four times the median object's largest side rounded up to a power
    /// of two (about what the pair search and the moves run fastest with);
    /// [`Orthtree::config`] tells the value chosen.
    pub min_node_size: f32,
    /// What happens to objects outside the root region.
    pub out_of_bounds: OutOfBounds,
}

impl<V: Vector> Default for OrthtreeConfig<V> {
    fn default() -> Self {
        Self {
            world: None,
            min_node_size: 0.0,
            out_of_bounds: OutOfBounds::Grow,
        }
    }
}

pub(crate) use crate::kernel::NodeState;

/// A node of the pool. Children are indices into the pool, `NONE` if absent.
#[derive(Clone, Debug)]
pub(crate) struct Node<V: Vector> {
    /// The node's region (tight).
    pub bounds: Aabb<V>,
    /// The split point: the children's shared corner. Stored, not recomputed,
    /// so children tile their parent exactly even after the root grows.
    pub center: V,
    /// The objects filed here.
    pub items: crate::kernel::Block,
    /// Child `k` covers the half of each axis `i` given by bit `i` of `k`
    /// (set: the upper half).
    pub children: [u32; 8],
    pub parent: u32,
    /// `log2(side / min_node_size)`: 0 for nodes that cannot split.
    pub level: u16,
    pub child_count: u8,
    /// Where the node stands in lazy pruning.
    pub life: crate::kernel::Lifecycle,
}

/// A dynamic octree (3D) or quadtree (2D): the tree of the octree article,
/// with every node split into `2^DIM` equal children created only where
/// objects are.
///
/// - The root is a cube (square) whose side is `min_node_size` times a power
///   of two, enclosing the world; it doubles when an object leaves it.
/// - An object lives in the deepest node that fully contains it; a leaf
///   holding one object does not split, nor does a node of the minimum size.
/// - Insertions are queued and built in one pass by `flush` (or
///   `end_frame`); queries before it test them one by one.
/// - A moved object climbs to the first ancestor that contains it, then
///   sinks as deep as it fits.
/// - Empty leaves are pruned after 8 idle frames; a leaf reused before its
///   death doubles its lifespan, up to 64.
///
/// Pairs come from the search every structure shares: a hierarchical
/// loose grid over the objects' boxes, rebuilt by a counting sort at each
/// search (see the README's design notes). Where that grid would be
/// crowded, the tree is walked instead: the objects of a node against
/// each other and against those of its ancestors.
///
/// # Memory layout
/// Nodes live in one pool addressed by `u32` index with a free list; the
/// objects of every node are a block of one array the kernel keeps.
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
/// tree.flush(); // the build step (queries before it test queued objects one by one)
/// tree.validate().unwrap();
/// assert!(tree.stats().max_depth > 3);
/// ```
pub struct Orthtree<V: Vector, T> {
    config: OrthtreeConfig<V>,
    /// The objects, the nodes and everything else the families share.
    core: Core<V, T, Node<V>>,
    // Scratch buffers of the changes, kept to avoid allocating per operation.
    work: Vec<(u32, u32)>,
    stack: Vec<(u32, u32)>,
    /// The pair search's buffers, lent to each search.
    pair_scratch: Spare<PairScratch<V>>,
}

/// The octree: the dynamic tree of the octree article in 3D, each object in
/// the deepest cube that contains it. Every method is [`SpatialIndex`](crate::SpatialIndex)'s
/// (and [`Orthtree`]'s own); settings in [`OrthtreeConfig`].
///
/// # Example
/// ```
/// use glam::Vec3;
/// use sparti::{Filter, ObjectDesc, Octree, Shape, SpatialIndex};
/// let mut tree = Octree::<&str>::new();
/// let orc = tree.insert(ObjectDesc::new(Shape::sphere(Vec3::new(4.0, 0.0, 0.0), 1.0), "orc")).unwrap();
/// tree.insert(ObjectDesc::new(Shape::sphere(Vec3::new(40.0, 0.0, 0.0), 1.0), "elf")).unwrap();
/// tree.end_frame(); // builds what was inserted
/// let mut near = Vec::new();
/// tree.query_radius(Vec3::ZERO, 5.0, Filter::ALL, &mut near);
/// assert_eq!(near, vec![orc]);
/// assert_eq!(tree.get(orc).unwrap().value, "orc");
/// ```
pub type Octree<T = ()> = Orthtree<Vec3, T>;

/// The quadtree: the octree's 2D twin, from the same source, each object in
/// the deepest square that contains it. Every method is [`SpatialIndex`](crate::SpatialIndex)'s
/// (and [`Orthtree`]'s own); settings in [`OrthtreeConfig`].
///
/// # Example
/// ```
/// use glam::Vec2;
/// use sparti::{ObjectDesc, Quadtree, Shape, SpatialIndex};
/// let mut tree = Quadtree::<u32>::new();
/// let a = tree.insert(ObjectDesc::new(Shape::circle(Vec2::ZERO, 1.0), 1)).unwrap();
/// let b = tree.insert(ObjectDesc::new(Shape::circle(Vec2::new(3.0, 0.0), 1.0), 2)).unwrap();
/// tree.update(b, Shape::circle(Vec2::new(1.5, 0.0), 1.0)).unwrap(); // b moves onto a
/// tree.end_frame();
/// let mut pairs = Vec::new();
/// tree.pairs(&mut pairs);
/// assert_eq!((pairs[0].a, pairs[0].b), (a, b));
/// ```
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
        crate::kernel::check_config(
            m,
            "min_node_size must be finite, >= 0 (0: automatic) and <= 2^60",
            config.world.as_ref(),
        )?;
        Ok(Self {
            config,
            core: Core::default(),
            work: Vec::new(),
            stack: Vec::new(),
            pair_scratch: Spare::default(),
        })
    }

    /// The settings (with the minimum node size chosen at the first
    /// build, when it was left automatic).
    pub fn config(&self) -> &OrthtreeConfig<V> {
        &self.config
    }

    /// The root region, once the tree is built.
    pub fn root_bounds(&self) -> Option<Aabb<V>> {
        (self.core.root != NONE).then(|| self.core.nodes[self.core.root as usize].bounds)
    }

    /// Takes the objects removed by the [`OutOfBounds::Remove`] policy since
    /// the last call, with their values.
    pub fn take_evicted(&mut self) -> Vec<(Handle, T)> {
        core::mem::take(&mut self.core.evicted)
    }

    /// Calls `f(bounds, depth, object_count)` for every node, parents before
    /// children: for drawing the tree.
    fn nodes_depth_first(&self, mut f: impl FnMut(&Aabb<V>, usize, usize)) {
        if self.core.root == NONE {
            return;
        }
        let root_level = self.core.nodes[self.core.root as usize].level as usize;
        let mut stack = vec![self.core.root];
        while let Some(n) = stack.pop() {
            let node = &self.core.nodes[n as usize];
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
        // Without a branch per axis: which side of each plane is a coin
        // toss for a moving object.
        let mut k = 0;
        let mut meets = false;
        for i in 0..V::DIM {
            let c = node.center.get(i);
            let above = aabb.min.get(i) > c;
            k |= usize::from(above) << i;
            meets |= !above & (aabb.max.get(i) >= c);
        }
        (!meets).then_some(k)
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

crate::kernel::impl_spatial_index!(Orthtree);

impl<V: Vector, T> Family<V, T> for Orthtree<V, T> {
    type Node = Node<V>;

    fn core(&self) -> &Core<V, T, Node<V>> {
        &self.core
    }

    fn core_mut(&mut self) -> &mut Core<V, T, Node<V>> {
        &mut self.core
    }

    crate::kernel::forward_family_methods!(Orthtree);

    crate::kernel::pair_search_methods!(tight_pairs::find_pairs, tight_pairs::par_collect);

    fn own_memory(&self) -> usize {
        self.pair_scratch.with(|s| s.map_or(0, |s| s.memory()))
    }

    fn nodes_depth_first(&self, f: &mut dyn FnMut(&Aabb<V>, usize, usize)) {
        Orthtree::nodes_depth_first(self, f);
    }

    fn check_place(&self, n: u32, it: &Item<V>) -> Result<(), ValidationError> {
        Orthtree::check_place(self, n, it)
    }
}

crate::kernel::impl_pool_node!(Node);

tight_pairs::impl_tight!(Orthtree, V::DIM as u32);
