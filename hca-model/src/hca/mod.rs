//! The HCA that `ibcycle run` steps: flows (traffic, segmentation, reaction points), its link port
//! ([`Endpoint`]: IB credits or PFC, exact serialisation, `next_event`/`skip`), the notification point and the
//! receive-side accounting.
//!
//! Transmit: each VL has one packet loaded into the port's source of that VL, from the flows on that VL
//! (their SL through the HCA's SL2VL) served round-robin; the port's VL arbiter (`rtl_model::blocks::vl_arb`,
//! the block a switch output uses, with the port's VLArbitrationTable, [`Hca::set_vl_arb`]) chooses among the
//! VLs whose packet has credit (or is not paused), so a VL waiting for credit does not hold up another. A
//! message is segmented into MTU packets (First / Middle / Last, or Only) with PSNs. With CC on, each flow has
//! a reaction point ([`FlowCc`]: IB CCT, RR-CC sender, RCM or DCQCN) as a gate on its next packet, and a host
//! injection cap ([`Hca::set_host_cap`]) may space data packets further. A CNP goes before data: it takes
//! its VL's slot (a data packet loaded there is taken back and rebuilt later with the same PSN) and goes ahead
//! of the arbiter whenever it has credit. With one data VL this is the round-robin over flows, one packet
//! loaded at a time, of the single-VL HCA.
//!
//! Receive: a packet counts when its last byte is in ([`RxCount`], message completion cycles). The
//! notification point answers every FECN-marked (IB, opcode 0x80) or CE-marked (RoCEv2, opcode 0x81) data
//! packet with a CNP, at most one per flow per minimum interval ([`Hca::set_cnp_interval`]); a CNP arriving
//! at the source feeds its flow's reaction point. The receiver side of receiver-driven CC is [`rrcc`]. In
//! RoCEv2 mode ([`Hca::set_roce`]) the port obeys PFC pause frames instead of credits and packets are
//! RoCEv2 frames (ECT(0), [`roce`]).
//!
//! The sink checks what it receives as a responder does ([`SinkErrors`]): each packet's ICRC (the source
//! seals every packet it makes, [`PacketDesc::seal`]) and each data packet's PSN order within its flow.
//!
//! As a destination it acknowledges data packets when asked ([`AckMode`], [`Hca::set_acks`]): RC ACKs go
//! back on the flow's SL through the same control queue as CNPs (CNPs first), coalesced per flow while one
//! waits; a source counts the ACKs it receives.
//!
//! Not modelled: the CA's SL-based congestion control (CACongestionSetting Port_Control SL: one CCTI per SL,
//! shared by the SL's QPs). Every reaction point is per flow, the QP-based mode and opensm's default.

/// DestQP of scenario flow 0; flow `i` uses `FIRST_DATA_QP + i`. QPs 0 and 1 are the SMI and GSI (management)
/// QPs, and Wireshark decodes a packet to them as a MAD, so data flows start at 2.
pub const FIRST_DATA_QP: u32 = 2;

/// CNPs that may wait at a port; a CNP beyond that is dropped (advisory, counted).
pub const CNP_QUEUE: usize = 64;

/// What the endpoint holds to send next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Loaded {
    Data(usize),
    /// A CNP or an ACK (the HCA's own packets: ahead of data, not capped).
    Ctl,
}

/// When a destination acknowledges (RC ACKs, opcode Acknowledge with an AETH: 30 bytes on an IB wire).
/// The IBA lets the responder coalesce: one ACK may stand for every packet up to its PSN, and the requester
/// asks for one with AckReq. A designer's choice, named here; the default sends none, as the papers'
/// models do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AckMode {
    /// No ACKs.
    #[default]
    None,
    /// One ACK per message, for its last packet (the requester sets AckReq on it).
    Message,
    /// One ACK per data packet, coalesced while one for the same flow waits to be sent (it then carries
    /// the newer PSN).
    Packet,
}

use std::collections::VecDeque;

use rtl_model::link::pfc::PfcConfig;
use rtl_model::link::{ConfigError, FcPacket, LinkRate, PacketDesc, PacketStart};
use rtl_model::wire::bth::Opcode;

use crate::port::{Endpoint, EndpointOut};
use crate::rate::flow::FlowCc;
use crate::rate::{Feedback, RateController, Sent};
use crate::traffic::pattern::Pattern;
use crate::traffic::source::MsgSource;
use rrcc::RrccRx;

pub mod flow_table;
pub mod roce;
pub mod rrcc;

pub use flow_table::FlowTable;

/// One flow as its source HCA sends it.
///
/// `repr(C)`, the fields every `next_event` and step reads first (its window, what it sent, when to wake),
/// then its message source and reaction point: each flow is cold when its HCA's turn comes in a large
/// fabric, and Rust's own order (by alignment) put them on different cache lines.
#[derive(Debug, Clone)]
#[repr(C)]
pub struct TxFlow {
    /// First cycle it may send.
    pub start: u64,
    /// First cycle it no longer sends.
    pub stop: u64,
    /// While the reaction point holds the flow back: the first cycle it must be asked again, from the last
    /// [`TxFlow::may_send`] ([`FlowCc::wake_for_send`]; 0: ask now). While `sent` waits to be reported: the
    /// cycle the flow's next send is due once it is, if the reaction point knew it at the send
    /// ([`FlowCc::send_after`]; 0: unknown, wake at the send's end). The report then happens in whatever
    /// step comes first at or after the end (the controller puts the send at its end cycle whenever it
    /// is told, before any later advance), so the step at the end that only reported it is not needed.
    cc_wake: u64,
    /// The last packet sent, until the controller has been told (at its last wire cycle).
    sent: Option<Sent>,
    /// Payload bytes of the current message still to send.
    left: u64,
    /// Message length in bytes.
    pub message_bytes: u64,
    /// Next PSN.
    psn: u32,
    /// Index of the flow in the scenario (carried in every packet's `tag`).
    pub flow: u32,
    /// Destination LID.
    pub dlid: u16,
    /// Path MTU in bytes (payload per packet).
    pub mtu: u16,
    /// Service level.
    pub sl: u8,
    /// When its messages arrive, and their arrival cycles until matched with completions.
    src: MsgSource,
    /// The reaction point (IB CC, RR-CC or a RoCEv2 reaction on).
    cc: Option<FlowCc>,
    /// Constant-rate sends to random destinations (see [`Retarget`]); `None`: the flow keeps its `dlid`.
    pub retarget: Option<Retarget>,
}

/// A flow that sends one packet every `gap` cycles, each to a uniformly random other node (BookSim2's
/// uniform traffic): when a packet leaves, the flow's next start becomes `next + gap` and its destination
/// a fresh draw, so it sleeps until then (a source that fell behind, held back by credit, catches up packet
/// by packet). One seeded SplitMix64 stream per flow ([`Retarget::draw`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Retarget {
    /// The stream's state.
    pub rng: u64,
    /// Nodes to choose among (HCAs `0..nodes`, LIDs from `first_lid`).
    pub nodes: usize,
    /// This flow's own node (never chosen).
    pub me: usize,
    /// LID of node 0.
    pub first_lid: u16,
    /// Cycles between two sends.
    pub gap: u64,
    /// The current send's start cycle.
    pub next: u64,
}

impl Retarget {
    /// SplitMix64 step ([`rtl_model::rng::splitmix64`]).
    pub fn splitmix(s: &mut u64) -> u64 {
        rtl_model::rng::splitmix64(s)
    }

    /// A uniformly random node other than `me` among `nodes` (`nodes >= 2`), from stream `s`.
    pub fn other(s: &mut u64, me: usize, nodes: usize) -> usize {
        let d = (Self::splitmix(s) % (nodes as u64 - 1)) as usize;
        if d >= me {
            d + 1
        } else {
            d
        }
    }

    /// The next destination node.
    pub fn draw(&mut self) -> usize {
        Self::other(&mut self.rng, self.me, self.nodes)
    }
}

impl TxFlow {
    /// A flow of scenario index `flow` to `dlid`, sending in cycles `start..stop`.
    pub fn new(
        flow: u32,
        dlid: u16,
        sl: u8,
        mtu: u16,
        message_bytes: u64,
        start: u64,
        stop: u64,
    ) -> Self {
        TxFlow {
            flow,
            dlid,
            sl,
            mtu,
            message_bytes,
            start,
            stop,
            left: message_bytes,
            psn: 0,
            cc: None,
            src: MsgSource::new(Pattern::Saturating, 1, message_bytes, start, stop, 0, 1)
                .expect("a saturating source has no settings to reject"),
            sent: None,
            cc_wake: 0,
            retarget: None,
        }
    }

    /// The same flow gated by a reaction point.
    pub fn with_cc(mut self, cc: impl Into<FlowCc>) -> Self {
        self.cc = Some(cc.into());
        self
    }

    /// The same flow gated by any reaction point.
    pub fn with_controller(mut self, cc: FlowCc) -> Self {
        self.cc = Some(cc);
        self
    }

    /// The same flow with its messages arriving from `src` (default: saturating).
    pub fn with_source(mut self, src: MsgSource) -> Self {
        self.src = src;
        self
    }

    fn active(&self, t: u64) -> bool {
        self.start <= t && t < self.stop
    }

    /// Tells the controller about a finished send and time; whether the flow may start a packet at `t`.
    fn may_send(&mut self, t: u64) -> bool {
        // The send time foreseen at the send, checked once the send is reported (debug builds).
        let foreseen =
            (self.sent.is_some_and(|s| s.end <= t) && self.cc_wake != 0).then_some(self.cc_wake);
        self.report(t);
        match self.cc.as_mut() {
            None => true,
            // Under CC a packet is chosen only after the previous one's last wire cycle has been reported,
            // so that its inter-packet delay is known (the reaction point's contract: start >= end + 1 + IRD).
            Some(_) if self.sent.is_some() => false,
            Some(c) => {
                c.advance(t);
                let at = c.next_send();
                self.cc_wake = c.wake_for_send(at);
                // Asked after the foreseen cycle, the delay has run out by now.
                debug_assert!(
                    foreseen.is_none_or(|w| w.max(t) == self.cc_wake),
                    "foreseen send at {foreseen:?}, due at {}",
                    self.cc_wake
                );
                at <= t
            }
        }
    }

    fn report(&mut self, t: u64) {
        if let (Some(s), Some(c)) = (self.sent, self.cc.as_mut()) {
            if s.end <= t {
                c.on_sent(s);
                self.sent = None;
            }
        }
    }

    /// Takes back the packet [`Self::next_packet`] made last (it was not sent).
    fn unsend(&mut self) {
        self.psn = self.psn.wrapping_sub(1) & 0xFF_FFFF;
        let last = self.left == self.message_bytes;
        // The packet carried min(mtu, what was left) bytes; after a message's last packet `left` was reset.
        let before = if last {
            let r = self.message_bytes % u64::from(self.mtu);
            if r == 0 {
                u64::from(self.mtu).min(self.message_bytes)
            } else {
                r
            }
        } else {
            u64::from(self.mtu)
        };
        self.left = if last { before } else { self.left + before };
        let first = self.left == self.message_bytes;
        self.src.untake(first, last);
    }

    /// The next packet of this flow; advances the message and the PSN.
    fn next_packet(&mut self, now: u64, slid: u16, vls: u8) -> PacketDesc {
        let first = self.left == self.message_bytes;
        if first {
            self.src.first_taken(now);
        }
        let payload = self.left.min(u64::from(self.mtu));
        self.left -= payload;
        let last = self.left == 0;
        let op = match (first, last) {
            (true, true) => Opcode::RcSendOnly,
            (true, false) => Opcode::RcSendFirst,
            (false, false) => Opcode::RcSendMiddle,
            (false, true) => Opcode::RcSendLast,
        };
        if last {
            self.left = self.message_bytes;
            self.src.last_taken();
        }
        let mut d = PacketDesc::local(self.dlid, slid, self.sl, op, payload as u16);
        d.vl = self.sl % vls;
        d.psn = self.psn;
        d.payload_seed = self.psn;
        d.dest_qp = self.flow + FIRST_DATA_QP;
        d.tag = self.flow;
        self.psn = (self.psn + 1) & 0xFF_FFFF;
        d
    }
}

/// What an HCA received for one flow.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RxCount {
    /// Packets whose last byte is in.
    pub packets: u64,
    /// Their payload bytes.
    pub payload_bytes: u64,
    /// Of them, FECN-marked.
    pub fecn: u64,
    /// Of them, ECN CE-marked (RoCEv2).
    pub ecn_ce: u64,
    /// The PSN of the last one, for the order check.
    pub last_psn: Option<u32>,
}

/// What one HCA keeps of one scenario flow: as its destination, what it received, the CNPs and ACKs it sent
/// back and the messages completed; as its source, what it injected and the CNPs and ACKs it got back. One
/// entry per flow, so that accounting a packet finds everything of its flow with one lookup (one cold cache
/// line or two, not one per counter).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FlowCounts {
    /// Received (only flows addressed here count).
    pub rx: RxCount,
    /// When this HCA last queued a CNP for the flow.
    pub last_cnp: Option<u64>,
    /// Completion cycles of messages received here, not yet matched with their arrival.
    pub done: VecDeque<u64>,
    /// Packets this HCA injected.
    pub injected: u64,
    /// CNPs this HCA sent (as the flow's destination).
    pub cnp_sent: u64,
    /// CNPs this HCA received (as the flow's source).
    pub becn_rx: u64,
    /// ACKs this HCA sent (as the flow's destination).
    pub acks_sent: u64,
    /// ACKs this HCA received (as the flow's source).
    pub acks_rx: u64,
}

/// What the sink found wrong in the packets it received (zero in a correct run).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SinkErrors {
    /// Packets whose ICRC did not match their covered fields as they arrived ([`PacketDesc::icrc_ok`]):
    /// something on the way changed a field the ICRC covers.
    pub icrc: u64,
    /// Data packets of a flow that did not come after the flow's previous one in PSN order (a duplicate or
    /// a reordering: an RC responder's PSN check). A flow's packets to one destination keep their order on
    /// every path the fabric has (one route per destination, FIFO per VL).
    pub psn_order: u64,
}

/// The VL of `sl` under table `t`, or SL mod `vls` without one.
fn vl_of(t: Option<&[u8; 16]>, vls: u8, sl: u8) -> u8 {
    match t {
        Some(t) => t[usize::from(sl & 15)],
        None => sl % vls,
    }
}

/// One HCA: port, flows it sends, and receive accounting. See the module documentation.
///
/// `repr(C)`, the fields every step, skip and `next_event` reads first, then the port (whose own hot fields
/// come first), then the counters: in a fabric of hundreds of HCAs each is cold when its turn comes, and
/// Rust's own order (by alignment) spread them over more cache lines than they fill.
#[derive(Debug, Clone)]
#[repr(C)]
pub struct Hca {
    /// The packet arriving now: its tail cycle and descriptor.
    arriving: Option<(u64, PacketDesc)>,
    /// Earliest end of an open RR-CC period (when to poll the receivers).
    pub(crate) rrcc_due: u64,
    /// The first cycle the host cap lets a data packet start.
    host_next: u64,
    flows: Vec<TxFlow>,
    /// Per VL: the packet loaded into the port's source of that VL and not yet sent.
    heads: Vec<Option<Loaded>>,
    /// Per VL: the flow its next packet is chosen from first (round-robin over the flows on that VL).
    rr: Vec<usize>,
    cnp_q: VecDeque<PacketDesc>,
    /// ACKs waiting, at most one per flow (a newer one updates the PSN of the one waiting).
    ack_q: VecDeque<PacketDesc>,
    /// Host injection cap ([`Hca::set_host_cap`]): `(8 * clock_mhz, cap_mbps)`, cycles per byte as a ratio.
    host_cap: Option<(u64, u64)>,
    /// Least cycles between two CNPs for one flow (0: one per marked packet).
    cnp_interval: u64,
    rate: LinkRate,
    /// RoCEv2 mode: the framing bytes added to every frame.
    roce: Option<u16>,
    pub(crate) lid: u16,
    pub(crate) vls: u8,
    acks: AckMode,
    np: bool,
    /// SL -> VL of everything this HCA sends (`[settings] sl2vl`); `None`: SL s on VL s mod vls.
    sl2vl: Option<[u8; 16]>,
    ep: Endpoint,
    /// Per scenario flow: what this HCA counts of it.
    pub per_flow: FlowTable<FlowCounts>,
    /// Per scenario flow: the RR-CC receiver (RR-CC on, flows addressed here).
    pub(crate) rrcc: Vec<Option<RrccRx>>,
    /// CNPs dropped on a full queue.
    pub cnp_dropped: u64,
    /// What the sink found wrong.
    pub sink_errors: SinkErrors,
    /// Control packets (CNPs and ACKs) injected and received, for the integrity check.
    pub ctl_injected: u64,
    /// See `ctl_injected`.
    pub ctl_delivered: u64,
}

impl Hca {
    /// An HCA with LID `lid` on a link of `rate`, `vls` data VLs of `buf_blocks` receive buffer, sending
    /// flow-control packets every `fc_interval` cycles; `nflows` is the number of flows in the scenario.
    pub fn new(
        lid: u16,
        rate: LinkRate,
        vls: u8,
        buf_blocks: u16,
        fc_interval: u16,
        nflows: usize,
    ) -> Result<Self, ConfigError> {
        Ok(Hca {
            ep: Endpoint::new(rate, vls, buf_blocks, fc_interval)?,
            lid,
            vls: vls.max(1),
            rate,
            flows: Vec::new(),
            rr: vec![0; usize::from(vls.clamp(1, 15))],
            heads: vec![None; usize::from(vls.clamp(1, 15))],
            arriving: None,
            cnp_dropped: 0,
            sink_errors: SinkErrors::default(),
            // Allocated by the first `set_rrcc_receiver` (RR-CC on): HCAs x flows entries otherwise.
            per_flow: FlowTable::new(nflows),
            rrcc: Vec::new(),
            rrcc_due: u64::MAX,
            ctl_injected: 0,
            ctl_delivered: 0,
            cnp_q: VecDeque::with_capacity(CNP_QUEUE),
            ack_q: VecDeque::new(),
            acks: AckMode::None,
            np: false,
            roce: None,
            cnp_interval: 0,
            sl2vl: None,
            host_cap: None,
            host_next: 0,
        })
    }

    /// Caps what the host can feed the HCA at `cap_mbps` (a PCIe slot slower than the link, as in Gran &
    /// Reinemo's testbed): a data packet of `b` bytes on the wire starting at `t` lets the next one start
    /// no earlier than `t + ceil(b * 8 * clock_mhz / cap_mbps)`, so data leave at most at the cap on
    /// average, each at the link's rate. CNPs are the HCA's own and are not capped. A cap at or above the
    /// link rate changes nothing but the check.
    pub fn set_host_cap(&mut self, cap_mbps: u64, clock_mhz: u32) {
        self.host_cap = (cap_mbps > 0).then_some((8 * u64::from(clock_mhz), cap_mbps));
    }

    /// Caps what the host takes out of the HCA's receive buffer at `cap_mbps` (a PCIe slot slower than the
    /// link on the receiving side): received blocks leave the buffer, over all VLs in VL order, at that
    /// rate instead of as soon as a packet's tail is in, so the credit the HCA returns, and with it the
    /// link, slow down to it (in RoCEv2 mode the buffer's fill drives PFC instead).
    pub fn set_drain_cap(&mut self, cap_mbps: u64, clock_mhz: u32) -> Result<(), ConfigError> {
        let r = LinkRate::from_mbps(cap_mbps, clock_mhz.saturating_mul(1000))?;
        self.ep.set_drain(Some(r));
        Ok(())
    }

    /// Maps SL `s` to VL `t[s]` on this HCA's link, as the switches do with the same table (every VL below
    /// the HCA's data VLs; the scenario parser checks that).
    pub fn set_sl2vl(&mut self, t: [u8; 16]) {
        self.sl2vl = Some(t);
    }

    /// The port's VL arbitration (VLArbitrationTable and VLHighLimit; default opensm's): which VL's loaded
    /// packet goes next among those with credit. A flow on a VL the table never grants would never send,
    /// so the scenario parser refuses a table that leaves out a VL some flow uses.
    pub fn set_vl_arb(&mut self, t: &rtl_model::mad::vlarb::VlArbTable) -> Result<(), ConfigError> {
        self.ep.set_vl_arb(t)
    }

    /// The VLs the port's arbiter grants (a bit per VL).
    pub fn arb_vls(&self) -> u16 {
        self.ep.arb_vls()
    }

    /// The VL of SL `sl` at this HCA's port.
    pub(crate) fn vl_of(&self, sl: u8) -> u8 {
        vl_of(self.sl2vl.as_ref(), self.vls, sl)
    }

    /// Turns on the notification point: a CNP back for every FECN-marked (IB) or CE-marked (RoCEv2) data
    /// packet.
    pub fn set_notification_point(&mut self, on: bool) {
        self.np = on;
    }

    /// Switches the port to RoCEv2: PFC with `pfc` (frames of up to `max_frame_blocks`) instead of credits,
    /// RoCEv2 frames with `frame_overhead` framing bytes, RoCEv2 CNPs for CE-marked packets.
    pub fn set_roce(
        &mut self,
        pfc: PfcConfig,
        max_frame_blocks: u16,
        frame_overhead: u16,
    ) -> Result<(), ConfigError> {
        self.ep = self.ep.clone().with_pfc(pfc, max_frame_blocks)?;
        self.roce = Some(frame_overhead);
        Ok(())
    }

    /// When this HCA, as a destination, acknowledges data packets ([`AckMode`]; default none).
    pub fn set_acks(&mut self, mode: AckMode) {
        self.acks = mode;
    }

    /// At most one CNP per flow every `cycles` (DCQCN's notification point sends one per 50 us at most); 0
    /// answers every marked packet.
    pub fn set_cnp_interval(&mut self, cycles: u64) {
        self.cnp_interval = cycles;
    }

    /// A PFC pause frame arrives this cycle (RoCEv2 mode).
    pub fn rx_pause(&mut self, f: rtl_model::wire::pfc::Repr) {
        self.ep.rx_pause(f);
    }

    /// Every flow stops sending from cycle `t` on (a packet already on the wire completes).
    pub fn stop_all(&mut self, t: u64) {
        for f in &mut self.flows {
            f.stop = f.stop.min(t);
        }
    }

    /// Keeps an entry for every scenario flow in the per-flow tables (indexing instead of a search; see
    /// [`FlowTable`]), as a fabric does when HCAs x flows is small.
    pub fn dense_flow_tables(&mut self) {
        self.per_flow.make_dense();
    }

    /// Makes room in the per-flow tables for scenario flow `i`, which this HCA sends or receives (fabric
    /// assembly notes every flow at both ends, in flow order).
    pub fn note_flow(&mut self, i: usize) {
        self.per_flow.note(i);
    }

    /// Adds a flow this HCA sends.
    pub fn add_flow(&mut self, f: TxFlow) {
        self.flows.push(f);
    }

    /// The message source of scenario flow `flow`, if this HCA sends it.
    pub fn flow_source(&mut self, flow: usize) -> Option<&mut MsgSource> {
        self.flows
            .iter_mut()
            .find(|f| f.flow as usize == flow)
            .map(|f| &mut f.src)
    }

    /// Arrivals refused on a full send queue, per flow this HCA sends: (flow, count).
    pub fn refused(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        self.flows.iter().map(|f| (f.flow as usize, f.src.refused))
    }

    /// Flow `i` of this HCA (in the order added), for a driver that reschedules or retargets it between
    /// steps (the bench's constant-rate random-destination source).
    pub fn flow_mut(&mut self, i: usize) -> Option<&mut TxFlow> {
        self.flows.get_mut(i)
    }

    /// A packet head arrives this cycle.
    pub fn rx_packet(&mut self, now: u64, p: PacketStart) {
        self.ep.rx_packet(p);
        let start = self.rate.tick_of(now) + u64::from(p.offset);
        let tail = self
            .rate
            .cycle_of_byte_end(start, u64::from(p.desc.wire_len));
        self.account_tail(now);
        if let Some((t, d)) = self.arriving.replace((tail, p.desc)) {
            // The link is serial: a new head means the previous tail is in.
            self.count(now, d);
            debug_assert!(t <= now);
        }
        self.account_tail(now);
    }

    /// A flow-control packet arrives this cycle.
    pub fn rx_fc(&mut self, fc: FcPacket) {
        self.ep.rx_fc(fc);
    }

    /// See [`Endpoint::set_fc_repeats_off`].
    pub fn set_fc_repeats_off(&mut self, on: bool) {
        self.ep.set_fc_repeats_off(on);
    }

    fn count(&mut self, now: u64, d: PacketDesc) {
        if !d.icrc_ok(self.roce.is_some()) {
            self.sink_errors.icrc += 1;
        }
        if d.opcode == u8::from(Opcode::IbCnp) || d.opcode == u8::from(Opcode::RoceCnp) {
            self.ctl_delivered += 1;
            if let Some(c) = self.per_flow.get_mut(d.tag as usize) {
                c.becn_rx += 1;
            }
            if let Some(f) = self.flows.iter_mut().find(|f| f.flow == d.tag) {
                f.report(now);
                if let Some(c) = f.cc.as_mut() {
                    c.advance(now);
                    c.on_feedback(now, Feedback::Cnp(rrcc::cnp_info(&d)));
                    if f.sent.is_some() {
                        // Feedback before the send's end may change the delay it loads: ask at the end.
                        f.cc_wake = 0;
                    }
                }
            }
            return;
        }
        if d.opcode == u8::from(Opcode::RcAcknowledge) {
            self.ctl_delivered += 1;
            if let Some(c) = self.per_flow.get_mut(d.tag as usize) {
                c.acks_rx += 1;
            }
            return;
        }
        if let Some(c) = self.per_flow.get_mut(d.tag as usize).map(|c| &mut c.rx) {
            // After the last PSN within half the 24-bit space; a flow retargeted packet by packet (the
            // uniform bench) skips PSNs at each destination but never goes back.
            if c.last_psn
                .is_some_and(|l| d.psn.wrapping_sub(l).wrapping_sub(1) & 0xFF_FFFF >= 1 << 23)
            {
                self.sink_errors.psn_order += 1;
            }
            c.last_psn = Some(d.psn);
            c.packets += 1;
            c.payload_bytes += u64::from(d.payload_len);
            c.fecn += u64::from(d.fecn);
            c.ecn_ce += u64::from(d.ecn == 3);
        }
        if d.opcode == u8::from(Opcode::RcSendLast) || d.opcode == u8::from(Opcode::RcSendOnly) {
            self.message_done(d.tag as usize, now);
        }
        self.rrcc_packet(now, &d);
        if self.acks_it(&d) {
            self.push_ack(&d);
        }
        if self.answers(now, &d) {
            if let Some(c) = self.per_flow.get_mut(d.tag as usize) {
                c.last_cnp = Some(now);
            }
            let c = match self.roce {
                Some(o) => {
                    let mut c = roce::cnp_for(&d, self.lid, self.vls, o);
                    c.vl = self.vl_of(d.sl);
                    c
                }
                None => {
                    let mut c = PacketDesc::local(d.slid, self.lid, d.sl, Opcode::IbCnp, 0);
                    c.becn = true;
                    c.vl = self.vl_of(d.sl);
                    c.dest_qp = d.dest_qp;
                    c.tag = d.tag;
                    c
                }
            };
            self.push_cnp(c);
        }
    }

    /// Whether data packet `d` is acknowledged ([`AckMode`]).
    fn acks_it(&self, d: &PacketDesc) -> bool {
        match self.acks {
            AckMode::None => false,
            AckMode::Packet => true,
            AckMode::Message => {
                d.opcode == u8::from(Opcode::RcSendLast) || d.opcode == u8::from(Opcode::RcSendOnly)
            }
        }
    }

    /// Queues the ACK of data packet `d` (back to its source, on its SL), or raises the PSN of the one of
    /// its flow still waiting.
    fn push_ack(&mut self, d: &PacketDesc) {
        if let Some(a) = self.ack_q.iter_mut().find(|a| a.tag == d.tag) {
            a.psn = d.psn;
            a.seal(self.roce.is_some());
            return;
        }
        let mut a = match self.roce {
            Some(o) => {
                // Not ECN-capable, as the RoCEv2 CNP: no switch marks it.
                let mut a = roce::to_roce(
                    PacketDesc::local(d.slid, self.lid, d.sl, Opcode::RcAcknowledge, 0),
                    o,
                );
                a.ecn = 0;
                a
            }
            None => PacketDesc::local(d.slid, self.lid, d.sl, Opcode::RcAcknowledge, 0),
        };
        a.vl = self.vl_of(d.sl);
        a.dest_qp = d.dest_qp;
        a.psn = d.psn;
        a.tag = d.tag;
        a.seal(self.roce.is_some());
        self.ack_q.push_back(a);
    }

    /// The control packet to load next: a CNP, else an ACK.
    fn next_ctl(&self) -> Option<&PacketDesc> {
        self.cnp_q.front().or_else(|| self.ack_q.front())
    }

    /// Queues a CNP ahead of data, or drops it on a full queue.
    pub(crate) fn push_cnp(&mut self, mut c: PacketDesc) {
        c.seal(self.roce.is_some());
        if self.cnp_q.len() < CNP_QUEUE {
            self.cnp_q.push_back(c);
        } else {
            self.cnp_dropped += 1;
        }
    }

    fn account_tail(&mut self, now: u64) {
        if let Some((t, d)) = self.arriving {
            if t <= now {
                self.arriving = None;
                self.count(now, d);
            }
        }
    }

    /// A packet is arriving (head in, tail not yet).
    pub fn receiving(&self) -> bool {
        self.arriving.is_some()
    }

    /// [`Hca::receiving`] as it will be once the port is at cycle `t` (at or after [`Hca::port_now`], and
    /// with no step before it: a skip to `t` counts every tail before `t`), without moving the port.
    pub fn receiving_at(&self, t: u64) -> bool {
        self.arriving.is_some_and(|(tail, _)| tail >= t)
    }

    /// The first cycle at or after `now` (the cycle the next [`Hca::step`] simulates) in which a step can do
    /// more than count the port's timers down, with nothing handed in; `u64::MAX`: never. Predicted: the
    /// port's own events (`Endpoint::next_event`: credits, PFC pauses and refreshes), a packet's tail, an
    /// RR-CC receiver's period end, a flow's start and stop, its next message arrival
    /// (`MsgSource::idle_until`) and its reaction point's next send time (`FlowCc::wake_for_send`). A flow
    /// that may send now makes `now` an event.
    pub fn next_event(&self, now: u64) -> u64 {
        // Every candidate is at or after `now`: the checks that can answer `now` come before the port's
        // `next_event`, the dearest of them.
        // A CNP or ACK waiting to be loaded: it takes back a data packet loaded on its VL, or loads.
        if let Some(c) = self.next_ctl() {
            if self.heads[self.slot(c.vl)] != Some(Loaded::Ctl) {
                return now;
            }
        }
        // An RR-CC receiver's period end.
        let mut at = self.rrcc_due.max(now);
        let mut empty = 0u16;
        for (v, h) in self.heads.iter().enumerate() {
            match *h {
                Some(Loaded::Data(i)) => {
                    let f = &self.flows[i];
                    if !f.active(now) {
                        return now;
                    }
                    at = at.min(f.stop);
                }
                Some(Loaded::Ctl) => {}
                None => empty |= 1 << v,
            }
        }
        if empty != 0 {
            for f in &self.flows {
                if f.start >= f.stop || empty & (1 << self.flow_slot(f)) == 0 {
                    continue;
                }
                if f.active(now) {
                    if let Some(t) = f.src.idle_until(now) {
                        // No message waiting: nothing to choose before the next one arrives.
                        at = at.min(t);
                        continue;
                    }
                    match (f.cc.is_some(), f.sent) {
                        // Gated until the last packet's end is reported, and then held back until
                        // the next send if that was foreseen (see `TxFlow::cc_wake`).
                        (true, Some(s)) if s.end > now => at = at.min(s.end.max(f.cc_wake)),
                        // Held back by the reaction point until then.
                        (true, None) if f.cc_wake > now => at = at.min(f.cc_wake),
                        // Ready, once the host cap lets a packet start.
                        _ if self.host_next > now => at = at.min(self.host_next),
                        _ => return now,
                    }
                } else if f.start > now {
                    at = at.min(f.start);
                }
            }
        }
        if let Some((tail, d)) = self.arriving {
            // A passive tail is counted by the skip past it, at its own cycle.
            if !self.passive_tail(tail, &d) {
                at = at.min(tail.max(now));
            }
        }
        self.ep
            .next_event()
            .map_or(at, |e| at.min(now.saturating_add(e)))
    }

    /// Flow-control state of the port (one data VL, see `rtl_model::link::fc`).
    pub fn fc_sync(&self) -> Option<rtl_model::link::fc::FcSync> {
        self.ep.fc_sync()
    }

    /// Advances the port `n` idle cycles (see [`Hca::next_event`]; the caller never skips past it). A
    /// passive tail (see `Hca::passive_tail`) skipped over is counted at its own cycle, as the step in
    /// that cycle would have.
    pub fn skip(&mut self, n: u64) {
        self.ep.skip(n);
        if let Some((tail, d)) = self.arriving {
            if tail < self.ep.now() {
                debug_assert!(self.passive_tail(tail, &d), "skipped past a tail that acts");
                self.arriving = None;
                self.count(tail, d);
            }
        }
    }

    /// Whether counting packet `d` at its tail cycle `tail` only adds to counters and the completion
    /// record: an ACK, or a data packet with no RR-CC receiver for its flow and no CNP or ACK to send back
    /// (a CNP feeds a reaction point). Such a tail decides nothing that the cycles after it depend on until the next step, so it
    /// needs no step of its own: [`Hca::skip`] counts it with its own cycle, which every count uses
    /// (completion time, CNP interval), exactly as the step at the tail would. About half the HCA steps
    /// that took nothing in and sent nothing were such tails (`clos648-shift-cc`).
    fn passive_tail(&self, tail: u64, d: &PacketDesc) -> bool {
        if d.opcode == u8::from(Opcode::IbCnp) || d.opcode == u8::from(Opcode::RoceCnp) {
            return false;
        }
        if d.opcode == u8::from(Opcode::RcAcknowledge) {
            return true;
        }
        if matches!(self.rrcc.get(d.tag as usize), Some(Some(_))) {
            return false;
        }
        !self.answers(tail, d) && !self.acks_it(d)
    }

    /// The notification point's rule: whether data packet `d`, counted at `at`, is answered by a CNP. It is
    /// when the notification point is on, `d` is marked (FECN; RoCEv2: ECN CE) and no CNP went back for its
    /// flow within the last `cnp_interval` cycles.
    fn answers(&self, at: u64, d: &PacketDesc) -> bool {
        let marked = match self.roce {
            None => d.fecn,
            Some(_) => d.ecn == 3,
        };
        let last = self.per_flow.get(d.tag as usize).and_then(|c| c.last_cnp);
        marked && self.np && last.is_none_or(|l| at >= l + self.cnp_interval)
    }

    /// The cycle the port's next step simulates (it counts the steps and skips it was given).
    pub fn port_now(&self) -> u64 {
        self.ep.now()
    }

    /// One cycle at `now` (the fabric's clock): loads the next packet of the round-robin flow when none is
    /// waiting, steps the port, and returns what goes on the link.
    pub fn step(&mut self, now: u64) -> EndpointOut {
        self.account_tail(now);
        if now >= self.rrcc_due {
            self.rrcc_poll(now);
        }
        // A CNP or an ACK goes ahead of data on its VL: a data packet loaded there (waiting for credit, the
        // wire or the arbiter) is taken back, as is one whose flow stopped. It is rebuilt when its flow is
        // chosen again (same PSN: not consumed).
        let ctl_vl = self.next_ctl().map(|c| self.slot(c.vl));
        for (v, h) in self.heads.iter_mut().enumerate() {
            if let Some(Loaded::Data(i)) = *h {
                if !self.flows[i].active(now) || ctl_vl == Some(v) {
                    self.ep.clear_source(v as u8);
                    self.flows[i].unsend();
                    *h = None;
                }
            }
        }
        if let Some(v) = ctl_vl {
            if self.heads[v].is_none() {
                let c = match self.cnp_q.pop_front() {
                    Some(c) => c,
                    None => self.ack_q.pop_front().expect("a control packet is queued"),
                };
                self.ep.load(c);
                self.ep.set_first(Some(c.vl));
                self.heads[v] = Some(Loaded::Ctl);
            }
        }
        if !self.flows.is_empty() && now >= self.host_next {
            for v in 0..self.heads.len() {
                if self.heads[v].is_none() {
                    self.load(v, now);
                }
            }
        }
        let out = self.ep.step();
        if let Some(p) = out.pkt {
            let v = self.slot(p.desc.vl);
            let l = self.heads[v].take().expect("a packet sent was loaded");
            match l {
                Loaded::Ctl => {
                    self.ctl_injected += 1;
                    if let Some(c) = self.per_flow.get_mut(p.desc.tag as usize) {
                        if p.desc.opcode == u8::from(Opcode::RcAcknowledge) {
                            c.acks_sent += 1;
                        } else {
                            c.cnp_sent += 1;
                        }
                    }
                }
                Loaded::Data(i) => {
                    if let Some(c) = self.per_flow.get_mut(p.desc.tag as usize) {
                        c.injected += 1;
                    }
                    let start = self.rate.tick_of(now) + u64::from(p.offset);
                    let bytes = u64::from(p.desc.wire_len);
                    if let Some((num, cap)) = self.host_cap {
                        // Wire bytes of at most 8 KiB times 8 * clock_mhz (u32): far below u64's range.
                        self.host_next = now + (bytes * num).div_ceil(cap);
                        self.ep.set_hold_until(self.host_next);
                    }
                    let s = Sent {
                        start: now,
                        end: self.rate.cycle_of_byte_end(start, bytes),
                        bytes: bytes as u32,
                    };
                    let f = &mut self.flows[i];
                    f.sent = Some(s);
                    f.cc_wake = f.cc.as_ref().and_then(|c| c.send_after(&s)).unwrap_or(0);
                    if let Some(r) = f.retarget.as_mut() {
                        r.next += r.gap;
                        f.start = r.next;
                        f.dlid = r.first_lid + r.draw() as u16;
                    }
                }
            }
        }
        out
    }

    /// Loads the next packet of VL slot `v`: the first flow on that VL, round-robin from `rr[v]`, that is
    /// active, has a message and whose reaction point lets it send.
    fn load(&mut self, v: usize, now: u64) {
        let n = self.flows.len();
        for j in 0..n {
            let k = (self.rr[v] + j) % n;
            if self.heads.len() > 1 && self.flow_slot(&self.flows[k]) != v {
                continue;
            }
            let f = &mut self.flows[k];
            if f.active(now) && f.src.has_work(now) && f.may_send(now) {
                let mut d = f.next_packet(now, self.lid, self.vls);
                d.vl = vl_of(self.sl2vl.as_ref(), self.vls, d.sl);
                if let Some(o) = self.roce {
                    d = roce::to_roce(d, o);
                }
                d.seal(self.roce.is_some());
                self.ep.load(d);
                self.heads[v] = Some(Loaded::Data(k));
                self.rr[v] = (k + 1) % n;
                return;
            }
        }
    }

    /// The port's source slot of VL `vl` (VLs beyond the data VLs share the last, as in the port).
    fn slot(&self, vl: u8) -> usize {
        usize::from(vl).min(self.heads.len() - 1)
    }

    /// The source slot flow `f`'s packets are loaded into.
    fn flow_slot(&self, f: &TxFlow) -> usize {
        if self.heads.len() == 1 {
            0
        } else {
            self.slot(self.vl_of(f.sl))
        }
    }

    /// The CCTI of scenario flow `flow` if this HCA sends it under IB CC (for observation: bringing the
    /// controller's lazy state up to date changes no result).
    pub fn ccti(&mut self, flow: u32) -> Option<u8> {
        let f = self.flows.iter_mut().find(|f| f.flow == flow)?;
        match f.cc.as_mut()? {
            FlowCc::Cct(c) => Some(c.ccti()),
            _ => None,
        }
    }

    /// Credit of `vl` towards the switch, in blocks.
    pub fn credits_avail(&self, vl: usize) -> u16 {
        self.ep.credits_avail(vl)
    }

    /// Free blocks of the receive buffer of `vl`.
    pub fn rx_free(&self, vl: usize) -> u16 {
        self.ep.rx_free(vl)
    }

    /// A message of flow `flow` completed here at `now`.
    fn message_done(&mut self, flow: usize, now: u64) {
        if let Some(c) = self.per_flow.get_mut(flow) {
            c.done.push_back(now);
        }
    }

    /// The memory a visit to this HCA reads first, as (address, bytes): its own record, its first flow's
    /// and its port's first VL. For a caller that steps many HCAs and has the next one's state fetched into
    /// cache while it steps the current one (a prefetch); it reads nothing.
    pub fn hot_memory(&self, mut f: impl FnMut(*const u8, usize)) {
        f((self as *const Self).cast(), std::mem::size_of::<Self>());
        if let Some(flow) = self.flows.first() {
            f(
                (flow as *const TxFlow).cast(),
                std::mem::size_of::<TxFlow>(),
            );
        }
        self.ep.hot_memory(&mut f);
    }

    /// Overflow cycles and credit errors of the port (lossless violations; zero in a correct run). The
    /// sink's own checks are [`Hca::sink_errors`].
    pub fn violations(&self) -> u64 {
        let s = self.ep.stats();
        s.overflow + s.credit_err
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_segmented_and_psns_advance() {
        let mut f = TxFlow::new(3, 9, 0, 1024, 2500, 0, 10);
        let ops: Vec<(u8, u16, u32)> = (0..4)
            .map(|_| {
                let d = f.next_packet(0, 1, 1);
                (d.opcode, d.payload_len, d.psn)
            })
            .collect();
        assert_eq!(
            ops,
            vec![
                (Opcode::RcSendFirst.into(), 1024, 0),
                (Opcode::RcSendMiddle.into(), 1024, 1),
                (Opcode::RcSendLast.into(), 452, 2),
                (Opcode::RcSendFirst.into(), 1024, 3),
            ]
        );
        assert!(f.active(9) && !f.active(10));
    }

    #[test]
    fn unsend_restores_message_position_and_psn() {
        for (mtu, msg) in [(1024u16, 2500u64), (1024, 2048), (2048, 100)] {
            let mut f = TxFlow::new(0, 9, 0, mtu, msg, 0, 10);
            let mut g = f.clone();
            for _ in 0..5 {
                let want = g.next_packet(0, 1, 1);
                let _ = f.next_packet(0, 1, 1);
                f.unsend();
                assert_eq!(f.next_packet(0, 1, 1), want, "mtu {mtu} message {msg}");
            }
        }
    }

    #[test]
    fn a_marked_packet_is_answered_by_a_cnp_before_data() {
        let r = LinkRate::new(2, 1).unwrap();
        let mut h = Hca::new(2, r, 1, 128, 256, 1).unwrap();
        h.set_notification_point(true);
        h.rx_fc(FcPacket {
            vl: 0,
            fctbs: 0,
            fccl: 100,
        });
        let mut d = PacketDesc::local(2, 7, 0, Opcode::RcSendOnly, 64);
        d.fecn = true;
        d.dest_qp = 5;
        h.rx_packet(0, PacketStart { desc: d, offset: 0 });
        let mut cnp = None;
        for t in 0..200 {
            if let Some(p) = h.step(t).pkt {
                cnp = Some(p.desc);
            }
        }
        let c = cnp.expect("a CNP goes out");
        assert_eq!((c.opcode, c.dlid, c.slid, c.becn), (0x80, 7, 2, true));
        assert_eq!(
            (
                h.per_flow[0].rx.fecn,
                h.per_flow[0].cnp_sent,
                h.ctl_injected
            ),
            (1, 1, 1)
        );
        // Without the notification point, no CNP.
        let mut q = Hca::new(2, r, 1, 128, 256, 1).unwrap();
        q.rx_fc(FcPacket {
            vl: 0,
            fctbs: 0,
            fccl: 100,
        });
        q.rx_packet(0, PacketStart { desc: d, offset: 0 });
        assert!((0..200).all(|t| q.step(t).pkt.is_none()));
    }

    #[test]
    fn roce_mode_obeys_pause_and_answers_ce_with_a_roce_cnp() {
        let r = LinkRate::new(5, 1).unwrap();
        let pfc = PfcConfig {
            headroom_blocks: Some(40),
            ..PfcConfig::default()
        };
        let mut h = Hca::new(2, r, 1, 128, 256, 1).unwrap();
        h.set_roce(pfc, 34, 24).unwrap();
        h.set_notification_point(true);
        h.add_flow(TxFlow::new(0, 7, 0, 2048, 1 << 20, 0, u64::MAX));
        // No credits are needed in RoCEv2 mode: data goes out at once, as RoCEv2 frames.
        let first = (0..10)
            .find_map(|t| h.step(t).pkt)
            .expect("sends without credit");
        assert_eq!((first.desc.ecn, first.desc.wire_len), (2, 2130));
        // An XOFF stops new packets until it is lifted.
        h.rx_pause(rtl_model::link::pfc::frame(0, 0xFFFF));
        let paused = (10..5000).filter(|&t| h.step(t).pkt.is_some()).count();
        assert_eq!(paused, 0, "sent while paused");
        h.rx_pause(rtl_model::link::pfc::frame(0, 0));
        assert!((5000..6000).any(|t| h.step(t).pkt.is_some()), "resumed");
        // A CE-marked arrival is answered by a RoCEv2 CNP before the next data packet.
        let mut d = roce::to_roce(PacketDesc::local(2, 9, 0, Opcode::RcSendOnly, 64), 24);
        d.seal(true);
        d.ecn = 3;
        h.rx_packet(6000, PacketStart { desc: d, offset: 0 });
        let cnp = (6000..9000)
            .filter_map(|t| h.step(t).pkt)
            .find(|p| p.desc.opcode == u8::from(Opcode::RoceCnp))
            .expect("a RoCEv2 CNP goes out");
        assert_eq!((cnp.desc.dlid, cnp.desc.becn, cnp.desc.ecn), (9, true, 0));
        assert_eq!((h.per_flow[0].rx.ecn_ce, h.per_flow[0].cnp_sent), (1, 1));
        assert_eq!(h.violations(), 0);
    }

    #[test]
    fn two_flows_alternate_on_one_port() {
        let r = LinkRate::new(2, 1).unwrap();
        let mut h = Hca::new(1, r, 1, 128, 256, 2).unwrap();
        h.add_flow(TxFlow::new(0, 5, 0, 256, 1 << 20, 0, u64::MAX));
        h.add_flow(TxFlow::new(1, 6, 0, 256, 1 << 20, 0, u64::MAX));
        h.rx_fc(FcPacket {
            vl: 0,
            fctbs: 0,
            fccl: 128,
        });
        let mut dlids = Vec::new();
        for t in 0..5000 {
            if let Some(p) = h.step(t).pkt {
                dlids.push(p.desc.dlid);
            }
        }
        // 128 blocks of credit at start, 5 blocks per packet: 25 packets before credit runs out.
        assert_eq!(dlids.len(), 25);
        assert!(dlids
            .chunks(2)
            .all(|c| c[0] == 5 && c.get(1).is_none_or(|&d| d == 6)));
        assert_eq!((h.per_flow[0].injected, h.per_flow[1].injected), (13, 12));
    }

    #[test]
    fn the_sink_checks_the_icrc_and_the_psn_order() {
        let r = LinkRate::new(2, 1).unwrap();
        let mut h = Hca::new(2, r, 1, 128, 256, 1).unwrap();
        h.note_flow(0);
        let pkt = |psn: u32| {
            let mut d = PacketDesc::local(2, 7, 0, Opcode::RcSendMiddle, 64);
            d.psn = psn;
            d.payload_seed = psn;
            d.seal(false);
            d
        };
        let mut t = 0;
        let mut arrive = |h: &mut Hca, d: PacketDesc| {
            h.rx_packet(t, PacketStart { desc: d, offset: 0 });
            for _ in 0..200 {
                h.step(t);
                t += 1;
            }
        };
        // In order, with the bits a switch may change (VL, FECN, BECN) changed: no error. The PSN may wrap.
        for psn in [0xFF_FFFE, 0xFF_FFFF, 0, 1] {
            let mut d = pkt(psn);
            d.fecn = true;
            d.vl = 3;
            arrive(&mut h, d);
        }
        assert_eq!(
            (h.sink_errors, h.per_flow[0].rx.packets),
            (SinkErrors::default(), 4)
        );
        // A covered field changed on the way, one field at a time: each is an ICRC error.
        let changes: [fn(&mut PacketDesc); 7] = [
            |d| d.dlid ^= 1,
            |d| d.slid ^= 1,
            |d| d.sl ^= 1,
            |d| d.opcode ^= 1,
            |d| d.dest_qp ^= 1,
            |d| d.payload_len ^= 4,
            |d| d.payload_seed ^= 1,
        ];
        for (i, change) in changes.iter().enumerate() {
            let mut d = pkt(2 + i as u32);
            change(&mut d);
            arrive(&mut h, d);
        }
        assert_eq!(h.sink_errors.icrc, 7);
        // A duplicate and a packet from before it are out of PSN order; a gap is not (the uniform bench's
        // flows skip PSNs at each destination).
        arrive(&mut h, pkt(9));
        arrive(&mut h, pkt(9));
        arrive(&mut h, pkt(5));
        arrive(&mut h, pkt(20));
        assert_eq!(
            h.sink_errors,
            SinkErrors {
                icrc: 7,
                psn_order: 2
            }
        );
    }

    /// An HCA of two data VLs (SL s on VL s) sending two saturating flows, flow 0 on SL 0 and flow 1 on
    /// SL 1, of 256-byte packets (5 blocks), with VL arbitration table `arb`.
    fn two_vl_hca(arb: Option<rtl_model::mad::vlarb::VlArbTable>) -> Hca {
        let r = LinkRate::new(2, 1).unwrap();
        let mut h = Hca::new(1, r, 2, 128, 256, 2).unwrap();
        if let Some(t) = arb {
            h.set_vl_arb(&t).unwrap();
        }
        h.add_flow(TxFlow::new(0, 5, 0, 256, 1 << 20, 0, u64::MAX));
        h.add_flow(TxFlow::new(1, 6, 1, 256, 1 << 20, 0, u64::MAX));
        h
    }

    #[test]
    fn a_vl_without_credit_does_not_hold_up_another() {
        let mut h = two_vl_hca(None);
        // Credit on VL 1 only: flow 1 sends while flow 0's packet waits on VL 0.
        h.rx_fc(FcPacket {
            vl: 1,
            fctbs: 0,
            fccl: 128,
        });
        let mut sent = [0u32; 2];
        for t in 0..5000 {
            if let Some(p) = h.step(t).pkt {
                assert_eq!(p.desc.vl, p.desc.sl, "SL s on VL s");
                sent[usize::from(p.desc.vl)] += 1;
            }
        }
        assert_eq!(
            sent,
            [0, 25],
            "128 blocks of VL 1 credit, 5 blocks a packet"
        );
        // Credit on VL 0 lets flow 0's waiting packet go, with the PSN it was built with.
        h.rx_fc(FcPacket {
            vl: 0,
            fctbs: 0,
            fccl: 128,
        });
        let mut psns = Vec::new();
        for t in 5000..10_000 {
            if let Some(p) = h.step(t).pkt {
                assert_eq!(p.desc.vl, 0);
                psns.push(p.desc.psn);
            }
        }
        assert_eq!(psns, (0..25).collect::<Vec<u32>>());
        assert_eq!(h.violations(), 0);
    }

    #[test]
    fn vl_arbitration_weights_share_the_link() {
        use rtl_model::mad::vlarb::{VlArbEntry, VlArbTable};
        // Low table VL 0 weight 15, VL 1 weight 5: three 5-block packets of VL 0 per one of VL 1.
        let table = VlArbTable {
            high: vec![],
            low: vec![
                VlArbEntry { vl: 0, weight: 15 },
                VlArbEntry { vl: 1, weight: 5 },
            ],
            high_limit: 0,
        };
        let mut h = two_vl_hca(Some(table));
        let mut blocks = [0u16; 2];
        let mut order = Vec::new();
        for t in 0..40_000u64 {
            if t % 64 == 0 {
                // The link partner keeps both VLs' credit 1,000 blocks ahead of what was sent.
                for vl in 0..2u8 {
                    h.rx_fc(FcPacket {
                        vl,
                        fctbs: blocks[usize::from(vl)],
                        fccl: (blocks[usize::from(vl)] + 1000) & 0xFFF,
                    });
                    h.step(t);
                }
                continue;
            }
            if let Some(p) = h.step(t).pkt {
                let vl = usize::from(p.desc.vl);
                blocks[vl] = (blocks[vl] + p.desc.blocks()) & 0xFFF;
                order.push(p.desc.vl);
            }
        }
        assert!(order.len() > 250, "{} packets", order.len());
        // After the first grants the pattern is VL 0, 0, 0, 1 over and over.
        let n0 = order.iter().filter(|&&v| v == 0).count();
        let n1 = order.len() - n0;
        assert!(n0.abs_diff(3 * n1) <= 3, "VL 0 {n0} packets, VL 1 {n1}");
        assert!(order
            .windows(4)
            .skip(4)
            .all(|w| w.iter().filter(|&&v| v == 1).count() == 1));
        // Without a table entry of weight above 0, VL 1 would never be granted: the fabric checks that.
        let only0 = VlArbTable {
            high: vec![],
            low: vec![VlArbEntry { vl: 0, weight: 4 }],
            high_limit: 0,
        };
        assert_eq!(two_vl_hca(Some(only0)).arb_vls(), 0b01);
        assert_eq!(
            two_vl_hca(None).arb_vls() & 0b11,
            0b11,
            "opensm's default grants both"
        );
    }

    /// A CCT reaction point: CCTI_Increase 3 up to 20, a timer of 2 ticks, injection delay CCTI / 8 packet times.
    fn cct() -> crate::rate::cct::CctController {
        use crate::rate::cct::{CctController, CctParams, CctSettings};
        use crate::units::{CoreClock, Mtu, IB_LOCAL_OVERHEAD};
        use rtl_model::mad::ca_cong::CaCongestionEntry;
        use rtl_model::mad::cct::{Cct, CctEntry};
        let clock = CoreClock::from_khz(1_000_000).unwrap();
        CctController::new(&CctParams {
            settings: CctSettings {
                entry: CaCongestionEntry {
                    ccti_timer: 2,
                    ccti_increase: 3,
                    trigger_threshold: 0,
                    ccti_min: 0,
                },
                cct: Cct {
                    ccti_limit: 20,
                    entries: (0..=20).map(|i| CctEntry::new(3, i).unwrap()).collect(),
                },
            },
            mtu: Mtu::new(2048).unwrap(),
            packet_overhead: IB_LOCAL_OVERHEAD,
            link: LinkRate::from_mbps(32_000, clock.khz()).unwrap(),
            clock,
        })
        .unwrap()
    }

    /// Stepped only at its `next_event` (and when something is handed in), skipped in between, an HCA gives
    /// exactly the outputs of stepping it every cycle: two flows on one port, one under CCT, a host cap, the
    /// notification point with a minimum CNP interval answering marked packets (some of them passive tails,
    /// counted inside a skip), CNPs arriving for the CC flow, and credit granted in steps.
    #[test]
    fn sleeping_between_events_is_exact() {
        sleeping_between_events_is_exact_on(1);
        sleeping_between_events_is_exact_on(2);
    }

    /// The test above on `vls` data VLs: with two, flow 1 and half the marked arrivals (so half the CNPs)
    /// are on SL 1, VL 1, and each VL has its own credit.
    fn sleeping_between_events_is_exact_on(vls: u8) {
        const END: u64 = 30_000;
        let sl1 = vls - 1;
        let make = || {
            let mut h = Hca::new(2, LinkRate::new(4, 1).unwrap(), vls, 128, 256, 2).unwrap();
            h.set_notification_point(true);
            h.set_cnp_interval(2000);
            // With two VLs a cap just below the link's 32 Gbit/s, so that one VL's flow sends while the
            // other VL waits for credit.
            h.set_host_cap(if vls > 1 { 30_000 } else { 20_000 }, 1000);
            h.add_flow(TxFlow::new(0, 7, 0, 2048, 8192, 0, 25_000).with_cc(cct()));
            h.add_flow(TxFlow::new(1, 8, sl1, 256, 1000, 2000, 20_000));
            h
        };
        let due =
            |t: u64| t.is_multiple_of(700) || t % 900 == 50 || [3000, 3100, 9000].contains(&t);
        // What arrives at `t`, given the blocks the HCA has sent so far: credit 300 blocks beyond them (and
        // the count of blocks sent to it), a 256-byte data packet (two of three FECN-marked), CNPs for
        // flow 0.
        // Per VL. A flow-control packet of VL v comes at t = 700 k + v. With two VLs the credit is short,
        // so that one VL waits for credit while the other sends.
        let ahead = if vls > 1 { 40 } else { 300 };
        let due = |t: u64| due(t) || (vls > 1 && t % 700 == 1);
        let hand = |h: &mut Hca, t: u64, sent_blocks: [u64; 2], rx_blocks: &mut [u64; 2]| {
            let vl = (t % 700) as usize;
            if vl < usize::from(vls) {
                h.rx_fc(FcPacket {
                    vl: vl as u8,
                    fctbs: (rx_blocks[vl] % 4096) as u16,
                    fccl: ((sent_blocks[vl] + ahead) % 4096) as u16,
                });
            }
            if t % 900 == 50 {
                let k = t / 900;
                let sl = if k % 4 < 2 { 0 } else { sl1 };
                let mut d = PacketDesc::local(2, 9, sl, Opcode::RcSendOnly, 256);
                d.vl = sl;
                d.tag = (k % 2) as u32;
                d.psn = k as u32;
                d.seal(false);
                d.fecn = !k.is_multiple_of(3);
                rx_blocks[usize::from(sl)] += u64::from(d.blocks());
                h.rx_packet(t, PacketStart { desc: d, offset: 0 });
            }
            if [3000, 3100, 9000].contains(&t) {
                let mut c = PacketDesc::local(2, 7, 0, Opcode::IbCnp, 0);
                c.becn = true;
                c.seal(false);
                rx_blocks[0] += u64::from(c.blocks());
                h.rx_packet(t, PacketStart { desc: c, offset: 0 });
            }
        };
        let record =
            |out: &mut Vec<(u64, EndpointOut)>, sent: &mut [u64; 2], t: u64, o: EndpointOut| {
                if let Some(p) = o.pkt {
                    sent[usize::from(p.desc.vl)] += u64::from(p.desc.blocks());
                }
                if o != EndpointOut::default() {
                    out.push((t, o));
                }
            };
        let (mut a, mut want, mut sent_a, mut rx_a) = (make(), Vec::new(), [0; 2], [0; 2]);
        for t in 0..END {
            hand(&mut a, t, sent_a, &mut rx_a);
            let o = a.step(t);
            record(&mut want, &mut sent_a, t, o);
        }
        let (mut b, mut got, mut sent_b, mut rx_b, mut steps) =
            (make(), Vec::new(), [0; 2], [0; 2], 0);
        let mut t = 0;
        while t < END {
            let next_hand = (t..END).find(|&c| due(c)).unwrap_or(END);
            let at = b.next_event(t).min(next_hand);
            if at >= END {
                break;
            }
            b.skip(at - b.port_now());
            hand(&mut b, at, sent_b, &mut rx_b);
            let o = b.step(at);
            steps += 1;
            record(&mut got, &mut sent_b, at, o);
            t = at + 1;
        }
        b.skip(END - b.port_now());
        let cnps = want
            .iter()
            .filter(|(_, o)| o.pkt.is_some_and(|p| p.desc.opcode == 0x80))
            .count();
        assert!(
            cnps >= 2 && a.per_flow[0].becn_rx == 3,
            "{cnps} CNPs out, {} in",
            a.per_flow[0].becn_rx
        );
        let injected = (a.per_flow[0].injected, a.per_flow[1].injected);
        assert!(injected.0 > 10 && injected.1 > 10, "{injected:?}");
        let vls_used = |o: &[(u64, EndpointOut)]| {
            o.iter()
                .filter_map(|(_, o)| o.pkt)
                .fold(0u16, |m, p| m | 1 << p.desc.vl)
        };
        assert_eq!(vls_used(&want), (1 << vls) - 1, "packets on every VL");
        assert_eq!(a.violations(), 0);
        assert_eq!(got, want);
        assert_eq!(b.per_flow, a.per_flow);
        assert!(steps < END / 2, "{steps} steps: the HCA did not sleep");
    }
}
