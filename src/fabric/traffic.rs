//! Message arrivals of a fabric flow and message completion latency.
//!
//! A flow's source holds the arrival cycles of its messages in order ([`MsgSource`]): first those fully
//! sent but not yet matched with their completion, then those still (partly) to send. A saturating flow
//! "receives" a message when it takes the message's first packet, so its latency is the transfer time; a
//! patterned flow gets its arrival cycles from hca-model's [`Arrivals`] and queues up to
//! `max_queued_messages` unsent messages (more are refused and counted).
//!
//! The destination notes the cycle each message's last packet is fully in ([`Hca::done`]). Messages of a
//! flow complete in the order they arrive (one path, lossless, in order), so the `k`-th completion belongs to
//! the `k`-th arrival: [`Fabric::collect_messages`] pairs them (once per sample interval, not per cycle)
//! into latencies. A user of [`Fabric`] other than `ibcycle run` must call it too, or these records grow
//! with every message.

use std::collections::VecDeque;

use hca_model::traffic::pattern::{Arrivals, Pattern};
use hca_model::traffic::rng::SplitMix64;
use hca_model::units::CoreClock;
use serde::Serialize;

use super::{Fabric, Hca};
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

/// The messages of one flow at its source. See the module documentation.
#[derive(Debug, Clone)]
pub struct MsgSource {
    /// `None`: saturating.
    arrivals: Option<Arrivals>,
    /// The next arrival not yet queued.
    next: Option<u64>,
    /// Arrival cycles: `sent` fully sent and unmatched ones, then the unsent ones.
    queue: VecDeque<u64>,
    sent: usize,
    limit: usize,
    /// Arrivals refused on a full queue.
    pub refused: u64,
}

impl MsgSource {
    /// Messages of `msg_bytes` arriving by `p` from cycle `start` until before `stop`, at most `limit` queued.
    pub fn new(
        p: FlowPattern,
        clock_mhz: u32,
        msg_bytes: u64,
        start: u64,
        stop: u64,
        seed: u64,
        limit: u32,
    ) -> Result<Self, String> {
        let arrivals = match p {
            FlowPattern::Saturating => None,
            _ => {
                let clock = CoreClock::from_khz(clock_mhz.saturating_mul(1000))
                    .map_err(|e| e.to_string())?;
                Some(
                    Arrivals::new(pattern(p), clock, msg_bytes, start, stop, seed)
                        .map_err(|e| e.to_string())?,
                )
            }
        };
        let mut s = MsgSource {
            arrivals,
            next: None,
            // Room for the queue and the messages in flight, so that the steady state rarely allocates; a
            // saturating flow holds only the messages in flight (a large fabric has many such flows).
            queue: VecDeque::with_capacity(if matches!(p, FlowPattern::Saturating) {
                16
            } else {
                (limit as usize).min(4096) * 2
            }),
            sent: 0,
            limit: limit as usize,
            refused: 0,
        };
        s.next = s.arrivals.as_mut().and_then(|a| a.next_arrival());
        Ok(s)
    }

    /// Saturating: a message is always there.
    pub fn saturating(&self) -> bool {
        self.arrivals.is_none()
    }

    /// The cycle the next message arrives when none is waiting (or being sent) at `now`; `None` when one is,
    /// or the source is saturating. Arrivals are queued only when [`MsgSource::has_work`] asks, and whether
    /// one is refused depends only on the queue, which changes only when packets are taken: a flow that
    /// sleeps until this cycle queues and refuses exactly what asking every cycle would.
    pub fn idle_until(&self, now: u64) -> Option<u64> {
        if self.arrivals.is_none() || self.queue.len() > self.sent {
            return None;
        }
        match self.next {
            Some(t) if t <= now => None,
            next => Some(next.unwrap_or(u64::MAX)),
        }
    }

    /// Queues the arrivals due by `now`; whether a message is waiting to be sent (or is being sent).
    pub fn has_work(&mut self, now: u64) -> bool {
        if let Some(a) = self.arrivals.as_mut() {
            while let Some(t) = self.next.filter(|&t| t <= now) {
                if self.queue.len() - self.sent < self.limit {
                    self.queue.push_back(t);
                } else {
                    self.refused += 1;
                }
                self.next = a.next_arrival();
            }
            self.queue.len() > self.sent
        } else {
            true
        }
    }

    /// The first packet of a message was taken at `now` (a saturating flow's message arrives then).
    pub fn first_taken(&mut self, now: u64) {
        if self.saturating() {
            self.queue.push_back(now);
        }
    }

    /// The last packet of a message was taken.
    pub fn last_taken(&mut self) {
        self.sent += 1;
    }

    /// The packet taken last is given back: `first`/`last` say what it was.
    pub fn untake(&mut self, first: bool, last: bool) {
        if last {
            self.sent -= 1;
        }
        if first && self.saturating() {
            self.queue.pop_back();
        }
    }

    /// The arrival cycle of the oldest fully sent, unmatched message (removed).
    pub fn pop_sent(&mut self) -> Option<u64> {
        if self.sent == 0 {
            return None;
        }
        self.sent -= 1;
        self.queue.pop_front()
    }
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

impl Hca {
    /// A message of flow `flow` completed here at `now`.
    pub(super) fn message_done(&mut self, flow: usize, now: u64) {
        if let Some(d) = self.done.get_mut(flow) {
            d.push_back(now);
        }
    }
}

impl Fabric {
    /// Pairs every completed message with its arrival and appends the latencies (cycles) to `out[flow]`.
    pub fn collect_messages(&mut self, sc: &Scenario, out: &mut [Vec<u64>]) {
        for (i, f) in sc.flows.iter().enumerate() {
            while let Some(done) = self.hcas[f.dst].done[i].pop_front() {
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
    fn saturating_messages_arrive_when_taken_and_untake_restores() {
        let mut s = MsgSource::new(FlowPattern::Saturating, 1000, 4096, 0, 100, 1, 4).unwrap();
        assert!(s.has_work(0));
        s.first_taken(5);
        s.untake(true, false);
        assert_eq!(s.pop_sent(), None);
        s.first_taken(7);
        s.last_taken();
        s.first_taken(9);
        assert_eq!(s.pop_sent(), Some(7));
        assert_eq!(s.pop_sent(), None, "the second message is not fully sent");
    }

    /// 1000-byte messages at 8 Gbit/s on 1 GHz: one every 1000 cycles from 0; a queue of 2.
    #[test]
    fn constant_arrivals_queue_up_to_the_limit() {
        let p = FlowPattern::Constant { rate_mbps: 8000 };
        let mut s = MsgSource::new(p, 1000, 1000, 0, u64::MAX, 1, 2).unwrap();
        assert!(s.has_work(0));
        assert!(
            s.has_work(3500),
            "arrivals at 0, 1000 queued; 2000, 3000 refused"
        );
        assert_eq!(s.refused, 2);
        s.last_taken();
        s.last_taken();
        assert!(!s.has_work(3999));
        assert!(s.has_work(4000));
        assert_eq!((s.pop_sent(), s.pop_sent()), (Some(0), Some(1000)));
    }

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
