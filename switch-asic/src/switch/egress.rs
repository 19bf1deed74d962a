//! Egress of a [`Switch`]: completions, pause and flow-control frames, VL arbitration among the round-robin
//! heads, credit take, marking, serialisation (phases 0 and 1 of a cycle).

use super::*;

impl Switch {
    /// Returns the outputs the completion makes due this cycle (their `eg_wake` is now at most `t`).
    pub(super) fn egress_complete(&mut self, p: usize, t: u64) -> u64 {
        let Some(f) = self.ports[p].inflight.filter(|f| f.end == t) else {
            return 0;
        };
        let mut woken = 0;
        self.ports[p].inflight = None;
        let i = usize::from(f.inp);
        // The input's ingress looks in this cycle: its timer fires first (a packet of one that leaves now
        // makes it due for egress too, see `step_cycle`).
        if self.fire_at[i] < t {
            self.catch_up(i, t);
            if self.eg_wake.get(i) <= t {
                woken |= bit(i);
            }
        }
        self.lanes[i * self.v + usize::from(f.in_vl)].free_pending += u32::from(f.blocks);
        self.in_wake.lower(i, t);
        if f.keep_read {
            return woken;
        }
        if self.ports[i].reads == self.ports[i].speedup {
            self.saturated &= !(1u64 << i);
            // The look-ahead allocator's first stage sees the freed slot from the next cycle on.
            let lookahead = !self.la.is_empty();
            for o in 0..self.n {
                let base = o * self.v;
                if self.lanes[base..base + self.v]
                    .iter()
                    .any(|l| l.voq_mask & (1 << i) != 0)
                {
                    if lookahead {
                        self.eg_wake.lower(o, t + 1);
                        self.la_rewake |= 1 << o;
                    } else {
                        woken |= 1 << o;
                        self.eg_wake.lower(o, t);
                    }
                }
            }
        }
        self.ports[i].reads -= 1;
        woken
    }

    pub(super) fn egress(&mut self, p: usize, t: u64) {
        self.catch_up(p, t);
        let r = self.ports[p].rate;
        let base = p * self.v;
        let fc_in = self.ports[p].rx_fc;
        let mut fc_done = false;
        let pfc_on = self.ports[p].pfc_on;
        if !self.eager
            && !pfc_on
            && self.lanes[base..base + self.v]
                .iter()
                .all(|l| l.voq_mask == 0)
        {
            self.egress_idle(p, t);
            return;
        }
        if let Some(f) = self.ports[p].rx_pause {
            self.pause_in(p, f, t);
        }
        // A pending pause frame or flow-control packet goes first.
        let mut fc_sent = false;
        if self.ports[p].pfc_pending != 0 && self.ports[p].ser.can_start_fc(r, t) {
            self.start_pause(p, t);
            fc_sent = true;
        } else if self.ports[p].fc_pending != 0 && self.ports[p].ser.can_start_fc(r, t) {
            self.start_fc(p, t);
            fc_sent = true;
        }
        let Requests {
            req,
            ok,
            stall,
            len,
            pick,
        } = self.requests(p, t, self.saturated);
        if pfc_on {
            self.pause_seen_update(p, t);
        }
        for vl in 0..usize::from(self.ports[p].nvl) {
            self.set_wait(base + vl, stall & (1 << vl) != 0, t);
        }
        let mut granted = None;
        if !fc_sent && req & ok != 0 && self.ports[p].ser.can_start_packet(r, t) {
            let o = self.arb[p].step(&vl_arb::In {
                rst_ni: true,
                ready_i: true,
                req_i: req,
                len_i: len,
                credit_ok_i: ok,
                hold_i: false,
            });
            if o.gnt_valid_o && usize::from(o.gnt_vl_o) < usize::from(self.ports[p].nvl) {
                granted = Some(usize::from(o.gnt_vl_o));
            }
        }
        if let Some(vl) = granted {
            let i = usize::from(pick[vl]);
            let slot_i = self.dequeue(p, vl, i, true);
            if !pfc_on {
                let blocks = self.slab[slot_i as usize].desc.blocks();
                fc_done = self.take_credit(base + vl, blocks, fc_in);
            }
            self.start_packet(p, t, vl, i, slot_i, pfc_on);
            self.set_wait(base + vl, false, t);
            self.mark_dirty(base + vl);
        }
        if let Some(f) = fc_in.filter(|_| !pfc_on) {
            if !fc_done {
                self.fccl_in(p, f);
            }
            self.mark_dirty(base + usize::from(f.vl));
        }
        // Next time this output needs a look without outside help.
        let mut w = self.wake_unqueued(p, t);
        if self.ports[p].fc_pending != 0 || self.ports[p].pfc_pending != 0 {
            w = w.min(self.ports[p].ser.fc_ready_cycle(r, t + 1));
        }
        let queued = self.lanes[base..base + self.v]
            .iter()
            .any(|l| l.voq_mask != 0);
        if pfc_on {
            w = w.min(self.pause_wake(p, t, stall, queued));
        }
        if req & ok != 0 && granted.is_none() {
            w = w.min(self.ports[p].ser.packet_ready_cycle(r, t + 1));
        }
        if queued && (granted.is_some() || fc_in.is_some() || self.ports[p].rx_pause.is_some()) {
            // A grant moved the round-robin heads and took credit, a flow-control packet or pause changed
            // it: the stall state (XmitWait) may differ next cycle. Then arbitration when the wire frees.
            w = w.min(t + 1);
        }
        self.eg_wake.set(p, w);
    }

    /// Output `p`'s requests in cycle `t`: per VL the round-robin head among the inputs with a packet for it
    /// that are not in `saturated` (no free read slot), its length and whether its credit covers it.
    /// `req`/`ok` for arbitration skip the saturated inputs; the stall state (`stall`, for XmitWait) does
    /// not, so it changes only on events at this port.
    #[inline(always)]
    pub(super) fn requests(&self, p: usize, t: u64, saturated: u64) -> Requests {
        let base = p * self.v;
        let mut r = Requests::default();
        for vl in 0..usize::from(self.ports[p].nvl) {
            let all = self.lanes[base + vl].voq_mask;
            if all == 0 {
                continue;
            }
            let free = all & !saturated;
            let start = u32::from(self.lanes[base + vl].rr);
            let rr_pick = |m: u64| ((m.rotate_right(start).trailing_zeros() + start) % 64) as usize;
            let i_all = rr_pick(all);
            let ok_all = self.credit_ok(p, vl, i_all, t);
            if !ok_all {
                r.stall |= 1 << vl;
            }
            if free == 0 {
                continue;
            }
            let i = if free == all { i_all } else { rr_pick(free) };
            let slot = self.voq_ends[self.voq(i, p, vl)].head as usize;
            r.req |= 1 << vl;
            r.len[vl] = self.slab[slot].desc.blocks() as u8;
            r.pick[vl] = i as u8;
            if if i == i_all {
                ok_all
            } else {
                self.credit_ok(p, vl, i, t)
            } {
                r.ok |= 1 << vl;
            }
        }
        r
    }

    /// Output `p` takes the head of VoQ (`i`, `p`, `vl`): dequeued, its fill and the round robin moved, a
    /// read slot of input `i` claimed (unless `claim` is false: the slot of the packet before, passed on).
    /// Returns its descriptor slot.
    pub(super) fn dequeue(&mut self, p: usize, vl: usize, i: usize, claim: bool) -> u32 {
        let k = p * self.v + vl;
        let q = self.voq(i, p, vl);
        let slot_i = self.voq_ends[q].head;
        let slot = self.slab[slot_i as usize];
        self.voq_ends[q].head = slot.next;
        if slot.next == NONE {
            self.voq_ends[q].tail = NONE;
            self.lanes[k].voq_mask &= !(1u64 << i);
        }
        let blocks = slot.desc.blocks();
        self.voq_fill[k * self.n + i] -= blocks;
        self.lanes[k].fill_sum -= u32::from(blocks);
        self.lanes[k].rr = ((i + 1) % self.n) as u8;
        if claim {
            self.ports[i].reads += 1;
            if self.ports[i].reads == self.ports[i].speedup {
                self.saturated |= 1u64 << i;
            }
        }
        slot_i
    }

    /// Output port-VL `k` takes the credit of a packet of `blocks` (with the cycle's received FCCL for that
    /// VL, if any, which the same `credit_tx` step latches). Returns whether `fc_in` was consumed.
    pub(super) fn take_credit(&mut self, k: usize, blocks: u16, fc_in: Option<FcPacket>) -> bool {
        let fc = fc_in.filter(|f| usize::from(f.vl) == k % self.v);
        let co = self.lanes[k].ctx.step(&credit_tx::In {
            rst_ni: true,
            fc_valid_i: fc.is_some(),
            fc_fccl_i: fc.map_or(0, |f| f.fccl),
            req_valid_i: true,
            req_blocks_i: blocks as u8,
            take_i: true,
        });
        if co.err_o {
            self.lanes[k].counters.credit_err += 1;
        }
        fc.is_some()
    }

    /// The packet in descriptor slot `slot_i`, dequeued from input `i` for output `p`'s `vl`, starts in cycle
    /// `t`: its FECN (or ECN CE) decided, its output VL written, counted, serialised; its slot is freed.
    pub(super) fn start_packet(
        &mut self,
        p: usize,
        t: u64,
        vl: usize,
        i: usize,
        slot_i: u32,
        pfc_on: bool,
    ) {
        let base = p * self.v;
        let k = base + vl;
        let slot = self.slab[slot_i as usize];
        self.free_slots.0.push(slot_i);
        let blocks = slot.desc.blocks();
        // The marking state the decision uses here; `None` when it was decided, and counted, as the packet
        // joined its VoQ (`MarkPoint::Enqueue`: its FECN is set already).
        let mark_state = (self.mark_at_enqueue & bit(p) == 0).then(|| {
            match (pfc_on, self.ports[p].roce_detect) {
                (true, RoceDetect::Oversubscribed { in_buf_blocks }) => {
                    self.oversubscribed(vl, self.lanes[k].voq_mask | (1u64 << i), in_buf_blocks)
                }
                _ => self.cong_seen(k, t).mark_state_o,
            }
        });
        let mut mo = match mark_state {
            None => fecn_marker::Out {
                mark_o: slot.marked,
                cfg_err_o: 0,
            },
            Some(m) => self.lanes[k].mark.step(&fecn_marker::In {
                rst_ni: true,
                pkt_valid_i: true,
                pkt_bytes_i: slot.desc.wire_len,
                mark_state_i: m,
            }),
        };
        let mut desc = slot.desc;
        desc.vl = vl as u8;
        if pfc_on {
            // ECN CE on ECN-capable packets only (0 is not ECT; CE stays CE).
            mo.mark_o &= desc.ecn == 1 || desc.ecn == 2;
            if mo.mark_o {
                desc.ecn = 3;
            }
        } else {
            desc.fecn |= mo.mark_o;
        }
        let c = &mut self.lanes[k].counters;
        c.xmit_pkts += 1;
        c.xmit_bytes += u64::from(desc.wire_len);
        if let Some(m) = mark_state {
            self.count_decision(k, m, desc.wire_len, mo.mark_o);
        }
        self.lanes[k].last_start = (t, mo.mark_o);
        self.lanes[k].last_desc = Some(desc);
        // A packet head on the wire: the next flow-control packet is news whatever it carries.
        for l in &mut self.lanes[base..base + usize::from(self.ports[p].nvl)] {
            l.fc_last.forget();
        }
        let r = self.ports[p].rate;
        let (offset, end) = self.ports[p].ser.start_packet(r, t, desc.wire_len);
        self.ports[p].inflight = Some(Inflight {
            inp: i as u8,
            in_vl: slot.in_vl,
            blocks,
            // Completions run before packet starts in a cycle, so a packet whose last byte leaves in
            // its start cycle (a short one on a link of more than 26 bytes a cycle) completes in the
            // next: before, it was never released and its blocks and its read of the input were lost.
            end: end.max(t + 1),
            keep_read: false,
        });
        self.events.0.push(TxEvent::Packet {
            port: p as u8,
            start: PacketStart { desc, offset },
        });
    }

    /// A pause frame handed in at output `p` in cycle `t`: an XOFF stops packet starts from this cycle on, a
    /// resume (0 quanta) frees them from the next. PFC only: kept out of line (with the other PFC-only
    /// parts of `egress`) so that an IB fabric's switch step is smaller code.
    #[cold]
    #[inline(never)]
    fn pause_in(&mut self, p: usize, f: rtl_model::wire::pfc::Repr, t: u64) {
        let base = p * self.v;
        for vl in 0..usize::from(self.ports[p].nvl) {
            if f.is_enabled(vl as u8) {
                let q = f.quanta[vl];
                self.lanes[base + vl].paused_until = if q == 0 {
                    t + 1
                } else {
                    t + 1 + pfc::pause_cycles(self.ports[p].rate, q)
                };
            }
        }
    }

    /// The lowest VL's pending pause frame of output `p` starts in cycle `t` (the wire allows it).
    #[cold]
    #[inline(never)]
    fn start_pause(&mut self, p: usize, t: u64) {
        let vl = self.ports[p].pfc_pending.trailing_zeros() as usize;
        self.ports[p].pfc_pending &= !(1 << vl);
        let port = &mut self.ports[p];
        port.ser.start_ctl(port.rate, t, PAUSE_FRAME_BYTES);
        self.events.0.push(TxEvent::Pause {
            port: p as u8,
            frame: pfc::frame(vl as u8, self.lanes[p * self.v + vl].pfc_out_quanta),
        });
    }

    /// Output `p`'s paused-without-credit state per VL, as congestion detection sees it (PFC).
    #[cold]
    #[inline(never)]
    fn pause_seen_update(&mut self, p: usize, t: u64) {
        let base = p * self.v;
        for vl in 0..usize::from(self.ports[p].nvl) {
            let paused = self.pfc_without_credit(base + vl, t);
            if paused != self.lanes[base + vl].pause_seen {
                self.lanes[base + vl].pause_seen = paused;
                self.mark_dirty(base + vl);
            }
        }
    }

    /// The next cycle a PFC output needs a look for its pauses: a paused priority with a packet waiting
    /// (`stall`) when the pause runs out, and with packets `queued` the end of a victim hold (it changes what
    /// `cong_detect` sees).
    #[cold]
    #[inline(never)]
    fn pause_wake(&self, p: usize, t: u64, stall: u16, queued: bool) -> u64 {
        let base = p * self.v;
        let mut w = NEVER;
        for vl in 0..usize::from(self.ports[p].nvl) {
            if stall & (1 << vl) != 0 {
                w = w.min(self.lanes[base + vl].paused_until.max(t + 1));
            }
            if queued && self.lanes[base + vl].pause_seen {
                w = w.min(
                    (self.lanes[base + vl].paused_until + self.ports[p].victim_hold).max(t + 1),
                );
            }
        }
        w
    }

    /// The lowest VL's pending flow-control packet of output `p` starts in cycle `t` (the wire allows it).
    pub(super) fn start_fc(&mut self, p: usize, t: u64) {
        let base = p * self.v;
        let vl = self.ports[p].fc_pending.trailing_zeros() as usize;
        self.ports[p].fc_pending &= !(1 << vl);
        let port = &mut self.ports[p];
        port.ser.start_fc(port.rate, t);
        let (fctbs, fccl) = (
            self.lanes[base + vl].ctx.fctbs_q,
            self.lanes[base + vl].fc_fccl,
        );
        // A repeat is left off however it came to be sent (here, or by `catch_up` when its cycle had
        // passed), so the wire carries the same items whichever way the switch was stepped.
        let repeat = self.lanes[base + vl].fc_last.sent(fctbs, fccl);
        if !(repeat && self.repeats_off(p)) {
            self.events.0.push(TxEvent::Fc {
                port: p as u8,
                fc: FcPacket {
                    vl: vl as u8,
                    fctbs,
                    fccl,
                },
            });
        }
    }

    /// Whether port `p` leaves off flow-control repeats (`set_fc_repeats_off`; ports with IB credits).
    #[inline]
    pub(super) fn repeats_off(&self, p: usize) -> bool {
        self.fc_repeat_off & (1u64 << p) != 0 && !self.ports[p].pfc_on
    }

    /// Whether the flow-control packets of port `p`'s next timer fires, on the registers of now, are ones
    /// that [`Switch::set_fc_repeats_off`] leaves off: nothing pending, and on every VL of the port FCTBS and
    /// the FCCL advertised now equal the last packet's. Until the port steps again neither can change (FCTBS
    /// moves only with a packet sent, FCCL only with blocks drained or counted by a `credit_rx` step; blocks
    /// a sleeping arrival absorbs later leave it as it is), so no fire needs a look of its own.
    #[inline(always)]
    pub(super) fn fire_repeats(&self, p: usize) -> bool {
        let base = p * self.v;
        let repeats = |k: usize| {
            self.lanes[k]
                .fc_last
                .repeats(self.lanes[k].ctx.fctbs_q, self.lanes[k].crx.fccl_now())
        };
        // First what fails most often under load: a packet head since the last flow-control packet. The
        // first VL apart from the others: most ports have one, and the range of the rest is then empty.
        self.lanes[base].fc_last.is_some()
            && self.repeats_off(p)
            && self.ports[p].fc_pending == 0
            && repeats(base)
            && (base + 1..base + usize::from(self.ports[p].nvl)).all(repeats)
    }

    /// Egress of an IB output with nothing queued: it can start no packet, so a look (its packet's
    /// completion, a pending or received flow-control packet) only sends the pending flow-control packet
    /// when the wire allows, latches a received FCCL and finds the next look, without the arbitration pass.
    /// Exact: with no request the full pass grants nothing and leaves `vl_arb` unclocked; every VL's
    /// XmitWait state is off already (a VL's queue empties only by a grant, which turns it off).
    pub(super) fn egress_idle(&mut self, p: usize, t: u64) {
        self.catch_up(p, t);
        let base = p * self.v;
        let r = self.ports[p].rate;
        if self.ports[p].fc_pending != 0 && self.ports[p].ser.can_start_fc(r, t) {
            self.start_fc(p, t);
        }
        // XmitWait off: no cycle counted past `t`.
        debug_assert!(
            (0..usize::from(self.ports[p].nvl))
                .all(|vl| self.lanes[base + vl].wait.read(t + 1)
                    == self.lanes[base + vl].wait.read(t))
        );
        if let Some(f) = self.ports[p].rx_fc {
            self.fccl_in(p, f);
            self.mark_dirty(base + usize::from(f.vl));
        }
        let mut w = self.wake_unqueued(p, t);
        if self.ports[p].fc_pending != 0 {
            w = w.min(self.ports[p].ser.fc_ready_cycle(r, t + 1));
        }
        self.eg_wake.set(p, w);
    }

    /// A received FCCL on output `p` that no credit take carries reaches its `credit_tx` (latched there).
    pub(super) fn fccl_in(&mut self, p: usize, f: FcPacket) {
        let k = p * self.v + usize::from(f.vl);
        let idle = self.lanes[k].ctx.idle_input();
        self.lanes[k].ctx.step(&credit_tx::In {
            fc_valid_i: true,
            fc_fccl_i: f.fccl,
            ..idle
        });
    }

    /// The next look output `p` needs after cycle `t` for its own packet and lazily applied timer fires:
    /// its packet's last byte, and the cycle a timer fire's flow-control packet can leave.
    #[inline(always)]
    pub(super) fn wake_unqueued(&self, p: usize, t: u64) -> u64 {
        let mut w = NEVER;
        if let Some(f) = self.ports[p].inflight {
            if f.end > t {
                w = f.end;
            }
        }
        let fire_at = self.fire_at[p];
        if fire_at != NEVER && !self.fire_repeats(p) {
            // A timer fire applied lazily: its packet leaves when the wire is free after it.
            w = w.min(
                self.ports[p]
                    .ser
                    .fc_ready_cycle(self.ports[p].rate, fire_at + 1),
            );
        }
        w
    }

    /// PFC port-VL `k` counts as without credit in cycle `t`: paused, or within the victim hold after.
    pub(super) fn pfc_without_credit(&self, k: usize, t: u64) -> bool {
        let pu = self.lanes[k].paused_until;
        pu != 0 && pu + self.ports[k / self.v].victim_hold > t
    }

    /// Whether the head of VoQ (`inp`, `p`, `vl`) may start now: its credit fits (`credit_tx::fits`) on an IB
    /// port, the priority is not paused on a PFC port.
    pub(super) fn credit_ok(&self, p: usize, vl: usize, inp: usize, t: u64) -> bool {
        let k = p * self.v + vl;
        if self.ports[p].pfc_on {
            return self.lanes[k].paused_until <= t;
        }
        let slot = self.voq_ends[self.voq(inp, p, vl)].head as usize;
        let blocks = self.slab[slot].desc.blocks() as u8;
        let tx = &self.lanes[k].ctx;
        fits(tx.fccl_q, tx.fctbs_q, blocks)
    }

    /// Credit of output port-VL `k` as `cong_detect` sees it: `credit_tx`'s `avail_o` (`credit_tx::avail` of
    /// its registers: (FCCL - FCTBS) mod 4096, 0 when FCCL trails) on an IB port; on a PFC port all of it unless the priority is paused (RCM-1a: a
    /// paused priority is one without credit).
    #[inline(always)]
    pub(super) fn credit_avail(&self, k: usize, t: u64) -> u16 {
        let full = credit_tx::FC_MOD as u16 - 1;
        if self.ports[k / self.v].pfc_on {
            if self.pfc_without_credit(k, t) {
                0
            } else {
                full
            }
        } else {
            let tx = &self.lanes[k].ctx;
            credit_tx::avail(tx.fccl_q, tx.fctbs_q)
        }
    }

    /// RCM-1b: at least two inputs in `mask` have packets queued, and one of them holds more than `thr`
    /// blocks in its buffer of `vl`.
    pub(super) fn oversubscribed(&self, vl: usize, mask: u64, thr: u16) -> bool {
        if mask.count_ones() < 2 {
            return false;
        }
        let mut m = mask;
        while m != 0 {
            let i = m.trailing_zeros() as usize;
            m &= m - 1;
            if vl < usize::from(self.ports[i].nvl) {
                let rx = &self.lanes[i * self.v + vl].crx;
                if rx.config().buf_blocks - rx.free_q > thr {
                    return true;
                }
            }
        }
        false
    }
}
