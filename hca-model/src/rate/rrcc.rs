//! Sender side of the receiver-driven CC of Zhang, Qian and Ren (ICPP 2021, seed 002), algorithm 2, per QP or
//! SL. The receiver side (algorithm 1) is [`crate::np::rrcc::RrccReceiver`].
//!
//! ```text
//! CNP with BECN:     target = current; current = receive_rate * d
//! CNP without BECN:  if this is the 3rd consecutive one: target = target + R_AI
//!                    current = (current + target) / 2
//! ```
//!
//! Named choices (the slides leave them open):
//! - "consecutive 3 CNPs without BECN": a run counter of BECN-less CNPs, reset by a CNP with BECN; the
//!   increase fires when the run reaches [`RrccSenderConfig::consecutive`] (3) and the counter restarts, so
//!   a long run adds `R_AI` on every third CNP.
//! - `d` is a Q10 fraction (`d_q10 / 1024`); `receive_rate * d` rounds down.
//! - A CNP with BECN that carries no receive rate (a plain IB CNP) uses the current rate as the receive rate.
//! - Rates stay within `[min_rate, max_rate]`; `(current + target) / 2` rounds up so current reaches target.
//! - The flow starts at `max_rate` with target = `max_rate`. ACKs do nothing.

use super::pacer::Pacer;
use super::{Feedback, RateController, Sent};
use crate::error::{at_most, nonzero, CcError};
use crate::units::{Bps, CoreClock, Cycle};

/// Sender settings.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RrccSenderConfig {
    /// Core clock.
    pub clock: CoreClock,
    /// The flow's maximum rate (line rate or cap).
    pub max_rate: Bps,
    /// Lowest rate.
    pub min_rate: Bps,
    /// `d` in Q10 (1024 = 1.0); at most 1.0.
    pub d_q10: u32,
    /// Additive increase `R_AI`.
    pub rate_ai: Bps,
    /// BECN-less CNPs in a row before `target += R_AI` (the paper: 3).
    pub consecutive: u32,
}

impl RrccSenderConfig {
    /// Checks ranges.
    pub fn validate(&self) -> Result<(), CcError> {
        nonzero("max_rate", self.max_rate)?;
        nonzero("min_rate", self.min_rate)?;
        at_most("min_rate", self.min_rate, "max_rate", self.max_rate)?;
        nonzero("d_q10", self.d_q10.into())?;
        at_most("d_q10", self.d_q10.into(), "1.0 in Q10", 1024)?;
        nonzero("consecutive", self.consecutive.into())
    }
}

/// Algorithm 2 for one flow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RrccSender {
    cfg: RrccSenderConfig,
    current: Bps,
    target: Bps,
    run: u32,
    pacer: Pacer,
}

impl RrccSender {
    /// A flow at its maximum rate.
    pub fn new(cfg: RrccSenderConfig) -> Result<Self, CcError> {
        cfg.validate()?;
        Ok(RrccSender {
            current: cfg.max_rate,
            target: cfg.max_rate,
            run: 0,
            pacer: Pacer::new(cfg.clock),
            cfg,
        })
    }

    /// Current rate.
    pub fn current(&self) -> Bps {
        self.current
    }

    /// Target rate.
    pub fn target(&self) -> Bps {
        self.target
    }

    fn clamp(&self, r: Bps) -> Bps {
        r.clamp(self.cfg.min_rate, self.cfg.max_rate)
    }
}

impl RateController for RrccSender {
    fn on_feedback(&mut self, _now: Cycle, fb: Feedback) {
        let Feedback::Cnp(cnp) = fb;
        if cnp.becn {
            self.run = 0;
            self.target = self.current;
            let rr = cnp.receive_rate.unwrap_or(self.current);
            let d = (u128::from(rr) * u128::from(self.cfg.d_q10)) >> 10;
            self.current = self.clamp(d as u64);
        } else {
            self.run += 1;
            if self.run >= self.cfg.consecutive {
                self.run = 0;
                self.target = self.clamp(self.target.saturating_add(self.cfg.rate_ai));
            }
            self.current =
                self.clamp((u128::from(self.current) + u128::from(self.target)).div_ceil(2) as u64);
        }
    }

    fn on_sent(&mut self, sent: Sent) {
        self.pacer.sent(sent.start, sent.bytes, self.current);
    }

    fn advance(&mut self, _now: Cycle) {}

    fn next_send(&mut self) -> Cycle {
        self.pacer.next()
    }

    fn next_timer(&self) -> Option<Cycle> {
        None
    }

    fn rate_bps(&self) -> Bps {
        self.current
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rate::CnpInfo;

    fn sender() -> RrccSender {
        RrccSender::new(RrccSenderConfig {
            clock: CoreClock::from_khz(1_000_000).unwrap(),
            max_rate: 32_000_000_000,
            min_rate: 100_000_000,
            d_q10: 922, // 0.900390625
            rate_ai: 1_000_000_000,
            consecutive: 3,
        })
        .unwrap()
    }

    fn cnp(becn: bool, rate: Option<Bps>) -> Feedback {
        Feedback::Cnp(CnpInfo {
            becn,
            receive_rate: rate,
        })
    }

    /// By hand, 32G line, d = 922/1024, R_AI = 1G:
    /// - BECN with receive rate 10G: target = 32G; current = 10G * 922 / 1024 = 9 003 906 250.
    /// - No BECN: current = ceil((9 003 906 250 + 32G) / 2) = 20 501 953 125.
    /// - BECN with 16G: target = 20 501 953 125; current = 16G * 922/1024 = 14 406 250 000.
    /// - No BECN x2: current = 17 454 101 563 (ceil of 17 454 101 562.5), then 18 978 027 344.
    /// - Third in a row: target = 21 501 953 125 first, current = ceil((18 978 027 344 + 21 501 953 125)/2)
    ///   = 20 239 990 235 (ceil of ...234.5).
    #[test]
    fn decisions_by_hand() {
        let mut s = sender();
        s.on_feedback(0, cnp(true, Some(10_000_000_000)));
        assert_eq!((s.target(), s.current()), (32_000_000_000, 9_003_906_250));
        s.on_feedback(1, cnp(false, None));
        assert_eq!(s.current(), 20_501_953_125);
        s.on_feedback(2, cnp(true, Some(16_000_000_000)));
        assert_eq!((s.target(), s.current()), (20_501_953_125, 14_406_250_000));
        s.on_feedback(3, cnp(false, None));
        s.on_feedback(4, cnp(false, None));
        assert_eq!((s.target(), s.current()), (20_501_953_125, 18_978_027_344));
        s.on_feedback(5, cnp(false, None));
        assert_eq!((s.target(), s.current()), (21_501_953_125, 20_239_990_235));
    }

    #[test]
    fn becn_resets_the_run_and_rates_stay_in_range() {
        let mut s = sender();
        s.on_feedback(0, cnp(false, None));
        s.on_feedback(0, cnp(false, None));
        s.on_feedback(0, cnp(true, Some(1)));
        assert_eq!(s.current(), 100_000_000, "clamped at min_rate");
        s.on_feedback(0, cnp(false, None));
        assert_eq!(s.target(), 32_000_000_000, "the run restarted: no R_AI yet");
        for _ in 0..100 {
            s.on_feedback(0, cnp(false, None));
        }
        assert_eq!(s.current(), 32_000_000_000);
    }

    #[test]
    fn bad_settings() {
        let mut c = sender().cfg;
        c.d_q10 = 2000;
        assert_eq!(
            RrccSender::new(c).unwrap_err().to_string(),
            "d_q10 (2000) is above 1.0 in Q10 (1024)"
        );
    }
}
