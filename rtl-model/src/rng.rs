//! The workspace's one SplitMix64 (Steele, Lea and Flood 2014): a small deterministic generator, the same
//! sequence for a seed on every platform, used for traffic patterns, flow shuffles, per-flow retargeting and
//! the seeds of the co-simulation's stimulus. Good enough for simulation; not for cryptography.

/// The golden-ratio increment of the SplitMix64 state.
pub const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

/// SplitMix64's output function (the finaliser, also a good 64-bit mixer on its own: neighbouring inputs
/// give unrelated outputs).
#[inline]
pub const fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// One SplitMix64 step on a bare state: advances `state` and returns the next 64 random bits.
#[inline]
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(GOLDEN);
    mix64(*state)
}

/// SplitMix64 state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix64 { state: seed }
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        splitmix64(&mut self.state)
    }

    /// The next 32 random bits (the high half, the better one).
    pub fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_values_and_determinism() {
        // SplitMix64 from seed 0: the first output is 0xE220A8397B1DCDAF (the published reference sequence).
        let mut r = SplitMix64::new(0);
        assert_eq!(r.next_u64(), 0xE220_A839_7B1D_CDAF);
        let a: Vec<u64> = (0..5).map(|_| r.next_u64()).collect();
        let mut s = SplitMix64::new(0);
        s.next_u64();
        let b: Vec<u64> = (0..5).map(|_| s.next_u64()).collect();
        assert_eq!(a, b);
        let mut st = 0;
        assert_eq!(splitmix64(&mut st), 0xE220_A839_7B1D_CDAF);
        assert_eq!(mix64(GOLDEN), 0xE220_A839_7B1D_CDAF);
    }
}
