//! The node pool's lifecycle, shared by every family: filing objects in
//! node lists, taking them out, and lazy pruning: an empty leaf is
//! listed idle and counts down its lifespan (8 frames at first); reused
//! before it dies, its lifespan doubles (up to 64); dead, it goes back to
//! the free list and its parent may become an empty leaf in turn.
//!
//! The countdown reads an idle leaf's node only when it is due: the idle
//! list keeps each leaf's due step beside it ([`IdleList`]). (Aging each
//! leaf's own count every frame read every idle node every frame: with
//! bullets crossing a world, a million idle leaves for 100,000 objects,
//! and up to 13% of the frame.)

use super::Core;
use crate::geometry::{Aabb, Vector};
use crate::index::{Entry, Item};
use crate::store::NONE;
use crate::traverse::TreeNode;

/// Frames an empty leaf lives at first.
pub(crate) const FIRST_LIFESPAN: u8 = 8;
/// The longest lifespan an empty leaf can earn by being reused.
pub(crate) const MAX_LIFESPAN: u8 = 64;

/// Where a node of the pool stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NodeState {
    /// In the tree, holding objects or children (or the root).
    Live,
    /// In the tree, empty, counting down to its pruning.
    Idle,
    /// On the free list.
    Free,
}

/// Where a node stands in lazy pruning: a field of every family's
/// node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Lifecycle {
    pub state: NodeState,
    /// Frames an empty leaf lives before it is pruned (8, doubling to 64).
    pub lifespan: u8,
    /// While idle: the step of the [`IdleList`]'s clock at which it is
    /// pruned (its lifespan after the step before it became idle).
    pub due: u8,
    /// True while the node has an entry in the idle list.
    pub listed: bool,
}

impl Lifecycle {
    /// A node just made (or taken from the free list).
    pub const NEW: Self = Self {
        state: NodeState::Live,
        lifespan: FIRST_LIFESPAN,
        due: 0,
        listed: false,
    };
}

/// The empty leaves counting down: one entry per listed node, with the
/// step of the clock at which it is next looked at: pruned then if it is
/// still idle and due, dropped if it was reused, or given its later due
/// step if it was reused and emptied since. An entry's step is never
/// later than its idle node's due step. A frame's step reads the entries
/// in order (eight bytes each) and the nodes of only those whose step it
/// is.
#[derive(Default)]
pub(crate) struct IdleList {
    /// Steps so far (one an `end_frame`), wrapping: due steps lie at most
    /// [`MAX_LIFESPAN`] ahead, so eight bits tell them apart.
    clock: u8,
    entries: Vec<IdleEntry>,
}

/// A listed node and the step at which it is next looked at.
#[derive(Clone, Copy, Debug)]
struct IdleEntry {
    node: u32,
    step: u8,
}

impl IdleList {
    /// The clock: the steps so far.
    #[inline]
    pub fn clock(&self) -> u8 {
        self.clock
    }

    /// Lists node `n`, to be looked at on step `due` (within
    /// [`MAX_LIFESPAN`] steps ahead).
    #[inline]
    pub fn push(&mut self, n: u32, due: u8) {
        debug_assert!((1..=MAX_LIFESPAN).contains(&due.wrapping_sub(self.clock)));
        self.entries.push(IdleEntry { node: n, step: due });
    }

    /// Listed nodes.
    #[inline]
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Every entry, with the step it waits for.
    pub fn entries(&self) -> impl Iterator<Item = (u32, u8)> + '_ {
        self.entries.iter().map(|e| (e.node, e.step))
    }

    /// No entries (the clock goes on).
    pub fn clear(&mut self) {
        self.entries.clear();
    }

    /// Bytes held.
    pub fn memory(&self) -> usize {
        self.entries.capacity() * size_of::<IdleEntry>()
    }

    /// Some listed node (for the tests that break the state).
    #[cfg(test)]
    pub fn any(&self) -> u32 {
        self.entries[0].node
    }

    /// Takes out some listed node's entry (for the tests that break the
    /// state).
    #[cfg(test)]
    pub fn pop(&mut self) -> Option<u32> {
        self.entries.pop().map(|e| e.node)
    }

    /// A second entry for a listed node (for the tests that break the
    /// state).
    #[cfg(test)]
    pub fn duplicate(&mut self, n: u32) {
        let e = *self
            .entries
            .iter()
            .find(|e| e.node == n)
            .expect("a listed node");
        self.entries.push(e);
    }
}

/// The fields of a family's node the pool works on, borrowed together.
pub(crate) struct PoolParts<'a> {
    pub items: &'a mut super::Block,
    pub children: &'a mut [u32],
    pub parent: &'a mut u32,
    pub child_count: &'a mut u8,
    pub life: &'a mut Lifecycle,
}

/// A node's place in the lifecycle, read (for checks and statistics).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Life {
    pub state: NodeState,
    pub lifespan: u8,
    pub due: u8,
    pub listed: bool,
    pub child_count: u8,
}

/// Implements [`PoolNode`] for a family's node type, whose fields bear
/// the pool's names (`items`, `children`, `parent`, `child_count`,
/// `life`).
macro_rules! impl_pool_node {
    ($node:ident) => {
        impl<V: $crate::Vector> $crate::kernel::PoolNode<V> for $node<V> {
            #[inline]
            fn pool(&mut self) -> $crate::kernel::PoolParts<'_> {
                $crate::kernel::PoolParts {
                    items: &mut self.items,
                    children: &mut self.children,
                    parent: &mut self.parent,
                    child_count: &mut self.child_count,
                    life: &mut self.life,
                }
            }

            #[inline]
            fn life(&self) -> $crate::kernel::Life {
                $crate::kernel::Life {
                    state: self.life.state,
                    lifespan: self.life.lifespan,
                    due: self.life.due,
                    listed: self.life.listed,
                    child_count: self.child_count,
                }
            }
        }
    };
}
pub(crate) use impl_pool_node;

/// A family's node, as the pool sees it.
pub(crate) trait PoolNode<V: Vector>: TreeNode<V> {
    /// The pool's fields.
    fn pool(&mut self) -> PoolParts<'_>;

    /// The node's place in the lifecycle.
    fn life(&self) -> Life;
}

impl<V: Vector, T, N: PoolNode<V>> Core<V, T, N> {
    /// Files objects in node `n` at once, noting each object's node and
    /// position in `place` (by slot): the bulk builds' filing, whose
    /// caller writes `place` to the store.
    pub fn file_all(&mut self, n: u32, its: &[Item<V>], place: &mut [(u32, u32)]) {
        let base = self.file_items(n, its);
        for (i, it) in its.iter().enumerate() {
            place[it.slot() as usize] = (n, base + i as u32);
        }
    }

    /// Appends objects to node `n`'s list (the caller writes their places
    /// to the store), returning the position of the first; where a bulk
    /// build keeps the entries' boxes for the build step
    /// ([`Core::built`]), writes them there at the same places.
    pub fn file_items(&mut self, n: u32, its: &[Item<V>]) -> u32 {
        let block = self.nodes[n as usize].pool().items;
        let base = self.lists.extend(
            block,
            its.iter().map(|it| Entry::new(it.slot(), it.is_static())),
        );
        if let Some(built) = &mut self.built {
            let at = (block.start + base) as usize;
            if built.len() < at + its.len() {
                built.resize(at + its.len(), Item::room());
            }
            built[at..at + its.len()].copy_from_slice(its);
        }
        base
    }

    /// Rewrites the object lists in depth-first order of the tree when
    /// the room abandoned by lists that moved outweighs the objects (see
    /// [`super::Lists`]). Called where the tree is whole (every node that
    /// holds objects reachable from the root): at the start of a change
    /// and at the build step.
    #[inline]
    pub fn tidy(&mut self) {
        if self.lists.untidy() && self.root != NONE {
            self.rewrite_lists();
        }
    }

    /// The rewrite of [`Core::tidy`]: every block copied, depth first.
    #[cold]
    #[inline(never)]
    fn rewrite_lists(&mut self) {
        self.lists.start_rewrite();
        let mut stack = core::mem::take(&mut self.idle_spare);
        let keep = stack.len();
        stack.push(self.root);
        while stack.len() > keep {
            let n = stack.pop().expect("the stack holds the root's descendants");
            let p = self.nodes[n as usize].pool();
            self.lists.rewrite_block(p.items);
            // Reversed, so that the first child comes out first.
            for &c in p.children.iter().rev() {
                if c != NONE {
                    stack.push(c);
                }
            }
        }
        self.idle_spare = stack;
        self.lists.finish_rewrite();
    }

    /// Puts a new node in the pool, on a free entry if there is one, and
    /// returns its index.
    pub fn alloc(&mut self, node: N) -> u32 {
        let n = match self.free_nodes.pop() {
            Some(n) => {
                self.nodes[n as usize] = node;
                n
            }
            None => {
                self.nodes.push(node);
                (self.nodes.len() - 1) as u32
            }
        };
        self.mark_node(n);
        n
    }

    /// Makes `c` child `k` of node `n` (which is used again).
    pub fn link_child(&mut self, n: u32, k: usize, c: u32) {
        let p = self.nodes[n as usize].pool();
        p.children[k] = c;
        *p.child_count += 1;
        self.mark_used(n);
    }

    /// After a growth of the root: takes out of the subtree of `old` every
    /// object whose box `lift` selects and files it in the root. The walk
    /// enters only the children whose region `enter` accepts, and calls
    /// `visit` on every node it reaches. `stack` and `lifted` are the
    /// caller's buffers (left empty).
    pub fn lift_to_root(
        &mut self,
        old: u32,
        lift: impl Fn(&Aabb<V>) -> bool,
        enter: impl Fn(&N) -> bool,
        mut visit: impl FnMut(&mut N),
        stack: &mut Vec<(u32, u32)>,
        lifted: &mut Vec<(u32, u32)>,
    ) {
        stack.clear();
        stack.push((old, 0));
        while let Some((n, _)) = stack.pop() {
            visit(&mut self.nodes[n as usize]);
            let mut i = 0;
            while i < self.nodes[n as usize].block().len() {
                let it = self.items(n)[i];
                if lift(&self.box_of(it.slot())) {
                    self.unfile_at(n, i);
                    lifted.push((n, it.slot()));
                } else {
                    i += 1;
                }
            }
            for &c in self.nodes[n as usize].children() {
                if c != NONE && enter(&self.nodes[c as usize]) {
                    stack.push((c, 0));
                }
            }
        }
        let root = self.root;
        for &(n, slot) in lifted.iter() {
            self.file(root, slot);
            self.note_if_empty(n);
        }
        lifted.clear();
    }

    /// Adds an object to node `n`'s list.
    pub fn file(&mut self, n: u32, slot: u32) {
        self.mark_node(n);
        let is_static = self.store.obj(slot).is_static;
        let block = self.nodes[n as usize].pool().items;
        let pos = self.lists.push(block, Entry::new(slot, is_static));
        if let Some(built) = &mut self.built {
            let at = (block.start + pos) as usize;
            if built.len() <= at {
                built.resize(at + 1, Item::room());
            }
            built[at] = Item::new(self.store.obj(slot).aabb(), slot, is_static);
        }
        let s = self.store.place_mut(slot);
        s.node = n;
        s.pos = pos;
        self.mark_used(n);
    }

    /// Takes item `i` out of node `n`'s list (swap-remove) and fixes the
    /// position of the item moved into its place. The node may be left
    /// empty.
    pub fn unfile_at(&mut self, n: u32, i: usize) {
        self.mark_node(n);
        let block = self.nodes[n as usize].pool().items;
        if let Some(moved) = self.lists.swap_remove(block, i) {
            self.store.place_mut(moved).pos = i as u32;
        }
    }

    /// A node gained an object or a child: if it was idle, it is reused,
    /// and its lifespan doubles.
    pub fn mark_used(&mut self, n: u32) {
        let p = self.nodes[n as usize].pool();
        if p.life.state == NodeState::Idle {
            // (Its entry in the idle list stays, and is dropped when due.)
            p.life.state = NodeState::Live;
            p.life.lifespan = p.life.lifespan.saturating_mul(2).min(MAX_LIFESPAN);
        }
    }

    /// Takes an object out of the tree or the pending queue (its slot stays
    /// allocated).
    pub fn detach(&mut self, slot: u32) {
        let (n, pos) = {
            let s = self.store.place(slot);
            (s.node, s.pos as usize)
        };
        if n == NONE {
            self.unqueue(slot);
        } else {
            self.unfile_at(n, pos);
            self.note_if_empty(n);
        }
    }

    /// The queued objects as items, for the bulk build of a fresh tree:
    /// `None` unless the tree qualifies (an empty root without children,
    /// at least two objects queued) and `fits` holds for every object's
    /// box.
    pub fn fresh_items(
        &self,
        pending: &[u32],
        fits: impl Fn(&Aabb<V>) -> bool,
    ) -> Option<Vec<Item<V>>> {
        let r = self.nodes[self.root as usize].life();
        let root_items = self.nodes[self.root as usize].block().len();
        if pending.len() < 2 || r.child_count != 0 || root_items != 0 {
            return None;
        }
        let mut items = Vec::with_capacity(pending.len());
        for &slot in pending {
            let o = self.store.obj(slot);
            let aabb = o.aabb();
            if !fits(&aabb) {
                return None;
            }
            items.push(Item::new(aabb, slot, o.is_static));
        }
        Some(items)
    }

    /// Gives a stored object its new shape, and returns where it is
    /// filed: its node and its position there.
    #[inline]
    pub fn set_shape(&mut self, slot: u32, shape: crate::Shape<V>) -> (u32, usize) {
        let o = self.store.obj_mut(slot);
        o.shape = shape;
        let s = self.store.place(slot);
        (s.node, s.pos as usize)
    }

    /// Gives a queued object its new shape (the survey of the queue is
    /// then made anew when it is needed).
    #[inline]
    pub fn set_queued_shape(&mut self, slot: u32, shape: crate::Shape<V>) {
        self.store.obj_mut(slot).shape = shape;
        self.queued = None;
    }

    /// Moves an object still queued for the build (which will place it):
    /// `admitted` is the family's `admit` of the new box; under the
    /// `Remove` policy (`remove`) an object it refuses as outside the world
    /// is evicted, any other refusal leaves the object unchanged.
    ///
    /// # Errors
    /// The refusal, unless the object was evicted.
    pub fn move_queued(
        &mut self,
        m: super::Move<V>,
        admitted: Result<(), crate::Error>,
        remove: bool,
    ) -> Result<(), crate::Error> {
        match admitted {
            Ok(()) => {
                self.set_queued_shape(m.slot, m.shape);
                Ok(())
            }
            Err(crate::Error::OutsideWorld) if remove => {
                self.evict(m.handle, m.slot);
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    /// Removes an object by the `Remove` policy: out of the tree, out
    /// of the store, its value kept for the caller's `take_evicted`.
    pub fn evict(&mut self, h: crate::Handle, slot: u32) {
        self.detach(slot);
        let obj = self.store.remove(slot);
        self.evicted.push((h, obj.value));
    }

    /// Starts the countdown of a node that has become an empty leaf.
    pub fn note_if_empty(&mut self, n: u32) {
        let root = self.root;
        let p = self.nodes[n as usize].pool();
        if n == root || p.life.state != NodeState::Live {
            return;
        }
        if p.items.is_empty() && *p.child_count == 0 {
            // Pruned on the lifespan-th step from now, if still idle: an
            // entry already listed (the node was reused and emptied
            // since) is due no later, and files the node again then.
            p.life.state = NodeState::Idle;
            p.life.due = self.idle.clock().wrapping_add(p.life.lifespan);
            if !p.life.listed {
                p.life.listed = true;
                self.idle.push(n, p.life.due);
            }
        }
    }

    /// One frame passes for the empty leaves: those idle for their lifespan
    /// are pruned, which may leave their parent an empty leaf in turn
    /// (whose countdown starts now). Only the nodes whose entry is due
    /// this step are read ([`IdleList`]).
    pub fn age_idle_nodes(&mut self) {
        self.idle.clock = self.idle.clock.wrapping_add(1);
        let now = self.idle.clock;
        let mut i = 0;
        // (Parents listed on the way are appended, due later: passed over.)
        while i < self.idle.entries.len() {
            let e = self.idle.entries[i];
            if e.step != now {
                i += 1;
                continue;
            }
            let n = e.node;
            let p = self.nodes[n as usize].pool();
            if p.life.state != NodeState::Idle {
                // Reused since it was listed.
                p.life.listed = false;
                self.idle.entries.swap_remove(i);
                continue;
            }
            if p.life.due != now {
                // Reused and emptied again since: due later.
                self.idle.entries[i].step = p.life.due;
                i += 1;
                continue;
            }
            self.idle.entries.swap_remove(i);
            let parent = *p.parent;
            p.life.listed = false;
            p.life.state = NodeState::Free;
            *p.parent = NONE;
            self.free_nodes.push(n);
            let pp = self.nodes[parent as usize].pool();
            let k = pp
                .children
                .iter()
                .position(|&c| c == n)
                .expect("a node is a child of its parent");
            pp.children[k] = NONE;
            *pp.child_count -= 1;
            // The parent, if now an empty leaf, is listed and starts its
            // countdown from the next frame.
            self.note_if_empty(parent);
        }
    }
}
