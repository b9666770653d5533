//! The queries every tree shares: one region traversal, two ray
//! traversals and one k-nearest search, written once over the
//! [`TreeNode`] view of a node pool.
//!
//! A tree only says, for each node, its own objects and its children. The
//! queries prune by [`SubBounds`]: the box around each subtree's objects,
//! and around each run of [`CHUNK`] objects of a large node, recomputed
//! from those lists in one pass before the first query after a change.
//! The batched queries run on rayon's threads with the `rayon` feature.

use crate::geometry::{Overlap, Ray, Region, Vector};
use crate::index::{Entry, Knn, Neighbor, closer, sort_hits};
use crate::kernel::grid::Source;
use crate::store::{NONE, Store};
use crate::{Counters, Filter, Handle, Object, RayHit};

/// What the shared queries need to know of a tree node.
pub(crate) trait TreeNode<V: Vector> {
    /// The objects filed in the node itself: a block of the kernel's
    /// [`Lists`](crate::kernel::Lists).
    fn block(&self) -> crate::kernel::Block;
    /// Child node indices; `NONE` for an absent child.
    fn children(&self) -> &[u32];
    /// The parent node, `NONE` for the root (or a node made root-less).
    fn parent(&self) -> u32;
}

/// Implements [`TreeNode`] for the calling module's `Node<V>`, from its
/// fields `items` (a block), `children` and `parent`.
macro_rules! impl_tree_node {
    () => {
        impl<V: $crate::Vector> $crate::traverse::TreeNode<V> for Node<V> {
            #[inline]
            fn block(&self) -> $crate::kernel::Block {
                self.items
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
    };
}
pub(crate) use impl_tree_node;

/// The box around the objects of each node's subtree, by node index: far
/// tighter than a node's region (a loose node's bounds are twice its cell;
/// an octree node holding one small object is mostly empty), and in one
/// dense array, so the queries test children without reading them and
/// enter only those whose objects the query can reach. With them, the
/// boxes of the runs of [`CHUNK`] objects of the large nodes.
///
/// Kept up to date lazily (in the kernel's `Cached`), by the first query
/// that walks the tree after a change, once however many threads query
/// (or by `flush`, where the grid is not built and after a bulk build;
/// the queries that search the grid never read them): the
/// trees mark every node whose object list changes (`file`, `unfile_at`,
/// a new node, the node of an updated object), and the refresh
/// recomputes those nodes and the boxes of their ancestors; a bulk change
/// (`insert_many`, the bulk build, `clear`) marks everything stale, and the
/// refresh recomputes all in one pass. A large node's chunk boxes are
/// rewritten in place when its old range is long enough. The boxes only ever need to hold
/// their objects: a node that lost objects (or children, pruned) may keep
/// a larger box until its next recomputation.
///
/// Code that changes a node's object list or reorders it must mark the
/// node (or mark everything stale), or the queries will miss objects.
pub(crate) struct SubBounds<V: Vector> {
    /// By node; an empty subtree has an inverted box (see [`SubBounds::get`]).
    bounds: Vec<crate::Aabb<V>>,
    /// By node: the box of the node's own objects.
    own: Vec<crate::Aabb<V>>,
    /// Nodes in depth-first order, parents first (scratch for the pass).
    order: Vec<u32>,
    /// For a node holding more than [`CHUNKED`] objects, the range of
    /// `chunks` holding the boxes of its objects taken [`CHUNK`] at a time,
    /// in list order; `(0, 0)` for the others. (A list that grew past its
    /// range has its further objects tested one by one.)
    chunk_range: Vec<(u32, u32)>,
    /// Boxes of runs of [`CHUNK`] objects of the large nodes; recomputed
    /// nodes append theirs, the old ones stay until the next full pass.
    chunks: Vec<crate::Aabb<V>>,
    /// `chunks.len()` after the last full pass.
    chunks_after_full: usize,
    /// Nodes marked since the last query, and their flags.
    dirty: Vec<u32>,
    is_dirty: Vec<bool>,
    /// True when everything is to be recomputed.
    stale: bool,
    /// The last record of moves in place whose nodes were marked here
    /// (see [`crate::kernel::Moved`]).
    pub absorbed: u64,
}

impl<V: Vector> Default for SubBounds<V> {
    /// Stale: a tree made with a root (a preset world) has nodes already.
    fn default() -> Self {
        Self {
            bounds: Vec::new(),
            own: Vec::new(),
            order: Vec::new(),
            chunk_range: Vec::new(),
            chunks: Vec::new(),
            chunks_after_full: 0,
            dirty: Vec::new(),
            is_dirty: Vec::new(),
            stale: true,
            absorbed: 0,
        }
    }
}

/// How many entries ahead the query boxes ask for an object's slot.
const OWN_AHEAD: usize = 16;

/// Steps a recomputation may climb from one node before it gives up and
/// recomputes everything (a safety net: trees are far shallower).
const MAX_CLIMB: usize = 4096;

impl<V: Vector> SubBounds<V> {
    /// Marks every box out of date: the next query recomputes them all.
    #[inline]
    pub fn mark_stale(&mut self) {
        self.stale = true;
    }

    /// Marks node `n`: its object list changed, or it is new.
    #[inline]
    pub fn mark_node(&mut self, n: u32) {
        if self.stale {
            return;
        }
        let i = n as usize;
        if i >= self.is_dirty.len() {
            self.is_dirty.resize(i + 1, false);
        }
        if !self.is_dirty[i] {
            self.is_dirty[i] = true;
            self.dirty.push(n);
        }
    }

    /// Recomputes the boxes of node `n`'s own objects (and its chunks).
    fn own_box<N: TreeNode<V>, S: Source<V> + ?Sized>(
        &mut self,
        n: u32,
        node: &N,
        lists: &S,
    ) -> crate::Aabb<V> {
        let mut b = crate::Aabb::empty();
        let range = node.block().range();
        // The kernel's lists give each object's box from its shape, in
        // the store at random: each is asked for a few entries ahead (the
        // lists are in the order the full pass visits the nodes, so the
        // next node's come next).
        let ahead = lists.len() >= crate::kernel::PREFETCH_FROM;
        let box_at = |i: usize| {
            if ahead {
                lists.ahead(i + OWN_AHEAD);
            }
            lists.at(i).map_or(crate::Aabb::empty(), |it| it.aabb)
        };
        if range.len() > CHUNKED {
            // In place when the node's old range is long enough; else at
            // the end (the old range is garbage until the next full pass).
            let needed = range.len().div_ceil(CHUNK) as u32;
            let (old_start, old_end) = self.chunk_range[n as usize];
            let start = if old_end - old_start >= needed {
                old_start
            } else {
                let start = self.chunks.len() as u32;
                self.chunks
                    .resize(start as usize + needed as usize, crate::Aabb::empty());
                start
            };
            for (k, first) in range.clone().step_by(CHUNK).enumerate() {
                let mut c = crate::Aabb::empty();
                for i in first..(first + CHUNK).min(range.end) {
                    c = c.union(&box_at(i));
                }
                self.chunks[start as usize + k] = c;
                b = b.union(&c);
            }
            self.chunk_range[n as usize] = (start, start + needed);
        } else {
            self.chunk_range[n as usize] = (0, 0);
            for i in range {
                b = b.union(&box_at(i));
            }
        }
        self.own[n as usize] = b;
        b
    }

    /// The box of node `n`'s subtree from its own box and its children's.
    #[inline]
    fn sub_box<N: TreeNode<V>>(&self, n: u32, node: &N) -> crate::Aabb<V> {
        let mut b = self.own[n as usize];
        for &c in node.children() {
            if c != NONE {
                b = b.union(&self.bounds[c as usize]);
            }
        }
        b
    }

    /// Brings the boxes up to date with the tree: the marked nodes and
    /// their ancestors, or everything after a bulk change.
    pub fn refresh<N: TreeNode<V>, S: Source<V> + ?Sized>(
        &mut self,
        nodes: &[N],
        lists: &S,
        root: u32,
    ) {
        if !self.stale
            && self.bounds.len() <= nodes.len()
            && !self.refresh_marked(nodes, lists, root)
        {
            self.stale = true;
        }
        if self.stale {
            self.refresh_all(nodes, lists, root);
        }
    }

    /// Recomputes the marked nodes and their ancestors; false when it gave
    /// up (a climb too long) and everything must be recomputed.
    fn refresh_marked<N: TreeNode<V>, S: Source<V> + ?Sized>(
        &mut self,
        nodes: &[N],
        lists: &S,
        root: u32,
    ) -> bool {
        let old = self.bounds.len();
        if self.dirty.is_empty() && old == nodes.len() {
            return true;
        }
        let empty = crate::Aabb::empty();
        self.bounds.resize(nodes.len(), empty);
        self.own.resize(nodes.len(), empty);
        self.chunk_range.resize(nodes.len(), (0, 0));
        // New nodes are marked when made; marking them here too keeps a
        // forgotten mark from hiding a node's objects.
        for n in old..nodes.len() {
            self.mark_node(n as u32);
        }
        let dirty = core::mem::take(&mut self.dirty);
        for &n in &dirty {
            self.own_box(n, &nodes[n as usize], lists);
        }
        let mut ok = true;
        'climbs: for &n in &dirty {
            let mut m = n;
            for _ in 0..MAX_CLIMB {
                let node = &nodes[m as usize];
                self.bounds[m as usize] = self.sub_box(m, node);
                let p = node.parent();
                if m == root || p == NONE {
                    continue 'climbs;
                }
                m = p;
            }
            ok = false;
            break;
        }
        for &n in &dirty {
            self.is_dirty[n as usize] = false;
        }
        self.dirty = dirty;
        self.dirty.clear();
        // Recomputed nodes leave their old chunk boxes behind: a full pass
        // once they outnumber the live ones.
        if self.chunks.len() > 2 * self.chunks_after_full + 4096 {
            ok = false;
        }
        ok
    }

    /// Recomputes every box in one pass over the tree.
    fn refresh_all<N: TreeNode<V>, S: Source<V> + ?Sized>(
        &mut self,
        nodes: &[N],
        lists: &S,
        root: u32,
    ) {
        self.stale = false;
        for &n in &self.dirty {
            if let Some(d) = self.is_dirty.get_mut(n as usize) {
                *d = false;
            }
        }
        self.dirty.clear();
        let empty = crate::Aabb::empty();
        self.bounds.clear();
        self.bounds.resize(nodes.len(), empty);
        self.own.clear();
        self.own.resize(nodes.len(), empty);
        self.chunk_range.clear();
        self.chunk_range.resize(nodes.len(), (0, 0));
        self.chunks.clear();
        if root != NONE {
            // The nodes in depth-first order, each before its descendants,
            // its children in order: the order of the lists' blocks after
            // a bulk build or a rewrite (`Core::tidy`), so the own
            // boxes read the lists front to back (measured at a million
            // objects in a fresh loose octree: 9.9 -> 2.8 ms against the
            // breadth-first order this replaced).
            let mut order = core::mem::take(&mut self.order);
            // The walk's stack borrows the marks' list (emptied above, left
            // empty below): no allocation once warm.
            let mut stack = core::mem::take(&mut self.dirty);
            order.clear();
            stack.push(root);
            while let Some(n) = stack.pop() {
                order.push(n);
                let children = nodes[n as usize].children();
                stack.extend(children.iter().rev().copied().filter(|&c| c != NONE));
            }
            for &n in &order {
                self.own_box(n, &nodes[n as usize], lists);
            }
            // Backwards, each node's descendants are done before it.
            for &n in order.iter().rev() {
                self.bounds[n as usize] = self.sub_box(n, &nodes[n as usize]);
            }
            self.order = order;
            self.dirty = stack;
        }
        self.chunks_after_full = self.chunks.len();
    }

    /// Checks that every node's boxes hold its own objects, unless the
    /// node is marked (or everything is stale): a change that forgot to
    /// mark its node is caught by the next `validate`.
    /// Nodes for which `late` is true hold objects moved in place since
    /// the last marks (see [`crate::kernel::Moved`]): as marked nodes,
    /// they are not checked.
    pub fn check<N: TreeNode<V>, T>(
        &self,
        nodes: &[N],
        lists: &[Entry],
        root: u32,
        store: &Store<Object<V, T>>,
        late: impl Fn(u32) -> bool,
    ) -> Result<(), String> {
        if self.stale || root == NONE {
            return Ok(());
        }
        let mut stack = vec![root];
        while let Some(n) = stack.pop() {
            let node = &nodes[n as usize];
            stack.extend(node.children().iter().copied().filter(|&c| c != NONE));
            let i = n as usize;
            if i >= self.bounds.len() || self.is_dirty.get(i).copied().unwrap_or(false) || late(n) {
                continue;
            }
            let boxes = self.chunks(n);
            for (k, it) in lists[node.block().range()].iter().enumerate() {
                let b = store.obj(it.slot()).aabb();
                let held = self.own[i].contains(&b)
                    && self.bounds[i].contains(&b)
                    && boxes.get(k / CHUNK).is_none_or(|c| c.contains(&b));
                if !held {
                    return Err(format!(
                        "object {k} of node {n} sticks out of the node's query boxes"
                    ));
                }
            }
        }
        Ok(())
    }

    /// Bytes held (the arrays' capacities).
    pub fn memory_bytes(&self) -> usize {
        (self.bounds.capacity() + self.own.capacity() + self.chunks.capacity())
            * core::mem::size_of::<crate::Aabb<V>>()
            + (self.order.capacity() + self.dirty.capacity()) * 4
            + self.chunk_range.capacity() * 8
            + self.is_dirty.capacity()
    }

    /// The boxes of node `n`'s objects taken [`CHUNK`] at a time, in list
    /// order (empty for a node of at most [`CHUNKED`] objects).
    #[inline]
    pub fn chunks(&self, n: u32) -> &[crate::Aabb<V>] {
        let (a, b) = self.chunk_range[n as usize];
        &self.chunks[a as usize..b as usize]
    }

    /// The box around the objects of node `n`'s subtree, `None` when it
    /// holds none.
    #[inline]
    pub fn get(&self, n: u32) -> Option<&crate::Aabb<V>> {
        let b = &self.bounds[n as usize];
        (b.min.get(0) <= b.max.get(0)).then_some(b)
    }
}

thread_local! {
    /// Each thread's query buffers (queries run on `&self`, from any
    /// number of threads).
    static SCRATCH: core::cell::RefCell<Scratch> = core::cell::RefCell::default();
}

/// Calls `f` with this thread's query buffers, so that a query allocates
/// nothing once they are warm. A query inside `f` (none does today) would
/// get new buffers rather than fail.
pub(crate) fn with_scratch<R>(f: impl FnOnce(&mut Scratch) -> R) -> R {
    SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut s) => f(&mut s),
        Err(_) => f(&mut Scratch::default()),
    })
}

/// The buffers of the shared queries, one set per thread (see
/// [`with_scratch`]).
#[derive(Default)]
pub(crate) struct Scratch {
    /// Depth-first stack: (node, subtree wholly inside the region).
    stack: Vec<(u32, bool)>,
    /// Front-to-back stack for rays: (entry distance, node).
    ray_stack: Vec<(f32, u32)>,
    /// One query's results inside a batch.
    found: Vec<Handle>,
    /// The k-nearest state.
    knn: Knn,
}

/// Objects a region query selected by their boxes, waiting for the store
/// (their layers, exact shapes and handles): each prefetched as it comes,
/// so that their cache misses overlap, then, once the buffer is full or
/// the query ends, each tested and reported in the order it came.
struct Selected {
    slots: [u32; SELECTED],
    inside: [bool; SELECTED],
    n: usize,
    /// Whether the filter keeps every object ([`Store::keeps_all`]): an
    /// object inside the region is then reported without being read.
    all: bool,
}

/// Objects [`Selected`] gathers before it reads them.
const SELECTED: usize = 32;

impl Selected {
    /// An empty buffer for a query with `filter` over `store`.
    fn new<V: Vector, T>(store: &Store<Object<V, T>>, filter: Filter) -> Self {
        Self {
            slots: [0; SELECTED],
            inside: [false; SELECTED],
            n: 0,
            all: store.keeps_all(filter),
        }
    }

    /// Adds an object (`inside`: its box lies wholly in the region, no
    /// exact test); `report` runs when the buffer is full.
    #[inline]
    fn push<V: Vector, T>(
        &mut self,
        store: &Store<Object<V, T>>,
        slot: u32,
        inside: bool,
        report: impl FnOnce(&mut Self),
    ) {
        // Asked for now, read at the report. (Not its generation, which
        // the report reads too: an array of 4 bytes a slot, which the
        // caches mostly hold. Asking for it as well cost 1.5% more
        // instructions on box queries.) Where the filter keeps every
        // object, one inside the region is not read at all: only its
        // generation is asked for.
        if inside && self.all {
            store.prefetch_gen(slot);
        } else {
            store.prefetch_obj(slot);
        }
        self.slots[self.n] = slot;
        self.inside[self.n] = inside;
        self.n += 1;
        if self.n == SELECTED {
            report(self);
        }
    }

    /// Pushes onto `out` the gathered objects the filter and the
    /// region's exact test keep, in order; empties the
    /// buffer. Returns the exact tests made.
    fn report<V: Vector, T, R: Region<V>>(
        &mut self,
        store: &Store<Object<V, T>>,
        region: &R,
        filter: Filter,
        out: &mut Vec<Handle>,
    ) -> u64 {
        let n = core::mem::take(&mut self.n);
        // The tests without a branch on whether they pass (a coin toss to
        // the branch predictor): the handles kept are compacted. Where the
        // exact test is cheap (`Region::CHEAP_EXACT_TEST`) it is made on
        // every object (its box meets the region), without a branch on
        // which lie inside either; it is counted where it decides.
        let mut tests = 0;
        let mut kept = [Handle {
            index: 0,
            generation: 0,
        }; SELECTED];
        let mut k = 0;
        for (&slot, &inside) in self.slots[..n].iter().zip(&self.inside[..n]) {
            if inside && self.all {
                kept[k] = store.handle(slot);
                k += 1;
                continue;
            }
            let o = store.obj(slot);
            let accepted = filter.accepts(o.layer);
            let hit = if R::CHEAP_EXACT_TEST {
                let exact = region.matches_meeting_box(&o.shape);
                tests += u64::from(accepted & !inside);
                inside | exact
            } else {
                // As before: no exact test for an object the filter leaves
                // out, nor for one inside.
                accepted
                    && (inside || {
                        tests += 1;
                        region.matches_meeting_box(&o.shape)
                    })
            };
            kept[k] = store.handle(slot);
            k += usize::from(accepted & hit);
        }
        out.extend_from_slice(&kept[..k]);
        tests
    }
}

/// Queries per task of a batch answered on several threads (`rayon`
/// feature); smaller batches stay on the calling thread.
#[cfg(feature = "rayon")]
pub(crate) const PAR_CHUNK: usize = 256;

/// Objects per chunk of a large node's list: the queries test a chunk's
/// box before its objects.
pub(crate) const CHUNK: usize = 16;

/// Nodes holding more objects than this have their lists cut in chunks.
/// (Nodes high in a tight tree or a BSP hold every object that straddles
/// their split planes: thousands, in a large world.)
pub(crate) const CHUNKED: usize = 2 * CHUNK;

/// A tree as the shared queries see it.
pub(crate) struct Tree<'a, V: Vector, T, N> {
    pub nodes: &'a [N],
    /// The nodes' object lists (see [`crate::kernel::Lists`]).
    pub lists: &'a [Entry],
    /// The root node, or `NONE` for an empty tree.
    pub root: u32,
    pub store: &'a Store<Object<V, T>>,
    /// The boxes around the subtrees' objects, brought up to date by the
    /// first tree walk after a change ([`crate::kernel::QueryBoxes::now`]);
    /// the grid's searches do not need them.
    pub sub: crate::kernel::QueryBoxes<'a, V, T, N>,
    /// Objects inserted but not yet built into the tree: each query tests
    /// them one by one, after the tree.
    pub pending: &'a [u32],
    /// The kernel's grid, where the queries may use it (built by the last
    /// build step, no change since): the region queries with a bounding
    /// box and the nearest ray hit search it instead of the tree.
    pub grid: Option<&'a crate::kernel::grid::Grid>,
}

impl<V: Vector, T, N: TreeNode<V>> Tree<'_, V, T, N> {
    #[inline]
    fn node(&self, n: u32) -> &N {
        &self.nodes[n as usize]
    }

    /// A node's objects.
    #[inline]
    fn items(&self, node: &N) -> &[Entry] {
        &self.lists[node.block().range()]
    }

    /// Asks for a run of a node's objects in the store at once, before
    /// their boxes are read from it one by one (they lie at random: their
    /// misses then overlap).
    #[inline]
    fn ask_for(&self, chunk: &[Entry]) {
        for e in chunk {
            self.store.prefetch_obj(e.slot());
        }
    }

    /// The box of an object of the tree (from its shape in the store).
    #[inline]
    fn box_of(&self, it: Entry) -> crate::Aabb<V> {
        self.store.obj(it.slot()).aabb()
    }

    #[inline]
    fn hit(&self, slot: u32, x: crate::RayIntersection<V>) -> RayHit<V> {
        RayHit {
            handle: self.store.handle(slot),
            distance: x.distance,
            point: x.point,
            normal: x.normal,
        }
    }

    /// The queued objects (not yet in the tree) that a region selects,
    /// tested one by one.
    fn query_pending<R: Region<V>>(
        &self,
        counters: &mut Counters,
        region: &R,
        filter: Filter,
        out: &mut Vec<Handle>,
    ) {
        for &slot in self.pending {
            counters.pending_tests += 1;
            let o = self.store.obj(slot);
            if !filter.accepts(o.layer) {
                continue;
            }
            // As the tree's objects: a box wholly inside is a match.
            let hit = match region.classify(&o.aabb()) {
                Overlap::Outside => false,
                Overlap::Inside => true,
                Overlap::Partial => {
                    counters.shape_tests += 1;
                    region.matches_meeting_box(&o.shape)
                }
            };
            if hit {
                out.push(self.store.handle(slot));
            }
        }
    }

    /// Objects selected by a region, depth-first; a subtree whose bounds lie
    /// wholly inside the region is accepted without testing its objects.
    pub fn query<R: Region<V>>(
        &self,
        scratch: &mut Scratch,
        counters: &mut Counters,
        region: &R,
        filter: Filter,
        out: &mut Vec<Handle>,
    ) {
        out.clear();
        counters.queries += 1;
        self.query_pending(counters, region, filter, out);
        if self.root == NONE {
            return;
        }
        if let Some(g) = self.grid
            && let Some(bounds) = region.bounds()
        {
            // The grid's rows the bounds reach, each box met tested as the
            // walk below tests an item outside a subtree held whole.
            let mut sel = Selected::new(self.store, filter);
            let mut shape_tests = 0;
            // The box at position `j` met, wholly inside the region or not.
            let mut take = |j: usize, inside: bool| {
                sel.push(self.store, g.slot_at(j), inside, |s| {
                    shape_tests += s.report(self.store, region, filter, out);
                });
            };
            let rows = if R::CLASSIFIES_AS_BOUNDS {
                // The region is its box: the grid classifies the boxes
                // eight at a time.
                g.for_each_within(&bounds, take)
            } else {
                g.for_each_meeting(&bounds, |j| {
                    let class = region.classify(&g.aabb_at(j));
                    if class != Overlap::Outside {
                        take(j, class == Overlap::Inside);
                    }
                })
            };
            shape_tests += sel.report(self.store, region, filter, out);
            if let Some(rows) = rows {
                counters.grid_searches += 1;
                counters.node_visits += rows;
                counters.shape_tests += shape_tests;
                return;
            }
        } else if let Some(g) = self.grid {
            // No bounding box (a frustum): the grid's blocks of cells
            // classified as the walk below classifies its nodes.
            let mut sel = Selected::new(self.store, filter);
            let mut shape_tests = 0;
            let blocks = g.for_each_classified(
                |b| region.classify(b),
                region.planes(),
                |j, inside| {
                    sel.push(self.store, g.slot_at(j), inside, |s| {
                        shape_tests += s.report(self.store, region, filter, out);
                    });
                },
            );
            shape_tests += sel.report(self.store, region, filter, out);
            counters.grid_searches += 1;
            counters.node_visits += blocks;
            counters.shape_tests += shape_tests;
            return;
        }
        let sub = self.sub.now();
        let stack = &mut scratch.stack;
        stack.clear();
        // Nodes are classified before they are pushed: a child the region
        // misses is never read.
        match sub.get(self.root).map(|b| region.classify(b)) {
            None | Some(Overlap::Outside) => return,
            Some(class) => stack.push((self.root, class == Overlap::Inside)),
        }
        let mut sel = Selected::new(self.store, filter);
        while let Some((n, inside)) = stack.pop() {
            let node = self.node(n);
            counters.node_visits += 1;
            // The item's own box first: the object in the store (a cache
            // miss, often) is read only for items the region reaches, and
            // those are read together (`Selected`). A large node's objects
            // go by chunks, each box tested first.
            let boxes = sub.chunks(n);
            for (ci, chunk) in self.items(node).chunks(CHUNK).enumerate() {
                let inside = inside
                    || match boxes.get(ci).map(|b| region.classify(b)) {
                        Some(Overlap::Outside) => continue,
                        Some(Overlap::Inside) => true,
                        _ => false,
                    };
                self.ask_for(chunk);
                for it in chunk {
                    let class = if inside {
                        Overlap::Inside
                    } else {
                        region.classify(&self.box_of(*it))
                    };
                    if class == Overlap::Outside {
                        continue;
                    }
                    sel.push(self.store, it.slot(), class == Overlap::Inside, |s| {
                        counters.shape_tests += s.report(self.store, region, filter, out);
                    });
                }
            }
            for &c in node.children() {
                let Some(b) = (c != NONE).then(|| sub.get(c)).flatten() else {
                    continue;
                };
                if inside {
                    stack.push((c, true));
                } else {
                    match region.classify(b) {
                        Overlap::Outside => {}
                        class => stack.push((c, class == Overlap::Inside)),
                    }
                }
            }
        }
        counters.shape_tests += sel.report(self.store, region, filter, out);
    }

    /// The nearest hit, front to back: a depth-first stack on which each
    /// node's children are pushed farthest first, so the child the ray
    /// enters first is searched first and the best hit so far soon prunes
    /// the rest. A node (or an object's box) entered beyond the best hit is
    /// skipped; one entered exactly at the best distance is still searched,
    /// for the tie rule (the smaller handle wins). Boxes are tested with
    /// the reciprocal of the direction, computed once per ray, and with a
    /// hair of slack, so that rounding never skips what the exact test on
    /// the object would hit.
    pub fn ray_nearest(
        &self,
        scratch: &mut Scratch,
        counters: &mut Counters,
        ray: &Ray<V>,
        max_dist: f32,
        filter: Filter,
    ) -> Option<RayHit<V>> {
        counters.queries += 1;
        if max_dist.is_nan() || max_dist < 0.0 {
            return None;
        }
        let mut best: Option<RayHit<V>> = None;
        let mut limit = max_dist;
        for &slot in self.pending {
            counters.pending_tests += 1;
            let o = self.store.obj(slot);
            if filter.accepts(o.layer) {
                counters.shape_tests += 1;
                if let Some(x) = o.shape.cast_ray(ray, limit) {
                    let hit = self.hit(slot, x);
                    if closer(&hit, &best) {
                        best = Some(hit);
                        limit = x.distance;
                    }
                }
            }
        }
        if self.root == NONE {
            return best;
        }
        let fast = FastRay::new(ray);
        if let Some(g) = self.grid {
            // The grid's rows along the ray, nearest first; each box met
            // tested as the walk below tests an item.
            let mut shape_tests = 0;
            let touch = |j: usize| {
                self.store.prefetch_obj(g.slot_at(j));
            };
            let rows = g.ray_walk(ray, limit, touch, |j, limit| {
                let slot = g.slot_at(j);
                if fast.entry(&g.aabb_at(j), limit).is_none() {
                    return limit;
                }
                let o = self.store.obj(slot);
                if !filter.accepts(o.layer) {
                    return limit;
                }
                shape_tests += 1;
                match o.shape.cast_ray(ray, limit) {
                    Some(x) => {
                        let hit = self.hit(slot, x);
                        if closer(&hit, &best) {
                            best = Some(hit);
                            return x.distance;
                        }
                        limit
                    }
                    None => limit,
                }
            });
            counters.grid_searches += 1;
            counters.node_visits += rows;
            counters.shape_tests += shape_tests;
            return best;
        }
        let sub = self.sub.now();
        let stack = &mut scratch.ray_stack;
        stack.clear();
        if let Some(t0) = sub.get(self.root).and_then(|b| fast.entry(b, limit)) {
            stack.push((t0, self.root));
        }
        let mut order: [(f32, u32); 8] = [(0.0, NONE); 8];
        while let Some((t, n)) = stack.pop() {
            if !within(t, limit) {
                continue;
            }
            counters.node_visits += 1;
            let node = self.node(n);
            let boxes = sub.chunks(n);
            for (ci, chunk) in self.items(node).chunks(CHUNK).enumerate() {
                if boxes
                    .get(ci)
                    .is_some_and(|b| fast.entry(b, limit).is_none())
                {
                    continue;
                }
                self.ask_for(chunk);
                for it in chunk {
                    if fast.entry(&self.box_of(*it), limit).is_none() {
                        continue;
                    }
                    let o = self.store.obj(it.slot());
                    if !filter.accepts(o.layer) {
                        continue;
                    }
                    counters.shape_tests += 1;
                    if let Some(x) = o.shape.cast_ray(ray, limit) {
                        let hit = self.hit(it.slot(), x);
                        if closer(&hit, &best) {
                            best = Some(hit);
                            limit = x.distance;
                        }
                    }
                }
            }
            // The children the ray enters within the limit, sorted by entry
            // distance (insertion sort: at most 8), pushed farthest first.
            let mut k = 0;
            for &c in node.children() {
                if c == NONE {
                    continue;
                }
                if let Some(t0) = sub.get(c).and_then(|b| fast.entry(b, limit)) {
                    let mut j = k;
                    while j > 0 && order[j - 1].0 < t0 {
                        order[j] = order[j - 1];
                        j -= 1;
                    }
                    order[j] = (t0, c);
                    k += 1;
                }
            }
            stack.extend_from_slice(&order[..k]);
        }
        best
    }

    /// [`Tree::ray_nearest`] for each ray of a batch, into `out` (cleared
    /// first) in batch order. With the `rayon` feature, a batch of more
    /// than `PAR_CHUNK` rays is cut into chunks answered on rayon's
    /// threads, each with its own scratch and counters (added up at the
    /// end); the results are written in place, so they are the same, in
    /// the same order, as on one thread.
    pub fn ray_nearest_batch(
        &self,
        scratch: &mut Scratch,
        counters: &mut Counters,
        rays: &[(Ray<V>, f32)],
        filter: Filter,
        out: &mut Vec<Option<RayHit<V>>>,
    ) where
        T: Sync,
        N: Sync,
    {
        out.clear();
        #[cfg(feature = "rayon")]
        if rays.len() > PAR_CHUNK && !crate::kernel::one_thread() {
            use rayon::prelude::*;
            out.resize(rays.len(), None);
            let c = out
                .par_chunks_mut(PAR_CHUNK)
                .zip(rays.par_chunks(PAR_CHUNK))
                .map_init(Scratch::default, |s, (out, rays)| {
                    let mut c = Counters::default();
                    for (o, (ray, max)) in out.iter_mut().zip(rays) {
                        *o = self.ray_nearest(s, &mut c, ray, *max, filter);
                    }
                    c
                })
                .reduce(Counters::default, Counters::merged);
            *counters = counters.merged(c);
            return;
        }
        out.reserve(rays.len());
        for (ray, max) in rays {
            out.push(self.ray_nearest(scratch, counters, ray, *max, filter));
        }
    }

    /// [`Tree::query`] for each region of a batch, flattened: the results
    /// of region `i` are `handles[offsets[i]..offsets[i + 1]]`. With the
    /// `rayon` feature, a batch of more than `PAR_CHUNK` regions is cut
    /// into chunks answered on rayon's threads, then concatenated in batch
    /// order: the same results, in the same order, as on one thread.
    pub fn query_batch<R: Region<V> + Sync>(
        &self,
        scratch: &mut Scratch,
        counters: &mut Counters,
        regions: &[R],
        filter: Filter,
        handles: &mut Vec<Handle>,
        offsets: &mut Vec<usize>,
    ) where
        T: Sync,
        N: Sync,
    {
        handles.clear();
        offsets.clear();
        offsets.reserve(regions.len() + 1);
        offsets.push(0);
        #[cfg(feature = "rayon")]
        if regions.len() > PAR_CHUNK && !crate::kernel::one_thread() {
            use rayon::prelude::*;
            let parts: Vec<(Vec<Handle>, Vec<usize>, Counters)> = regions
                .par_chunks(PAR_CHUNK)
                .map_init(
                    || (Scratch::default(), Vec::new()),
                    |(s, one), regions| {
                        let (mut found, mut ends) = (Vec::new(), Vec::with_capacity(regions.len()));
                        let mut c = Counters::default();
                        for r in regions {
                            self.query(s, &mut c, r, filter, one);
                            found.extend_from_slice(one);
                            ends.push(found.len());
                        }
                        (found, ends, c)
                    },
                )
                .collect();
            handles.reserve(parts.iter().map(|p| p.0.len()).sum());
            for (found, ends, c) in parts {
                let base = handles.len();
                handles.extend_from_slice(&found);
                offsets.extend(ends.iter().map(|e| base + e));
                *counters = counters.merged(c);
            }
            return;
        }
        let mut one = core::mem::take(&mut scratch.found);
        for r in regions {
            self.query(scratch, counters, r, filter, &mut one);
            handles.extend_from_slice(&one);
            offsets.push(handles.len());
        }
        one.clear();
        scratch.found = one;
    }

    /// Every hit within `max_dist`, sorted by distance then handle.
    pub fn ray_all(
        &self,
        scratch: &mut Scratch,
        counters: &mut Counters,
        ray: &Ray<V>,
        max_dist: f32,
        filter: Filter,
        out: &mut Vec<RayHit<V>>,
    ) {
        out.clear();
        counters.queries += 1;
        if max_dist.is_nan() || max_dist < 0.0 {
            return;
        }
        for &slot in self.pending {
            counters.pending_tests += 1;
            let o = self.store.obj(slot);
            if filter.accepts(o.layer) {
                counters.shape_tests += 1;
                if let Some(x) = o.shape.cast_ray(ray, max_dist) {
                    out.push(self.hit(slot, x));
                }
            }
        }
        if self.root == NONE {
            sort_hits(out);
            return;
        }
        if let Some(g) = self.grid {
            // The grid's rows along the ray, each box met tested as the
            // walk below tests an item. The walk's stretches overlap, so
            // an object may be met more than once: its hits, the same
            // distance and handle, lie side by side once sorted.
            let mut shape_tests = 0;
            let touch = |j: usize| self.store.prefetch_obj(g.slot_at(j));
            let rows = g.ray_walk(ray, max_dist, touch, |j, limit| {
                if ray.clip_aabb(&g.aabb_at(j), max_dist).is_none() {
                    return limit;
                }
                let slot = g.slot_at(j);
                let o = self.store.obj(slot);
                if filter.accepts(o.layer) {
                    shape_tests += 1;
                    if let Some(x) = o.shape.cast_ray(ray, max_dist) {
                        out.push(self.hit(slot, x));
                    }
                }
                limit
            });
            counters.grid_searches += 1;
            counters.node_visits += rows;
            counters.shape_tests += shape_tests;
            sort_hits(out);
            out.dedup_by_key(|h| h.handle);
            return;
        }
        let sub = self.sub.now();
        let stack = &mut scratch.stack;
        stack.clear();
        let reaches =
            |b: Option<&crate::Aabb<V>>| b.is_some_and(|b| ray.clip_aabb(b, max_dist).is_some());
        if reaches(sub.get(self.root)) {
            stack.push((self.root, false));
        }
        while let Some((n, _)) = stack.pop() {
            let node = self.node(n);
            counters.node_visits += 1;
            let boxes = sub.chunks(n);
            for (ci, chunk) in self.items(node).chunks(CHUNK).enumerate() {
                if !reaches(boxes.get(ci)) && !boxes.is_empty() {
                    continue;
                }
                self.ask_for(chunk);
                for it in chunk {
                    if ray.clip_aabb(&self.box_of(*it), max_dist).is_none() {
                        continue;
                    }
                    let o = self.store.obj(it.slot());
                    if !filter.accepts(o.layer) {
                        continue;
                    }
                    counters.shape_tests += 1;
                    if let Some(x) = o.shape.cast_ray(ray, max_dist) {
                        out.push(self.hit(it.slot(), x));
                    }
                }
            }
            for &c in node.children() {
                if c != NONE && reaches(sub.get(c)) {
                    stack.push((c, false));
                }
            }
        }
        sort_hits(out);
    }

    /// Best-first k-nearest search: nodes by distance to their bounds, the
    /// search ending when the nearest unvisited node is farther than the
    /// k-th best object.
    pub fn nearest(
        &self,
        scratch: &mut Scratch,
        counters: &mut Counters,
        point: V,
        k: usize,
        filter: Filter,
        out: &mut Vec<Neighbor>,
    ) {
        out.clear();
        counters.queries += 1;
        if k == 0 || !point.is_finite() {
            return;
        }
        let knn = &mut scratch.knn;
        knn.start(k);
        self.nearest_pending(counters, point, filter, knn);
        let dist = |b: &crate::Aabb<V>| b.distance_squared_to_point(point).sqrt();
        if self.root == NONE {
            knn.finish(out);
            return;
        }
        if let Some(g) = self.grid
            && let Some(reach) = g.reach()
            && self.nearest_on_grid(g, &reach, counters, point, filter, knn)
        {
            knn.finish(out);
            return;
        }
        let sub = self.sub.now();
        let Some(all) = sub.get(self.root) else {
            knn.finish(out);
            return;
        };
        knn.push_node(self.root, dist(all));
        while let Some(n) = knn.pop_node() {
            counters.node_visits += 1;
            let node = self.node(n);
            let boxes = sub.chunks(n);
            for (ci, chunk) in self.items(node).chunks(CHUNK).enumerate() {
                if boxes.get(ci).is_some_and(|b| dist(b) > knn.bound()) {
                    continue;
                }
                self.ask_for(chunk);
                for it in chunk {
                    if self.box_of(*it).distance_squared_to_point(point).sqrt() > knn.bound() {
                        continue;
                    }
                    let o = self.store.obj(it.slot());
                    if !filter.accepts(o.layer) {
                        continue;
                    }
                    counters.shape_tests += 1;
                    knn.offer(
                        self.store.handle(it.slot()),
                        o.shape.distance_to_point(point),
                    );
                }
            }
            for &c in node.children() {
                if let Some(b) = (c != NONE).then(|| sub.get(c)).flatten() {
                    let d = dist(b);
                    if d <= knn.bound() {
                        knn.push_node(c, d);
                    }
                }
            }
        }
        knn.finish(out);
    }
}

impl<V: Vector, T, N: TreeNode<V>> Tree<'_, V, T, N> {
    /// Offers the queued objects (not yet in the tree) to a k-nearest
    /// search.
    fn nearest_pending(&self, counters: &mut Counters, point: V, filter: Filter, knn: &mut Knn) {
        for &slot in self.pending {
            counters.pending_tests += 1;
            let o = self.store.obj(slot);
            if filter.accepts(o.layer) {
                counters.shape_tests += 1;
                knn.offer(self.store.handle(slot), o.shape.distance_to_point(point));
            }
        }
    }

    /// The k nearest from the grid and the queue (`knn` started for `k`,
    /// the queued objects offered): the objects whose boxes meet a cube
    /// around the point, grown until the k-th best lies within it. An
    /// object the cube misses is farther than its half side from the
    /// point, so farther than the k-th best: none is missed. The first
    /// cube would hold about `k` objects if they were spread evenly over
    /// `all`, a box that holds every object's box (the grid's reach, a
    /// little larger than the box around them: the query boxes, which a
    /// build step may leave out of date, are not read); a cube that finds `k`
    /// sets the next one's half side to the k-th best distance (the last
    /// cube), one that finds fewer doubles it until it holds `all`. Each
    /// cube starts the search anew (the queue offered again; every test
    /// made is counted). False when the grid could not search
    /// (a coordinate overflowed): `knn` is started again, the queue
    /// offered, and the caller walks the tree.
    fn nearest_on_grid(
        &self,
        g: &crate::kernel::grid::Grid,
        all: &crate::Aabb<V>,
        counters: &mut Counters,
        point: V,
        filter: Filter,
        knn: &mut Knn,
    ) -> bool {
        let k = knn.k;
        let d = V::DIM;
        let ext = all.max - all.min;
        let widest = ext.max_element();
        let mut volume = 1.0f32;
        for a in 0..d {
            volume *= ext.get(a).max(widest * 1e-6);
        }
        let even = 0.5 * (k as f32 * volume / g.len().max(1) as f32).powf(1.0 / d as f32);
        let mut half = all.distance_squared_to_point(point).sqrt()
            + if even.is_finite() && even > 0.0 {
                even
            } else {
                widest
            };
        let (mut rows, mut shape_tests) = (0, 0);
        let mut first = true;
        let done = loop {
            if !core::mem::take(&mut first) {
                knn.start(k);
                self.nearest_pending(counters, point, filter, knn);
            }
            let cube = crate::Aabb {
                min: point - V::splat(half),
                max: point + V::splat(half),
            };
            let Some(r) = g.for_each_meeting(&cube, |j| {
                let b = g.aabb_at(j);
                if b.distance_squared_to_point(point).sqrt() > knn.bound() {
                    return;
                }
                let slot = g.slot_at(j);
                let o = self.store.obj(slot);
                if filter.accepts(o.layer) {
                    shape_tests += 1;
                    knn.offer(self.store.handle(slot), o.shape.distance_to_point(point));
                }
            }) else {
                break false;
            };
            rows += r;
            let holds_all = (0..d)
                .all(|a| cube.min.get(a) <= all.min.get(a) && cube.max.get(a) >= all.max.get(a));
            let bound = knn.bound();
            if bound <= half || holds_all {
                break true;
            }
            let next = if bound.is_finite() { bound } else { half * 2.0 };
            if next <= half || !next.is_finite() {
                break false;
            }
            half = next;
        };
        counters.node_visits += rows;
        counters.shape_tests += shape_tests;
        if done {
            counters.grid_searches += 1;
        } else {
            knn.start(k);
            self.nearest_pending(counters, point, filter, knn);
        }
        done
    }
}

/// A ray prepared for many box tests: its origin and the reciprocal of its
/// direction.
#[derive(Clone, Copy)]
pub(crate) struct FastRay<V: Vector> {
    pub origin: V,
    /// `1 / dir`, axis by axis.
    pub inv: V,
}

/// True when an entry distance `t` may still hold a hit within `limit`:
/// `t <= limit` with a relative hair of slack for the rounding of the
/// reciprocal slab test.
#[inline]
fn within(t: f32, limit: f32) -> bool {
    t <= limit + limit * SLACK + f32::MIN_POSITIVE
}

/// The relative slack of [`within`]: a few `f32` ulps.
pub(crate) const SLACK: f32 = 4.0 * f32::EPSILON;

impl<V: Vector> FastRay<V> {
    #[inline]
    pub(crate) fn new(ray: &Ray<V>) -> Self {
        let mut inv = V::ZERO;
        for i in 0..V::DIM {
            inv = inv.with(i, 1.0 / ray.dir.get(i));
        }
        Self {
            origin: ray.origin,
            inv,
        }
    }

    /// The distance at which the ray enters the box (0 when it starts
    /// inside), or `None` when it misses it or enters it beyond `limit`.
    /// Conservative: a slab whose distances come out NaN (an origin on the
    /// face plane of an axis the ray runs along) does not constrain, and
    /// the comparisons leave a few ulps of slack.
    #[inline]
    pub(crate) fn entry(&self, b: &crate::Aabb<V>, limit: f32) -> Option<f32> {
        let lo = (b.min - self.origin) * self.inv;
        let hi = (b.max - self.origin) * self.inv;
        let mut t0 = 0.0f32;
        let mut t1 = limit;
        for i in 0..V::DIM {
            let (a, c) = (lo.get(i), hi.get(i));
            let (near, far) = if a <= c {
                (a, c)
            } else if c < a {
                (c, a)
            } else {
                (f32::NEG_INFINITY, f32::INFINITY)
            };
            t0 = t0.max(near);
            t1 = t1.min(far);
        }
        within(t0, t1).then_some(t0)
    }
}

/// The Z-order (Morton) code of a point of a box: its position on each
/// axis quantised to `30 / DIM` bits, the bits interleaved.
pub(crate) fn z_order<V: Vector>(b: &crate::Aabb<V>, p: V) -> u32 {
    let bits = 30 / V::DIM as u32;
    let top = ((1u32 << bits) - 1) as f32;
    let mut q = [0u32; 3];
    for (i, q) in q.iter_mut().enumerate().take(V::DIM) {
        let (lo, hi) = (b.min.get(i), b.max.get(i));
        let t = if hi > lo {
            (p.get(i) - lo) / (hi - lo)
        } else {
            0.0
        };
        // `as` saturates: NaN gives 0, out of range the ends.
        *q = (t * top) as u32;
    }
    let mut code = 0u32;
    for bit in (0..bits).rev() {
        for q in q.iter().take(V::DIM) {
            code = (code << 1) | ((q >> bit) & 1);
        }
    }
    code
}
