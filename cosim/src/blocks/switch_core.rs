//! `switch_core` under co-simulation: the composed switch (`hdl/switch_core.sv` against
//! `rtl_model::blocks::switch_core::SwitchCore`).
//!
//! Configuration: each block kind's configuration comes from that block's own held ports (same names), so
//! [`SwitchCoreBlock::config_ports`] is theirs concatenated; the VL arbitration tables have at most 4 entries
//! (the RTL's `TableMax`), the input buffers are at most the descriptor pool's [`BUF_MAX`] blocks (half of
//! the configurations at 1 or `BUF_MAX` exactly) and the congestion thresholds are scaled to the fills such
//! buffers reach.
//!
//! Stimulus, in phases of 1-300 cycles: `busy` (packets on most inputs, each input waiting out its previous
//! packet's blocks as a link would, outputs mostly ready), `burst` (packets every cycle, ignoring the link
//! time and the credit, so pools run out and drop), `hotspot` (every input to one output and VL: congestion and marks),
//! `backpressure` (outputs mostly not ready) and `idle` (noise on the data ports, no valid). Flow-control
//! packets arrive on each port about one cycle in 12 with a random VL, FCTBS and an FCCL that grants or
//! refuses the head packet about equally. Rare resets of 1-3 cycles.

use super::{held_wide, Block};
use crate::check::CosimError;
use crate::cover::{bin, count, event, never, Cover, Hits, Point};
use crate::impl_ports;
use crate::ports::Wide;
use crate::rng::Rng;
use rtl_model::blocks::cong_detect::{self, linear_thr_table, CongDetect};
use rtl_model::blocks::switch_core::{
    blocks_of, set_lane, Config, In, Out, SwitchCore, ARB_TABLE_MAX, BUF_MAX, BYTES_WIDTH, N_PORTS,
    N_VL, PORT_WIDTH, VL_WIDTH,
};
use rtl_model::blocks::vl_arb::{self, ArbEntry};

impl_ports!(In {
    rst_ni,
    pkt_valid_i,
    pkt_vl_i,
    pkt_bytes_i,
    pkt_dst_i,
    fc_valid_i,
    fc_vl_i,
    fc_fctbs_i,
    fc_fccl_i,
    out_ready_i,
});
impl_ports!(Out {
    out_valid_o,
    out_vl_o,
    out_src_o,
    out_bytes_o,
    out_fecn_o,
    fc_send_o,
    fccl_o,
    avail_o,
    mark_state_o,
    tx_err_o,
    overflow_o,
    drop_o,
});

/// `switch_core` as a co-simulation [`Block`].
#[derive(Debug, Clone, Copy)]
pub struct SwitchCoreBlock;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Busy,
    Burst,
    Hotspot,
    Backpressure,
    Idle,
}

/// Seeded random stimulus for `switch_core` (see the module docs).
#[derive(Debug, Clone)]
pub struct SwitchCoreStim {
    rng: Rng,
    mode: Mode,
    mode_left: u32,
    rst_left: u32,
    /// Cycles each input's link is still busy with its previous packet.
    link: [u8; N_PORTS],
    hot_dst: u8,
    hot_vl: u8,
}

impl SwitchCoreStim {
    /// Stimulus starting from reset state.
    pub fn new(seed: u64) -> Self {
        SwitchCoreStim {
            rng: Rng::new(seed),
            mode: Mode::Busy,
            mode_left: 0,
            rst_left: 0,
            link: [0; N_PORTS],
            hot_dst: 0,
            hot_vl: 0,
        }
    }
}

fn set8(v: &mut u8, k: usize, w: u32, x: u64) {
    let mut t = u128::from(*v);
    set_lane(&mut t, k, w, x);
    *v = t as u8;
}

fn set64(v: &mut u64, k: usize, w: u32, x: u64) {
    let mut t = u128::from(*v);
    set_lane(&mut t, k, w, x);
    *v = t as u64;
}

impl Iterator for SwitchCoreStim {
    type Item = In;

    fn next(&mut self) -> Option<In> {
        let r = &mut self.rng;
        if self.rst_left == 0 && r.below(1 << 16) == 0 {
            self.rst_left = 1 + r.below(3) as u32;
        }
        if self.rst_left > 0 {
            self.rst_left -= 1;
            self.link = [0; N_PORTS];
            // Noise everywhere: reset must win.
            return Some(In {
                rst_ni: false,
                pkt_valid_i: r.next_u64() as u8,
                pkt_vl_i: r.next_u64() as u8,
                pkt_bytes_i: r.next_u64(),
                pkt_dst_i: r.next_u64() as u8,
                fc_valid_i: r.next_u64() as u8,
                fc_vl_i: r.next_u64() as u8,
                fc_fctbs_i: r.next_u64(),
                fc_fccl_i: r.next_u64(),
                out_ready_i: r.next_u64() as u8,
            });
        }
        if self.mode_left == 0 {
            self.mode = match r.below(10) {
                0..=3 => Mode::Busy,
                4 => Mode::Burst,
                5..=6 => Mode::Hotspot,
                7..=8 => Mode::Backpressure,
                _ => Mode::Idle,
            };
            self.mode_left = r.range(1, 300) as u32;
            self.hot_dst = r.below(N_PORTS as u64) as u8;
            self.hot_vl = r.below(N_VL as u64) as u8;
        }
        self.mode_left -= 1;
        let mut i = In {
            rst_ni: true,
            ..In::default()
        };
        for p in 0..N_PORTS {
            let ready = match self.mode {
                Mode::Backpressure => r.pct(10),
                _ => !r.pct(6),
            };
            i.out_ready_i |= u8::from(ready) << p;
            self.link[p] = self.link[p].saturating_sub(1);
            let arrive = match self.mode {
                Mode::Idle => false,
                Mode::Burst => r.pct(90),
                Mode::Busy | Mode::Backpressure | Mode::Hotspot => self.link[p] == 0 && r.pct(60),
            };
            let bytes = match r.below(8) {
                0 => r.below(64),
                1 => 4224 - r.below(64),
                2 => r.next_u64() & 0x1fff, // beyond the MTU: both sides truncate the block count alike
                _ => r.range(1, 2200),
            };
            let (dst, vl) = if self.mode == Mode::Hotspot && r.pct(85) {
                (u64::from(self.hot_dst), u64::from(self.hot_vl))
            } else {
                (r.below(N_PORTS as u64), r.below(N_VL as u64))
            };
            set64(&mut i.pkt_bytes_i, p, BYTES_WIDTH, bytes);
            if arrive {
                i.pkt_valid_i |= 1 << p;
                self.link[p] = blocks_of(bytes as u16);
                set8(&mut i.pkt_dst_i, p, PORT_WIDTH, dst);
                set8(&mut i.pkt_vl_i, p, VL_WIDTH, vl);
            }
            if r.below(12) == 0 {
                i.fc_valid_i |= 1 << p;
                set8(&mut i.fc_vl_i, p, VL_WIDTH, r.below(N_VL as u64));
                set64(&mut i.fc_fctbs_i, p, 12, r.below(4096));
                set64(&mut i.fc_fccl_i, p, 12, r.below(4096));
            }
        }
        Some(i)
    }
}

/// A VL arbitration table of 0-4 entries over the switch's VLs (and now and then a VL it has not).
fn table(r: &mut Rng) -> Vec<ArbEntry> {
    (0..r.below(ARB_TABLE_MAX as u64 + 1))
        .map(|_| {
            let vl = if r.pct(90) {
                r.below(N_VL as u64)
            } else {
                r.below(15)
            };
            let weight = match r.below(4) {
                0 => 0,
                1 => r.range(1, 4),
                _ => r.range(1, 255),
            };
            ArbEntry::new(vl as u8, weight as u8)
        })
        .collect()
}

impl Block for SwitchCoreBlock {
    const NAME: &'static str = "switch_core";
    type Config = Config;
    type In = In;
    type Out = Out;
    type Model = SwitchCore;
    type Stim = SwitchCoreStim;
    type Cover = SwitchCoreCover;

    fn model(cfg: &Config) -> Result<SwitchCore, CosimError> {
        SwitchCore::new(cfg.clone()).map_err(|e| CosimError::Config {
            block: Self::NAME,
            msg: e.to_string(),
        })
    }

    const CORNERS: u32 = 7;
    const SEGMENT: u64 = 32_768;

    /// Corners: Threshold 0 with no credit after reset, Threshold 15 with Victim_Mask clear and a high
    /// Root_Min_Credits, Threshold 1 comparing sums, VL_High_Limit 0, a credit cap far below a large buffer,
    /// the smallest buffers, a mark on every eligible packet.
    fn configure(seed: u64, corner: Option<u32>) -> (Config, SwitchCoreStim) {
        let mut r = Rng::new(seed ^ 0x5c0e_0001);
        let mut rx = super::credit_rx::CreditRxBlock::random(seed).0;
        rx.buf_blocks = match r.below(4) {
            0 => 1,
            1 => BUF_MAX as u16,
            _ => r.range(1, BUF_MAX as u64) as u16,
        };
        let tx = super::credit_tx::CreditTxBlock::random(seed).0;
        let mut mark = super::fecn_marker::FecnMarkerBlock::random(seed).0;
        if r.pct(70) {
            // Marks often enough to be seen within a run.
            mark.marking_rate = r.below(16) as u16;
        }
        let mut low = table(&mut r);
        if low.iter().all(|e| e.weight == 0) && r.pct(80) {
            // Mostly a table that serves both VLs, so packets flow.
            low = vec![ArbEntry::new(0, 16), ArbEntry::new(1, 16)];
        }
        let arb = vl_arb::Config {
            high: table(&mut r),
            low,
            vl_high_limit: match r.below(3) {
                0 => 255,
                1 => 0,
                _ => r.below(8) as u8,
            },
        };
        let cong = cong_detect::Config {
            threshold: r.below(16) as u8,
            // A VoQ holds at most BUF_MAX blocks, the VoQs of an output VL at most 4 x BUF_MAX: thresholds
            // in that range.
            thr_table: linear_thr_table(r.range(16, 4 * BUF_MAX as u64) as u16),
            compare: [
                cong_detect::FillCompare::PerVoq,
                cong_detect::FillCompare::SumVoqs,
                cong_detect::FillCompare::SumPerContributor,
            ][r.below(3) as usize],
            root_min_credits: r.below(300) as u16,
            victim_mask: r.pct(50),
        };
        let mut cfg = Config {
            rx,
            tx,
            arb,
            cong,
            mark,
        };
        match corner {
            Some(0) => (cfg.cong.threshold, cfg.tx.fccl_reset) = (0, 0),
            Some(1) => {
                (cfg.cong.threshold, cfg.cong.victim_mask) = (15, false);
                cfg.cong.root_min_credits = 299;
            }
            Some(2) => {
                cfg.cong.threshold = 1;
                cfg.cong.compare = cong_detect::FillCompare::SumVoqs;
            }
            Some(3) => cfg.arb.vl_high_limit = 0,
            Some(4) => {
                // The largest buffer the descriptor pools allow, the credit capped far below it.
                cfg.rx.buf_blocks = BUF_MAX as u16;
                cfg.rx.fccl_cap = r.range(1, 8) as u16;
            }
            Some(5) => cfg.rx.buf_blocks = r.range(1, 8) as u16,
            Some(_) => {
                cfg.mark.marking_rate = 0;
                cfg.cong.threshold = r.range(1, 15) as u8;
            }
            None => {}
        }
        (cfg, SwitchCoreStim::new(seed))
    }

    fn config_ports(cfg: &Config) -> Vec<(&'static str, Wide)> {
        let mut v = super::credit_rx::CreditRxBlock::config_ports(&cfg.rx);
        v.extend(super::credit_tx::CreditTxBlock::config_ports(&cfg.tx));
        v.extend(super::vl_arb::VlArbBlock::config_ports(&cfg.arb));
        v.extend(super::cong_detect::CongDetectBlock::config_ports(&cfg.cong));
        v.extend(super::fecn_marker::FecnMarkerBlock::config_ports(&cfg.mark));
        v
    }

    fn config_from_ports(v: &[(String, Wide)]) -> Result<Config, String> {
        let cfg = Config {
            rx: super::credit_rx::CreditRxBlock::config_from_ports(v)?,
            tx: super::credit_tx::CreditTxBlock::config_from_ports(v)?,
            arb: super::vl_arb::VlArbBlock::config_from_ports(v)?,
            cong: super::cong_detect::CongDetectBlock::config_from_ports(v)?,
            mark: super::fecn_marker::FecnMarkerBlock::config_from_ports(v)?,
        };
        cfg.validate().map_err(|e| e.to_string())?;
        // The held ports exist (checked above through the blocks); this one too, for a clear message.
        held_wide(v, "lo_n_i")?;
        Ok(cfg)
    }

    #[cfg(feature = "verilator")]
    type Rtl = rtl::SwitchCoreRtl;

    #[cfg(feature = "verilator")]
    fn rtl(cfg: &Config, bug: Option<&str>) -> Result<rtl::SwitchCoreRtl, CosimError> {
        rtl::SwitchCoreRtl::new(cfg, bug)
    }
}

/// What `switch_core`'s sampler keeps.
#[derive(Debug, Clone)]
pub struct SwitchCoreCovState {
    /// A congestion detector configured as the switch's (for its threshold comparison).
    cong: CongDetect,
    /// The switch's VoQ fills before this cycle's edge (what its detectors compare).
    fill: [u16; N_PORTS * N_PORTS * N_VL],
}

/// `switch_core`'s cover points: congestion states, arbitration cases and credit corners (also what a
/// scenario's port trace reached).
#[derive(Debug, Clone, Copy)]
pub struct SwitchCoreCover;

impl Cover for SwitchCoreCover {
    const POINTS: &'static [Point] = &[
        bin("threshold_0", "Threshold 0: never congested"),
        bin("threshold_15", "Threshold 15"),
        bin("victim_mask_clear", "Victim_Mask clear"),
        bin("high_limit_zero", "VL_High_Limit 0"),
        bin("cap_below_buf", "credit cap below the buffer"),
        event("packet_in", "a packet arrives"),
        event("both_vls_in", "packets on both VLs in one cycle"),
        event("packet_out", "a packet leaves"),
        event("outputs_busy", "three or more outputs send in one cycle"),
        event("vl1_out", "a packet leaves on VL 1"),
        event(
            "congested",
            "a port-VL marks (root, or a victim under the mask)",
        ),
        event(
            "congested_one_vl",
            "a port congested on one VL and not the other",
        ),
        event("all_congested", "every port-VL congested"),
        event("fecn", "a packet leaves with FECN"),
        event(
            "credit_short",
            "a packet waits for an output VL whose credit is below a largest packet (66 blocks)",
        ),
        event("fc_in", "a flow-control packet arrives"),
        event("fc_out", "a flow-control packet is sent"),
        event("drop", "a packet dropped (VoQ full)"),
        event("overflow", "a receive buffer overflows"),
        never(
            "tx_error",
            "a packet taken without credit (the arbiter grants only with credit)",
        ),
        event("reset", "a reset cycle"),
        event(
            "vls_decide_apart",
            "an output's two VL congestion detectors decide differently on their VoQ fills",
        ),
        event("vl1_in", "a packet arrives on VL 1"),
    ];
    const EXPOSED_BY: &'static [(&'static str, &'static str)] = &[
        ("BUG_CONG_VL_INDEX", "vls_decide_apart"),
        ("BUG_CREDIT_BYPASS", "credit_short"),
    ];
    type Config = Config;
    type In = In;
    type Out = Out;
    type Model = SwitchCore;
    type State = SwitchCoreCovState;

    fn begin(c: &Config, h: &mut Hits) -> SwitchCoreCovState {
        count(h, 0, c.cong.threshold == 0);
        count(h, 1, c.cong.threshold == 15);
        count(h, 2, !c.cong.victim_mask);
        count(h, 3, c.arb.vl_high_limit == 0);
        count(h, 4, c.rx.fccl_cap < c.rx.buf_blocks);
        SwitchCoreCovState {
            // The switch built its detectors from this configuration.
            cong: CongDetect::new(c.cong).expect("valid configuration"),
            fill: [0; N_PORTS * N_PORTS * N_VL],
        }
    }

    #[inline(always)]
    fn sample(st: &mut SwitchCoreCovState, m: &SwitchCore, i: &In, o: &Out, h: &mut Hits) {
        let on = i.rst_ni;
        // The congestion detectors of an output's two VLs decide differently on this cycle's (registered)
        // VoQ fills: only then does feeding one VL's detector the other's fills change a decision.
        let mut disagree = false;
        for out in 0..N_PORTS {
            let lanes = |v: usize| -> [u16; N_PORTS] {
                std::array::from_fn(|k| st.fill[(k * N_PORTS + out) * N_VL + v])
            };
            disagree |= st.cong.over_threshold(&lanes(0)) != st.cong.over_threshold(&lanes(1));
        }
        count(h, 21, on & disagree);
        st.fill = m.fill;
        let pin = i.pkt_valid_i & 0xf;
        let vls = i.pkt_vl_i & pin;
        count(h, 5, on & (pin != 0));
        count(h, 6, on & (vls != 0) & (vls != pin));
        let out = o.out_valid_o & 0xf;
        count(h, 7, on & (out != 0));
        count(h, 8, on & (out.count_ones() >= 3));
        count(h, 9, on & (o.out_vl_o & out != 0));
        let m = o.mark_state_o;
        count(h, 10, on & (m != 0));
        count(h, 11, on & ((m ^ (m >> 1)) & 0x55 != 0));
        count(h, 12, on & (m == 0xff));
        count(h, 13, on & (o.out_fecn_o & out != 0));
        // Output VL (o, v) is lane o * N_VL + v of avail_o; its VoQs are (k, o, v) for every input k.
        let mut short = false;
        for out in 0..N_PORTS {
            for v in 0..N_VL {
                let avail = (o.avail_o >> (12 * (out * N_VL + v))) & 0xfff;
                let waiting = (0..N_PORTS).any(|k| st.fill[(k * N_PORTS + out) * N_VL + v] != 0);
                short |= waiting & (avail < 66);
            }
        }
        count(h, 14, on & short);
        count(h, 15, on & (i.fc_valid_i & 0xf != 0));
        count(h, 16, on & (o.fc_send_o != 0));
        count(h, 17, on & (o.drop_o != 0));
        count(h, 18, on & (o.overflow_o != 0));
        count(h, 19, on & (o.tx_err_o != 0));
        count(h, 20, !on);
        count(h, 22, on & (vls != 0));
    }
}

/// The adapter to the Verilated `switch_core`.
#[cfg(feature = "verilator")]
pub mod rtl {
    use super::*;
    use crate::dut::Dut;
    use crate::ffi::{Rtl, SwitchCoreIo, SWITCH_CORE_VARIANTS};

    /// The Verilated `switch_core` (clean or a bug variant) with its configuration on the held ports.
    #[derive(Debug)]
    pub struct SwitchCoreRtl {
        m: Rtl<SwitchCoreIo>,
        io: SwitchCoreIo,
    }

    fn words<const N: usize>(w: &Wide) -> [u32; N] {
        let mut a = [0u32; N];
        a.copy_from_slice(&w.words()[..N]);
        a
    }

    fn u128_of(w: &[u32; 3]) -> u128 {
        u128::from(w[0]) | u128::from(w[1]) << 32 | u128::from(w[2]) << 64
    }

    impl SwitchCoreRtl {
        /// Builds the model, drives the configuration and applies one power-on reset edge.
        pub fn new(cfg: &Config, bug: Option<&str>) -> Result<Self, CosimError> {
            cfg.validate().map_err(|e| CosimError::Config {
                block: "switch_core",
                msg: e.to_string(),
            })?;
            let m = Rtl::new("switch_core", SWITCH_CORE_VARIANTS, bug)?;
            let ports = SwitchCoreBlock::config_ports(cfg);
            let get = |name: &str| {
                ports
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| *v)
                    .unwrap_or(Wide::ZERO)
            };
            let lo = |name: &str, bits: u32| (get(name).low_u64() & ((1 << bits) - 1)) as u32;
            let io = SwitchCoreIo {
                buf_blocks_i: lo("buf_blocks_i", 16),
                fc_interval_i: lo("fc_interval_i", 16),
                fc_on_change_i: lo("fc_on_change_i", 1),
                fccl_cap_i: lo("fccl_cap_i", 12),
                fccl_reset_i: lo("fccl_reset_i", 12),
                hi_vl_i: lo("hi_vl_i", 16),
                hi_weight_i: lo("hi_weight_i", 32),
                hi_n_i: lo("hi_n_i", 3),
                lo_vl_i: lo("lo_vl_i", 16),
                lo_weight_i: lo("lo_weight_i", 32),
                lo_n_i: lo("lo_n_i", 3),
                vl_high_limit_i: lo("vl_high_limit_i", 8),
                threshold_i: lo("threshold_i", 4),
                thr_table_i: words::<8>(&get("thr_table_i")),
                compare_i: lo("compare_i", 2),
                root_min_credits_i: lo("root_min_credits_i", 12),
                victim_mask_i: lo("victim_mask_i", 1),
                packet_size_i: lo("packet_size_i", 8),
                marking_rate_i: lo("marking_rate_i", 16),
                mode_i: lo("mode_i", 1),
                lfsr_seed_i: lo("lfsr_seed_i", 16),
                lfsr_thresh_i: lo("lfsr_thresh_i", 17),
                ..SwitchCoreIo::default()
            };
            let mut s = SwitchCoreRtl { m, io };
            s.step(&In::default())
                .map_err(|kind| CosimError::Halted { cycle: 0, kind })?;
            s.m.time_zero();
            Ok(s)
        }
    }

    impl SwitchCoreRtl {
        /// Writes one cycle's inputs (masked to the port widths) into the port struct.
        #[inline]
        fn drive(&mut self, i: &In) {
            let io = &mut self.io;
            let n = N_PORTS as u32;
            io.rst_ni = i.rst_ni.into();
            io.pkt_valid_i = u32::from(i.pkt_valid_i) & ((1 << n) - 1);
            io.pkt_vl_i = u32::from(i.pkt_vl_i) & ((1 << (n * VL_WIDTH)) - 1);
            io.pkt_bytes_i = i.pkt_bytes_i & ((1 << (n * BYTES_WIDTH)) - 1);
            io.pkt_dst_i = u32::from(i.pkt_dst_i) & ((1 << (n * PORT_WIDTH)) - 1);
            io.fc_valid_i = u32::from(i.fc_valid_i) & ((1 << n) - 1);
            io.fc_vl_i = u32::from(i.fc_vl_i) & ((1 << (n * VL_WIDTH)) - 1);
            io.fc_fctbs_i = i.fc_fctbs_i & ((1 << (n * 12)) - 1);
            io.fc_fccl_i = i.fc_fccl_i & ((1 << (n * 12)) - 1);
            io.out_ready_i = u32::from(i.out_ready_i) & ((1 << n) - 1);
        }
    }

    crate::rtl_dut!(SwitchCoreRtl [SwitchCoreIo]: In => Out {
        out_valid_o: |v| *v as u8,
        out_vl_o: |v| *v as u8,
        out_src_o: |v| *v as u8,
        out_bytes_o: |v| *v,
        out_fecn_o: |v| *v as u8,
        fc_send_o: |v| *v as u8,
        fccl_o: |v| u128_of(v),
        avail_o: |v| u128_of(v),
        mark_state_o: |v| *v as u8,
        tx_err_o: |v| *v as u8,
        overflow_o: |v| *v as u8,
        drop_o: |v| *v as u8,
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtl_model::blocks::switch_core::lane;
    use rtl_model::clocked::Clocked;

    #[test]
    fn config_survives_the_held_ports() {
        for seed in 0..100 {
            let (cfg, _) = SwitchCoreBlock::random(seed);
            let pairs = crate::blocks::held_pairs::<SwitchCoreBlock>(&cfg);
            assert_eq!(SwitchCoreBlock::config_from_ports(&pairs).unwrap(), cfg);
        }
    }

    /// The random stimulus reaches what the co-simulation must compare: grants on every output, marks,
    /// drops, refused credit, flow-control packets out, resets.
    #[test]
    fn stimulus_reaches_grants_marks_drops_and_credit_refusals() {
        let (mut grants, mut marks, mut drops, mut sends, mut cong) =
            (0u32, 0u32, 0u32, 0u32, 0u32);
        let mut per_out = [0u32; N_PORTS];
        for seed in 1..=4 {
            let (cfg, stim) = SwitchCoreBlock::random(seed);
            let mut m = SwitchCoreBlock::model(&cfg).unwrap();
            for i in stim.take(50_000) {
                let o = m.step(&i);
                grants += o.out_valid_o.count_ones();
                marks += o.out_fecn_o.count_ones();
                drops += o.drop_o.count_ones();
                sends += o.fc_send_o.count_ones();
                cong += o.mark_state_o.count_ones();
                for (p, c) in per_out.iter_mut().enumerate() {
                    *c += u32::from(lane(o.out_valid_o.into(), p, 1) != 0);
                }
            }
        }
        assert!(grants > 10_000, "grants {grants}");
        assert!(per_out.iter().all(|&c| c > 1000), "{per_out:?}");
        assert!(marks > 100 && cong > 1000, "marks {marks} cong {cong}");
        assert!(drops > 100 && sends > 1000, "drops {drops} sends {sends}");
    }
}
