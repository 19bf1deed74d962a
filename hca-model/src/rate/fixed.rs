//! Integer base-2 logarithm and exponential in Q32 fixed point, for the FIMD/PIPD source response functions
//! (powers with fractional exponents) without floating point.
//!
//! - [`log2_q32`]`(x)` = `floor(log2(x) * 2^32)` for `x >= 1`, by the bit-by-bit squaring method (exact to the
//!   last bit up to the truncation of each squaring).
//! - [`exp2_q32`]`(y)` = `2^(y / 2^32)` as a Q32 value, from a table of `2^(2^-i)` (i = 1..32) in Q62 built with
//!   integer square roots; the result is rounded down. Relative error below `2^-58` per table factor, so the
//!   result is within a few units of the last Q32 bit.
//!
//! Deterministic on every platform: only integer arithmetic.

use std::sync::OnceLock;

/// Fraction bits of the fixed-point values.
pub const FRAC_BITS: u32 = 32;
/// 1.0 in Q32.
pub const ONE_Q32: u64 = 1 << FRAC_BITS;

/// `floor(log2(x) * 2^32)`; `log2_q32(0)` is defined as 0 (callers never pass 0).
pub fn log2_q32(x: u64) -> u64 {
    if x == 0 {
        return 0;
    }
    let n = 63 - x.leading_zeros();
    // Mantissa in [1, 2) as Q63.
    let mut m = u128::from(x) << (63 - n);
    let mut frac = 0u64;
    for _ in 0..FRAC_BITS {
        m = (m * m) >> 63;
        frac <<= 1;
        if m >= 1 << 64 {
            m >>= 1;
            frac |= 1;
        }
    }
    (u64::from(n) << FRAC_BITS) | frac
}

/// `2^(2^-i)` in Q62 for `i = 1..=32` (index `i - 1`).
fn table() -> &'static [u128; 32] {
    static T: OnceLock<[u128; 32]> = OnceLock::new();
    T.get_or_init(|| {
        let mut t = [0u128; 32];
        // 2 in Q62, then successive square roots: sqrt(c * 2^62) is sqrt(c) in Q62.
        let mut c: u128 = 2 << 62;
        for e in t.iter_mut() {
            c = (c << 62).isqrt();
            *e = c;
        }
        t
    })
}

/// `2^(y / 2^32)` in Q32, rounded down, or `None` if it does not fit 64 bits (y >= 32 * 2^32).
pub fn exp2_q32(y: u64) -> Option<u64> {
    let int = y >> FRAC_BITS;
    if int >= 32 {
        return None;
    }
    let frac = y & (ONE_Q32 - 1);
    let t = table();
    let mut r: u128 = 1 << 62;
    for (i, c) in t.iter().enumerate() {
        if frac & (1 << (FRAC_BITS - 1 - i as u32)) != 0 {
            r = (r * c) >> 62;
        }
    }
    // Q62 -> Q32, then the integer part's shift.
    Some(((r >> 30) << int) as u64)
}

/// `2^(y / 2^32)` rounded down to an integer, or `None` above `u64::MAX`.
pub fn exp2_int(y: u64) -> Option<u64> {
    let int = y >> FRAC_BITS;
    if int >= 64 {
        return None;
    }
    let frac_val = exp2_q32(y & (ONE_Q32 - 1))?; // in [2^32, 2^33)
    let v = u128::from(frac_val) << int >> FRAC_BITS;
    u64::try_from(v).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn exact_powers_of_two() {
        assert_eq!(log2_q32(1), 0);
        assert_eq!(log2_q32(2), ONE_Q32);
        assert_eq!(log2_q32(1 << 40), 40 * ONE_Q32);
        assert_eq!(exp2_q32(0), Some(ONE_Q32));
        assert_eq!(exp2_int(10 * ONE_Q32), Some(1024));
        assert_eq!(exp2_int(64 * ONE_Q32), None);
        assert_eq!(exp2_q32(32 * ONE_Q32), None);
    }

    #[test]
    fn known_values() {
        // log2(3) = 1.58496250072115618...; * 2^32 = 6807362105.98...
        assert_eq!(log2_q32(3), 6_807_362_105);
        // 2^0.5 = 1.41421356237309504...; * 2^32 = 6074000999.95...
        let v = exp2_q32(ONE_Q32 / 2).unwrap();
        assert!((6_074_000_998..=6_074_000_999).contains(&v), "{v}");
        // 1000^(1/4) = 5.6234...: 2^(log2(1000)/4).
        assert_eq!(exp2_int(log2_q32(1000) / 4), Some(5));
        // 4^0.5 = 2 (may land one unit below in Q32, never above).
        let v = exp2_q32(log2_q32(4) / 2).unwrap();
        assert!((2 * ONE_Q32 - 4..=2 * ONE_Q32).contains(&v), "{v}");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(10_000))]

        /// exp2(log2(x)) recovers x to within one unit (both round down).
        #[test]
        fn exp_inverts_log(x in 1u64..(1 << 62)) {
            let y = exp2_int(log2_q32(x)).unwrap();
            prop_assert!(y <= x && y + 1 + (x >> 28) >= x, "x {} -> {}", x, y);
        }

        /// log2 is monotone.
        #[test]
        fn log_monotone(a in 1u64..u64::MAX, b in 1u64..u64::MAX) {
            let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
            prop_assert!(log2_q32(lo) <= log2_q32(hi));
        }
    }
}
