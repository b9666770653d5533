//! The box test of eight candidates at once: the inner loop of the pair
//! search and of the grid's queries (and a frustum's plane test of eight
//! boxes, [`Boxes::classify_planes`]), and the one place in sparti that
//! uses `unsafe`.
//!
//! Two reasons, both measured (BENCHMARKS.md, "eighth session"):
//! - **Unchecked loads.** A chunk reads eight values from each of six
//!   coordinate arrays; checked slices cost a bounds check per array per
//!   chunk. [`Boxes`] checks the arrays' lengths once, when it is made,
//!   and clamps each chunk's start, so every load is in bounds by
//!   construction (the `// SAFETY:` comments say why).
//! - **AVX2.** Where the processor has it (detected at run time, once),
//!   the chunk is one 8-wide compare per bound instead of two 4-wide
//!   ones. The search that uses it is compiled for AVX2 as a whole
//!   ([`Kind::Avx2`]), so the compares are inlined.
//! - **AVX-512F.** Where the processor has it, the pair search's step of
//!   sixteen boxes is one 16-wide compare per bound, straight into a mask
//!   register and masked by the compares before it ([`Kind::Avx512`],
//!   [`Boxes::mask16`]): six instructions for sixteen boxes in 3D where
//!   AVX2 takes about thirty (compares, ands and the packing of two
//!   masks into one). The grid's rays take sixteen boxes a step too
//!   there, with their slab test ([`Boxes::mask16_ray`]).
//!
//! Every form gives the same bits (closed, ordered compares: a NaN never
//! meets a box; a box with a NaN bound is neither outside nor inside a
//! plane, as in the tree walk's frustum test), and the tests run the
//! search through each this processor has,
//! on the same scenes; CI runs this module's tests under Miri, which
//! checks every load (Miri runs no AVX-512 compare: under it the 16-wide
//! form makes the same loads and compares each half with AVX2).

use glam::Vec4;

use super::LANES;

/// An object's box, as the query of its search: in every lane (the 4-wide
/// form) and as plain values (the 8-wide form broadcasts them).
pub(super) struct Query {
    pub lo: [Vec4; 3],
    pub hi: [Vec4; 3],
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    pub s: [f32; 6],
}

impl Query {
    /// The box `[lo, hi]` on axes `x`, `y` and `az` (in 2D the last axis
    /// repeats the second, the same test).
    #[inline(always)]
    pub fn of(az: usize, lo: &[f32; 3], hi: &[f32; 3]) -> Self {
        let axes = [0, 1, az];
        Query {
            lo: axes.map(|a| Vec4::splat(lo[a])),
            hi: axes.map(|a| Vec4::splat(hi[a])),
            s: [lo[0], lo[1], lo[az], hi[0], hi[1], hi[az]],
        }
    }
}

/// A ray as the 8-wide slab test reads it: its origin and the reciprocals
/// of its direction on axes `x`, `y` and `az` (as [`Query::of`]).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(super) struct Slab {
    o: [f32; 3],
    inv: [f32; 3],
}

impl Slab {
    /// The slab test of a ray from `origin` with direction reciprocals
    /// `inv` (the first `az + 1` axes).
    #[inline(always)]
    pub fn of(az: usize, origin: &[f32; 3], inv: &[f32; 3]) -> Self {
        let axes = [0, 1, az];
        Slab {
            o: axes.map(|a| origin[a]),
            inv: axes.map(|a| inv[a]),
        }
    }
}

/// A frustum's six planes as the 8-wide classification reads them
/// ([`Boxes::classify_planes`]): each plane's normal and offset, and on
/// which axes its positive vertex (the box corner farthest along the
/// normal) takes the upper bound.
pub(super) struct Planes {
    n: [[f32; 3]; 6],
    d: [f32; 6],
    up: [[bool; 3]; 6],
}

impl Planes {
    /// The planes of a frustum on the first `V::DIM` axes.
    pub fn of<V: crate::geometry::Vector>(planes: &[crate::geometry::Plane<V>; 6]) -> Self {
        let mut n = [[0f32; 3]; 6];
        let mut up = [[false; 3]; 6];
        for (i, p) in planes.iter().enumerate() {
            for a in 0..V::DIM {
                n[i][a] = p.normal.get(a);
                // As `Plane::corner` decides (a NaN takes the lower bound).
                up[i][a] = p.normal.get(a) >= 0.0;
            }
        }
        Planes {
            n,
            d: planes.map(|p| p.d),
            up,
        }
    }

    /// The planes of `active` (bit `i` for plane `i`) that the box
    /// `[lo, hi]` (on the first `axes` axes) does not lie wholly inside,
    /// or `None` where it lies wholly outside one of them: the test of
    /// [`Boxes::classify_planes`] on one box. A block of cells inside a
    /// plane holds only objects inside it, so its objects are tested
    /// against the planes left (the tree walk's rule: a node inside the
    /// region holds objects inside it).
    #[inline(always)]
    pub fn classify_box(
        &self,
        axes: usize,
        lo: &[f32; 3],
        hi: &[f32; 3],
        active: u8,
    ) -> Option<u8> {
        let mut left = active;
        for i in 0..6 {
            if active & (1 << i) == 0 {
                continue;
            }
            let (mut pv, mut nv) = (0.0, 0.0);
            for a in 0..axes {
                let n = self.n[i][a];
                let (far, near) = if self.up[i][a] {
                    (hi[a], lo[a])
                } else {
                    (lo[a], hi[a])
                };
                if a == 0 {
                    (pv, nv) = (n * far, n * near);
                } else {
                    (pv, nv) = (pv + n * far, nv + n * near);
                }
            }
            if pv + self.d[i] < 0.0 {
                return None;
            }
            if nv + self.d[i] >= 0.0 {
                left &= !(1 << i);
            }
        }
        Some(left)
    }
}

/// What a query's chunk test selects: the boxes that meet the query's
/// box, or of those, the ones a ray enters within the limit the cell
/// holds when the chunk is tested.
pub(super) enum Test<'a> {
    Boxes(&'a Query),
    /// The boxes that meet the query's box, each with whether it lies
    /// wholly inside ([`Boxes::within`]): for a query that is that box.
    Within(&'a Query),
    Ray(&'a Query, &'a Slab, &'a core::cell::Cell<f32>),
}

/// Which form of the chunk test a search runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Two 4-wide compares per bound (SSE on x86-64, NEON on ARM, or
    /// scalar code where glam has no SIMD).
    Lanes4,
    /// One 8-wide compare per bound (x86-64 with AVX2).
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    Avx2,
    /// The pair search's and the rays' step of sixteen boxes as one
    /// 16-wide compare per bound into a mask register, each compare
    /// masked by the ones before (x86-64 with AVX-512F); everything else
    /// as [`Kind::Avx2`].
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    Avx512,
}

impl Kind {
    /// The fastest form this processor runs: AVX-512F, else AVX2, where
    /// it has them, unless the environment variable `SPARTI_SIMD` says
    /// `4` (the 4-wide form) or `8` (AVX2 at most): to compare the forms,
    /// and to test the narrower ones on a wider machine. Decided once per
    /// process.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    pub fn best() -> Self {
        static BEST: std::sync::OnceLock<Kind> = std::sync::OnceLock::new();
        *BEST.get_or_init(|| {
            let cap = std::env::var_os("SPARTI_SIMD");
            if cap.as_ref().is_some_and(|v| v == "4") {
                return Kind::Lanes4;
            }
            #[cfg(target_arch = "x86_64")]
            {
                if cap.as_ref().is_none_or(|v| v != "8")
                    && std::arch::is_x86_feature_detected!("avx512f")
                {
                    return Kind::Avx512;
                }
                if std::arch::is_x86_feature_detected!("avx2") {
                    return Kind::Avx2;
                }
            }
            Kind::Lanes4
        })
    }

    /// Whether the form runs the 8-wide compares (AVX2, which AVX-512F
    /// includes).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    pub fn is_wide(self) -> bool {
        self != Kind::Lanes4
    }

    /// Every form this processor runs, narrowest first (for the tests).
    #[cfg(test)]
    pub fn available() -> Vec<Kind> {
        #[cfg_attr(not(target_arch = "x86_64"), allow(unused_mut))]
        let mut v = vec![Kind::Lanes4];
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2") {
                v.push(Kind::Avx2);
            }
            if std::arch::is_x86_feature_detected!("avx512f") {
                v.push(Kind::Avx512);
            }
        }
        v
    }
}

/// Runs `body` compiled for AVX2: `body`, called once, is inlined here,
/// and the `#[inline(always)]` search inside it with it, so that the
/// 8-wide compares inline (a search not compiled for AVX2 would call
/// each intrinsic as a function). The compiler may decline to inline a
/// large body (the frustum's search was not, and each intrinsic was a
/// call): such a search is a `#[target_feature(enable = "avx2")]`
/// function of its own (`Grid::classified_avx2`). The box queries' and
/// the rays' searches do inline here (perf: their work lies in
/// `with_avx2`).
///
/// # Safety
/// The processor must have AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub(super) unsafe fn with_avx2<R>(body: impl FnOnce() -> R) -> R {
    body()
}

/// The grid's box arrays, as the chunk test reads them: the lower and
/// upper bounds on axes `x`, `y` and the last one, positions `0..n` the
/// objects', each array holding at least `n + LANES` values (the padding
/// with empty boxes), so that the eight values from any position up to
/// `n` can be loaded.
#[derive(Clone, Copy)]
pub(super) struct Boxes<'a> {
    lo: [&'a [f32]; 3],
    hi: [&'a [f32]; 3],
    n: usize,
    /// 3, or 2 for a 2D grid, whose third arrays are never read (a
    /// constant where the search is compiled, so the third compare goes).
    axes: usize,
    /// Whether every array holds `n + 2 * LANES` values, all past `n`
    /// empty boxes' ([`Boxes::padded16`]: [`Boxes::mask16`] loads
    /// sixteen values from any position up to `n`).
    wide: bool,
}

impl<'a> Boxes<'a> {
    /// The arrays of `n` objects on `axes` axes (2 or 3: the third
    /// arrays of a 2D grid are not read); `None` where one of them is
    /// shorter than `n + LANES` (an empty grid: nothing to test).
    #[inline(always)]
    pub fn new(lo: [&'a [f32]; 3], hi: [&'a [f32]; 3], n: usize, axes: usize) -> Option<Self> {
        let need = n.checked_add(LANES)?;
        lo.iter()
            .chain(&hi)
            .all(|v| v.len() >= need)
            .then_some(Boxes {
                lo,
                hi,
                n,
                axes,
                wide: false,
            })
    }

    /// How many boxes (the objects' positions, `0..n`).
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.n
    }

    /// The same boxes, whose arrays the caller has padded with sixteen
    /// empty boxes past `n` (a pair search's run): [`Boxes::mask16`] may
    /// then load sixteen values from any position up to `n` (their
    /// lengths are checked here).
    #[inline(always)]
    pub fn padded16(mut self) -> Self {
        let n = self.n;
        self.wide = self
            .lo
            .iter()
            .chain(&self.hi)
            .all(|v| v.len() >= n + 2 * LANES);
        self
    }

    /// The eight values of `v` from position `b`, as two lanes of four.
    ///
    /// # Safety
    /// `b + LANES <= v.len()` (for one of the six arrays, `b <= n`).
    #[inline(always)]
    unsafe fn load4(v: &[f32], b: usize) -> (Vec4, Vec4) {
        debug_assert!(b + LANES <= v.len());
        // SAFETY: `b..b + 8` lies inside `v` (this function's contract);
        // `read_unaligned` needs no alignment.
        unsafe {
            let p = v.as_ptr().add(b);
            (
                Vec4::from(p.cast::<[f32; 4]>().read_unaligned()),
                Vec4::from(p.add(4).cast::<[f32; 4]>().read_unaligned()),
            )
        }
    }

    /// Bit `l` set when the box at position `b + l` meets the query
    /// (closed boxes), for the eight positions from `b`; a start past the
    /// objects is taken as `n` (the padding, whose empty boxes meet
    /// nothing). No branch on the boxes.
    #[inline(always)]
    pub fn mask4(&self, q: &Query, b: usize) -> u32 {
        self.compare4::<false>(q, b)
    }

    /// [`Boxes::mask4`] (bits 0 to 7), and bit `16 + l` set when the box
    /// at position `b + l` lies wholly inside the query's box (closed
    /// boxes: `lo >= q.lo` and `hi <= q.hi` on every axis, as
    /// `Aabb::contains` compares; only a box that meets is inside, and a
    /// box with a NaN bound does neither). No branch on the boxes.
    #[inline(always)]
    pub fn within4(&self, q: &Query, b: usize) -> u32 {
        self.compare4::<true>(q, b)
    }

    /// [`Boxes::within4`], or with `INSIDE` false [`Boxes::mask4`] (no
    /// inside test made).
    #[inline(always)]
    fn compare4<const INSIDE: bool>(&self, q: &Query, b: usize) -> u32 {
        let b = b.min(self.n);
        let mut m = [glam::BVec4A::splat(true); 2];
        let mut i = m;
        for a in 0..self.axes.min(3) {
            // SAFETY: `Boxes::new` checked that every array holds at least
            // `n + LANES` values, and `b` is clamped to `n` above.
            let ((l0, l1), (h0, h1)) =
                unsafe { (Self::load4(self.lo[a], b), Self::load4(self.hi[a], b)) };
            m[0] &= l0.cmple(q.hi[a]) & h0.cmpge(q.lo[a]);
            m[1] &= l1.cmple(q.hi[a]) & h1.cmpge(q.lo[a]);
            if INSIDE {
                i[0] &= l0.cmpge(q.lo[a]) & h0.cmple(q.hi[a]);
                i[1] &= l1.cmpge(q.lo[a]) & h1.cmple(q.hi[a]);
            }
        }
        let m = m[0].bitmask() | (m[1].bitmask() << 4);
        if INSIDE {
            m | (m & (i[0].bitmask() | (i[1].bitmask() << 4))) << 16
        } else {
            m
        }
    }

    /// [`Boxes::within4`], or its 8-wide form when `kind` is
    /// [`Kind::Avx2`] or [`Kind::Avx512`].
    ///
    /// # Safety
    /// As [`Boxes::mask`].
    #[inline(always)]
    pub unsafe fn within(&self, kind: Kind, q: &Query, b: usize) -> u32 {
        // SAFETY: this function's contract.
        unsafe { self.compare::<true>(kind, q, b) }
    }

    /// [`Boxes::within`], or with `INSIDE` false [`Boxes::mask`].
    ///
    /// # Safety
    /// As [`Boxes::mask`].
    #[inline(always)]
    unsafe fn compare<const INSIDE: bool>(&self, kind: Kind, q: &Query, b: usize) -> u32 {
        #[cfg(target_arch = "x86_64")]
        if kind.is_wide() {
            // SAFETY: the caller promises AVX2 (this function's contract).
            return unsafe {
                if INSIDE {
                    self.within8(q, b)
                } else {
                    self.mask8(q, b)
                }
            };
        }
        let _ = kind;
        if INSIDE {
            self.within4(q, b)
        } else {
            self.mask4(q, b)
        }
    }

    /// [`Boxes::within4`] with one 8-wide compare per bound.
    ///
    /// # Safety
    /// The processor must have AVX2.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn within8(&self, q: &Query, b: usize) -> u32 {
        use std::arch::x86_64::{
            _CMP_GE_OQ, _CMP_LE_OQ, _mm256_and_ps, _mm256_cmp_ps, _mm256_movemask_ps,
            _mm256_set1_ps,
        };
        // SAFETY: the caller promises AVX2.
        unsafe {
            let mut m = _mm256_cmp_ps::<_CMP_LE_OQ>(_mm256_set1_ps(0.0), _mm256_set1_ps(0.0));
            let mut i = m;
            for a in 0..self.axes.min(3) {
                let [l, h, meets] = self.axis8(q, a, b);
                m = _mm256_and_ps(m, meets);
                let holds = _mm256_and_ps(
                    _mm256_cmp_ps::<_CMP_GE_OQ>(l, _mm256_set1_ps(q.s[a])),
                    _mm256_cmp_ps::<_CMP_LE_OQ>(h, _mm256_set1_ps(q.s[3 + a])),
                );
                i = _mm256_and_ps(i, holds);
            }
            let i = _mm256_and_ps(i, m);
            _mm256_movemask_ps(m) as u32 | (_mm256_movemask_ps(i) as u32) << 16
        }
    }

    /// [`Boxes::mask4`], or its 8-wide form when `kind` is
    /// [`Kind::Avx2`] or [`Kind::Avx512`]. Inlined into each search, which
    /// is compiled once per form.
    ///
    /// # Safety
    /// With [`Kind::Avx2`], the processor must have AVX2, with
    /// [`Kind::Avx512`] AVX-512F (as [`Kind::best`] found), and the caller
    /// should be compiled for it (`#[target_feature(enable = "avx2")]`)
    /// so that the compares inline.
    #[inline(always)]
    pub unsafe fn mask(&self, kind: Kind, q: &Query, b: usize) -> u32 {
        // SAFETY: this function's contract.
        unsafe { self.compare::<false>(kind, q, b) }
    }

    /// The chunk test `test` (a constant where it is inlined) on the
    /// eight positions from `b`, or with `sixteen` on the sixteen, as
    /// `test(b) | test(b + 8) << 8` gives them (with [`Kind::Avx512`] and
    /// arrays padded for sixteen-wide loads, [`Boxes::padded16`], one
    /// 16-wide test: [`Boxes::mask16`], [`Boxes::mask16_ray`]).
    ///
    /// # Safety
    /// As [`Boxes::mask`].
    #[inline(always)]
    pub unsafe fn test(&self, kind: Kind, test: &Test<'_>, b: usize, sixteen: bool) -> u32 {
        // SAFETY: this function's contract.
        unsafe {
            match (test, sixteen) {
                (Test::Boxes(q), false) => self.mask(kind, q, b),
                (Test::Boxes(q), true) => self.mask16(kind, q, b),
                (Test::Within(q), false) => self.within(kind, q, b),
                (Test::Within(q), true) => {
                    let (w0, w1) = (self.within(kind, q, b), self.within(kind, q, b + LANES));
                    (w0 & 0xff) | (w1 & 0xff) << LANES | (w0 >> 16 | (w1 >> 16) << LANES) << 16
                }
                (Test::Ray(q, ray, limit), false) => self.mask_ray(kind, q, ray, limit.get(), b),
                (Test::Ray(q, ray, limit), true) => self.mask16_ray(kind, q, ray, limit.get(), b),
            }
        }
    }

    /// [`Boxes::mask_ray`] on the sixteen positions from `b`, as
    /// `mask_ray(b) | mask_ray(b + 8) << 8` gives them: with
    /// [`Kind::Avx512`] and arrays padded for it ([`Boxes::padded16`]),
    /// the same operations on sixteen lanes at once (`slab16`).
    ///
    /// # Safety
    /// As [`Boxes::mask`].
    #[inline(always)]
    pub unsafe fn mask16_ray(
        &self,
        kind: Kind,
        q: &Query,
        ray: &Slab,
        limit: f32,
        b: usize,
    ) -> u32 {
        #[cfg(target_arch = "x86_64")]
        if kind == Kind::Avx512 && self.wide {
            // SAFETY: the caller promises AVX-512F; the arrays hold
            // sixteen values past `n` (`wide`).
            return unsafe { self.slab16(q, ray, limit, b) };
        }
        // SAFETY: this function's contract.
        unsafe {
            self.mask_ray(kind, q, ray, limit, b)
                | (self.mask_ray(kind, q, ray, limit, b + LANES) << LANES)
        }
    }

    /// [`Boxes::mask_ray`], and of those boxes, with the 8-wide form, only
    /// the ones the ray enters within `limit` by the tree's slab test
    /// (`traverse::FastRay::entry`: the same operations on the same
    /// values, so the same answer; a slab whose distances are NaN does not
    /// constrain). The 4-wide form leaves the slab test to the caller
    /// (which makes it on every box anyway).
    ///
    /// # Safety
    /// As [`Boxes::mask`].
    #[inline(always)]
    pub unsafe fn mask_ray(&self, kind: Kind, q: &Query, ray: &Slab, limit: f32, b: usize) -> u32 {
        #[cfg(target_arch = "x86_64")]
        if kind.is_wide() {
            // SAFETY: the caller promises AVX2 (this function's contract).
            return unsafe { self.mask8_ray(q, ray, limit, b) };
        }
        let _ = (ray, limit);
        // SAFETY: as above.
        unsafe { self.mask(kind, q, b) }
    }

    /// The lower and upper bounds on axis `a` of the eight boxes from
    /// position `b` (a start past the objects is taken as `n`, the
    /// padding), and which of them meet the query's box on that axis.
    ///
    /// # Safety
    /// The processor must have AVX2.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn axis8(&self, q: &Query, a: usize, b: usize) -> [std::arch::x86_64::__m256; 3] {
        use std::arch::x86_64::{
            _CMP_GE_OQ, _CMP_LE_OQ, _mm256_and_ps, _mm256_cmp_ps, _mm256_loadu_ps, _mm256_set1_ps,
        };
        let b = b.min(self.n);
        let (lo, hi) = (self.lo[a], self.hi[a]);
        debug_assert!(b + LANES <= lo.len() && b + LANES <= hi.len());
        // SAFETY: the loads: `Boxes::new` checked that every array holds
        // at least `n + LANES` values and `b` is clamped to `n` above, so
        // `b..b + 8` is in bounds (`loadu` needs no alignment). The
        // intrinsics: the caller promises AVX2.
        unsafe {
            let (l, h) = (
                _mm256_loadu_ps(lo.as_ptr().add(b)),
                _mm256_loadu_ps(hi.as_ptr().add(b)),
            );
            let meets = _mm256_and_ps(
                _mm256_cmp_ps::<_CMP_LE_OQ>(l, _mm256_set1_ps(q.s[3 + a])),
                _mm256_cmp_ps::<_CMP_GE_OQ>(h, _mm256_set1_ps(q.s[a])),
            );
            [l, h, meets]
        }
    }

    /// The pair search's step: bit `l` set when the box at position
    /// `b + l` meets the query, for the sixteen positions from `b` (a
    /// start past the objects taken as `n`), as the two chunks
    /// `mask(b) | mask(b + 8) << 8` give it. With `kind`
    /// [`Kind::Avx512`] and arrays that hold sixteen values past `n`
    /// (a run: see `wide`), one 16-wide compare per bound into a mask
    /// register, each masked by the ones before; otherwise those two
    /// chunks. The arrays must be padded as [`Boxes::padded16`] says for
    /// the sixteen bits to be right (not for the loads to be in bounds).
    ///
    /// # Safety
    /// As [`Boxes::mask`].
    #[inline(always)]
    pub unsafe fn mask16(&self, kind: Kind, q: &Query, b: usize) -> u32 {
        #[cfg(target_arch = "x86_64")]
        if kind == Kind::Avx512 && self.wide {
            let b = b.min(self.n);
            let mut m = u16::MAX;
            for a in 0..self.axes.min(3) {
                // SAFETY: the loads: the arrays hold `n + 2 * LANES`
                // values (`wide`) and `b` is clamped to `n` above. The
                // compares: the caller promises AVX-512F.
                unsafe {
                    let (l, h) = (load16(self.lo[a], b), load16(self.hi[a], b));
                    m = meets16(m, &l, &h, q.s[3 + a], q.s[a]);
                }
            }
            return u32::from(m);
        }
        // SAFETY: this function's contract.
        unsafe { self.mask(kind, q, b) | (self.mask(kind, q, b + LANES) << LANES) }
    }

    /// [`Boxes::mask4`] with one 8-wide compare per bound.
    ///
    /// # Safety
    /// The processor must have AVX2.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn mask8(&self, q: &Query, b: usize) -> u32 {
        use std::arch::x86_64::{_mm256_and_ps, _mm256_movemask_ps};
        // SAFETY: the caller promises AVX2.
        unsafe {
            let [_, _, mut m] = self.axis8(q, 0, b);
            for a in 1..self.axes.min(3) {
                m = _mm256_and_ps(m, self.axis8(q, a, b)[2]);
            }
            _mm256_movemask_ps(m) as u32
        }
    }

    /// [`Boxes::mask_ray`]'s 8-wide form.
    ///
    /// # Safety
    /// The processor must have AVX2.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn mask8_ray(&self, q: &Query, ray: &Slab, limit: f32, b: usize) -> u32 {
        use std::arch::x86_64::{
            _CMP_LE_OQ, _CMP_ORD_Q, _mm256_add_ps, _mm256_and_ps, _mm256_blendv_ps, _mm256_cmp_ps,
            _mm256_max_ps, _mm256_min_ps, _mm256_movemask_ps, _mm256_mul_ps, _mm256_set1_ps,
            _mm256_setzero_ps, _mm256_sub_ps,
        };
        // SAFETY: the caller promises AVX2.
        unsafe {
            let mut m = _mm256_cmp_ps::<_CMP_LE_OQ>(_mm256_setzero_ps(), _mm256_setzero_ps());
            // The entry and exit distances (`FastRay::entry`): from 0 and
            // `limit`, each slab narrowing them.
            let mut t0 = _mm256_setzero_ps();
            let mut t1 = _mm256_set1_ps(limit);
            for a in 0..self.axes.min(3) {
                let [lo, hi, meets] = self.axis8(q, a, b);
                m = _mm256_and_ps(m, meets);
                let (o, inv) = (_mm256_set1_ps(ray.o[a]), _mm256_set1_ps(ray.inv[a]));
                let tl = _mm256_mul_ps(_mm256_sub_ps(lo, o), inv);
                let th = _mm256_mul_ps(_mm256_sub_ps(hi, o), inv);
                // Ordered: the nearer and the farther; a NaN: no limit.
                let ordered = _mm256_cmp_ps::<_CMP_ORD_Q>(tl, th);
                let near = _mm256_blendv_ps(
                    _mm256_set1_ps(f32::NEG_INFINITY),
                    _mm256_min_ps(tl, th),
                    ordered,
                );
                let far = _mm256_blendv_ps(
                    _mm256_set1_ps(f32::INFINITY),
                    _mm256_max_ps(tl, th),
                    ordered,
                );
                t0 = _mm256_max_ps(t0, near);
                t1 = _mm256_min_ps(t1, far);
            }
            // `within(t0, t1)`: t0 <= t1 + t1 * SLACK + MIN_POSITIVE.
            let bound = _mm256_add_ps(
                _mm256_add_ps(
                    t1,
                    _mm256_mul_ps(t1, _mm256_set1_ps(crate::traverse::SLACK)),
                ),
                _mm256_set1_ps(f32::MIN_POSITIVE),
            );
            m = _mm256_and_ps(m, _mm256_cmp_ps::<_CMP_LE_OQ>(t0, bound));
            _mm256_movemask_ps(m) as u32
        }
    }
}

impl Boxes<'_> {
    /// The frustum test of the eight boxes from position `b` (a start
    /// past the objects taken as `n`, the padding) against the planes of
    /// `active` (bit `i` for plane `i`; the others are not tested): bit
    /// `l` of the first mask set unless the box at `b + l` lies wholly
    /// outside one of them, of the second when it lies wholly inside
    /// each of them. With every plane active, the same operations on the
    /// same values as the tree walk's test of one box
    /// (`Frustum::classify_aabb`: the sum
    /// `((n.x * p.x + n.y * p.y) + n.z * p.z) + d` at the positive and the
    /// negative vertex, each product and sum rounded alone), so the same
    /// answers; a NaN is neither outside nor
    /// inside, as there. With the 8-wide form when `kind` is
    /// [`Kind::Avx2`] or [`Kind::Avx512`]. The bits of positions past `n`
    /// mean nothing (a padding box, of bounds `+inf` and `-inf`, gives
    /// NaN against a plane with a zero component, which is not outside):
    /// the caller masks them, and those past its row, with `valid`.
    ///
    /// # Safety
    /// As [`Boxes::mask`].
    #[inline(always)]
    pub unsafe fn classify_planes(
        &self,
        kind: Kind,
        p: &Planes,
        active: u8,
        b: usize,
    ) -> (u32, u32) {
        #[cfg(target_arch = "x86_64")]
        if kind.is_wide() {
            // SAFETY: the caller promises AVX2 (this function's contract).
            return unsafe { self.classify_planes8(p, active, b) };
        }
        let _ = kind;
        self.classify_planes4(p, active, b)
    }

    /// [`Boxes::classify_planes`] on two lanes of four.
    #[inline(always)]
    fn classify_planes4(&self, p: &Planes, active: u8, b: usize) -> (u32, u32) {
        let b = b.min(self.n);
        let axes = self.axes.min(3);
        let mut l = [(Vec4::ZERO, Vec4::ZERO); 3];
        let mut h = [(Vec4::ZERO, Vec4::ZERO); 3];
        for a in 0..axes {
            // SAFETY: `Boxes::new` checked that every array holds at least
            // `n + LANES` values, and `b` is clamped to `n` above.
            unsafe {
                l[a] = Self::load4(self.lo[a], b);
                h[a] = Self::load4(self.hi[a], b);
            }
        }
        let mut out = (glam::BVec4A::splat(false), glam::BVec4A::splat(false));
        let mut ins = (glam::BVec4A::splat(true), glam::BVec4A::splat(true));
        for i in 0..6 {
            if active & (1 << i) == 0 {
                continue;
            }
            let d = Vec4::splat(p.d[i]);
            let mut pv = (Vec4::ZERO, Vec4::ZERO);
            let mut nv = (Vec4::ZERO, Vec4::ZERO);
            for a in 0..axes {
                let n = Vec4::splat(p.n[i][a]);
                let (far, near) = if p.up[i][a] {
                    (h[a], l[a])
                } else {
                    (l[a], h[a])
                };
                if a == 0 {
                    pv = (n * far.0, n * far.1);
                    nv = (n * near.0, n * near.1);
                } else {
                    pv = (pv.0 + n * far.0, pv.1 + n * far.1);
                    nv = (nv.0 + n * near.0, nv.1 + n * near.1);
                }
            }
            out.0 |= (pv.0 + d).cmplt(Vec4::ZERO);
            out.1 |= (pv.1 + d).cmplt(Vec4::ZERO);
            ins.0 &= (nv.0 + d).cmpge(Vec4::ZERO);
            ins.1 &= (nv.1 + d).cmpge(Vec4::ZERO);
        }
        let meets = !(out.0.bitmask() | (out.1.bitmask() << 4)) & 0xff;
        (meets, ins.0.bitmask() | (ins.1.bitmask() << 4))
    }

    /// [`Boxes::classify_planes`] with 8-wide operations.
    ///
    /// # Safety
    /// The processor must have AVX2.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn classify_planes8(&self, p: &Planes, active: u8, b: usize) -> (u32, u32) {
        use std::arch::x86_64::{
            __m256, _CMP_GE_OQ, _CMP_LT_OQ, _mm256_add_ps, _mm256_and_ps, _mm256_cmp_ps,
            _mm256_loadu_ps, _mm256_movemask_ps, _mm256_mul_ps, _mm256_or_ps, _mm256_set1_ps,
            _mm256_setzero_ps,
        };
        let b = b.min(self.n);
        let axes = self.axes.min(3);
        // SAFETY: the loads: `Boxes::new` checked that every array holds
        // at least `n + LANES` values and `b` is clamped to `n` above, so
        // `b..b + 8` is in bounds (`loadu` needs no alignment). The
        // intrinsics: the caller promises AVX2.
        unsafe {
            let zero = _mm256_setzero_ps();
            let mut l = [zero; 3];
            let mut h = [zero; 3];
            for a in 0..axes {
                debug_assert!(b + LANES <= self.lo[a].len() && b + LANES <= self.hi[a].len());
                l[a] = _mm256_loadu_ps(self.lo[a].as_ptr().add(b));
                h[a] = _mm256_loadu_ps(self.hi[a].as_ptr().add(b));
            }
            let mut out: __m256 = zero;
            let mut ins: __m256 = _mm256_cmp_ps::<_CMP_GE_OQ>(zero, zero);
            for i in 0..6 {
                if active & (1 << i) == 0 {
                    continue;
                }
                let mut pv = zero;
                let mut nv = zero;
                for a in 0..axes {
                    let n = _mm256_set1_ps(p.n[i][a]);
                    let (far, near) = if p.up[i][a] {
                        (h[a], l[a])
                    } else {
                        (l[a], h[a])
                    };
                    if a == 0 {
                        pv = _mm256_mul_ps(n, far);
                        nv = _mm256_mul_ps(n, near);
                    } else {
                        pv = _mm256_add_ps(pv, _mm256_mul_ps(n, far));
                        nv = _mm256_add_ps(nv, _mm256_mul_ps(n, near));
                    }
                }
                let d = _mm256_set1_ps(p.d[i]);
                out = _mm256_or_ps(out, _mm256_cmp_ps::<_CMP_LT_OQ>(_mm256_add_ps(pv, d), zero));
                ins = _mm256_and_ps(ins, _mm256_cmp_ps::<_CMP_GE_OQ>(_mm256_add_ps(nv, d), zero));
            }
            let meets = !(_mm256_movemask_ps(out) as u32) & 0xff;
            (meets, _mm256_movemask_ps(ins) as u32)
        }
    }
}

impl Boxes<'_> {
    /// [`Boxes::mask8_ray`] on the sixteen positions from `b` (a start
    /// past the objects taken as `n`): the same operations, lane by lane,
    /// on 16-wide registers, the box compares into a mask register.
    ///
    /// # Safety
    /// The processor must have AVX-512F, and every array must hold
    /// sixteen values past `n` (`wide`).
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    #[inline(always)]
    unsafe fn slab16(&self, q: &Query, ray: &Slab, limit: f32, b: usize) -> u32 {
        use std::arch::x86_64::{
            _CMP_GE_OQ, _CMP_LE_OQ, _CMP_ORD_Q, _mm512_add_ps, _mm512_cmp_ps_mask, _mm512_loadu_ps,
            _mm512_mask_blend_ps, _mm512_mask_cmp_ps_mask, _mm512_max_ps, _mm512_min_ps,
            _mm512_mul_ps, _mm512_set1_ps, _mm512_setzero_ps, _mm512_sub_ps,
        };
        debug_assert!(self.wide);
        let b = b.min(self.n);
        debug_assert!(
            self.lo
                .iter()
                .chain(&self.hi)
                .all(|v| b + 2 * LANES <= v.len())
        );
        let mut m = u16::MAX;
        // SAFETY: the loads: the arrays hold `n + 2 * LANES` values
        // (`wide`, this function's contract) and `b` is clamped to `n`
        // above. The intrinsics: the caller promises AVX-512F.
        unsafe {
            let (no_limit, below) = (
                _mm512_set1_ps(f32::INFINITY),
                _mm512_set1_ps(-f32::INFINITY),
            );
            let slack = _mm512_set1_ps(crate::traverse::SLACK);
            let tiny = _mm512_set1_ps(f32::MIN_POSITIVE);
            // The entry and exit distances, from 0 and `limit`, each slab
            // narrowing them (an unordered slab, NaN, does not).
            let (mut t0, mut t1) = (_mm512_setzero_ps(), _mm512_set1_ps(limit));
            for a in 0..self.axes.min(3) {
                let l = _mm512_loadu_ps(self.lo[a].as_ptr().add(b));
                let h = _mm512_loadu_ps(self.hi[a].as_ptr().add(b));
                m = _mm512_mask_cmp_ps_mask::<_CMP_LE_OQ>(m, l, _mm512_set1_ps(q.s[3 + a]));
                m = _mm512_mask_cmp_ps_mask::<_CMP_GE_OQ>(m, h, _mm512_set1_ps(q.s[a]));
                let (o, inv) = (_mm512_set1_ps(ray.o[a]), _mm512_set1_ps(ray.inv[a]));
                let tl = _mm512_mul_ps(_mm512_sub_ps(l, o), inv);
                let th = _mm512_mul_ps(_mm512_sub_ps(h, o), inv);
                let ordered = _mm512_cmp_ps_mask::<_CMP_ORD_Q>(tl, th);
                let nearer = _mm512_mask_blend_ps(ordered, below, _mm512_min_ps(tl, th));
                let farther = _mm512_mask_blend_ps(ordered, no_limit, _mm512_max_ps(tl, th));
                (t0, t1) = (_mm512_max_ps(t0, nearer), _mm512_min_ps(t1, farther));
            }
            // `within(t0, t1)`: t0 <= t1 + t1 * SLACK + MIN_POSITIVE.
            let bound = _mm512_add_ps(_mm512_add_ps(t1, _mm512_mul_ps(t1, slack)), tiny);
            u32::from(_mm512_mask_cmp_ps_mask::<_CMP_LE_OQ>(m, t0, bound))
        }
    }

    /// [`Boxes::slab16`] under Miri, which runs no AVX-512 operation: the
    /// same loads, then the 8-wide test on each half (the values the
    /// loads read, as `slab16` reads them).
    ///
    /// # Safety
    /// As the other form.
    #[cfg(all(target_arch = "x86_64", miri))]
    #[inline(always)]
    unsafe fn slab16(&self, q: &Query, ray: &Slab, limit: f32, b: usize) -> u32 {
        debug_assert!(self.wide);
        let b = b.min(self.n);
        let mut lo = [[0f32; 2 * LANES]; 3];
        let mut hi = [[0f32; 2 * LANES]; 3];
        for a in 0..self.axes.min(3) {
            // SAFETY: as the other form's loads.
            unsafe {
                lo[a] = load16(self.lo[a], b);
                hi[a] = load16(self.hi[a], b);
            }
        }
        let half = |o: usize| {
            let one = Boxes {
                lo: [0, 1, 2].map(|a| &lo[a][o..]),
                hi: [0, 1, 2].map(|a| &hi[a][o..]),
                n: 0,
                axes: self.axes,
                wide: false,
            };
            // SAFETY: the caller promises AVX-512F, so AVX2; each array
            // holds eight values from 0 (`n` 0).
            unsafe { one.mask8_ray(q, ray, limit, 0) }
        };
        half(0) | half(LANES) << LANES
    }
}

/// The sixteen values of `v` from position `b`.
///
/// # Safety
/// `b + 2 * LANES <= v.len()`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn load16(v: &[f32], b: usize) -> [f32; 2 * LANES] {
    debug_assert!(b + 2 * LANES <= v.len());
    // SAFETY: `b..b + 16` lies inside `v` (this function's contract);
    // `read_unaligned` needs no alignment.
    unsafe {
        v.as_ptr()
            .add(b)
            .cast::<[f32; 2 * LANES]>()
            .read_unaligned()
    }
}

/// The lanes of `m` whose box, lower bounds `l` and upper bounds `h` on
/// one axis, meets the query's `[lo, hi]` there (closed, ordered
/// compares: a NaN never meets): `m & (l <= hi) & (h >= lo)`, lane by
/// lane, as two masked 16-wide compares.
///
/// # Safety
/// The processor must have AVX-512F.
#[cfg(all(target_arch = "x86_64", not(miri)))]
#[inline(always)]
unsafe fn meets16(m: u16, l: &[f32; 16], h: &[f32; 16], hi: f32, lo: f32) -> u16 {
    use std::arch::x86_64::{
        _CMP_GE_OQ, _CMP_LE_OQ, _mm512_loadu_ps, _mm512_mask_cmp_ps_mask, _mm512_set1_ps,
    };
    // SAFETY: the loads read the two arrays (`loadu` needs no
    // alignment); the caller promises AVX-512F.
    unsafe {
        let m = _mm512_mask_cmp_ps_mask::<_CMP_LE_OQ>(
            m,
            _mm512_loadu_ps(l.as_ptr()),
            _mm512_set1_ps(hi),
        );
        _mm512_mask_cmp_ps_mask::<_CMP_GE_OQ>(m, _mm512_loadu_ps(h.as_ptr()), _mm512_set1_ps(lo))
    }
}

/// [`meets16`] under Miri, which runs no AVX-512 compare: the same
/// closed, ordered compares on each half with AVX2 (which AVX-512F
/// includes, and which Miri runs far faster than sixteen lanes one by
/// one). The loads before it, the `unsafe` part, are the same.
///
/// # Safety
/// The processor must have AVX-512F.
#[cfg(all(target_arch = "x86_64", miri))]
#[inline(always)]
unsafe fn meets16(m: u16, l: &[f32; 16], h: &[f32; 16], hi: f32, lo: f32) -> u16 {
    use std::arch::x86_64::{
        _CMP_GE_OQ, _CMP_LE_OQ, _mm256_and_ps, _mm256_cmp_ps, _mm256_loadu_ps, _mm256_movemask_ps,
        _mm256_set1_ps,
    };
    // SAFETY: the loads read the two arrays, eight values from 0 and 8
    // (`loadu` needs no alignment); the caller promises AVX-512F, so AVX2.
    let half = |o: usize| unsafe {
        let meets = _mm256_and_ps(
            _mm256_cmp_ps::<_CMP_LE_OQ>(_mm256_loadu_ps(l.as_ptr().add(o)), _mm256_set1_ps(hi)),
            _mm256_cmp_ps::<_CMP_GE_OQ>(_mm256_loadu_ps(h.as_ptr().add(o)), _mm256_set1_ps(lo)),
        );
        _mm256_movemask_ps(meets) as u16
    };
    m & (half(0) | half(8) << 8)
}

#[cfg(test)]
mod tests {
    use super::super::valid;
    use super::*;
    use crate::geometry::{Aabb, Frustum, Overlap, Plane, Region, Vector};
    use glam::{Mat4, Vec2, Vec3};

    /// Boxes on one axis per position `[i, i + 1]`, the others `[0, 1]`,
    /// with the padding of empty boxes; NaN at position 3.
    fn arrays(n: usize) -> ([Vec<f32>; 3], [Vec<f32>; 3]) {
        let mut lo: [Vec<f32>; 3] = Default::default();
        let mut hi: [Vec<f32>; 3] = Default::default();
        for a in 0..3 {
            for i in 0..n {
                let (l, h) = if a == 0 {
                    (i as f32, i as f32 + 1.0)
                } else {
                    (0.0, 1.0)
                };
                lo[a].push(if i == 3 { f32::NAN } else { l });
                hi[a].push(h);
            }
            lo[a].extend([f32::INFINITY; 2 * LANES]);
            hi[a].extend([f32::NEG_INFINITY; 2 * LANES]);
        }
        (lo, hi)
    }

    fn expected(n: usize, b: usize, qlo: f32, qhi: f32) -> u32 {
        (0..LANES)
            .filter(|&l| {
                let i = b + l;
                i < n && i != 3 && (i as f32) <= qhi && i as f32 + 1.0 >= qlo
            })
            .map(|l| 1 << l)
            .sum()
    }

    /// The grid's per-axis arrays of `boxes`: in 2D the third arrays
    /// repeat the second, as the grid's; exactly the padding
    /// `Boxes::new` asks for (a start past `n` not clamped would load out
    /// of bounds: Miri).
    fn arrays_of<V: Vector>(boxes: &[Aabb<V>]) -> ([Vec<f32>; 3], [Vec<f32>; 3]) {
        let mut lo: [Vec<f32>; 3] = Default::default();
        let mut hi: [Vec<f32>; 3] = Default::default();
        for a in 0..3 {
            let axis = a.min(V::DIM - 1);
            lo[a] = boxes.iter().map(|b| b.min.get(axis)).collect();
            hi[a] = boxes.iter().map(|b| b.max.get(axis)).collect();
            lo[a].extend([f32::INFINITY; LANES]);
            hi[a].extend([f32::NEG_INFINITY; LANES]);
        }
        (lo, hi)
    }

    /// The boxes of [`arrays_of`]'s arrays: `n` of them, on `axes` axes.
    fn boxes_in<'a>(
        (lo, hi): &'a ([Vec<f32>; 3], [Vec<f32>; 3]),
        n: usize,
        axes: usize,
    ) -> Boxes<'a> {
        Boxes::new(
            [&lo[0][..], &lo[1][..], &lo[2][..]],
            [&hi[0][..], &hi[1][..], &hi[2][..]],
            n,
            axes,
        )
        .expect("padded arrays")
    }

    /// `v` on the axes x, y and z (in 2D, x, y and y again, as
    /// [`Query::of`] takes them).
    fn axes_of<V: Vector>(v: V) -> [f32; 3] {
        [0, 1, 2].map(|a| v.get(a.min(V::DIM - 1)))
    }

    /// A small generator in `[0, 1]`: the same numbers on every run.
    fn numbers(mut seed: u32) -> impl FnMut() -> f32 {
        move || {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            seed as f32 / u32::MAX as f32
        }
    }

    /// Every start, the last ones past the objects (clamped to the
    /// padding), every form, eight and sixteen boxes a test: the boxes a
    /// closed test selects, and no load out of bounds (Miri checks each).
    #[test]
    fn chunks_select_the_boxes_that_meet() {
        if cfg!(target_feature = "avx2") {
            // Built for AVX2 (as under Miri in CI): the 8-wide form runs.
            assert!(Kind::available().contains(&Kind::Avx2));
        }
        if cfg!(target_feature = "avx512f") {
            // Built for AVX-512F (Miri in CI): the 16-wide form runs.
            assert!(Kind::available().contains(&Kind::Avx512));
        }
        // In 2D (`axes` 2) the third arrays are not read: a query far off
        // on that axis still meets.
        for (axes, z) in [(3, 0.5), (3, 5.0), (2, 5.0)] {
            for n in [0usize, 1, 7, 8, 9, 20] {
                let (lo, hi) = arrays(n);
                let bx = Boxes::new(
                    [&lo[0][..], &lo[1][..], &lo[2][..]],
                    [&hi[0][..], &hi[1][..], &hi[2][..]],
                    n,
                    axes,
                )
                .expect("padded arrays");
                let wide = bx.padded16();
                assert!(wide.wide, "padded with sixteen empty boxes");
                for (qlo, qhi) in [(2.0, 5.0), (0.0, 0.0), (-3.0, 100.0), (4.5, 4.5)] {
                    let q = Query::of(2, &[qlo, 0.5, z], &[qhi, 0.5, z]);
                    for b in 0..n + 3 {
                        let want = if axes == 3 && z > 1.0 {
                            0
                        } else {
                            expected(n, b.min(n), qlo, qhi)
                        };
                        let what = || format!("{axes} axes, n {n}, start {b}, query {qlo}..{qhi}");
                        assert_eq!(bx.mask4(&q, b), want, "{}", what());
                        let want16 = if axes == 3 && z > 1.0 {
                            0
                        } else {
                            want | expected(n, (b + LANES).min(n), qlo, qhi) << LANES
                        };
                        for kind in Kind::available() {
                            // SAFETY: `available` found the form's
                            // instructions.
                            let (m, m16, m16w) = unsafe {
                                (
                                    bx.mask(kind, &q, b),
                                    bx.mask16(kind, &q, b),
                                    wide.mask16(kind, &q, b),
                                )
                            };
                            assert_eq!(m, want, "{kind:?}, {}", what());
                            assert_eq!(m16, want16, "{kind:?}, sixteen, {}", what());
                            assert_eq!(m16w, want16, "{kind:?}, sixteen padded, {}", what());
                        }
                    }
                }
            }
        }
    }

    /// [`the_box_test_is_the_regions`] on `boxes`, each of `queries`.
    fn check_boxes<V: Vector>(queries: &[Aabb<V>], boxes: &[Aabb<V>]) {
        let n = boxes.len();
        let arrays = arrays_of(boxes);
        let bx = boxes_in(&arrays, n, V::DIM);
        let mut seen = [false; 3];
        for r in queries {
            let q = Query::of(V::DIM - 1, &axes_of(r.min), &axes_of(r.max));
            for b in (0..n + 3).step_by(if cfg!(miri) { 5 } else { 1 }) {
                let mut want = |s: usize| {
                    let (mut meets, mut inside) = (0u32, 0u32);
                    for l in 0..LANES.min(n.saturating_sub(s)) {
                        let class = r.classify(&boxes[s + l]);
                        seen[class as usize] = true;
                        meets |= u32::from(class != Overlap::Outside) << l;
                        inside |= u32::from(class == Overlap::Inside) << l;
                    }
                    meets | inside << 16
                };
                let w = want(b.min(n));
                let w2 = want((b + LANES).min(n));
                let want16 =
                    (w & 0xff) | (w2 & 0xff) << LANES | ((w >> 16) | (w2 >> 16) << LANES) << 16;
                let what = || format!("{} axes, start {b}, query {r:?}", V::DIM);
                // The bits of objects (the padding's boxes meet an
                // unbounded query: the searches drop their bits).
                let s = b.min(n);
                let bits = |w| if s < n { valid(s, n, w) } else { 0 };
                let v = bits(LANES);
                let v = v | v << 16;
                assert_eq!(bx.within4(&q, b) & v, w, "4-wide: {}", what());
                for kind in Kind::available() {
                    // SAFETY: `available` found the form's
                    // instructions.
                    let (m, m16) = unsafe {
                        (
                            bx.test(kind, &Test::Within(&q), b, false),
                            bx.test(kind, &Test::Within(&q), b, true),
                        )
                    };
                    assert_eq!(m & v, w, "{kind:?}: {}", what());
                    let v16 = bits(2 * LANES);
                    let v16 = v16 | v16 << 16;
                    assert_eq!(m16 & v16, want16 & v16, "{kind:?}, sixteen: {}", what());
                }
            }
        }
        // The whole set meets the queries in every way.
        assert!(n < 40 || seen == [true; 3], "{seen:?}");
    }

    /// The box test that also says which boxes lie inside
    /// ([`Boxes::within`]) gives, for every box, what the region's own
    /// classification (`Aabb::classify`) gives: boxes across, inside,
    /// outside and touching the query's faces (from both sides), flat
    /// ones, ones with a NaN bound; in 3D and in 2D; every start, the
    /// last ones past the objects, every form, eight and sixteen a step.
    #[test]
    fn the_box_test_is_the_regions() {
        let mut next = numbers(0x2545_f491);
        let mut boxes3 = Vec::new();
        for i in 0..45 {
            let c = Vec3::new(next(), next(), next()) * 30.0 - Vec3::splat(15.0);
            let h = Vec3::new(next(), next(), next()) * if i % 7 == 0 { 0.0 } else { 5.0 };
            boxes3.push(Aabb {
                min: c - h,
                max: c + h,
            });
        }
        // Touching the query `[-10, 10]^3` below: its faces from outside
        // and from inside.
        for (i, (l, h)) in [(10.0f32, 11.0), (9.0, 10.0), (-11.0, -10.0), (-10.0, -9.0)]
            .into_iter()
            .enumerate()
        {
            boxes3[20 + i] = Aabb {
                min: Vec3::new(l, -1.0, -1.0),
                max: Vec3::new(h, 1.0, 1.0),
            };
        }
        boxes3[25] = Aabb {
            min: Vec3::splat(-2.0),
            max: Vec3::splat(2.0),
        };
        // Bounds of `-0.0` and `0.0` against the half-space below, whose
        // bound is `-0.0`: equal in every compare.
        boxes3[26] = Aabb {
            min: Vec3::new(0.0, -0.0, 1.0),
            max: Vec3::new(0.5, 0.0, 2.0),
        };
        boxes3[27] = Aabb {
            min: Vec3::new(-1.0, -0.0, -0.0),
            max: Vec3::new(-0.0, 1.0, 3.0),
        };
        boxes3[5].min.y = f32::NAN;
        boxes3[33].max.z = f32::NAN;
        boxes3[40].min.x = f32::NAN;
        boxes3[40].max.x = f32::NAN;
        boxes3[17].max.x = f32::NAN;
        let cube = Aabb {
            min: Vec3::splat(-10.0),
            max: Vec3::splat(10.0),
        };
        let flat = Aabb {
            min: Vec3::new(-3.0, 0.0, -20.0),
            max: Vec3::new(3.0, 0.0, 20.0),
        };
        let big = Aabb {
            min: Vec3::splat(f32::NEG_INFINITY),
            max: Vec3::splat(f32::INFINITY),
        };
        // Unbounded on one side only, with a bound of `-0.0`.
        let half = Aabb {
            min: Vec3::new(f32::NEG_INFINITY, -0.0, -5.0),
            max: Vec3::new(-0.0, f32::INFINITY, 5.0),
        };
        // Lower above upper on one axis (a box made field by field): it
        // meets the boxes reaching across the gap, and holds none.
        let inverted = Aabb {
            min: Vec3::new(5.0, -10.0, -10.0),
            max: Vec3::new(3.0, 10.0, 10.0),
        };
        for len in [boxes3.len(), 13, 8, 1] {
            check_boxes(&[cube, flat, big, half, inverted], &boxes3[..len]);
        }
        let flat2 = |b: &Aabb<Vec3>| Aabb {
            min: Vec2::new(b.min.x, b.min.y),
            max: Vec2::new(b.max.x, b.max.y),
        };
        let boxes2: Vec<_> = boxes3.iter().map(flat2).collect();
        let queries2 = [cube, flat, big, half, inverted].map(|q| flat2(&q));
        check_boxes(&queries2, &boxes2);
    }

    /// The frustum test of eight boxes at once gives, bit for bit, what
    /// the tree walk's test of each box (`Frustum::classify_aabb`) gives:
    /// boxes across, inside and outside the planes, flat ones, ones with
    /// a NaN bound; a camera's frustum, and planes with normals of `-0.0`
    /// and NaN components (a frustum built field by field); in 3D and in
    /// 2D (`axes` 2, whose third arrays are not read); every start, the
    /// last ones past the objects (the padding), every form.
    #[test]
    fn the_frustum_test_is_the_trees() {
        fn check<V: Vector>(frustums: &[Frustum<V>], boxes: &[Aabb<V>]) {
            let n = boxes.len();
            let arrays = arrays_of(boxes);
            let bx = boxes_in(&arrays, n, V::DIM);
            let at = axes_of::<V>;
            let mut seen = [false; 3];
            for f in frustums {
                let p = Planes::of(&f.planes);
                for b in (0..n + 3).step_by(if cfg!(miri) { 5 } else { 1 }) {
                    let s = b.min(n);
                    let (mut meets, mut inside) = (0u32, 0u32);
                    for l in 0..LANES.min(n - s) {
                        let bb = &boxes[s + l];
                        let class = f.classify_aabb(bb);
                        seen[class as usize] = true;
                        let one = match p.classify_box(V::DIM, &at(bb.min), &at(bb.max), 0x3f) {
                            None => Overlap::Outside,
                            Some(0) => Overlap::Inside,
                            Some(_) => Overlap::Partial,
                        };
                        assert_eq!(one, class, "one box, {} axes, {bb:?}, {f:?}", V::DIM);
                        match class {
                            Overlap::Outside => {}
                            Overlap::Partial => meets |= 1 << l,
                            Overlap::Inside => {
                                meets |= 1 << l;
                                inside |= 1 << l;
                            }
                        }
                    }
                    let v = valid(s, n, LANES);
                    for kind in Kind::available() {
                        // SAFETY: `available` found the form's
                        // instructions.
                        let (m, i) = unsafe { bx.classify_planes(kind, &p, 0x3f, b) };
                        let what = || format!("{kind:?}, {} axes, start {b}, {f:?}", V::DIM);
                        assert_eq!(m & v, meets, "meets: {}", what());
                        assert_eq!(i & m & v, inside, "inside: {}", what());
                        // Some planes only: as the one-box test of those.
                        for active in [0u8, 1, 0b10_0100, 0b01_1011] {
                            let (mut meets, mut inside) = (0u32, 0u32);
                            for l in 0..LANES.min(n - s) {
                                let bb = &boxes[s + l];
                                let left = p.classify_box(V::DIM, &at(bb.min), &at(bb.max), active);
                                meets |= u32::from(left.is_some()) << l;
                                inside |= u32::from(left == Some(0)) << l;
                            }
                            // SAFETY: as above.
                            let (m, i) = unsafe { bx.classify_planes(kind, &p, active, b) };
                            assert_eq!(m & v, meets, "meets, planes {active:b}: {}", what());
                            assert_eq!(i & m & v, inside, "inside, planes {active:b}: {}", what());
                        }
                    }
                }
            }
            // The boxes meet the frustums in every way.
            assert!(n < LANES || seen == [true; 3], "{seen:?}");
        }

        // The same boxes on every run.
        let mut next = numbers(0x9e37_79b9);
        let mut boxes3 = Vec::new();
        for i in 0..45 {
            let c = Vec3::new(next(), next(), next()) * 40.0 - Vec3::new(20.0, 20.0, 45.0);
            let h = Vec3::new(next(), next(), next()) * if i % 7 == 0 { 0.0 } else { 6.0 };
            boxes3.push(Aabb {
                min: c - h,
                max: c + h,
            });
        }
        // Boxes touching the faces of `cube` below from outside and from
        // inside: a signed distance of exactly 0.
        for (i, c) in [10.0f32, 9.0, -10.0, -11.0].into_iter().enumerate() {
            boxes3[20 + i] = Aabb {
                min: Vec3::new(c, -1.0, -1.0),
                max: Vec3::new(c + 1.0, 1.0, 1.0),
            };
        }
        // Outside `cube` on x, with a NaN bound on another axis: which
        // bound a plane's zero component takes decides whether the box
        // is outside (a finite one) or not (the NaN); `-0.0` counts as
        // not negative, as in `Plane::corner` (`cube_neg`).
        boxes3[30] = Aabb {
            min: Vec3::new(20.0, f32::NAN, -1.0),
            max: Vec3::new(21.0, 1.0, 1.0),
        };
        boxes3[31] = Aabb {
            min: Vec3::new(-21.0, -1.0, f32::NAN),
            max: Vec3::new(-20.0, 1.0, 1.0),
        };
        boxes3[5].min.y = f32::NAN;
        boxes3[17].max.x = f32::NAN;
        let proj = glam::camera::rh::proj::directx::perspective(1.0, 1.3, 0.5, 40.0);
        let view = glam::camera::rh::view::look_at_mat4(Vec3::ZERO, Vec3::NEG_Z, Vec3::Y);
        let camera = Frustum::from_view_projection(proj * view).expect("a camera");
        let mut odd = camera;
        odd.planes[1].normal = Vec3::new(-0.0, 1.0, -0.0);
        odd.planes[3].normal.x = f32::NAN;
        let flat = Frustum::new([Plane::new(Vec3::new(0.3, -1.0, 0.2), 4.0).expect("a plane"); 6]);
        let wide = Frustum::from_view_projection(Mat4::IDENTITY).expect("a box");
        let face = |n: Vec3| Plane::new(n, 10.0).expect("a face");
        let cube = Frustum::new([
            face(Vec3::X),
            face(Vec3::NEG_X),
            face(Vec3::Y),
            face(Vec3::NEG_Y),
            face(Vec3::Z),
            face(Vec3::NEG_Z),
        ]);
        let mut cube_neg = cube;
        for p in &mut cube_neg.planes {
            p.normal = p.normal.map(|c| if c == 0.0 { -0.0 } else { c });
        }
        check(&[camera, odd, flat, wide, cube, cube_neg], &boxes3);
        check(&[camera], &boxes3[..3]);

        let boxes2: Vec<Aabb<Vec2>> = boxes3
            .iter()
            .map(|b| Aabb {
                min: b.min.truncate() * 0.5,
                max: b.max.truncate() * 0.5,
            })
            .collect();
        let line = |x: f32, y: f32, d: f32| Plane::new(Vec2::new(x, y), d).expect("a line");
        let tri = Frustum::new([
            line(1.0, 0.2, 4.0),
            line(-0.5, 1.0, 3.0),
            line(-0.7, -1.0, 5.0),
            line(1.0, 0.2, 4.0),
            line(0.0, -1.0, 8.0),
            line(-1.0, -0.0, 9.0),
        ]);
        let mut tri_nan = tri;
        tri_nan.planes[2].d = f32::NAN;
        check(&[tri, tri_nan], &boxes2);
    }

    /// The 8-wide slab test selects exactly the boxes the tree's slab test
    /// (`FastRay::entry`) lets through: rays along the axes (a zero
    /// direction, whose slabs give infinities, or NaN where the origin lies
    /// on a face plane), from inside and outside, with limits short and
    /// long; the query box around everything, so only the slabs decide.
    #[test]
    fn the_ray_slab_test_is_the_trees() {
        use crate::geometry::{Aabb, Ray};
        use crate::traverse::FastRay;
        use glam::Vec3;
        if !Kind::available().contains(&Kind::Avx2) {
            return;
        }
        let n = 27;
        let mut lo: [Vec<f32>; 3] = Default::default();
        let mut hi: [Vec<f32>; 3] = Default::default();
        let mut boxes = Vec::new();
        for i in 0..n {
            let c = Vec3::new(
                (i % 3) as f32 * 2.0,
                (i / 3 % 3) as f32 * 2.0,
                (i / 9) as f32 * 2.0,
            );
            let b = Aabb {
                min: c - Vec3::splat(0.5),
                max: c + Vec3::splat(0.5),
            };
            for a in 0..3 {
                lo[a].push(b.min[a]);
                hi[a].push(b.max[a]);
            }
            boxes.push(b);
        }
        for a in 0..3 {
            lo[a].extend([f32::INFINITY; 2 * LANES]);
            hi[a].extend([f32::NEG_INFINITY; 2 * LANES]);
        }
        let bx = Boxes::new(
            [&lo[0][..], &lo[1][..], &lo[2][..]],
            [&hi[0][..], &hi[1][..], &hi[2][..]],
            n,
            3,
        )
        .expect("padded arrays");
        let wide = bx.padded16();
        assert!(wide.wide, "padded with sixteen empty boxes");
        let q = Query::of(2, &[-1e30; 3], &[1e30; 3]);
        let rays = [
            (Vec3::new(-0.5, 0.0, 0.0), Vec3::X),
            (Vec3::new(-3.0, 0.5, 2.0), Vec3::X),
            (Vec3::new(2.0, -3.0, -0.5), Vec3::Y),
            (Vec3::new(1.0, 1.0, 1.0), Vec3::new(1.0, 1.0, 1.0)),
            (Vec3::new(4.0, 4.0, 4.0), Vec3::new(-1.0, -0.3, -0.7)),
            (Vec3::new(2.5, 0.0, 4.0), Vec3::new(0.0, 0.0, -1.0)),
        ];
        for (origin, dir) in rays {
            let ray = Ray::new(origin, dir).expect("valid ray");
            let fast = FastRay::new(&ray);
            let inv = [0, 1, 2].map(|a| 1.0 / ray.dir[a]);
            let slab = Slab::of(2, &ray.origin.to_array(), &inv);
            for limit in [0.0, 0.4, 1.5, 3.0, 100.0] {
                for b in (0..n).step_by(LANES) {
                    let want: u32 = (0..LANES)
                        .filter(|&l| b + l < n && fast.entry(&boxes[b + l], limit).is_some())
                        .map(|l| 1 << l)
                        .sum();
                    // SAFETY: `available` found AVX2.
                    let m = unsafe { bx.mask_ray(Kind::Avx2, &q, &slab, limit, b) }
                        & valid(b, n, LANES);
                    assert_eq!(m, want, "ray {origin:?} {dir:?}, limit {limit}, chunk {b}");
                }
                // Sixteen a step, from every start (the last ones past the
                // objects, clamped to the padding), in every form this
                // processor runs above the 4-wide one (which leaves the
                // slabs to its caller), padded for 16-wide loads or not.
                // (Under Miri, which checks the loads, every fifth start
                // and the widest form: a minute saved in CI.)
                for b in (0..n + 3).step_by(if cfg!(miri) { 5 } else { 1 }) {
                    let want: u32 = (0..2 * LANES)
                        .filter(|&l| {
                            let i = b.min(n) + l;
                            i < n && fast.entry(&boxes[i], limit).is_some()
                        })
                        .map(|l| 1 << l)
                        .sum();
                    let widest = Kind::available().into_iter().last();
                    for kind in Kind::available()
                        .into_iter()
                        .filter(|&k| k.is_wide() && (!cfg!(miri) || Some(k) == widest))
                    {
                        for (form, boxes16) in [("padded", &wide), ("unpadded", &bx)] {
                            // SAFETY: `available` found the form's
                            // instructions.
                            let m = unsafe { boxes16.mask16_ray(kind, &q, &slab, limit, b) };
                            assert_eq!(
                                m, want,
                                "{kind:?} {form}, ray {origin:?} {dir:?}, limit {limit}, start {b}"
                            );
                        }
                    }
                }
            }
        }
    }

    /// Arrays without their padding are refused, not read past.
    #[test]
    fn arrays_without_padding_are_refused() {
        let v = vec![0f32; 10];
        assert!(Boxes::new([&v; 3], [&v; 3], 2, 3).is_some());
        assert!(Boxes::new([&v; 3], [&v; 3], 3, 3).is_none());
        assert!(Boxes::new([&v; 3], [&v[..9]; 3], 2, 3).is_none());
        assert!(Boxes::new([&v; 3], [&v; 3], usize::MAX, 3).is_none());
        // Sixteen-wide loads only where sixteen values follow `n`.
        let w = vec![0f32; 18];
        let of = |n| Boxes::new([&w; 3], [&w; 3], n, 3).map(|b| b.padded16().wide);
        assert_eq!(of(2), Some(true));
        assert_eq!(of(3), Some(false));
        assert_eq!(
            of(2).map(|_| Boxes::new([&w; 3], [&w; 3], 2, 3).expect("padded").wide),
            Some(false)
        );
    }
}
