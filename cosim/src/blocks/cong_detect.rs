//! `cong_detect` under co-simulation: stimulus, ports, configuration, RTL adapter.
//!
//! The Rust block borrows its fill vector (`In<'a>` holds a slice), which a stimulus iterator cannot hand
//! out; the RTL instead takes 64 lanes and a count. So the co-simulation's input is [`CongIn`], the RTL's
//! ports as they are (64 lanes, `voq_cnt_i`, credit), and its model side is [`CongDetectTwin`], which calls
//! the unchanged `CongDetect::step_with` on the first `min(voq_cnt_i, 64)` lanes, exactly the slice the RTL's
//! count selects.
//!
//! The stimulus regenerates the fill vector in one cycle of 8 in one of several patterns (mostly small fills;
//! one lane near the threshold; the sum, or the sum over contributors, near the threshold; any 16-bit fills,
//! so sums must not wrap; sparse fills) and otherwise nudges one or two lanes by one block, so fills walk
//! across the exact threshold. The lane count is mostly fixed per phase, sometimes any value including
//! above 64; lanes at or above the count hold junk the RTL must ignore. Credit sits near
//! `root_min_credits` half the time, else any 16-bit value (the RTL sees 12 bits). `stall_i` comes in runs
//! and gaps of about 32 cycles (it toggles in one cycle of 32), so stall windows of up to some 60 cycles
//! run out between stalls and longer ones are reloaded before they do. Configurations: random or linear
//! threshold tables, every Threshold 0..15, every comparison, both root rules with windows of 0, 1..64 or
//! any 16-bit length, both Victim_Mask values. Rare resets of 1-3 cycles.

use super::{held, held_wide, Block};
use crate::check::CosimError;
use crate::cover::{bin, count, event, Cover, Hits, Point};
use crate::ports::{PortValue, Ports, Wide};
use crate::rng::Rng;
use rtl_model::blocks::cong_detect::{
    linear_thr_table, Config, CongDetect, FillCompare, In, Out, RootRule, MAX_INPUTS,
};
use rtl_model::clocked::Clocked;

/// Bits of the RTL's `voq_cnt_i` (holds 0..=64; values above 64 mean 64).
pub const CNT_WIDTH: u32 = 7;

/// The RTL's encoding of `compare_i` (hdl/cong_detect.sv); 3 is reserved and behaves as `PerVoq`.
pub fn compare_code(c: FillCompare) -> u8 {
    match c {
        FillCompare::PerVoq => 0,
        FillCompare::SumVoqs => 1,
        FillCompare::SumPerContributor => 2,
    }
}

/// Input ports of the RTL `cong_detect`, one cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CongIn {
    /// Reset, active low.
    pub rst_ni: bool,
    /// Fill of input k's VoQ at lane k (all 64 lanes; those at or above the count are ignored).
    pub voq_fill_i: [u16; MAX_INPUTS],
    /// Lanes valid (7 bits; above 64 means 64): the Rust slice length.
    pub voq_cnt_i: u8,
    /// Credit of this output VL (12 bits on the RTL port).
    pub credit_avail_i: u16,
    /// The output VL stalled for credit this cycle.
    pub stall_i: bool,
}

impl Default for CongIn {
    fn default() -> Self {
        CongIn {
            rst_ni: false,
            voq_fill_i: [0; MAX_INPUTS],
            voq_cnt_i: 0,
            credit_avail_i: 0,
            stall_i: false,
        }
    }
}

impl Ports for CongIn {
    const NAMES: &'static [&'static str] = &[
        "rst_ni",
        "voq_fill_i",
        "voq_cnt_i",
        "credit_avail_i",
        "stall_i",
    ];

    fn get(&self, i: usize) -> Wide {
        match i {
            0 => self.rst_ni.into(),
            1 => {
                let mut w = Wide::ZERO;
                for (k, &f) in (0u32..).zip(&self.voq_fill_i) {
                    w.set_field(16 * k, 16, f.into());
                }
                w
            }
            2 => self.voq_cnt_i.into(),
            3 => self.credit_avail_i.into(),
            4 => self.stall_i.into(),
            _ => Wide::ZERO,
        }
    }

    fn from_values(v: &[Wide]) -> Self {
        let at = |k: usize| v.get(k).copied().unwrap_or_default();
        let fills = at(1);
        let mut voq_fill_i = [0u16; MAX_INPUTS];
        for (k, f) in (0u32..).zip(voq_fill_i.iter_mut()) {
            *f = fills.field(16 * k, 16) as u16;
        }
        CongIn {
            rst_ni: bool::from_wide(&at(0)),
            voq_fill_i,
            voq_cnt_i: u8::from_wide(&at(2)),
            credit_avail_i: u16::from_wide(&at(3)),
            stall_i: bool::from_wide(&at(4)),
        }
    }
}

crate::impl_ports!(Out {
    cong_o,
    root_o,
    victim_o,
    mark_state_o,
    cfg_err_o
});

/// The Rust `CongDetect` with the RTL's lane-and-count input: the model side of the co-simulation.
#[derive(Debug, Clone)]
pub struct CongDetectTwin(pub CongDetect);

impl Clocked for CongDetectTwin {
    type In = CongIn;
    type Out = Out;

    #[inline]
    fn step(&mut self, i: &CongIn) -> Out {
        let n = usize::from(i.voq_cnt_i & 0x7f).min(MAX_INPUTS);
        self.0.step_with(&In {
            rst_ni: i.rst_ni,
            voq_fill_i: &i.voq_fill_i[..n],
            credit_avail_i: i.credit_avail_i,
            stall_i: i.stall_i,
        })
    }

    fn idle_input(&self) -> CongIn {
        CongIn {
            rst_ni: true,
            ..CongIn::default()
        }
    }
}

/// `cong_detect` as a co-simulation [`Block`].
#[derive(Debug, Clone, Copy)]
pub struct CongDetectBlock;

/// Seeded random stimulus for `cong_detect` (see the module docs).
#[derive(Debug, Clone)]
pub struct CongDetectStim {
    rng: Rng,
    cfg: Config,
    cur: CongIn,
    width: u8,
    phase_left: u32,
    rst_left: u32,
}

/// `v + d` clamped to 16 bits.
fn near(v: u32, d: i64) -> u16 {
    (i64::from(v) + d).clamp(0, 0xffff) as u16
}

/// Fills `f` four lanes per random draw: lane `k` gets `pick(16 random bits)`. Drawing per lane (a
/// multiply-and-shift `below` each) made regeneration cost more than the model's eval.
#[inline]
fn fill_lanes(r: &mut Rng, f: &mut [u16; MAX_INPUTS], mut pick: impl FnMut(u64) -> u16) {
    for four in f.chunks_exact_mut(4) {
        let w = r.next_u64();
        for (k, x) in (0u32..).zip(four.iter_mut()) {
            *x = pick((w >> (16 * k)) & 0xffff);
        }
    }
}

/// Uniform in `0..n` from 16 random bits `c` (multiply-and-shift; `n` up to 2^32).
#[inline]
fn below16(c: u64, n: u64) -> u64 {
    (c * n) >> 16
}

impl CongDetectStim {
    /// A new fill vector in one of the patterns of the module docs.
    fn regenerate(&mut self) {
        let r = &mut self.rng;
        let thr = u32::from(self.cfg.thr_table[usize::from(self.cfg.threshold)]);
        let lanes = usize::from(self.cur.voq_cnt_i).min(MAX_INPUTS);
        let f = &mut self.cur.voq_fill_i;
        let d = r.range(0, 2) as i64 - 1;
        match r.below(6) {
            0 => {
                let top = u64::from(thr) * 2 / (lanes as u64).max(1) + 2;
                fill_lanes(r, f, |c| below16(c, top) as u16);
            }
            1 => {
                let top = u64::from(thr).max(1);
                fill_lanes(r, f, |c| below16(c, top) as u16);
                if lanes > 0 {
                    f[r.below(lanes as u64) as usize] = near(thr, d);
                }
            }
            2 | 3 => {
                let per_contrib = r.pct(50);
                // 0 with probability 5/16 (about a third), else 1..=4.
                fill_lanes(r, f, |c| {
                    if c & 15 < 5 {
                        0
                    } else {
                        1 + (c >> 4 & 3) as u16
                    }
                });
                if lanes > 0 {
                    let k = r.below(lanes as u64) as usize;
                    f[k] = 1;
                    let n = f[..lanes].iter().filter(|&&x| x != 0).count() as u32;
                    let target = if per_contrib { thr / n } else { thr };
                    let rest = f[..lanes].iter().map(|&x| u32::from(x)).sum::<u32>() - 1;
                    // Lane k stays nonzero so the contributor count, and with it the target, stays put.
                    f[k] = near(target.saturating_sub(rest), d).max(1);
                }
            }
            4 => fill_lanes(r, f, |c| c as u16),
            _ => fill_lanes(r, f, |c| if c & 8 != 0 { 0 } else { (c & 7) as u16 }),
        }
    }
}

impl Iterator for CongDetectStim {
    type Item = CongIn;

    fn next(&mut self) -> Option<CongIn> {
        // One draw decides the cycle (bit fields of `ev`), so the stimulus costs a small part of the model's
        // eval: reset 0..15, regeneration 15..18, lane count 18..23, nudges 23..38, credit 38..58, stall
        // 58..63.
        let ev = self.rng.next_u64();
        let field = |at: u32, bits: u32| (ev >> at) & ((1 << bits) - 1);
        if self.rst_left == 0 && field(0, 15) == 0 {
            self.rst_left = 1 + (ev >> 62) as u32 % 3;
        }
        if self.phase_left == 0 {
            self.width = self.rng.range(0, MAX_INPUTS as u64) as u8;
            self.phase_left = self.rng.range(1, 2000) as u32;
        }
        self.phase_left -= 1;
        // 1 in 32 any count 0..=64, 1 in 32 a count above 64, else the phase's.
        self.cur.voq_cnt_i = match field(18, 5) {
            0 => self.rng.range(0, MAX_INPUTS as u64) as u8,
            1 => self.rng.range(MAX_INPUTS as u64 + 1, 127) as u8,
            _ => self.width,
        };
        if field(15, 3) == 0 {
            self.regenerate();
        } else {
            // One or two lanes up or down by one block.
            for at in [23u32, 30] {
                let x = &mut self.cur.voq_fill_i[field(at, 6) as usize];
                *x = if field(at + 6, 1) != 0 {
                    x.wrapping_add(1)
                } else {
                    x.wrapping_sub(1)
                };
                if field(37, 1) == 0 {
                    break;
                }
            }
        }
        self.cur.credit_avail_i = if field(38, 1) == 0 {
            near(
                self.cfg.root_min_credits.into(),
                (field(39, 3) % 5) as i64 - 2,
            )
        } else {
            field(42, 16) as u16
        };
        if field(58, 5) == 0 {
            self.cur.stall_i = !self.cur.stall_i;
        }
        self.cur.rst_ni = self.rst_left == 0;
        self.rst_left = self.rst_left.saturating_sub(1);
        Some(self.cur)
    }
}

impl Block for CongDetectBlock {
    const NAME: &'static str = "cong_detect";
    type Config = Config;
    type In = CongIn;
    type Out = Out;
    type Model = CongDetectTwin;
    type Stim = CongDetectStim;
    type Cover = CongDetectCover;

    fn model(cfg: &Config) -> Result<CongDetectTwin, CosimError> {
        CongDetect::new(*cfg)
            .map(CongDetectTwin)
            .map_err(|e| CosimError::Config {
                block: Self::NAME,
                msg: e.to_string(),
            })
    }

    const CORNERS: u32 = 16;

    /// Corners: every Threshold (0, 1 and 15 among them), each comparison, Root_Min_Credits 0 (never a
    /// victim) and 4,095 (mostly victims), Victim_Mask clear where victims happen.
    fn configure(seed: u64, corner: Option<u32>) -> (Config, CongDetectStim) {
        let mut r = Rng::new(seed ^ 0xc0_46de);
        let mut thr_table = linear_thr_table(r.range(1, 0xffff) as u16);
        if r.pct(50) {
            for e in thr_table.iter_mut() {
                *e = match r.below(3) {
                    0 => r.below(8) as u16,
                    1 => r.below(300) as u16,
                    _ => r.next_u64() as u16,
                };
            }
        }
        let mut cfg = Config {
            // Threshold 0 (never congested) in about one configuration of 16, like the others.
            threshold: r.below(16) as u8,
            thr_table,
            compare: [
                FillCompare::PerVoq,
                FillCompare::SumVoqs,
                FillCompare::SumPerContributor,
            ][r.below(3) as usize],
            root_min_credits: if r.pct(50) {
                66
            } else {
                r.below(0x1000) as u16
            },
            root_rule: RootRule::Credit,
            stall_window: 0,
            victim_mask: r.pct(50),
        };
        // Drawn last, so the settings above are those the same seed drew before the rule existed.
        if r.pct(50) {
            cfg.root_rule = RootRule::StallWindow;
        }
        cfg.stall_window = match r.below(8) {
            0 => 0,
            1 => r.next_u64() as u16,
            _ => r.range(1, 64) as u16,
        };
        // Corner c has Threshold c (each Threshold in turn), the comparisons in turn, Victim_Mask clear in
        // every other (victims that must not mark), Root_Min_Credits 0 (never a victim) in one and 4,095
        // (mostly victims) in two, the stall window rule in the other odd ones (windows of 1 to 41 cycles).
        if let Some(c) = corner {
            cfg.threshold = c as u8;
            cfg.compare = [
                FillCompare::PerVoq,
                FillCompare::SumVoqs,
                FillCompare::SumPerContributor,
            ][c as usize % 3];
            cfg.victim_mask = c % 2 == 0;
            match c {
                6 => cfg.root_min_credits = 0,
                7 | 9 => cfg.root_min_credits = 0xfff,
                _ => {}
            }
            cfg.root_rule = RootRule::Credit;
            if c % 2 == 1 && c != 7 && c != 9 {
                cfg.root_rule = RootRule::StallWindow;
                cfg.stall_window = (1 + 5 * (c / 2)) as u16;
            }
        }
        let stim = CongDetectStim {
            rng: Rng::new(seed),
            cfg,
            cur: CongIn::default(),
            width: 0,
            phase_left: 0,
            rst_left: 0,
        };
        (cfg, stim)
    }

    fn config_ports(cfg: &Config) -> Vec<(&'static str, Wide)> {
        let mut table = Wide::ZERO;
        for (t, &e) in (0u32..).zip(&cfg.thr_table) {
            table.set_field(16 * t, 16, e.into());
        }
        vec![
            ("threshold_i", cfg.threshold.into()),
            ("thr_table_i", table),
            ("compare_i", compare_code(cfg.compare).into()),
            ("root_min_credits_i", cfg.root_min_credits.into()),
            ("root_rule_i", cfg.root_rule.code().into()),
            ("stall_window_i", cfg.stall_window.into()),
            ("victim_mask_i", cfg.victim_mask.into()),
        ]
    }

    /// `compare_i` 3 (reserved) is refused: the Rust block has no fourth comparison to be its twin.
    fn config_from_ports(v: &[(String, Wide)]) -> Result<Config, String> {
        let table = held_wide(v, "thr_table_i")?;
        let mut thr_table = [0u16; 16];
        for (t, e) in (0u32..).zip(thr_table.iter_mut()) {
            *e = table.field(16 * t, 16) as u16;
        }
        let compare = match held(v, "compare_i")? {
            0 => FillCompare::PerVoq,
            1 => FillCompare::SumVoqs,
            2 => FillCompare::SumPerContributor,
            c => return Err(format!("compare_i {c} is reserved (0, 1 or 2)")),
        };
        let cfg = Config {
            threshold: held(v, "threshold_i")? as u8,
            thr_table,
            compare,
            root_min_credits: held(v, "root_min_credits_i")? as u16,
            root_rule: if held(v, "root_rule_i")? != 0 {
                RootRule::StallWindow
            } else {
                RootRule::Credit
            },
            stall_window: held(v, "stall_window_i")? as u16,
            victim_mask: held(v, "victim_mask_i")? != 0,
        };
        cfg.validate().map_err(|e| e.to_string())?;
        Ok(cfg)
    }

    #[cfg(feature = "verilator")]
    type Rtl = rtl::CongDetectRtl;

    #[cfg(feature = "verilator")]
    fn rtl(cfg: &Config, bug: Option<&str>) -> Result<rtl::CongDetectRtl, CosimError> {
        rtl::CongDetectRtl::new(cfg, bug)
    }
}

/// `cong_detect`'s cover points.
#[derive(Debug, Clone, Copy)]
pub struct CongDetectCover;

/// What `cong_detect`'s sampler keeps.
#[derive(Debug, Clone)]
pub struct CongDetectCovState {
    /// The block with every threshold one lower: its `fill > thr - 1` is `fill >= thr`.
    lower: CongDetect,
    /// Whether the Threshold's table entry is 0 (then `fill >= 0` always holds).
    entry_zero: bool,
    /// The comparison is the sum per contributor (not a table shift), and its threshold entry.
    per_contributor: bool,
    thr: u32,
    threshold: u8,
    victim_mask: bool,
    last_cong: bool,
    /// The stall window rule with a nonzero window.
    stall_rule: bool,
    /// The model's `stall_left_q` after the last sampled edge: the value this cycle's outputs read.
    last_left: u16,
}

impl Cover for CongDetectCover {
    const POINTS: &'static [Point] = &[
        bin("threshold_0", "Threshold 0: never congested"),
        bin("per_voq", "compare each VoQ's fill"),
        bin("sum_voqs", "compare the sum of the fills"),
        bin(
            "sum_per_contributor",
            "compare the sum per contributing input",
        ),
        bin("victim_mask_set", "Victim_Mask set"),
        bin("victim_mask_clear", "Victim_Mask clear"),
        bin("root_min_zero", "Root_Min_Credits 0"),
        bin("root_min_max", "Root_Min_Credits 4,095"),
        event("congested", "over the fill threshold"),
        event(
            "cong_edge",
            "congestion begins or ends (a fill crosses the threshold)",
        ),
        event("root", "congested with credit: root"),
        event("victim_marks", "a victim with Victim_Mask set marks"),
        event(
            "victim_unmasked",
            "a victim with Victim_Mask clear: must not mark",
        ),
        event("mark_threshold_1", "a marking decision at Threshold 1"),
        event("mark_threshold_2", "a marking decision at Threshold 2"),
        event("mark_threshold_3", "a marking decision at Threshold 3"),
        event("mark_threshold_4", "a marking decision at Threshold 4"),
        event("mark_threshold_5", "a marking decision at Threshold 5"),
        event("mark_threshold_6", "a marking decision at Threshold 6"),
        event("mark_threshold_7", "a marking decision at Threshold 7"),
        event("mark_threshold_8", "a marking decision at Threshold 8"),
        event("mark_threshold_9", "a marking decision at Threshold 9"),
        event("mark_threshold_10", "a marking decision at Threshold 10"),
        event("mark_threshold_11", "a marking decision at Threshold 11"),
        event("mark_threshold_12", "a marking decision at Threshold 12"),
        event("mark_threshold_13", "a marking decision at Threshold 13"),
        event("mark_threshold_14", "a marking decision at Threshold 14"),
        event("mark_threshold_15", "a marking decision at Threshold 15"),
        event("reset", "a reset cycle"),
        event(
            "fill_at_threshold",
            "the compared fill exactly at the threshold (not congested, by one)",
        ),
        bin(
            "threshold_upper",
            "Threshold 8 to 15 (the 4-bit index's top bit set)",
        ),
        bin("root_rule_stall", "the stall window root rule"),
        event(
            "victim_by_stall",
            "a victim under the stall window rule (a stall in the window)",
        ),
        event(
            "stall_window_end",
            "congested in the last cycle of a stall window (a victim, a root the cycle after)",
        ),
    ];
    const EXPOSED_BY: &'static [(&'static str, &'static str)] = &[
        ("BUG_THRESHOLD_OFF_BY_ONE", "fill_at_threshold"),
        ("BUG_VICTIM_MASK", "victim_unmasked"),
        ("BUG_THRESHOLD_INDEX", "threshold_upper"),
        ("BUG_STALL_WINDOW", "stall_window_end"),
    ];
    type Config = Config;
    type In = CongIn;
    type Out = Out;
    type Model = CongDetectTwin;
    type State = CongDetectCovState;

    fn begin(c: &Config, h: &mut Hits) -> CongDetectCovState {
        count(h, 0, c.threshold == 0);
        count(h, 1, c.compare == FillCompare::PerVoq);
        count(h, 2, c.compare == FillCompare::SumVoqs);
        count(h, 3, c.compare == FillCompare::SumPerContributor);
        count(h, 4, c.victim_mask);
        count(h, 5, !c.victim_mask);
        count(h, 6, c.root_min_credits == 0);
        count(h, 7, c.root_min_credits == 0xfff);
        count(h, 30, c.threshold >= 8);
        count(h, 31, c.root_rule == RootRule::StallWindow);
        let mut lower = *c;
        for e in lower.thr_table.iter_mut() {
            *e = e.saturating_sub(1);
        }
        CongDetectCovState {
            // Lowering entries keeps a valid configuration valid (the run built the block from `c` first).
            lower: CongDetect::new(lower).expect("valid configuration"),
            entry_zero: c.thr_table[usize::from(c.threshold & 15)] == 0,
            per_contributor: c.compare == FillCompare::SumPerContributor,
            thr: c.thr_table[usize::from(c.threshold & 15)].into(),
            threshold: c.threshold & 15,
            victim_mask: c.victim_mask,
            last_cong: false,
            stall_rule: c.root_rule == RootRule::StallWindow && c.stall_window != 0,
            last_left: 0,
        }
    }

    #[inline(always)]
    fn sample(st: &mut CongDetectCovState, m: &CongDetectTwin, i: &CongIn, o: &Out, h: &mut Hits) {
        let on = i.rst_ni;
        // This cycle's fills are exactly at the threshold: over `thr - 1` (or the entry is 0) but not over
        // `thr` (the block's registered decision, after the edge).
        let n = usize::from(i.voq_cnt_i & 0x7f).min(MAX_INPUTS);
        let over = m.0.outputs().cong_o;
        let lanes = &i.voq_fill_i[..n];
        let at = !over
            & if st.per_contributor {
                // `sum > thr / contributors`: at it when equal.
                let k = lanes.iter().fold(0u32, |k, &f| k + u32::from(f != 0));
                let sum = lanes.iter().fold(0u32, |s, &f| s + u32::from(f));
                k != 0 && sum == st.thr / k
            } else {
                st.entry_zero || st.lower.over_threshold(lanes)
            };
        count(h, 29, on & (st.threshold != 0) & at);
        count(h, 8, on & o.cong_o);
        count(h, 9, on & (o.cong_o != st.last_cong));
        count(h, 10, on & o.root_o);
        count(h, 11, on & o.victim_o & st.victim_mask);
        count(h, 12, on & o.victim_o & !st.victim_mask);
        // Points 13..=27 are Threshold 1..=15; Threshold 0 never marks (its slot, 12, is not counted).
        h[12 + usize::from(st.threshold)] += u64::from(on & o.mark_state_o & (st.threshold != 0));
        count(h, 28, !on);
        count(h, 32, on & st.stall_rule & o.victim_o);
        count(h, 33, on & st.stall_rule & o.cong_o & (st.last_left == 1));
        st.last_cong = o.cong_o & on;
        st.last_left = m.0.stall_left_q;
    }
}

/// The adapter to the Verilated `cong_detect`.
#[cfg(feature = "verilator")]
pub mod rtl {
    use super::*;
    use crate::blocks::mask;
    use crate::dut::Dut;
    use crate::ffi::{CongDetectIo, Rtl, CONG_DETECT_VARIANTS};
    use rtl_model::blocks::cong_detect::CREDIT_WIDTH;

    /// The Verilated `cong_detect` (clean or a bug variant) with its configuration on the held ports.
    #[derive(Debug)]
    pub struct CongDetectRtl {
        m: Rtl<CongDetectIo>,
        io: CongDetectIo,
    }

    impl CongDetectRtl {
        /// Builds the model, drives the configuration and applies one power-on reset edge.
        pub fn new(cfg: &Config, bug: Option<&str>) -> Result<Self, CosimError> {
            cfg.validate().map_err(|e| CosimError::Config {
                block: "cong_detect",
                msg: e.to_string(),
            })?;
            let m = Rtl::new("cong_detect", CONG_DETECT_VARIANTS, bug)?;
            let mut thr_table_i = [0u32; 8];
            for (k, w) in thr_table_i.iter_mut().enumerate() {
                *w = u32::from(cfg.thr_table[2 * k]) | u32::from(cfg.thr_table[2 * k + 1]) << 16;
            }
            let io = CongDetectIo {
                threshold_i: cfg.threshold.into(),
                thr_table_i,
                compare_i: compare_code(cfg.compare).into(),
                root_min_credits_i: cfg.root_min_credits.into(),
                root_rule_i: cfg.root_rule.code().into(),
                stall_window_i: cfg.stall_window.into(),
                victim_mask_i: cfg.victim_mask.into(),
                ..CongDetectIo::default()
            };
            let mut s = CongDetectRtl { m, io };
            s.step(&CongIn::default())
                .map_err(|kind| CosimError::Halted { cycle: 0, kind })?;
            s.m.time_zero();
            Ok(s)
        }
    }

    impl CongDetectRtl {
        /// Writes one cycle's inputs (masked to the port widths) into the port struct.
        #[inline]
        fn drive(&mut self, i: &CongIn) {
            let io = &mut self.io;
            io.rst_ni = i.rst_ni.into();
            // Two 16-bit lanes per 32-bit word, lane 0 in the low half, as voq_fill_i[16k +: 16].
            for (w, pair) in io.voq_fill_i.iter_mut().zip(i.voq_fill_i.chunks_exact(2)) {
                *w = u32::from(pair[0]) | u32::from(pair[1]) << 16;
            }
            io.voq_cnt_i = u32::from(i.voq_cnt_i) & mask(CNT_WIDTH);
            io.credit_avail_i = u32::from(i.credit_avail_i) & mask(CREDIT_WIDTH);
            io.stall_i = i.stall_i.into();
        }
    }

    crate::rtl_dut!(CongDetectRtl [CongDetectIo]: CongIn => Out {
        cong_o: |v| *v != 0,
        root_o: |v| *v != 0,
        victim_o: |v| *v != 0,
        mark_state_o: |v| *v != 0,
        cfg_err_o: |v| *v as u8,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lanes_pack_like_the_rtl_and_back() {
        let (_, stim) = CongDetectBlock::random(2);
        for i in stim.take(200) {
            let fills = i.get(1);
            assert_eq!(fills.field(16 * 63, 16), u64::from(i.voq_fill_i[63]));
            assert_eq!(fills.field(16 * 5, 16), u64::from(i.voq_fill_i[5]));
            let vals: Vec<Wide> = (0..CongIn::NAMES.len()).map(|k| i.get(k)).collect();
            assert_eq!(CongIn::from_values(&vals), i);
        }
    }

    #[test]
    fn config_survives_the_held_ports_and_reserved_compare_is_refused() {
        for seed in 0..100 {
            let (cfg, _) = CongDetectBlock::random(seed);
            let mut pairs = crate::blocks::held_pairs::<CongDetectBlock>(&cfg);
            assert_eq!(CongDetectBlock::config_from_ports(&pairs).unwrap(), cfg);
            pairs[2].1 = Wide::from(3u8);
            let e = CongDetectBlock::config_from_ports(&pairs).unwrap_err();
            assert!(e.contains("reserved"), "{e}");
        }
    }

    /// The stimulus reaches roots, victims, marks and all three comparisons on both sides of the threshold,
    /// and exercises lane counts above 64 (checked on the Rust twin, no Verilator needed).
    #[test]
    fn stimulus_reaches_roots_victims_and_both_sides_of_every_comparison() {
        let (mut roots, mut victims, mut marks, mut over64) = (0, 0, 0, 0);
        let mut per_cmp = [[0u32; 2]; 3];
        for seed in 1..=24 {
            let (cfg, stim) = CongDetectBlock::random(seed);
            let mut m = CongDetectBlock::model(&cfg).unwrap();
            for i in stim.take(20_000) {
                let o = m.step(&i);
                roots += u32::from(o.root_o);
                victims += u32::from(o.victim_o);
                marks += u32::from(o.mark_state_o && o.victim_o);
                over64 += u32::from(i.voq_cnt_i > 64);
                per_cmp[usize::from(compare_code(cfg.compare))][usize::from(o.cong_o)] += 1;
            }
        }
        assert!(
            roots > 1000 && victims > 1000 && marks > 100,
            "roots {roots} victims {victims} marks {marks}"
        );
        assert!(over64 > 1000, "lane counts above 64: {over64}");
        for (c, [calm, cong]) in per_cmp.iter().enumerate() {
            assert!(
                *calm > 1000 && *cong > 1000,
                "compare {c}: calm {calm} congested {cong}"
            );
        }
    }
}
