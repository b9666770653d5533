//! Insertion: the pending queue and its one-pass build, placing an
//! object by its centre and size, and growing the root.

use super::{LooseOrthtree, Node};
use crate::geometry::{Aabb, Vector};
use crate::kernel::PendingSurvey;
use crate::orthtree::within_limits;
use crate::store::NONE;
use crate::{Error, OutOfBounds};

/// Doublings the root may take for one object: far more than the
/// coordinate limits ever need (a root grows from the smallest `f32` node
/// size to `2^103` in under 260).
const MAX_GROWTH: usize = 1024;

/// How many objects ahead, in the sorted order, the sorted build's filing
/// asks for an object's slot in the store (read at random there).
/// Measured at a million boxes in 2D, its memory already touched: the
/// filing pass 18.3-18.6 ms with 16, 16.5-16.8 with 32, 16.9-17.4 with 64.
const FILE_AHEAD: usize = 32;

impl<V: Vector, T> LooseOrthtree<V, T> {
    /// Checks that an object with these bounds may enter the tree.
    pub(crate) fn admit(&self, aabb: &Aabb<V>) -> Result<(), Error> {
        if !within_limits(aabb) {
            return Err(Error::WorldTooLarge);
        }
        if self.config.out_of_bounds != OutOfBounds::Grow && self.core.root != NONE {
            let (p, _) = Self::extent(aabb);
            if !self.fits_root(aabb, p) {
                return Err(Error::OutsideWorld);
            }
        }
        Ok(())
    }

    /// With a preset world, the root exists from the start, so the `Reject`
    /// and `Remove` policies judge the first insertions against it.
    pub(crate) fn make_preset_root(&mut self) {
        if let Some(w) = self.config.world
            && !self.pads.is_empty()
        {
            self.make_root(&w);
        }
    }

    /// Makes the first root, around the queued objects (and the preset
    /// world, when the minimum node size was left to this build to
    /// choose, from the queued objects).
    pub(crate) fn first_root(&mut self) -> Option<PendingSurvey<V>> {
        let survey = crate::kernel::queued_survey(&self.core);
        let mut preset = None;
        if self.pads.is_empty() {
            self.set_min_node_size(survey.cell_size());
            preset = self.config.world;
        }
        if let Some(w) = survey.world_with(preset) {
            self.make_root(&w);
        }
        Some(survey)
    }

    /// Files one queued object: the root grows to it, then it descends.
    pub(crate) fn file_queued(&mut self, slot: u32) {
        let aabb = self.core.store.obj(slot).aabb();
        let (p, _) = Self::extent(&aabb);
        // Admitted objects are within limits, so growth cannot fail;
        // and the Reject and Remove policies admitted only objects
        // that fit.
        self.grow_to(&aabb, p)
            .expect("admitted objects are within the coordinate limits");
        self.place(self.core.root, slot);
    }

    /// The bulk build of a tree that holds nothing yet (an empty root with
    /// no child) and whose root can hold every queued object, instead of
    /// filing the objects one by one. Without leaf capacity (the default)
    /// one sort by each object's node ([`LooseOrthtree::build_sorted`]);
    /// with it, a top-down partition, as the octree's (a node's objects
    /// then depend on how many reach it). Returns false, having done
    /// nothing, when the tree does not qualify.
    ///
    /// The tree is the one one-by-one insertion gives, which depends only
    /// on the objects reaching each node: a node reached by at most
    /// `leaf_capacity` objects (when it is above 0) keeps them all;
    /// otherwise each object that can go deeper (see `deeper`) goes down to
    /// the child its centre leads to, and the others stay.
    pub(crate) fn build_fresh(&mut self, pending: &[u32]) -> bool {
        if self.config.leaf_capacity == 0
            && let Some(done) = self.build_sorted(pending)
        {
            return done;
        }
        let root = self.core.root;
        let fits = |b: &Aabb<V>| self.fits_root(b, Self::extent(b).0);
        let Some(items) = self.core.fresh_items(pending, fits) else {
            return false;
        };
        let capacity = self.config.leaf_capacity;
        let stay = 1usize << V::DIM;
        // Every node is new: the query boxes are recomputed in one pass.
        self.core.mark_stale();
        let mut bufs = [items.clone(), items];
        let mut keys: Vec<u8> = Vec::new();
        let mut place = vec![(NONE, 0u32); self.core.store.capacity()];
        let mut stack = vec![(root, 0usize, pending.len(), 0usize)];
        while let Some((n, lo, hi, b)) = stack.pop() {
            let (src, dst) = split_pair(&mut bufs, b);
            let node = &self.core.nodes[n as usize];
            if node.level == 0 || (capacity > 0 && hi - lo <= capacity) {
                self.core.file_all(n, &src[lo..hi], &mut place);
                continue;
            }
            // Counting sort: the objects that stay, then each child's.
            let child_pad = self.pad(node.level - 1);
            let mut loose = [node.cell; 8];
            for (k, l) in loose.iter_mut().enumerate().take(stay) {
                *l = self.child_loose(node, k);
            }
            keys.clear();
            let mut count = [0usize; 9];
            for it in &src[lo..hi] {
                let (p, e) = Self::extent(&it.aabb);
                let k = Self::route(node.center, p);
                let deeper = e <= child_pad && loose[k].contains(&it.aabb);
                let key = (k + 1) * usize::from(deeper);
                keys.push(key as u8);
                count[key] += 1;
            }
            let mut start = [0usize; 10];
            start[0] = lo;
            for k in 0..=stay {
                start[k + 1] = start[k] + count[k];
            }
            let mut next = start;
            for (it, &k) in src[lo..hi].iter().zip(&keys) {
                dst[next[k as usize]] = *it;
                next[k as usize] += 1;
            }
            self.core.file_all(n, &dst[start[0]..start[1]], &mut place);
            for k in 0..stay {
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

    /// The bulk build of a fresh tree without leaf capacity (the
    /// default), where each object's node follows from the object alone:
    /// its level from its size, its cell there from its centre. Each
    /// object gets a key, the Morton code of that cell (the child numbers
    /// of the steps down from the root) and its depth, and one radix sort
    /// puts the objects in depth-first order of their nodes; one pass then
    /// creates the nodes on the way and files each node's objects at once.
    /// The passes of the partition build (one per level, every object
    /// moved each time) become three or four passes of the sort over
    /// 8-byte keys.
    ///
    /// The keys come from exact arithmetic (`f64`), the tree's cells from
    /// the halvings of `f32` cells (far from the origin, rounding moves
    /// them): each object is checked against the cell and loose bounds
    /// its node has, or would have, before it is filed. Cells nest
    /// exactly (a child's bounds are its parent's corner and split point)
    /// and loose bounds nest too (`f32` rounding is monotone), so an
    /// object that passes is where filing it alone would put it; the few
    /// that fail are filed alone afterwards. Nodes are made only for
    /// objects that pass: the tree is the one-by-one tree.
    ///
    /// Returns `None`, having done nothing, where the keys would not fit
    /// 64 bits or the tree is not fresh (the partition build decides);
    /// `Some(false)`, having done nothing, when the root cannot hold an
    /// object.
    fn build_sorted(&mut self, pending: &[u32]) -> Option<bool> {
        use crate::kernel::sort::{bits_below, morton, radix_sort};
        let root = self.core.root;
        let (rcell, rcenter, rlevel) = {
            let r = &self.core.nodes[root as usize];
            if pending.len() < 2 || r.child_count != 0 || !r.items.is_empty() {
                return None;
            }
            (r.cell, r.center, r.level)
        };
        let dims = V::DIM;
        let depth = usize::from(rlevel);
        let slots = pending.iter().map(|&s| u64::from(s) + 1).max().unwrap_or(0);
        let sbits = bits_below(slots);
        let dbits = bits_below(depth as u64 + 1);
        let kbits = (dims * depth) as u32;
        if kbits + dbits + sbits > 64 {
            return None;
        }
        // Keys: (Morton code of the cell, left-aligned to the full depth;
        // depth; slot), sorted on the first two.
        let min: [f64; 3] = core::array::from_fn(|a| {
            if a < dims {
                f64::from(rcell.min.get(a))
            } else {
                0.0
            }
        });
        // Per axis, cells per unit of length at the full depth (the keys
        // need not be exact: see above). An object's cell at depth `t` is
        // its cell at the full depth shifted down (scaling by a power of
        // two is exact), so its code is the full depth's with the bits
        // below depth `t` cleared.
        let full = (1u64 << depth) as f64;
        let per: [f64; 3] = core::array::from_fn(|a| {
            if a < dims {
                1.0 / (f64::from(rcell.max.get(a)) - min[a]) * full
            } else {
                0.0
            }
        });
        let mut keys = Vec::with_capacity(pending.len());
        for &slot in pending {
            let aabb = self.core.store.obj(slot).aabb();
            let (p, e) = Self::extent(&aabb);
            if !self.fits_root(&aabb, p) {
                return Some(false);
            }
            let t = depth.saturating_sub(usize::from(self.target_level(e)));
            let c: [u64; 3] = core::array::from_fn(|a| {
                if a < dims {
                    let u = (f64::from(p.get(a)) - min[a]) * per[a];
                    // Clamped first: the conversion cannot saturate.
                    u.clamp(0.0, full - 1.0) as i64 as u64
                } else {
                    0
                }
            });
            let below = (dims * (depth - t)) as u32;
            let code = morton(c, dims, depth as u32) >> below << below;
            keys.push(((code << dbits | t as u64) << sbits) | u64::from(slot));
        }
        let mut buf = Vec::new();
        radix_sort(&mut keys, &mut buf, sbits, sbits + dbits + kbits);
        drop(buf);
        // Every node is new: the query boxes are recomputed in one pass.
        self.core.mark_stale();
        // The current path: per depth, its node (`NONE` where not made
        // yet), cell and split point.
        let mut ids = vec![NONE; depth + 1];
        let mut cells = vec![rcell; depth + 1];
        let mut centers = vec![rcenter; depth + 1];
        ids[0] = root;
        let child_at = |code: u64, s: usize| -> usize {
            (code >> (kbits as usize - s * dims)) as usize & ((1 << dims) - 1)
        };
        let smask = (1u64 << sbits) - 1;
        let mut group: Vec<crate::index::Item<V>> = Vec::new();
        let mut misfits = Vec::new();
        let mut prev: Option<(u64, usize)> = None;
        let mut j = 0;
        while j < keys.len() {
            let head = keys[j] >> sbits;
            let (code, t) = (head >> dbits, (head & ((1 << dbits) - 1)) as usize);
            let mut end = j + 1;
            while end < keys.len() && keys[end] >> sbits == head {
                end += 1;
            }
            // The path down to the group's node: the previous one's as far
            // as they agree, then new steps.
            let common = prev.map_or(0, |(pc, pt): (u64, usize)| {
                let diff = (pc ^ code).checked_shl(64 - kbits).unwrap_or(0);
                let same = if diff == 0 {
                    depth
                } else {
                    diff.leading_zeros() as usize / dims
                };
                same.min(t).min(pt)
            });
            for s in common + 1..=t {
                let k = child_at(code, s);
                let up = ids[s - 1];
                let id = if up == NONE {
                    NONE
                } else {
                    self.core.nodes[up as usize].children[k]
                };
                ids[s] = id;
                if id == NONE {
                    cells[s] = Self::sub_cell(&cells[s - 1], centers[s - 1], k);
                    centers[s] = cells[s].center();
                } else {
                    let n = &self.core.nodes[id as usize];
                    (cells[s], centers[s]) = (n.cell, n.center);
                }
            }
            prev = Some((code, t));
            // The objects that the node (as it is or would be made) holds.
            let cell = cells[t];
            let loose = Self::loosen(&cell, self.pad(rlevel - t as u16));
            group.clear();
            for (q, &key) in keys[j..end].iter().enumerate() {
                if let Some(&ahead) = keys.get(j + q + FILE_AHEAD) {
                    // Its object, read here, and its place, written
                    // when its group is filed (not its generation).
                    let slot = (ahead & smask) as u32;
                    self.core.store.prefetch_obj(slot);
                    self.core.store.prefetch_place(slot);
                }
                let slot = (key & smask) as u32;
                let o = self.core.store.obj(slot);
                let aabb = o.aabb();
                if t == 0 || (Self::in_cell(&cell, aabb.center()) && loose.contains(&aabb)) {
                    group.push(crate::index::Item::new(aabb, slot, o.is_static));
                } else {
                    misfits.push(slot);
                }
            }
            j = end;
            if group.is_empty() {
                continue;
            }
            for s in 1..=t {
                if ids[s] == NONE {
                    ids[s] = crate::kernel::child_or_create(self, ids[s - 1], child_at(code, s));
                }
            }
            let n = ids[t];
            let base = self.core.file_items(n, &group);
            for (q, it) in group.iter().enumerate() {
                let s = self.core.store.place_mut(it.slot());
                s.node = n;
                s.pos = base + q as u32;
            }
        }
        for slot in misfits {
            self.place(root, slot);
        }
        Some(true)
    }

    /// Creates the root: the smallest cell of side `min_node_size * 2^k`
    /// anchored at the world's smallest corner whose half-open cell holds
    /// the whole world box (so a side strictly larger than the world's
    /// extent).
    fn make_root(&mut self, world: &Aabb<V>) {
        let extent = world.size().max_element();
        let mut level = 0u16;
        while self.side(level) <= extent {
            level += 1;
        }
        let side = self.side(level);
        let cell = Aabb {
            min: world.min,
            max: world.min + V::splat(side),
        };
        self.core.root = self.alloc_node(cell, cell.center(), NONE, level);
        // Rounding far from the origin may leave the cell short of the
        // world's upper corner, which must lie strictly inside.
        for _ in 0..MAX_GROWTH {
            let max = self.core.nodes[self.core.root as usize].cell.max;
            if (0..V::DIM).all(|i| world.max.get(i) < max.get(i)) {
                break;
            }
            self.grow_once(world.max);
        }
    }

    /// Doubles the root towards the object (centre `p`) until the root can
    /// hold it.
    ///
    /// # Errors
    /// [`Error::WorldTooLarge`] when it would take an absurd number of
    /// doublings or overflow `f32` (the coordinate limits make this
    /// unreachable).
    pub(crate) fn grow_to(&mut self, aabb: &Aabb<V>, p: V) -> Result<(), Error> {
        for _ in 0..MAX_GROWTH {
            if self.fits_root(aabb, p) {
                return Ok(());
            }
            let level = self.core.nodes[self.core.root as usize].level;
            if !self.side(level).is_finite() || level == u16::MAX {
                break;
            }
            self.grow_once(p);
        }
        Err(Error::WorldTooLarge)
    }

    /// One doubling: a new root whose split point is the old root's corner
    /// on the side of `p`, so the old root is exactly one of its children.
    /// The nominal side is used, not the stored one, which rounding may
    /// have collapsed far from the origin.
    fn grow_once(&mut self, p: V) {
        let old = self.core.root;
        let (cell, center, level) = {
            let n = &self.core.nodes[old as usize];
            (n.cell, n.center, n.level)
        };
        let side = self.side(level);
        let (mut min, mut max, mut split) = (cell.min, cell.max, cell.min);
        let mut k = 0;
        for i in 0..V::DIM {
            if p.get(i) < center.get(i) {
                // Grow downwards: the old root becomes the upper half.
                min = min.with(i, cell.min.get(i) - side);
                split = split.with(i, cell.min.get(i));
                k |= 1 << i;
            } else {
                max = max.with(i, cell.max.get(i) + side);
                split = split.with(i, cell.max.get(i));
            }
        }
        let new = self.alloc_node(Aabb { min, max }, split, NONE, level + 1);
        self.core.nodes[new as usize].children[k] = old;
        self.core.nodes[new as usize].child_count = 1;
        self.core.nodes[old as usize].parent = new;
        self.core.root = new;
        self.lift_oversized(old, new);
        self.core.note_if_empty(old);
    }

    /// After a growth: objects of the old root too big for its level (they
    /// were there only because the root was too low) move up to the new
    /// root. The rest keep their place: the new root routes their centres
    /// to the old root, whose loose bounds still hold them.
    fn lift_oversized(&mut self, old: u32, new: u32) {
        let pad = self.pad(self.core.nodes[old as usize].level);
        let mut i = 0;
        while i < self.core.nodes[old as usize].items.len() {
            let it = self.core.items(old)[i];
            let aabb = self.core.box_of(it.slot());
            if Self::extent(&aabb).1 > pad {
                self.core.unfile_at(old, i);
                self.core.file(new, it.slot());
            } else {
                i += 1;
            }
        }
    }

    /// A node from the free list or a new one, with its loose bounds.
    pub(crate) fn alloc_node(&mut self, cell: Aabb<V>, center: V, parent: u32, level: u16) -> u32 {
        let loose = Self::loosen(&cell, self.pad(level));
        self.core.alloc(Node {
            cell,
            loose,
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
        let cell = Self::child_cell(node, k);
        let level = node.level - 1;
        self.alloc_node(cell, cell.center(), n, level)
    }

    /// Files an object in its node, descending from `start` (which can hold
    /// it and lies on its path from the root) by its centre towards its
    /// level, creating children only on the way.
    ///
    /// It stops at its level; or above it in a leaf with room (see
    /// [`LooseConfig::leaf_capacity`](super::LooseConfig::leaf_capacity));
    /// or, far from the origin, where rounding leaves the next child's loose
    /// bounds a hair short of the box. A full leaf splits as the object
    /// passes: its objects that can go deeper move down. The work list
    /// replaces recursion, so depth costs no stack.
    pub(crate) fn place(&mut self, start: u32, slot: u32) {
        let capacity = self.config.leaf_capacity;
        let mut work = core::mem::take(&mut self.work);
        work.push((start, slot));
        while let Some((mut n, slot)) = work.pop() {
            let aabb = self.core.store.obj(slot).aabb();
            let (p, e) = Self::extent(&aabb);
            loop {
                let node = &self.core.nodes[n as usize];
                let leaf = node.child_count == 0;
                let full = leaf && node.items.len() >= capacity;
                let deeper = self.deeper(node, &aabb, p, e);
                if full && capacity > 0 && node.items.len() == capacity {
                    // The leaf splits: its objects that can go deeper move
                    // down. Only a leaf within its capacity can hold such
                    // objects, so a leaf over it (or capacity 0) is not
                    // scanned: a million objects at one point stay linear.
                    self.unfile_deeper(n, &mut work);
                }
                match deeper {
                    Some(k) if !leaf || full => n = crate::kernel::child_or_create(self, n, k),
                    _ => {
                        self.core.file(n, slot);
                        break;
                    }
                }
            }
        }
        self.work = work;
    }

    /// Moves the objects of node `n` that can go deeper to the work list.
    fn unfile_deeper(&mut self, n: u32, work: &mut Vec<(u32, u32)>) {
        let mut i = 0;
        while i < self.core.nodes[n as usize].items.len() {
            let it = self.core.items(n)[i];
            let aabb = self.core.box_of(it.slot());
            let node = &self.core.nodes[n as usize];
            let (p, e) = Self::extent(&aabb);
            if self.deeper(node, &aabb, p, e).is_some() {
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
