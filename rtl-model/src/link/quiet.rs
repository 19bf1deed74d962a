//! Quiet fast-forward: a port with no packet traffic only sends its periodic flow-control packets, and the
//! cycles at which it sends them follow from its `credit_rx` timer in closed form. `fc_plan` computes a
//! port's transmit state (serialiser, pending flow-control packet) after `n` such cycles without stepping
//! them; the switch's and the HCA port's `quiet_jump` apply it.
//!
//! The flow-control packets themselves are not produced: a caller (the fabric) may skip them only when they
//! change nothing at the receiver, i.e. when every one carries the FCTBS the receiver's `credit_rx` already
//! holds as ABR and the FCCL its `credit_tx` already holds ([`FcSync`] gives both ends' values). In a
//! lossless link with no traffic, that is the steady state: a flow-control packet then only re-latches
//! equal values, which is what an idle step does.

use crate::blocks::credit_rx::CreditRx;
use crate::blocks::credit_tx::{CreditTx, FC_MOD};

use super::packet::FC_PACKET_BYTES;
use super::rate::LinkRate;
use super::serial::Serializer;

/// The flow-control state of one port and VL, for checking that a link is in the steady state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FcSync {
    /// FCTBS this port sends (blocks it has sent, `credit_tx`).
    pub fctbs: u16,
    /// FCCL this port advertises now (`credit_rx`: ABR plus free space, capped).
    pub fccl: u16,
    /// FCCL of a flow-control packet waiting to be sent, if any.
    pub pending_fccl: Option<u16>,
    /// FCCL last received from the peer (`credit_tx`'s limit).
    pub peer_fccl: u16,
    /// ABR: blocks received (`credit_rx`).
    pub abr: u16,
}

impl FcSync {
    /// The state of a port-VL from its blocks and pending packet.
    pub fn of(crx: &CreditRx, ctx: &CreditTx, pending_fccl: Option<u16>) -> Self {
        let cap = crx.config().fccl_cap;
        FcSync {
            fctbs: ctx.fctbs_q,
            fccl: crx.abr_q.wrapping_add(crx.free_q.min(cap)) & (FC_MOD as u16 - 1),
            pending_fccl,
            peer_fccl: ctx.fccl_q,
            abr: crx.abr_q,
        }
    }

    /// Every flow-control packet this port sends while quiet changes nothing at `peer` (the far end's
    /// state for the same VL): its FCTBS equals the peer's ABR and its FCCL the peer's latched FCCL.
    pub fn steady_towards(&self, peer: &FcSync) -> bool {
        self.fctbs == peer.abr
            && self.fccl == peer.peer_fccl
            && self.pending_fccl.is_none_or(|f| f == self.fccl)
    }

    /// A flow-control packet with `fctbs` and `fccl` arriving at this port changes nothing.
    pub fn noop(&self, fctbs: u16, fccl: u16) -> bool {
        fctbs == self.abr && fccl == self.peer_fccl
    }
}

/// The last flow-control packet a port sent on a VL, forgotten when a packet head follows it: what a sender
/// that leaves off repeats (`Switch::set_fc_repeats_off`, `Endpoint::set_fc_repeats_off`) compares the next
/// one with.
///
/// # Why leaving a repeat off is exact
/// A flow-control packet for VL `v` carrying FCTBS `b` and FCCL `c` does two things at its receiver:
/// `credit_rx` sets ABR to `b` (before adding the blocks arriving in that cycle) and `credit_tx` latches `c`
/// as its limit. Nothing else changes ABR or the limit: ABR otherwise only grows by blocks received, the
/// limit only changes by flow-control packets (a fabric never resets a block). Let packet `k + 1` on a wire
/// carry the same `(b, c)` for `v` as packet `k`, with no packet head on the wire between them. After packet
/// `k` the limit is `c`, and no other flow-control packet for `v` came in between, so it is still `c`. ABR
/// was set to `b`, and every block received since belongs to a packet put on the wire after packet `k` (a
/// flow-control packet starts only after the previous packet's last byte, so every earlier packet's blocks
/// were in before it): there is none, so ABR is still `b`. Packet `k + 1` therefore sets both to the values
/// they have; only its wire time remains, which the sender still accounts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FcLast(u32);

impl FcLast {
    /// `1 << 31 | fctbs << 12 | fccl`: never 0, which is "none".
    fn word(fctbs: u16, fccl: u16) -> u32 {
        1 << 31 | u32::from(fctbs) << 12 | u32::from(fccl)
    }

    /// A packet is remembered (none after a packet head).
    pub fn is_some(self) -> bool {
        self.0 != 0
    }

    /// A packet carrying `fctbs` and `fccl` would repeat the last one.
    pub fn repeats(self, fctbs: u16, fccl: u16) -> bool {
        self.0 == Self::word(fctbs, fccl)
    }

    /// Remembers a packet sent; returns whether it repeated the last one.
    pub fn sent(&mut self, fctbs: u16, fccl: u16) -> bool {
        let repeat = self.repeats(fctbs, fccl);
        self.0 = Self::word(fctbs, fccl);
        repeat
    }

    /// A packet head went out: the next flow-control packet is news whatever it carries.
    pub fn forget(&mut self) {
        self.0 = 0;
    }

    /// After a quiet stretch planned by `plan` from serialiser `ser0`: the last packet sent in it is a
    /// fire's (FCCL `fire_fccl`: nothing moves it while quiet), or the one pending at the start (FCCL
    /// `pending_fccl`), or none (then the last one before is still the last).
    pub fn after_quiet(
        &mut self,
        plan: &FcPlan,
        ser0: Serializer,
        fctbs: u16,
        fire_fccl: u16,
        pending_fccl: u16,
    ) {
        if plan.sent_fire {
            self.sent(fctbs, fire_fccl);
        } else if plan.ser != ser0 {
            self.sent(fctbs, pending_fccl);
        }
    }
}

/// A port's transmit state after a quiet stretch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FcPlan {
    /// The serialiser after the last flow-control packet sent in the stretch.
    pub ser: Serializer,
    /// A flow-control packet is pending at the end (its timer fired in the stretch's last cycles).
    pub pending: bool,
    /// The timer fired at least once (the pending FCCL was refreshed).
    pub fired: bool,
    /// The cycle the pending packet goes out (meaningful when `pending`).
    pub send_at: u64,
    /// A packet of a timer fire in the stretch went out (not only one pending at the start).
    pub sent_fire: bool,
}

/// The transmit state after cycles `t0..end` of a quiet port of `rate` whose `credit_rx` fires first in
/// cycle `first_fire` and then every `interval` cycles, starting from serialiser `ser` and a pending
/// flow-control packet (`pending`). Within a cycle the transmit side goes before `credit_rx` (a packet
/// pending at the start of a cycle can go in it; one set in a cycle goes at the earliest in the next).
/// `None` when the stretch is not regular (a packet would still wait when the timer fires again); the
/// caller then steps normally.
pub fn fc_plan(
    rate: LinkRate,
    interval: u64,
    t0: u64,
    end: u64,
    ser: Serializer,
    pending: bool,
    first_fire: u64,
) -> Option<FcPlan> {
    let fc_ticks = FC_PACKET_BYTES * rate.ticks_per_byte();
    if interval == 0 || fc_ticks > interval * rate.ticks_per_cycle() {
        return None;
    }
    let mut ser = ser;
    let never = |ser, pending, fired, send_at, sent_fire| {
        Some(FcPlan {
            ser,
            pending,
            fired,
            send_at,
            sent_fire,
        })
    };
    if pending {
        let s0 = ser.fc_ready_cycle(rate, t0);
        if s0 >= end && first_fire >= end {
            return never(ser, true, false, s0, false);
        }
        if s0 > first_fire || s0 >= end {
            return None;
        }
        ser.start_fc(rate, s0);
    }
    if first_fire >= end {
        return never(ser, false, false, u64::MAX, false);
    }
    // Fires f_j = first_fire + (j - 1) * interval for j = 1..=l, all before `end`.
    let l = (end - 1 - first_fire) / interval + 1;
    let f_last = first_fire + (l - 1) * interval;
    let s1 = ser.fc_ready_cycle(rate, first_fire + 1);
    if l == 1 {
        if s1 < end {
            ser.start_fc(rate, s1);
            return never(ser, false, true, u64::MAX, true);
        }
        return never(ser, true, true, s1, false);
    }
    if s1 > first_fire + interval {
        return None;
    }
    ser.start_fc(rate, s1);
    // From the second fire on every packet goes in the cycle after its fire: the previous one took at most
    // `interval` cycles of wire (checked above) and left at or before the fire.
    if ser.fc_ready_cycle(rate, first_fire + interval + 1) != first_fire + interval + 1 {
        return None;
    }
    if f_last + 1 < end {
        ser.start_fc(rate, f_last + 1);
        return never(ser, false, true, u64::MAX, true);
    }
    if l >= 3 {
        ser.start_fc(rate, f_last - interval + 1);
    }
    let send_at = ser.fc_ready_cycle(rate, f_last + 1);
    never(ser, true, true, send_at, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reference: the same port stepped cycle by cycle.
    fn stepped(
        rate: LinkRate,
        interval: u64,
        t0: u64,
        end: u64,
        mut ser: Serializer,
        mut pending: bool,
        first_fire: u64,
    ) -> (Serializer, bool, bool) {
        let mut next_fire = first_fire;
        let mut fired = false;
        for t in t0..end {
            if pending && ser.can_start_fc(rate, t) {
                ser.start_fc(rate, t);
                pending = false;
            }
            if t == next_fire {
                pending = true;
                fired = true;
                next_fire += interval;
            }
        }
        (ser, pending, fired)
    }

    #[test]
    fn plan_equals_stepping() {
        for (num, den) in [(2u32, 1u32), (4, 1), (1, 1), (5, 4), (1, 3)] {
            let rate = LinkRate::new(num, den).unwrap();
            for interval in [3u64, 8, 17, 256] {
                for first in 100..100 + interval + 2 {
                    for end in [100, 101, 102, 110, 355, 356, 357, 1000, 1001] {
                        for pending in [false, true] {
                            for busy in [0u64, 5, 40] {
                                let ser = Serializer {
                                    free_tick: rate.tick_of(100) + busy,
                                };
                                let Some(p) =
                                    fc_plan(rate, interval, 100, end, ser, pending, first)
                                else {
                                    continue;
                                };
                                let (s, pe, f) =
                                    stepped(rate, interval, 100, end, ser, pending, first);
                                let what = format!(
                                    "rate {num}/{den} interval {interval} first {first} end {end} pending {pending} busy {busy}"
                                );
                                assert_eq!((p.ser, p.pending, p.fired), (s, pe, f), "{what}");
                                if p.pending {
                                    assert_eq!(p.send_at, s.fc_ready_cycle(rate, end), "{what}");
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn regular_stretches_are_planned() {
        let rate = LinkRate::new(4, 1).unwrap();
        let p = fc_plan(rate, 256, 0, 1 << 30, Serializer::default(), true, 7).unwrap();
        assert!(p.fired && !p.pending);
        // A packet longer than the interval cannot be planned.
        let slow = LinkRate::new(1, 4).unwrap();
        assert!(fc_plan(slow, 8, 0, 1000, Serializer::default(), false, 3).is_none());
    }
}
