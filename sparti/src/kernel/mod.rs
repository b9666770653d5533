//! The kernel every tree is built on, written once: the state the three
//! families share ([`Core`]: the objects, the node pool, every node's
//! object list as a block of one array ([`Lists`]), the pending queue, the
//! idle list, the layer matrix, the counters and the query boxes), the one implementation of [`SpatialIndex`](crate::SpatialIndex) over a [`Family`],
//! and the pieces that let queries run on `&self` from many threads at
//! once (counters kept in atomics, derived data brought up to date on
//! first use, scratch buffers lent per search).
//!
//! # Adding a structure
//! A tree family is a type holding a [`Core`] and its own settings that
//! implements [`Family`]: where an object belongs (`first_root`, `file_queued`,
//! `update_boxed`), how a node splits (`new_child`) and the root grows,
//! its pair search (`find_pairs`), its statistics and its own invariants.
//! Its nodes carry the pool's fields (a [`Block`] of the lists, children,
//! parent, child count and a [`Lifecycle`]: `impl_pool_node!`), and the
//! kernel keeps them (`Core::alloc`, `file`, `unfile_at`, lazy pruning,
//! `lift_to_root` after a growth, `leave_world` for the out-of-bounds
//! policies). Its nodes implement [`TreeNode`], which is all the shared queries
//! (regions, rays, k nearest) need: they come for free, as does every
//! method of [`SpatialIndex`](crate::SpatialIndex). The shared test suite (`tests/it/common`)
//! then checks it against the brute force.
//!
//! # The pair search
//! Every family's pairs come first from the kernel's [`grid`]: the
//! objects of the list array sorted, by a counting sort, into the cells
//! of a hierarchical loose grid (between sorts, the grid follows the
//! objects where they moved), and rows of boxes tested eight at a time
//! (one thread, or cut into ranges for rayon's threads).
//! It needs nothing from the family. Where the grid would be crowded (a
//! million objects in one spot, a small cluster in a huge sparse world),
//! the family's own walk of its tree runs instead (`find_pairs`): a family
//! whose children tile their parent, each object in the deepest node that
//! contains it, gets it, one-thread and parallel, from [`tight_pairs`] (as
//! the orthtrees and the BSP do: `impl_tight!` and `pair_search_methods!`);
//! another one plans its own [`PairTasks`], and `Core::par_collect` runs
//! them on rayon's threads.
//!
//! # Changes not yet built
//! Insertions are queued and built in one pass by [`crate::SpatialIndex::flush`]
//! (or [`crate::SpatialIndex::end_frame`]). A query that meets queued insertions
//! still answers exactly: it tests them one by one beside the tree (a
//! linear cost, counted in [`Counters::pending_tests`]). Moves and
//! removals go into the tree at once; the boxes around the subtrees'
//! objects that queries prune by are brought up to date by `flush`, or by
//! the first query after a change (once, even when many threads query at
//! the same time).

pub(crate) mod tight_pairs;

use core::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

mod batch;
pub(crate) mod grid;
mod lists;
mod pool;
pub(crate) mod sort;
mod validate;

pub(crate) use batch::{Batch, update_many};
pub(crate) use lists::{Block, Lists};

pub(crate) use pool::{
    FIRST_LIFESPAN, IdleList, Life, Lifecycle, MAX_LIFESPAN, NodeState, PoolNode, PoolParts,
    impl_pool_node,
};
#[cfg(test)]
pub(crate) use validate::corruption;
pub(crate) use validate::{check_octant, check_tree, ensure, tree_stats};

use crate::geometry::{Aabb, Region, Shape, Vector};
use crate::store::{NONE, Store};
use crate::traverse::{SubBounds, Tree, TreeNode};
use crate::{Counters, Error, Filter, Handle, LayerMatrix, Object, ValidationError};

/// [`Counters`] that `&self` searches on many threads can add to.
#[derive(Default, Debug)]
pub(crate) struct AtomicCounters {
    pair_tests: AtomicU64,
    shape_tests: AtomicU64,
    bound_tests: AtomicU64,
    node_visits: AtomicU64,
    queries: AtomicU64,
    pending_tests: AtomicU64,
    grid_searches: AtomicU64,
}

impl AtomicCounters {
    /// Adds one search's counts (kept in a local [`Counters`] while it ran).
    #[inline]
    pub fn add(&self, c: &Counters) {
        let add = |a: &AtomicU64, v: u64| {
            if v != 0 {
                a.fetch_add(v, Ordering::Relaxed);
            }
        };
        add(&self.pair_tests, c.pair_tests);
        add(&self.shape_tests, c.shape_tests);
        add(&self.bound_tests, c.bound_tests);
        add(&self.node_visits, c.node_visits);
        add(&self.queries, c.queries);
        add(&self.pending_tests, c.pending_tests);
        add(&self.grid_searches, c.grid_searches);
    }

    /// The counts so far.
    pub fn load(&self) -> Counters {
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        Counters {
            pair_tests: get(&self.pair_tests),
            shape_tests: get(&self.shape_tests),
            bound_tests: get(&self.bound_tests),
            node_visits: get(&self.node_visits),
            queries: get(&self.queries),
            pending_tests: get(&self.pending_tests),
            grid_searches: get(&self.grid_searches),
        }
    }

    /// Back to zero.
    pub fn reset(&mut self) {
        *self = Self::default();
    }
}

/// Data derived from a structure (the query boxes), brought up to date on
/// first use after a change.
///
/// Changes (`&mut`) reach the data through [`Cached::edit`], which marks
/// it out of date; readers (`&self`, any number of threads) call
/// [`Cached::get`], and the first one after a change runs the refresh,
/// once, while the others wait for it. Up-to-date data is read without a
/// lock.
pub(crate) struct Cached<D> {
    /// The data, once up to date.
    fresh: OnceLock<D>,
    /// The data between a change and the next refresh (`None` while
    /// `fresh` holds it, or before the first use).
    stale: Mutex<Option<D>>,
}

impl<D: Default> Default for Cached<D> {
    fn default() -> Self {
        Self {
            fresh: OnceLock::new(),
            stale: Mutex::new(None),
        }
    }
}

impl<D: Default> Cached<D> {
    /// The data, for a change: it is out of date from now on.
    #[inline]
    pub fn edit(&mut self) -> &mut D {
        let stale = self.stale.get_mut().unwrap_or_else(|e| e.into_inner());
        if let Some(d) = self.fresh.take() {
            *stale = Some(d);
        }
        stale.get_or_insert_with(D::default)
    }

    /// The data, up to date: `refresh` brings it there if a change came
    /// since the last refresh.
    #[inline]
    pub fn get(&self, refresh: impl FnOnce(&mut D)) -> &D {
        self.fresh.get_or_init(|| {
            let mut d = self
                .stale
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take()
                .unwrap_or_default();
            refresh(&mut d);
            d
        })
    }

    /// Brings the data up to date now (the explicit build step).
    pub fn settle(&mut self, refresh: impl FnOnce(&mut D)) {
        if self.fresh.get().is_none() {
            let stale = self.stale.get_mut().unwrap_or_else(|e| e.into_inner());
            let mut d = stale.take().unwrap_or_default();
            refresh(&mut d);
            // `fresh` is empty: `&mut self` excludes every reader.
            let _ = self.fresh.set(d);
        }
    }

    /// The data as it is, up to date or not (`None` before its first
    /// use), without a lock: `&mut self` excludes every other user.
    #[inline]
    pub fn current(&mut self) -> Option<&D> {
        match self.fresh.get() {
            Some(d) => Some(d),
            None => self
                .stale
                .get_mut()
                .unwrap_or_else(|e| e.into_inner())
                .as_ref(),
        }
    }

    /// Whether the data is up to date.
    #[inline]
    pub fn is_fresh(&self) -> bool {
        self.fresh.get().is_some()
    }

    /// The data if it is up to date.
    #[inline]
    pub fn peek(&self) -> Option<&D> {
        self.fresh.get()
    }

    /// Calls `f` with the data as it is, up to date or not (for checks
    /// and statistics).
    pub fn with_current<R>(&self, f: impl FnOnce(&D) -> R) -> R {
        if let Some(d) = self.fresh.get() {
            return f(d);
        }
        let guard = self.stale.lock().unwrap_or_else(|e| e.into_inner());
        match guard.as_ref() {
            Some(d) => f(d),
            None => f(&D::default()),
        }
    }
}

/// The parallel pair search's buffers of records (`Vec<Vec<R>>`, one per
/// task, for the record type `R` of the last search: pairs or contacts),
/// kept between searches so that a warm search makes no new ones (each
/// split of its tasks still makes its own work buffers). A search of
/// another record type starts new ones.
#[derive(Default)]
#[cfg_attr(not(feature = "rayon"), allow(dead_code))]
pub(crate) struct Found {
    bufs: Option<Box<dyn core::any::Any + Send>>,
    /// Bytes they hold.
    bytes: usize,
}

impl Found {
    /// The buffers, if the last search recorded `R`s (else none).
    #[cfg(feature = "rayon")]
    fn take<R: Send + 'static>(&mut self) -> Vec<Vec<R>> {
        self.bytes = 0;
        self.bufs
            .take()
            .and_then(|b| b.downcast::<Vec<Vec<R>>>().ok())
            .map_or_else(Vec::new, |b| *b)
    }

    /// Keeps `bufs` for the next search.
    #[cfg(feature = "rayon")]
    fn keep<R: Send + 'static>(&mut self, bufs: Vec<Vec<R>>) {
        self.bytes = bufs.capacity() * size_of::<Vec<R>>()
            + bufs
                .iter()
                .map(|b| b.capacity() * size_of::<R>())
                .sum::<usize>();
        self.bufs = Some(Box::new(bufs));
    }

    /// Bytes held.
    pub fn memory(&self) -> usize {
        self.bytes
    }
}

/// Scratch buffers a structure lends its `&self` searches, so that a
/// search allocates nothing once warm: a search takes them and gives them
/// back. A second search running at the same time gets new ones.
pub(crate) struct Spare<S>(Mutex<Option<S>>);

impl<S> Default for Spare<S> {
    fn default() -> Self {
        Self(Mutex::new(None))
    }
}

impl<S: Default> Spare<S> {
    /// The buffers (new ones if they are lent out).
    pub fn take(&self) -> S {
        self.0
            .try_lock()
            .ok()
            .and_then(|mut g| g.take())
            .unwrap_or_default()
    }

    /// Gives the buffers back.
    pub fn put(&self, s: S) {
        if let Ok(mut g) = self.0.try_lock() {
            *g = Some(s);
        }
    }

    /// Calls `f` with the buffers as they are (for statistics).
    pub fn with<R>(&self, f: impl FnOnce(Option<&S>) -> R) -> R {
        match self.0.try_lock() {
            Ok(g) => f(g.as_ref()),
            Err(_) => f(None),
        }
    }
}

/// The state every tree family shares: the objects, the node pool, the
/// pending queue, the idle list of lazy pruning, the objects
/// evicted by the `Remove` policy, the layer matrix, the counters and
/// the boxes the queries prune by.
pub(crate) struct Core<V: Vector, T, N> {
    pub store: Store<Object<V, T>>,
    pub nodes: Vec<N>,
    /// Every node's objects, in one array (see [`Lists`]).
    pub lists: Lists,
    /// The moves in place that the query boxes have not taken in yet.
    pub moved: Moved,
    pub free_nodes: Vec<u32>,
    /// The root node, `NONE` for a tree not built yet.
    pub root: u32,
    /// Objects inserted but not yet built into the tree.
    pub pending: Vec<u32>,
    /// The survey of the queued objects while the tree has no root (what
    /// its first build needs: [`queued_survey`]), kept up to date as
    /// objects are queued. `None` once a queued object moved or left the
    /// queue, or an object was queued into a tree that has a root (whose
    /// builds do not need it), until the queue is empty again (after a
    /// build, a clear, the removal of the last queued object).
    pub queued: Option<PendingSurvey<V>>,
    /// Empty leaves counting down.
    pub idle: IdleList,
    /// A spare buffer for the stack of [`Core::tidy`] (empty between its
    /// uses).
    pub idle_spare: Vec<u32>,
    /// Objects removed by the `Remove` policy, for the caller to collect.
    pub evicted: Vec<(Handle, T)>,
    pub matrix: LayerMatrix,
    pub counters: AtomicCounters,
    /// The boxes around the subtrees' objects, for the queries.
    pub sub: Cached<SubBounds<V>>,
    /// The grid of the pair search and the queries (see [`grid`]), built
    /// by the first search after a change.
    pub grid: Cached<grid::Grid>,
    /// Whether the queries may use the grid: set by the build steps
    /// (`flush`, `end_frame`) when it is up to date, cleared by every
    /// change. Only `&mut` methods touch it, so whether a query takes the
    /// grid never depends on what other threads do.
    pub grid_for_queries: bool,
    /// The grid search's buffers, lent to each search.
    pub grid_work: Spare<grid::Work>,
    /// The parallel pair search's buffers of records, one per task, kept
    /// between searches (see [`Found`]).
    pub found: Spare<Found>,
    /// The tables of `update_many`, kept between batches.
    pub batch: Batch<V>,
    /// While [`build_pending`] runs a bulk build into a tree with no
    /// object (which has every box in hand): the list entries with their
    /// boxes, at the places they were given as they were filed, handed to
    /// the build step that follows ([`Core::settle`]) where no entry moved
    /// since ([`Lists::moves`]). `None` otherwise: the lists hold no box.
    pub built: Option<Vec<crate::index::Item<V>>>,
    /// The slot after that of the last object moved by `update`: a move
    /// of this slot continues a run in slot order, and prefetches for the
    /// moves after it ([`Core::prefetch_ahead`]).
    pub next_move: u32,
}

impl<V: Vector, T, N: TreeNode<V>> Default for Core<V, T, N> {
    fn default() -> Self {
        Self {
            store: Store::default(),
            nodes: Vec::new(),
            lists: Lists::default(),
            moved: Moved::default(),
            free_nodes: Vec::new(),
            root: NONE,
            pending: Vec::new(),
            queued: Some(PendingSurvey::EMPTY),
            idle: IdleList::default(),
            idle_spare: Vec::new(),
            evicted: Vec::new(),
            matrix: LayerMatrix::ALL,
            counters: AtomicCounters::default(),
            sub: Cached::default(),
            grid: Cached::default(),
            grid_for_queries: false,
            grid_work: Spare::default(),
            found: Spare::default(),
            batch: Batch::default(),
            built: None,
            next_move: NONE,
        }
    }
}

impl<V: Vector, T, N: TreeNode<V>> Core<V, T, N> {
    /// Marks node `n` for the query boxes: its object list changed, or it
    /// is new. Every change to a node's object list must call it (or
    /// [`Core::mark_stale`]); `validate` catches a missed mark.
    #[inline]
    pub fn mark_node(&mut self, n: u32) {
        self.sub.edit().mark_node(n);
        self.grid_changed();
    }

    /// Marks every query box out of date (bulk changes).
    #[inline]
    pub fn mark_stale(&mut self) {
        self.sub.edit().mark_stale();
        self.grid_changed();
    }

    /// The grid is out of date (every change to the lists comes here,
    /// through the marks above).
    #[inline]
    fn grid_changed(&mut self) {
        self.grid.edit();
        self.grid_for_queries = false;
    }

    /// Brings the grid up to date now (the build step): the queries use
    /// it from now until the next change. Where it is not built (too
    /// crowded), the queries walk the tree, and the query boxes are
    /// brought up to date too, unless a pair search had already brought
    /// the grid up to date; after a bulk build, always.
    /// `survey`, where given, is that of every object in the lists (from
    /// [`build_pending`]): a new sort of the grid starts from it instead
    /// of reading every entry for it.
    /// `built`, where given, is every list entry with its box, from
    /// [`build_pending`].
    pub fn settle(
        &mut self,
        survey: Option<grid::Survey>,
        built: Option<Vec<crate::index::Item<V>>>,
    ) {
        let n = self.lists.entries().len();
        // The bulk build's boxes, where it kept them: every entry's.
        let built = built.filter(|b| b.len() <= n).map(|mut b| {
            b.resize(n, crate::index::Item::room());
            debug_assert!(
                b.iter()
                    .zip(self.entries_with_boxes())
                    .all(|(x, y)| (x.tag(), x.aabb) == (y.tag(), y.aabb)),
                "the bulk build's boxes are the entries'"
            );
            b
        });
        let (nodes, root) = (&self.nodes, self.root);
        let (moved, store, lists) = (&self.moved, &self.store, &self.lists);
        let filed = Filed {
            entries: lists.entries(),
            store,
        };
        // A new sort of the grid reads every entry's box in several
        // passes: they are copied once, in order, where it sorts (a refit
        // reads the store itself). Reading the store in each pass made a
        // million objects' sort twice as long. The copy is freed at the
        // end: between build steps the lists hold no box.
        let copy = std::cell::OnceCell::new();
        let follow = follow(store, &self.pending);
        // Up to date already: a pair search since the last change built
        // it (or found it too crowded), and this step only lets the
        // queries use it.
        let searched = self.grid.is_fresh();
        self.grid.settle(|g| {
            g.build_par(
                || match &built {
                    Some(b) => &b[..],
                    None => &copy.get_or_init(|| entries_with_boxes(lists, store, nodes))[..],
                },
                &follow,
                survey,
            )
        });
        // Where the grid is built, every query searches it until the next
        // change: the query boxes are left to the first tree walk after a
        // change (`QueryBoxes::now`), which may never come. (After a frame
        // of moves, bringing them up to date here read every moved
        // object's box from the store: at 100k objects, 12-14 ms a frame,
        // more than half the pair search's time.) Otherwise the queries
        // walk the tree, and the boxes are brought up to date here, from
        // the boxes of the nodes they recompute in the store. After a bulk build
        // they are made here in any case, from the build's boxes in
        // order (about 8 ms at a million objects), so that the first tree
        // walk after the first change never has to read every box from
        // the store. A step that only lets the queries use the grid a pair
        // search left (too crowded, the queries walk the tree) leaves them
        // to the first of those queries too, as `end_frame` does: it then
        // costs nothing.
        if built.is_some() || (!searched && !self.grid.peek().is_some_and(grid::Grid::is_built)) {
            self.sub.settle(|s| {
                moved.mark_into(s, store);
                match &built {
                    Some(b) => s.refresh(nodes, &b[..], root),
                    None => s.refresh(nodes, &filed, root),
                }
            });
        }
        self.grid_for_queries = true;
    }

    /// Lets the queries use the grid if a search since the last change
    /// left it up to date (the housekeeping step: builds nothing).
    pub fn adopt_grid(&mut self) {
        self.grid_for_queries = self.grid.is_fresh();
    }

    /// The grid, when the queries may use it: built (not too crowded) by
    /// or since the last build step, with no change since.
    #[inline]
    pub fn query_grid(&self) -> Option<&grid::Grid> {
        if !self.grid_for_queries {
            return None;
        }
        self.grid.peek().filter(|g| g.is_built())
    }

    /// Whether a run of moves in slot order prefetches
    /// ([`Core::prefetch_ahead`]): from [`PREFETCH_FROM`] slots, or from
    /// [`PREFETCH_NODE_BYTES_FROM`] bytes of nodes.
    #[inline]
    pub fn prefetches_moves(&self) -> bool {
        self.store.capacity() >= PREFETCH_FROM
            || self.nodes.len() * size_of::<N>() >= PREFETCH_NODE_BYTES_FROM
    }

    /// Prefetches what a move of the object eight slots after `slot`
    /// will touch at random: its node. (A move that leaves the object in
    /// its node writes no list entry: see [`Moved`].) Called when objects
    /// are moved one by one in slot order (the order a game that moves
    /// its objects in the order it made them gives), where
    /// [`Core::prefetches_moves`]: the node's read, at random in a large
    /// tree, otherwise waits for its cache line (BENCHMARKS.md, eleventh,
    /// thirteenth and forty-first sessions).
    // Out of line: inlined, it changed how the compiler laid out the
    // moves of small trees (`sparti bench`'s loose quadtree at 10k, 10%
    // slower).
    #[inline(never)]
    pub fn prefetch_ahead(&self, slot: u32) {
        if let Some(node) = self.node_of(slot.wrapping_add(8)) {
            prefetch(node);
        }
    }

    /// The node the object of `slot` is filed in; `None` for a slot past
    /// the end or one whose object is not filed.
    #[inline]
    fn node_of(&self, slot: u32) -> Option<&N> {
        let place = self.store.get_place(slot)?;
        self.nodes.get(place.node as usize)
    }

    /// The list entry of the object of `slot`, where it is filed.
    #[inline]
    fn entry_of(&self, slot: u32) -> Option<&crate::index::Entry> {
        let place = self.store.get_place(slot)?;
        let node = self.nodes.get(place.node as usize)?;
        let at = node.block().start.wrapping_add(place.pos) as usize;
        self.lists.entries().get(at)
    }

    /// The objects filed in the tree, in list order (the tree's), with
    /// their boxes from the store: what a new sort of the grid reads.
    #[inline]
    pub fn filed(&self) -> Filed<'_, V, T> {
        Filed {
            entries: self.lists.entries(),
            store: &self.store,
        }
    }

    /// What the grid's build needs to follow the objects where they
    /// moved instead of sorting them anew (see [`grid`]).
    #[inline]
    pub fn follow(&self) -> grid::Follow<impl grid::Locate<V> + '_, impl Fn(u32) + '_> {
        follow(&self.store, &self.pending)
    }

    /// Prefetches slot `slot` of the store (its object, generation and
    /// place), for a move of it a little later; nothing for a slot past
    /// the end.
    #[inline]
    pub fn prefetch_slot(&self, slot: u32) {
        self.store.prefetch_slot(slot);
    }

    /// Prefetches the node the object of `slot` is filed in (whose slot
    /// [`Core::prefetch_slot`] asked for earlier); nothing where the slot
    /// holds no filed object.
    #[inline]
    pub fn prefetch_node_of(&self, slot: u32) {
        if let Some(node) = self.node_of(slot) {
            prefetch(node);
        }
    }

    /// Prefetches the node and the list entry of the object of `slot`
    /// (whose slot [`Core::prefetch_slot`] asked for earlier), for a move
    /// of it a little later; nothing where the slot holds no filed
    /// object.
    #[inline]
    pub fn prefetch_place(&self, slot: u32) {
        self.prefetch_node_of(slot);
        if let Some(it) = self.entry_of(slot) {
            prefetch(it);
        }
    }

    /// The entries of the objects filed in node `n` (their boxes:
    /// [`Core::box_of`]).
    #[inline]
    pub fn items(&self, n: u32) -> &[crate::index::Entry] {
        &self.lists.entries()[self.nodes[n as usize].block().range()]
    }

    /// The box of the object in `slot` now (from its shape).
    #[inline]
    pub fn box_of(&self, slot: u32) -> Aabb<V> {
        self.store.obj(slot).aabb()
    }

    /// Every list entry (the blocks and the room between them).
    #[inline]
    pub fn entries(&self) -> &[crate::index::Entry] {
        self.lists.entries()
    }

    /// Every list entry with its object's box (room as room): see
    /// [`entries_with_boxes`].
    fn entries_with_boxes(&self) -> Vec<crate::index::Item<V>> {
        entries_with_boxes(&self.lists, &self.store, &self.nodes)
    }

    /// Every object filed in the tree, with its box (for `validate`).
    pub fn filed_items(&self) -> Vec<crate::index::Item<V>> {
        self.entries()
            .iter()
            .filter(|e| !e.is_room())
            .map(|&e| self.item(e))
            .collect()
    }

    /// The entry with its object's box, from the store (the entry must be
    /// an object's, not room).
    #[inline]
    pub fn item(&self, e: crate::index::Entry) -> crate::index::Item<V> {
        self.store.item(e)
    }

    /// Records a move that left the object of `slot` in its node: the
    /// query boxes take its node in when they are next brought up to date
    /// (see [`Moved`]).
    #[inline]
    pub fn moved_in_place(&mut self, slot: u32) {
        self.moved_in_place_many(1, core::iter::once(slot));
    }

    /// [`Core::moved_in_place`] of `count` moves, their slots `slots`
    /// (the in-place moves of a batch).
    #[inline]
    pub fn moved_in_place_many(&mut self, count: usize, slots: impl Iterator<Item = u32>) {
        if count == 0 {
            return;
        }
        self.start_record();
        if !self.moved.all {
            if self.moved.slots.len() + count > self.moved_listed() {
                self.moved.all = true;
            } else {
                self.moved.slots.extend(slots);
            }
        }
    }

    /// The most moves a record lists (see [`Moved`]).
    #[inline]
    fn moved_listed(&self) -> usize {
        self.lists.objects() / MOVED_PART + MOVED_LISTED
    }

    /// Before a move in place is recorded: where the query boxes took the
    /// record's marks in since the last one (they were brought up to
    /// date), they are out of date from now on and a new record starts;
    /// and the grid is out of date (a refit may have brought it up to
    /// date since the last move).
    #[inline]
    fn start_record(&mut self) {
        let record = self.moved.record;
        if self.sub.current().is_some_and(|s| s.absorbed == record) {
            self.sub.edit();
            self.moved.slots.clear();
            self.moved.all = false;
            self.moved.record += 1;
        }
        self.grid_changed();
    }

    /// The entries of the objects filed in node `n`, mutably (a change to
    /// the list must mark the node).
    #[cfg(test)]
    #[inline]
    pub fn items_mut(&mut self, n: u32) -> &mut [crate::index::Entry] {
        let b = self.nodes[n as usize].block();
        self.lists.get_mut(b)
    }

    /// The tree as the shared queries see it (its query boxes brought up
    /// to date by the first tree walk after a change).
    #[inline]
    pub fn view(&self) -> Tree<'_, V, T, N> {
        let (nodes, root) = (&self.nodes, self.root);
        let items = self.entries();
        Tree {
            nodes,
            lists: items,
            root,
            store: &self.store,
            sub: QueryBoxes { core: self },
            pending: &self.pending,
            grid: self.query_grid(),
        }
    }

    /// Queues a stored object (bounding box `aabb`) for the next build,
    /// and counts it in the queue's survey (see [`Core::queued`]).
    #[inline]
    pub fn queue(&mut self, slot: u32, aabb: &Aabb<V>) {
        self.push_pending(slot);
        if self.root != NONE {
            self.queued = None;
        } else if let Some(q) = &mut self.queued {
            q.add(aabb);
        }
    }

    /// Takes `objs` (every one `Some`) as the objects of a store that has
    /// never held one, queued for the build step in slot order; gives
    /// their handles. Their array becomes the store's: see
    /// [`Store::adopt`].
    pub fn adopt(&mut self, objs: Vec<Option<Object<V, T>>>) -> Vec<Handle> {
        debug_assert!(self.pending.is_empty(), "a new store queues nothing");
        let n = objs.len() as u32;
        self.store.adopt(objs);
        self.pending.extend(0..n);
        (0..n).map(|i| self.store.handle(i)).collect()
    }

    /// Queues a stored object for the next build. The caller keeps
    /// [`Core::queued`] true: it counts the object there or drops the
    /// survey (`insert_many` counts its batch at once; [`Core::queue`]
    /// does it for one object).
    pub fn push_pending(&mut self, slot: u32) {
        let s = self.store.place_mut(slot);
        s.node = NONE;
        s.pos = self.pending.len() as u32;
        self.pending.push(slot);
    }

    /// Takes a queued object out of the queue.
    pub fn unqueue(&mut self, slot: u32) {
        let pos = self.store.place(slot).pos as usize;
        self.pending.swap_remove(pos);
        self.queued = self.pending.is_empty().then_some(PendingSurvey::EMPTY);
        if let Some(&moved) = self.pending.get(pos) {
            self.store.place_mut(moved).pos = pos as u32;
        }
    }

    /// Calls `f` for every overlapping pair that has a queued object in
    /// it (the pairs the tree's own search cannot see): each queued object
    /// against the tree's objects its box reaches, then against the queued
    /// objects after it. Exact and slow (a tree query per queued object);
    /// [`crate::SpatialIndex::flush`] makes it unnecessary.
    pub fn pending_pairs<F>(&self, counters: &mut Counters, f: &mut F)
    where
        F: FnMut(Handle, Handle, &Object<V, T>, &Object<V, T>),
    {
        if self.pending.is_empty() {
            return;
        }
        let tree = Tree {
            pending: &[],
            ..self.view()
        };
        let mut found = Vec::new();
        for (i, &sa) in self.pending.iter().enumerate() {
            let oa = self.store.obj(sa);
            let ba = oa.aabb();
            counters.pending_tests += 1;
            let grid_searches = counters.grid_searches;
            crate::traverse::with_scratch(|s| {
                tree.query(s, counters, &BoxesMeeting(ba), Filter::ALL, &mut found);
            });
            // The query counted itself (and its search of the grid); it is
            // part of this pair search.
            counters.queries -= 1;
            counters.grid_searches = grid_searches;
            for &h in &found {
                counters.pair_tests += 1;
                crate::index::report_pair(&self.store, &self.matrix, sa, h.index, f);
            }
            for &sb in &self.pending[i + 1..] {
                counters.pair_tests += 1;
                counters.pending_tests += 1;
                if ba.intersects(&self.store.obj(sb).aabb()) {
                    counters.shape_tests += 1;
                    crate::index::report_pair(&self.store, &self.matrix, sa, sb, f);
                }
            }
        }
    }

    /// Bytes held by the shared state (capacities), objects included.
    pub fn memory_bytes(&self) -> usize {
        self.store.memory_bytes()
            + self.nodes.capacity() * size_of::<N>()
            + (self.free_nodes.capacity()
                + self.pending.capacity()
                + self.idle_spare.capacity()
                + self.moved.slots.capacity())
                * size_of::<u32>()
            + self.idle.memory()
            + self.sub.with_current(SubBounds::memory_bytes)
            + self.lists.memory()
            + self.grid.with_current(grid::Grid::memory)
            + self.grid_work.with(|w| w.map_or(0, grid::Work::memory))
            + self.found.with(|f| f.map_or(0, Found::memory))
            + self.batch.memory()
    }
}

/// A pair search cut into independent tasks: one thread runs them in
/// order ([`PairTasks::run_all`]); with the `rayon` feature,
/// `Core::par_collect` runs them on rayon's threads and joins their
/// results in the same order. Each family plans its own tasks.
pub(crate) trait PairTasks<V: Vector, T> {
    /// One independent piece of the search.
    type Task: Copy;
    /// The buffers one thread needs to run tasks.
    type Work: Default;

    /// The tasks, in the order their results are reported.
    fn tasks(&self) -> &[Self::Task];

    /// Runs one task: `f` for every overlapping pair it finds, its work
    /// added to `counters`.
    fn run<F>(&self, task: Self::Task, work: &mut Self::Work, counters: &mut Counters, f: &mut F)
    where
        F: FnMut(Handle, Handle, &Object<V, T>, &Object<V, T>);

    /// Every task in order, on this thread.
    fn run_all<F>(&self, work: &mut Self::Work, counters: &mut Counters, f: &mut F)
    where
        F: FnMut(Handle, Handle, &Object<V, T>, &Object<V, T>),
    {
        for &task in self.tasks() {
            self.run(task, work, counters, f);
        }
    }
}

#[cfg(feature = "rayon")]
impl<V: Vector, T, N: TreeNode<V>> Core<V, T, N> {
    /// A family's [`Family::par_collect`] over its planned search `job`
    /// (`None` for a tree without a root): the tasks run on rayon's
    /// threads, each into its own buffer, and the buffers are joined in
    /// task order, so the records come in the order
    /// [`for_each_pair`](crate::SpatialIndex::for_each_pair) gives them.
    /// Queued insertions are paired after the tree's objects, as by
    /// `for_each_pair`. `counters` holds the planning's work; the tasks'
    /// and the queued objects' are added to it, then to the structure's.
    pub fn par_collect<J, R, M>(
        &self,
        job: Option<&J>,
        mut counters: Counters,
        record: M,
        out: &mut Vec<R>,
    ) where
        J: PairTasks<V, T> + Sync,
        J::Task: Send + Sync,
        J::Work: Send,
        R: Copy + Send + Sync + 'static,
        M: Fn(Handle, Handle, &Object<V, T>, &Object<V, T>) -> Option<R> + Sync,
    {
        use rayon::prelude::*;
        out.clear();
        if let Some(job) = job {
            let tasks = job.tasks();
            let mut found = self.found.take();
            let mut bufs = found.take::<R>();
            if bufs.len() < tasks.len() {
                bufs.resize_with(tasks.len(), Vec::new);
            }
            let parts = &mut bufs[..tasks.len()];
            let run = |work: &mut J::Work, (buf, &task): (&mut Vec<R>, &J::Task)| {
                let mut c = Counters::default();
                buf.clear();
                job.run(task, work, &mut c, &mut |a, b, oa, ob| {
                    if let Some(r) = record(a, b, oa, ob) {
                        buf.push(r);
                    }
                });
                c
            };
            let c = if one_thread() {
                let mut work = J::Work::default();
                parts
                    .iter_mut()
                    .zip(tasks)
                    .map(|t| run(&mut work, t))
                    .fold(Counters::default(), Counters::merged)
            } else {
                parts
                    .par_iter_mut()
                    .zip(tasks.par_iter())
                    .map_init(J::Work::default, run)
                    .reduce(Counters::default, Counters::merged)
            };
            counters = counters.merged(c);
            join_parts(parts, out);
            found.keep(bufs);
            self.found.put(found);
        }
        self.pending_pairs(&mut counters, &mut |a, b, oa, ob| {
            if let Some(r) = record(a, b, oa, ob) {
                out.push(r);
            }
        });
        self.counters.add(&counters);
    }
}

/// Records from which [`join_parts`] copies on the threads, and threads
/// from which it does: on fewer, a loop of copies is faster (measured at
/// a million pairs: 0.9 ms against 2.0 on one thread).
#[cfg(feature = "rayon")]
const PAR_JOIN: usize = 1 << 16;
#[cfg(feature = "rayon")]
const JOIN_THREADS: usize = 4;

/// The records of every part, in order, appended to `out`: on rayon's
/// threads for many on a pool of [`JOIN_THREADS`] or more (each thread
/// copies a range of `out`, finding its part by the parts' offsets),
/// else in a loop. On 16 cores a million pairs took 2.2 ms in a loop, a
/// tenth of the pair search, and 0.5-0.6 ms on the threads
/// (BENCHMARKS.md, the kernel's twelfth session).
#[cfg(feature = "rayon")]
fn join_parts<R: Copy + Send + Sync>(parts: &[Vec<R>], out: &mut Vec<R>) {
    use rayon::prelude::*;
    // starts[p]: where part p begins; the last entry is the total.
    let mut starts = Vec::with_capacity(parts.len() + 1);
    let mut total = 0;
    for v in parts {
        starts.push(total);
        total += v.len();
    }
    starts.push(total);
    out.reserve(total);
    if total < PAR_JOIN || rayon::current_num_threads() < JOIN_THREADS {
        for v in parts {
            out.extend_from_slice(v);
        }
        return;
    }
    out.par_extend(
        (0..total)
            .into_par_iter()
            .with_min_len(PAR_JOIN / 4)
            .map_init(
                || 0,
                |p: &mut usize, k| {
                    // The part of record k: the last one starting at or
                    // before k (an empty part starts where the next does).
                    if !(starts[*p] <= k && k < starts[*p + 1]) {
                        *p = starts.partition_point(|&s| s <= k) - 1;
                    }
                    parts[*p][k - starts[*p]]
                },
            ),
    );
}

/// A region selecting the objects whose boxes meet a box: the candidates
/// of a queued object's pairs (the exact test is the pair test's).
struct BoxesMeeting<V: Vector>(Aabb<V>);

impl<V: Vector> Region<V> for BoxesMeeting<V> {
    /// Its boxes are classified as its box's: the grid's chunk test
    /// classifies them, eight at a time.
    const CLASSIFIES_AS_BOUNDS: bool = true;

    /// The box itself: on a built grid, the rows it reaches are searched
    /// (without it, the grid's blocks would be classified as a frustum's).
    #[inline]
    fn bounds(&self) -> Option<Aabb<V>> {
        Some(self.0)
    }
    #[inline]
    fn classify(&self, b: &Aabb<V>) -> crate::Overlap {
        self.0.classify(b)
    }
    #[inline]
    fn matches(&self, _: &Shape<V>) -> bool {
        true
    }
}

/// A tree family on the kernel: what differs between the tight orthtrees,
/// the loose orthtrees and the BSP. Implementing it gives the family every
/// method of [`SpatialIndex`](crate::SpatialIndex) (see the module docs, "Adding a structure").
pub(crate) trait Family<V: Vector, T>: Sized {
    /// The family's node.
    type Node: PoolNode<V> + Send + Sync;

    /// The shared state.
    fn core(&self) -> &Core<V, T, Self::Node>;

    /// The shared state, for changes.
    fn core_mut(&mut self) -> &mut Core<V, T, Self::Node>;

    /// Refuses an object's box the family cannot take (its out-of-bounds
    /// policy), before anything is stored.
    ///
    /// # Errors
    /// The refusal.
    fn admit(&self, aabb: &Aabb<V>) -> Result<(), Error>;

    /// Makes the first root, around the queued objects; returns the survey
    /// of them it made, if it made one.
    fn first_root(&mut self) -> Option<PendingSurvey<V>>;

    /// The bulk build of a tree that holds nothing yet, the queued objects
    /// filed in one go (the tight trees and the BSP by a top-down
    /// partition, the loose trees by one sort of their nodes' keys);
    /// false, having done nothing, when the tree does not qualify.
    fn build_fresh(&mut self, pending: &[u32]) -> bool;

    /// Files one queued object (the root grows to it first).
    fn file_queued(&mut self, slot: u32);

    /// Moves or resizes a stored object as the checked move says; its
    /// node's query boxes are marked by the caller.
    ///
    /// # Errors
    /// A refusal of the family's out-of-bounds policy; the object is then
    /// unchanged.
    fn update_boxed(&mut self, m: Move<V>) -> Result<(), Error>;

    /// The family's out-of-bounds policy.
    fn out_of_bounds(&self) -> crate::OutOfBounds;

    /// What `update` would refuse for this checked box, without changing
    /// anything: the `Reject` policy's objects outside the world. (The
    /// root does not grow under `Reject`, so the answer holds through a
    /// batch.)
    ///
    /// # Errors
    /// [`Error::OutsideWorld`].
    fn check_move(&self, aabb: &Aabb<V>) -> Result<(), Error> {
        match self.admit(aabb) {
            Err(Error::OutsideWorld) if self.out_of_bounds() != crate::OutOfBounds::Reject => {
                Ok(())
            }
            r => r,
        }
    }

    /// Calls `f` for every overlapping pair among the objects in the tree
    /// (the queued ones are the kernel's), adding its work to `counters`.
    fn find_pairs<F>(&self, counters: &mut Counters, f: &mut F)
    where
        F: FnMut(Handle, Handle, &Object<V, T>, &Object<V, T>);

    /// The pair search on rayon's threads (feature `rayon`): `record` of
    /// every overlapping pair into `out` (cleared first), in the order of
    /// [`Family::find_pairs`] then the queued objects' pairs. The default is
    /// the one-thread search.
    fn par_collect<R, M>(&self, record: M, out: &mut Vec<R>)
    where
        T: Sync,
        R: Copy + Send + Sync + 'static,
        M: Fn(Handle, Handle, &Object<V, T>, &Object<V, T>) -> Option<R> + Sync,
    {
        out.clear();
        let mut c = Counters::default();
        let mut f = |a, b, oa: &Object<V, T>, ob: &Object<V, T>| {
            if let Some(r) = record(a, b, oa, ob) {
                out.push(r);
            }
        };
        let core = self.core();
        search_pairs(self, &mut c, &mut f);
        core.pending_pairs(&mut c, &mut f);
        core.counters.add(&c);
    }

    /// The family's own reset after [`crate::SpatialIndex::clear`] (a preset root).
    fn after_clear(&mut self) {}

    /// Zeroes the family's own counters.
    fn reset_own_counters(&mut self) {}

    /// Bytes the family holds beside the kernel's arrays and the nodes'
    /// item lists (its pair search's buffers, say).
    fn own_memory(&self) -> usize {
        0
    }

    /// Every node, parents first: `f(bounds, depth, object_count)`.
    fn nodes_depth_first(&self, f: &mut dyn FnMut(&Aabb<V>, usize, usize));

    /// The family's rules for its root (checked first, root or not).
    ///
    /// # Errors
    /// The first broken rule.
    fn check_root(&self) -> Result<(), ValidationError> {
        Ok(())
    }

    /// The family's rules for node `n` in the tree (its geometry).
    ///
    /// # Errors
    /// The first broken rule.
    fn check_node(&self, n: u32) -> Result<(), ValidationError>;

    /// The family's rules for child `c` in slot `k` of node `n`.
    ///
    /// # Errors
    /// The first broken rule.
    fn check_child(&self, n: u32, k: usize, c: u32) -> Result<(), ValidationError>;

    /// A new node for child slot `k` of node `n`, its region cut from
    /// `n`'s (not linked yet: see [`child_or_create`]).
    fn new_child(&mut self, n: u32, k: usize) -> u32;

    /// True when node `n` keeps an object whose box becomes `aabb` by the
    /// family's placement rule, so that a move changes only the box (the
    /// fast path of `update_boxed`, which batches apply on many threads).
    fn keeps(&self, n: u32, aabb: &Aabb<V>) -> bool;

    /// A batch applied `count` moves in place (for the family's counters).
    fn note_in_place(&mut self, _count: u64) {}

    /// The family's placement rule for an object filed in node `n` (its
    /// item's box is checked equal to the object's).
    ///
    /// # Errors
    /// The first broken rule.
    fn check_place(&self, n: u32, it: &crate::index::Item<V>) -> Result<(), ValidationError>;
}

/// Checks the settings every family shares: its smallest cell size
/// (`size`, named `what` in the error) finite, positive (or 0: chosen at
/// the first build, [`auto_cell_size`]) and within the coordinate limits,
/// and a preset world finite and within them.
///
/// # Errors
/// [`Error::InvalidConfig`].
pub(crate) fn check_config<V: Vector>(
    size: f32,
    size_error: &'static str,
    world: Option<&Aabb<V>>,
) -> Result<(), Error> {
    if !(size.is_finite() && (0.0..=crate::MAX_COORDINATE).contains(&size)) {
        return Err(Error::InvalidConfig(size_error));
    }
    if let Some(w) = world
        && (w.check().is_err() || !crate::index::within_limits(w))
    {
        return Err(Error::InvalidConfig(
            "world must be a finite box within +-2^60",
        ));
    }
    Ok(())
}

/// How many times the typical object's size the automatic smallest cell
/// is (then rounded up to a power of two), as a power of two: four times,
/// measured on the `frames` example, 10,000 and 100,000 moving spheres of
/// sizes 1 to 3, smallest cells of 1, 2, 4, 8 and 16 (BENCHMARKS.md, "the
/// automatic minimum node size").
const AUTO_CELLS_PER_OBJECT_LOG2: i32 = 2;

/// What a first build needs to know of the queued objects: the box
/// around them, how many there are and their largest sides by binary
/// exponent, from which the smallest cell size a tree chooses when its
/// settings leave it at 0 ([`PendingSurvey::cell_size`]). The kernel keeps
/// it up to date as objects are queued ([`Core::queued`]), so that a first
/// build need not read the store again for it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct PendingSurvey<V: Vector> {
    /// The box around the queued objects (`None` when there are none).
    pub span: Option<Aabb<V>>,
    /// The objects' largest sides by binary exponent (see [`side_bin`]).
    bins: [u32; 512],
    /// How many objects there are.
    n: usize,
}

impl<V: Vector> PendingSurvey<V> {
    /// The survey of no object.
    pub const EMPTY: Self = Self {
        span: None,
        bins: [0; 512],
        n: 0,
    };

    /// Counts one more object, of bounding box `b`.
    #[inline]
    pub fn add(&mut self, b: &Aabb<V>) {
        self.span = Some(self.span.map_or(*b, |w| w.union(b)));
        self.bins[side_bin((b.max - b.min).max_element())] += 1;
        self.n += 1;
    }

    /// Counts the objects of `o` too.
    pub fn absorb(&mut self, o: &Self) {
        self.span = match (self.span, o.span) {
            (Some(a), Some(b)) => Some(a.union(&b)),
            (a, b) => a.or(b),
        };
        for (m, v) in self.bins.iter_mut().zip(o.bins) {
            *m += v;
        }
        self.n += o.n;
    }

    /// Four times ([`AUTO_CELLS_PER_OBJECT_LOG2`]) the median of the
    /// objects' largest sides, rounded up to a power of two. Objects of no
    /// size (points) fall back on the size of the region they span over
    /// 1,024, and an empty or one-point batch on 1.
    pub fn cell_size(&self) -> f32 {
        auto_cell_size(&self.bins, self.n, self.span.as_ref())
    }

    /// The first root's world: the box around the queued objects, joined
    /// with the preset world where there is one.
    pub fn world_with(&self, preset: Option<Aabb<V>>) -> Option<Aabb<V>> {
        match (preset, self.span) {
            (Some(w), Some(b)) => Some(w.union(&b)),
            (w, b) => w.or(b),
        }
    }

    /// What the grid's build would learn of these objects in its first
    /// pass, where they are all the objects the grid sorts.
    pub fn for_grid(&self) -> Option<grid::Survey> {
        let span = self.span?;
        let mut by_exp = [0u32; 256];
        for (e, c) in by_exp.iter_mut().enumerate() {
            *c = self.bins[2 * e] + self.bins[2 * e + 1];
        }
        Some(grid::Survey::new(span, by_exp, self.n))
    }
}

/// Surveys the queued objects (see [`PendingSurvey`]) from the store. The
/// median's power of two comes from counting the sides by their binary
/// exponent, split into exact powers of two and the numbers between (the
/// order of non-negative floats is that of their bits), rather than from
/// sorting them: one pass, nothing allocated.
pub(crate) fn survey_pending<V: Vector, T>(
    store: &Store<Object<V, T>>,
    pending: &[u32],
) -> PendingSurvey<V> {
    let mut survey = PendingSurvey::EMPTY;
    for &s in pending {
        survey.add(&store.obj(s).aabb());
    }
    survey
}

/// The survey the kernel kept of the queued objects of `core`, if a
/// change to the queue did not drop it (debug builds check it against
/// the store's).
pub(crate) fn kept_survey<V: Vector, T, N: TreeNode<V>>(
    core: &Core<V, T, N>,
) -> Option<PendingSurvey<V>> {
    let kept = core.queued.clone()?;
    debug_assert_eq!(
        kept,
        survey_pending(&core.store, &core.pending),
        "the survey kept is the queue's"
    );
    Some(kept)
}

/// The survey of the queued objects of `core`: the one the kernel kept
/// as they were queued ([`kept_survey`]), or, where a change to the queue
/// dropped it, one made now from the store.
pub(crate) fn queued_survey<V: Vector, T, N: TreeNode<V>>(
    core: &Core<V, T, N>,
) -> PendingSurvey<V> {
    kept_survey(core).unwrap_or_else(|| survey_pending(&core.store, &core.pending))
}

/// The bin of [`survey_pending`] of an object's largest side: `2e` for
/// `2^(e - 127)` exactly (0 for zero), `2e + 1` strictly between that and
/// the next power of two. An admitted box has a finite side of at least
/// zero (-0 counts as zero: the sign bit is dropped).
#[inline]
fn side_bin(side: f32) -> usize {
    let bits = side.to_bits() & 0x7FFF_FFFF;
    ((bits >> 23) * 2 + u32::from(bits & 0x7F_FFFF != 0)) as usize
}

/// The automatic smallest cell size (see [`PendingSurvey::cell_size`])
/// from the sides' bins ([`survey_pending`]) of `n` objects spanning
/// `span`.
fn auto_cell_size<V: Vector>(bins: &[u32; 512], n: usize, span: Option<&Aabb<V>>) -> f32 {
    // The median: the side of rank n / 2 in increasing order.
    let mid = n / 2;
    let mut seen = 0usize;
    let bin = bins.iter().position(|&c| {
        seen += c as usize;
        seen > mid
    });
    // The binary exponent rounded up (the base-2 logarithm, rounded up, of
    // any positive number below 2^128, read from its bin) plus the
    // factor's: of the median, or where it is a point (or there is no
    // object), of the span over 1,024 without the factor.
    let (b, factor) = match bin {
        Some(b) if b >= 1 => (b, AUTO_CELLS_PER_OBJECT_LOG2),
        _ => {
            let size = span.map_or(0.0, |w| (w.max - w.min).max_element() / 1024.0);
            if !(size.is_finite() && size > 0.0) {
                return 1.0;
            }
            (side_bin(size), 0)
        }
    };
    let p = (b / 2) as i32 - 127 + i32::from(b % 2 == 1) + factor;
    if p >= 128 {
        // Four times the median overflows `f32` (beyond the coordinate
        // limits).
        return 1.0;
    }
    // A power of two, made from its bits (exact, so cells nest without
    // rounding), within the coordinate limit and above the smallest
    // normal number (a smaller exponent, as for numbers below the
    // smallest normal one, is rounded up here).
    f32::from_bits(((p.clamp(-120, 59) + 127) as u32) << 23)
}

/// The pair search of the objects in the tree (not the queued ones): on
/// the grid (see [`grid`]), or by the family's walk of its tree where the
/// grid would be too crowded to pay.
pub(crate) fn search_pairs<V: Vector, T, S, F>(s: &S, counters: &mut Counters, f: &mut F)
where
    S: Family<V, T>,
    F: FnMut(Handle, Handle, &Object<V, T>, &Object<V, T>),
{
    let core = s.core();
    if core.root == NONE {
        return;
    }
    let filed = core.filed();
    let g = core.grid.get(|g| g.build(|| &filed, &core.follow()));
    if g.is_built() {
        counters.grid_searches += 1;
        let mut work = core.grid_work.take();
        g.run_all(&core.store, &core.matrix, &mut work, counters, f);
        core.grid_work.put(work);
    } else {
        s.find_pairs(counters, f);
    }
}

/// Whether rayon's pool (the one this thread is in, else the global
/// one) has a single thread. The parallel forms of the kernel then run
/// as plain loops on the calling thread, with the same results (none
/// depends on the number of threads): from outside the pool, each
/// parallel pass would hand its work to the pool's one thread and sleep
/// until that thread woke, ran it and woke it back (measured on the
/// 2-core machine: 70 to 180 us a pass, against 1.4 to 2.8 for the same
/// pass inside the pool; BENCHMARKS.md, the kernel's forty-second
/// session).
#[cfg(feature = "rayon")]
#[inline]
pub(crate) fn one_thread() -> bool {
    rayon::current_num_threads() == 1
}

/// `f` run on one of rayon's threads, so that the parallel passes inside
/// it start from within the pool. Called from a thread outside the pool
/// (a game's main thread), each pass would otherwise hand its work to
/// the pool and wait for a thread to wake (about 20 us a pass on 2
/// threads of the 2-core machine, against 5.5-8 inside the pool): a batch
/// update makes five such passes, a pair search two or three. On a
/// thread of a pool already, or with a pool of one thread
/// ([`one_thread`]), `f` runs here.
#[cfg(feature = "rayon")]
pub(crate) fn in_pool<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    if rayon::current_thread_index().is_some() || one_thread() {
        f()
    } else {
        rayon::scope(|_| f())
    }
}

/// [`search_pairs`] then the queued objects' pairs, on rayon's threads
/// where the feature is on (entering the pool once: [`in_pool`]):
/// `record` of each pair into `out` (cleared first), in the order of
/// `for_each_pair`.
pub(crate) fn par_search<V: Vector, T, S, R, M>(s: &S, record: M, out: &mut Vec<R>)
where
    S: Family<V, T> + Sync,
    T: Sync,
    R: Copy + Send + Sync + 'static,
    M: Fn(Handle, Handle, &Object<V, T>, &Object<V, T>) -> Option<R> + Sync,
{
    #[cfg(feature = "rayon")]
    return in_pool(|| {
        let core = s.core();
        if core.root != NONE {
            let filed = core.filed();
            let g = core.grid.get(|g| g.build_shared(|| &filed, &core.follow()));
            if g.is_built() {
                let mut work = core.grid_work.take();
                g.plan(rayon::current_num_threads() * 8, &mut work);
                core.par_collect(
                    Some(&g.job(&core.store, &core.matrix, &work)),
                    Counters {
                        grid_searches: 1,
                        ..Counters::default()
                    },
                    &record,
                    out,
                );
                core.grid_work.put(work);
                return;
            }
        }
        s.par_collect(&record, out);
    });
    #[cfg(not(feature = "rayon"))]
    s.par_collect(record, out);
}

/// Entries of the pending queue's allocation kept after the bulk load of
/// a fresh tree, at least (more where the tree holds over eight times as
/// many objects).
const KEPT_QUEUE: usize = 4096;

/// Builds the queued insertions into the tree: the first root around
/// them if there is none, then a bulk build of a fresh tree, or each filed
/// from the root.
///
/// Returns, where the tree held nothing before and its first root was made
/// from a survey of the queued objects, that survey as the grid's build
/// would make it (see [`Core::settle`]).
pub(crate) fn build_pending<V: Vector, T, S: Family<V, T>>(s: &mut S) -> Pending<V> {
    if s.core().pending.is_empty() {
        return (None, None);
    }
    let mut survey = None;
    if s.core().root == NONE {
        // No tree: the lists hold nothing, and will hold the queued
        // objects only.
        debug_assert_eq!(s.core().lists.objects(), 0);
        survey = s.first_root();
    }
    let pending = core::mem::take(&mut s.core_mut().pending);
    // Room for the batch at once (a bulk build fills the lists in one go,
    // and growth by doubling would leave up to half the array unused).
    s.core_mut().lists.reserve(pending.len());
    // Into a tree with no object filed, a bulk build files every object
    // with its box in hand: kept for the build step (`Core::built`).
    let empty = s.core().lists.objects() == 0;
    s.core_mut().built = empty.then(|| Vec::with_capacity(pending.len()));
    let moves = s.core().lists.moves;
    let fresh = s.build_fresh(&pending);
    if !fresh {
        s.core_mut().built = None;
    }
    if !fresh {
        for &slot in &pending {
            s.file_queued(slot);
        }
    }
    // Keep the queue's allocation for the next batch; after the bulk load
    // of a fresh tree, only up to room for an eighth of its objects: a
    // load of a million objects does not keep 4 MB for the few insertions
    // a frame that follow. (Later batches keep it whole, so that a game
    // inserting many objects every frame allocates nothing once warm.)
    let core = s.core_mut();
    core.pending = pending;
    core.pending.clear();
    core.queued = Some(PendingSurvey::EMPTY);
    if fresh {
        core.pending
            .shrink_to(KEPT_QUEUE.max(core.lists.entries().len() / 8));
    }
    core.tidy();
    // Kept only where no entry moved since it was given its place.
    let built = core.built.take().filter(|_| core.lists.moves == moves);
    (survey.and_then(|s| s.for_grid()), built)
}

/// Every list entry with its object's box (room as room): the store read
/// in order, each box written at its entry's place (writes at random do
/// not wait as reads do).
fn entries_with_boxes<V: Vector, T, N: TreeNode<V>>(
    lists: &Lists,
    store: &Store<Object<V, T>>,
    nodes: &[N],
) -> Vec<crate::index::Item<V>> {
    let mut items = vec![crate::index::Item::room(); lists.entries().len()];
    for (slot, (o, s)) in store.objs().iter().zip(store.places()).enumerate() {
        if let Some(o) = o
            && let Some(node) = nodes.get(s.node as usize)
        {
            let at = node.block().start as usize + s.pos as usize;
            items[at] = crate::index::Item::new(o.aabb(), slot as u32, o.is_static);
        }
    }
    items
}

/// What [`build_pending`] hands the build step ([`Core::settle`]): the
/// survey of every object in the lists, where it made the first root,
/// and every list entry with its box, where a bulk build into an empty
/// tree filed them.
pub(crate) type Pending<V> = (Option<grid::Survey>, Option<Vec<crate::index::Item<V>>>);

/// The [`Family`] methods every family writes as inherent methods of the
/// same names and signatures (in its `insert.rs`, `update.rs` and
/// `validate.rs`), forwarded here once.
macro_rules! forward_family_methods {
    ($ty:ident) => {
        fn admit(&self, aabb: &$crate::Aabb<V>) -> Result<(), $crate::Error> {
            $ty::admit(self, aabb)
        }

        fn first_root(&mut self) -> Option<$crate::kernel::PendingSurvey<V>> {
            $ty::first_root(self)
        }

        fn build_fresh(&mut self, pending: &[u32]) -> bool {
            $ty::build_fresh(self, pending)
        }

        fn file_queued(&mut self, slot: u32) {
            $ty::file_queued(self, slot);
        }

        #[inline]
        fn update_boxed(&mut self, m: $crate::kernel::Move<V>) -> Result<(), $crate::Error> {
            $ty::update_boxed(self, m)
        }

        fn out_of_bounds(&self) -> $crate::OutOfBounds {
            self.config.out_of_bounds
        }

        fn check_node(&self, n: u32) -> Result<(), $crate::ValidationError> {
            $ty::check_node(self, n)
        }

        fn check_child(&self, n: u32, k: usize, c: u32) -> Result<(), $crate::ValidationError> {
            $ty::check_child(self, n, k, c)
        }

        fn new_child(&mut self, n: u32, k: usize) -> u32 {
            $ty::new_child(self, n, k)
        }

        fn keeps(&self, n: u32, aabb: &$crate::Aabb<V>) -> bool {
            $ty::keeps(self, n, aabb)
        }
    };
}
pub(crate) use forward_family_methods;

/// A move of an object, checked: its handle (live, its slot), its new
/// shape and that shape's box (finite, within the coordinate limits).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Move<V: Vector> {
    pub handle: Handle,
    pub slot: u32,
    pub shape: Shape<V>,
    pub aabb: Aabb<V>,
}

/// Child `k` of node `n`, made (by the family) and linked if absent.
pub(crate) fn child_or_create<V: Vector, T, S: Family<V, T>>(s: &mut S, n: u32, k: usize) -> u32 {
    let c = s.core_mut().nodes[n as usize].pool().children[k];
    if c != NONE {
        return c;
    }
    let c = s.new_child(n, k);
    s.core_mut().link_child(n, k, c);
    c
}

/// The out-of-bounds policy for a move whose box the root cannot
/// hold: `Grow` runs `grow`, `Reject` refuses the move, `Remove` evicts
/// the object. Returns true when the object was evicted (the move is
/// over).
///
/// # Errors
/// [`Error::OutsideWorld`] under `Reject`; `grow`'s error under `Grow`.
pub(crate) fn leave_world<V: Vector, T, S: Family<V, T>>(
    s: &mut S,
    m: &Move<V>,
    grow: impl FnOnce(&mut S) -> Result<(), Error>,
) -> Result<bool, Error> {
    match s.out_of_bounds() {
        crate::OutOfBounds::Grow => grow(s).map(|()| false),
        crate::OutOfBounds::Reject => Err(Error::OutsideWorld),
        crate::OutOfBounds::Remove => {
            s.core_mut().evict(m.handle, m.slot);
            Ok(true)
        }
    }
}

/// [`SpatialIndex::update`](crate::SpatialIndex::update) of a checked
/// move, then the mark of the object's node for the query boxes
/// (its box may have changed in place; the nodes it left or entered are
/// marked as it is filed).
///
/// # Errors
/// As [`Family::update_boxed`].
#[inline(always)]
pub(crate) fn update_checked<V: Vector, T, S: Family<V, T>>(
    s: &mut S,
    m: Move<V>,
) -> Result<(), Error> {
    let core = s.core_mut();
    let mirror = core.store.capacity() >= grid::MIRROR_FROM;
    if m.slot == core.next_move && core.prefetches_moves() {
        core.prefetch_ahead(m.slot);
        if let Some(g) = core.grid.current() {
            g.prefetch_mirror(m.slot.wrapping_add(8));
        }
    }
    core.next_move = m.slot.wrapping_add(1);
    let (before, epoch) = (core.store.writes(), core.store.epoch());
    let (slot, aabb) = (m.slot, m.aabb);
    let r = s.update_boxed(m);
    let core = s.core_mut();
    // The move's box into the grid's copy, which then spares the next
    // refit its read of the store. A grid still up to date after the
    // move was not changed by it (a queued object moved): it is left as
    // it is, so that the queries go on using it.
    if mirror && r.is_ok() && !core.grid.is_fresh() {
        // An object removed by the move (the `Remove` policy) changes the
        // objects: the copy is then out of date.
        let after = (core.store.epoch() == epoch).then(|| core.store.writes());
        core.grid.edit().mirror_move(slot, &aabb, before, after);
    }
    core.tidy();
    r
}

/// [`update_checked`] out of line, for one move at a time
/// ([`SpatialIndex::update`](crate::SpatialIndex::update), whose handle
/// and shape checks are inlined into the caller). The box comes as six
/// numbers, which travel in registers (the third axis 0 in 2D). Passed
/// in memory, as a box, a move or a shape, the values were read in other
/// widths than the caller had just written them, and each such read
/// waits until those writes reach the cache (a failed store forwarding):
/// measured with the `frames` example (ns a move, 10k objects, three
/// rounds), the loose octree 41-43 with the whole update out of line
/// (the shape read back), 32-35 with the move in memory (the box read
/// back), 31-34 with the six numbers; the loose quadtree 33 -> 28, the
/// octree 32 -> 30, the BSP 36 -> 32.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn update_one<V: Vector, T, S: Family<V, T>>(
    s: &mut S,
    handle: Handle,
    slot: u32,
    shape: Shape<V>,
    x0: f32,
    y0: f32,
    z0: f32,
    x1: f32,
    y1: f32,
    z1: f32,
) -> Result<(), Error> {
    let (lo, hi) = ([x0, y0, z0], [x1, y1, z1]);
    let (mut min, mut max) = (V::ZERO, V::ZERO);
    for a in 0..V::DIM {
        min = min.with(a, lo[a]);
        max = max.with(a, hi[a]);
    }
    update_checked(
        s,
        Move {
            handle,
            slot,
            shape,
            aabb: Aabb { min, max },
        },
    )
}

/// Objects (slots) from which a run of moves in slot order prefetches
/// ([`Core::prefetch_ahead`]) whatever its nodes' size: below, a tree
/// with few nodes for its objects fits the caches, and the prefetches
/// only cost (measured before the forty-first session: `sparti bench`'s
/// loose quadtree at 10k to 30k objects 3-13% slower with them; since
/// then, moves no longer read their box back from memory, and a tree
/// with many nodes prefetches from [`PREFETCH_NODE_BYTES_FROM`]).
/// Every move prefetches in the unit tests, so that Miri runs it.
#[cfg(not(test))]
pub(crate) const PREFETCH_FROM: usize = 32_768;
#[cfg(test)]
pub(crate) const PREFETCH_FROM: usize = 1;

/// Bytes of nodes from which a run of moves in slot order prefetches
/// too, whatever the number of slots: a tree with many nodes for its
/// objects (the loose trees make about one an object) misses the cache
/// on its nodes well below [`PREFETCH_FROM`] objects. Measured with the
/// `frames` example (ns a move, two alternating rounds, with and without
/// the prefetch at every size): the loose octree at 10k objects (1.0 MB
/// of nodes) 31-36 -> 25, the loose quadtree at 10k (1.0 MB) 26-30 -> 25,
/// but the octree at 10k (0.2 MB) 28-29 -> 30-31, and the loose trees
/// and the octree at 1k and 3k (0.3 MB at most) 2 to 7 ns slower.
pub(crate) const PREFETCH_NODE_BYTES_FROM: usize = 512 << 10;

/// The objects filed in the tree, as a new sort of the grid reads them:
/// position `i` is list entry `i` (room: none), its box from its shape in
/// the store. In the lists' order, the tree's, so that the sort's counts
/// and scatter, by cell, go through memory in order of space (in slot
/// order, at random: measured, the grid's sort of a million objects'
/// bulk build took 2.5 times as long). It reads each object's shape and
/// static flag, never its value.
pub(crate) struct Filed<'a, V: Vector, T> {
    entries: &'a [crate::index::Entry],
    store: &'a Store<Object<V, T>>,
}

// SAFETY: a `Filed` gives its threads only `Source::at` and
// `Source::prefetch`, which read the list entries (`u32`s) and each
// entry's object's `shape` and `is_static` in the store: plain data
// (`Copy`, of a `Vector` type, which is `Sync`). They never read, write,
// clone, drop or hand out the object's value `T`, the one part of the
// store that may not be `Sync`, and a shared reference to the object's
// entry (which they make on the way) is no access to it. So threads
// sharing a `Filed` share only `Sync` data, as if the store held no `T`. (In
// practice only the parallel pair search's sort shares one between
// threads, and its `T` is `Sync`; the one-thread pair search's sort,
// for any `T`, needs the bound to compile.) Measured reason: without it
// that sort would need every box copied (24 bytes an object more in 3D,
// kept between frames, or an allocation every few frames). The kernel's
// tests read one from two threads with a value that is not `Sync`,
// under Miri in CI.
unsafe impl<V: Vector, T> Sync for Filed<'_, V, T> {}

impl<V: Vector, T> grid::Source<V> for Filed<'_, V, T> {
    #[inline]
    fn len(&self) -> usize {
        self.entries.len()
    }
    #[inline]
    fn at(&self, i: usize) -> Option<crate::index::Item<V>> {
        let e = self.entries[i];
        (!e.is_room()).then(|| self.store.item(e))
    }
    #[inline]
    fn prefetch(&self, i: usize) {
        if let Some(e) = self.entries.get(i)
            && !e.is_room()
        {
            self.store.prefetch_obj(e.slot());
        }
    }
    #[inline]
    fn ahead(&self, i: usize) {
        self.prefetch(i);
    }
}

/// [`Core::follow`] on the store alone (for a build that holds the lists
/// at the same time).
#[inline]
fn follow<'a, V: Vector, T>(
    store: &'a Store<Object<V, T>>,
    pending: &[u32],
) -> grid::Follow<impl grid::Locate<V> + 'a, impl Fn(u32) + 'a> {
    // With nothing queued, every live object is filed: the grid's
    // objects (as many as are filed, of the same live objects, the epoch
    // checks) are then all filed, and a refit reads the objects alone,
    // not their places (at a million objects, one more cache miss an
    // object). Otherwise each object's place is checked too. No change
    // queues a filed object (moves keep objects filed, and only an
    // insertion, which changes the epoch, queues one), so with the same
    // epoch that check never fails today: a defence, at the cost of one
    // read an object, for the rare refit with objects queued.
    let all_filed = pending.is_empty();
    grid::Follow {
        epoch: store.epoch(),
        filed: store.len() - pending.len(),
        writes: store.writes(),
        all_filed,
        // The shape, whose box the grid follows.
        locate: move |slot| {
            let o = store.get_obj(slot)?;
            if !all_filed {
                store.get_place(slot).filter(|s| s.node != NONE)?;
            }
            Some(o.shape)
        },
        prefetch: move |slot| {
            store.prefetch_obj(slot);
            if !all_filed {
                store.prefetch_place(slot);
            }
        },
    }
}

/// The query boxes (the boxes around the subtrees' objects) as the
/// queries reach them: [`QueryBoxes::now`] brings them up to date, once
/// after a change (the other threads' queries wait for it), where a query
/// walks the tree. A query that searches the grid does not need them, so
/// a build step that leaves the grid built does not compute them.
pub(crate) struct QueryBoxes<'a, V: Vector, T, N> {
    core: &'a Core<V, T, N>,
}

impl<V: Vector, T, N> Clone for QueryBoxes<'_, V, T, N> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<V: Vector, T, N> Copy for QueryBoxes<'_, V, T, N> {}

impl<'a, V: Vector, T, N: TreeNode<V>> QueryBoxes<'a, V, T, N> {
    /// The query boxes, up to date.
    #[inline]
    pub fn now(self) -> &'a SubBounds<V> {
        let core = self.core;
        core.sub.get(|s| {
            core.moved.mark_into(s, &core.store);
            s.refresh(&core.nodes, &core.filed(), core.root);
        })
    }
}

/// The moves in place that the query boxes have not taken in yet.
///
/// A move that leaves its object in its node (nearly every move of a
/// frame) writes the new shape into the store and records the slot
/// here; it does not mark its node for the query boxes, at random in
/// memory when the objects are moved in the order they were made
/// (measured with the `frames` example, loose octree, a million objects:
/// the moves took 79-80 ns an object with the write of the list entry
/// and the mark, 63-65 without either; list entries hold no box now).
/// The query boxes mark the record's nodes when they are next brought up
/// to date, and the next move after that starts a new record. The pair
/// search's refit reads the store and needs neither, so a frame of moves
/// and pairs marks no node.
pub(crate) struct Moved {
    /// Their slots (one may come more than once; a slot whose object has
    /// gone since, or is queued, is skipped).
    slots: Vec<u32>,
    /// Set once they are more than one object in [`MOVED_PART`]: every
    /// query box is recomputed then.
    all: bool,
    /// The record's number: the query boxes note the last one whose
    /// nodes they marked ([`SubBounds::absorbed`]).
    record: u64,
}

impl Default for Moved {
    /// An empty record, numbered 1: the query boxes start having marked
    /// none (0).
    fn default() -> Self {
        Self {
            slots: Vec::new(),
            all: false,
            record: 1,
        }
    }
}

/// From `objects / MOVED_PART + MOVED_LISTED` moves on, every query box
/// is recomputed instead of the listed ones' nodes (one pass over the
/// tree in order, rather than that many nodes at random).
const MOVED_PART: usize = 8;
const MOVED_LISTED: usize = 64;

impl Moved {
    /// Marks the record's nodes in the query boxes `s`, unless they have
    /// marked them already.
    fn mark_into<V: Vector, T>(&self, s: &mut SubBounds<V>, store: &Store<Object<V, T>>) {
        if s.absorbed == self.record {
            return;
        }
        s.absorbed = self.record;
        if self.all {
            s.mark_stale();
            return;
        }
        for &slot in &self.slots {
            if let Some(place) = store.live_place(slot)
                && place.node != NONE
            {
                s.mark_node(place.node);
            }
        }
    }

    /// By node, whether it may hold an object of the record that the
    /// query boxes `s` have not marked (for `validate`).
    pub fn unmarked<V: Vector, T>(
        &self,
        s: &SubBounds<V>,
        store: &Store<Object<V, T>>,
        nodes: usize,
    ) -> Vec<bool> {
        let mut late = vec![self.all && s.absorbed != self.record; nodes];
        if s.absorbed != self.record && !self.all {
            for &slot in &self.slots {
                if let Some(p) = store.live_place(slot)
                    && let Some(l) = late.get_mut(p.node as usize)
                {
                    *l = true;
                }
            }
        }
        late
    }
}

/// Asks the processor to bring `x`'s cache lines near: every line the
/// value covers (a node or a list entry may straddle two or three: the
/// field a move reads first was often in the line not asked for). A hint:
/// it does nothing else, and nothing where the target has no such
/// instruction.
#[inline(always)]
pub(crate) fn prefetch<X>(x: &X) {
    let p = (x as *const X).cast::<i8>();
    prefetch_line(p);
    // A value no larger than its alignment never straddles a line (for
    // alignments up to the line's 64 bytes): one hint, known at compile
    // time. Else a hint every line's length on, and one for the last
    // byte: as many whatever the address (no branch on where the value
    // starts in its line, which cachegrind's model of the branch
    // predictor missed for one move in three of the loose octree's
    // nodes), one of them sometimes for a line already asked for.
    if size_of::<X>() > align_of::<X>() {
        for off in other_lines(size_of::<X>()) {
            prefetch_line(p.wrapping_add(off));
        }
    }
}

/// Offsets from a value's first byte that, with it, lie in every cache
/// line its `size` bytes cover, wherever it starts: every line's length
/// on, then its last byte. The same for every address, and known at
/// compile time for a value's type.
#[inline(always)]
fn other_lines(size: usize) -> impl Iterator<Item = usize> {
    (CACHE_LINE..size)
        .step_by(CACHE_LINE)
        .chain(core::iter::once(size.max(1) - 1))
}

/// The cache line's size of the processors sparti is tuned for (x86-64).
const CACHE_LINE: usize = 64;

/// [`prefetch`] of the line holding address `p`.
#[inline(always)]
fn prefetch_line(p: *const i8) {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse"))]
    // SAFETY: a prefetch reads nothing and writes nothing the program can
    // see, and faults on no address (`p` may point past a value: the
    // instruction never faults). The build enables SSE (the `cfg`), which
    // every x86-64 processor has.
    unsafe {
        use core::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>(p);
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse")))]
    let _ = p;
}

/// The one implementation of [`SpatialIndex`](crate::SpatialIndex) for every tree family:
/// `impl_spatial_index!(Orthtree)` gives a type implementing [`Family`]
/// every method. (A macro rather than a blanket `impl<S: Family>`, which
/// the brute force's own implementation would conflict with.)
macro_rules! impl_spatial_index {
    ($ty:ident) => {
        impl<V: $crate::Vector, T> $crate::SpatialIndex<V, T> for $ty<V, T> {
            fn insert(
                &mut self,
                desc: $crate::ObjectDesc<V, T>,
            ) -> Result<$crate::Handle, $crate::Error> {
                let obj = $crate::Object::from_desc(desc)?;
                let aabb = obj.aabb();
                $crate::kernel::Family::admit(self, &aabb)?;
                let core = $crate::kernel::Family::core_mut(self);
                let h = core.store.insert(obj)?;
                core.queue(h.index, &aabb);
                Ok(h)
            }

            fn insert_many(
                &mut self,
                descs: Vec<$crate::ObjectDesc<V, T>>,
            ) -> Result<Vec<$crate::Handle>, $crate::Error> {
                // Every object is checked (as `insert` checks it) before
                // any is stored: on error nothing is inserted. The same
                // pass surveys them for the queue's survey, where it is
                // kept (a tree without a root).
                let core = $crate::kernel::Family::core(self);
                let keep = core.root == $crate::store::NONE && core.queued.is_some();
                let mut batch = $crate::kernel::PendingSurvey::EMPTY;
                for d in &descs {
                    let aabb = $crate::index::checked_aabb(&d.shape)?;
                    $crate::kernel::Family::admit(self, &aabb)?;
                    if keep {
                        batch.add(&aabb);
                    }
                }
                let core = $crate::kernel::Family::core_mut(self);
                core.store.room_for(descs.len())?;
                core.mark_stale();
                core.pending.reserve(descs.len());
                // Taken until every object is queued (a failure half-way,
                // which the room checked above rules out, would leave none).
                let mut kept = core.queued.take().filter(|_| keep);
                let out = if core.store.is_new() {
                    // The first objects: made where their descriptions
                    // are (an object is laid out as its description, and
                    // the standard library then collects in place), and
                    // that array becomes the store's. A million objects'
                    // copy into new memory, and the old array's release,
                    // were a quarter of their bulk build (`sparti-bench`,
                    // build workloads).
                    core.adopt(
                        descs
                            .into_iter()
                            .map(|d| Some($crate::Object::from_checked(d)))
                            .collect(),
                    )
                } else {
                    core.store.reserve(descs.len());
                    let mut out = Vec::with_capacity(descs.len());
                    for d in descs {
                        let h = core.store.insert($crate::Object::from_checked(d))?;
                        core.push_pending(h.index);
                        out.push(h);
                    }
                    out
                };
                if let Some(q) = &mut kept {
                    q.absorb(&batch);
                }
                core.queued = kept;
                Ok(out)
            }

            // Inlined into the caller, where the shape's values are (see
            // `kernel::update_one`).
            #[inline(always)]
            fn update(
                &mut self,
                h: $crate::Handle,
                shape: $crate::Shape<V>,
            ) -> Result<(), $crate::Error> {
                let slot = $crate::kernel::Family::core(self).store.resolve(h)?;
                let aabb = $crate::index::checked_aabb(&shape)?;
                let z = |v: V| if V::DIM > 2 { v.get(2) } else { 0.0 };
                $crate::kernel::update_one(
                    self,
                    h,
                    slot,
                    shape,
                    aabb.min.get(0),
                    aabb.min.get(1),
                    z(aabb.min),
                    aabb.max.get(0),
                    aabb.max.get(1),
                    z(aabb.max),
                )
            }

            fn update_many(
                &mut self,
                moves: &[($crate::Handle, $crate::Shape<V>)],
            ) -> Result<(), $crate::Error>
            where
                T: Send + Sync,
            {
                $crate::kernel::update_many(self, moves)
            }

            fn remove(&mut self, h: Handle) -> Result<T, $crate::Error> {
                let slot = $crate::kernel::Family::core(self).store.resolve(h)?;
                $crate::kernel::Family::core_mut(self).detach(slot);
                Ok($crate::kernel::Family::core_mut(self)
                    .store
                    .remove(slot)
                    .value)
            }

            fn get(&self, h: Handle) -> Result<&$crate::Object<V, T>, $crate::Error> {
                $crate::kernel::Family::core(self).store.get(h)
            }

            fn value_mut(&mut self, h: Handle) -> Result<&mut T, $crate::Error> {
                $crate::kernel::Family::core_mut(self).store.value_mut(h)
            }

            fn len(&self) -> usize {
                $crate::kernel::Family::core(self).store.len()
            }

            fn objects<'a>(
                &'a self,
            ) -> impl Iterator<Item = ($crate::Handle, &'a $crate::Object<V, T>)>
            where
                T: 'a,
            {
                $crate::kernel::Family::core(self).store.objects()
            }

            fn clear(&mut self) {
                let core = $crate::kernel::Family::core_mut(self);
                core.mark_stale();
                core.store.clear();
                core.nodes.clear();
                core.lists.clear();
                core.free_nodes.clear();
                core.root = $crate::store::NONE;
                core.pending.clear();
                core.queued = Some($crate::kernel::PendingSurvey::EMPTY);
                core.idle.clear();
                $crate::kernel::Family::after_clear(self);
            }

            fn flush(&mut self) {
                let (survey, built) = $crate::kernel::build_pending(self);
                $crate::kernel::Family::core_mut(self).settle(survey, built);
            }

            fn end_frame(&mut self) {
                // The grid is sorted later (by the first search): the
                // survey is not kept for it.
                let _ = $crate::kernel::build_pending(self);
                let core = $crate::kernel::Family::core_mut(self);
                core.age_idle_nodes();
                core.tidy();
                core.adopt_grid();
            }

            fn query<R: $crate::Region<V>>(
                &self,
                region: &R,
                filter: $crate::Filter,
                out: &mut Vec<$crate::Handle>,
            ) {
                let core = $crate::kernel::Family::core(self);
                let mut c = $crate::Counters::default();
                $crate::traverse::with_scratch(|s| {
                    core.view().query(s, &mut c, region, filter, out)
                });
                core.counters.add(&c);
            }

            fn ray_nearest(
                &self,
                ray: &$crate::Ray<V>,
                max_dist: f32,
                filter: $crate::Filter,
            ) -> Option<$crate::RayHit<V>> {
                let core = $crate::kernel::Family::core(self);
                let mut c = $crate::Counters::default();
                let hit = $crate::traverse::with_scratch(|s| {
                    core.view().ray_nearest(s, &mut c, ray, max_dist, filter)
                });
                core.counters.add(&c);
                hit
            }

            fn ray_all(
                &self,
                ray: &$crate::Ray<V>,
                max_dist: f32,
                filter: $crate::Filter,
                out: &mut Vec<$crate::RayHit<V>>,
            ) {
                let core = $crate::kernel::Family::core(self);
                let mut c = $crate::Counters::default();
                $crate::traverse::with_scratch(|s| {
                    core.view().ray_all(s, &mut c, ray, max_dist, filter, out);
                });
                core.counters.add(&c);
            }

            fn nearest_k(
                &self,
                point: V,
                k: usize,
                filter: $crate::Filter,
                out: &mut Vec<$crate::Neighbor>,
            ) {
                let core = $crate::kernel::Family::core(self);
                let mut c = $crate::Counters::default();
                $crate::traverse::with_scratch(|s| {
                    core.view().nearest(s, &mut c, point, k, filter, out)
                });
                core.counters.add(&c);
            }

            fn ray_nearest_batch(
                &self,
                rays: &[($crate::Ray<V>, f32)],
                filter: $crate::Filter,
                out: &mut Vec<Option<$crate::RayHit<V>>>,
            ) where
                T: Sync,
            {
                let core = $crate::kernel::Family::core(self);
                let mut c = $crate::Counters::default();
                $crate::traverse::with_scratch(|s| {
                    core.view().ray_nearest_batch(s, &mut c, rays, filter, out);
                });
                core.counters.add(&c);
            }

            fn query_aabb_batch(
                &self,
                boxes: &[$crate::Aabb<V>],
                filter: $crate::Filter,
                handles: &mut Vec<$crate::Handle>,
                offsets: &mut Vec<usize>,
            ) where
                T: Sync,
            {
                let core = $crate::kernel::Family::core(self);
                let mut c = $crate::Counters::default();
                $crate::traverse::with_scratch(|s| {
                    core.view()
                        .query_batch(s, &mut c, boxes, filter, handles, offsets);
                });
                core.counters.add(&c);
            }

            fn set_layer_matrix(&mut self, matrix: $crate::LayerMatrix) {
                $crate::kernel::Family::core_mut(self).matrix = matrix;
            }

            fn layer_matrix(&self) -> &$crate::LayerMatrix {
                &$crate::kernel::Family::core(self).matrix
            }

            fn for_each_pair<F>(&self, mut f: F)
            where
                F: FnMut(
                    $crate::Handle,
                    $crate::Handle,
                    &$crate::Object<V, T>,
                    &$crate::Object<V, T>,
                ),
            {
                let mut c = $crate::Counters::default();
                $crate::kernel::search_pairs(self, &mut c, &mut f);
                $crate::kernel::Family::core(self).pending_pairs(&mut c, &mut f);
                $crate::kernel::Family::core(self).counters.add(&c);
            }

            fn par_pairs(&self, out: &mut Vec<$crate::Pair>)
            where
                T: Sync,
            {
                $crate::kernel::par_search(self, |a, b, _, _| Some($crate::Pair { a, b }), out);
            }

            fn par_contacts(&self, out: &mut Vec<$crate::Contact<V>>)
            where
                T: Sync,
            {
                $crate::kernel::par_search(
                    self,
                    |a, b, oa, ob| $crate::index::contact_of(a, b, oa, ob),
                    out,
                );
            }

            fn counters(&self) -> $crate::Counters {
                $crate::kernel::Family::core(self).counters.load()
            }

            fn reset_counters(&mut self) {
                $crate::kernel::Family::core_mut(self).counters.reset();
                $crate::kernel::Family::reset_own_counters(self);
            }

            fn stats(&self) -> $crate::TreeStats {
                $crate::kernel::tree_stats(self)
            }

            fn for_each_node<F: FnMut(&$crate::Aabb<V>, usize, usize)>(&self, mut f: F) {
                $crate::kernel::Family::nodes_depth_first(self, &mut f);
            }

            fn validate(&self) -> Result<(), $crate::ValidationError> {
                $crate::kernel::check_tree(self)?;
                let core = $crate::kernel::Family::core(self);
                core.sub
                    .with_current(|s| {
                        let late = core.moved.unmarked(s, &core.store, core.nodes.len());
                        s.check(&core.nodes, core.entries(), core.root, &core.store, |n| {
                            late[n as usize]
                        })
                    })
                    .map_err($crate::ValidationError)?;
                core.grid
                    .peek()
                    .map_or(Ok(()), |g| g.check(&core.filed_items()))
                    .map_err($crate::ValidationError)?;
                core.grid
                    .with_current(|g| g.check_mirror(&core.store))
                    .map_err($crate::ValidationError)
            }
        }
    };
}
pub(crate) use impl_spatial_index;

/// The pair-search methods of an `impl Family`, forwarding to the family's
/// search: `find(self, counters, f)` for [`Family::find_pairs`] and, with
/// the `rayon` feature, `par(self, record, out)` for
/// [`Family::par_collect`].
macro_rules! pair_search_methods {
    ($find:path, $par:path) => {
        fn find_pairs<F>(&self, counters: &mut $crate::Counters, f: &mut F)
        where
            F: FnMut($crate::Handle, $crate::Handle, &$crate::Object<V, T>, &$crate::Object<V, T>),
        {
            $find(self, counters, f);
        }

        #[cfg(feature = "rayon")]
        fn par_collect<R, M>(&self, record: M, out: &mut Vec<R>)
        where
            T: Sync,
            R: Copy + Send + Sync + 'static,
            M: Fn(
                    $crate::Handle,
                    $crate::Handle,
                    &$crate::Object<V, T>,
                    &$crate::Object<V, T>,
                ) -> Option<R>
                + Sync,
        {
            $par(self, record, out);
        }
    };
}
pub(crate) use pair_search_methods;

#[cfg(test)]
mod tests {
    use crate::{
        Aabb, BruteForce, Bsp, Handle, LooseOrthtree, ObjectDesc, Orthtree, Pair, Shape,
        SpatialIndex,
    };
    use glam::Vec3;

    /// The automatic cell size from the sides' bins is four times the
    /// median side rounded up to a power of two, computed exactly (in
    /// `f64`) from the sorted sides: powers of two themselves, the numbers
    /// just above and below them, zeros among the sides, below the
    /// smallest normal number, and past the limits.
    #[test]
    fn the_automatic_cell_size_is_four_medians_rounded_up_to_a_power_of_two() {
        // Powers of two from their bits (Miri makes `powi` inexact).
        let pow2 = |p: i32| f64::from_bits(((p + 1023) as u64) << 52);
        let rounded_up = |x: f64| (-160..200).find(|&p| pow2(p) >= x).unwrap();
        let reference = |sides: &[f32], span: &Aabb<Vec3>| -> f32 {
            let mut s = sides.to_vec();
            s.sort_by(f32::total_cmp);
            let m = f64::from(s[s.len() / 2]);
            let p = if m == 0.0 {
                rounded_up(f64::from(span.size().max_element() / 1024.0))
            } else {
                rounded_up(4.0 * m)
            };
            if p >= 128 {
                1.0
            } else {
                pow2(p.clamp(-120, 59)) as f32
            }
        };
        let span = Aabb::new(Vec3::ZERO, Vec3::splat(3000.0)).unwrap();
        let mut rng = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        let specials = [
            0.0,
            -0.0,
            1.0,
            f32::from_bits(1.0f32.to_bits() + 1),
            f32::from_bits(1.0f32.to_bits() - 1),
            0.75,
            3.0,
            4.0,
            1e-3,
            1e-40,
            f32::MIN_POSITIVE,
            2f32.powi(50),
            2f32.powi(126),
            f32::MAX,
        ];
        let trials = if cfg!(miri) { 40 } else { 2000 };
        for t in 0..trials {
            let n = 1 + (next() % 9) as usize;
            let sides: Vec<f32> = (0..n)
                .map(|_| {
                    let r = next();
                    if r % 3 == 0 {
                        specials[(r >> 8) as usize % specials.len()]
                    } else {
                        f32::from_bits((r >> 32) as u32 & 0x7FFF_FFFF).min(f32::MAX)
                    }
                })
                .collect();
            let mut bins = [0u32; 512];
            for &x in &sides {
                bins[super::side_bin(x)] += 1;
            }
            assert_eq!(
                super::auto_cell_size(&bins, n, Some(&span)),
                reference(&sides, &span),
                "trial {t}: {sides:?}"
            );
        }
        // No object: 1.
        assert_eq!(super::auto_cell_size::<Vec3>(&[0; 512], 0, None), 1.0);
    }

    /// A prefetch asks for every cache line a value covers, wherever it
    /// starts in its line, and for no line outside it: checked for every
    /// size up to three lines and every start in a line.
    #[test]
    fn prefetch_covers_every_line_of_a_value() {
        let line = |a: usize| a / super::CACHE_LINE;
        for size in 1..=3 * super::CACHE_LINE {
            let offsets: Vec<usize> = super::other_lines(size).collect();
            assert!(
                offsets.len() <= size.div_ceil(super::CACHE_LINE),
                "size {size}: {offsets:?}"
            );
            for addr in 64..128 {
                let mut asked: Vec<usize> = core::iter::once(0)
                    .chain(offsets.iter().copied())
                    .map(|o| {
                        assert!(o < size, "size {size}: offset {o} outside the value");
                        line(addr + o)
                    })
                    .collect();
                asked.sort_unstable();
                asked.dedup();
                let covered: Vec<usize> = (line(addr)..=line(addr + size - 1)).collect();
                assert_eq!(asked, covered, "size {size} at {addr}");
            }
        }
    }

    /// The bulk load of a fresh tree keeps room in its pending queue for
    /// an eighth of its objects, not for the whole load; a tree that
    /// takes large batches every frame keeps its queue's allocation whole
    /// (no new one once warm).
    #[test]
    // Tens of thousands of objects: far too slow under Miri (CI runs this
    // module there for the prefetch), and no `unsafe` of its own.
    #[cfg_attr(miri, ignore)]
    fn the_pending_queue_is_trimmed_after_a_bulk_load_only() {
        use crate::kernel::Family;
        let n = 40_000u32;
        let sphere = |i: u32| {
            let c = Vec3::new((i % 200) as f32, (i / 200) as f32, 0.0) * 3.0;
            ObjectDesc::new(Shape::sphere(c, 1.0), i)
        };
        let mut t = Orthtree::<Vec3, u32>::new();
        let handles = t.insert_many((0..n).map(sphere).collect()).expect("valid");
        assert!(Family::core(&t).pending.capacity() >= n as usize);
        t.flush();
        let kept = Family::core(&t).pending.capacity();
        assert!(kept <= super::KEPT_QUEUE.max(n as usize / 8), "{kept}");
        // Batches of 8,000 (over an eighth of the tree) replaced every
        // frame: the queue grows once, then keeps its allocation.
        let mut live = handles;
        let mut caps = Vec::new();
        for frame in 0..4u32 {
            for h in live.drain(..8_000) {
                t.remove(h).expect("live");
            }
            let more = (0..8_000).map(|i| sphere(n + frame * 8_000 + i)).collect();
            live.extend(t.insert_many(more).expect("valid"));
            t.flush();
            t.validate().expect("valid");
            caps.push(Family::core(&t).pending.capacity());
        }
        assert!(caps[0] >= 8_000, "{caps:?}");
        assert!(caps.windows(2).all(|w| w[0] == w[1]), "{caps:?}");
    }

    /// The grid's source of filed objects is read from two threads at
    /// once, the objects' values not `Sync` (a `Cell`, set meanwhile on
    /// this thread through the index): both read every filed object's box
    /// and flag, the queued one not. (Run under Miri in CI, for the
    /// `unsafe impl Sync` of [`super::Filed`].)
    #[test]
    fn the_filed_objects_are_read_from_several_threads() {
        use super::grid::{Source, Survey};
        use std::cell::Cell;
        let mut t = crate::LooseOctree::<Cell<u32>>::new();
        let mut handles = Vec::new();
        for i in 0..12u32 {
            let c = Vec3::new(i as f32 * 3.0, (i % 3) as f32, 0.0);
            let d = ObjectDesc::new(Shape::sphere(c, 1.0), Cell::new(i)).with_static(i % 4 == 0);
            handles.push(t.insert(d).expect("valid"));
        }
        t.flush();
        let queued = t
            .insert(ObjectDesc::new(
                Shape::sphere(Vec3::ONE, 1.0),
                Cell::new(99),
            ))
            .expect("valid");
        let core = super::Family::core(&t);
        let filed = core.filed();
        let read = || {
            let items: Vec<_> = (0..filed.len()).filter_map(|i| filed.at(i)).collect();
            (items, Survey::of(&filed, 0..filed.len()))
        };
        let (a, b) = std::thread::scope(|s| {
            let a = s.spawn(read);
            let b = s.spawn(read);
            for &h in &handles {
                let v = &t.get(h).expect("live").value;
                v.set(v.get() + 100);
            }
            (a.join().expect("reader"), b.join().expect("reader"))
        });
        assert_eq!(a.1, b.1, "the same survey");
        assert_eq!(
            a.0.len(),
            handles.len(),
            "every filed object, not the queued one"
        );
        for (it, jt) in a.0.iter().zip(&b.0) {
            assert_eq!(
                (it.slot(), it.is_static(), it.aabb),
                (jt.slot(), jt.is_static(), jt.aabb)
            );
            let o = core.store.obj(it.slot());
            assert_eq!((it.aabb, it.is_static()), (o.aabb(), o.is_static));
        }
        assert!(a.0.iter().all(|it| it.slot() != queued.index()));
        assert!(
            handles
                .iter()
                .all(|&h| t.get(h).expect("live").value.get() >= 100)
        );
    }

    /// The survey a first build hands to the grid (so that the grid's sort
    /// skips its own first pass) is the one the grid would make of the
    /// lists: the same box, count and sizes by exponent, for every family,
    /// with points, huge and tiny objects, sides at powers of two and
    /// objects far from the origin; the grid's sort takes it (`settle`,
    /// whose debug build checks it again). A later build hands none; a
    /// bulk build into an empty tree hands its boxes, every entry's.
    #[test]
    // No `unsafe` of its own (the grid's is run under Miri by its own
    // tests): left out of CI's Miri run, which it would slow by 15 s.
    #[cfg_attr(miri, ignore)]
    fn the_survey_handed_to_the_grid_is_the_grids_own() {
        use crate::kernel::{Family, build_pending, grid::Survey};
        fn check<S: SpatialIndex<Vec3, u32> + Family<Vec3, u32>>(mut t: S) {
            let shapes = [
                Shape::sphere(Vec3::new(1.0, 2.0, 3.0), 0.5),
                Shape::sphere(Vec3::new(-7.0, 0.25, 9.0), 0.0),
                Shape::cuboid(Vec3::new(3.0, 3.0, 3.0), Vec3::new(2.0, 0.5, 0.125)),
                Shape::cuboid(Vec3::splat(-1.0e6), Vec3::splat(3.0e5)),
                Shape::sphere(Vec3::new(1.0e-30, 0.0, -1.0e-30), 1.0e-38),
                Shape::sphere(Vec3::new(5.0, -5.0, 5.0), 4.0),
            ];
            let descs: Vec<_> = (0..60u32)
                .map(|i| {
                    let s = shapes[i as usize % shapes.len()];
                    let step = Vec3::new(i as f32 * 0.75, -(i as f32), (i % 7) as f32);
                    ObjectDesc::new(s.translated(step), i).with_static(i % 3 == 0)
                })
                .collect();
            let mut brute = BruteForce::<Vec3, u32>::new();
            brute.insert_many(descs.clone()).expect("valid objects");
            t.insert_many(descs).expect("valid objects");
            let (survey, built) = build_pending(&mut t);
            let survey = survey.expect("a first build's survey");
            let filed = Family::core(&t).filed();
            assert_eq!(
                survey,
                Survey::of(&filed, 0..crate::kernel::grid::Source::len(&filed))
            );
            // The bulk build's boxes, every entry's (`settle` checks them
            // in debug builds).
            let built = built.expect("a bulk build into an empty tree keeps its boxes");
            assert_eq!(
                built.iter().filter(|it| !it.is_room()).count(),
                Family::core(&t).filed_items().len()
            );
            Family::core_mut(&mut t).settle(Some(survey), Some(built));
            t.validate().expect("valid");
            // The pairs of the grid sorted from it are the brute force's.
            fn values<I: SpatialIndex<Vec3, u32>>(t: &I) -> Vec<(u32, u32)> {
                let mut v = Vec::new();
                t.for_each_pair(|_, _, a, b| v.push((a.value.min(b.value), a.value.max(b.value))));
                v.sort_unstable();
                v
            }
            assert!(!values(&brute).is_empty(), "the objects have pairs");
            assert_eq!(values(&t), values(&brute));
            t.insert(ObjectDesc::new(Shape::sphere(Vec3::ONE, 1.0), 99))
                .expect("valid");
            let (survey, built) = build_pending(&mut t);
            assert_eq!(survey, None, "a later build");
            assert!(built.is_none(), "into a tree with objects: no boxes kept");
        }
        check(Orthtree::<Vec3, u32>::new());
        check(LooseOrthtree::<Vec3, u32>::new());
        check(Bsp::<Vec3, u32>::new());
        let world = Aabb::new(Vec3::splat(-2.0e6), Vec3::splat(2.0e6)).expect("finite");
        let bsp = Bsp::with_config(crate::BspConfig {
            world: Some(world),
            ..Default::default()
        })
        .expect("valid");
        check(bsp);
    }

    /// The survey of the queue that the kernel keeps as objects are
    /// queued into a tree without a root is the store's: after batches
    /// and single insertions it is kept (the first build reads nothing for
    /// it); a move or a removal of a queued object, or an insertion into a
    /// built tree, drops it (a first build would read the store); an empty
    /// queue (a build, a clear, the last queued object removed) starts it
    /// again.
    #[test]
    // No `unsafe` of its own (the grid's is run under Miri by its own
    // tests): left out of CI's Miri run, which it would slow by 15 s.
    #[cfg_attr(miri, ignore)]
    fn the_queues_survey_is_kept_while_objects_are_only_queued() {
        use crate::kernel::{Family, survey_pending};
        fn state<S: Family<Vec3, u32>>(t: &S) -> Option<bool> {
            let core = t.core();
            core.queued
                .as_ref()
                .map(|q| *q == survey_pending(&core.store, &core.pending))
        }
        fn check<S: SpatialIndex<Vec3, u32> + Family<Vec3, u32>>(mut t: S) {
            let desc = |i: u32| {
                let c = Vec3::new(i as f32 * 1.5, (i % 5) as f32 * -2.0, 3.0);
                let shape = if i.is_multiple_of(3) {
                    Shape::cuboid(c, Vec3::new(0.5, 2.0, 0.25))
                } else {
                    Shape::sphere(c, 0.25 + (i % 4) as f32)
                };
                ObjectDesc::new(shape, i)
            };
            assert_eq!(state(&t), Some(true), "new");
            let hs = t.insert_many((0..12).map(desc).collect()).expect("valid");
            assert_eq!(state(&t), Some(true), "a batch");
            t.insert(desc(12)).expect("valid");
            t.insert_many((13..20).map(desc).collect()).expect("valid");
            assert_eq!(state(&t), Some(true), "a single insertion, another batch");
            let bad = ObjectDesc::new(Shape::sphere(Vec3::NAN, 1.0), 99);
            assert!(t.insert_many(vec![desc(20), bad]).is_err());
            assert_eq!(state(&t), Some(true), "a refused batch");
            t.update(hs[3], Shape::sphere(Vec3::splat(-40.0), 9.0))
                .expect("valid");
            assert_eq!(state(&t), None, "a queued object moved");
            t.flush();
            t.validate().expect("valid");
            assert_eq!(state(&t), Some(true), "built");
            t.insert(desc(30)).expect("valid");
            assert_eq!(state(&t), None, "an insertion into a built tree");
            t.clear();
            t.insert_many((40..50).map(desc).collect()).expect("valid");
            let h = t.insert(desc(50)).expect("valid");
            assert_eq!(state(&t), Some(true), "after a clear");
            t.remove(h).expect("live");
            assert_eq!(state(&t), None, "a queued object removed");
            t.flush();
            t.validate().expect("valid");
            assert_eq!(state(&t), Some(true), "built again");
            t.clear();
            let h = t.insert(desc(60)).expect("valid");
            t.update(h, Shape::sphere(Vec3::ONE, 2.0)).expect("valid");
            assert_eq!(state(&t), None, "the only queued object moved");
            t.remove(h).expect("live");
            assert_eq!(state(&t), Some(true), "the last queued object removed");
        }
        check(Orthtree::<Vec3, u32>::new());
        check(LooseOrthtree::<Vec3, u32>::new());
        check(Bsp::<Vec3, u32>::new());
    }

    /// Objects moved one by one in slot order (the runs that prefetch
    /// ahead, [`super::Core::prefetch_ahead`]), with removed slots, queued
    /// insertions and the slots past the last among those it looks at:
    /// every structure keeps its invariants and finds the brute force's
    /// pairs, frame after frame. (Run under Miri in CI, for the prefetch's
    /// `unsafe`.)
    fn moves_in_slot_order<S: SpatialIndex<Vec3, u32>>(mut index: S) {
        let (n, side): (u32, f32) = if cfg!(miri) { (24, 8.0) } else { (300, 20.0) };
        let mut brute = BruteForce::<Vec3, u32>::new();
        let mut r = sparti_scenes::XorShift(0x00DD_BA11_5EED);
        let at = |r: &mut sparti_scenes::XorShift| {
            Vec3::new(r.next_unit(), r.next_unit(), r.next_unit()) * side
        };
        let mut handles: Vec<(Handle, Handle)> = Vec::new();
        for i in 0..n {
            let s = Shape::sphere(at(&mut r), 0.5 + r.next_unit());
            let h = index.insert(ObjectDesc::new(s, i)).expect("inside");
            let b = brute.insert(ObjectDesc::new(s, i)).expect("valid");
            handles.push((h, b));
        }
        index.flush();
        // Every fifth object removed: free slots inside the runs.
        for (h, b) in handles.iter().step_by(5) {
            index.remove(*h).expect("live");
            brute.remove(*b).expect("live");
        }
        let live: Vec<(Handle, Handle)> = handles
            .iter()
            .enumerate()
            .filter(|(i, _)| i % 5 != 0)
            .map(|(_, p)| *p)
            .collect();
        let (mut got, mut want) = (Vec::new(), Vec::new());
        for frame in 0..4 {
            for &(h, b) in &live {
                let s = Shape::sphere(at(&mut r), 0.5 + r.next_unit());
                index.update(h, s).expect("inside");
                brute.update(b, s).expect("valid");
            }
            // A queued insertion in the last slots, moved before the build.
            let s = Shape::sphere(at(&mut r), 1.0);
            let h = index.insert(ObjectDesc::new(s, n + frame)).expect("inside");
            brute.insert(ObjectDesc::new(s, n + frame)).expect("valid");
            index.update(h, s).expect("queued");
            index.validate().expect("valid after the moves");
            index.end_frame();
            index.validate().expect("valid after the frame");
            index.pairs(&mut got);
            brute.pairs(&mut want);
            let values = |t: &dyn Fn(Handle) -> u32, p: &[Pair]| {
                let mut v: Vec<(u32, u32)> = p
                    .iter()
                    .map(|p| {
                        let (a, b) = (t(p.a), t(p.b));
                        (a.min(b), a.max(b))
                    })
                    .collect();
                v.sort_unstable();
                v
            };
            assert_eq!(
                values(&|h| index.get(h).expect("live").value, &got),
                values(&|h| brute.get(h).expect("live").value, &want),
                "frame {frame}"
            );
            assert!(!want.is_empty(), "the scene has pairs to find");
        }
    }

    /// Moves that leave their objects in their nodes mark no node for
    /// the query boxes ([`super::Moved`]): the first reader brings them up
    /// to date, whether a few moves were listed or so many that every box
    /// is recomputed, and readers on several threads at once, right after
    /// the moves, find what the brute force finds. The changes that read
    /// the boxes of a node's objects (a leaf's split, here by the octree's
    /// leaf capacity) take them from the store. (Run under Miri in CI,
    /// which checks the threads for data races.)
    fn moves_in_place_then_readers<S>(mut index: S)
    where
        S: SpatialIndex<Vec3, u32> + super::Family<Vec3, u32> + Sync,
    {
        use crate::Filter;
        let side: u32 = if cfg!(miri) { 3 } else { 8 };
        let mut brute = BruteForce::<Vec3, u32>::new();
        let mut handles: Vec<(Handle, Handle)> = Vec::new();
        let at = |i: u32, frame: u32| {
            let (x, y, z) = (i % side, i / side % side, i / (side * side));
            // A small step each frame: the objects stay in their cells.
            let jitter = 0.01 * (frame % 3) as f32;
            Vec3::new(x as f32, y as f32, z as f32) * 4.0 + Vec3::splat(1.0 + jitter)
        };
        let n = side * side * side;
        for i in 0..n {
            let s = Shape::sphere(at(i, 0), 0.6);
            let h = index.insert(ObjectDesc::new(s, i)).expect("inside");
            let b = brute.insert(ObjectDesc::new(s, i)).expect("valid");
            handles.push((h, b));
        }
        index.flush();
        let regions: Vec<Aabb<Vec3>> = (0..6)
            .map(|k| {
                let c = Vec3::splat(k as f32 * 0.7 * side as f32);
                Aabb::new(c - 2.5, c + 2.5).expect("finite")
            })
            .collect();
        // Each region's objects (their values, sorted) by a structure.
        let found = |t: &dyn Fn(&Aabb<Vec3>) -> Vec<u32>| regions.iter().map(t).collect::<Vec<_>>();
        // Frame 1: a few moves (listed); frame 2: every object six times
        // (far more than an eighth of them, and than the 64 listed at
        // least: every query box is recomputed).
        for (frame, rounds, few) in [(1u32, 1u32, true), (2, 6, false)] {
            for round in 0..rounds {
                for (i, &(h, b)) in handles.iter().enumerate() {
                    if few && i % 7 != 0 {
                        continue;
                    }
                    let s = Shape::sphere(at(i as u32, frame + round), 0.6);
                    index.update(h, s).expect("inside");
                    brute.update(b, s).expect("valid");
                }
            }
            let core = super::Family::core_mut(&mut index);
            assert!(
                !core.sub.is_fresh(),
                "frame {frame}: query boxes left to the readers"
            );
            assert_eq!(core.moved.all, !few, "frame {frame}");
            let want = found(&|q| {
                let mut out = Vec::new();
                brute.query(q, Filter::ALL, &mut out);
                let mut v: Vec<u32> = out.iter().map(|&h| brute.get(h).unwrap().value).collect();
                v.sort_unstable();
                v
            });
            assert!(
                want.iter().any(|v| !v.is_empty()),
                "the regions hold objects"
            );
            let index = &index;
            std::thread::scope(|scope| {
                for _ in 0..3 {
                    scope.spawn(|| {
                        let got = found(&|q| {
                            let mut out = Vec::new();
                            index.query(q, Filter::ALL, &mut out);
                            let mut v: Vec<u32> =
                                out.iter().map(|&h| index.get(h).unwrap().value).collect();
                            v.sort_unstable();
                            v
                        });
                        assert_eq!(got, want, "frame {frame}");
                    });
                }
            });
            index.validate().expect("valid after the readers");
        }
        // Moves in place, then half the objects crowd into one spot: the
        // nodes they enter split (the octree's leaves at a second object,
        // the BSP's and the capped loose tree's past their capacity),
        // reading their objects' boxes from the store.
        for (i, &(h, b)) in handles.iter().enumerate() {
            let s = Shape::sphere(at(i as u32, 4), 0.6);
            index.update(h, s).expect("inside");
            brute.update(b, s).expect("valid");
        }
        for &(h, b) in handles.iter().step_by(2) {
            let s = Shape::sphere(at(0, 4) + Vec3::splat(0.3), 0.2);
            index.update(h, s).expect("inside");
            brute.update(b, s).expect("valid");
        }
        index.validate().expect("valid after the splits");
        let (mut got, mut want) = (Vec::new(), Vec::new());
        index.pairs(&mut got);
        brute.pairs(&mut want);
        let values = |t: &dyn Fn(Handle) -> u32, p: &[Pair]| {
            let mut v: Vec<(u32, u32)> = p
                .iter()
                .map(|p| (t(p.a).min(t(p.b)), t(p.a).max(t(p.b))))
                .collect();
            v.sort_unstable();
            v
        };
        let want = values(&|h| brute.get(h).expect("live").value, &want);
        assert!(!want.is_empty(), "the crowd's pairs");
        assert_eq!(values(&|h| index.get(h).expect("live").value, &got), want);
    }

    /// The build step after a pair search (the grid up to date) does no
    /// work, also where the objects are too crowded for the grid: the
    /// query boxes are left to the first query that walks the tree, which
    /// finds the brute force's objects. A build step after moves brings
    /// them up to date where the grid is not built.
    #[test]
    #[cfg_attr(miri, ignore = "no unsafe; minutes under Miri")]
    fn a_build_step_after_a_pair_search_costs_nothing() {
        use crate::kernel::Family as _;
        let mut t = LooseOrthtree::<Vec3, u32>::new();
        let mut b = crate::BruteForce::<Vec3, u32>::new();
        let at = |i: u32| Vec3::new(5.0 + (i % 7) as f32 * 1e-3, 5.0, 5.0);
        let mut handles = Vec::new();
        for i in 0..600 {
            let s = Shape::sphere(at(i), 0.5);
            handles.push((
                t.insert(ObjectDesc::new(s, i)).expect("valid"),
                b.insert(ObjectDesc::new(s, i)).expect("valid"),
            ));
        }
        t.flush();
        let mut pairs = Vec::new();
        t.pairs(&mut pairs);
        assert!(
            !t.core().grid.peek().expect("fresh").is_built(),
            "too crowded"
        );
        for frame in 1..=3u32 {
            for (i, &(h, g)) in handles.iter().enumerate() {
                let s = Shape::sphere(at(i as u32 + frame), 0.5);
                t.update(h, s).expect("inside");
                b.update(g, s).expect("valid");
            }
            t.end_frame();
            t.pairs(&mut pairs);
            t.flush();
            assert!(!t.core().sub.is_fresh(), "left to the first tree walk");
            let (mut x, mut y) = (Vec::new(), Vec::new());
            t.query_radius(at(0), 0.01, crate::Filter::ALL, &mut x);
            b.query_radius(at(0), 0.01, crate::Filter::ALL, &mut y);
            let value = |t: &dyn Fn(Handle) -> u32, v: &[Handle]| {
                let mut v: Vec<u32> = v.iter().map(|&h| t(h)).collect();
                v.sort_unstable();
                v
            };
            assert_eq!(
                value(&|h| t.get(h).expect("live").value, &x),
                value(&|h| b.get(h).expect("live").value, &y)
            );
            assert_eq!(x.len(), 600);
            assert!(
                t.core().sub.is_fresh(),
                "the tree walk brought them up to date"
            );
            t.validate().expect("valid");
        }
        // Moves, then the build step: the grid is sorted anew (still too
        // crowded) and the query boxes brought up to date with it.
        for &(h, _) in &handles {
            t.update(h, Shape::sphere(at(1), 0.5)).expect("inside");
        }
        t.flush();
        assert!(t.core().sub.is_fresh(), "made by the build step");
    }

    #[test]
    fn moves_in_place_are_taken_in_by_the_readers() {
        moves_in_place_then_readers(Orthtree::<Vec3, u32>::new());
        moves_in_place_then_readers(LooseOrthtree::<Vec3, u32>::new());
        moves_in_place_then_readers(
            LooseOrthtree::<Vec3, u32>::with_config(crate::LooseConfig {
                leaf_capacity: 2,
                ..Default::default()
            })
            .expect("valid"),
        );
        moves_in_place_then_readers(Bsp::<Vec3, u32>::new());
    }

    #[test]
    fn moves_in_slot_order_find_the_brute_force_pairs() {
        let world = Aabb::new(Vec3::splat(-2.0), Vec3::splat(24.0)).expect("finite");
        moves_in_slot_order(
            Orthtree::<Vec3, u32>::with_config(crate::OrthtreeConfig {
                world: Some(world),
                ..Default::default()
            })
            .expect("valid"),
        );
        moves_in_slot_order(
            LooseOrthtree::<Vec3, u32>::with_config(crate::LooseConfig {
                world: Some(world),
                ..Default::default()
            })
            .expect("valid"),
        );
        moves_in_slot_order(
            Bsp::<Vec3, u32>::with_config(crate::BspConfig {
                world: Some(world),
                ..Default::default()
            })
            .expect("valid"),
        );
    }

    /// A bulk insertion into an index that has never held an object makes
    /// the objects in the caller's vector and keeps it as the store's
    /// array; into one that has, it stores them one by one. Either way the
    /// handles, the objects and the pairs are those of one-by-one
    /// insertions, in every family.
    #[test]
    #[cfg_attr(miri, ignore = "no unsafe; minutes under Miri")]
    fn a_first_bulk_insertion_keeps_the_callers_vector() {
        use crate::kernel::Family;
        use crate::{Object, Vector};
        // Laid out alike: what lets the standard library collect in place.
        fn alike<V: Vector, T>() {
            assert_eq!(
                size_of::<Option<Object<V, T>>>(),
                size_of::<ObjectDesc<V, T>>()
            );
            assert_eq!(
                align_of::<Option<Object<V, T>>>(),
                align_of::<ObjectDesc<V, T>>()
            );
        }
        alike::<Vec3, u32>();
        alike::<glam::Vec2, u32>();
        alike::<Vec3, ()>();
        alike::<Vec3, u64>();
        alike::<glam::Vec2, String>();
        let descs = |from: u32, to: u32| -> Vec<ObjectDesc<Vec3, u32>> {
            (from..to)
                .map(|i| {
                    let c = Vec3::new((i % 9) as f32, (i / 9 % 9) as f32, (i / 81) as f32);
                    ObjectDesc::new(Shape::sphere(c * 1.5, 0.9), i)
                })
                .collect()
        };
        fn check<S: SpatialIndex<Vec3, u32> + Family<Vec3, u32>>(
            mut t: S,
            mut one: S,
            descs: &dyn Fn(u32, u32) -> Vec<ObjectDesc<Vec3, u32>>,
        ) {
            let first = descs(0, 300);
            let at = first.as_ptr().cast::<u8>();
            let hs = t.insert_many(first).expect("valid");
            // (The standard library collects a vector in place where the
            // two types have the same size and alignment: an optimisation
            // it makes, not a promise. Should it stop, only this check
            // fails: the objects would be copied, as before.)
            assert_eq!(
                t.core().store.objs().as_ptr().cast::<u8>(),
                at,
                "the caller's vector is the store's"
            );
            t.validate().expect("valid with the objects queued");
            t.flush();
            t.validate().expect("valid after the first load");
            // Into an index that holds objects: one by one.
            let more = t.insert_many(descs(300, 400)).expect("valid");
            t.flush();
            t.validate().expect("valid after the second load");
            let mut expect = Vec::new();
            for d in descs(0, 400) {
                expect.push(one.insert(d).expect("valid"));
            }
            one.flush();
            let all: Vec<Handle> = hs.into_iter().chain(more).collect();
            assert_eq!(all, expect, "the handles of one-by-one insertions");
            for &h in &all {
                assert_eq!(t.get(h).ok(), one.get(h).ok());
            }
            let (mut a, mut b) = (Vec::new(), Vec::new());
            t.pairs(&mut a);
            one.pairs(&mut b);
            assert!(!a.is_empty());
            // (In another order: this tree was built in two steps.)
            a.sort_unstable();
            b.sort_unstable();
            assert_eq!(a, b, "the pairs of one-by-one insertions");
        }
        check(Orthtree::new(), Orthtree::new(), &descs);
        check(LooseOrthtree::new(), LooseOrthtree::new(), &descs);
        check(Bsp::new(), Bsp::new(), &descs);
    }
}
