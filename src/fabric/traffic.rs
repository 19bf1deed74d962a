//! Message arrivals of a fabric flow and message completion latency.
//!
//! A flow's source holds the arrival cycles of its messages in order (hca-model's [`MsgSource`]); a
//! patterned flow queues up to `max_queued_messages` unsent messages (more are refused and counted).
//!
//! The destination notes the cycle each message's last packet is fully in ([`super::Hca::done`]). Messages of a
//! flow complete in the order they arrive (one path, lossless, in order), so the `k`-th completion belongs to
//! the `k`-th arrival: [`Fabric::collect_messages`] pairs them (once per sample interval, not per cycle)
//! into latencies. A user of [`Fabric`] other than `ibcycle run` must call it too, or these records grow
//! with every message.

use hca_model::traffic::pattern::Pattern;
use hca_model::traffic::rng::SplitMix64;
pub use hca_model::traffic::source::MsgSource;
use serde::Serialize;

use super::Fabric;
use crate::run::round3;
use crate::scenario::{FlowPattern, Scenario};

/// The arrival pattern as hca-model takes it.
pub fn pattern(p: FlowPattern) -> Pattern {
    let bps = |mbps: u64| mbps.saturating_mul(1_000_000);
    match p {
        FlowPattern::Saturating => Pattern::Saturating,
        FlowPattern::Constant { rate_mbps } => Pattern::ConstantRate {
            rate: bps(rate_mbps),
        },
        FlowPattern::Poisson { rate_mbps } => Pattern::Poisson {
            rate: bps(rate_mbps),
        },
        FlowPattern::Ge {
            rate_mbps,
            scv_milli,
        } => Pattern::GeBursty {
            rate: bps(rate_mbps),
            scv_num: scv_milli,
            scv_den: 1000,
        },
    }
}

/// The seed of flow `flow`'s arrivals: the scenario seed and the flow index mixed, so flows are independent
/// and a flow's arrivals do not change when flows are added after it.
pub fn flow_seed(scenario_seed: u64, flow: usize) -> u64 {
    let mut r = SplitMix64::new(scenario_seed ^ (flow as u64).wrapping_mul(rtl_model::rng::GOLDEN));
    r.next_u64()
}

/// Message latency statistics of one flow in `summary.json` (`msg_latency_us`): arrival at the source to the
/// last packet fully in at the destination.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LatencyStats {
    /// Messages completed during the run.
    pub messages: u64,
    /// Mean, microseconds.
    pub mean: f64,
    /// Median (nearest rank), microseconds.
    pub p50: f64,
    /// 99th percentile (nearest rank), microseconds.
    pub p99: f64,
    /// Largest, microseconds.
    pub max: f64,
}

impl LatencyStats {
    /// Statistics of latencies in cycles at `cycles_per_us`; `None` without any.
    pub fn of(cycles: &[u64], cycles_per_us: u64) -> Option<Self> {
        if cycles.is_empty() {
            return None;
        }
        let mut v = cycles.to_vec();
        v.sort_unstable();
        let us = |c: u64| round3(c as f64 / cycles_per_us as f64);
        // Nearest rank: the smallest value with at least q of the samples at or below it.
        let rank = |q_pct: u64| v[((v.len() as u64 * q_pct).div_ceil(100) as usize).max(1) - 1];
        let sum: u128 = v.iter().map(|&c| u128::from(c)).sum();
        Some(LatencyStats {
            messages: v.len() as u64,
            mean: round3(sum as f64 / v.len() as f64 / cycles_per_us as f64),
            p50: us(rank(50)),
            p99: us(rank(99)),
            max: us(v[v.len() - 1]),
        })
    }
}

impl Fabric {
    /// Pairs every completed message with its arrival and appends the latencies (cycles) to `out[flow]`.
    pub fn collect_messages(&mut self, sc: &Scenario, out: &mut [Vec<u64>]) {
        for (i, f) in sc.flows.iter().enumerate() {
            while let Some(done) = self.hcas[f.dst].per_flow[i].done.pop_front() {
                match self.hcas[f.src].flow_source(i).and_then(|s| s.pop_sent()) {
                    Some(arrived) => out[i].push(done.saturating_sub(arrived)),
                    // Cannot happen (a message completes only after it was sent); dropped, not invented.
                    None => break,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_statistics_by_hand() {
        // 1..=100 cycles at 10 cycles/us: mean 5.05 us, p50 = 50th value, p99 = 99th value.
        let v: Vec<u64> = (1..=100).collect();
        let s = LatencyStats::of(&v, 10).unwrap();
        assert_eq!(
            (s.messages, s.mean, s.p50, s.p99, s.max),
            (100, 5.05, 5.0, 9.9, 10.0)
        );
        assert_eq!(LatencyStats::of(&[], 10), None);
        let one = LatencyStats::of(&[30], 10).unwrap();
        assert_eq!((one.p50, one.p99), (3.0, 3.0));
    }

    #[test]
    fn flow_seeds_differ() {
        assert_ne!(flow_seed(1, 0), flow_seed(1, 1));
        assert_ne!(flow_seed(1, 0), flow_seed(2, 0));
        assert_eq!(flow_seed(7, 3), flow_seed(7, 3));
    }
}
