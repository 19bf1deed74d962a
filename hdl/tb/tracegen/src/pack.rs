//! Seeded randomness and the text form of the trace files read by the Icarus testbenches.

/// Splitmix64: a small, seeded, deterministic generator (no dependency needed for stimulus).
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`; the tiny modulo bias does not matter for stimulus).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }

    /// True with probability `num / den`.
    pub fn chance(&mut self, num: u64, den: u64) -> bool {
        self.below(den) < num
    }
}

/// A wide packed vector built from fields, lowest field at bit 0, as the RTL's flattened array ports.
#[derive(Default)]
pub struct Packed {
    bits: Vec<bool>,
}

impl Packed {
    /// An empty vector.
    pub fn new() -> Self {
        Packed::default()
    }

    /// Appends `width` bits of `value` above the bits already pushed.
    pub fn push(&mut self, value: u64, width: u32) -> &mut Self {
        for b in 0..width {
            self.bits.push(value >> b & 1 != 0);
        }
        self
    }

    /// Hex digits, most significant first, as `$fscanf("%h")` reads them.
    pub fn hex(&self) -> String {
        let digits = self.bits.len().div_ceil(4).max(1);
        (0..digits)
            .rev()
            .map(|d| {
                let v = (0..4).fold(0u32, |acc, b| {
                    let bit = self.bits.get(d * 4 + b).copied().unwrap_or(false);
                    acc | u32::from(bit) << b
                });
                char::from_digit(v, 16).unwrap_or('0')
            })
            .collect()
    }
}

/// Hex of one scalar.
pub fn h(v: impl Into<u64>) -> String {
    format!("{:x}", v.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packs_lowest_field_first() {
        let mut p = Packed::new();
        p.push(0x5, 4).push(0x7f, 7).push(1, 1);
        // bits: 0101 | 1111111 | 1 -> 0b1_1111111_0101 = 0xff5
        assert_eq!(p.hex(), "ff5");
        assert_eq!(Packed::new().hex(), "0");
        assert_eq!(h(255u8), "ff");
    }

    #[test]
    fn rng_is_seeded() {
        let a: Vec<u64> = (0..4).scan(Rng::new(7), |r, _| Some(r.next())).collect();
        let b: Vec<u64> = (0..4).scan(Rng::new(7), |r, _| Some(r.next())).collect();
        let c: Vec<u64> = (0..4).scan(Rng::new(8), |r, _| Some(r.next())).collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
        let mut r = Rng::new(1);
        assert!((0..1000).all(|_| (3..=5).contains(&r.range(3, 5))));
    }
}
