//! The look-ahead allocator (`Allocator::Lookahead`, config.rs describes it): an output's three registered
//! decision stages (request, VL choice, accept and commit) and the inputs' accept of the proposals.

use super::*;

impl Switch {
    /// The accept of stage 3, for every input proposed to in the last cycle. An output whose packet on the
    /// wire still reads that input takes its read slot over (the packet before ends before this one
    /// starts); the others get up to the input's free read slots (after this cycle's completions), round
    /// robin from the input's own pointer. In cycle `t` the proposals of cycle `t - 1` (those evaluated
    /// ahead, for cycle `t`, wait in the other set).
    pub(super) fn la_accept(&mut self, t: u64) {
        self.la_accepted = 0;
        self.la_transfer = 0;
        let g = (t.wrapping_sub(1) & 1) as usize;
        for i in ports(self.la_prop_any[g]) {
            let proposed = self.la_prop[i][g];
            self.la_prop[i][g] = 0;
            let mut rest = 0;
            for o in ports(proposed) {
                if self.ports[o]
                    .inflight
                    .is_some_and(|f| usize::from(f.inp) == i)
                {
                    self.la_transfer |= 1u64 << o;
                } else {
                    rest |= 1u64 << o;
                }
            }
            self.la_accepted |= self.la_transfer;
            let mut free = self.ports[i].speedup - self.ports[i].reads;
            let start = u32::from(self.la_acc_ptr[i]);
            while free > 0 && rest != 0 {
                let o = ((rest.rotate_right(start).trailing_zeros() + start) % 64) as usize;
                rest &= !(1u64 << o);
                self.la_accepted |= 1u64 << o;
                self.la_acc_ptr[i] = ((o + 1) % self.n) as u8;
                free -= 1;
            }
        }
        self.la_prop_any[g] = 0;
    }

    /// Stage 2 of cycle `at` at output `p`: `vl_arb` proposes a VL among the requests `q` registered by
    /// stage 1 in the cycle before (`hold_i`: its state moves at the commit), and the proposal is registered
    /// for its input's accept in cycle `at + 1`.
    #[inline(always)]
    fn la_propose(&mut self, p: usize, q: &LaReq, at: u64) {
        let o = self.arb[p].step(&vl_arb::In {
            hold_i: true,
            ..q.arb_in
        });
        if o.gnt_valid_o && o.gnt_vl_o < self.ports[p].nvl {
            let inp = q.pick[usize::from(o.gnt_vl_o)];
            self.la[p].pr = Some(LaProp {
                arb_in: q.arb_in,
                vl: o.gnt_vl_o,
                inp,
                at,
            });
            let g = (at & 1) as usize;
            self.la_prop[usize::from(inp)][g] |= bit(p);
            self.la_prop_any[g] |= bit(usize::from(inp));
        }
    }

    /// Egress of output `p` in cycle `t` with the look-ahead allocator. Every stage reads the registers of
    /// the start of the cycle: the decided packet starts if the wire frees; last cycle's proposal is
    /// committed if its input accepted it; last cycle's requests become a proposal; and, with no decision
    /// under way and the wire free within `LOOKAHEAD_CYCLES`, this cycle's requests are registered.
    /// Outside the eager reference those requests' stage 2 (the next cycle's) is evaluated in the same look:
    /// it reads nothing the next cycle can change, so the output needs no look of its own for it (one
    /// switch step fewer per decision under light load); the proposal still counts as the next cycle's.
    pub(super) fn egress_la(&mut self, p: usize, t: u64) {
        self.catch_up(p, t);
        let r = self.ports[p].rate;
        let base = p * self.v;
        let nvl = usize::from(self.ports[p].nvl);
        let fc_in = self.ports[p].rx_fc;
        // An idle output (most looks under light load) takes the short look without copying the
        // registers of its stages.
        if !self.eager
            && self.la[p].is_empty()
            && self.lanes[base..base + self.v]
                .iter()
                .all(|l| l.voq_mask == 0)
        {
            self.egress_idle(p, t);
            return;
        }
        // Stage 1 registers a request only with no decision under way at the cycle's start.
        let idle = self.la[p].is_empty();
        // A pending flow-control packet goes first.
        let mut fc_sent = false;
        if self.ports[p].fc_pending != 0 && self.ports[p].ser.can_start_fc(r, t) {
            self.start_fc(p, t);
            fc_sent = true;
        }
        // The decided packet starts when the wire frees, and takes its credit then: the flow-control packets
        // sent before it must not count its blocks in their FCTBS (the credit stage 1 saw is still there:
        // only this output takes from it, one decision at a time).
        let mut fc_done = false;
        if let Some(nx) = self.la[p].nx {
            if !fc_sent && self.ports[p].ser.can_start_packet(r, t) {
                self.la[p].nx = None;
                let (vl, i) = (usize::from(nx.vl), usize::from(nx.inp));
                let blocks = self.slab[nx.slot as usize].desc.blocks();
                fc_done = self.take_credit(base + vl, blocks, fc_in);
                self.start_packet(p, t, vl, i, nx.slot, false);
                self.mark_dirty(base + vl);
            }
        }
        // Stage 1 may ask for the input this output's packet on the wire reads: its slot passes on.
        let held = self.ports[p].inflight.map_or(0, |f| 1u64 << f.inp);
        let rq = self.requests(p, t, self.la_sat_start & !held);
        for vl in 0..nvl {
            self.set_wait(base + vl, rq.stall & (1 << vl) != 0, t);
        }
        // Stage 3: last cycle's proposal, accepted or refused by its input (not one of this cycle, evaluated
        // ahead in the look before).
        let mut committed = false;
        if let Some(pr) = self.la[p].pr.filter(|pr| pr.at < t) {
            self.la[p].pr = None;
            if self.la_accepted & bit(p) != 0 {
                let o = self.arb[p].step(&pr.arb_in);
                debug_assert!(o.gnt_valid_o && o.gnt_vl_o == pr.vl);
                let (vl, i) = (usize::from(pr.vl), usize::from(pr.inp));
                let transfer = self.la_transfer & bit(p) != 0;
                if transfer {
                    if let Some(f) = self.ports[p].inflight.as_mut() {
                        f.keep_read = true;
                    }
                }
                let slot = self.dequeue(p, vl, i, !transfer);
                self.la[p].nx = Some(LaNext {
                    vl: pr.vl,
                    inp: pr.inp,
                    slot,
                });
                self.set_wait(base + vl, false, t);
                self.mark_dirty(base + vl);
                committed = true;
            }
        }
        // Stage 2: `vl_arb` proposes a VL among last cycle's requests.
        if let Some(q) = self.la[p].rq.take() {
            self.la_propose(p, &q, t);
        }
        // Stage 1: no decision under way (the last one started before this cycle, was refused or came to
        // nothing), a request whose credit fits, and the wire free within LOOKAHEAD_CYCLES. Not in the cycle
        // a packet starts: the credit check reads `credit_tx`'s registers (its single request port), which
        // count the started packet's blocks only from the next cycle.
        let ready = self.ports[p].ser.packet_ready_cycle(r, t);
        if idle && rq.req & rq.ok != 0 && ready <= t + LOOKAHEAD_CYCLES {
            let q = LaReq {
                arb_in: vl_arb::In {
                    rst_ni: true,
                    ready_i: true,
                    req_i: rq.req,
                    len_i: rq.len,
                    credit_ok_i: rq.ok,
                    hold_i: false,
                },
                pick: rq.pick,
            };
            if self.eager {
                self.la[p].rq = Some(q);
            } else {
                // Stage 2 of the next cycle, evaluated now: its inputs are these registers and `vl_arb`'s
                // state, which moves only at this output's commits, and none comes before it (no decision
                // is under way). The proposal waits for the accept of the cycle after next, and the look
                // of the next cycle is spared (a look then for other reasons finds the proposal made).
                self.la_propose(p, &q, t + 1);
            }
        }
        if let Some(f) = fc_in {
            if !fc_done {
                self.fccl_in(p, f);
            }
            self.mark_dirty(base + usize::from(f.vl));
        }
        // Next time this output needs a look without outside help.
        let mut w = self.wake_unqueued(p, t);
        if self.ports[p].fc_pending != 0 {
            w = w.min(self.ports[p].ser.fc_ready_cycle(r, t + 1));
        }
        let l = self.la[p];
        if l.rq.is_some() {
            w = w.min(t + 1);
        } else if let Some(pr) = l.pr {
            // Stage 3, in the cycle after the proposal's.
            w = w.min(pr.at + 1);
        } else if l.nx.is_some() {
            w = w.min(self.ports[p].ser.packet_ready_cycle(r, t + 1));
        } else if rq.req & rq.ok != 0 {
            // A decision to begin, LOOKAHEAD_CYCLES before the wire frees.
            w = w.min(ready.saturating_sub(LOOKAHEAD_CYCLES).max(t + 1));
        }
        let queued = self.lanes[base..base + self.v]
            .iter()
            .any(|l| l.voq_mask != 0);
        if queued && (committed || fc_in.is_some()) {
            // A commit moved the round-robin heads and took credit, a flow-control packet changed it: the
            // stall state (XmitWait) and the requests may differ next cycle.
            w = w.min(t + 1);
        }
        if self.la_rewake & bit(p) != 0 {
            // A read slot its requests may use was freed this cycle: stage 1 sees it next cycle.
            w = w.min(t + 1);
        }
        self.eg_wake.set(p, w);
    }
}
