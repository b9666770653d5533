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
//! `min_cell`, and to the cell of its centre there. Its key is
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

use sparti::Sphere;
use sparti::glam::{Vec3, Vec4};

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
        (self.is_static & o.is_static) == 0 && self.layer & o.mask != 0 && o.layer & self.mask != 0
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
    n: usize,
    minx: Vec<f32>,
    miny: Vec<f32>,
    minz: Vec<f32>,
    maxx: Vec<f32>,
    maxy: Vec<f32>,
    maxz: Vec<f32>,
    sph: Vec<[f32; 4]>,
    meta: Vec<Meta>,
    key: Vec<u32>,
    // The scatter's destination, swapped with the above after it.
    sph_b: Vec<[f32; 4]>,
    meta_b: Vec<Meta>,
    key_b: Vec<u32>,
    cell_start: Vec<u32>,
    pos_of_slot: Vec<u32>,
    /// Counters of the last `for_each_pair` (when `COUNT`).
    pub rows: u64,
    pub chunks: u64,
    pub box_hits: u64,
}

/// An object's box, the query.
#[derive(Clone, Copy)]
struct Q {
    lo: [Vec4; 3],
    hi: [Vec4; 3],
    min: Vec3,
    max: Vec3,
}

/// Turn counting on (costs a little; for the figures in the report only).
const COUNT: bool = false;

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
            n: 0,
            minx: Vec::new(),
            miny: Vec::new(),
            minz: Vec::new(),
            maxx: Vec::new(),
            maxy: Vec::new(),
            maxz: Vec::new(),
            sph: Vec::new(),
            meta: Vec::new(),
            key: Vec::new(),
            sph_b: Vec::new(),
            meta_b: Vec::new(),
            key_b: Vec::new(),
            cell_start: vec![0; base as usize + 1],
            pos_of_slot: Vec::new(),
            rows: 0,
            chunks: 0,
            box_hits: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.n
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
            + (self.sph.capacity() + self.sph_b.capacity()) * 16
            + (self.meta.capacity() + self.meta_b.capacity()) * 16
    }

    /// Takes `metas` (slot `i` is `metas[i].slot == i`) and builds.
    pub fn build(&mut self, metas: Vec<Meta>, get: impl Fn(u32) -> Sphere<Vec3>) {
        let n = metas.len();
        self.n = n;
        for v in [
            &mut self.minx,
            &mut self.miny,
            &mut self.minz,
            &mut self.maxx,
            &mut self.maxy,
            &mut self.maxz,
        ] {
            *v = vec![0.0; n + LANES];
        }
        self.sph = vec![[0.0; 4]; n];
        self.sph_b = vec![[0.0; 4]; n];
        self.meta = metas;
        self.meta_b = vec![Meta::default(); n];
        self.key = vec![0; n];
        self.key_b = vec![0; n];
        self.pos_of_slot = vec![0; n];
        // Empty boxes after the end: never overlap anything.
        for i in n..n + LANES {
            self.minx[i] = f32::INFINITY;
            self.miny[i] = f32::INFINITY;
            self.minz[i] = f32::INFINITY;
            self.maxx[i] = f32::NEG_INFINITY;
            self.maxy[i] = f32::NEG_INFINITY;
            self.maxz[i] = f32::NEG_INFINITY;
        }
        self.refresh(get);
    }

    #[inline(always)]
    fn level_of(&self, r: f32) -> usize {
        // Deepest level whose cell side is >= 2r: floor(log2(side / 2r)),
        // from the float's exponent; then one step back if rounding said
        // too deep.
        let top = self.levels.len() - 1;
        let x = self.side / (2.0 * r);
        let e = ((x.to_bits() >> 23) as i32 - 127).clamp(0, top as i32) as usize;
        if self.levels[e].c < 2.0 * r && e > 0 { e - 1 } else { e }
    }

    /// Reads every object's sphere (`get(slot)`), re-keys and re-sorts the
    /// objects (a counting sort over the cells, nearly sequential) and
    /// writes their boxes in the new order. No allocation.
    pub fn refresh(&mut self, get: impl Fn(u32) -> Sphere<Vec3>) {
        let n = self.n;
        self.cell_start.fill(0);
        let mut ext = [f32::NEG_INFINITY; 16];
        let o = self.origin;
        for i in 0..n {
            let s = get(self.meta[i].slot);
            let (c, r) = (s.center, s.radius);
            self.sph[i] = [c.x, c.y, c.z, r];
            let li = self.level_of(r);
            let lv = &self.levels[li];
            let dim = (1u32 << lv.shift) as f32;
            let rel = (c - o) * lv.inv;
            // Cell of the centre, clamped into the root (truncation is the
            // floor once clamped at 0).
            let kx = rel.x.clamp(0.0, dim - 1.0) as u32;
            let ky = rel.y.clamp(0.0, dim - 1.0) as u32;
            let kz = rel.z.clamp(0.0, dim - 1.0) as u32;
            // How far the sphere sticks out of that cell (<= r inside it).
            let lo = o + Vec3::new(kx as f32, ky as f32, kz as f32) * lv.c;
            let out = (lo - c).max(c - (lo + Vec3::splat(lv.c))).max_element() + r;
            ext[li] = ext[li].max(out);
            let k = lv.base + (((kz << lv.shift) + ky) << lv.shift) + kx;
            self.key[i] = k;
            self.cell_start[k as usize] += 1;
        }
        for (li, lv) in self.levels.iter_mut().enumerate() {
            lv.ext = if ext[li] == f32::NEG_INFINITY {
                -1.0
            } else {
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
        for i in (0..n).rev() {
            let k = self.key[i] as usize;
            let d = self.cell_start[k] - 1;
            self.cell_start[k] = d;
            let d = d as usize;
            let s = self.sph[i];
            let m = self.meta[i];
            self.sph_b[d] = s;
            self.meta_b[d] = m;
            self.key_b[d] = k as u32;
            self.pos_of_slot[m.slot as usize] = d as u32;
            let b = Sphere {
                center: Vec3::new(s[0], s[1], s[2]),
                radius: s[3],
            }
            .aabb();
            self.minx[d] = b.min.x;
            self.miny[d] = b.min.y;
            self.minz[d] = b.min.z;
            self.maxx[d] = b.max.x;
            self.maxy[d] = b.max.y;
            self.maxz[d] = b.max.z;
        }
        let last = self.cell_start.len() - 1;
        self.cell_start[last] = n as u32;
        std::mem::swap(&mut self.sph, &mut self.sph_b);
        std::mem::swap(&mut self.meta, &mut self.meta_b);
        std::mem::swap(&mut self.key, &mut self.key_b);
    }

    /// Box test of the query against the 8 boxes at `b..b + 8`: bit `l` set
    /// when box `b + l` overlaps (closed). Branch-free.
    #[inline(always)]
    fn chunk(&self, q: &Q, b: usize) -> u32 {
        #[inline(always)]
        fn ld(v: &[f32], b: usize) -> (Vec4, Vec4) {
            let s: &[f32; 8] = v[b..b + 8].try_into().unwrap();
            (
                Vec4::from([s[0], s[1], s[2], s[3]]),
                Vec4::from([s[4], s[5], s[6], s[7]]),
            )
        }
        let (ax, bx) = ld(&self.minx, b);
        let (cx, dx) = ld(&self.maxx, b);
        let (ay, by) = ld(&self.miny, b);
        let (cy, dy) = ld(&self.maxy, b);
        let (az, bz) = ld(&self.minz, b);
        let (cz, dz) = ld(&self.maxz, b);
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

    /// Candidates at positions `s..e` against object `i`.
    #[inline(always)]
    fn scan(&mut self, i: usize, q: &Q, s: usize, e: usize, f: &mut impl FnMut(u32, u32)) {
        let mut b = s;
        while b < e {
            let left = e - b;
            let valid = if left >= LANES { 0xFF } else { (1u32 << left) - 1 };
            let mut m = self.chunk(q, b) & valid;
            if COUNT {
                self.chunks += 1;
                self.box_hits += m.count_ones() as u64;
            }
            while m != 0 {
                let j = b + m.trailing_zeros() as usize;
                m &= m - 1;
                let (mi, mj) = (&self.meta[i], &self.meta[j]);
                if !mi.pairs_with(mj) {
                    continue;
                }
                let (a, c) = (self.sph[i], self.sph[j]);
                // Sphere::intersects: the distance test and the boxes' test
                // (done above on the same boxes, Sphere::aabb's).
                let r = a[3] + c[3];
                let d = Vec3::new(a[0] - c[0], a[1] - c[1], a[2] - c[2]);
                if d.length_squared() <= r * r {
                    f(mi.slot, mj.slot);
                }
            }
            b += LANES;
        }
    }

    /// Calls `f(slot_a, slot_b)` once for every overlapping pair that the
    /// filter allows.
    pub fn for_each_pair(&mut self, mut f: impl FnMut(u32, u32)) {
        if COUNT {
            self.rows = 0;
            self.chunks = 0;
            self.box_hits = 0;
        }
        let o = self.origin;
        let nl = self.levels.len();
        for li in 0..nl {
            let lv = self.levels[li];
            if lv.ext < 0.0 {
                continue;
            }
            let first = self.cell_start[lv.base as usize] as usize;
            let last = if li + 1 < nl {
                self.cell_start[self.levels[li + 1].base as usize] as usize
            } else {
                self.n
            };
            for i in first..last {
                let min = Vec3::new(self.minx[i], self.miny[i], self.minz[i]);
                let max = Vec3::new(self.maxx[i], self.maxy[i], self.maxz[i]);
                let q = Q {
                    lo: [Vec4::splat(min.x), Vec4::splat(min.y), Vec4::splat(min.z)],
                    hi: [Vec4::splat(max.x), Vec4::splat(max.y), Vec4::splat(max.z)],
                    min,
                    max,
                };
                let own = self.key[i] - lv.base;
                let mask = (1u32 << lv.shift) - 1;
                let (yi, zi) = ( (own >> lv.shift) & mask, own >> (2 * lv.shift));
                for ti in 0..=li {
                    let t = self.levels[ti];
                    if t.ext < 0.0 {
                        continue;
                    }
                    let top = ((1u32 << t.shift) - 1) as f32;
                    // Cells k with k c - ext <= max and (k + 1) c + ext >= min.
                    let lo = ((q.min - o - Vec3::splat(t.ext)) * t.inv - Vec3::ONE)
                        .clamp(Vec3::splat(-1.0), Vec3::splat(top + 1.0));
                    let hi = ((q.max - o + Vec3::splat(t.ext)) * t.inv)
                        .clamp(Vec3::splat(-1.0), Vec3::splat(top + 1.0));
                    // ceil(lo), floor(hi), on values >= -1 (no libm call).
                    let ceil = |x: f32| {
                        let k = (x + 1.0) as i32 - 1;
                        if (k as f32) < x { k + 1 } else { k }
                    };
                    let floor = |x: f32| (x + 1.0) as i32 - 1;
                    let top = top as i32;
                    let (x0, x1) = (ceil(lo.x).max(0), floor(hi.x).min(top));
                    let (y0, y1) = (ceil(lo.y).max(0), floor(hi.y).min(top));
                    let (mut z0, z1) = (ceil(lo.z).max(0), floor(hi.z).min(top));
                    if x0 > x1 {
                        continue;
                    }
                    let same = ti == li;
                    if same {
                        z0 = z0.max(zi as i32);
                    }
                    let (x0, x1) = (x0 as u32, x1 as u32);
                    for z in z0..=z1 {
                        let z = z as u32;
                        let ys = if same && z == zi { y0.max(yi as i32) } else { y0 };
                        for y in ys..=y1 {
                            let y = y as u32;
                            let row = t.base + (((z << t.shift) + y) << t.shift);
                            let mut s = self.cell_start[(row + x0) as usize] as usize;
                            let e = self.cell_start[(row + x1 + 1) as usize] as usize;
                            if same && z == zi && y == yi {
                                s = s.max(i + 1);
                            }
                            if COUNT {
                                self.rows += 1;
                            }
                            self.scan(i, &q, s, e, &mut f);
                        }
                    }
                }
            }
        }
    }

    /// Checks the invariants (tests): sorted keys, ranges, positions.
    pub fn validate(&self) {
        for i in 1..self.n {
            assert!(self.key[i - 1] <= self.key[i]);
        }
        for i in 0..self.n {
            let k = self.key[i] as usize;
            assert!(self.cell_start[k] as usize <= i && i < self.cell_start[k + 1] as usize);
            assert_eq!(self.pos_of_slot[self.meta[i].slot as usize] as usize, i);
        }
    }
}
