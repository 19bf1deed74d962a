//! Turns a rate in bit/s into packet start times: a packet of `L` bytes started at `s` lets the next one
//! start at `s + L * 8 * f_Hz / r` cycles (start-to-start spacing, the way the HPCC ns-3 model's
//! `UpdateNextAvail` and hardware rate limiters space packets).
//!
//! Never faster than the rate: the division's remainder (the part of a cycle the last spacing was short of)
//! is carried to the next packet while the rate stays the same and packets follow at their earliest times;
//! when the rate changes with a remainder outstanding, the next spacing gets one extra cycle instead; a late
//! start (the flow was idle or blocked) has already repaid it. So the starts of any run of packets are at
//! least `sum(L_i * 8 * f / r_i)` apart minus less than one cycle, and idle time is never banked into a
//! burst.

use crate::units::{Bps, CoreClock, Cycle};

/// Start-time pacer of one flow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pacer {
    clock: CoreClock,
    /// Earliest start of the next packet.
    next_q: Cycle,
    /// Remainder of the last spacing, in units of `1 / rate_q` cycles.
    frac_q: u64,
    /// Rate the remainder refers to.
    rate_q: Bps,
}

impl Pacer {
    /// A pacer that lets the first packet go at cycle 0.
    pub fn new(clock: CoreClock) -> Self {
        Pacer {
            clock,
            next_q: 0,
            frac_q: 0,
            rate_q: 0,
        }
    }

    /// A packet of `bytes` bytes started at `start` while the limit was `rate` bit/s (nonzero).
    pub fn sent(&mut self, start: Cycle, bytes: u32, rate: Bps) {
        let rate = rate.max(1);
        let late = start > self.next_q;
        let mut extra = 0;
        if late {
            self.frac_q = 0;
        } else if rate != self.rate_q && self.frac_q != 0 {
            // The last spacing was short by frac / old rate < 1 cycle: repay it whole.
            extra = 1;
            self.frac_q = 0;
        }
        self.rate_q = rate;
        let num = u128::from(bytes) * 8 * u128::from(self.clock.hz()) + u128::from(self.frac_q);
        let r = u128::from(rate);
        self.next_q = start.saturating_add(extra + (num / r) as u64);
        self.frac_q = (num % r) as u64;
    }

    /// The earliest start of the next packet.
    pub fn next(&self) -> Cycle {
        self.next_q
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spacing_and_remainder() {
        // 1 GHz clock, 3 Gbit/s: 1 byte = 8/3 cycles. Back to back: 2, then 2+3 (8/3 + 8/3 = 16/3 = 5.33).
        let clk = CoreClock::from_khz(1_000_000).unwrap();
        let mut p = Pacer::new(clk);
        p.sent(0, 1, 3_000_000_000);
        assert_eq!(p.next(), 2);
        p.sent(2, 1, 3_000_000_000);
        assert_eq!(p.next(), 5);
        p.sent(5, 1, 3_000_000_000);
        assert_eq!(p.next(), 8, "three bytes = exactly 8 cycles");
        // A late start drops the remainder.
        p.sent(100, 1, 3_000_000_000);
        assert_eq!(p.next(), 102, "8/3 = 2 r 2/3");
        // A rate change with 2/3 cycle outstanding repays a whole cycle.
        p.sent(102, 1000, 8_000_000_000);
        assert_eq!(p.next(), 1103);
        // Without a remainder outstanding, no extra cycle.
        p.sent(1103, 1000, 4_000_000_000);
        assert_eq!(p.next(), 3103);
    }
}
