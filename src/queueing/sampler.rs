//! Seeded random durations for the queueing models, drawn from hca-model's arrival generator
//! ([`Arrivals`], integer-only): the gaps between its arrivals are the samples. One model time unit is
//! [`super::UNIT_CYCLES`] cycles of a 1 GHz clock (1 ms); see [`Gaps::new`] for the scaling.

use hca_model::traffic::pattern::{Arrivals, Pattern};
use hca_model::units::CoreClock;

/// Successive gaps of a seeded arrival process, in cycles.
#[derive(Debug, Clone)]
pub struct Gaps {
    a: Arrivals,
    prev: u64,
}

impl Gaps {
    /// Gaps with mean `UNIT_CYCLES * 1000 / rate_milli` cycles (rate `rate_milli / 1000` per time unit),
    /// exponential (`scv_milli` = 1000) or generalised exponential with C^2 = `scv_milli / 1000` >= 1.
    ///
    /// At 1 GHz a stream of 1-byte messages at `b` bit/s has mean gap `8e9 / b` cycles; `b = 8 rate_milli`
    /// gives `1e9 / rate_milli` = `UNIT_CYCLES * 1000 / rate_milli` with `UNIT_CYCLES` = 1e6.
    pub fn new(rate_milli: u64, scv_milli: u32, seed: u64) -> Self {
        let clock = CoreClock::from_khz(1_000_000).expect("1 GHz is a valid clock");
        let rate = 8 * rate_milli.max(1);
        let pattern = if scv_milli <= 1000 {
            Pattern::Poisson { rate }
        } else {
            Pattern::GeBursty {
                rate,
                scv_num: scv_milli,
                scv_den: 1000,
            }
        };
        let mut a = Arrivals::new(pattern, clock, 1, 0, u64::MAX, seed)
            .expect("rate above 0 and C^2 >= 1 are checked above");
        // The first arrival is at the start cycle itself.
        let prev = a.next_arrival().unwrap_or(0);
        Gaps { a, prev }
    }

    /// Exponential gaps at `rate_milli / 1000` per time unit.
    pub fn exponential(rate_milli: u64, seed: u64) -> Self {
        Gaps::new(rate_milli, 1000, seed)
    }

    /// The next gap.
    pub fn sample(&mut self) -> u64 {
        let t = self.a.next_arrival().unwrap_or(u64::MAX);
        let g = t.saturating_sub(self.prev);
        self.prev = t;
        g
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rate 8 per unit: mean gap 125 000 cycles; 100 000 samples: mean within 1% (SE 0.3%).
    #[test]
    fn mean_gap_follows_the_rate() {
        let mut g = Gaps::exponential(8000, 5);
        let sum: u64 = (0..100_000).map(|_| g.sample()).sum();
        let mean = sum as f64 / 100_000.0;
        assert!((mean - 125_000.0).abs() < 1250.0, "{mean}");
        let mut h = Gaps::new(8000, 7000, 5);
        let zeros = (0..100_000).filter(|_| h.sample() == 0).count();
        // GE with C^2 = 7: tau = 1/4, a zero gap with probability 3/4 (SE 0.14%).
        assert!((zeros as f64 / 100_000.0 - 0.75).abs() < 0.01, "{zeros}");
    }
}
