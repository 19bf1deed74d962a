//! `cong_detect`: the congestion state of one (output port, VL) of a switch, per IB CC.
//!
//! The switch compares the fill of the virtual output queues (VoQs) feeding this output port and VL against a
//! fill threshold chosen by the 4-bit `Threshold` of SwitchCongestionSetting (0 = never congested, 1 loose ..
//! 15 aggressive), then classifies a congested port-VL as *root* (its output can send: the congestion is
//! here) or *victim* (its output lacks credits: the congestion is downstream). A victim port-VL marks only if
//! its bit in `Victim_Mask` is set. The mapping, the fill compared and the root rule are the switch designer's
//! choice (reference, "How simulators model marking"; seed 000, section 3.2.1); here they are named settings.
//!
//! | port             | dir | width   | meaning                                                              |
//! |------------------|-----|---------|----------------------------------------------------------------------|
//! | `rst_ni`         | in  | 1       | synchronous reset, active low                                        |
//! | `voq_fill_i`     | in  | N x 16  | fill of each input port's VoQ for this output and VL, in blocks (N <= 64) |
//! | `credit_avail_i` | in  | 12      | credit of this output VL in blocks (`credit_tx` `avail_o`)           |
//! | `stall_i`        | in  | 1       | this cycle the output VL has a packet ready and cannot send it for   |
//! |                  |     |         | lack of credit (the switch's PortXmitWait condition)                 |
//! | `cong_o`         | out | 1       | `over`: over the fill threshold, decided from the registered state   |
//! | `root_o`         | out | 1       | `over && root_ok`: `credit_ok_q` under [`RootRule::Credit`],         |
//! |                  |     |         | `stall_left_q == 0` under [`RootRule::StallWindow`]                  |
//! | `victim_o`       | out | 1       | `over && !root_ok`                                                   |
//! | `mark_state_o`   | out | 1       | `root_o || (victim_o && victim_mask)`: packets here may get FECN     |
//!
//! Outputs reflect the inputs of the previous cycle (one cycle of detection latency), split at the register
//! as the RTL splits it: a step reduces the lanes to the registered state (the RTL's `*_q`, same names:
//! [`CongDetect::lane_over_q`], [`CongDetect::sum_q`], [`CongDetect::n_q`], [`CongDetect::credit_ok_q`],
//! [`CongDetect::stall_left_q`]),
//! and the outputs are decided from that state and the configuration alone ([`CongDetect::outputs`]: the
//! sum and the per-contributor product are compared with the threshold there). With the configuration held
//! constant, as a `CongDetect` holds it, every output is the decision on the previous cycle's inputs.
//! Counters of congested cycles are kept by the switch, not here.
//!
//! Designer choices, named:
//! - [`Config::thr_table`]: Threshold -> fill threshold in 64-byte blocks, a held-constant table (the RTL's
//!   `thr_table_i`), built by one of the named mappings of [`ThresholdMap`]. The default,
//!   [`ThresholdMap::BeyondOnePacket`] ([`beyond_one_packet_thr_table`]), spreads the sixteenths over the
//!   buffer beyond one packet of the port's MTU: `entry t = P + (buf_blocks - P) * (16 - t) / 16` with `P =
//!   min(pkt_blocks, buf_blocks)`, so even Threshold 15 needs more than one MTU packet queued: a VoQ
//!   holding only the packet a port is about to forward is never congested, whatever the buffer (the
//!   hardware's lone flow runs unmarked at Threshold 15, seed 000 figure 7b and seed 004 figure 5; seed 004
//!   section 2: Threshold 15 "must take the VL's credits into account", i.e. it sits just above what one
//!   packet in flight holds). [`ThresholdMap::LinearSixteenths`] ([`linear_thr_table`]) is the plain
//!   `buf_blocks * (16 - t) / 16` (at least 1): Threshold 15 fires at 1/16 of the buffer, which is below one
//!   2 KiB packet in a 512-block buffer. Entry 0 is never used.
//! - [`FillCompare`]: which fill is compared, the three variants of Gran & Reinemo. Congested means strictly
//!   above the threshold (`fill > thr`).
//! - [`RootRule`]: how a congested port-VL is classed root or victim. [`RootRule::Credit`] (the default):
//!   root when `credit_avail_i >= root_min_credits` ([`Config::root_min_credits`], default
//!   [`MAX_PKT_BLOCKS`] = 66 blocks, enough for one maximum packet: an output that cannot send its largest
//!   packet is held up downstream, a victim). [`RootRule::StallWindow`]: a victim when its output stalled
//!   for credit with a packet ready (`stall_i`) in one of the last [`Config::stall_window`] cycles, else a
//!   root. Why both: [`RootRule`].
//! - Exact lazy stepping: a switch clocks a detector only when its inputs change. With inputs held, only
//!   the stall countdown moves, so [`CongDetect::skip_held`] applies `n` such edges at once and
//!   [`CongDetect::peek_held`] gives the outputs `n` edges ahead without stepping.
//! - Inputs beyond the 64th VoQ are ignored (the RTL has 64 lanes; the switch never passes more).

use super::{check_max, mask, ConfigError, MAX_PKT_BLOCKS};
use crate::clocked::Clocked;

/// Most VoQs (input ports) compared.
pub const MAX_INPUTS: usize = 64;
/// Largest `Threshold`.
pub const THRESHOLD_MAX: u8 = 15;
/// Width of `credit_avail_i`, bits.
pub const CREDIT_WIDTH: u32 = 12;
/// Width of `stall_window_i` and `stall_left_q`, bits: windows up to 65,535 cycles (the prototype's
/// windows of 300 to 4,000 cycles, with room for slower links' credit round trips).
pub const STALL_WINDOW_WIDTH: u32 = 16;

/// How a congested port-VL is classed root (its output can send: the congestion is here; its packets may
/// be marked) or victim (held up downstream; marks only under Victim_Mask). The IB specification leaves
/// the rule to the switch designer (seed 000, section 3.2.1).
///
/// Why a second rule: [`RootRule::Credit`] reads the credit a port has at one cycle, and the credit of a
/// busy root port dips each time a packet starts and comes back only with the next flow-control update (a
/// round trip later): on a 2-port switch at Gran's scenario 1 settings the root port's credit dips from 95
/// to 62 blocks for about 200 cycles after each 33-block packet start, below the 66 of one maximum packet,
/// so the root reads as a victim at some start offsets and its uncapped flow is never marked
/// (docs/cc-fidelity.md section 4); a threshold of one MTU packet (34) instead turns RR-CC's victim into a
/// root (`tests/rrcc.rs`). No fixed credit threshold separates the two (seed 002: periodically updated
/// credits confuse root/victim detection). [`RootRule::StallWindow`] asks instead whether the output
/// actually waited for credit with a packet ready, which a root at full rate never does; a prototype of it
/// kept all 13 of Gran's start offsets fair (Jain 0.957 to 0.994), the shipped Gran scenario at 0.977,
/// Cao's at 0.998 and RR-CC's victim at its full rate, for windows of 300, 1,100 and 4,000 cycles. Built
/// here (the switch's stall from its XmitWait condition, Rust and RTL), on the registered-ingress timing:
/// the credit rule fails Gran's fairness at 5 of 14 start offsets, the stall window at none (last-phase
/// Jain 0.957 to 0.998 over windows of 300, 1,100 and 4,000), and RR-CC's runs are the same under both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RootRule {
    /// Root when `credit_avail_i >= root_min_credits` (RTL `root_rule_i` 0).
    #[default]
    Credit,
    /// Victim when `stall_i` was set in one of the last `stall_window` cycles, else root (RTL
    /// `root_rule_i` 1). A window of 0 never counts a stall: every congested port-VL is a root.
    StallWindow,
}

impl RootRule {
    /// The RTL's `root_rule_i`.
    pub fn code(self) -> u8 {
        match self {
            RootRule::Credit => 0,
            RootRule::StallWindow => 1,
        }
    }
}

/// Which fill is compared against the threshold (seed 000, section 3.2.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FillCompare {
    /// Congested when any single VoQ is above the threshold.
    PerVoq,
    /// Congested when the sum of the VoQs is above the threshold: the port-VL's whole queue, whichever
    /// inputs hold it. The default: with the hardware's CC settings it gives the contributors the fair
    /// shares the hardware shows in all three of seed 000's and seed 004's scenarios, with the widest margin
    /// of the three comparisons (docs/cc-fidelity.md).
    #[default]
    SumVoqs,
    /// Congested when the sum is above the threshold divided by the number of contributing inputs (VoQs with
    /// fill > 0). Integer division, rounding down; the RTL compares `n * sum > thr` instead, the same
    /// decision without a divider.
    SumPerContributor,
}

/// How the 4-bit Threshold maps to a fill threshold in blocks (the IB specification says only that 1..=15
/// are uniformly decreasing thresholds, seed 000 section 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ThresholdMap {
    /// Sixteenths of the buffer beyond one maximum packet ([`beyond_one_packet_thr_table`]).
    #[default]
    BeyondOnePacket,
    /// Sixteenths of the whole buffer ([`linear_thr_table`]).
    LinearSixteenths,
}

impl ThresholdMap {
    /// The table of this mapping for a VoQ buffer of `buf_blocks` and packets of at most `pkt_blocks`.
    pub fn table(self, buf_blocks: u16, pkt_blocks: u16) -> [u16; 16] {
        match self {
            ThresholdMap::BeyondOnePacket => beyond_one_packet_thr_table(buf_blocks, pkt_blocks),
            ThresholdMap::LinearSixteenths => linear_thr_table(buf_blocks),
        }
    }
}

/// The default Threshold mapping: entry `t` is `P + (buf_blocks - P) * (16 - t) / 16` with `P =
/// min(pkt_blocks, buf_blocks)`, at least 1 (entry 0 unused, set to `buf_blocks`). Every entry is at least
/// one packet of `pkt_blocks` (the largest the port's MTU allows; or the whole buffer, if smaller), so a fill
/// of one packet never exceeds it.
pub fn beyond_one_packet_thr_table(buf_blocks: u16, pkt_blocks: u16) -> [u16; 16] {
    let b = u32::from(buf_blocks);
    let p = b.min(u32::from(pkt_blocks));
    let mut t = [0u16; 16];
    for (i, e) in t.iter_mut().enumerate() {
        // p + (b - p) * 16 / 16 = b at most: fits 16 bits.
        *e = ((p + (b - p) * (16 - i as u32) / 16) as u16).max(1);
    }
    t
}

/// The plain mapping: entry `t` is `buf_blocks * (16 - t) / 16`, at least 1 (entry 0 unused, set to
/// `buf_blocks`).
pub fn linear_thr_table(buf_blocks: u16) -> [u16; 16] {
    let mut t = [0u16; 16];
    for (i, e) in t.iter_mut().enumerate() {
        *e = ((u32::from(buf_blocks) * (16 - i as u32) / 16) as u16).max(1);
    }
    t
}

/// Default [`Config::stall_window`], cycles: about five credit round trips of a 2-port switch at the IB
/// rates the scenarios use (a round trip is about 200 cycles), so the window spans the gaps between a
/// victim's stalls, whose credit returns one flow-control update at a time. Windows of 300, 1,100 and
/// 4,000 cycles all pass Gran's scenario 1 at 14 start offsets (runs at 1,100 and 4,000 are identical);
/// 1,100 sits inside that range with room on both sides (docs/cc-fidelity.md, section 4).
pub const DEFAULT_STALL_WINDOW: u16 = 1100;

/// `cfg_err_o` bit (RTL only): `compare_i` is 3, a reserved encoding (behaves as [`FillCompare::PerVoq`]).
pub const CFG_ERR_COMPARE_RESERVED: u8 = 1 << 0;
/// Width of `cfg_err_o`, bits.
pub const CFG_ERR_WIDTH: u32 = 1;

/// Static configuration (held-constant ports in the RTL).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// SwitchCongestionSetting Threshold (0..=15; 0 never congested).
    pub threshold: u8,
    /// Threshold -> fill threshold in blocks.
    pub thr_table: [u16; 16],
    /// Which fill is compared.
    pub compare: FillCompare,
    /// Credit (blocks) at or above which a congested port-VL is a root (12 bits; [`RootRule::Credit`]).
    pub root_min_credits: u16,
    /// How root and victim are told apart.
    pub root_rule: RootRule,
    /// Cycles a stall keeps the port-VL a victim ([`RootRule::StallWindow`]; 16 bits, the RTL's
    /// `stall_window_i`).
    pub stall_window: u16,
    /// This port's bit of Victim_Mask: victims mark too.
    pub victim_mask: bool,
}

impl Config {
    /// Defaults for a VoQ buffer of `buf_blocks`: the default mapping ([`ThresholdMap::BeyondOnePacket`],
    /// beyond one packet of the largest MTU),
    /// the summed comparison, root at one maximum packet of credit (the credit rule; the stall window at
    /// its default, [`DEFAULT_STALL_WINDOW`], should the rule be changed), Victim_Mask clear, and the
    /// Mellanox CC manager's Threshold 15.
    pub fn new(buf_blocks: u16) -> Self {
        Config {
            threshold: 15,
            thr_table: ThresholdMap::default().table(buf_blocks, MAX_PKT_BLOCKS.into()),
            compare: FillCompare::SumVoqs,
            root_min_credits: MAX_PKT_BLOCKS.into(),
            root_rule: RootRule::Credit,
            stall_window: DEFAULT_STALL_WINDOW,
            victim_mask: false,
        }
    }

    /// The configuration rules this configuration breaks at the RTL's held ports (`cfg_err_o`): always 0,
    /// as the one rule there ([`CFG_ERR_COMPARE_RESERVED`]) is a value [`FillCompare`] cannot take, and the
    /// settings [`Config::validate`] checks cannot exceed their port widths.
    pub fn cfg_err(&self) -> u8 {
        0
    }

    /// Checks the settings fit their widths.
    pub fn validate(&self) -> Result<(), ConfigError> {
        check_max("threshold", self.threshold.into(), THRESHOLD_MAX.into())?;
        check_max(
            "root_min_credits",
            self.root_min_credits.into(),
            mask(CREDIT_WIDTH).into(),
        )
    }
}

/// Input ports. The fill vector is borrowed from the switch's VoQ counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct In<'a> {
    /// Reset, active low.
    pub rst_ni: bool,
    /// Fill of each input's VoQ for this output and VL, in blocks.
    pub voq_fill_i: &'a [u16],
    /// Credit available on this output VL (12 bits).
    pub credit_avail_i: u16,
    /// The output VL has a packet ready and cannot send it for lack of credit this cycle.
    pub stall_i: bool,
}

/// Output ports (all registered).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Out {
    /// Over the threshold.
    pub cong_o: bool,
    /// Congested with credit: the root of congestion.
    pub root_o: bool,
    /// Congested without credit: a victim.
    pub victim_o: bool,
    /// Packets leaving here may be marked.
    pub mark_state_o: bool,
    /// Configuration rules broken ([`Config::cfg_err`]): always 0 here; the RTL computes it from its held
    /// ports.
    pub cfg_err_o: u8,
}

/// Congestion detection of one (output port, VL).
///
/// The registered state is what the RTL registers (reset value 0 for each, the state of empty queues): the
/// lanes reduced in the input cycle. [`CongDetect::outputs`] decides from it. Of the three reductions, only
/// those the configured comparison reads are kept (the others stay 0): the RTL registers all three because
/// its `compare_i` is a port, while here the configuration is fixed for the block's life (a new
/// configuration is a new block, from reset, as the co-simulation builds it), so a reduction the
/// comparison does not read can never reach an output. A switch steps this block for every (output, VL)
/// whose fills changed, and the two unread folds over up to 64 lanes were a few percent of a fabric's run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CongDetect {
    cfg: Config,
    /// Some valid lane was above the threshold last cycle (the whole [`FillCompare::PerVoq`] decision;
    /// kept under that comparison only).
    pub lane_over_q: bool,
    /// The sum of last cycle's valid lanes (at most 64 x 65,535: 22 bits; kept under the two sum
    /// comparisons).
    pub sum_q: u32,
    /// Last cycle's count of valid lanes with a non-zero fill (0..=64; kept under
    /// [`FillCompare::SumPerContributor`]).
    pub n_q: u8,
    /// Last cycle's `credit_avail_i >= root_min_credits` (the credit rule's compare).
    pub credit_ok_q: bool,
    /// Edges left in the stall window: loaded with `stall_window` on an edge with `stall_i` set, else one
    /// less down to 0 (0: no stall in the last `stall_window` cycles). Kept under either rule, as the RTL
    /// keeps it. Never above `stall_window`, and equal to it (a nonzero window) exactly after an edge with
    /// `stall_i` set, which is how [`CongDetect::skip_held`] knows the held input.
    pub stall_left_q: u16,
}

/// The lanes of one cycle reduced to what the decision needs: the next registered state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Reduced {
    lane_over: bool,
    sum: u32,
    n: u8,
}

impl CongDetect {
    /// Builds the block in its reset state.
    pub fn new(cfg: Config) -> Result<Self, ConfigError> {
        cfg.validate()?;
        Ok(CongDetect {
            cfg,
            lane_over_q: false,
            sum_q: 0,
            n_q: 0,
            credit_ok_q: false,
            stall_left_q: 0,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// The fill threshold the configured Threshold selects.
    #[inline]
    fn thr(&self) -> u32 {
        u32::from(self.cfg.thr_table[usize::from(self.cfg.threshold)])
    }

    /// Whether the congested state is on: decided from the registered state and the configuration.
    #[inline]
    fn over(&self) -> bool {
        self.decide(&Reduced {
            lane_over: self.lane_over_q,
            sum: self.sum_q,
            n: self.n_q,
        })
    }

    /// The outputs shown this cycle (decided from the registers).
    #[inline]
    pub fn outputs(&self) -> Out {
        self.outputs_at(self.stall_left_q)
    }

    /// The outputs with `stall_left` in place of `stall_left_q` (the other registers as they are).
    #[inline]
    fn outputs_at(&self, stall_left: u16) -> Out {
        let over = self.over();
        let root_ok = match self.cfg.root_rule {
            RootRule::Credit => self.credit_ok_q,
            RootRule::StallWindow => stall_left == 0,
        };
        let root = over && root_ok;
        let victim = over && !root_ok;
        Out {
            cong_o: over,
            root_o: root,
            victim_o: victim,
            mark_state_o: root || (victim && self.cfg.victim_mask),
            cfg_err_o: 0,
        }
    }

    /// The input cycle's half: the lanes (at most the first 64) reduced to the next registered state, the
    /// reductions the configured comparison reads only (see [`CongDetect`]).
    #[inline]
    fn reduce(&self, fill: &[u16]) -> Reduced {
        let lanes = &fill[..fill.len().min(MAX_INPUTS)];
        // Whole-vector folds without early exits or data-dependent branches, so they vectorise: the switch
        // evaluates this for every (output, VL) every cycle, and an `any` that stops at a random lane costs a
        // branch miss per call (see `reference_form_agrees` for the plain forms these equal). One fold of
        // all three at once does not vectorise and costs more than two or three separate ones.
        match self.cfg.compare {
            FillCompare::PerVoq => Reduced {
                lane_over: u32::from(lanes.iter().fold(0, |m, &f| m.max(f))) > self.thr(),
                sum: 0,
                n: 0,
            },
            FillCompare::SumVoqs => Reduced {
                lane_over: false,
                sum: lane_sum(lanes),
                n: 0,
            },
            FillCompare::SumPerContributor => Reduced {
                lane_over: false,
                sum: lane_sum(lanes),
                n: lanes.iter().fold(0u8, |n, &f| n + u8::from(f != 0)),
            },
        }
    }

    /// The next cycle's half: the decision on reduced lanes under the configured comparison. The
    /// per-contributor compare `n * sum > thr` is `sum > thr / n` with the integer division rounding down
    /// (`n * sum > thr` exactly when `sum > floor(thr / n)`), as the RTL compares it.
    #[inline]
    fn decide(&self, r: &Reduced) -> bool {
        if self.cfg.threshold == 0 {
            return false;
        }
        let thr = self.thr();
        match self.cfg.compare {
            FillCompare::PerVoq => r.lane_over,
            FillCompare::SumVoqs => r.sum > thr,
            // At most 64 x 64 x 65,535 < 2^28: no wrap.
            FillCompare::SumPerContributor => r.n != 0 && u32::from(r.n) * r.sum > thr,
        }
    }

    /// Whether this fill vector is over the threshold under the configured comparison (the decision the
    /// outputs show the cycle after these fills).
    pub fn over_threshold(&self, fill: &[u16]) -> bool {
        self.decide(&self.reduce(fill))
    }

    /// One rising edge with a borrowed fill vector (the [`Clocked`] impl is for `In<'static>`).
    #[inline]
    pub fn step_with(&mut self, i: &In<'_>) -> Out {
        self.step_reduced(i, None)
    }

    /// [`CongDetect::step_with`] given the sum of the lanes and how many of them are nonzero (at most the
    /// first 64 lanes), kept by the caller as the fills change: the same edge, without a pass over
    /// `voq_fill_i`, which is read only under [`FillCompare::PerVoq`] (its maximum is not kept that way).
    /// A switch clocks the detector of an output-VL at every change of its fills, and the pass summed a
    /// whole row of per-input fills for each.
    #[inline]
    pub fn step_with_sum(&mut self, i: &In<'_>, sum: u32, nonzero: u8) -> Out {
        let r = match self.cfg.compare {
            FillCompare::PerVoq => None,
            FillCompare::SumVoqs => Some(Reduced {
                lane_over: false,
                sum,
                n: 0,
            }),
            FillCompare::SumPerContributor => Some(Reduced {
                lane_over: false,
                sum,
                n: nonzero,
            }),
        };
        debug_assert!(
            r.is_none_or(|r| r == self.reduce(i.voq_fill_i)),
            "a sum or count that is not the lanes'"
        );
        self.step_reduced(i, r)
    }

    /// One rising edge, with the lanes reduced already (`r`) or reduced here.
    #[inline(always)]
    fn step_reduced(&mut self, i: &In<'_>, r: Option<Reduced>) -> Out {
        if !i.rst_ni {
            self.lane_over_q = false;
            self.sum_q = 0;
            self.n_q = 0;
            self.credit_ok_q = false;
            self.stall_left_q = 0;
            return Out::default();
        }
        let out = self.outputs();
        let r = r.unwrap_or_else(|| self.reduce(i.voq_fill_i));
        let credit = i.credit_avail_i & mask(CREDIT_WIDTH) as u16;
        self.lane_over_q = r.lane_over;
        self.sum_q = r.sum;
        self.n_q = r.n;
        self.credit_ok_q = credit >= self.cfg.root_min_credits;
        self.stall_left_q = if i.stall_i {
            self.cfg.stall_window
        } else {
            self.stall_left_q.saturating_sub(1)
        };
        out
    }

    /// Whether the last edge had `stall_i` set (reset and its held inputs aside): `stall_left_q` is the
    /// window exactly then (a nonzero window; without a stall it is at most one less).
    #[inline]
    fn stalled_last(&self) -> bool {
        self.cfg.stall_window != 0 && self.stall_left_q == self.cfg.stall_window
    }

    /// `stall_left_q` after `n` more edges with the last edge's inputs held.
    #[inline]
    fn stall_left_after(&self, n: u64) -> u16 {
        if self.stalled_last() {
            self.stall_left_q
        } else {
            // At most 65,535 left: any larger `n` reaches 0.
            self.stall_left_q
                .saturating_sub(n.min(u64::from(u16::MAX)) as u16)
        }
    }

    /// Applies `n` edges with the inputs of the last edge held (the same fills, credit and `stall_i`; reset
    /// held too, if the last edge was a reset). Exact: the registers reduced from the lanes and the credit
    /// reload the same values, so only the stall countdown moves (a held stall keeps reloading the window).
    #[inline]
    pub fn skip_held(&mut self, n: u64) {
        self.stall_left_q = self.stall_left_after(n);
    }

    /// The outputs [`CongDetect::outputs`] would show after `n` edges with the inputs of the last edge held
    /// ([`CongDetect::skip_held`]), without stepping.
    #[inline]
    pub fn peek_held(&self, n: u64) -> Out {
        self.outputs_at(self.stall_left_after(n))
    }
}

/// Sum of at most 64 16-bit fills (fits 22 bits: no wrap).
#[inline]
fn lane_sum(lanes: &[u16]) -> u32 {
    lanes.iter().fold(0u32, |s, &f| s + u32::from(f))
}

impl Clocked for CongDetect {
    type In = In<'static>;
    type Out = Out;

    fn step(&mut self, i: &In<'static>) -> Out {
        self.step_with(i)
    }

    /// Empty VoQs.
    fn idle_input(&self) -> In<'static> {
        In {
            rst_ni: true,
            voq_fill_i: &[],
            credit_avail_i: 0,
            stall_i: false,
        }
    }

    fn next_event(&self) -> Option<u64> {
        // With empty VoQs (and no credit, no stall) the state becomes that of an idle edge after one edge
        // and then holds, but for the stall countdown, which moves every edge until 0.
        if self.lane_over_q
            || self.sum_q != 0
            || self.n_q != 0
            || self.credit_ok_q != (self.cfg.root_min_credits == 0)
            || self.stall_left_q != 0
        {
            Some(1)
        } else {
            None
        }
    }

    fn skip(&mut self, n: u64) {
        if n > 0 {
            let idle = self.idle_input();
            self.step_with(&idle);
            // The first idle edge had no stall: the rest only count down.
            self.skip_held(n - 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn det(compare: FillCompare) -> CongDetect {
        // Threshold 1 of a 107-block buffer, linear sixteenths: 107 * 15 / 16 = 100 blocks.
        let mut cfg = Config::new(107);
        cfg.thr_table = linear_thr_table(107);
        cfg.threshold = 1;
        cfg.compare = compare;
        cfg.root_min_credits = 1;
        CongDetect::new(cfg).unwrap()
    }

    fn at(fill: &[u16], credit: u16) -> In<'_> {
        In {
            rst_ni: true,
            voq_fill_i: fill,
            credit_avail_i: credit,
            stall_i: false,
        }
    }

    #[test]
    fn default_threshold_table() {
        let t = linear_thr_table(256);
        assert_eq!(t[0], 256);
        assert_eq!(t[1], 240);
        assert_eq!(t[8], 128);
        assert_eq!(t[15], 16);
        assert_eq!(linear_thr_table(8)[15], 1, "at least one block");
        assert_eq!(det(FillCompare::PerVoq).cfg.thr_table[1], 100);
        // Beyond one packet: 66 + (512 - 66) * (16 - t) / 16.
        let b = beyond_one_packet_thr_table(512, 66);
        assert_eq!((b[0], b[1], b[8], b[15]), (512, 484, 289, 93));
        // A 2 KiB MTU's packet (34 blocks) in a 128-block buffer: 34 + 94 / 16 = 39 at Threshold 15.
        assert_eq!(beyond_one_packet_thr_table(128, 34)[15], 39);
        assert_eq!(
            beyond_one_packet_thr_table(40, 66),
            [40; 16],
            "a buffer below one packet"
        );
        assert_eq!(beyond_one_packet_thr_table(0, 66)[15], 1);
        assert_eq!(Config::new(512).thr_table, b, "the default mapping");
        assert_eq!(ThresholdMap::LinearSixteenths.table(256, 66), t);
    }

    /// Three inputs fill up at different rates; the onset cycle differs for each comparison (threshold 100).
    #[test]
    fn onsets_differ_between_fill_comparisons() {
        // cycle: fills            PerVoq(max>100)  Sum(>100)  PerContributor(sum > 100/n)
        // 0: [10, 0, 0]           no               no         10 > 100  no
        // 1: [30, 20, 0]          no               no         50 > 50   no
        // 2: [40, 30, 20]         no               no         90 > 33   yes
        // 3: [60, 40, 20]         no               120 yes    yes
        // 4: [101, 40, 20]        yes              yes        yes
        let trace: [[u16; 3]; 5] = [
            [10, 0, 0],
            [30, 20, 0],
            [40, 30, 20],
            [60, 40, 20],
            [101, 40, 20],
        ];
        let onset = |c| {
            let mut d = det(c);
            // The outputs of cycle k+1 reflect the fills of cycle k.
            let mut seen = Vec::new();
            for f in &trace {
                d.step_with(&at(f, 500));
                seen.push(d.outputs().cong_o);
            }
            seen.iter().position(|&b| b)
        };
        assert_eq!(onset(FillCompare::PerVoq), Some(4));
        assert_eq!(onset(FillCompare::SumVoqs), Some(3));
        assert_eq!(onset(FillCompare::SumPerContributor), Some(2));
    }

    #[test]
    fn registered_one_cycle_latency_and_root_victim() {
        let mut cfg = Config::new(107);
        cfg.thr_table = linear_thr_table(107);
        cfg.threshold = 1;
        let mut d = CongDetect::new(cfg).unwrap();
        let o = d.step_with(&at(&[101], 66));
        assert_eq!(o, Out::default(), "the fill shows one cycle later");
        let o = d.step_with(&at(&[101], 65));
        assert_eq!(
            o,
            Out {
                cong_o: true,
                root_o: true,
                victim_o: false,
                mark_state_o: true,
                cfg_err_o: 0
            }
        );
        // 65 credits < 66: a victim, not marking without Victim_Mask.
        let o = d.step_with(&at(&[0], 65));
        assert_eq!(
            o,
            Out {
                cong_o: true,
                root_o: false,
                victim_o: true,
                mark_state_o: false,
                cfg_err_o: 0
            }
        );
        assert_eq!(d.step_with(&at(&[0], 65)), Out::default());
        // With Victim_Mask the victim marks.
        cfg.victim_mask = true;
        let mut d = CongDetect::new(cfg).unwrap();
        d.step_with(&at(&[200], 0));
        let o = d.outputs();
        assert!(o.victim_o && o.mark_state_o && !o.root_o);
        // Credit is masked to 12 bits: 0x1000 reads as 0.
        let mut d = CongDetect::new(Config {
            root_min_credits: 1,
            ..cfg
        })
        .unwrap();
        d.step_with(&at(&[200], 0x1000));
        assert!(d.outputs().victim_o);
    }

    #[test]
    fn threshold_zero_never_congested_and_bad_threshold() {
        let mut cfg = Config::new(64);
        cfg.threshold = 0;
        cfg.thr_table = [0; 16];
        let mut d = CongDetect::new(cfg).unwrap();
        d.step_with(&at(&[u16::MAX; 64], 4095));
        assert!(!d.outputs().cong_o);
        cfg.threshold = 16;
        assert_eq!(
            CongDetect::new(cfg).unwrap_err().to_string(),
            "threshold (16) is above the maximum (15)"
        );
    }

    #[test]
    fn reset_and_idle() {
        let mut d = det(FillCompare::SumVoqs);
        d.step_with(&at(&[200], 5));
        assert_eq!(d.next_event(), Some(1));
        let o = d.step_with(&In {
            rst_ni: false,
            ..at(&[200], 5)
        });
        assert_eq!(o, Out::default());
        assert!(!d.outputs().cong_o);
        assert_eq!(d.next_event(), None);
        d.step_with(&at(&[200], 5));
        d.skip(3);
        assert!(!d.outputs().cong_o);
        // More than 64 lanes: the 65th is ignored.
        let mut fill = [0u16; 65];
        fill[64] = 500;
        let mut d = det(FillCompare::PerVoq);
        d.step_with(&at(&fill, 5));
        assert!(!d.outputs().cong_o);
    }

    /// The registered state is the lanes reduced (as the RTL registers them; each comparison keeps what it
    /// reads, the rest stays 0), and the decision is taken from it in the next cycle.
    #[test]
    fn registered_state_is_the_reduced_lanes() {
        let lanes = [0, 30, 101, 5];
        let mut d = det(FillCompare::PerVoq);
        d.step_with(&at(&lanes, 0));
        assert_eq!((d.lane_over_q, d.sum_q, d.n_q), (true, 0, 0), "101 > 100");
        let mut d = det(FillCompare::SumVoqs);
        d.step_with(&at(&lanes, 0));
        assert_eq!((d.lane_over_q, d.sum_q, d.n_q), (false, 136, 0));
        let mut d = det(FillCompare::SumPerContributor);
        d.step_with(&at(&lanes, 0));
        assert!(!d.lane_over_q, "PerVoq's decision is not kept here");
        assert_eq!((d.sum_q, d.n_q, d.credit_ok_q), (136, 3, false));
        // 3 * 136 > 100: congested, without credit a victim.
        let o = d.outputs();
        assert!(o.cong_o && o.victim_o && !o.root_o);
        d.step_with(&at(&[0, 0, 0, 0], 1));
        assert_eq!(
            (d.lane_over_q, d.sum_q, d.n_q, d.credit_ok_q),
            (false, 0, 0, true)
        );
        assert_eq!(d.outputs(), Out::default());
    }

    /// The stall window: a stall makes a congested port-VL a victim from the next cycle for `stall_window`
    /// cycles, whatever its credit; the credit rule ignores stalls.
    #[test]
    fn stall_window_classes_root_and_victim() {
        let mut cfg = Config::new(107);
        cfg.thr_table = linear_thr_table(107);
        cfg.threshold = 1;
        cfg.root_rule = RootRule::StallWindow;
        cfg.stall_window = 3;
        let mut d = CongDetect::new(cfg).unwrap();
        let stall = |s| In {
            stall_i: s,
            ..at(&[101], 0)
        };
        d.step_with(&stall(false));
        assert!(
            d.outputs().root_o,
            "no stall, no credit: a root under this rule"
        );
        d.step_with(&stall(true));
        assert_eq!(d.stall_left_q, 3);
        let mut seen = Vec::new();
        for _ in 0..5 {
            seen.push(d.outputs().victim_o);
            d.step_with(&stall(false));
        }
        assert_eq!(
            seen,
            [true, true, true, false, false],
            "3 cycles after the stall"
        );
        assert!(d.outputs().root_o && d.outputs().mark_state_o);
        // The credit rule keeps the countdown (as the RTL does) but does not read it.
        cfg.root_rule = RootRule::Credit;
        let mut d = CongDetect::new(cfg).unwrap();
        d.step_with(&In {
            stall_i: true,
            ..at(&[101], 4095)
        });
        assert_eq!(d.stall_left_q, 3);
        assert!(d.outputs().root_o);
        // A window of 0: never a victim.
        cfg.root_rule = RootRule::StallWindow;
        cfg.stall_window = 0;
        let mut d = CongDetect::new(cfg).unwrap();
        d.step_with(&stall(true));
        assert!(d.outputs().root_o);
        assert_eq!(RootRule::default(), RootRule::Credit);
        assert_eq!(
            (RootRule::Credit.code(), RootRule::StallWindow.code()),
            (0, 1)
        );
    }

    /// Idle edges count the window down: `next_event` stays `Some` until it is out, and `skip` equals
    /// stepping idle edges one by one.
    #[test]
    fn idle_skip_counts_the_window_down() {
        let mut cfg = Config::new(107);
        cfg.root_rule = RootRule::StallWindow;
        cfg.stall_window = 10;
        let mut d = CongDetect::new(cfg).unwrap();
        d.step_with(&In {
            stall_i: true,
            ..at(&[200], 0)
        });
        let mut e = d.clone();
        let idle = d.idle_input();
        for _ in 0..7 {
            e.step_with(&idle);
        }
        d.skip(7);
        assert_eq!(d, e);
        assert_eq!(d.stall_left_q, 3);
        assert_eq!(d.next_event(), Some(1));
        d.skip(100);
        assert_eq!(d.stall_left_q, 0);
        assert_eq!(d.next_event(), None);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2_000))]

        /// `skip_held(n)` is `n` edges with the last inputs held, and `peek_held(n)` shows the outputs after
        /// them, for any sequence of inputs and resets, under both rules and any window.
        #[test]
        fn skip_and_peek_held_equal_stepping(
            steps in proptest::collection::vec(
                (any::<bool>(), 0u16..4, 0u16..300, prop_oneof![3 => Just(false), 1 => Just(true)], 0u64..40),
                1..40,
            ),
            window in prop_oneof![Just(0u16), 1u16..50, Just(u16::MAX)],
            stall_rule in any::<bool>(),
            root_min in 0u16..200,
        ) {
            let mut cfg = Config::new(107);
            cfg.thr_table = linear_thr_table(107);
            cfg.threshold = 1;
            cfg.root_min_credits = root_min;
            cfg.root_rule = if stall_rule { RootRule::StallWindow } else { RootRule::Credit };
            cfg.stall_window = window;
            let mut lazy = CongDetect::new(cfg).unwrap();
            let mut eager = lazy.clone();
            for (rst, fill, credit, stall, held) in steps {
                let fill = [fill * 60];
                let i = In {
                    rst_ni: !(rst && fill[0] == 0 && credit < 20),
                    voq_fill_i: &fill,
                    credit_avail_i: credit,
                    stall_i: stall,
                };
                prop_assert_eq!(lazy.step_with(&i), eager.step_with(&i));
                for n in 0..held {
                    prop_assert_eq!(lazy.peek_held(n), eager.outputs(), "peek {} of {}", n, held);
                    eager.step_with(&i);
                }
                prop_assert_eq!(lazy.peek_held(held), eager.outputs());
                lazy.skip_held(held);
                prop_assert_eq!(&lazy, &eager);
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(10_000))]

        /// The three comparisons are ordered: per-VoQ congestion implies sum congestion implies per-contributor
        /// congestion (max <= sum, and thr / n <= thr).
        #[test]
        fn comparisons_are_nested(fill in proptest::collection::vec(0u16..300, 0..=64), thr in 1u8..=15) {
            let mk = |c| {
                let mut cfg = Config::new(300);
                cfg.threshold = thr;
                cfg.compare = c;
                CongDetect::new(cfg).unwrap()
            };
            let p = mk(FillCompare::PerVoq).over_threshold(&fill);
            let s = mk(FillCompare::SumVoqs).over_threshold(&fill);
            let c = mk(FillCompare::SumPerContributor).over_threshold(&fill);
            prop_assert!(!p || s);
            prop_assert!(!s || c);
            let t = u32::from(beyond_one_packet_thr_table(300, 66)[usize::from(thr)]);
            prop_assert_eq!(p, fill.iter().any(|&f| u32::from(f) > t));
        }

        /// A fill of at most one maximum packet is never over any Threshold of the default mapping, for any
        /// buffer and any comparison: a VoQ holding only the packet about to be forwarded is not congested.
        #[test]
        fn one_packet_is_never_congested(
            buf in 0u16..=u16::MAX,
            mtu_pkt in 1u16..=MAX_PKT_BLOCKS.into(),
            pkt in 0u16..=MAX_PKT_BLOCKS.into(),
            thr in 1u8..=15,
        ) {
            // A packet of at most the MTU's blocks, in a buffer that holds it.
            let pkt = pkt.min(mtu_pkt).min(buf);
            for c in [FillCompare::PerVoq, FillCompare::SumVoqs, FillCompare::SumPerContributor] {
                let mut cfg = Config::new(buf);
                cfg.thr_table = ThresholdMap::BeyondOnePacket.table(buf, mtu_pkt);
                cfg.threshold = thr;
                cfg.compare = c;
                prop_assert!(!CongDetect::new(cfg).unwrap().over_threshold(&[pkt]), "{:?}", c);
            }
            let t = beyond_one_packet_thr_table(buf, mtu_pkt);
            for w in t[1..].windows(2) {
                prop_assert!(w[0] >= w[1], "uniformly decreasing: {:?}", t);
            }
        }

        /// The reset state is the state of empty queues: not congested under any configuration, a
        /// threshold entry of 0 included, so the outputs are 0 after reset without gating.
        #[test]
        fn reset_state_is_not_congested(
            table in proptest::array::uniform16(prop_oneof![Just(0u16), any::<u16>()]),
            thr in 0u8..=15,
            c in 0usize..3,
            root_min_credits in 0u16..=4095,
            victim_mask in any::<bool>(),
        ) {
            let compare = [FillCompare::PerVoq, FillCompare::SumVoqs, FillCompare::SumPerContributor][c];
            let d = CongDetect::new(Config {
                threshold: thr,
                thr_table: table,
                compare,
                root_min_credits,
                root_rule: RootRule::StallWindow,
                stall_window: 5,
                victim_mask,
            })
            .unwrap();
            prop_assert_eq!(d.outputs(), Out::default());
            prop_assert!(!d.over_threshold(&[]));
            prop_assert!(!d.over_threshold(&[0; 64]));
        }

        /// The branch-free folds of `over_threshold` equal the plain forms (any lane over; sum over; sum over
        /// the threshold divided by the nonzero lanes), on any 16-bit fills, more than 64 lanes included.
        #[test]
        fn reference_form_agrees(
            fill in proptest::collection::vec(prop_oneof![0u16..4, 0u16..300, any::<u16>()], 0..=70),
            thr in 1u8..=15,
            table_top in 1u16..=u16::MAX,
        ) {
            let lanes = &fill[..fill.len().min(MAX_INPUTS)];
            let t = u32::from(beyond_one_packet_thr_table(table_top, 66)[usize::from(thr)]);
            let sum: u32 = lanes.iter().map(|&f| u32::from(f)).sum();
            let n = lanes.iter().filter(|&&f| f != 0).count() as u32;
            for (c, want) in [
                (FillCompare::PerVoq, lanes.iter().any(|&f| u32::from(f) > t)),
                (FillCompare::SumVoqs, sum > t),
                (FillCompare::SumPerContributor, n != 0 && sum > t / n),
            ] {
                let mut cfg = Config::new(table_top);
                cfg.threshold = thr;
                cfg.compare = c;
                prop_assert_eq!(CongDetect::new(cfg).unwrap().over_threshold(&fill), want, "{:?}", c);
            }
        }
    }
}
