//! All overlapping pairs in one pass by a walk of the loose tree:
//! the search that runs where the kernel's grid search (`kernel/grid.rs`)
//! would be crowded.
//!
//! In a loose tree, "each node against its ancestors" is not enough: the
//! loose bounds of siblings overlap, so an object near the face of one cell
//! can touch an object filed in the neighbouring cell's subtree. The search
//! below covers those pairs too, each exactly once.
//!
//! # The scheme
//! Write `S(N)` for the objects of the subtree of `N` and `I(N)` for the
//! objects filed in `N` itself. The pairs within `S(N)` split, with no
//! overlap, into
//! 1. pairs within `I(N)`;
//! 2. pairs of `I(N)` with `S(C)` for each child `C` (ancestor-descendant);
//! 3. pairs within each `S(C)` (the same split, one level down);
//! 4. pairs of `S(C_i)` with `S(C_j)` for each two children `i < j`.
//!
//! First, one pass from the leaves up computes for each node the box
//! around the objects of its subtree, `B(N)` (objects are usually much
//! smaller than their node's pad, so these boxes prune far better than the
//! loose bounds, which overlap a block of 5 by 5 same-level neighbours at
//! looseness 2).
//!
//! A depth-first pass then does 1 and 2 as the tight octree does: each
//! node tests its objects against each other and against the objects of
//! its ancestors that overlap `B(N)` (kept as a stack of segments in one
//! buffer). For 4, a simultaneous descent of node pairs: the pairs of
//! `S(A)` with `S(B)`, for disjoint subtrees `A` and `B`, split (again with
//! no overlap), taking `X` the one of higher level and `Y` the other, into
//! `I(X)` with `S(Y)`, and `S(C)` with `S(Y)` for each child `C` of `X`.
//! The first is a walk of `Y`'s subtree; the second, more node pairs.
//!
//! Every object of `S(N)` lies inside `B(N)`, so a node pair, a walk step
//! or an ancestor object is dropped only when the boxes involved miss each
//! other, which proves that no pair is lost there. Since each split is a
//! partition, each unordered pair is tested exactly once. Splitting the
//! higher node keeps both sides of a node pair about the same size, so the
//! descent prunes on both sides.
//!
//! # The layout
//! The search does not walk the node pool. A first pass copies the tree,
//! depth first, into a flat snapshot: per node its subtree box, the box of
//! its own objects, its level, its children's list, and its objects as one
//! range of a single item array, followed by the objects of its subtree,
//! so that each subtree's objects are one range too. The same pass, read
//! backwards, computes the subtree boxes. Every object's box is read from
//! one contiguous array, where the pool cost a cache miss per node, per
//! child and per item list.
//!
//! A subtree of at most [`BUCKET`] objects is not descended: its objects
//! are searched as one list (all pairs within it; or, against another
//! subtree or a node's objects, every object that meets the other side's
//! box against all of them). Each pair is still tested once, and box tests
//! on contiguous memory cost less than node visits at the bottom of the
//! tree, where most nodes hold one or two objects.
//!
//! # Threads
//! The search is cut into independent tasks (see [`Task`]) planned from the
//! top levels; one thread runs them in order, and with the `rayon` feature
//! `par_pairs` runs them on every thread and joins the results in the same
//! order.
//!
//! Nothing is allocated per node or per frame: the buffers are the tree's.

use super::LooseOrthtree;
use crate::geometry::{Aabb, Vector};
use crate::index::{Item, report_pair};
use crate::kernel::PairTasks;
use crate::orthtree::NodeState;
use crate::store::{NONE, Store};
use crate::{Counters, Handle, LayerMatrix, Object};

/// A node of the flat snapshot.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FlatNode<V: Vector> {
    /// The box around every object of the subtree (inverted when empty).
    sub: Aabb<V>,
    /// The box around the node's own objects (inverted when none).
    own: Aabb<V>,
    /// The node's objects: `items[item_start..item_end]`.
    item_start: u32,
    item_end: u32,
    /// The objects of the whole subtree: `items[item_start..sub_end]` (the
    /// snapshot is in depth-first order).
    sub_end: u32,
    /// The node's children: `kids[kid_start..kid_end]`.
    kid_start: u32,
    kid_end: u32,
    level: u16,
}

impl<V: Vector> FlatNode<V> {
    /// True for a subtree small enough to be searched as one list.
    #[inline]
    fn small(&self) -> bool {
        self.sub_end - self.item_start <= BUCKET
    }
}

/// Subtrees of at most this many objects are searched as one list of
/// objects, without descending: a box test on contiguous memory costs less
/// than a node visit.
const BUCKET: u32 = 16;

/// The snapshot of the tree the pair search walks (kept between frames:
/// its buffers are reused).
#[derive(Default)]
pub(crate) struct Flat<V: Vector> {
    nodes: Vec<FlatNode<V>>,
    items: Vec<Item<V>>,
    /// Children lists: `kids[n.kid_start..n.kid_end]` are `n`'s.
    kids: Vec<u32>,
    /// The build's depth-first stack: (pool node, its slot in `kids`).
    order: Vec<(u32, u32)>,
    /// The plan: independent pieces of the search, in the order they run.
    tasks: Vec<Task>,
    /// The candidate segments the tasks refer to.
    plan: Vec<Item<V>>,
    /// The planning descent: (node, depth, its parent's segment).
    plan_stack: Vec<(u32, u32, u32, u32)>,
    /// The buffers of the tasks run on the calling thread.
    work: Work<V>,
}

/// One independent piece of the pair search. The pairs of the whole tree
/// split, with no overlap (module docs), into the planned nodes' own
/// objects against each other and their ancestors', the cross descents of
/// their children, and the pairs within the subtrees below the planning
/// depth with their ancestors' objects.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Task {
    /// The objects of `node` against each other and against the ancestor
    /// objects `plan[start..end]` that reach it.
    Own { node: u32, start: u32, end: u32 },
    /// The pairs of `S(a)` with `S(b)`, for sibling subtrees.
    Cross { a: u32, b: u32 },
    /// The pairs within `S(node)` and with the objects `plan[start..end]`
    /// of its parent and of the ancestors that reach the parent.
    Subtree { node: u32, start: u32, end: u32 },
}

/// The buffers one thread needs to run tasks.
#[derive(Default)]
pub(crate) struct Work<V: Vector> {
    /// Depth-first stack: (node, its parent's candidate segment).
    stack: Vec<(u32, u32, u32)>,
    /// Node pairs of a cross descent.
    cross: Vec<(u32, u32)>,
    /// Nodes of a subtree walk.
    walk: Vec<u32>,
    /// Ancestor objects, one segment per level of the descent.
    cands: Vec<Item<V>>,
}

impl<V: Vector> Flat<V> {
    /// Bytes held by the buffers.
    pub fn memory(&self) -> usize {
        let w = &self.work;
        self.nodes.capacity() * size_of::<FlatNode<V>>()
            + (self.items.capacity() + self.plan.capacity() + w.cands.capacity())
                * size_of::<Item<V>>()
            + (self.kids.capacity() + w.walk.capacity()) * size_of::<u32>()
            + self.order.capacity() * size_of::<(u32, u32)>()
            + self.tasks.capacity() * size_of::<Task>()
            + self.plan_stack.capacity() * size_of::<(u32, u32, u32, u32)>()
            + w.stack.capacity() * size_of::<(u32, u32, u32)>()
            + w.cross.capacity() * size_of::<(u32, u32)>()
    }
}

/// True for the inverted box of a subtree without objects.
#[inline]
fn is_empty<V: Vector>(b: &Aabb<V>) -> bool {
    !b.min.all_le(b.max)
}

/// What the pair search reads, and the counters it bumps.
struct Ctx<'a, V: Vector, T> {
    nodes: &'a [FlatNode<V>],
    items: &'a [Item<V>],
    kids: &'a [u32],
    store: &'a Store<Object<V, T>>,
    matrix: &'a LayerMatrix,
    counters: &'a mut Counters,
}

/// The objects of a snapshot node's whole subtree.
#[inline]
fn sub_items_of<'a, V: Vector>(items: &'a [Item<V>], n: &FlatNode<V>) -> &'a [Item<V>] {
    &items[n.item_start as usize..n.sub_end as usize]
}

/// The objects of a snapshot node.
#[inline]
fn items_of<'a, V: Vector>(items: &'a [Item<V>], n: &FlatNode<V>) -> &'a [Item<V>] {
    &items[n.item_start as usize..n.item_end as usize]
}

impl<V: Vector, T> Ctx<'_, V, T> {
    /// Box test, static-static skip, then the exact test via `report_pair`.
    #[inline(always)]
    fn test<F>(&mut self, a: &Item<V>, b: &Item<V>, f: &mut F)
    where
        F: FnMut(Handle, Handle, &Object<V, T>, &Object<V, T>),
    {
        self.counters.pair_tests += 1;
        if a.aabb.intersects(&b.aabb) & !(a.is_static() & b.is_static()) {
            self.overlap(a, b, f);
        }
    }

    #[inline(never)]
    fn overlap<F>(&mut self, a: &Item<V>, b: &Item<V>, f: &mut F)
    where
        F: FnMut(Handle, Handle, &Object<V, T>, &Object<V, T>),
    {
        self.counters.shape_tests += 1;
        report_pair(self.store, self.matrix, a.slot(), b.slot(), f);
    }

    /// Runs one task of the plan.
    fn run<F>(&mut self, task: Task, plan: &[Item<V>], work: &mut Work<V>, f: &mut F)
    where
        F: FnMut(Handle, Handle, &Object<V, T>, &Object<V, T>),
    {
        match task {
            Task::Own { node, start, end } => {
                let items = items_of(self.items, &self.nodes[node as usize]);
                let cands = &plan[start as usize..end as usize];
                for (i, a) in items.iter().enumerate() {
                    for b in items[i + 1..].iter().chain(cands) {
                        self.test(a, b, f);
                    }
                }
            }
            Task::Cross { a, b } => self.cross(a, b, &mut work.cross, &mut work.walk, f),
            Task::Subtree { node, start, end } => {
                work.cands.clear();
                work.cands
                    .extend_from_slice(&plan[start as usize..end as usize]);
                self.subtree(node, work, f);
            }
        }
    }

    /// Every pair within `S(node)` and of `S(node)` with the candidates in
    /// `work.cands` (the objects of its parent and of the ancestors that
    /// reach the parent): depth first, with one segment of candidates per
    /// level.
    fn subtree<F>(&mut self, node: u32, work: &mut Work<V>, f: &mut F)
    where
        F: FnMut(Handle, Handle, &Object<V, T>, &Object<V, T>),
    {
        let (nodes, all) = (self.nodes, self.items);
        let Work {
            stack,
            cross,
            walk,
            cands: buf,
        } = work;
        stack.clear();
        stack.push((node, 0, buf.len() as u32));
        while let Some((n, parent_start, parent_end)) = stack.pop() {
            self.counters.node_visits += 1;
            let node = &nodes[n as usize];
            // Later segments belong to finished sibling subtrees.
            buf.truncate(parent_end as usize);
            let start = buf.len();
            let nb = &node.sub;
            for i in parent_start as usize..parent_end as usize {
                let c = buf[i];
                if c.aabb.intersects(nb) {
                    buf.push(c);
                }
            }
            let mid = buf.len();
            if node.small() {
                // The whole subtree as one list: every pair within it, and
                // every object of it against the ancestors' objects.
                let items = sub_items_of(all, node);
                for (i, a) in items.iter().enumerate() {
                    for b in items[i + 1..].iter().chain(buf[start..mid].iter()) {
                        self.test(a, b, f);
                    }
                }
                continue;
            }
            // 1 and 2: this node's objects against each other and against
            // their ancestors'.
            let items = items_of(all, node);
            for (i, a) in items.iter().enumerate() {
                for b in items[i + 1..].iter().chain(buf[start..mid].iter()) {
                    self.test(a, b, f);
                }
            }
            let kids = &self.kids[node.kid_start as usize..node.kid_end as usize];
            // 4: each two children's subtrees against each other.
            for (i, &a) in kids.iter().enumerate() {
                for &b in &kids[i + 1..] {
                    if nodes[a as usize].sub.intersects(&nodes[b as usize].sub) {
                        self.cross(a, b, cross, walk, f);
                    }
                }
            }
            // 3: down into each child that holds objects.
            buf.extend_from_slice(items);
            let end = buf.len() as u32;
            for &c in kids {
                if !is_empty(&nodes[c as usize].sub) {
                    stack.push((c, start as u32, end));
                }
            }
        }
    }

    /// Every pair of an object of `xs` with one of the subtree `y`, taken as
    /// one list (`xs` lies outside `y`'s subtree).
    #[inline]
    fn lists<F>(&mut self, xs: &[Item<V>], y: &FlatNode<V>, f: &mut F)
    where
        F: FnMut(Handle, Handle, &Object<V, T>, &Object<V, T>),
    {
        let ys = sub_items_of(self.items, y);
        for a in xs {
            if a.aabb.intersects(&y.sub) {
                for b in ys {
                    self.test(a, b, f);
                }
            }
        }
    }

    /// Every pair of an object of `S(a)` with one of `S(b)`, for disjoint
    /// subtrees (whose object boxes overlap, or nothing is found).
    fn cross<F>(
        &mut self,
        a: u32,
        b: u32,
        stack: &mut Vec<(u32, u32)>,
        walk: &mut Vec<u32>,
        f: &mut F,
    ) where
        F: FnMut(Handle, Handle, &Object<V, T>, &Object<V, T>),
    {
        let nodes = self.nodes;
        stack.clear();
        stack.push((a, b));
        while let Some((a, b)) = stack.pop() {
            self.counters.node_visits += 1;
            let (an, bn) = (&nodes[a as usize], &nodes[b as usize]);
            if an.small() && bn.small() {
                // Both subtrees as lists.
                self.lists(sub_items_of(self.items, an), bn, f);
                continue;
            }
            let (x, y) = if an.level >= bn.level { (a, b) } else { (b, a) };
            let xn = &nodes[x as usize];
            if xn.item_end > xn.item_start {
                self.items_vs_subtree(xn, y, walk, f);
            }
            let yb = &nodes[y as usize].sub;
            // Branch-free: each child is written, and kept when it meets
            // `yb` (a coin toss a child, which a branch would mispredict).
            let mut next = [(0, 0); 8];
            let mut k = 0;
            for &c in &self.kids[xn.kid_start as usize..xn.kid_end as usize] {
                next[k] = (c, y);
                k += usize::from(nodes[c as usize].sub.intersects(yb));
            }
            stack.extend_from_slice(&next[..k]);
        }
    }

    /// Every pair of an object of `I(x)` with one of `S(y)`, `y` not in the
    /// subtree of `x`: a walk of `y`'s subtree, pruned by the box around
    /// `x`'s objects.
    fn items_vs_subtree<F>(&mut self, x: &FlatNode<V>, y: u32, walk: &mut Vec<u32>, f: &mut F)
    where
        F: FnMut(Handle, Handle, &Object<V, T>, &Object<V, T>),
    {
        let nodes = self.nodes;
        let region = x.own;
        walk.clear();
        if nodes[y as usize].sub.intersects(&region) {
            walk.push(y);
        }
        while let Some(m) = walk.pop() {
            self.counters.node_visits += 1;
            let mn = &nodes[m as usize];
            if mn.small() {
                self.lists(items_of(self.items, x), mn, f);
                continue;
            }
            if mn.item_end > mn.item_start {
                let mb = &mn.sub;
                let (xs, ms) = (items_of(self.items, x), items_of(self.items, mn));
                for a in xs {
                    if a.aabb.intersects(mb) {
                        for b in ms {
                            self.test(a, b, f);
                        }
                    }
                }
            }
            let mut next = [0; 8];
            let mut k = 0;
            for &c in &self.kids[mn.kid_start as usize..mn.kid_end as usize] {
                next[k] = c;
                k += usize::from(nodes[c as usize].sub.intersects(&region));
            }
            walk.extend_from_slice(&next[..k]);
        }
    }
}

/// The planned search over a snapshot: what every task reads.
struct Job<'a, V: Vector, T> {
    nodes: &'a [FlatNode<V>],
    items: &'a [Item<V>],
    kids: &'a [u32],
    tasks: &'a [Task],
    plan: &'a [Item<V>],
    store: &'a Store<Object<V, T>>,
    matrix: &'a LayerMatrix,
}

impl<V: Vector, T> PairTasks<V, T> for Job<'_, V, T> {
    type Task = Task;
    type Work = Work<V>;

    fn tasks(&self) -> &[Task] {
        self.tasks
    }

    fn run<F>(&self, task: Task, work: &mut Work<V>, counters: &mut Counters, f: &mut F)
    where
        F: FnMut(Handle, Handle, &Object<V, T>, &Object<V, T>),
    {
        let mut cx = Ctx {
            nodes: self.nodes,
            items: self.items,
            kids: self.kids,
            store: self.store,
            matrix: self.matrix,
            counters,
        };
        cx.run(task, self.plan, work, f);
    }
}

impl<V: Vector, T> LooseOrthtree<V, T> {
    /// Copies the tree into the flat snapshot, depth first (so each
    /// subtree's objects are one range), then computes the subtree boxes
    /// and ranges reading it backwards (children before parents). Idle
    /// nodes are empty leaves and are left out.
    fn flatten(&self, flat: &mut Flat<V>) {
        let (nodes, root) = (&self.core.nodes, &self.core.root);
        let Flat {
            nodes: fnodes,
            items,
            kids,
            order: stack,
            ..
        } = flat;
        fnodes.clear();
        items.clear();
        kids.clear();
        stack.clear();
        stack.push((*root, NONE));
        while let Some((n, slot)) = stack.pop() {
            let me = fnodes.len() as u32;
            if slot != NONE {
                kids[slot as usize] = me;
            }
            let node = &nodes[n as usize];
            let item_start = items.len() as u32;
            items.extend(
                self.core.entries()[node.items.range()]
                    .iter()
                    .map(|&e| self.core.item(e)),
            );
            let kid_start = kids.len() as u32;
            for &c in &node.children {
                if c != NONE && nodes[c as usize].life.state != NodeState::Idle {
                    kids.push(NONE);
                }
            }
            let kid_end = kids.len() as u32;
            // Pushed last to first, so children are visited (and numbered)
            // in the order of their slots.
            let mut k = kid_end;
            for &c in node.children.iter().rev() {
                if c != NONE && nodes[c as usize].life.state != NodeState::Idle {
                    k -= 1;
                    stack.push((c, k));
                }
            }
            fnodes.push(FlatNode {
                sub: Aabb::empty(),
                own: Aabb::empty(),
                item_start,
                item_end: items.len() as u32,
                sub_end: items.len() as u32,
                kid_start,
                kid_end,
                level: node.level,
            });
        }
        for i in (0..fnodes.len()).rev() {
            let n = fnodes[i];
            let own = items[n.item_start as usize..n.item_end as usize]
                .iter()
                .fold(Aabb::empty(), |b, it| b.union(&it.aabb));
            let mine = &kids[n.kid_start as usize..n.kid_end as usize];
            let sub = mine
                .iter()
                .fold(own, |b, &c| b.union(&fnodes[c as usize].sub));
            fnodes[i].own = own;
            fnodes[i].sub = sub;
            if let Some(&last) = mine.last() {
                fnodes[i].sub_end = fnodes[last as usize].sub_end;
            }
        }
    }

    /// Cuts the pair search into independent tasks (see [`Task`]): a
    /// descent of the top levels of the snapshot that files, per node, its
    /// own objects' task and its children's cross descents, and hands each
    /// subtree below the planning depth over whole. Nothing is tested here.
    fn plan(flat: &mut Flat<V>, counters: &mut Counters) {
        let Flat {
            nodes,
            items,
            kids,
            tasks,
            plan,
            plan_stack: stack,
            ..
        } = flat;
        tasks.clear();
        plan.clear();
        stack.clear();
        // Enough subtrees for the threads to share: 64 in 3D and 2D alike.
        let depth = if V::DIM == 3 { 2 } else { 3 };
        // (node, depth, its parent's segment `plan[start..end]`)
        stack.push((0, 0, 0, 0));
        while let Some((n, d, parent_start, parent_end)) = stack.pop() {
            counters.node_visits += 1;
            let node = &nodes[n as usize];
            let start = plan.len();
            for i in parent_start as usize..parent_end as usize {
                let c = plan[i];
                if c.aabb.intersects(&node.sub) {
                    plan.push(c);
                }
            }
            let mid = plan.len();
            if node.item_end > node.item_start {
                tasks.push(Task::Own {
                    node: n,
                    start: start as u32,
                    end: mid as u32,
                });
            }
            let children = &kids[node.kid_start as usize..node.kid_end as usize];
            for (i, &a) in children.iter().enumerate() {
                for &b in &children[i + 1..] {
                    if nodes[a as usize].sub.intersects(&nodes[b as usize].sub) {
                        tasks.push(Task::Cross { a, b });
                    }
                }
            }
            plan.extend_from_slice(items_of(items, node));
            let end = plan.len() as u32;
            for &c in children {
                if is_empty(&nodes[c as usize].sub) {
                    continue;
                }
                if d + 1 < depth {
                    stack.push((c, d + 1, start as u32, end));
                } else {
                    tasks.push(Task::Subtree {
                        node: c,
                        start: start as u32,
                        end,
                    });
                }
            }
        }
    }

    /// Snapshot, plan, then the tasks in order.
    pub(crate) fn find_pairs<F>(&self, counters: &mut Counters, f: &mut F)
    where
        F: FnMut(Handle, Handle, &Object<V, T>, &Object<V, T>),
    {
        if self.core.root == NONE {
            return;
        }
        let mut flat = self.flat.take();
        self.flatten(&mut flat);
        Self::plan(&mut flat, counters);
        let (job, work) = self.job(&mut flat);
        job.run_all(work, counters, f);
        self.flat.put(flat);
    }

    /// The planned search over a snapshot, and the calling thread's
    /// buffers.
    fn job<'a>(&'a self, flat: &'a mut Flat<V>) -> (Job<'a, V, T>, &'a mut Work<V>) {
        let job = Job {
            nodes: &flat.nodes,
            items: &flat.items,
            kids: &flat.kids,
            tasks: &flat.tasks,
            plan: &flat.plan,
            store: &self.core.store,
            matrix: &self.core.matrix,
        };
        (job, &mut flat.work)
    }

    /// The pair search on every thread of rayon's pool: the tasks of the
    /// plan run in parallel and their results are joined in task order
    /// (see [`Core::par_collect`](crate::kernel::Core::par_collect)), so
    /// the records come in the order of `find_pairs`.
    #[cfg(feature = "rayon")]
    pub(crate) fn par_collect<R, M>(&self, record: M, out: &mut Vec<R>)
    where
        T: Sync,
        R: Copy + Send + Sync + 'static,
        M: Fn(Handle, Handle, &Object<V, T>, &Object<V, T>) -> Option<R> + Sync,
    {
        let mut counters = Counters::default();
        if self.core.root == NONE {
            self.core
                .par_collect(None::<&Job<'_, V, T>>, counters, record, out);
            return;
        }
        let mut flat = self.flat.take();
        self.flatten(&mut flat);
        Self::plan(&mut flat, &mut counters);
        let (job, _) = self.job(&mut flat);
        self.core.par_collect(Some(&job), counters, record, out);
        self.flat.put(flat);
    }
}
