//! Ingress of a [`Switch`]: block arrival, `credit_rx`, PFC watermarks, routing and VoQs (phase 2 of a cycle).

use super::*;

impl Switch {
    #[allow(clippy::needless_range_loop)] // vl indexes several per-VL arrays at once
    pub(super) fn ingress(&mut self, p: usize, t: u64) {
        self.catch_up(p, t);
        let r = self.ports[p].rate;
        let base = p * self.v;
        let mut blk = [0u8; 16];
        if let Some(mut ar) = self.ports[p].arriving {
            ar.a.absorb_before(r, t, &mut self.lanes[base + usize::from(ar.vl)].crx);
            let got = ar.a.take_until(r, t);
            blk[usize::from(ar.vl)] += got as u8;
            if ar.a.is_done() {
                self.arrival_done(p, &ar, t);
                self.ports[p].arriving = None;
            } else {
                self.ports[p].arriving = Some(ar);
            }
        }
        if let Some(ps) = self.ports[p].rx_pkt {
            if self.ports[p].arriving.is_some() {
                self.rx_errors += 1;
            } else {
                self.head_arrives(p, ps, t, &mut blk);
            }
        }
        let fc = self.ports[p].rx_fc;
        let mut wake = NEVER;
        for vl in 0..usize::from(self.ports[p].nvl) {
            let k = base + vl;
            let fcv = fc.filter(|f| usize::from(f.vl) == vl);
            let free = self.lanes[k].free_pending.min(127);
            if !self.eager
                && blk[vl] == 0
                && fcv.is_none()
                && free == 0
                && self.lanes[k].crx_due > t
            {
                wake = wake.min(self.lanes[k].crx_due);
                continue;
            }
            let gap = t - self.lanes[k].crx_next;
            if gap > 0 {
                self.lanes[k].crx.skip(gap);
            }
            let o = self.lanes[k].crx.step(&credit_rx::In {
                rst_ni: true,
                blk_rx_i: blk[vl],
                fc_valid_i: fcv.is_some(),
                fc_fctbs_i: fcv.map_or(0, |f| f.fctbs),
                blk_free_i: free as u8,
            });
            self.lanes[k].free_pending -= free;
            if o.overflow_o {
                self.lanes[k].counters.overflow += 1;
            }
            if self.ports[p].pfc_on {
                let used = self.lanes[k].crx.config().buf_blocks - self.lanes[k].crx.free_q;
                let q = self.ports[p].pfc_quanta;
                let half = self.ports[p].pfc_half;
                let lane = &mut self.lanes[k];
                if let Some(q) = lane.pfc_rx.update(used, lane.wm, q, half, t) {
                    self.ports[p].pfc_pending |= 1 << vl;
                    self.lanes[k].pfc_out_quanta = q;
                    if q == 0 {
                        self.lanes[k].counters.resumes_sent += 1;
                    } else {
                        self.lanes[k].counters.pauses_sent += 1;
                    }
                    self.eg_wake
                        .lower(p, self.ports[p].ser.fc_ready_cycle(r, t + 1));
                }
            } else if o.fc_send_o {
                self.ports[p].fc_pending |= 1 << vl;
                self.lanes[k].fc_fccl = o.fccl_o;
                self.eg_wake
                    .lower(p, self.ports[p].ser.fc_ready_cycle(r, t + 1));
            }
            self.lanes[k].crx_next = t + 1;
            self.lanes[k].crx_due = self.lanes[k].crx.next_event().map_or(NEVER, |e| t + 1 + e);
            if let Some(at) = self.lanes[k].pfc_rx.next_event() {
                self.lanes[k].crx_due = self.lanes[k].crx_due.min(at.max(t + 1));
            }
            if self.lanes[k].free_pending > 0 {
                self.lanes[k].crx_due = t + 1;
            }
            wake = wake.min(self.lanes[k].crx_due);
        }
        // The arrival's own next look is kept apart from the timers: it does not stop them being lazy.
        let mut arrival_wake = NEVER;
        if let Some(ar) = self.ports[p].arriving {
            let per_block = self.eager || self.ports[p].pfc_on;
            let crx = &self.lanes[base + usize::from(ar.vl)].crx;
            // Queued already and its blocks move nothing but ABR and the free count: the tail needs no look
            // of its own. The blocks are counted at the port's next look, at the latest the packet's release
            // (which comes at or after the tail: a cut-through output is not faster).
            let tail_passive =
                ar.deferred == NONE && !per_block && crx.can_absorb(ar.a.remaining());
            if !tail_passive {
                arrival_wake = ar.a.wake(r, crx, per_block).unwrap_or(NEVER);
            }
        }
        self.fire_at[p] = NEVER;
        let waits_for_timers_only = !self.eager
            && !self.ports[p].pfc_on
            && self.lanes[base..base + usize::from(self.ports[p].nvl)]
                .iter()
                .all(|l| l.free_pending == 0);
        if waits_for_timers_only && wake != NEVER {
            // Every VL's next event is its timer firing on inputs that are idle until the arrival's next
            // look (or carry only blocks that the arrival absorbs later, which clock `credit_rx` exactly as
            // idle inputs followed by an `absorb`): applied lazily (`catch_up`); the port needs a look only
            // when the flow-control packet can leave, or at the arrival's next look, whichever comes first.
            self.fire_at[p] = wake;
            if !self.fire_repeats(p) {
                self.eg_wake
                    .lower(p, self.ports[p].ser.fc_ready_cycle(r, wake + 1));
            }
            wake = NEVER;
        }
        self.in_wake.set(p, wake.min(arrival_wake));
    }

    /// Applies the timer fires of port `p` before cycle `t` that were left to be applied lazily (see
    /// `fire_at`): each `credit_rx` is brought to its fire, clocked on idle inputs as the reference would
    /// have clocked it then, and its flow-control packet is made pending. Exact: nothing reached the port's
    /// `credit_rx` blocks since they were last clocked (anything would have clocked them), so their inputs
    /// in the skipped cycles were idle, except for blocks of an arrival that sleeps until its tail
    /// ([`Arrival::wake`]): those are counted later by `absorb_before`, which commutes with these idle steps
    /// because such blocks move neither FCCL nor an overflow ([`CreditRx::absorb`]). An arrival watched block
    /// by block wakes the port at each block, which applies the fires before it first. The fires of the
    /// port's VLs are applied in cycle order, the lowest VL first within a cycle (the order in which the
    /// reference sends pending flow-control packets), since each packet's wire time delays the next.
    ///
    /// Called at the start of every look at port `p` (its egress, its ingress) and, for the ports a step
    /// will look at, before the step reads which outputs are due (`Switch::step_cycle`): a fire whose packet
    /// leaves in this cycle makes the port due. Per port, not per step: the fires only read the port's own
    /// registers (its `credit_rx` and `credit_tx` lanes, its serialiser and pending flow-control packets),
    /// which nothing but a look at the port changes, so applying them at a later look gives the same
    /// registers; a repeat whose cycle passed meanwhile is left off with its wire time, as when the whole
    /// switch slept past it.
    #[inline(always)]
    pub(super) fn catch_up(&mut self, p: usize, t: u64) {
        if self.fire_at[p] < t {
            self.apply_fires(p, t);
        }
    }

    /// [`Switch::catch_up`] of a port with fires before `t` to apply.
    #[inline(never)]
    fn apply_fires(&mut self, p: usize, t: u64) {
        let base = p * self.v;
        let vls = base..base + usize::from(self.ports[p].nvl);
        // Whole periods of left-off repeats (see `period_start`): the first fire of the period the run
        // of them began at, if any. Looked for only where a jump can follow (two periods before `t`), so
        // a busy port, with a fire or two to apply, pays nothing for it.
        let mut period: Option<u64> = None;
        let interval = u64::from(self.lanes[base].crx.config().fc_interval);
        loop {
            let mut k = base;
            for j in base + 1..vls.end {
                if self.lanes[j].crx_due < self.lanes[k].crx_due {
                    k = j;
                }
            }
            let vl = k - base;
            let mut at = self.lanes[k].crx_due;
            if at >= t {
                break;
            }
            let look = match period {
                None => t - at > 2 * interval,
                Some(p0) => at == p0 + interval,
            };
            if look {
                if !self.period_start(p, at, interval) {
                    period = None;
                } else if period.is_some() {
                    // One whole period of left-off repeats from the last start to `at`, each begun with
                    // the wire free: every period on repeats it, shifted (the same fires at the same
                    // offsets, the same packets at the same offsets after them). Jump the whole periods
                    // that end before `t`, leaving the last stretch to be applied fire by fire.
                    let m = (t - 1 - at) / interval;
                    if m > 0 {
                        let d = m * interval;
                        for j in vls.clone() {
                            self.lanes[j].crx.skip(d);
                            self.lanes[j].crx_next += d;
                            self.lanes[j].crx_due += d;
                        }
                        self.ports[p].ser.free_tick += d * self.ports[p].rate.ticks_per_cycle();
                        at += d;
                    }
                    period = Some(at);
                } else {
                    period = Some(at);
                }
            }
            let lane = &mut self.lanes[k];
            let o = lane.crx.skip_then_idle_step(at - lane.crx_next);
            debug_assert!(o.fc_send_o, "a deferred credit_rx event is a timer fire");
            if o.fc_send_o {
                let repeat = self.lanes[k]
                    .fc_last
                    .repeats(self.lanes[k].ctx.fctbs_q, o.fccl_o)
                    && self.repeats_off(p)
                    && self.ports[p].fc_pending == 0;
                self.lanes[k].fc_fccl = o.fccl_o;
                // The cycle the reference sends it: the first the wire allows after the fire.
                let send = |sw: &Self| sw.ports[p].ser.fc_ready_cycle(sw.ports[p].rate, at + 1);
                if repeat {
                    let s = send(self);
                    if s < t {
                        // Left off (`set_fc_repeats_off`): only its wire time remains, from cycle `s`.
                        let port = &mut self.ports[p];
                        port.ser.start_fc(port.rate, s);
                    } else {
                        // Leaves now or later, as any other: its look (left out by `fire_repeats`).
                        self.ports[p].fc_pending |= 1 << vl;
                        self.eg_wake.lower(p, s);
                        period = None;
                    }
                } else {
                    // Not a repeat: `fire_repeats` was false when the look was planned, so the look
                    // is at its cycle, not before this step.
                    debug_assert!(send(self) >= t, "a flow-control packet would leave late");
                    self.ports[p].fc_pending |= 1 << vl;
                    period = None;
                }
            }
            self.lanes[k].crx_next = at + 1;
            self.lanes[k].crx_due = self.lanes[k].crx.next_event().map_or(NEVER, |e| at + 1 + e);
        }
        let next = (base + 1..vls.end).fold(self.lanes[base].crx_due, |m, k| {
            m.min(self.lanes[k].crx_due)
        });
        self.fire_at[p] = next;
    }

    /// Whether the earliest timer fire of port `p`, at cycle `at`, may begin a period of left-off repeats:
    /// the port leaves off repeats and has nothing pending, every VL's flow-control packet would repeat the
    /// last one, every VL shares one interval and fires within it from `at`, and the wire is free from the
    /// cycle after `at`. Then the fires of the next `interval` cycles are one per VL at the same offsets as
    /// the period after, and their packets take the wire at the same offsets: two such starts one interval
    /// apart (with every fire between left off) make the port's timer stretch periodic. `interval` is the
    /// interval of the port's first VL.
    #[inline(never)]
    fn period_start(&self, p: usize, at: u64, interval: u64) -> bool {
        let base = p * self.v;
        let vls = base..base + usize::from(self.ports[p].nvl);
        self.repeats_off(p)
            && self.ports[p].fc_pending == 0
            && self.ports[p].ser.free_tick <= self.ports[p].rate.tick_of(at + 1)
            && vls.into_iter().all(|k| {
                u64::from(self.lanes[k].crx.config().fc_interval) == interval
                    && self.lanes[k].crx_due < at + interval
                    && self.lanes[k]
                        .fc_last
                        .repeats(self.lanes[k].ctx.fctbs_q, self.lanes[k].crx.fccl_now())
            })
    }

    /// Applies every timer fire before the current cycle that was left to be applied lazily, so that the
    /// registers of every port are those of the reference at this cycle (for quiet jumps and observers).
    pub fn settle(&mut self) {
        let t = self.now;
        for p in 0..self.n {
            self.catch_up(p, t);
        }
        // A repeat left off only once its cycle has passed leaves now, with a look of its own.
        self.next_any = self.next_any.min(self.eg_wake.min());
    }

    pub(super) fn head_arrives(&mut self, p: usize, ps: PacketStart, t: u64, blk: &mut [u8; 16]) {
        let r = self.ports[p].rate;
        let d = ps.desc;
        let vl = usize::from(d.vl);
        let mut a = Arrival::new(r, t, ps.offset, d.wire_len);
        if vl >= usize::from(self.ports[p].nvl) {
            // No credit accounting exists for a VL the port lacks: count and ignore the packet.
            self.rx_errors += 1;
            return;
        }
        let k = p * self.v + vl;
        self.lanes[k].counters.rcv_pkts += 1;
        self.lanes[k].counters.rcv_bytes += u64::from(d.wire_len);
        blk[vl] += a.take_until(r, t) as u8;
        let out = self
            .lft
            .get(usize::from(d.dlid))
            .copied()
            .unwrap_or(NO_ROUTE);
        let out_vl = if out == NO_ROUTE {
            Sl2VlTable::VL_DROP
        } else {
            let table = match self.sl2vl_of.get(p * self.n + usize::from(out)) {
                Some(&k) => usize::from(k),
                None => 0,
            };
            self.sl2vl[table][usize::from(d.sl & 15)]
        };
        let drop = out == NO_ROUTE
            || out_vl == Sl2VlTable::VL_DROP
            || a.blocks() > self.mtu_blocks
            || a.blocks() == 0
            || (self.free_slots.0.is_empty() && self.slab.0.len() == self.slab.0.capacity());
        let mut ar = Arriving {
            a,
            vl: vl as u8,
            deferred: NONE,
        };
        if drop {
            self.lanes[k].counters.dropped += 1;
            ar.deferred = DROP;
        } else {
            let s = Slot {
                desc: d,
                next: NONE,
                in_vl: vl as u8,
                out,
                out_vl,
                marked: false,
            };
            // A freed slot, else the next never used (within the capacity reserved at construction: no
            // allocation, and pages the switch never needs are never touched).
            let slot = match self.free_slots.0.pop() {
                Some(f) => {
                    self.slab[f as usize] = s;
                    f
                }
                None => {
                    self.slab.0.push(s);
                    (self.slab.0.len() - 1) as u32
                }
            };
            if self.ports[p].store_forward & bit(usize::from(out)) != 0 && !ar.a.is_done() {
                ar.deferred = slot;
            } else {
                self.enqueue(p, slot, t);
            }
        }
        if ar.a.is_done() {
            self.arrival_done(p, &ar, t);
        } else {
            self.ports[p].arriving = Some(ar);
        }
    }

    pub(super) fn arrival_done(&mut self, p: usize, ar: &Arriving, t: u64) {
        if ar.deferred == DROP {
            self.lanes[p * self.v + usize::from(ar.vl)].free_pending += u32::from(ar.a.blocks());
        } else if ar.deferred != NONE {
            self.enqueue(p, ar.deferred, t);
        }
    }

    pub(super) fn enqueue(&mut self, inp: usize, slot: u32, t: u64) {
        let s = self.slab[slot as usize];
        let (out, vl) = (usize::from(s.out), usize::from(s.out_vl));
        let q = self.voq(inp, out, vl);
        if self.voq_ends[q].tail == NONE {
            self.voq_ends[q].head = slot;
        } else {
            let tail = self.voq_ends[q].tail as usize;
            self.slab[tail].next = slot;
        }
        self.voq_ends[q].tail = slot;
        let k = out * self.v + vl;
        if self.mark_at_enqueue & bit(out) != 0 {
            self.mark_on_enqueue(k, slot, t);
        }
        self.lanes[k].voq_mask |= 1u64 << inp;
        self.voq_fill[k * self.n + inp] += s.desc.blocks();
        self.lanes[k].fill_sum += u32::from(s.desc.blocks());
        self.eg_wake.lower(out, t + 1);
        self.mark_dirty(k);
    }

    /// The FECN decision of a packet joining the VoQs of output port-VL `k` (`MarkPoint::Enqueue`): the
    /// marker is stepped with the registered marking state, as the dequeue decision would be at the start.
    fn mark_on_enqueue(&mut self, k: usize, slot: u32, t: u64) {
        let mark_state = self.cong_seen(k, t).mark_state_o;
        let s = &mut self.slab[slot as usize];
        let mo = self.lanes[k].mark.step(&fecn_marker::In {
            rst_ni: true,
            pkt_valid_i: true,
            pkt_bytes_i: s.desc.wire_len,
            mark_state_i: mark_state,
        });
        s.marked = mo.mark_o;
        s.desc.fecn |= mo.mark_o;
        let len = s.desc.wire_len;
        self.count_decision(k, mark_state, len, mo.mark_o);
    }

    /// Counts a marking decision of output port-VL `k` (at whichever point it is taken): eligible when the
    /// port-VL was in the marking state and the packet at least Packet_Size long, and whether it was marked.
    pub(super) fn count_decision(
        &mut self,
        k: usize,
        mark_state: bool,
        wire_len: u16,
        marked: bool,
    ) {
        let min = u32::from(self.lanes[k].mark.config().packet_size) * 64;
        let c = &mut self.lanes[k].counters;
        c.eligible += u64::from(mark_state && u32::from(wire_len) >= min);
        c.marked += u64::from(marked);
    }
}
