//! The RoCEv2 Congestion Management reaction of Liu et al. (seed 001, section IV, items 4 and 5), exactly as
//! the paper configures it for its section V example:
//!
//! - "We configure T to be the time to transfer a data packet with length MTU on a wire. After receiving a
//!   CNP, the subsequent data packet won't be scheduled until 2T has passed; after receiving two CNPs, ...
//!   until 3T has passed, and so forth." After `n` CNPs (level `n`) consecutive packet starts are at least
//!   `(n + 1) T` apart. Read as a rate level (item 5 speaks of "the current injection rate is delayed by
//!   3T"), the spacing is start-to-start, applies to every data packet whatever its length, and level 0
//!   puts no limit on the flow (it runs at the link rate).
//! - "A CA should increase its injection rate ... until a configurable amount of time has elapsed and/or a
//!   configurable number of bytes have been transmitted ... each time a CA is able to recover the injection
//!   rate, it increases the rate back to the previous rate level": the level drops by one when the recovery
//!   condition holds, counted from the last level change (a CNP or the previous recovery). The "and/or" is
//!   the named option [`RecoveryCombine`]: recover when either configured counter is satisfied, or only when
//!   all are. Bytes are counted while the level is above 0.
//! - The paper sets no bound on the level; [`RcmConfig::max_level`] caps it so the arithmetic cannot overflow.

use super::{Feedback, RateController, Sent};
use crate::error::{nonzero, CcError};
use crate::units::{Bps, CoreClock, Cycle, LinkRate, Mtu};

/// How the time and byte recovery conditions combine ("and/or" in the paper).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RecoveryCombine {
    /// Recover one level as soon as any configured condition holds.
    #[default]
    Either,
    /// Recover only when every configured condition holds.
    Both,
}

/// RCM reaction settings.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RcmConfig {
    /// Path MTU (payload); `T` is the wire time of one MTU packet.
    pub mtu: Mtu,
    /// Header/CRC bytes of that packet besides the payload (RoCEv2 over IPv4: Ethernet 14 + IPv4 20 + UDP 8 +
    /// BTH 12 + ICRC 4 + FCS 4 = 62; preamble and inter-frame gap are the link's business).
    pub packet_overhead: u32,
    /// Link rate.
    pub link: LinkRate,
    /// Recovery after this many cycles since the last level change; `None` = no time condition.
    pub recovery_cycles: Option<Cycle>,
    /// Recovery after this many bytes sent since the last level change; `None` = no byte condition.
    pub recovery_bytes: Option<u64>,
    /// How the two conditions combine.
    pub combine: RecoveryCombine,
    /// Highest level (nonzero).
    pub max_level: u32,
    /// Core clock (for reporting the rate in bit/s).
    pub clock: CoreClock,
}

impl RcmConfig {
    /// `T` in cycles.
    pub fn t(&self) -> Cycle {
        self.link
            .wire_cycles(u64::from(self.mtu.bytes()) + u64::from(self.packet_overhead))
    }

    /// Checks that some recovery condition exists and that no setting is zero.
    pub fn validate(&self) -> Result<(), CcError> {
        if self.recovery_cycles.is_none() && self.recovery_bytes.is_none() {
            return Err(CcError::Invalid {
                setting: "recovery_cycles / recovery_bytes",
                value: 0,
                reason: "neither is set, so the rate would never recover",
            });
        }
        if let Some(c) = self.recovery_cycles {
            nonzero("recovery_cycles", c)?;
        }
        if let Some(b) = self.recovery_bytes {
            nonzero("recovery_bytes", b)?;
        }
        nonzero("max_level", self.max_level.into())
    }
}

/// The RCM reaction point of one flow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RcmController {
    cfg: RcmConfig,
    t: Cycle,
    level: u32,
    /// Time of the last level change.
    since: Cycle,
    bytes_since: u64,
    last_start: Option<Cycle>,
}

impl RcmController {
    /// A flow at level 0.
    pub fn new(cfg: RcmConfig) -> Result<Self, CcError> {
        cfg.validate()?;
        Ok(RcmController {
            t: cfg.t(),
            cfg,
            level: 0,
            since: 0,
            bytes_since: 0,
            last_start: None,
        })
    }

    /// The current level `n`: packets are spaced `(n + 1) T`.
    pub fn level(&self) -> u32 {
        self.level
    }

    /// `T` in cycles.
    pub fn t(&self) -> Cycle {
        self.t
    }

    fn bytes_ok(&self) -> Option<bool> {
        self.cfg.recovery_bytes.map(|b| self.bytes_since >= b)
    }

    /// When the time condition will recover a level, if the byte condition lets it.
    fn time_deadline(&self) -> Option<Cycle> {
        if self.level == 0 {
            return None;
        }
        let d = self.cfg.recovery_cycles?;
        let bytes_allow = match self.cfg.combine {
            RecoveryCombine::Either => true,
            RecoveryCombine::Both => self.bytes_ok().unwrap_or(true),
        };
        bytes_allow.then(|| self.since.saturating_add(d))
    }

    fn recover(&mut self, at: Cycle) {
        self.level -= 1;
        self.since = at;
        self.bytes_since = 0;
    }
}

impl RateController for RcmController {
    fn on_feedback(&mut self, now: Cycle, fb: Feedback) {
        self.advance(now);
        let Feedback::Cnp(_) = fb;
        self.level = self.level.saturating_add(1).min(self.cfg.max_level);
        self.since = now;
        self.bytes_since = 0;
    }

    fn on_sent(&mut self, sent: Sent) {
        self.advance(sent.end);
        self.last_start = Some(sent.start);
        if self.level == 0 {
            return;
        }
        self.bytes_since += u64::from(sent.bytes);
        let time_ok = self
            .cfg
            .recovery_cycles
            .map(|d| sent.end >= self.since.saturating_add(d));
        let met = match (self.cfg.combine, time_ok, self.bytes_ok()) {
            (_, None, Some(b)) => b,
            (RecoveryCombine::Either, Some(t), Some(b)) => t || b,
            (RecoveryCombine::Both, Some(t), Some(b)) => t && b,
            // Time only: handled by the deadline in advance().
            (_, _, None) => false,
        };
        if met {
            self.recover(sent.end);
        }
    }

    fn advance(&mut self, now: Cycle) {
        while let Some(dl) = self.time_deadline() {
            if dl > now {
                break;
            }
            self.recover(dl);
        }
    }

    fn next_send(&mut self) -> Cycle {
        match (self.level, self.last_start) {
            (0, _) | (_, None) => self.last_start.unwrap_or(0),
            (n, Some(s)) => s.saturating_add((u64::from(n) + 1).saturating_mul(self.t)),
        }
    }

    fn next_timer(&self) -> Option<Cycle> {
        self.time_deadline()
    }

    fn rate_bps(&self) -> Bps {
        self.cfg.link.bps(self.cfg.clock.hz()) / (u64::from(self.level) + 1)
    }

    /// The level is evaluated when asked, and a recovery deadline lowers it: ask again then.
    fn wake_for_send(&self, next_send: Cycle) -> Cycle {
        next_send.min(self.next_timer().unwrap_or(Cycle::MAX))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rate::CnpInfo;

    const CNP: Feedback = Feedback::Cnp(CnpInfo::BECN);

    /// 40 Gbit/s at 1 GHz = 5 bytes/cycle; MTU 2048 + 62 = 2110 bytes = 422 cycles = T.
    fn cfg(time: Option<Cycle>, bytes: Option<u64>, combine: RecoveryCombine) -> RcmConfig {
        let clock = CoreClock::from_khz(1_000_000).unwrap();
        RcmConfig {
            mtu: Mtu::new(2048).unwrap(),
            packet_overhead: 62,
            link: LinkRate::from_mbps(40_000, clock.khz()).unwrap(),
            recovery_cycles: time,
            recovery_bytes: bytes,
            combine,
            max_level: 16,
            clock,
        }
    }

    /// Sends one MTU packet at the earliest cycle both the wire (free from `free`) and the controller allow.
    fn send(c: &mut RcmController, free: &mut Cycle) -> Cycle {
        let start = (*free).max(c.next_send());
        c.advance(start);
        c.on_sent(Sent {
            start,
            end: start + 421,
            bytes: 2110,
        });
        *free = start + 422;
        start
    }

    /// The gap sequence of the paper: level n spaces starts (n + 1) T = (n + 1) * 422 cycles apart.
    #[test]
    fn gap_sequence() {
        let mut c =
            RcmController::new(cfg(Some(1_000_000), None, RecoveryCombine::Either)).unwrap();
        assert_eq!(c.t(), 422);
        let mut free = 0;
        let mut starts = vec![send(&mut c, &mut free), send(&mut c, &mut free)];
        for _ in 0..3 {
            let now = *starts.last().unwrap() + 421;
            c.on_feedback(now, CNP);
            starts.push(send(&mut c, &mut free));
        }
        let gaps: Vec<u64> = starts.windows(2).map(|w| w[1] - w[0]).collect();
        // Back to back (T), then 2T after one CNP, 3T after two, 4T after three.
        assert_eq!(gaps, [422, 844, 1266, 1688]);
        assert_eq!(c.level(), 3);
        assert_eq!(c.rate_bps(), 40_000_000_000 / 4);
    }

    /// Time recovery: one level per 10 000 cycles after the last change.
    #[test]
    fn time_recovery_steps_one_level() {
        let mut c = RcmController::new(cfg(Some(10_000), None, RecoveryCombine::Either)).unwrap();
        c.on_feedback(100, CNP);
        c.on_feedback(200, CNP);
        c.on_feedback(300, CNP);
        assert_eq!(c.next_timer(), Some(10_300));
        c.advance(10_299);
        assert_eq!(c.level(), 3);
        c.advance(10_300);
        assert_eq!(c.level(), 2);
        c.advance(30_299);
        assert_eq!(c.level(), 1, "second step at 20 300");
        c.advance(30_300);
        assert_eq!(c.level(), 0);
        assert_eq!(c.next_timer(), None);
    }

    /// Byte recovery: 3 packets of 2110 bytes = 6330 >= 6000 bytes.
    #[test]
    fn byte_recovery_and_both() {
        let mut c = RcmController::new(cfg(None, Some(6000), RecoveryCombine::Either)).unwrap();
        c.on_feedback(0, CNP);
        c.on_feedback(0, CNP);
        let mut free = 0;
        let lv: Vec<u32> = (0..6)
            .map(|_| {
                send(&mut c, &mut free);
                c.level()
            })
            .collect();
        assert_eq!(lv, [2, 2, 1, 1, 1, 0]);
        // Both: bytes satisfied early, time (100 000 cycles) decides.
        let mut c =
            RcmController::new(cfg(Some(100_000), Some(4000), RecoveryCombine::Both)).unwrap();
        c.on_feedback(0, CNP);
        let mut free = 0;
        send(&mut c, &mut free);
        send(&mut c, &mut free);
        assert_eq!(c.level(), 1, "bytes met, time not");
        assert_eq!(c.next_timer(), Some(100_000));
        c.advance(100_000);
        assert_eq!(c.level(), 0);
        // Both: time satisfied first, the packet that completes the bytes recovers.
        let mut c = RcmController::new(cfg(Some(10), Some(4000), RecoveryCombine::Both)).unwrap();
        c.on_feedback(0, CNP);
        c.advance(50_000);
        assert_eq!(c.level(), 1);
        let mut free = 50_000;
        send(&mut c, &mut free);
        assert_eq!(c.level(), 1);
        send(&mut c, &mut free);
        assert_eq!(c.level(), 0);
    }

    #[test]
    fn serde_form_checks_the_mtu() {
        let k = cfg(Some(10), None, RecoveryCombine::Both);
        let json = serde_json::to_string(&k).unwrap();
        assert!(json.contains(r#""combine":"both""#), "{json}");
        assert_eq!(serde_json::from_str::<RcmConfig>(&json).unwrap(), k);
        let e = serde_json::from_str::<RcmConfig>(&json.replace(r#""mtu":2048"#, r#""mtu":1500"#))
            .unwrap_err();
        assert!(e.to_string().contains("mtu (1500) is invalid"), "{e}");
    }

    #[test]
    fn level_is_capped_and_errors_are_clear() {
        let mut k = cfg(Some(10), None, RecoveryCombine::Either);
        k.max_level = 2;
        let mut c = RcmController::new(k).unwrap();
        for _ in 0..5 {
            c.on_feedback(0, CNP);
        }
        assert_eq!(c.level(), 2);
        assert_eq!(
            RcmController::new(cfg(None, None, RecoveryCombine::Either))
                .unwrap_err()
                .to_string(),
            "recovery_cycles / recovery_bytes (0) is invalid: neither is set, so the rate would never recover"
        );
        assert!(RcmController::new(cfg(Some(0), None, RecoveryCombine::Either)).is_err());
    }
}
