//! The axis-aligned BSP, 2D and 3D from one generic source: every node
//! splits in two at the middle of its largest dimension.
//!
//! Split by operation, one `impl` block a file: `insert.rs` (lazy bulk build,
//! placement, growth), `update.rs` (moves, removal, pruning), `validate.rs`
//! (invariants and statistics). The pair search is the kernel's, shared
//! with the orthtrees (`kernel/tight_pairs.rs`).

mod insert;
mod update;
mod validate;

use glam::{Vec2, Vec3};

use crate::geometry::{Aabb, Vector};
use crate::index::Item;
use crate::kernel::tight_pairs::{self, PairScratch};
use crate::kernel::{Core, Family, Spare};
use crate::store::NONE;
use crate::{Error, Handle, OutOfBounds, ValidationError};

/// Settings of a [`Bsp`].
///
/// # The minimum dimension
/// A node splits only while its largest dimension is **strictly greater**
/// than `min_dimension`; a node whose every side is at most `min_dimension`
/// is a cell that never splits. Since each split halves the largest side,
/// the smallest cells have their largest side in
/// `(min_dimension / 2, min_dimension]`.
///
/// The BSP article's "cells under 32x32 pixels" in its 640x480 window is
/// `min_dimension: 32.0`: the root splits at `x = 320`, then `y = 240`, and
/// so on down to cells of 20x30 (a 40x30 cell still splits, 40 > 32; a 20x30
/// cell does not). A cell of exactly 32x32 would not split either: use a
/// value a hair under 32 to force cells strictly under 32.
///
/// # The leaf capacity
/// Children are created only where objects need them. A leaf keeps up to
/// `leaf_capacity` objects whatever their size (default 8); when one more
/// arrives, the leaf splits and its objects that fit a child move down.
/// `1` is the octree's rule (each object as deep as it fits, unless alone
/// in its leaf). `0` makes every object sink as deep as it fits, down to
/// the minimum dimension: the article's placement, with the nodes created
/// lazily instead of the whole tree up front. Larger values make shallower
/// trees with more pair tests per leaf where the tree's own pair search
/// runs (a crowded scene), and fewer nodes for fast objects to cross: with
/// bullets crossing a world of 100,000 objects, 8 instead of 1 made the
/// frame 2.5 times faster and the tree a fifteenth of the nodes; with
/// objects at rest, the same speed and 31 (1,000,000 spheres) to 46
/// (100,000) bytes an object less memory, in fewer nodes.
///
/// # Example
/// ```
/// use glam::Vec2;
/// use sparti::{Aabb, Bsp2, BspConfig, OutOfBounds};
/// // The article's window: 640x480 pixels, cells under 32x32.
/// let config = BspConfig {
///     world: Some(Aabb::new(Vec2::ZERO, Vec2::new(640.0, 480.0)).unwrap()),
///     min_dimension: 32.0,
///     leaf_capacity: 0,
///     out_of_bounds: OutOfBounds::Reject,
/// };
/// let bsp = Bsp2::<u32>::with_config(config).unwrap();
/// assert_eq!(bsp.config().min_dimension, 32.0);
/// ```
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BspConfig<V: Vector> {
    /// The root region, used exactly as given (it is not made a cube: that
    /// is the point of the BSP). `None`: the bounds of the objects of the
    /// first build, with every side below `min_dimension` widened to it
    /// (upwards from the smallest corner).
    pub world: Option<Aabb<V>>,
    /// A node splits only while its largest side exceeds this (default 1);
    /// see the type's documentation.
    pub min_dimension: f32,
    /// Objects a leaf keeps before it splits (default 8); `0`: every object
    /// sinks as deep as it fits. See the type's documentation.
    pub leaf_capacity: u32,
    /// What happens to objects outside the root region.
    pub out_of_bounds: OutOfBounds,
}

impl<V: Vector> Default for BspConfig<V> {
    fn default() -> Self {
        Self {
            world: None,
            min_dimension: 1.0,
            leaf_capacity: 8,
            out_of_bounds: OutOfBounds::Grow,
        }
    }
}

/// A node of the pool. Children are indices into the pool, `NONE` if absent.
#[derive(Clone, Debug)]
pub(crate) struct Node<V: Vector> {
    /// The node's region.
    pub bounds: Aabb<V>,
    /// Where the node splits along `axis`. Stored, not recomputed, so the
    /// children tile their parent exactly, including nodes made by growth.
    pub split: f32,
    /// The objects filed here.
    pub items: crate::kernel::Block,
    /// `children[0]` is the half below `split`, `children[1]` the half above.
    pub children: [u32; 2],
    pub parent: u32,
    /// The split axis: the largest side (the first on ties), or for a node
    /// made by growth the axis it grew along.
    pub axis: u8,
    /// True when the node may have children (see [`layout`]).
    pub splits: bool,
    /// Which faces of the node are split planes of its ancestors, where an
    /// object must stay strictly inside (bit `2i`: the low face of axis `i`,
    /// bit `2i + 1`: the high face); the others are faces of the root,
    /// closed like every box. See [`Bsp::holds`].
    pub strict: u8,
    /// Made by growth: an ancestor of the first root, split at the face of
    /// the root it grew from.
    pub grown: bool,
    pub child_count: u8,
    /// Where the node stands in lazy pruning.
    pub life: crate::kernel::Lifecycle,
}

/// The split of an ordinary node with these bounds: the axis of its largest
/// side (the first on ties), the middle of that side, and whether the node
/// may split at all: its largest side exceeds the minimum dimension, and
/// the middle falls strictly inside the side in `f32` (which bounds the
/// depth even for a minimum dimension below the coordinates' precision).
#[inline]
pub(crate) fn layout<V: Vector>(b: &Aabb<V>, min_dimension: f32) -> (u8, f32, bool) {
    let size = b.size();
    let a = size.max_axis();
    let (lo, hi) = (b.min.get(a), b.max.get(a));
    let mid = (lo + hi) * 0.5;
    let splits = size.get(a) > min_dimension && lo < mid && mid < hi;
    (a as u8, mid, splits)
}

/// An axis-aligned BSP tree: the tree of the BSP article, in 2D
/// ([`Bsp2`]) and 3D ([`Bsp3`]).
///
/// - The root is the world box as given, not a cube. Every node splits in
///   two at the middle of its largest side, so a flat world (wide in X and
///   Y, thin in Z: the "2.5D problem") is first cut across X and Y until its
///   cells are about as thick as they are wide, instead of into ever
///   flatter slivers. A 640x480 world's first split is at `x = 320`.
/// - Splitting stops at [`BspConfig::min_dimension`]; children are created
///   only where objects are, a leaf keeping up to
///   [`BspConfig::leaf_capacity`] objects before it splits.
/// - An object lives in the deepest node that contains it, or higher in a
///   leaf with room. One that touches or straddles a node's split plane
///   belongs to that node, so objects of two sibling subtrees are
///   strictly apart and never touch.
/// - Insertions are queued and built in one pass by `flush` (or
///   `end_frame`); queries before it test them one by one.
/// - A moved object starts from its own node, climbs only as far as the
///   first ancestor that contains it without touching one of the split
///   planes bounding that ancestor, then sinks as deep as it fits (or
///   stops in a leaf with room).
/// - An object leaving the world makes the root double along one axis at a
///   time towards it, the old root becoming one child; or, by
///   [`OutOfBounds`], the move is refused or the object is removed and
///   reported by [`Bsp::take_evicted`].
/// - Empty leaves are pruned after 8 idle frames; a leaf reused before its
///   death doubles its lifespan, up to 64 (in `end_frame`).
///
/// Pairs are found in one pass: the objects of a node against each other
/// and against those of its ancestors that overlap the node.
///
/// # Growth
/// Each growth step picks, among the axes along which the object sticks
/// out, the one where the root is thinnest, and adds the root's own size on
/// the object's side (at least `min_dimension`, and never less than the
/// coordinates' precision allows). The new root splits exactly at the old
/// root's face, so the old root is one of its children and keeps its
/// subtree. Growth nodes are the one exception to "split across the largest
/// side": they split across the axis they grew along, which keeps growth
/// towards the thin axis of a flat world possible. Objects of the old root
/// that touch its face now touch the new split plane and move up to the new
/// root.
///
/// # Memory layout
/// Nodes live in one pool addressed by `u32` index with a free list; each
/// node's objects (their boxes and slots) are a block of one array shared
/// by every node, as in the other trees. Queries, pair searches and
/// frames allocate nothing once warm.
///
/// # Example
/// ```
/// use glam::Vec3;
/// use sparti::{Aabb, Bsp3, BspConfig, Filter, ObjectDesc, Shape, SpatialIndex};
/// // A flat 2.5D level: 1000 x 1000 units, 4 high. Objects sink as deep as
/// // they fit (leaf capacity 0), down to cells of at most 1 unit.
/// let world = Aabb::new(Vec3::ZERO, Vec3::new(1000.0, 1000.0, 4.0)).unwrap();
/// let config = BspConfig { world: Some(world), leaf_capacity: 0, ..Default::default() };
/// let mut bsp = Bsp3::<u32>::with_config(config).unwrap();
/// let mut handles = Vec::new();
/// for i in 0..100 {
///     let p = Vec3::new(5.3 + i as f32 * 9.0, 300.3 + i as f32 * 5.0, 1.3);
///     handles.push(bsp.insert(ObjectDesc::new(Shape::sphere(p, 0.25), i)).unwrap());
/// }
/// bsp.flush(); // the build step (queries before it test queued objects one by one)
/// bsp.validate().unwrap();
/// // The first split cuts the largest side in the middle: x = 500.
/// let mut halves = Vec::new();
/// bsp.for_each_node(|bounds, depth, _| if depth == 1 { halves.push(*bounds) });
/// assert!(halves.iter().all(|b| b.min.x == 500.0 || b.max.x == 500.0));
/// // The cells are cut across x and y until about as wide as the world is
/// // thick, then across z too: no flat slivers.
/// let cell = bsp.node_bounds_of(handles[0]).unwrap().unwrap();
/// assert_eq!(cell.size(), Vec3::new(0.9765625, 0.9765625, 1.0));
/// assert_eq!(bsp.stats().max_depth, 22);
/// let mut near = Vec::new();
/// bsp.query_radius(Vec3::new(5.3, 300.3, 1.3), 0.5, Filter::ALL, &mut near);
/// assert_eq!(near, vec![handles[0]]);
/// ```
pub struct Bsp<V: Vector, T> {
    config: BspConfig<V>,
    /// The objects, the nodes and everything else the families share.
    core: Core<V, T, Node<V>>,
    /// Nodes examined by updates to find objects' new nodes.
    update_visits: u64,
    // Scratch buffers of the changes, kept to avoid allocating per operation.
    work: Vec<(u32, u32)>,
    stack: Vec<(u32, u32)>,
    /// The pair search's buffers, lent to each search.
    pair_scratch: Spare<PairScratch<V>>,
}

/// The 2D BSP: splits alternate between X and Y by the cells' shape.
pub type Bsp2<T = ()> = Bsp<Vec2, T>;
/// The 3D BSP, also the one for 2.5D worlds.
pub type Bsp3<T = ()> = Bsp<Vec3, T>;

impl<V: Vector, T> Default for Bsp<V, T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<V: Vector, T> Bsp<V, T> {
    /// An empty tree with the default settings.
    pub fn new() -> Self {
        Self::with_config(BspConfig::default()).expect("the default configuration is valid")
    }

    /// An empty tree with the given settings.
    ///
    /// # Errors
    /// [`Error::InvalidConfig`] for a minimum dimension that is not finite,
    /// not positive or above `2^60`, or a world box that is malformed
    /// (NaN, infinite, inverted) or beyond `+-2^60`.
    pub fn with_config(config: BspConfig<V>) -> Result<Self, Error> {
        let m = config.min_dimension;
        let what = "min_dimension must be finite, > 0 and <= 2^60";
        if m == 0.0 {
            return Err(Error::InvalidConfig(what));
        }
        crate::kernel::check_config(m, what, config.world.as_ref())?;
        Ok(Self {
            config,
            core: Core::default(),
            update_visits: 0,
            work: Vec::new(),
            stack: Vec::new(),
            pair_scratch: Spare::default(),
        })
    }

    /// The settings.
    pub fn config(&self) -> &BspConfig<V> {
        &self.config
    }

    /// The root region, once the tree is built.
    pub fn root_bounds(&self) -> Option<Aabb<V>> {
        (self.core.root != NONE).then(|| self.core.nodes[self.core.root as usize].bounds)
    }

    /// The bounds of the node an object is filed in; `None` while it waits
    /// for the build step.
    ///
    /// # Errors
    /// [`Error::StaleHandle`].
    pub fn node_bounds_of(&self, h: Handle) -> Result<Option<Aabb<V>>, Error> {
        let n = self.core.store.place(self.core.store.resolve(h)?).node;
        Ok((n != NONE).then(|| self.core.nodes[n as usize].bounds))
    }

    /// Nodes examined by [`SpatialIndex::update`](crate::SpatialIndex::update) to find the moved objects'
    /// new nodes since the last [`SpatialIndex::reset_counters`](crate::SpatialIndex::reset_counters): the
    /// object's own node, each ancestor climbed to, and each node on the way
    /// down. An object that stays in its node costs 1; one that moves to the
    /// neighbouring cell costs a few, whatever the depth of the tree.
    pub fn update_visits(&self) -> u64 {
        self.update_visits
    }

    /// Takes the objects removed by the [`OutOfBounds::Remove`] policy since
    /// the last call, with their values.
    pub fn take_evicted(&mut self) -> Vec<(Handle, T)> {
        core::mem::take(&mut self.core.evicted)
    }

    /// The child of `node` that holds `aabb` (0 below the split, 1 above),
    /// or `None` when it touches or straddles the split plane.
    ///
    /// Strict on both sides: an object touching the split plane stays in
    /// the node, so objects of two sibling subtrees are strictly apart and
    /// can never touch; the pair search relies on it.
    #[inline]
    pub(crate) fn side_of(node: &Node<V>, aabb: &Aabb<V>) -> Option<usize> {
        let a = node.axis as usize;
        if aabb.min.get(a) > node.split {
            Some(1)
        } else if aabb.max.get(a) < node.split {
            Some(0)
        } else {
            None
        }
    }

    /// The bit of [`Node::strict`] for the face of child `k` at its parent's
    /// split along `axis`: the high face of the lower child, the low face of
    /// the upper one.
    #[inline]
    pub(crate) fn split_face(axis: u8, k: usize) -> u8 {
        let low = 1u8 << (2 * axis);
        if k == 0 { low << 1 } else { low }
    }

    /// True when an object with this box belongs to the node's subtree: it
    /// lies inside the node's bounds, and strictly inside the faces that are
    /// split planes of the node's ancestors (touching a split plane puts an
    /// object in the node that owns the plane). A box within the bounds but
    /// on such a face must climb, or two objects touching across the plane
    /// could sit in sibling subtrees and never be paired.
    #[inline]
    pub(crate) fn holds(node: &Node<V>, aabb: &Aabb<V>) -> bool {
        (0..V::DIM).all(|i| {
            let (lo, hi) = (node.bounds.min.get(i), node.bounds.max.get(i));
            let (a, b) = (aabb.min.get(i), aabb.max.get(i));
            let low_ok = if node.strict & (1 << (2 * i)) != 0 {
                a > lo
            } else {
                a >= lo
            };
            let high_ok = if node.strict & (2 << (2 * i)) != 0 {
                b < hi
            } else {
                b <= hi
            };
            low_ok && high_ok
        })
    }

    /// The bounds of child `k` of a node: its bounds cut at the split.
    #[inline]
    pub(crate) fn child_bounds(node: &Node<V>, k: usize) -> Aabb<V> {
        let a = node.axis as usize;
        let mut b = node.bounds;
        if k == 1 {
            b.min = b.min.with(a, node.split);
        } else {
            b.max = b.max.with(a, node.split);
        }
        b
    }

    /// True when the node takes no more objects before it splits: it may
    /// split, and it has children or holds `leaf_capacity` objects already.
    #[inline]
    pub(crate) fn is_full(&self, node: &Node<V>) -> bool {
        node.splits
            && (node.child_count > 0 || node.items.len() >= self.config.leaf_capacity as usize)
    }
}

impl<V: Vector, T> Bsp<V, T> {
    /// Calls `f(bounds, depth, object_count)` for every node, parents before
    /// children (the root has depth 0): for drawing the tree.
    fn nodes_depth_first(&self, mut f: impl FnMut(&Aabb<V>, usize, usize)) {
        if self.core.root == NONE {
            return;
        }
        let mut stack = vec![(self.core.root, 0usize)];
        while let Some((n, depth)) = stack.pop() {
            let node = &self.core.nodes[n as usize];
            f(&node.bounds, depth, node.items.len());
            for &c in node.children.iter().rev() {
                if c != NONE {
                    stack.push((c, depth + 1));
                }
            }
        }
    }
}

crate::kernel::impl_spatial_index!(Bsp);

impl<V: Vector, T> Family<V, T> for Bsp<V, T> {
    type Node = Node<V>;

    fn core(&self) -> &Core<V, T, Node<V>> {
        &self.core
    }

    fn core_mut(&mut self) -> &mut Core<V, T, Node<V>> {
        &mut self.core
    }

    crate::kernel::forward_family_methods!(Bsp);

    crate::kernel::pair_search_methods!(tight_pairs::find_pairs, tight_pairs::par_collect);

    fn reset_own_counters(&mut self) {
        self.update_visits = 0;
    }

    fn note_in_place(&mut self, count: u64) {
        // One node examined per move, as `update` counts.
        self.update_visits += count;
    }

    fn own_memory(&self) -> usize {
        self.pair_scratch.with(|s| s.map_or(0, |s| s.memory()))
    }

    fn nodes_depth_first(&self, f: &mut dyn FnMut(&Aabb<V>, usize, usize)) {
        Bsp::nodes_depth_first(self, f);
    }

    fn check_root(&self) -> Result<(), ValidationError> {
        Bsp::check_root(self)
    }

    fn check_place(&self, n: u32, it: &Item<V>) -> Result<(), ValidationError> {
        Bsp::check_place(self, n, it)
    }
}

crate::kernel::impl_pool_node!(Node);

tight_pairs::impl_tight!(Bsp, 1);
