//! The source response functions of the thesis (seed 003, sections 3.3.2-3.3.3; see
//! `reference/thesis-003-digest.md`): the rate `r` moves up by `f_inc(r)` on every unmarked ACK and down by
//! `f_dec(r)` on every marked ACK (and, here, on every CNP: a named choice, CNPs being the IB/RoCE way of
//! saying "marked").
//!
//! - FIMD (eq. 3.11-3.12): `f_dec(r) = max(r / n, R_min)`, `f_inc(r) = min(r * n^(R_min / r), R_max)`.
//! - PIPD (eq. 3.6, 3.10): `f_dec(r) = max(r^(1/m), R_min)`, `f_inc(r) = min(r^(m^(R_min / r)), R_max)`.
//!
//! **Units.** FIMD depends on `r` only through `R_min / r`, so any unit gives the same behaviour. PIPD takes
//! powers of `r` itself, so its behaviour depends on the unit, which the thesis never states (its tables give
//! rates of 1e4..3e5 "units"). Here rates are integers in units of [`SrfConfig::unit_bps`] bit/s, chosen by
//! the user; the pacing rate is `r * unit_bps`. With any practical unit `r^(1/4)` is far below `R_min`, so
//! PIPD's decrease goes straight to `R_min` and a few unmarked ACKs bring the rate back to `R_max`: that is
//! what the formula says, and a test shows it.
//!
//! **Fixed point.** `n^x` and `r^y` are computed as `2^(x log2 n)` with the Q32 [`super::fixed`] functions;
//! results round down, increases never return less than `r` and decreases never more than `r`. `n`, `m` are
//! integers >= 2 (the thesis uses 4).

use super::fixed::{exp2_int, exp2_q32, log2_q32, FRAC_BITS};
use super::pacer::Pacer;
use super::{Feedback, RateController, Sent};
use crate::error::{at_most, nonzero, CcError};
use crate::units::{Bps, CoreClock, Cycle};

/// Which response function.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResponseFunction {
    /// Fast increase, multiplicative decrease with factor `n`.
    Fimd {
        /// `n >= 2` (thesis: 4).
        n: u32,
    },
    /// Power increase, power decrease with exponent `m`.
    Pipd {
        /// `m >= 2` (thesis: 4).
        m: u32,
    },
}

/// Settings. Rates in units of `unit_bps`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SrfConfig {
    /// Core clock.
    pub clock: CoreClock,
    /// The function.
    pub function: ResponseFunction,
    /// Bit/s of one rate unit.
    pub unit_bps: u64,
    /// `R_max` in units (the line rate or a cap).
    pub rmax: u64,
    /// `R_min` in units (thesis: `R_max / 256`, or `R_max / 128` for high priority under PIPD).
    pub rmin: u64,
    /// Rate at start, in `[R_min, R_max]` (the thesis's analysis starts at `R_min`).
    pub initial: u64,
}

impl SrfConfig {
    /// Checks ranges: `n, m >= 2`, `1 <= R_min <= initial <= R_max`, `R_max * unit_bps` fits 64 bits.
    pub fn validate(&self) -> Result<(), CcError> {
        let (name, k) = match self.function {
            ResponseFunction::Fimd { n } => ("n", n),
            ResponseFunction::Pipd { m } => ("m", m),
        };
        if k < 2 {
            return Err(CcError::Invalid {
                setting: name,
                value: k.into(),
                reason: "the factor/exponent must be at least 2",
            });
        }
        nonzero("unit_bps", self.unit_bps)?;
        nonzero("rmin", self.rmin)?;
        at_most("rmin", self.rmin, "rmax", self.rmax)?;
        at_most("rmin", self.rmin, "initial", self.initial)?;
        at_most("initial", self.initial, "rmax", self.rmax)?;
        if self.rmax.checked_mul(self.unit_bps).is_none() {
            return Err(CcError::Invalid {
                setting: "rmax",
                value: self.rmax,
                reason: "rmax * unit_bps does not fit 64 bits",
            });
        }
        Ok(())
    }

    /// `f_dec(r)`.
    pub fn dec(&self, r: u64) -> u64 {
        let v = match self.function {
            ResponseFunction::Fimd { n } => r / u64::from(n),
            ResponseFunction::Pipd { m } => {
                exp2_int(log2_q32(r.max(1)) / u64::from(m)).unwrap_or(u64::MAX)
            }
        };
        v.min(r).max(self.rmin)
    }

    /// `k^(R_min / r)` in Q32, `k >= 2`, `r >= 1`.
    fn pow_ratio(&self, k: u32, r: u64) -> u64 {
        let e = u128::from(log2_q32(k.into())) * u128::from(self.rmin) / u128::from(r.max(1));
        u64::try_from(e).ok().and_then(exp2_q32).unwrap_or(u64::MAX)
    }

    /// `f_inc(r)`.
    pub fn inc(&self, r: u64) -> u64 {
        let v = match self.function {
            ResponseFunction::Fimd { n } => {
                let y = self.pow_ratio(n, r);
                u64::try_from((u128::from(r) * u128::from(y)) >> FRAC_BITS).unwrap_or(u64::MAX)
            }
            ResponseFunction::Pipd { m } => {
                let y = self.pow_ratio(m, r);
                let p = (u128::from(log2_q32(r.max(1))) * u128::from(y)) >> FRAC_BITS;
                if p > u128::from(log2_q32(self.rmax)) {
                    self.rmax
                } else {
                    exp2_int(p as u64).unwrap_or(u64::MAX)
                }
            }
        };
        v.max(r).min(self.rmax)
    }
}

/// A flow under FIMD or PIPD.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SrfController {
    cfg: SrfConfig,
    r: u64,
    pacer: Pacer,
}

impl SrfController {
    /// A flow at `initial`.
    pub fn new(cfg: SrfConfig) -> Result<Self, CcError> {
        cfg.validate()?;
        Ok(SrfController {
            r: cfg.initial,
            pacer: Pacer::new(cfg.clock),
            cfg,
        })
    }

    /// The rate in units.
    pub fn rate_units(&self) -> u64 {
        self.r
    }
}

impl RateController for SrfController {
    fn on_feedback(&mut self, _now: Cycle, fb: Feedback) {
        self.r = match fb {
            Feedback::Ack { ecn_echo: false } => self.cfg.inc(self.r),
            Feedback::Ack { ecn_echo: true } | Feedback::Cnp(_) => self.cfg.dec(self.r),
        };
    }

    fn on_sent(&mut self, sent: Sent) {
        self.pacer.sent(sent.start, sent.bytes, self.rate_bps());
    }

    fn advance(&mut self, _now: Cycle) {}

    fn next_send(&mut self) -> Cycle {
        self.pacer.next()
    }

    fn next_timer(&self) -> Option<Cycle> {
        None
    }

    fn rate_bps(&self) -> Bps {
        self.r * self.cfg.unit_bps
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(function: ResponseFunction, rmin: u64, rmax: u64) -> SrfConfig {
        SrfConfig {
            clock: CoreClock::from_khz(1_000_000).unwrap(),
            function,
            unit_bps: 1000,
            rmax,
            rmin,
            initial: rmax,
        }
    }

    /// FIMD, n = 4, R_min = 1000, R_max = 256 000, by hand:
    /// dec: 256 000 -> 64 000 -> 16 000 -> 4000 -> 1000 -> 1000 (floor R_min).
    /// inc: 1000 * 4^(1000/1000) = 4000; 2000 * 4^0.5 = 4000; 4000 * 4^0.25 = 5656.85 -> 5656;
    /// 3000 * 4^(1/3) = 4762.2 -> 4762; near R_max: 255 000 * 4^(1/255) = 256 390 -> capped at 256 000.
    #[test]
    fn fimd_by_hand() {
        let c = cfg(ResponseFunction::Fimd { n: 4 }, 1000, 256_000);
        let mut r = 256_000;
        let mut seq = vec![];
        for _ in 0..5 {
            r = c.dec(r);
            seq.push(r);
        }
        assert_eq!(seq, [64_000, 16_000, 4000, 1000, 1000]);
        assert_eq!(c.inc(1000), 4000);
        assert_eq!(c.inc(2000), 4000);
        assert_eq!(c.inc(4000), 5656);
        assert_eq!(c.inc(3000), 4762);
        assert_eq!(
            c.inc(255_000),
            256_000,
            "255 000 * 4^(1/255) = 256 390: capped"
        );
    }

    /// PIPD, m = 4, in units where the powers are visible: R_min = 2, R_max = 2^20.
    /// dec: 2^20 -> 2^5 = 32 -> 32^(1/4) = 2.38 -> 2.
    /// inc: 2^(4^(2/2)) = 2^4 = 16; 16^(4^(2/16)) = 27.04 -> 27; 32^(4^(1/16)) = 43.79 -> 43.
    #[test]
    fn pipd_by_hand() {
        let c = cfg(ResponseFunction::Pipd { m: 4 }, 2, 1 << 20);
        assert_eq!(c.dec(1 << 20), 32);
        assert_eq!(c.dec(32), 2);
        assert_eq!(c.dec(2), 2);
        assert_eq!(c.inc(2), 16);
        assert_eq!(c.inc(16), 27);
        assert_eq!(c.inc(32), 43);
        // Near R_max the step is tiny: (2^19)^(4^(2 / 2^19)) = 524 324.2.
        assert_eq!(c.inc(1 << 19), 524_324);
        assert_eq!(c.inc((1 << 20) - 1), 1 << 20, "capped at R_max");
    }

    /// With a practical unit (kbit/s, R_max = 8 Gbit/s = 8e6, R_min = R_max / 256 = 31 250) one marked ACK
    /// takes PIPD to R_min (8e6^(1/4) = 53) and unmarked ACKs climb: 31 250^(4^1) is far above R_max.
    #[test]
    fn pipd_practical_units_is_bang_bang() {
        let mut c =
            SrfController::new(cfg(ResponseFunction::Pipd { m: 4 }, 31_250, 8_000_000)).unwrap();
        c.on_feedback(0, Feedback::Ack { ecn_echo: true });
        assert_eq!(c.rate_units(), 31_250);
        c.on_feedback(0, Feedback::Ack { ecn_echo: false });
        assert_eq!(c.rate_units(), 8_000_000);
        c.on_feedback(0, Feedback::Cnp(crate::rate::CnpInfo::BECN));
        assert_eq!(c.rate_units(), 31_250);
        assert_eq!(c.rate_bps(), 31_250_000);
    }

    #[test]
    fn bad_settings() {
        let mut k = cfg(ResponseFunction::Fimd { n: 1 }, 1, 10);
        assert_eq!(
            SrfController::new(k.clone()).unwrap_err().to_string(),
            "n (1) is invalid: the factor/exponent must be at least 2"
        );
        k.function = ResponseFunction::Fimd { n: 4 };
        k.rmin = 11;
        assert_eq!(
            SrfController::new(k).unwrap_err().to_string(),
            "rmin (11) is above rmax (10)"
        );
    }
}
