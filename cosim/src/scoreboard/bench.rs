//! The test bench around a switch under test at packet level: a link partner per port that sends the
//! traffic within the switch's credit and receives what the switch sends into a buffer of its own, advertising
//! its credit back; the golden model stepped beside it on the same hand-ins; the [`Scoreboard`] fed from
//! both. The switch under test is a [`PacketDut`] (the Verilated RTL behind a port map, or any model).
//!
//! Link partners:
//! - send one packet or flow-control packet at a time per port, at the port's link rate (a packet of `L`
//!   bytes keeps the wire for the cycles its bytes take at that rate), a packet only when the switch's
//!   last FCCL for its VL covers it (the IBA credit test);
//! - send a flow-control packet per VL every [`BenchConfig::fc_interval`] cycles and when their free buffer
//!   grew, with their FCTBS (blocks sent) and FCCL (blocks received + free, at most 2048 ahead);
//! - hold each packet received for [`BenchConfig::partner_hold`] cycles before freeing its blocks.
//!
//! On a RoCEv2 port (one with PFC in the configuration) the partner sends and reads PFC pause frames
//! instead of flow-control packets: it starts no frame of a priority the switch paused (from the cycle
//! after the pause came out, for its quanta, or until a resume), and pauses the switch per priority when
//! its own receive buffer reaches XOFF (the port's PFC settings applied to [`BenchConfig::partner_buf_blocks`])
//! and resumes it at XON, refreshing a standing pause at half its time, as the golden switch does.

use std::collections::VecDeque;

use rtl_model::link::packet::FcPacket;
use rtl_model::link::pfc::{self, PfcRx, Watermarks, PAUSE_FRAME_BYTES};
use rtl_model::wire::pfc::Repr as PauseFrame;
use switch_asic::SwitchConfig;

use super::golden::GoldenRun;
use super::{hdr_of, Bounds, LinkKind, Scoreboard, Violation};

/// What the switch under test puts out in a cycle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DutOut {
    /// A whole packet out of `port` whose first byte left in `cycle`.
    Packet {
        /// Output port.
        port: usize,
        /// Cycle of its first byte.
        cycle: u64,
        /// LRH through VCRC.
        bytes: Vec<u8>,
    },
    /// A flow-control packet out of `port`.
    Fc {
        /// Output port.
        port: usize,
        /// Its contents.
        fc: FcPacket,
    },
    /// A PFC pause frame out of `port` (a RoCEv2 port).
    Pause {
        /// Output port.
        port: usize,
        /// Its contents.
        frame: PauseFrame,
    },
}

/// A switch under test at packet level.
pub trait PacketDut {
    /// A packet starts arriving at `port` in the current cycle (the caller keeps the link's pace).
    fn rx_packet(&mut self, port: usize, bytes: &[u8]);
    /// A flow-control packet arrives at `port` in the current cycle.
    fn rx_fc(&mut self, port: usize, fc: FcPacket);
    /// A PFC pause frame arrives at `port` (a RoCEv2 port) in the current cycle. Only a switch with RoCEv2
    /// ports gets one; the default refuses it.
    fn rx_pause(&mut self, port: usize, _frame: PauseFrame) -> Result<(), String> {
        Err(format!(
            "a pause frame for port {port}: this switch under test has no RoCEv2 port"
        ))
    }
    /// Simulates the current cycle; what came out is appended to `out` (a packet when its last byte is out).
    fn step(&mut self, out: &mut Vec<DutOut>) -> Result<(), String>;
    /// The switch's own fill of output `port`'s `vl` after the last step, in 64-byte blocks, when it shows
    /// one (the port map's `fill` tap): reported beside the golden model's VoQ fill, never checked.
    fn fill_tap(&self, _port: usize, _vl: usize) -> Option<u32> {
        None
    }
    /// The switch's own marking state of output `port`'s `vl` after the last step, when it shows one (the
    /// port map's `mark_state` tap): reported beside the golden model's, never checked (the switch under
    /// test may decide by another rule, or a few cycles apart).
    fn mark_state_tap(&self, _port: usize, _vl: usize) -> Option<bool> {
        None
    }
}

/// The fill tap of one output port-VL over a run, beside the golden model's fill (its VoQs of that output
/// VL summed over inputs), both in 64-byte blocks, sampled every cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FillSummary {
    /// Output port.
    pub port: usize,
    /// VL.
    pub vl: u8,
    /// Largest fill the switch under test showed.
    pub rtl_max: u32,
    /// Largest golden fill.
    pub golden_max: u32,
    /// Largest `|rtl - golden|` in one cycle, and the first cycle it was seen.
    pub max_diff: u32,
    /// Cycle of `max_diff`.
    pub max_diff_cycle: u64,
}

/// The marking-state tap of one output port-VL over a run, beside the golden model's marking state, sampled
/// every cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MarkStateSummary {
    /// Output port.
    pub port: usize,
    /// VL.
    pub vl: u8,
    /// Cycles the switch under test showed the state on.
    pub rtl_on: u64,
    /// Cycles the golden model's state was on.
    pub golden_on: u64,
    /// Cycles the two differed.
    pub differ: u64,
    /// The first cycle they differed.
    pub first_differ: Option<u64>,
}

/// Per-cycle tracking of the taps (none when the switch under test shows neither fill nor marking state).
#[derive(Debug, Default)]
struct Taps {
    fills: Vec<FillSummary>,
    marks: Vec<MarkStateSummary>,
}

impl Taps {
    fn new(dut: &dyn PacketDut, cfg: &SwitchConfig) -> Self {
        let mut t = Taps::default();
        for (p, pc) in cfg.ports.iter().enumerate() {
            for vl in 0..pc.data_vls {
                if dut.fill_tap(p, usize::from(vl)).is_some() {
                    t.fills.push(FillSummary {
                        port: p,
                        vl,
                        ..FillSummary::default()
                    });
                }
                if dut.mark_state_tap(p, usize::from(vl)).is_some() {
                    t.marks.push(MarkStateSummary {
                        port: p,
                        vl,
                        ..MarkStateSummary::default()
                    });
                }
            }
        }
        t
    }

    fn sample(&mut self, c: u64, dut: &dyn PacketDut, golden: &GoldenRun) {
        for s in &mut self.marks {
            let r = dut.mark_state_tap(s.port, usize::from(s.vl)) == Some(true);
            let g = golden.mark_state(s.port, s.vl);
            s.rtl_on += u64::from(r);
            s.golden_on += u64::from(g);
            if r != g {
                s.differ += 1;
                s.first_differ.get_or_insert(c);
            }
        }
        for s in &mut self.fills {
            let r = dut.fill_tap(s.port, usize::from(s.vl)).unwrap_or(0);
            let g = golden.voq_fill(s.port, s.vl);
            s.rtl_max = s.rtl_max.max(r);
            s.golden_max = s.golden_max.max(g);
            let d = r.abs_diff(g);
            if d > s.max_diff {
                s.max_diff = d;
                s.max_diff_cycle = c;
            }
        }
    }

    /// A violation's report: both views of its port's marking state and fill (every VL) in the cycle it was
    /// found.
    fn annotate(&self, v: &mut Violation, dut: &dyn PacketDut, golden: &GoldenRun) {
        let on = |x: bool| if x { "on" } else { "off" }.to_string();
        let p = v.port;
        let marks = self.marks.iter().filter(|s| s.port == p).map(|s| {
            let r = dut.mark_state_tap(p, usize::from(s.vl)) == Some(true);
            (s.vl, on(r), on(golden.mark_state(p, s.vl)))
        });
        let fills = self.fills.iter().filter(|s| s.port == p).map(|s| {
            let r = dut.fill_tap(p, usize::from(s.vl)).unwrap_or(0);
            (s.vl, r.to_string(), golden.voq_fill(p, s.vl).to_string())
        });
        let views: [(Vec<_>, String, String); 2] = [
            (
                marks.collect(),
                format!("marking state tap of port {p}"),
                format!("marking state of output {p}"),
            ),
            (
                fills.collect(),
                format!("fill tap of port {p} (blocks)"),
                format!("VoQ fill of output {p} summed over inputs (blocks)"),
            ),
        ];
        for (vls, rtl, gold) in views {
            if vls.is_empty() {
                continue;
            }
            let list = |f: &dyn Fn(&(u8, String, String)) -> &String| {
                vls.iter()
                    .map(|x| format!("VL {} {}", x.0, f(x)))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            v.rtl += &format!("; {rtl}: {}", list(&|x| &x.1));
            v.golden += &format!("; {gold}: {}", list(&|x| &x.2));
        }
    }
}

/// Bench settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BenchConfig {
    /// Receive buffer of each link partner per VL, in 64-byte blocks.
    pub partner_buf_blocks: u16,
    /// Cycles a link partner holds a packet before freeing its blocks.
    pub partner_hold: u64,
    /// Cycles between a link partner's periodic flow-control packets per VL.
    pub fc_interval: u64,
    /// Cycles the run may go on with no packet going in or out (the switch delivering nothing) before it
    /// ends; what is not delivered by then is lost.
    pub drain_cycles: u64,
    /// Cycles of reset before the first hand-in (the switch's own reset is the caller's).
    pub start_cycle: u64,
}

impl Default for BenchConfig {
    fn default() -> Self {
        BenchConfig {
            partner_buf_blocks: 256,
            partner_hold: 100,
            fc_interval: 256,
            drain_cycles: 50_000,
            start_cycle: 0,
        }
    }
}

/// A packet the link partner at a port sends once the cycle is reached (and the wire and credit allow).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrafficPacket {
    /// Earliest cycle.
    pub cycle: u64,
    /// Port it enters the switch at.
    pub port: usize,
    /// LRH through VCRC (its LRH VL is its input VL).
    pub bytes: Vec<u8>,
}

/// What a run checked.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Outcome {
    /// Packets checked (delivered).
    pub packets: usize,
    /// Ports.
    pub ports: usize,
    /// Cycles run.
    pub cycles: u64,
    /// Packets the golden model made eligible for FECN, and packets the switch under test marked.
    pub eligible: u64,
    /// Packets marked (FECN set by the switch).
    pub marked: u64,
    /// The fill taps per output port-VL beside the golden model's fill (empty when the switch shows none).
    pub fill: Vec<FillSummary>,
    /// The marking-state taps per output port-VL beside the golden model's state (empty when the switch
    /// shows none).
    pub mark_state: Vec<MarkStateSummary>,
    /// Hand-ins the golden model refused or buffer overflows it counted (the switch under test gave credit
    /// the golden model would not have: not a violation, but its view is then approximate).
    pub golden_notes: u64,
    /// RoCEv2 ports: pause frames the link partners sent the switch, and the switch sent them.
    pub pauses_in: u64,
    /// Pause frames the switch sent.
    pub pauses_out: u64,
}

#[derive(Debug, Clone, Default)]
struct Partner {
    busy_until: u64,
    queue: VecDeque<TrafficPacket>,
    /// Per VL: blocks sent (FCTBS), the switch's FCCL for them.
    sent: Vec<u32>,
    sw_fccl: Vec<u32>,
    /// Per VL: blocks received (ABR), free blocks, last FCCL advertised, next periodic FC.
    abr: Vec<u32>,
    free: Vec<u32>,
    adv: Vec<Option<u32>>,
    fc_due: Vec<u64>,
    /// (cycle, VL, blocks) to free.
    holding: VecDeque<(u64, usize, u32)>,
    /// RoCEv2 port: the partner's pause state per priority and its watermarks; the cycle from which the
    /// switch's pause of each priority no longer holds.
    pfc: Option<(Vec<PfcRx>, Watermarks, u16, u64)>,
    paused_until: Vec<u64>,
}

/// Runs `traffic` through `dut` with the golden model of `cfg` beside it; the first violation, or what was
/// checked. `dut` must be out of reset at the first step.
pub fn run(
    dut: &mut dyn PacketDut,
    cfg: &SwitchConfig,
    traffic: Vec<TrafficPacket>,
    bench: BenchConfig,
    bounds: Bounds,
) -> Result<Outcome, RunError> {
    let n = cfg.ports.len();
    let mut sb = Scoreboard::new(cfg, bounds);
    let mut golden = GoldenRun::new(cfg).map_err(|e| RunError::Setup(e.to_string()))?;
    let fccl0 = u32::from(rtl_model::blocks::credit_tx::Config::default().fccl_reset);
    let mtu_blocks = switch_asic::config::mtu_packet_blocks(cfg.mtu);
    let mut ps: Vec<Partner> = Vec::with_capacity(n);
    for p in 0..n {
        let pc = &cfg.ports[p];
        let v = usize::from(pc.data_vls);
        let pfc = match &pc.pfc {
            None => None,
            Some(f) => {
                let wm = f
                    .watermarks(
                        bench.partner_buf_blocks,
                        pc.rate,
                        mtu_blocks,
                        &format!("bench.partner_buf_blocks with ports[{p}].pfc"),
                    )
                    .map_err(|e| RunError::Setup(e.to_string()))?;
                let half = pfc::pause_cycles(pc.rate, f.pause_quanta) / 2;
                Some((vec![PfcRx::default(); v], wm, f.pause_quanta, half))
            }
        };
        ps.push(Partner {
            sent: vec![0; v],
            sw_fccl: vec![fccl0; v],
            abr: vec![0; v],
            free: vec![u32::from(bench.partner_buf_blocks); v],
            adv: vec![None; v],
            fc_due: vec![bench.start_cycle; v],
            pfc,
            paused_until: vec![0; v],
            ..Partner::default()
        });
    }
    let links: Vec<LinkKind> = (0..n).map(|p| LinkKind::of(cfg, p)).collect();
    let mut traffic = traffic;
    traffic.sort_by_key(|t| t.cycle);
    for t in traffic {
        if t.port < n {
            ps[t.port].queue.push_back(t);
        }
    }
    let mut outs = Vec::new();
    let mut taps = Taps::new(&*dut, cfg);
    let mut c: u64 = 0;
    let mut last_in = 0u64;
    let mut quiet_since: Option<u64> = None;
    loop {
        if c >= bench.start_cycle {
            for (p, pt) in ps.iter_mut().enumerate() {
                let rate = cfg.ports[p].rate;
                // Free what the partner has held long enough.
                while pt.holding.front().is_some_and(|h| h.0 <= c) {
                    let (_, vl, b) = pt.holding.pop_front().unwrap();
                    pt.free[vl] += b;
                }
                if pt.busy_until > c {
                    continue;
                }
                let nvl = pt.abr.len();
                if let Some((rx, wm, quanta, half)) = &mut pt.pfc {
                    // Its receive buffer per priority: the first priority with a pause or resume due.
                    let used = |vl: usize| {
                        (u32::from(bench.partner_buf_blocks).saturating_sub(pt.free[vl])) as u16
                    };
                    let due = (0..nvl).find_map(|vl| {
                        rx[vl]
                            .update(used(vl), *wm, *quanta, *half, c)
                            .map(|q| (vl, q))
                    });
                    if let Some((vl, q)) = due {
                        let frame = pfc::frame(vl as u8, q);
                        dut.rx_pause(p, frame).map_err(RunError::Dut)?;
                        golden.rx_pause(p, frame);
                        sb.rx_pause(c, p, frame);
                        pt.busy_until =
                            rate.cycle_of_byte_end(rate.tick_of(c), PAUSE_FRAME_BYTES) + 1;
                        continue;
                    }
                }
                let want = |vl: usize| {
                    let cap = pt.free[vl].min(2048);
                    (pt.abr[vl] + cap) % 4096
                };
                if let Some(vl) = (0..nvl)
                    .filter(|_| pt.pfc.is_none())
                    .find(|&vl| pt.fc_due[vl] <= c || pt.adv[vl].is_some_and(|a| a != want(vl)))
                {
                    let fc = FcPacket {
                        vl: vl as u8,
                        fctbs: pt.sent[vl] as u16,
                        fccl: want(vl) as u16,
                    };
                    pt.adv[vl] = Some(want(vl));
                    pt.fc_due[vl] = c + bench.fc_interval;
                    dut.rx_fc(p, fc);
                    golden.rx_fc(p, fc);
                    sb.rx_fc(c, p, fc);
                    pt.busy_until = rate.cycle_of_byte_end(rate.tick_of(c), 6) + 1;
                    continue;
                }
                let Some(t) = pt.queue.front() else { continue };
                if t.cycle > c {
                    continue;
                }
                let blocks = t.bytes.len().div_ceil(64) as u32;
                let vl = if links[p] == LinkKind::RoceV2 {
                    // No credit: the switch's pause of the frame's priority holds it (and the frames behind).
                    let vl = hdr_of(links[p], &t.bytes).map_or(0, |h| usize::from(h.vl));
                    let vl = vl.min(nvl - 1);
                    if pt.paused_until[vl] > c {
                        continue;
                    }
                    vl
                } else {
                    usize::from(t.bytes[0] >> 4).min(nvl - 1)
                };
                let after = (pt.sent[vl] + blocks) % 4096;
                if links[p] == LinkKind::Ib && (pt.sw_fccl[vl] + 4096 - after) % 4096 > 2048 {
                    continue;
                }
                let t = pt.queue.pop_front().unwrap();
                pt.sent[vl] = after;
                let id = sb.rx_packet(c, p, &t.bytes);
                golden.rx_packet(p, id, &t.bytes);
                dut.rx_packet(p, &t.bytes);
                pt.busy_until = rate.cycle_of_byte_end(rate.tick_of(c), t.bytes.len() as u64) + 1;
                last_in = c;
            }
        }
        golden.step(&mut sb);
        outs.clear();
        dut.step(&mut outs).map_err(RunError::Dut)?;
        taps.sample(c, &*dut, &golden);
        let with_fill = |mut v: Violation| {
            taps.annotate(&mut v, &*dut, &golden);
            RunError::Violation(v)
        };
        for o in outs.drain(..) {
            match o {
                DutOut::Packet { port, cycle, bytes } => {
                    sb.tx_packet(cycle, port, &bytes).map_err(with_fill)?;
                    last_in = c;
                    if port < n {
                        let pt = &mut ps[port];
                        let vl = match links[port] {
                            LinkKind::Ib => usize::from(bytes[0] >> 4),
                            LinkKind::RoceV2 => usize::from(sb.last_out_vl().unwrap_or(0)),
                        };
                        if vl < pt.abr.len() {
                            let b = bytes.len().div_ceil(64) as u32;
                            pt.abr[vl] = (pt.abr[vl] + b) % 4096;
                            pt.free[vl] = pt.free[vl].saturating_sub(b);
                            pt.holding.push_back((c + bench.partner_hold, vl, b));
                        }
                    }
                }
                DutOut::Pause { port, frame } => {
                    sb.tx_pause(c, port).map_err(with_fill)?;
                    if port < n && links[port] == LinkKind::RoceV2 {
                        // Read at the end of this cycle: it holds from the next.
                        let rate = cfg.ports[port].rate;
                        let pt = &mut ps[port];
                        for (vl, until) in pt.paused_until.iter_mut().enumerate() {
                            if frame.is_enabled(vl as u8) {
                                let q = frame.quanta[vl];
                                *until = if q == 0 {
                                    c + 1
                                } else {
                                    c + 1 + pfc::pause_cycles(rate, q)
                                };
                            }
                        }
                    }
                }
                DutOut::Fc { port, fc } => {
                    sb.tx_fc(c, port, fc).map_err(with_fill)?;
                    if port < n && usize::from(fc.vl) < ps[port].sw_fccl.len() {
                        ps[port].sw_fccl[usize::from(fc.vl)] = u32::from(fc.fccl) % 4096;
                    }
                }
            }
        }
        c += 1;
        let all_in = ps.iter().all(|p| p.queue.is_empty());
        let all_out = sb.checked() == sb.packets_in();
        // Done when everything is out and every input's credit is advertised again (a few cycles more for
        // the last flow-control packets in flight); else at the drain limit, where the scoreboard reports
        // what is missing.
        if all_in && all_out && sb.credits_returned() {
            let q = *quiet_since.get_or_insert(c);
            if c >= q + 2 * bench.partner_hold.max(16) {
                break;
            }
        } else {
            quiet_since = None;
        }
        if c > last_in + bench.drain_cycles && c > bench.start_cycle + bench.drain_cycles {
            break;
        }
    }
    sb.finish(c).map_err(|mut v| {
        taps.annotate(&mut v, &*dut, &golden);
        RunError::Violation(v)
    })?;
    let mut notes = golden.refused;
    for p in 0..n {
        for vl in 0..usize::from(cfg.ports[p].data_vls) {
            let k = golden.counters(p, vl);
            notes += k.overflow + k.dropped;
        }
    }
    let (eligible, marked) = sb.marks();
    let (pauses_in, pauses_out) = sb.pauses();
    Ok(Outcome {
        pauses_in,
        pauses_out,
        eligible,
        marked,
        packets: sb.checked(),
        ports: n,
        cycles: c,
        fill: taps.fills,
        mark_state: taps.marks,
        golden_notes: notes,
    })
}

/// Why a run stopped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RunError {
    /// The scoreboard found a violation.
    #[error("{0}")]
    Violation(Violation),
    /// The switch under test stopped (an assertion, `$finish`, a harness error).
    #[error("the switch under test stopped: {0}")]
    Dut(String),
    /// The bench could not be set up.
    #[error("{0}")]
    Setup(String),
}

/// `n` random packets for a switch configured by `cfg`: each from a random port to a routed DLID (the
/// output is the LFT's, never the input port itself), a random SL (the input VL is SL mod the input's VLs),
/// payload 0 to 1,024 bytes; a third of the traffic goes to one hot output so that its VLs congest. Sources
/// are ready from cycle `start` on, a packet every 60 cycles per port on average.
pub fn random_traffic(cfg: &SwitchConfig, n: usize, seed: u64, start: u64) -> Vec<TrafficPacket> {
    use rtl_model::link::packet::PacketDesc;
    use rtl_model::wire::bth::Opcode;
    random_packets(
        cfg,
        n,
        crate::rng::Rng::new(seed),
        start,
        |rng, _| rng.below(16) as u8,
        |_, dlid, inp, sl, payload, i| {
            let vls = u64::from(cfg.ports[inp].data_vls.max(1));
            let mut d =
                PacketDesc::local(dlid, 0x100 + inp as u16, sl, Opcode::RcSendOnly, payload);
            d.vl = (u64::from(sl) % vls) as u8;
            stamp(&mut d, seed, i);
            let mut bytes = Vec::new();
            d.materialise(&mut bytes).ok().map(|_| bytes)
        },
    )
}

/// `n` random RoCEv2 frames for a switch configured by `cfg` (its ports RoCEv2): as [`random_traffic`], each
/// a `PacketDesc::roce_v4` frame with a priority below its input's and output's VLs that SL2VL sends to a
/// data VL; one in eight not ECN-capable, one in sixteen CE already, the rest ECT(0) or ECT(1).
pub fn random_roce_traffic(
    cfg: &SwitchConfig,
    n: usize,
    seed: u64,
    start: u64,
) -> Vec<TrafficPacket> {
    use rtl_model::link::packet::PacketDesc;
    use rtl_model::wire::bth::Opcode;
    random_packets(
        cfg,
        n,
        crate::rng::Rng::new(seed ^ 0x0e0e),
        start,
        |rng, inp| rng.below(u64::from(cfg.ports[inp].data_vls.clamp(1, 8))) as u8,
        |rng, dlid, inp, sl, payload, i| {
            let mut d =
                PacketDesc::roce_v4(dlid, 0x100 + inp as u16, sl, Opcode::RcSendOnly, payload);
            d.ecn = match rng.below(16) {
                0 | 1 => 0,
                2 => 3,
                3..=8 => 1,
                _ => 2,
            };
            stamp(&mut d, seed, i);
            let mut bytes = Vec::new();
            d.materialise_roce_v4(&mut bytes).ok().map(|_| bytes)
        },
    )
}

/// A random packet's PSN, destination QP and payload seed, from the traffic's seed and its draw's index.
fn stamp(d: &mut rtl_model::link::packet::PacketDesc, seed: u64, i: usize) {
    d.psn = i as u32 & 0xff_ffff;
    d.dest_qp = (seed as u32).wrapping_add(i as u32 >> 24) & 0xff_ffff;
    d.payload_seed = (seed as u32) ^ (i as u32).wrapping_mul(0x9e37_79b9);
}

/// The draws both random traffics share: `n` draws of an input, a routed output (a third of them one hot
/// output), an SL from `sl_of` (one SL2VL sends to a data VL of the output), a payload up to 1,024 bytes,
/// the packet's bytes from `frame` (none: the draw is skipped), and its ready cycle at its input.
fn random_packets(
    cfg: &SwitchConfig,
    n: usize,
    mut rng: crate::rng::Rng,
    start: u64,
    sl_of: impl Fn(&mut crate::rng::Rng, usize) -> u8,
    frame: impl Fn(&mut crate::rng::Rng, u16, usize, u8, u16, usize) -> Option<Vec<u8>>,
) -> Vec<TrafficPacket> {
    let ports = cfg.ports.len();
    let routed: Vec<(u16, usize)> = cfg
        .lft
        .iter()
        .enumerate()
        .filter_map(|(d, p)| p.map(|p| (d as u16, usize::from(p))))
        .filter(|&(_, p)| p < ports)
        .collect();
    let mut out = Vec::with_capacity(n);
    if routed.is_empty() {
        return out;
    }
    let hot = routed[rng.below(routed.len() as u64) as usize];
    let mut at = vec![start; ports];
    let max_payload = (u64::from(cfg.mtu)).min(1024);
    for i in 0..n {
        let inp = rng.below(ports as u64) as usize;
        let (dlid, outp) = if rng.below(3) == 0 {
            hot
        } else {
            routed[rng.below(routed.len() as u64) as usize]
        };
        if outp == inp {
            continue;
        }
        let sl = sl_of(&mut rng, inp);
        // Only SLs SL2VL sends to a data VL (15 drops).
        if cfg
            .sl2vl_of(inp, outp)
            .vl_of(sl)
            .is_none_or(|v| v >= cfg.ports[outp].data_vls)
        {
            continue;
        }
        let payload = rng.below(max_payload + 1) as u16;
        let Some(bytes) = frame(&mut rng, dlid, inp, sl, payload, i) else {
            continue;
        };
        at[inp] += rng.below(120);
        out.push(TrafficPacket {
            cycle: at[inp],
            port: inp,
            bytes,
        });
    }
    out
}

/// The golden model itself as the switch under test (the bench's self-test: it must pass its own checks):
/// each packet's descriptor is handed in and, when it leaves, its bytes are rewritten as its egress says.
#[derive(Debug)]
pub struct SwitchDut {
    sw: switch_asic::Switch,
    held: std::collections::HashMap<u32, Vec<u8>>,
    next: u32,
    /// Packets out with their VL changed to the VL + 1 (mod data VLs): a mutant for tests.
    pub mutate_vl: bool,
    /// RoCEv2 mutant for tests: pause frames from the link partners are dropped, never reaching the switch.
    pub ignore_pause: bool,
    links: Vec<LinkKind>,
}

impl SwitchDut {
    /// The switch of `cfg`.
    pub fn new(cfg: &SwitchConfig) -> Result<Self, switch_asic::ConfigError> {
        Ok(SwitchDut {
            sw: switch_asic::Switch::new(cfg.clone())?,
            held: Default::default(),
            next: 0,
            mutate_vl: false,
            ignore_pause: false,
            links: (0..cfg.ports.len()).map(|p| LinkKind::of(cfg, p)).collect(),
        })
    }
}

impl PacketDut for SwitchDut {
    fn rx_packet(&mut self, port: usize, bytes: &[u8]) {
        let tag = self.next;
        self.next += 1;
        let link = self.links.get(port).copied().unwrap_or_default();
        if let Some(desc) = super::golden::desc_of(link, bytes, tag) {
            self.held.insert(tag, bytes.to_vec());
            let _ = self.sw.rx_packet(
                port,
                rtl_model::link::packet::PacketStart { desc, offset: 0 },
            );
        }
    }
    fn rx_fc(&mut self, port: usize, fc: FcPacket) {
        let _ = self.sw.rx_fc(port, fc);
    }
    fn rx_pause(&mut self, port: usize, frame: PauseFrame) -> Result<(), String> {
        if !self.ignore_pause {
            self.sw.rx_pause(port, frame).map_err(|e| e.to_string())?;
        }
        Ok(())
    }
    fn step(&mut self, out: &mut Vec<DutOut>) -> Result<(), String> {
        use rtl_model::link::packet::TxEvent;
        let t = self.sw.now();
        let evs: Vec<TxEvent> = self.sw.step().to_vec();
        for ev in evs {
            match ev {
                TxEvent::Packet { port, start } => {
                    let p = usize::from(port);
                    let mut b = self.held.remove(&start.desc.tag).ok_or("unknown tag")?;
                    if self.links[p] == LinkKind::RoceV2 {
                        // The frame keeps its bytes but for ECN CE and the IPv4 checksum.
                        if start.desc.ecn == 3 {
                            pfc::mark_ce_ipv4(&mut b).map_err(|e| e.to_string())?;
                        }
                        out.push(DutOut::Packet {
                            port: p,
                            cycle: t,
                            bytes: b,
                        });
                        continue;
                    }
                    let mut vl = start.desc.vl;
                    if self.mutate_vl {
                        vl = (vl + 1) % self.sw.config().ports[p].data_vls.max(1);
                    }
                    rtl_model::link::packet::egress_rewrite(&mut b, vl, start.desc.fecn)
                        .map_err(|e| e.to_string())?;
                    out.push(DutOut::Packet {
                        port: p,
                        cycle: t,
                        bytes: b,
                    });
                }
                TxEvent::Fc { port, fc } => out.push(DutOut::Fc {
                    port: usize::from(port),
                    fc,
                }),
                TxEvent::Pause { port, frame } => out.push(DutOut::Pause {
                    port: usize::from(port),
                    frame,
                }),
            }
        }
        Ok(())
    }
}
