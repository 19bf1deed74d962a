//! The link-level timing shared by the switch and the HCA's port: a transmitter's serialiser, a receiver's
//! block-arrival model, and a fixed-latency wire.
//!
//! Both ends apply the rule of [`super::rate`] to the same start tick, so the blocks a receiver counts in each
//! cycle are exactly those the transmitter sent `latency` cycles before.

use std::collections::VecDeque;

use crate::blocks::credit_rx::CreditRx;

use super::packet::FC_PACKET_BYTES;
use super::rate::LinkRate;

/// The receiver's view of one packet arriving: which of its 64-byte blocks are in by which cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arrival {
    start: u64,
    bytes: u16,
    blocks: u16,
    done: u16,
    next_cycle: u64,
}

impl Arrival {
    /// A packet of `bytes` whose first byte starts `offset` ticks into cycle `head_cycle`.
    pub fn new(rate: LinkRate, head_cycle: u64, offset: u32, bytes: u16) -> Self {
        let start = rate.tick_of(head_cycle) + u64::from(offset);
        let mut a = Arrival {
            start,
            bytes,
            blocks: bytes.div_ceil(64),
            done: 0,
            next_cycle: 0,
        };
        a.next_cycle = a.block_cycle(rate, 1);
        a
    }

    /// The cycle the packet's last byte is in.
    pub fn tail_cycle(&self, rate: LinkRate) -> u64 {
        self.block_cycle(rate, self.blocks)
    }

    fn block_cycle(&self, rate: LinkRate, k: u16) -> u64 {
        let end = (u64::from(k) * 64).min(u64::from(self.bytes)).max(1);
        rate.cycle_of_byte_end(self.start, end)
    }

    /// Takes the blocks completed in cycles up to `t` that were not taken before.
    pub fn take_until(&mut self, rate: LinkRate, t: u64) -> u16 {
        if self.done >= self.blocks || self.next_cycle > t {
            return 0;
        }
        // In closed form (two divisions), not block by block: a receiver that slept through a packet
        // takes all its blocks at once.
        let done = self.blocks_by(rate, t);
        let n = done - self.done;
        self.done = done;
        self.next_cycle = self.block_cycle(rate, done + 1);
        n
    }

    /// Blocks whose last byte is in by the end of cycle `t`. Block `k` ends at byte `min(64 k, bytes)`, and
    /// byte `e` is in by cycle `t` when `(start + e den - 1) / num <= t`, that is `e <= ((t + 1) num -
    /// start) / den`.
    fn blocks_by(&self, rate: LinkRate, t: u64) -> u16 {
        let e = ((t + 1) * u64::from(rate.num)).saturating_sub(self.start) / u64::from(rate.den);
        if e >= u64::from(self.bytes) {
            self.blocks
        } else {
            (e / 64) as u16
        }
    }

    /// Blocks completed in cycles up to `t` that were not taken yet (what [`Arrival::take_until`] would take).
    pub fn pending_until(&self, rate: LinkRate, t: u64) -> u16 {
        let mut a = *self;
        a.take_until(rate, t)
    }

    /// The next cycle the receiver must look at this packet. A block changes nothing but `crx`'s ABR and
    /// free count when the FCCL cannot move and it cannot overflow ([`CreditRx::can_absorb`]): then, unless
    /// the receiver watches every block (`per_block`: PFC watermarks, a drain model, the eager reference),
    /// the next look is the tail and the blocks before it are counted at whatever step comes first
    /// ([`Arrival::absorb_before`]); otherwise it is the next block. Exact either way; only the number of
    /// steps differs. `None` when all blocks are in.
    pub fn wake(&self, rate: LinkRate, crx: &CreditRx, per_block: bool) -> Option<u64> {
        if !per_block && !self.is_done() && crx.can_absorb(self.remaining()) {
            Some(self.tail_cycle(rate))
        } else {
            self.next_cycle()
        }
    }

    /// Counts into `crx` the blocks of cycles before `t` not taken yet, as those cycles' steps would have
    /// ([`CreditRx::absorb`]): a receiver that slept through them (see [`Arrival::wake`]) does this before
    /// taking the blocks of cycle `t`.
    pub fn absorb_before(&mut self, rate: LinkRate, t: u64, crx: &mut CreditRx) {
        if t > 0 {
            let early = self.take_until(rate, t - 1);
            if early > 0 {
                crx.absorb(early);
            }
        }
    }

    /// Blocks not taken yet.
    pub fn remaining(&self) -> u16 {
        self.blocks.saturating_sub(self.done)
    }

    /// All blocks are in.
    pub fn is_done(&self) -> bool {
        self.done >= self.blocks
    }

    /// The cycle of the next block, if any is left.
    pub fn next_cycle(&self) -> Option<u64> {
        (!self.is_done()).then_some(self.next_cycle)
    }

    /// Total blocks of the packet.
    pub fn blocks(&self) -> u16 {
        self.blocks
    }
}

/// A transmitter's wire occupancy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Serializer {
    /// Tick at which the wire is free.
    pub free_tick: u64,
}

impl Serializer {
    /// A packet may start in cycle `t`: the wire frees before the cycle ends.
    pub fn can_start_packet(&self, rate: LinkRate, t: u64) -> bool {
        self.free_tick < rate.tick_of(t + 1)
    }

    /// A flow-control packet may start in cycle `t`: the wire was free when the cycle began, so no data byte
    /// before it is sent in cycle `t` (see [`super::packet::FcPacket`]).
    pub fn can_start_fc(&self, rate: LinkRate, t: u64) -> bool {
        self.free_tick <= rate.tick_of(t)
    }

    /// Starts a packet of `bytes` in cycle `t` (which [`Self::can_start_packet`] allowed): returns its
    /// sub-cycle offset and the cycle of its last byte.
    pub fn start_packet(&mut self, rate: LinkRate, t: u64, bytes: u16) -> (u32, u64) {
        let t0 = self.free_tick.max(rate.tick_of(t));
        self.free_tick = t0 + u64::from(bytes) * rate.ticks_per_byte();
        (
            (t0 - rate.tick_of(t)) as u32,
            rate.cycle_of(self.free_tick - 1),
        )
    }

    /// Starts a flow-control packet at the beginning of cycle `t`.
    pub fn start_fc(&mut self, rate: LinkRate, t: u64) {
        self.start_ctl(rate, t, FC_PACKET_BYTES);
    }

    /// Starts a control frame of `bytes` (flow-control packet, pause frame) at the beginning of cycle `t`.
    pub fn start_ctl(&mut self, rate: LinkRate, t: u64, bytes: u64) {
        self.free_tick = rate.tick_of(t) + bytes * rate.ticks_per_byte();
    }

    /// First cycle at or after `t` in which a packet may start.
    pub fn packet_ready_cycle(&self, rate: LinkRate, t: u64) -> u64 {
        rate.cycle_of(self.free_tick).max(t)
    }

    /// First cycle at or after `t` in which a flow-control packet may start.
    pub fn fc_ready_cycle(&self, rate: LinkRate, t: u64) -> u64 {
        self.free_tick.div_ceil(rate.ticks_per_cycle()).max(t)
    }
}

/// A wire of fixed latency: what goes in at cycle `t` comes out at `t + latency`. Preallocated for a few
/// items ([`WIRE_PREALLOC_ITEMS`], fewer on a link too short to hold them), and grown (doubled) only if more
/// are ever in flight, so it does not allocate per cycle and its memory follows what it holds (bounded by
/// the receiver's credits or pause headroom), not its latency. Small on purpose: a wire that is not empty
/// when its last item is taken walks its ring buffer, and with room for its latency (2 x latency + 4 items,
/// 8 KB on a 100 ns link) each push went to a line not touched for a whole revolution, or never: over the
/// 81,648 wires of the 11,664-node fat tree those rings were 650 MB, and under callgrind's cache model
/// the tree's first 5 simulated us had 1.5 M last-level write misses in wire pushes for 1.3 M pushes.
///
/// The oldest item in flight sits in the wire itself, the others in the ring: a wire mostly holds one item
/// or none (a packet outlasts the latency, a flow-control packet comes every few hundred cycles), so its
/// push and its pop touch the wire's own record and not a second, separately allocated line.
#[derive(Debug, Clone)]
pub struct Wire<T> {
    latency: u64,
    /// The oldest item in flight; `None` only when nothing is (then `rest` is empty).
    first: Option<(u64, T)>,
    /// The items after `first`, oldest first.
    rest: VecDeque<(u64, T)>,
}

/// Most items a wire preallocates room for (it grows beyond if ever needed).
pub const WIRE_PREALLOC_ITEMS: usize = 8;

impl<T: Copy> Wire<T> {
    /// A wire of `latency` cycles (at least 1).
    pub fn new(latency: u64) -> Self {
        let latency = latency.max(1);
        let items = usize::try_from(latency)
            .unwrap_or(usize::MAX)
            .saturating_mul(2)
            .saturating_add(4)
            .min(WIRE_PREALLOC_ITEMS);
        Wire {
            latency,
            first: None,
            rest: VecDeque::with_capacity(items - 1),
        }
    }

    /// The latency in cycles.
    pub fn latency(&self) -> u64 {
        self.latency
    }

    /// Puts `v` on the wire at cycle `now`.
    pub fn push(&mut self, now: u64, v: T) {
        let item = (now + self.latency, v);
        if self.first.is_none() {
            self.first = Some(item);
        } else {
            self.rest.push_back(item);
        }
    }

    /// Takes the next item due at or before `now`.
    pub fn pop_due(&mut self, now: u64) -> Option<T> {
        match self.first {
            Some((at, v)) if at <= now => {
                self.take_first();
                Some(v)
            }
            _ => None,
        }
    }

    /// Drops the oldest item: the next one moves up from the ring.
    fn take_first(&mut self) {
        self.first = self.rest.pop_front();
        if self.rest.is_empty() {
            // Back to the buffer's start (`clear` resets it): a wire that seldom holds more than one item
            // keeps using the same cache lines instead of walking its whole preallocated ring.
            self.rest.clear();
        }
    }

    /// Cycle of the next item, if any.
    pub fn next_due(&self) -> Option<u64> {
        self.first.map(|(at, _)| at)
    }

    /// The items in flight with their due cycles, oldest first.
    pub fn items(&self) -> impl Iterator<Item = (u64, T)> + '_ {
        self.first.iter().chain(self.rest.iter()).copied()
    }

    /// Removes the first item in flight that `pred` accepts (a fault a test injects: a link that loses it).
    pub fn remove_first(&mut self, pred: impl Fn(&T) -> bool) -> Option<T> {
        let (_, v) = self.first?;
        if pred(&v) {
            self.take_first();
            return Some(v);
        }
        let i = self.rest.iter().position(|(_, v)| pred(v))?;
        self.rest.remove(i).map(|(_, v)| v)
    }

    /// Changes the first item in flight that `f` changes (returns true for): a fault a test injects, a
    /// link that corrupts it. Whether any was changed.
    pub fn modify_first(&mut self, mut f: impl FnMut(&mut T) -> bool) -> bool {
        self.first
            .iter_mut()
            .chain(self.rest.iter_mut())
            .any(|(_, v)| f(v))
    }

    /// Drops everything in flight.
    pub fn clear(&mut self) {
        self.first = None;
        self.rest.clear();
    }

    /// Nothing in flight.
    pub fn is_empty(&self) -> bool {
        self.first.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The block-by-block count the closed form replaced.
    fn take_until_stepwise(a: &mut Arrival, rate: LinkRate, t: u64) -> u16 {
        let mut n = 0;
        while a.done < a.blocks && a.next_cycle <= t {
            a.done += 1;
            n += 1;
            a.next_cycle = a.block_cycle(rate, a.done + 1);
        }
        n
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        #[test]
        fn take_until_equals_block_by_block(
            num in 1u32..200, den in 1u32..200, head in 0u64..1000, off in 0u32..200,
            bytes in 0u16..4200, steps in proptest::collection::vec(0u64..300, 1..12),
        ) {
            // At most 64 bytes per cycle (`LinkRate::new` refuses more).
            proptest::prop_assume!(num <= 64 * den);
            let r = LinkRate::new(num, den).unwrap();
            let off = off % r.num;
            let mut a = Arrival::new(r, head, off, bytes);
            let mut b = a;
            let mut t = head;
            for s in steps {
                t += s;
                proptest::prop_assert_eq!(a.take_until(r, t), take_until_stepwise(&mut b, r, t));
                proptest::prop_assert_eq!(a, b);
            }
        }
    }

    #[test]
    fn receiver_sees_blocks_in_the_transmitters_cycles() {
        // 5/2 bytes per cycle; a 150-byte packet starting 3 ticks into cycle 10: blocks end at bytes 64, 128,
        // 150, i.e. ticks 50 + 3 + 128 = 181 (cycle 36), 309 (61), 353 (70).
        let r = LinkRate::new(5, 2).unwrap();
        let mut s = Serializer {
            free_tick: r.tick_of(10) + 3,
        };
        assert!(s.can_start_packet(r, 10) && !s.can_start_fc(r, 10));
        let (off, end) = s.start_packet(r, 10, 150);
        assert_eq!((off, end), (3, 70));
        let mut a = Arrival::new(r, 10 + 7, off, 150);
        assert_eq!(a.take_until(r, 36 + 7), 1);
        assert_eq!(a.take_until(r, 60 + 7), 0);
        assert_eq!(a.next_cycle(), Some(61 + 7));
        assert_eq!(a.take_until(r, 1000), 2);
        assert!(a.is_done() && a.next_cycle().is_none());
        assert_eq!(s.packet_ready_cycle(r, 0), 70);
        assert_eq!(s.fc_ready_cycle(r, 0), 71);
        assert!(s.can_start_packet(r, 70) && !s.can_start_fc(r, 70) && s.can_start_fc(r, 71));
    }

    #[test]
    fn wire_delays() {
        let mut w = Wire::new(3);
        w.push(0, 'a');
        w.push(1, 'b');
        assert_eq!(w.pop_due(2), None);
        assert_eq!(w.pop_due(3), Some('a'));
        assert_eq!(w.next_due(), Some(4));
        assert_eq!(w.pop_due(9), Some('b'));
        assert!(w.is_empty());
    }

    /// The oldest item kept apart from the ring changes nothing a caller sees: first in, first out past the
    /// preallocated room, the faults' removal and change of the first matching item, wherever it sits.
    #[test]
    fn wire_keeps_order_across_its_first_item_and_ring() {
        let mut w = Wire::new(2);
        for (t, c) in (0..12).zip('a'..) {
            w.push(t, c);
        }
        let all: String = w.items().map(|(_, c)| c).collect();
        assert_eq!(all, "abcdefghijkl");
        assert_eq!(w.items().next(), Some((2, 'a')));
        assert_eq!(w.remove_first(|&c| c == 'a'), Some('a'));
        assert_eq!(w.remove_first(|&c| c == 'e'), Some('e'));
        assert_eq!(w.remove_first(|&c| c == 'z'), None);
        assert!(w.modify_first(|c| {
            let hit = *c == 'c';
            if hit {
                *c = 'C';
            }
            hit
        }));
        assert_eq!(w.next_due(), Some(3));
        let mut got = String::new();
        for t in 0..20 {
            while let Some(c) = w.pop_due(t) {
                got.push(c);
            }
        }
        assert_eq!(got, "bCdfghijkl");
        assert!(w.is_empty() && w.next_due().is_none());
        w.push(30, 'x');
        w.clear();
        assert!(w.is_empty() && w.items().next().is_none());
        assert_eq!(w.remove_first(|_| true), None);
    }
}
