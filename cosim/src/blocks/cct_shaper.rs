//! `cct_shaper` under co-simulation: stimulus, ports, configuration, RTL adapter.
//!
//! The stimulus runs in phases with their own BECN rate (a burst of congestion notifications, a trickle, or
//! none, so CCTI climbs to CCTI_Limit and decays back to CCTI_Min), tick rate (every cycle, every few cycles,
//! or rarely: the timer's expiry, re-arm and stop all happen) and send pattern (a flow that sends as soon as
//! it is ready, which tests the countdown to exactly zero, or at random). Configurations: all 128 CCT
//! entries random (small multipliers half the time, so delays end within a run), small or any CCTI_Limit,
//! CCTI_Min up to the limit, small or any CCTI_Increase, CCTI_Timer 0 (off), small or any, Trigger_Threshold
//! 0 (off) or any, small or any T_pkt. Rare resets of 1-3 cycles with noise on the other inputs.
//!
//! The CCT is always 128 entries (the RTL's `cct_i` holds 128): the Rust block reads entries only up to
//! CCTI_Limit, so a shorter table behaves the same as one padded with zeros, and a trace's `cct_i` gives
//! back exactly this configuration.

use super::{held, held_wide, Block};
use crate::check::CosimError;
use crate::cover::{bin, count, event, Cover, Hits, Point};
use crate::ports::Wide;
use crate::rng::Rng;
use rtl_model::blocks::cct_shaper::{CctEntryBits, CctShaper, Config, In, Out, CCT_MAX_ENTRIES};

crate::impl_ports!(In {
    rst_ni,
    becn_i,
    tick_i,
    sent_i
});
crate::impl_ports!(Out {
    ccti_o,
    ird_o,
    ready_o,
    trigger_o,
    cfg_err_o
});

/// `cct_shaper` as a co-simulation [`Block`].
#[derive(Debug, Clone, Copy)]
pub struct CctShaperBlock;

/// Seeded random stimulus for `cct_shaper` (see the module docs).
#[derive(Debug, Clone)]
pub struct CctShaperStim {
    rng: Rng,
    /// One BECN in this many cycles (0: none) in the current phase.
    becn_every: u64,
    /// One tick in this many cycles.
    tick_every: u64,
    /// Cycles since the last send, to send about once per `send_every` cycles.
    send_every: u64,
    phase_left: u32,
    rst_left: u32,
}

impl Iterator for CctShaperStim {
    type Item = In;

    fn next(&mut self) -> Option<In> {
        let r = &mut self.rng;
        if self.rst_left == 0 && r.one_in(50_000) {
            self.rst_left = r.range(1, 3) as u32;
        }
        if self.rst_left > 0 {
            self.rst_left -= 1;
            let n = r.next_u64();
            return Some(In {
                rst_ni: false,
                becn_i: n & 1 != 0,
                tick_i: n & 2 != 0,
                sent_i: n & 4 != 0,
            });
        }
        if self.phase_left == 0 {
            self.becn_every = match r.below(4) {
                0 => 0,
                1 => r.range(1, 4),
                _ => r.range(5, 400),
            };
            self.tick_every = match r.below(3) {
                0 => 1,
                1 => r.range(2, 8),
                _ => r.range(9, 300),
            };
            self.send_every = match r.below(3) {
                0 => 1,
                _ => r.range(2, 200),
            };
            self.phase_left = r.range(100, 20_000) as u32;
        }
        self.phase_left -= 1;
        Some(In {
            rst_ni: true,
            becn_i: self.becn_every != 0 && r.one_in(self.becn_every),
            tick_i: r.one_in(self.tick_every),
            sent_i: r.one_in(self.send_every),
        })
    }
}

impl Block for CctShaperBlock {
    const NAME: &'static str = "cct_shaper";
    type Config = Config;
    type In = In;
    type Out = Out;
    type Model = CctShaper;
    type Stim = CctShaperStim;
    type Cover = CctShaperCover;

    fn model(cfg: &Config) -> Result<CctShaper, CosimError> {
        CctShaper::new(cfg.clone()).map_err(|e| CosimError::Config {
            block: Self::NAME,
            msg: e.to_string(),
        })
    }

    const CORNERS: u32 = 7;
    /// A configuration's fresh model and reset cost as much as a few thousand cycles of stepping, so a
    /// segment this long keeps them a small part of the run (cosim/README.md, Speed).
    const SEGMENT: u64 = 32_768;

    /// Corners: timer off with CCTI_Limit 0, the largest limit, CCTI_Min and timer, a short timer with a
    /// small increase (expiries that matter), an increase that overshoots a small limit, increase 0 with the
    /// trigger off, the largest Trigger_Threshold with T_pkt 0, timer 1 with the largest increase and limit.
    fn configure(seed: u64, corner: Option<u32>) -> (Config, CctShaperStim) {
        let mut r = Rng::new(seed ^ 0xcc7_5a9e);
        let limit = match r.below(3) {
            0 => r.range(0, 10),
            _ => r.range(0, 127),
        } as u16;
        let raw_mask = if r.pct(50) { 0xc00f } else { 0xffff };
        let mut cfg = Config {
            cct: (0..CCT_MAX_ENTRIES)
                .map(|_| CctEntryBits::from_raw(r.next_u64() as u16 & raw_mask))
                .collect(),
            ccti_limit: limit,
            ccti_min: r.range(0, u64::from(limit)) as u8,
            ccti_increase: match r.below(3) {
                0 => r.range(0, 3),
                1 => r.range(0, 20),
                _ => r.below(256),
            } as u8,
            ccti_timer: match r.below(4) {
                0 => 0,
                1 | 2 => r.range(1, 6),
                _ => r.below(0x1_0000),
            } as u16,
            trigger_threshold: match r.below(3) {
                0 => 0,
                1 => r.range(1, 130),
                _ => r.below(256),
            } as u8,
            t_pkt: if r.pct(50) {
                r.below(64) as u16
            } else {
                r.next_u64() as u16
            },
        };
        match corner {
            Some(0) => (cfg.ccti_timer, cfg.ccti_limit, cfg.ccti_min) = (0, 0, 0),
            Some(1) => (cfg.ccti_timer, cfg.ccti_limit, cfg.ccti_min) = (u16::MAX, 127, 127),
            Some(2) => {
                cfg.ccti_timer = r.range(1, 8) as u16;
                cfg.ccti_increase = r.range(1, 3) as u8;
                cfg.ccti_limit = r.range(20, 127) as u16;
                // Above 0, so an expiry that ignores CCTI_Min shows.
                cfg.ccti_min = r.range(1, 10) as u8;
            }
            Some(3) => {
                cfg.ccti_increase = r.range(50, 255) as u8;
                cfg.ccti_limit = r.range(1, 20) as u16;
                cfg.ccti_min = 0;
            }
            Some(4) => (cfg.ccti_increase, cfg.trigger_threshold) = (0, 0),
            Some(5) => (cfg.trigger_threshold, cfg.t_pkt) = (255, 0),
            Some(_) => {
                (cfg.ccti_timer, cfg.ccti_increase) = (1, 255);
                (cfg.ccti_limit, cfg.ccti_min) = (127, 0);
            }
            None => {}
        }
        let stim = CctShaperStim {
            rng: Rng::new(seed),
            becn_every: 0,
            tick_every: 1,
            send_every: 1,
            phase_left: 0,
            rst_left: 0,
        };
        (cfg, stim)
    }

    fn config_ports(cfg: &Config) -> Vec<(&'static str, Wide)> {
        vec![
            ("cct_i", cct_port(&cfg.cct)),
            ("ccti_limit_i", cfg.ccti_limit.into()),
            ("ccti_min_i", cfg.ccti_min.into()),
            ("ccti_increase_i", cfg.ccti_increase.into()),
            ("ccti_timer_i", cfg.ccti_timer.into()),
            ("trigger_threshold_i", cfg.trigger_threshold.into()),
            ("t_pkt_i", cfg.t_pkt.into()),
        ]
    }

    /// The table comes back with all 128 entries (see the module docs).
    fn config_from_ports(v: &[(String, Wide)]) -> Result<Config, String> {
        let cct = held_wide(v, "cct_i")?;
        let cfg = Config {
            cct: (0..CCT_MAX_ENTRIES as u32)
                .map(|e| CctEntryBits::from_raw(cct.field(16 * e, 16) as u16))
                .collect(),
            ccti_limit: held(v, "ccti_limit_i")? as u16,
            ccti_min: held(v, "ccti_min_i")? as u8,
            ccti_increase: held(v, "ccti_increase_i")? as u8,
            ccti_timer: held(v, "ccti_timer_i")? as u16,
            trigger_threshold: held(v, "trigger_threshold_i")? as u8,
            t_pkt: held(v, "t_pkt_i")? as u16,
        };
        cfg.validate().map_err(|e| e.to_string())?;
        Ok(cfg)
    }

    #[cfg(feature = "verilator")]
    type Rtl = rtl::CctShaperRtl;

    #[cfg(feature = "verilator")]
    fn rtl(cfg: &Config, bug: Option<&str>) -> Result<rtl::CctShaperRtl, CosimError> {
        rtl::CctShaperRtl::new(cfg, bug)
    }
}

/// The CCT as the flattened `cct_i` port: entry e's wire form at [16e +: 16].
fn cct_port(cct: &[CctEntryBits]) -> Wide {
    let mut w = Wide::ZERO;
    for (e, x) in (0u32..).zip(cct) {
        w.set_field(16 * e, 16, x.to_raw().into());
    }
    w
}

/// `cct_shaper`'s cover points.
#[derive(Debug, Clone, Copy)]
pub struct CctShaperCover;

/// What `cct_shaper`'s sampler keeps.
#[derive(Debug, Clone, Copy)]
pub struct CctShaperCovState {
    limit: u16,
    min: u16,
    inc: u16,
    last_ccti: u16,
    last_on: bool,
    /// The model's timer after the last edge (ticks to expiry, 0: stopped).
    timer: u16,
}

impl Cover for CctShaperCover {
    const POINTS: &'static [Point] = &[
        bin("timer_off", "CCTI_Timer 0 (off)"),
        bin("timer_max", "CCTI_Timer 65,535"),
        bin("limit_zero", "CCTI_Limit 0"),
        bin("limit_max", "CCTI_Limit 127"),
        bin("increase_zero", "CCTI_Increase 0"),
        bin("increase_max", "CCTI_Increase 255"),
        bin("trigger_off", "Trigger_Threshold 0 (off)"),
        bin("min_at_limit", "CCTI_Min equal to CCTI_Limit"),
        event("becn", "a BECN"),
        event("ccti_at_limit", "CCTI at CCTI_Limit"),
        event("ccti_at_min", "CCTI at CCTI_Min"),
        event(
            "becn_clamped",
            "a BECN whose increase passes CCTI_Limit (clamped)",
        ),
        event(
            "timer_expiry",
            "the timer expires (a tick with one tick left)",
        ),
        event(
            "expiry_with_becn",
            "the timer expires in the same cycle as a BECN",
        ),
        event("trigger", "trigger_o"),
        event("ird_saturated", "IRD saturated at 2^24 - 1"),
        event("reset", "a reset cycle"),
        event("ccti_lowered", "the timer lowers CCTI"),
    ];
    const EXPOSED_BY: &'static [(&'static str, &'static str)] = &[
        ("BUG_TIMER_LATE", "timer_expiry"),
        ("BUG_CCTI_LIMIT", "becn_clamped"),
        ("BUG_CCTI_MIN", "ccti_at_min"),
        ("BUG_BECN_FIRST", "expiry_with_becn"),
    ];
    type Config = Config;
    type In = In;
    type Out = Out;
    type Model = CctShaper;
    type State = CctShaperCovState;

    fn begin(c: &Config, h: &mut Hits) -> CctShaperCovState {
        count(h, 0, c.ccti_timer == 0);
        count(h, 1, c.ccti_timer == u16::MAX);
        count(h, 2, c.ccti_limit == 0);
        count(h, 3, c.ccti_limit == 127);
        count(h, 4, c.ccti_increase == 0);
        count(h, 5, c.ccti_increase == u8::MAX);
        count(h, 6, c.trigger_threshold == 0);
        count(h, 7, u16::from(c.ccti_min) == c.ccti_limit);
        CctShaperCovState {
            limit: c.ccti_limit,
            min: c.ccti_min.into(),
            inc: c.ccti_increase.into(),
            last_ccti: 0,
            last_on: false,
            timer: 0,
        }
    }

    #[inline(always)]
    fn sample(st: &mut CctShaperCovState, m: &CctShaper, i: &In, o: &Out, h: &mut Hits) {
        let on = i.rst_ni;
        let ccti = u16::from(o.ccti_o);
        // The timer expires in this cycle: a tick with one tick left (as the block decides it).
        let expiry = on & i.tick_i & (st.timer == 1);
        count(h, 8, on & i.becn_i);
        count(h, 9, on & (ccti == st.limit));
        count(h, 10, on & (ccti == st.min));
        count(h, 11, on & i.becn_i & (ccti + st.inc > st.limit));
        count(h, 12, expiry);
        count(h, 13, expiry & i.becn_i);
        count(h, 14, on & o.trigger_o);
        count(h, 15, on & (o.ird_o == 0xff_ffff));
        count(h, 16, !on);
        count(h, 17, on & st.last_on & (ccti < st.last_ccti));
        st.last_ccti = ccti;
        st.last_on = on;
        st.timer = m.timer_q;
    }
}

/// The adapter to the Verilated `cct_shaper`.
#[cfg(feature = "verilator")]
pub mod rtl {
    use super::*;
    use crate::dut::Dut;
    use crate::ffi::{CctShaperIo, Rtl, CCT_SHAPER_VARIANTS};

    /// The Verilated `cct_shaper` (clean or a bug variant) with its configuration on the held ports.
    #[derive(Debug)]
    pub struct CctShaperRtl {
        m: Rtl<CctShaperIo>,
        io: CctShaperIo,
    }

    impl CctShaperRtl {
        /// Builds the model, drives the configuration and applies one power-on reset edge.
        pub fn new(cfg: &Config, bug: Option<&str>) -> Result<Self, CosimError> {
            cfg.validate().map_err(|e| CosimError::Config {
                block: "cct_shaper",
                msg: e.to_string(),
            })?;
            let m = Rtl::new("cct_shaper", CCT_SHAPER_VARIANTS, bug)?;
            let mut cct_i = [0u32; 64];
            cct_i.copy_from_slice(cct_port(&cfg.cct).words());
            let io = CctShaperIo {
                cct_i,
                ccti_limit_i: cfg.ccti_limit.into(),
                ccti_min_i: cfg.ccti_min.into(),
                ccti_increase_i: cfg.ccti_increase.into(),
                ccti_timer_i: cfg.ccti_timer.into(),
                trigger_threshold_i: cfg.trigger_threshold.into(),
                t_pkt_i: cfg.t_pkt.into(),
                ..CctShaperIo::default()
            };
            let mut s = CctShaperRtl { m, io };
            s.step(&In::default())
                .map_err(|kind| CosimError::Halted { cycle: 0, kind })?;
            s.m.time_zero();
            Ok(s)
        }
    }

    impl CctShaperRtl {
        /// Writes one cycle's inputs (masked to the port widths) into the port struct.
        #[inline]
        fn drive(&mut self, i: &In) {
            let io = &mut self.io;
            io.rst_ni = i.rst_ni.into();
            io.becn_i = i.becn_i.into();
            io.tick_i = i.tick_i.into();
            io.sent_i = i.sent_i.into();
        }
    }

    crate::rtl_dut!(CctShaperRtl [CctShaperIo]: In => Out {
        ccti_o: |v| *v as u8,
        ird_o: |v| *v,
        ready_o: |v| *v != 0,
        trigger_o: |v| *v != 0,
        cfg_err_o: |v| *v as u8,
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtl_model::clocked::Clocked;

    #[test]
    fn config_survives_the_held_ports() {
        for seed in 0..100 {
            let (cfg, _) = CctShaperBlock::random(seed);
            let pairs = crate::blocks::held_pairs::<CctShaperBlock>(&cfg);
            assert_eq!(CctShaperBlock::config_from_ports(&pairs).unwrap(), cfg);
        }
    }

    /// The stimulus takes CCTI to the limit and back to the minimum, expires timers, fires the trigger and
    /// ends delays (checked on the Rust block, no Verilator needed).
    #[test]
    fn stimulus_reaches_limit_minimum_trigger_and_ready() {
        let (mut at_limit, mut back_to_min, mut triggers, mut ready_after_wait) = (0, 0, 0, 0);
        for seed in 1..=16 {
            let (cfg, stim) = CctShaperBlock::random(seed);
            let mut m = CctShaperBlock::model(&cfg).unwrap();
            let mut was_above = false;
            let mut waiting = false;
            for i in stim.take(100_000) {
                let o = m.step(&i);
                let limit = u8::try_from(cfg.ccti_limit).unwrap();
                at_limit += u32::from(limit > cfg.ccti_min && o.ccti_o == limit);
                if o.ccti_o > cfg.ccti_min {
                    was_above = true;
                } else if was_above && i.rst_ni {
                    back_to_min += 1;
                    was_above = false;
                }
                triggers += u32::from(o.trigger_o);
                if !o.ready_o {
                    waiting = true;
                } else if waiting {
                    ready_after_wait += 1;
                    waiting = false;
                }
            }
        }
        assert!(at_limit > 1000, "CCTI at the limit {at_limit} cycles");
        assert!(
            back_to_min > 50,
            "CCTI decayed to the minimum {back_to_min} times"
        );
        assert!(
            triggers > 100 && ready_after_wait > 1000,
            "triggers {triggers} ready {ready_after_wait}"
        );
    }
}
