//! Congestion detection of a [`Switch`] (phase 3 of a cycle) and what callers observe.

use super::*;
use rtl_model::link::fc::FcSync;

impl Switch {
    pub(super) fn detect(&mut self, t: u64) {
        if self.eager {
            self.dirty_list.0.clear();
            for k in 0..self.cong.len() {
                self.cong_dirty[k] = true;
                self.dirty_list.0.push(k as u32);
            }
        }
        for j in 0..self.dirty_list.0.len() {
            let k = self.dirty_list.0[j] as usize;
            self.cong_dirty[k] = false;
            let avail = self.credit_avail(k, t);
            let fill = &self.voq_fill[k * self.n..(k + 1) * self.n];
            self.cong[k].step_with(&cong_detect::In {
                rst_ni: true,
                voq_fill_i: fill,
                credit_avail_i: avail,
            });
            let on = self.cong[k].outputs().cong_o;
            self.cong_time[k].set(on, t + 1);
        }
        self.dirty_list.0.clear();
    }

    /// The signals of output/input `port`, VL `vl` as they stand before the next step (zeros for a VL the
    /// port lacks or a port that does not exist).
    pub fn observe(&self, port: usize, vl: usize) -> PortVlSignals {
        if port >= self.n || vl >= usize::from(self.nvl[port]) {
            return PortVlSignals::default();
        }
        let k = port * self.v + vl;
        let c = self.cong[k].outputs();
        let rx = &self.crx[k];
        let (at, marked) = self.last_start[k];
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
                + self.arriving[port]
                    .filter(|a| usize::from(a.vl) == vl && self.now > 0)
                    .map_or(0, |a| a.a.pending_until(self.rate[port], self.now - 1)),
            credits_avail: self.credit_avail(k, self.now),
            paused: self.paused_until[k] > self.now,
            pause_sent: self.pfc_rx[k].paused,
            started,
            marked: started && marked,
        }
    }

    /// Flow-control state of `port`, VL 0, when the port has exactly one data VL and runs IB credits.
    pub fn fc_sync(&self, port: usize) -> Option<FcSync> {
        if port >= self.n || self.nvl[port] != 1 || self.pfc_on[port] {
            return None;
        }
        if self.fire_at.get(port) < self.now {
            // Timer fires not applied yet: as the next step would apply them (a repeat whose cycle has passed
            // is sent already, `set_fc_repeats_off`), on a copy.
            let mut c = self.clone();
            c.catch_up(port, self.now);
            return c.fc_sync(port);
        }
        let k = port * self.v;
        let pending = (self.fc_pending[port] & 1 != 0).then_some(self.fc_fccl[k]);
        // Blocks in by now that a sleeping port has not counted yet (see `Arrival::wake`), as a step would.
        let mut crx = self.crx[k].clone();
        if let Some(mut a) = self.arriving[port].map(|a| a.a) {
            a.absorb_before(self.rate[port], self.now, &mut crx);
        }
        Some(FcSync::of(&crx, &self.ctx[k], pending))
    }

    /// The counters of `port`, VL `vl` up to now (zeros for a VL the port lacks).
    pub fn counters(&self, port: usize, vl: usize) -> PortVlCounters {
        if port >= self.n || vl >= usize::from(self.nvl[port]) {
            return PortVlCounters::default();
        }
        let k = port * self.v + vl;
        let mut c = self.counters[k];
        c.xmit_wait = self.wait[k].read(self.now);
        c.cong_cycles = self.cong_time[k].read(self.now);
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
        if port >= self.n || vl >= usize::from(self.nvl[port]) {
            return None;
        }
        self.last_desc[port * self.v + vl]
    }

    /// Packets held in the switch (in VoQs or waiting for their tail).
    pub fn packets_held(&self) -> usize {
        self.slab.0.len() - self.free_slots.0.len()
    }
}
