//! The switch: ingress, VoQs, VL arbitration and crossbar, egress, credits and congestion control, stepped per
//! clock and composed of the `rtl_model` blocks.
//!
//! # Port interface
//! Before each [`Switch::step`] the caller hands in what arrives on each port in that cycle: at most one packet
//! head ([`Switch::rx_packet`], a [`PacketStart`]) and at most one flow-control packet ([`Switch::rx_fc`]).
//! The rest of a packet follows at the port's exact link rate; the switch counts its blocks itself
//! ([`crate::link::Arrival`]). `step` returns what each port puts on its link in that cycle ([`TxEvent`]s); a
//! fabric delays them by the link latency and hands them to the far end the same way.
//!
//! # One cycle
//! The cycle's work runs in phases so that the order of ports never changes a result:
//! 0. Egress completions: an output whose packet's last byte leaves this cycle releases the packet's input
//!    buffer blocks (they reach `credit_rx` in phase 2) and the input's read slot (internal speed-up).
//! 1. Egress: received FCCLs reach `credit_tx` (effective next cycle, as the block latches them); a pending
//!    flow-control packet goes first when the wire is free at a cycle boundary; otherwise, when the wire frees
//!    this cycle, `vl_arb` picks a VL among those whose round-robin-chosen input head fits the credit
//!    (`credit_tx::fits`); the packet's credit is taken, `fecn_marker` decides its FECN from `cong_detect`'s
//!    registered marking state, and its head leaves with the output VL in its LRH.
//! 2. Ingress: arriving blocks, received FCTBSs and released blocks reach `credit_rx`; a new head is routed
//!    (LFT, SL2VL) and queued in its VoQ. Queued packets are visible to arbitration from the next cycle.
//! 3. Detection: every `cong_detect` whose inputs (the VoQ fills of its output-VL, its credit) changed this
//!    cycle is clocked; its registered outputs drive marking from the next cycle. A detector whose inputs
//!    did not change would latch the same values, so skipping it is exact.
//!
//! # Designer choices, named
//! - Virtual cut-through: a packet joins its VoQ when its head arrives, unless its output link is faster than
//!   its input link, in which case it joins when its tail has arrived (the output could otherwise overtake
//!   the input: [`Switch`] store-and-forwards exactly then).
//! - A packet's input-buffer blocks are released when its last byte has left the output (not block by block).
//! - VoQ fill counts a packet's whole length from the time it joins the VoQ until it starts at the output.
//! - Internal speed-up (`PortConfig::speedup`): how many outputs one input can feed at once.
//! - Flow-control packets occupy the wire (6 bytes), start on a cycle boundary after the previous packet's
//!   last byte, and go before waiting data; one per cycle per port, lowest VL first.
//! - Drops (never in a correctly configured lossless run, and counted): no LFT entry, SL mapped to VL15, a
//!   packet longer than the MTU, an input VL the port lacks. Their blocks still use and then free credit.
//!
//! # Cost
//! Blocks are clocked only when their inputs are not idle or a timer of theirs expires; idle `credit_rx`
//! blocks are fast-forwarded with their exact `skip`. A cycle in which nothing is due costs a comparison.

use rtl_model::blocks::cong_detect::{self, CongDetect};
use rtl_model::blocks::credit_rx::{self, CreditRx};
use rtl_model::blocks::credit_tx::{self, fits, CreditTx};
use rtl_model::blocks::fecn_marker::{self, FecnMarker};
use rtl_model::blocks::vl_arb::{self, ArbEntry, VlArb};
use rtl_model::clocked::Clocked;
use rtl_model::mad::sl2vl::Sl2VlTable;

use crate::config::{mtu_packet_blocks, ConfigError, RoceDetect, SwitchConfig};
use crate::link::{Arrival, Serializer};
use crate::observe::{LazyCycles, PortVlCounters, PortVlSignals};
use crate::packet::{FcPacket, PacketDesc, PacketStart, TxEvent};
use crate::pfc::{self, PfcRx, Watermarks, PAUSE_FRAME_BYTES};
use crate::rate::LinkRate;

const NONE: u32 = u32::MAX;
const NEVER: u64 = u64::MAX;
const NO_ROUTE: u8 = u8::MAX;
/// `Arriving::deferred` of a packet being dropped: its blocks are freed when its tail is in.
const DROP: u32 = NONE - 1;

/// A hand-in the switch refuses: the caller (the fabric) broke the port interface. Counted, never a panic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RxError {
    /// No such port.
    #[error("port {0} does not exist")]
    NoSuchPort(usize),
    /// A second packet head (or FC packet) on the port in one cycle.
    #[error("port {0}: two hand-ins of one kind in one cycle")]
    TwoInOneCycle(usize),
    /// A head arrived before the previous packet's last block.
    #[error("port {0}: packet head while the previous packet is still arriving")]
    Overlap(usize),
    /// The sub-cycle offset is not below the rate's ticks per cycle.
    #[error("port {0}: offset {1} is not below the link's ticks per cycle")]
    BadOffset(usize, u32),
    /// A pause frame on a port in IB mode.
    #[error("port {0}: pause frame on an IB (credit) port")]
    NotPfc(usize),
    /// The FC packet names a VL the port lacks.
    #[error("port {0}: flow-control packet for VL {1}, which the port lacks")]
    BadVl(usize, u8),
}

/// A preallocated vector whose clone keeps the capacity (a derived clone would shrink it to the length, and
/// the clone's first busy cycles would allocate).
#[derive(Debug)]
struct PreVec<T>(Vec<T>);

impl<T: Clone> Clone for PreVec<T> {
    fn clone(&self) -> Self {
        let mut v = Vec::with_capacity(self.0.capacity());
        v.extend_from_slice(&self.0);
        PreVec(v)
    }
}

#[derive(Debug, Clone, Copy)]
struct Slot {
    desc: PacketDesc,
    next: u32,
    in_vl: u8,
    out: u8,
    out_vl: u8,
}

#[derive(Debug, Clone, Copy)]
struct Inflight {
    inp: u8,
    in_vl: u8,
    blocks: u16,
    end: u64,
}

#[derive(Debug, Clone, Copy)]
struct Arriving {
    a: Arrival,
    vl: u8,
    /// Slot to enqueue when the tail is in (store-and-forward), or NONE.
    deferred: u32,
}

/// The switch. See the module documentation.
#[derive(Debug, Clone)]
pub struct Switch {
    cfg: SwitchConfig,
    n: usize,
    /// VL stride of per-(port, VL) arrays: the most data VLs of any port.
    v: usize,
    now: u64,
    mtu_blocks: u16,
    rate: Vec<LinkRate>,
    nvl: Vec<u8>,
    speedup: Vec<u8>,
    lft: Vec<u8>,
    sl2vl: Vec<[u8; 16]>,
    store_forward: Vec<bool>,

    crx: Vec<CreditRx>,
    crx_next: Vec<u64>,
    crx_due: Vec<u64>,
    ctx: Vec<CreditTx>,
    arb: Vec<VlArb>,
    cong: Vec<CongDetect>,
    mark: Vec<FecnMarker>,

    rx_pkt: Vec<Option<PacketStart>>,
    rx_fc: Vec<Option<FcPacket>>,
    touched: PreVec<u8>,
    arriving: Vec<Option<Arriving>>,
    free_pending: Vec<u32>,
    reads: Vec<u8>,
    saturated: u64,

    slab: Vec<Slot>,
    free_slots: PreVec<u32>,
    voq_head: Vec<u32>,
    voq_tail: Vec<u32>,
    voq_fill: Vec<u16>,
    voq_mask: Vec<u64>,
    rr: Vec<u8>,

    ser: Vec<Serializer>,
    inflight: Vec<Option<Inflight>>,
    fc_pending: Vec<u16>,
    fc_fccl: Vec<u16>,

    eg_wake: Vec<u64>,
    in_wake: Vec<u64>,
    next_any: u64,
    cong_dirty: Vec<bool>,
    dirty_list: PreVec<u32>,
    events: PreVec<TxEvent>,

    counters: Vec<PortVlCounters>,
    wait: Vec<LazyCycles>,
    cong_time: Vec<LazyCycles>,
    last_start: Vec<(u64, bool)>,
    last_desc: Vec<Option<PacketDesc>>,
    rx_errors: u64,
    work_cycles: u64,
    eager: bool,

    pfc_on: Vec<bool>,
    roce_detect: Vec<RoceDetect>,
    wm: Vec<Watermarks>,
    pfc_quanta: Vec<u16>,
    pfc_half: Vec<u64>,
    pfc_rx: Vec<PfcRx>,
    pfc_pending: Vec<u8>,
    pfc_out_quanta: Vec<u16>,
    paused_until: Vec<u64>,
    pause_seen: Vec<bool>,
    victim_hold: Vec<u64>,
    rx_pause: Vec<Option<rtl_model::wire::pfc::Repr>>,
}

fn block_err(setting: String) -> impl FnOnce(rtl_model::blocks::ConfigError) -> ConfigError {
    move |e| ConfigError::new(setting, "", e.to_string())
}

impl Switch {
    /// Validates `cfg` and builds the switch in its reset state.
    pub fn new(cfg: SwitchConfig) -> Result<Self, ConfigError> {
        cfg.validate()?;
        let n = cfg.ports.len();
        let v = cfg
            .ports
            .iter()
            .map(|p| usize::from(p.data_vls))
            .max()
            .unwrap_or(1);
        let nv = n * v;
        let mut crx = Vec::with_capacity(nv);
        let mut ctx = Vec::with_capacity(nv);
        let mut cong = Vec::with_capacity(nv);
        let mut mark = Vec::with_capacity(nv);
        let mut arb = Vec::with_capacity(n);
        let mut slots = 0usize;
        for (p, pc) in cfg.ports.iter().enumerate() {
            for vl in 0..v {
                let buf = pc.vl_buf_blocks.get(vl).copied().unwrap_or(1);
                if vl < usize::from(pc.data_vls) {
                    slots += usize::from(buf);
                }
                // A PFC port uses credit_rx only as its buffer model: its packets are never sent, so its timer
                // is set as slow as it goes.
                let (policy, interval) = match pc.pfc {
                    None => (cfg.fc_policy.into(), pc.fc_interval),
                    Some(_) => (credit_rx::FcPolicy::Periodic, u16::MAX),
                };
                crx.push(
                    CreditRx::new(credit_rx::Config {
                        policy,
                        ..credit_rx::Config::new(buf, interval)
                    })
                    .map_err(block_err(format!("ports[{p}].vl_buf_blocks[{vl}]")))?,
                );
                ctx.push(
                    CreditTx::new(credit_tx::Config::default())
                        .map_err(block_err(format!("ports[{p}]")))?,
                );
                cong.push(
                    CongDetect::new(pc.cc.detect_config(buf))
                        .map_err(block_err(format!("ports[{p}].cc")))?,
                );
                mark.push(
                    FecnMarker::new(pc.cc.marker_config())
                        .map_err(block_err(format!("ports[{p}].cc")))?,
                );
            }
            let conv = |t: &[rtl_model::mad::vlarb::VlArbEntry]| -> Vec<ArbEntry> {
                t.iter().map(|e| ArbEntry::new(e.vl, e.weight)).collect()
            };
            arb.push(
                VlArb::new(vl_arb::Config {
                    high: conv(&pc.vlarb.high),
                    low: conv(&pc.vlarb.low),
                    vl_high_limit: pc.vlarb.high_limit,
                })
                .map_err(block_err(format!("ports[{p}].vlarb")))?,
            );
        }
        let mut lft = vec![NO_ROUTE; cfg.lft.len()];
        for (d, e) in cfg.lft.iter().enumerate() {
            if let Some(p) = e {
                lft[d] = *p;
            }
        }
        let mut sl2vl = Vec::with_capacity(n * n);
        let mut store_forward = Vec::with_capacity(n * n);
        for i in 0..n {
            for o in 0..n {
                sl2vl.push(cfg.sl2vl_of(i, o).vl);
                store_forward.push(!cfg.ports[o].rate.le(cfg.ports[i].rate));
            }
        }
        let slab_cap = slots + n;
        let mtu_blocks = mtu_packet_blocks(cfg.mtu);
        let mut wm = Vec::with_capacity(nv);
        for (p, pc) in cfg.ports.iter().enumerate() {
            for vl in 0..v {
                let buf = pc.vl_buf_blocks.get(vl).copied().unwrap_or(1);
                wm.push(match (&pc.pfc, vl < usize::from(pc.data_vls)) {
                    (Some(c), true) => {
                        c.watermarks(buf, pc.rate, mtu_blocks, &format!("ports[{p}].pfc"))?
                    }
                    _ => Watermarks {
                        xoff: u16::MAX,
                        xon: 0,
                    },
                });
            }
        }
        let sw = Switch {
            n,
            v,
            now: 0,
            mtu_blocks: mtu_packet_blocks(cfg.mtu),
            rate: cfg.ports.iter().map(|p| p.rate).collect(),
            nvl: cfg.ports.iter().map(|p| p.data_vls).collect(),
            speedup: cfg.ports.iter().map(|p| p.speedup).collect(),
            lft,
            sl2vl,
            store_forward,
            crx,
            crx_next: vec![0; nv],
            crx_due: vec![0; nv],
            ctx,
            arb,
            cong,
            mark,
            rx_pkt: vec![None; n],
            rx_fc: vec![None; n],
            touched: PreVec(Vec::with_capacity(2 * n)),
            arriving: vec![None; n],
            free_pending: vec![0; nv],
            reads: vec![0; n],
            saturated: 0,
            slab: vec![
                Slot {
                    desc: PacketDesc::default(),
                    next: NONE,
                    in_vl: 0,
                    out: 0,
                    out_vl: 0,
                };
                slab_cap
            ],
            free_slots: PreVec((0..slab_cap as u32).rev().collect()),
            voq_head: vec![NONE; n * nv],
            voq_tail: vec![NONE; n * nv],
            voq_fill: vec![0; n * nv],
            voq_mask: vec![0; nv],
            rr: vec![0; nv],
            ser: vec![Serializer::default(); n],
            inflight: vec![None; n],
            fc_pending: vec![0; n],
            fc_fccl: vec![0; nv],
            eg_wake: vec![NEVER; n],
            in_wake: vec![0; n],
            next_any: 0,
            cong_dirty: vec![false; nv],
            dirty_list: PreVec(Vec::with_capacity(nv)),
            events: PreVec(Vec::with_capacity(2 * n)),
            counters: vec![PortVlCounters::default(); nv],
            wait: vec![LazyCycles::default(); nv],
            cong_time: vec![LazyCycles::default(); nv],
            last_start: vec![(NEVER, false); nv],
            last_desc: vec![None; nv],
            rx_errors: 0,
            work_cycles: 0,
            eager: false,
            pfc_on: cfg.ports.iter().map(|p| p.pfc.is_some()).collect(),
            roce_detect: cfg.ports.iter().map(|p| p.cc.roce_detect).collect(),
            wm,
            pfc_quanta: cfg
                .ports
                .iter()
                .map(|p| p.pfc.map_or(0, |c| c.pause_quanta))
                .collect(),
            pfc_half: cfg
                .ports
                .iter()
                .map(|p| {
                    p.pfc
                        .map_or(0, |c| pfc::pause_cycles(p.rate, c.pause_quanta) / 2)
                })
                .collect(),
            pfc_rx: vec![PfcRx::default(); nv],
            pfc_pending: vec![0; n],
            pfc_out_quanta: vec![0; nv],
            paused_until: vec![0; nv],
            pause_seen: vec![false; nv],
            victim_hold: cfg
                .ports
                .iter()
                .map(|p| p.pfc.map_or(0, |c| u64::from(c.victim_hold)))
                .collect(),
            rx_pause: vec![None; n],
            cfg,
        };
        Ok(sw)
    }

    /// The configuration.
    pub fn config(&self) -> &SwitchConfig {
        &self.cfg
    }

    /// Number of ports.
    pub fn ports(&self) -> usize {
        self.n
    }

    /// The cycle the next [`Switch::step`] simulates.
    pub fn now(&self) -> u64 {
        self.now
    }

    /// Reference mode for tests: every port's egress and ingress and every block are clocked every cycle,
    /// with no activity tracking and no fast-forward of `credit_rx`. Results must not differ from the
    /// default mode (a property test compares them); only the cost does.
    pub fn set_eager(&mut self, on: bool) {
        self.eager = on;
    }

    /// Cycles that did any work (the rest cost one comparison): a cost measure that tests can pin down.
    pub fn work_cycles(&self) -> u64 {
        self.work_cycles
    }

    /// Hand-ins refused so far ([`RxError`]).
    pub fn rx_errors(&self) -> u64 {
        self.rx_errors
    }

    fn touch(&mut self, port: usize) {
        if self.rx_pkt[port].is_none()
            && self.rx_fc[port].is_none()
            && self.rx_pause[port].is_none()
        {
            self.touched.0.push(port as u8);
        }
    }

    /// A packet head arrives on `port` in the current cycle.
    pub fn rx_packet(&mut self, port: usize, start: PacketStart) -> Result<(), RxError> {
        let r = self.check_rx(port, self.rx_pkt.get(port).is_some_and(|x| x.is_some()));
        let r = r.and_then(|_| {
            if u64::from(start.offset) >= self.rate[port].ticks_per_cycle() {
                Err(RxError::BadOffset(port, start.offset))
            } else {
                Ok(())
            }
        });
        if r.is_ok() {
            self.touch(port);
            self.rx_pkt[port] = Some(start);
        } else {
            self.rx_errors += 1;
        }
        r
    }

    /// A flow-control packet arrives on `port` in the current cycle.
    pub fn rx_fc(&mut self, port: usize, fc: FcPacket) -> Result<(), RxError> {
        let r = self.check_rx(port, self.rx_fc.get(port).is_some_and(|x| x.is_some()));
        let r = r.and_then(|_| {
            if fc.vl >= self.nvl[port] {
                Err(RxError::BadVl(port, fc.vl))
            } else {
                Ok(())
            }
        });
        if r.is_ok() {
            self.touch(port);
            self.rx_fc[port] = Some(fc);
        } else {
            self.rx_errors += 1;
        }
        r
    }

    /// A PFC pause frame arrives on `port` (a RoCEv2-mode port) in the current cycle. Priorities the port
    /// lacks are ignored; a frame on an IB port is refused.
    pub fn rx_pause(
        &mut self,
        port: usize,
        frame: rtl_model::wire::pfc::Repr,
    ) -> Result<(), RxError> {
        let r = self.check_rx(port, self.rx_pause.get(port).is_some_and(|x| x.is_some()));
        let r = r.and_then(|_| {
            if self.pfc_on[port] {
                Ok(())
            } else {
                Err(RxError::NotPfc(port))
            }
        });
        if r.is_ok() {
            self.touch(port);
            self.rx_pause[port] = Some(frame);
        } else {
            self.rx_errors += 1;
        }
        r
    }

    fn check_rx(&self, port: usize, taken: bool) -> Result<(), RxError> {
        if port >= self.n {
            Err(RxError::NoSuchPort(port))
        } else if taken {
            Err(RxError::TwoInOneCycle(port))
        } else {
            Ok(())
        }
    }

    /// Idle cycles before something can happen inside the switch with nothing handed in: `Some(0)` when the
    /// next step has work, `None` never (the periodic flow-control timers keep it finite in practice).
    pub fn next_event(&self) -> Option<u64> {
        if !self.touched.0.is_empty() {
            return Some(0);
        }
        (self.next_any != NEVER).then(|| self.next_any.saturating_sub(self.now))
    }

    /// Advances `n` cycles with nothing handed in. Exact; O(1) when `n` is at most [`Switch::next_event`].
    /// Past it, the due cycles are stepped and their [`TxEvent`]s are dropped, so a fabric skips at most
    /// `next_event()` cycles.
    pub fn skip(&mut self, mut n: u64) {
        while n > 0 {
            let k = self.next_event().unwrap_or(NEVER);
            if k >= n {
                self.now += n;
                return;
            }
            self.now += k;
            n -= k;
            self.step();
            n -= 1;
        }
    }

    /// Simulates the current cycle and returns what leaves each port in it.
    pub fn step(&mut self) -> &[TxEvent] {
        self.events.0.clear();
        let t = self.now;
        if !self.eager && self.touched.0.is_empty() && self.next_any > t {
            self.now += 1;
            return &self.events.0;
        }
        self.work_cycles += 1;
        for p in 0..self.n {
            if self.eg_wake[p] <= t {
                self.egress_complete(p, t);
            }
        }
        for p in 0..self.n {
            if self.eager
                || self.eg_wake[p] <= t
                || self.rx_fc[p].is_some()
                || self.rx_pause[p].is_some()
            {
                self.egress(p, t);
            }
        }
        for p in 0..self.n {
            if self.eager
                || self.in_wake[p] <= t
                || self.rx_pkt[p].is_some()
                || self.rx_fc[p].is_some()
            {
                self.ingress(p, t);
            }
        }
        self.detect(t);
        for &p in &self.touched.0 {
            self.rx_pkt[usize::from(p)] = None;
            self.rx_fc[usize::from(p)] = None;
            self.rx_pause[usize::from(p)] = None;
        }
        self.touched.0.clear();
        self.now += 1;
        self.next_any = self
            .eg_wake
            .iter()
            .chain(self.in_wake.iter())
            .copied()
            .min()
            .unwrap_or(NEVER);
        &self.events.0
    }

    fn voq(&self, inp: usize, out: usize, vl: usize) -> usize {
        (inp * self.n + out) * self.v + vl
    }

    fn mark_dirty(&mut self, k: usize) {
        if !self.cong_dirty[k] {
            self.cong_dirty[k] = true;
            self.dirty_list.0.push(k as u32);
        }
    }

    fn egress_complete(&mut self, p: usize, t: u64) {
        let Some(f) = self.inflight[p] else { return };
        if f.end != t {
            return;
        }
        self.inflight[p] = None;
        let i = usize::from(f.inp);
        self.free_pending[i * self.v + usize::from(f.in_vl)] += u32::from(f.blocks);
        self.in_wake[i] = self.in_wake[i].min(t);
        if self.reads[i] == self.speedup[i] {
            self.saturated &= !(1u64 << i);
            for o in 0..self.n {
                let base = o * self.v;
                if self.voq_mask[base..base + self.v]
                    .iter()
                    .any(|m| m & (1 << i) != 0)
                {
                    self.eg_wake[o] = self.eg_wake[o].min(t);
                }
            }
        }
        self.reads[i] -= 1;
    }

    fn egress(&mut self, p: usize, t: u64) {
        let r = self.rate[p];
        let base = p * self.v;
        let fc_in = self.rx_fc[p];
        let mut fc_done = false;
        let pfc_on = self.pfc_on[p];
        if let Some(f) = self.rx_pause[p] {
            // Effective from the next cycle, like a new FCCL.
            for vl in 0..usize::from(self.nvl[p]) {
                if f.is_enabled(vl as u8) {
                    let q = f.quanta[vl];
                    self.paused_until[base + vl] = if q == 0 {
                        t + 1
                    } else {
                        t + 1 + pfc::pause_cycles(r, q)
                    };
                }
            }
        }
        // A pending pause frame or flow-control packet goes first.
        let mut fc_sent = false;
        if self.pfc_pending[p] != 0 && self.ser[p].can_start_fc(r, t) {
            let vl = self.pfc_pending[p].trailing_zeros() as usize;
            self.pfc_pending[p] &= !(1 << vl);
            self.ser[p].start_ctl(r, t, PAUSE_FRAME_BYTES);
            self.events.0.push(TxEvent::Pause {
                port: p as u8,
                frame: pfc::frame(vl as u8, self.pfc_out_quanta[base + vl]),
            });
            fc_sent = true;
        } else if self.fc_pending[p] != 0 && self.ser[p].can_start_fc(r, t) {
            let vl = self.fc_pending[p].trailing_zeros() as usize;
            self.fc_pending[p] &= !(1 << vl);
            self.ser[p].start_fc(r, t);
            self.events.0.push(TxEvent::Fc {
                port: p as u8,
                fc: FcPacket {
                    vl: vl as u8,
                    fctbs: self.ctx[base + vl].fctbs_q,
                    fccl: self.fc_fccl[base + vl],
                },
            });
            fc_sent = true;
        }
        // Requests: the round-robin head of each VL and whether its credit covers it.
        // `req`/`ok` for arbitration skip inputs with no free read slot (speed-up); the stall state
        // (`stall`, for XmitWait) does not, so it changes only on events at this port.
        let (mut req, mut ok, mut stall) = (0u16, 0u16, 0u16);
        let mut len = [0u8; 16];
        let mut pick = [0u8; 16];
        for vl in 0..usize::from(self.nvl[p]) {
            let all = self.voq_mask[base + vl];
            if all == 0 {
                continue;
            }
            let free = all & !self.saturated;
            let start = u32::from(self.rr[base + vl]);
            let rr_pick = |m: u64| ((m.rotate_right(start).trailing_zeros() + start) % 64) as usize;
            let i_all = rr_pick(all);
            if !self.credit_ok(p, vl, i_all, t) {
                stall |= 1 << vl;
            }
            if free == 0 {
                continue;
            }
            let i = rr_pick(free);
            let slot = self.voq_head[self.voq(i, p, vl)] as usize;
            req |= 1 << vl;
            len[vl] = self.slab[slot].desc.blocks() as u8;
            pick[vl] = i as u8;
            if self.credit_ok(p, vl, i, t) {
                ok |= 1 << vl;
            }
        }
        if pfc_on {
            for vl in 0..usize::from(self.nvl[p]) {
                let paused = self.pfc_without_credit(base + vl, t);
                if paused != self.pause_seen[base + vl] {
                    self.pause_seen[base + vl] = paused;
                    self.mark_dirty(base + vl);
                }
            }
        }
        for vl in 0..usize::from(self.nvl[p]) {
            self.wait[base + vl].set(stall & (1 << vl) != 0, t);
        }
        let mut granted = None;
        if !fc_sent && req & ok != 0 && self.ser[p].can_start_packet(r, t) {
            let o = self.arb[p].step(&vl_arb::In {
                rst_ni: true,
                ready_i: true,
                req_i: req,
                len_i: len,
                credit_ok_i: ok,
            });
            if o.gnt_valid_o && usize::from(o.gnt_vl_o) < usize::from(self.nvl[p]) {
                granted = Some(usize::from(o.gnt_vl_o));
            }
        }
        if let Some(vl) = granted {
            let i = usize::from(pick[vl]);
            let k = base + vl;
            let q = self.voq(i, p, vl);
            let slot_i = self.voq_head[q];
            let slot = self.slab[slot_i as usize];
            self.voq_head[q] = slot.next;
            if slot.next == NONE {
                self.voq_tail[q] = NONE;
                self.voq_mask[k] &= !(1u64 << i);
            }
            let blocks = slot.desc.blocks();
            self.voq_fill[k * self.n + i] -= blocks;
            self.rr[k] = ((i + 1) % self.n) as u8;
            self.free_slots.0.push(slot_i);
            self.reads[i] += 1;
            if self.reads[i] == self.speedup[i] {
                self.saturated |= 1u64 << i;
            }
            if !pfc_on {
                let fc = fc_in.filter(|f| usize::from(f.vl) == vl);
                fc_done = fc.is_some();
                let co = self.ctx[k].step(&credit_tx::In {
                    rst_ni: true,
                    fc_valid_i: fc.is_some(),
                    fc_fccl_i: fc.map_or(0, |f| f.fccl),
                    req_valid_i: true,
                    req_blocks_i: blocks as u8,
                    take_i: true,
                });
                if co.err_o {
                    self.counters[k].credit_err += 1;
                }
            }
            let mark_state = match (pfc_on, self.roce_detect[p]) {
                (true, RoceDetect::Oversubscribed { in_buf_blocks }) => {
                    self.oversubscribed(vl, self.voq_mask[k] | (1u64 << i), in_buf_blocks)
                }
                _ => self.cong[k].outputs().mark_state_o,
            };
            let mut mo = self.mark[k].step(&fecn_marker::In {
                rst_ni: true,
                pkt_valid_i: true,
                pkt_bytes_i: slot.desc.wire_len,
                mark_state_i: mark_state,
            });
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
            let c = &mut self.counters[k];
            c.xmit_pkts += 1;
            c.xmit_bytes += u64::from(desc.wire_len);
            if mark_state
                && u32::from(desc.wire_len) >= u32::from(self.mark[k].config().packet_size) * 64
            {
                c.eligible += 1;
            }
            if mo.mark_o {
                c.marked += 1;
            }
            self.last_start[k] = (t, mo.mark_o);
            self.last_desc[k] = Some(desc);
            let (offset, end) = self.ser[p].start_packet(r, t, desc.wire_len);
            self.inflight[p] = Some(Inflight {
                inp: i as u8,
                in_vl: slot.in_vl,
                blocks,
                end,
            });
            self.events.0.push(TxEvent::Packet {
                port: p as u8,
                start: PacketStart { desc, offset },
            });
            self.wait[k].set(false, t);
            self.mark_dirty(k);
        }
        if let Some(f) = fc_in.filter(|_| !pfc_on) {
            if !fc_done {
                let k = base + usize::from(f.vl);
                let idle = self.ctx[k].idle_input();
                self.ctx[k].step(&credit_tx::In {
                    fc_valid_i: true,
                    fc_fccl_i: f.fccl,
                    ..idle
                });
            }
            self.mark_dirty(base + usize::from(f.vl));
        }
        // Next time this output needs a look without outside help.
        let mut w = NEVER;
        if let Some(f) = self.inflight[p] {
            if f.end > t {
                w = w.min(f.end);
            }
        }
        if self.fc_pending[p] != 0 || self.pfc_pending[p] != 0 {
            w = w.min(self.ser[p].fc_ready_cycle(r, t + 1));
        }
        if pfc_on && stall != 0 {
            // A paused priority with a packet waiting: look again when the pause runs out.
            for vl in 0..usize::from(self.nvl[p]) {
                if stall & (1 << vl) != 0 {
                    w = w.min(self.paused_until[base + vl].max(t + 1));
                }
            }
        }
        let queued = self.voq_mask[base..base + self.v].iter().any(|&m| m != 0);
        if pfc_on && queued {
            // The end of a victim hold changes what cong_detect sees.
            for vl in 0..usize::from(self.nvl[p]) {
                if self.pause_seen[base + vl] {
                    w = w.min((self.paused_until[base + vl] + self.victim_hold[p]).max(t + 1));
                }
            }
        }
        if req & ok != 0 && granted.is_none() {
            w = w.min(self.ser[p].packet_ready_cycle(r, t + 1));
        }
        if queued && (granted.is_some() || fc_in.is_some() || self.rx_pause[p].is_some()) {
            // A grant moved the round-robin heads and took credit, a flow-control packet or pause changed
            // it: the stall state (XmitWait) may differ next cycle. Then arbitration when the wire frees.
            w = w.min(t + 1);
        }
        self.eg_wake[p] = w;
    }

    #[allow(clippy::needless_range_loop)] // vl indexes several per-VL arrays at once
    fn ingress(&mut self, p: usize, t: u64) {
        let r = self.rate[p];
        let base = p * self.v;
        let mut blk = [0u8; 16];
        if let Some(mut ar) = self.arriving[p] {
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
        let mut wake = self.arriving[p]
            .and_then(|a| a.a.next_cycle())
            .unwrap_or(NEVER);
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
                    self.eg_wake[p] = self.eg_wake[p].min(self.ser[p].fc_ready_cycle(r, t + 1));
                }
            } else if o.fc_send_o {
                self.fc_pending[p] |= 1 << vl;
                self.fc_fccl[k] = o.fccl_o;
                self.eg_wake[p] = self.eg_wake[p].min(self.ser[p].fc_ready_cycle(r, t + 1));
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
        self.in_wake[p] = wake;
    }

    fn head_arrives(&mut self, p: usize, ps: PacketStart, t: u64, blk: &mut [u8; 16]) {
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
            self.sl2vl[p * self.n + usize::from(out)][usize::from(d.sl & 15)]
        };
        let drop = out == NO_ROUTE
            || out_vl == Sl2VlTable::VL_DROP
            || a.blocks() > self.mtu_blocks
            || a.blocks() == 0
            || self.free_slots.0.is_empty();
        let mut ar = Arriving {
            a,
            vl: vl as u8,
            deferred: NONE,
        };
        if drop {
            self.counters[k].dropped += 1;
            ar.deferred = DROP;
        } else {
            let slot = self.free_slots.0.pop().unwrap_or(NONE);
            self.slab[slot as usize] = Slot {
                desc: d,
                next: NONE,
                in_vl: vl as u8,
                out,
                out_vl,
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

    fn arrival_done(&mut self, p: usize, ar: &Arriving, t: u64) {
        if ar.deferred == DROP {
            self.free_pending[p * self.v + usize::from(ar.vl)] += u32::from(ar.a.blocks());
        } else if ar.deferred != NONE {
            self.enqueue(p, ar.deferred, t);
        }
    }

    fn enqueue(&mut self, inp: usize, slot: u32, t: u64) {
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
        self.voq_mask[k] |= 1u64 << inp;
        self.voq_fill[k * self.n + inp] += s.desc.blocks();
        self.eg_wake[out] = self.eg_wake[out].min(t + 1);
        self.mark_dirty(k);
    }

    fn detect(&mut self, t: u64) {
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
            let on = self.cong[k].cong_q;
            self.cong_time[k].set(on, t + 1);
        }
        self.dirty_list.0.clear();
    }

    /// PFC port-VL `k` counts as without credit in cycle `t`: paused, or within the victim hold after.
    fn pfc_without_credit(&self, k: usize, t: u64) -> bool {
        let pu = self.paused_until[k];
        pu != 0 && pu + self.victim_hold[k / self.v] > t
    }

    /// Whether the head of VoQ (`inp`, `p`, `vl`) may start now: its credit fits (`credit_tx::fits`) on an IB
    /// port, the priority is not paused on a PFC port.
    fn credit_ok(&self, p: usize, vl: usize, inp: usize, t: u64) -> bool {
        let k = p * self.v + vl;
        if self.pfc_on[p] {
            return self.paused_until[k] <= t;
        }
        let slot = self.voq_head[self.voq(inp, p, vl)] as usize;
        let blocks = self.slab[slot].desc.blocks() as u8;
        let tx = &self.ctx[k];
        fits(tx.fccl_q, tx.fctbs_q, blocks)
    }

    /// Credit of output port-VL `k` as `cong_detect` sees it: `credit_tx`'s `avail_o` ((FCCL - FCTBS) mod 4096,
    /// from its registers) on an IB port; on a PFC port all of it unless the priority is paused (RCM-1a: a
    /// paused priority is one without credit).
    fn credit_avail(&self, k: usize, t: u64) -> u16 {
        let full = credit_tx::FC_MOD as u16 - 1;
        if self.pfc_on[k / self.v] {
            if self.pfc_without_credit(k, t) {
                0
            } else {
                full
            }
        } else {
            let tx = &self.ctx[k];
            tx.fccl_q.wrapping_sub(tx.fctbs_q) & full
        }
    }

    /// RCM-1b: at least two inputs in `mask` have packets queued, and one of them holds more than `thr`
    /// blocks in its buffer of `vl`.
    fn oversubscribed(&self, vl: usize, mask: u64, thr: u16) -> bool {
        if mask.count_ones() < 2 {
            return false;
        }
        let mut m = mask;
        while m != 0 {
            let i = m.trailing_zeros() as usize;
            m &= m - 1;
            if vl < usize::from(self.nvl[i]) {
                let rx = &self.crx[i * self.v + vl];
                if rx.config().buf_blocks - rx.free_q > thr {
                    return true;
                }
            }
        }
        false
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
            in_buf_used: rx.config().buf_blocks - rx.free_q,
            credits_avail: self.credit_avail(k, self.now),
            paused: self.paused_until[k] > self.now,
            pause_sent: self.pfc_rx[k].paused,
            started,
            marked: started && marked,
        }
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
        self.slab.len() - self.free_slots.0.len()
    }
}
