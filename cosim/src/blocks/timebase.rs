//! `timebase` under co-simulation: stimulus, ports, configuration, RTL adapter.
//!
//! The block's only stimulus input is reset: the stimulus runs free with rare resets of 1-3 cycles (so the
//! accumulator restarts at phase 0 mid-run). What varies is the configuration: a core clock given as a
//! frequency (100 MHz to 2 GHz, in kHz) or a period (500 ps to 10 ns), which sets the reduced ratio
//! `inc_i / modulus_i` on the held ports; most of them are fractional, so the remainder kept at each tick
//! matters.

use super::{held, Block};
use crate::check::CosimError;
use crate::cover::{bin, count, event, Cover, Hits, Point};
use crate::impl_ports;
use crate::ports::Wide;
use crate::rng::Rng;
use rtl_model::blocks::timebase::{ClockSpec, Config, In, Out, Timebase, TICK_PS};

impl_ports!(In { rst_ni });
impl_ports!(Out {
    tick_o,
    ts_o,
    cfg_err_o
});

/// `timebase` as a co-simulation [`Block`].
#[derive(Debug, Clone, Copy)]
pub struct TimebaseBlock;

/// Seeded random stimulus for `timebase`: reset pulses only.
#[derive(Debug, Clone)]
pub struct TimebaseStim {
    rng: Rng,
    rst_left: u32,
}

impl Iterator for TimebaseStim {
    type Item = In;

    fn next(&mut self) -> Option<In> {
        if self.rst_left == 0 && self.rng.one_in(50_000) {
            self.rst_left = self.rng.range(1, 3) as u32;
        }
        let rst = self.rst_left > 0;
        self.rst_left = self.rst_left.saturating_sub(1);
        Some(In { rst_ni: !rst })
    }
}

impl Block for TimebaseBlock {
    const NAME: &'static str = "timebase";
    type Config = Config;
    type In = In;
    type Out = Out;
    type Model = Timebase;
    type Stim = TimebaseStim;
    type Cover = TimebaseCover;

    fn model(cfg: &Config) -> Result<Timebase, CosimError> {
        Timebase::new(*cfg).map_err(|e| CosimError::Config {
            block: Self::NAME,
            msg: e.to_string(),
        })
    }

    const CORNERS: u32 = 5;
    /// The fastest block per cycle, so a fresh model weighs most against its stepping: the longest
    /// segment keeps it a small part of the run (cosim/README.md, Speed).
    const SEGMENT: u64 = 65_536;

    /// Corners: the shortest and longest period, the lowest and highest frequency (whole and fractional
    /// cycles per tick among them), and a fractional period.
    fn configure(seed: u64, corner: Option<u32>) -> (Config, TimebaseStim) {
        let mut r = Rng::new(seed ^ 0x71_3eba5e);
        let mut clock = if r.pct(50) {
            ClockSpec::FreqKhz(r.range(100_000, 2_000_000) as u32)
        } else {
            ClockSpec::PeriodPs(r.range(500, 10_000) as u32)
        };
        match corner {
            Some(0) => clock = ClockSpec::PeriodPs(500),
            Some(1) => clock = ClockSpec::PeriodPs(10_000),
            Some(2) => clock = ClockSpec::FreqKhz(100_000),
            Some(3) => clock = ClockSpec::FreqKhz(2_000_000),
            // A period that is not a whole fraction of the tick (1,024,000 ps): 997 is prime.
            Some(_) => clock = ClockSpec::PeriodPs(997 * r.range(1, 10) as u32),
            None => {}
        }
        let stim = TimebaseStim {
            rng: Rng::new(seed),
            rst_left: 0,
        };
        (Config { clock }, stim)
    }

    fn config_ports(cfg: &Config) -> Vec<(&'static str, Wide)> {
        let (inc, modulus) = cfg.ratio().unwrap_or((0, 0));
        vec![("inc_i", inc.into()), ("modulus_i", modulus.into())]
    }

    /// The clock is recovered from the ratio: a period in ps when `1_024_000 * inc / modulus` is whole, else a
    /// frequency in kHz; the ratio must then be exactly the one that clock gives.
    fn config_from_ports(v: &[(String, Wide)]) -> Result<Config, String> {
        let inc = held(v, "inc_i")?;
        let modulus = held(v, "modulus_i")?;
        if inc == 0 || modulus == 0 {
            return Err(format!(
                "inc_i ({inc}) and modulus_i ({modulus}) must be nonzero"
            ));
        }
        let tick = u64::from(TICK_PS);
        let clock = if (tick * inc) % modulus == 0 {
            ClockSpec::PeriodPs(u32::try_from(tick * inc / modulus).map_err(|e| e.to_string())?)
        } else {
            ClockSpec::FreqKhz(
                u32::try_from(modulus * 1_000_000 / (1024 * inc)).map_err(|e| e.to_string())?,
            )
        };
        let cfg = Config { clock };
        match cfg.ratio() {
            Ok((i, m)) if u64::from(i) == inc && u64::from(m) == modulus => Ok(cfg),
            _ => Err(format!(
                "inc_i {inc} / modulus_i {modulus} is not the reduced ratio of any clock"
            )),
        }
    }

    #[cfg(feature = "verilator")]
    type Rtl = rtl::TimebaseRtl;

    #[cfg(feature = "verilator")]
    fn rtl(cfg: &Config, bug: Option<&str>) -> Result<rtl::TimebaseRtl, CosimError> {
        rtl::TimebaseRtl::new(cfg, bug)
    }
}

/// `timebase`'s cover points.
#[derive(Debug, Clone, Copy)]
pub struct TimebaseCover;

impl Cover for TimebaseCover {
    const POINTS: &'static [Point] = &[
        bin("period", "clock given as a period"),
        bin("frequency", "clock given as a frequency"),
        bin("whole_ratio", "a whole number of cycles per tick"),
        bin("fractional_ratio", "a fractional number of cycles per tick"),
        bin(
            "fastest_tick",
            "fewest cycles per tick (period 10,000 ps or 100 MHz)",
        ),
        bin(
            "slowest_tick",
            "most cycles per tick (period 500 ps or 2 GHz)",
        ),
        event("tick", "a tick"),
        event(
            "tick_fractional",
            "a tick that leaves a remainder (fractional ratio)",
        ),
        event("reset", "a reset cycle"),
    ];
    const EXPOSED_BY: &'static [(&'static str, &'static str)] =
        &[("BUG_TICK_DRIFT", "tick_fractional")];
    type Config = Config;
    type In = In;
    type Out = Out;
    type Model = Timebase;
    /// Whether the ratio is fractional.
    type State = bool;

    fn begin(c: &Config, h: &mut Hits) -> bool {
        let (inc, modulus) = c.ratio().unwrap_or((1, 1));
        let frac = modulus % inc != 0;
        count(h, 0, matches!(c.clock, ClockSpec::PeriodPs(_)));
        count(h, 1, matches!(c.clock, ClockSpec::FreqKhz(_)));
        count(h, 2, !frac);
        count(h, 3, frac);
        count(
            h,
            4,
            matches!(
                c.clock,
                ClockSpec::PeriodPs(10_000) | ClockSpec::FreqKhz(100_000)
            ),
        );
        count(
            h,
            5,
            matches!(
                c.clock,
                ClockSpec::PeriodPs(500) | ClockSpec::FreqKhz(2_000_000)
            ),
        );
        frac
    }

    #[inline(always)]
    fn sample(frac: &mut bool, _: &Timebase, i: &In, o: &Out, h: &mut Hits) {
        count(h, 6, i.rst_ni & o.tick_o);
        count(h, 7, i.rst_ni & o.tick_o & *frac);
        count(h, 8, !i.rst_ni);
    }
}

/// The adapter to the Verilated `timebase`.
#[cfg(feature = "verilator")]
pub mod rtl {
    use super::*;
    use crate::dut::Dut;
    use crate::ffi::{Rtl, TimebaseIo, TIMEBASE_VARIANTS};

    /// The Verilated `timebase` (clean or a bug variant) with its ratio on the held ports.
    #[derive(Debug)]
    pub struct TimebaseRtl {
        m: Rtl<TimebaseIo>,
        io: TimebaseIo,
    }

    /// The held-port values (`inc_i`, `modulus_i`) of a configuration.
    fn ratio(cfg: &Config) -> Result<(u32, u32), CosimError> {
        cfg.ratio().map_err(|e| CosimError::Config {
            block: "timebase",
            msg: e.to_string(),
        })
    }

    impl TimebaseRtl {
        /// Builds the model, drives the configuration and applies one power-on reset edge.
        pub fn new(cfg: &Config, bug: Option<&str>) -> Result<Self, CosimError> {
            let (inc_i, modulus_i) = ratio(cfg)?;
            let m = Rtl::new("timebase", TIMEBASE_VARIANTS, bug)?;
            let io = TimebaseIo {
                inc_i,
                modulus_i,
                ..TimebaseIo::default()
            };
            let mut s = TimebaseRtl { m, io };
            s.step(&In::default())
                .map_err(|kind| CosimError::Halted { cycle: 0, kind })?;
            s.m.time_zero();
            Ok(s)
        }
    }

    impl TimebaseRtl {
        /// Writes one cycle's inputs (masked to the port widths) into the port struct.
        #[inline]
        fn drive(&mut self, i: &In) {
            let io = &mut self.io;
            io.rst_ni = i.rst_ni.into();
        }
    }

    crate::rtl_dut!(TimebaseRtl [TimebaseIo]: In => Out {
        tick_o: |v| *v != 0,
        ts_o: |v| *v,
        cfg_err_o: |v| *v as u8,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_survives_the_held_ports() {
        for seed in 0..200 {
            let (cfg, _) = TimebaseBlock::random(seed);
            let pairs = crate::blocks::held_pairs::<TimebaseBlock>(&cfg);
            let back = TimebaseBlock::config_from_ports(&pairs).unwrap();
            // The clock may come back in the other form; the ratio the RTL sees must be the same.
            assert_eq!(back.ratio().unwrap(), cfg.ratio().unwrap(), "seed {seed}");
        }
        let bad = [
            ("inc_i".to_string(), Wide::from(3u8)),
            ("modulus_i".to_string(), Wide::from(7u8)),
        ];
        assert!(TimebaseBlock::config_from_ports(&bad).is_err());
    }
}
