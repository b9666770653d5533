//! The loose trees: the loose octree and the loose quadtree, one
//! generic source.
//!
//! Split by operation, one `impl` block a file, like the orthtrees:
//! `insert.rs` (lazy bulk build, placement by centre and size, growth),
//! `update.rs` (moves, removal, pruning), `queries.rs`, `pairs.rs`,
//! `validate.rs` (invariants and statistics).
//!
//! # Geometry
//! A node of level `l` has a tight cell (its share of its parent's cell, as
//! in the orthtrees) and loose bounds: the cell enlarged on every side by
//! the node's pad, `pad(l) = (looseness - 1) / 2 * min_node_size * 2^l`.
//! Since a cell of level `l` has side `min_node_size * 2^l`, the loose
//! bounds are the cell scaled by `looseness` about its centre.
//!
//! Cells are half-open (`min <= p < max` on each axis), so every point of
//! the root's cell lies in exactly one cell per level. An object whose
//! centre is in a cell and whose half extent is at most the cell's pad lies
//! inside the cell's loose bounds: its level is the smallest whose pad
//! covers its half extent, computed directly from its size.
//!
//! The pads depend on the level alone and rounding is monotone, so the loose
//! bounds of a child lie inside those of its parent exactly, in `f32`, not
//! just in exact arithmetic. Every traversal prunes by loose bounds and
//! relies on that nesting.

mod insert;
mod pairs;
mod update;
mod validate;

use glam::{Vec2, Vec3};

use crate::geometry::{Aabb, Vector};
use crate::index::Item;
use crate::kernel::{Core, Family, Spare};
use crate::store::NONE;
use crate::{Error, Handle, OutOfBounds, ValidationError};

/// Levels with a precomputed pad. Far more than any tree reaches: with the
/// coordinate limit of `2^60` and the smallest `f32` node size, roots stay
/// below level 260; past the table's end the pad is the capped one anyway.
const LEVELS: usize = 512;

/// The largest pad, `2^110`: loose bounds stay finite (no `0 * inf` in the
/// plane tests of frustum queries) yet hold any admitted object.
const PAD_CAP: f64 = (1u128 << 110) as f64;

/// Settings of a [`LooseOrthtree`].
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LooseConfig<V: Vector> {
    /// The region the root must enclose from the start. `None`: the bounds
    /// of the objects of the first build. The root's cell is the smallest
    /// cube (square) of side `min_node_size * 2^k` anchored at the world's
    /// lower corner whose half-open cell holds the whole world: its side is
    /// strictly larger than the world's extent.
    pub world: Option<Aabb<V>>,
    /// The side of the smallest cells: objects smaller than their pad all
    /// live at this level. The root's side is this times a power of two.
    /// Default 0: chosen at the first build, four times the median
    /// object's largest side rounded up to a power of two (about what the
    /// pair search and the moves run fastest with); with a preset world,
    /// the root is then made at the first build too, except under the
    /// `Reject` and `Remove` policies, which need the root from the start
    /// to judge insertions: there it is 1.
    /// [`LooseOrthtree::config`] tells the value chosen.
    pub min_node_size: f32,
    /// How much larger than its cell a node's loose bounds are (default 2:
    /// twice the side, half a cell of slack on each face). Must be finite
    /// and greater than 1. Larger values sink objects deeper but make
    /// sibling bounds overlap more.
    pub looseness: f32,
    /// What happens to objects that cannot be placed in the root: whose
    /// centre leaves the root's cell or whose box leaves its loose bounds.
    pub out_of_bounds: OutOfBounds,
    /// How many objects a leaf may hold before it splits (default 0).
    ///
    /// With 0, every object sinks to the level its size gives, however
    /// alone it is: the classic loose tree. In a sparse world that makes a
    /// chain of nodes above each small object, and small cells that moving
    /// objects leave often. With `c > 0`, a leaf holding at most `c`
    /// objects does not split, as the tight tree's leaves (which hold one):
    /// objects stop in the first leaf with room and sink to their level
    /// only where the tree is crowded, which keeps sparse worlds cheap to
    /// update and to search. Fast objects crossing the world (bullets)
    /// gain most: with 80,000 bullets among 20,000 obstacles, 8 made the
    /// frame 3.3 times faster than 0 and the tree a seventeenth of the
    /// nodes, where objects at rest or wandering ran as fast either way.
    pub leaf_capacity: usize,
}

impl<V: Vector> Default for LooseConfig<V> {
    fn default() -> Self {
        Self {
            world: None,
            min_node_size: 0.0,
            looseness: 2.0,
            out_of_bounds: OutOfBounds::Grow,
            leaf_capacity: 0,
        }
    }
}

/// How [`SpatialIndex::update`](crate::SpatialIndex::update) handled the moves of a [`LooseOrthtree`]
/// since the last [`SpatialIndex::reset_counters`](crate::SpatialIndex::reset_counters).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LooseUpdateCounts {
    /// Updates where the object stayed in its node: the node's loose bounds
    /// still hold its box and its size gives the same level. Only the
    /// shape changed (the tree's copy of the box is brought up to date by
    /// the next query that walks the tree).
    pub in_place: u64,
    /// Updates that moved the object to another node.
    pub relocated: u64,
}

/// A node of the pool. Children are indices into the pool, `NONE` if absent.
#[derive(Clone, Debug)]
pub(crate) struct Node<V: Vector> {
    /// The tight cell: half-open, `min <= p < max`.
    pub cell: Aabb<V>,
    /// The loose bounds: the cell enlarged by the level's pad on every side.
    pub loose: Aabb<V>,
    /// The split point: the children's shared corner. Stored, not
    /// recomputed, so children tile their parent exactly after growth.
    pub center: V,
    /// The objects filed here.
    pub items: crate::kernel::Block,
    /// Child `k` covers the half of each axis `i` given by bit `i` of `k`
    /// (set: the upper half).
    pub children: [u32; 8],
    pub parent: u32,
    /// `log2(side / min_node_size)`: 0 for the smallest cells.
    pub level: u16,
    pub child_count: u8,
    /// Where the node stands in lazy pruning.
    pub life: crate::kernel::Lifecycle,
}

/// A loose octree (3D) or loose quadtree (2D): an orthtree whose nodes'
/// bounds are their cells enlarged by a looseness factor (default 2), so an
/// object is placed by its centre and its size, never held high up by a
/// split plane it happens to straddle.
///
/// - An object's level is computed directly from its size: the deepest
///   level whose loose bounds, around the cell holding the object's centre,
///   are sure to contain it (the smallest cells are `min_node_size`). It
///   descends by its centre to that level; children are created only where
///   needed. With a [`LooseConfig::leaf_capacity`] above 0, it stops early
///   in a leaf with room, and sinks to its level only where it is crowded.
/// - Insertions are queued and built in one pass by `flush` (or
///   `end_frame`); queries before it test them one by one.
/// - A moved object whose node's loose bounds still hold its box, and
///   whose size gives the same level, is updated in place, even where its
///   centre has crossed into a neighbouring cell: only its shape changes
///   (the tree's copy of its box follows at the next query that walks the
///   tree). That is what the loose bounds are for: an object wanders by up
///   to the pad before it changes node. Otherwise it climbs to the first
///   ancestor whose cell holds its centre and that can hold it, and
///   descends from there by its centre. See
///   [`LooseOrthtree::update_counts`].
/// - The root doubles when an object's centre leaves its cell; or, by
///   [`OutOfBounds`], the object is refused or removed.
/// - Empty leaves are pruned after 8 idle frames; a leaf reused before its
///   death doubles its lifespan, up to 64.
///
/// Pairs come from the search every structure shares: a hierarchical
/// loose grid over the objects' boxes, rebuilt by a counting sort at each
/// search (see the README's design notes). Where that grid would be
/// crowded, the tree is walked instead: the objects of a node against
/// each other and against those of its ancestors, and, since
/// sibling loose bounds overlap, each two sibling subtrees against each
/// other by a simultaneous descent of node pairs, pruned by the boxes
/// around their subtrees' objects.
///
/// # Memory layout
/// Nodes live in one pool addressed by `u32` index with a free list; the
/// objects of every node are a block of one array the kernel keeps.
///
/// # Example
/// ```
/// use glam::Vec3;
/// use sparti::{Aabb, LooseConfig, LooseOctree, ObjectDesc, Shape, SpatialIndex};
///
/// let world = Aabb::new(Vec3::ZERO, Vec3::splat(60.0)).unwrap();
/// let config = LooseConfig { world: Some(world), min_node_size: 1.0, ..Default::default() };
/// let mut tree: LooseOctree<&str> = LooseOctree::with_config(config).unwrap();
/// // The root cell is 64 wide (level 6). With looseness 2 a cell of side s
/// // holds objects of half extent up to s / 2, whatever their position.
/// let pebble = tree.insert(ObjectDesc::new(Shape::sphere(Vec3::splat(31.9), 0.4), "pebble")).unwrap();
/// let rock = tree.insert(ObjectDesc::new(Shape::sphere(Vec3::splat(32.1), 3.0), "rock")).unwrap();
/// let hill = tree.insert(ObjectDesc::new(Shape::sphere(Vec3::splat(32.0), 20.0), "hill")).unwrap();
/// tree.flush(); // the build step (queries before it test queued objects one by one)
/// // The pebble sinks to the smallest cells (depth 6) though it sits next to
/// // the root's centre, where a tight octree would keep it at the root.
/// assert_eq!(tree.depth_of(pebble).unwrap(), Some(6));
/// assert_eq!(tree.depth_of(rock).unwrap(), Some(3)); // cells of side 8
/// assert_eq!(tree.depth_of(hill).unwrap(), Some(0)); // the root
/// let mut pairs = Vec::new();
/// tree.pairs(&mut pairs);
/// assert_eq!(pairs.len(), 3); // all three overlap
/// // A small move inside the same cell is made in place.
/// tree.update(rock, Shape::sphere(Vec3::splat(33.0), 3.0)).unwrap();
/// assert_eq!(tree.update_counts().in_place, 1);
/// tree.validate().unwrap();
/// ```
pub struct LooseOrthtree<V: Vector, T> {
    config: LooseConfig<V>,
    /// `pads[l]`: how far the loose bounds of a level-`l` node reach beyond
    /// its cell. Non-decreasing in `l`.
    pads: Vec<f32>,
    /// `(looseness - 1) / 2 * min_node_size`: `pads[l]` is this times
    /// `2^l`, rounded to `f32` and capped.
    base: f64,
    /// The objects, the nodes and everything else the families share.
    core: Core<V, T, Node<V>>,
    moves: LooseUpdateCounts,
    // Scratch buffers of the changes, kept to avoid allocating per operation.
    work: Vec<(u32, u32)>,
    /// The flat snapshot the pair search walks, and its buffers, lent to
    /// each search.
    flat: Spare<pairs::Flat<V>>,
}

/// The loose octree: each object in the cell of its centre, at the level of
/// its size, in nodes whose bounds reach beyond their cells, so that
/// objects on cell borders do not pile up near the root. Every method is
/// [`SpatialIndex`](crate::SpatialIndex)'s (and [`LooseOrthtree`]'s own); settings in
/// [`LooseConfig`].
///
/// # Example
/// ```
/// use glam::Vec3;
/// use sparti::{LooseOctree, ObjectDesc, Shape, SpatialIndex};
/// let mut swarm = LooseOctree::<u32>::new();
/// for i in 0..100 {
///     let p = Vec3::new(i as f32, 0.0, 0.0); // each touches the next
///     swarm.insert(ObjectDesc::new(Shape::sphere(p, 0.6), i)).unwrap();
/// }
/// swarm.end_frame();
/// let mut pairs = Vec::new();
/// swarm.pairs(&mut pairs);
/// assert_eq!(pairs.len(), 99);
/// swarm.validate().unwrap();
/// ```
pub type LooseOctree<T = ()> = LooseOrthtree<Vec3, T>;

/// The loose quadtree: the loose octree's 2D twin, from the same source.
/// Every method is [`SpatialIndex`](crate::SpatialIndex)'s (and [`LooseOrthtree`]'s own);
/// settings in [`LooseConfig`].
///
/// # Example
/// ```
/// use glam::Vec2;
/// use sparti::{Filter, LooseQuadtree, ObjectDesc, Shape, SpatialIndex};
/// let mut crowd = LooseQuadtree::<&str>::new();
/// let bob = crowd.insert(ObjectDesc::new(Shape::circle(Vec2::new(2.0, 0.0), 0.5), "bob")).unwrap();
/// crowd.insert(ObjectDesc::new(Shape::circle(Vec2::new(9.0, 0.0), 0.5), "amy")).unwrap();
/// crowd.end_frame();
/// let mut near = Vec::new();
/// crowd.nearest_k(Vec2::ZERO, 1, Filter::ALL, &mut near);
/// assert_eq!(near[0].handle, bob);
/// ```
pub type LooseQuadtree<T = ()> = LooseOrthtree<Vec2, T>;

impl<V: Vector, T> Default for LooseOrthtree<V, T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<V: Vector, T> LooseOrthtree<V, T> {
    /// An empty tree with the default settings.
    pub fn new() -> Self {
        Self::with_config(LooseConfig::default()).expect("the default configuration is valid")
    }

    /// An empty tree with the given settings. With a preset world, the root
    /// is made at once.
    ///
    /// # Errors
    /// [`Error::InvalidConfig`] for a minimum node size that is not finite,
    /// not positive or above `2^60`, a looseness that is not finite or not
    /// greater than 1, or a world box that is malformed or beyond `2^60`.
    pub fn with_config(config: LooseConfig<V>) -> Result<Self, Error> {
        let m = config.min_node_size;
        crate::kernel::check_config(
            m,
            "min_node_size must be finite, >= 0 (0: automatic) and <= 2^60",
            config.world.as_ref(),
        )?;
        let k = config.looseness;
        if !(k.is_finite() && k > 1.0) {
            return Err(Error::InvalidConfig("looseness must be finite and > 1"));
        }
        let mut t = Self {
            config,
            pads: Vec::new(),
            base: 0.0,
            core: Core::default(),
            moves: LooseUpdateCounts::default(),
            work: Vec::new(),
            flat: Spare::default(),
        };
        if m == 0.0 && t.config.world.is_some() && t.config.out_of_bounds != OutOfBounds::Grow {
            // The `Reject` and `Remove` policies judge the first insertions
            // against a preset world's root, so it is made now, with the
            // classic smallest cell.
            t.set_min_node_size(1.0);
        } else if m > 0.0 {
            t.set_min_node_size(m);
        }
        t.make_preset_root();
        Ok(t)
    }

    /// Fixes the smallest cells' side and the pads that follow from it.
    pub(crate) fn set_min_node_size(&mut self, m: f32) {
        self.config.min_node_size = m;
        self.base = (f64::from(self.config.looseness) - 1.0) * 0.5 * f64::from(m);
        self.pads = (0..LEVELS)
            .map(|l| (self.base * 2f64.powi(l as i32)).min(PAD_CAP) as f32)
            .collect();
    }

    /// The settings (with the minimum node size chosen at the first
    /// build, when it was left automatic).
    pub fn config(&self) -> &LooseConfig<V> {
        &self.config
    }

    /// The root's cell, once there is a root (at once with a preset world,
    /// else at the first build). Objects' centres lie in it.
    pub fn root_bounds(&self) -> Option<Aabb<V>> {
        (self.core.root != NONE).then(|| self.core.nodes[self.core.root as usize].cell)
    }

    /// The root's loose bounds: every object lies inside them.
    pub fn root_loose_bounds(&self) -> Option<Aabb<V>> {
        (self.core.root != NONE).then(|| self.core.nodes[self.core.root as usize].loose)
    }

    /// Takes the objects removed by the [`OutOfBounds::Remove`] policy since
    /// the last call, with their values.
    pub fn take_evicted(&mut self) -> Vec<(Handle, T)> {
        core::mem::take(&mut self.core.evicted)
    }

    /// The depth of the node holding an object (the root is depth 0), or
    /// `None` while its insertion is queued for the build step.
    ///
    /// # Errors
    /// [`Error::StaleHandle`].
    pub fn depth_of(&self, h: Handle) -> Result<Option<usize>, Error> {
        let slot = self.core.store.resolve(h)?;
        let n = self.core.store.place(slot).node;
        Ok((n != NONE).then(|| {
            usize::from(
                self.core.nodes[self.core.root as usize].level - self.core.nodes[n as usize].level,
            )
        }))
    }

    /// How many updates were done in place and how many moved the object,
    /// since the last [`SpatialIndex::reset_counters`](crate::SpatialIndex::reset_counters).
    pub fn update_counts(&self) -> LooseUpdateCounts {
        self.moves
    }

    /// Calls `f(cell, loose_bounds, depth, object_count)` for every node,
    /// parents before children: for drawing the tree.
    pub fn for_each_cell(&self, mut f: impl FnMut(&Aabb<V>, &Aabb<V>, usize, usize)) {
        if self.core.root == NONE {
            return;
        }
        let root_level = self.core.nodes[self.core.root as usize].level as usize;
        let mut stack = vec![self.core.root];
        while let Some(n) = stack.pop() {
            let node = &self.core.nodes[n as usize];
            f(
                &node.cell,
                &node.loose,
                root_level - node.level as usize,
                node.items.len(),
            );
            stack.extend(node.children.iter().copied().filter(|&c| c != NONE));
        }
    }

    /// How far the loose bounds of a node of `level` reach beyond its cell.
    #[inline]
    pub(crate) fn pad(&self, level: u16) -> f32 {
        self.pads[(level as usize).min(LEVELS - 1)]
    }

    /// The nominal side of a cell of `level`: `min_node_size * 2^level`.
    /// (Far from the origin, the stored cell may be a little off, or even
    /// collapse, from rounding.)
    #[inline]
    pub(crate) fn side(&self, level: u16) -> f32 {
        (f64::from(self.config.min_node_size) * 2f64.powi(i32::from(level))) as f32
    }

    /// The level an object of half extent `e` belongs to, computed directly
    /// from its size: the smallest level whose pad covers `e`. A node of
    /// that level whose cell holds the object's centre holds the object in
    /// its loose bounds (bar rounding, which the placement checks).
    pub(crate) fn target_level(&self, e: f32) -> u16 {
        if e <= self.pads[0] {
            return 0;
        }
        // The binary exponent of `e / base` rounded up (its base-2
        // logarithm, rounded up) gives the level at once; the table settles
        // rounding. (Read from the bits: `log2` cost a tenth of the bulk
        // build.)
        let x = f64::from(e) / self.base;
        let mut l = if x.is_normal() {
            let bits = x.to_bits();
            let exp = ((bits >> 52) & 0x7ff) as i64 - 1023;
            let up = exp + i64::from(bits & ((1 << 52) - 1) != 0);
            up.clamp(0, (LEVELS - 1) as i64) as usize
        } else if x < 1.0 {
            0
        } else {
            LEVELS - 1
        };
        while l > 0 && self.pads[l - 1] >= e {
            l -= 1;
        }
        while l < LEVELS - 1 && self.pads[l] < e {
            l += 1;
        }
        l as u16
    }

    /// The loose bounds of a cell of a level with pad `pad`.
    #[inline]
    pub(crate) fn loosen(cell: &Aabb<V>, pad: f32) -> Aabb<V> {
        let p = V::splat(pad);
        Aabb {
            min: cell.min - p,
            max: cell.max + p,
        }
    }

    /// An object's placement keys: its centre and its half extent (the
    /// largest distance from the centre to a face of its box).
    #[inline]
    pub(crate) fn extent(aabb: &Aabb<V>) -> (V, f32) {
        let p = aabb.center();
        let e = (p - aabb.min).max(aabb.max - p).max_element();
        (p, e)
    }

    /// The child of a node with split point `center` whose cell holds `p`.
    #[inline]
    pub(crate) fn route(center: V, p: V) -> usize {
        let mut k = 0;
        for i in 0..V::DIM {
            if p.get(i) >= center.get(i) {
                k |= 1 << i;
            }
        }
        k
    }

    /// True when `p` lies in the half-open cell: `min <= p < max`.
    #[inline]
    pub(crate) fn in_cell(cell: &Aabb<V>, p: V) -> bool {
        (0..V::DIM).all(|i| cell.min.get(i) <= p.get(i) && p.get(i) < cell.max.get(i))
    }

    /// The cell of child `k` of a node.
    #[inline]
    pub(crate) fn child_cell(node: &Node<V>, k: usize) -> Aabb<V> {
        Self::sub_cell(&node.cell, node.center, k)
    }

    /// The cell of child `k` of a node of cell `cell` and split point
    /// `center`.
    #[inline]
    pub(crate) fn sub_cell(cell: &Aabb<V>, center: V, k: usize) -> Aabb<V> {
        let mut b = *cell;
        for i in 0..V::DIM {
            if k & (1 << i) != 0 {
                b.min = b.min.with(i, center.get(i));
            } else {
                b.max = b.max.with(i, center.get(i));
            }
        }
        b
    }

    /// The loose bounds child `k` of a node has, or would have.
    #[inline]
    pub(crate) fn child_loose(&self, node: &Node<V>, k: usize) -> Aabb<V> {
        Self::loosen(&Self::child_cell(node, k), self.pad(node.level - 1))
    }

    /// True when an object with box `aabb`, centre `p` and half extent `e`,
    /// filed in node `n`, may stay there: its box is in the node's loose
    /// bounds and its centre in the root's cell, and the node has the
    /// object's level, or is the root and too low for it, or is above it
    /// but may keep it: a leaf within its capacity, or a node whose child
    /// the centre leads to cannot hold the box (rounding).
    ///
    /// The centre may have left the node's cell: a moved object stays in
    /// the nearest node that still contains it (the loose bounds are what
    /// every traversal prunes by), and is placed anew by its centre only
    /// when it leaves them. Measured with the `frames` example (loose
    /// octree, moves ns an object): with cells of side 1, at 1M 66-69 ->
    /// 42, at 100k 50-52 -> 43-47, at 10k unchanged (30); with the
    /// automatic cell size (larger cells), at 1M 34 -> 27, at 100k 30 ->
    /// 27-28. Fewer objects change nodes, and a change of node waits on
    /// memory (the list entries and the nodes it touches lie at random).
    pub(crate) fn settles(&self, n: u32, aabb: &Aabb<V>, p: V, e: f32) -> bool {
        let node = &self.core.nodes[n as usize];
        if !node.loose.contains(aabb)
            || !Self::in_cell(&self.core.nodes[self.core.root as usize].cell, p)
        {
            return false;
        }
        let level = node.level;
        if e > self.pad(level) {
            // The object's level is above this node's.
            return n == self.core.root;
        }
        if level == 0 || e > self.pad(level - 1) {
            return true;
        }
        (node.child_count == 0 && node.items.len() <= self.config.leaf_capacity)
            || !self
                .child_loose(node, Self::route(node.center, p))
                .contains(aabb)
    }

    /// The child of `node` that would take an object (centre `p`, half
    /// extent `e`) one level down, if it could go there: its level is below
    /// the node's and that child's loose bounds hold its box.
    #[inline]
    pub(crate) fn deeper(&self, node: &Node<V>, aabb: &Aabb<V>, p: V, e: f32) -> Option<usize> {
        if node.level == 0 || e > self.pad(node.level - 1) {
            return None;
        }
        let k = Self::route(node.center, p);
        let c = node.children[k];
        let loose = if c != NONE {
            self.core.nodes[c as usize].loose
        } else {
            self.child_loose(node, k)
        };
        loose.contains(aabb).then_some(k)
    }

    /// True when the root can hold the object: its centre is in the root's
    /// cell and its box in the root's loose bounds.
    #[inline]
    pub(crate) fn fits_root(&self, aabb: &Aabb<V>, p: V) -> bool {
        let r = &self.core.nodes[self.core.root as usize];
        Self::in_cell(&r.cell, p) && r.loose.contains(aabb)
    }
}

crate::kernel::impl_spatial_index!(LooseOrthtree);

impl<V: Vector, T> Family<V, T> for LooseOrthtree<V, T> {
    type Node = Node<V>;

    fn core(&self) -> &Core<V, T, Node<V>> {
        &self.core
    }

    fn core_mut(&mut self) -> &mut Core<V, T, Node<V>> {
        &mut self.core
    }

    crate::kernel::forward_family_methods!(LooseOrthtree);

    crate::kernel::pair_search_methods!(LooseOrthtree::find_pairs, LooseOrthtree::par_collect);

    fn after_clear(&mut self) {
        self.make_preset_root();
    }

    fn reset_own_counters(&mut self) {
        self.moves = LooseUpdateCounts::default();
    }

    fn note_in_place(&mut self, count: u64) {
        self.moves.in_place += count;
    }

    fn own_memory(&self) -> usize {
        self.pads.capacity() * size_of::<f32>() + self.flat.with(|f| f.map_or(0, |f| f.memory()))
    }

    /// The loose bounds of every node (where its objects lie); see
    /// [`LooseOrthtree::for_each_cell`] for the cells too.
    fn nodes_depth_first(&self, f: &mut dyn FnMut(&Aabb<V>, usize, usize)) {
        self.for_each_cell(|_, loose, depth, count| f(loose, depth, count));
    }

    fn check_root(&self) -> Result<(), ValidationError> {
        LooseOrthtree::check_root(self)
    }

    fn check_place(&self, n: u32, it: &Item<V>) -> Result<(), ValidationError> {
        LooseOrthtree::check_place(self, n, &it.aabb)
    }
}

crate::kernel::impl_pool_node!(Node);

crate::traverse::impl_tree_node!();
