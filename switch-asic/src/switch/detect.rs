//! Congestion detection of a [`Switch`] (phase 3 of a cycle) and what callers observe.

use super::*;
use rtl_model::link::fc::FcSync;

impl Switch {
    pub(super) fn detect(&mut self, t: u64) {
        if self.eager {
            self.dirty_list.0.clear();
            for k in 0..self.lanes.len() {
                self.lanes[k].cong_dirty = true;
                self.dirty_list.0.push(k as u32);
            }
        }
        for j in 0..self.dirty_list.0.len() {
            let k = self.dirty_list.0[j] as usize;
            self.lanes[k].cong_dirty = false;
            let avail = self.credit_avail(k, t);
            let fill = &self.voq_fill[k * self.n..(k + 1) * self.n];
            let lane = &mut self.lanes[k];
            // The edges since the last clock had that clock's inputs (nothing marked the lane dirty): only
            // the stall window's countdown moved. The outputs after them are those seen in t + 1, until
            // this clock's are.
            lane.cong.skip_held((t + 1).saturating_sub(lane.cong_from));
            lane.cong_prev = lane.cong.outputs();
            // The XmitWait state of this cycle, as the egress phase left it (a change marked the lane
            // dirty). Fed only to a rule that reads it, so that a change does not clock the others.
            let stall = lane.stall_rule && lane.wait.is_on();
            // The row's sum and its nonzero fills (a VoQ holds fill exactly while it holds a packet,
            // which `voq_mask` marks) as kept, not reduced from the row again.
            lane.cong.step_with_sum(
                &cong_detect::In {
                    rst_ni: true,
                    voq_fill_i: fill,
                    credit_avail_i: avail,
                    stall_i: stall,
                },
                lane.fill_sum,
                lane.voq_mask.count_ones() as u8,
            );
            lane.cong_from = t + 2;
            let on = lane.cong.outputs().cong_o;
            lane.cong_time.set(on, t + 2);
        }
        self.dirty_list.0.clear();
    }

    /// The outputs of output port-VL `k`'s `cong_detect` as seen in cycle `t`. The detector's inputs are
    /// the VoQ fills and the credit at the start of a cycle (registered state, as a switch's detector
    /// samples its counters: `ib_switch` feeds it `fill_q` and `credit_tx`'s registers), so what it decides
    /// from a cycle's changes shows two cycles later. Stepped here on the values after a cycle (which are
    /// the next cycle's start) in the cycle they change, it is one cycle ahead: its outputs are seen a
    /// cycle late instead, which is exact, since only this function reads them. Each cycle after that is
    /// one more edge with the same inputs, which moves the stall window's countdown only: read ahead
    /// without clocking (`CongDetect::peek_held`). The stall input is the XmitWait state of the clocked
    /// cycle (the RTL registers its stall condition for the detector as the fills and credit are
    /// registered: `ib_switch`'s `cd_stall_q`).
    pub(super) fn cong_seen(&self, k: usize, t: u64) -> cong_detect::Out {
        let lane = &self.lanes[k];
        if t >= lane.cong_from {
            lane.cong.peek_held(t - lane.cong_from)
        } else {
            lane.cong_prev
        }
    }

    /// The signals of output/input `port`, VL `vl` as they stand before the next step (zeros for a VL the
    /// port lacks or a port that does not exist).
    pub fn observe(&self, port: usize, vl: usize) -> PortVlSignals {
        if port >= self.n || vl >= usize::from(self.ports[port].nvl) {
            return PortVlSignals::default();
        }
        let k = port * self.v + vl;
        let c = self.cong_seen(k, self.now);
        let rx = &self.lanes[k].crx;
        let (at, marked) = self.lanes[k].last_start;
        let started = self.now > 0 && at == self.now - 1;
        PortVlSignals {
            cong: c.cong_o,
            root: c.root_o,
            victim: c.victim_o,
            mark_state: c.mark_state_o,
            voq_fill: self.voq_fill[k * self.n..(k + 1) * self.n]
                .iter()
                .map(|&f| u32::from(f))
                .sum(),
            // Blocks in by now that a sleeping port has not counted yet (see `Arrival::wake`).
            in_buf_used: rx.config().buf_blocks - rx.free_q
                + self.ports[port]
                    .arriving
                    .filter(|a| usize::from(a.vl) == vl && self.now > 0)
                    .map_or(0, |a| {
                        a.a.pending_until(self.ports[port].rate, self.now - 1)
                    }),
            credits_avail: self.credit_avail(k, self.now),
            paused: self.lanes[k].paused_until > self.now,
            pause_sent: self.lanes[k].pfc_rx.paused,
            started,
            marked: started && marked,
        }
    }

    /// The marking state a packet starting now on output `port`'s `vl` is decided against: on a PFC port
    /// with RCM-1b detection ([`RoceDetect::Oversubscribed`]), whether the output is oversubscribed on that
    /// priority (two inputs or more queued for it, one of them holding more than the threshold); else
    /// `cong_detect`'s `mark_state_o` ([`PortVlSignals::mark_state`]). A checker of another switch's marks
    /// reads this (the RCM-1b state is no block's output, so `observe` does not show it).
    pub fn dequeue_mark_state(&self, port: usize, vl: usize) -> bool {
        if port >= self.n || vl >= usize::from(self.ports[port].nvl) {
            return false;
        }
        let k = port * self.v + vl;
        match (self.ports[port].pfc_on, self.ports[port].roce_detect) {
            (true, RoceDetect::Oversubscribed { in_buf_blocks }) => {
                self.oversubscribed(vl, self.lanes[k].voq_mask, in_buf_blocks)
            }
            _ => self.cong_seen(k, self.now).mark_state_o,
        }
    }

    /// Flow-control state of `port`, VL 0, when the port has exactly one data VL and runs IB credits.
    pub fn fc_sync(&self, port: usize) -> Option<FcSync> {
        if port >= self.n || self.ports[port].nvl != 1 || self.ports[port].pfc_on {
            return None;
        }
        if self.fire_at[port] < self.now {
            // Timer fires not applied yet: as the next step would apply them (a repeat whose cycle has passed
            // is sent already, `set_fc_repeats_off`), on a copy.
            let mut c = self.clone();
            c.catch_up(port, self.now);
            return c.fc_sync(port);
        }
        let k = port * self.v;
        let pending = (self.ports[port].fc_pending & 1 != 0).then_some(self.lanes[k].fc_fccl);
        // Blocks in by now that a sleeping port has not counted yet (see `Arrival::wake`), as a step would.
        let mut crx = self.lanes[k].crx.clone();
        if let Some(mut a) = self.ports[port].arriving.map(|a| a.a) {
            a.absorb_before(self.ports[port].rate, self.now, &mut crx);
        }
        Some(FcSync::of(&crx, &self.lanes[k].ctx, pending))
    }

    /// The counters of `port`, VL `vl` up to now (zeros for a VL the port lacks).
    pub fn counters(&self, port: usize, vl: usize) -> PortVlCounters {
        if port >= self.n || vl >= usize::from(self.ports[port].nvl) {
            return PortVlCounters::default();
        }
        let k = port * self.v + vl;
        let mut c = self.lanes[k].counters;
        c.xmit_wait = self.lanes[k].wait.read(self.now);
        c.cong_cycles = self.lanes[k].cong_time.read(self.now);
        c
    }

    /// The counters of `port` summed over its VLs.
    pub fn port_counters(&self, port: usize) -> PortVlCounters {
        let mut c = PortVlCounters::default();
        for vl in 0..self.v {
            c.add(&self.counters(port, vl));
        }
        c
    }

    /// The descriptor of the last packet that started on output `port`, VL `vl` (as it left: output VL, FECN).
    pub fn last_started(&self, port: usize, vl: usize) -> Option<PacketDesc> {
        if port >= self.n || vl >= usize::from(self.ports[port].nvl) {
            return None;
        }
        self.lanes[port * self.v + vl].last_desc
    }

    /// Packets held in the switch: in VoQs, waiting for their tail, or in the registered ingress stage (no
    /// longer on a wire, not yet in a VoQ), either handed in this cycle (`next_in`) or registered by the
    /// last step as the next step's input (`rx_pkt`). A fabric reads this between steps, where `next_in` is
    /// always empty (a step registers it) and a head handed in during the last cycle sits in `rx_pkt`:
    /// counting only `next_in`, the fabric saw a quiet fabric with that packet still to come and stopped
    /// draining (1 packet lost, 114 credit blocks leaked at the end of a lone flow on Gran's hardware
    /// settings).
    pub fn packets_held(&self) -> usize {
        self.slab.0.len() - self.free_slots.0.len()
            + self.rx_pkt_mask.count_ones() as usize
            + self.next_in.pkts()
    }
}
