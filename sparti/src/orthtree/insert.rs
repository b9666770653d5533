//! Insertion: the pending queue and its one-pass build, placing an
//! object in the deepest node that contains it, and growing the root.

use core::mem::take;

use super::{Node, Orthtree, OutOfBounds, within_limits};
use crate::Error;
use crate::geometry::{Aabb, Vector};
use crate::kernel::PendingSurvey;
use crate::store::NONE;
use crate::traverse::z_order;

impl<V: Vector, T> Orthtree<V, T> {
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

    /// Makes the first root, around the queued objects (choosing the
    /// minimum node size from them if it was left automatic).
    pub(crate) fn first_root(&mut self) -> Option<PendingSurvey<V>> {
        let survey = crate::kernel::queued_survey(&self.core);
        if self.config.min_node_size == 0.0 {
            self.config.min_node_size = survey.cell_size();
        }
        if let Some(w) = survey.world_with(self.config.world) {
            self.make_root(&w);
        }
        Some(survey)
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
    /// top-down partition pass instead of filing the objects one by one.
    /// Returns false, having done nothing, when the tree does not qualify.
    ///
    /// It gives the tree one-by-one insertion gives (the tests compare
    /// both with the brute force, and `validate` checks the placement
    /// rule), since that tree depends only on which objects reach each
    /// node: a node reached by one object keeps it (a leaf holds one
    /// object), as does a node of the minimum size; otherwise every object
    /// that fits an octant goes down into it, and the others stay. The
    /// objects are bucketed by octant with a counting sort, node by node
    /// (an explicit stack, no recursion); each node's list is allocated
    /// once at its final size.
    pub(crate) fn build_fresh(&mut self, pending: &[u32]) -> bool {
        let root = self.core.root;
        let bounds = self.core.nodes[root as usize].bounds;
        let Some(items) = self.core.fresh_items(pending, |b| bounds.contains(b)) else {
            return false;
        };
        // Two buffers: a node's objects are in `bufs[b][lo..hi]`; bucketed,
        // they go to the same range of the other buffer, where its
        // children find theirs.
        // Every node is new: the query boxes are recomputed in one pass.
        self.core.mark_stale();
        let mut bufs = [items.clone(), items];
        let stay = 1usize << V::DIM;
        let mut keys: Vec<u8> = Vec::new();
        // Where each object goes, by slot: written in bucket order here,
        // then copied to the store in slot order (the store is much larger
        // than this table, and random writes to it miss the cache).
        let mut place = vec![(NONE, 0u32); self.core.store.capacity()];
        let mut stack = vec![(root, 0usize, pending.len(), 0usize)];
        while let Some((n, lo, hi, b)) = stack.pop() {
            let node = &self.core.nodes[n as usize];
            if node.level == 0 || hi - lo == 1 {
                let (src, _) = split_pair(&mut bufs, b);
                self.core.file_all(n, &src[lo..hi], &mut place);
                continue;
            }
            // Counting sort by octant, the objects that stay first.
            let (src, dst) = split_pair(&mut bufs, b);
            let (src, dst) = (&src[lo..hi], &mut dst[lo..hi]);
            keys.clear();
            let mut count = [0usize; 9];
            for it in src {
                let k = Self::bucket_of(node.center, &it.aabb);
                keys.push(k as u8);
                count[k] += 1;
            }
            let mut start = [0usize; 10];
            for k in 0..=stay {
                start[k + 1] = start[k] + count[k];
            }
            let mut next = start;
            for (it, &k) in src.iter().zip(&keys) {
                dst[next[k as usize]] = *it;
                next[k as usize] += 1;
            }
            let (_, dst) = split_pair(&mut bufs, b);
            let stays = &mut dst[lo..lo + count[0]];
            if stays.len() > crate::traverse::CHUNKED {
                // Many objects on the split planes: in Z order of their
                // centres, so that the queries' chunks of them are compact.
                let cell = self.core.nodes[n as usize].bounds;
                stays.sort_by_cached_key(|it| (z_order(&cell, it.aabb.center()), it.slot()));
            }
            self.core.file_all(n, stays, &mut place);
            for k in 0..stay {
                if count[k + 1] > 0 {
                    let c = crate::kernel::child_or_create(self, n, k);
                    stack.push((c, lo + start[k + 1], lo + start[k + 2], 1 - b));
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

    /// [`Orthtree::octant_of`] as a bucket of the bulk build, without
    /// branches (octants fall at random, branches on them mispredict):
    /// 0 for an object that stays in the node, `1 + k` for octant `k`.
    #[inline]
    fn bucket_of(center: V, aabb: &Aabb<V>) -> usize {
        let (mut k, mut fits) = (0usize, true);
        for i in 0..V::DIM {
            let c = center.get(i);
            let up = aabb.min.get(i) > c;
            let down = aabb.max.get(i) < c;
            k |= usize::from(up) << i;
            fits &= up | down;
        }
        (k + 1) * usize::from(fits)
    }

    /// Creates the root: the smallest cube of side `min_node_size * 2^k`
    /// holding the world, anchored at the world's smallest corner. (Centred
    /// on the world, it would put the split planes of the root through the
    /// middle of flat worlds, and every object on a ground plane would
    /// straddle them and stay at the root.)
    fn make_root(&mut self, world: &Aabb<V>) {
        let extent = world.size().max_element();
        let mut side = self.config.min_node_size;
        let mut level = 0u16;
        while side < extent {
            side *= 2.0;
            level += 1;
        }
        let bounds = Aabb {
            min: world.min,
            max: world.min + V::splat(side),
        };
        // Rounding may leave the cube a hair short of the world: widen it.
        let mut root = self.alloc_node(bounds, bounds.center(), NONE, level);
        self.core.root = root;
        while !self.core.nodes[root as usize].bounds.contains(world) {
            self.grow_once(world);
            root = self.core.root;
        }
    }

    /// Doubles the root towards `aabb` until it contains it.
    ///
    /// # Errors
    /// [`Error::WorldTooLarge`] when it would take an absurd number of
    /// doublings (the coordinate limits make this unreachable).
    pub(crate) fn grow_to(&mut self, aabb: &Aabb<V>) -> Result<(), Error> {
        for _ in 0..512 {
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

    /// One doubling: a new root whose centre is the old root's corner on the
    /// side of `target`, so the old root is exactly one of its children.
    fn grow_once(&mut self, target: &Aabb<V>) {
        let old = self.core.root;
        let (b, level) = {
            let n = &self.core.nodes[old as usize];
            (n.bounds, n.level)
        };
        // At least the nominal side (`min_node_size * 2^level`): far from
        // the origin rounding may have collapsed the stored bounds to zero
        // width, and doubling zero never grows (found by fuzzing).
        let nominal = (f64::from(self.config.min_node_size) * 2f64.powi(i32::from(level))) as f32;
        let side = (b.max.get(0) - b.min.get(0)).max(nominal);
        let (mut min, mut max, mut center) = (b.min, b.max, b.min);
        let mut k = 0;
        for i in 0..V::DIM {
            if target.min.get(i) < b.min.get(i) {
                // Grow downwards: the old root becomes the upper half.
                min = min.with(i, b.min.get(i) - side);
                center = center.with(i, b.min.get(i));
                k |= 1 << i;
            } else {
                max = max.with(i, b.max.get(i) + side);
                center = center.with(i, b.max.get(i));
            }
        }
        let new = self.alloc_node(Aabb { min, max }, center, NONE, level + 1);
        self.core.nodes[new as usize].children[k] = old;
        self.core.nodes[new as usize].child_count = 1;
        self.core.nodes[old as usize].parent = new;
        self.core.root = new;
        self.lift_objects_on_new_planes(old);
        // An empty old root (as when the first root was a hair too small)
        // is an empty leaf now like any other.
        self.core.note_if_empty(old);
    }

    /// After a growth, the old root's faces towards the growth are split
    /// planes of the new root: objects of the old subtree touching them
    /// straddle the new root's children and move up to it.
    fn lift_objects_on_new_planes(&mut self, old: u32) {
        let root = &self.core.nodes[self.core.root as usize];
        let center = root.center;
        let touches = |b: &Aabb<V>| {
            (0..V::DIM).any(|i| b.min.get(i) <= center.get(i) && center.get(i) <= b.max.get(i))
        };
        let (mut lifted, mut stack) = (take(&mut self.work), take(&mut self.stack));
        let enter = |c: &Node<V>| touches(&c.bounds);
        self.core
            .lift_to_root(old, touches, enter, |_| {}, &mut stack, &mut lifted);
        (self.work, self.stack) = (lifted, stack);
    }

    /// A node from the free list or a new one.
    pub(crate) fn alloc_node(
        &mut self,
        bounds: Aabb<V>,
        center: V,
        parent: u32,
        level: u16,
    ) -> u32 {
        self.core.alloc(Node {
            bounds,
            center,
            items: crate::kernel::Block::default(),
            children: [NONE; 8],
            parent,
            level,
            child_count: 0,
            life: crate::kernel::Lifecycle::NEW,
        })
    }

    /// A new node for child slot `k` of `n` (linked by
    /// [`child_or_create`](crate::kernel::child_or_create)).
    pub(crate) fn new_child(&mut self, n: u32, k: usize) -> u32 {
        let node = &self.core.nodes[n as usize];
        let bounds = Self::child_bounds(node, k);
        let level = node.level - 1;
        self.alloc_node(bounds, bounds.center(), n, level)
    }

    /// Files an object in the deepest node under `start` (which contains it)
    /// that fully contains it, splitting leaves on the way as needed.
    ///
    /// A leaf keeps a single object whatever its size; when a second object
    /// arrives, the leaf's objects that fit a child move down. The work list
    /// replaces recursion, so depth costs no stack.
    pub(crate) fn place(&mut self, start: u32, slot: u32) {
        let mut work = core::mem::take(&mut self.work);
        work.push((start, slot));
        while let Some((mut n, slot)) = work.pop() {
            let aabb = self.core.store.obj(slot).aabb();
            loop {
                let node = &self.core.nodes[n as usize];
                // A node splits once it has children or holds an object
                // already; one of the minimum size never does.
                let split = node.level > 0 && (node.child_count > 0 || !node.items.is_empty());
                if split && node.child_count == 0 {
                    // A leaf is about to hold two objects: its objects that
                    // fit a child move down.
                    self.unfile_fitting(n, &mut work);
                }
                let fits = if split {
                    Self::octant_of(&self.core.nodes[n as usize], &aabb)
                } else {
                    None
                };
                match fits {
                    Some(k) => n = crate::kernel::child_or_create(self, n, k),
                    None => {
                        self.core.file(n, slot);
                        break;
                    }
                }
            }
        }
        self.work = work;
    }

    /// Moves the objects of leaf `n` that fit a child to the work list.
    fn unfile_fitting(&mut self, n: u32, work: &mut Vec<(u32, u32)>) {
        let mut i = 0;
        while i < self.core.nodes[n as usize].items.len() {
            let it = self.core.items(n)[i];
            let node = &self.core.nodes[n as usize];
            if Self::octant_of(node, &self.core.box_of(it.slot())).is_some() {
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
