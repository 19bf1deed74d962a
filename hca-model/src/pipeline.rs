//! The transmit pipeline of one HCA port, per cycle: message arrivals per flow, segmentation, the flow's
//! rate controller (CC context) and the port's host injection cap as gates, per-VL choice of a flow (round
//! robin), VL arbitration by the VLArbitrationTable ([`VlArb`]), link-level flow control (IB credits per VL
//! with [`CreditTx`], or RoCE PFC pauses per priority), a CNP queue served before data, and serialisation
//! at the exact link rate. Flows are native IB or RoCEv2 (a [`RoceEncap`]); a RoCEv2 frame occupies its
//! bytes plus [`ETH_FRAME_OVERHEAD`] on the wire.
//!
//! Named choices:
//! - **CNPs first**: a queued CNP starts before any data packet whenever the port is free and the CNP's VL
//!   (SL2VL of its SL) has credit; CNPs bypass the arbitration tables (they are tiny and time-critical) and
//!   the host cap (they are generated on the HCA, not fetched over PCIe). A full CNP queue drops the new CNP
//!   (counted): a CNP is advisory.
//! - **Per-VL flow choice**: among the flows mapped to a VL whose head packet is released (arrived, allowed
//!   by its controller), round robin starting after the flow served last on that VL.
//! - **Serialisation**: a packet of `L` bytes occupies `floor((L * cycles + r) / bytes)` cycles (at least 1)
//!   of a `bytes / cycles` link, the remainder `r` carried to the next packet, so the long-run wire rate is
//!   exactly the link rate.
//! - **Controller reports**: `on_sent` is delivered in the first step at or after the packet's last wire
//!   cycle, after any feedback the caller delivered for that cycle.
//! - Blocks of a packet for credits and arbitration: `ceil(wire bytes / 64)`.
//! - The host cap (PCIe limit, e.g. about 13 Gbit/s in seed 000's testbed) spaces data packet starts with a
//!   [`Pacer`] at the cap rate.
//! - **PFC**: the VL number is the priority (VLs 0-7; higher ones are never paused). A PFC frame pauses a
//!   priority for `quanta * 512` bit times at the link rate from the cycle it is handed in (quanta 0
//!   resumes); a packet already started completes. Under PFC the credit counters are not consulted.

use std::collections::VecDeque;

use rtl_model::blocks::credit_tx::{self, fits, CreditTx};
use rtl_model::blocks::vl_arb::{self, VlArb};
use rtl_model::clocked::Clocked;
use rtl_model::wire::{ib_cnp, pfc, roce_cnp};

use crate::error::{nonzero, CcError};
use crate::rate::pacer::Pacer;
use crate::rate::{Feedback, RateController, Sent};
use crate::traffic::pattern::Arrivals;
use crate::traffic::segment::{FlowSpec, RoceEncap, Segment, Segmenter};
use crate::units::{Bps, CoreClock, Cycle, LinkRate};

/// Ethernet bytes on the wire besides a frame's header-to-ICRC bytes: FCS 4, preamble and SFD 8,
/// inter-frame gap 12.
pub const ETH_FRAME_OVERHEAD: u32 = 24;

/// Bytes a RoCEv2 CNP occupies on the wire: Ethernet 14, IPv4 20 or IPv6 40, UDP 8, BTH 12, 16 reserved,
/// ICRC 4, plus [`ETH_FRAME_OVERHEAD`].
pub const fn roce_cnp_wire_bytes(ipv6: bool) -> u32 {
    14 + if ipv6 { 40 } else { 20 } + 8 + roce_cnp::UDP_PAYLOAD_LEN as u32 + ETH_FRAME_OVERHEAD
}

/// Link-level flow control of the port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkFlowControl {
    /// IB credits per VL, with this reset FCCL.
    Credits(credit_tx::Config),
    /// RoCE PFC pauses per priority.
    Pfc,
}

/// Port settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortConfig {
    /// Link data rate.
    pub link: LinkRate,
    /// Core clock.
    pub clock: CoreClock,
    /// VL arbitration tables and high limit.
    pub vl_arb: vl_arb::Config,
    /// SL to VL.
    pub sl2vl: [u8; 16],
    /// Host injection cap for data, bit/s (`None`: none).
    pub host_cap: Option<Bps>,
    /// Link-level flow control.
    pub flow_control: LinkFlowControl,
    /// CNPs that may wait.
    pub cnp_queue_len: usize,
}

/// One flow of the port.
#[derive(Debug, Clone)]
pub struct FlowConfig {
    /// Addressing and MTU.
    pub spec: FlowSpec,
    /// PSN of the first packet.
    pub first_psn: u32,
    /// Message arrivals.
    pub arrivals: Arrivals,
    /// Bytes per message.
    pub msg_bytes: u64,
    /// Index of the flow's CC context (its rate controller) in the port's list, if any.
    pub cc: Option<usize>,
    /// RoCEv2 encapsulation; `None` for native IB.
    pub roce: Option<RoceEncap>,
}

/// Per-flow transmit counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FlowTxStats {
    /// Messages taken in.
    pub messages: u64,
    /// Packets started.
    pub packets: u64,
    /// Wire bytes started.
    pub bytes: u64,
}

#[derive(Debug, Clone)]
struct FlowState {
    seg: Segmenter,
    arrivals: Arrivals,
    next_arrival: Option<Cycle>,
    msg_bytes: u64,
    queue: VecDeque<Segment>,
    cc: Option<usize>,
    vl: u8,
    stats: FlowTxStats,
    roce: Option<RoceEncap>,
}

impl FlowState {
    /// Wire bytes of `seg`.
    fn bytes(&self, seg: &Segment) -> u32 {
        match &self.roce {
            None => self.seg.wire_len(seg),
            Some(e) => self.seg.roce_packet(seg, e).wire_len() as u32 + ETH_FRAME_OVERHEAD,
        }
    }
}

/// A congestion notification to send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CnpKind {
    /// IB CNP (0x80).
    Ib(ib_cnp::Repr),
    /// RoCEv2 CNP (0x81); its Ethernet/IP/UDP headers are the caller's.
    Roce(roce_cnp::Repr),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct QueuedCnp {
    kind: CnpKind,
    vl: u8,
    bytes: u32,
}

/// What starts on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxKind {
    /// A data packet of flow `flow`.
    Data {
        /// Flow index.
        flow: usize,
        /// The packet.
        seg: Segment,
    },
    /// A CNP.
    Cnp(CnpKind),
}

/// A packet starting this cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TxStart {
    /// Its wire cycles.
    pub sent: Sent,
    /// Its VL.
    pub vl: u8,
    /// What it is.
    pub kind: TxKind,
}

/// The transmit side of one port.
pub struct TxPort {
    cfg: PortConfig,
    arb: VlArb,
    credits: Vec<CreditTx>,
    flows: Vec<FlowState>,
    ctxs: Vec<Box<dyn RateController>>,
    rr: [usize; 16],
    cnp_q: VecDeque<QueuedCnp>,
    cnp_dropped: u64,
    free_at: Cycle,
    ser_frac: u64,
    cap: Option<(Pacer, Bps)>,
    inflight: Option<(Option<usize>, Sent)>,
    fc: [Option<u16>; 16],
    scratch: Vec<Segment>,
    paused_until: [Cycle; 8],
}

fn blocks(bytes: u32) -> u8 {
    bytes.div_ceil(64).min(127) as u8
}

impl TxPort {
    /// A port with these flows and CC contexts (flows name contexts by index).
    pub fn new(
        cfg: PortConfig,
        flows: Vec<FlowConfig>,
        ctxs: Vec<Box<dyn RateController>>,
    ) -> Result<Self, CcError> {
        let arb = VlArb::new(cfg.vl_arb.clone())?;
        let credits = (0..16)
            .map(|_| {
                CreditTx::new(match cfg.flow_control {
                    LinkFlowControl::Credits(c) => c,
                    LinkFlowControl::Pfc => credit_tx::Config::default(),
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        for (i, &vl) in cfg.sl2vl.iter().enumerate() {
            if vl > vl_arb::VL_MAX {
                return Err(CcError::Invalid {
                    setting: "sl2vl",
                    value: i as u64,
                    reason: "maps this SL to a VL above 14",
                });
            }
        }
        if let Some(c) = cfg.host_cap {
            nonzero("host_cap", c)?;
        }
        let mut fs = Vec::with_capacity(flows.len());
        for f in flows {
            if let Some(k) = f.cc {
                if k >= ctxs.len() {
                    return Err(CcError::Invalid {
                        setting: "flow cc context",
                        value: k as u64,
                        reason: "no such context",
                    });
                }
            }
            let mut arrivals = f.arrivals;
            let next_arrival = arrivals.next_arrival();
            let vl = cfg.sl2vl[usize::from(f.spec.sl & 0x0F)];
            fs.push(FlowState {
                seg: Segmenter::new(f.spec, f.first_psn),
                arrivals,
                next_arrival,
                msg_bytes: f.msg_bytes,
                queue: VecDeque::with_capacity(64),
                cc: f.cc,
                vl,
                stats: FlowTxStats::default(),
                roce: f.roce,
            });
        }
        Ok(TxPort {
            cap: cfg.host_cap.map(|c| (Pacer::new(cfg.clock), c)),
            cnp_q: VecDeque::with_capacity(cfg.cnp_queue_len),
            cfg,
            arb,
            credits,
            flows: fs,
            ctxs,
            rr: [0; 16],
            cnp_dropped: 0,
            free_at: 0,
            ser_frac: 0,
            inflight: None,
            fc: [None; 16],
            scratch: Vec::with_capacity(64),
            paused_until: [0; 8],
        })
    }

    /// A flow-control packet for `vl` with this FCCL arrived; it counts from the next cycle.
    pub fn flow_control(&mut self, vl: u8, fccl: u16) {
        if let Some(s) = self.fc.get_mut(usize::from(vl)) {
            *s = Some(fccl);
        }
    }

    /// Feedback for CC context `ctx` arrived at `now`.
    pub fn feedback(&mut self, now: Cycle, ctx: usize, fb: Feedback) {
        if let Some(c) = self.ctxs.get_mut(ctx) {
            c.on_feedback(now, fb);
        }
    }

    /// Queues an IB CNP (on the VL of its SL); `false` (and counted) if the queue is full.
    pub fn push_cnp(&mut self, cnp: ib_cnp::Repr) -> bool {
        let vl = self.cfg.sl2vl[usize::from(cnp.sl & 0x0F)];
        self.queue_cnp(QueuedCnp {
            kind: CnpKind::Ib(cnp),
            vl,
            bytes: ib_cnp::WIRE_LEN as u32,
        })
    }

    /// Queues a RoCEv2 CNP on priority `prio` taking `wire_bytes` on the wire ([`roce_cnp_wire_bytes`]).
    pub fn push_roce_cnp(&mut self, cnp: roce_cnp::Repr, prio: u8, wire_bytes: u32) -> bool {
        self.queue_cnp(QueuedCnp {
            kind: CnpKind::Roce(cnp),
            vl: prio.min(vl_arb::VL_MAX),
            bytes: wire_bytes,
        })
    }

    fn queue_cnp(&mut self, c: QueuedCnp) -> bool {
        if self.cnp_q.len() >= self.cfg.cnp_queue_len {
            self.cnp_dropped += 1;
            return false;
        }
        self.cnp_q.push_back(c);
        true
    }

    /// A PFC frame arrived at `now`: pauses (or resumes, quanta 0) the priorities it enables.
    pub fn pfc_frame(&mut self, now: Cycle, frame: &pfc::Repr) {
        for p in 0..8u8 {
            if frame.is_enabled(p) {
                let q = u64::from(frame.quanta[usize::from(p)]);
                self.paused_until[usize::from(p)] = now + self.cfg.link.wire_cycles(q * 64);
            }
        }
    }

    /// Whether a packet of `bytes` may start on `vl` at `now` as far as link-level flow control goes.
    fn may_start(&self, vl: u8, bytes: u32, now: Cycle) -> bool {
        match self.cfg.flow_control {
            LinkFlowControl::Credits(_) => {
                let c = &self.credits[usize::from(vl)];
                fits(c.fccl_q, c.fctbs_q, blocks(bytes))
            }
            LinkFlowControl::Pfc => self
                .paused_until
                .get(usize::from(vl))
                .is_none_or(|&u| now >= u),
        }
    }

    /// Under PFC, when `vl` is no longer paused (a time the port reaches without input).
    fn resume_at(&self, vl: u8) -> Option<Cycle> {
        match self.cfg.flow_control {
            LinkFlowControl::Credits(_) => None,
            LinkFlowControl::Pfc => {
                Some(self.paused_until.get(usize::from(vl)).copied().unwrap_or(0))
            }
        }
    }

    /// CNPs dropped because the queue was full.
    pub fn cnp_dropped(&self) -> u64 {
        self.cnp_dropped
    }

    /// Counters of flow `i`.
    pub fn flow_stats(&self, i: usize) -> Option<FlowTxStats> {
        self.flows.get(i).map(|f| f.stats)
    }

    /// The CC context `i`.
    pub fn context(&mut self, i: usize) -> Option<&mut (dyn RateController + 'static)> {
        self.ctxs.get_mut(i).map(|b| b.as_mut())
    }

    /// Blocks sent on `vl` so far, mod 4096 (FCTBS).
    pub fn fctbs(&self, vl: u8) -> u16 {
        self.credits.get(usize::from(vl)).map_or(0, |c| c.fctbs_q)
    }

    /// Blocks of credit left on `vl`.
    pub fn credit_avail(&self, vl: u8) -> u16 {
        self.credits
            .get(usize::from(vl))
            .map_or(0, |c| c.fccl_q.wrapping_sub(c.fctbs_q) & 0x0FFF)
    }

    /// The first cycle at or after `now` at which [`TxPort::step`] can start a packet or must report one to a
    /// controller, given no new input (flow-control packet, feedback, CNP) before it: stepping only at such
    /// cycles, and at the cycles where inputs arrive, gives exactly the packets stepping every cycle gives
    /// (the arbiter and credit counters do not move on idle cycles, the controllers are exact at any call
    /// granularity, and their timers are included). A property test checks this.
    pub fn next_activity(&mut self, now: Cycle) -> Cycle {
        if self.fc.iter().any(Option::is_some) {
            return now;
        }
        let mut t = Cycle::MAX;
        if let Some((_, s)) = self.inflight {
            t = t.min(s.end);
        }
        let free = self.free_at.max(now);
        // Without credit a packet waits for a flow-control packet, an input; a PFC pause ends by itself.
        if let Some(c) = self.cnp_q.front() {
            if let Some(w) = self.wait_at(c.vl, c.bytes, free) {
                t = t.min(w);
            }
        }
        let cap_next = self.cap.as_ref().map_or(0, |(p, _)| p.next());
        for i in 0..self.flows.len() {
            let f = &self.flows[i];
            let ready = match f.queue.front() {
                Some(seg) => match self.wait_at(f.vl, f.bytes(seg), free) {
                    Some(w) => w,
                    None => continue,
                },
                None => match f.next_arrival {
                    Some(a) => a,
                    None => continue,
                },
            };
            let mut r = ready.max(free).max(cap_next);
            if let Some(k) = self.flows[i].cc {
                let c = &mut self.ctxs[k];
                r = r.max(c.next_send());
                if let Some(tm) = c.next_timer() {
                    t = t.min(tm);
                }
            }
            t = t.min(r);
        }
        t.max(now)
    }

    /// When a packet of `bytes` on `vl` could start at or after `free` without new input.
    fn wait_at(&self, vl: u8, bytes: u32, free: Cycle) -> Option<Cycle> {
        if self.may_start(vl, bytes, free) {
            Some(free)
        } else {
            self.resume_at(vl).map(|u| u.max(free))
        }
    }

    fn serialise(&mut self, now: Cycle, bytes: u32) -> Sent {
        let num =
            u128::from(bytes) * u128::from(self.cfg.link.cycles()) + u128::from(self.ser_frac);
        let b = u128::from(self.cfg.link.bytes());
        self.ser_frac = (num % b) as u64;
        let dur = ((num / b) as u64).max(1);
        self.free_at = now + dur;
        Sent {
            start: now,
            end: now + dur - 1,
            bytes,
        }
    }

    /// Whether flow `i`'s head packet may start at `now`.
    fn released(&mut self, i: usize, now: Cycle) -> bool {
        let f = &self.flows[i];
        if f.queue.is_empty() {
            return false;
        }
        match f.cc {
            None => true,
            Some(k) => {
                let c = &mut self.ctxs[k];
                c.advance(now);
                c.next_send() <= now
            }
        }
    }

    /// One cycle: returns the packet that starts in it, if any.
    pub fn step(&mut self, now: Cycle) -> Option<TxStart> {
        if let Some((ctx, s)) = self.inflight {
            if s.end <= now {
                if let Some(k) = ctx {
                    self.ctxs[k].on_sent(s);
                }
                self.inflight = None;
            }
        }
        let mut take: Option<(u8, u8)> = None;
        let started = self.start_packet(now, &mut take);
        // Credit edges: a flow-control packet and/or this cycle's take.
        for vl in 0..16u8 {
            let fc = self.fc[usize::from(vl)].take();
            let t = take.filter(|t| t.0 == vl);
            if fc.is_some() || t.is_some() {
                self.credits[usize::from(vl)].step(&credit_tx::In {
                    rst_ni: true,
                    fc_valid_i: fc.is_some(),
                    fc_fccl_i: fc.unwrap_or(0),
                    req_valid_i: t.is_some(),
                    req_blocks_i: t.map_or(0, |t| t.1),
                    take_i: t.is_some(),
                });
            }
        }
        started
    }

    fn start_packet(&mut self, now: Cycle, take: &mut Option<(u8, u8)>) -> Option<TxStart> {
        if now < self.free_at {
            return None;
        }
        // Message arrivals: a flow takes its next message when its packet queue is empty.
        for f in &mut self.flows {
            if let Some(arrival) = f.next_arrival.filter(|&t| t <= now && f.queue.is_empty()) {
                self.scratch.clear();
                if f.seg
                    .message(f.msg_bytes, arrival, &mut self.scratch)
                    .is_ok()
                {
                    f.queue.extend(self.scratch.drain(..));
                    f.stats.messages += 1;
                }
                f.next_arrival = f.arrivals.next_arrival();
            }
        }
        // CNPs first.
        if let Some(c) = self.cnp_q.front().copied() {
            if self.may_start(c.vl, c.bytes, now) {
                self.cnp_q.pop_front();
                *take = Some((c.vl, blocks(c.bytes)));
                let sent = self.serialise(now, c.bytes);
                return Some(TxStart {
                    sent,
                    vl: c.vl,
                    kind: TxKind::Cnp(c.kind),
                });
            }
        }
        if let Some((p, _)) = &self.cap {
            if p.next() > now {
                return None;
            }
        }
        // Per VL: the round-robin choice among released flows.
        let mut pick = [usize::MAX; 16];
        let mut req = 0u16;
        let mut len = [0u8; 16];
        let mut ok = 0u16;
        let n = self.flows.len();
        for vl in 0..15u8 {
            let start = self.rr[usize::from(vl)];
            for j in 0..n {
                let i = (start + j) % n;
                if self.flows[i].vl == vl && self.released(i, now) {
                    pick[usize::from(vl)] = i;
                    let f = &self.flows[i];
                    let bytes = f.bytes(&f.queue[0]);
                    req |= 1 << vl;
                    len[usize::from(vl)] = blocks(bytes);
                    if self.may_start(vl, bytes, now) {
                        ok |= 1 << vl;
                    }
                    break;
                }
            }
        }
        if req == 0 {
            return None;
        }
        let g = self.arb.step(&vl_arb::In {
            rst_ni: true,
            ready_i: true,
            req_i: req,
            len_i: len,
            credit_ok_i: ok,
        });
        if !g.gnt_valid_o {
            return None;
        }
        let vl = g.gnt_vl_o;
        let i = pick[usize::from(vl)];
        let seg = self.flows[i].queue.pop_front()?;
        let bytes = self.flows[i].bytes(&seg);
        self.rr[usize::from(vl)] = (i + 1) % n;
        *take = Some((vl, blocks(bytes)));
        let sent = self.serialise(now, bytes);
        if let Some((p, rate)) = &mut self.cap {
            p.sent(now, bytes, *rate);
        }
        let f = &mut self.flows[i];
        f.stats.packets += 1;
        f.stats.bytes += u64::from(bytes);
        self.inflight = Some((f.cc, sent));
        Some(TxStart {
            sent,
            vl,
            kind: TxKind::Data { flow: i, seg },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rate::cct::{CctController, CctParams, CctSettings};
    use crate::rate::CnpInfo;
    use crate::traffic::pattern::Pattern;
    use crate::traffic::segment::Service;
    use crate::units::{Mtu, IB_LOCAL_OVERHEAD};
    use rtl_model::blocks::vl_arb::ArbEntry;
    use rtl_model::mad::ca_cong::CaCongestionEntry;
    use rtl_model::mad::cct::{Cct, CctEntry};

    fn clock() -> CoreClock {
        CoreClock::from_khz(1_000_000).unwrap()
    }

    fn port_cfg(low: Vec<ArbEntry>, cap: Option<Bps>) -> PortConfig {
        let mut sl2vl = [0u8; 16];
        for (i, v) in sl2vl.iter_mut().enumerate() {
            *v = (i % 15) as u8;
        }
        PortConfig {
            link: LinkRate::from_mbps(32_000, clock()).unwrap(),
            clock: clock(),
            vl_arb: vl_arb::Config {
                high: vec![],
                low,
                vl_high_limit: 0,
            },
            sl2vl,
            host_cap: cap,
            flow_control: LinkFlowControl::Credits(credit_tx::Config { fccl_reset: 0 }),
            cnp_queue_len: 4,
        }
    }

    fn flow(sl: u8, qp: u32, cc: Option<usize>) -> FlowConfig {
        FlowConfig {
            spec: FlowSpec {
                service: Service::Rc,
                slid: 1,
                dlid: 2,
                sl,
                vl: sl,
                pkey: 0xffff,
                src_qp: qp,
                dest_qp: qp + 100,
                qkey: 0,
                mtu: Mtu::new(2048).unwrap(),
            },
            first_psn: 0,
            arrivals: Arrivals::new(Pattern::Saturating, clock(), 1 << 20, 0, u64::MAX, 1).unwrap(),
            msg_bytes: 1 << 20,
            cc,
            roce: None,
        }
    }

    /// Steps `port` to `until`, keeping every VL's credit 1000 blocks ahead (an endless receive buffer);
    /// returns the packets started.
    fn run(port: &mut TxPort, until: Cycle, credit: bool) -> Vec<TxStart> {
        let mut out = Vec::new();
        for now in 0..until {
            if credit {
                for vl in 0..15 {
                    let c = &port.credits[vl as usize];
                    port.flow_control(vl, (c.fctbs_q + 1000) & 0x0FFF);
                }
            }
            if let Some(s) = port.step(now) {
                out.push(s);
            }
        }
        out
    }

    /// Two saturating flows on VL 0 and VL 1, low table weights 96 and 32 blocks (3:1): the wire is always
    /// busy and the bytes split 3:1 within one packet per table round (2074-byte packets = 33 blocks:
    /// visits grant 3 and 1 packets, so exactly 3:1 here).
    #[test]
    fn vl_arbitration_shares_the_link() {
        let mut p = TxPort::new(
            port_cfg(vec![ArbEntry::new(0, 96), ArbEntry::new(1, 32)], None),
            vec![flow(0, 1, None), flow(1, 2, None)],
            vec![],
        )
        .unwrap();
        let starts = run(&mut p, 400_000, true);
        let (a, b) = (
            p.flow_stats(0).unwrap().bytes,
            p.flow_stats(1).unwrap().bytes,
        );
        assert!(a.abs_diff(3 * b) <= 3 * 2074, "{a} vs {b}");
        // Back to back: the wire never idles after the first packet (32 Gbit/s = 4 bytes per cycle).
        let busy: u64 = starts.iter().map(|s| s.sent.end + 1 - s.sent.start).sum();
        assert!(busy + 600 >= 400_000, "busy {busy}");
        for w in starts.windows(2) {
            assert_eq!(w[1].sent.start, w[0].sent.end + 1);
        }
    }

    /// Without flow-control packets only the reset credit... which is 0: nothing is sent; with one FCCL of
    /// 100 blocks, exactly 3 packets of 33 blocks go (99 blocks), never more (lossless).
    #[test]
    fn credits_gate_the_port() {
        let mut p = TxPort::new(
            port_cfg(vec![ArbEntry::new(0, 255)], None),
            vec![flow(0, 1, None)],
            vec![],
        )
        .unwrap();
        assert!(run(&mut p, 10_000, false).is_empty());
        p.flow_control(0, 100);
        let mut sent = 0;
        for now in 10_000..30_000 {
            sent += usize::from(p.step(now).is_some());
        }
        assert_eq!(sent, 3);
        assert_eq!(p.credit_avail(0), 1);
    }

    /// A CNP queued while data saturates the link starts as soon as the current packet ends.
    #[test]
    fn cnp_before_data() {
        let mut p = TxPort::new(
            port_cfg(vec![ArbEntry::new(0, 255)], None),
            vec![flow(0, 1, None)],
            vec![],
        )
        .unwrap();
        let mut seen = Vec::new();
        for now in 0..3000 {
            let c = &p.credits[0];
            p.flow_control(0, (c.fctbs_q + 1000) & 0x0FFF);
            if now == 100 {
                let cnp = ib_cnp::Repr {
                    vl: 0,
                    sl: 0,
                    dlid: 9,
                    slid: 1,
                    pkey: 0xffff,
                    dest_qp: 5,
                    fecn: false,
                };
                assert!(p.push_cnp(cnp));
            }
            if let Some(s) = p.step(now) {
                seen.push(s);
            }
        }
        // First data packet 0..=518; the CNP (26 bytes = 6.5 -> 6 cycles, remainder carried) at 519.
        assert!(matches!(seen[1].kind, TxKind::Cnp(_)));
        assert_eq!(seen[1].sent.start, 519);
        assert!(matches!(seen[2].kind, TxKind::Data { .. }));
    }

    /// The host cap: 10 Gbit/s on a 32 Gbit/s link; measured over the run within 1% below the cap, and never
    /// above it beyond the pacer's sub-cycle rounding (bits <= cap * (span + 1 cycle)).
    #[test]
    fn host_injection_cap() {
        let mut p = TxPort::new(
            port_cfg(vec![ArbEntry::new(0, 255)], Some(10_000_000_000)),
            vec![flow(0, 1, None)],
            vec![],
        )
        .unwrap();
        let starts = run(&mut p, 1_000_000, true);
        let sent: Vec<Sent> = starts.iter().map(|s| s.sent).collect();
        let got = crate::txloop::measured_bps(&sent, clock());
        assert!(got > 9_900_000_000, "{got}");
        let bits: u128 = sent[..sent.len() - 1]
            .iter()
            .map(|s| u128::from(s.bytes) * 8)
            .sum();
        let span = u128::from(sent[sent.len() - 1].start - sent[0].start + 1);
        assert!(bits * 1_000_000_000 <= 10_000_000_000 * span);
    }

    /// A flow held at a fixed CCT entry through the whole pipeline (arrivals, segmentation, arbitration,
    /// credits): entry (shift 1, multiplier 3), T_pkt = 519: IRD = 259 * 3 = 777; rate 32G * 519 / 1296.
    /// Feedback reaches the context through the port; a BECN moves it to the next entry.
    #[test]
    fn cct_gated_flow() {
        let mut entries = vec![CctEntry::default(); 3];
        entries[1] = CctEntry::new(1, 3).unwrap();
        entries[2] = CctEntry::new(0, 3).unwrap();
        let ctrl = CctController::new(&CctParams {
            settings: CctSettings {
                entry: CaCongestionEntry {
                    ccti_timer: 0,
                    ccti_increase: 1,
                    trigger_threshold: 0,
                    ccti_min: 1,
                },
                cct: Cct {
                    ccti_limit: 2,
                    entries,
                },
            },
            mtu: Mtu::new(2048).unwrap(),
            packet_overhead: IB_LOCAL_OVERHEAD,
            link: LinkRate::from_mbps(32_000, clock()).unwrap(),
            clock: clock(),
        })
        .unwrap();
        let mut p = TxPort::new(
            port_cfg(vec![ArbEntry::new(0, 255)], None),
            vec![flow(0, 1, Some(0))],
            vec![Box::new(ctrl)],
        )
        .unwrap();
        let starts = run(&mut p, 1_000_000, true);
        let sent: Vec<Sent> = starts.iter().map(|s| s.sent).collect();
        let got = crate::txloop::measured_bps(&sent, clock());
        let want = 32_000_000_000u64 * 519 / 1296;
        assert!(got.abs_diff(want) * 1000 < want, "{got} vs {want}");
        for w in sent.windows(2) {
            assert_eq!(w[1].start - w[0].end - 1, 777);
        }
        p.feedback(1_000_000, 0, Feedback::Cnp(CnpInfo::BECN));
        let mut more = Vec::new();
        for now in 1_000_000..1_100_000 {
            let c = &p.credits[0];
            p.flow_control(0, (c.fctbs_q + 1000) & 0x0FFF);
            if let Some(s) = p.step(now) {
                more.push(s.sent);
            }
        }
        // Entry 2: IRD = 519 * 3 = 1557 once the packet in flight at the BECN has gone.
        assert_eq!(more[2].start - more[1].end - 1, 1557);
    }

    /// Stepping only at `next_activity` (and at the cycles inputs arrive) gives the same packets as stepping
    /// every cycle: two flows (Poisson and constant-rate arrivals) on two VLs, one under a CCT context, one
    /// under DCQCN, a host cap, flow-control packets and CNPs to queue and feedback at random cycles. 300 cases
    /// (each steps 250 000 cycles one by one for the reference), and skipping must save three quarters of
    /// the steps.
    #[test]
    fn skipping_matches_stepping() {
        use crate::rate::dcqcn::{DcqcnConfig, DcqcnController};
        use proptest::prelude::*;
        use proptest::test_runner::{Config, TestRunner};
        let mut runner = TestRunner::new(Config::with_cases(300));
        let inputs = proptest::collection::vec((0u64..200_000, 0u8..4), 0..40);
        runner
            .run(
                &(inputs, any::<u64>(), any::<bool>()),
                |(mut ev, seed, capped)| {
                    ev.sort();
                    let make = || {
                        let mut f0 = flow(0, 1, Some(0));
                        f0.arrivals = Arrivals::new(
                            Pattern::Poisson {
                                rate: 12_000_000_000,
                            },
                            clock(),
                            3000,
                            0,
                            150_000,
                            seed,
                        )
                        .unwrap();
                        f0.msg_bytes = 3000;
                        let mut f1 = flow(1, 2, Some(1));
                        f1.arrivals = Arrivals::new(
                            Pattern::ConstantRate {
                                rate: 9_000_000_000,
                            },
                            clock(),
                            5000,
                            1000,
                            180_000,
                            seed,
                        )
                        .unwrap();
                        f1.msg_bytes = 5000;
                        let cct = cct_ctrl();
                        let dcqcn = DcqcnController::new(DcqcnConfig {
                            alpha_period: 5000,
                            increase_period: 7000,
                            byte_counter: 30_000,
                            ..DcqcnConfig::ns3_defaults(clock(), 32_000_000_000)
                        })
                        .unwrap();
                        let mut c =
                            port_cfg(vec![ArbEntry::new(0, 40), ArbEntry::new(1, 20)], None);
                        c.host_cap = capped.then_some(20_000_000_000);
                        c.flow_control =
                            LinkFlowControl::Credits(credit_tx::Config { fccl_reset: 600 });
                        TxPort::new(c, vec![f0, f1], vec![Box::new(cct), Box::new(dcqcn)]).unwrap()
                    };
                    let apply = |p: &mut TxPort, k: u8, now: Cycle| match k {
                        0 => p.flow_control(0, (p.fctbs(0) + 700) & 0xfff),
                        1 => p.flow_control(1, (p.fctbs(1) + 700) & 0xfff),
                        2 => p.feedback(now, (now % 2) as usize, Feedback::Cnp(CnpInfo::BECN)),
                        _ => {
                            p.push_cnp(ib_cnp::Repr {
                                vl: 0,
                                sl: 1,
                                dlid: 3,
                                slid: 1,
                                pkey: 0xffff,
                                dest_qp: 4,
                                fecn: false,
                            });
                        }
                    };
                    let until = 250_000;
                    let mut a = make();
                    let mut every = Vec::new();
                    let mut i = 0;
                    for now in 0..until {
                        while i < ev.len() && ev[i].0 == now {
                            apply(&mut a, ev[i].1, now);
                            i += 1;
                        }
                        every.extend(a.step(now));
                    }
                    let mut b = make();
                    let mut skipped = Vec::new();
                    let mut i = 0;
                    let mut now = 0;
                    let mut steps = 0u64;
                    while now < until {
                        while i < ev.len() && ev[i].0 == now {
                            apply(&mut b, ev[i].1, now);
                            i += 1;
                        }
                        skipped.extend(b.step(now));
                        steps += 1;
                        let next_in = ev.get(i).map_or(until, |e| e.0);
                        now = b.next_activity(now + 1).min(next_in).min(until);
                    }
                    prop_assert_eq!(&every, &skipped);
                    prop_assert!(
                        steps < until / 4,
                        "skipping saves steps: {} of {}",
                        steps,
                        until
                    );
                    Ok(())
                },
            )
            .unwrap();
    }

    fn cct_ctrl() -> CctController {
        let mut entries = vec![CctEntry::default(); 8];
        for (i, e) in entries.iter_mut().enumerate() {
            *e = CctEntry::new(1, i as u16 * 2).unwrap();
        }
        CctController::new(&CctParams {
            settings: CctSettings {
                entry: CaCongestionEntry {
                    ccti_timer: 3,
                    ccti_increase: 2,
                    trigger_threshold: 0,
                    ccti_min: 0,
                },
                cct: Cct {
                    ccti_limit: 7,
                    entries,
                },
            },
            mtu: Mtu::new(2048).unwrap(),
            packet_overhead: IB_LOCAL_OVERHEAD,
            link: LinkRate::from_mbps(32_000, clock()).unwrap(),
            clock: clock(),
        })
        .unwrap()
    }

    /// A RoCEv2 flow on a PFC port: frames of 1082 bytes (Ethernet/IPv4/UDP/BTH/1024/ICRC) + 24 on the wire
    /// = 1106 bytes = 276.5 cycles at 4 bytes per cycle. A PFC frame at cycle 10 000 pauses priority 0 for
    /// 100 quanta = 6400 bytes = 1600 cycles: the packet on the wire finishes, none starts before 11 600. A
    /// pause of 65 535 quanta at 20 000 is lifted by quanta 0 at 21 000. A RoCEv2 CNP goes before data.
    #[test]
    fn roce_flow_under_pfc() {
        use crate::traffic::segment::RoceEncap;
        use rtl_model::wire::builder::IpHeader;
        use rtl_model::wire::{ethernet, ipv4};
        let mut c = port_cfg(vec![ArbEntry::new(0, 255)], None);
        c.flow_control = LinkFlowControl::Pfc;
        let mut f = flow(0, 1, None);
        f.spec.mtu = Mtu::new(1024).unwrap();
        f.roce = Some(RoceEncap {
            eth: ethernet::Repr {
                src_addr: ethernet::MacAddr([2, 0, 0, 0, 0, 1]),
                dst_addr: ethernet::MacAddr([2, 0, 0, 0, 0, 2]),
                ethertype: ethernet::EtherType::Ipv4,
            },
            ip: IpHeader::V4(ipv4::Repr {
                src_addr: [10, 0, 0, 1],
                dst_addr: [10, 0, 0, 2],
                protocol: ipv4::IpProtocol::Udp,
                payload_len: 0,
                ttl: 64,
                dscp: 0,
                ecn: ipv4::Ecn::Ect0,
                ident: 0,
                dont_frag: true,
                more_frags: false,
                frag_offset: 0,
            }),
            udp_src_port: 0xC000,
        });
        let mut p = TxPort::new(c, vec![f], vec![]).unwrap();
        let frame = |q: u16| {
            let mut quanta = [0u16; 8];
            quanta[0] = q;
            pfc::Repr {
                class_enable: 1,
                quanta,
            }
        };
        let mut starts = Vec::new();
        for now in 0..30_000 {
            match now {
                10_000 => p.pfc_frame(now, &frame(100)),
                20_000 => p.pfc_frame(now, &frame(65_535)),
                21_000 => p.pfc_frame(now, &frame(0)),
                25_000 => {
                    let cnp = roce_cnp::Repr {
                        pkey: 0xffff,
                        dest_qp: 9,
                        fecn: false,
                        becn: true,
                    };
                    assert!(p.push_roce_cnp(cnp, 0, roce_cnp_wire_bytes(false)));
                }
                _ => {}
            }
            starts.extend(p.step(now));
        }
        assert_eq!(
            starts[0].sent.end, 275,
            "276.5 cycles: 276 (0..=275), the half carried"
        );
        assert_eq!(starts[1].sent.end, 552, "then 277");
        assert_eq!(roce_cnp_wire_bytes(false), 98);
        let in_pause = |a: Cycle, b: Cycle| {
            starts
                .iter()
                .filter(|s| (a..b).contains(&s.sent.start))
                .count()
        };
        let last_before = starts.iter().rfind(|s| s.sent.start < 10_000).unwrap();
        assert!(
            last_before.sent.end >= 10_000,
            "the frame on the wire at the pause completes"
        );
        assert_eq!(in_pause(last_before.sent.end + 1, 11_600), 0);
        assert!(starts.iter().any(|s| s.sent.start == 11_600));
        let before = starts.iter().rfind(|s| s.sent.start < 20_000).unwrap();
        assert_eq!(in_pause(before.sent.end + 1, 21_000), 0);
        assert!(starts
            .iter()
            .any(|s| s.sent.start == 21_000.max(before.sent.end + 1)));
        let cnp_at = starts
            .iter()
            .position(|s| matches!(s.kind, TxKind::Cnp(CnpKind::Roce(_))))
            .unwrap();
        let prev = &starts[cnp_at - 1];
        assert!(
            prev.sent.start <= 25_000,
            "the CNP is the next start after the push"
        );
        assert_eq!(starts[cnp_at].sent.start, prev.sent.end + 1);
        let d = starts[cnp_at].sent.end - starts[cnp_at].sent.start + 1;
        assert!(
            (24..=25).contains(&d),
            "98 bytes = 24.5 cycles, the carried half decides: {d}"
        );
    }

    #[test]
    fn bad_port_settings() {
        let mut c = port_cfg(vec![ArbEntry::new(0, 1)], Some(0));
        assert_eq!(
            TxPort::new(c.clone(), vec![], vec![])
                .err()
                .unwrap()
                .to_string(),
            "host_cap (0) is invalid: must be nonzero"
        );
        c.host_cap = None;
        assert!(TxPort::new(c, vec![flow(0, 1, Some(3))], vec![]).is_err());
    }
}
