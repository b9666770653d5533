//! The queries over the grid: regions that give a bounding box (boxes,
//! spheres, view cones) and the nearest hit of a ray.
//!
//! A query meets the same cells and rows as an object of the pair search
//! would: the cells of each level that its box, grown by the level's
//! `ext`, reaches. The boxes of those rows are tested eight at a time
//! against the query's box (a ray's sixteen at a time, with its slab
//! test, where the processor has AVX-512F: most rows hold a few to a
//! dozen boxes, one step each), and only the boxes that meet it go on to the
//! tests the tree walk makes on each object (the region's own test of the
//! box, then the exact one on the shape), so the grid selects exactly what
//! the tree walk selects. A region that is its box (an `Aabb`:
//! `Region::CLASSIFIES_AS_BOUNDS`) needs no test of its own: the chunk
//! test compares the boxes with it as it is, and says which lie inside
//! ([`Grid::for_each_within`]). A frustum, which has no bounding box, is
//! answered by blocks of cells cut in halves
//! ([`Grid::for_each_classified`]).

#[cfg(target_arch = "x86_64")]
use super::lanes::with_avx2;
use super::lanes::{Planes, Slab, Test};
use super::{Grid, Kind, LANES, Query, valid};
use crate::geometry::{Aabb, Overlap, Plane, Ray, Vector};
use crate::index::{slot_of, static_of};

/// How far a query's box is grown on each side, relative to its largest
/// coordinate: far above the rounding of the region's own tests (a few
/// units in the last place), so that no object those tests select lies
/// outside the grown box.
const PAD: f32 = 1.0 / (1 << 20) as f32;

/// The boxes met by a stretch of a ray gathered before they are visited,
/// at most (a few in the unit tests, so that they fill it).
#[cfg(not(test))]
const GATHER: usize = 32;
#[cfg(test)]
const GATHER: usize = 3;

/// Rows of a query whose loads are asked for together before they are
/// tested.
const ROW_BATCH: usize = 16;

/// Cells of a block, at most, whose objects a region without a bounding
/// box (a frustum) classifies by their own boxes where it meets the
/// block in part ([`Grid::for_each_classified`]). With the eight-wide
/// test of the objects, sixteen cells counted 13% fewer instructions
/// than eight (100k spheres, the `queries` example's frustums).
const LEAF_CELLS: u64 = 16;

/// Every plane of a frustum, as a mask of [`Grid::for_each_classified`].
const ALL_PLANES: u8 = 0x3f;

/// Blocks waiting on a level's cut into halves, at most: one more than the
/// cuts down to a cell (each axis below `2^22` cells: 22 cuts an axis).
const BLOCK_STACK: usize = 3 * 23 + 2;

/// The stretches a level's walk along a ray is cut into, at most.
const MAX_STRETCHES: f32 = 256.0;

/// `[lo, hi]` of `b` on the first `d` axes, grown by [`PAD`] where `pad`
/// (as it is otherwise); `None` when a coordinate is NaN (the tree walk
/// answers those).
#[inline]
fn corners<V: Vector>(b: &Aabb<V>, pad: bool) -> Option<([f32; 3], [f32; 3])> {
    let mut lo = [0f32; 3];
    let mut hi = [0f32; 3];
    for a in 0..V::DIM {
        let (l, h) = (b.min.get(a), b.max.get(a));
        if l.is_nan() || h.is_nan() {
            return None;
        }
        let m = if pad {
            l.abs().max(h.abs()) * PAD + f32::MIN_POSITIVE
        } else {
            0.0
        };
        lo[a] = l - m;
        hi[a] = h + m;
    }
    Some((lo, hi))
}

impl Grid {
    /// The box at position `j`.
    #[inline]
    pub(crate) fn aabb_at<V: Vector>(&self, j: usize) -> Aabb<V> {
        let mut min = V::ZERO;
        let mut max = V::ZERO;
        for a in 0..V::DIM {
            min = min.with(a, self.lo[a][j]);
            max = max.with(a, self.hi[a][j]);
        }
        Aabb { min, max }
    }

    /// Prefetches the first box (first `d` axes) and the slot at
    /// position `j < n`.
    #[inline(always)]
    fn prefetch_at(&self, d: usize, j: usize) {
        for a in 0..d {
            crate::kernel::prefetch(&self.lo[a][j]);
            crate::kernel::prefetch(&self.hi[a][j]);
        }
        crate::kernel::prefetch(&self.slot[j]);
    }

    /// The store slot at position `j`.
    #[inline]
    pub(crate) fn slot_at(&self, j: usize) -> u32 {
        slot_of(self.slot[j])
    }

    /// Calls `f(j, inside)` for each position `j` of the rows `s..e` of
    /// `rows` whose box `test` selects (`inside`: with [`Test::Within`],
    /// whether the box lies wholly inside the query's; otherwise false).
    ///
    /// # Safety
    /// With [`Kind::Avx2`], the processor must have AVX2; with
    /// [`Kind::Avx512`], AVX-512F.
    #[inline(always)]
    unsafe fn test_rows(
        kind: Kind,
        bx: &super::Boxes<'_>,
        test: &Test<'_>,
        rows: &[(u32, u32)],
        f: &mut impl FnMut(usize, bool),
    ) {
        // With AVX-512F sixteen boxes a step (most rows hold a few to a
        // dozen: one step where eight a step took two, and one guess of
        // the loop's end); `bx` is padded for them (`scan_level`).
        let sixteen = kind == Kind::Avx512;
        let step = if sixteen { 2 * LANES } else { LANES };
        for &(s, e) in rows {
            let (s, e) = (s as usize, e as usize);
            let mut b = s;
            while b < e {
                // SAFETY: `kind` is AVX2 or AVX-512F only on a processor
                // that has it (this function's contract).
                let m = unsafe { bx.test(kind, test, b, sixteen) };
                let inside = m >> 16;
                let mut m = m & valid(b, e, step);
                while m != 0 {
                    let l = m.trailing_zeros();
                    f(b + l as usize, (inside >> l) & 1 != 0);
                    m &= m - 1;
                }
                b += step;
            }
        }
    }

    /// Calls `f(j, inside)` for each position `j` of level `t` whose box
    /// meets `[lo, hi]` and that `test` selects, row by row (`inside` as
    /// [`Grid::test_rows`] gives it); returns the rows visited.
    ///
    /// # Safety
    /// With [`Kind::Avx2`], the processor must have AVX2; with
    /// [`Kind::Avx512`], AVX-512F.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn scan_level(
        &self,
        kind: Kind,
        t: &super::Level,
        d: usize,
        lo: &[f32; 3],
        hi: &[f32; 3],
        test: &Test<'_>,
        f: &mut impl FnMut(usize, bool),
    ) -> u64 {
        let Some((k0, k1)) = self.cells(t, d, lo, hi) else {
            return 0;
        };
        let Some(bx) = self.boxes(d) else {
            return 0;
        };
        // (The grid's arrays hold sixteen empty boxes past the objects.)
        let bx = if kind == Kind::Avx512 {
            bx.padded16()
        } else {
            bx
        };
        let (dx, dy) = (t.dims[0], t.dims[1]);
        let mut rows = 0;
        // The rows in batches: each batch's row starts asked for first,
        // then each row's first boxes and slots, then the rows tested.
        // The loads of a batch, independent of each other, overlap their
        // cache misses (a query meets a few to a few dozen rows, each at
        // random in a large grid).
        let mut batch = [(0u32, 0u32); ROW_BATCH];
        let mut nb = 0;
        let starts = &self.cell_start;
        for z in k0[2]..k1[2] {
            for y in k0[1]..k1[1] {
                let row = (t.base + (z * dy + y) * dx) as usize;
                if let Some(c) = starts.get(row + k0[0] as usize) {
                    crate::kernel::prefetch(c);
                }
            }
        }
        for z in k0[2]..k1[2] {
            for y in k0[1]..k1[1] {
                let row = t.base + (z * dy + y) * dx;
                let s = starts[(row + k0[0]) as usize];
                let e = starts[(row + k1[0]) as usize];
                rows += 1;
                if s < e {
                    self.prefetch_at(d, s as usize);
                    batch[nb] = (s, e);
                    nb += 1;
                    if nb == ROW_BATCH {
                        // SAFETY: this function's contract.
                        unsafe { Self::test_rows(kind, &bx, test, &batch, f) };
                        nb = 0;
                    }
                }
            }
        }
        // SAFETY: this function's contract.
        unsafe { Self::test_rows(kind, &bx, test, &batch[..nb], f) };
        rows
    }

    /// The positions of the objects whose boxes meet `bounds` (grown by a
    /// hair), finest level first, each level in cell order: `f(j)` for
    /// each. Returns the rows visited, or `None` when `bounds` holds a
    /// NaN (nothing was visited; the caller walks its tree).
    pub(crate) fn for_each_meeting<V: Vector>(
        &self,
        bounds: &Aabb<V>,
        mut f: impl FnMut(usize),
    ) -> Option<u64> {
        self.meeting::<V, false>(bounds, move |j, _| f(j))
    }

    /// The positions of the objects whose boxes meet the box `region`
    /// (closed boxes, not grown: the region is that box), each with
    /// whether its box lies wholly inside: `f(j, inside)`, in the order
    /// of [`Grid::for_each_meeting`], both answers those of the region's
    /// `Aabb::classify` (tested eight at a time). Returns as
    /// [`Grid::for_each_meeting`] does.
    pub(crate) fn for_each_within<V: Vector>(
        &self,
        region: &Aabb<V>,
        f: impl FnMut(usize, bool),
    ) -> Option<u64> {
        self.meeting::<V, true>(region, f)
    }

    /// [`Grid::for_each_meeting`] (`EXACT` false) or
    /// [`Grid::for_each_within`] (`EXACT` true).
    #[inline(always)]
    fn meeting<V: Vector, const EXACT: bool>(
        &self,
        bounds: &Aabb<V>,
        f: impl FnMut(usize, bool),
    ) -> Option<u64> {
        // (Eight boxes a step with AVX-512F too: sixteen measured no
        // different for boxes, BENCHMARKS.md, the twenty-fourth session.)
        #[cfg(target_arch = "x86_64")]
        if Kind::best().is_wide() {
            // SAFETY: `best` found AVX2 on this processor (AVX-512F
            // includes it).
            return unsafe { with_avx2(|| self.meeting_in::<V, EXACT>(Kind::Avx2, bounds, f)) };
        }
        // SAFETY: the 4-wide form runs on every processor.
        unsafe { self.meeting_in::<V, EXACT>(Kind::Lanes4, bounds, f) }
    }

    /// [`Grid::meeting`] with the chunk test `kind`.
    ///
    /// # Safety
    /// With [`Kind::Avx2`], the processor must have AVX2.
    #[inline(always)]
    unsafe fn meeting_in<V: Vector, const EXACT: bool>(
        &self,
        kind: Kind,
        bounds: &Aabb<V>,
        mut f: impl FnMut(usize, bool),
    ) -> Option<u64> {
        let d = V::DIM;
        let (lo, hi) = corners(bounds, !EXACT)?;
        let q = Query::of(d - 1, &lo, &hi);
        let mut rows = 0;
        let test = if EXACT {
            Test::Within(&q)
        } else {
            Test::Boxes(&q)
        };
        for &l in self.used.iter().rev() {
            let t = &self.levels[l as usize];
            // SAFETY: this function's contract.
            rows += unsafe { self.scan_level(kind, t, d, &lo, &hi, &test, &mut f) };
        }
        Some(rows)
    }

    /// The positions of the objects that `classify` does not put outside,
    /// for a region without a bounding box (a frustum), each with whether
    /// it lies wholly inside: `f(j, inside)`, finest level first. Each
    /// level is cut in halves, its longest side (in cells) first, from the
    /// whole level down to blocks of at most [`LEAF_CELLS`] cells. A
    /// block's box is its cells grown by the level's `ext` and a hair, so
    /// it holds the box of every object filed in them (as the pair search
    /// and [`Grid::for_each_meeting`] rely on): a block outside is
    /// skipped, one inside gives all its objects as inside (as the tree
    /// walk takes a subtree inside whole), and the objects of a small
    /// block partly inside are classified by their own boxes.
    ///
    /// Where the region gives its `planes` (a frustum, whose `classify`
    /// is their test), the blocks are classified by the planes, each
    /// against those its parent block did not lie wholly inside (by the
    /// rule above: a block inside a plane holds only objects inside it),
    /// and the objects of a small block eight at a time against the
    /// planes left ([`super::Boxes::classify_planes`], the arithmetic of
    /// `Frustum::classify_aabb`). Returns the blocks classified.
    pub(crate) fn for_each_classified<V: Vector>(
        &self,
        classify: impl Fn(&Aabb<V>) -> Overlap,
        planes: Option<&[Plane<V>; 6]>,
        f: impl FnMut(usize, bool),
    ) -> u64 {
        let planes = planes.map(Planes::of);
        #[cfg(target_arch = "x86_64")]
        if planes.is_some() && Kind::best().is_wide() {
            // SAFETY: `best` found AVX2 on this processor (AVX-512F
            // includes it).
            return unsafe { self.classified_avx2(classify, planes.as_ref(), f) };
        }
        // SAFETY: the 4-wide form runs on every processor.
        unsafe { self.classified_in(Kind::Lanes4, classify, planes.as_ref(), f) }
    }

    /// [`Grid::classified_in`] with the 8-wide test, compiled for AVX2 as
    /// a whole (through a closure, as [`with_avx2`] takes its body, the
    /// 8-wide operations were not inlined: every one a call, and the
    /// frustum 2.4 times slower on an AMD Zen 1).
    ///
    /// # Safety
    /// The processor must have AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn classified_avx2<V: Vector>(
        &self,
        classify: impl Fn(&Aabb<V>) -> Overlap,
        planes: Option<&Planes>,
        f: impl FnMut(usize, bool),
    ) -> u64 {
        // SAFETY: this function's contract.
        unsafe { self.classified_in(Kind::Avx2, classify, planes, f) }
    }

    /// [`Grid::for_each_classified`] with the chunk test `kind` (for
    /// the objects of a frustum's small blocks met in part).
    ///
    /// # Safety
    /// With [`Kind::Avx2`], the processor must have AVX2.
    #[inline(always)]
    unsafe fn classified_in<V: Vector>(
        &self,
        kind: Kind,
        classify: impl Fn(&Aabb<V>) -> Overlap,
        planes: Option<&Planes>,
        mut f: impl FnMut(usize, bool),
    ) -> u64 {
        let d = V::DIM;
        let bx = self.boxes(d);
        let mut blocks = 0;
        // Each block with the planes it may lie outside of, in part (bit
        // `i` for plane `i`): those its parent did not lie wholly inside.
        let mut stack = [([0u32; 3], [0u32; 3], ALL_PLANES); BLOCK_STACK];
        for &l in self.used.iter().rev() {
            let t = &self.levels[l as usize];
            let side = 1.0 / t.inv;
            stack[0] = ([0; 3], t.dims, ALL_PLANES);
            let mut top = 1;
            while top > 0 {
                top -= 1;
                let (k0, k1, active) = stack[top];
                blocks += 1;
                let (mut lo, mut hi) = ([0f32; 3], [0f32; 3]);
                for a in 0..d {
                    let l = self.origin[a] + (k0[a] as f32 - t.ext) * side;
                    let h = self.origin[a] + (k1[a] as f32 + t.ext) * side;
                    let m = l.abs().max(h.abs()) * PAD + f32::MIN_POSITIVE;
                    (lo[a], hi[a]) = (l - m, h + m);
                }
                let (class, active) = match planes {
                    Some(p) => match p.classify_box(d, &lo, &hi, active) {
                        None => (Overlap::Outside, 0),
                        Some(0) => (Overlap::Inside, 0),
                        Some(left) => (Overlap::Partial, left),
                    },
                    None => {
                        let mut b = Aabb {
                            min: V::ZERO,
                            max: V::ZERO,
                        };
                        for a in 0..d {
                            b.min = b.min.with(a, lo[a]);
                            b.max = b.max.with(a, hi[a]);
                        }
                        (classify(&b), ALL_PLANES)
                    }
                };
                match class {
                    Overlap::Outside => continue,
                    Overlap::Inside => {
                        self.for_each_in_block(t, (k0, k1), 0, |s, e| {
                            for j in s..e {
                                f(j, true);
                            }
                        });
                        continue;
                    }
                    Overlap::Partial => {}
                }
                let cells: u64 = (0..d).map(|a| u64::from(k1[a] - k0[a])).product();
                if cells <= LEAF_CELLS {
                    if let (Some(p), Some(bx)) = (planes, &bx) {
                        // (A loop, not a closure given to
                        // `for_each_in_block`, so that the 8-wide test
                        // inlines into this search compiled for AVX2.)
                        let mut rows = BlockRows::new(t, (k0, k1));
                        while let Some(batch) = rows.next(self, d) {
                            for &(s, e) in batch {
                                let (mut b, e) = (s as usize, e as usize);
                                while b < e {
                                    // SAFETY: `kind` is AVX2 only on a
                                    // processor that has it (this
                                    // function's contract).
                                    let (m, inside) =
                                        unsafe { bx.classify_planes(kind, p, active, b) };
                                    let mut m = m & valid(b, e, LANES);
                                    while m != 0 {
                                        let l = m.trailing_zeros();
                                        f(b + l as usize, inside & (1 << l) != 0);
                                        m &= m - 1;
                                    }
                                    b += LANES;
                                }
                            }
                        }
                    } else {
                        self.for_each_in_block(t, (k0, k1), d, |s, e| {
                            for j in s..e {
                                match classify(&self.aabb_at(j)) {
                                    Overlap::Outside => {}
                                    class => f(j, class == Overlap::Inside),
                                }
                            }
                        });
                    }
                    continue;
                }
                // The longest side cut in two, the lower half searched
                // first.
                let a = (0..d).max_by_key(|&a| k1[a] - k0[a]).unwrap_or(0);
                let mid = k0[a] + (k1[a] - k0[a]) / 2;
                let (mut low_end, mut high_start) = (k1, k0);
                low_end[a] = mid;
                high_start[a] = mid;
                stack[top] = (high_start, k1, active);
                stack[top + 1] = (k0, low_end, active);
                top += 2;
            }
        }
        blocks
    }

    /// `f(s, e)` for each row of the cells `k0..k1` (per axis) of level
    /// `t` that holds objects: their positions `s..e`, in the batches of
    /// [`BlockRows`].
    #[inline(always)]
    fn for_each_in_block(
        &self,
        t: &super::Level,
        block: ([u32; 3], [u32; 3]),
        axes: usize,
        mut f: impl FnMut(usize, usize),
    ) {
        let mut rows = BlockRows::new(t, block);
        while let Some(batch) = rows.next(self, axes) {
            for &(s, e) in batch {
                if s < e {
                    f(s as usize, e as usize);
                }
            }
        }
    }

    /// The positions of the objects whose boxes the ray may enter within
    /// the limit, front to back by stretches: `visit(j, limit)` for each,
    /// returning the limit from then on (the distance of the best hit so
    /// far). Returns the rows visited.
    ///
    /// Each level is walked in stretches about one cell (grown by the
    /// level's `ext`) long; the stretch's box, grown by `ext` and a hair,
    /// gives the cells whose objects it can meet. The levels go in step
    /// (the one whose next stretch starts nearest goes next), so a hit in
    /// any level shortens the walk of all, and a level stops once its next
    /// stretch starts beyond the limit. An object hit at distance `t` has
    /// the hit point in its box and on the stretch holding `t`, so its box
    /// meets that stretch's box and it is visited.
    pub(crate) fn ray_walk<V: Vector>(
        &self,
        ray: &Ray<V>,
        limit: f32,
        touch: impl Fn(usize),
        visit: impl FnMut(usize, f32) -> f32,
    ) -> u64 {
        #[cfg(target_arch = "x86_64")]
        match Kind::best() {
            Kind::Avx512 => {
                // SAFETY: `best` found AVX-512F on this processor.
                return unsafe { self.ray_walk_avx512((ray, limit), (touch, visit)) };
            }
            Kind::Avx2 => {
                // SAFETY: `best` found AVX2 on this processor.
                return unsafe {
                    with_avx2(|| self.ray_walk_in(Kind::Avx2, ray, limit, touch, visit))
                };
            }
            Kind::Lanes4 => {}
        }
        // SAFETY: the 4-wide form runs on every processor.
        unsafe { self.ray_walk_in(Kind::Lanes4, ray, limit, touch, visit) }
    }

    /// [`Grid::ray_walk`] with the chunk test `kind`.
    ///
    /// # Safety
    /// With [`Kind::Avx2`], the processor must have AVX2; with
    /// [`Kind::Avx512`], AVX-512F.
    #[inline(always)]
    unsafe fn ray_walk_in<V: Vector>(
        &self,
        kind: Kind,
        ray: &Ray<V>,
        mut limit: f32,
        touch: impl Fn(usize),
        mut visit: impl FnMut(usize, f32) -> f32,
    ) -> u64 {
        let d = V::DIM;
        let mut rows = 0;
        // Per level in use: where its next stretch starts and where its
        // walk ends (the ray clipped to the level's reach).
        let mut walk = [(0f32, 0f32); 64];
        let mut step = [0f32; 64];
        let nw = self.used.len();
        let (mut o_max, mut d_max) = (0f32, 0f32);
        // The slab test's values are the tree's (`FastRay`), so that the
        // 8-wide test gives its answers.
        let fast = crate::traverse::FastRay::new(ray);
        let (mut origin, mut inv) = ([0f32; 3], [0f32; 3]);
        for a in 0..d {
            o_max = o_max.max(ray.origin.get(a).abs());
            d_max = d_max.max(ray.dir.get(a).abs());
            origin[a] = fast.origin.get(a);
            inv[a] = fast.inv.get(a);
        }
        let slab = Slab::of(d - 1, &origin, &inv);
        for (w, &l) in self.used.iter().enumerate() {
            let t = &self.levels[l as usize];
            let side = 1.0 / t.inv;
            let mut reach = Aabb {
                min: V::ZERO,
                max: V::ZERO,
            };
            for a in 0..d {
                let lo = self.origin[a] - (t.ext + 1.0) * side;
                let hi = self.origin[a] + (t.dims[a] as f32 + t.ext + 1.0) * side;
                let m = lo.abs().max(hi.abs()) * PAD;
                reach.min = reach.min.with(a, lo - m);
                reach.max = reach.max.with(a, hi + m);
            }
            // A level the ray misses is marked done (start above end).
            walk[w] = ray.clip_aabb(&reach, limit).unwrap_or((1.0, 0.0));
            // Stretches of a cell grown by `ext`, but at most
            // `MAX_STRETCHES` of them (a long, thin world: the rows of a
            // longer stretch are few there).
            let (t0, tb) = walk[w];
            step[w] = ((1.0 + 2.0 * t.ext) / t.inv).max((tb - t0) / MAX_STRETCHES);
        }
        loop {
            let mut wi = usize::MAX;
            let mut near = f32::INFINITY;
            for (w, &(t0, tb)) in walk[..nw].iter().enumerate() {
                if t0 <= tb && t0 <= limit && t0 < near {
                    (wi, near) = (w, t0);
                }
            }
            if wi == usize::MAX {
                break;
            }
            let t = &self.levels[self.used[wi] as usize];
            let (t0, tb) = walk[wi];
            let mut t1 = (t0 + step[wi]).min(tb).min(limit);
            if t1 <= t0 || t1.is_nan() {
                // No progress (a start far out along the ray, where a
                // stretch is below its rounding): the rest in one.
                t1 = tb.min(limit).max(t0);
            }
            let (p0, p1) = (ray.at(t0), ray.at(t1));
            // The points' rounding is relative to the origin and to the
            // distance, not to the points.
            let m = (o_max + t1 * d_max) * PAD + f32::MIN_POSITIVE;
            let mut lo = [0f32; 3];
            let mut hi = [0f32; 3];
            for a in 0..d {
                let (u, v) = (p0.get(a), p1.get(a));
                lo[a] = u.min(v) - m;
                hi[a] = u.max(v) + m;
            }
            let q = Query::of(d - 1, &lo, &hi);
            // The stretch's box, and the ray's slab test (the same the
            // visit makes, on eight boxes at once) within the limit as it
            // stands when each chunk is tested (a hit only shortens it).
            let lim = core::cell::Cell::new(limit);
            let test = Test::Ray(&q, &slab, &lim);
            // The stretch's boxes met are gathered, their objects asked
            // for (`touch`), then visited in order: the objects' cache
            // misses overlap.
            let mut got = [0u32; GATHER];
            let mut ng = 0;
            // SAFETY: this function's contract.
            rows += unsafe {
                self.scan_level(kind, t, d, &lo, &hi, &test, &mut |j, _| {
                    if ng == GATHER {
                        for &g in &got {
                            lim.set(visit(g as usize, lim.get()));
                        }
                        ng = 0;
                    }
                    touch(j);
                    got[ng] = j as u32;
                    ng += 1;
                })
            };
            for &g in &got[..ng] {
                lim.set(visit(g as usize, lim.get()));
            }
            limit = lim.get();
            // Done when the stretch reached the end or the limit, or could
            // not advance (rounding, or a NaN).
            walk[wi].0 = if t1 >= tb || t1 >= limit || t1 <= t0 || t1.is_nan() {
                f32::INFINITY
            } else {
                t1
            };
        }
        rows
    }

    /// [`Grid::ray_walk`] with the 16-wide steps, compiled for AVX-512F
    /// as a whole (through a closure, as [`with_avx2`] takes its body,
    /// the 16-wide operations were not inlined: every one a call, and
    /// rays five times slower).
    ///
    /// # Safety
    /// The processor must have AVX-512F.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f")]
    unsafe fn ray_walk_avx512<V: Vector>(
        &self,
        (ray, limit): (&Ray<V>, f32),
        (touch, visit): (impl Fn(usize), impl FnMut(usize, f32) -> f32),
    ) -> u64 {
        // SAFETY: this function's contract.
        unsafe { self.ray_walk_in(Kind::Avx512, ray, limit, touch, visit) }
    }
}

/// The rows of a block of cells `k0..k1` (per axis) of a level, a batch
/// of at most [`ROW_BATCH`] at a time, as [`Grid::scan_level`] takes
/// them: the batch's row starts asked for first, then each row's first
/// slot (and box, on the first `axes` axes), so that their cache misses
/// overlap before the rows are read.
struct BlockRows {
    base: u32,
    dims: [u32; 2],
    x: (u32, u32),
    y: (u32, u32),
    z_end: u32,
    at: (u32, u32),
    batch: [(u32, u32); ROW_BATCH],
}

impl BlockRows {
    #[inline(always)]
    fn new(t: &super::Level, (k0, k1): ([u32; 3], [u32; 3])) -> Self {
        BlockRows {
            base: t.base,
            dims: [t.dims[0], t.dims[1]],
            x: (k0[0], k1[0]),
            y: (k0[1], k1[1]),
            z_end: k1[2],
            at: (k0[1], if k0[1] < k1[1] { k0[2] } else { k1[2] }),
            batch: [(0, 0); ROW_BATCH],
        }
    }

    /// The next rows' positions `(s, e)` (empty ones included),
    /// prefetched; `None` once every row was given.
    #[inline(always)]
    fn next(&mut self, g: &Grid, axes: usize) -> Option<&[(u32, u32)]> {
        let batch = &mut self.batch;
        let [dx, dy] = self.dims;
        let mut n = 0;
        while n < ROW_BATCH && self.at.1 < self.z_end {
            let (y, z) = self.at;
            batch[n].0 = self.base + (z * dy + y) * dx;
            n += 1;
            self.at = if y + 1 < self.y.1 {
                (y + 1, z)
            } else {
                (self.y.0, z + 1)
            };
        }
        let starts = &g.cell_start;
        for r in &batch[..n] {
            crate::kernel::prefetch(&starts[(r.0 + self.x.0) as usize]);
        }
        for r in &mut batch[..n] {
            let (s, e) = (
                starts[(r.0 + self.x.0) as usize],
                starts[(r.0 + self.x.1) as usize],
            );
            if s < e {
                g.prefetch_at(axes, s as usize);
            }
            *r = (s, e);
        }
        (n > 0).then_some(&batch[..n])
    }
}

impl Grid {
    /// Checks a built grid against the objects it was built from: the
    /// same objects with the same boxes and flags, sorted by cell, each in
    /// its cell's range (a change that skipped the kernel's marks leaves
    /// the grid fresh but wrong, and this catches it).
    pub(crate) fn check<V: Vector>(&self, items: &[crate::index::Item<V>]) -> Result<(), String> {
        if !self.ok {
            return Ok(());
        }
        if self.n > 0 && self.boxes(V::DIM).is_none() {
            return Err(format!(
                "the grid's box arrays are shorter than its {} objects and their padding",
                self.n
            ));
        }
        let key = |slot: u32, lo: [f32; 3], hi: [f32; 3], st: bool| {
            (slot, lo.map(f32::to_bits), hi.map(f32::to_bits), st)
        };
        let mut want: Vec<_> = items
            .iter()
            .map(|it| {
                let mut lo = [0f32; 3];
                let mut hi = [0f32; 3];
                for a in 0..V::DIM {
                    lo[a] = it.aabb.min.get(a);
                    hi[a] = it.aabb.max.get(a);
                }
                key(it.slot(), lo, hi, it.is_static())
            })
            .collect();
        let mut have: Vec<_> = (0..self.n)
            .map(|j| {
                let mut lo = [0f32; 3];
                let mut hi = [0f32; 3];
                for a in 0..V::DIM {
                    lo[a] = self.lo[a][j];
                    hi[a] = self.hi[a][j];
                }
                key(slot_of(self.slot[j]), lo, hi, static_of(self.slot[j]))
            })
            .collect();
        want.sort_unstable();
        have.sort_unstable();
        if want != have {
            return Err(format!(
                "the grid is marked up to date but holds other objects or boxes than the tree ({} against {})",
                have.len(),
                want.len()
            ));
        }
        if self.n == 0 {
            return Ok(());
        }
        // Each object within its cell grown by its level's `ext` (the
        // sort files it in the cell of its centre; a refit may leave it
        // drifting out, as far as `ext`).
        for (l, lv) in self.levels.iter().enumerate() {
            let first = lv.base as usize;
            for c in first..first + lv.cells() as usize {
                let k = super::coords(lv, c);
                let range = self.cell_start[c] as usize..self.cell_start[c + 1] as usize;
                if range.end > range.start && !self.used.contains(&(l as u32)) {
                    return Err(format!("cell {c} holds objects of a level marked empty"));
                }
                for j in range {
                    for a in 0..V::DIM {
                        let u0 = (self.lo[a][j] - self.origin[a]) * lv.inv;
                        let u1 = (self.hi[a][j] - self.origin[a]) * lv.inv;
                        let kf = k[a] as f32;
                        if !(kf - u0 <= lv.ext && u1 - (kf + 1.0) <= lv.ext) {
                            return Err(format!(
                                "grid position {j} sticks out of its cell {c} by more than its level's reach {}",
                                lv.ext
                            ));
                        }
                    }
                }
            }
        }
        Ok(())
    }
}
