//! Ingress of a [`Switch`]: block arrival, `credit_rx`, PFC watermarks, routing and VoQs (phase 2 of a cycle).

use super::*;

impl Switch {
    #[allow(clippy::needless_range_loop)] // vl indexes several per-VL arrays at once
    pub(super) fn ingress(&mut self, p: usize, t: u64) {
        let r = self.rate[p];
        let base = p * self.v;
        let mut blk = [0u8; 16];
        if let Some(mut ar) = self.arriving[p] {
            ar.a.absorb_before(r, t, &mut self.crx[base + usize::from(ar.vl)]);
            let got = ar.a.take_until(r, t);
            blk[usize::from(ar.vl)] += got as u8;
            if ar.a.is_done() {
                self.arrival_done(p, &ar, t);
                self.arriving[p] = None;
            } else {
                self.arriving[p] = Some(ar);
            }
        }
        if let Some(ps) = self.rx_pkt[p] {
            if self.arriving[p].is_some() {
                self.rx_errors += 1;
            } else {
                self.head_arrives(p, ps, t, &mut blk);
            }
        }
        let fc = self.rx_fc[p];
        let mut wake = NEVER;
        for vl in 0..usize::from(self.nvl[p]) {
            let k = base + vl;
            let fcv = fc.filter(|f| usize::from(f.vl) == vl);
            let free = self.free_pending[k].min(127);
            if !self.eager && blk[vl] == 0 && fcv.is_none() && free == 0 && self.crx_due[k] > t {
                wake = wake.min(self.crx_due[k]);
                continue;
            }
            let gap = t - self.crx_next[k];
            if gap > 0 {
                self.crx[k].skip(gap);
            }
            let o = self.crx[k].step(&credit_rx::In {
                rst_ni: true,
                blk_rx_i: blk[vl],
                fc_valid_i: fcv.is_some(),
                fc_fctbs_i: fcv.map_or(0, |f| f.fctbs),
                blk_free_i: free as u8,
            });
            self.free_pending[k] -= free;
            if o.overflow_o {
                self.counters[k].overflow += 1;
            }
            if self.pfc_on[p] {
                let used = self.crx[k].config().buf_blocks - self.crx[k].free_q;
                let q = self.pfc_quanta[p];
                if let Some(q) = self.pfc_rx[k].update(used, self.wm[k], q, self.pfc_half[p], t) {
                    self.pfc_pending[p] |= 1 << vl;
                    self.pfc_out_quanta[k] = q;
                    if q == 0 {
                        self.counters[k].resumes_sent += 1;
                    } else {
                        self.counters[k].pauses_sent += 1;
                    }
                    self.eg_wake.lower(p, self.ser[p].fc_ready_cycle(r, t + 1));
                }
            } else if o.fc_send_o {
                self.fc_pending[p] |= 1 << vl;
                self.fc_fccl[k] = o.fccl_o;
                self.eg_wake.lower(p, self.ser[p].fc_ready_cycle(r, t + 1));
            }
            self.crx_next[k] = t + 1;
            self.crx_due[k] = self.crx[k].next_event().map_or(NEVER, |e| t + 1 + e);
            if let Some(at) = self.pfc_rx[k].next_event() {
                self.crx_due[k] = self.crx_due[k].min(at.max(t + 1));
            }
            if self.free_pending[k] > 0 {
                self.crx_due[k] = t + 1;
            }
            wake = wake.min(self.crx_due[k]);
        }
        // The arrival's own next look is kept apart from the timers: it does not stop them being lazy.
        let mut arrival_wake = NEVER;
        if let Some(ar) = self.arriving[p] {
            let per_block = self.eager || self.pfc_on[p];
            let crx = &self.crx[base + usize::from(ar.vl)];
            // Queued already and its blocks move nothing but ABR and the free count: the tail needs no look
            // of its own. The blocks are counted at the port's next look, at the latest the packet's release
            // (which comes at or after the tail: a cut-through output is not faster).
            let tail_passive =
                ar.deferred == NONE && !per_block && crx.can_absorb(ar.a.remaining());
            if !tail_passive {
                arrival_wake = ar.a.wake(r, crx, per_block).unwrap_or(NEVER);
            }
        }
        self.fire_at.set(p, NEVER);
        let waits_for_timers_only = !self.eager
            && !self.pfc_on[p]
            && self.free_pending[base..base + usize::from(self.nvl[p])]
                .iter()
                .all(|&f| f == 0);
        if waits_for_timers_only && wake != NEVER {
            // Every VL's next event is its timer firing on inputs that are idle until the arrival's next
            // look (or carry only blocks that the arrival absorbs later, which clock `credit_rx` exactly as
            // idle inputs followed by an `absorb`): applied lazily (`catch_up`); the port needs a look only
            // when the flow-control packet can leave, or at the arrival's next look, whichever comes first.
            self.fire_at.set(p, wake);
            if !self.fire_repeats(p) {
                self.eg_wake
                    .lower(p, self.ser[p].fc_ready_cycle(r, wake + 1));
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
    pub(super) fn catch_up(&mut self, p: usize, t: u64) {
        if self.fire_at.get(p) >= t {
            return;
        }
        let base = p * self.v;
        let vls = base..base + usize::from(self.nvl[p]);
        // Whole periods of left-off repeats (see `period_start`): the first fire of the period the run
        // of them began at, if any. Looked for only where a jump can follow (two periods before `t`), so
        // a busy port, with a fire or two to apply, pays nothing for it.
        let mut period: Option<u64> = None;
        let interval = u64::from(self.crx[base].config().fc_interval);
        loop {
            let mut k = base;
            for j in base + 1..vls.end {
                if self.crx_due[j] < self.crx_due[k] {
                    k = j;
                }
            }
            let vl = k - base;
            let mut at = self.crx_due[k];
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
                            self.crx[j].skip(d);
                            self.crx_next[j] += d;
                            self.crx_due[j] += d;
                        }
                        self.ser[p].free_tick += d * self.rate[p].ticks_per_cycle();
                        at += d;
                    }
                    period = Some(at);
                } else {
                    period = Some(at);
                }
            }
            let o = self.crx[k].skip_then_idle_step(at - self.crx_next[k]);
            debug_assert!(o.fc_send_o, "a deferred credit_rx event is a timer fire");
            if o.fc_send_o {
                let repeat = self.fc_last[k].repeats(self.ctx[k].fctbs_q, o.fccl_o)
                    && self.repeats_off(p)
                    && self.fc_pending[p] == 0;
                self.fc_fccl[k] = o.fccl_o;
                // The cycle the reference sends it: the first the wire allows after the fire.
                let send = |sw: &Self| sw.ser[p].fc_ready_cycle(sw.rate[p], at + 1);
                if repeat {
                    let s = send(self);
                    if s < t {
                        // Left off (`set_fc_repeats_off`): only its wire time remains, from cycle `s`.
                        self.ser[p].start_fc(self.rate[p], s);
                    } else {
                        // Leaves now or later, as any other: its look (left out by `fire_repeats`).
                        self.fc_pending[p] |= 1 << vl;
                        self.eg_wake.lower(p, s);
                        period = None;
                    }
                } else {
                    // Not a repeat: `fire_repeats` was false when the look was planned, so the look
                    // is at its cycle, not before this step.
                    debug_assert!(send(self) >= t, "a flow-control packet would leave late");
                    self.fc_pending[p] |= 1 << vl;
                    period = None;
                }
            }
            self.crx_next[k] = at + 1;
            self.crx_due[k] = self.crx[k].next_event().map_or(NEVER, |e| at + 1 + e);
        }
        let next = (base + 1..vls.end).fold(self.crx_due[base], |m, k| m.min(self.crx_due[k]));
        self.fire_at.set(p, next);
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
        let vls = base..base + usize::from(self.nvl[p]);
        self.repeats_off(p)
            && self.fc_pending[p] == 0
            && self.ser[p].free_tick <= self.rate[p].tick_of(at + 1)
            && vls.into_iter().all(|k| {
                u64::from(self.crx[k].config().fc_interval) == interval
                    && self.crx_due[k] < at + interval
                    && self.fc_last[k].repeats(self.ctx[k].fctbs_q, self.crx[k].fccl_now())
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
        let r = self.rate[p];
        let d = ps.desc;
        let vl = usize::from(d.vl);
        let mut a = Arrival::new(r, t, ps.offset, d.wire_len);
        if vl >= usize::from(self.nvl[p]) {
            // No credit accounting exists for a VL the port lacks: count and ignore the packet.
            self.rx_errors += 1;
            return;
        }
        let k = p * self.v + vl;
        self.counters[k].rcv_pkts += 1;
        self.counters[k].rcv_bytes += u64::from(d.wire_len);
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
            self.counters[k].dropped += 1;
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
            if self.store_forward[p * self.n + usize::from(out)] && !ar.a.is_done() {
                ar.deferred = slot;
            } else {
                self.enqueue(p, slot, t);
            }
        }
        if ar.a.is_done() {
            self.arrival_done(p, &ar, t);
        } else {
            self.arriving[p] = Some(ar);
        }
    }

    pub(super) fn arrival_done(&mut self, p: usize, ar: &Arriving, t: u64) {
        if ar.deferred == DROP {
            self.free_pending[p * self.v + usize::from(ar.vl)] += u32::from(ar.a.blocks());
        } else if ar.deferred != NONE {
            self.enqueue(p, ar.deferred, t);
        }
    }

    pub(super) fn enqueue(&mut self, inp: usize, slot: u32, t: u64) {
        let s = self.slab[slot as usize];
        let (out, vl) = (usize::from(s.out), usize::from(s.out_vl));
        let q = self.voq(inp, out, vl);
        if self.voq_tail[q] == NONE {
            self.voq_head[q] = slot;
        } else {
            let tail = self.voq_tail[q] as usize;
            self.slab[tail].next = slot;
        }
        self.voq_tail[q] = slot;
        let k = out * self.v + vl;
        if self.mark_at_enqueue & bit(out) != 0 {
            self.mark_on_enqueue(k, slot);
        }
        self.voq_mask[k] |= 1u64 << inp;
        self.voq_fill[k * self.n + inp] += s.desc.blocks();
        self.eg_wake.lower(out, t + 1);
        self.mark_dirty(k);
    }

    /// The FECN decision of a packet joining the VoQs of output port-VL `k` (`MarkPoint::Enqueue`): the
    /// marker is stepped with the registered marking state, as the dequeue decision would be at the start.
    fn mark_on_enqueue(&mut self, k: usize, slot: u32) {
        let s = &mut self.slab[slot as usize];
        let mark_state = self.cong[k].outputs().mark_state_o;
        let mo = self.mark[k].step(&fecn_marker::In {
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
        let min = u32::from(self.mark[k].config().packet_size) * 64;
        let c = &mut self.counters[k];
        c.eligible += u64::from(mark_state && u32::from(wire_len) >= min);
        c.marked += u64::from(marked);
    }
}
