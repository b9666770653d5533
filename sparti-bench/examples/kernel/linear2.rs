//! The 2D form of the prototype kernel (`linear.rs`): a linear loose
//! quadtree over circles, with the same dense tree-order arrays, counting
//! sort per frame and 8-lane branch-free box tests (one AVX2 register per
//! coordinate, or two SSE `Vec4`).
//!
//! Differences from the 3D form. The levels are not cut from a power-of-two
//! root: the finest cell side is `min_cell` exactly and each coarser level
//! doubles it, with `dim = ceil(side / c)` cells per axis (so the finest
//! cell can be set to, say, twice the largest radius without rounding up to
//! the next power of two). A key is `base[L] + y * dim[L] + x`, so a run of
//! cells along x is one contiguous range, as in 3D. Levels are stored
//! coarsest first.

use sparti::Sphere;
use sparti::glam::{Vec2, Vec4};

use crate::linear::{LANES, Meta, lohi8};

#[derive(Clone, Copy, Debug)]
struct Level {
    c: f32,
    inv: f32,
    dim: u32,
    base: u32,
    ext: f32,
}

pub struct Config2 {
    pub origin: Vec2,
    pub side: f32,
    pub min_cell: f32,
}

pub struct LinearLoose2 {
    origin: Vec2,
    slack: f32,
    /// Finest cell side.
    c0: f32,
    levels: Vec<Level>,
    used: Vec<usize>,
    n: usize,
    avx: bool,
    minx: Vec<f32>,
    miny: Vec<f32>,
    maxx: Vec<f32>,
    maxy: Vec<f32>,
    sph: [Vec<f32>; 3],
    meta: Vec<Meta>,
    key: Vec<u32>,
    sph_b: [Vec<f32>; 3],
    meta_b: Vec<Meta>,
    key_b: Vec<u32>,
    cell_start: Vec<u32>,
    pos_of_slot: Vec<u32>,
    cand: Vec<[u32; 2]>,
    found: Vec<(u32, u32)>,
    /// Read the objects in slot order (experiment): each one's circle is
    /// written to its old position (`rec`, one 16-byte record), then keyed
    /// in tree order; instead of reading the circles in tree order through
    /// the slot (random reads at 1M).
    /// Set before `build`.
    pub slot_order: bool,
    rec: Vec<[f32; 4]>,
}

const CAND: usize = 1024;

#[derive(Clone, Copy)]
struct Q {
    lo: [Vec4; 2],
    hi: [Vec4; 2],
    s: [f32; 4],
}

struct Boxes<'a> {
    minx: &'a [f32],
    miny: &'a [f32],
    maxx: &'a [f32],
    maxy: &'a [f32],
}

impl Boxes<'_> {
    /// Bit `l` set when box `b + l` overlaps the query (closed). The caller
    /// guarantees `b < n` and every slice has length `n + LANES`.
    #[inline(always)]
    fn chunk<const AVX: bool>(&self, q: &Q, b: usize) -> u32 {
        debug_assert!(b + LANES <= self.minx.len());
        #[cfg(target_arch = "x86_64")]
        if AVX {
            use std::arch::x86_64::*;
            // SAFETY: AVX is true only on the path entered after detecting
            // AVX2 at run time; `b + 8 <= len` for every slice (padding).
            unsafe {
                let ld = |v: &[f32]| _mm256_loadu_ps(v.as_ptr().add(b));
                let le = |a: __m256, x: f32| _mm256_cmp_ps::<_CMP_LE_OQ>(a, _mm256_set1_ps(x));
                let ge = |a: __m256, x: f32| _mm256_cmp_ps::<_CMP_GE_OQ>(a, _mm256_set1_ps(x));
                let m = _mm256_and_ps(
                    _mm256_and_ps(le(ld(self.minx), q.s[2]), ge(ld(self.maxx), q.s[0])),
                    _mm256_and_ps(le(ld(self.miny), q.s[3]), ge(ld(self.maxy), q.s[1])),
                );
                return _mm256_movemask_ps(m) as u32;
            }
        }
        #[inline(always)]
        fn ld(v: &[f32], b: usize) -> (Vec4, Vec4) {
            // SAFETY: `b + 8 <= v.len()` (see `chunk`); the checked slice
            // cost 8 bounds checks per chunk in the 3D form (measured there).
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
        let m0 = ax.cmple(q.hi[0]) & cx.cmpge(q.lo[0]) & ay.cmple(q.hi[1]) & cy.cmpge(q.lo[1]);
        let m1 = bx.cmple(q.hi[0]) & dx.cmpge(q.lo[0]) & by.cmple(q.hi[1]) & dy.cmpge(q.lo[1]);
        m0.bitmask() | (m1.bitmask() << 4)
    }
}

impl LinearLoose2 {
    pub fn new(cfg: Config2) -> Self {
        // Finest first, then reversed: coarsest first.
        let mut cs = vec![cfg.min_cell];
        while *cs.last().unwrap() < cfg.side && cs.len() < 24 {
            cs.push(cs.last().unwrap() * 2.0);
        }
        cs.reverse();
        let mut levels = Vec::new();
        let mut base = 0u32;
        for &c in &cs {
            let dim = ((cfg.side / c).ceil() as u32).max(1);
            levels.push(Level {
                c,
                inv: 1.0 / c,
                dim,
                base,
                ext: -1.0,
            });
            base += dim * dim;
        }
        #[cfg(target_arch = "x86_64")]
        let avx = std::arch::is_x86_feature_detected!("avx2")
            && std::env::var_os("KERNEL_NO_AVX").is_none();
        #[cfg(not(target_arch = "x86_64"))]
        let avx = false;
        LinearLoose2 {
            origin: cfg.origin,
            slack: cfg.side * 4e-6,
            c0: cfg.min_cell,
            levels,
            used: Vec::new(),
            n: 0,
            avx,
            minx: Vec::new(),
            miny: Vec::new(),
            maxx: Vec::new(),
            maxy: Vec::new(),
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
            slot_order: false,
            rec: Vec::new(),
        }
    }

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
                v.push((lv.dim, lv.c, count));
            }
        }
        v
    }

    pub fn bytes(&self) -> usize {
        4 * (self.minx.capacity() * 4 + self.key.capacity() * 2 + self.cell_start.capacity())
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

    pub fn build(&mut self, metas: Vec<Meta>, get: impl Fn(u32) -> Sphere<Vec2>) {
        let n = metas.len();
        self.n = n;
        // At most 4 table cells per object: drop the finest levels past that.
        let cap = 4 * n.max(1024);
        while self.levels.len() > 1 {
            let l = self.levels.last().unwrap();
            if ((l.base + l.dim * l.dim) as usize) <= cap {
                break;
            }
            self.levels.pop();
            self.c0 *= 2.0;
        }
        let l = self.levels.last().unwrap();
        self.cell_start = vec![0; (l.base + l.dim * l.dim) as usize + 1];
        for v in [&mut self.minx, &mut self.miny] {
            *v = vec![f32::INFINITY; n + LANES];
        }
        for v in [&mut self.maxx, &mut self.maxy] {
            *v = vec![f32::NEG_INFINITY; n + LANES];
        }
        for v in self.sph.iter_mut() {
            *v = vec![0.0; n];
        }
        // In slot order (set before `build`) the scatter reads the records:
        // no second sphere buffer.
        for v in self.sph_b.iter_mut() {
            *v = if self.slot_order {
                Vec::new()
            } else {
                vec![0.0; n]
            };
        }
        self.meta = metas;
        self.meta_b = vec![Meta::default(); n];
        self.key = vec![0; n];
        self.key_b = vec![0; n];
        self.pos_of_slot = vec![0; n];
        self.refresh(get);
    }

    /// Deepest (finest) level whose cell side is at least 2r.
    #[inline(always)]
    fn level_of(levels: &[Level], c0: f32, r: f32) -> usize {
        let top = levels.len() - 1;
        // k = ceil(log2(2r / c0)) coarsenings, from the float's exponent.
        let x = 2.0 * r / c0;
        let bits = x.to_bits();
        let e = (bits >> 23) as i32 - 127;
        let k = if x <= 1.0 {
            0
        } else {
            e + ((bits & 0x7F_FFFF) != 0) as i32
        };
        let mut l = (top as i32 - k).clamp(0, top as i32) as usize;
        if l > 0 && levels[l].c < 2.0 * r {
            l -= 1;
        }
        l
    }

    pub fn refresh(&mut self, get: impl Fn(u32) -> Sphere<Vec2>) {
        let n = self.n;
        self.cell_start.fill(0);
        let mut ext = [f32::NEG_INFINITY; 24];
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
                rec[p as usize] = [c.center.x, c.center.y, c.radius, 0.0];
            }
        }
        {
            let [sx, sy, sr] = &mut self.sph;
            let (sx, sy, sr) = (&mut sx[..n], &mut sy[..n], &mut sr[..n]);
            for i in 0..n {
                let s = if slot_order {
                    let r = rec[i];
                    Sphere {
                        center: Vec2::new(r[0], r[1]),
                        radius: r[2],
                    }
                } else {
                    get(self.meta[i].slot)
                };
                let (c, r) = (s.center, s.radius);
                if !slot_order {
                    // (In slot order the scatter reads the record.)
                    (sx[i], sy[i], sr[i]) = (c.x, c.y, r);
                }
                let li = Self::level_of(&self.levels, self.c0, r);
                let lv = &self.levels[li];
                let top = (lv.dim - 1) as f32;
                let rel = (c - o) * lv.inv;
                let kx = rel.x.clamp(0.0, top) as u32;
                let ky = rel.y.clamp(0.0, top) as u32;
                let lo = o + Vec2::new(kx as f32, ky as f32) * lv.c;
                let out = (lo - c).max(c - (lo + Vec2::splat(lv.c))).max_element() + r;
                ext[li] = ext[li].max(out);
                let k = lv.base + ky * lv.dim + kx;
                self.key[i] = k;
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
        let mut sum = 0u32;
        for v in self.cell_start.iter_mut() {
            sum += *v;
            *v = sum;
        }
        if slot_order {
            // The spheres come from the records (old order) straight into
            // their new positions: no second sphere buffer.
            let [dx, dy, dr] = &mut self.sph;
            let (dx, dy, dr) = (&mut dx[..n], &mut dy[..n], &mut dr[..n]);
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
                (dx[d], dy[d], dr[d]) = (r[0], r[1], r[2]);
                meta_b[d] = m;
                key_b[d] = k as u32;
                self.pos_of_slot[m.slot as usize] = d as u32;
            }
        } else {
            let [sx, sy, sr] = &self.sph;
            let [dx, dy, dr] = &mut self.sph_b;
            let (sx, sy, sr) = (&sx[..n], &sy[..n], &sr[..n]);
            let (dx, dy, dr) = (&mut dx[..n], &mut dy[..n], &mut dr[..n]);
            let (meta, key) = (&self.meta[..n], &self.key[..n]);
            let (meta_b, key_b) = (&mut self.meta_b[..n], &mut self.key_b[..n]);
            for i in (0..n).rev() {
                let k = key[i] as usize;
                let d = self.cell_start[k] - 1;
                self.cell_start[k] = d;
                let d = d as usize;
                let m = meta[i];
                (dx[d], dy[d], dr[d]) = (sx[i], sy[i], sr[i]);
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
        let full = n / LANES * LANES;
        let [sx, sy, sr] = &self.sph;
        for b in (0..full).step_by(LANES) {
            let a = |v: &[f32]| -> [f32; 8] { v[b..b + 8].try_into().unwrap() };
            let r = a(sr);
            let mut lo = [0.0; 8];
            let mut hi = [0.0; 8];
            for (c, mn, mx) in [
                (sx, &mut self.minx, &mut self.maxx),
                (sy, &mut self.miny, &mut self.maxy),
            ] {
                lohi8(&a(c), &r, &mut lo, &mut hi);
                mn[b..b + 8].copy_from_slice(&lo);
                mx[b..b + 8].copy_from_slice(&hi);
            }
        }
        for d in full..n {
            let bx = Sphere {
                center: Vec2::new(sx[d], sy[d]),
                radius: sr[d],
            }
            .aabb();
            self.minx[d] = bx.min.x;
            self.miny[d] = bx.min.y;
            self.maxx[d] = bx.max.x;
            self.maxy[d] = bx.max.y;
        }
    }

    pub fn for_each_pair(&mut self, f: impl FnMut(u32, u32)) {
        #[cfg(target_arch = "x86_64")]
        if self.avx {
            // SAFETY: `avx` is set only when AVX2 was detected (in `new`).
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
        let n = self.n;
        let o = self.origin;
        let nl = self.levels.len();
        let mut k = 0usize;
        let mut cand = std::mem::take(&mut self.cand);
        let used = std::mem::take(&mut self.used);
        let bx = Boxes {
            minx: &self.minx[..n + LANES],
            miny: &self.miny[..n + LANES],
            maxx: &self.maxx[..n + LANES],
            maxy: &self.maxy[..n + LANES],
        };
        for (ui, &li) in used.iter().enumerate() {
            let lv = self.levels[li];
            let first = self.cell_start[lv.base as usize] as usize;
            let last = if li + 1 < nl {
                self.cell_start[self.levels[li + 1].base as usize] as usize
            } else {
                n
            };
            for i in first..last {
                let min = Vec2::new(bx.minx[i], bx.miny[i]);
                let max = Vec2::new(bx.maxx[i], bx.maxy[i]);
                let q = Q {
                    lo: [Vec4::splat(min.x), Vec4::splat(min.y)],
                    hi: [Vec4::splat(max.x), Vec4::splat(max.y)],
                    s: [min.x, min.y, max.x, max.y],
                };
                let own = self.key[i] - lv.base;
                let yi = own / lv.dim;
                for &ti in &used[..=ui] {
                    let t = self.levels[ti];
                    let top = (t.dim - 1) as f32;
                    // Cells k with k c - ext <= max and (k + 1) c + ext >= min,
                    // as in 3D: k from ceil(lo) to floor(hi), clamped.
                    let lo = ((min - o - Vec2::splat(t.ext)) * t.inv - Vec2::ONE)
                        .clamp(Vec2::splat(-1.0), Vec2::splat(top + 1.0));
                    let hi = ((max - o + Vec2::splat(t.ext)) * t.inv)
                        .clamp(Vec2::splat(-1.0), Vec2::splat(top + 1.0));
                    let fl = ((lo + Vec2::ONE).as_ivec2() - 1).as_vec2();
                    let ce = (fl + Vec2::select(fl.cmplt(lo), Vec2::ONE, Vec2::ZERO))
                        .max(Vec2::ZERO)
                        .as_ivec2();
                    let fh = ((hi + Vec2::ONE).as_ivec2() - 1)
                        .min(sparti::glam::IVec2::splat(top as i32));
                    let (x0, x1) = (ce.x, fh.x);
                    let (mut y0, y1) = (ce.y, fh.y);
                    if x0 > x1 {
                        continue;
                    }
                    let same = ti == li;
                    if same {
                        y0 = y0.max(yi as i32);
                    }
                    let (x0, x1) = (x0 as u32, x1 as u32);
                    for y in y0..y1 + 1 {
                        let y = y as u32;
                        let row = t.base + y * t.dim;
                        let mut s = self.cell_start[(row + x0) as usize] as usize;
                        let e = (self.cell_start[(row + x1 + 1) as usize] as usize).min(n);
                        if same && y == yi {
                            s = s.max(i + 1);
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
                                flush2(
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
        flush2(
            &cand[..k],
            &self.sph,
            &self.meta[..n],
            &mut self.found,
            &mut f,
        );
        self.cand = cand;
        self.used = used;
    }

    pub fn validate(&self) {
        for i in 1..self.n {
            assert!(self.key[i - 1] <= self.key[i]);
        }
        for i in 0..self.n {
            let k = self.key[i] as usize;
            assert!(self.cell_start[k] as usize <= i && i < self.cell_start[k + 1] as usize);
            assert_eq!(self.pos_of_slot[self.meta[i].slot as usize] as usize, i);
            let b = Sphere {
                center: Vec2::new(self.sph[0][i], self.sph[1][i]),
                radius: self.sph[2][i],
            }
            .aabb();
            let got = [self.minx[i], self.miny[i], self.maxx[i], self.maxy[i]];
            let want = [b.min.x, b.min.y, b.max.x, b.max.y];
            assert_eq!(got.map(f32::to_bits), want.map(f32::to_bits), "box of {i}");
        }
    }
}

/// Exact tests of the box hits (filter, then the circle distance, as
/// `Sphere::intersects`; its box test was the chunk's, on the same boxes).
#[inline(never)]
fn flush2(
    cand: &[[u32; 2]],
    sph: &[Vec<f32>; 3],
    meta: &[Meta],
    found: &mut Vec<(u32, u32)>,
    f: &mut impl FnMut(u32, u32),
) {
    let n = meta.len();
    let [sx, sy, sr] = sph;
    let (sx, sy, sr) = (&sx[..n], &sy[..n], &sr[..n]);
    found.clear();
    found.resize(cand.len(), (0, 0));
    let mut p = 0;
    for &[i, j] in cand {
        let (i, j) = (i as usize, j as usize);
        let (mi, mj) = (meta[i], meta[j]);
        let r = sr[i] + sr[j];
        let (dx, dy) = (sx[i] - sx[j], sy[i] - sy[j]);
        let hit = (dx * dx + dy * dy <= r * r) & mi.pairs_with(&mj);
        found[p] = (mi.slot, mj.slot);
        p += hit as usize;
    }
    for &(a, b) in &found[..p] {
        f(a, b);
    }
}
