//! DCQCN reaction point (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM 2015), the
//! de-facto RoCEv2 algorithm, in fixed point. Its notification point is the HCA's ([`crate::hca::Hca::set_cnp_interval`]:
//! a CNP on ECN CE, at most one per flow per minimum interval, 50 us in the paper's NP).
//!
//! Per flow: current rate `Rc`, target rate `Rt` (bit/s), and `alpha` in Q20 (`2^20` = 1.0).
//! - **CNP**: `Rt = Rc`; `Rc = max(Rc * (1 - alpha/2), R_min)` (the cut uses alpha before this CNP's update);
//!   `alpha = (1 - g) alpha + g`; the alpha timer, the rate-increase timer, the byte counter and both stage
//!   counters restart.
//! - **Alpha timer** (period `K`): when it expires without a CNP since it was set, `alpha = (1 - g) alpha`.
//! - **Rate increase**, on each expiry of the increase timer (period `T`) and each `B` bytes sent (byte
//!   counter): with `t`, `b` the number of such events since the last CNP *before* this one (as the HPCC ns-3
//!   model and the Mellanox-derived isekai model count):
//!   fast recovery if `max(t, b) < F`: `Rc = (Rt + Rc) / 2`;
//!   hyper increase if `min(t, b) > F`: `Rt += R_HAI`, then `Rc = (Rt + Rc) / 2`;
//!   additive increase otherwise: `Rt += R_AI`, then `Rc = (Rt + Rc) / 2`.
//!   With the byte counter disabled (`B = 0`) only `t` counts, which is the HPCC ns-3 model exactly (stages
//!   `< F` fast recovery, `= F` additive, `> F` hyper). `Rt` never exceeds the maximum rate.
//! - Before the first CNP the flow runs at the maximum rate and alpha is [`DcqcnConfig::initial_alpha_q20`]
//!   (1.0 in the paper). Timers stop when they can change nothing (alpha 0; `Rc = Rt =` maximum).
//!
//! Fixed point: `alpha` and `g` are Q20 integers. `(1 - g) alpha` is `floor(alpha * (2^20 - g) / 2^20)`, so
//! alpha decays to exactly 0 (as the Mellanox firmware's `alpha * G / 1024` does); the cut is
//! `Rc - floor(Rc * alpha / 2^21)`; the averages `(Rt + Rc) / 2` round up, so `Rc` reaches `Rt` (rounding
//! down would leave it one bit/s short forever). Rates are u64 bit/s, products in u128.
//!
//! Defaults ([`DcqcnConfig::ns3_defaults`]): the DCQCN authors' ns-3 code (bobzhuyb/ns3-rdma,
//! `qbb-net-device.cc`: CNPInterval 50 us, AlphaResumInterval 55 us, RPTimer 1500 us, FastRecoveryTimes 5,
//! g = 1/16, MinRate 100 Mb/s, ByteCounter 150 000 B, RateAI 5 Mb/s, RateHAI 50 Mb/s); HPCC's ns-3 model
//! (alibaba-edu/High-Precision-Congestion-Control, `rdma-hw.cc`) uses the same values without a byte
//! counter. The paper's own evaluation settings as quoted by a validation of the authors' code
//! (sc20anonymous/DCQCN-validation: timer 50 us, byte counter 10 MB, g = 1/256) are
//! [`DcqcnConfig::paper_defaults`]. The Mellanox firmware defaults (NVIDIA "DCQCN CC parameters":
//! `dce_tcp_g` 1019/1024, i.e. g = 5/1024, `rpg_time_reset` 300 us, `rpg_ai_rate` 5 Mb/s, `rpg_hai_rate`
//! 50 Mb/s) batch rate cuts per `rate_reduce_monitor_period`, which is not modelled here.

use super::pacer::Pacer;
use super::{Feedback, RateController, Sent};
use crate::error::{at_most, nonzero, CcError};
use crate::units::{Bps, CoreClock, Cycle};

/// 1.0 in Q20.
pub const ALPHA_ONE: u32 = 1 << 20;

/// DCQCN reaction-point settings. Times in cycles; rates in bit/s.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DcqcnConfig {
    /// Core clock.
    pub clock: CoreClock,
    /// The flow's maximum rate: the line rate or a lower cap.
    pub max_rate: Bps,
    /// Lowest rate a cut may reach.
    pub min_rate: Bps,
    /// Gain `g` in Q20 (1/16 = 65 536; 1/256 = 4096).
    pub g_q20: u32,
    /// Alpha before the first CNP, Q20 (the paper: 1.0).
    pub initial_alpha_q20: u32,
    /// Alpha update period `K`, cycles.
    pub alpha_period: Cycle,
    /// Rate-increase timer period `T`, cycles.
    pub increase_period: Cycle,
    /// Byte counter `B`, bytes; 0 disables it.
    pub byte_counter: u64,
    /// Fast-recovery stages `F`.
    pub fast_recovery_stages: u32,
    /// Additive increase step `R_AI`.
    pub rate_ai: Bps,
    /// Hyper increase step `R_HAI`.
    pub rate_hai: Bps,
}

impl DcqcnConfig {
    /// The DCQCN authors' ns-3 defaults (see the module doc) for a flow whose maximum is `max_rate`.
    pub fn ns3_defaults(clock: CoreClock, max_rate: Bps) -> Self {
        DcqcnConfig {
            clock,
            max_rate,
            min_rate: 100_000_000,
            g_q20: ALPHA_ONE / 16,
            initial_alpha_q20: ALPHA_ONE,
            alpha_period: clock.us_to_cycles(55),
            increase_period: clock.us_to_cycles(1500),
            byte_counter: 150_000,
            fast_recovery_stages: 5,
            rate_ai: 5_000_000,
            rate_hai: 50_000_000,
        }
    }

    /// The paper's evaluation settings as quoted in the module doc (timer 50 us, byte counter 10 MB,
    /// g = 1/256, alpha period 55 us), other values as [`DcqcnConfig::ns3_defaults`].
    pub fn paper_defaults(clock: CoreClock, max_rate: Bps) -> Self {
        DcqcnConfig {
            g_q20: ALPHA_ONE / 256,
            increase_period: clock.us_to_cycles(50),
            byte_counter: 10_000_000,
            ..Self::ns3_defaults(clock, max_rate)
        }
    }

    /// Checks: nonzero rates, steps and periods, `min_rate <= max_rate`, `g` and initial alpha at most 1.0.
    /// (Zero increase steps would leave the flow below its maximum forever with its timer running.)
    pub fn validate(&self) -> Result<(), CcError> {
        nonzero("rate_ai", self.rate_ai)?;
        nonzero("rate_hai", self.rate_hai)?;
        nonzero("max_rate", self.max_rate)?;
        nonzero("min_rate", self.min_rate)?;
        at_most("min_rate", self.min_rate, "max_rate", self.max_rate)?;
        nonzero("g_q20", self.g_q20.into())?;
        at_most("g_q20", self.g_q20.into(), "1.0 in Q20", ALPHA_ONE.into())?;
        at_most(
            "initial_alpha_q20",
            self.initial_alpha_q20.into(),
            "1.0 in Q20",
            ALPHA_ONE.into(),
        )?;
        nonzero("alpha_period", self.alpha_period)?;
        nonzero("increase_period", self.increase_period)
    }
}

/// The increase phase of one rate-increase event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// `Rc = (Rt + Rc) / 2`.
    FastRecovery,
    /// `Rt += R_AI` first.
    Additive,
    /// `Rt += R_HAI` first.
    Hyper,
}

/// DCQCN reaction point of one flow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DcqcnController {
    cfg: DcqcnConfig,
    rc: Bps,
    rt: Bps,
    alpha: u32,
    alpha_deadline: Option<Cycle>,
    inc_deadline: Option<Cycle>,
    t_stage: u32,
    b_stage: u32,
    bytes: u64,
    pacer: Pacer,
}

impl DcqcnController {
    /// A flow at its maximum rate.
    pub fn new(cfg: DcqcnConfig) -> Result<Self, CcError> {
        cfg.validate()?;
        Ok(DcqcnController {
            rc: cfg.max_rate,
            rt: cfg.max_rate,
            alpha: cfg.initial_alpha_q20,
            alpha_deadline: None,
            inc_deadline: None,
            t_stage: 0,
            b_stage: 0,
            bytes: 0,
            pacer: Pacer::new(cfg.clock),
            cfg,
        })
    }

    /// Current rate `Rc`.
    pub fn current(&self) -> Bps {
        self.rc
    }

    /// Target rate `Rt`.
    pub fn target(&self) -> Bps {
        self.rt
    }

    /// Alpha, Q20.
    pub fn alpha_q20(&self) -> u32 {
        self.alpha
    }

    fn decay(&self, a: u32) -> u32 {
        ((u64::from(a) * u64::from(ALPHA_ONE - self.cfg.g_q20)) >> 20) as u32
    }

    /// The phase the next increase event would run in.
    pub fn phase(&self) -> Phase {
        let f = self.cfg.fast_recovery_stages;
        let (hi, lo) = if self.cfg.byte_counter == 0 {
            (self.t_stage, self.t_stage)
        } else {
            (
                self.t_stage.max(self.b_stage),
                self.t_stage.min(self.b_stage),
            )
        };
        if hi < f {
            Phase::FastRecovery
        } else if lo > f {
            Phase::Hyper
        } else {
            Phase::Additive
        }
    }

    fn increase(&mut self) {
        let step = match self.phase() {
            Phase::FastRecovery => 0,
            Phase::Additive => self.cfg.rate_ai,
            Phase::Hyper => self.cfg.rate_hai,
        };
        self.rt = self.rt.saturating_add(step).min(self.cfg.max_rate);
        self.rc = (u128::from(self.rt) + u128::from(self.rc)).div_ceil(2) as u64;
    }

    fn at_max(&self) -> bool {
        self.rc == self.cfg.max_rate && self.rt == self.cfg.max_rate
    }

    fn cnp(&mut self, now: Cycle) {
        self.rt = self.rc;
        let cut = (u128::from(self.rc) * u128::from(self.alpha)) >> 21;
        self.rc = (self.rc - cut as u64).max(self.cfg.min_rate);
        self.alpha = (self.decay(self.alpha) + self.cfg.g_q20).min(ALPHA_ONE);
        self.alpha_deadline = Some(now.saturating_add(self.cfg.alpha_period));
        self.inc_deadline = Some(now.saturating_add(self.cfg.increase_period));
        self.t_stage = 0;
        self.b_stage = 0;
        self.bytes = 0;
    }
}

impl RateController for DcqcnController {
    fn on_feedback(&mut self, now: Cycle, fb: Feedback) {
        self.advance(now);
        let Feedback::Cnp(_) = fb;
        self.cnp(now);
    }

    fn on_sent(&mut self, sent: Sent) {
        self.advance(sent.end);
        self.pacer.sent(sent.start, sent.bytes, self.rc);
        if self.cfg.byte_counter == 0 || self.inc_deadline.is_none() {
            return;
        }
        self.bytes += u64::from(sent.bytes);
        while self.bytes >= self.cfg.byte_counter && !self.at_max() {
            self.bytes -= self.cfg.byte_counter;
            self.increase();
            self.b_stage = self.b_stage.saturating_add(1);
        }
        if self.at_max() {
            self.inc_deadline = None;
        }
    }

    fn advance(&mut self, now: Cycle) {
        loop {
            let next = match (self.alpha_deadline, self.inc_deadline) {
                (Some(a), Some(i)) => a.min(i),
                (Some(a), None) => a,
                (None, Some(i)) => i,
                (None, None) => break,
            };
            if next > now {
                break;
            }
            // Both due in the same cycle: alpha first (it does not affect the increase).
            if self.alpha_deadline == Some(next) {
                self.alpha = self.decay(self.alpha);
                self.alpha_deadline =
                    (self.alpha != 0).then(|| next.saturating_add(self.cfg.alpha_period));
            } else {
                self.increase();
                self.t_stage = self.t_stage.saturating_add(1);
                self.inc_deadline =
                    (!self.at_max()).then(|| next.saturating_add(self.cfg.increase_period));
            }
        }
    }

    fn next_send(&mut self) -> Cycle {
        self.pacer.next()
    }

    fn next_timer(&self) -> Option<Cycle> {
        match (self.alpha_deadline, self.inc_deadline) {
            (Some(a), Some(i)) => Some(a.min(i)),
            (a, i) => a.or(i),
        }
    }

    fn rate_bps(&self) -> Bps {
        self.rc
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rate::CnpInfo;

    const CNP: Feedback = Feedback::Cnp(CnpInfo::BECN);
    const G40: Bps = 40_000_000_000;

    fn cfg() -> DcqcnConfig {
        // 1 GHz: 1 us = 1000 cycles. K = 55 us, T = 1500 us, B = 150 000 B, g = 1/16.
        DcqcnConfig::ns3_defaults(CoreClock::from_khz(1_000_000).unwrap(), G40)
    }

    /// Rate after one CNP and after recovery steps, by hand (40 Gbit/s, g = 1/16, alpha starts at 1.0):
    /// - CNP at 0: Rt = 40G; Rc = 40G * (1 - 1/2) = 20G; alpha = 1 * 15/16 + 1/16 = 1.0.
    /// - Increase timer at 1500 us (t = 0 < F): fast recovery Rc = (40 + 20)/2 = 30G.
    /// - 3000 us: 35G; 4500 us: 37.5G; 6000 us: 38.75G; 7500 us: 39.375G (five fast-recovery steps, t = 0..4).
    /// - 9000 us: t = 5 = F, additive: Rt = 40G + 5M capped at 40G, Rc = (40G + 39.375G)/2 = 39.6875G.
    #[test]
    fn rate_after_cnp_and_recovery() {
        let mut c = DcqcnController::new(DcqcnConfig {
            byte_counter: 0,
            ..cfg()
        })
        .unwrap();
        c.on_feedback(0, CNP);
        assert_eq!((c.target(), c.current()), (G40, 20_000_000_000));
        assert_eq!(c.alpha_q20(), ALPHA_ONE);
        let mut seen = Vec::new();
        for k in 1..=6 {
            c.advance(k * 1_500_000);
            seen.push(c.current());
        }
        assert_eq!(
            seen,
            [
                30_000_000_000,
                35_000_000_000,
                37_500_000_000,
                38_750_000_000,
                39_375_000_000,
                39_687_500_000
            ]
        );
    }

    /// Alpha decays without CNPs and a second cut uses it: g = 1/16; after the first CNP alpha = 1.0; two alpha
    /// periods (55 us each) without CNP: alpha = 1 * (15/16)^2 = 225/256 (exact in Q20: 921 600).
    /// Second CNP at 120 us with Rc = 20G: cut = 20G * 225/512 = 8 789 062 500; Rc = 11 210 937 500;
    /// Rt = 20G; alpha = 225/256 * 15/16 + 1/16 = 3631/4096 (Q20: 929 536).
    #[test]
    fn alpha_decay_then_second_cut() {
        let mut c = DcqcnController::new(cfg()).unwrap();
        c.on_feedback(0, CNP);
        c.advance(110_000);
        assert_eq!(c.alpha_q20(), 921_600);
        c.on_feedback(120_000, CNP);
        assert_eq!(c.target(), 20_000_000_000);
        assert_eq!(c.current(), 11_210_937_500);
        assert_eq!(c.alpha_q20(), 929_536);
        assert_eq!(
            c.next_timer(),
            Some(175_000),
            "alpha timer restarted by the CNP"
        );
    }

    /// Byte counter: every 150 000 bytes one increase event; with both counters the hyper phase needs both
    /// above F. After a CNP (Rc 20G), 5 * 150 000 bytes: five fast-recovery steps by bytes (b = 0..4), then
    /// the sixth: b = 5, t = 0: max = 5 >= F, min = 0 <= F: additive.
    #[test]
    fn byte_counter_stages() {
        let mut c = DcqcnController::new(cfg()).unwrap();
        c.on_feedback(0, CNP);
        let mut t = 0;
        let mut phases = Vec::new();
        for _ in 0..6 {
            phases.push(c.phase());
            // One 150 000-byte burst reported as a packet (the counter only sums bytes).
            c.on_sent(Sent {
                start: t,
                end: t + 10,
                bytes: 150_000,
            });
            t += 11;
        }
        assert_eq!(
            phases,
            [
                Phase::FastRecovery,
                Phase::FastRecovery,
                Phase::FastRecovery,
                Phase::FastRecovery,
                Phase::FastRecovery,
                Phase::Additive
            ]
        );
        assert_eq!(c.target(), G40, "R_AI capped at the maximum");
    }

    #[test]
    fn hyper_increase_after_both_counters() {
        let mut c = DcqcnController::new(DcqcnConfig {
            max_rate: 100 * G40,
            ..cfg()
        })
        .unwrap();
        // Two CNPs: Rt = 2000G, Rc = 1000G, far below the maximum so no step is capped.
        c.on_feedback(0, CNP);
        c.on_feedback(0, CNP);
        assert_eq!((c.target(), c.current()), (50 * G40, 25 * G40));
        // Timer: 7 expiries with t = 0..=6: five fast recovery, two additive.
        c.advance(7 * 1_500_000);
        let rt = c.target();
        assert_eq!(rt, 50 * G40 + 2 * 5_000_000);
        for k in 0..7u64 {
            c.on_sent(Sent {
                start: 7 * 1_500_000 + k * 20,
                end: 7 * 1_500_000 + k * 20 + 10,
                bytes: 150_000,
            });
        }
        // Byte events with b = 0..=5: max(7, b) >= F and min(7, b) <= F: additive (six R_AI);
        // b = 6: min(7, 6) > F: hyper (one R_HAI).
        assert_eq!(c.target(), rt + 6 * 5_000_000 + 50_000_000);
    }

    #[test]
    fn timers_stop_at_the_maximum() {
        let mut c = DcqcnController::new(DcqcnConfig {
            byte_counter: 0,
            ..cfg()
        })
        .unwrap();
        assert_eq!(c.next_timer(), None);
        c.on_feedback(0, CNP);
        c.advance(10_000_000_000);
        assert_eq!(c.current(), G40);
        assert_eq!(c.next_timer(), None);
        assert_eq!(c.alpha_q20(), 0);
    }

    #[test]
    fn pacing_follows_the_rate() {
        let mut c = DcqcnController::new(cfg()).unwrap();
        c.on_feedback(0, CNP);
        // 20 Gbit/s at 1 GHz: 1000 bytes = 400 cycles start to start.
        c.on_sent(Sent {
            start: 10,
            end: 209,
            bytes: 1000,
        });
        assert_eq!(c.next_send(), 410);
    }

    /// The serde form (what a scenario file holds) round-trips, and a bad value read from it is rejected by
    /// the constructor with the setting named.
    #[test]
    fn serde_form() {
        let json = serde_json::to_string(&cfg()).unwrap();
        assert!(json.contains(r#""clock":1000000"#), "{json}");
        assert_eq!(serde_json::from_str::<DcqcnConfig>(&json).unwrap(), cfg());
        let bad = json.replace(r#""min_rate":100000000"#, r#""min_rate":0"#);
        let c: DcqcnConfig = serde_json::from_str(&bad).unwrap();
        assert_eq!(
            DcqcnController::new(c).unwrap_err().to_string(),
            "min_rate (0) is invalid: must be nonzero"
        );
        assert!(serde_json::from_str::<DcqcnConfig>(&json.replace("g_q20", "gee")).is_err());
    }

    #[test]
    fn bad_settings() {
        let e = DcqcnController::new(DcqcnConfig {
            min_rate: 2 * G40,
            ..cfg()
        })
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "min_rate (80000000000) is above max_rate (40000000000)"
        );
        assert!(DcqcnController::new(DcqcnConfig { g_q20: 0, ..cfg() }).is_err());
        assert!(DcqcnController::new(DcqcnConfig {
            g_q20: ALPHA_ONE + 1,
            ..cfg()
        })
        .is_err());
    }
}
