//! Insertion: the pending queue and its one-pass build, placing an
//! object in the deepest node that contains it, and growing the root.

use core::mem::take;

use super::{Bsp, Node, layout};
use crate::Error;
use crate::OutOfBounds;
use crate::geometry::{Aabb, Vector};
use crate::index::Item;
use crate::kernel::PendingSurvey;
use crate::orthtree::within_limits;
use crate::store::NONE;
use crate::traverse::z_order;

/// A growth step adds at least this share of the coordinates' magnitude, so
/// it always makes progress in `f32` (whose precision is `2^-24`).
const GROWTH_FLOOR: f32 = 1.0 / (1u32 << 20) as f32;

/// More growth steps than any object within the coordinate limits needs
/// (about 250 per axis from the smallest positive `f32` extent).
const MAX_GROWTH_STEPS: usize = 4096;

impl<V: Vector, T> Bsp<V, T> {
    /// Checks that an object with these bounds may enter the tree.
    pub(crate) fn admit(&self, aabb: &Aabb<V>) -> Result<(), Error> {
        if !within_limits(aabb) {
            return Err(Error::WorldTooLarge);
        }
        if self.config.out_of_bounds != OutOfBounds::Grow
            && let Some(root) = self.root_bounds().or(self.config.world)
            && !root.contains(aabb)
        {
            return Err(Error::OutsideWorld);
        }
        Ok(())
    }

    /// Makes the first root, around the queued objects.
    pub(crate) fn first_root(&mut self) -> Option<PendingSurvey<V>> {
        let (world, survey) = match self.config.world {
            // The survey the kernel kept, if it did (for the grid).
            Some(w) => (w, crate::kernel::kept_survey(&self.core)),
            None => {
                let (w, survey) = self.world_of_pending();
                (w, Some(survey))
            }
        };
        self.core.root = self.alloc_node(world, NONE, None, 0);
        survey
    }

    /// Files one queued object: the root grows to it, then it descends.
    pub(crate) fn file_queued(&mut self, slot: u32) {
        let aabb = self.core.store.obj(slot).aabb();
        // Admitted objects are within limits, so growth cannot fail;
        // and the Reject and Remove policies admitted only objects
        // inside.
        self.grow_to(&aabb)
            .expect("admitted objects are within the coordinate limits");
        self.place(self.core.root, slot);
    }

    /// The bulk build of a tree that holds nothing yet (an empty root with
    /// no child) and whose root contains every queued object: one
    /// top-down partition pass instead of filing the objects one by one,
    /// as the octree's (see `Orthtree::build_fresh`). Returns false, having
    /// done nothing, when the tree does not qualify.
    ///
    /// The tree is the one one-by-one insertion gives, which depends only
    /// on the objects reaching each node: a node that may split and is
    /// reached by more than `leaf_capacity` objects sends down each one
    /// that lies on one side of its split plane, and keeps the others; any
    /// other node keeps them all. The objects a node keeps, when many, are
    /// filed in Z order of their centres, so the queries' chunks of them
    /// are compact.
    pub(crate) fn build_fresh(&mut self, pending: &[u32]) -> bool {
        let root = self.core.root;
        let bounds = self.core.nodes[root as usize].bounds;
        let Some(items) = self.core.fresh_items(pending, |b| bounds.contains(b)) else {
            return false;
        };
        let capacity = self.config.leaf_capacity as usize;
        // Every node is new: the query boxes are recomputed in one pass.
        self.core.mark_stale();
        let mut bufs = [items.clone(), items];
        let mut place = vec![(NONE, 0u32); self.core.store.capacity()];
        let mut stack = vec![(root, 0usize, pending.len(), 0usize)];
        while let Some((n, lo, hi, b)) = stack.pop() {
            let node = &self.core.nodes[n as usize];
            let (src, dst) = split_pair(&mut bufs, b);
            if !node.splits || hi - lo <= capacity {
                let all = &mut src[lo..hi];
                Self::in_z_order(&node.bounds, all);
                self.core.file_all(n, all, &mut place);
                continue;
            }
            // Counting sort: the objects that stay, then each side.
            let (a, split) = (node.axis as usize, node.split);
            let key = |it: &Item<V>| {
                let up = it.aabb.min.get(a) > split;
                let down = it.aabb.max.get(a) < split;
                usize::from(down) + 2 * usize::from(up)
            };
            let mut count = [0usize; 3];
            for it in &src[lo..hi] {
                count[key(it)] += 1;
            }
            let start = [lo, lo + count[0], lo + count[0] + count[1], hi];
            let mut next = [start[0], start[1], start[2]];
            for it in &src[lo..hi] {
                let k = key(it);
                dst[next[k]] = *it;
                next[k] += 1;
            }
            let bounds = node.bounds;
            let stays = &mut dst[start[0]..start[1]];
            Self::in_z_order(&bounds, stays);
            self.core.file_all(n, stays, &mut place);
            for k in 0..2 {
                if count[k + 1] > 0 {
                    let c = crate::kernel::child_or_create(self, n, k);
                    stack.push((c, start[k + 1], start[k + 2], 1 - b));
                }
            }
        }
        for &slot in pending {
            let (node, pos) = place[slot as usize];
            let s = self.core.store.place_mut(slot);
            s.node = node;
            s.pos = pos;
        }
        true
    }

    /// Sorts a large node's objects in Z order of their centres.
    fn in_z_order(cell: &Aabb<V>, its: &mut [Item<V>]) {
        if its.len() > crate::traverse::CHUNKED {
            its.sort_by_cached_key(|it| (z_order(cell, it.aabb.center()), it.slot()));
        }
    }

    /// The root of a tree without a preset world: the bounds of the queued
    /// objects, each side below the minimum dimension widened to it upwards
    /// from the smallest corner (so objects on a ground plane lie on the
    /// root's face, not on a split plane through their middle). With the
    /// survey it comes from.
    fn world_of_pending(&self) -> (Aabb<V>, PendingSurvey<V>) {
        let survey = crate::kernel::queued_survey(&self.core);
        let Some(mut w) = survey.span else {
            unreachable!("the first root is made for queued objects");
        };
        let m = self.config.min_dimension;
        for i in 0..V::DIM {
            if w.max.get(i) - w.min.get(i) < m {
                let top = (w.min.get(i) + m).max(w.max.get(i));
                w.max = w.max.with(i, top);
            }
        }
        (w, survey)
    }

    /// Grows the root towards `aabb` until it contains it.
    ///
    /// # Errors
    /// [`Error::WorldTooLarge`] when it would take an absurd number of
    /// steps (the coordinate limits make this unreachable).
    pub(crate) fn grow_to(&mut self, aabb: &Aabb<V>) -> Result<(), Error> {
        for _ in 0..MAX_GROWTH_STEPS {
            if self.core.nodes[self.core.root as usize]
                .bounds
                .contains(aabb)
            {
                return Ok(());
            }
            self.grow_once(aabb);
        }
        Err(Error::WorldTooLarge)
    }

    /// One growth step along one axis: a new root, twice the old one along
    /// the axis where the old root is thinnest among those the target sticks
    /// out of, split exactly at the old root's face, which makes the old root
    /// one of its children.
    fn grow_once(&mut self, target: &Aabb<V>) {
        let old = self.core.root;
        let b = self.core.nodes[old as usize].bounds;
        let size = b.size();
        let mut axis = None;
        for i in 0..V::DIM {
            let out = target.min.get(i) < b.min.get(i) || target.max.get(i) > b.max.get(i);
            if out && axis.is_none_or(|a| size.get(i) < size.get(a)) {
                axis = Some(i);
            }
        }
        let a = axis.expect("growth towards an object the root contains");
        let (lo, hi) = (b.min.get(a), b.max.get(a));
        let step = size
            .get(a)
            .max(self.config.min_dimension)
            .max(lo.abs().max(hi.abs()) * GROWTH_FLOOR);
        let (bounds, split, k) = if target.min.get(a) < lo {
            // Grow downwards: the old root becomes the upper half.
            let min = b.min.with(a, lo - step);
            (Aabb { min, max: b.max }, lo, 1)
        } else {
            let max = b.max.with(a, hi + step);
            (Aabb { min: b.min, max }, hi, 0)
        };
        let new = self.alloc_node(bounds, NONE, Some((a, split)), 0);
        self.core.nodes[new as usize].children[k] = old;
        self.core.nodes[new as usize].child_count = 1;
        self.core.nodes[old as usize].parent = new;
        self.core.root = new;
        self.lift_objects_on_new_plane(old);
        // The old root may be an empty leaf (a preset world the first objects
        // all lie outside of): it is an ordinary node now, and counts down.
        self.core.note_if_empty(old);
    }

    /// After a growth, the old root's face towards the growth is the new
    /// root's split plane: objects of the old subtree touching it belong to
    /// the new root now, and the nodes of the old subtree on that face must
    /// now keep objects strictly inside it.
    fn lift_objects_on_new_plane(&mut self, old: u32) {
        let root = &self.core.nodes[self.core.root as usize];
        let (a, s) = (root.axis as usize, root.split);
        let k = usize::from(root.children[1] == old);
        let face = Self::split_face(root.axis, k);
        let touches = |b: &Aabb<V>| b.min.get(a) <= s && s <= b.max.get(a);
        let (mut lifted, mut stack) = (take(&mut self.work), take(&mut self.stack));
        let enter = |c: &Node<V>| touches(&c.bounds);
        // Every node visited lies on the plane, on the old root's side.
        let visit = |n: &mut Node<V>| n.strict |= face;
        self.core
            .lift_to_root(old, touches, enter, visit, &mut stack, &mut lifted);
        (self.work, self.stack) = (lifted, stack);
    }

    /// A node from the free list or a new one. `growth`: the axis and split
    /// of a node made by growth; otherwise the split follows [`layout`].
    /// `strict`: its faces on its ancestors' split planes.
    pub(crate) fn alloc_node(
        &mut self,
        bounds: Aabb<V>,
        parent: u32,
        growth: Option<(usize, f32)>,
        strict: u8,
    ) -> u32 {
        let (axis, split, splits, grown) = match growth {
            Some((a, s)) => (a as u8, s, true, true),
            None => {
                let (a, s, splits) = layout(&bounds, self.config.min_dimension);
                (a, s, splits, false)
            }
        };
        self.core.alloc(Node {
            bounds,
            split,
            items: crate::kernel::Block::default(),
            children: [NONE; 2],
            parent,
            axis,
            splits,
            strict,
            grown,
            child_count: 0,
            life: crate::kernel::Lifecycle::NEW,
        })
    }

    /// A new node for child slot `k` of `n` (linked by
    /// [`child_or_create`](crate::kernel::child_or_create)).
    pub(crate) fn new_child(&mut self, n: u32, k: usize) -> u32 {
        let p = &self.core.nodes[n as usize];
        let bounds = Self::child_bounds(p, k);
        let strict = p.strict | Self::split_face(p.axis, k);
        self.alloc_node(bounds, n, None, strict)
    }

    /// Files an object in the deepest node under `start` (which contains it)
    /// that fully contains it, splitting full leaves on the way. Returns the
    /// number of nodes examined.
    ///
    /// A leaf keeps up to `leaf_capacity` objects whatever their size; when
    /// one more arrives, the leaf's objects that fit a child move down. The
    /// work list replaces recursion, so depth costs no stack.
    pub(crate) fn place(&mut self, start: u32, slot: u32) -> u64 {
        let mut visits = 0;
        let mut work = core::mem::take(&mut self.work);
        work.push((start, slot));
        while let Some((mut n, slot)) = work.pop() {
            let aabb = self.core.store.obj(slot).aabb();
            loop {
                visits += 1;
                let node = &self.core.nodes[n as usize];
                let full = self.is_full(node);
                if full && node.child_count == 0 {
                    // A full leaf is about to take one more: its objects
                    // that fit a child move down.
                    self.unfile_fitting(n, &mut work);
                }
                let side = if full {
                    Self::side_of(&self.core.nodes[n as usize], &aabb)
                } else {
                    None
                };
                match side {
                    Some(k) => n = crate::kernel::child_or_create(self, n, k),
                    None => {
                        self.core.file(n, slot);
                        break;
                    }
                }
            }
        }
        self.work = work;
        visits
    }

    /// Moves the objects of leaf `n` that fit a child to the work list.
    fn unfile_fitting(&mut self, n: u32, work: &mut Vec<(u32, u32)>) {
        let mut i = 0;
        while i < self.core.nodes[n as usize].items.len() {
            let it = self.core.items(n)[i];
            let node = &self.core.nodes[n as usize];
            if Self::side_of(node, &self.core.box_of(it.slot())).is_some() {
                self.core.unfile_at(n, i);
                work.push((n, it.slot()));
            } else {
                i += 1;
            }
        }
    }
}

/// Buffer `b` of a pair, and the other one.
#[inline]
fn split_pair<X>(bufs: &mut [Vec<X>; 2], b: usize) -> (&mut Vec<X>, &mut Vec<X>) {
    let [x, y] = bufs;
    if b == 0 { (x, y) } else { (y, x) }
}
