//! [`Wide`]: a port value of up to 2,048 bits, as little-endian 32-bit words like Verilator's `VlWide`, so
//! mismatch reports, port traces and configuration lines carry ports wider than 128 bits (`cong_detect`'s
//! 1,024-bit `voq_fill_i`, `cct_shaper`'s 2,048-bit `cct_i`, `vl_arb`'s tables) without a per-block format.
//!
//! It is a fixed-size `Copy` value (256 bytes): building one never allocates. The lockstep loop itself
//! compares the blocks' `Out` structs and builds `Wide`s only to report a mismatch or write a trace.

/// 32-bit words of a [`Wide`].
pub const WIDE_WORDS: usize = 64;

/// Bits a [`Wide`] holds.
pub const WIDE_BITS: u32 = 32 * WIDE_WORDS as u32;

/// A port value of up to [`WIDE_BITS`] bits; word 0 holds bits 31..0 (Verilator's `VlWide` order).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Wide([u32; WIDE_WORDS]);

impl Default for Wide {
    fn default() -> Self {
        Wide::ZERO
    }
}

impl Wide {
    /// Zero.
    pub const ZERO: Wide = Wide([0; WIDE_WORDS]);

    /// The value of `words`, word 0 lowest; words beyond [`WIDE_WORDS`] are dropped.
    pub fn from_words(words: &[u32]) -> Self {
        let mut w = Wide::ZERO;
        for (d, s) in w.0.iter_mut().zip(words) {
            *d = *s;
        }
        w
    }

    /// The words, word 0 lowest.
    pub fn words(&self) -> &[u32; WIDE_WORDS] {
        &self.0
    }

    /// The low 128 bits.
    pub fn low_u128(&self) -> u128 {
        (0..4).fold(0u128, |acc, k| acc | u128::from(self.0[k]) << (32 * k))
    }

    /// The low 64 bits.
    pub fn low_u64(&self) -> u64 {
        u64::from(self.0[0]) | u64::from(self.0[1]) << 32
    }

    /// Bits `at .. at + width` (`width <= 64`; bits beyond [`WIDE_BITS`] read as 0).
    pub fn field(&self, at: u32, width: u32) -> u64 {
        let mut v = 0u64;
        for b in 0..width.min(64) {
            let p = at + b;
            if p < WIDE_BITS && self.0[(p / 32) as usize] >> (p % 32) & 1 != 0 {
                v |= 1 << b;
            }
        }
        v
    }

    /// Sets bits `at .. at + width` to the low `width` bits of `v` (`width <= 64`; bits beyond
    /// [`WIDE_BITS`] are dropped).
    pub fn set_field(&mut self, at: u32, width: u32, v: u64) {
        for b in 0..width.min(64) {
            let p = at + b;
            if p >= WIDE_BITS {
                break;
            }
            let (w, s) = ((p / 32) as usize, p % 32);
            self.0[w] = (self.0[w] & !(1 << s)) | (((v >> b) & 1) as u32) << s;
        }
    }

    /// Position of the highest set bit plus one (0 for zero): the width the value needs.
    pub fn bit_len(&self) -> u32 {
        self.0
            .iter()
            .rposition(|&w| w != 0)
            .map_or(0, |k| 32 * k as u32 + (32 - self.0[k].leading_zeros()))
    }

    /// Whether the value fits `width` bits.
    pub fn fits(&self, width: u32) -> bool {
        self.bit_len() <= width
    }

    /// The value with every bit at or above `width` cleared.
    pub fn masked(mut self, width: u32) -> Self {
        for (k, w) in self.0.iter_mut().enumerate() {
            let lo = 32 * k as u32;
            if lo >= width {
                *w = 0;
            } else if width - lo < 32 {
                *w &= (1u32 << (width - lo)) - 1;
            }
        }
        self
    }

    /// Parses `0x` hex (any number of digits up to [`WIDE_BITS`] bits; `_` separators allowed) or decimal
    /// (up to 128 bits). `None` if malformed or too long.
    pub fn parse(s: &str) -> Option<Self> {
        let Some(h) = s.strip_prefix("0x") else {
            return s.parse::<u128>().ok().map(Wide::from);
        };
        let digits: Vec<u32> = h
            .chars()
            .filter(|&c| c != '_')
            .map(|c| c.to_digit(16))
            .collect::<Option<_>>()?;
        if digits.is_empty() {
            return None;
        }
        let mut w = Wide::ZERO;
        for (k, d) in digits.iter().rev().enumerate() {
            if *d != 0 {
                let at = 4 * k as u32;
                if at >= WIDE_BITS {
                    return None;
                }
                w.0[(at / 32) as usize] |= d << (at % 32);
            }
        }
        Some(w)
    }
}

impl From<u128> for Wide {
    fn from(v: u128) -> Self {
        let mut w = Wide::ZERO;
        for k in 0..4 {
            w.0[k] = (v >> (32 * k)) as u32;
        }
        w
    }
}

macro_rules! wide_from {
    ($($t:ty),*) => {$(
        impl From<$t> for Wide {
            fn from(v: $t) -> Self {
                Wide::from(u128::from(v))
            }
        }
    )*};
}
wide_from!(bool, u8, u16, u32, u64);

/// Hex digits without leading zeros (`0` for zero), like `u128`'s.
impl std::fmt::LowerHex for Wide {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Some(top) = self.0.iter().rposition(|&w| w != 0) else {
            return f.write_str("0");
        };
        write!(f, "{:x}", self.0[top])?;
        for w in self.0[..top].iter().rev() {
            write!(f, "{w:08x}")?;
        }
        Ok(())
    }
}

impl std::fmt::Debug for Wide {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Wide(0x{self:x})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trips_beyond_128_bits_and_matches_u128_below() {
        for v in [0u128, 1, 0xabc, u128::MAX, 1 << 100] {
            assert_eq!(format!("{:x}", Wide::from(v)), format!("{v:x}"));
            assert_eq!(Wide::from(v).low_u128(), v);
        }
        let mut w = Wide::ZERO;
        w.set_field(2047, 1, 1);
        w.set_field(1000, 16, 0xbeef);
        w.set_field(3, 4, 0xf);
        let s = format!("{w:x}");
        assert_eq!(s.len(), 512);
        assert!(s.starts_with('8'), "{s}");
        assert_eq!(Wide::parse(&format!("0x{s}")), Some(w));
        assert_eq!(w.field(1000, 16), 0xbeef);
        assert_eq!(w.field(1001, 16), 0xbeef >> 1);
        assert_eq!(w.low_u64(), 0x78);
        assert_eq!(w.bit_len(), 2048);
        assert!(w.fits(2048) && !w.fits(2047));
        assert_eq!(w.masked(1008).field(1000, 16), 0xef);
        assert_eq!(w.masked(1008).bit_len(), 1008);
        assert_eq!(w.masked(1016), w.masked(1016).masked(1016));
        assert_eq!(w.masked(1016).field(1000, 16), 0xbeef);
    }

    #[test]
    fn parse_refuses_what_does_not_fit_or_is_not_a_number() {
        assert_eq!(Wide::parse("0x"), None);
        assert_eq!(Wide::parse("0xg"), None);
        assert_eq!(Wide::parse("12a"), None);
        assert_eq!(Wide::parse(&format!("0x1{}", "0".repeat(512))), None);
        // Leading zero digits beyond the width are fine: they carry no bit.
        assert_eq!(
            Wide::parse(&format!("0x{}5", "0".repeat(600))),
            Some(Wide::from(5u8))
        );
        assert_eq!(Wide::parse("0x1_0000"), Some(Wide::from(0x10000u32)));
        assert_eq!(Wide::parse("77"), Some(Wide::from(77u8)));
        assert_eq!(Wide::ZERO.bit_len(), 0);
        assert_eq!(format!("{:?}", Wide::from(255u8)), "Wide(0xff)");
    }
}
