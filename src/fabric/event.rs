//! Event-driven stepping: [`Fabric::run_until`] gives the state of as many [`Fabric::step`] calls, but
//! steps a switch or HCA only in cycles where it can do something.
//!
//! # Why this is exact
//! A block's step in a cycle where nothing arrives for it and its own `next_event` is not due only counts
//! timers down, which its exact `skip` does in O(1) (switch-asic's `Switch::skip`, `Endpoint::skip`, the
//! `credit_rx` closed form). Every block therefore has a wake-up cycle: the earliest of its own next event
//! and the next item due on a wire into it. In a cycle `t` the blocks due at `t` are each brought to `t`
//! (skip), handed what the wires deliver, and stepped. What a step puts on a wire is due at `t + latency`
//! with `latency >= 1`, so no block stepped at `t` sees another's output of `t`, and handling the due blocks
//! one after the other gives the reference's result, whatever their order (the reference delivers to
//! everyone first, then steps everyone). At the end every block is skipped to `end`, so [`Fabric::step`]
//! can go on from there.
//!
//! # Cost
//! Per cycle with any work: a scan of the wake-up array (switches + HCAs) plus the due blocks' steps; a
//! cycle with no work anywhere is never visited.

use switch_asic::endpoint::EndpointOut;
use switch_asic::TxEvent;

use super::{Ev, Fabric, Rx};

/// Wake-up cycles of every switch and HCA (preallocated; reused by every [`Fabric::run_until`]).
#[derive(Debug, Default, Clone)]
pub(super) struct Sched {
    sw: Vec<u64>,
    hca: Vec<u64>,
}

impl Fabric {
    /// Steps to cycle `end` (no-op if already there), event-driven; the state afterwards is the state after
    /// `end - now()` calls of [`Fabric::step`] (see the `event` module documentation).
    pub fn run_until(&mut self, end: u64) {
        if self.now >= end {
            return;
        }
        let mut sched = std::mem::take(&mut self.sched);
        sched.sw.clear();
        sched.hca.clear();
        for s in 0..self.switches.len() {
            let w = self.switch_wake(s);
            sched.sw.push(w);
        }
        for h in 0..self.hcas.len() {
            let w = self.hca_wake(h, self.now);
            sched.hca.push(w);
        }
        loop {
            let t = sched
                .sw
                .iter()
                .chain(sched.hca.iter())
                .copied()
                .min()
                .unwrap_or(u64::MAX);
            if t >= end {
                break;
            }
            self.now = t;
            for s in 0..sched.sw.len() {
                if sched.sw[s] <= t {
                    self.step_switch(s, t, &mut sched);
                    sched.sw[s] = self.switch_wake(s);
                }
            }
            for h in 0..sched.hca.len() {
                if sched.hca[h] <= t {
                    self.step_hca(h, t, &mut sched);
                    sched.hca[h] = self.hca_wake(h, t + 1);
                }
            }
        }
        for sw in &mut self.switches {
            let n = end - sw.now();
            sw.skip(n);
        }
        for hc in &mut self.hcas {
            let n = end - hc.port_now();
            hc.skip(n);
        }
        self.now = end;
        self.sched = sched;
    }

    /// The next cycle switch `s` must step in: its own next event or the next wire arrival.
    fn switch_wake(&self, s: usize) -> u64 {
        let sw = &self.switches[s];
        let mut w = sw
            .next_event()
            .map_or(u64::MAX, |e| sw.now().saturating_add(e));
        for x in self.sw_in[s].iter().flatten() {
            if let Some(d) = x.next_due() {
                w = w.min(d);
            }
        }
        w
    }

    /// The next cycle HCA `h` must step in, from cycle `now` on.
    fn hca_wake(&self, h: usize, now: u64) -> u64 {
        let w = self.hcas[h].next_event(now);
        self.hca_in[h].next_due().map_or(w, |d| w.min(d))
    }

    /// Lowers the wake-up of the block at the end of `rx` to `at`.
    fn wake(sched: &mut Sched, rx: Rx, at: u64) {
        let w = match rx {
            Rx::Switch(s, _) => &mut sched.sw[s],
            Rx::Hca(h) => &mut sched.hca[h],
        };
        *w = (*w).min(at);
    }

    fn push_ev(&mut self, rx: Rx, t: u64, ev: Ev, sched: &mut Sched) {
        self.wire_pkts += u64::from(matches!(ev, Ev::Pkt(_)));
        let w = self.wire_to(rx);
        w.push(t, ev);
        let at = t + w.latency();
        Self::wake(sched, rx, at);
    }

    fn step_switch(&mut self, s: usize, t: u64, sched: &mut Sched) {
        let sw = &mut self.switches[s];
        let n = t - sw.now();
        sw.skip(n);
        for (p, w) in self.sw_in[s].iter_mut().enumerate() {
            let Some(w) = w else { continue };
            while let Some(e) = w.pop_due(t) {
                // A refusal is counted by the switch (`rx_errors`) and reported as a violation.
                let _ = match e {
                    Ev::Pkt(pk) => {
                        self.wire_pkts -= 1;
                        sw.rx_packet(p, pk)
                    }
                    Ev::Fc(fc) => sw.rx_fc(p, fc),
                };
            }
        }
        self.events.clear();
        self.events.extend_from_slice(self.switches[s].step());
        for i in 0..self.events.len() {
            let (port, ev) = match self.events[i] {
                TxEvent::Packet { port, start } => (port, Ev::Pkt(start)),
                TxEvent::Fc { port, fc } => (port, Ev::Fc(fc)),
                TxEvent::Pause { .. } => continue,
            };
            if let Some(rx) = self.sw_out[s][usize::from(port)] {
                self.push_ev(rx, t, ev, sched);
            }
        }
    }

    fn step_hca(&mut self, h: usize, t: u64, sched: &mut Sched) {
        let hc = &mut self.hcas[h];
        let n = t - hc.port_now();
        hc.skip(n);
        while let Some(e) = self.hca_in[h].pop_due(t) {
            match e {
                Ev::Pkt(pk) => {
                    self.wire_pkts -= 1;
                    hc.rx_packet(t, pk)
                }
                Ev::Fc(fc) => hc.rx_fc(fc),
            }
        }
        let EndpointOut { pkt, fc, .. } = hc.step(t);
        let rx = self.hca_out[h];
        if let Some(p) = pkt {
            self.push_ev(rx, t, Ev::Pkt(p), sched);
        }
        if let Some(f) = fc {
            self.push_ev(rx, t, Ev::Fc(f), sched);
        }
    }
}
