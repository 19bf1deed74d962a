//! `fecn_marker` under co-simulation: stimulus, ports, configuration, RTL adapter.
//!
//! The stimulus alternates congested phases (`mark_state_i` high), uncongested phases and idle phases; a
//! packet starts in about a third of the cycles, mostly with a length within 64 bytes of the Packet_Size
//! boundary (`64 * packet_size`, where the size check decides), otherwise any 13-bit length, now and then with
//! garbage above the 13-bit port. Configurations: small and large Packet_Size (0 = every size), small
//! Marking_Rates (marks every few packets) and any 16-bit one, both counting modes, any nonzero LFSR seed.
//! Rare resets of 1-3 cycles, with noise on every other input.

use super::{held, Block};
use crate::check::CosimError;
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
impl_ports!(Out { mark_o });

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

    fn next(&mut self) -> Option<In> {
        let r = &mut self.rng;
        if self.rst_left == 0 && r.one_in(100_000) {
            self.rst_left = r.range(1, 3) as u32;
        }
        if self.rst_left > 0 {
            self.rst_left -= 1;
            let n = r.next_u64();
            return Some(In {
                rst_ni: false,
                pkt_valid_i: n & 1 != 0,
                pkt_bytes_i: (n >> 8) as u16,
                mark_state_i: n & 2 != 0,
            });
        }
        if self.phase_left == 0 {
            self.congested = r.pct(60);
            self.idle = r.pct(15);
            self.phase_left = r.range(1, 500) as u32;
        }
        self.phase_left -= 1;
        let mut i = In {
            rst_ni: true,
            mark_state_i: self.congested,
            ..In::default()
        };
        if !self.idle && r.one_in(3) {
            i.pkt_valid_i = true;
            i.pkt_bytes_i = if r.pct(60) {
                (self.boundary + r.below(129))
                    .saturating_sub(64)
                    .min(0x1fff) as u16
            } else {
                r.below(0x2000) as u16
            };
            if r.one_in(50) {
                i.pkt_bytes_i |= 0xe000; // beyond the 13-bit port
            }
        } else {
            i.pkt_bytes_i = r.next_u64() as u16; // floats while not valid
        }
        Some(i)
    }
}

impl Block for FecnMarkerBlock {
    const NAME: &'static str = "fecn_marker";
    type Config = Config;
    type In = In;
    type Out = Out;
    type Model = FecnMarker;
    type Stim = FecnMarkerStim;

    fn model(cfg: &Config) -> Result<FecnMarker, CosimError> {
        FecnMarker::new(*cfg).map_err(|e| CosimError::Config {
            block: Self::NAME,
            msg: e.to_string(),
        })
    }

    fn random(seed: u64) -> (Config, FecnMarkerStim) {
        let mut r = Rng::new(seed ^ 0xfec0_0000);
        let cfg = Config {
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
    });
}
