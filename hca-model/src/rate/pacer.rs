//! Turns a rate in bit/s into packet start times: a packet of `L` bytes started at `s` lets the next one
//! start at `s + L * 8 * f_Hz / r` cycles (start-to-start spacing, the way the HPCC ns-3 model's
//! `UpdateNextAvail` and hardware rate limiters space packets).
//!
//! The division's remainder is carried to the next packet while the rate stays the same and packets follow
//! back to back at their earliest times, so over a run the starts are never earlier than the exact
//! `total bytes * 8 * f / r` (rounding never lets the flow run faster than `r`). A rate change or a late
//! start (the flow was idle or blocked) drops the remainder: idle time is never banked into a burst.

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
        if rate != self.rate_q || start != self.next_q {
            self.frac_q = 0;
            self.rate_q = rate;
        }
        let num = u128::from(bytes) * 8 * u128::from(self.clock.hz()) + u128::from(self.frac_q);
        let r = u128::from(rate);
        self.next_q = start.saturating_add((num / r) as u64);
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
        assert_eq!(p.next(), 102);
        // A rate change too.
        p.sent(102, 1000, 8_000_000_000);
        assert_eq!(p.next(), 1102);
    }
}
