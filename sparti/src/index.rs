//! The one API every structure offers: [`SpatialIndex`], with its handles,
//! object descriptions, filters, pair and contact records, counters and
//! statistics.

use crate::geometry::{Aabb, Cone, Frustum, Ray, Region, Shape, Sphere, Vector};
use crate::store::{NONE, Store};
use crate::{Error, Found, LayerMatrix, ValidationError};

/// Names an object in a structure until it is removed.
///
/// A generational index: once the object is removed, the handle is stale for
/// ever, and every operation given it returns [`Error::StaleHandle`], even if
/// its slot is reused by a new object. Handles order by slot then
/// generation, which gives pairs and results a deterministic order.
///
/// # Example
/// ```
/// use glam::Vec2;
/// use sparti::{Error, ObjectDesc, Quadtree, Shape, SpatialIndex};
/// let mut tree = Quadtree::<&str>::new();
/// let h = tree.insert(ObjectDesc::new(Shape::circle(Vec2::ZERO, 1.0), "bat")).unwrap();
/// assert_eq!(tree.get(h).unwrap().value, "bat");
/// assert_eq!(tree.remove(h), Ok("bat"));
/// // The slot is reused, the old handle stays stale.
/// let h2 = tree.insert(ObjectDesc::new(Shape::circle(Vec2::ZERO, 1.0), "rat")).unwrap();
/// assert_eq!(h2.index(), h.index());
/// assert_eq!(tree.get(h).err(), Some(Error::StaleHandle(h)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Handle {
    pub(crate) index: u32,
    pub(crate) generation: u32,
}

impl Handle {
    /// The slot index (dense, reused after removal: not unique over time).
    pub fn index(self) -> u32 {
        self.index
    }
    /// The generation (bumped each time the slot is freed).
    pub fn generation(self) -> u32 {
        self.generation
    }
    /// The handle as one `u64` (generation in the high half), e.g. for logs.
    pub fn to_bits(self) -> u64 {
        (u64::from(self.generation) << 32) | u64::from(self.index)
    }
}

/// What to insert: a shape, a user value, collision layers and a static flag.
///
/// # Example
/// ```
/// use glam::Vec3;
/// use sparti::{ObjectDesc, Shape};
/// let wall = ObjectDesc::new(Shape::cuboid(Vec3::ZERO, Vec3::new(10.0, 1.0, 0.1)), "wall")
///     .with_layer(0b10)
///     .with_static(true);
/// assert!(wall.is_static);
/// ```
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[derive(Clone, Debug, PartialEq)]
pub struct ObjectDesc<V: Vector, T> {
    /// The bounds.
    pub shape: Shape<V>,
    /// Anything the game wants back (an entity id, say).
    pub value: T,
    /// The layers the object is on (Box2D's `category_bits`). Default 1.
    pub layer: u32,
    /// The layers it collides with (Box2D's `mask_bits`). Default all.
    pub mask: u32,
    /// Static objects are never tested against each other. Default false.
    pub is_static: bool,
}

impl<V: Vector, T> ObjectDesc<V, T> {
    /// A moving object on layer 1 that collides with every layer.
    pub fn new(shape: impl Into<Shape<V>>, value: T) -> Self {
        Self {
            shape: shape.into(),
            value,
            layer: 1,
            mask: u32::MAX,
            is_static: false,
        }
    }
    /// Sets the layer bits.
    pub fn with_layer(mut self, layer: u32) -> Self {
        self.layer = layer;
        self
    }
    /// Sets the mask bits: the layers this object collides with.
    pub fn with_mask(mut self, mask: u32) -> Self {
        self.mask = mask;
        self
    }
    /// Marks the object static (or moving).
    pub fn with_static(mut self, is_static: bool) -> Self {
        self.is_static = is_static;
        self
    }
}

/// An object as stored: its shape, value, layers and flag (its bounding
/// box is [`Object::aabb`], computed from the shape).
#[derive(Clone, Debug, PartialEq)]
pub struct Object<V: Vector, T> {
    /// The current shape.
    pub shape: Shape<V>,
    /// The user value.
    pub value: T,
    /// Layer bits.
    pub layer: u32,
    /// Mask bits.
    pub mask: u32,
    /// Static flag.
    pub is_static: bool,
}

/// The largest coordinate magnitude of an object: `2^60`, about `1.15e18`.
///
/// Every structure refuses objects beyond it with [`Error::WorldTooLarge`],
/// so that squared distances between objects (up to `3 * 2^122`) never
/// overflow `f32` and every structure gives the same answer.
pub const MAX_COORDINATE: f32 = 1.152_921_5e18;

/// True when every coordinate of the box is within [`MAX_COORDINATE`].
#[inline]
pub(crate) fn within_limits<V: Vector>(b: &Aabb<V>) -> bool {
    b.min.abs().max(b.max.abs()).max_element() <= MAX_COORDINATE
}

/// Checks a shape given for an object and returns its bounding box.
///
/// # Errors
/// A malformed shape, or [`Error::WorldTooLarge`] beyond [`MAX_COORDINATE`].
// Always inlined: an update calls it for every moved object, and out of
// line (as the compiler chose once it had more callers) the frame of
// sparti-bench's pairs3d at 10k was 10% slower.
#[inline(always)]
pub(crate) fn checked_aabb<V: Vector>(shape: &Shape<V>) -> Result<Aabb<V>, Error> {
    // A sphere within the limits in one pass; the checks one at a time
    // say what is wrong with any other.
    if let Shape::Sphere(s) = shape
        && let Some(b) = s.aabb_within(MAX_COORDINATE)
    {
        return Ok(b);
    }
    let b = shape.checked_aabb()?;
    if within_limits(&b) {
        Ok(b)
    } else {
        Err(Error::WorldTooLarge)
    }
}

impl<V: Vector, T> Object<V, T> {
    /// The shape's bounding box (computed from the shape: the structures
    /// keep each box once, in their own lists, so the object does not
    /// hold a copy).
    ///
    /// # Example
    /// ```
    /// use glam::Vec2;
    /// use sparti::{Aabb, ObjectDesc, Quadtree, Shape, SpatialIndex};
    /// let mut tree = Quadtree::<u32>::new();
    /// let h = tree.insert(ObjectDesc::new(Shape::circle(Vec2::ONE, 0.5), 7)).unwrap();
    /// let aabb = tree.get(h).unwrap().aabb();
    /// assert_eq!(aabb, Aabb::new(Vec2::splat(0.5), Vec2::splat(1.5)).unwrap());
    /// ```
    #[inline]
    pub fn aabb(&self) -> Aabb<V> {
        self.shape.aabb()
    }

    /// Checks the description and makes the object.
    pub(crate) fn from_desc(d: ObjectDesc<V, T>) -> Result<Self, Error> {
        checked_aabb(&d.shape)?;
        Ok(Self::from_checked(d))
    }

    /// Makes the object of a description already checked.
    #[inline]
    pub(crate) fn from_checked(d: ObjectDesc<V, T>) -> Self {
        Self {
            shape: d.shape,
            value: d.value,
            layer: d.layer,
            mask: d.mask,
            is_static: d.is_static,
        }
    }

    /// The description that makes this object again: for saving an index
    /// (with the `serde` feature, descriptions serialize) and loading it
    /// into any structure with [`SpatialIndex::insert_many`], whose handles
    /// come back in the same order.
    ///
    /// # Example
    /// ```
    /// use glam::Vec2;
    /// use sparti::{Bsp2, ObjectDesc, Quadtree, Shape, SpatialIndex};
    /// let mut level = Quadtree::<String>::new();
    /// level.insert(ObjectDesc::new(Shape::rect(Vec2::ZERO, Vec2::ONE), "door".to_string()).with_static(true)).unwrap();
    /// let saved: Vec<_> = level.objects().map(|(_, o)| o.to_desc()).collect();
    /// let mut loaded = Bsp2::<String>::new();
    /// let handles = loaded.insert_many(saved).unwrap();
    /// assert_eq!(loaded.get(handles[0]).unwrap().value, "door");
    /// assert!(loaded.get(handles[0]).unwrap().is_static);
    /// ```
    pub fn to_desc(&self) -> ObjectDesc<V, T>
    where
        T: Clone,
    {
        ObjectDesc {
            shape: self.shape,
            value: self.value.clone(),
            layer: self.layer,
            mask: self.mask,
            is_static: self.is_static,
        }
    }

    /// True when these two objects form a pair: not both static, each
    /// one's layer in the other's mask, their layers colliding in the
    /// matrix, and the exact shapes overlapping (touching included).
    ///
    /// Each test is made and their results and-ed, without a branch on
    /// their outcomes: in the pair searches a box hit is a pair about half
    /// the time, a coin toss to the branch predictor.
    #[inline(always)]
    pub fn pairs_with(&self, o: &Self, matrix: &LayerMatrix) -> bool {
        !(self.is_static & o.is_static)
            & (self.layer & o.mask != 0)
            & (o.layer & self.mask != 0)
            & matrix.collides(self.layer, o.layer)
            & self
                .shape
                .intersects_with_boxes(&self.aabb(), &o.shape, &o.aabb())
    }

    /// [`Object::pairs_with`] for two objects that are not both static
    /// and whose boxes are known to meet (the grid's pair search tests
    /// both on its copies of the same values): the layers and the exact
    /// shapes only, without reading the boxes again.
    /// `matrix` is `None` for [`LayerMatrix::ALL`] (every layer meets
    /// every layer: the matrix's rows are not read).
    #[inline(always)]
    pub(crate) fn pairs_with_where_boxes_meet(
        &self,
        o: &Self,
        matrix: Option<&LayerMatrix>,
    ) -> bool {
        (self.layer & o.mask != 0)
            & (o.layer & self.mask != 0)
            & matrix.is_none_or(|m| m.collides(self.layer, o.layer))
            & self.shape.intersects_where_boxes_meet(&o.shape)
    }
}

/// Which objects a query returns: those with `layer & layers != 0`.
///
/// # Example
/// ```
/// use glam::Vec2;
/// use sparti::{Filter, ObjectDesc, Quadtree, Shape, SpatialIndex};
/// const ENEMY: u32 = 1 << 1;
/// let mut tree = Quadtree::<&str>::new();
/// tree.insert(ObjectDesc::new(Shape::circle(Vec2::ZERO, 1.0), "ally")).unwrap();
/// let orc = tree
///     .insert(ObjectDesc::new(Shape::circle(Vec2::X, 1.0), "orc").with_layer(ENEMY))
///     .unwrap();
/// let mut found = Vec::new();
/// tree.query_radius(Vec2::ZERO, 3.0, Filter::layers(ENEMY), &mut found);
/// assert_eq!(found, vec![orc]);
/// tree.query_radius(Vec2::ZERO, 3.0, Filter::ALL, &mut found);
/// assert_eq!(found.len(), 2);
/// ```
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Filter {
    /// Layer bits to keep.
    pub layers: u32,
}

impl Filter {
    /// Every object.
    pub const ALL: Filter = Filter { layers: u32::MAX };
    /// Objects on any of these layers.
    pub fn layers(layers: u32) -> Self {
        Self { layers }
    }
    /// True when an object on `layer` passes.
    #[inline]
    pub fn accepts(&self, layer: u32) -> bool {
        layer & self.layers != 0
    }
}

impl Default for Filter {
    fn default() -> Self {
        Self::ALL
    }
}

/// Two overlapping objects, `a < b`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Pair {
    /// The smaller handle.
    pub a: Handle,
    /// The larger handle.
    pub b: Handle,
}

/// A contact record: a pair with its contact point, normal and depth.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Contact<V: Vector> {
    /// The smaller handle.
    pub a: Handle,
    /// The larger handle.
    pub b: Handle,
    /// A point in the overlap.
    pub point: V,
    /// Unit normal from `a` towards `b`.
    pub normal: V,
    /// Penetration depth (0 when touching).
    pub depth: f32,
}

impl<V: Vector> Contact<V> {
    /// The two objects, without the contact's geometry.
    ///
    /// # Example
    /// ```
    /// use glam::Vec2;
    /// use sparti::{ObjectDesc, Quadtree, Shape, SpatialIndex};
    /// let mut tree = Quadtree::<u32>::new();
    /// let a = tree.insert(ObjectDesc::new(Shape::sphere(Vec2::ZERO, 1.0), 1)).unwrap();
    /// let b = tree.insert(ObjectDesc::new(Shape::sphere(Vec2::new(1.5, 0.0), 1.0), 2)).unwrap();
    /// let mut contacts = Vec::new();
    /// tree.contacts(&mut contacts);
    /// assert_eq!(contacts[0].pair(), sparti::Pair { a, b });
    /// assert_eq!(contacts[0].depth, 0.5);
    /// ```
    pub fn pair(&self) -> Pair {
        Pair {
            a: self.a,
            b: self.b,
        }
    }
}

/// A ray hit: the object, and where the ray met it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RayHit<V: Vector> {
    /// The object hit.
    pub handle: Handle,
    /// Distance along the ray.
    pub distance: f32,
    /// The point hit.
    pub point: V,
    /// The outward surface normal there (`-dir` when the ray starts inside).
    pub normal: V,
}

/// A neighbour found by [`SpatialIndex::nearest_k`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Neighbor {
    /// The object.
    pub handle: Handle,
    /// Distance from the query point to the object's shape (0 inside).
    pub distance: f32,
}

/// Work counters, accumulated until [`SpatialIndex::reset_counters`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Candidate pairs whose bounding boxes were compared in pair searches.
    /// The brute force does `N(N-1)/2` per search.
    pub pair_tests: u64,
    /// Exact shape tests (pairs and query candidates that passed the box test).
    pub shape_tests: u64,
    /// Boxes of objects tested against node bounds by pair searches (to
    /// keep, for a node, only the ancestor objects that reach it).
    pub bound_tests: u64,
    /// Nodes visited by queries and pair searches.
    pub node_visits: u64,
    /// Queries answered.
    pub queries: u64,
    /// Objects inserted but not yet built into the tree, tested one by one
    /// by queries and pair searches (see [`SpatialIndex::flush`]). Zero in
    /// a game that calls `flush` or `end_frame` after its changes.
    pub pending_tests: u64,
    /// Pair searches and queries answered from the structure's grid
    /// rather than by a walk of its tree (see [`SpatialIndex::flush`]).
    pub grid_searches: u64,
}

impl Counters {
    /// The sum of two sets of counters (per-task counters of a batch).
    #[cfg_attr(not(feature = "rayon"), allow(dead_code))]
    pub(crate) fn merged(self, o: Self) -> Self {
        Self {
            pair_tests: self.pair_tests + o.pair_tests,
            shape_tests: self.shape_tests + o.shape_tests,
            bound_tests: self.bound_tests + o.bound_tests,
            node_visits: self.node_visits + o.node_visits,
            queries: self.queries + o.queries,
            pending_tests: self.pending_tests + o.pending_tests,
            grid_searches: self.grid_searches + o.grid_searches,
        }
    }
}

/// Tree statistics.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TreeStats {
    /// Live objects.
    pub objects: usize,
    /// Objects queued for the build step (`flush`), not yet in the tree.
    pub pending: usize,
    /// Nodes in the tree (the brute force counts as one).
    pub nodes: usize,
    /// Nodes without children.
    pub leaves: usize,
    /// Depth of the deepest node (the root is depth 0).
    pub max_depth: usize,
    /// `objects_per_node[k]` is the number of nodes holding exactly `k` objects.
    pub objects_per_node: Vec<usize>,
    /// Bytes the structure holds (its arrays' capacities), objects included.
    pub memory_bytes: usize,
}

impl TreeStats {
    /// Share of nodes that hold at most `k` objects, in `[0, 1]`.
    pub fn share_of_nodes_with_at_most(&self, k: usize) -> f64 {
        let total: usize = self.objects_per_node.iter().sum();
        if total == 0 {
            return 1.0;
        }
        let small: usize = self.objects_per_node.iter().take(k + 1).sum();
        small as f64 / total as f64
    }
}

/// The one API of every spatial structure in sparti.
///
/// A trait rather than identical inherent methods, so that one generic test
/// suite checks every structure against [`BruteForce`](crate::BruteForce),
/// and a game can switch structures by changing one type.
///
/// # Changes, then queries
/// Changes (`insert`, `update`, `remove`) take `&mut self`; every query
/// (regions, rays, k nearest, pairs, contacts) takes `&self`, and every
/// structure is `Send + Sync` when its values are, so one index can be
/// queried from many threads at once (read-only systems of an ECS running
/// in parallel, or `std::thread::scope`).
///
/// Insertions are queued and built into the tree in one pass by
/// [`SpatialIndex::flush`], the explicit build step (also done by
/// [`SpatialIndex::end_frame`]). A query never returns a stale answer: one
/// that meets queued insertions tests them one by one beside the tree,
/// exactly but at a linear cost, counted in [`Counters::pending_tests`].
/// Moves and removals take effect at once. So a frame is: apply the
/// changes, call `flush`, then query from as many threads as you like.
///
/// Queries fill a caller's `Vec` (cleared first), so a game that keeps its
/// buffers allocates nothing per query.
///
/// # Example
/// ```
/// use glam::Vec3;
/// use sparti::{Filter, ObjectDesc, Octree, Shape, SpatialIndex};
/// let mut tree = Octree::new();
/// let a = tree.insert(ObjectDesc::new(Shape::sphere(Vec3::ZERO, 1.0), "a")).unwrap();
/// let b = tree.insert(ObjectDesc::new(Shape::sphere(Vec3::new(1.5, 0.0, 0.0), 1.0), "b")).unwrap();
/// let mut pairs = Vec::new();
/// tree.pairs(&mut pairs);
/// assert_eq!(pairs.len(), 1);
/// let mut found = Vec::new();
/// tree.query_radius(Vec3::new(-2.0, 0.0, 0.0), 1.5, Filter::ALL, &mut found);
/// assert_eq!(found, vec![a]);
/// tree.remove(b).unwrap();
/// assert!(tree.get(b).is_err()); // stale handle
/// ```
pub trait SpatialIndex<V: Vector, T> {
    /// Inserts an object and returns its handle.
    ///
    /// # Errors
    /// A malformed shape ([`Error::NonFinite`], [`Error::NegativeSize`],
    /// [`Error::InvertedBox`]), or a structure-specific refusal such as
    /// [`Error::OutsideWorld`].
    fn insert(&mut self, desc: ObjectDesc<V, T>) -> Result<Handle, Error>;

    /// Inserts many objects at once, returning their handles in order.
    /// All are checked first: on error nothing is inserted.
    ///
    /// Into a tree that has never held an object, the objects are made
    /// in the vector's own memory, which the tree keeps as their array,
    /// spare capacity included: a level's first load copies nothing into
    /// new memory.
    ///
    /// # Errors
    /// As [`SpatialIndex::insert`], for the first bad object.
    fn insert_many(&mut self, descs: Vec<ObjectDesc<V, T>>) -> Result<Vec<Handle>, Error>;

    /// Moves or resizes an object.
    ///
    /// Many objects are moved fastest in the order of their handles'
    /// `index` (the order they were inserted in, where none was removed
    /// before): each move of a tree then asks the processor to fetch what
    /// the next ones will write. Any order gives the same result.
    ///
    /// # Errors
    /// [`Error::StaleHandle`], a malformed shape, or a refusal of the
    /// structure's out-of-bounds policy; the object is then unchanged.
    fn update(&mut self, handle: Handle, shape: Shape<V>) -> Result<(), Error>;

    /// Moves or resizes many objects: what a loop of
    /// [`SpatialIndex::update`] does, but every move is checked first (the
    /// handle, the shape, the coordinate limits, an out-of-bounds policy
    /// that refuses), and on error nothing is moved. With the `rayon`
    /// feature, the trees check the moves on rayon's threads and, from
    /// 4,096 moves, work in passes there: the moves that leave an object
    /// in its node (most of a frame's) are found first and written
    /// together, the others applied in order after them. Such a batch
    /// enters rayon's pool once: called from outside it (a game's main
    /// thread), it waits for one hand-off to the pool's threads, not one
    /// a pass; with a pool of one thread, nothing is handed off and the
    /// passes run on the calling thread. On a machine with few cores, or
    /// on one thread, a loop of `update` is faster below a few hundred
    /// thousand moves (BENCHMARKS.md, the kernel's forty-second session).
    /// Without the
    /// feature the same passes run on one thread from 262,144 moves, where
    /// they beat the loop (about 8% at a million objects); below that,
    /// checking every move before the first is applied is a pass of its
    /// own, and a loop of `update` is a little faster. The objects end where
    /// the loop puts them (the pairs are the loop's as a set; their order
    /// may differ from the loop's, and is the same on any number of
    /// threads). An object that the `Remove` policy evicts
    /// during the batch is skipped by the batch's later moves (it is in
    /// the structure's evicted list). The values must be `Send + Sync`,
    /// feature or not.
    ///
    /// # Errors
    /// The first bad move's error ([`Error::StaleHandle`], a malformed
    /// shape, [`Error::WorldTooLarge`], [`Error::OutsideWorld`]); nothing
    /// is changed then.
    ///
    /// # Example
    /// ```
    /// use glam::Vec2;
    /// use sparti::{Error, LooseQuadtree, ObjectDesc, Shape, SpatialIndex};
    /// let mut tree = LooseQuadtree::<u32>::new();
    /// let hs: Vec<_> = (0..100)
    ///     .map(|i| tree.insert(ObjectDesc::new(Shape::sphere(Vec2::splat(i as f32), 0.5), i)).unwrap())
    ///     .collect();
    /// tree.flush();
    /// // Every object one unit to the right.
    /// let moves: Vec<_> = hs
    ///     .iter()
    ///     .enumerate()
    ///     .map(|(i, &h)| (h, Shape::sphere(Vec2::new(i as f32 + 1.0, i as f32), 0.5)))
    ///     .collect();
    /// tree.update_many(&moves).unwrap();
    /// assert_eq!(tree.get(hs[3]).unwrap().shape.center(), Vec2::new(4.0, 3.0));
    /// // One bad move, and nothing moves.
    /// let bad = [(hs[0], Shape::sphere(Vec2::ZERO, 0.5)), (hs[1], Shape::sphere(Vec2::NAN, 0.5))];
    /// assert!(matches!(tree.update_many(&bad), Err(Error::NonFinite)));
    /// assert_eq!(tree.get(hs[0]).unwrap().shape.center(), Vec2::new(1.0, 0.0));
    /// ```
    fn update_many(&mut self, moves: &[(Handle, Shape<V>)]) -> Result<(), Error>
    where
        T: Send + Sync,
    {
        for (h, shape) in moves {
            self.get(*h)?;
            checked_aabb(shape)?;
        }
        for (h, shape) in moves {
            self.update(*h, *shape)?;
        }
        Ok(())
    }

    /// Removes an object and gives back its value.
    ///
    /// # Errors
    /// [`Error::StaleHandle`] if it was already removed.
    fn remove(&mut self, handle: Handle) -> Result<T, Error>;

    /// The object behind a handle.
    ///
    /// # Errors
    /// [`Error::StaleHandle`].
    fn get(&self, handle: Handle) -> Result<&Object<V, T>, Error>;

    /// The user value behind a handle, mutably.
    ///
    /// # Errors
    /// [`Error::StaleHandle`].
    fn value_mut(&mut self, handle: Handle) -> Result<&mut T, Error>;

    /// Number of live objects.
    fn len(&self) -> usize;

    /// True when there are no objects.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every live object with its handle, in handle order.
    fn objects<'a>(&'a self) -> impl Iterator<Item = (Handle, &'a Object<V, T>)>
    where
        T: 'a;

    /// Removes every object: every handle becomes stale.
    fn clear(&mut self);

    /// The build step: files the queued insertions into the tree in one
    /// pass (a bulk build when the tree is empty) and sorts the objects
    /// into the trees' grid (the pair search's; nothing to do if a pair
    /// search since the last change left it up to date; left unbuilt
    /// where the objects are too crowded for it). Until the next change,
    /// every query (regions, rays, k nearest) searches that grid rather
    /// than walk the tree: the same results (a region query's in another
    /// order), found faster (BENCHMARKS.md). Where it sorts the grid and
    /// finds it too crowded, and after a bulk build, it also brings the
    /// boxes a tree walk prunes by up to date; otherwise the first query
    /// that walks the tree does (after a change), once. Queries are exact
    /// without the build step, but walk the tree and test queued
    /// insertions one by one (see the trait's docs). [`Counters::grid_searches`] counts the searches the
    /// grid answered. Calling it after a pair search (which brought the
    /// grid up to date) costs next to nothing and lets the queries that
    /// follow search the grid.
    ///
    /// # Example
    /// ```
    /// use glam::Vec2;
    /// use sparti::{Filter, ObjectDesc, Quadtree, Shape, SpatialIndex};
    /// let mut tree = Quadtree::<u32>::new();
    /// for i in 0..100 {
    ///     tree.insert(ObjectDesc::new(Shape::sphere(Vec2::new(i as f32, 0.0), 0.4), i)).unwrap();
    /// }
    /// let mut found = Vec::new();
    /// tree.query_radius(Vec2::ZERO, 1.0, Filter::ALL, &mut found); // exact, but slow:
    /// assert_eq!(found.len(), 2);
    /// assert_eq!(tree.counters().pending_tests, 100); // every queued object tested
    /// tree.flush(); // the build step
    /// tree.reset_counters();
    /// tree.query_radius(Vec2::ZERO, 1.0, Filter::ALL, &mut found);
    /// assert_eq!(found.len(), 2);
    /// assert_eq!(tree.counters().pending_tests, 0);
    /// ```
    fn flush(&mut self);

    /// Housekeeping once per game frame: builds the queued insertions
    /// ([`SpatialIndex::flush`]'s first half), ages empty branches and
    /// prunes the dead ones. It sorts nothing into the grid, but if a
    /// pair search since the last change left the grid up to date, the
    /// queries use it from here on (as after `flush`). Queries stay
    /// correct without it.
    fn end_frame(&mut self);

    /// Objects selected by a region (box, sphere, frustum, cone), passing the
    /// filter, into `out` (cleared first). Order is the structure's; sort if
    /// you need a canonical one.
    fn query<R: Region<V>>(&self, region: &R, filter: Filter, out: &mut Vec<Handle>);

    /// The nearest object hit by the ray within `max_dist`; ties go to
    /// the smaller handle. A NaN or negative `max_dist` hits nothing.
    fn ray_nearest(&self, ray: &Ray<V>, max_dist: f32, filter: Filter) -> Option<RayHit<V>>;

    /// Every object hit by the ray within `max_dist`, into `out`
    /// (cleared first), sorted by distance then handle.
    fn ray_all(&self, ray: &Ray<V>, max_dist: f32, filter: Filter, out: &mut Vec<RayHit<V>>);

    /// The `k` objects nearest to `point`, into `out` (cleared first),
    /// by distance to their shape (0 inside) then handle. `k = 0` or a
    /// non-finite point finds nothing.
    ///
    /// # Example
    /// ```
    /// use glam::Vec2;
    /// use sparti::{Filter, ObjectDesc, Quadtree, Shape, SpatialIndex};
    /// let mut tree = Quadtree::<u32>::new();
    /// for i in 0..10 {
    ///     tree.insert(ObjectDesc::new(Shape::sphere(Vec2::new(i as f32 * 10.0, 0.0), 1.0), i)).unwrap();
    /// }
    /// let mut near = Vec::new();
    /// tree.nearest_k(Vec2::new(31.0, 0.0), 2, Filter::ALL, &mut near);
    /// let values: Vec<u32> = near.iter().map(|n| tree.get(n.handle).unwrap().value).collect();
    /// assert_eq!(values, vec![3, 4]); // at distances 0 (inside) and 8
    /// assert_eq!(near[1].distance, 8.0);
    /// ```
    fn nearest_k(&self, point: V, k: usize, filter: Filter, out: &mut Vec<Neighbor>);

    /// Sets which layers collide with which; applied by the pair
    /// search from the next call on. Default: [`LayerMatrix::ALL`].
    fn set_layer_matrix(&mut self, matrix: LayerMatrix);

    /// The layer matrix in force.
    fn layer_matrix(&self) -> &LayerMatrix;

    /// Calls `f(a, b, object_a, object_b)` once for every overlapping pair
    ///, `a < b`, after the exact shape test, skipping static-static
    /// pairs and pairs whose layers, masks or layer matrix exclude each
    /// other.
    fn for_each_pair<F>(&self, f: F)
    where
        F: FnMut(Handle, Handle, &Object<V, T>, &Object<V, T>);

    /// Counters since the last reset.
    fn counters(&self) -> Counters;

    /// Zeroes the counters.
    fn reset_counters(&mut self);

    /// Tree statistics.
    fn stats(&self) -> TreeStats;

    /// Calls `f(bounds, depth, object_count)` for every node, parents before
    /// children (the brute force has no node and calls nothing): for
    /// drawing the structure and for statistics.
    fn for_each_node<F: FnMut(&Aabb<V>, usize, usize)>(&self, f: F);

    /// Checks every invariant of the structure.
    ///
    /// # Errors
    /// The first broken invariant: always a bug in sparti.
    fn validate(&self) -> Result<(), ValidationError>;

    /// Every overlapping pair into `out` (cleared first); see
    /// [`SpatialIndex::for_each_pair`].
    fn pairs(&self, out: &mut Vec<Pair>) {
        out.clear();
        self.for_each_pair(|a, b, _, _| out.push(Pair { a, b }));
    }

    /// Every overlapping pair with its contact record into `out`
    /// (cleared first).
    fn contacts(&self, out: &mut Vec<Contact<V>>) {
        out.clear();
        self.for_each_pair(|a, b, oa, ob| {
            if let Some(c) = contact_of(a, b, oa, ob) {
                out.push(c);
            }
        });
    }

    /// Calls `f` with every contact record and the two objects (their
    /// values, layers and shapes at hand, without a look-up by handle), in
    /// the order of [`SpatialIndex::contacts`].
    ///
    /// # Example
    /// ```
    /// use glam::Vec2;
    /// use sparti::{ObjectDesc, Quadtree, Shape, SpatialIndex};
    /// let mut tree = Quadtree::<&str>::new();
    /// tree.insert(ObjectDesc::new(Shape::circle(Vec2::ZERO, 1.0), "hero")).unwrap();
    /// tree.insert(ObjectDesc::new(Shape::circle(Vec2::new(1.5, 0.0), 1.0), "slime")).unwrap();
    /// let mut hits = Vec::new();
    /// tree.for_each_contact(|c, a, b| hits.push((a.value, b.value, c.depth)));
    /// assert_eq!(hits, vec![("hero", "slime", 0.5)]);
    /// ```
    fn for_each_contact<F>(&self, mut f: F)
    where
        F: FnMut(&Contact<V>, &Object<V, T>, &Object<V, T>),
    {
        self.for_each_pair(|a, b, oa, ob| {
            if let Some(c) = contact_of(a, b, oa, ob) {
                f(&c, oa, ob);
            }
        });
    }

    /// [`SpatialIndex::pairs`] on every thread of rayon's pool (feature
    /// `rayon`): the same pairs in the same order, and the same counters.
    /// The trees cut their search into independent tasks, which the
    /// threads share; each fills its own buffer and the buffers are joined
    /// in task order. Called from outside rayon's pool, the search enters
    /// it once; with a pool of one thread, its tasks run on the calling
    /// thread. Without the feature (and for the brute force) it is
    /// [`SpatialIndex::pairs`]. The values must be `Sync`, feature or not,
    /// so that a program's code does not depend on the feature.
    ///
    /// # Example
    /// ```
    /// use glam::Vec3;
    /// use sparti::{LooseOctree, ObjectDesc, Shape, SpatialIndex};
    /// let mut tree = LooseOctree::new();
    /// for i in 0..1000 {
    ///     let p = Vec3::new((i % 10) as f32, (i / 10 % 10) as f32, (i / 100) as f32) * 1.5;
    ///     tree.insert(ObjectDesc::new(Shape::sphere(p, 1.0), i)).unwrap();
    /// }
    /// tree.flush();
    /// let (mut one, mut many) = (Vec::new(), Vec::new());
    /// tree.pairs(&mut one);
    /// tree.par_pairs(&mut many);
    /// assert_eq!(one, many);
    /// ```
    fn par_pairs(&self, out: &mut Vec<Pair>)
    where
        T: Sync,
    {
        self.pairs(out);
    }

    /// [`SpatialIndex::contacts`] on every thread of rayon's pool (feature
    /// `rayon`): the same records in the same order (see
    /// [`SpatialIndex::par_pairs`]).
    fn par_contacts(&self, out: &mut Vec<Contact<V>>)
    where
        T: Sync,
    {
        self.contacts(out);
    }

    /// Objects overlapping a box.
    fn query_aabb(&self, aabb: &Aabb<V>, filter: Filter, out: &mut Vec<Handle>) {
        self.query(aabb, filter, out);
    }

    /// [`SpatialIndex::ray_nearest`] for many rays, each with its maximum
    /// distance: `out` (cleared first) gets one entry per ray, in order,
    /// exactly what a loop of single queries returns. Counters add up as
    /// for that loop.
    ///
    /// With the `rayon` feature the trees answer the batch on several
    /// threads (same results, same order); the default is that loop. The
    /// user values must be `Sync` for that, feature or not, so that a
    /// program's code does not depend on the feature.
    ///
    /// # Example
    /// ```
    /// use glam::Vec3;
    /// use sparti::{Filter, ObjectDesc, Octree, Ray, Shape, SpatialIndex};
    /// let mut tree = Octree::<u32>::new();
    /// tree.insert(ObjectDesc::new(Shape::sphere(Vec3::new(5.0, 0.0, 0.0), 1.0), 7)).unwrap();
    /// let rays = [
    ///     (Ray::new(Vec3::ZERO, Vec3::X).unwrap(), 100.0),
    ///     (Ray::new(Vec3::ZERO, Vec3::Y).unwrap(), 100.0),
    /// ];
    /// let mut hits = Vec::new();
    /// tree.ray_nearest_batch(&rays, Filter::ALL, &mut hits);
    /// assert_eq!(hits.len(), 2);
    /// assert_eq!(hits[0].unwrap().distance, 4.0);
    /// assert!(hits[1].is_none());
    /// ```
    fn ray_nearest_batch(
        &self,
        rays: &[(Ray<V>, f32)],
        filter: Filter,
        out: &mut Vec<Option<RayHit<V>>>,
    ) where
        T: Sync,
    {
        out.clear();
        out.reserve(rays.len());
        for (ray, max_dist) in rays {
            let hit = self.ray_nearest(ray, *max_dist, filter);
            out.push(hit);
        }
    }

    /// [`SpatialIndex::query_aabb`] for many boxes, flattened: the
    /// results of box `i` are `handles[offsets[i]..offsets[i + 1]]`, in
    /// the order the single query gives them. Both vectors are cleared
    /// first; `offsets` gets `boxes.len() + 1` entries (starting with 0).
    /// Counters add up as for a loop of single queries.
    ///
    /// With the `rayon` feature the trees answer the batch on several
    /// threads (same results, same order); the default is that loop. The
    /// user values must be `Sync` for that, feature or not, so that a
    /// program's code does not depend on the feature.
    ///
    /// # Example
    /// ```
    /// use glam::Vec3;
    /// use sparti::{Aabb, Filter, ObjectDesc, Octree, Shape, SpatialIndex};
    /// let mut tree = Octree::<u32>::new();
    /// let a = tree.insert(ObjectDesc::new(Shape::sphere(Vec3::ZERO, 1.0), 0)).unwrap();
    /// let boxes = [
    ///     Aabb::new(Vec3::splat(-2.0), Vec3::splat(-0.5)).unwrap(),
    ///     Aabb::new(Vec3::splat(5.0), Vec3::splat(6.0)).unwrap(),
    /// ];
    /// let (mut handles, mut offsets) = (Vec::new(), Vec::new());
    /// tree.query_aabb_batch(&boxes, Filter::ALL, &mut handles, &mut offsets);
    /// assert_eq!(offsets, vec![0, 1, 1]);
    /// assert_eq!(&handles[offsets[0]..offsets[1]], &[a]);
    /// assert!(handles[offsets[1]..offsets[2]].is_empty());
    /// ```
    fn query_aabb_batch(
        &self,
        boxes: &[Aabb<V>],
        filter: Filter,
        handles: &mut Vec<Handle>,
        offsets: &mut Vec<usize>,
    ) where
        T: Sync,
    {
        handles.clear();
        offsets.clear();
        offsets.reserve(boxes.len() + 1);
        offsets.push(0);
        let mut one = Vec::new();
        for b in boxes {
            self.query_aabb(b, filter, &mut one);
            handles.extend_from_slice(&one);
            offsets.push(handles.len());
        }
    }

    /// Objects overlapping a sphere.
    fn query_sphere(&self, sphere: &Sphere<V>, filter: Filter, out: &mut Vec<Handle>) {
        self.query(sphere, filter, out);
    }

    /// Objects within `radius` of a point: those whose shape comes
    /// within that distance. A NaN or negative radius finds nothing.
    fn query_radius(&self, point: V, radius: f32, filter: Filter, out: &mut Vec<Handle>) {
        match Sphere::new(point, radius) {
            Ok(s) => self.query(&s, filter, out),
            Err(_) => out.clear(),
        }
    }

    /// Objects not wholly outside any plane of the frustum.
    fn query_frustum(&self, frustum: &Frustum<V>, filter: Filter, out: &mut Vec<Handle>) {
        self.query(frustum, filter, out);
    }

    /// Objects whose centre lies in the view cone.
    ///
    /// # Example
    /// ```
    /// use glam::Vec3;
    /// use sparti::{Cone, Filter, ObjectDesc, Octree, Shape, SpatialIndex};
    /// let mut tree = Octree::<&str>::new();
    /// let thief = tree.insert(ObjectDesc::new(Shape::sphere(Vec3::new(8.0, 0.0, 1.0), 0.5), "thief")).unwrap();
    /// tree.insert(ObjectDesc::new(Shape::sphere(Vec3::new(-8.0, 0.0, 0.0), 0.5), "behind")).unwrap();
    /// // A guard at the origin looking along +x, 30 degrees each side, 20 units.
    /// let sight = Cone::new(Vec3::ZERO, Vec3::X, 30f32.to_radians(), 20.0).unwrap();
    /// let mut seen = Vec::new();
    /// tree.query_cone(&sight, Filter::ALL, &mut seen);
    /// assert_eq!(seen, vec![thief]);
    /// ```
    fn query_cone(&self, cone: &Cone<V>, filter: Filter, out: &mut Vec<Handle>) {
        self.query(cone, filter, out);
    }

    /// The objects a region (box, sphere, frustum, cone) selects, passing
    /// the filter, as `(handle, &object)`: [`SpatialIndex::query`] as an
    /// iterator, in the same order. The query runs here, into a buffer
    /// the iterator gives back to a per-thread pool when dropped, so a
    /// warm loop of these calls allocates nothing.
    ///
    /// # Example
    /// ```
    /// use glam::Vec2;
    /// use sparti::{Aabb, Filter, ObjectDesc, Quadtree, Shape, SpatialIndex};
    /// let mut tree = Quadtree::<&str>::new();
    /// tree.insert(ObjectDesc::new(Shape::circle(Vec2::new(1.0, 1.0), 0.5), "coin")).unwrap();
    /// tree.insert(ObjectDesc::new(Shape::circle(Vec2::new(9.0, 9.0), 0.5), "gem")).unwrap();
    /// let room = Aabb::new(Vec2::ZERO, Vec2::splat(4.0)).unwrap();
    /// let names: Vec<&str> = tree.objects_in(&room, Filter::ALL).map(|(_, o)| o.value).collect();
    /// assert_eq!(names, ["coin"]);
    /// ```
    fn objects_in<R: Region<V>>(
        &self,
        region: &R,
        filter: Filter,
    ) -> Found<'_, V, T, Self, Handle> {
        let mut out = crate::found::take();
        self.query(region, filter, &mut out);
        Found::new(self, out)
    }

    /// The objects whose shape comes within `radius` of `point`, passing
    /// the filter, as `(handle, &object)`: [`SpatialIndex::query_radius`]
    /// as an iterator (see [`SpatialIndex::objects_in`]). A NaN or
    /// negative radius finds nothing.
    ///
    /// # Example
    /// ```
    /// use glam::Vec3;
    /// use sparti::{Filter, ObjectDesc, Octree, Shape, SpatialIndex};
    /// let mut tree = Octree::<u32>::new();
    /// for hp in [10, 20, 30] {
    ///     let at = Vec3::new(hp as f32, 0.0, 0.0);
    ///     tree.insert(ObjectDesc::new(Shape::sphere(at, 1.0), hp)).unwrap();
    /// }
    /// // A blast of radius 20 at the origin reaches the first two.
    /// let hurt: u32 = tree.objects_within(Vec3::ZERO, 20.0, Filter::ALL).map(|(_, o)| o.value).sum();
    /// assert_eq!(hurt, 30);
    /// ```
    fn objects_within(
        &self,
        point: V,
        radius: f32,
        filter: Filter,
    ) -> Found<'_, V, T, Self, Handle> {
        let mut out = crate::found::take();
        self.query_radius(point, radius, filter, &mut out);
        Found::new(self, out)
    }

    /// The `k` objects nearest to `point`, passing the filter, nearest
    /// first, as `(neighbour, &object)`: [`SpatialIndex::nearest_k`] as an
    /// iterator (see [`SpatialIndex::objects_in`]).
    ///
    /// # Example
    /// ```
    /// use glam::Vec2;
    /// use sparti::{Filter, ObjectDesc, Quadtree, Shape, SpatialIndex};
    /// let mut tree = Quadtree::<char>::new();
    /// for (x, name) in [(3.0, 'a'), (-1.0, 'b'), (10.0, 'c')] {
    ///     tree.insert(ObjectDesc::new(Shape::circle(Vec2::new(x, 0.0), 0.5), name)).unwrap();
    /// }
    /// let near: Vec<(char, f32)> = tree
    ///     .nearest(Vec2::ZERO, 2, Filter::ALL)
    ///     .map(|(n, o)| (o.value, n.distance))
    ///     .collect();
    /// assert_eq!(near, [('b', 0.5), ('a', 2.5)]);
    /// ```
    fn nearest(&self, point: V, k: usize, filter: Filter) -> Found<'_, V, T, Self, Neighbor> {
        let mut out = crate::found::take();
        self.nearest_k(point, k, filter, &mut out);
        Found::new(self, out)
    }
}

/// An object's box beside its slot and static flag (an [`Entry`] with its
/// box): what the tree's own pair searches and the grid's sort read, in
/// buffers of their own, and the brute force's list. The slot and the
/// static flag share one `u32` (the flag in its top bit: slots stay below
/// [`crate::store::SLOTS`]), so that an item takes 28 bytes in 3D and 20
/// in 2D, not 32 and 24.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Item<V: Vector> {
    pub aabb: Aabb<V>,
    /// The slot, with [`STATIC_BIT`] set for a static object; `NONE` for
    /// room.
    tag: u32,
}

/// An object's entry in its node's list ([`crate::kernel::lists`]): its
/// slot and static flag in one `u32` (the flag in the top bit: slots stay
/// below [`crate::store::SLOTS`]). The box is not copied here: the store
/// holds the object's shape, the grid its box in the order the searches
/// read. An entry of a list's unused room is [`Entry::room`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Entry(u32);

impl Entry {
    /// The entry of the object in `slot` (below [`crate::store::SLOTS`]).
    #[inline]
    pub fn new(slot: u32, is_static: bool) -> Self {
        debug_assert!(slot < crate::store::SLOTS);
        Self(slot | if is_static { STATIC_BIT } else { 0 })
    }

    /// An entry of unused room: no object's ([`Entry::is_room`]).
    #[inline]
    pub fn room() -> Self {
        Self(NONE)
    }

    /// The object's slot in the store.
    #[inline]
    pub fn slot(self) -> u32 {
        slot_of(self.0)
    }

    /// Whether the object is static.
    #[inline]
    pub fn is_static(self) -> bool {
        static_of(self.0)
    }

    /// Whether the entry is unused room rather than an object's.
    #[inline]
    pub fn is_room(self) -> bool {
        self.0 == NONE
    }

    /// The entry with its object's box: an [`Item`].
    #[inline]
    pub fn with_box<V: Vector>(self, aabb: Aabb<V>) -> Item<V> {
        Item { aabb, tag: self.0 }
    }

    /// Sets the static flag (the checks' tests break entries with it).
    #[cfg(test)]
    pub fn set_static(&mut self, is_static: bool) {
        *self = Self::new(self.slot(), is_static);
    }
}

/// The static flag's bit in an [`Entry`] and an [`Item`]'s tag (and in
/// the grid's slots): the other bits are the slot.
const STATIC_BIT: u32 = 1 << 31;

/// The slot of a tag (an [`Item`]'s, or one of the grid's slots).
#[inline]
pub(crate) fn slot_of(tag: u32) -> u32 {
    tag & !STATIC_BIT
}

/// Whether a tag's object is static (of two tags `a & b`: whether both
/// are).
#[inline]
pub(crate) fn static_of(tag: u32) -> bool {
    tag & STATIC_BIT != 0
}

impl<V: Vector> Item<V> {
    /// The entry of the object in `slot` (below [`crate::store::SLOTS`]).
    #[inline]
    pub fn new(aabb: Aabb<V>, slot: u32, is_static: bool) -> Self {
        debug_assert!(slot < crate::store::SLOTS);
        Self {
            aabb,
            tag: slot | if is_static { STATIC_BIT } else { 0 },
        }
    }

    /// An item of unused room (a list's, copied with its boxes).
    #[inline]
    pub fn room() -> Self {
        Self {
            aabb: Aabb::empty(),
            tag: NONE,
        }
    }

    /// Whether the item is unused room rather than an object's.
    #[inline]
    pub fn is_room(&self) -> bool {
        self.tag == NONE
    }

    /// The object's slot in the store.
    #[inline]
    pub fn slot(&self) -> u32 {
        slot_of(self.tag)
    }

    /// The slot and the static flag in one: the slot with [`STATIC_BIT`]
    /// set for a static object (`NONE` for room).
    #[inline]
    pub fn tag(&self) -> u32 {
        self.tag
    }

    /// Whether the object is static.
    #[inline]
    pub fn is_static(&self) -> bool {
        static_of(self.tag)
    }
}

#[cfg(test)]
mod item_tests {
    use super::*;
    use glam::{Vec2, Vec3};

    #[test]
    fn an_entry_is_one_u32_and_an_item_its_box_and_one_u32() {
        assert_eq!(size_of::<Entry>(), 4);
        assert_eq!(size_of::<Item<Vec3>>(), 28);
        assert_eq!(size_of::<Item<Vec2>>(), 20);
        let b = Aabb::new(Vec3::ZERO, Vec3::ONE).expect("finite");
        for (slot, is_static) in [
            (0, false),
            (0, true),
            (12345, true),
            (crate::store::SLOTS - 1, false),
        ] {
            let it = Item::new(b, slot, is_static);
            assert_eq!((it.slot(), it.is_static()), (slot, is_static));
            let e = Entry::new(slot, is_static);
            assert_eq!(
                (e.slot(), e.is_static(), e.is_room()),
                (slot, is_static, false)
            );
            assert_eq!(e.with_box(b).tag(), it.tag());
        }
        assert!(Entry::room().is_room());
    }
}

/// Keeps a ray's hits sorted by distance then handle.
pub(crate) fn sort_hits<V: Vector>(hits: &mut [RayHit<V>]) {
    hits.sort_unstable_by(|a, b| {
        a.distance
            .total_cmp(&b.distance)
            .then(a.handle.cmp(&b.handle))
    });
}

/// True when `a` is a better nearest hit than `b`.
#[inline]
pub(crate) fn closer<V: Vector>(a: &RayHit<V>, b: &Option<RayHit<V>>) -> bool {
    match b {
        None => true,
        Some(b) => a.distance < b.distance || (a.distance == b.distance && a.handle < b.handle),
    }
}

/// Calls `f` with a found pair, smaller handle first.
#[inline]
pub(crate) fn report_found<V: Vector, T, F>(
    store: &Store<Object<V, T>>,
    sa: u32,
    sb: u32,
    f: &mut F,
) where
    F: FnMut(Handle, Handle, &Object<V, T>, &Object<V, T>),
{
    let (oa, ob) = (store.obj(sa), store.obj(sb));
    let (ha, hb) = (store.handle(sa), store.handle(sb));
    if ha < hb {
        f(ha, hb, oa, ob);
    } else {
        f(hb, ha, ob, oa);
    }
}

/// Reports the pair of two slots (whose boxes overlap) if the objects pair
/// up, smaller handle first: the last step of every structure's pair search.
#[inline]
pub(crate) fn report_pair<V: Vector, T, F>(
    store: &Store<Object<V, T>>,
    matrix: &LayerMatrix,
    sa: u32,
    sb: u32,
    f: &mut F,
) where
    F: FnMut(Handle, Handle, &Object<V, T>, &Object<V, T>),
{
    if store.obj(sa).pairs_with(store.obj(sb), matrix) {
        report_found(store, sa, sb, f);
    }
}

/// The contact record of a pair whose shapes overlap, `None` when they do
/// not (after the box test passed on rounding).
#[inline]
pub(crate) fn contact_of<V: Vector, T>(
    a: Handle,
    b: Handle,
    oa: &Object<V, T>,
    ob: &Object<V, T>,
) -> Option<Contact<V>> {
    oa.shape.contact(&ob.shape).map(|c| Contact {
        a,
        b,
        point: c.point,
        normal: c.normal,
        depth: c.depth,
    })
}

/// Sorts neighbours by distance then handle and keeps the first `k`.
pub(crate) fn sort_neighbors(out: &mut Vec<Neighbor>, k: usize) {
    out.sort_unstable_by(|a, b| {
        a.distance
            .total_cmp(&b.distance)
            .then(a.handle.cmp(&b.handle))
    });
    out.truncate(k);
}

/// A k-nearest candidate, ordered by distance then handle.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Candidate {
    pub distance: f32,
    pub handle: Handle,
}

impl Eq for Candidate {}

impl Ord for Candidate {
    fn cmp(&self, o: &Self) -> core::cmp::Ordering {
        self.distance
            .total_cmp(&o.distance)
            .then(self.handle.cmp(&o.handle))
    }
}

impl PartialOrd for Candidate {
    fn partial_cmp(&self, o: &Self) -> Option<core::cmp::Ordering> {
        Some(self.cmp(o))
    }
}

/// The running state of a k-nearest search, shared by the trees: the best
/// `k` so far in a max-heap, and a frontier of nodes by distance. Kept in
/// each structure and reused, so a search allocates nothing once warm.
#[derive(Default)]
pub(crate) struct Knn {
    pub best: std::collections::BinaryHeap<Candidate>,
    /// Nodes to visit, nearest first, keyed by distance to their bounds
    /// (the node index in the handle's place).
    pub frontier: std::collections::BinaryHeap<core::cmp::Reverse<Candidate>>,
    pub k: usize,
}

impl Knn {
    pub fn start(&mut self, k: usize) {
        self.best.clear();
        self.frontier.clear();
        self.k = k;
    }

    /// The distance a node must not exceed to hold a better candidate. A
    /// hair of slack keeps rounding in the shape distances from pruning a
    /// node whose object ties the current k-th.
    #[inline]
    pub fn bound(&self) -> f32 {
        if self.best.len() < self.k {
            f32::INFINITY
        } else {
            let d = self.best.peek().map_or(f32::INFINITY, |c| c.distance);
            d + d * 1e-5 + f32::MIN_POSITIVE
        }
    }

    #[inline]
    pub fn offer(&mut self, handle: Handle, distance: f32) {
        let c = Candidate { distance, handle };
        if self.best.len() < self.k {
            self.best.push(c);
        } else if self.best.peek().is_some_and(|top| c < *top) {
            self.best.pop();
            self.best.push(c);
        }
    }

    /// Queues a node at `distance` from the query point.
    #[inline]
    pub fn push_node(&mut self, node: u32, distance: f32) {
        let key = Candidate {
            distance,
            handle: Handle {
                index: node,
                generation: 0,
            },
        };
        self.frontier.push(core::cmp::Reverse(key));
    }

    /// The nearest queued node, unless it is beyond the bound.
    #[inline]
    pub fn pop_node(&mut self) -> Option<u32> {
        let core::cmp::Reverse(key) = self.frontier.pop()?;
        (key.distance <= self.bound()).then_some(key.handle.index)
    }

    /// Writes the result, nearest first.
    pub fn finish(&mut self, out: &mut Vec<Neighbor>) {
        out.clear();
        out.extend(self.best.drain().map(|c| Neighbor {
            handle: c.handle,
            distance: c.distance,
        }));
        out.sort_unstable_by(|a, b| {
            a.distance
                .total_cmp(&b.distance)
                .then(a.handle.cmp(&b.handle))
        });
    }
}
