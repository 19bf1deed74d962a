//! Receiver side of the receiver-driven CC (seed 002, algorithm 1), per QP or SL:
//!
//! ```text
//! every period T:  P_FECN = fecn_count / recv_count;  receive_rate = recv_count * MTU / T
//!                  if P_FECN >= 0.95:              CNP with BECN and receive_rate
//!                  else if receive_rate < line_rate: CNP without BECN
//! ```
//!
//! Fixed point and named choices:
//! - `P_FECN >= 0.95` is evaluated exactly as `fecn * den >= num * recv` with the threshold `num / den`
//!   (default 95/100); no division, no rounding.
//! - `receive_rate = recv * MTU * 8 * f_Hz / T_cycles` bit/s, rounded down (the paper counts MTU bytes per
//!   packet, not the actual length).
//! - A period with no packet sends nothing: `P_FECN` is undefined (0/0) and a flow that sent nothing needs
//!   no notification.
//! - Periods are aligned to cycle 0: `[k T, (k + 1) T)`. A period is closed by the first call at or after
//!   its end ([`RrccReceiver::on_packet`] or [`RrccReceiver::poll`]); the notice carries the end cycle.

use crate::error::{at_most, nonzero, CcError};
use crate::rate::CnpInfo;
use crate::units::{Bps, CoreClock, Cycle, Mtu};

/// Receiver settings.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RrccReceiverConfig {
    /// Core clock.
    pub clock: CoreClock,
    /// Period `T`, cycles.
    pub period: Cycle,
    /// MTU counted per received packet.
    pub mtu: Mtu,
    /// Line rate, bit/s.
    pub line_rate: Bps,
    /// Threshold numerator (95).
    pub fecn_num: u32,
    /// Threshold denominator (100).
    pub fecn_den: u32,
}

impl RrccReceiverConfig {
    /// Checks: nonzero period, line rate and denominator; threshold at most 1.
    pub fn validate(&self) -> Result<(), CcError> {
        nonzero("period", self.period)?;
        nonzero("line_rate", self.line_rate)?;
        nonzero("fecn_den", self.fecn_den.into())?;
        at_most(
            "fecn_num",
            self.fecn_num.into(),
            "fecn_den",
            self.fecn_den.into(),
        )
    }

    /// The decision for one period's counts (pure): `None` = no CNP.
    pub fn decide(&self, recv: u64, fecn: u64) -> Option<CnpInfo> {
        if recv == 0 {
            return None;
        }
        let rate =
            u128::from(recv) * u128::from(self.mtu.bytes()) * 8 * u128::from(self.clock.hz())
                / u128::from(self.period);
        let rate = u64::try_from(rate).unwrap_or(u64::MAX);
        if u128::from(fecn) * u128::from(self.fecn_den)
            >= u128::from(self.fecn_num) * u128::from(recv)
        {
            Some(CnpInfo {
                becn: true,
                receive_rate: Some(rate),
            })
        } else if rate < self.line_rate {
            Some(CnpInfo {
                becn: false,
                receive_rate: None,
            })
        } else {
            None
        }
    }
}

/// A CNP due at the end of a period.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Notice {
    /// The period's end cycle (first cycle of the next period).
    pub at: Cycle,
    /// What the CNP carries.
    pub cnp: CnpInfo,
}

/// Algorithm 1 for one QP or SL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RrccReceiver {
    cfg: RrccReceiverConfig,
    recv: u64,
    fecn: u64,
    /// End of the current period; `None` before the first packet.
    end: Option<Cycle>,
}

impl RrccReceiver {
    /// A receiver with empty counters.
    pub fn new(cfg: RrccReceiverConfig) -> Result<Self, CcError> {
        cfg.validate()?;
        Ok(RrccReceiver {
            cfg,
            recv: 0,
            fecn: 0,
            end: None,
        })
    }

    /// The end of the open period (`None`: no packet since the last one closed): when to poll next.
    pub fn period_end(&self) -> Option<Cycle> {
        self.end
    }

    /// Closes the current period if it ended at or before `now`.
    pub fn poll(&mut self, now: Cycle) -> Option<Notice> {
        let end = self.end?;
        if now < end {
            return None;
        }
        let n = self.cfg.decide(self.recv, self.fecn);
        self.recv = 0;
        self.fecn = 0;
        self.end = None;
        n.map(|cnp| Notice { at: end, cnp })
    }

    /// A packet arrived at `now`, FECN set or not. Returns the notice of the period it closed, if any.
    pub fn on_packet(&mut self, now: Cycle, fecn: bool) -> Option<Notice> {
        let n = self.poll(now);
        if self.end.is_none() {
            let p = self.cfg.period;
            self.end = Some((now / p).saturating_add(1).saturating_mul(p));
        }
        self.recv += 1;
        self.fecn += u64::from(fecn);
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 1 GHz, T = 10 us = 10 000 cycles, MTU 2048, line 32 Gbit/s. One packet per period = 2048 * 8 bits per
    /// 10 us = 1.6384 Gbit/s.
    fn cfg() -> RrccReceiverConfig {
        RrccReceiverConfig {
            clock: CoreClock::from_khz(1_000_000).unwrap(),
            period: 10_000,
            mtu: Mtu::new(2048).unwrap(),
            line_rate: 32_000_000_000,
            fecn_num: 95,
            fecn_den: 100,
        }
    }

    /// Decisions for given counts, by hand:
    /// - 100 received, 95 FECN: 0.95 >= 0.95: BECN with 100 * 1.6384G = 163.84 Gbit/s.
    /// - 100 received, 94 FECN: below; rate 163.84G >= 32G: nothing.
    /// - 20 received, 19 FECN: 0.95: BECN, rate 32.768 Gbit/s.
    /// - 19 received, 18 FECN: 0.947 < 0.95; rate 31.1296G < 32G: CNP without BECN.
    /// - 0 received: nothing.
    #[test]
    fn decisions_for_counts() {
        let c = cfg();
        let becn = |r| {
            Some(CnpInfo {
                becn: true,
                receive_rate: Some(r),
            })
        };
        let nobecn = Some(CnpInfo {
            becn: false,
            receive_rate: None,
        });
        assert_eq!(c.decide(100, 95), becn(163_840_000_000));
        assert_eq!(c.decide(100, 94), None);
        assert_eq!(c.decide(20, 19), becn(32_768_000_000));
        assert_eq!(c.decide(19, 18), nobecn);
        assert_eq!(c.decide(0, 0), None);
    }

    #[test]
    fn periods_close_on_time() {
        let mut r = RrccReceiver::new(cfg()).unwrap();
        assert_eq!(r.period_end(), None);
        assert_eq!(r.on_packet(5, true), None);
        assert_eq!(r.period_end(), Some(10_000));
        assert_eq!(r.on_packet(9_999, true), None);
        assert_eq!(r.poll(9_999), None);
        // Period [0, 10 000): 2 packets, both FECN: BECN, rate 2 * 1.6384G.
        let n = r.poll(10_000).unwrap();
        assert_eq!(n.at, 10_000);
        assert_eq!(n.cnp.receive_rate, Some(3_276_800_000));
        assert_eq!(r.poll(50_000), None, "idle periods send nothing");
        assert_eq!(r.on_packet(52_000, false), None);
        // Closed by the next packet: 1 packet, no FECN, 1.6384G < 32G: no BECN; period [50 000, 60 000).
        let n = r.on_packet(61_000, false).unwrap();
        assert_eq!((n.at, n.cnp.becn), (60_000, false));
    }

    #[test]
    fn bad_settings() {
        let mut c = cfg();
        c.fecn_num = 101;
        assert_eq!(
            RrccReceiver::new(c).unwrap_err().to_string(),
            "fecn_num (101) is above fecn_den (100)"
        );
    }
}
