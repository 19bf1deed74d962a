//! The switch: ingress, VoQs, VL arbitration and crossbar, egress, credits and congestion control, stepped per
//! clock and composed of the `rtl_model` blocks.
//!
//! # Port interface
//! Before each [`Switch::step`] the caller hands in what arrives on each port in that cycle: at most one packet
//! head ([`Switch::rx_packet`], a [`PacketStart`]) and at most one flow-control packet ([`Switch::rx_fc`]).
//! The switch registers them: they are its input in the next cycle, as if each link were a cycle longer
//! (the registered ingress stage, `handin.rs` gives why). The rest of a packet follows at the port's exact
//! link rate; the switch counts its blocks itself ([`rtl_model::link::serial::Arrival`]). `step` returns what each port puts on its link in that cycle ([`TxEvent`]s); a
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
//!    cycle is clocked; its registered outputs drive marking from the cycle after next. The detector samples
//!    registered state (the fills and credit at a cycle's start, as `ib_switch` feeds it), so what it
//!    decides from a cycle's changes shows two cycles later; clocked here on the values after the cycle, it
//!    is read a cycle late (`Switch::cong_seen`). A detector whose inputs did not change would latch the
//!    same values, so skipping it is exact.
//!
//! # Designer choices, named
//! - Virtual cut-through: a packet joins its VoQ when its head arrives, unless its output link is faster than
//!   its input link, in which case it joins when its tail has arrived (the output could otherwise overtake
//!   the input: [`Switch`] store-and-forwards exactly then).
//! - A packet's input-buffer blocks are released when its last byte has left the output (not block by block).
//! - VoQ fill counts a packet's whole length from the time it joins the VoQ until it starts at the output.
//! - FECN is decided when a packet joins its VoQ (`MarkPoint::Enqueue`, the default) or when it starts at the
//!   output (`MarkPoint::Dequeue`), from `cong_detect`'s registered state either way (config.rs gives why).
//! - Internal speed-up (`PortConfig::speedup`): how many outputs one input can feed at once.
//! - Flow-control packets occupy the wire (6 bytes), start on a cycle boundary after the previous packet's
//!   last byte, and go before waiting data; one per cycle per port, lowest VL first.
//! - Drops (never in a correctly configured lossless run, and counted): no LFT entry, SL mapped to VL15, a
//!   packet longer than the MTU, an input VL the port lacks. Their blocks still use and then free credit.
//!
//! # Cost
//! Blocks are clocked only when their inputs are not idle or a timer of theirs expires; idle `credit_rx`
//! blocks are fast-forwarded with their exact `skip`. A port whose `credit_rx` blocks wait for nothing but
//! their flow-control timers (nothing to release, IB credits; a packet may be arriving) is not woken by the
//! timer: the fire is applied when the port is next looked at (at the latest when its flow-control packet
//! can leave, or at the arrival's next look), as the reference would have clocked it on idle inputs; a port
//! that no step looks at meanwhile has its fires applied together, whole periods of left-off repeats in
//! one jump, however many switch steps came between. Nor is a
//! port woken by the tail of a packet queued already whose blocks it absorbs ([`Arrival::wake`]): they are
//! counted at its next look, at the latest the packet's release. So a cut-through packet-hop costs two
//! ingress looks (head, release), whatever timers fire in between. An IB output with nothing queued (woken
//! by a packet's end, a flow-control packet to send or one received) takes a short look: the flow-control
//! packet, the received FCCL and its next wake-up, without the requests and the arbitration pass, which
//! would grant nothing and leave `vl_arb` unclocked. A cycle in which nothing is due costs a
//! comparison. The per-port wake-up cycles keep their earliest cycle and its ports up to date as they change
//! (`wake::WakeSet`), so a step finds its due ports and the next event without a pass over every port,
//! except after a step that moved every port of the earliest cycle later (one pass then).

use rtl_model::blocks::cong_detect::{self, CongDetect};
use rtl_model::blocks::credit_rx::{self, CreditRx};
use rtl_model::blocks::credit_tx::{self, fits, CreditTx};
use rtl_model::blocks::fecn_marker::{self, FecnMarker};
use rtl_model::blocks::vl_arb::{self, VlArb};
use rtl_model::clocked::Clocked;
use rtl_model::mad::sl2vl::Sl2VlTable;

use crate::config::{
    mtu_packet_blocks, Allocator, ConfigError, MarkPoint, RoceDetect, SwitchConfig,
    LOOKAHEAD_CYCLES,
};
use crate::observe::{LazyCycles, PortVlCounters, PortVlSignals};
use crate::port_mask::{all_ports, ports};
use rtl_model::link::fc::FcLast;
use rtl_model::link::packet::{FcPacket, PacketDesc, PacketStart, TxEvent};
use rtl_model::link::pfc::{self, PfcRx, Watermarks, PAUSE_FRAME_BYTES};
use rtl_model::link::rate::LinkRate;
use rtl_model::link::serial::{Arrival, Serializer};
use wake::WakeSet;

const NONE: u32 = u32::MAX;
const NEVER: u64 = u64::MAX;
const NO_ROUTE: u8 = u8::MAX;
/// `Arriving::deferred` of a packet being dropped: its blocks are freed when its tail is in.
const DROP: u32 = NONE - 1;

/// Bit of `port` in a port mask; 0 for a port beyond the mask (at most `PORTS_MAX` = 64 ports exist, and
/// `check_rx` refuses a port the switch lacks).
fn bit(port: usize) -> u64 {
    1u64.checked_shl(port as u32).unwrap_or(0)
}

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

impl<T> std::ops::Index<usize> for PreVec<T> {
    type Output = T;
    fn index(&self, i: usize) -> &T {
        &self.0[i]
    }
}

impl<T> std::ops::IndexMut<usize> for PreVec<T> {
    fn index_mut(&mut self, i: usize) -> &mut T {
        &mut self.0[i]
    }
}

#[derive(Debug, Clone, Copy)]
struct Slot {
    desc: PacketDesc,
    next: u32,
    in_vl: u8,
    out: u8,
    out_vl: u8,
    /// FECN set by this switch when the packet joined its VoQ (`MarkPoint::Enqueue`).
    marked: bool,
}

/// A VoQ's first and last descriptor slots (`NONE` when empty), side by side: an enqueue reads the tail
/// and may write the head, a dequeue reads the head and may write the tail, so one cache line serves both
/// (a switch of a large fabric is cold when its turn comes).
#[derive(Debug, Clone, Copy)]
struct VoqEnds {
    head: u32,
    tail: u32,
}

#[derive(Debug, Clone, Copy)]
struct Inflight {
    inp: u8,
    in_vl: u8,
    blocks: u16,
    end: u64,
    /// The input's read slot passes to the next packet this output took from the same input (look-ahead
    /// allocator): the completion frees the blocks but not the slot.
    keep_read: bool,
}

#[derive(Debug, Clone, Copy)]
struct Arriving {
    a: Arrival,
    vl: u8,
    /// Slot to enqueue when the tail is in (store-and-forward), or NONE.
    deferred: u32,
}

/// An output's requests of a cycle ([`Switch::requests`]).
#[derive(Debug, Clone, Copy, Default)]
struct Requests {
    req: u16,
    ok: u16,
    stall: u16,
    len: [u8; 16],
    pick: [u8; 16],
}

/// Stage 1 of the look-ahead allocator, registered: `vl_arb`'s inputs and each requesting VL's picked input.
#[derive(Debug, Clone, Copy)]
struct LaReq {
    arb_in: vl_arb::In,
    pick: [u8; 16],
}

/// Stage 2, registered: the VL `vl_arb` proposes (its inputs kept: the commit steps it with the same ones, on
/// the same state, so the grant is the proposal) and that VL's input.
#[derive(Debug, Clone, Copy)]
struct LaProp {
    arb_in: vl_arb::In,
    vl: u8,
    inp: u8,
    /// The cycle of stage 2 (its inputs accept it in the next): the cycle after stage 1, whether stage 2 was
    /// evaluated then or, ahead of it, in stage 1's look (see `Switch::egress_la`).
    at: u64,
}

/// Stage 3's result: a dequeued packet waiting for the wire (its descriptor slot is freed when it starts).
#[derive(Debug, Clone, Copy)]
struct LaNext {
    vl: u8,
    inp: u8,
    slot: u32,
}

/// One output's look-ahead allocator registers (`Allocator::Lookahead`).
#[derive(Debug, Clone, Copy, Default)]
struct LaRegs {
    rq: Option<LaReq>,
    pr: Option<LaProp>,
    nx: Option<LaNext>,
}

impl LaRegs {
    fn is_empty(&self) -> bool {
        self.rq.is_none() && self.pr.is_none() && self.nx.is_none()
    }
}

/// One port's registers and hand-ins, together: a step that looks at a port reads several of them, and
/// one record keeps them in adjacent cache lines instead of one line per per-port vector (in a fabric of
/// thousands of switches each port is cold when its turn comes). `repr(C)`: the fields an egress or
/// ingress look reads first come first.
#[derive(Debug, Clone)]
#[repr(C)]
struct PortRegs {
    rate: LinkRate,
    ser: Serializer,
    nvl: u8,
    speedup: u8,
    reads: u8,
    fc_pending: u16,
    pfc_on: bool,
    pfc_pending: u8,
    arriving: Option<Arriving>,
    inflight: Option<Inflight>,
    rx_pkt: Option<PacketStart>,
    rx_fc: Option<FcPacket>,
    rx_pause: Option<rtl_model::wire::pfc::Repr>,
    roce_detect: RoceDetect,
    pfc_quanta: u16,
    pfc_half: u64,
    victim_hold: u64,
    /// The outputs, as bits, that a packet from this input reaches only store-and-forward (faster than
    /// this input): read at each head, beside the rest of the input's registers.
    store_forward: u64,
}

/// One (port, VL)'s blocks and registers, together, for the same reason as [`PortRegs`].
#[derive(Debug, Clone)]
#[repr(C)]
struct Lane {
    crx_due: u64,
    crx_next: u64,
    voq_mask: u64,
    /// The sum of this output-VL's VoQ fills (its row of `voq_fill`), kept as they change: the detector's
    /// sum, without a pass over the row at each of its clocks.
    fill_sum: u32,
    crx: CreditRx,
    ctx: CreditTx,
    fc_fccl: u16,
    /// The last flow-control packet sent, for leaving off repeats.
    fc_last: FcLast,
    rr: u8,
    cong_dirty: bool,
    pause_seen: bool,
    free_pending: u32,
    cong: CongDetect,
    /// The detector's outputs before its last clock, seen until `cong_from` (see `Switch::cong_seen`).
    cong_prev: cong_detect::Out,
    /// The first cycle that sees the detector's outputs after its last clock; from then on each cycle is
    /// one more edge with its inputs held.
    cong_from: u64,
    /// The detector's root rule reads `stall_i` (`RootRule::StallWindow`): a change of the XmitWait state
    /// is a change of its inputs.
    stall_rule: bool,
    mark: FecnMarker,
    wait: LazyCycles,
    cong_time: LazyCycles,
    last_start: (u64, bool),
    counters: PortVlCounters,
    last_desc: Option<PacketDesc>,
    paused_until: u64,
    pfc_rx: PfcRx,
    wm: Watermarks,
    pfc_out_quanta: u16,
}

/// The switch. See the module documentation.
#[derive(Debug, Clone)]
pub struct Switch {
    cfg: SwitchConfig,
    n: usize,
    /// VL stride of per-(port, VL) arrays: the most data VLs of any port.
    v: usize,
    /// Per port: its registers and hand-ins (see [`PortRegs`]).
    ports: Vec<PortRegs>,
    /// Per (port, VL), at `port * v + vl`: its blocks and registers (see [`Lane`]).
    lanes: Vec<Lane>,
    now: u64,
    mtu_blocks: u16,
    lft: Vec<u8>,
    /// The distinct SL2VL tables of the switch.
    sl2vl: Vec<[u8; 16]>,
    /// Per (input, output) pair: its table in `sl2vl`; empty when there is only one (then every packet head
    /// reads that one, which stays in cache, instead of a cold per-pair entry).
    sl2vl_of: Vec<u16>,

    arb: Vec<VlArb>,

    /// Ports with a packet head / flow-control packet / pause frame registered for this cycle (handed in
    /// during the last one, see `handin`), as bits (so that finding them reads one word instead of the
    /// per-port hand-in slots).
    rx_pkt_mask: u64,
    rx_fc_mask: u64,
    rx_pause_mask: u64,
    /// The hand-ins of the current cycle: the inputs of the next (see `handin`).
    next_in: handin::NextHandIns,
    saturated: u64,

    /// Descriptor slots: those used so far, within a capacity of one per buffer block (each held packet
    /// holds at least one block) reserved at construction.
    slab: PreVec<Slot>,
    /// Used slots free again (reused last-freed first).
    free_slots: PreVec<u32>,
    /// Per VoQ (`Switch::voq`): its first and last descriptor slots.
    voq_ends: Vec<VoqEnds>,
    voq_fill: Vec<u16>,

    /// Ports whose timer-fired flow-control packets that repeat the last one are left off ([`Switch::set_fc_repeats_off`]).
    fc_repeat_off: u64,

    eg_wake: WakeSet,
    in_wake: WakeSet,
    /// Per port: the earliest flow-control timer fire of a port whose `credit_rx` blocks wait for nothing
    /// else (nothing to release; IB credits; an arriving packet's next look is in `in_wake`), `NEVER`
    /// otherwise. Such a fire is not a
    /// wake-up of its own: it is applied at the port's next look after it ([`Switch::catch_up`]), which
    /// is at the latest the cycle its flow-control packet can leave (included in `eg_wake`). A plain
    /// vector: no step looks for the earliest fire (only the port itself reads its own).
    fire_at: Vec<u64>,
    next_any: u64,
    dirty_list: PreVec<u32>,
    events: PreVec<TxEvent>,

    rx_errors: u64,
    work_cycles: u64,
    eager: bool,

    /// Outputs (IB ports with `MarkPoint::Enqueue`) whose FECN is decided when a packet joins its VoQ.
    mark_at_enqueue: u64,

    /// `Allocator::Lookahead`: per output its stages' registers (empty with `SameCycle`).
    la: Vec<LaRegs>,
    /// Per input and parity of the proposal's cycle: the outputs whose stage-2 proposal names it (resolved,
    /// and cleared, in the next cycle). Two sets: a proposal evaluated ahead of its cycle (in stage 1's
    /// look) waits in the other parity's set while the accept of its own cycle reads this one.
    la_prop: Vec<[u64; 2]>,
    /// Per parity, the inputs with a proposal, as bits.
    la_prop_any: [u64; 2],
    /// Per input: the output its round robin over proposing outputs starts from.
    la_acc_ptr: Vec<u8>,
    /// Outputs whose proposal their input accepted this cycle.
    la_accepted: u64,
    /// Of those, the outputs that take the read slot of their own packet on the wire (same input).
    la_transfer: u64,
    /// The inputs without a free read slot at the start of this cycle (stage 1 reads these).
    la_sat_start: u64,
    /// Outputs with packets from an input whose read slot was freed this cycle: they look again next cycle.
    la_rewake: u64,
}

fn block_err(setting: String) -> impl FnOnce(rtl_model::blocks::ConfigError) -> ConfigError {
    move |e| ConfigError::new(setting, "", e.to_string())
}

impl Switch {
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

    /// Leaves off, on the ports in `mask`, the flow-control packets that a timer fires and that repeat the
    /// last one the port sent (same FCTBS and FCCL, no packet head between): the switch neither wakes nor
    /// emits a [`TxEvent`] for them, and accounts their wire time when the port is next looked at (`catch_up`). Exact for
    /// everything but the wire's contents when the far end ignores such a repeat, as every IB receiver
    /// does for a VL it has (it sets ABR and the limit to the values they hold; `rtl_model::link::fc::FcLast`
    /// has the argument): a fabric turns it on when nothing records the wire. Ports with PFC send no
    /// flow-control packets to leave off. Off by default; may change at any
    /// cycle.
    pub fn set_fc_repeats_off(&mut self, mask: u64) {
        let dropped = self.fc_repeat_off & !mask;
        if dropped != 0 {
            // Repeats whose cycle has passed are accounted, and the ports' next fires get their looks back.
            self.settle();
            for p in ports(dropped) {
                let fire = self.fire_at[p];
                if fire != NEVER {
                    self.eg_wake.lower(
                        p,
                        self.ports[p]
                            .ser
                            .fc_ready_cycle(self.ports[p].rate, fire + 1),
                    );
                }
            }
            self.next_any = self.next_any.min(self.eg_wake.min());
        }
        self.fc_repeat_off = mask;
    }

    /// The memory a visit to this switch reads first, as (address, bytes): its own record and its ports'
    /// wake-up tables. For a caller that steps many switches and has the next one's state fetched into
    /// cache while it steps the current one (a prefetch); it reads nothing.
    pub fn hot_memory(&self, mut f: impl FnMut(*const u8, usize)) {
        f((self as *const Self).cast(), std::mem::size_of::<Self>());
        f(self.eg_wake.at_ptr(), self.n * 8);
        f(self.in_wake.at_ptr(), self.n * 8);
        f(self.fire_at.as_ptr().cast(), self.fire_at.len() * 8);
    }

    /// The memory of the ports that steps before cycle `until` look at, as far as their wake-ups tell, and
    /// of the ports in `also` (a caller's: those with something arriving): each one's registers, lanes,
    /// allocator registers and VL arbiter. See [`Switch::hot_memory`].
    pub fn hot_port_memory(&self, until: u64, also: u64, mut f: impl FnMut(*const u8, usize)) {
        fn addr<T>(x: &T) -> *const u8 {
            (x as *const T).cast()
        }
        let mut m = also & all_ports(self.n);
        for p in ports(all_ports(self.n) & !m) {
            if self.eg_wake.get(p) < until || self.in_wake.get(p) < until {
                m |= bit(p);
            }
        }
        for p in ports(m) {
            let port = &self.ports[p];
            f(addr(port), std::mem::size_of::<PortRegs>());
            let k = p * self.v;
            let lanes = &self.lanes[k..k + usize::from(port.nvl)];
            f(lanes.as_ptr().cast(), std::mem::size_of_val(lanes));
            if let Some(l) = self.la.get(p) {
                f(addr(l), std::mem::size_of::<LaRegs>());
            }
            f(addr(&self.arb[p]), std::mem::size_of::<VlArb>());
        }
    }

    /// Cycles that did any work (the rest cost one comparison): a cost measure that tests can pin down.
    pub fn work_cycles(&self) -> u64 {
        self.work_cycles
    }

    /// Hand-ins refused so far ([`RxError`]).
    pub fn rx_errors(&self) -> u64 {
        self.rx_errors
    }

    /// Ports with anything handed in this cycle.
    fn handed_in(&self) -> u64 {
        self.rx_pkt_mask | self.rx_fc_mask | self.rx_pause_mask
    }

    /// A packet head arrives on `port` in the current cycle.
    pub fn rx_packet(&mut self, port: usize, start: PacketStart) -> Result<(), RxError> {
        let r = self.check_rx(port, port < self.n && self.next_in.has_pkt(port));
        let r = r.and_then(|_| {
            if u64::from(start.offset) >= self.ports[port].rate.ticks_per_cycle() {
                Err(RxError::BadOffset(port, start.offset))
            } else {
                Ok(())
            }
        });
        if r.is_ok() {
            self.next_in.put_pkt(port, start);
        } else {
            self.rx_errors += 1;
        }
        r
    }

    /// A flow-control packet arrives on `port` in the current cycle.
    pub fn rx_fc(&mut self, port: usize, fc: FcPacket) -> Result<(), RxError> {
        let r = self.check_rx(port, port < self.n && self.next_in.has_fc(port));
        let r = r.and_then(|_| {
            if fc.vl >= self.ports[port].nvl {
                Err(RxError::BadVl(port, fc.vl))
            } else {
                Ok(())
            }
        });
        if r.is_ok() {
            self.next_in.put_fc(port, fc);
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
        let r = self.check_rx(port, port < self.n && self.next_in.has_pause(port));
        let r = r.and_then(|_| {
            if self.ports[port].pfc_on {
                Ok(())
            } else {
                Err(RxError::NotPfc(port))
            }
        });
        if r.is_ok() {
            self.next_in.put_pause(port, frame);
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
        if self.handed_in() != 0 || self.next_in.mask != 0 {
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

    /// Simulates the current cycle and returns what leaves each port in it. What was handed in during the
    /// cycle is the switch's input in the next one (see `handin`).
    pub fn step(&mut self) -> &[TxEvent] {
        self.step_cycle();
        self.register_hand_ins();
        &self.events.0
    }

    /// [`Switch::step`], with what leaves written into `out` (cleared first) instead of the switch's own
    /// buffer: a caller stepping many switches keeps one buffer in cache, where each switch's own is cold
    /// at its turn. `out` grows if it is too small; the switch's buffer is untouched.
    pub fn step_into(&mut self, out: &mut Vec<TxEvent>) {
        std::mem::swap(&mut self.events.0, out);
        self.step_cycle();
        self.register_hand_ins();
        std::mem::swap(&mut self.events.0, out);
    }

    fn step_cycle(&mut self) {
        self.events.0.clear();
        let t = self.now;
        if !self.eager && self.handed_in() == 0 && self.next_any > t {
            self.now += 1;
            return;
        }
        if !self.eager
            && self.next_any > t
            && self.handed_in() == self.rx_fc_mask
            && self.fc_latch_only()
        {
            // Only flow-control packets, each of which just latches its FCCL (see `fc_latch_only`): the rest
            // of the step would change nothing.
            for p in ports(self.rx_fc_mask) {
                if let Some(f) = self.ports[p].rx_fc.take() {
                    self.fccl_in(p, f);
                }
            }
            self.rx_fc_mask = 0;
            self.now += 1;
            return;
        }
        self.work_cycles += 1;
        // The eager reference clocks every port.
        let all = if self.eager { all_ports(self.n) } else { 0 };
        let mut eg_due = self.eg_wake.due(t);
        // Lazily applied timer fires (`catch_up`) are applied at each look at a port, before it reads the
        // port's registers; those of the ports that only ingress looks at in this step (or the input of a
        // packet that completes, see `egress_complete`) come first, since a fire whose flow-control packet
        // leaves in this cycle makes its port due for egress.
        let ingress_only = (self.in_wake.due(t) | self.rx_pkt_mask)
            & !(eg_due | self.rx_fc_mask | self.rx_pause_mask);
        if ingress_only != 0 {
            for p in ports(ingress_only) {
                self.catch_up(p, t);
            }
            eg_due = self.eg_wake.due(t);
        }
        let lookahead = !self.la.is_empty();
        if lookahead {
            self.la_sat_start = self.saturated;
            self.la_rewake = 0;
        }
        // Completions may wake other outputs (a freed read slot) for this cycle: they join the due ones.
        for p in ports(eg_due) {
            eg_due |= self.egress_complete(p, t);
        }
        if lookahead {
            self.la_accept(t);
            for p in ports(eg_due | self.rx_fc_mask | self.rx_pause_mask | all) {
                self.egress_la(p, t);
            }
        } else {
            for p in ports(eg_due | self.rx_fc_mask | self.rx_pause_mask | all) {
                self.egress(p, t);
            }
        }
        for p in ports(self.in_wake.due(t) | self.rx_pkt_mask | self.rx_fc_mask | all) {
            self.ingress(p, t);
        }
        self.detect(t);
        for p in ports(self.handed_in()) {
            self.ports[p].rx_pkt = None;
            self.ports[p].rx_fc = None;
            self.ports[p].rx_pause = None;
        }
        (self.rx_pkt_mask, self.rx_fc_mask, self.rx_pause_mask) = (0, 0, 0);
        self.now += 1;
        self.next_any = self.eg_wake.min().min(self.in_wake.min());
    }

    /// Whether every flow-control packet handed in this cycle does no more than latch its FCCL into the
    /// output's `credit_tx`, in a cycle where nothing else is due: its port's outputs queue nothing (so no
    /// credit check, and the congestion state of an empty queue, off, stays off whatever the credit), no PFC,
    /// and its FCTBS equals the receiver's ABR with no arrival open (the `credit_rx` step it would take is an
    /// idle step, which the port's lazy timers account for whenever it is next looked at).
    fn fc_latch_only(&self) -> bool {
        ports(self.rx_fc_mask).all(|p| {
            let Some(f) = self.ports[p].rx_fc else {
                return false;
            };
            let base = p * self.v;
            let k = base + usize::from(f.vl);
            !self.ports[p].pfc_on
                && self.la.get(p).is_none_or(LaRegs::is_empty)
                && self.ports[p].arriving.is_none()
                && self.lanes[base..base + self.v]
                    .iter()
                    .all(|l| l.voq_mask == 0)
                && !self.lanes[k].cong.outputs().cong_o
                && self.lanes[k].crx.abr_q == f.fctbs & (credit_tx::FC_MOD as u16 - 1)
        })
    }

    fn voq(&self, inp: usize, out: usize, vl: usize) -> usize {
        (inp * self.n + out) * self.v + vl
    }

    fn mark_dirty(&mut self, k: usize) {
        if !self.lanes[k].cong_dirty {
            self.lanes[k].cong_dirty = true;
            self.dirty_list.0.push(k as u32);
        }
    }

    /// Output port-VL `k`'s XmitWait state (a packet ready and no credit for it) holds from cycle `t`
    /// (PortXmitWait counts it). It is also the detector's `stall_i`: under the stall window rule a change
    /// clocks the detector this cycle.
    #[inline]
    fn set_wait(&mut self, k: usize, on: bool, t: u64) {
        let lane = &mut self.lanes[k];
        if lane.stall_rule && lane.wait.is_on() != on {
            self.mark_dirty(k);
        }
        self.lanes[k].wait.set(on, t);
    }
}

mod build;
mod detect;
mod egress;
mod handin;
mod ingress;
mod lookahead;
mod wake;
