//! `fecn_marker` under co-simulation: stimulus, ports, configuration, RTL adapter.
//!
//! The stimulus alternates congested phases (`mark_state_i` high), uncongested phases and idle phases; a
//! packet starts in about a third of the cycles, mostly with a length within 64 bytes of the Packet_Size
//! boundary (`64 * packet_size`, where the size check decides), otherwise any 13-bit length, now and then (1 in 64) with
//! garbage above the 13-bit port. Configurations: small and large Packet_Size (0 = every size), small
//! Marking_Rates (marks every few packets) and any 16-bit one, both counting modes, any nonzero LFSR seed.
//! Rare resets of 1-3 cycles, with noise on every other input.

use super::{held, Block};
use crate::check::CosimError;
use crate::cover::{bin, count, event, Cover, Hits, Point};
use crate::impl_ports;
use crate::ports::Wide;
use crate::rng::Rng;
use rtl_model::blocks::fecn_marker::{Config, FecnMarker, In, MarkMode, Out};

impl_ports!(In {
    rst_ni,
    pkt_valid_i,
    pkt_bytes_i,
    mark_state_i
});
impl_ports!(Out { mark_o, cfg_err_o });

/// `fecn_marker` as a co-simulation [`Block`].
#[derive(Debug, Clone, Copy)]
pub struct FecnMarkerBlock;

/// Seeded random stimulus for `fecn_marker` (see the module docs).
#[derive(Debug, Clone)]
pub struct FecnMarkerStim {
    rng: Rng,
    boundary: u64,
    congested: bool,
    idle: bool,
    phase_left: u32,
    rst_left: u32,
}

impl Iterator for FecnMarkerStim {
    type Item = In;

    // Inlined into the lockstep loop, like the other stimuli.
    #[inline(always)]
    fn next(&mut self) -> Option<In> {
        // One draw decides the whole cycle (bit fields of `ev`: reset 0..17, packet start 17..33, which length
        // 33..41, the length near the boundary 41..57 or any length 41..54, garbage above the port 57..63,
        // reset length 62..64), and the choices between its values are selects, not branches: a branch on a
        // one-in-three event is mispredicted in about a third of the cycles (the stimulus drew up to five
        // numbers a cycle and cost a sixth of the lockstep loop).
        let ev = self.rng.next_u64();
        let field = |at: u32, bits: u32| (ev >> at) & ((1 << bits) - 1);
        if self.rst_left == 0 && field(0, 17) == 0 {
            self.rst_left = 1 + (ev >> 62) as u32 % 3;
        }
        if self.rst_left > 0 {
            self.rst_left -= 1;
            let n = self.rng.next_u64();
            return Some(In {
                rst_ni: false,
                pkt_valid_i: n & 1 != 0,
                pkt_bytes_i: (n >> 8) as u16,
                mark_state_i: n & 2 != 0,
            });
        }
        if self.phase_left == 0 {
            let r = &mut self.rng;
            self.congested = r.pct(60);
            self.idle = r.pct(15);
            self.phase_left = r.range(1, 500) as u32;
        }
        self.phase_left -= 1;
        // A packet starts in a third of the non-idle cycles, 60% (154 in 256) of them within 64 bytes of the
        // boundary, the others any 13-bit length; one in 64 with garbage above the 13-bit port.
        let start = !self.idle && (field(17, 16) * 3) >> 16 == 0;
        let near = (self.boundary + ((field(41, 16) * 129) >> 16))
            .saturating_sub(64)
            .min(0x1fff) as u16;
        let any = field(41, 13) as u16;
        let mut bytes = if field(33, 8) < 154 { near } else { any };
        if field(57, 6) == 0 {
            bytes |= 0xe000; // beyond the 13-bit port
        }
        Some(In {
            rst_ni: true,
            pkt_valid_i: start,
            // Floats while not valid.
            pkt_bytes_i: if start { bytes } else { (ev >> 17) as u16 },
            mark_state_i: self.congested,
        })
    }
}

impl Block for FecnMarkerBlock {
    const NAME: &'static str = "fecn_marker";
    type Config = Config;
    type In = In;
    type Out = Out;
    type Model = FecnMarker;
    type Stim = FecnMarkerStim;
    type Cover = FecnMarkerCover;

    fn model(cfg: &Config) -> Result<FecnMarker, CosimError> {
        FecnMarker::new(*cfg).map_err(|e| CosimError::Config {
            block: Self::NAME,
            msg: e.to_string(),
        })
    }

    const CORNERS: u32 = 5;
    /// A configuration's fresh model and reset cost as much as a few thousand cycles of stepping, so a
    /// segment this long keeps them a small part of the run (cosim/README.md, Speed).
    const SEGMENT: u64 = 32_768;

    /// Corners: Packet_Size 0 (every size) with Marking_Rate 0, the largest of both, frequent marks in
    /// counter mode and in LFSR mode, and a Packet_Size whose boundary the 13-bit length can reach with
    /// frequent marks (where the size check decides).
    fn configure(seed: u64, corner: Option<u32>) -> (Config, FecnMarkerStim) {
        let mut r = Rng::new(seed ^ 0xfec0_0000);
        let mut cfg = Config {
            packet_size: if r.pct(80) {
                r.below(33) as u8
            } else {
                r.below(256) as u8
            },
            marking_rate: if r.pct(80) {
                r.below(20) as u16
            } else {
                r.below(65536) as u16
            },
            mode: if r.pct(50) {
                MarkMode::Counter
            } else {
                MarkMode::Lfsr
            },
            lfsr_seed: r.range(1, 0xffff) as u16,
        };
        match corner {
            Some(0) => {
                (cfg.packet_size, cfg.marking_rate) = (0, 0);
                cfg.mode = MarkMode::Counter;
            }
            Some(1) => {
                (cfg.packet_size, cfg.marking_rate) = (255, u16::MAX);
                cfg.mode = MarkMode::Lfsr;
            }
            Some(2) => {
                cfg.marking_rate = r.range(1, 8) as u16;
                cfg.mode = MarkMode::Counter;
            }
            Some(3) => {
                cfg.marking_rate = r.range(0, 8) as u16;
                cfg.mode = MarkMode::Lfsr;
            }
            Some(_) => {
                cfg.packet_size = r.range(1, 128) as u8;
                cfg.marking_rate = r.range(0, 4) as u16;
            }
            None => {}
        }
        let stim = FecnMarkerStim {
            rng: Rng::new(seed),
            boundary: 64 * u64::from(cfg.packet_size),
            congested: false,
            idle: false,
            phase_left: 0,
            rst_left: 0,
        };
        (cfg, stim)
    }

    fn config_ports(cfg: &Config) -> Vec<(&'static str, Wide)> {
        let thresh = FecnMarker::new(*cfg).map_or(0, |m| m.lfsr_thresh());
        vec![
            ("packet_size_i", cfg.packet_size.into()),
            ("marking_rate_i", cfg.marking_rate.into()),
            ("mode_i", Wide::from(cfg.mode == MarkMode::Lfsr)),
            ("lfsr_seed_i", cfg.lfsr_seed.into()),
            ("lfsr_thresh_i", thresh.into()),
        ]
    }

    /// `lfsr_thresh_i` is derived from Marking_Rate; a trace giving another value is rejected.
    fn config_from_ports(v: &[(String, Wide)]) -> Result<Config, String> {
        let cfg = Config {
            packet_size: held(v, "packet_size_i")? as u8,
            marking_rate: held(v, "marking_rate_i")? as u16,
            mode: if held(v, "mode_i")? != 0 {
                MarkMode::Lfsr
            } else {
                MarkMode::Counter
            },
            lfsr_seed: held(v, "lfsr_seed_i")? as u16,
        };
        let want = FecnMarker::new(cfg)
            .map_err(|e| e.to_string())?
            .lfsr_thresh();
        let got = held(v, "lfsr_thresh_i")?;
        if got != u64::from(want) {
            return Err(format!(
                "lfsr_thresh_i ({got}) is not the value marking_rate_i implies ({want})"
            ));
        }
        Ok(cfg)
    }

    #[cfg(feature = "verilator")]
    type Rtl = rtl::FecnMarkerRtl;

    #[cfg(feature = "verilator")]
    fn rtl(cfg: &Config, bug: Option<&str>) -> Result<rtl::FecnMarkerRtl, CosimError> {
        rtl::FecnMarkerRtl::new(cfg, bug)
    }
}

/// `fecn_marker`'s cover points.
#[derive(Debug, Clone, Copy)]
pub struct FecnMarkerCover;

/// What `fecn_marker`'s sampler keeps: the configuration facts it needs.
#[derive(Debug, Clone, Copy)]
pub struct FecnMarkerCovState {
    counter: bool,
    /// `64 * Packet_Size`, 0 when every size is eligible.
    boundary: u16,
    /// Whether a mark came since the last reset (the counter starts at 0, so the first needs no reload).
    marked: bool,
}

impl Cover for FecnMarkerCover {
    const POINTS: &'static [Point] = &[
        bin("size_zero", "Packet_Size 0: every size eligible"),
        bin("size_max", "Packet_Size 255"),
        bin("rate_zero", "Marking_Rate 0: every eligible packet marked"),
        bin("rate_max", "Marking_Rate 65,535"),
        bin("counter_mode", "counter mode"),
        bin("lfsr_mode", "LFSR mode"),
        event("packet", "a packet while congested"),
        event("mark", "a mark"),
        event(
            "counter_reload",
            "a mark in counter mode with a nonzero Marking_Rate (the counter reloads)",
        ),
        event("lfsr_mark", "a mark in LFSR mode"),
        event(
            "size_just_below",
            "a packet 1-63 bytes short of 64 * Packet_Size while congested",
        ),
        event(
            "size_at_boundary",
            "a packet of exactly 64 * Packet_Size bytes while congested",
        ),
        event("reset", "a reset cycle"),
        event(
            "lfsr_unmarked",
            "an eligible packet in LFSR mode left unmarked (the LFSR still advances)",
        ),
    ];
    const EXPOSED_BY: &'static [(&'static str, &'static str)] = &[
        ("BUG_COUNTER_RELOAD", "counter_reload"),
        ("BUG_PACKET_SIZE", "size_just_below"),
        ("BUG_LFSR_STALL", "lfsr_unmarked"),
    ];
    type Config = Config;
    type In = In;
    type Out = Out;
    type Model = FecnMarker;
    type State = FecnMarkerCovState;

    fn begin(c: &Config, h: &mut Hits) -> FecnMarkerCovState {
        count(h, 0, c.packet_size == 0);
        count(h, 1, c.packet_size == u8::MAX);
        count(h, 2, c.marking_rate == 0);
        count(h, 3, c.marking_rate == u16::MAX);
        count(h, 4, c.mode == MarkMode::Counter);
        count(h, 5, c.mode == MarkMode::Lfsr);
        FecnMarkerCovState {
            counter: c.mode == MarkMode::Counter,
            boundary: 64 * u16::from(c.packet_size),
            marked: false,
        }
    }

    #[inline(always)]
    fn sample(st: &mut FecnMarkerCovState, _: &FecnMarker, i: &In, o: &Out, h: &mut Hits) {
        let pkt = i.rst_ni & i.pkt_valid_i & i.mark_state_i;
        let bytes = i.pkt_bytes_i & 0x1fff;
        let mark = i.rst_ni & o.mark_o;
        count(h, 6, pkt);
        count(h, 7, mark);
        count(h, 8, mark & st.counter & st.marked);
        st.marked = (st.marked | mark) & i.rst_ni;
        count(h, 9, mark & !st.counter);
        count(
            h,
            10,
            pkt & (st.boundary != 0) & (bytes < st.boundary) & (bytes + 64 > st.boundary),
        );
        count(h, 11, pkt & (st.boundary != 0) & (bytes == st.boundary));
        count(h, 12, !i.rst_ni);
        let eligible = pkt & ((st.boundary == 0) | (bytes >= st.boundary));
        count(h, 13, eligible & !st.counter & !o.mark_o);
    }
}

/// The adapter to the Verilated `fecn_marker`.
#[cfg(feature = "verilator")]
pub mod rtl {
    use super::*;
    use crate::blocks::mask;
    use crate::dut::Dut;
    use crate::ffi::{FecnMarkerIo, Rtl, FECN_MARKER_VARIANTS};
    use rtl_model::blocks::fecn_marker::BYTES_WIDTH;

    /// The Verilated `fecn_marker` (clean or a bug variant) with its configuration on the held ports.
    #[derive(Debug)]
    pub struct FecnMarkerRtl {
        m: Rtl<FecnMarkerIo>,
        io: FecnMarkerIo,
    }

    impl FecnMarkerRtl {
        /// Builds the model, drives the configuration and applies one power-on reset edge.
        pub fn new(cfg: &Config, bug: Option<&str>) -> Result<Self, CosimError> {
            let thresh = FecnMarker::new(*cfg)
                .map_err(|e| CosimError::Config {
                    block: "fecn_marker",
                    msg: e.to_string(),
                })?
                .lfsr_thresh();
            let m = Rtl::new("fecn_marker", FECN_MARKER_VARIANTS, bug)?;
            let io = FecnMarkerIo {
                packet_size_i: cfg.packet_size.into(),
                marking_rate_i: cfg.marking_rate.into(),
                mode_i: u32::from(cfg.mode == MarkMode::Lfsr),
                lfsr_seed_i: cfg.lfsr_seed.into(),
                lfsr_thresh_i: thresh & mask(17),
                ..FecnMarkerIo::default()
            };
            let mut s = FecnMarkerRtl { m, io };
            s.step(&In::default())
                .map_err(|kind| CosimError::Halted { cycle: 0, kind })?;
            s.m.time_zero();
            Ok(s)
        }
    }

    impl FecnMarkerRtl {
        /// Writes one cycle's inputs (masked to the port widths) into the port struct.
        #[inline]
        fn drive(&mut self, i: &In) {
            let io = &mut self.io;
            io.rst_ni = i.rst_ni.into();
            io.pkt_valid_i = i.pkt_valid_i.into();
            io.pkt_bytes_i = u32::from(i.pkt_bytes_i) & mask(BYTES_WIDTH);
            io.mark_state_i = i.mark_state_i.into();
        }
    }

    crate::rtl_dut!(FecnMarkerRtl [FecnMarkerIo]: In => Out {
        mark_o: |v| *v != 0,
        cfg_err_o: |v| *v as u8,
    });
}
