//! Scenario files (TOML): the topology (explicit switches, HCAs and links, a generator, or an
//! `ibnetdiscover` file named in `[topology]`, which also sets the routing), the flows (`[[flow]]`s and
//! `[[traffic]]` patterns), and the run and CC settings (`[settings]`, `[switch_cc]`, `[hca_cc]`, and `[roce]` for RoCEv2 mode); unknown
//! keys are errors.
//!
//! Every error names the file, the line and the field: syntax and type errors come from the TOML parser
//! with its line and column; errors found after parsing (a link to a missing port, a flow to a missing
//! host, a zero rate) are tied to the line of the value that is wrong.
//!
//! ```toml
//! name = "two-switches"
//! duration_us = 1000
//!
//! [[switch]]
//! name = "S1"
//! ports = 8
//!
//! [[hca]]
//! name = "H1"
//!
//! [[link]]
//! ends = ["H1", "S1:1"]
//! rate = "4xQDR"        # IB names (data rate) or "<n>Mbps"
//! latency_ns = 100
//!
//! [[flow]]
//! id = "F1"
//! src = "H1"
//! dst = "H4"
//! ```

use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use crate::topology::{self, Topology, TopologyError};

use checks::{check_hca_cc, check_settings, flow_pattern};
use explicit::explicit_topology;
use file::File;

mod checks;
mod explicit;
mod fabric_source;
mod file;
pub mod limits;
pub mod names;
pub mod opensm;
pub mod ports;
pub mod roce;
mod traffic;
pub use ports::{Overrides, SwitchSettings, VlArb};
pub use roce::RoceSettings;

/// Largest `root_min_credits`: the congestion detector compares it with a 12-bit credit count.
pub const ROOT_MIN_CREDITS_MAX: u16 = (1 << rtl_model::blocks::cong_detect::CREDIT_WIDTH) - 1;
/// Largest `stall_window`: the detector's window is a 16-bit count of cycles.
pub const STALL_WINDOW_MAX: u32 = (1 << rtl_model::blocks::cong_detect::STALL_WINDOW_WIDTH) - 1;

/// `stall_window` is within 1..=[`STALL_WINDOW_MAX`] (0 would make every congested port-VL a root under the
/// stall window rule: a mistake rather than a setting).
pub(crate) fn check_stall_window(w: u32) -> Result<(), String> {
    if (1..=STALL_WINDOW_MAX).contains(&w) {
        Ok(())
    } else {
        Err(format!(
            "stall_window: {w} is not in 1..={STALL_WINDOW_MAX} (cycles, the detector's 16-bit window)"
        ))
    }
}

/// A scenario error: where (file, line) and what.
#[derive(Debug, thiserror::Error)]
#[error("{}:{line}: {message}", file.display())]
pub struct ScenarioError {
    /// The scenario file.
    pub file: PathBuf,
    /// 1-based line of the offending value (0 when the file could not be read).
    pub line: usize,
    /// What is wrong, naming the field.
    pub message: String,
}

/// A scenario as read: topology validated, flows resolved to HCA indices.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// Name (the `name` key, or the file stem).
    pub name: String,
    /// Seed of every random choice in the run.
    pub seed: u64,
    /// Simulated time in microseconds.
    pub duration_us: u64,
    /// The fabric.
    pub topology: Topology,
    /// The flows, in file order.
    pub flows: Vec<Flow>,
    /// Run and fabric settings (`[settings]`).
    pub settings: Settings,
    /// Congestion settings of every switch output port (`[switch_cc]`).
    pub switch_cc: SwitchCc,
    /// The HCAs' IB CC reaction and notification points (`[hca_cc]`); `None`: no CC at the HCAs.
    pub hca_cc: Option<HcaCc>,
    /// RoCEv2 mode (`[roce]`, see [`roce`]); `None`: InfiniBand links with credits.
    pub roce: Option<RoceSettings>,
    /// Settings of single switches and HCAs (`cc`, `sl2vl`, `vl_arb` on `[[switch]]`/`[[hca]]`; see
    /// [`ports`]).
    pub overrides: Overrides,
    /// Values that are allowed but probably not meant (a flow that starts after the end): each names the
    /// file, line and key; `run` prints them and keeps them in `summary.json`.
    pub warnings: Vec<String>,
    /// What a fabric read from `ibnetdiscover` (`[topology] ibnetdiscover`) left out or is worth knowing,
    /// as `ibcycle import` says it; `run` prints them, and they are not in `summary.json` (the scenario the
    /// import writes has them as comments, and both runs give the same summary).
    pub notes: Vec<String>,
}

/// IB CC at the HCAs (`[hca_cc]`): every flow gets a CCT reaction point (QP-based, one per flow) and every
/// destination returns a CNP for each FECN-marked packet. The CCT is linear: entry `i` has CCT_Shift
/// `cct_shift` and CCT_Multiplier `i * cct_multiplier_step`, entries 0..=ccti_limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HcaCc {
    /// CCTI_Increase per BECN.
    pub ccti_increase: u8,
    /// CCTI_Limit (at most 127: the table has 128 entries at most).
    pub ccti_limit: u16,
    /// CCTI_Min.
    pub ccti_min: u8,
    /// CCTI_Timer in 1.024 us units.
    pub ccti_timer: u16,
    /// CCT_Shift of every entry (0..=3 in the 2-bit field).
    pub cct_shift: u8,
    /// CCT_Multiplier of entry `i` is `i` times this.
    pub cct_multiplier_step: u16,
    /// Which reaction and notification points: `"ib"` (the CCT and a CNP per FECN, the default) or `"rrcc"`
    /// (the receiver-driven CC of seed 002; the `rrcc_*` keys). The switches mark FECN the same way for both.
    pub algorithm: CcAlgorithm,
    /// RR-CC period `T` of the receiver, ns.
    pub rrcc_period_ns: u64,
    /// RR-CC `d` in Q10 (1024 = 1.0): a BECN CNP sets the rate to `receive_rate * d`.
    pub rrcc_d_q10: u16,
    /// RR-CC additive increase `R_AI`, Mbit/s, added to the target on every `rrcc_consecutive`-th BECN-less
    /// CNP in a row.
    pub rrcc_rate_ai_mbps: u64,
    /// BECN-less CNPs in a row before `target += R_AI` (the paper: 3).
    pub rrcc_consecutive: u32,
    /// RR-CC threshold on the fraction of FECN-marked packets in a period, percent (the paper: 95).
    pub rrcc_fecn_pct: u8,
    /// Lowest rate an RR-CC sender goes down to, Mbit/s.
    pub rrcc_min_rate_mbps: u64,
    /// An explicit CongestionControlTable instead of the linear one (`cct = [[shift, multiplier], ...]`, or
    /// opensm's `cc_cct`); `ccti_limit` must index into it.
    pub cct: Option<CctTable>,
}

/// An explicit CongestionControlTable: 1 to 128 entries `(CCT_Shift, CCT_Multiplier)`. Fixed-size, so that
/// the settings stay `Copy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(try_from = "Vec<[u16; 2]>")]
pub struct CctTable {
    len: u8,
    entries: [(u8, u16); 128],
}

impl CctTable {
    /// The table of `entries`: 1 to 128, shifts 0..=3, multipliers 0..=0x3FFF.
    pub fn new(entries: &[(u8, u16)]) -> Result<Self, String> {
        if entries.is_empty() || entries.len() > 128 {
            return Err(format!(
                "{} entries; a CongestionControlTable has 1 to 128",
                entries.len()
            ));
        }
        let mut t = CctTable {
            len: entries.len() as u8,
            entries: [(0, 0); 128],
        };
        for (i, &(s, m)) in entries.iter().enumerate() {
            if s > 3 || m > 0x3FFF {
                return Err(format!(
                    "entry {i} ({s}, {m}): CCT_Shift is 0..=3 and CCT_Multiplier 0..=16383"
                ));
            }
            t.entries[i] = (s, m);
        }
        Ok(t)
    }

    /// The entries.
    pub fn entries(&self) -> &[(u8, u16)] {
        &self.entries[..usize::from(self.len)]
    }
}

impl TryFrom<Vec<[u16; 2]>> for CctTable {
    type Error = String;

    fn try_from(v: Vec<[u16; 2]>) -> Result<Self, String> {
        let mut e = Vec::with_capacity(v.len());
        for (i, &[s, m]) in v.iter().enumerate() {
            let s = u8::try_from(s)
                .ok()
                .filter(|&s| s <= 3)
                .ok_or_else(|| format!("entry {i}: CCT_Shift {s} is not in 0..=3"))?;
            e.push((s, m));
        }
        CctTable::new(&e)
    }
}

/// The HCA congestion-control algorithm (`[hca_cc] algorithm`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CcAlgorithm {
    /// IB CC: CCT reaction point, a CNP for every FECN-marked packet.
    #[default]
    Ib,
    /// Receiver-driven CC (seed 002): the receiver counts packets and FECN marks per flow over a period and
    /// sends a CNP with BECN and the receive rate, or a CNP without BECN; the sender sets its rate from them.
    Rrcc,
}

impl Default for HcaCc {
    fn default() -> Self {
        HcaCc {
            ccti_increase: 1,
            ccti_limit: 127,
            ccti_min: 0,
            ccti_timer: 150,
            cct_shift: 3,
            cct_multiplier_step: 1,
            algorithm: CcAlgorithm::Ib,
            rrcc_period_ns: 10_000,
            rrcc_d_q10: 973,
            rrcc_rate_ai_mbps: 500,
            rrcc_consecutive: 3,
            rrcc_fecn_pct: 95,
            rrcc_min_rate_mbps: 100,
            cct: None,
        }
    }
}

/// Run and fabric settings (`[settings]`); every key is optional.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Settings {
    /// Core clock in MHz: link rates become bytes per cycle at this clock, latencies cycles.
    pub clock_mhz: u32,
    /// Interval of `throughput.csv` samples in microseconds.
    pub sample_interval_us: u64,
    /// Data VLs per port (SL s uses VL s mod data_vls).
    pub data_vls: u8,
    /// Input buffer per VL of every switch port, in 64-byte blocks.
    pub switch_vl_buf_blocks: u16,
    /// Receive buffer per VL of every HCA, in 64-byte blocks.
    pub hca_vl_buf_blocks: u16,
    /// Cycles between periodic flow-control packets.
    pub fc_interval_cycles: u16,
    /// Internal speed-up of every switch input: how many outputs it can feed at once (1..=64). A fast
    /// inter-switch input feeding slower host links needs more than 1 to carry its own rate.
    pub switch_speedup: u8,
    /// Upper bound on the drain after the run (microseconds) before the integrity check gives up.
    pub drain_limit_us: u64,
    /// Messages a non-saturating flow may hold queued at its source (its send queue); an arrival beyond
    /// that is refused and counted (`messages_refused` in the summary).
    pub max_queued_messages: u32,
    /// SL2VL of every switch port pair and every HCA: 16 VLs, entry `s` for SL `s` (see [`ports`]); unset:
    /// SL s uses VL s mod data_vls.
    pub sl2vl: Option<Vec<u8>>,
    /// VL arbitration of every switch output and every HCA port (see [`VlArb`]); unset: opensm's default
    /// tables.
    pub vl_arb: Option<VlArb>,
    /// RC ACKs from every destination: `"none"` (the default), `"message"` (one for each message's last
    /// packet) or `"packet"` (one per data packet, coalesced while one waits).
    pub acks: hca_model::hca::AckMode,
    /// How every switch output chooses its next packet: `"lookahead"` (the pipelined allocator, the one the
    /// RTL twin `ib_switch` has; IB only) or `"same_cycle"`, see `switch_asic::config::Allocator`; unset:
    /// `"lookahead"`, and `"same_cycle"` in a scenario with `[roce]` (PFC ports have only that one).
    pub switch_allocator: Option<switch_asic::config::Allocator>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            clock_mhz: 1000,
            sample_interval_us: 10,
            data_vls: 1,
            switch_vl_buf_blocks: 128,
            hca_vl_buf_blocks: 128,
            fc_interval_cycles: 256,
            switch_speedup: 4,
            drain_limit_us: 10_000,
            max_queued_messages: 1024,
            sl2vl: None,
            vl_arb: None,
            acks: hca_model::hca::AckMode::None,
            switch_allocator: None,
        }
    }
}

/// IB CC settings of the switches' output ports (`[switch_cc]`, SwitchCongestionSetting fields). The default
/// Threshold 0 turns detection and marking off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SwitchCc {
    /// Threshold, 0 (off) ..= 15.
    pub threshold: u8,
    /// Marking_Rate: mean unmarked eligible packets between marks.
    pub marking_rate: u16,
    /// Packet_Size in 64-byte units: shorter packets are never marked.
    pub packet_size: u8,
    /// Victim_Mask of every port.
    pub victim_mask: bool,
    /// How Marking_Rate is counted: `"counter"` (exactly one in marking_rate + 1 eligible packets) or
    /// `"lfsr"` (pseudo-random with that mean, seeded from the scenario seed per port).
    pub mark_mode: switch_asic::config::MarkMode,
    /// Which VoQ fill is compared with the threshold (Gran & Reinemo's three choices): `"per_voq"` (any
    /// single input's VoQ for the output-VL), `"sum_voqs"` (the sum over inputs, the default) or
    /// `"sum_per_contributor"` (the sum divided by the inputs contributing to it).
    pub fill_comparison: switch_asic::config::FillCompare,
    /// Credit (64-byte blocks) at or above which a congested output-VL is a root rather than a victim
    /// (default: one maximum-size packet).
    pub root_min_credits: u16,
    /// How a congested output-VL of an IB port is classed root or victim: `"stall_window"` (the default: a
    /// victim when its output waited for credit with a packet ready in one of the last `stall_window`
    /// cycles, else a root) or `"credit"` (root when it has `root_min_credits` of credit). RoCEv2 ports
    /// always take the credit rule (RCM-1a's: a paused priority is a victim).
    pub root_rule: switch_asic::config::RootRule,
    /// Cycles a credit stall keeps an output-VL a victim under `root_rule = "stall_window"` (1..=65535;
    /// default 1100).
    pub stall_window: u32,
    /// Threshold -> fill in blocks: `"beyond_one_packet"` (the default: sixteenths of the buffer beyond one
    /// maximum packet) or `"linear_sixteenths"` (sixteenths of the whole buffer).
    pub threshold_map: switch_asic::config::ThresholdMap,
    /// When FECN is decided: `"enqueue"` (the default: as a packet joins its VoQ) or `"dequeue"` (as it
    /// starts at the output).
    pub mark_point: switch_asic::config::MarkPoint,
    /// Ports (bit `p`: port `p`) with Victim_Mask set on every switch: opensm's 256-bit
    /// `cc_sw_cong_setting_victim_mask` ([`opensm`]); not a TOML key (`victim_ports` is, per switch).
    #[serde(skip)]
    pub victim_ports_all: [u64; 4],
}

impl Default for SwitchCc {
    fn default() -> Self {
        SwitchCc {
            threshold: 0,
            marking_rate: 10,
            packet_size: 8,
            victim_mask: false,
            mark_mode: switch_asic::config::MarkMode::Counter,
            fill_comparison: switch_asic::config::FillCompare::SumVoqs,
            root_min_credits: rtl_model::blocks::MAX_PKT_BLOCKS.into(),
            root_rule: switch_asic::config::RootRule::StallWindow,
            stall_window: rtl_model::blocks::cong_detect::DEFAULT_STALL_WINDOW.into(),
            threshold_map: switch_asic::config::ThresholdMap::BeyondOnePacket,
            mark_point: switch_asic::config::MarkPoint::Enqueue,
            victim_ports_all: [0; 4],
        }
    }
}

/// A flow between two HCAs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flow {
    /// Name as the papers give it (F1, A, H1, ...).
    pub id: String,
    /// Source HCA index.
    pub src: usize,
    /// Destination HCA index.
    pub dst: usize,
    /// Service level.
    pub sl: u8,
    /// Path MTU in bytes.
    pub mtu: u16,
    /// Message size in bytes.
    pub message_bytes: u64,
    /// When the flow starts and stops sending (microseconds).
    pub start_us: u64,
    /// `None`: until the end of the run.
    pub stop_us: Option<u64>,
    /// When messages arrive (`pattern`, `rate`, `scv` keys; see [`FlowPattern`]).
    pub pattern: FlowPattern,
}

/// When a flow's messages arrive (the flow keys `pattern = "saturating" | "constant" | "poisson" | "ge"`,
/// `rate` = offered load as a link-rate name such as `"8Gbps"`, and for `"ge"` `scv` = C^2 >= 1). The
/// arrival cycles come from hca-model's `Arrivals`, seeded per flow from the scenario seed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FlowPattern {
    /// Always a message queued (the default).
    #[default]
    Saturating,
    /// Messages exactly evenly spaced for `rate_mbps` of message bytes.
    Constant {
        /// Offered load, Mbit/s.
        rate_mbps: u64,
    },
    /// Exponential gaps for `rate_mbps` on average.
    Poisson {
        /// Offered load, Mbit/s.
        rate_mbps: u64,
    },
    /// Generalised exponential gaps (seed 003): mean for `rate_mbps`, squared coefficient of variation
    /// `scv_milli / 1000`.
    Ge {
        /// Offered load, Mbit/s.
        rate_mbps: u64,
        /// C^2 in thousandths (at least 1000).
        scv_milli: u32,
    },
}

/// Data rate in Mbit/s of a link rate name: IB 4x links by generation (the data rate after line coding:
/// SDR/DDR/QDR 2.5/5/10 Gbaud with 8b/10b; FDR 14.0625 Gbaud with 64b/66b, 13.64 Gbit/s a lane; EDR
/// 25.78125 Gbaud with 64b/66b, 25 Gbit/s a lane; HDR 50 Gbit/s of data a lane, PAM4 with 64b/66b and its
/// forward error correction), Ethernet by line rate, or an explicit `<n>Mbps`/`<n>Gbps`.
pub fn rate_mbps(name: &str) -> Option<u64> {
    let n = name.trim();
    let known = match n.to_ascii_uppercase().as_str() {
        "1XSDR" => Some(2_000),
        "4XSDR" => Some(8_000),
        "4XDDR" => Some(16_000),
        "4XQDR" => Some(32_000),
        "4XFDR" => Some(54_545),
        "4XEDR" => Some(100_000),
        "4XHDR" => Some(200_000),
        "10GBE" => Some(10_000),
        "25GBE" => Some(25_000),
        "40GBE" => Some(40_000),
        "100GBE" => Some(100_000),
        _ => None,
    };
    known.or_else(|| {
        let lower = n.to_ascii_lowercase();
        if let Some(v) = lower.strip_suffix("mbps") {
            v.trim().parse().ok()
        } else if let Some(v) = lower.strip_suffix("gbps") {
            v.trim()
                .parse::<u64>()
                .ok()
                .and_then(|g| g.checked_mul(1000))
        } else {
            None
        }
    })
}

/// Reads and validates a scenario file.
pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
    let text = read_input(path)?;
    parse(path, &text)
}

/// Reads an input file: a regular file (not a device, FIFO or directory, which could be read without end)
/// of at most [`limits::MAX_FILE_BYTES`] bytes of UTF-8 text.
pub fn read_input(path: &Path) -> Result<String, ScenarioError> {
    use std::io::Read;
    let err = |line: usize, message: String| ScenarioError {
        file: path.to_path_buf(),
        line,
        message,
    };
    let meta = std::fs::metadata(path).map_err(|e| err(0, format!("cannot read: {e}")))?;
    if !meta.is_file() {
        return Err(err(
            0,
            "cannot read: not a regular file (a scenario is a TOML file, not a directory, device or FIFO)"
                .into(),
        ));
    }
    let max = limits::MAX_FILE_BYTES;
    if meta.len() > max {
        return Err(err(
            0,
            format!(
                "cannot read: {} bytes; a scenario file has at most {max}",
                meta.len()
            ),
        ));
    }
    let f = std::fs::File::open(path).map_err(|e| err(0, format!("cannot read: {e}")))?;
    let mut bytes = Vec::new();
    // `take`: a file that grows while it is read is still read no further than the limit.
    f.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| err(0, format!("cannot read: {e}")))?;
    if bytes.len() as u64 > max {
        return Err(err(
            0,
            format!("cannot read: more than {max} bytes; a scenario file has at most {max}"),
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let line = e.as_bytes()[..at].iter().filter(|&&b| b == b'\n').count() + 1;
        err(
            line,
            format!("not UTF-8 text (byte {at} is not; a binary file?): a scenario is a TOML file"),
        )
    })
}

/// Parses and validates scenario text; `path` is only used in errors and for the default name.
pub fn parse(path: &Path, text: &str) -> Result<Scenario, ScenarioError> {
    let at = |span: Range<usize>, message: String| ScenarioError {
        file: path.to_path_buf(),
        line: line_of(text, span.start),
        message,
    };
    let file: File = toml::from_str(text).map_err(|e| {
        // The parser's message already says where; keep its first line (the caret drawing follows), and
        // name the key when the error is at a `key = value` line (a type error names no field itself).
        let line = e.span().map_or(0, |s| line_of(text, s.start));
        let mut message = e.message().to_string();
        if let Some(key) = e.span().and_then(|s| key_at(text, s.start)) {
            if !message.contains(&format!("`{}`", key.rsplit('.').next().unwrap_or(&key))) {
                message = format!("{key}: {message}");
            }
        }
        ScenarioError {
            file: path.to_path_buf(),
            line,
            message,
        }
    })?;
    let duration_us = *file.duration_us.get_ref();
    if duration_us == 0 {
        return Err(at(
            file.duration_us.span(),
            "duration_us: must be above 0".into(),
        ));
    }
    if duration_us > limits::MAX_DURATION_US {
        return Err(at(
            file.duration_us.span(),
            limits::out_of_range("duration_us", duration_us, 1, limits::MAX_DURATION_US),
        ));
    }
    let settings = check_settings(&file, text, &at)?;
    let clock = settings.clock_mhz;
    let rate = |r: &Spanned<String>, field: &str| {
        let mbps = rate_mbps(r.get_ref()).ok_or_else(|| {
            at(
                r.span(),
                format!(
                    "{field}: {:?} is not a link rate (4xSDR .. 4xHDR, 10GbE .. 100GbE, <n>Mbps, <n>Gbps)",
                    r.get_ref()
                ),
            )
        })?;
        // A link moves at most 64 bytes per cycle, as an exact fraction of bounded size.
        let max = limits::max_rate_mbps(clock);
        if mbps == 0 {
            // The topology reports it, naming the link.
            return Ok(0);
        }
        if mbps > max {
            return Err(at(
                r.span(),
                format!(
                    "{field}: {:?} is {mbps} Mbit/s, not in 1..={max} Mbit/s (64 bytes per cycle at settings.clock_mhz = {clock})",
                    r.get_ref()
                ),
            ));
        }
        crate::fabric::link_rate(mbps, clock)
            .map_err(|why| at(r.span(), format!("{field}: {:?}: {why}", r.get_ref())))?;
        Ok(mbps)
    };
    let latency = |ns: &Spanned<u64>, field: &str| {
        let v = *ns.get_ref();
        if v > limits::MAX_LATENCY_NS {
            return Err(at(
                ns.span(),
                limits::out_of_range(field, v, 0, limits::MAX_LATENCY_NS),
            ));
        }
        Ok(v)
    };
    // With a generator, `[[switch]]` entries without `ports` and `[[hca]]` entries with `cc`, `host_cap` or
    // `drain_cap`
    // only carry the settings of generated nodes (see [`ports`]).
    let explicit = !file.link.is_empty()
        || file.switch.iter().any(|s| s.ports.is_some())
        || file
            .hca
            .iter()
            .any(|h| h.cc.is_none() && h.host_cap.is_none() && h.drain_cap.is_none());
    let ibnetdiscover = file
        .topology
        .as_ref()
        .and_then(|t| t.get_ref().ibnetdiscover.as_ref());
    let generators = usize::from(file.fat_tree.is_some())
        + usize::from(file.fat_tree3.is_some())
        + usize::from(file.chain.is_some())
        + usize::from(ibnetdiscover.is_some());
    if usize::from(explicit) + generators != 1 {
        return Err(at(
            0..0,
            "topology: give exactly one of [[switch]]/[[hca]]/[[link]], [fat_tree], [fat_tree3], [chain] or \
             [topology] ibnetdiscover"
                .into(),
        ));
    }
    let mut fabric = None;
    let mut notes = Vec::new();
    let topo = if let Some(ft) = &file.fat_tree {
        let f = ft.get_ref();
        // Bounded before the generator allocates: each count is at most a switch's ports.
        for (key, v) in [
            ("leaves", f.leaves),
            ("spines", f.spines),
            ("hosts_per_leaf", f.hosts_per_leaf),
            ("uplinks_per_spine", f.uplinks_per_spine),
        ] {
            let max = usize::from(topology::MAX_SWITCH_PORTS);
            if v > max {
                return Err(at(
                    key_span(text, ft.span(), key),
                    limits::out_of_range(&format!("fat_tree.{key}"), v, 1, max as u64),
                ));
            }
        }
        topology::fat_tree(
            f.leaves,
            f.spines,
            f.hosts_per_leaf,
            f.uplinks_per_spine,
            rate(&f.host_rate, "fat_tree.host_rate")?,
            rate(&f.fabric_rate, "fat_tree.fabric_rate")?,
            latency(&f.latency_ns, "fat_tree.latency_ns")?,
        )
        .map_err(|e| at(ft.span(), generator_error("fat_tree", e)))?
    } else if let Some(ft) = &file.fat_tree3 {
        let f = ft.get_ref();
        // The generator checks the shape (radix, pods) before it allocates anything.
        let shape = topology::FatTree3 {
            radix: f.radix,
            pods: f.pods.unwrap_or(f.radix),
        };
        topology::fat_tree3(
            shape,
            rate(&f.host_rate, "fat_tree3.host_rate")?,
            rate(&f.fabric_rate, "fat_tree3.fabric_rate")?,
            latency(&f.latency_ns, "fat_tree3.latency_ns")?,
        )
        .map_err(|e| at(ft.span(), generator_error("fat_tree3", e)))?
    } else if let Some(ch) = &file.chain {
        let c = ch.get_ref();
        // Bounded before the generator allocates: every switch and HCA needs a LID.
        let nodes = (c.hosts_per_switch as u64)
            .checked_add(1)
            .and_then(|n| n.checked_mul(c.switches as u64));
        if c.switches > 0 && nodes.is_none_or(|n| n > limits::MAX_NODES) {
            let max = limits::MAX_NODES / (c.hosts_per_switch as u64).saturating_add(1);
            return Err(at(
                key_span(text, ch.span(), "switches"),
                format!(
                    "{} ({} switches and their hosts need a LID each; at most {} nodes)",
                    limits::out_of_range("chain.switches", c.switches, 1, max),
                    c.switches,
                    limits::MAX_NODES
                ),
            ));
        }
        topology::chain(
            c.switches,
            c.hosts_per_switch,
            rate(&c.host_rate, "chain.host_rate")?,
            rate(&c.trunk_rate, "chain.trunk_rate")?,
            latency(&c.latency_ns, "chain.latency_ns")?,
        )
        .map_err(|e| at(ch.span(), generator_error("chain", e)))?
    } else if let (Some(f), Some(sec)) = (ibnetdiscover, &file.topology) {
        let (t, fab, n) = fabric_source::from_ibnetdiscover(sec.get_ref(), f, path, clock, &at)?;
        fabric = Some(fab);
        notes = n;
        t
    } else {
        explicit_topology(&file, &at, &rate, &latency)?
    };
    let (topo, routing) =
        fabric_source::route(topo, file.topology.as_ref(), fabric.as_ref(), path, &at)?;
    // Credit loops: the generated fat trees and chains are free of them under their own routes by
    // construction (minimum-hop; destination-mod-k for [fat_tree3], up/down either way); everything else
    // is checked.
    let own_routes = file.fat_tree3.is_some() && routing == "minimum-hop";
    if explicit || fabric.is_some() || (topo.fixed_routes.is_some() && !own_routes) {
        let lfts = topo
            .routes()
            .map_err(|e| at(0..0, format!("topology: {e}")))?;
        if let Some(mut cycle) = crate::credit_loop::find(&topo, &lfts) {
            cycle.routing = routing.into();
            let link = cycle.links[0];
            let span = if explicit {
                file.link.get(link).map_or(0..0, |l| l.ends.span())
            } else {
                file.topology.as_ref().map_or(0..0, |t| t.span())
            };
            let from = match &fabric {
                Some(f) => format!(
                    " (the first link is line {} of the ibnetdiscover file)",
                    f.links[link].line
                ),
                None => String::new(),
            };
            return Err(at(span, format!("topology: {cycle}{from}")));
        }
    }
    let names = names::Names::new(&topo, fabric.as_ref());
    let (generated, mut warnings) =
        traffic::expand(&file, &topo, &names, file.seed, path, text, &at)?;
    let mut flows = Vec::with_capacity(file.flow.len() + generated.len());
    // Ids seen so far: a [[traffic]] entry can make hundreds of thousands of flows.
    let mut ids = std::collections::HashSet::with_capacity(flows.capacity());
    for (i, f) in file.flow.iter().chain(&generated).enumerate() {
        let host = |name: &Spanned<String>, field: &str| {
            names
                .hca(name.get_ref())
                .map_err(|m| at(name.span(), format!("flow[{i}].{field}: {m}")))
        };
        let (src, dst) = (host(&f.src, "src")?, host(&f.dst, "dst")?);
        if src == dst {
            return Err(at(f.dst.span(), format!("flow[{i}].dst: same HCA as src")));
        }
        if !ids.insert(f.id.get_ref().as_str()) {
            return Err(at(
                f.id.span(),
                format!("flow[{i}].id: {:?} is used twice", f.id.get_ref()),
            ));
        }
        if *f.sl.get_ref() > 15 {
            return Err(at(
                f.sl.span(),
                format!("flow[{i}].sl: {} is above 15", f.sl.get_ref()),
            ));
        }
        if !matches!(*f.mtu.get_ref(), 256 | 512 | 1024 | 2048 | 4096) {
            return Err(at(
                f.mtu.span(),
                format!(
                    "flow[{i}].mtu: {} is not an IB MTU (256, 512, 1024, 2048, 4096)",
                    f.mtu.get_ref()
                ),
            ));
        }
        if *f.message_bytes.get_ref() == 0 {
            return Err(at(
                f.message_bytes.span(),
                format!("flow[{i}].message_bytes: must be above 0"),
            ));
        }
        if let Err(why) = limits::check_name(f.id.get_ref()) {
            return Err(at(f.id.span(), format!("flow[{i}].id: {why}")));
        }
        let start_us = *f.start_us.get_ref();
        if start_us > limits::MAX_DURATION_US {
            return Err(at(
                f.start_us.span(),
                limits::out_of_range(
                    &format!("flow[{i}].start_us"),
                    start_us,
                    0,
                    limits::MAX_DURATION_US,
                ),
            ));
        }
        if let Some(stop) = &f.stop_us {
            if *stop.get_ref() <= start_us {
                return Err(at(
                    stop.span(),
                    format!("flow[{i}].stop_us: not after start_us ({start_us})"),
                ));
            }
            if *stop.get_ref() > limits::MAX_DURATION_US {
                return Err(at(
                    stop.span(),
                    limits::out_of_range(
                        &format!("flow[{i}].stop_us"),
                        stop.get_ref(),
                        start_us + 1,
                        limits::MAX_DURATION_US,
                    ),
                ));
            }
        }
        if start_us >= duration_us {
            // Allowed (a sweep over duration_us may cross it), but the flow sends nothing.
            warnings.push(format!(
                "{}:{}: flow[{i}].start_us: {start_us} is not before duration_us ({duration_us}): flow {:?} sends nothing",
                path.display(),
                line_of(text, f.start_us.span().start),
                f.id.get_ref()
            ));
        }
        let pattern = flow_pattern(i, f, clock, &at)?;
        if let FlowPattern::Constant { rate_mbps }
        | FlowPattern::Poisson { rate_mbps }
        | FlowPattern::Ge { rate_mbps, .. } = pattern
        {
            // One message takes longer to offer than the flow is active: the first arrives at start_us
            // and counts in full, so the flow's throughput says nothing about its rate.
            let active = f
                .stop_us
                .as_ref()
                .map_or(duration_us, |s| *s.get_ref())
                .min(duration_us)
                .saturating_sub(start_us);
            let msg_bits = u128::from(*f.message_bytes.get_ref()) * 8;
            if active > 0 && msg_bits > u128::from(rate_mbps) * u128::from(active) {
                let r = f.rate.as_ref().expect("a patterned flow has a rate");
                warnings.push(format!(
                    "{}:{}: flow[{i}].rate: {} Mbit/s offers one {}-byte message per {:.3} us, longer than the flow is active ({active} us): its throughput is that of whole messages, not of the rate",
                    path.display(),
                    line_of(text, r.span().start),
                    rate_mbps,
                    f.message_bytes.get_ref(),
                    msg_bits as f64 / rate_mbps as f64
                ));
            }
        }
        flows.push(Flow {
            id: f.id.get_ref().clone(),
            src,
            dst,
            sl: *f.sl.get_ref(),
            mtu: *f.mtu.get_ref(),
            message_bytes: *f.message_bytes.get_ref(),
            start_us,
            stop_us: f.stop_us.as_ref().map(|s| *s.get_ref()),
            pattern,
        });
    }
    let switch_cc = match &file.switch_cc {
        Some(c) if c.get_ref().threshold > 15 => {
            return Err(at(
                key_span(text, c.span(), "threshold"),
                format!("switch_cc.threshold: {} is above 15", c.get_ref().threshold),
            ))
        }
        Some(c) if c.get_ref().root_min_credits > ROOT_MIN_CREDITS_MAX => {
            return Err(at(
                key_span(text, c.span(), "root_min_credits"),
                format!(
                    "switch_cc.root_min_credits: {} is not in 0..={ROOT_MIN_CREDITS_MAX} (the 12-bit credit count)",
                    c.get_ref().root_min_credits
                ),
            ))
        }
        Some(c) if check_stall_window(c.get_ref().stall_window).is_err() => {
            return Err(at(
                key_span(text, c.span(), "stall_window"),
                format!(
                    "switch_cc.{}",
                    check_stall_window(c.get_ref().stall_window).unwrap_err()
                ),
            ))
        }
        Some(c) => *c.get_ref(),
        None => SwitchCc::default(),
    };
    let hca_cc = match &file.hca_cc {
        None => None,
        Some(c) => {
            let v = *c.get_ref();
            if let Err((field, value, why)) = check_hca_cc(&v) {
                return Err(at(
                    key_span(text, c.span(), field),
                    format!("hca_cc.{field}: {value} {why}"),
                ));
            }
            Some(v)
        }
    };
    let roce = match &file.roce {
        None => None,
        Some(r) => {
            r.get_ref().check().map_err(|m| at(r.span(), m))?;
            if settings.data_vls > 8 {
                let span = file.settings.as_ref().map_or(r.span(), |s| s.span());
                return Err(at(
                    span,
                    format!(
                        "settings.data_vls: {} priorities, but RoCEv2 ([roce]) has at most 8",
                        settings.data_vls
                    ),
                ));
            }
            if let Some(h) = &file.hca_cc {
                return Err(at(
                    h.span(),
                    "hca_cc: IB CC at the HCAs does not apply in RoCEv2 mode ([roce] is present); choose roce.reaction instead".into(),
                ));
            }
            Some(*r.get_ref())
        }
    };
    checks::check_links(&topo, &flows, &settings, roce.as_ref(), &file, text, &at)?;
    // The SLs the flows use.
    let mut sls: Vec<u8> = flows.iter().map(|f| f.sl).collect();
    sls.sort_unstable();
    sls.dedup();
    let (switch_cc, hca_cc) = match &file.cc {
        None => (switch_cc, hca_cc),
        Some(c) => {
            if roce.is_some() {
                return Err(at(
                    c.span(),
                    "cc: opensm's IB CC settings do not apply in RoCEv2 mode ([roce] is present)"
                        .into(),
                ));
            }
            let osm = opensm_settings(c, path, &at)?;
            let (s, h) = opensm::apply(&osm, switch_cc, hca_cc, &sls, &mut warnings)
                .map_err(|m| at(c.span(), format!("cc: {m}")))?;
            if let Some(Err((field, value, why))) = h.as_ref().map(check_hca_cc) {
                return Err(at(
                    c.span(),
                    format!("cc: the CA settings opensm gives: {field}: {value} {why}"),
                ));
            }
            (s, h)
        }
    };
    checks::check_converted_cc(&file, hca_cc.as_ref(), roce.as_ref(), clock, text, &at)?;
    if let Some(a) = &settings.vl_arb {
        let t = settings
            .sl2vl
            .as_ref()
            .and_then(|v| ports::check_sl2vl(v, settings.data_vls).ok());
        let vl_of = |sl: u8| t.map_or(sl % settings.data_vls, |t| t[usize::from(sl)]);
        if let Some(why) = a.ungranted(&sls, vl_of) {
            let span = file
                .settings
                .as_ref()
                .map_or(0..0, |sp| key_span(text, sp.span(), "vl_arb"));
            return Err(at(span, format!("settings.vl_arb: {why}")));
        }
    }
    let overrides = ports::resolve(&file, &topo, &settings, &switch_cc, hca_cc, &sls, &at)?;
    let name = file.name.unwrap_or_else(|| {
        path.file_stem()
            .map_or_else(|| "scenario".into(), |s| s.to_string_lossy().into_owned())
    });
    let mut duration_us = *file.duration_us.get_ref();
    if let Some(cap) = short_run_us() {
        if duration_us > cap {
            warnings.push(format!(
                "duration_us {duration_us} cut to {cap} by {SHORT_RUN_ENV} (a development setting: the \
                 documentation test runs every command the docs show this way)"
            ));
            duration_us = cap;
        }
    }
    Ok(Scenario {
        name,
        seed: file.seed,
        duration_us,
        topology: topo,
        flows,
        settings,
        switch_cc,
        hca_cc,
        roce,
        overrides,
        warnings,
        notes,
    })
}

/// The environment variable that shortens every run to at most that many simulated microseconds (benches
/// too; co-simulations to a thousand cycles per microsecond): tests/docs.rs runs every command the
/// documentation shows under it. A shortened scenario says so in its warnings (stderr, summary.json).
pub const SHORT_RUN_ENV: &str = "IBCYCLE_SHORT_RUN_US";

/// The cap [`SHORT_RUN_ENV`] sets, if any.
pub fn short_run_us() -> Option<u64> {
    std::env::var(SHORT_RUN_ENV).ok()?.parse().ok()
}

/// The opensm settings of `[cc]`: its `opensm_conf` file (relative to the scenario file at `path`; errors
/// name that file and line), then its inline `[cc.opensm]` keys (errors name the scenario's line).
fn opensm_settings(
    c: &file::CcSection,
    path: &Path,
    at: &impl Fn(Range<usize>, String) -> ScenarioError,
) -> Result<opensm::OpensmCc, ScenarioError> {
    let mut osm = opensm::OpensmCc::default();
    if let Some(f) = &c.opensm_conf {
        let conf = path
            .parent()
            .unwrap_or_else(|| Path::new("."))
            .join(f.get_ref());
        let text = read_input(&conf)?;
        osm = opensm::OpensmCc::parse(&text).map_err(|(line, message)| ScenarioError {
            file: conf.clone(),
            line,
            message,
        })?;
    }
    for (k, v) in &c.opensm {
        let value = match v.get_ref() {
            toml::Value::String(s) => s.clone(),
            toml::Value::Integer(i) => i.to_string(),
            toml::Value::Boolean(b) => if *b { "TRUE" } else { "FALSE" }.to_string(),
            other => {
                return Err(at(
                    v.span(),
                    format!("cc.opensm.{k}: {other} is not a string, integer or boolean"),
                ))
            }
        };
        if k != "congestion_control" && !k.starts_with("cc_") {
            return Err(at(
                v.span(),
                format!("cc.opensm.{k}: not one of opensm's congestion-control keys"),
            ));
        }
        osm.set(k, &value)
            .map_err(|m| at(v.span(), format!("cc.opensm.{m}")))?;
    }
    Ok(osm)
}

/// Where `key = ...` is written in the table whose header starts at `table`, so a checked value's error
/// points at its own line: the lines from the header up to the next `[` header are searched. The table's
/// span when the key is not written there (a default value, or a dotted or inline form this simple search
/// does not follow).
fn key_span(text: &str, table: Range<usize>, key: &str) -> Range<usize> {
    let start = text[..table.start.min(text.len())]
        .rfind('\n')
        .map_or(0, |n| n + 1);
    let mut pos = start;
    for (i, line) in text[start..].split_inclusive('\n').enumerate() {
        let t = line.trim_start();
        if i > 0 && t.starts_with('[') {
            break;
        }
        if let Some(rest) = t.strip_prefix(key) {
            if rest.trim_start().starts_with('=') {
                let at = pos + (line.len() - t.len());
                return at..at + key.len();
            }
        }
        pos += line.len();
    }
    table
}

/// The key written at the line holding byte `pos`, as `table.key` under the nearest `[table]` or
/// `[[table]]` header above it (`link.latency_ns`); `None` when that line is not a `key = value` line.
fn key_at(text: &str, pos: usize) -> Option<String> {
    let pos = pos.min(text.len());
    let start = text[..pos].rfind('\n').map_or(0, |n| n + 1);
    let line = text[start..].lines().next().unwrap_or("");
    let (key, _) = line.split_once('=')?;
    let key = key.trim();
    let ok = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.');
    if key.is_empty() || !key.chars().all(ok) {
        return None;
    }
    let table = text[..start].lines().rev().find_map(|l| {
        let t = l.trim();
        t.strip_prefix("[[")
            .and_then(|r| r.strip_suffix("]]"))
            .or_else(|| t.strip_prefix('[').and_then(|r| r.strip_suffix(']')))
            .map(str::trim)
    });
    Some(match table {
        Some(t) => format!("{t}.{key}"),
        None => key.to_string(),
    })
}

/// A generator's error: its own messages already name the generator.
fn generator_error(name: &str, e: TopologyError) -> String {
    match e {
        TopologyError::BadGenerator(m) => m,
        other => format!("{name}: {other}"),
    }
}

/// 1-based line of byte offset `pos` in `text`.
fn line_of(text: &str, pos: usize) -> usize {
    text.as_bytes()[..pos.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    const GRAN: &str = r#"
name = "gran-s1"
duration_us = 2000

[[switch]]
name = "S1"
ports = 8
[[switch]]
name = "S2"
ports = 8

[[hca]]
name = "H1"
[[hca]]
name = "H4"

[[link]]
ends = ["H1", "S1:1"]
rate = "4xDDR"
latency_ns = 100
[[link]]
ends = ["S1:8", "S2:8"]
rate = "4xQDR"
[[link]]
ends = ["H4", "S2:1"]
rate = "4xDDR"

[[flow]]
id = "F1"
src = "H1"
dst = "H4"
"#;

    fn err(text: &str) -> String {
        parse(Path::new("s.toml"), text).unwrap_err().to_string()
    }

    #[test]
    fn reads_an_explicit_topology_and_flows() {
        let s = parse(Path::new("x/gran.toml"), GRAN).unwrap();
        assert_eq!(s.name, "gran-s1");
        assert_eq!((s.seed, s.duration_us), (1, 2000));
        assert_eq!(s.topology.links[1].rate_mbps, 32_000);
        assert_eq!(s.topology.links[0].rate_mbps, 16_000);
        assert_eq!(s.flows.len(), 1);
        assert_eq!(
            (s.flows[0].src, s.flows[0].dst, s.flows[0].mtu),
            (0, 1, 2048)
        );
    }

    #[test]
    fn generators() {
        let s = parse(
            Path::new("clos.toml"),
            "duration_us = 5\n[fat_tree]\nleaves = 36\nspines = 18\nhosts_per_leaf = 18\nhost_rate = \"4xQDR\"\nfabric_rate = \"4xQDR\"\n",
        )
        .unwrap();
        assert_eq!((s.name.as_str(), s.topology.hcas.len()), ("clos", 648));
        let s = parse(
            Path::new("c.toml"),
            "duration_us = 5\n[chain]\nswitches = 3\nhosts_per_switch = 2\nhost_rate = \"40GbE\"\ntrunk_rate = \"40000Mbps\"\n",
        )
        .unwrap();
        assert_eq!(s.topology.switches.len(), 3);
    }

    #[test]
    fn settings_and_switch_cc_are_read_and_checked() {
        let s = parse(Path::new("g.toml"), GRAN).unwrap();
        assert_eq!(
            (s.settings.clone(), s.switch_cc),
            (Settings::default(), SwitchCc::default())
        );
        let text = format!(
            "{GRAN}\n[settings]\nclock_mhz = 500\nswitch_speedup = 2\n[switch_cc]\nthreshold = 15\nmarking_rate = 1\n"
        );
        let s = parse(Path::new("g.toml"), &text).unwrap();
        assert_eq!((s.settings.clock_mhz, s.settings.switch_speedup), (500, 2));
        assert_eq!(
            s.settings.sample_interval_us, 10,
            "unset keys keep defaults"
        );
        assert_eq!((s.switch_cc.threshold, s.switch_cc.marking_rate), (15, 1));
        for (bad, want) in [
            ("[settings]\nclock_mhz = 0", "settings.clock_mhz: 0"),
            (
                "[settings]\nsample_interval_us = 0",
                "settings.sample_interval_us: 0",
            ),
            (
                "[settings]\nswitch_vl_buf_blocks = 10",
                "settings.switch_vl_buf_blocks: 10",
            ),
            (
                "[settings]\nhca_vl_buf_blocks = 5000",
                "settings.hca_vl_buf_blocks: 5000",
            ),
            ("[settings]\ndata_vls = 0", "settings.data_vls: 0"),
            (
                "[settings]\nswitch_speedup = 65",
                "settings.switch_speedup: 65",
            ),
            (
                "[settings]\nfc_interval_cycles = 0",
                "settings.fc_interval_cycles: 0",
            ),
            (
                "[settings]\nswitch_allocator = \"lookahead\"\n[roce]",
                "settings.switch_allocator: \"lookahead\" is built for IB credit ports only",
            ),
            (
                "[settings]\nswitch_allocator = \"look_ahead\"",
                "unknown variant `look_ahead`",
            ),
            ("[settings]\nclockmhz = 1", "unknown field `clockmhz`"),
            ("[switch_cc]\nthreshold = 16", "switch_cc.threshold: 16"),
        ] {
            let e = err(&format!("{GRAN}\n{bad}\n"));
            assert!(
                e.starts_with("s.toml:3") && e.contains(want),
                "{bad:?}: {e}"
            );
        }
    }

    #[test]
    fn checked_values_point_at_their_own_line() {
        let text = "[settings]\nclock_mhz = 500\n  data_vls=0\n[hca_cc]\ndata_vls = 1\n";
        let table = 0..10;
        assert_eq!(
            line_of(text, key_span(text, table.clone(), "data_vls").start),
            3
        );
        assert_eq!(
            line_of(text, key_span(text, table.clone(), "clock_mhz").start),
            2
        );
        // Not written in the table (a default, or only in the next table): the table's own line.
        assert_eq!(key_span(text, table.clone(), "switch_speedup"), table);
        let e = err(&format!("{GRAN}[hca_cc]\nccti_limit = 3\n\nccti_min = 9\n"));
        assert!(e.starts_with("s.toml:35: hca_cc.ccti_min: 9"), "{e}");
    }

    #[test]
    fn rate_names() {
        assert_eq!(rate_mbps("4xSDR"), Some(8_000));
        assert_eq!(rate_mbps("4xqdr"), Some(32_000));
        assert_eq!(rate_mbps("13Gbps"), Some(13_000));
        assert_eq!(rate_mbps("12500 Mbps"), Some(12_500));
        assert_eq!(rate_mbps("fast"), None);
    }

    #[test]
    fn flow_patterns_are_read_and_checked() {
        let s = parse(Path::new("g.toml"), GRAN).unwrap();
        assert_eq!(s.flows[0].pattern, FlowPattern::Saturating);
        let with = |keys: &str| parse(Path::new("s.toml"), &format!("{GRAN}{keys}\n"));
        let p = |keys: &str| with(keys).unwrap().flows[0].pattern;
        assert_eq!(
            p("pattern = \"constant\"\nrate = \"2Gbps\""),
            FlowPattern::Constant { rate_mbps: 2000 }
        );
        assert_eq!(
            p("pattern = \"poisson\"\nrate = \"800Mbps\""),
            FlowPattern::Poisson { rate_mbps: 800 }
        );
        assert_eq!(
            p("pattern = \"ge\"\nrate = \"4xSDR\"\nscv = 5.5"),
            FlowPattern::Ge {
                rate_mbps: 8000,
                scv_milli: 5500
            }
        );
        for (keys, want) in [
            (
                "pattern = \"bursty\"",
                "s.toml:32: flow[0].pattern: \"bursty\" is not",
            ),
            (
                "pattern = \"poisson\"",
                "s.toml:32: flow[0].pattern: \"poisson\" needs a rate",
            ),
            (
                "pattern = \"poisson\"\nrate = \"0Mbps\"",
                "s.toml:33: flow[0].rate",
            ),
            (
                "rate = \"1Gbps\"",
                "s.toml:32: flow[0].rate: needs a pattern",
            ),
            ("pattern = \"ge\"\nrate = \"1Gbps\"", "\"ge\" needs scv"),
            (
                "pattern = \"ge\"\nrate = \"1Gbps\"\nscv = 0.5",
                "s.toml:34: flow[0].scv: 0.5",
            ),
            (
                "pattern = \"constant\"\nrate = \"1Gbps\"\nscv = 2.0",
                "only the \"ge\"",
            ),
            (
                "pattern = \"saturating\"\nrate = \"1Gbps\"",
                "takes no rate",
            ),
        ] {
            let e = with(keys).unwrap_err().to_string();
            assert!(e.contains(want), "{keys:?}: {e}");
        }
    }

    #[test]
    fn hca_cc_algorithm_and_rrcc_settings() {
        let s = parse(Path::new("g.toml"), &format!("{GRAN}[hca_cc]\n")).unwrap();
        assert_eq!(s.hca_cc.unwrap().algorithm, CcAlgorithm::Ib);
        let text = format!("{GRAN}[hca_cc]\nalgorithm = \"rrcc\"\nrrcc_period_ns = 5000\n");
        let c = parse(Path::new("g.toml"), &text).unwrap().hca_cc.unwrap();
        assert_eq!(
            (c.algorithm, c.rrcc_period_ns, c.rrcc_fecn_pct),
            (CcAlgorithm::Rrcc, 5000, 95)
        );
        for (bad, want) in [
            ("algorithm = \"dcqcn\"", "unknown variant `dcqcn`"),
            ("rrcc_period_ns = 0", "hca_cc.rrcc_period_ns: 0"),
            ("rrcc_d_q10 = 1025", "hca_cc.rrcc_d_q10: 1025"),
            ("rrcc_fecn_pct = 101", "hca_cc.rrcc_fecn_pct: 101"),
            ("rrcc_consecutive = 0", "hca_cc.rrcc_consecutive: 0"),
            ("rrcc_min_rate_mbps = 0", "hca_cc.rrcc_min_rate_mbps: 0"),
        ] {
            let e = err(&format!("{GRAN}\n[hca_cc]\n{bad}\n"));
            assert!(
                e.starts_with("s.toml:3") && e.contains(want),
                "{bad:?}: {e}"
            );
        }
        let e = err(&format!("{GRAN}\n[settings]\nmax_queued_messages = 0\n"));
        assert!(e.contains("settings.max_queued_messages: 0"), "{e}");
    }

    /// The malformed-scenario corpus: each gets an error naming file, line and field; nothing panics.
    #[test]
    fn malformed_scenarios_name_file_line_and_field() {
        let cases: &[(&str, &str, &str)] = &[
            // (replacement of the duration line, expected location, expected text)
            (
                "threshhold = 1\nduration_us = 2000",
                "s.toml:3:",
                "unknown field `threshhold`",
            ),
            ("duration_us = \"long\"", "s.toml:3:", "invalid type"),
            (
                "duration_us = 0",
                "s.toml:3:",
                "duration_us: must be above 0",
            ),
        ];
        for (repl, line, text) in cases {
            let e = err(&GRAN.replace("duration_us = 2000", repl));
            assert!(e.starts_with(line) && e.contains(text), "{repl:?}: {e}");
        }
        let e = err(&GRAN.replace("ends = [\"H4\", \"S2:1\"]", "ends = [\"H5\", \"S2:1\"]"));
        assert!(
            e.starts_with("s.toml:25:") && e.contains("\"H5\": no switch or HCA"),
            "{e}"
        );
        let e = err(&GRAN.replace("\"S2:8\"", "\"S2:9\""));
        assert!(
            e.starts_with("s.toml:22:") && e.contains("has ports 1 to 8"),
            "{e}"
        );
        let e = err(&GRAN.replace("\"S2:8\"", "\"S2\""));
        assert!(e.contains("needs a port"), "{e}");
        let e = err(&GRAN.replace("\"S2:8\"", "\"S1:1\""));
        assert!(
            e.starts_with("s.toml:22:") && e.contains("already connected by link 0"),
            "{e}"
        );
        let e = err(&GRAN.replace("rate = \"4xQDR\"", "rate = \"0Mbps\""));
        assert!(e.contains("rate must be above 0"), "{e}");
        let e = err(&GRAN.replace("rate = \"4xQDR\"", "rate = \"warp\""));
        assert!(
            e.starts_with("s.toml:23:") && e.contains("link[1].rate"),
            "{e}"
        );
        let e = err(&GRAN.replace("dst = \"H4\"", "dst = \"H9\""));
        assert!(
            e.starts_with("s.toml:31:") && e.contains("flow[0].dst: no HCA named \"H9\""),
            "{e}"
        );
        let e = err(&GRAN.replace("dst = \"H4\"", "dst = \"S2\""));
        assert!(e.contains("is a switch"), "{e}");
        let e = err(&GRAN.replace("dst = \"H4\"", "dst = \"H1\""));
        assert!(e.contains("same HCA as src"), "{e}");
        let e = err(&format!("{GRAN}mtu = 1500\n"));
        assert!(
            e.starts_with("s.toml:32:") && e.contains("flow[0].mtu: 1500"),
            "{e}"
        );
        let e = err(&format!("{GRAN}stop_us = 0\n"));
        assert!(e.contains("stop_us: not after start_us"), "{e}");
        let e = err(&GRAN.replace("ports = 8\n[[switch]]", "ports = 99\n[[switch]]"));
        assert!(e.starts_with("s.toml:7:") && e.contains("99 ports"), "{e}");
        let e = err(&GRAN.replace("name = \"H4\"", "name = \"H1\""));
        assert!(
            e.starts_with("s.toml:15:") && e.contains("\"H1\" is used twice"),
            "{e}"
        );
        let e = err(&format!(
            "{GRAN}[[flow]]\nid = \"F1\"\nsrc = \"H4\"\ndst = \"H1\"\n"
        ));
        assert!(e.contains("\"F1\" is used twice"), "{e}");
        let e = err(&format!("{GRAN}[chain]\nswitches = 1\n"));
        assert!(
            e.contains("missing field") || e.contains("exactly one"),
            "{e}"
        );
        let e = err("duration_us = 5\n[fat_tree]\nleaves = 2\nspines = 40\nhosts_per_leaf = 30\nhost_rate = \"4xQDR\"\nfabric_rate = \"4xQDR\"\n");
        assert!(e.starts_with("s.toml:2:") && e.contains("ports"), "{e}");
        let e = err("duration_us = 5\n");
        assert!(e.contains("exactly one of"), "{e}");
        let e = err("[[[");
        assert!(e.starts_with("s.toml:1:"), "{e}");
        let e = load(Path::new("/nonexistent/s.toml"))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("/nonexistent/s.toml:0: cannot read"), "{e}");
    }
}
