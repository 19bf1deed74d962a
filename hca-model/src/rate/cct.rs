//! The IB CC reaction point: a [`RateController`] around the `rtl-model` block
//! [`rtl_model::blocks::cct_shaper::CctShaper`] (one per flow: QP-based CC), driven by a private copy of the shared
//! 1.024 us [`Timebase`] (both reset at cycle 0, so every controller of an HCA sees the same tick phase).
//!
//! - A CNP or a BECN (any [`Feedback::Cnp`]) pulses `becn_i`: `CCTI = min(CCTI + CCTI_Increase, CCTI_Limit)`
//!   and the per-SL CCTI_Timer starts; its expiries lower CCTI by one down to CCTI_Min (the block's rules).
//! - A packet reported sent pulses `sent_i` in its last wire cycle `end`: the next packet may start at
//!   `end + 1 + IRD`, `IRD = (T_pkt >> CCT_Shift) * CCT_Multiplier` of the entry at CCTI, with `T_pkt` the
//!   wire time of one MTU packet (payload MTU + [`CctParams::packet_overhead`] bytes) at the link rate. A flow
//!   of such packets thus gets `T_pkt / (T_pkt + IRD)` of the link, `2^shift / (2^shift + multiplier)` when
//!   `T_pkt` is a multiple of `2^shift`.
//! - Trigger_Threshold: the block reports when a BECN brings CCTI to the threshold; counted in
//!   [`CctController::trigger_events`] (hfi1 logs such an event).
//!
//! Events of one cycle are merged into one block edge (a BECN and a send in the same cycle: the send loads
//! the IRD of the CCTI before the BECN, as the block defines). The edge of the latest event's cycle stays
//! open until a later time, [`RateController::next_send`] or [`CctController::ccti`] closes it.

use serde::{Deserialize, Serialize};

use rtl_model::blocks::cct_shaper::{self, CctEntryBits, CctShaper};
use rtl_model::blocks::timebase::{self, ClockSpec, Timebase};
use rtl_model::blocks::ConfigError;
use rtl_model::clocked::Clocked;
use rtl_model::mad::ca_cong::CaCongestionEntry;
use rtl_model::mad::cct::Cct;

use super::{Feedback, RateController, Sent};
use crate::error::CcError;
use crate::units::{Bps, CoreClock, Cycle, LinkRate, Mtu};

/// The CA settings of one SL in their management-attribute form (also the TOML/JSON form: `entry` as in
/// CACongestionSetting, `cct` as CongestionControlTable with `ccti_limit` and `entries`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CctSettings {
    /// CCTI_Timer, CCTI_Increase, Trigger_Threshold, CCTI_Min of the SL.
    pub entry: CaCongestionEntry,
    /// The CongestionControlTable.
    pub cct: Cct,
}

/// Everything a CCT reaction point is built from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CctParams {
    /// The SL's CA settings and the CCT.
    pub settings: CctSettings,
    /// The path MTU: `T_pkt` is the wire time of one MTU packet.
    pub mtu: Mtu,
    /// Header and CRC bytes of that packet besides its payload ([`crate::units::IB_LOCAL_OVERHEAD`]).
    pub packet_overhead: u32,
    /// The link rate.
    pub link: LinkRate,
    /// The core clock (for the 1.024 us timebase).
    pub clock: CoreClock,
}

impl CctParams {
    /// `T_pkt` in cycles.
    pub fn t_pkt(&self) -> Cycle {
        self.link
            .wire_cycles(u64::from(self.mtu.bytes()) + u64::from(self.packet_overhead))
    }

    /// The block configuration, validated: CCT_Shift/Multiplier widths, CCTI_Min <= CCTI_Limit, the table at
    /// least CCTI_Limit + 1 entries and at most 128, T_pkt within the block's 16-bit port.
    pub fn block_config(&self) -> Result<cct_shaper::Config, CcError> {
        let s = &self.settings;
        let t_pkt = self.t_pkt();
        let t_pkt = u16::try_from(t_pkt).map_err(|_| CcError::Invalid {
            setting: "t_pkt cycles",
            value: t_pkt,
            reason: "the wire time of one MTU packet must fit the shaper's 16-bit t_pkt port",
        })?;
        let cfg = cct_shaper::Config {
            cct: s
                .cct
                .entries
                .iter()
                .map(|e| CctEntryBits::from_raw(e.raw()))
                .collect(),
            ccti_limit: s.cct.ccti_limit,
            ccti_min: s.entry.ccti_min,
            ccti_increase: s.entry.ccti_increase,
            ccti_timer: s.entry.ccti_timer,
            trigger_threshold: s.entry.trigger_threshold,
            t_pkt,
        };
        cfg.validate()?;
        Ok(cfg)
    }
}

/// The IB CCT reaction point of one CC context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CctController {
    shaper: CctShaper,
    tb: Timebase,
    link_bps: Bps,
    /// The next cycle whose edge has not been applied.
    cycle_q: Cycle,
    /// Inputs gathered for the open edge of a cycle.
    pending: Option<(Cycle, cct_shaper::In)>,
    triggers: u64,
}

impl CctController {
    /// Builds the controller at cycle 0 with CCTI = CCTI_Min.
    pub fn new(p: &CctParams) -> Result<Self, CcError> {
        let cfg = p.block_config()?;
        let tb = Timebase::new(timebase::Config {
            clock: ClockSpec::FreqKhz(p.clock.khz()),
        })
        .map_err(CcError::Block)?;
        Ok(CctController {
            shaper: CctShaper::new(cfg).map_err(|e: ConfigError| CcError::Block(e))?,
            tb,
            link_bps: p.link.bps(p.clock.hz()),
            cycle_q: 0,
            pending: None,
            triggers: 0,
        })
    }

    /// The current CCTI (closes the open edge).
    pub fn ccti(&mut self) -> u8 {
        self.flush();
        self.shaper.ccti_q
    }

    /// The injection rate delay of the current CCTI, cycles (closes the open edge).
    pub fn ird(&mut self) -> u32 {
        self.flush();
        self.shaper.ird()
    }

    /// BECNs that brought CCTI to at least Trigger_Threshold so far (closes the open edge).
    pub fn trigger_events(&mut self) -> u64 {
        self.flush();
        self.triggers
    }

    /// Idle edges for cycles `cycle_q .. c` (ticks included).
    fn run_idle_to(&mut self, c: Cycle) {
        while self.cycle_q < c {
            // Idle edges before the next tick; the tick's own edge is stepped with tick_i. While the CCTI
            // timer is stopped a tick changes nothing in the shaper, so the whole stretch is skipped at once
            // (the state is exactly what stepping every edge would give).
            let k = self.tb.next_event().unwrap_or(u64::MAX);
            let left = c - self.cycle_q;
            if k >= left || self.shaper.timer_q == 0 {
                self.tb.skip(left);
                self.shaper.skip(left);
                self.cycle_q = c;
            } else {
                self.tb.skip(k);
                self.shaper.skip(k);
                self.cycle_q += k;
                self.edge(cct_shaper::In {
                    rst_ni: true,
                    ..Default::default()
                });
            }
        }
    }

    /// One edge at `cycle_q` with `inp` (the timebase supplies the tick).
    fn edge(&mut self, inp: cct_shaper::In) {
        let t = self.tb.step(&timebase::In { rst_ni: true });
        let o = self.shaper.step(&cct_shaper::In {
            tick_i: t.tick_o,
            ..inp
        });
        self.triggers += u64::from(o.trigger_o);
        self.cycle_q = self.cycle_q.saturating_add(1);
    }

    fn flush(&mut self) {
        if let Some((c, inp)) = self.pending.take() {
            self.run_idle_to(c);
            self.edge(inp);
        }
    }

    /// The open edge for cycle `now`, closing an earlier one first. Events in the past (before an edge
    /// already applied) land on the next open cycle.
    fn at(&mut self, now: Cycle) -> &mut cct_shaper::In {
        let now = now.max(self.cycle_q);
        if matches!(self.pending, Some((c, _)) if c != now) {
            self.flush();
        }
        let now = now.max(self.cycle_q);
        &mut self
            .pending
            .get_or_insert((
                now,
                cct_shaper::In {
                    rst_ni: true,
                    ..Default::default()
                },
            ))
            .1
    }
}

impl RateController for CctController {
    fn on_feedback(&mut self, now: Cycle, fb: Feedback) {
        let Feedback::Cnp(_) = fb;
        self.at(now).becn_i = true;
    }

    fn on_sent(&mut self, sent: Sent) {
        self.at(sent.end).sent_i = true;
    }

    fn advance(&mut self, now: Cycle) {
        // The edge of `now` stays open for events of the same cycle; earlier ones are applied.
        if matches!(self.pending, Some((c, _)) if c < now) {
            self.flush();
        }
        if self.pending.is_none() {
            self.run_idle_to(now);
        }
    }

    fn next_send(&mut self) -> Cycle {
        self.flush();
        self.cycle_q + u64::from(self.shaper.ipd_q)
    }

    fn next_timer(&self) -> Option<Cycle> {
        (self.shaper.timer_q != 0).then(|| self.cycle_q + self.tb.next_event().unwrap_or(0))
    }

    /// Known when no edge is open and no CCTI timer tick falls before `sent.end`: then the CCTI at that edge
    /// is the current one, and the edge loads the injection delay of the CCTI it starts with.
    fn send_after(&self, sent: &Sent) -> Option<Cycle> {
        if self.pending.is_some() || sent.end < self.cycle_q {
            return None;
        }
        // The first tick edge is `tb.next_event()` cycles on; while the timer is stopped ticks change
        // nothing (see `run_idle_to`).
        let tick = self.cycle_q + self.tb.next_event().unwrap_or(0);
        if self.shaper.timer_q != 0 && tick < sent.end {
            return None;
        }
        Some(sent.end + 1 + u64::from(self.shaper.ird()))
    }

    fn rate_bps(&self) -> Bps {
        // The fraction T / (T + IRD) of the link for MTU packets.
        let t = u128::from(self.shaper.config().t_pkt);
        let ird = u128::from(self.shaper.ird());
        if t == 0 {
            return self.link_bps;
        }
        (u128::from(self.link_bps) * t / (t + ird)) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtl_model::mad::cct::CctEntry;

    const KHZ: u32 = 1_000_000;

    fn params(limit: u16, min: u8, inc: u8, timer: u16) -> CctParams {
        let entries = (0..=limit)
            .map(|i| CctEntry::new(0, i * 10).unwrap())
            .collect();
        let clock = CoreClock::from_khz(KHZ).unwrap();
        CctParams {
            settings: CctSettings {
                entry: CaCongestionEntry {
                    ccti_timer: timer,
                    ccti_increase: inc,
                    trigger_threshold: 0,
                    ccti_min: min,
                },
                cct: Cct {
                    ccti_limit: limit,
                    entries,
                },
            },
            mtu: Mtu::new(2048).unwrap(),
            packet_overhead: crate::units::IB_LOCAL_OVERHEAD,
            link: LinkRate::from_mbps(32_000, clock.khz()).unwrap(),
            clock,
        }
    }

    const CNP: Feedback = Feedback::Cnp(super::super::CnpInfo::BECN);

    /// CCTI after k BECNs and m timer expiries, worked by hand. 1 GHz: one 1.024 us tick = 1024 cycles, the
    /// first at cycle 1023 (the timebase ticks in the cycle its accumulator reaches the modulus).
    /// CCTI_Increase 3, CCTI_Limit 20, CCTI_Min 2, CCTI_Timer 2 ticks.
    #[test]
    fn ccti_after_becns_and_expiries() {
        let mut c = CctController::new(&params(20, 2, 3, 2)).unwrap();
        assert_eq!(c.ccti(), 2);
        // k = 5 BECNs at cycles 10..=14: 2 + 15 = 17 (below the limit). The timer starts with the first
        // (2 ticks): ticks at 1023 and 2047, so the first expiry is at 2047.
        for t in 10..15 {
            c.on_feedback(t, CNP);
        }
        assert_eq!(c.ccti(), 17);
        c.advance(2047);
        assert_eq!(c.ccti(), 17, "the edge of 2047 is still open");
        c.advance(2048);
        assert_eq!(c.ccti(), 16, "m = 1 expiry");
        // Expiries every 2 ticks = 2048 cycles: at 4095, 6143, 8191: m = 4 in total -> 13.
        c.advance(8192);
        assert_eq!(c.ccti(), 13);
        // Two more BECNs: 13 + 6 = 19; a third: min(22, 20) = 20.
        for t in 8200..8203 {
            c.on_feedback(t, CNP);
        }
        assert_eq!(c.ccti(), 20);
        // 18 more expiries bring it to CCTI_Min = 2 and no lower: (20 - 2) * 2048 cycles after 8191.
        c.advance(8192 + 18 * 2048);
        assert_eq!(c.ccti(), 2);
        assert_eq!(c.next_timer(), None, "timer stops at CCTI_Min");
        c.advance(8192 + 40 * 2048);
        assert_eq!(c.ccti(), 2);
    }

    /// Injection delay for a given CCT entry and link rate, by hand: 32 Gbit/s at 1 GHz = 4 bytes/cycle;
    /// MTU 2048 + 26 bytes = 2074 bytes = 518.5 -> T_pkt = 519 cycles. Entry (shift 2, multiplier 3):
    /// IRD = (519 >> 2) * 3 = 129 * 3 = 387 cycles. A packet ending at cycle 600 lets the next start at
    /// 600 + 1 + 387 = 988.
    #[test]
    fn injection_delay_of_an_entry() {
        let mut p = params(3, 0, 1, 0);
        p.settings.cct.entries[1] = CctEntry::new(2, 3).unwrap();
        let mut c = CctController::new(&p).unwrap();
        assert_eq!(p.t_pkt(), 519);
        c.on_feedback(5, CNP);
        assert_eq!(c.ird(), 387);
        c.on_sent(Sent {
            start: 82,
            end: 600,
            bytes: 2074,
        });
        assert_eq!(c.next_send(), 988);
        // CCTI 0 (multiplier 0): no delay, the next packet may follow at end + 1.
        let mut c = CctController::new(&p).unwrap();
        c.on_sent(Sent {
            start: 0,
            end: 518,
            bytes: 2074,
        });
        assert_eq!(c.next_send(), 519);
        // Rate it leaves: 32 Gbit/s * 519 / (519 + 387).
        let mut c = CctController::new(&p).unwrap();
        c.on_feedback(0, CNP);
        c.next_send();
        assert_eq!(c.rate_bps(), 32_000_000_000u64 * 519 / 906);
    }

    #[test]
    fn becn_and_send_in_one_cycle_use_the_old_ccti() {
        let mut p = params(3, 0, 1, 0);
        p.settings.cct.entries[1] = CctEntry::new(0, 2).unwrap();
        let mut c = CctController::new(&p).unwrap();
        c.on_feedback(700, CNP);
        c.on_sent(Sent {
            start: 182,
            end: 700,
            bytes: 2074,
        });
        assert_eq!(c.next_send(), 701, "IRD of CCTI 0 loaded");
        c.on_sent(Sent {
            start: 701,
            end: 1219,
            bytes: 2074,
        });
        assert_eq!(c.next_send(), 1220 + 2 * 519);
    }

    #[test]
    fn trigger_threshold_events() {
        let mut p = params(20, 0, 4, 0);
        p.settings.entry.trigger_threshold = 8;
        let mut c = CctController::new(&p).unwrap();
        for t in 0..4 {
            c.on_feedback(t, CNP);
        }
        // CCTI 4, 8, 12, 16: three reach 8.
        assert_eq!(c.trigger_events(), 3);
    }

    #[test]
    fn bad_settings_get_clear_errors() {
        let mut p = params(10, 0, 1, 0);
        p.settings.entry.ccti_min = 11;
        assert_eq!(
            CctController::new(&p).unwrap_err().to_string(),
            "ccti_min (11) is above ccti_limit (10)"
        );
        let mut p = params(10, 0, 1, 0);
        p.settings.cct.entries.truncate(5);
        assert_eq!(
            CctController::new(&p).unwrap_err().to_string(),
            "cct has 5 entries, fewer than ccti_limit + 1 (11)"
        );
        let mut p = params(10, 0, 1, 0);
        p.link = LinkRate::new(1, 100).unwrap();
        assert!(CctController::new(&p)
            .unwrap_err()
            .to_string()
            .starts_with("t_pkt cycles (207400) is invalid"));
    }

    /// `send_after`, when it answers, is what reporting the send at its end and asking gives, in a run of
    /// sends paced by the controller with BECNs at random cycles (some before a send's end, where it must
    /// not answer, or answer what the BECN leaves). It must answer for most sends (the timer runs often:
    /// CCTI_Timer 1 tick, so ticks fall inside sends too), or it would save nothing.
    #[test]
    fn send_after_foresees_the_next_send() {
        let p = params(40, 0, 2, 1);
        let mut c = CctController::new(&p).unwrap();
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        let mut rnd = |n: u64| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s % n
        };
        let (mut t, mut answered, mut sends) = (0u64, 0, 0);
        for _ in 0..3000 {
            c.advance(t);
            let at = c.next_send().max(t);
            c.advance(at);
            let sent = Sent {
                start: at,
                end: at + 100 + rnd(500),
                bytes: 2074,
            };
            let foreseen = c.send_after(&sent);
            // A BECN after one send in four, before the end (it may change the delay the end loads) or
            // after it.
            let becn = match rnd(4) {
                0 => at + rnd(2 * (sent.end - at) + 2),
                _ => u64::MAX,
            };
            if becn < sent.end {
                c.on_feedback(becn, CNP);
            }
            let mut real = c.clone();
            real.on_sent(sent);
            real.advance(sent.end);
            let want = real.next_send();
            if becn >= sent.end {
                sends += 1;
                if let Some(w) = foreseen {
                    answered += 1;
                    assert_eq!(w, want, "send {sends} ending at {}", sent.end);
                }
                c = real;
                if becn != u64::MAX {
                    c.on_feedback(becn, CNP);
                }
            } else {
                c = real;
            }
            t = sent.end + 1;
        }
        assert!(
            sends > 2000,
            "{sends} sends without a BECN before their end"
        );
        assert!(answered * 2 > sends, "answered {answered} of {sends}");
    }
}
