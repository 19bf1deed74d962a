//! The wake-up calendar of event-driven stepping: which blocks are due in which cycle, found in O(due blocks)
//! per cycle instead of a scan of every block's wake-up time.
//!
//! A timing wheel of [`SLOTS`] one-cycle slots covers the cycles `cur..cur + SLOTS`; wake-ups further out wait
//! in a heap and move into the wheel as it turns. Entries are never removed when a block's wake-up changes:
//! the owner keeps the true wake-up times and ignores an entry whose time no longer matches (a block is due
//! in cycle `t` exactly when its wake-up time is `t`).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Slots of the wheel (a power of two): more than the cycles a loaded block usually sleeps, so the heap is
/// for flow starts and long timers only.
const SLOTS: usize = 4096;
const MASK: u64 = SLOTS as u64 - 1;

/// See the module documentation. Call [`Wheel::reset`] before use.
#[derive(Debug, Clone, Default)]
pub(super) struct Wheel {
    slots: Vec<Vec<u32>>,
    far: BinaryHeap<Reverse<(u64, u32)>>,
    /// No entry is for a cycle before this one.
    cur: u64,
    /// Entries in the slots.
    count: usize,
}

impl Wheel {
    /// Empties the wheel and sets its first cycle (keeps the allocations; the first reset makes the slots).
    pub(super) fn reset(&mut self, now: u64) {
        self.slots.resize_with(SLOTS, Vec::new);
        for s in &mut self.slots {
            s.clear();
        }
        self.far.clear();
        self.cur = now;
        self.count = 0;
    }

    /// Block `id` wakes in cycle `at` (`u64::MAX`: never; never before the current cycle).
    pub(super) fn schedule(&mut self, id: u32, at: u64) {
        if at == u64::MAX {
            return;
        }
        debug_assert!(at >= self.cur, "wake-up {at} before cycle {}", self.cur);
        if at <= self.cur + MASK {
            self.slots[(at & MASK) as usize].push(id);
            self.count += 1;
        } else {
            self.far.push(Reverse((at, id)));
        }
    }

    /// The first cycle with an entry, if it is before `end`; the wheel turns to it.
    pub(super) fn next_before(&mut self, end: u64) -> Option<u64> {
        loop {
            while let Some(&Reverse((at, id))) = self.far.peek() {
                if at > self.cur + MASK {
                    break;
                }
                self.far.pop();
                self.slots[(at & MASK) as usize].push(id);
                self.count += 1;
            }
            if self.count == 0 {
                let &Reverse((at, _)) = self.far.peek()?;
                if at >= end {
                    return None;
                }
                self.cur = at;
                continue;
            }
            // Every entry is within SLOTS cycles: this finds one.
            while self.slots[(self.cur & MASK) as usize].is_empty() {
                if self.cur >= end {
                    return None;
                }
                self.cur += 1;
            }
            return (self.cur < end).then_some(self.cur);
        }
    }

    /// The first cycle with an entry (stale entries included, so a lower bound of the next wake-up), without
    /// turning the wheel. Costs a scan of the slots up to it.
    pub(super) fn next_entry(&self) -> Option<u64> {
        let far = self.far.peek().map(|&Reverse((at, _))| at);
        if self.count == 0 {
            return far;
        }
        let near =
            (self.cur..=self.cur + MASK).find(|&c| !self.slots[(c & MASK) as usize].is_empty());
        match (near, far) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Moves the entries of the current cycle's slot into `out` (cleared first).
    pub(super) fn take_current(&mut self, out: &mut Vec<u32>) {
        out.clear();
        let s = &mut self.slots[(self.cur & MASK) as usize];
        self.count -= s.len();
        std::mem::swap(s, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_come_out_in_cycle_order_near_and_far() {
        let mut w = Wheel::default();
        w.reset(10);
        assert_eq!(w.slots.len(), SLOTS);
        w.schedule(1, 10 + 5000);
        w.schedule(2, 12);
        w.schedule(3, 12);
        w.schedule(4, 10 + 4095);
        w.schedule(5, u64::MAX);
        let mut got = Vec::new();
        let mut buf = Vec::new();
        while let Some(t) = w.next_before(u64::MAX) {
            w.take_current(&mut buf);
            for &id in &buf {
                got.push((t, id));
            }
        }
        assert_eq!(got, vec![(12, 2), (12, 3), (4105, 4), (5010, 1)]);
    }

    #[test]
    fn next_entry_is_the_earliest_without_turning() {
        let mut w = Wheel::default();
        w.reset(10);
        assert_eq!(w.next_entry(), None);
        w.schedule(1, 10 + SLOTS as u64 + 5);
        assert_eq!(w.next_entry(), Some(10 + SLOTS as u64 + 5));
        w.schedule(2, 300);
        w.schedule(3, 40);
        assert_eq!(w.next_entry(), Some(40));
        assert_eq!(
            w.next_before(u64::MAX),
            Some(40),
            "the peek did not turn the wheel"
        );
        let mut out = Vec::new();
        w.take_current(&mut out);
        assert_eq!(w.next_entry(), Some(300));
    }

    #[test]
    fn stops_before_end_and_resumes() {
        let mut w = Wheel::default();
        w.reset(0);
        w.schedule(7, 100);
        w.schedule(8, 9000);
        assert_eq!(w.next_before(100), None);
        assert_eq!(w.next_before(101), Some(100));
        let mut buf = Vec::new();
        w.take_current(&mut buf);
        assert_eq!(buf, vec![7]);
        assert_eq!(w.next_before(9000), None);
        // A wake-up scheduled meanwhile for an earlier cycle than the far one comes first.
        w.schedule(9, 8000);
        assert_eq!(w.next_before(u64::MAX), Some(8000));
        w.take_current(&mut buf);
        assert_eq!(w.next_before(u64::MAX), Some(9000));
    }
}
