//! The seeded random source of the stimulus generators (xorshift64*): small, fast, and fixed here so a seed
//! gives the same stimulus on every platform and in every version of this crate's dependencies.

/// A xorshift64* generator.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from `seed` (any value; the seed is scrambled so nearby seeds give unrelated streams).
    pub fn new(seed: u64) -> Self {
        // splitmix64 finaliser: seeds 1, 2, 3 ... start far apart; never zero.
        let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
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

    /// The value [`Rng::next_u64`] would return, advancing the generator only when `advance` holds, without a
    /// branch: a stimulus that draws in a random half of its cycles keeps its stream (so a seed gives the
    /// same inputs) without a mispredicted branch in every other cycle.
    #[inline]
    pub fn next_if(&mut self, advance: bool) -> u64 {
        let s = self.0;
        let mut x = s;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        let keep = u64::from(advance).wrapping_neg();
        self.0 = (x & keep) | (s & !keep);
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// [`Rng::below`] of a value already drawn (`v` from [`Rng::next_if`]).
    #[inline]
    pub fn below_of(v: u64, n: u64) -> u64 {
        ((u128::from(v) * u128::from(n.max(1))) >> 64) as u64
    }

    /// Uniform in `0..n` (`n > 0`), by multiply-and-shift rather than a division, which would cost more
    /// than the rest of a stimulus cycle (the bias, below 2^-32 for the small `n` used, does not matter).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        Self::below_of(self.next_u64(), n)
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
    fn next_if_draws_the_same_stream_and_stays_put_when_told() {
        let mut a = Rng::new(9);
        let mut b = Rng::new(9);
        for k in 0..1000u64 {
            let advance = k % 3 != 0;
            let v = b.next_if(advance);
            if advance {
                assert_eq!(v, a.next_u64());
            } else {
                // Not advanced: the next draw of either is the same value again.
                assert_eq!(v, a.clone().next_u64());
                assert_eq!(b.clone().next_u64(), v);
            }
        }
        assert_eq!(a.next_u64(), b.next_u64());
        assert_eq!(Rng::below_of(u64::MAX, 66), 65);
        assert_eq!(Rng::below_of(0, 66), 0);
    }

    #[test]
    fn range_stays_inside_and_reaches_both_ends() {
        let mut r = Rng::new(1);
        let v: Vec<u64> = (0..2000).map(|_| r.range(3, 9)).collect();
        assert!(v.iter().all(|&x| (3..=9).contains(&x)));
        assert!(v.contains(&3) && v.contains(&9));
    }
}
