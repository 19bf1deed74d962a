//! The switch's registered ingress stage: what a caller hands in during a cycle (a packet head, a
//! flow-control packet, a pause frame) is the switch's input in the next cycle, as if each link were a cycle
//! longer. Hardware registers a port's receive side before routing it: `ib_switch` computes, in the hand-in
//! cycle, what depends on the hand-in alone (the route, the drop checks, the cut-through decision, the
//! first block's arithmetic) and registers it, so that neither that work nor the enqueue, credit and
//! congestion updates it feeds have to fit in one cycle.

use super::*;

/// The hand-ins of the current cycle, waiting for the next.
#[derive(Debug, Clone, Default)]
pub(super) struct NextHandIns {
    pkt: Vec<Option<PacketStart>>,
    fc: Vec<Option<FcPacket>>,
    pause: Vec<Option<rtl_model::wire::pfc::Repr>>,
    /// Ports with something waiting, as bits.
    pub(super) mask: u64,
    pkt_mask: u64,
    fc_mask: u64,
    pause_mask: u64,
}

impl NextHandIns {
    pub(super) fn new(n: usize) -> Self {
        NextHandIns {
            pkt: vec![None; n],
            fc: vec![None; n],
            pause: vec![None; n],
            ..Default::default()
        }
    }

    /// Packet heads waiting.
    pub(super) fn pkts(&self) -> usize {
        self.pkt_mask.count_ones() as usize
    }

    pub(super) fn has_pkt(&self, p: usize) -> bool {
        self.pkt_mask & bit(p) != 0
    }

    pub(super) fn has_fc(&self, p: usize) -> bool {
        self.fc_mask & bit(p) != 0
    }

    pub(super) fn has_pause(&self, p: usize) -> bool {
        self.pause_mask & bit(p) != 0
    }

    pub(super) fn put_pkt(&mut self, p: usize, s: PacketStart) {
        self.pkt[p] = Some(s);
        self.pkt_mask |= bit(p);
        self.mask |= bit(p);
    }

    pub(super) fn put_fc(&mut self, p: usize, f: FcPacket) {
        self.fc[p] = Some(f);
        self.fc_mask |= bit(p);
        self.mask |= bit(p);
    }

    pub(super) fn put_pause(&mut self, p: usize, f: rtl_model::wire::pfc::Repr) {
        self.pause[p] = Some(f);
        self.pause_mask |= bit(p);
        self.mask |= bit(p);
    }
}

impl Switch {
    /// The end of a cycle: its hand-ins become the next cycle's inputs (those of this cycle are consumed).
    pub(super) fn register_hand_ins(&mut self) {
        debug_assert_eq!(self.handed_in(), 0);
        let nx = &mut self.next_in;
        // Each kind from its own mask: a slot is `Some` exactly when its bit is set, and the registers were
        // cleared by the step that consumed them, so a port's other slots (cold lines of their own vectors)
        // are not read.
        for p in ports(nx.pkt_mask) {
            debug_assert!(self.ports[p].rx_pkt.is_none());
            self.ports[p].rx_pkt = nx.pkt[p].take();
        }
        for p in ports(nx.fc_mask) {
            debug_assert!(self.ports[p].rx_fc.is_none());
            self.ports[p].rx_fc = nx.fc[p].take();
        }
        for p in ports(nx.pause_mask) {
            debug_assert!(self.ports[p].rx_pause.is_none());
            self.ports[p].rx_pause = nx.pause[p].take();
        }
        (self.rx_pkt_mask, self.rx_fc_mask, self.rx_pause_mask) =
            (nx.pkt_mask, nx.fc_mask, nx.pause_mask);
        (nx.mask, nx.pkt_mask, nx.fc_mask, nx.pause_mask) = (0, 0, 0, 0);
    }
}
