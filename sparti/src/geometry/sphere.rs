//! Spheres (circles in 2D).

use super::{Aabb, Vector};
use crate::Error;

/// `x` moved one float step up (`up`) or down when `go`, else `x`; for
/// finite `x`, without branches (the sphere box's widening, where the
/// condition is a coin toss and branches mispredict).
#[inline(always)]
fn step(x: f32, go: bool, up: bool) -> f32 {
    let b = x.to_bits();
    // On the bits, away from zero is +1 and towards zero -1: down is +1
    // for a negative `x`, up is +1 for a positive one. From a zero of the
    // other sign than the direction, -1 would wrap: the smallest
    // subnormal of the direction's sign instead.
    let negative = b >> 31 == 1;
    let plus_one = negative != up;
    let moved = if plus_one {
        b.wrapping_add(1)
    } else {
        b.wrapping_sub(1)
    };
    let from_zero = if up { 1 } else { 0x8000_0001 };
    let moved = if b & 0x7FFF_FFFF == 0 {
        from_zero
    } else {
        moved
    };
    f32::from_bits(if go && x.is_finite() { moved } else { b })
}

/// Shapes whose boxes [`boxes_of`] computes together.
pub(crate) const BATCH: usize = 8;

/// The boxes of a batch of shapes, lane `j` (of each axis's array) the
/// box of `shapes[j]`, with the bits of [`Shape::aabb`](super::Shape::aabb)
/// for each: the spheres' boxes computed together, axis by axis, four
/// spheres to an SSE register (the operations of [`Sphere::aabb`], so
/// the same bits; a grid's refit takes a batch of objects at a time).
/// Axes past `V::DIM` are left as they are.
#[inline(always)]
#[allow(clippy::needless_range_loop)] // the axes index several arrays
pub(crate) fn boxes_of<V: Vector>(
    shapes: &[super::Shape<V>; BATCH],
    lo: &mut [[f32; BATCH]; 3],
    hi: &mut [[f32; BATCH]; 3],
) {
    let mut c = [[0f32; BATCH]; 3];
    let mut r = [0f32; BATCH];
    let mut is_box = [false; BATCH];
    for (j, s) in shapes.iter().enumerate() {
        match s {
            super::Shape::Sphere(s) => {
                for a in 0..V::DIM {
                    c[a][j] = s.center.get(a);
                }
                r[j] = s.radius;
            }
            super::Shape::Box(b) => {
                for a in 0..V::DIM {
                    lo[a][j] = b.min.get(a);
                    hi[a][j] = b.max.get(a);
                }
                is_box[j] = true;
            }
        }
    }
    let any_box = is_box.iter().any(|&b| b);
    let (mut l, mut u) = ([0f32; BATCH], [0f32; BATCH]);
    for a in 0..V::DIM {
        for (((c, r), l), u) in c[a]
            .as_chunks::<4>()
            .0
            .iter()
            .zip(r.as_chunks::<4>().0)
            .zip(l.as_chunks_mut::<4>().0)
            .zip(u.as_chunks_mut::<4>().0)
        {
            lanes4(c, r, l, u);
        }
        if any_box {
            for j in 0..BATCH {
                if !is_box[j] {
                    (lo[a][j], hi[a][j]) = (l[j], u[j]);
                }
            }
        } else {
            (lo[a], hi[a]) = (l, u);
        }
    }
}

/// The sphere boxes' bounds on one axis of four spheres, centres `c` and
/// radii `r`, into `lo` and `hi`: on the lanes of an SSE register where
/// there is one.
#[inline(always)]
fn lanes4(c: &[f32; 4], r: &[f32; 4], lo: &mut [f32; 4], hi: &mut [f32; 4]) {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    {
        // SAFETY: the build enables SSE2 (the `cfg` above), which every
        // x86-64 processor has.
        unsafe { lanes::spheres_box(c, r, lo, hi) }
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    for i in 0..4 {
        let b = Sphere::<glam::Vec2> {
            center: glam::Vec2::splat(c[i]),
            radius: r[i],
        }
        .aabb_scalar();
        (lo[i], hi[i]) = (b.min.x, b.max.x);
    }
}

/// [`Sphere::aabb`] on the four lanes of an SSE register (SSE2 is part of
/// every x86-64 processor): the same operations, so the same bits.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
mod lanes {
    use std::arch::x86_64::{
        __m128, __m128i, _mm_add_epi32, _mm_add_ps, _mm_and_ps, _mm_and_si128, _mm_andnot_si128,
        _mm_castps_si128, _mm_castsi128_ps, _mm_cmpeq_epi32, _mm_cmpgt_ps, _mm_cmple_ps,
        _mm_cmplt_ps, _mm_cvtss_f32, _mm_loadu_ps, _mm_movemask_ps, _mm_or_si128, _mm_set_ps,
        _mm_set1_epi32, _mm_set1_ps, _mm_setzero_ps, _mm_shuffle_ps, _mm_srai_epi32, _mm_storeu_ps,
        _mm_sub_epi32, _mm_sub_ps,
    };

    /// `mask ? a : b`, lane by lane.
    #[inline]
    #[target_feature(enable = "sse2")]
    fn select(mask: __m128i, a: __m128i, b: __m128i) -> __m128i {
        _mm_or_si128(_mm_and_si128(mask, a), _mm_andnot_si128(mask, b))
    }

    /// `step` of every lane: `x` moved one float step up (`up`) or down
    /// where `go` is set and `x` is finite.
    #[inline]
    #[target_feature(enable = "sse2")]
    fn step(x: __m128, go: __m128, up: bool) -> __m128 {
        let b = _mm_castps_si128(x);
        // All ones where negative.
        let negative = _mm_srai_epi32::<31>(b);
        // +1 on the bits where `negative != up`, else -1.
        let plus_one = if up {
            _mm_andnot_si128(negative, _mm_set1_epi32(-1))
        } else {
            negative
        };
        let delta = _mm_sub_epi32(
            _mm_and_si128(plus_one, _mm_set1_epi32(2)),
            _mm_set1_epi32(1),
        );
        let moved = _mm_add_epi32(b, delta);
        let zero = _mm_cmpeq_epi32(
            _mm_and_si128(b, _mm_set1_epi32(0x7FFF_FFFF)),
            _mm_set1_epi32(0),
        );
        let from_zero = _mm_set1_epi32(if up { 1 } else { 0x8000_0001_u32 as i32 });
        let moved = select(zero, from_zero, moved);
        let exp = _mm_set1_epi32(0x7F80_0000);
        let infinite_or_nan = _mm_cmpeq_epi32(_mm_and_si128(b, exp), exp);
        let go = _mm_andnot_si128(infinite_or_nan, _mm_castps_si128(go));
        _mm_castsi128_ps(select(go, moved, b))
    }

    /// The box of the sphere of centre `c` (its first lanes) and radius
    /// `r`: its lower and upper corners.
    #[inline]
    #[target_feature(enable = "sse2")]
    pub(super) fn sphere_box(c: [f32; 4], r: f32) -> ([f32; 4], [f32; 4]) {
        let (lo, hi) = bounds(_mm_set_ps(c[3], c[2], c[1], c[0]), _mm_set1_ps(r));
        (values(lo), values(hi))
    }

    /// [`sphere_box`] where every bound lies within `max` of zero and
    /// `r >= 0`, else `None` (NaN and infinite input included).
    #[inline]
    #[target_feature(enable = "sse2")]
    pub(super) fn sphere_box_within(c: [f32; 4], r: f32, max: f32) -> Option<([f32; 4], [f32; 4])> {
        let (lo, hi) = bounds(_mm_set_ps(c[3], c[2], c[1], c[0]), _mm_set1_ps(r));
        let abs = _mm_castsi128_ps(_mm_set1_epi32(0x7FFF_FFFF));
        let max = _mm_set1_ps(max);
        // (A NaN fails both compares.)
        let within = _mm_and_ps(
            _mm_cmple_ps(_mm_and_ps(lo, abs), max),
            _mm_cmple_ps(_mm_and_ps(hi, abs), max),
        );
        (_mm_movemask_ps(within) == 0xF && r >= 0.0).then(|| (values(lo), values(hi)))
    }

    /// The bounds on one axis of four spheres' boxes, centres `c` and
    /// radii `r`, lane by lane, into `lo` and `hi`.
    #[inline]
    #[target_feature(enable = "sse2")]
    pub(super) fn spheres_box(c: &[f32; 4], r: &[f32; 4], lo: &mut [f32; 4], hi: &mut [f32; 4]) {
        // SAFETY: each array holds the four values read or written
        // (unaligned loads and stores).
        unsafe {
            let (l, h) = bounds(_mm_loadu_ps(c.as_ptr()), _mm_loadu_ps(r.as_ptr()));
            _mm_storeu_ps(lo.as_mut_ptr(), l);
            _mm_storeu_ps(hi.as_mut_ptr(), h);
        }
    }

    /// The sphere box's bounds, lane by lane, of centres `c` and radii
    /// `r`.
    #[inline]
    #[target_feature(enable = "sse2")]
    fn bounds(c: __m128, r: __m128) -> (__m128, __m128) {
        let zero = _mm_setzero_ps();
        let (min, max) = (_mm_sub_ps(c, r), _mm_add_ps(c, r));
        // TwoSum, as the scalar form.
        let t = _mm_sub_ps(min, c);
        let e_min = _mm_add_ps(
            _mm_sub_ps(c, _mm_sub_ps(min, t)),
            _mm_sub_ps(_mm_sub_ps(zero, r), t),
        );
        let u = _mm_sub_ps(max, c);
        let e_max = _mm_add_ps(_mm_sub_ps(c, _mm_sub_ps(max, u)), _mm_sub_ps(r, u));
        let lo = step(min, _mm_cmplt_ps(e_min, zero), false);
        let hi = step(max, _mm_cmpgt_ps(e_max, zero), true);
        (lo, hi)
    }

    /// The four lanes of `x` (without glam's conversion, which a build
    /// of glam with its `scalar-math` feature does not have).
    #[inline]
    #[target_feature(enable = "sse2")]
    fn values(x: __m128) -> [f32; 4] {
        [
            _mm_cvtss_f32(x),
            _mm_cvtss_f32(_mm_shuffle_ps::<1>(x, x)),
            _mm_cvtss_f32(_mm_shuffle_ps::<2>(x, x)),
            _mm_cvtss_f32(_mm_shuffle_ps::<3>(x, x)),
        ]
    }
}

/// A ball given by its centre and radius (a circle in 2D). Closed: touching
/// counts as overlapping.
///
/// # Example
/// ```
/// use glam::Vec2;
/// use sparti::Sphere;
/// let a = Sphere::new(Vec2::ZERO, 1.0).unwrap();
/// let b = Sphere::new(Vec2::new(2.0, 0.0), 1.0).unwrap();
/// assert!(a.intersects(&b)); // touching
/// assert!(Sphere::new(Vec2::ZERO, -1.0).is_err());
/// ```
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Sphere<V: Vector> {
    /// Centre.
    pub center: V,
    /// Radius, `>= 0`.
    pub radius: f32,
}

impl<V: Vector> Sphere<V> {
    /// A sphere from centre and radius.
    ///
    /// # Errors
    /// [`Error::NonFinite`] for NaN or infinite input, [`Error::NegativeSize`]
    /// for a negative radius.
    pub fn new(center: V, radius: f32) -> Result<Self, Error> {
        let s = Self { center, radius };
        s.check()?;
        Ok(s)
    }

    /// Checks that the sphere is finite with a non-negative radius.
    ///
    /// # Errors
    /// [`Error::NonFinite`] or [`Error::NegativeSize`].
    pub fn check(&self) -> Result<(), Error> {
        self.checked_aabb().map(|_| ())
    }

    /// Checks the sphere (as [`check`](Self::check)) and returns its
    /// bounding box, computed once.
    ///
    /// # Errors
    /// [`Error::NonFinite`] or [`Error::NegativeSize`].
    #[inline]
    pub fn checked_aabb(&self) -> Result<Aabb<V>, Error> {
        if !self.center.is_finite() || !self.radius.is_finite() {
            return Err(Error::NonFinite);
        }
        if self.radius < 0.0 {
            return Err(Error::NegativeSize);
        }
        let b = self.aabb();
        // From a finite centre and radius, `min <= max`; only `c -+ r` can
        // overflow, which makes the extent infinite (or NaN).
        if !(b.max - b.min).is_finite() {
            return Err(Error::NonFinite);
        }
        Ok(b)
    }

    /// The bounding box: `center -+ radius`, widened by one float step on a
    /// side where rounding would cut the sphere (as for a radius below the
    /// float spacing at the centre), so it always holds the whole sphere.
    #[inline]
    pub fn aabb(&self) -> Aabb<V> {
        #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
        {
            // The same operations on the lanes of one SSE register (the
            // scalar form below is the reference, and the tests compare
            // them).
            let mut c = [0f32; 4];
            for (i, v) in c.iter_mut().enumerate().take(V::DIM) {
                *v = self.center.get(i);
            }
            // SAFETY: the build enables SSE2 (the `cfg` above), which every
            // x86-64 processor has.
            let (lo, hi) = unsafe { lanes::sphere_box(c, self.radius) };
            let (mut min, mut max) = (V::ZERO, V::ZERO);
            for i in 0..V::DIM {
                min = min.with(i, lo[i]);
                max = max.with(i, hi[i]);
            }
            Aabb { min, max }
        }
        #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
        self.aabb_scalar()
    }

    /// The box ([`Sphere::checked_aabb`]) where the sphere is well
    /// formed and every bound lies within `max` of zero; `None`
    /// otherwise (then the checks one at a time say why). An update
    /// checks every moved sphere: this is its one pass.
    #[inline]
    pub(crate) fn aabb_within(&self, max: f32) -> Option<Aabb<V>> {
        #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
        {
            let mut c = [0f32; 4];
            for (i, v) in c.iter_mut().enumerate().take(V::DIM) {
                *v = self.center.get(i);
            }
            // SAFETY: the build enables SSE2 (the `cfg` above), which every
            // x86-64 processor has.
            let (lo, hi) = unsafe { lanes::sphere_box_within(c, self.radius, max) }?;
            let (mut min, mut max) = (V::ZERO, V::ZERO);
            for i in 0..V::DIM {
                min = min.with(i, lo[i]);
                max = max.with(i, hi[i]);
            }
            Some(Aabb { min, max })
        }
        #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
        self.checked_aabb()
            .ok()
            .filter(|b| b.min.abs().max(b.max.abs()).max_element() <= max)
    }

    /// [`Sphere::aabb`] one coordinate at a time.
    #[cfg_attr(all(target_arch = "x86_64", target_feature = "sse2"), allow(dead_code))]
    fn aabb_scalar(&self) -> Aabb<V> {
        let (c, r) = (self.center, V::splat(self.radius));
        let (min, max) = (c - r, c + r);
        // The rounding errors of `c - r` and `c + r`, exactly (Knuth's
        // TwoSum): `c - r = min + e_min` and `c + r = max + e_max`. The box
        // cuts the sphere where `c - min < r`, that is `e_min < 0`, or where
        // `max - c < r`, that is `e_max > 0`: that side moves out one float
        // step. (This is the exact test the `f64` differences would give,
        // without leaving `f32`. Non-finite input gives NaN errors, which
        // move nothing; such boxes are refused by their check.)
        let t = min - c;
        let e_min = (c - (min - t)) + (-r - t);
        let u = max - c;
        let e_max = (c - (max - u)) + (r - u);
        let (mut lo, mut hi) = (min, max);
        for i in 0..V::DIM {
            lo = lo.with(i, step(min.get(i), e_min.get(i) < 0.0, false));
            hi = hi.with(i, step(max.get(i), e_max.get(i) > 0.0, true));
        }
        Aabb { min: lo, max: hi }
    }

    /// True when the spheres overlap or touch.
    #[inline]
    pub fn intersects(&self, o: &Self) -> bool {
        let r = self.radius + o.radius;
        // The box test too: see `Aabb::intersects_sphere` (underflow).
        self.center.distance_squared(o.center) <= r * r && self.aabb().intersects(&o.aabb())
    }

    /// True when the point is inside or on the sphere.
    #[inline]
    pub fn contains_point(&self, p: V) -> bool {
        self.center.distance_squared(p) <= self.radius * self.radius
    }

    /// True when the whole box lies inside the sphere.
    pub fn contains_aabb(&self, b: &Aabb<V>) -> bool {
        // The farthest corner from the centre, component by component.
        let d = (b.min - self.center).abs().max((b.max - self.center).abs());
        // The box test too: see `Aabb::intersects_sphere` (underflow).
        d.length_squared() <= self.radius * self.radius && self.aabb().contains(b)
    }
}

#[cfg(test)]
mod tests {
    use super::{Sphere, step};
    use glam::{Vec2, Vec3};

    /// Finite values of every magnitude and sign that the sphere box
    /// tests sample (zeros, the smallest subnormal and normal, tiny,
    /// ordinary, `2^24 + 1` where float spacing passes 1, huge, the
    /// extremes).
    const SPECIALS: [f32; 11] = [
        0.0,
        -0.0,
        f32::from_bits(1),
        -f32::MIN_POSITIVE,
        1e-30,
        0.1,
        -3.0,
        16_777_217.0,
        -1e30,
        f32::MAX,
        f32::MIN,
    ];

    /// Calls `f(c, r, other)` for samples of centre `c` and radius `r`:
    /// every pair of `specials` and a sweep of float bit patterns (every
    /// `step`-th, `miri_step`-th under Miri, where only every `p`-th
    /// radius is taken), and a third value `other` from the same list.
    fn each_sample(
        specials: &[f32],
        (step, miri_step): (usize, usize),
        p: usize,
        mut f: impl FnMut(f32, f32, f32),
    ) {
        let mut values = specials.to_vec();
        let step = if cfg!(miri) { miri_step } else { step };
        values.extend((0..=u32::MAX).step_by(step).map(f32::from_bits));
        for (k, &c) in values.iter().enumerate() {
            for (m, &r) in values
                .iter()
                .enumerate()
                .step_by(if cfg!(miri) { p } else { 1 })
            {
                f(c, r, values[(k * p + m * 3) % values.len()]);
            }
        }
    }

    /// The sphere's box on the SSE lanes has the scalar form's bits:
    /// centres and radii of every magnitude and sign (zeros, subnormals,
    /// the largest floats, where `c -+ r` overflows), radii below the
    /// float spacing at the centre (where the box widens), and
    /// non-finite input (NaN where the scalar form gives NaN), in 3D and
    /// 2D. Run under Miri in CI (fewer samples there).
    #[test]
    fn the_lanes_box_is_the_scalar_box() {
        let mut specials = SPECIALS.to_vec();
        specials.extend([1.0, 1e7, f32::INFINITY, f32::NAN]);
        let same = |a: f32, b: f32| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
        let mut checked = 0;
        each_sample(
            &specials,
            ((1 << 22) + 7, (1 << 27) + 7),
            7,
            |c, r, other| {
                let r = r.abs();
                let s3 = Sphere::<Vec3> {
                    center: Vec3::new(c, other, -c),
                    radius: r,
                };
                let (a, b) = (s3.aabb(), s3.aabb_scalar());
                for i in 0..3 {
                    assert!(same(a.min[i], b.min[i]), "{s3:?}: min {i}");
                    assert!(same(a.max[i], b.max[i]), "{s3:?}: max {i}");
                }
                let s2 = Sphere::<Vec2> {
                    center: Vec2::new(other, c),
                    radius: r,
                };
                let (a, b) = (s2.aabb(), s2.aabb_scalar());
                for i in 0..2 {
                    assert!(same(a.min[i], b.min[i]), "{s2:?}: min {i}");
                    assert!(same(a.max[i], b.max[i]), "{s2:?}: max {i}");
                }
                checked += 1;
            },
        );
        assert!(checked > 200, "{checked} spheres");
    }

    /// The one-pass box and checks of a move give the box where the
    /// checks one at a time and the coordinate limit pass, and nothing
    /// where any fails: centres and radii of every magnitude and sign
    /// (negative radii, NaN and infinities included), around the limit
    /// too. Run under Miri in CI (fewer samples there).
    #[test]
    fn the_one_pass_box_is_the_checked_box_within_the_limit() {
        let limit = crate::MAX_COORDINATE;
        let mut specials = SPECIALS.to_vec();
        specials.extend([
            0.5,
            limit,
            -limit,
            limit * 0.5,
            limit * 2.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
        ]);
        // The checks one at a time, then the limit.
        fn checked_within<V: crate::Vector>(s: &Sphere<V>, limit: f32) -> Option<crate::Aabb<V>> {
            s.checked_aabb()
                .ok()
                .filter(|b| b.min.abs().max(b.max.abs()).max_element() <= limit)
        }
        let mut checked = (0, 0);
        each_sample(
            &specials,
            ((1 << 23) + 5, (1 << 28) + 5),
            5,
            |c, r, other| {
                let s3 = Sphere::<Vec3> {
                    center: Vec3::new(c, other, -c),
                    radius: r,
                };
                let (have, want) = (s3.aabb_within(limit), checked_within(&s3, limit));
                assert_eq!(have.is_some(), want.is_some(), "{s3:?}");
                if let (Some(a), Some(b)) = (have, want) {
                    assert_eq!(
                        (
                            a.min.to_array().map(f32::to_bits),
                            a.max.to_array().map(f32::to_bits)
                        ),
                        (
                            b.min.to_array().map(f32::to_bits),
                            b.max.to_array().map(f32::to_bits)
                        ),
                        "{s3:?}"
                    );
                    checked.0 += 1;
                } else {
                    checked.1 += 1;
                }
                let s2 = Sphere::<Vec2> {
                    center: Vec2::new(other, c),
                    radius: r,
                };
                assert_eq!(s2.aabb_within(limit), checked_within(&s2, limit), "{s2:?}");
            },
        );
        // (Fewer samples under Miri: 38 boxes and 207 refusals there.)
        let least = if cfg!(miri) { 20 } else { 50 };
        assert!(
            checked.0 > least && checked.1 > least,
            "both outcomes: {checked:?}"
        );
    }

    /// A batch's boxes are each shape's own box: spheres of every
    /// magnitude and sign (as above) mixed with boxes, in 3D and 2D.
    #[test]
    fn a_batch_has_each_shapes_box() {
        use super::{BATCH, boxes_of};
        use crate::{Aabb, Shape};
        let values = SPECIALS;
        // Each shape's box against the batch's lanes.
        fn check<V: crate::Vector>(shapes: &[Shape<V>; BATCH]) -> usize {
            let same = |a: f32, b: f32| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
            let (mut lo, mut hi) = ([[0f32; BATCH]; 3], [[0f32; BATCH]; 3]);
            boxes_of(shapes, &mut lo, &mut hi);
            for (j, s) in shapes.iter().enumerate() {
                let b = s.aabb();
                for a in 0..V::DIM {
                    assert!(same(lo[a][j], b.min.get(a)), "{s:?}: min {a}");
                    assert!(same(hi[a][j], b.max.get(a)), "{s:?}: max {a}");
                }
            }
            BATCH
        }
        let mut checked = 0;
        for start in 0..values.len() {
            let shape3 = |j: usize| {
                let (c, r) = (
                    values[(start + j) % values.len()],
                    values[(start + 3 * j) % values.len()],
                );
                if (start + j).is_multiple_of(3) {
                    Shape::Box(Aabb {
                        min: Vec3::new(c, r, -1.0),
                        max: Vec3::new(c + 1.0, r + 2.0, 0.0),
                    })
                } else {
                    Shape::Sphere(Sphere {
                        center: Vec3::new(c, -c, r),
                        radius: r.abs(),
                    })
                }
            };
            checked += check::<Vec3>(&core::array::from_fn(shape3));
            checked += check::<Vec2>(&core::array::from_fn(|j| match shape3(j) {
                Shape::Box(b) => Shape::Box(Aabb {
                    min: b.min.truncate(),
                    max: b.max.truncate(),
                }),
                Shape::Sphere(s) => Shape::Sphere(Sphere {
                    center: s.center.truncate(),
                    radius: s.radius,
                }),
            }));
        }
        assert!(checked >= 160, "{checked} shapes");
    }

    /// The branch-free step is the standard library's `next_up` and
    /// `next_down` on finite numbers (zeros and subnormals included),
    /// and leaves non-finite numbers and unmoved ones as they are.
    #[test]
    fn step_is_next_up_and_next_down() {
        let mut specials = vec![
            0.0f32,
            -0.0,
            f32::MIN_POSITIVE,
            -f32::MIN_POSITIVE,
            f32::from_bits(1),
            f32::from_bits(0x8000_0001),
            f32::MAX,
            f32::MIN,
            1.0,
            -1.0,
        ];
        // Every 2^12-th bit pattern: every exponent, both signs (fewer
        // under Miri, which runs this module's tests for the SSE form).
        let every = if cfg!(miri) { (1 << 24) + 3 } else { 4093 };
        specials.extend((0..=u32::MAX).step_by(every).map(f32::from_bits));
        for x in specials {
            let bits = |v: f32| v.to_bits();
            if x.is_finite() {
                assert_eq!(
                    bits(step(x, true, true)),
                    bits(x.next_up()),
                    "up from {x:e}"
                );
                assert_eq!(
                    bits(step(x, true, false)),
                    bits(x.next_down()),
                    "down from {x:e}"
                );
            } else {
                assert_eq!(bits(step(x, true, true)), bits(x));
                assert_eq!(bits(step(x, true, false)), bits(x));
            }
            assert_eq!(bits(step(x, false, true)), bits(x));
            assert_eq!(bits(step(x, false, false)), bits(x));
        }
    }
}
