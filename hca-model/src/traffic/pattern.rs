//! Message arrival patterns of one flow, as cycle numbers, integer-only and seeded:
//!
//! - [`Pattern::Saturating`]: the flow always has a message queued (all arrive at the start).
//! - [`Pattern::ConstantRate`]: messages of `B` bytes every `B * 8 * f / rate` cycles, exactly on average (the
//!   remainder is carried).
//! - [`Pattern::Poisson`]: exponential gaps with that mean.
//! - [`Pattern::GeBursty`]: the generalised exponential of seed 003 (section 2.4.1): with `tau = 2 / (C^2 + 1)`
//!   a gap is 0 with probability `1 - tau`, otherwise exponential with mean `1 / (tau lambda)`: mean gap
//!   `1 / lambda`, squared coefficient of variation `C^2` (>= 1).
//!
//! Exponential samples without floating point: with `x` uniform in `1..=2^32`, `-ln(x / 2^32)` is
//! `(32 - log2 x) ln 2`, computed with the Q32 [`crate::rate::fixed::log2_q32`] and `ln 2` in Q32.

use super::rng::SplitMix64;
use crate::error::{at_most, nonzero, CcError};
use crate::rate::fixed::{log2_q32, FRAC_BITS};
use crate::units::{Bps, CoreClock, Cycle};

/// `ln 2` in Q32 (0.693147180559945... * 2^32 = 2977044471.82).
pub const LN2_Q32: u64 = 2_977_044_472;

/// How messages arrive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
    /// Always a message queued: every arrival is at the start cycle, without end (take what fits a queue).
    Saturating,
    /// Exact spacing for `rate` bit/s of message bytes.
    ConstantRate {
        /// Offered load, bit/s.
        rate: Bps,
    },
    /// Exponential gaps, mean for `rate` bit/s.
    Poisson {
        /// Offered load, bit/s.
        rate: Bps,
    },
    /// Generalised exponential gaps with `C^2 = scv_num / scv_den`.
    GeBursty {
        /// Offered load, bit/s.
        rate: Bps,
        /// `C^2` numerator.
        scv_num: u32,
        /// `C^2` denominator.
        scv_den: u32,
    },
}

/// The arrival process of one flow: message size, pattern, start and stop cycles, seed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Arrivals {
    pattern: Pattern,
    clock: CoreClock,
    msg_bytes: u64,
    stop: Cycle,
    next: Cycle,
    frac: u64,
    rng: SplitMix64,
}

impl Arrivals {
    /// Messages of `msg_bytes` bytes from `start` (the first arrives then) until before `stop`.
    pub fn new(
        pattern: Pattern,
        clock: CoreClock,
        msg_bytes: u64,
        start: Cycle,
        stop: Cycle,
        seed: u64,
    ) -> Result<Self, CcError> {
        match pattern {
            Pattern::Saturating => {}
            Pattern::ConstantRate { rate } | Pattern::Poisson { rate } => nonzero("rate", rate)?,
            Pattern::GeBursty {
                rate,
                scv_num,
                scv_den,
            } => {
                nonzero("rate", rate)?;
                nonzero("scv_den", scv_den.into())?;
                // C^2 >= 1, else tau > 1.
                at_most("scv_den", scv_den.into(), "scv_num", scv_num.into())?;
            }
        }
        Ok(Arrivals {
            pattern,
            clock,
            msg_bytes,
            stop,
            next: start,
            frac: 0,
            rng: SplitMix64::new(seed),
        })
    }

    /// `msg_bytes * 8 * f_Hz` (the numerator of the mean gap; divide by the rate).
    fn mean_num(&self) -> u128 {
        u128::from(self.msg_bytes.max(1)) * 8 * u128::from(self.clock.hz())
    }

    /// `-ln(U) * 2^32` for a fresh uniform `U` in `(0, 1]`.
    fn exp_q32(&mut self) -> u128 {
        let x = u64::from(self.rng.next_u32()) + 1;
        let e = (32u64 << FRAC_BITS) - log2_q32(x);
        (u128::from(e) * u128::from(LN2_Q32)) >> FRAC_BITS
    }

    fn gap(&mut self) -> Cycle {
        match self.pattern {
            Pattern::Saturating => 0,
            Pattern::ConstantRate { rate } => {
                let num = self.mean_num() + u128::from(self.frac);
                let r = u128::from(rate);
                self.frac = (num % r) as u64;
                (num / r) as u64
            }
            Pattern::Poisson { rate } => {
                let e = self.exp_q32();
                ((self.mean_num() * e / u128::from(rate)) >> FRAC_BITS) as u64
            }
            Pattern::GeBursty {
                rate,
                scv_num,
                scv_den,
            } => {
                let (n, d) = (u128::from(scv_num), u128::from(scv_den));
                // Zero with probability (1 - tau) = (n - d) / (n + d).
                let y = u128::from(self.rng.next_u32());
                if y * (n + d) < (n - d) << 32 {
                    return 0;
                }
                // Mean 1 / (tau lambda) = mean * (n + d) / (2 d).
                let e = self.exp_q32();
                ((self.mean_num() * e * (n + d) / (u128::from(rate) * 2 * d)) >> FRAC_BITS) as u64
            }
        }
    }

    /// The next arrival cycle, or `None` once the stop cycle is reached.
    pub fn next_arrival(&mut self) -> Option<Cycle> {
        let t = self.next;
        if t >= self.stop {
            return None;
        }
        self.next = t.saturating_add(self.gap());
        Some(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clock() -> CoreClock {
        CoreClock::from_khz(1_000_000).unwrap()
    }

    fn collect(p: Pattern, bytes: u64, stop: Cycle, seed: u64) -> Vec<Cycle> {
        let mut a = Arrivals::new(p, clock(), bytes, 100, stop, seed).unwrap();
        std::iter::from_fn(|| a.next_arrival()).collect()
    }

    /// 1000-byte messages at 3 Gbit/s on 1 GHz: 8000/3 = 2666.67 cycles: gaps 2666, 2667, 2667, ...
    #[test]
    fn constant_rate_exact() {
        let t = collect(
            Pattern::ConstantRate {
                rate: 3_000_000_000,
            },
            1000,
            100 + 8000 * 3 + 1,
            1,
        );
        assert_eq!(t[..4], [100, 2766, 5433, 8100]);
        assert_eq!(t.len(), 10, "every 8000 cycles exactly three");
        assert_eq!(t[9], 100 + 24_000);
    }

    #[test]
    fn saturating() {
        // Saturating never runs dry: every arrival is at the start (the caller takes what it can queue).
        let mut a = Arrivals::new(Pattern::Saturating, clock(), 64, 100, 200, 1).unwrap();
        assert!((0..1000).all(|_| a.next_arrival() == Some(100)));
    }

    /// Statistics over 200 000 seeded gaps (floats only in the check): Poisson mean within 1% and SCV
    /// within 3% of 1; GE with C^2 = 5 (tau = 1/3): mean within 1.5%, zero gaps 2/3 within 1%, SCV within 5%.
    #[test]
    fn poisson_and_ge_moments() {
        let stats = |p: Pattern| {
            let mut a = Arrivals::new(p, clock(), 1000, 0, u64::MAX, 42).unwrap();
            let mut prev = a.next_arrival().unwrap();
            let gaps: Vec<f64> = (0..200_000)
                .map(|_| {
                    let t = a.next_arrival().unwrap();
                    let g = (t - prev) as f64;
                    prev = t;
                    g
                })
                .collect();
            let n = gaps.len() as f64;
            let mean = gaps.iter().sum::<f64>() / n;
            let var = gaps.iter().map(|g| (g - mean) * (g - mean)).sum::<f64>() / n;
            let zeros = gaps.iter().filter(|&&g| g == 0.0).count() as f64 / n;
            (mean, var / (mean * mean), zeros)
        };
        // 8 Gbit/s: mean gap 1000 cycles.
        let (m, scv, _) = stats(Pattern::Poisson {
            rate: 8_000_000_000,
        });
        assert!((m - 1000.0).abs() < 10.0, "mean {m}");
        assert!((scv - 1.0).abs() < 0.03, "scv {scv}");
        let (m, scv, z) = stats(Pattern::GeBursty {
            rate: 8_000_000_000,
            scv_num: 5,
            scv_den: 1,
        });
        assert!((m - 1000.0).abs() < 15.0, "mean {m}");
        assert!((z - 2.0 / 3.0).abs() < 0.01, "zeros {z}");
        assert!((scv - 5.0).abs() < 0.25, "scv {scv}");
    }

    #[test]
    fn bad_patterns() {
        let e = Arrivals::new(
            Pattern::GeBursty {
                rate: 1,
                scv_num: 1,
                scv_den: 2,
            },
            clock(),
            1,
            0,
            1,
            0,
        )
        .unwrap_err();
        assert_eq!(e.to_string(), "scv_den (2) is above scv_num (1)");
        assert!(Arrivals::new(Pattern::Poisson { rate: 0 }, clock(), 1, 0, 1, 0).is_err());
    }
}
