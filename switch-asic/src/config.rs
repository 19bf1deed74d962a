//! Switch configuration: ports, forwarding, SL2VL, VL arbitration, flow control and congestion control, with
//! validation that names the bad setting.
//!
//! Everything here derives serde, so a configuration can be written in TOML (or JSON); the congestion settings
//! can also be taken from the wire form of SwitchCongestionSetting / SwitchPortCongestionSetting
//! ([`SwitchConfig::apply_congestion_mads`]).

use rtl_model::blocks::{cong_detect, fecn_marker};
use rtl_model::mad::sl2vl::Sl2VlTable;
use rtl_model::mad::switch_cong::{
    ControlMapOrder, ControlType, SwitchCongestionSetting, SwitchPortCongestionSettingBlock,
};
use rtl_model::mad::vlarb::VlArbTable;
use serde::{Deserialize, Serialize};

use rtl_model::link::pfc::{PfcConfig, PRIORITIES};
use rtl_model::link::rate::LinkRate;

/// Fewest ports a switch has.
pub const PORTS_MIN: usize = 2;
/// Most ports a switch has (the congestion detector compares at most 64 VoQs).
pub const PORTS_MAX: usize = 64;
/// Most data VLs on a port.
pub const DATA_VLS_MAX: u8 = 15;
/// Header bytes of the largest packet around its MTU payload: LRH 8 + GRH 40 + BTH 12 + RETH 16 + ICRC 4 +
/// VCRC 2 (the same sum as `rtl_model::blocks::MAX_PKT_BLOCKS`).
pub const MAX_HEADER_BYTES: u32 = 82;

pub use rtl_model::blocks::cong_detect::{FillCompare, RootRule, ThresholdMap};
pub use rtl_model::blocks::credit_rx::FcPolicy;
pub use rtl_model::blocks::fecn_marker::MarkMode;
pub use rtl_model::link::ConfigError;

/// Largest packet of an MTU, in 64-byte blocks: `ceil((mtu + 82) / 64)` (66 at 4096).
pub fn mtu_packet_blocks(mtu: u16) -> u16 {
    ((u32::from(mtu) + MAX_HEADER_BYTES).div_ceil(64)) as u16
}

/// When an IB output port-VL decides a packet's FECN (`fecn_marker` is stepped once per packet, at this
/// point, with `cong_detect`'s registered marking state of the packet's output port-VL).
///
/// The IB specification says only that packets leaving a port-VL in the congestion state may be marked.
/// Deciding at dequeue makes a packet's mark depend on which VoQ it waits in: round-robin arbitration
/// serves a backlogged VoQ more often while the port is congested, so the flows of the longest VoQ are
/// marked more per packet (the parking lot's merged flows at per-VoQ comparison), and a sparse flow's own
/// packet, counted in the fill until it leaves, makes its departures look congested (under the summed
/// comparisons). Deciding at enqueue, a packet sees the port-VL's state when it joins its VoQ, before it is
/// counted, so every flow's packets sample the same state at their arrival times and are marked alike; the
/// hardware's contributors share the bottleneck fairly with its own settings (seed 000 figures 7b and 9,
/// seed 004 figure 5), which only enqueue marking reproduces (docs/cc-fidelity.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MarkPoint {
    /// When the packet joins its VoQ (a store-and-forwarded packet: when its tail is in). Packets joining the
    /// VoQs of one output port-VL in the same cycle are decided in input-port order, each a step of the
    /// port-VL's `fecn_marker` (a chain of markers in hardware).
    #[default]
    Enqueue,
    /// When the packet starts at the output.
    Dequeue,
}

/// How an output chooses its next packet: the round-robin pick among inputs per VL, the credit check,
/// `vl_arb`'s choice of VL and the input's read slot (speed-up).
///
/// The IB specification leaves the switch's internal scheduling to the designer. `Lookahead` is the
/// separable allocator switch ASICs build, and the one the RTL twin `ib_switch` has (the fabric runs it on
/// IB ports unless a scenario says otherwise): three registered stages per decision, taken while the
/// previous packet is still on the wire: (1) per VL the round-robin pick among the inputs with a packet and
/// a free read slot at the start of the cycle, and its credit check (`credit_tx`'s registers, so not in the
/// cycle a packet starts, whose blocks they count from the next); (2) `vl_arb` over those requests proposes
/// a VL and so an input (`hold_i`: its state not yet moved); (3) every input accepts up to its free read
/// slots among the outputs proposing it, round robin over the outputs from a pointer of its own; an accepted
/// output moves `vl_arb`, dequeues the packet and claims the read slot, and the packet starts (and takes its
/// credit) when the wire frees; a refused one starts again at (1). Stage 1 begins [`LOOKAHEAD_CYCLES`]
/// cycles before the wire frees, so a packet on the wire for more than that many cycles is followed back to
/// back; an idle output starts a packet that many cycles after it is visible. `SameCycle` decides all of it
/// in the cycle the wire frees, output after output in port order (an output sees the read slots the lower
/// outputs took in that cycle): the model of earlier releases, and the only one of RoCEv2 (PFC) ports; in
/// hardware a chain through every output in one cycle (hdl/README.md: hundreds of gate levels at two
/// ports), so it has no RTL twin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Allocator {
    /// Everything in the cycle the wire frees, outputs in port order.
    #[default]
    SameCycle,
    /// The three-stage separable allocator with look-ahead.
    Lookahead,
}

/// Cycles from the look-ahead allocator's first stage to the earliest start of the packet it decides.
pub const LOOKAHEAD_CYCLES: u64 = 3;

/// Congestion detection of a RoCEv2-mode (PFC) port (seed 001, section IV.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RoceDetect {
    /// RCM-1a: the IB detector (threshold, root/victim in 64-byte units, a paused priority counting as
    /// without credit); `victim_mask` chooses marking at the root only or at root and victim.
    #[default]
    IbRootVictim,
    /// RCM-1b: at each arbitration, the output is oversubscribed (at least two inputs have packets queued for
    /// it on this priority) and the input buffer of one of them holds more than `in_buf_blocks`.
    Oversubscribed {
        /// The fixed input-buffer threshold in blocks.
        in_buf_blocks: u16,
    },
}

/// Congestion detection and marking of one output port (all its VLs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PortCc {
    /// SwitchCongestionSetting Threshold, 0 (never) ..= 15 (most aggressive).
    pub threshold: u8,
    /// Packet_Size in 64-byte units: shorter packets are never marked.
    pub packet_size: u8,
    /// Marking_Rate: mean unmarked eligible packets between marks.
    pub marking_rate: u16,
    /// This port's Victim_Mask bit.
    pub victim_mask: bool,
    /// Which fill is compared.
    pub compare: FillCompare,
    /// Threshold -> fill in blocks; `None` takes the table of `threshold_map` for the VL's buffer size at
    /// this port (the switch is assumed to have like buffers at every input) and the switch's MTU.
    pub thr_table: Option<[u16; 16]>,
    /// The Threshold mapping used when `thr_table` is `None`.
    pub threshold_map: ThresholdMap,
    /// When an IB port decides FECN (RoCEv2-mode ports decide ECN CE at dequeue, at arbitration, as seed
    /// 001 defines its detections).
    pub mark_point: MarkPoint,
    /// Credit (blocks) at or above which a congested port-VL is a root ([`RootRule::Credit`]).
    pub root_min_credits: u16,
    /// How a congested port-VL is classed root or victim (`cong_detect`'s [`RootRule`]) on an IB port
    /// (default [`RootRule::StallWindow`]: the credit rule misreads a busy root whose partner's buffer is
    /// small, see [`RootRule`]). A RoCEv2 (PFC) port's IB detector always takes the credit rule, which is
    /// RCM-1a's own (a paused priority is a victim).
    pub root_rule: RootRule,
    /// Cycles a credit stall keeps a port-VL a victim under [`RootRule::StallWindow`].
    pub stall_window: u16,
    /// Counting method of Marking_Rate.
    pub mark_mode: MarkMode,
    /// LFSR seed (nonzero).
    pub lfsr_seed: u16,
    /// Detection on a RoCEv2-mode port (ignored on IB ports).
    pub roce_detect: RoceDetect,
}

impl Default for PortCc {
    /// The Mellanox CC manager's switch settings (Threshold 15, Packet_Size 8, Marking_Rate 10) and the
    /// detector defaults of `cong_detect::Config::new`, but for the root rule: the stall window (of
    /// [`cong_detect::DEFAULT_STALL_WINDOW`] cycles) rather than the block's credit rule.
    fn default() -> Self {
        PortCc {
            threshold: 15,
            packet_size: 8,
            marking_rate: 10,
            victim_mask: false,
            compare: FillCompare::SumVoqs,
            thr_table: None,
            threshold_map: ThresholdMap::BeyondOnePacket,
            mark_point: MarkPoint::Enqueue,
            root_min_credits: rtl_model::blocks::MAX_PKT_BLOCKS.into(),
            root_rule: RootRule::StallWindow,
            stall_window: cong_detect::DEFAULT_STALL_WINDOW,
            mark_mode: MarkMode::Counter,
            lfsr_seed: fecn_marker::LFSR_SEED_DEFAULT,
            roce_detect: RoceDetect::IbRootVictim,
        }
    }
}

impl PortCc {
    /// No detection and no marking (Threshold 0).
    pub fn off() -> Self {
        PortCc {
            threshold: 0,
            ..PortCc::default()
        }
    }

    /// The detector configuration for a VL whose reference buffer is `buf_blocks`, on a switch whose MTU
    /// packet is `pkt_blocks` ([`mtu_packet_blocks`]).
    pub fn detect_config(&self, buf_blocks: u16, pkt_blocks: u16) -> cong_detect::Config {
        let mut c = cong_detect::Config::new(buf_blocks);
        c.threshold = self.threshold;
        c.thr_table = self
            .thr_table
            .unwrap_or_else(|| self.threshold_map.table(buf_blocks, pkt_blocks));
        c.compare = self.compare;
        c.root_min_credits = self.root_min_credits;
        c.root_rule = self.root_rule;
        c.stall_window = self.stall_window;
        c.victim_mask = self.victim_mask;
        c
    }

    /// The marker configuration.
    pub fn marker_config(&self) -> fecn_marker::Config {
        fecn_marker::Config {
            packet_size: self.packet_size,
            marking_rate: self.marking_rate,
            mode: self.mark_mode,
            lfsr_seed: self.lfsr_seed,
        }
    }
}

/// One port of the switch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PortConfig {
    /// Number of data VLs (1..=15), VL0 .. VL(n-1).
    pub data_vls: u8,
    /// Input buffer of each data VL in 64-byte blocks (one entry per VL).
    pub vl_buf_blocks: Vec<u16>,
    /// Link rate, bytes per cycle (the same at both ends of the link).
    pub rate: LinkRate,
    /// Cycles between periodic flow-control packets per VL.
    pub fc_interval: u16,
    /// Internal speed-up: how many packets this input's buffer can feed to outputs at once (1..=64). 1 means
    /// an input feeds one output at a time; `n` lets it feed `n` outputs, each at its output's link rate.
    pub speedup: u8,
    /// VL arbitration tables and VLHighLimit of this port as an output.
    pub vlarb: VlArbTable,
    /// Congestion control of this port as an output.
    #[serde(default)]
    pub cc: PortCc,
    /// RoCEv2 mode: PFC instead of IB credits on this port's link (priority = VL, at most 8), ECN CE marking
    /// instead of FECN. `None`: an IB port.
    #[serde(default)]
    pub pfc: Option<PfcConfig>,
}

impl PortConfig {
    /// A port with one data VL of `buf_blocks` blocks, periodic flow control every 256 cycles, no speed-up,
    /// opensm's default arbitration tables and the default congestion settings.
    pub fn new(rate: LinkRate, buf_blocks: u16) -> Self {
        PortConfig {
            data_vls: 1,
            vl_buf_blocks: vec![buf_blocks],
            rate,
            fc_interval: 256,
            speedup: 1,
            vlarb: VlArbTable::opensm_default(),
            cc: PortCc::default(),
            pfc: None,
        }
    }

    /// The same port with `n` data VLs of `buf_blocks` each.
    pub fn with_vls(mut self, n: u8, buf_blocks: u16) -> Self {
        self.data_vls = n;
        self.vl_buf_blocks = vec![buf_blocks; usize::from(n)];
        self
    }
}

/// The whole switch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SwitchConfig {
    /// Ports 0 .. N-1.
    pub ports: Vec<PortConfig>,
    /// MTU in bytes (256, 512, 1024, 2048 or 4096): longer packets are dropped, and every VL buffer must hold
    /// one packet of it.
    pub mtu: u16,
    /// Linear forwarding table: entry `dlid` is the output port, `None` for no route. Serde form: a list of
    /// `[dlid, port]` pairs (`lft = [[1, 0], [2, 3]]`), since TOML has no null.
    #[serde(with = "lft_pairs")]
    pub lft: Vec<Option<u8>>,
    /// SL2VL tables: one entry used for every (input, output) pair, or N x N entries at `in * N + out`.
    pub sl2vl: Vec<Sl2VlTable>,
    /// When receivers send flow-control packets.
    #[serde(default)]
    pub fc_policy: FcPolicy,
    /// How outputs choose their next packet.
    #[serde(default)]
    pub allocator: Allocator,
}

/// Serde for the forwarding table as `[dlid, port]` pairs.
mod lft_pairs {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub(super) fn serialize<S: Serializer>(lft: &[Option<u8>], s: S) -> Result<S::Ok, S::Error> {
        let pairs: Vec<(u16, u8)> = lft
            .iter()
            .enumerate()
            .filter_map(|(d, p)| p.map(|p| (d as u16, p)))
            .collect();
        pairs.serialize(s)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Vec<Option<u8>>, D::Error> {
        let pairs = Vec::<(u16, u8)>::deserialize(d)?;
        let len = pairs
            .iter()
            .map(|&(d, _)| usize::from(d) + 1)
            .max()
            .unwrap_or(0);
        let mut lft = vec![None; len];
        for (d, p) in pairs {
            lft[usize::from(d)] = Some(p);
        }
        Ok(lft)
    }
}

fn mad_err(setting: String, e: rtl_model::mad::MadError) -> ConfigError {
    ConfigError::new(setting, "(table)", e.to_string())
}

impl SwitchConfig {
    /// `n` copies of `port`, a 4096-byte MTU, an empty forwarding table and the identity SL2VL clipped to
    /// each port's VLs (SL s uses VL s mod data_vls).
    pub fn uniform(n: usize, port: PortConfig) -> Self {
        let vls = port.data_vls.max(1);
        let mut t = Sl2VlTable::default();
        for (sl, v) in t.vl.iter_mut().enumerate() {
            *v = sl as u8 % vls;
        }
        SwitchConfig {
            ports: vec![port; n],
            mtu: 4096,
            lft: Vec::new(),
            sl2vl: vec![t],
            fc_policy: FcPolicy::default(),
            allocator: Allocator::default(),
        }
    }

    /// Routes `dlid` to `port`, growing the table as needed.
    pub fn route(&mut self, dlid: u16, port: u8) -> &mut Self {
        let i = usize::from(dlid);
        if self.lft.len() <= i {
            self.lft.resize(i + 1, None);
        }
        self.lft[i] = Some(port);
        self
    }

    /// The SL2VL table of packets entering at `inp` and leaving at `out`.
    pub fn sl2vl_of(&self, inp: usize, out: usize) -> &Sl2VlTable {
        if self.sl2vl.len() == 1 {
            &self.sl2vl[0]
        } else {
            &self.sl2vl[inp * self.ports.len() + out]
        }
    }

    /// Checks every setting; the first problem found is returned, naming the setting and its value.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let n = self.ports.len();
        if !(PORTS_MIN..=PORTS_MAX).contains(&n) {
            return Err(ConfigError::new(
                "ports",
                format!("{n} ports"),
                format!("a switch has {PORTS_MIN}..={PORTS_MAX} ports"),
            ));
        }
        if ![256u16, 512, 1024, 2048, 4096].contains(&self.mtu) {
            return Err(ConfigError::new(
                "mtu",
                self.mtu,
                "an IB MTU is 256, 512, 1024, 2048 or 4096",
            ));
        }
        let mtu_blocks = mtu_packet_blocks(self.mtu);
        for (p, pc) in self.ports.iter().enumerate() {
            self.validate_port(p, pc, mtu_blocks)?;
            if self.allocator == Allocator::Lookahead && pc.pfc.is_some() {
                return Err(ConfigError::new(
                    format!("ports[{p}].pfc"),
                    "a RoCEv2 (PFC) port",
                    "allocator = \"lookahead\" is built for IB credit ports only",
                ));
            }
        }
        if self.lft.len() > 1 << 16 {
            return Err(ConfigError::new(
                "lft",
                format!("{} entries", self.lft.len()),
                "a DLID has 16 bits: at most 65536 entries",
            ));
        }
        for (dlid, e) in self.lft.iter().enumerate() {
            if let Some(port) = *e {
                if usize::from(port) >= n {
                    return Err(ConfigError::new(
                        format!("lft[{dlid}]"),
                        port,
                        format!(
                            "port {port} does not exist (the switch has ports 0..={})",
                            n - 1
                        ),
                    ));
                }
            }
        }
        if self.sl2vl.len() != 1 && self.sl2vl.len() != n * n {
            return Err(ConfigError::new(
                "sl2vl",
                format!("{} tables", self.sl2vl.len()),
                format!("give 1 table for all port pairs or {} (N x N)", n * n),
            ));
        }
        for inp in 0..n {
            for (out, oc) in self.ports.iter().enumerate() {
                let t = self.sl2vl_of(inp, out);
                if let Some((sl, &vl)) =
                    t.vl.iter()
                        .enumerate()
                        .find(|(_, &vl)| vl != Sl2VlTable::VL_DROP && vl >= oc.data_vls)
                {
                    return Err(ConfigError::new(
                        format!("sl2vl[in {inp} -> out {out}][sl {sl}]"),
                        vl,
                        format!(
                            "VL {vl} does not exist on port {out}, which has {} data VLs (or use 15 to drop the SL)",
                            oc.data_vls
                        ),
                    ));
                }
                t.validate(oc.data_vls)
                    .map_err(|e| mad_err(format!("sl2vl[in {inp} -> out {out}]"), e))?;
            }
        }
        Ok(())
    }

    fn validate_port(&self, p: usize, pc: &PortConfig, mtu_blocks: u16) -> Result<(), ConfigError> {
        let at = |f: &str| format!("ports[{p}].{f}");
        if !(1..=DATA_VLS_MAX).contains(&pc.data_vls) {
            return Err(ConfigError::new(
                at("data_vls"),
                pc.data_vls,
                format!("a port has 1..={DATA_VLS_MAX} data VLs"),
            ));
        }
        if pc.vl_buf_blocks.len() != usize::from(pc.data_vls) {
            return Err(ConfigError::new(
                at("vl_buf_blocks"),
                format!("{} entries", pc.vl_buf_blocks.len()),
                format!("one buffer size per data VL ({})", pc.data_vls),
            ));
        }
        for (v, &b) in pc.vl_buf_blocks.iter().enumerate() {
            if b < mtu_blocks {
                return Err(ConfigError::new(
                    at(&format!("vl_buf_blocks[{v}]")),
                    b,
                    format!(
                        "smaller than one MTU packet: an MTU of {} needs {mtu_blocks} blocks",
                        self.mtu
                    ),
                ));
            }
        }
        pc.rate.checked(&at("rate"))?;
        if pc.fc_interval == 0 {
            return Err(ConfigError::new(
                at("fc_interval"),
                0,
                "periodic flow-control packets need an interval of at least one cycle",
            ));
        }
        if !(1..=PORTS_MAX as u8).contains(&pc.speedup) {
            return Err(ConfigError::new(
                at("speedup"),
                pc.speedup,
                format!("1..={PORTS_MAX} concurrent reads per input"),
            ));
        }
        pc.vlarb.validate().map_err(|e| mad_err(at("vlarb"), e))?;
        if pc.cc.threshold > 15 {
            return Err(ConfigError::new(
                at("cc.threshold"),
                pc.cc.threshold,
                "Threshold is 4 bits: 0 (off) ..= 15 (most aggressive)",
            ));
        }
        for (v, &b) in pc.vl_buf_blocks.iter().enumerate() {
            cong_detect::CongDetect::new(pc.cc.detect_config(b, mtu_packet_blocks(self.mtu)))
                .map_err(|e| ConfigError::new(at(&format!("cc (VL {v})")), "", e.to_string()))?;
        }
        fecn_marker::FecnMarker::new(pc.cc.marker_config())
            .map_err(|e| ConfigError::new(at("cc"), "", e.to_string()))?;
        if let Some(pfc) = &pc.pfc {
            if pc.data_vls > PRIORITIES {
                return Err(ConfigError::new(
                    at("data_vls"),
                    pc.data_vls,
                    format!("a PFC port has at most {PRIORITIES} priorities"),
                ));
            }
            for &b in &pc.vl_buf_blocks {
                pfc.watermarks(b, pc.rate, mtu_blocks, &at("pfc"))?;
            }
        }
        Ok(())
    }

    /// Applies the congestion settings a congestion-control manager writes: the switch-wide
    /// SwitchCongestionSetting (only the components its Control_Map marks valid, decoded in `order`) and then
    /// the valid congestion-control elements of SwitchPortCongestionSetting (`blocks[b]` holds ports
    /// `32 b ..`), which override Threshold, Packet_Size and Marking_Rate per port.
    pub fn apply_congestion_mads(
        &mut self,
        sw: &SwitchCongestionSetting,
        blocks: &[SwitchPortCongestionSettingBlock],
        order: ControlMapOrder,
    ) -> Result<(), ConfigError> {
        sw.validate()
            .map_err(|e| mad_err("SwitchCongestionSetting".into(), e))?;
        for (b, blk) in blocks.iter().enumerate() {
            blk.validate()
                .map_err(|e| mad_err(format!("SwitchPortCongestionSetting[{b}]"), e))?;
        }
        let ctl = sw.controls(order);
        for (p, pc) in self.ports.iter_mut().enumerate() {
            let cc = &mut pc.cc;
            if ctl.victim_mask {
                cc.victim_mask = sw.victim_mask.get(p as u8);
            }
            if ctl.threshold_packet_size {
                cc.threshold = sw.threshold;
                cc.packet_size = sw.packet_size;
            }
            if ctl.marking_rate {
                cc.marking_rate = sw.marking_rate;
            }
            let el = blocks
                .get(p / SwitchPortCongestionSettingBlock::PORTS)
                .map(|b| b.elements[p % SwitchPortCongestionSettingBlock::PORTS]);
            if let Some(el) = el {
                if el.valid && el.control_type == ControlType::CongestionControl {
                    cc.threshold = el.threshold;
                    cc.packet_size = el.packet_size;
                    cc.marking_rate = el.marking_rate;
                }
            }
        }
        self.validate()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtl_model::mad::switch_cong::{ControlMap, SwitchPortCongestionElement};

    fn cfg() -> SwitchConfig {
        let mut c = SwitchConfig::uniform(4, PortConfig::new(LinkRate::new(8, 1).unwrap(), 128));
        c.route(1, 0).route(2, 3);
        c
    }

    fn err(c: &SwitchConfig) -> String {
        c.validate().unwrap_err().to_string()
    }

    #[test]
    fn good_config_validates() {
        assert_eq!(cfg().validate(), Ok(()));
        assert_eq!(mtu_packet_blocks(4096), 66);
        assert_eq!(mtu_packet_blocks(256), 6);
    }

    #[test]
    fn threshold_above_15() {
        let mut c = cfg();
        c.ports[2].cc.threshold = 16;
        assert_eq!(
            err(&c),
            "ports[2].cc.threshold = 16: Threshold is 4 bits: 0 (off) ..= 15 (most aggressive)"
        );
    }

    #[test]
    fn forwarding_to_missing_port() {
        let mut c = cfg();
        c.route(9, 4);
        assert_eq!(
            err(&c),
            "lft[9] = 4: port 4 does not exist (the switch has ports 0..=3)"
        );
    }

    #[test]
    fn buffer_smaller_than_mtu_packet() {
        let mut c = cfg();
        c.ports[1].vl_buf_blocks[0] = 65;
        assert_eq!(
            err(&c),
            "ports[1].vl_buf_blocks[0] = 65: smaller than one MTU packet: an MTU of 4096 needs 66 blocks"
        );
        c.mtu = 2048;
        assert_eq!(c.validate(), Ok(()), "a 2048 MTU packet is 34 blocks");
    }

    #[test]
    fn sl2vl_to_missing_vl() {
        let mut c = cfg();
        c.sl2vl[0].vl[5] = 2;
        assert_eq!(
            err(&c),
            "sl2vl[in 0 -> out 0][sl 5] = 2: VL 2 does not exist on port 0, which has 1 data VLs (or use 15 to drop the SL)"
        );
        c.sl2vl[0].vl[5] = 15;
        assert_eq!(c.validate(), Ok(()));
        // Per-pair tables: only the pair into the 1-VL port fails.
        let mut c = cfg();
        for p in 0..3 {
            c.ports[p] = c.ports[p].clone().with_vls(4, 100);
        }
        c.sl2vl = vec![Sl2VlTable::default(); 16];
        c.sl2vl[2 * 4 + 1].vl[3] = 3;
        c.sl2vl[2 * 4 + 3].vl[7] = 1;
        assert!(err(&c).starts_with("sl2vl[in 2 -> out 3][sl 7] = 1"));
    }

    #[test]
    fn other_bad_settings_name_themselves() {
        let mut c = cfg();
        c.ports.truncate(1);
        assert!(err(&c).starts_with("ports = 1 ports"));
        let mut c = cfg();
        c.mtu = 1500;
        assert!(err(&c).starts_with("mtu = 1500"));
        let mut c = cfg();
        c.ports[3].rate = LinkRate { num: 0, den: 1 };
        assert!(err(&c).starts_with("ports[3].rate = 0/1"));
        let mut c = cfg();
        c.ports[0].vl_buf_blocks.push(100);
        assert!(err(&c).starts_with("ports[0].vl_buf_blocks = 2 entries"));
        let mut c = cfg();
        c.ports[0].speedup = 0;
        assert!(err(&c).starts_with("ports[0].speedup = 0"));
        let mut c = cfg();
        c.ports[0].fc_interval = 0;
        assert!(err(&c).starts_with("ports[0].fc_interval = 0"));
        let mut c = cfg();
        c.ports[0].cc.lfsr_seed = 0;
        assert!(err(&c).contains("lfsr_seed (0) is invalid"), "{}", err(&c));
        let mut c = cfg();
        c.ports[1].vlarb.low[0].vl = 15;
        assert!(err(&c).starts_with("ports[1].vlarb"), "{}", err(&c));
        let mut c = cfg();
        c.sl2vl.push(Sl2VlTable::default());
        assert!(err(&c).starts_with("sl2vl = 2 tables"));
    }

    #[test]
    fn congestion_mads_apply_by_control_map_and_port_override() {
        let mut c = cfg();
        let mut sw = SwitchCongestionSetting::mellanox_defaults(ControlMapOrder::Opensm);
        sw.threshold = 7;
        sw.packet_size = 2;
        sw.marking_rate = 3;
        sw.victim_mask.set(2, true);
        // The defaults' Control_Map leaves the masks alone: without the victim bit the mask is not applied.
        let mut c0 = cfg();
        c0.apply_congestion_mads(&sw, &[], ControlMapOrder::Opensm)
            .unwrap();
        assert!(!c0.ports[2].cc.victim_mask);
        sw.set_controls(ControlMap::ALL, ControlMapOrder::Opensm);
        let mut blk = SwitchPortCongestionSettingBlock::default();
        blk.elements[3] = SwitchPortCongestionElement {
            valid: true,
            control_type: ControlType::CongestionControl,
            threshold: 12,
            packet_size: 0,
            marking_rate: 0,
        };
        c.apply_congestion_mads(&sw, &[blk], ControlMapOrder::Opensm)
            .unwrap();
        let p = |i: usize| c.ports[i].cc;
        assert_eq!(
            (p(0).threshold, p(0).packet_size, p(0).marking_rate),
            (7, 2, 3)
        );
        assert!(p(2).victim_mask && !p(0).victim_mask);
        assert_eq!(
            (p(3).threshold, p(3).packet_size, p(3).marking_rate),
            (12, 0, 0)
        );
        // Control_Map without the threshold bit leaves the threshold alone.
        let mut c2 = cfg();
        sw.control_map = 0b1_0000; // marking rate only, opensm order
        c2.apply_congestion_mads(&sw, &[], ControlMapOrder::Opensm)
            .unwrap();
        assert_eq!(
            (c2.ports[0].cc.threshold, c2.ports[0].cc.marking_rate),
            (15, 3)
        );
        // A wire threshold above 15 is refused.
        sw.threshold = 16;
        let e = c2
            .apply_congestion_mads(&sw, &[], ControlMapOrder::Opensm)
            .unwrap_err();
        assert!(e.to_string().contains("threshold"), "{e}");
    }

    #[test]
    fn toml_config() {
        let text = r#"
            mtu = 2048
            lft = [[1, 0], [2, 1], [7, 2]]
            sl2vl = [[0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 15]]
            fc_policy = "periodic"

            [[ports]]
            data_vls = 2
            vl_buf_blocks = [64, 64]
            rate = { num = 25, den = 4 }
            fc_interval = 128
            speedup = 2
            vlarb = { high = [], low = [{ vl = 0, weight = 8 }, { vl = 1, weight = 8 }], high_limit = 0 }
            cc = { threshold = 12, compare = "sum_per_contributor", mark_mode = "lfsr" }

            [[ports]]
            data_vls = 2
            vl_buf_blocks = [64, 80]
            rate = { num = 25, den = 4 }
            fc_interval = 128
            speedup = 1
            vlarb = { high = [], low = [{ vl = 0, weight = 8 }], high_limit = 255 }

            [[ports]]
            data_vls = 2
            vl_buf_blocks = [200, 200]
            rate = { num = 8, den = 1 }
            fc_interval = 128
            speedup = 1
            vlarb = { high = [], low = [{ vl = 1, weight = 4 }], high_limit = 0 }
            pfc = { link_delay = 10 }
        "#;
        let c: SwitchConfig = toml::from_str(text).unwrap();
        assert_eq!(c.validate(), Ok(()));
        assert_eq!((c.lft[7], c.lft[3], c.lft.len()), (Some(2), None, 8));
        assert_eq!(c.ports[0].cc.compare, FillCompare::SumPerContributor);
        assert_eq!(
            c.ports[0].cc.marking_rate, 10,
            "unset fields take the defaults"
        );
        assert!(c.ports[2].pfc.is_some() && c.ports[1].pfc.is_none());
        let back: SwitchConfig = toml::from_str(&toml::to_string(&c).unwrap()).unwrap();
        assert_eq!(back, c);
        // A bad value in TOML is caught by validation, naming it.
        let bad = text.replace("threshold = 12", "threshold = 16");
        let c: SwitchConfig = toml::from_str(&bad).unwrap();
        assert!(c
            .validate()
            .unwrap_err()
            .to_string()
            .starts_with("ports[0].cc.threshold = 16"));
    }

    #[test]
    fn congestion_settings_from_wire_bytes() {
        // What a congestion-control manager sends: the 76-byte SwitchCongestionSetting and a 128-byte block.
        let mut sw = SwitchCongestionSetting::mellanox_defaults(ControlMapOrder::Reversed);
        sw.set_controls(ControlMap::ALL, ControlMapOrder::Reversed);
        sw.threshold = 9;
        sw.marking_rate = 4;
        sw.victim_mask.set(1, true);
        let mut blk = SwitchPortCongestionSettingBlock::default();
        blk.elements[2] = SwitchPortCongestionElement {
            valid: true,
            control_type: ControlType::CreditStarvation,
            threshold: 3,
            packet_size: 0,
            marking_rate: 0,
        };
        let (sw_bytes, blk_bytes) = (sw.to_bytes(), blk.to_bytes());
        let sw2 = SwitchCongestionSetting::parse(&sw_bytes).unwrap();
        let blk2 = SwitchPortCongestionSettingBlock::parse(&blk_bytes).unwrap();
        let mut c = cfg();
        c.apply_congestion_mads(&sw2, &[blk2], ControlMapOrder::Reversed)
            .unwrap();
        assert_eq!(
            (c.ports[0].cc.threshold, c.ports[0].cc.marking_rate),
            (9, 4)
        );
        assert!(c.ports[1].cc.victim_mask && !c.ports[3].cc.victim_mask);
        // A credit-starvation element does not set the congestion-control threshold.
        assert_eq!(c.ports[2].cc.threshold, 9);
        // Control_Map bit 0 alone: Marking_Rate in the Mellanox (Reversed) order, Victim_Mask in opensm's.
        let mut only = sw2;
        only.control_map = 1;
        let mut d = cfg();
        d.apply_congestion_mads(&only, &[], ControlMapOrder::Reversed)
            .unwrap();
        assert_eq!(
            (d.ports[0].cc.marking_rate, d.ports[1].cc.victim_mask),
            (4, false)
        );
        let mut e = cfg();
        e.apply_congestion_mads(&only, &[], ControlMapOrder::Opensm)
            .unwrap();
        assert_eq!(
            (e.ports[0].cc.marking_rate, e.ports[1].cc.victim_mask),
            (10, true)
        );
        assert_eq!(e.ports[0].cc.threshold, 15, "threshold bit not set");
    }

    #[test]
    fn serde_round_trip() {
        let c = cfg();
        let s = serde_json::to_string(&c).unwrap();
        let back: SwitchConfig = serde_json::from_str(&s).unwrap();
        assert_eq!(back, c);
        let pc: PortCc =
            serde_json::from_str(r#"{"threshold": 3, "compare": "sum_voqs"}"#).unwrap();
        assert_eq!(
            (pc.threshold, pc.compare, pc.marking_rate),
            (3, FillCompare::SumVoqs, 10)
        );
    }
}
