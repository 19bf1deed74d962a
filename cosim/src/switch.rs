//! The fabric's switch under co-simulation: `hdl/ib_switch.sv` against `switch_asic::Switch` itself, at its
//! port interface. Both are driven from a switch port trace ([`crate::switch_trace`]): each cycle the same
//! hand-ins (packet heads with their sub-cycle offsets, flow-control packets), and every port's
//! [`TxEvent`]s of the cycle are compared. The Rust side is `Switch` in its eager (every block every cycle)
//! mode, whose events equal the default event-driven stepping by the Switch's contract.
//!
//! The adapter ([`SwitchRtl`]) maps a [`SwitchConfig`] onto the RTL's configuration ports (per port: rate,
//! VLs, speed-up, mark point, buffers, flow-control period, congestion detection, marking and VL
//! arbitration) and loads the LFT and SL2VL tables through the table write port during reset, as a subnet
//! manager would. A packet's descriptor fields that the switch does not read travel as a 32-bit handle
//! (`rx_tag_i`): the adapter keeps the descriptor by handle and rebuilds the packet as sent from the RTL's
//! output VL, FECN, length, offset and handle. Limits of the RTL (refused with [`SwitchRtlError`]): the
//! look-ahead allocator only, no RoCEv2/PFC ports, at most [`N_PORTS`] ports, [`N_VL`] data VLs, [`TABLE_MAX`] VL arbitration entries per
//! list, [`LFT_MAX`] LFT entries, [`SLOT_MAX`] descriptor slots per input.

use std::collections::HashMap;

use rtl_model::blocks::fecn_marker::FecnMarker;
use rtl_model::blocks::{cong_detect, credit_rx, credit_tx};
use rtl_model::link::packet::TxEvent;
use switch_asic::config::mtu_packet_blocks;
use switch_asic::SwitchConfig;

/// Ports of the RTL (parameter `NPorts`).
pub const N_PORTS: usize = 18;
/// Data VLs of the RTL (parameter `NVl`).
pub const N_VL: usize = 2;
/// VL arbitration entries per list (parameter `TableMax`).
pub const TABLE_MAX: usize = 64;
/// LFT entries (parameter `LftMax`).
pub const LFT_MAX: usize = 1024;
/// Descriptor slots per input (parameter `SlotMax`).
pub const SLOT_MAX: usize = 2048;

/// A configuration the switch RTL cannot take.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the switch RTL cannot take this configuration: {0}")]
pub struct SwitchRtlError(pub String);

/// The RTL's configuration port values, as (port name, lane width, lanes' values).
#[derive(Debug, Clone, Default)]
pub struct RtlConfig {
    /// Per held port: its lanes' values (lane `i` at bits `i * width`), and the lane width.
    pub ports: Vec<(&'static str, u32, Vec<u64>)>,
    /// LFT entries (255: none).
    pub lft: Vec<u8>,
    /// SL2VL of each (input, output) pair, 16 x 4 bits.
    pub sl2vl: Vec<u64>,
}

/// Maps `cfg` onto the RTL's ports (the same block configurations `Switch::new` builds).
pub fn rtl_config(cfg: &SwitchConfig) -> Result<RtlConfig, SwitchRtlError> {
    rtl_config_with(cfg, false)
}

/// [`rtl_config`] for a switch RTL with RoCEv2/PFC ports (`hdl/alt/alt_roce_switch.sv`, through rtl-check):
/// when `cfg`'s ports run PFC, ib_switch's held ports plus the PFC ones, per port `p` and priority `v` (lane
/// `p * N_VL + v`): `pfc_xoff_i` and `pfc_xon_i` (16 bits, the watermarks in blocks the golden model
/// computes, `PfcConfig::watermarks`), `pfc_quanta_i` (16, an XOFF's quanta), `pfc_half_i` (32, cycles
/// between refreshes of a standing XOFF: half its pause), `victim_hold_i` (32, cycles a paused priority
/// still counts as without credit after the pause), `roce_detect_i` (1: RCM-1b's oversubscribed output,
/// 0: RCM-1a's root/victim) and `in_buf_thr_i` (16, RCM-1b's input-buffer threshold in blocks). A port
/// without PFC is refused (the RTL's ports all run PFC).
pub fn rtl_config_pfc(cfg: &SwitchConfig) -> Result<RtlConfig, SwitchRtlError> {
    rtl_config_with(cfg, true)
}

fn rtl_config_with(cfg: &SwitchConfig, pfc_ports: bool) -> Result<RtlConfig, SwitchRtlError> {
    cfg.validate()
        .map_err(|e| SwitchRtlError(format!("invalid: {e}")))?;
    let n = cfg.ports.len();
    let bad = |m: String| Err(SwitchRtlError(m));
    if n > N_PORTS {
        return bad(format!("{n} ports, the RTL has {N_PORTS}"));
    }
    if cfg.lft.len() > LFT_MAX {
        return bad(format!(
            "{} LFT entries, the RTL has {LFT_MAX}",
            cfg.lft.len()
        ));
    }
    let mtu_blocks = mtu_packet_blocks(cfg.mtu);
    let mut v: HashMap<&'static str, (u32, Vec<u64>)> = HashMap::new();
    let mut put = |name: &'static str, width: u32, lane: usize, x: u64| {
        let e = v.entry(name).or_insert((width, Vec::new()));
        if e.1.len() <= lane {
            e.1.resize(lane + 1, 0);
        }
        e.1[lane] = x;
    };
    put("nports_i", 6, 0, n as u64);
    put("mtu_blocks_i", 7, 0, u64::from(mtu_blocks));
    put(
        "fc_on_change_i",
        1,
        0,
        u64::from(cfg.fc_policy == credit_rx::FcPolicy::PeriodicAndOnChange),
    );
    put(
        "fccl_cap_i",
        12,
        0,
        u64::from(credit_rx::Config::new(1, 1).fccl_cap),
    );
    put(
        "fccl_reset_i",
        12,
        0,
        u64::from(credit_tx::Config::default().fccl_reset),
    );
    let mut slots = 0usize;
    for (p, pc) in cfg.ports.iter().enumerate() {
        match (&pc.pfc, pfc_ports) {
            (Some(_), false) => {
                return bad(format!(
                    "port {p} is a RoCEv2/PFC port (the RTL has IB credit ports only)"
                ))
            }
            (None, true) => {
                return bad(format!(
                    "port {p} has no PFC (the RTL's ports are RoCEv2/PFC ports only)"
                ))
            }
            (Some(f), true) => {
                for vl in 0..N_VL {
                    let buf = pc.vl_buf_blocks.get(vl).copied().unwrap_or(1);
                    let (xoff, xon) = if vl < usize::from(pc.data_vls) {
                        let wm = f
                            .watermarks(buf, pc.rate, mtu_blocks, &format!("ports[{p}].pfc"))
                            .map_err(|e| SwitchRtlError(e.to_string()))?;
                        (wm.xoff, wm.xon)
                    } else {
                        (u16::MAX, 0)
                    };
                    put("pfc_xoff_i", 16, p * N_VL + vl, u64::from(xoff));
                    put("pfc_xon_i", 16, p * N_VL + vl, u64::from(xon));
                }
                let half = rtl_model::link::pfc::pause_cycles(pc.rate, f.pause_quanta) / 2;
                let half = u32::try_from(half).map_err(|_| {
                    SwitchRtlError(format!(
                        "port {p}: a pause of {} quanta lasts beyond 2^33 cycles",
                        f.pause_quanta
                    ))
                })?;
                put("pfc_quanta_i", 16, p, u64::from(f.pause_quanta));
                put("pfc_half_i", 32, p, u64::from(half));
                put("victim_hold_i", 32, p, u64::from(f.victim_hold));
                let (detect, thr) = match pc.cc.roce_detect {
                    switch_asic::config::RoceDetect::IbRootVictim => (0, 0),
                    switch_asic::config::RoceDetect::Oversubscribed { in_buf_blocks } => {
                        (1, in_buf_blocks)
                    }
                };
                put("roce_detect_i", 1, p, detect);
                put("in_buf_thr_i", 16, p, u64::from(thr));
            }
            (None, false) => {}
        }
        if usize::from(pc.data_vls) > N_VL {
            return bad(format!(
                "port {p} has {} data VLs, the RTL {N_VL}",
                pc.data_vls
            ));
        }
        if pc.vlarb.high.len() > TABLE_MAX || pc.vlarb.low.len() > TABLE_MAX {
            return bad(format!(
                "port {p}'s VL arbitration tables exceed {TABLE_MAX} entries"
            ));
        }
        put("rate_num_i", 17, p, u64::from(pc.rate.num));
        put("rate_den_i", 17, p, u64::from(pc.rate.den));
        put("nvl_i", 4, p, u64::from(pc.data_vls));
        put("speedup_i", 7, p, u64::from(pc.speedup));
        put(
            "mark_enq_i",
            1,
            p,
            u64::from(pc.cc.mark_point == switch_asic::config::MarkPoint::Enqueue),
        );
        put("fc_interval_i", 16, p, u64::from(pc.fc_interval));
        let mut per_port: Option<cong_detect::Config> = None;
        let mut held = 0usize;
        for vl in 0..N_VL {
            let buf = pc.vl_buf_blocks.get(vl).copied().unwrap_or(1);
            if vl < usize::from(pc.data_vls) {
                held += usize::from(buf);
            }
            put("buf_blocks_i", 16, p * N_VL + vl, u64::from(buf));
            let cd = pc.cc.detect_config(buf, mtu_blocks);
            let mut t = [0u64; 4];
            for (i, &e) in cd.thr_table.iter().enumerate() {
                t[i / 4] |= u64::from(e) << (16 * (i % 4));
            }
            for (w, x) in t.iter().enumerate() {
                put("thr_table_i", 64, (p * N_VL + vl) * 4 + w, *x);
            }
            match &per_port {
                None => per_port = Some(cd),
                Some(c)
                    if (
                        c.threshold,
                        c.compare,
                        c.root_min_credits,
                        c.root_rule,
                        c.stall_window,
                        c.victim_mask,
                    ) != (
                        cd.threshold,
                        cd.compare,
                        cd.root_min_credits,
                        cd.root_rule,
                        cd.stall_window,
                        cd.victim_mask,
                    ) =>
                {
                    return bad(format!("port {p}'s detection settings differ between VLs"));
                }
                Some(_) => {}
            }
        }
        slots = slots.max(held + 1);
        let cd = per_port.expect("N_VL > 0");
        put("threshold_i", 4, p, u64::from(cd.threshold));
        put(
            "compare_i",
            2,
            p,
            match cd.compare {
                cong_detect::FillCompare::PerVoq => 0,
                cong_detect::FillCompare::SumVoqs => 1,
                cong_detect::FillCompare::SumPerContributor => 2,
            },
        );
        put("root_min_credits_i", 12, p, u64::from(cd.root_min_credits));
        put("root_rule_i", 1, p, u64::from(cd.root_rule.code()));
        put("stall_window_i", 16, p, u64::from(cd.stall_window));
        put("victim_mask_i", 1, p, u64::from(cd.victim_mask));
        let mk = pc.cc.marker_config();
        let thresh = FecnMarker::new(mk).map_or(0, |m| m.lfsr_thresh());
        put("packet_size_i", 8, p, u64::from(mk.packet_size));
        put("marking_rate_i", 16, p, u64::from(mk.marking_rate));
        put(
            "mode_i",
            1,
            p,
            u64::from(mk.mode == rtl_model::blocks::fecn_marker::MarkMode::Lfsr),
        );
        put("lfsr_seed_i", 16, p, u64::from(mk.lfsr_seed));
        put("lfsr_thresh_i", 17, p, u64::from(thresh));
        for (e, x) in pc.vlarb.high.iter().enumerate() {
            put("hi_vl_i", 4, p * TABLE_MAX + e, u64::from(x.vl));
            put("hi_weight_i", 8, p * TABLE_MAX + e, u64::from(x.weight));
        }
        for (e, x) in pc.vlarb.low.iter().enumerate() {
            put("lo_vl_i", 4, p * TABLE_MAX + e, u64::from(x.vl));
            put("lo_weight_i", 8, p * TABLE_MAX + e, u64::from(x.weight));
        }
        put("hi_n_i", 7, p, pc.vlarb.high.len() as u64);
        put("lo_n_i", 7, p, pc.vlarb.low.len() as u64);
        put("vl_high_limit_i", 8, p, u64::from(pc.vlarb.high_limit));
    }
    // Ports the switch lacks: a valid idle configuration (their blocks' assertions hold out of reset).
    for p in n..N_PORTS {
        put("rate_num_i", 17, p, 1);
        put("rate_den_i", 17, p, 1);
        put("nvl_i", 4, p, 1);
        put("speedup_i", 7, p, 1);
        put("fc_interval_i", 16, p, 256);
        for vl in 0..N_VL {
            put("buf_blocks_i", 16, p * N_VL + vl, 1);
        }
        put("lfsr_seed_i", 16, p, 1);
        if pfc_ports {
            put("pfc_quanta_i", 16, p, 1);
            for vl in 0..N_VL {
                put("pfc_xoff_i", 16, p * N_VL + vl, u64::from(u16::MAX));
            }
        }
    }
    if slots > SLOT_MAX {
        return bad(format!(
            "an input holds up to {slots} packets, the RTL {SLOT_MAX} slots"
        ));
    }
    let lft = (0..LFT_MAX)
        .map(|d| cfg.lft.get(d).copied().flatten().unwrap_or(u8::MAX))
        .collect();
    let mut sl2vl = vec![0u64; N_PORTS * N_PORTS];
    for i in 0..n {
        for o in 0..n {
            let t = cfg.sl2vl_of(i, o);
            sl2vl[i * N_PORTS + o] =
                t.vl.iter()
                    .enumerate()
                    .fold(0, |a, (s, &vl)| a | u64::from(vl & 15) << (4 * s));
        }
    }
    let mut ports: Vec<_> = v.into_iter().map(|(k, (w, l))| (k, w, l)).collect();
    ports.sort_by_key(|p| p.0);
    Ok(RtlConfig { ports, lft, sl2vl })
}

/// The first cycle at which the RTL and `Switch` differ.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SwitchMismatch {
    /// Cycle (from the trace's start).
    pub cycle: u64,
    /// Lowest port that differs.
    pub port: usize,
    /// `Switch`'s events on that port.
    pub model: Vec<TxEvent>,
    /// The RTL's events on that port.
    pub rtl: Vec<TxEvent>,
    /// What else differs (drop and overflow strobes), if not the events.
    pub note: String,
    /// The VCD window written, if any.
    pub vcd: Option<std::path::PathBuf>,
}

impl std::fmt::Display for SwitchMismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "switch mismatch at cycle {}, port {}: model {:?}, RTL {:?}",
            self.cycle, self.port, self.model, self.rtl
        )?;
        if !self.note.is_empty() {
            write!(f, " ({})", self.note)?;
        }
        if let Some(v) = &self.vcd {
            write!(f, "; VCD around it: {}", v.display())?;
        }
        Ok(())
    }
}

/// What a replay found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SwitchReplay {
    /// Every cycle matched.
    Matched {
        /// Cycles compared.
        cycles: u64,
        /// Packet heads that left the switch.
        packets: u64,
        /// Flow-control packets that left the switch.
        fcs: u64,
        /// Packets whose FECN the switch set.
        marked: u64,
    },
    /// The first difference.
    Mismatch(Box<SwitchMismatch>),
}

/// Which build of the clean switch RTL a replay runs. The clean RTL is Verilated twice: at the full
/// `N_PORTS`, and at the bug variants' parameters (`table::Module::bug_params`, 8 ports) as the control of the
/// fault hunt. The same source at another `NPorts`; the smaller simulates a cycle many times faster (the
/// switch's VoQs and its every-output compares grow as the square of the ports).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum CleanBuild {
    /// The smallest build that holds the trace's ports: the reduced one for a trace of at most its ports,
    /// else the full one.
    #[default]
    Smallest,
    /// The full build, whatever the trace's ports.
    Full,
    /// The reduced build (the fault hunt's control: it must match wherever a bug variant is caught). A trace
    /// of more ports is refused ([`CosimError::Config`]).
    Reduced,
}

/// How a replay is done.
#[derive(Debug, Clone, Default)]
pub struct ReplayOpts {
    /// Compare at most this many cycles (`None`: the whole trace).
    pub cycles: Option<u64>,
    /// The bug variant of the RTL to run. The bug variants are built at 8 ports (`table::Module::bug_params`):
    /// a trace of a larger switch is refused ([`CosimError::Config`]).
    pub bug: Option<String>,
    /// Which build of the clean RTL runs (ignored with `bug`).
    pub build: CleanBuild,
    /// Where to write a VCD around the first mismatch.
    pub vcd: Option<std::path::PathBuf>,
}

#[cfg(feature = "verilator")]
pub use rtl::*;

#[cfg(feature = "verilator")]
mod rtl {
    use super::*;
    use crate::check::CosimError;
    use crate::dut::Halt;
    use crate::ffi::{IbSwitchIo, Rtl, IB_SWITCH_VARIANTS};
    use crate::switch_trace::{HandIn, SwitchTrace};
    use rtl_model::link::packet::{FcPacket, PacketDesc, PacketStart};
    use switch_asic::Switch;

    fn set32(w: &mut u32, lane: usize, width: u32, x: u64) {
        let off = lane as u32 * width;
        let m = ((1u64 << width) - 1) << off;
        *w = ((u64::from(*w) & !m) | ((x << off) & m)) as u32;
    }

    fn set_arr(a: &mut [u32], lane: usize, width: u32, x: u64) {
        let first = lane * width as usize;
        for k in 0..width as usize {
            let b = (x >> k) & 1;
            let bit = first + k;
            let (wi, bi) = (bit / 32, bit % 32);
            a[wi] = (a[wi] & !(1 << bi)) | ((b as u32) << bi);
        }
    }

    fn get32(w: u32, lane: usize, width: u32) -> u64 {
        (u64::from(w) >> (lane as u32 * width)) & ((1u64 << width) - 1)
    }

    fn get_arr(a: &[u32], lane: usize, width: u32) -> u64 {
        let mut x = 0u64;
        let bit = lane * width as usize;
        for k in 0..width as usize {
            let b = bit + k;
            x |= u64::from((a[b / 32] >> (b % 32)) & 1) << k;
        }
        x
    }

    /// Writes lane values into a port field of any of the generated types.
    trait Field {
        fn set(&mut self, lane: usize, width: u32, x: u64);
        fn get(&self, lane: usize, width: u32) -> u64;
    }
    impl Field for u32 {
        fn set(&mut self, lane: usize, width: u32, x: u64) {
            set32(self, lane, width, x)
        }
        fn get(&self, lane: usize, width: u32) -> u64 {
            get32(*self, lane, width)
        }
    }
    impl Field for u64 {
        fn set(&mut self, lane: usize, width: u32, x: u64) {
            let off = lane as u32 * width;
            let m = if width == 64 {
                u64::MAX
            } else {
                ((1u64 << width) - 1) << off
            };
            *self = (*self & !m) | ((x << off) & m);
        }
        fn get(&self, lane: usize, width: u32) -> u64 {
            (*self >> (lane as u32 * width)) & ((1u64 << width) - 1)
        }
    }
    impl<const K: usize> Field for [u32; K] {
        fn set(&mut self, lane: usize, width: u32, x: u64) {
            set_arr(self, lane, width, x)
        }
        fn get(&self, lane: usize, width: u32) -> u64 {
            get_arr(self, lane, width)
        }
    }

    fn field<'a>(io: &'a mut IbSwitchIo, name: &str) -> Option<&'a mut dyn Field> {
        Some(match name {
            "nports_i" => &mut io.nports_i,
            "mtu_blocks_i" => &mut io.mtu_blocks_i,
            "rate_num_i" => &mut io.rate_num_i,
            "rate_den_i" => &mut io.rate_den_i,
            "nvl_i" => &mut io.nvl_i,
            "speedup_i" => &mut io.speedup_i,
            "mark_enq_i" => &mut io.mark_enq_i,
            "buf_blocks_i" => &mut io.buf_blocks_i,
            "fc_interval_i" => &mut io.fc_interval_i,
            "fc_on_change_i" => &mut io.fc_on_change_i,
            "fccl_cap_i" => &mut io.fccl_cap_i,
            "fccl_reset_i" => &mut io.fccl_reset_i,
            "threshold_i" => &mut io.threshold_i,
            "thr_table_i" => &mut io.thr_table_i,
            "compare_i" => &mut io.compare_i,
            "root_min_credits_i" => &mut io.root_min_credits_i,
            "root_rule_i" => &mut io.root_rule_i,
            "stall_window_i" => &mut io.stall_window_i,
            "victim_mask_i" => &mut io.victim_mask_i,
            "packet_size_i" => &mut io.packet_size_i,
            "marking_rate_i" => &mut io.marking_rate_i,
            "mode_i" => &mut io.mode_i,
            "lfsr_seed_i" => &mut io.lfsr_seed_i,
            "lfsr_thresh_i" => &mut io.lfsr_thresh_i,
            "hi_vl_i" => &mut io.hi_vl_i,
            "hi_weight_i" => &mut io.hi_weight_i,
            "hi_n_i" => &mut io.hi_n_i,
            "lo_vl_i" => &mut io.lo_vl_i,
            "lo_weight_i" => &mut io.lo_weight_i,
            "lo_n_i" => &mut io.lo_n_i,
            "vl_high_limit_i" => &mut io.vl_high_limit_i,
            _ => return None,
        })
    }

    /// The Verilated `ib_switch` (clean or a bug variant), configured, its tables loaded, out of reset.
    pub struct SwitchRtl {
        m: Rtl<IbSwitchIo>,
        io: Box<IbSwitchIo>,
        descs: HashMap<u32, PacketDesc>,
        next_tag: u32,
        n: usize,
    }

    impl std::fmt::Debug for SwitchRtl {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_struct("SwitchRtl").field("m", &self.m).finish()
        }
    }

    /// A build's port count: its `NPorts` parameter, else the full `N_PORTS`.
    fn ports_of(params: &[(&str, u32)]) -> usize {
        params
            .iter()
            .find(|(k, _)| *k == "NPorts")
            .map_or(N_PORTS, |&(_, v)| v as usize)
    }

    impl SwitchRtl {
        /// Builds the model for `cfg`: configuration ports driven, reset held while the LFT and SL2VL
        /// tables are written, then one more reset cycle (configuration and reset reach the switch through
        /// registers, see [`crate::table::REGISTERED_TOP`]).
        pub fn new(cfg: &SwitchConfig, bug: Option<&str>) -> Result<Self, CosimError> {
            Self::with(cfg, Rtl::new("ib_switch", IB_SWITCH_VARIANTS, bug)?)
        }

        /// As [`SwitchRtl::new`] with the control model: the clean RTL built as the bug variants are.
        pub fn control(cfg: &SwitchConfig) -> Result<Self, CosimError> {
            Self::with(cfg, Rtl::control("ib_switch", IB_SWITCH_VARIANTS)?)
        }

        /// The ports of the reduced build (the control's and the bug variants' `NPorts`).
        pub fn reduced_ports() -> usize {
            IB_SWITCH_VARIANTS
                .iter()
                .find(|v| v.control)
                .map_or(N_PORTS, |v| ports_of(v.params))
        }

        fn with(cfg: &SwitchConfig, m: Rtl<IbSwitchIo>) -> Result<Self, CosimError> {
            // The twin's timing is the look-ahead allocator's (a third-party RTL configured through
            // `rtl_config` may schedule as it likes: rtl-check compares transactions, not cycles).
            if cfg.allocator != switch_asic::config::Allocator::Lookahead {
                return Err(CosimError::Config {
                    block: "ib_switch",
                    msg: format!(
                        "allocator {:?}: the RTL twin has the look-ahead allocator only",
                        cfg.allocator
                    ),
                });
            }
            let rc = rtl_config(cfg).map_err(|e| CosimError::Config {
                block: "ib_switch",
                msg: e.0,
            })?;
            // The model's own port count: N_PORTS, or fewer for a bug variant and the control (behind a top
            // with N_PORTS' port widths whose ports above the model's read zero).
            let np = ports_of(m.variant().params);
            if cfg.ports.len() > np {
                return Err(CosimError::Config {
                    block: "ib_switch",
                    msg: format!(
                        "{} ports; this model ({}) is built at {np}",
                        cfg.ports.len(),
                        m.variant().bug.unwrap_or("the control")
                    ),
                });
            }
            let mut io = Box::<IbSwitchIo>::default();
            for (name, width, lanes) in &rc.ports {
                let f = field(&mut io, name).expect("every configuration port is mapped");
                for (l, &x) in lanes.iter().enumerate() {
                    f.set(l, *width, x);
                }
            }
            let mut s = SwitchRtl {
                m,
                io,
                descs: HashMap::new(),
                next_tag: 0,
                n: cfg.ports.len(),
            };
            let halted = |kind| CosimError::Halted { cycle: 0, kind };
            s.io.rst_ni = 0;
            s.io.tbl_we_i = 1;
            s.io.tbl_sel_i = 0;
            for (d, &e) in rc.lft.iter().enumerate() {
                s.io.tbl_addr_i = d as u32;
                s.io.tbl_data_i = u64::from(e);
                s.m.step(&mut s.io).map_err(halted)?;
            }
            // SL2VL of pair (i, o) at address i * NPorts + o, the model's own NPorts.
            s.io.tbl_sel_i = 1;
            for i in 0..np {
                for o in 0..np {
                    s.io.tbl_addr_i = (i * np + o) as u32;
                    s.io.tbl_data_i = rc.sl2vl[i * N_PORTS + o];
                    s.m.step(&mut s.io).map_err(halted)?;
                }
            }
            // The last reset cycle. The model's top registers `rst_ni` (`table::REGISTERED_TOP`), so it is
            // driven high a cycle before the switch is to leave reset: the switch sees reset low at this
            // edge and high from the next, as it would with `rst_ni` driven directly and raised after it.
            s.io.tbl_we_i = 0;
            s.io.rst_ni = 1;
            s.m.step(&mut s.io).map_err(halted)?;
            if s.io.cfg_err_o != 0 {
                return Err(CosimError::Config {
                    block: "ib_switch",
                    msg: "the RTL flags its configuration (cfg_err_o)".into(),
                });
            }
            s.m.time_zero();
            Ok(s)
        }

        /// One cycle: the hand-ins the Switch accepted, then the clock edge; returns the cycle's events in
        /// port order (a flow-control packet before a packet head on one port), the drop strobes and
        /// whether any credit_rx overflowed.
        pub fn step(
            &mut self,
            pkts: &[(usize, PacketStart)],
            fcs: &[(usize, FcPacket)],
        ) -> Result<(Vec<TxEvent>, u64, bool), Halt> {
            let io = &mut *self.io;
            io.rx_pkt_i = 0;
            io.rx_fc_i = 0;
            for &(p, ps) in pkts {
                let d = ps.desc;
                let tag = self.next_tag;
                self.next_tag = self.next_tag.wrapping_add(1);
                self.descs.insert(tag, d);
                io.rx_pkt_i.set(p, 1, 1);
                io.rx_dlid_i.set(p, 16, u64::from(d.dlid));
                io.rx_sl_i.set(p, 4, u64::from(d.sl));
                io.rx_vl_i.set(p, 4, u64::from(d.vl));
                io.rx_len_i.set(p, 13, u64::from(d.wire_len));
                io.rx_fecn_i.set(p, 1, u64::from(d.fecn));
                io.rx_off_i.set(p, 17, u64::from(ps.offset));
                io.rx_tag_i.set(p, 32, u64::from(tag));
            }
            for &(p, f) in fcs {
                io.rx_fc_i.set(p, 1, 1);
                io.rx_fc_vl_i.set(p, 4, u64::from(f.vl));
                io.rx_fc_fctbs_i.set(p, 12, u64::from(f.fctbs));
                io.rx_fc_fccl_i.set(p, 12, u64::from(f.fccl));
            }
            self.m.step(io)?;
            let mut ev = Vec::new();
            for p in 0..self.n {
                if io.tx_fc_o.get(p, 1) != 0 {
                    ev.push(TxEvent::Fc {
                        port: p as u8,
                        fc: FcPacket {
                            vl: io.tx_fc_vl_o.get(p, 4) as u8,
                            fctbs: io.tx_fc_fctbs_o.get(p, 12) as u16,
                            fccl: io.tx_fc_fccl_o.get(p, 12) as u16,
                        },
                    });
                }
                if io.tx_pkt_o.get(p, 1) != 0 {
                    let tag = io.tx_tag_o.get(p, 32) as u32;
                    let mut desc = self.descs.get(&tag).copied().unwrap_or(PacketDesc {
                        tag: u32::MAX,
                        ..PacketDesc::default()
                    });
                    desc.vl = io.tx_vl_o.get(p, 4) as u8;
                    desc.fecn = io.tx_fecn_o.get(p, 1) != 0;
                    desc.wire_len = io.tx_len_o.get(p, 13) as u16;
                    ev.push(TxEvent::Packet {
                        port: p as u8,
                        start: PacketStart {
                            desc,
                            offset: io.tx_off_o.get(p, 17) as u32,
                        },
                    });
                }
            }
            let drops = u64::from(io.drop_o);
            let overflow = io.overflow_o != 0;
            Ok((ev, drops, overflow))
        }

        /// Starts a VCD of every signal.
        pub fn trace_open(&mut self, path: &std::path::Path) -> Result<(), CosimError> {
            self.m.trace_open(path)
        }

        /// Ends the VCD.
        pub fn trace_close(&mut self) {
            self.m.trace_close()
        }
    }

    fn events_of(ev: &[TxEvent], p: usize) -> Vec<TxEvent> {
        ev.iter()
            .filter(|e| match e {
                TxEvent::Packet { port, .. }
                | TxEvent::Fc { port, .. }
                | TxEvent::Pause { port, .. } => usize::from(*port) == p,
            })
            .copied()
            .collect()
    }

    /// Drives `Switch` (eager) and the RTL from `trace` and compares every port's events every cycle;
    /// with `opts.vcd`, a mismatch re-runs the RTL with a VCD from 64 cycles before it to 8 after.
    pub fn replay(trace: &SwitchTrace, opts: &ReplayOpts) -> Result<SwitchReplay, CosimError> {
        let first = run(trace, opts, None)?;
        if let (SwitchReplay::Mismatch(m), Some(path)) = (&first, &opts.vcd) {
            let from = m.cycle.saturating_sub(64);
            let mut o = opts.clone();
            o.cycles = Some(m.cycle + 9);
            run(trace, &o, Some((path, from)))?;
            let mut m = m.clone();
            m.vcd = Some(path.clone());
            return Ok(SwitchReplay::Mismatch(m));
        }
        Ok(first)
    }

    fn run(
        trace: &SwitchTrace,
        opts: &ReplayOpts,
        vcd: Option<(&std::path::PathBuf, u64)>,
    ) -> Result<SwitchReplay, CosimError> {
        let cfg = &trace.config;
        let mut sw = Switch::new(cfg.clone()).map_err(|e| CosimError::Config {
            block: "ib_switch",
            msg: e.to_string(),
        })?;
        sw.set_eager(true);
        let mut rtl = match (&opts.bug, opts.build) {
            (Some(b), _) => SwitchRtl::new(cfg, Some(b))?,
            (None, CleanBuild::Reduced) => SwitchRtl::control(cfg)?,
            (None, CleanBuild::Smallest) if cfg.ports.len() <= SwitchRtl::reduced_ports() => {
                SwitchRtl::control(cfg)?
            }
            (None, _) => SwitchRtl::new(cfg, None)?,
        };
        let end = opts.cycles.map_or(trace.cycles, |c| c.min(trace.cycles));
        let (mut packets, mut fcs, mut marked) = (0u64, 0u64, 0u64);
        let mut k = 0;
        let mut mismatch = None;
        let mut drops_before = 0u64;
        for t in 0..end {
            if let Some((path, from)) = vcd {
                if t == from {
                    rtl.m.time_at(t);
                    rtl.trace_open(path)?;
                }
            }
            let mut pkts = Vec::new();
            let mut fc_in = Vec::new();
            while k < trace.events.len() && trace.events[k].cycle == t {
                let e = trace.events[k];
                match e.what {
                    HandIn::Packet(ps) => {
                        if sw.rx_packet(e.port, ps).is_ok() {
                            pkts.push((e.port, ps));
                        }
                    }
                    HandIn::Fc(f) => {
                        if sw.rx_fc(e.port, f).is_ok() {
                            fc_in.push((e.port, f));
                        }
                    }
                }
                k += 1;
            }
            let want: Vec<TxEvent> = sw.step().to_vec();
            let (got, drop_o, overflow) = rtl
                .step(&pkts, &fc_in)
                .map_err(|kind| CosimError::Halted { cycle: t, kind })?;
            let drops_now: u64 = (0..cfg.ports.len())
                .map(|p| sw.port_counters(p).dropped)
                .sum();
            let model_drops = drops_now - drops_before;
            drops_before = drops_now;
            let mut note = String::new();
            if u64::from(drop_o.count_ones()) != model_drops {
                note = format!("drops: model {model_drops}, RTL {}", drop_o.count_ones());
            }
            if overflow {
                note = "a credit_rx overflowed (a sender beyond its credit)".into();
            }
            if mismatch.is_none() && (want != got || !note.is_empty()) {
                let port = (0..cfg.ports.len())
                    .find(|&p| events_of(&want, p) != events_of(&got, p))
                    .unwrap_or(0);
                mismatch = Some(SwitchMismatch {
                    cycle: t,
                    port,
                    model: events_of(&want, port),
                    rtl: events_of(&got, port),
                    note,
                    vcd: None,
                });
                if vcd.is_none() {
                    break;
                }
            }
            for e in &want {
                match e {
                    TxEvent::Packet { start, .. } => {
                        packets += 1;
                        marked += u64::from(start.desc.fecn);
                    }
                    TxEvent::Fc { .. } => fcs += 1,
                    TxEvent::Pause { .. } => {}
                }
            }
        }
        if vcd.is_some() {
            rtl.trace_close();
        }
        Ok(match mismatch {
            Some(m) => SwitchReplay::Mismatch(Box::new(m)),
            None => SwitchReplay::Matched {
                cycles: end,
                packets,
                fcs,
                marked,
            },
        })
    }
}
