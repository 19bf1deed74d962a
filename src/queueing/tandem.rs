//! The credit-based flow control CTMC of seed 003, chapter 4 (thesis-003-digest.md): two nodes in tandem on
//! one VL. Node 1 holds up to `n` packets (an arrival to a full node is lost); node 2's buffer has `m` slots,
//! one credit each (per-packet credits). Node 1 may start a packet only with a credit, i.e. while node 2
//! holds fewer than `m`; the credit comes back the moment node 2 sends the packet on (zero credit latency).
//! Arrivals are Poisson (`lambda`), both services exponential (`mu1`, `mu2`).
//!
//! [`simulate`] runs it event by event in integer cycles with seeded exponential samples, the credits kept
//! by rtl-model's credit blocks ([`Credits`]); [`exact`] solves the CTMC (states `(i, j)`, `i` in `0..=n`,
//! `j` in `0..=m`) numerically for the reference values.

use serde::Serialize;

use super::credits::{Credits, CREDIT_DELAY};
use super::sampler::Gaps;
use super::stats::{Batches, Estimate};
use super::{RunLength, UNIT_CYCLES};

/// The model's parameters; rates in thousandths per time unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tandem {
    /// Arrival rate.
    pub lambda_milli: u64,
    /// Node 1 service rate.
    pub mu1_milli: u64,
    /// Node 2 service rate.
    pub mu2_milli: u64,
    /// Node 1 capacity.
    pub n: u32,
    /// Node 2 capacity (credits).
    pub m: u32,
}

/// Metrics of the model: mean packets at node 1 and 2, their sum, throughput (per time unit), response
/// time `R = L / T`, and the probability that node 1 is full.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Metrics<T> {
    /// Mean number at node 1.
    pub l1: T,
    /// Mean number at node 2.
    pub l2: T,
    /// `L1 + L2`.
    pub l: T,
    /// Accepted arrivals per time unit.
    pub t: T,
    /// Response time `L / T`, time units.
    pub r: T,
    /// Probability that node 1 is full.
    pub p_full: T,
}

/// States of the CTMC at most (dense elimination: 2 500 states is 50 MB and well under a second).
pub const MAX_STATES: usize = 2500;

/// The stationary solution of the CTMC: `p Q = 0` with one balance equation replaced by `sum p = 1`, solved
/// by Gaussian elimination with partial pivoting. (Gauss-Seidel sweeps with renormalisation were tried and
/// settle on a wrong vector here, off in the fourth digit at m = 3.) At most [`MAX_STATES`] states.
pub fn exact(m: &Tandem) -> Metrics<f64> {
    let (n, mm) = (m.n as usize, m.m as usize);
    let (la, m1, m2) = (
        m.lambda_milli as f64,
        m.mu1_milli as f64,
        m.mu2_milli as f64,
    );
    let idx = |i: usize, j: usize| i * (mm + 1) + j;
    let size = (n + 1) * (mm + 1);
    // a[r][c]: row r is the balance equation of state r (coefficients of p[c]), i.e. Q transposed.
    let mut a = vec![vec![0.0f64; size]; size];
    for i in 0..=n {
        for j in 0..=mm {
            let from = idx(i, j);
            let mut go = |to: usize, rate: f64| {
                a[to][from] += rate;
                a[from][from] -= rate;
            };
            if i < n {
                go(idx(i + 1, j), la);
            }
            if i >= 1 && j < mm {
                go(idx(i - 1, j + 1), m1);
            }
            if j >= 1 {
                go(idx(i, j - 1), m2);
            }
        }
    }
    let mut b = vec![0.0f64; size];
    a[size - 1].iter_mut().for_each(|x| *x = 1.0);
    b[size - 1] = 1.0;
    for c in 0..size {
        let piv = (c..size)
            .max_by(|&x, &y| a[x][c].abs().total_cmp(&a[y][c].abs()))
            .unwrap_or(c);
        a.swap(c, piv);
        b.swap(c, piv);
        for r in 0..size {
            if r != c && a[r][c] != 0.0 {
                let f = a[r][c] / a[c][c];
                let (row_c, row_r) = if r < c {
                    let (lo, hi) = a.split_at_mut(c);
                    (&hi[0], &mut lo[r])
                } else {
                    let (lo, hi) = a.split_at_mut(r);
                    (&lo[c], &mut hi[0])
                };
                for (x, y) in row_r.iter_mut().zip(row_c) {
                    *x -= f * y;
                }
                b[r] -= f * b[c];
            }
        }
    }
    let p: Vec<f64> = (0..size).map(|k| b[k] / a[k][k]).collect();
    let (mut l1, mut l2, mut full) = (0.0, 0.0, 0.0);
    for i in 0..=n {
        for j in 0..=mm {
            l1 += i as f64 * p[idx(i, j)];
            l2 += j as f64 * p[idx(i, j)];
            if i == n {
                full += p[idx(i, j)];
            }
        }
    }
    let t = la / 1000.0 * (1.0 - full);
    Metrics {
        l1,
        l2,
        l: l1 + l2,
        t,
        r: (l1 + l2) / t,
        p_full: full,
    }
}

/// A simulation's estimates and the credit blocks' violation count (zero in a correct model).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Simulated {
    /// The estimates.
    pub metrics: Metrics<Estimate>,
    /// Lossless violations the credit blocks flagged, and events where their buffer count disagreed with
    /// node 2's.
    pub credit_violations: u64,
}

/// Simulates the model for `len` with seed `seed`; an error if the credit blocks reject `m`.
pub fn simulate(m: &Tandem, len: &RunLength, seed: u64) -> Result<Simulated, String> {
    let mut cr = Credits::new(u16::try_from(m.m).map_err(|_| format!("m {} too large", m.m))?)?;
    let mut check: Option<u64> = None;
    let mut mismatches = 0u64;
    let mut arr = Gaps::exponential(m.lambda_milli, seed);
    let mut s1 = Gaps::exponential(m.mu1_milli, seed.wrapping_add(1));
    let mut s2 = Gaps::exponential(m.mu2_milli, seed.wrapping_add(2));
    let mut b = Batches::<4>::new(len.warmup_cycles(), len.batch_cycles(), len.batches);
    let end = b.end();
    let (mut i, mut j) = (0u32, 0u32);
    let mut next_arr = arr.sample();
    let (mut end1, mut end2): (Option<u64>, Option<u64>) = (None, None);
    loop {
        // Ties: node 2 first (frees a credit), then node 1, then a credit check, then the arrival.
        let t = next_arr
            .min(end1.unwrap_or(u64::MAX))
            .min(end2.unwrap_or(u64::MAX))
            .min(check.unwrap_or(u64::MAX));
        b.advance(
            t,
            [
                u64::from(i),
                u64::from(j),
                u64::from(i == m.n),
                u64::from(i + j),
            ],
        );
        if t >= end {
            break;
        }
        let settled = cr.settled();
        cr.at(t);
        if settled && u32::from(cr.rx_free()) + j != m.m {
            mismatches += 1;
        }
        if end2 == Some(t) {
            j -= 1;
            cr.drain();
            end2 = (j >= 1).then(|| t + s2.sample());
            // The freed credit is usable CREDIT_DELAY cycles later: look again then.
            check = Some(check.map_or(t + CREDIT_DELAY, |c| c.min(t + CREDIT_DELAY)));
        } else if end1 == Some(t) {
            i -= 1;
            j += 1;
            cr.send();
            end1 = None;
            if end2.is_none() {
                end2 = Some(t + s2.sample());
            }
        } else if check == Some(t) {
            check = None;
        } else {
            if i < m.n {
                i += 1;
                b.count(t);
            }
            next_arr = t + arr.sample();
        }
        // Node 1 starts a packet when it has one and the credit blocks grant a credit (exponential: a
        // blocked packet restarts).
        if end1.is_none() && i >= 1 && cr.credit() {
            end1 = Some(t + s1.sample());
        }
    }
    let (l1, l2, full, l) = (b.average(0), b.average(1), b.average(2), b.average(3));
    let t = Estimate::of(&b.rates(UNIT_CYCLES));
    // R = L / T per batch (a ratio estimator; its bias is far below the batch spread at these lengths).
    let r: Vec<f64> = b
        .series(3)
        .iter()
        .zip(b.rates(UNIT_CYCLES))
        .map(|(l, t)| l / t)
        .collect();
    let r = Estimate::of(&r);
    Ok(Simulated {
        metrics: Metrics {
            l1,
            l2,
            l,
            t,
            r,
            p_full: full,
        },
        credit_violations: cr.violations + mismatches,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn thesis(m: u32) -> Tandem {
        Tandem {
            lambda_milli: 5000,
            mu1_milli: 6000,
            mu2_milli: 8000,
            n: 12,
            m,
        }
    }

    /// The solver against the digest's numbers (solved independently there), to their 4-5 digits.
    #[test]
    fn exact_solution_matches_the_digest() {
        for (m, l1, l2, t, p) in [
            (2, 7.4228, 0.7843, 4.42116, 0.11577),
            (3, 5.5536, 1.0315, 4.71624, 0.05675),
            (4, 4.6540, 1.1995, 4.81511, 0.03698),
            (6, 3.9653, 1.3950, 4.87519, 0.02496),
            (8, 3.7583, 1.4848, 4.89041, 0.02192),
            (11, 3.6775, 1.5322, 4.89580, 0.02084),
        ] {
            let e = exact(&thesis(m));
            assert!((e.l1 - l1).abs() < 6e-5, "m {m}: L1 {}", e.l1);
            assert!((e.l2 - l2).abs() < 6e-5, "m {m}: L2 {}", e.l2);
            assert!((e.t - t).abs() < 6e-6, "m {m}: T {}", e.t);
            assert!((e.p_full - p).abs() < 6e-6, "m {m}: P {}", e.p_full);
        }
        let e = exact(&thesis(5));
        assert!((e.l - 5.5196).abs() < 6e-5 && (e.t - 4.85587).abs() < 6e-6);
    }

    /// A short run is already close: L1 within 10% at m = 4 (the integration test checks the full run
    /// against confidence intervals).
    #[test]
    fn a_short_simulation_is_near_the_solution() {
        let len = RunLength {
            warmup_units: 100,
            duration_units: 4000,
            batches: 10,
        };
        let sim = simulate(&thesis(4), &len, 9).unwrap();
        assert_eq!(sim.credit_violations, 0);
        let s = sim.metrics;
        let e = exact(&thesis(4));
        assert!(
            (s.l1.mean - e.l1).abs() < 0.1 * e.l1,
            "{} {}",
            s.l1.mean,
            e.l1
        );
        assert!((s.t.mean - e.t).abs() < 0.05 * e.t, "{} {}", s.t.mean, e.t);
    }
}
