//! The pair search of the tight trees (the orthtrees and the BSP), whose
//! children tile their parent and whose objects live in the deepest node
//! that contains them: the objects of each node against each
//! other and against those of its ancestors. It runs where the kernel's
//! grid search (`kernel/grid.rs`) would be crowded.
//!
//! Depth first over the tree with a buffer of ancestor objects. Each node
//! keeps, as its candidates, only the ancestor objects that overlap its own
//! bounds: an ancestor object that misses a node misses its whole subtree.
//! The candidates of a node are a segment of one buffer, so nothing is
//! allocated per node or per frame.
//!
//! Within a node, objects are tested against each other and against the
//! candidates by sweep and prune along the axis where the node's objects
//! spread most: only boxes whose intervals overlap on that axis are
//! compared. That keeps crowded nodes (the objects straddling the root's
//! split planes) from costing the square of their count.
//!
//! # Threads
//! The search is cut into independent tasks (see [`Task`]) planned from
//! the top levels of the tree: the planned nodes' own objects, and the
//! subtrees below the planning depth. One thread runs them in order; with
//! the `rayon` feature, `par_pairs` runs them on every thread and joins the
//! results in the same order (`Core::par_collect`), so both give the same
//! pairs in the same order, and the same counters.

use super::{Family, PairTasks, Spare};
use crate::geometry::{Aabb, Vector};
use crate::index::{Entry, Item, report_pair};
use crate::store::{NONE, Store};
use crate::traverse::TreeNode;
use crate::{Counters, Handle, LayerMatrix, Object};

/// What the tight pair search needs of a node, beyond [`TreeNode`].
pub(crate) trait TightNode<V: Vector>: TreeNode<V> {
    /// `log2` of the number of children a node can have (3 for the octree,
    /// 2 for the quadtree, 1 for the BSP): sets the planning depth.
    const SPLIT_BITS: u32;
    /// The node's region: every object of its subtree lies inside it.
    fn bounds(&self) -> &Aabb<V>;
    /// True when the node has at least one child.
    fn has_children(&self) -> bool;
}

/// Makes `$family` a [`TightFamily`] (from its field `pair_scratch`), and
/// implements [`TreeNode`] and [`TightNode`] for the calling module's
/// `Node<V>` (from its fields `items`, `children`, `parent`, `bounds` and
/// `child_count`); `$split_bits` is [`TightNode::SPLIT_BITS`].
macro_rules! impl_tight {
    ($family:ident, $split_bits:expr) => {
        impl<V: $crate::Vector, T> $crate::kernel::tight_pairs::TightFamily<V, T>
            for $family<V, T>
        {
            fn pair_scratch(
                &self,
            ) -> &$crate::kernel::Spare<$crate::kernel::tight_pairs::PairScratch<V>> {
                &self.pair_scratch
            }
        }

        $crate::traverse::impl_tree_node!();

        impl<V: $crate::Vector> $crate::kernel::tight_pairs::TightNode<V> for Node<V> {
            const SPLIT_BITS: u32 = $split_bits;
            #[inline]
            fn bounds(&self) -> &$crate::Aabb<V> {
                &self.bounds
            }
            #[inline]
            fn has_children(&self) -> bool {
                self.child_count > 0
            }
        }
    };
}
pub(crate) use impl_tight;

/// A family whose pair search is this module's: its nodes are
/// [`TightNode`]s and it keeps the search's buffers.
pub(crate) trait TightFamily<V: Vector, T>: Family<V, T, Node: TightNode<V>> {
    /// The pair search's buffers, lent to each search.
    fn pair_scratch(&self) -> &Spare<PairScratch<V>>;
}

/// Below this many objects in a node, plain loops beat sorting the node's
/// objects and candidates for the sweep: cachegrind on the dynamic-pairs
/// scene (`scripts/frame-profile.sh`) counted 7% fewer instructions for the
/// octree and 16% for the BSP at 16 than with sweeps from 48 candidate
/// pairs (1,000 and 100,000 objects), and more again from 64 up.
const SWEEP_MIN_ITEMS: usize = 16;

/// The plan hands out about `2^TASK_BITS` subtrees (64), enough for the
/// threads to share whatever the tree's fan-out.
const TASK_BITS: u32 = 6;

/// One independent piece of the pair search. The pairs of the whole tree
/// split, with no overlap, into the planned nodes' own objects against
/// each other and their ancestors', and the pairs within each subtree
/// below the planning depth and with its ancestors' objects.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Task {
    /// The objects of `node` against each other and against the ancestor
    /// objects `cands[start..end]` of the plan that reach it.
    Own { node: u32, start: u32, end: u32 },
    /// The pairs within the subtree of `node` and with the objects
    /// `cands[start..end]` of the plan: those of its parent and of the
    /// ancestors that reach the parent.
    Subtree { node: u32, start: u32, end: u32 },
}

/// The plan: the tasks in the order they run, and the candidate segments
/// they refer to.
#[derive(Default)]
pub(crate) struct Plan<V: Vector> {
    tasks: Vec<Task>,
    cands: Vec<Item<V>>,
    /// The planning descent: (node, depth, its parent's segment).
    stack: Vec<(u32, u32, u32, u32)>,
}

/// The buffers one thread needs to run tasks.
#[derive(Default)]
pub(crate) struct Work<V: Vector> {
    /// Depth-first stack: (node, its parent's candidate segment).
    stack: Vec<(u32, u32, u32)>,
    /// Ancestor objects, one segment per level of the descent.
    cands: Vec<Item<V>>,
    /// A crowded node's objects, sorted for the sweep.
    sorted: Vec<Item<V>>,
    /// The node's objects with their boxes (read from the store).
    own: Vec<Item<V>>,
}

/// The pair search's buffers, kept by the tree between searches.
#[derive(Default)]
pub(crate) struct PairScratch<V: Vector> {
    plan: Plan<V>,
    /// The buffers of the tasks run on the calling thread.
    work: Work<V>,
}

impl<V: Vector> PairScratch<V> {
    /// Bytes held.
    pub fn memory(&self) -> usize {
        let (p, w) = (&self.plan, &self.work);
        p.tasks.capacity() * size_of::<Task>()
            + p.stack.capacity() * size_of::<(u32, u32, u32, u32)>()
            + w.stack.capacity() * size_of::<(u32, u32, u32)>()
            + (p.cands.capacity() + w.cands.capacity() + w.sorted.capacity() + w.own.capacity())
                * size_of::<Item<V>>()
    }
}

/// Cuts the search of a tree with a root into tasks (see [`Task`]): a
/// descent of the top levels that files, per node, its own objects' task,
/// and hands each subtree below the planning depth over whole. Counts the
/// planned nodes' visits and bound tests, as the search would.
fn plan<V: Vector, T, N: TightNode<V>>(
    nodes: &[N],
    lists: &[Entry],
    store: &Store<Object<V, T>>,
    root: u32,
    plan: &mut Plan<V>,
    counters: &mut Counters,
) {
    let Plan {
        tasks,
        cands,
        stack,
    } = plan;
    tasks.clear();
    cands.clear();
    stack.clear();
    let depth = TASK_BITS.div_ceil(N::SPLIT_BITS);
    // (node, depth, its parent's segment `cands[start..end]`)
    stack.push((root, 0, 0, 0));
    while let Some((n, d, parent_start, parent_end)) = stack.pop() {
        counters.node_visits += 1;
        counters.bound_tests += u64::from(parent_end - parent_start);
        let node = &nodes[n as usize];
        let start = cands.len() as u32;
        for i in parent_start as usize..parent_end as usize {
            let c = cands[i];
            if c.aabb.intersects(node.bounds()) {
                cands.push(c);
            }
        }
        let mid = cands.len() as u32;
        let items = &lists[node.block().range()];
        if !items.is_empty() {
            tasks.push(Task::Own {
                node: n,
                start,
                end: mid,
            });
        }
        if node.has_children() {
            cands.extend(items.iter().map(|&e| store.item(e)));
            let end = cands.len() as u32;
            for &c in node.children() {
                if c == NONE {
                    continue;
                }
                if d + 1 < depth {
                    stack.push((c, d + 1, start, end));
                } else {
                    tasks.push(Task::Subtree {
                        node: c,
                        start,
                        end,
                    });
                }
            }
        }
    }
}

/// The planned search over a tree's nodes: what every task reads.
pub(crate) struct Job<'a, V: Vector, T, N> {
    nodes: &'a [N],
    /// The nodes' object lists.
    lists: &'a [Entry],
    plan: &'a Plan<V>,
    store: &'a Store<Object<V, T>>,
    matrix: &'a LayerMatrix,
}

impl<V: Vector, T, N: TightNode<V>> Job<'_, V, T, N> {
    /// Every pair within the subtree of `node` and of it with the
    /// candidates in `work.cands` (the objects of its parent and of the
    /// ancestors that reach the parent): depth first, with one segment of
    /// candidates per level.
    fn subtree<F>(&self, cx: &mut PairCtx<'_, V, T, F>, node: u32, work: &mut Work<V>)
    where
        F: FnMut(Handle, Handle, &Object<V, T>, &Object<V, T>),
    {
        let Work {
            stack,
            cands: buf,
            sorted,
            own,
        } = work;
        stack.clear();
        stack.push((node, 0, buf.len() as u32));
        while let Some((n, parent_start, parent_end)) = stack.pop() {
            cx.counters.node_visits += 1;
            let node = &self.nodes[n as usize];
            // Later segments belong to finished sibling subtrees.
            buf.truncate(parent_end as usize);
            let entries = &self.lists[node.block().range()];
            if entries.len() == 1 && !node.has_children() {
                // A leaf of one object (most leaves): it meets the parent's
                // candidates directly. Filtering them by the leaf's bounds
                // first would cost as many box tests, and copies.
                let a = self.store.item(entries[0]);
                for b in &buf[parent_start as usize..parent_end as usize] {
                    cx.test(&a, b);
                }
                continue;
            }
            let start = buf.len();
            cx.counters.bound_tests += u64::from(parent_end - parent_start);
            for i in parent_start as usize..parent_end as usize {
                let c = buf[i];
                if c.aabb.intersects(node.bounds()) {
                    buf.push(c);
                }
            }
            let mid = buf.len();
            own.clear();
            own.extend(entries.iter().map(|&e| self.store.item(e)));
            cx.node(own, &mut buf[start..mid], sorted);
            if node.has_children() {
                buf.extend_from_slice(own);
                let end = buf.len() as u32;
                for &c in node.children() {
                    if c != NONE {
                        stack.push((c, start as u32, end));
                    }
                }
            }
        }
    }
}

impl<V: Vector, T, N: TightNode<V>> PairTasks<V, T> for Job<'_, V, T, N> {
    type Task = Task;
    type Work = Work<V>;

    fn tasks(&self) -> &[Task] {
        &self.plan.tasks
    }

    fn run<F>(&self, task: Task, work: &mut Work<V>, counters: &mut Counters, f: &mut F)
    where
        F: FnMut(Handle, Handle, &Object<V, T>, &Object<V, T>),
    {
        let mut cx = PairCtx {
            store: self.store,
            matrix: self.matrix,
            counters,
            f,
        };
        let (Task::Own { node, start, end } | Task::Subtree { node, start, end }) = task;
        work.cands.clear();
        work.cands
            .extend_from_slice(&self.plan.cands[start as usize..end as usize]);
        match task {
            Task::Own { .. } => {
                let entries = &self.lists[self.nodes[node as usize].block().range()];
                work.own.clear();
                work.own.extend(entries.iter().map(|&e| self.store.item(e)));
                cx.node(&work.own, &mut work.cands, &mut work.sorted);
            }
            Task::Subtree { .. } => self.subtree(&mut cx, node, work),
        }
    }
}

/// The pair search of a tight tree with a root: plan, then the tasks in
/// order on this thread.
pub(crate) fn find_pairs<V: Vector, T, S: TightFamily<V, T>, F>(
    tree: &S,
    counters: &mut Counters,
    f: &mut F,
) where
    F: FnMut(Handle, Handle, &Object<V, T>, &Object<V, T>),
{
    let core = tree.core();
    let mut s = tree.pair_scratch().take();
    let PairScratch { plan: p, work } = &mut s;
    plan(
        &core.nodes,
        core.entries(),
        &core.store,
        core.root,
        p,
        counters,
    );
    let job = Job {
        nodes: &core.nodes,
        lists: core.entries(),
        plan: p,
        store: &core.store,
        matrix: &core.matrix,
    };
    job.run_all(work, counters, f);
    tree.pair_scratch().put(s);
}

/// The pair search on rayon's threads: the tasks of the plan run in
/// parallel and their results are joined in task order (see
/// [`Core::par_collect`](super::Core::par_collect)), so the records come
/// in the order of [`find_pairs`].
#[cfg(feature = "rayon")]
pub(crate) fn par_collect<V: Vector, T, S: TightFamily<V, T>, R, M>(
    tree: &S,
    record: M,
    out: &mut Vec<R>,
) where
    T: Sync,
    R: Copy + Send + Sync + 'static,
    M: Fn(Handle, Handle, &Object<V, T>, &Object<V, T>) -> Option<R> + Sync,
{
    let core = tree.core();
    let mut counters = Counters::default();
    if core.root == NONE {
        core.par_collect(None::<&Job<'_, V, T, S::Node>>, counters, record, out);
        return;
    }
    let mut s = tree.pair_scratch().take();
    plan(
        &core.nodes,
        core.entries(),
        &core.store,
        core.root,
        &mut s.plan,
        &mut counters,
    );
    let job = Job {
        nodes: &core.nodes,
        lists: core.entries(),
        plan: &s.plan,
        store: &core.store,
        matrix: &core.matrix,
    };
    core.par_collect(Some(&job), counters, record, out);
    tree.pair_scratch().put(s);
}

/// The axis along which the objects' centres spread most.
fn spread_axis<V: Vector>(items: &[Item<V>]) -> usize {
    let (mut lo, mut hi) = (V::splat(f32::INFINITY), V::splat(f32::NEG_INFINITY));
    for it in items {
        let c = it.aabb.min + it.aabb.max;
        lo = lo.min(c);
        hi = hi.max(c);
    }
    (hi - lo).max_axis()
}

/// What a pair test needs, borrowed apart from the tree's nodes.
struct PairCtx<'a, V: Vector, T, F> {
    store: &'a Store<Object<V, T>>,
    matrix: &'a LayerMatrix,
    counters: &'a mut Counters,
    f: &'a mut F,
}

impl<V: Vector, T, F> PairCtx<'_, V, T, F>
where
    F: FnMut(Handle, Handle, &Object<V, T>, &Object<V, T>),
{
    /// The box test, inlined into the loops; the rare overlap goes to the
    /// out-of-line exact test.
    #[inline(always)]
    fn test(&mut self, a: &Item<V>, b: &Item<V>) {
        self.counters.pair_tests += 1;
        if a.aabb.intersects(&b.aabb) & !(a.is_static() & b.is_static()) {
            self.overlap(a, b);
        }
    }

    #[inline(never)]
    fn overlap(&mut self, a: &Item<V>, b: &Item<V>) {
        self.counters.shape_tests += 1;
        report_pair(self.store, self.matrix, a.slot(), b.slot(), self.f);
    }

    /// A node's objects against each other and against the ancestor
    /// objects that reach it (a static object stored high up meets every
    /// moving object below it): plain loops for a few, sweep and prune
    /// for a crowded node (`cands` is then sorted in place).
    fn node(&mut self, items: &[Item<V>], cands: &mut [Item<V>], sorted: &mut Vec<Item<V>>) {
        if items.len() < SWEEP_MIN_ITEMS {
            for (i, a) in items.iter().enumerate() {
                for b in items[i + 1..].iter().chain(cands.iter()) {
                    self.test(a, b);
                }
            }
        } else {
            let axis = spread_axis(items);
            sorted.clear();
            sorted.extend_from_slice(items);
            let key = |it: &Item<V>| it.aabb.min.get(axis);
            sorted.sort_unstable_by(|a, b| key(a).total_cmp(&key(b)));
            cands.sort_unstable_by(|a, b| key(a).total_cmp(&key(b)));
            self.sweep_self(sorted, axis);
            self.sweep_two(sorted, cands, axis);
        }
    }

    /// `a` against the boxes of `list` (sorted by `min[axis]`) that start
    /// on the axis before it ends.
    #[inline]
    fn sweep_from(&mut self, a: &Item<V>, list: &[Item<V>], axis: usize) {
        let end = a.aabb.max.get(axis);
        for b in list {
            if b.aabb.min.get(axis) > end {
                break;
            }
            self.test(a, b);
        }
    }

    /// Every pair of one list sorted by `min[axis]` whose intervals on the
    /// axis overlap.
    fn sweep_self(&mut self, list: &[Item<V>], axis: usize) {
        for (i, a) in list.iter().enumerate() {
            self.sweep_from(a, &list[i + 1..], axis);
        }
    }

    /// Every pair across two lists sorted by `min[axis]` whose intervals on
    /// the axis overlap, each once: walk both in order of `min`, and test the
    /// current box against the boxes of the other list that start before it
    /// ends.
    fn sweep_two(&mut self, xs: &[Item<V>], ys: &[Item<V>], axis: usize) {
        let (mut i, mut j) = (0, 0);
        while i < xs.len() && j < ys.len() {
            if xs[i].aabb.min.get(axis) <= ys[j].aabb.min.get(axis) {
                self.sweep_from(&xs[i], &ys[j..], axis);
                i += 1;
            } else {
                self.sweep_from(&ys[j], &xs[i..], axis);
                j += 1;
            }
        }
    }
}
