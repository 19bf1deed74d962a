//! The seeded random source of the stimulus generators (xorshift64*): small, fast, and fixed here so a seed
//! gives the same stimulus on every platform and in every version of this crate's dependencies.

/// A xorshift64* generator.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from `seed` (any value; the seed is scrambled so nearby seeds give unrelated streams).
    pub fn new(seed: u64) -> Self {
        // One SplitMix64 step from the seed: seeds 1, 2, 3 ... start far apart; never zero.
        let z = rtl_model::rng::splitmix64(&mut { seed });
        Rng(if z == 0 { 1 } else { z })
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in `0..n` from the low 32 bits of `v` (`n <= 2^32`): one draw split into two amounts (the
    /// bias, below `n / 2^32`, does not matter for the small `n` used).
    #[inline]
    pub fn scale(v: u64, n: u64) -> u64 {
        ((v & 0xffff_ffff) * n) >> 32
    }

    /// Uniform in `0..n` (`n > 0`), by multiply-and-shift rather than a division, which would cost more
    /// than the rest of a stimulus cycle (the bias, below 2^-32 for the small `n` used, does not matter).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n.max(1))) >> 64) as u64
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }

    /// True with probability `1/n`.
    pub fn one_in(&mut self, n: u64) -> bool {
        self.below(n) == 0
    }

    /// True with probability `pct/100`.
    pub fn pct(&mut self, pct: u64) -> bool {
        self.below(100) < pct
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_stream_other_seed_other_stream() {
        let a: Vec<u64> = (0..8)
            .scan(Rng::new(5), |r, _| Some(r.next_u64()))
            .collect();
        let b: Vec<u64> = (0..8)
            .scan(Rng::new(5), |r, _| Some(r.next_u64()))
            .collect();
        let c: Vec<u64> = (0..8)
            .scan(Rng::new(6), |r, _| Some(r.next_u64()))
            .collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn scale_spans_its_range_from_either_half_of_a_draw() {
        assert_eq!(Rng::scale(0xffff_ffff, 66), 65);
        assert_eq!(Rng::scale(0x1_0000_0000, 66), 0, "only the low half counts");
        assert_eq!(Rng::scale(0x8000_0000, 10), 5);
        let mut r = Rng::new(4);
        let mut seen = [0u32; 66];
        for _ in 0..20_000 {
            let v = r.next_u64();
            seen[Rng::scale(v, 66) as usize] += 1;
            seen[Rng::scale(v >> 32, 66) as usize] += 1;
        }
        // 40,000 draws over 66 values: about 606 each (binomial sd about 24); every value within 20%.
        assert!(seen.iter().all(|&c| (485..=727).contains(&c)), "{seen:?}");
    }

    #[test]
    fn range_stays_inside_and_reaches_both_ends() {
        let mut r = Rng::new(1);
        let v: Vec<u64> = (0..2000).map(|_| r.range(3, 9)).collect();
        assert!(v.iter().all(|&x| (3..=9).contains(&x)));
        assert!(v.contains(&3) && v.contains(&9));
    }
}
