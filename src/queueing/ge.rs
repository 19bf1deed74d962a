//! The GE/GE/1/N queue of seed 003 (thesis-003-digest.md): generalised exponential arrivals (rate `lambda`,
//! C_a^2) and service (rate `mu`, C_s^2), one server, room for `N` in the system; an arrival that finds
//! `N` is lost. A GE gap is 0 with probability `1 - tau` (a batch), otherwise exponential: arrivals come in
//! geometric batches, and a zero service time lets a job leave the moment it starts.
//!
//! Named choices: a batch is admitted job by job until the queue is full (partial batch acceptance), and at
//! one cycle departures go before arrivals. [`simulate`] runs it; [`max_entropy`] is the thesis' ME solution
//! (Kouvatsos form), which the thesis itself finds 5-10% off simulation.

use serde::Serialize;

use super::sampler::Gaps;
use super::stats::{Batches, Estimate};
use super::RunLength;

/// The queue's parameters; rates in thousandths per time unit, C^2 in thousandths.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GeQueue {
    /// Arrival rate.
    pub lambda_milli: u64,
    /// Service rate.
    pub mu_milli: u64,
    /// Arrival C^2 (>= 1000).
    pub ca2_milli: u32,
    /// Service C^2 (>= 1000).
    pub cs2_milli: u32,
    /// Capacity N (in service included).
    pub capacity: u32,
}

/// Utilisation (server busy), mean number in the system, and probability of a full system.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Metrics<T> {
    /// `1 - P(0)`.
    pub u: T,
    /// Mean number in the system.
    pub l: T,
    /// `P(N)`.
    pub p_full: T,
}

/// The maximum-entropy solution (thesis-003-digest.md, GE/GE/1/N ME).
pub fn max_entropy(q: &GeQueue) -> Metrics<f64> {
    let rho = q.lambda_milli as f64 / q.mu_milli as f64;
    let (ca2, cs2) = (q.ca2_milli as f64 / 1000.0, q.cs2_milli as f64 / 1000.0);
    let n = q.capacity as i32;
    let l_inf = rho / 2.0 * (1.0 + (ca2 + rho * cs2) / (1.0 - rho));
    let x = (l_inf - rho) / l_inf;
    let g = rho * (1.0 - x) / ((1.0 - rho) * x);
    let sigma = 2.0 / (cs2 + 1.0);
    let y = 1.0 / (1.0 - (1.0 - sigma) * x);
    let z = 1.0 + g * x * (1.0 - x.powi(n - 1)) / (1.0 - x) + g * x.powi(n) * y;
    let p = |k: i32| {
        if k == 0 {
            1.0 / z
        } else if k < n {
            g * x.powi(k) / z
        } else {
            g * x.powi(n) * y / z
        }
    };
    Metrics {
        u: 1.0 - p(0),
        l: (1..=n).map(|k| f64::from(k) * p(k)).sum(),
        p_full: p(n),
    }
}

/// Simulates the queue for `len` with seed `seed`.
pub fn simulate(q: &GeQueue, len: &RunLength, seed: u64) -> Metrics<Estimate> {
    let mut arr = Gaps::new(q.lambda_milli, q.ca2_milli, seed);
    let mut svc = Gaps::new(q.mu_milli, q.cs2_milli, seed.wrapping_add(1));
    let mut b = Batches::<3>::new(len.warmup_cycles(), len.batch_cycles(), len.batches);
    let end = b.end();
    let mut k = 0u32;
    let mut next_arr = arr.sample();
    let mut done: Option<u64> = None;
    loop {
        let t = next_arr.min(done.unwrap_or(u64::MAX));
        b.advance(
            t,
            [u64::from(k >= 1), u64::from(k), u64::from(k == q.capacity)],
        );
        if t >= end {
            break;
        }
        if done == Some(t) {
            k -= 1;
            done = (k >= 1).then(|| t + svc.sample());
        } else {
            if k < q.capacity {
                k += 1;
                if k == 1 {
                    done = Some(t + svc.sample());
                }
            }
            next_arr = t + arr.sample();
        }
    }
    Metrics {
        u: b.average(0),
        l: b.average(1),
        p_full: b.average(2),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(lambda_milli: u64, ca2: u32, cs2: u32) -> GeQueue {
        GeQueue {
            lambda_milli,
            mu_milli: 8000,
            ca2_milli: ca2,
            cs2_milli: cs2,
            capacity: 8,
        }
    }

    /// The formulas against the digest's numbers, to their 5 digits.
    #[test]
    fn me_formulas_match_the_digest() {
        for (lambda, u, l, p) in [
            (2000, 0.22981, 0.85293, 0.02692),
            (4000, 0.41441, 1.84684, 0.08559),
            (6000, 0.55022, 2.76414, 0.15983),
        ] {
            let m = max_entropy(&q(lambda, 5000, 7000));
            assert!((m.u - u).abs() < 6e-6, "{lambda}: U {}", m.u);
            assert!((m.l - l).abs() < 6e-6, "{lambda}: L {}", m.l);
            assert!((m.p_full - p).abs() < 6e-6, "{lambda}: P(N) {}", m.p_full);
        }
    }

    /// With C^2 = 1 both ways the ME solution is M/M/1/N: P(k) = (1 - rho) rho^k / (1 - rho^(N+1)).
    #[test]
    fn me_reduces_to_mm1n() {
        let m = max_entropy(&q(4000, 1000, 1000));
        let rho: f64 = 0.5;
        let p0 = (1.0 - rho) / (1.0 - rho.powi(9));
        assert!((m.u - (1.0 - p0)).abs() < 1e-12);
        assert!((m.p_full - p0 * rho.powi(8)).abs() < 1e-12);
    }

    /// A short M/M/1/8 run (C^2 = 1): U within 5% of the exact 1 - P(0).
    #[test]
    fn a_short_mm1n_simulation_is_near_the_formula() {
        let len = RunLength {
            warmup_units: 100,
            duration_units: 5000,
            batches: 10,
        };
        let s = simulate(&q(4000, 1000, 1000), &len, 3);
        let m = max_entropy(&q(4000, 1000, 1000));
        assert!((s.u.mean - m.u).abs() < 0.05 * m.u, "{} {}", s.u.mean, m.u);
    }
}
