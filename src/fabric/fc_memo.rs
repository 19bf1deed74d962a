//! Flow-control packets that change nothing at their receiver, found at the wire so that the event-driven
//! stepping need not wake the receiver for them.
//!
//! A port sends a flow-control packet per VL every `fc_interval` cycles whether or not anything changed;
//! in a lightly loaded fabric most of them repeat the last one (they outnumber the packet heads several
//! times over), and each would wake its receiver for a step that does nothing but take it in.
//!
//! # Why leaving one off is exact
//! A flow-control packet for VL `v` carrying FCTBS `b` and FCCL `c` does two things at its receiver:
//! `credit_rx` sets ABR to `b` (before adding the blocks arriving in that cycle) and `credit_tx` latches
//! `c` as its limit. Nothing else changes ABR or the limit: ABR otherwise only grows by blocks received,
//! the limit only changes by flow-control packets (a fabric never resets a block). Now let packet `k + 1` on
//! a wire carry the same `(b, c)` for `v` as packet `k` on that wire, with no packet head on the wire
//! between them. After packet `k` the limit is `c`, and no other flow-control packet for `v` came in
//! between, so it is still `c`. ABR was set to `b`, and every block received since belongs to a packet put
//! on the wire after packet `k` (a flow-control packet starts only after the previous packet's last byte,
//! so every earlier packet's blocks were in before it): there is none, so ABR is still `b`. Packet `k + 1`
//! therefore sets both to the values they have: its only effect is waking the receiver, which then finds
//! nothing to do. The receiver's other reactions to it (a look at its arbitration, a `cong_detect` clock)
//! see unchanged inputs, which the skipping rules already treat as exact.
//!
//! The memo is per wire and VL: the last flow-control packet put on the wire, forgotten when a packet head
//! follows it (whatever its VL: an HCA counts a packet of a VL it lacks on its last VL). A VL the receiver
//! lacks is never left off (a switch counts such a packet as an error). The wire's single sender puts its
//! items on in order, and only the receiving part's thread records them (`Part::deliver`), so relaxed
//! atomics suffice. [`crate::fabric::Fabric::step`] records every item too but leaves nothing off: it stays
//! the plain reference, and the memo stays right when the two are mixed.

use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

use super::{Ev, Rx};

/// Marks a memo entry as holding a packet (the FCTBS and FCCL take 24 bits); 0 is "nothing to compare".
const HELD: u32 = 1 << 31;

/// See the module documentation.
#[derive(Debug)]
pub(super) struct FcMemo {
    /// First wire index of each switch's ports (wire `sw_base[s] + p`); the HCAs' wires follow.
    sw_base: Vec<u32>,
    hca_base: u32,
    vls: usize,
    /// Per wire and VL: `HELD | fctbs << 12 | fccl` of the last flow-control packet, or 0.
    last: Vec<AtomicU32>,
}

impl FcMemo {
    /// A memo for switches with `ports[s]` ports each, `hcas` HCAs, every port with `vls` data VLs.
    pub(super) fn new(ports: impl Iterator<Item = usize>, hcas: usize, vls: u8) -> Self {
        let mut sw_base = Vec::new();
        let mut n = 0u32;
        for p in ports {
            sw_base.push(n);
            n += p as u32;
        }
        let vls = usize::from(vls.max(1));
        let wires = n as usize + hcas;
        FcMemo {
            sw_base,
            hca_base: n,
            vls,
            last: (0..wires * vls).map(|_| AtomicU32::new(0)).collect(),
        }
    }

    fn wire(&self, rx: Rx) -> usize {
        match rx {
            Rx::Switch(s, p) => (self.sw_base[s] as usize + p) * self.vls,
            Rx::Hca(h) => (self.hca_base as usize + h) * self.vls,
        }
    }

    /// Records `ev` going onto the wire into `rx`. Returns false when it is a flow-control packet that changes
    /// nothing at the receiver (see the module documentation), which the caller may leave off.
    #[inline]
    pub(super) fn record(&self, rx: Rx, ev: &Ev) -> bool {
        match ev {
            Ev::Fc(fc) => {
                let vl = usize::from(fc.vl);
                if vl >= self.vls {
                    return true;
                }
                let key = HELD | u32::from(fc.fctbs & 0xfff) << 12 | u32::from(fc.fccl & 0xfff);
                let slot = &self.last[self.wire(rx) + vl];
                if slot.load(Relaxed) == key {
                    return false;
                }
                slot.store(key, Relaxed);
                true
            }
            Ev::Pkt(_) => {
                let w = self.wire(rx);
                for slot in &self.last[w..w + self.vls] {
                    // Most packet heads follow another packet head: reading keeps the line shared.
                    if slot.load(Relaxed) != 0 {
                        slot.store(0, Relaxed);
                    }
                }
                true
            }
            Ev::Pause(_) => true,
        }
    }

    /// The last flow-control packet for `vl` recorded on the wire into `rx`, unless a packet head followed it.
    pub(super) fn last_fc(&self, rx: Rx, vl: u8) -> Option<switch_asic::FcPacket> {
        let k = self
            .last
            .get(self.wire(rx) + usize::from(vl))?
            .load(Relaxed);
        (k & HELD != 0).then_some(switch_asic::FcPacket {
            vl,
            fctbs: (k >> 12 & 0xfff) as u16,
            fccl: (k & 0xfff) as u16,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use switch_asic::{FcPacket, PacketDesc, PacketStart};

    fn fc(vl: u8, fctbs: u16, fccl: u16) -> Ev {
        Ev::Fc(FcPacket { vl, fctbs, fccl })
    }

    fn pkt() -> Ev {
        let desc = PacketDesc::local(1, 2, 0, rtl_model::wire::bth::Opcode::RcSendOnly, 256);
        Ev::Pkt(PacketStart { desc, offset: 0 })
    }

    #[test]
    fn a_repeat_is_left_off_until_a_packet_or_a_change_comes_between() {
        // Two switches of 3 and 2 ports, two HCAs, two VLs.
        let m = FcMemo::new([3, 2].into_iter(), 2, 2);
        let a = Rx::Switch(1, 1);
        assert!(m.record(a, &fc(0, 10, 20)), "the first is kept");
        assert!(!m.record(a, &fc(0, 10, 20)), "a repeat changes nothing");
        assert!(m.record(a, &fc(1, 10, 20)), "another VL has its own memo");
        assert!(m.record(a, &fc(0, 10, 21)), "a new FCCL is kept");
        assert!(!m.record(a, &fc(0, 10, 21)));
        assert!(m.record(a, &fc(0, 11, 21)), "a new FCTBS is kept");
        assert!(m.record(a, &pkt()));
        assert!(
            m.record(a, &fc(0, 11, 21)),
            "after a packet head the repeat is kept"
        );
        assert!(m.record(a, &fc(1, 10, 20)), "on every VL");
        // Other wires (the neighbouring port, an HCA) are independent.
        assert!(m.record(Rx::Switch(1, 0), &fc(0, 11, 21)));
        assert!(m.record(Rx::Hca(0), &fc(0, 11, 21)));
        assert!(!m.record(Rx::Hca(0), &fc(0, 11, 21)));
        assert!(m.record(Rx::Hca(1), &fc(0, 11, 21)));
        // A VL the receivers lack is never left off.
        assert!(m.record(a, &fc(2, 1, 1)) && m.record(a, &fc(2, 1, 1)));
    }
}
