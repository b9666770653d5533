//! Sorting by integer keys for the bulk builds: a stable radix sort of
//! 64-bit values by a range of their bits, and Morton (Z-order) codes of
//! cell coordinates.

/// Bits of a radix digit: 2,048 counters a pass (8 KB, in the first-level
/// cache), and three passes cover the 33 bits of a typical key.
const DIGIT: u32 = 11;

/// Sorts `v` by its values' bits `lo..hi` (those above `hi` must be zero),
/// stably: values with equal bits there keep their order. A least
/// significant digit first radix sort, counting every digit in one pass
/// and skipping the passes whose digit is the same in every value. `buf`
/// is scratch (its contents are lost).
pub(crate) fn radix_sort(v: &mut Vec<u64>, buf: &mut Vec<u64>, lo: u32, hi: u32) {
    debug_assert!(lo <= hi && hi <= 64);
    debug_assert!(hi == 64 || v.iter().all(|&x| x >> hi == 0));
    const SIZE: usize = 1 << DIGIT;
    let passes = (hi - lo).div_ceil(DIGIT) as usize;
    if passes == 0 || v.len() < 2 || v.len() > u32::MAX as usize {
        if v.len() > u32::MAX as usize {
            v.sort_by_key(|&x| x.checked_shr(lo).unwrap_or(0));
        }
        return;
    }
    let mut counts = vec![[0u32; SIZE]; passes];
    for &x in v.iter() {
        for (p, c) in counts.iter_mut().enumerate() {
            c[digit(x, lo + p as u32 * DIGIT)] += 1;
        }
    }
    buf.clear();
    buf.resize(v.len(), 0);
    for (p, c) in counts.iter_mut().enumerate() {
        if c.iter().any(|&k| k as usize == v.len()) {
            // Every value has this digit: the order stays.
            continue;
        }
        let mut sum = 0u32;
        for k in c.iter_mut() {
            let t = *k;
            *k = sum;
            sum += t;
        }
        let shift = lo + p as u32 * DIGIT;
        for &x in v.iter() {
            let d = digit(x, shift);
            buf[c[d] as usize] = x;
            c[d] += 1;
        }
        core::mem::swap(v, buf);
    }
}

/// The radix digit of `x` from bit `shift` (zero past the top).
#[inline(always)]
fn digit(x: u64, shift: u32) -> usize {
    (x.checked_shr(shift).unwrap_or(0) as usize) & ((1 << DIGIT) - 1)
}

/// The Morton code of cell coordinates `c` (`dims` axes, each below
/// `2^bits`, `dims * bits <= 64`): their bits interleaved, the highest
/// first, axis `a` at bit `a` of each group of `dims` bits. Each group is
/// then the child number (as the trees number children: bit `a` set for
/// the upper half along axis `a`) of a step down from the coarsest cell.
#[inline]
pub(crate) fn morton(c: [u64; 3], dims: usize, bits: u32) -> u64 {
    debug_assert!(dims as u32 * bits <= 64);
    match dims {
        2 if bits <= 32 => spread2(c[0]) | spread2(c[1]) << 1,
        3 if bits <= 21 => spread3(c[0]) | spread3(c[1]) << 1 | spread3(c[2]) << 2,
        _ => {
            let mut m = 0u64;
            for b in (0..bits).rev() {
                for a in (0..dims).rev() {
                    m = m << 1 | (c[a] >> b & 1);
                }
            }
            m
        }
    }
}

/// The low 32 bits of `x` spread to the even bits.
#[inline(always)]
fn spread2(x: u64) -> u64 {
    spread(x & 0xffff_ffff, &SPREAD2)
}

/// The low 21 bits of `x` spread to every third bit.
#[inline(always)]
fn spread3(x: u64) -> u64 {
    spread(x & 0x1f_ffff, &SPREAD3)
}

/// The steps (shift, mask) that spread 32 bits to the even bits.
const SPREAD2: [(u32, u64); 5] = [
    (16, 0x0000_ffff_0000_ffff),
    (8, 0x00ff_00ff_00ff_00ff),
    (4, 0x0f0f_0f0f_0f0f_0f0f),
    (2, 0x3333_3333_3333_3333),
    (1, 0x5555_5555_5555_5555),
];

/// The steps (shift, mask) that spread 21 bits to every third bit.
const SPREAD3: [(u32, u64); 5] = [
    (32, 0x001f_0000_0000_ffff),
    (16, 0x001f_0000_ff00_00ff),
    (8, 0x100f_00f0_0f00_f00f),
    (4, 0x10c3_0c30_c30c_30c3),
    (2, 0x1249_2492_4924_9249),
];

/// `x` with each step's `x | x << shift`, masked, applied in turn (the
/// loop unrolls: the steps are constants).
#[inline(always)]
fn spread(mut x: u64, steps: &[(u32, u64)]) -> u64 {
    for &(shift, mask) in steps {
        x = (x | x << shift) & mask;
    }
    x
}

/// Bits needed to write every number below `n` (0 for `n <= 1`).
#[inline]
pub(crate) fn bits_below(n: u64) -> u32 {
    64 - n.saturating_sub(1).leading_zeros()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn radix_sort_orders_by_the_bits_asked_for_and_is_stable() {
        // Keys in bits 4..30, a tag in bits 0..4 that must keep its order
        // among equal keys.
        let mut s = 0x2545_f491_4f6c_dd1du64;
        let mut v: Vec<u64> = (0..3000u64)
            .map(|i| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                // Few distinct keys, so that ties are common.
                ((s % 50) << 4 | (i % 16)) & ((1 << 30) - 1)
            })
            .collect();
        let mut want = v.clone();
        want.sort_by_key(|&x| x >> 4);
        let mut buf = Vec::new();
        radix_sort(&mut v, &mut buf, 4, 30);
        assert_eq!(v, want);
        // One digit only, all equal: unchanged.
        let mut same = vec![7u64 << 4 | 3, 7 << 4 | 1, 7 << 4 | 2];
        radix_sort(&mut same, &mut buf, 4, 8);
        assert_eq!(same, [7 << 4 | 3, 7 << 4 | 1, 7 << 4 | 2]);
    }

    #[test]
    fn morton_codes_interleave_axes_highest_bits_first() {
        // Brute force: the child numbers of each step down, concatenated.
        for dims in [2usize, 3] {
            for bits in [1u32, 3, 7] {
                for seed in 0..50u64 {
                    let c: [u64; 3] =
                        core::array::from_fn(|a| (seed * 2654435761 + a as u64 * 97) % (1 << bits));
                    let mut want = 0u64;
                    for b in (0..bits).rev() {
                        let mut k = 0;
                        for (a, &ca) in c.iter().enumerate().take(dims) {
                            k |= (ca >> b & 1) << a;
                        }
                        want = want << dims | k;
                    }
                    assert_eq!(morton(c, dims, bits), want, "{dims} {bits} {c:?}");
                }
            }
        }
        assert_eq!(morton([(1 << 21) - 1; 3], 3, 21), (1 << 63) - 1);
        assert_eq!(morton([u64::from(u32::MAX); 3], 2, 32), u64::MAX);
        assert_eq!(bits_below(1), 0);
        assert_eq!(bits_below(2), 1);
        assert_eq!(bits_below(1 << 20), 20);
        assert_eq!(bits_below((1 << 20) + 1), 21);
    }
}
