//! A linear (pointerless) loose octree with dense hot data: the prototype
//! kernel of issue 10, spheres only, 3D.
//!
//! Layout. Every object lives once, in tree order, in dense arrays: its box
//! as six `f32` arrays (structure of arrays, padded with `LANES` empty boxes
//! so that a chunk of 8 can always be loaded), its sphere (`[cx, cy, cz, r]`,
//! for the exact test), its `Meta` (slot, layer, mask, static flag) and its
//! cell key. `pos_of_slot` maps a slot to its position.
//!
//! Cells. Level `L` cuts the root cube into `2^L` cells per axis; an object
//! goes to the deepest level whose cell is at least twice its radius
//! (looseness 2), capped at the level whose cells are not below
//! `min_cell` (and at most 4 cells per object in the finest level's
//! table), and to the cell of its centre there. Its key is
//! `base[L] + (z * dim + y) * dim + x` (row-major inside a level), so the
//! objects sorted by key are sorted by (level, z, y, x) and a run of cells
//! along x is one contiguous range. `cell_start[k]..cell_start[k + 1]` is
//! cell `k`'s range: a dense table over every cell of the levels in use.
//!
//! Frame. `refresh` reads every object's new sphere (in tree order, through
//! its slot), computes its key and counts it per cell; a prefix sum gives
//! the cells' ranges; one backward pass scatters every object to its new
//! position (a counting sort: most objects keep their key, so the scatter
//! is nearly sequential), computing its box on the way. Each level keeps
//! the largest amount by which one of its objects sticks out of its cell
//! (`ext`), so that a query needs only the cells that can hold an overlap.
//!
//! Pairs. For each object, at its own level the cells its box reaches
//! (grown by `ext`), forward rows only and positions after its own; at
//! every coarser level all the cells its box reaches. Each row is one
//! contiguous range, tested 8 candidates at a time (two SSE `Vec4` lanes
//! per coordinate, no data-dependent branch), acting on the hit mask. Each
//! unordered pair is found exactly once.

use sparti::glam::{IVec3, Vec3, Vec3A, Vec4};
use sparti::{Aabb, Ray, Sphere};

/// Candidates tested together.
pub const LANES: usize = 8;

/// What the filter reads, cold (read only on box hits and by the scatter).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Meta {
    pub slot: u32,
    pub layer: u32,
    pub mask: u32,
    pub is_static: u32,
}

impl Meta {
    pub fn new(slot: u32) -> Self {
        Meta {
            slot,
            layer: 1,
            mask: u32::MAX,
            is_static: 0,
        }
    }

    /// sparti's rule (`Object::pairs_with`, without the layer matrix): not
    /// both static, each one's layer in the other's mask.
    #[inline(always)]
    pub fn pairs_with(&self, o: &Meta) -> bool {
        ((self.is_static & o.is_static) == 0)
            & (self.layer & o.mask != 0)
            & (o.layer & self.mask != 0)
    }
}

#[derive(Clone, Copy, Debug)]
struct Level {
    /// Cell side and its inverse.
    c: f32,
    inv: f32,
    /// log2 of the cells per axis.
    shift: u32,
    /// Key of the level's first cell.
    base: u32,
    /// How far an object of the level sticks out of its cell, at most, this
    /// frame, plus a slack for the query's rounding (negative: no object).
    ext: f32,
}

pub struct Config {
    /// The root cube's lower corner and side.
    pub origin: Vec3,
    pub side: f32,
    /// Smallest cell side: objects smaller than its half go to that level.
    pub min_cell: f32,
}

pub struct LinearLoose {
    origin: Vec3,
    side: f32,
    slack: f32,
    levels: Vec<Level>,
    /// Levels holding objects this frame, coarsest first.
    used: Vec<usize>,
    n: usize,
    // Hot, tree order, padded with LANES empty boxes.
    minx: Vec<f32>,
    miny: Vec<f32>,
    minz: Vec<f32>,
    maxx: Vec<f32>,
    maxy: Vec<f32>,
    maxz: Vec<f32>,
    /// The spheres (exact test), tree order, structure of arrays.
    sph: [Vec<f32>; 4],
    meta: Vec<Meta>,
    key: Vec<u32>,
    // The scatter's destination, swapped with the above after it.
    sph_b: [Vec<f32>; 4],
    meta_b: Vec<Meta>,
    key_b: Vec<u32>,
    cell_start: Vec<u32>,
    pos_of_slot: Vec<u32>,
    /// Box hits waiting for the exact test: positions `[i, j]`.
    cand: Vec<[u32; 2]>,
    /// Pairs found, slots, waiting for the callback.
    found: Vec<(u32, u32)>,
    /// Counters of the last `for_each_pair` (when `COUNT`).
    pub rows: u64,
    pub chunks: u64,
    pub box_hits: u64,
    /// AVX2 detected (and not turned off by `KERNEL_NO_AVX`), for the queries.
    avx: bool,
    /// A ray's interval, in loose cells of the level it walks
    /// (`KERNEL_RAY_STEP`).
    ray_step: f32,
    /// Read the objects in slot order (experiment): each one's sphere is
    /// written to its old position (`rec`, one 16-byte record), then keyed
    /// in tree order; instead of reading the spheres in tree order through
    /// the slot (random reads at 1M).
    /// Set before `build`.
    pub slot_order: bool,
    rec: Vec<[f32; 4]>,
}

/// Candidate buffer: flushed (exact tests) when this full.
const CAND: usize = 1024;

/// An object's box, the query.
#[derive(Clone, Copy)]
struct Q {
    lo: [Vec4; 3],
    hi: [Vec4; 3],
    /// min x, y, z, max x, y, z (the AVX2 path broadcasts them).
    s: [f32; 6],
}

/// Turn counting on (costs a little; for the figures in the report only).
const COUNT: bool = false;

/// `x` one float step up or down when `go` (sparti's `Sphere::aabb`
/// widening, copied: it is private there).
#[inline(always)]
pub(crate) fn step(x: f32, go: bool, up: bool) -> f32 {
    let b = x.to_bits();
    let away = (x > 0.0) == up;
    let moved = if x == 0.0 {
        if up { 1 } else { 0x8000_0001 }
    } else if away {
        b.wrapping_add(1)
    } else {
        b.wrapping_sub(1)
    };
    f32::from_bits(if go && x.is_finite() { moved } else { b })
}

/// `Sphere::aabb` on one axis of 8 spheres at once: bit for bit the same
/// (same operations in the same order), written so that it vectorises.
#[inline(always)]
pub(crate) fn lohi8(c: &[f32; 8], r: &[f32; 8], lo: &mut [f32; 8], hi: &mut [f32; 8]) {
    for l in 0..8 {
        let (c, r) = (c[l], r[l]);
        let (min, max) = (c - r, c + r);
        let t = min - c;
        let e_min = (c - (min - t)) + (-r - t);
        let u = max - c;
        let e_max = (c - (max - u)) + (r - u);
        lo[l] = step(min, e_min < 0.0, false);
        hi[l] = step(max, e_max > 0.0, true);
    }
}

/// The boxes, as slices of known length (`n + LANES`).
struct Boxes<'a> {
    minx: &'a [f32],
    miny: &'a [f32],
    minz: &'a [f32],
    maxx: &'a [f32],
    maxy: &'a [f32],
    maxz: &'a [f32],
}

impl Boxes<'_> {
    /// Box test of the query against the 8 boxes at `b..b + 8`: bit `l` set
    /// when box `b + l` overlaps (closed). Branch-free.
    #[inline(always)]
    fn chunk<const AVX: bool>(&self, q: &Q, b: usize) -> u32 {
        #[cfg(target_arch = "x86_64")]
        if AVX {
            use std::arch::x86_64::*;
            debug_assert!(b + LANES <= self.minx.len());
            // SAFETY: AVX is only true on the path `for_each_pair` takes
            // after detecting AVX2 at run time; the loads are in bounds as
            // for `ld` below (`b < e <= n`, slices of length `n + LANES`).
            unsafe {
                let ld = |v: &[f32]| _mm256_loadu_ps(v.as_ptr().add(b));
                let le = |a: __m256, x: f32| _mm256_cmp_ps::<_CMP_LE_OQ>(a, _mm256_set1_ps(x));
                let ge = |a: __m256, x: f32| _mm256_cmp_ps::<_CMP_GE_OQ>(a, _mm256_set1_ps(x));
                let m = _mm256_and_ps(
                    _mm256_and_ps(
                        _mm256_and_ps(le(ld(self.minx), q.s[3]), ge(ld(self.maxx), q.s[0])),
                        _mm256_and_ps(le(ld(self.miny), q.s[4]), ge(ld(self.maxy), q.s[1])),
                    ),
                    _mm256_and_ps(le(ld(self.minz), q.s[5]), ge(ld(self.maxz), q.s[2])),
                );
                return _mm256_movemask_ps(m) as u32;
            }
        }
        #[inline(always)]
        fn ld(v: &[f32], b: usize) -> (Vec4, Vec4) {
            debug_assert!(b + LANES <= v.len());
            // SAFETY: `chunk` is called with `b < e <= n` and every box
            // slice has length `n + LANES` (the padding), so `b..b + 8` is
            // in bounds. Measured: the checked slice cost 12 bounds checks
            // per chunk, about 80 instructions per object per frame.
            unsafe {
                let p = v.as_ptr().add(b);
                (
                    Vec4::from(p.cast::<[f32; 4]>().read_unaligned()),
                    Vec4::from(p.add(4).cast::<[f32; 4]>().read_unaligned()),
                )
            }
        }
        let (ax, bx) = ld(self.minx, b);
        let (cx, dx) = ld(self.maxx, b);
        let (ay, by) = ld(self.miny, b);
        let (cy, dy) = ld(self.maxy, b);
        let (az, bz) = ld(self.minz, b);
        let (cz, dz) = ld(self.maxz, b);
        let m0 = ax.cmple(q.hi[0])
            & cx.cmpge(q.lo[0])
            & ay.cmple(q.hi[1])
            & cy.cmpge(q.lo[1])
            & az.cmple(q.hi[2])
            & cz.cmpge(q.lo[2]);
        let m1 = bx.cmple(q.hi[0])
            & dx.cmpge(q.lo[0])
            & by.cmple(q.hi[1])
            & dy.cmpge(q.lo[1])
            & bz.cmple(q.hi[2])
            & dz.cmpge(q.lo[2]);
        m0.bitmask() | (m1.bitmask() << 4)
    }
}

impl LinearLoose {
    pub fn new(cfg: Config) -> Self {
        let mut levels = Vec::new();
        let mut base = 0u32;
        let mut l = 0u32;
        loop {
            let c = cfg.side / (1u64 << l) as f32;
            if l > 0 && (c < cfg.min_cell || l > 9) {
                break;
            }
            levels.push(Level {
                c,
                inv: 1.0 / c,
                shift: l,
                base,
                ext: -1.0,
            });
            base += 1 << (3 * l);
            l += 1;
        }
        LinearLoose {
            origin: cfg.origin,
            side: cfg.side,
            slack: cfg.side * 4e-6,
            levels,
            used: Vec::new(),
            n: 0,
            minx: Vec::new(),
            miny: Vec::new(),
            minz: Vec::new(),
            maxx: Vec::new(),
            maxy: Vec::new(),
            maxz: Vec::new(),
            sph: Default::default(),
            meta: Vec::new(),
            key: Vec::new(),
            sph_b: Default::default(),
            meta_b: Vec::new(),
            key_b: Vec::new(),
            cell_start: vec![0; base as usize + 1],
            pos_of_slot: Vec::new(),
            cand: vec![[0; 2]; CAND + 2 * LANES],
            found: Vec::new(),
            rows: 0,
            chunks: 0,
            box_hits: 0,
            #[cfg(target_arch = "x86_64")]
            avx: std::arch::is_x86_feature_detected!("avx2")
                && std::env::var_os("KERNEL_NO_AVX").is_none(),
            #[cfg(not(target_arch = "x86_64"))]
            avx: false,
            ray_step: std::env::var("KERNEL_RAY_STEP")
                .ok()
                .map_or(1.0, |s| s.parse().unwrap()),
            slot_order: false,
            rec: Vec::new(),
        }
    }

    /// Cells in the table (all levels up to the finest).
    pub fn cells(&self) -> usize {
        self.cell_start.len() - 1
    }

    pub fn levels_used(&self) -> Vec<(u32, f32, usize)> {
        let mut v = Vec::new();
        for (li, lv) in self.levels.iter().enumerate() {
            let end = self
                .levels
                .get(li + 1)
                .map_or(self.cell_start.len() - 1, |n| n.base as usize);
            let count = (self.cell_start[end] - self.cell_start[lv.base as usize]) as usize;
            if count > 0 {
                v.push((lv.shift, lv.c, count));
            }
        }
        v
    }

    /// Bytes held, per object.
    pub fn bytes(&self) -> usize {
        4 * (self.minx.capacity() * 6 + self.key.capacity() * 2 + self.cell_start.capacity())
            + self.pos_of_slot.capacity() * 4
            + 4 * (self
                .sph
                .iter()
                .chain(&self.sph_b)
                .map(Vec::capacity)
                .sum::<usize>())
            + (self.meta.capacity() + self.meta_b.capacity()) * 16
            + self.cand.capacity() * 8
            + self.found.capacity() * 8
            + self.rec.capacity() * 16
    }

    /// Takes `metas` (slot `i` is `metas[i].slot == i`) and builds.
    pub fn build(&mut self, metas: Vec<Meta>, get: impl Fn(u32) -> Sphere<Vec3>) {
        let n = metas.len();
        self.n = n;
        // The dense table stays within 4 cells per object: levels finer than
        // that are dropped (their objects go to the finest kept level).
        let cap = 4 * n.max(1024);
        while self.levels.len() > 1 && (1usize << (3 * self.levels.last().unwrap().shift)) > cap {
            self.levels.pop();
        }
        let cells = self
            .levels
            .last()
            .map_or(0, |l| l.base as usize + (1 << (3 * l.shift)));
        self.cell_start = vec![0; cells + 1];
        for v in [&mut self.minx, &mut self.miny, &mut self.minz] {
            *v = vec![f32::INFINITY; n + LANES];
        }
        for v in [&mut self.maxx, &mut self.maxy, &mut self.maxz] {
            *v = vec![f32::NEG_INFINITY; n + LANES];
        }
        // Padded like the boxes: the ray's lane test loads 8 at a time.
        for v in self.sph.iter_mut() {
            *v = vec![0.0; n + LANES];
        }
        // In slot order (set before `build`) the scatter reads the records:
        // no second sphere buffer.
        for v in self.sph_b.iter_mut() {
            *v = if self.slot_order {
                Vec::new()
            } else {
                vec![0.0; n + LANES]
            };
        }
        self.meta = metas;
        self.meta_b = vec![Meta::default(); n];
        self.key = vec![0; n];
        self.key_b = vec![0; n];
        self.pos_of_slot = vec![0; n];
        self.refresh(get);
    }

    #[inline(always)]
    fn level_of(levels: &[Level], side: f32, r: f32) -> usize {
        // Deepest level whose cell side is >= 2r: floor(log2(side / 2r)),
        // from the float's exponent; then one step back if rounding said
        // too deep.
        let top = levels.len() - 1;
        let x = side / (2.0 * r);
        let e = ((x.to_bits() >> 23) as i32 - 127).clamp(0, top as i32) as usize;
        if levels[e].c < 2.0 * r && e > 0 {
            e - 1
        } else {
            e
        }
    }

    /// Reads every object's sphere (`get(slot)`), re-keys and re-sorts the
    /// objects (a counting sort over the cells, nearly sequential) and
    /// writes their boxes in the new order. No allocation.
    pub fn refresh(&mut self, get: impl Fn(u32) -> Sphere<Vec3>) {
        let n = self.n;
        self.cell_start.fill(0);
        let mut ext = [f32::NEG_INFINITY; 16];
        let o = self.origin;
        let slot_order = self.slot_order;
        let mut rec = std::mem::take(&mut self.rec);
        if slot_order {
            // The first refresh (from `build`) has no positions yet: there
            // the objects are in slot order (`metas[i].slot == i`).
            if rec.len() != n {
                rec = vec![[0.0; 4]; n];
                for (s, p) in self.pos_of_slot.iter_mut().enumerate() {
                    debug_assert_eq!(self.meta[s].slot as usize, s);
                    *p = s as u32;
                }
            }
            for (s, &p) in self.pos_of_slot[..n].iter().enumerate() {
                let c = get(s as u32);
                rec[p as usize] = [c.center.x, c.center.y, c.center.z, c.radius];
            }
        }
        {
            let [sx, sy, sz, sr] = &mut self.sph;
            let (sx, sy, sz, sr) = (&mut sx[..n], &mut sy[..n], &mut sz[..n], &mut sr[..n]);
            let (meta, key) = (&self.meta[..n], &mut self.key[..n]);
            for i in 0..n {
                let s = if slot_order {
                    let r = rec[i];
                    Sphere {
                        center: Vec3::new(r[0], r[1], r[2]),
                        radius: r[3],
                    }
                } else {
                    get(meta[i].slot)
                };
                let (c, r) = (s.center, s.radius);
                if !slot_order {
                    // (In slot order the scatter reads the record.)
                    (sx[i], sy[i], sz[i], sr[i]) = (c.x, c.y, c.z, r);
                }
                let li = Self::level_of(&self.levels, self.side, r);
                let lv = &self.levels[li];
                let dim = (1u32 << lv.shift) as f32;
                let rel = (c - o) * lv.inv;
                // Cell of the centre, clamped into the root (truncation is
                // the floor once clamped at 0).
                let kx = rel.x.clamp(0.0, dim - 1.0) as u32;
                let ky = rel.y.clamp(0.0, dim - 1.0) as u32;
                let kz = rel.z.clamp(0.0, dim - 1.0) as u32;
                // How far the sphere sticks out of that cell (<= r inside).
                let lo = o + Vec3::new(kx as f32, ky as f32, kz as f32) * lv.c;
                let out = (lo - c).max(c - (lo + Vec3::splat(lv.c))).max_element() + r;
                ext[li] = ext[li].max(out);
                let k = lv.base + (((kz << lv.shift) + ky) << lv.shift) + kx;
                key[i] = k;
                self.cell_start[k as usize] += 1;
            }
        }
        self.rec = rec;
        self.used.clear();
        for (li, lv) in self.levels.iter_mut().enumerate() {
            lv.ext = if ext[li] == f32::NEG_INFINITY {
                -1.0
            } else {
                self.used.push(li);
                ext[li].max(0.0) + self.slack
            };
        }
        // Inclusive prefix sums: cell_start[k] = end of cell k.
        let mut sum = 0u32;
        for v in self.cell_start.iter_mut() {
            sum += *v;
            *v = sum;
        }
        // Backward scatter (stable): afterwards cell_start[k] = start of k.
        if slot_order {
            // The spheres come from the records (old order) straight into
            // their new positions: no second sphere buffer.
            let [dx, dy, dz, dr] = &mut self.sph;
            let (dx, dy, dz, dr) = (&mut dx[..n], &mut dy[..n], &mut dz[..n], &mut dr[..n]);
            let rec = &self.rec[..n];
            let (meta, key) = (&self.meta[..n], &self.key[..n]);
            let (meta_b, key_b) = (&mut self.meta_b[..n], &mut self.key_b[..n]);
            for i in (0..n).rev() {
                let k = key[i] as usize;
                let d = self.cell_start[k] - 1;
                self.cell_start[k] = d;
                let d = d as usize;
                let m = meta[i];
                let r = rec[i];
                (dx[d], dy[d], dz[d], dr[d]) = (r[0], r[1], r[2], r[3]);
                meta_b[d] = m;
                key_b[d] = k as u32;
                self.pos_of_slot[m.slot as usize] = d as u32;
            }
        } else {
            let [sx, sy, sz, sr] = &self.sph;
            let [dx, dy, dz, dr] = &mut self.sph_b;
            let (sx, sy, sz, sr) = (&sx[..n], &sy[..n], &sz[..n], &sr[..n]);
            let (dx, dy, dz, dr) = (&mut dx[..n], &mut dy[..n], &mut dz[..n], &mut dr[..n]);
            let (meta, key) = (&self.meta[..n], &self.key[..n]);
            let (meta_b, key_b) = (&mut self.meta_b[..n], &mut self.key_b[..n]);
            for i in (0..n).rev() {
                let k = key[i] as usize;
                let d = self.cell_start[k] - 1;
                self.cell_start[k] = d;
                let d = d as usize;
                let m = meta[i];
                (dx[d], dy[d], dz[d], dr[d]) = (sx[i], sy[i], sz[i], sr[i]);
                meta_b[d] = m;
                key_b[d] = k as u32;
                self.pos_of_slot[m.slot as usize] = d as u32;
            }
        }
        let last = self.cell_start.len() - 1;
        self.cell_start[last] = n as u32;
        if !slot_order {
            std::mem::swap(&mut self.sph, &mut self.sph_b);
        }
        std::mem::swap(&mut self.meta, &mut self.meta_b);
        std::mem::swap(&mut self.key, &mut self.key_b);
        // The boxes, in the new order, 8 at a time (Sphere::aabb's).
        let full = n / LANES * LANES;
        let [sx, sy, sz, sr] = &self.sph;
        for b in (0..full).step_by(LANES) {
            let a = |v: &[f32]| -> [f32; 8] { v[b..b + 8].try_into().unwrap() };
            let r = a(sr);
            let mut lo = [0.0; 8];
            let mut hi = [0.0; 8];
            for (c, mn, mx) in [
                (sx, &mut self.minx, &mut self.maxx),
                (sy, &mut self.miny, &mut self.maxy),
                (sz, &mut self.minz, &mut self.maxz),
            ] {
                lohi8(&a(c), &r, &mut lo, &mut hi);
                mn[b..b + 8].copy_from_slice(&lo);
                mx[b..b + 8].copy_from_slice(&hi);
            }
        }
        for d in full..n {
            let bx = Sphere {
                center: Vec3::new(sx[d], sy[d], sz[d]),
                radius: sr[d],
            }
            .aabb();
            self.minx[d] = bx.min.x;
            self.miny[d] = bx.min.y;
            self.minz[d] = bx.min.z;
            self.maxx[d] = bx.max.x;
            self.maxy[d] = bx.max.y;
            self.maxz[d] = bx.max.z;
        }
    }

    /// Calls `f(slot_a, slot_b)` once for every overlapping pair that the
    /// filter allows.
    pub fn for_each_pair(&mut self, f: impl FnMut(u32, u32)) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2")
            && std::env::var_os("KERNEL_NO_AVX").is_none()
        {
            // SAFETY: AVX2 is present (detected just above).
            return unsafe { self.pairs_avx2(f) };
        }
        self.pairs::<false>(f)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn pairs_avx2(&mut self, f: impl FnMut(u32, u32)) {
        self.pairs::<true>(f)
    }

    #[inline(always)]
    fn pairs<const AVX: bool>(&mut self, mut f: impl FnMut(u32, u32)) {
        if COUNT {
            self.rows = 0;
            self.chunks = 0;
            self.box_hits = 0;
        }
        let n = self.n;
        let o = Vec3A::from(self.origin);
        let nl = self.levels.len();
        let mut k = 0usize;
        let mut cand = std::mem::take(&mut self.cand);
        let used = std::mem::take(&mut self.used);
        for (ui, &li) in used.iter().enumerate() {
            let lv = self.levels[li];
            let first = self.cell_start[lv.base as usize] as usize;
            let last = if li + 1 < nl {
                self.cell_start[self.levels[li + 1].base as usize] as usize
            } else {
                n
            };
            for i in first..last {
                let bx = Boxes {
                    minx: &self.minx[..n + LANES],
                    miny: &self.miny[..n + LANES],
                    minz: &self.minz[..n + LANES],
                    maxx: &self.maxx[..n + LANES],
                    maxy: &self.maxy[..n + LANES],
                    maxz: &self.maxz[..n + LANES],
                };
                let min = Vec3A::new(bx.minx[i], bx.miny[i], bx.minz[i]);
                let max = Vec3A::new(bx.maxx[i], bx.maxy[i], bx.maxz[i]);
                let q = Q {
                    lo: [Vec4::splat(min.x), Vec4::splat(min.y), Vec4::splat(min.z)],
                    hi: [Vec4::splat(max.x), Vec4::splat(max.y), Vec4::splat(max.z)],
                    s: [min.x, min.y, min.z, max.x, max.y, max.z],
                };
                let own = self.key[i] - lv.base;
                let mask = (1u32 << lv.shift) - 1;
                let (yi, zi) = ((own >> lv.shift) & mask, own >> (2 * lv.shift));
                for &ti in &used[..=ui] {
                    let t = self.levels[ti];
                    let top = ((1u32 << t.shift) - 1) as f32;
                    // Cells k with k c - ext <= max and (k + 1) c + ext >= min:
                    // k from ceil(lo) to floor(hi), clamped to the level.
                    let lo = ((min - o - Vec3A::splat(t.ext)) * t.inv - Vec3A::ONE)
                        .clamp(Vec3A::splat(-1.0), Vec3A::splat(top + 1.0));
                    let hi = ((max - o + Vec3A::splat(t.ext)) * t.inv)
                        .clamp(Vec3A::splat(-1.0), Vec3A::splat(top + 1.0));
                    // On values >= -1: truncation of x + 1 is floor(x) + 1.
                    let fl = ((lo + Vec3A::ONE).as_ivec3() - IVec3::ONE).as_vec3a();
                    let ce = (fl + Vec3A::select(fl.cmplt(lo), Vec3A::ONE, Vec3A::ZERO))
                        .max(Vec3A::ZERO)
                        .as_ivec3();
                    let fh =
                        ((hi + Vec3A::ONE).as_ivec3() - IVec3::ONE).min(IVec3::splat(top as i32));
                    let (x0, x1) = (ce.x, fh.x);
                    let (y0, y1) = (ce.y, fh.y);
                    let (mut z0, z1) = (ce.z, fh.z);
                    if x0 > x1 {
                        continue;
                    }
                    let same = ti == li;
                    if same {
                        z0 = z0.max(zi as i32);
                    }
                    let (x0, x1) = (x0 as u32, x1 as u32);
                    for z in z0..z1 + 1 {
                        let z = z as u32;
                        let ys = if same && z == zi {
                            y0.max(yi as i32)
                        } else {
                            y0
                        };
                        for y in ys..y1 + 1 {
                            let y = y as u32;
                            let row = t.base + (((z << t.shift) + y) << t.shift);
                            let mut s = self.cell_start[(row + x0) as usize] as usize;
                            let e = (self.cell_start[(row + x1 + 1) as usize] as usize).min(n);
                            if same && z == zi && y == yi {
                                s = s.max(i + 1);
                            }
                            if COUNT {
                                self.rows += 1;
                            }
                            let mut b = s;
                            while b < e {
                                let left = e - b;
                                let valid = if left >= LANES {
                                    0xFF
                                } else {
                                    (1u32 << left) - 1
                                };
                                let m = bx.chunk::<AVX>(&q, b) & valid;
                                if COUNT {
                                    self.chunks += 1;
                                    self.box_hits += m.count_ones() as u64;
                                }
                                // The first hit without a branch, the
                                // others (rare) in a loop.
                                let j = b + (m.trailing_zeros() & 7) as usize;
                                cand[k] = [i as u32, j as u32];
                                k += (m != 0) as usize;
                                let mut m = m & m.wrapping_sub(1);
                                while m != 0 {
                                    let j = b + m.trailing_zeros() as usize;
                                    m &= m - 1;
                                    cand[k] = [i as u32, j as u32];
                                    k += 1;
                                }
                                if k >= CAND {
                                    flush(
                                        &cand[..k],
                                        &self.sph,
                                        &self.meta[..n],
                                        &mut self.found,
                                        &mut f,
                                    );
                                    k = 0;
                                }
                                b += LANES;
                            }
                        }
                    }
                }
            }
        }
        flush(
            &cand[..k],
            &self.sph,
            &self.meta[..n],
            &mut self.found,
            &mut f,
        );
        self.cand = cand;
        self.used = used;
    }

    /// The cells of level `t` whose loose bounds (the cell grown by the
    /// level's `ext`) the box `[min, max]` reaches: inclusive corners, or
    /// `None`. The same arithmetic as the pair search's.
    #[inline(always)]
    fn cell_range(&self, t: &Level, min: Vec3A, max: Vec3A) -> Option<(IVec3, IVec3)> {
        let o = Vec3A::from(self.origin);
        let top = ((1u32 << t.shift) - 1) as f32;
        let lo = ((min - o - Vec3A::splat(t.ext)) * t.inv - Vec3A::ONE)
            .clamp(Vec3A::splat(-1.0), Vec3A::splat(top + 1.0));
        let hi = ((max - o + Vec3A::splat(t.ext)) * t.inv)
            .clamp(Vec3A::splat(-1.0), Vec3A::splat(top + 1.0));
        let fl = ((lo + Vec3A::ONE).as_ivec3() - IVec3::ONE).as_vec3a();
        let ce = (fl + Vec3A::select(fl.cmplt(lo), Vec3A::ONE, Vec3A::ZERO))
            .max(Vec3A::ZERO)
            .as_ivec3();
        let fh = ((hi + Vec3A::ONE).as_ivec3() - IVec3::ONE).min(IVec3::splat(top as i32));
        if ce.x > fh.x || ce.y > fh.y || ce.z > fh.z {
            return None;
        }
        Some((ce, fh))
    }

    fn boxes(&self) -> Boxes<'_> {
        let n = self.n;
        Boxes {
            minx: &self.minx[..n + LANES],
            miny: &self.miny[..n + LANES],
            minz: &self.minz[..n + LANES],
            maxx: &self.maxx[..n + LANES],
            maxy: &self.maxy[..n + LANES],
            maxz: &self.maxz[..n + LANES],
        }
    }

    #[inline(always)]
    fn sphere_at(&self, j: usize) -> Sphere<Vec3> {
        Sphere {
            center: Vec3::new(self.sph[0][j], self.sph[1][j], self.sph[2][j]),
            radius: self.sph[3][j],
        }
    }

    /// Box query: the slots of the spheres that `qb` touches
    /// (`Aabb::intersects_sphere`), into `out` (cleared first). For each
    /// level in use, the rows of cells the box reaches, 8 boxes at a time.
    pub fn query_box(&self, qb: &Aabb<Vec3>, out: &mut Vec<u32>) {
        out.clear();
        #[cfg(target_arch = "x86_64")]
        if self.avx {
            // SAFETY: `avx` is set only when AVX2 was detected (in `new`).
            return unsafe { self.query_box_avx2(qb, out) };
        }
        self.query_box_impl::<false>(qb, out)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn query_box_avx2(&self, qb: &Aabb<Vec3>, out: &mut Vec<u32>) {
        self.query_box_impl::<true>(qb, out)
    }

    #[inline(always)]
    fn query_box_impl<const AVX: bool>(&self, qb: &Aabb<Vec3>, out: &mut Vec<u32>) {
        let n = self.n;
        let bx = self.boxes();
        let (min, max) = (Vec3A::from(qb.min), Vec3A::from(qb.max));
        let sp = [
            &self.sph[0][..n + LANES],
            &self.sph[1][..n + LANES],
            &self.sph[2][..n + LANES],
            &self.sph[3][..n + LANES],
        ];
        let q = Q {
            lo: [Vec4::splat(min.x), Vec4::splat(min.y), Vec4::splat(min.z)],
            hi: [Vec4::splat(max.x), Vec4::splat(max.y), Vec4::splat(max.z)],
            s: [min.x, min.y, min.z, max.x, max.y, max.z],
        };
        for &ti in &self.used {
            let t = self.levels[ti];
            let Some((lo, hi)) = self.cell_range(&t, min, max) else {
                continue;
            };
            let (x0, x1) = (lo.x as u32, hi.x as u32);
            for z in lo.z as u32..hi.z as u32 + 1 {
                for y in lo.y as u32..hi.y as u32 + 1 {
                    let row = t.base + (((z << t.shift) + y) << t.shift);
                    let s = self.cell_start[(row + x0) as usize] as usize;
                    let e = (self.cell_start[(row + x1 + 1) as usize] as usize).min(n);
                    let mut b = s;
                    while b < e {
                        let left = e - b;
                        let valid = if left >= LANES {
                            0xFF
                        } else {
                            (1u32 << left) - 1
                        };
                        // The box test and the exact one (`Aabb::
                        // intersects_sphere`: the distance half here, bit
                        // for bit, the box half on the same boxes), 8 at
                        // once; then the 8 slots written without a branch.
                        let mut m =
                            bx.chunk::<AVX>(&q, b) & box_exact::<AVX>(&sp, b, min, max) & valid;
                        if b + LANES <= n {
                            let base = out.len();
                            out.resize(base + LANES, 0);
                            let w: &mut [u32; LANES] = (&mut out[base..]).try_into().unwrap();
                            let ms: &[Meta; LANES] = self.meta[b..b + LANES].try_into().unwrap();
                            let mut p = 0;
                            for (l, mt) in ms.iter().enumerate() {
                                w[p & 7] = mt.slot;
                                p += ((m >> l) & 1) as usize;
                            }
                            out.truncate(base + p);
                        } else {
                            while m != 0 {
                                let j = b + m.trailing_zeros() as usize;
                                m &= m - 1;
                                out.push(self.meta[j].slot);
                            }
                        }
                        b += LANES;
                    }
                }
            }
        }
    }

    /// Nearest hit of a ray within `max`: `(slot, distance)`, the smaller
    /// slot on equal distances (as sparti's `closer`), the exact test being
    /// `Ray::cast_sphere`. Each level in use is walked in intervals of
    /// `ray_step` cells, the levels in step (the one whose next interval
    /// starts nearest goes next): the segment's box, grown by the level's `ext`,
    /// gives the cells whose objects can be hit in the interval; their rows
    /// are tested 8 spheres at a time (a conservative lane test, then the
    /// exact one on the lanes that pass). A level stops once its interval
    /// ends at or past the best hit so far.
    pub fn ray_nearest(&self, ray: &Ray<Vec3>, max: f32) -> Option<(u32, f32)> {
        if max.is_nan() || max < 0.0 || self.n == 0 {
            return None;
        }
        #[cfg(target_arch = "x86_64")]
        if self.avx {
            // SAFETY: `avx` is set only when AVX2 was detected (in `new`).
            return unsafe { self.ray_avx2(ray, max) };
        }
        self.ray_impl::<false>(ray, max)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn ray_avx2(&self, ray: &Ray<Vec3>, max: f32) -> Option<(u32, f32)> {
        self.ray_impl::<true>(ray, max)
    }

    #[inline(always)]
    fn ray_impl<const AVX: bool>(&self, ray: &Ray<Vec3>, max: f32) -> Option<(u32, f32)> {
        let n = self.n;
        let (mut best_d, mut best_s) = (max, u32::MAX);
        let (o, d) = (Vec3A::from(ray.origin), Vec3A::from(ray.dir));
        let sp = [
            &self.sph[0][..n + LANES],
            &self.sph[1][..n + LANES],
            &self.sph[2][..n + LANES],
            &self.sph[3][..n + LANES],
        ];
        let margin = Vec3A::splat(2.0 * self.slack);
        // Per level in use: where its next interval starts and where its
        // walk ends (the ray clipped to the root grown by the level's ext).
        let mut walk = [(0.0f32, 0.0f32); 16];
        let mut nw = 0;
        for &ti in &self.used {
            let t = &self.levels[ti];
            let g = Vec3::splat(t.ext + 2.0 * self.slack);
            let root = Aabb {
                min: self.origin - g,
                max: self.origin + Vec3::splat(self.side) + g,
            };
            // A level the ray misses is marked done (start above end).
            walk[nw] = ray.clip_aabb(&root, best_d).unwrap_or((1.0, 0.0));
            nw += 1;
        }
        // The levels advance together: the one whose next interval starts
        // nearest goes next, so that a hit found in any level limits all.
        loop {
            let mut wi = usize::MAX;
            let mut near = f32::INFINITY;
            for (w, &(t0, tb)) in walk[..nw].iter().enumerate() {
                if t0 <= tb && t0 <= best_d && t0 < near {
                    (wi, near) = (w, t0);
                }
            }
            if wi == usize::MAX {
                break;
            }
            let t = self.levels[self.used[wi]];
            let (t0, tb) = walk[wi];
            let h = (t.c + 2.0 * t.ext) * self.ray_step;
            let t1 = (t0 + h).min(tb).min(best_d);
            let (p0, p1) = (o + d * t0, o + d * t1);
            let (min, max) = (p0.min(p1) - margin, p0.max(p1) + margin);
            if let Some((lo, hi)) = self.cell_range(&t, min, max) {
                let (x0, x1) = (lo.x as u32, hi.x as u32);
                for z in lo.z as u32..hi.z as u32 + 1 {
                    for y in lo.y as u32..hi.y as u32 + 1 {
                        let row = t.base + (((z << t.shift) + y) << t.shift);
                        let s = self.cell_start[(row + x0) as usize] as usize;
                        let e = (self.cell_start[(row + x1 + 1) as usize] as usize).min(n);
                        let mut b = s;
                        while b < e {
                            let left = e - b;
                            let valid = if left >= LANES {
                                0xFF
                            } else {
                                (1u32 << left) - 1
                            };
                            let mut m = ray_chunk::<AVX>(&sp, b, o, d, best_d) & valid;
                            while m != 0 {
                                let j = b + m.trailing_zeros() as usize;
                                m &= m - 1;
                                if let Some(hit) = ray.cast_sphere(&self.sphere_at(j), best_d) {
                                    let slot = self.meta[j].slot;
                                    if hit.distance < best_d || slot < best_s {
                                        (best_d, best_s) = (hit.distance, slot);
                                    }
                                }
                            }
                            b += LANES;
                        }
                    }
                }
            }
            // Done when the interval reached the end, the best hit, or
            // could not advance (rounding).
            walk[wi].0 = if t1 >= tb || t1 >= best_d || t1 <= t0 {
                f32::INFINITY
            } else {
                t1
            };
        }
        (best_s != u32::MAX).then_some((best_s, best_d))
    }

    /// Checks the invariants (tests): sorted keys, ranges, positions, boxes.
    pub fn validate(&self) {
        for i in 1..self.n {
            assert!(self.key[i - 1] <= self.key[i]);
        }
        for i in 0..self.n {
            let k = self.key[i] as usize;
            assert!(self.cell_start[k] as usize <= i && i < self.cell_start[k + 1] as usize);
            assert_eq!(self.pos_of_slot[self.meta[i].slot as usize] as usize, i);
            let b = Sphere {
                center: Vec3::new(self.sph[0][i], self.sph[1][i], self.sph[2][i]),
                radius: self.sph[3][i],
            }
            .aabb();
            let got = [
                self.minx[i],
                self.miny[i],
                self.minz[i],
                self.maxx[i],
                self.maxy[i],
                self.maxz[i],
            ];
            let want = [b.min.x, b.min.y, b.min.z, b.max.x, b.max.y, b.max.z];
            assert_eq!(got.map(f32::to_bits), want.map(f32::to_bits), "box of {i}");
        }
    }
}

/// Exact tests of the buffered box hits (filter, then the sphere distance;
/// the boxes were tested already), branch-free, then the callback on each
/// pair found.
#[inline(never)]
fn flush(
    cand: &[[u32; 2]],
    sph: &[Vec<f32>; 4],
    meta: &[Meta],
    found: &mut Vec<(u32, u32)>,
    f: &mut impl FnMut(u32, u32),
) {
    let n = meta.len();
    let [sx, sy, sz, sr] = sph;
    let (sx, sy, sz, sr) = (&sx[..n], &sy[..n], &sz[..n], &sr[..n]);
    found.clear();
    found.resize(cand.len(), (0, 0));
    let mut p = 0;
    for &[i, j] in cand {
        let (i, j) = (i as usize, j as usize);
        let (mi, mj) = (meta[i], meta[j]);
        let r = sr[i] + sr[j];
        let (dx, dy, dz) = (sx[i] - sx[j], sy[i] - sy[j], sz[i] - sz[j]);
        // Sphere::intersects: the distance test; its box test was the
        // chunk's, on the same boxes.
        let hit = (dx * dx + dy * dy + dz * dz <= r * r) & mi.pairs_with(&mj);
        found[p] = (mi.slot, mj.slot);
        p += hit as usize;
    }
    for &(a, b) in &found[..p] {
        f(a, b);
    }
}

/// `lohi8` against `Sphere::aabb`, bit for bit, on awkward values.
pub fn check_boxes() {
    let vals = [
        0.0f32,
        -0.0,
        1.0,
        -1.0,
        0.1,
        -0.1,
        3.3,
        1e-30,
        -1e-30,
        1e-45,
        123.456,
        -98.7,
        1e7,
        3e-8,
        16_777_216.0,
        0.5,
        1.5,
    ];
    let radii = [
        0.0f32, 1e-45, 1e-30, 1e-8, 0.1, 0.5, 1.0, 1.5, 0.3, 7.0, 1e6,
    ];
    let mut cs = Vec::new();
    let mut rs = Vec::new();
    for &c in &vals {
        for &r in &radii {
            cs.push(c);
            rs.push(r);
        }
    }
    let mut x = 0x1234_5678u32;
    for _ in 0..100_000 {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        cs.push((x as f32 / u32::MAX as f32 - 0.5) * 600.0);
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        rs.push(x as f32 / u32::MAX as f32 * 2.0);
    }
    let full = cs.len() / 8 * 8;
    for b in (0..full).step_by(8) {
        let c: [f32; 8] = cs[b..b + 8].try_into().unwrap();
        let r: [f32; 8] = rs[b..b + 8].try_into().unwrap();
        let (mut lo, mut hi) = ([0.0; 8], [0.0; 8]);
        lohi8(&c, &r, &mut lo, &mut hi);
        for l in 0..8 {
            let w = Sphere {
                center: Vec3::splat(c[l]),
                radius: r[l],
            }
            .aabb();
            assert_eq!(lo[l].to_bits(), w.min.x.to_bits(), "c {} r {}", c[l], r[l]);
            assert_eq!(hi[l].to_bits(), w.max.x.to_bits(), "c {} r {}", c[l], r[l]);
        }
    }
    println!("check boxes: lohi8 equals Sphere::aabb bit for bit on {full} spheres");
}

/// Conservative ray test of the 8 spheres at `b..b + 8` (structure of
/// arrays `[x, y, z, r]`, each of length `>= b + 8`): bit `l` set unless
/// sphere `b + l` surely misses the ray within `best`. With `m` the centre
/// minus the origin and `bp = m . dir`: a hit needs the centre within `r`
/// of the line (`|m|^2 - bp^2 <= r^2`), not behind the origin by more than
/// `r` (`bp >= -r`), and its entry no further than `best` (`bp - r <=
/// best`, since the entry is `bp - sqrt(r^2 - dist^2) >= bp - r`). Each is
/// loosened by a tolerance far above the float errors (relative 1e-5 of
/// `|m|^2`), so the exact test (`Ray::cast_sphere`) decides.
#[inline(always)]
fn ray_chunk<const AVX: bool>(sp: &[&[f32]; 4], b: usize, o: Vec3A, d: Vec3A, best: f32) -> u32 {
    debug_assert!(sp.iter().all(|v| b + LANES <= v.len()));
    #[cfg(target_arch = "x86_64")]
    if AVX {
        use std::arch::x86_64::*;
        // SAFETY: AVX is true only on the paths entered after detecting AVX2
        // at run time; `b + 8 <= len` for every slice (the caller's `b < e
        // <= n`, slices of length `n + LANES`).
        unsafe {
            let ld = |v: &[f32]| _mm256_loadu_ps(v.as_ptr().add(b));
            let s = _mm256_set1_ps;
            let mx = _mm256_sub_ps(ld(sp[0]), s(o.x));
            let my = _mm256_sub_ps(ld(sp[1]), s(o.y));
            let mz = _mm256_sub_ps(ld(sp[2]), s(o.z));
            let r = ld(sp[3]);
            let bp = _mm256_add_ps(
                _mm256_add_ps(_mm256_mul_ps(mx, s(d.x)), _mm256_mul_ps(my, s(d.y))),
                _mm256_mul_ps(mz, s(d.z)),
            );
            let m2 = _mm256_add_ps(
                _mm256_add_ps(_mm256_mul_ps(mx, mx), _mm256_mul_ps(my, my)),
                _mm256_mul_ps(mz, mz),
            );
            let tol = _mm256_add_ps(_mm256_mul_ps(m2, s(1e-5)), s(1e-4));
            let c1 = _mm256_cmp_ps::<_CMP_GE_OQ>(_mm256_add_ps(bp, _mm256_add_ps(r, tol)), s(0.0));
            let c2 = _mm256_cmp_ps::<_CMP_LE_OQ>(
                _mm256_sub_ps(m2, _mm256_mul_ps(bp, bp)),
                _mm256_add_ps(_mm256_mul_ps(r, r), tol),
            );
            let c3 = _mm256_cmp_ps::<_CMP_LE_OQ>(_mm256_sub_ps(bp, r), _mm256_add_ps(s(best), tol));
            return _mm256_movemask_ps(_mm256_and_ps(_mm256_and_ps(c1, c2), c3)) as u32;
        }
    }
    let half = |k: usize| -> u32 {
        // SAFETY: as above, `b + k + 4 <= b + 8 <= len`.
        let ld = |v: &[f32]| unsafe {
            Vec4::from(v.as_ptr().add(b + k).cast::<[f32; 4]>().read_unaligned())
        };
        let mx = ld(sp[0]) - Vec4::splat(o.x);
        let my = ld(sp[1]) - Vec4::splat(o.y);
        let mz = ld(sp[2]) - Vec4::splat(o.z);
        let r = ld(sp[3]);
        let bp = mx * d.x + my * d.y + mz * d.z;
        let m2 = mx * mx + my * my + mz * mz;
        let tol = m2 * 1e-5 + Vec4::splat(1e-4);
        let c1 = (bp + (r + tol)).cmpge(Vec4::ZERO);
        let c2 = (m2 - bp * bp).cmple(r * r + tol);
        let c3 = (bp - r).cmple(Vec4::splat(best) + tol);
        (c1 & c2 & c3).bitmask()
    };
    half(0) | (half(4) << 4)
}

/// `Aabb::distance_squared_to_point(centre) <= r * r` for the 8 spheres at
/// `b..b + 8` against the box `[lo, hi]`, the same operations in the same
/// order (`p.max(lo).min(hi) - p`, then `(x * x + y * y) + z * z`), so bit
/// for bit the same outcome on finite input.
#[inline(always)]
fn box_exact<const AVX: bool>(sp: &[&[f32]; 4], b: usize, lo: Vec3A, hi: Vec3A) -> u32 {
    debug_assert!(sp.iter().all(|v| b + LANES <= v.len()));
    #[cfg(target_arch = "x86_64")]
    if AVX {
        use std::arch::x86_64::*;
        // SAFETY: as in `ray_chunk` (AVX2 detected; `b + 8 <= len`).
        unsafe {
            let ld = |v: &[f32]| _mm256_loadu_ps(v.as_ptr().add(b));
            let s = _mm256_set1_ps;
            let dist = |c: __m256, l: f32, h: f32| {
                _mm256_sub_ps(_mm256_min_ps(_mm256_max_ps(c, s(l)), s(h)), c)
            };
            let dx = dist(ld(sp[0]), lo.x, hi.x);
            let dy = dist(ld(sp[1]), lo.y, hi.y);
            let dz = dist(ld(sp[2]), lo.z, hi.z);
            let d2 = _mm256_add_ps(
                _mm256_add_ps(_mm256_mul_ps(dx, dx), _mm256_mul_ps(dy, dy)),
                _mm256_mul_ps(dz, dz),
            );
            let r = ld(sp[3]);
            return _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_LE_OQ>(d2, _mm256_mul_ps(r, r))) as u32;
        }
    }
    let half = |k: usize| -> u32 {
        // SAFETY: as above, `b + k + 4 <= b + 8 <= len`.
        let ld = |v: &[f32]| unsafe {
            Vec4::from(v.as_ptr().add(b + k).cast::<[f32; 4]>().read_unaligned())
        };
        let dist = |c: Vec4, l: f32, h: f32| c.max(Vec4::splat(l)).min(Vec4::splat(h)) - c;
        let dx = dist(ld(sp[0]), lo.x, hi.x);
        let dy = dist(ld(sp[1]), lo.y, hi.y);
        let dz = dist(ld(sp[2]), lo.z, hi.z);
        let r = ld(sp[3]);
        ((dx * dx + dy * dy) + dz * dz).cmple(r * r).bitmask()
    };
    half(0) | (half(4) << 4)
}
