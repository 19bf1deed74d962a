//! The HCA's link port: it obeys IB credits (or, in RoCEv2 mode, PFC pause frames), sends the packet loaded
//! on each VL (the HCA loads each VL's next packet, [`Endpoint::load`]; a test rig loads copies the same
//! way), chooses among the VLs that can send with the port's VL arbiter (`rtl_model::blocks::vl_arb`, the block a
//! switch's output port uses, with the port's VLArbitrationTable), lets one VL's source go ahead of the
//! arbiter (the HCA's CNPs, [`Endpoint::set_first`]), sinks what it receives at a configurable drain rate, and exchanges flow-control packets by the same rules
//! as a switch port ([`rtl_model::link::FcPacket`]), using the same `credit_tx` / `credit_rx` blocks and the
//! same link layer (`rtl_model::link`).

use rtl_model::blocks::credit_rx::{self, CreditRx};
use rtl_model::blocks::credit_tx::{self, fits, CreditTx};
use rtl_model::blocks::vl_arb::{self, VlArb};
use rtl_model::clocked::Clocked;

use rtl_model::blocks::credit_rx::FcPolicy;
use rtl_model::link::fc::FcLast;
use rtl_model::link::packet::{FcPacket, PacketDesc, PacketStart};
use rtl_model::link::pfc::{self, PfcConfig, PfcRx, Watermarks, PAUSE_FRAME_BYTES};
use rtl_model::link::rate::LinkRate;
use rtl_model::link::serial::{Arrival, Serializer};
use rtl_model::link::ConfigError;
use rtl_model::mad::vlarb::VlArbTable;

/// What an endpoint puts on its link in one cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EndpointOut {
    /// A packet head.
    pub pkt: Option<PacketStart>,
    /// A flow-control packet.
    pub fc: Option<FcPacket>,
    /// A PFC pause frame (PFC mode).
    pub pause: Option<rtl_model::wire::pfc::Repr>,
}

/// Counters of an endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EndpointStats {
    /// Packets sent.
    pub sent_pkts: u64,
    /// Bytes sent.
    pub sent_bytes: u64,
    /// Packets received (tail in).
    pub recv_pkts: u64,
    /// Bytes received.
    pub recv_bytes: u64,
    /// Received packets with FECN set.
    pub recv_fecn: u64,
    /// Received packets with ECN CE (RoCEv2).
    pub recv_ce: u64,
    /// Cycles with a receive-buffer overflow (lossless violation by the switch).
    pub overflow: u64,
    /// Takes without credit (a bug of this endpoint if ever nonzero).
    pub credit_err: u64,
    /// XOFF frames sent (PFC mode).
    pub pauses_sent: u64,
    /// XON (pause 0) frames sent (PFC mode).
    pub resumes_sent: u64,
}

/// What the transmit side of an [`Endpoint`] step starts ([`Endpoint::tx_start`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TxStart {
    Nothing,
    Pause,
    Fc,
    /// The next packet of the source of this VL, which goes ahead of the arbiter ([`Endpoint::set_first`]).
    First(usize),
    /// The next packet of the VL the arbiter grants among these (sources with credit it can grant).
    Arbitrate(u16),
}

/// One data VL's state of an [`Endpoint`].
#[derive(Debug, Clone)]
struct Lane {
    ctx: CreditTx,
    crx: CreditRx,
    /// The FCCL of the flow-control packet pending on this VL.
    fc_fccl: u16,
    /// The last flow-control packet sent, for leaving off repeats.
    fc_last: FcLast,
    /// The packet loaded to go next on this VL ([`Endpoint::load`]).
    source: Option<PacketDesc>,
    /// Blocks received and not yet released.
    held: u32,
    pfc_rx: PfcRx,
    /// The quanta of the pause frame pending on this VL.
    pfc_q: u16,
    paused_until: u64,
}

/// An HCA-like link partner. See the module documentation.
///
/// `repr(C)`, the fields a step or a skip reads first: in a fabric of hundreds of HCAs each is cold when its
/// turn comes, and Rust's own order (by alignment) spread them over more cache lines than they fill.
#[derive(Debug, Clone)]
#[repr(C)]
pub struct Endpoint {
    now: u64,
    /// Sources other than `first` start no earlier than this cycle ([`Endpoint::set_hold_until`]).
    hold_until: u64,
    /// The tail cycle of the packet arriving (its last byte in): [`Arrival::wake`]'s answer while its blocks
    /// can be absorbed, worked out once per packet instead of at every look.
    tail: u64,
    /// [`Endpoint::arrival_look`] as of the last change of its inputs (the packet arriving, its VL's
    /// `credit_rx` free count, the PFC and drain modes): every `next_event` and every round of `skip` asks
    /// for it, and working it out takes a division; it changes only in steps and mode changes.
    look: Option<u64>,
    /// Per data VL, its registers together: a step reads several of them for the same VL, and one
    /// allocation keeps them in adjacent cache lines.
    lanes: Vec<Lane>,
    ser: Serializer,
    rate: LinkRate,
    vls: usize,
    arriving: Option<(Arrival, u8, bool)>,
    /// The VL whose source goes ahead of the arbiter, if any.
    first: Option<usize>,
    rx_fc: Option<FcPacket>,
    fc_pending: u16,
    /// The VLs with a packet loaded.
    src_mask: u16,
    /// The VLs `arb` can grant ([`vl_arb::Config::granted_vls`]).
    arb_vls: u16,
    pfc_pending: u8,
    /// Leave off timer-fired flow-control repeats ([`Endpoint::set_fc_repeats_off`]).
    fc_repeat_off: bool,
    drain: Option<LinkRate>,
    drain_acc: u64,
    pfc: Option<(Watermarks, u16, u64)>,
    rx_pause: Option<rtl_model::wire::pfc::Repr>,
    rx_pkt: Option<PacketStart>,
    buf_blocks: u16,
    /// The VL arbiter of the transmit side (stepped only with more than one data VL; boxed, as it is
    /// larger than the rest of the endpoint).
    arb: Box<VlArb>,
    stats: EndpointStats,
}

impl Endpoint {
    /// An endpoint on a link of `rate` with `vls` data VLs of `buf_blocks` receive buffer each, sending
    /// flow-control packets every `fc_interval` cycles and on change.
    pub fn new(
        rate: LinkRate,
        vls: u8,
        buf_blocks: u16,
        fc_interval: u16,
    ) -> Result<Self, ConfigError> {
        let rate = rate.checked("endpoint.rate")?;
        let err =
            |e: rtl_model::blocks::ConfigError| ConfigError::new("endpoint", "", e.to_string());
        let vls = usize::from(vls.clamp(1, 15));
        let mut lanes = Vec::with_capacity(vls);
        for _ in 0..vls {
            lanes.push(Lane {
                ctx: CreditTx::new(credit_tx::Config::default()).map_err(err)?,
                crx: CreditRx::new(credit_rx::Config {
                    policy: FcPolicy::PeriodicAndOnChange,
                    ..credit_rx::Config::new(buf_blocks, fc_interval)
                })
                .map_err(err)?,
                fc_fccl: 0,
                fc_last: FcLast::default(),
                source: None,
                held: 0,
                pfc_rx: PfcRx::default(),
                pfc_q: 0,
                paused_until: 0,
            });
        }
        let arb_cfg = vl_arb::Config::from_table(&VlArbTable::opensm_default());
        let arb_vls = arb_cfg.granted_vls();
        Ok(Endpoint {
            rate,
            vls,
            now: 0,
            lanes,
            ser: Serializer::default(),
            fc_pending: 0,
            fc_repeat_off: false,
            arriving: None,
            look: None,
            tail: 0,
            src_mask: 0,
            first: None,
            hold_until: 0,
            arb: Box::new(VlArb::new(arb_cfg).map_err(err)?),
            arb_vls,
            drain: None,
            drain_acc: 0,
            rx_pkt: None,
            rx_fc: None,
            stats: EndpointStats::default(),
            buf_blocks,
            pfc: None,
            pfc_pending: 0,
            rx_pause: None,
        })
    }

    /// The same endpoint in RoCEv2 mode: PFC with `cfg`'s watermarks on its receive buffers instead of
    /// credits, and pauses obeyed instead of credits when sending.
    pub fn with_pfc(mut self, cfg: PfcConfig, mtu_blocks: u16) -> Result<Self, ConfigError> {
        let wm = cfg.watermarks(self.buf_blocks, self.rate, mtu_blocks, "endpoint.pfc")?;
        let half = pfc::pause_cycles(self.rate, cfg.pause_quanta) / 2;
        self.pfc = Some((wm, cfg.pause_quanta, half));
        self.relook();
        Ok(self)
    }

    /// A pause frame arrives this cycle (PFC mode).
    pub fn rx_pause(&mut self, f: rtl_model::wire::pfc::Repr) {
        self.rx_pause = Some(f);
    }

    /// The port's VL arbitration: its VLArbitrationTable and VLHighLimit (default: opensm's, as for
    /// every port). The arbiter starts afresh.
    pub fn set_vl_arb(&mut self, t: &VlArbTable) -> Result<(), ConfigError> {
        let cfg = vl_arb::Config::from_table(t);
        self.arb_vls = cfg.granted_vls();
        *self.arb =
            VlArb::new(cfg).map_err(|e| ConfigError::new("endpoint", "vl_arb", e.to_string()))?;
        Ok(())
    }

    /// The VLs the port's arbiter can grant (a bit per VL): a source on any other VL never starts unless
    /// it goes first ([`Endpoint::set_first`]).
    pub fn arb_vls(&self) -> u16 {
        self.arb_vls
    }

    /// The source slot of `vl` (VLs beyond the port's data VLs share the last).
    fn slot(&self, vl: u8) -> usize {
        usize::from(vl).min(self.vls - 1)
    }

    /// Loads `d` to go next on its VL (its `vl` selects the credit and the slot, replacing what was loaded
    /// there): it starts as soon as the wire, its credit (or pause state) and the VL arbiter allow, and
    /// leaves the slot empty.
    pub fn load(&mut self, d: PacketDesc) {
        let vl = self.slot(d.vl);
        self.lanes[vl].source = Some(d);
        self.src_mask |= 1 << vl;
    }

    /// Whether a packet is loaded on `vl` and not yet started.
    pub fn loaded(&self, vl: u8) -> bool {
        self.lanes[self.slot(vl)].source.is_some()
    }

    /// Unloads every VL.
    pub fn stop_source(&mut self) {
        self.lanes.iter_mut().for_each(|l| l.source = None);
        self.src_mask = 0;
        self.first = None;
    }

    /// Unloads `vl` (and it no longer goes first).
    pub fn clear_source(&mut self, vl: u8) {
        let vl = self.slot(vl);
        self.lanes[vl].source = None;
        self.src_mask &= !(1 << vl);
        if self.first == Some(vl) {
            self.first = None;
        }
    }

    /// The packet loaded on `vl` goes ahead of the VL arbiter whenever it can start (it needs credit like any
    /// other, and the arbiter is not stepped for it); `None`: the arbiter alone chooses.
    pub fn set_first(&mut self, vl: Option<u8>) {
        self.first = vl.map(|v| self.slot(v));
    }

    /// Sources other than the one going first start no earlier than cycle `t` (a host injection cap).
    pub fn set_hold_until(&mut self, t: u64) {
        self.hold_until = t;
    }

    /// Received data leaves the buffer at `rate` bytes per cycle instead of at once when its tail is in.
    pub fn set_drain(&mut self, rate: Option<LinkRate>) {
        self.drain = rate;
        self.relook();
    }

    /// The memory a step reads first, as (address, bytes): its first VL's registers (see
    /// `Hca::hot_memory`).
    pub fn hot_memory(&self, f: &mut impl FnMut(*const u8, usize)) {
        if let Some(l) = self.lanes.first() {
            f((l as *const Lane).cast(), std::mem::size_of::<Lane>());
        }
    }

    /// Counters so far.
    pub fn stats(&self) -> EndpointStats {
        self.stats
    }

    /// Credit of `vl` towards the switch in blocks (`credit_tx` `avail_o`).
    pub fn credits_avail(&self, vl: usize) -> u16 {
        self.lanes
            .get(vl)
            .map_or(0, |l| credit_tx::avail(l.ctx.fccl_q, l.ctx.fctbs_q))
    }

    /// Free blocks of the receive buffer of `vl` (`credit_rx` `free_q`).
    pub fn rx_free(&self, vl: usize) -> u16 {
        // Less the blocks in by now that a sleeping endpoint has not counted yet (see `Arrival::wake`).
        let pending = match self.arriving {
            Some((a, v, _)) if usize::from(v) == vl && self.now > 0 => {
                a.pending_until(self.rate, self.now - 1)
            }
            _ => 0,
        };
        self.lanes
            .get(vl)
            .map_or(0, |l| l.crx.free_q - pending.min(l.crx.free_q))
    }

    /// A packet head arrives this cycle.
    pub fn rx_packet(&mut self, p: PacketStart) {
        self.rx_pkt = Some(p);
    }

    /// A flow-control packet arrives this cycle.
    pub fn rx_fc(&mut self, fc: FcPacket) {
        self.rx_fc = Some(fc);
    }

    /// The cycle the next [`Endpoint::step`] simulates.
    pub fn now(&self) -> u64 {
        self.now
    }

    /// Leaves off the flow-control packets that a timer fires and that repeat the last one sent (same
    /// FCTBS and FCCL, no packet head between), as the switch's `set_fc_repeats_off` does: no
    /// wake-up and no [`EndpointOut::fc`] for them, their wire time accounted in [`Endpoint::skip`]. Only
    /// with IB credits. Off by default.
    pub fn set_fc_repeats_off(&mut self, on: bool) {
        self.fc_repeat_off = on;
    }

    fn repeats_off(&self) -> bool {
        self.fc_repeat_off && self.pfc.is_none() && self.drain.is_none()
    }

    /// Whether the next timer fires' flow-control packets are repeats that need no wake-up: on every VL the
    /// last packet's FCTBS and FCCL are those of now, and nothing can move them before the fires (no packet
    /// arriving, no blocks held for release, nothing pending).
    fn fire_repeats(&self) -> bool {
        self.lanes[0].fc_last.is_some()
            && self.repeats_off()
            && self.fc_pending == 0
            && self.arriving.is_none()
            && self.rx_pkt.is_none()
            && self.lanes.iter().all(|l| l.held == 0)
            && (0..self.vls).all(|vl| {
                self.lanes[vl]
                    .fc_last
                    .repeats(self.lanes[vl].ctx.fctbs_q, self.lanes[vl].crx.fccl_now())
            })
    }

    /// Whether this cycle's timer fires may begin a period of left-off repeats in [`Endpoint::skip`]: a
    /// timer fires now, the endpoint leaves off repeats and has nothing pending, arriving or held, every
    /// VL's flow-control packet would repeat the last one, every VL shares one interval and fires within
    /// it from now, and the wire is free from the next cycle. Then the next `interval` cycles hold one fire
    /// per VL at the same offsets as the period after, and their packets take the wire at the same
    /// offsets: two such starts one interval apart (every fire between left off) make the stretch
    /// periodic. `interval` is the first VL's.
    fn period_start(&self, interval: u64) -> bool {
        self.repeats_off()
            && self.fc_pending == 0
            && self.arriving.is_none()
            && self.lanes.iter().all(|l| l.held == 0)
            && self.ser.free_tick <= self.rate.tick_of(self.now + 1)
            && self.lanes.iter().any(|l| l.crx.next_event() == Some(0))
            && (0..self.vls).all(|vl| {
                let c = &self.lanes[vl].crx;
                u64::from(c.config().fc_interval) == interval
                    && c.next_event().is_some_and(|e| e < interval)
                    && self.lanes[vl]
                        .fc_last
                        .repeats(self.lanes[vl].ctx.fctbs_q, c.fccl_now())
            })
    }

    /// Idle cycles before [`Endpoint::step`] can do anything with nothing handed in (`Some(0)`: the next step
    /// has work; `None`: never). Idle means: no block arrives, no flow-control or packet can start, nothing
    /// is held for release and no `credit_rx` timer or change is due, so a step would only count timers down.
    /// The drain-rate mode is never idle (its accumulator runs every cycle). In PFC mode a paused priority
    /// waits for its pause to run out, and an XOFF sent is refreshed at [`PfcRx::next_event`]; the buffer use
    /// the watermarks watch changes only in steps (every block arriving is one in PFC mode).
    ///
    /// With IB credits the receive side's own work (a packet's blocks coming in, releasing held blocks, a
    /// `credit_rx` timer or change firing) is not an event: it puts nothing on the link until the
    /// flow-control packet it causes leaves, at the earliest the cycle after a fire and two cycles after
    /// blocks come in or are released (the FCCL moves, then fires), and [`Endpoint::skip`] steps through it.
    pub fn next_event(&self) -> Option<u64> {
        let held = self.lanes.iter().any(|l| l.held > 0);
        let lazy = self.pfc.is_none();
        if self.rx_pkt.is_some()
            || self.rx_fc.is_some()
            || self.rx_pause.is_some()
            || self.drain.is_some()
            || (held && !lazy)
        {
            return Some(0);
        }
        let (t, r) = (self.now, self.rate);
        let mut at = u64::MAX;
        // The earliest cycle a control frame is wanted; it leaves at `fc_ready_cycle` of it. That is
        // `max(wire free, cycle)`, monotone in the cycle, so the minimum over the wants is taken first and
        // the ready cycle (a division) worked out once, not once per want.
        let mut fc_at = u64::MAX;
        if held {
            fc_at = t + 2;
        }
        if self.fc_pending != 0 || self.pfc_pending != 0 {
            fc_at = t;
        }
        let mut m = self.src_mask;
        while m != 0 {
            let vl = m.trailing_zeros() as usize;
            m &= m - 1;
            let first = self.first == Some(vl);
            if !first && self.arb_vls & (1 << vl) == 0 {
                continue;
            }
            let Some(src) = &self.lanes[vl].source else {
                continue;
            };
            let hold = if first { 0 } else { self.hold_until };
            match self.pfc {
                // Without credit nothing starts until a flow-control packet arrives (a hand-in, so a step).
                None => {
                    let tx = &self.lanes[vl].ctx;
                    if fits(tx.fccl_q, tx.fctbs_q, src.blocks() as u8) {
                        at = at.min(self.ser.packet_ready_cycle(r, t).max(hold));
                    }
                }
                Some(_) => {
                    at = at.min(
                        self.ser
                            .packet_ready_cycle(r, t)
                            .max(self.lanes[vl].paused_until)
                            .max(hold),
                    );
                }
            }
        }
        if self.pfc.is_some() {
            for p in self.lanes.iter().map(|l| &l.pfc_rx) {
                if let Some(e) = p.next_event() {
                    at = at.min(e.max(t));
                }
            }
        }
        if let Some(w) = self.arrival_look() {
            if lazy {
                fc_at = fc_at.min(w.saturating_add(2));
            } else {
                at = at.min(w);
            }
        }
        // A repeat's fire is not waited for: `skip` accounts its packet's wire time.
        let repeats = lazy && self.fire_repeats();
        for c in self.lanes.iter().map(|l| &l.crx) {
            if let Some(e) = c.next_event() {
                let fire = t.saturating_add(e);
                if !lazy {
                    at = at.min(fire);
                } else if !repeats {
                    fc_at = fc_at.min(fire.saturating_add(1));
                }
            }
        }
        if fc_at != u64::MAX {
            at = at.min(self.ser.fc_ready_cycle(r, fc_at));
        }
        (at != u64::MAX).then(|| at.saturating_sub(t))
    }

    /// Advances `n` cycles with nothing handed in; exact when `n` is at most [`Endpoint::next_event`]. The
    /// `credit_rx` timers move by their own exact `skip`; in a cycle with receive-side work of its own (held
    /// blocks to release, a `credit_rx` firing) the receive side of a step runs alone, as the transmit side
    /// has nothing to do before `next_event`. The caller must not skip further.
    pub fn skip(&mut self, n: u64) {
        if n == 0 {
            return;
        }
        debug_assert!(
            self.next_event().is_none_or(|e| e >= n),
            "skip past an event"
        );
        let end = self.now + n;
        let interval = u64::from(self.lanes[0].crx.config().fc_interval);
        if n <= 2 * interval && self.receive_quiet() {
            // Up to the arrival's tail, if a packet is arriving: the general loop takes it in there.
            let stop = self.look.map_or(end, |w| w.min(end));
            self.skip_quiet(stop, end);
            if self.now == end {
                return;
            }
        }
        // Whole periods of left-off repeats (see `period_start`): the cycle the run of them began at.
        // Looked for only where a jump can follow (two periods before `end`), so a short skip pays
        // nothing for it.
        let mut period: Option<u64> = None;
        while self.now < end {
            // The cycles to the first with receive-side work of its own (0: this one); one pass over the
            // `credit_rx` timers serves both the "due now" test and the distance.
            let mut k = match self.arrival_look() {
                Some(look) => (end - self.now).min(look.saturating_sub(self.now)),
                None => end - self.now,
            };
            if self.lanes.iter().any(|l| l.held > 0) {
                k = 0;
            }
            if k > 0 {
                for c in self.lanes.iter().map(|l| &l.crx) {
                    if let Some(e) = c.next_event() {
                        k = k.min(e);
                    }
                }
            }
            if k == 0 {
                // Nothing is handed in (else `next_event` is 0) and, as `next_event` bounds `n` by the
                // first cycle anything can leave, the transmit side of a step would start nothing and so
                // change nothing: the receive side alone is the whole step.
                debug_assert!(self.transmit_idle(), "an output in a skipped cycle");
                let look = match period {
                    None => end - self.now > 2 * interval,
                    Some(p0) => self.now == p0 + interval,
                };
                if look {
                    if !self.period_start(interval) {
                        period = None;
                    } else if period.is_some() {
                        // One whole period of left-off repeats from the last start to now, begun with
                        // the wire free: every period on repeats it, shifted. Jump the whole periods that
                        // end before `end`, leaving the last stretch to be stepped.
                        let m = (end - 1 - self.now) / interval;
                        if m > 0 {
                            let d = m * interval;
                            for c in self.lanes.iter_mut().map(|l| &mut l.crx) {
                                c.skip(d);
                            }
                            self.ser.free_tick += d * self.rate.ticks_per_cycle();
                            self.now += d;
                        }
                        period = Some(self.now);
                    } else {
                        period = Some(self.now);
                    }
                }
                self.receive(self.now, None, None);
                // A timer fired: its packet leaves at the first cycle the wire allows. A repeat whose
                // cycle lies in the skip is left off (`set_fc_repeats_off`) with its wire time.
                if !self.leave_off_repeats(end) {
                    period = None;
                }
                continue;
            }
            for c in self.lanes.iter_mut().map(|l| &mut l.crx) {
                c.skip(k);
            }
            self.now += k;
        }
    }

    /// Whether the receive side has nothing of its own before the arriving packet's tail, if any, but its
    /// `credit_rx` timers: no blocks held, IB credits without the drain-rate mode, and a packet arriving
    /// only if its blocks may be counted late (`CreditRx::can_absorb`; its look is then its tail). Then a
    /// cycle's receive side before the tail is each VL's `credit_rx` stepped on idle inputs, and only a
    /// timer fire sends anything: the arriving blocks change no FCCL (ABR rises as the free count falls),
    /// cannot overflow, and `can_absorb` stays true as they are counted (the remaining blocks fall with
    /// the free count), so they may be counted at the tail's step, or the next step, instead of at the
    /// fires (`Arrival::absorb_before` there takes every block in by then).
    fn receive_quiet(&self) -> bool {
        self.drain.is_none()
            && self.pfc.is_none()
            && self.lanes.iter().all(|l| l.held == 0)
            && self.arriving.as_ref().is_none_or(|(a, vl, _)| {
                !a.is_done() && self.lanes[usize::from(*vl)].crx.can_absorb(a.remaining())
            })
    }

    /// [`Endpoint::skip`] to `stop` (at most the skip's `end`) when [`Endpoint::receive_quiet`] holds and
    /// the skip is too short for a period jump: from fire to fire, each `credit_rx` moved to its fire and
    /// stepped there in one `skip_then_idle_step` (the step of [`Endpoint::receive`] with nothing in: the
    /// same state and outputs, see `CreditRx::skip_then_idle_step`), the fire's flow-control packets
    /// handled as the general loop handles them.
    fn skip_quiet(&mut self, stop: u64, end: u64) {
        while self.now < stop {
            let mut k = stop - self.now;
            for l in &self.lanes {
                if let Some(e) = l.crx.next_event() {
                    k = k.min(e);
                }
            }
            if self.now + k == stop {
                for l in &mut self.lanes {
                    l.crx.skip(k);
                }
                self.now = stop;
                return;
            }
            debug_assert!(self.transmit_idle(), "an output in a skipped cycle");
            for vl in 0..self.vls {
                let l = &mut self.lanes[vl];
                let o = l.crx.skip_then_idle_step(k);
                if o.fc_send_o {
                    self.fc_pending |= 1 << vl;
                    l.fc_fccl = o.fccl_o;
                }
            }
            self.now += k + 1;
            self.leave_off_repeats(end);
        }
    }

    /// After a cycle whose timers fired (`fc_pending`): sends the repeats whose cycle lies before `end`,
    /// left off with their wire time, the lowest VL first, each after the one before; false when a
    /// packet is left that is not such a repeat (it was waited for, see [`Endpoint::next_event`], so it
    /// and those behind it leave at or after `end`).
    #[inline(always)]
    fn leave_off_repeats(&mut self, end: u64) -> bool {
        while self.fc_pending != 0 {
            let vl = self.fc_pending.trailing_zeros() as usize;
            let s = self.ser.fc_ready_cycle(self.rate, self.now);
            let repeat = self.lanes[vl]
                .fc_last
                .repeats(self.lanes[vl].ctx.fctbs_q, self.lanes[vl].fc_fccl);
            if s < end && self.repeats_off() && repeat {
                self.ser.start_fc(self.rate, s);
                self.fc_pending &= !(1 << vl);
            } else {
                debug_assert!(s >= end, "a flow-control packet would leave late");
                return false;
            }
        }
        true
    }

    /// The next cycle the receive side must look at the packet arriving, if any ([`Arrival::wake`]; now
    /// when all its blocks are in). Kept in `look`: a skip leaves its inputs alone (a `credit_rx` skip
    /// moves only the timer and the last FCCL sent), so only steps and mode changes recompute it.
    fn arrival_look(&self) -> Option<u64> {
        debug_assert_eq!(self.look, self.arrival_look_fresh(), "stale arrival look");
        self.look
    }

    /// Recomputes `look` after its inputs may have changed.
    fn relook(&mut self) {
        self.look = self.arrival_look_fresh();
    }

    /// [`Endpoint::arrival_look`] worked out from the state.
    fn arrival_look_fresh(&self) -> Option<u64> {
        let (a, vl, _) = self.arriving.as_ref()?;
        let per_block = self.pfc.is_some() || self.drain.is_some();
        let crx = &self.lanes[usize::from(*vl)].crx;
        // `Arrival::wake` with the tail cycle kept (it divides to find it).
        let w = if !per_block && !a.is_done() && crx.can_absorb(a.remaining()) {
            Some(self.tail)
        } else {
            a.next_cycle()
        };
        debug_assert_eq!(w, a.wake(self.rate, crx, per_block), "tail cycle");
        Some(w.unwrap_or(self.now))
    }

    /// Flow-control state of VL 0 when the endpoint has one data VL and runs IB credits.
    pub fn fc_sync(&self) -> Option<rtl_model::link::fc::FcSync> {
        if self.vls != 1 || self.pfc.is_some() {
            return None;
        }
        let pending = (self.fc_pending & 1 != 0).then_some(self.lanes[0].fc_fccl);
        // Blocks in by now that a sleeping endpoint has not counted yet (see `Arrival::wake`), as a step
        // would.
        let mut crx = self.lanes[0].crx.clone();
        if let Some((mut a, _, _)) = self.arriving {
            a.absorb_before(self.rate, self.now, &mut crx);
        }
        Some(rtl_model::link::fc::FcSync::of(
            &crx,
            &self.lanes[0].ctx,
            pending,
        ))
    }

    /// One cycle: returns what goes on the link.
    #[allow(clippy::needless_range_loop)] // vl indexes several per-VL arrays at once
    pub fn step(&mut self) -> EndpointOut {
        let t = self.now;
        let r = self.rate;
        let mut out = EndpointOut::default();
        let fc_in = self.rx_fc.take().filter(|f| usize::from(f.vl) < self.vls);
        if let Some(f) = self.rx_pause.take() {
            for vl in 0..self.vls {
                if f.is_enabled(vl as u8) {
                    let q = f.quanta[vl];
                    self.lanes[vl].paused_until =
                        t + 1 + if q == 0 { 0 } else { pfc::pause_cycles(r, q) };
                }
            }
        }
        // Transmit side.
        let mut take = None;
        let start = self.tx_start();
        if start == TxStart::Pause {
            let vl = self.pfc_pending.trailing_zeros() as usize;
            self.pfc_pending &= !(1 << vl);
            self.ser.start_ctl(r, t, PAUSE_FRAME_BYTES);
            out.pause = Some(pfc::frame(vl as u8, self.lanes[vl].pfc_q));
            if self.lanes[vl].pfc_q == 0 {
                self.stats.resumes_sent += 1;
            } else {
                self.stats.pauses_sent += 1;
            }
        } else if start == TxStart::Fc {
            let vl = self.fc_pending.trailing_zeros() as usize;
            self.fc_pending &= !(1 << vl);
            self.ser.start_fc(r, t);
            let (fctbs, fccl) = (self.lanes[vl].ctx.fctbs_q, self.lanes[vl].fc_fccl);
            // A repeat is left off however it came to be sent (here or in `skip`).
            let repeat = self.lanes[vl].fc_last.sent(fctbs, fccl);
            if !(repeat && self.repeats_off()) {
                out.fc = Some(FcPacket {
                    vl: vl as u8,
                    fctbs,
                    fccl,
                });
            }
        } else if let TxStart::First(_) | TxStart::Arbitrate(_) = start {
            let vl = match start {
                TxStart::First(vl) => vl,
                TxStart::Arbitrate(cand) => self.arbitrate(cand),
                _ => unreachable!(),
            };
            let d = self.lanes[vl]
                .source
                .take()
                .expect("a VL with its source bit has a packet loaded");
            self.src_mask &= !(1 << vl);
            if self.first == Some(vl) {
                self.first = None;
            }
            let blocks = d.blocks() as u8;
            let (offset, _) = self.ser.start_packet(r, t, d.wire_len);
            for l in &mut self.lanes {
                l.fc_last.forget();
            }
            out.pkt = Some(PacketStart { desc: d, offset });
            self.stats.sent_pkts += 1;
            self.stats.sent_bytes += u64::from(d.wire_len);
            if self.pfc.is_none() {
                take = Some((vl, blocks));
            }
        }
        for vl in 0..self.vls {
            let fc = fc_in.filter(|f| usize::from(f.vl) == vl);
            let tk = take.filter(|&(v, _)| v == vl);
            if fc.is_none() && tk.is_none() {
                continue;
            }
            let o = self.lanes[vl].ctx.step(&credit_tx::In {
                rst_ni: true,
                fc_valid_i: fc.is_some(),
                fc_fccl_i: fc.map_or(0, |f| f.fccl),
                req_valid_i: tk.is_some(),
                req_blocks_i: tk.map_or(0, |x| x.1),
                take_i: tk.is_some(),
            });
            if o.err_o {
                self.stats.credit_err += 1;
            }
        }
        let rx_pkt = self.rx_pkt.take();
        self.receive(t, fc_in, rx_pkt);
        out
    }

    /// What the transmit side of a step now starts, after a pause frame handed in was applied: a pause
    /// frame first, then a flow-control packet, then the source's next packet when the link and its credit
    /// (or pause state) allow it. The one statement of [`Endpoint::step`]'s start conditions, which
    /// [`Endpoint::skip`]'s bound is checked against too.
    #[inline(always)]
    fn tx_start(&self) -> TxStart {
        let (t, r) = (self.now, self.rate);
        if self.pfc_pending != 0 && self.ser.can_start_fc(r, t) {
            return TxStart::Pause;
        }
        if self.fc_pending != 0 && self.ser.can_start_fc(r, t) {
            return TxStart::Fc;
        }
        if self.src_mask == 0 || !self.ser.can_start_packet(r, t) {
            return TxStart::Nothing;
        }
        // The VLs whose source has credit (or is not paused).
        let mut ok = 0u16;
        let mut m = self.src_mask;
        while m != 0 {
            let vl = m.trailing_zeros() as usize;
            m &= m - 1;
            let credit = match (&self.pfc, &self.lanes[vl].source) {
                (_, None) => false,
                (Some(_), Some(_)) => self.lanes[vl].paused_until <= t,
                (None, Some(src)) => {
                    let tx = &self.lanes[vl].ctx;
                    fits(tx.fccl_q, tx.fctbs_q, src.blocks() as u8)
                }
            };
            if credit {
                ok |= 1 << vl;
            }
        }
        if let Some(f) = self.first {
            if ok & (1 << f) != 0 {
                return TxStart::First(f);
            }
            ok &= !(1 << f);
        }
        if t < self.hold_until {
            return TxStart::Nothing;
        }
        let cand = ok & self.arb_vls;
        if cand == 0 {
            TxStart::Nothing
        } else {
            TxStart::Arbitrate(cand)
        }
    }

    /// Steps the VL arbiter with the sources of `cand` (each with credit, each grantable) as its requests:
    /// the VL it grants. Work conserving, so it grants one of them. With one data VL the grant is that VL
    /// whatever the arbiter's state, and no other VL ever asks, so the arbiter is not stepped.
    fn arbitrate(&mut self, cand: u16) -> usize {
        if self.vls == 1 {
            return 0;
        }
        let mut len = [0u8; 16];
        let mut m = cand;
        while m != 0 {
            let vl = m.trailing_zeros() as usize;
            m &= m - 1;
            if let Some(src) = &self.lanes[vl].source {
                len[vl] = src.blocks() as u8;
            }
        }
        let o = self.arb.step(&vl_arb::In {
            rst_ni: true,
            ready_i: true,
            req_i: cand,
            len_i: len,
            credit_ok_i: cand,
            hold_i: false,
        });
        debug_assert!(o.gnt_valid_o && cand & (1 << o.gnt_vl_o) != 0);
        usize::from(o.gnt_vl_o)
    }

    /// Whether the transmit side of a step now would do nothing: nothing handed in and nothing to start
    /// ([`Endpoint::tx_start`]). Checks [`Endpoint::skip`]'s bound.
    fn transmit_idle(&self) -> bool {
        let handed = self.rx_pkt.is_some() || self.rx_fc.is_some() || self.rx_pause.is_some();
        !handed && self.tx_start() == TxStart::Nothing
    }

    /// The receive side of a step at `t` (the cycle `now` simulates): the packet arriving and `rx_pkt`
    /// take their blocks, held blocks are released, each VL's `credit_rx` steps (with `fc_in`'s FCTBS), and
    /// a flow-control packet or pause it asks for is queued; then the clock moves on. It puts nothing on the
    /// link by itself, which lets [`Endpoint::skip`] run it alone in cycles whose transmit side has nothing
    /// to do (there a whole step cost about 356 instructions, the receive side alone about 219:
    /// `clos648-shift-cc`, callgrind).
    #[inline(always)]
    #[allow(clippy::needless_range_loop)] // vl indexes several per-VL arrays at once
    fn receive(&mut self, t: u64, fc_in: Option<FcPacket>, rx_pkt: Option<PacketStart>) {
        let r = self.rate;
        let mut blk = [0u8; 16];
        // In place: taking the arrival out and putting it back copied it twice a step.
        if let Some((a, vl, fecn)) = &mut self.arriving {
            let (vl, fecn) = (*vl, *fecn);
            a.absorb_before(r, t, &mut self.lanes[usize::from(vl)].crx);
            blk[usize::from(vl)] += a.take_until(r, t) as u8;
            if a.is_done() {
                let blocks = a.blocks();
                self.arriving = None;
                self.packet_in(vl, blocks, fecn);
            }
        }
        if let Some(p) = rx_pkt {
            let vl = p.desc.vl.min(self.vls as u8 - 1);
            if p.desc.ecn == 3 {
                self.stats.recv_ce += 1;
            }
            let mut a = Arrival::new(r, t, p.offset, p.desc.wire_len);
            self.tail = a.tail_cycle(r);
            blk[usize::from(vl)] += a.take_until(r, t) as u8;
            self.stats.recv_bytes += u64::from(p.desc.wire_len);
            if a.is_done() {
                self.packet_in(vl, a.blocks(), p.desc.fecn);
            } else {
                self.arriving = Some((a, vl, p.desc.fecn));
            }
        }
        let mut drain_blocks = match self.drain {
            None => u32::MAX,
            Some(d) => {
                self.drain_acc += u64::from(d.num);
                let per_block = 64 * u64::from(d.den);
                let n = self.drain_acc / per_block;
                self.drain_acc %= per_block;
                if self.lanes.iter().all(|l| l.held == 0) {
                    self.drain_acc = 0;
                }
                n as u32
            }
        };
        for vl in 0..self.vls {
            let fc = fc_in.filter(|f| usize::from(f.vl) == vl);
            // Blocks received this cycle stay for at least this cycle.
            let drainable = self.lanes[vl].held.saturating_sub(u32::from(blk[vl]));
            let free = drainable.min(drain_blocks).min(127);
            drain_blocks -= free;
            self.lanes[vl].held -= free;
            let o = self.lanes[vl].crx.step(&credit_rx::In {
                rst_ni: true,
                blk_rx_i: blk[vl],
                fc_valid_i: fc.is_some(),
                fc_fctbs_i: fc.map_or(0, |f| f.fctbs),
                blk_free_i: free as u8,
            });
            if o.overflow_o {
                self.stats.overflow += 1;
            }
            if let Some((wm, q, half)) = self.pfc {
                let used = self.buf_blocks - self.lanes[vl].crx.free_q;
                if let Some(q) = self.lanes[vl].pfc_rx.update(used, wm, q, half, t) {
                    self.pfc_pending |= 1 << vl;
                    self.lanes[vl].pfc_q = q;
                }
            } else if o.fc_send_o {
                self.fc_pending |= 1 << vl;
                self.lanes[vl].fc_fccl = o.fccl_o;
            }
        }
        self.now += 1;
        self.relook();
    }

    fn packet_in(&mut self, vl: u8, blocks: u16, fecn: bool) {
        self.lanes[usize::from(vl)].held += u32::from(blocks);
        self.stats.recv_pkts += 1;
        if fecn {
            self.stats.recv_fecn += 1;
        }
    }
}

#[cfg(test)]
#[path = "port_tests.rs"]
mod tests;
