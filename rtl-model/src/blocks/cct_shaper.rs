//! `cct_shaper`: the IB CC reaction point core for one CCTI (one SL, or one QP in QP-based mode).
//!
//! A BECN (or CNP) raises the congestion control table index CCTI; a timer counted in 1.024 us ticks lowers it
//! again; the CCT entry at CCTI gives the injection rate delay `IRD = (t_pkt >> shift) * multiplier`, which
//! the block counts down after each packet. Behaviour per the Linux hfi1 driver (reference, "CA state
//! machine"; `process_becn` and `cca_timer_fn` in hfi1, read for this block):
//! - on BECN: `CCTI = min(CCTI + CCTI_Increase, CCTI_Limit)`; start the timer if it is not running; report a
//!   trigger when `Trigger_Threshold != 0 && CCTI >= Trigger_Threshold` (hfi1 logs the event);
//! - on timer expiry: if `CCTI > CCTI_Min`, `CCTI -= 1`; re-arm while `CCTI > CCTI_Min`.
//!
//! | port         | dir | width | meaning                                                                   |
//! |--------------|-----|-------|---------------------------------------------------------------------------|
//! | `rst_ni`     | in  | 1     | synchronous reset, active low                                             |
//! | `becn_i`     | in  | 1     | a BECN (CNP) for this CCTI arrived                                        |
//! | `tick_i`     | in  | 1     | one 1.024 us tick from the shared `timebase`                              |
//! | `sent_i`     | in  | 1     | a packet of this flow was sent: load the injection delay                  |
//! | `ccti_o`     | out | 7     | current CCTI (`ccti_q`)                                                   |
//! | `ird_o`      | out | 24    | `(t_pkt >> shift) * multiplier` of `cct[ccti_q]`, saturated at 24 bits    |
//! | `ready_o`    | out | 1     | the injection-delay countdown `ipd_q` is zero: the flow may send          |
//! | `trigger_o`  | out | 1     | this cycle's BECN brought CCTI to at least `trigger_threshold`            |
//!
//! State: `ccti_q` (7), `timer_q` (16: ticks to expiry, 0 = not running), `ipd_q` (24: cycles of delay left).
//! The CCT and the settings are held-constant ports in the RTL (the table as a 128 x 16 read port).
//!
//! Designer choices, named:
//! - Reset CCTI is `ccti_min` (so CCTI always lies in `[ccti_min, ccti_limit]`).
//! - `ccti_timer == 0` disables the timer: CCTI never decreases.
//! - Tick quantisation: the timer counts shared ticks, so the first expiry after arming comes between
//!   `ccti_timer - 1` and `ccti_timer` tick periods after the BECN; later ones exactly `ccti_timer` apart.
//! - A BECN and an expiry in the same cycle: the expiry is applied first (it was due at this tick), then the
//!   BECN: `CCTI = min(dec(CCTI) + CCTI_Increase, CCTI_Limit)`; the timer is re-armed by the expiry if the
//!   decremented CCTI is above the minimum, else started by the BECN; the trigger sees the final CCTI.
//! - `sent_i` loads `ipd_q` with this cycle's `ird_o` (from the CCTI before any BECN this cycle). The delay
//!   counts from the `sent_i` cycle, so the HCA pulses `sent_i` when a packet's last block leaves: then the
//!   gap after each packet is `ird_o` cycles and the bandwidth fraction is `T / (T + IRD)` as in the OPA
//!   driver's comment. Pulsing it at the packet start would overlap the delay with the packet.
//! - IRD saturates at [`IRD_MAX`] (hfi1 masks the reload value to its CSR field instead).

use super::{check_above, check_max, flag, ConfigError};
use crate::clocked::Clocked;

/// Most CCT entries (opensm: at most 128).
pub const CCT_MAX_ENTRIES: usize = 128;
/// Largest CCTI (7 bits).
pub const CCTI_MAX: u16 = 127;
/// Width of `ird_o` and `ipd_q`, bits.
pub const IRD_WIDTH: u32 = 24;
/// Largest injection delay, cycles.
pub const IRD_MAX: u32 = (1 << IRD_WIDTH) - 1;

/// One CCT entry: `CCT_Shift` (2 bits) and `CCT_Multiplier` (14 bits), as in CongestionControlTable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CctEntryBits {
    /// CCT_Shift, 0..=3.
    pub shift: u8,
    /// CCT_Multiplier, 0..=16383.
    pub multiplier: u16,
}

impl CctEntryBits {
    /// From the 16-bit wire form: `[15:14]` shift, `[13:0]` multiplier.
    pub const fn from_raw(raw: u16) -> Self {
        CctEntryBits {
            shift: (raw >> 14) as u8,
            multiplier: raw & 0x3fff,
        }
    }

    /// To the 16-bit wire form.
    pub const fn to_raw(self) -> u16 {
        ((self.shift as u16 & 3) << 14) | (self.multiplier & 0x3fff)
    }

    /// `(t_pkt >> shift) * multiplier`, saturated at [`IRD_MAX`].
    pub fn ird(self, t_pkt: u16) -> u32 {
        ((u32::from(t_pkt) >> (self.shift & 3)) * u32::from(self.multiplier & 0x3fff)).min(IRD_MAX)
    }
}

/// Static configuration (held-constant ports in the RTL).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Config {
    /// The congestion control table (at least `ccti_limit + 1` entries, at most 128).
    pub cct: Vec<CctEntryBits>,
    /// CCTI_Limit (at most 127).
    pub ccti_limit: u16,
    /// CCTI_Min (at most `ccti_limit`).
    pub ccti_min: u8,
    /// CCTI_Increase per BECN.
    pub ccti_increase: u8,
    /// CCTI_Timer in 1.024 us ticks; 0 disables the timer.
    pub ccti_timer: u16,
    /// Trigger_Threshold; 0 disables the trigger.
    pub trigger_threshold: u8,
    /// Wire time of one MTU packet in core cycles (the `T_pkt` of the IRD formula).
    pub t_pkt: u16,
}

/// `cfg_err_o` bit: `ccti_min` is above `ccti_limit`.
pub const CFG_ERR_MIN_ABOVE_LIMIT: u8 = 1 << 0;
/// `cfg_err_o` bit: the table has no entry for `ccti_limit` (the RTL: `ccti_limit` at or above its
/// `CctEntries` parameter).
pub const CFG_ERR_TABLE_SHORT: u8 = 1 << 1;
/// Width of `cfg_err_o`, bits.
pub const CFG_ERR_WIDTH: u32 = 2;

impl Config {
    /// The configuration rules this configuration breaks, a bit per rule ([`CFG_ERR_MIN_ABOVE_LIMIT`],
    /// [`CFG_ERR_TABLE_SHORT`]): what the RTL shows on `cfg_err_o` for these held ports (`ccti_limit` and
    /// `ccti_min` as their 7-bit ports carry them; the table's length as the RTL's `CctEntries`).
    /// [`Config::validate`] refuses exactly the configurations with a bit set, among those the ports carry.
    pub fn cfg_err(&self) -> u8 {
        let limit = self.ccti_limit & 0x7f;
        let min = u16::from(self.ccti_min & 0x7f);
        flag(min > limit, CFG_ERR_MIN_ABOVE_LIMIT)
            | flag(self.cct.len() <= usize::from(limit), CFG_ERR_TABLE_SHORT)
    }

    /// Checks ranges and that the table covers `ccti_limit`.
    pub fn validate(&self) -> Result<(), ConfigError> {
        check_max("ccti_limit", self.ccti_limit.into(), CCTI_MAX.into())?;
        check_above(
            "ccti_min",
            self.ccti_min.into(),
            "ccti_limit",
            self.ccti_limit.into(),
        )?;
        check_max("cct entries", self.cct.len() as u64, CCT_MAX_ENTRIES as u64)?;
        let need = usize::from(self.ccti_limit) + 1;
        if self.cct.len() < need {
            return Err(ConfigError::TooShort {
                table: "cct",
                len: self.cct.len(),
                need_name: "ccti_limit + 1",
                need,
            });
        }
        for (index, e) in self.cct.iter().enumerate() {
            if e.shift > 3 {
                return Err(ConfigError::EntryAbove {
                    table: "cct",
                    index,
                    field: "shift",
                    value: e.shift.into(),
                    limit: 3,
                });
            }
            if e.multiplier > 0x3fff {
                return Err(ConfigError::EntryAbove {
                    table: "cct",
                    index,
                    field: "multiplier",
                    value: e.multiplier.into(),
                    limit: 0x3fff,
                });
            }
        }
        Ok(())
    }
}

/// Input ports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct In {
    /// Reset, active low.
    pub rst_ni: bool,
    /// A BECN arrived.
    pub becn_i: bool,
    /// A 1.024 us tick.
    pub tick_i: bool,
    /// A packet of this flow was sent.
    pub sent_i: bool,
}

/// Output ports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Out {
    /// Current CCTI.
    pub ccti_o: u8,
    /// Injection rate delay of the current CCTI, cycles.
    pub ird_o: u32,
    /// The flow may send.
    pub ready_o: bool,
    /// A BECN brought CCTI to the trigger threshold.
    pub trigger_o: bool,
    /// Configuration rules broken ([`Config::cfg_err`]): 0 for every block built, as [`Config::validate`]
    /// refuses the rest; the RTL computes it from its held ports.
    pub cfg_err_o: u8,
}

/// The CCT rate shaper of one CCTI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CctShaper {
    cfg: Config,
    /// Congestion control table index.
    pub ccti_q: u8,
    /// Ticks until the timer expires; 0 = not running.
    pub timer_q: u16,
    /// Injection delay cycles left.
    pub ipd_q: u32,
}

impl CctShaper {
    /// Builds the block in its reset state.
    pub fn new(cfg: Config) -> Result<Self, ConfigError> {
        cfg.validate()?;
        Ok(CctShaper {
            ccti_q: cfg.ccti_min,
            cfg,
            timer_q: 0,
            ipd_q: 0,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// IRD of the current CCTI.
    pub fn ird(&self) -> u32 {
        // validate() guarantees the entry exists for every CCTI the block can reach.
        self.cfg
            .cct
            .get(usize::from(self.ccti_q))
            .map_or(0, |e| e.ird(self.cfg.t_pkt))
    }
}

impl Clocked for CctShaper {
    type In = In;
    type Out = Out;

    // Inlinable across crates: the co-simulation steps it in its per-cycle loop.
    #[inline]
    fn step(&mut self, i: &In) -> Out {
        let c = &self.cfg;
        if !i.rst_ni {
            self.ccti_q = c.ccti_min;
            self.timer_q = 0;
            self.ipd_q = 0;
            return Out {
                ccti_o: self.ccti_q,
                ird_o: self.ird(),
                ready_o: true,
                trigger_o: false,
                cfg_err_o: 0,
            };
        }
        let min = c.ccti_min;
        let mut ccti = self.ccti_q;
        let mut timer = self.timer_q;
        if i.tick_i && timer != 0 {
            if timer == 1 {
                if ccti > min {
                    ccti -= 1;
                }
                timer = if ccti > min { c.ccti_timer } else { 0 };
            } else {
                timer -= 1;
            }
        }
        if i.becn_i {
            ccti = (u16::from(ccti) + u16::from(c.ccti_increase)).min(c.ccti_limit) as u8;
            if timer == 0 {
                timer = c.ccti_timer;
            }
        }
        let ird = self.ird();
        let out = Out {
            ccti_o: self.ccti_q,
            ird_o: ird,
            ready_o: self.ipd_q == 0,
            trigger_o: i.becn_i && c.trigger_threshold != 0 && ccti >= c.trigger_threshold,
            cfg_err_o: 0,
        };
        self.ccti_q = ccti;
        self.timer_q = timer;
        self.ipd_q = if i.sent_i {
            ird
        } else {
            self.ipd_q.saturating_sub(1)
        };
        out
    }

    fn idle_input(&self) -> In {
        In {
            rst_ni: true,
            ..In::default()
        }
    }

    fn next_event(&self) -> Option<u64> {
        // Without ticks the timer is frozen: only the delay countdown runs, and ready_o rises when it ends.
        (self.ipd_q != 0).then_some(u64::from(self.ipd_q))
    }

    fn skip(&mut self, n: u64) {
        self.ipd_q = (u64::from(self.ipd_q).saturating_sub(n)) as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn cfg(limit: u16, min: u8, inc: u8, timer: u16) -> Config {
        Config {
            cct: (0..=limit)
                .map(|i| CctEntryBits {
                    shift: (i % 4) as u8,
                    multiplier: i * 10,
                })
                .collect(),
            ccti_limit: limit,
            ccti_min: min,
            ccti_increase: inc,
            ccti_timer: timer,
            trigger_threshold: 0,
            t_pkt: 1000,
        }
    }

    const BECN: In = In {
        rst_ni: true,
        becn_i: true,
        tick_i: false,
        sent_i: false,
    };
    const TICK: In = In {
        rst_ni: true,
        becn_i: false,
        tick_i: true,
        sent_i: false,
    };

    #[test]
    fn ccti_after_becns_and_expiries() {
        // limit 10, min 2, increase 3, timer 2 ticks. Reset CCTI = 2.
        let mut s = CctShaper::new(cfg(10, 2, 3, 2)).unwrap();
        assert_eq!(s.ccti_q, 2);
        let seen: Vec<u8> = (0..3).map(|_| s.step(&BECN).ccti_o).collect();
        assert_eq!(seen, [2, 5, 8]);
        assert_eq!(
            (s.ccti_q, s.timer_q),
            (10, 2),
            "min(11, 10); timer started once"
        );
        // Every second tick is an expiry: 8 expiries bring 10 down to 2 after 16 ticks.
        let mut trace = Vec::new();
        for _ in 0..16 {
            s.step(&TICK);
            trace.push(s.ccti_q);
        }
        assert_eq!(trace, [10, 9, 9, 8, 8, 7, 7, 6, 6, 5, 5, 4, 4, 3, 3, 2]);
        assert_eq!(s.timer_q, 0, "not re-armed at the minimum");
        for _ in 0..10 {
            s.step(&TICK);
        }
        assert_eq!(s.ccti_q, 2);
    }

    #[test]
    fn ird_of_an_entry() {
        let e = CctEntryBits {
            shift: 2,
            multiplier: 100,
        };
        assert_eq!(e.ird(1000), 25_000);
        assert_eq!(CctEntryBits::from_raw(0x8064), e);
        assert_eq!(e.to_raw(), 0x8064);
        // (1001 >> 3) * 3 = 125 * 3.
        assert_eq!(CctEntryBits::from_raw(0xC003).ird(1001), 375);
        // 65535 * 16383 does not fit 24 bits.
        assert_eq!(CctEntryBits::from_raw(0x3fff).ird(65535), IRD_MAX);
        let mut s = CctShaper::new(cfg(10, 0, 6, 0)).unwrap();
        s.step(&BECN);
        // Entry 6: shift 2, multiplier 60: (1000 >> 2) * 60.
        assert_eq!(s.step(&TICK).ird_o, 15_000);
    }

    #[test]
    fn injection_delay_countdown() {
        let mut c = cfg(10, 0, 1, 0);
        c.cct[1] = CctEntryBits {
            shift: 0,
            multiplier: 3,
        };
        c.t_pkt = 1;
        let mut s = CctShaper::new(c).unwrap();
        // CCTI 0: entry 0 has multiplier 0, no delay.
        let o = s.step(&In {
            sent_i: true,
            ..BECN
        });
        assert!(o.ready_o);
        assert_eq!(s.ipd_q, 0, "loaded with the IRD shown before the BECN");
        let o = s.step(&In {
            sent_i: true,
            ..TICK
        });
        assert_eq!(o.ird_o, 3);
        let ready: Vec<bool> = (0..5).map(|_| s.step(&TICK).ready_o).collect();
        assert_eq!(ready, [false, false, false, true, true]);
    }

    #[test]
    fn becn_and_expiry_same_cycle() {
        let mut s = CctShaper::new(cfg(10, 0, 2, 4)).unwrap();
        s.ccti_q = 5;
        s.timer_q = 1;
        let o = s.step(&In {
            tick_i: true,
            ..BECN
        });
        assert_eq!(o.ccti_o, 5);
        // Expiry 5 -> 4, re-armed to 4; BECN 4 -> 6.
        assert_eq!((s.ccti_q, s.timer_q), (6, 4));
        // At the minimum: the expiry leaves the timer stopped, the BECN starts it.
        let mut s = CctShaper::new(cfg(10, 3, 0, 4)).unwrap();
        s.timer_q = 1;
        s.step(&In {
            tick_i: true,
            ..BECN
        });
        assert_eq!((s.ccti_q, s.timer_q), (3, 4));
    }

    #[test]
    fn trigger_threshold() {
        let mut c = cfg(20, 2, 3, 0);
        c.trigger_threshold = 8;
        let mut s = CctShaper::new(c.clone()).unwrap();
        let trig: Vec<bool> = (0..3).map(|_| s.step(&BECN).trigger_o).collect();
        assert_eq!(trig, [false, true, true], "5, 8, 11 against 8");
        assert!(!s.step(&TICK).trigger_o);
        c.trigger_threshold = 0;
        let mut s = CctShaper::new(c).unwrap();
        assert!(!(0..10).any(|_| s.step(&BECN).trigger_o));
    }

    #[test]
    fn config_errors() {
        let mut c = cfg(127, 0, 1, 1);
        c.ccti_min = 130;
        assert_eq!(
            CctShaper::new(c).unwrap_err().to_string(),
            "ccti_min (130) is above ccti_limit (127)"
        );
        let mut c = cfg(100, 0, 1, 1);
        c.cct.truncate(10);
        assert_eq!(
            CctShaper::new(c).unwrap_err().to_string(),
            "cct has 10 entries, fewer than ccti_limit + 1 (101)"
        );
        let mut c = cfg(3, 0, 1, 1);
        c.cct[2].shift = 4;
        assert_eq!(
            CctShaper::new(c).unwrap_err().to_string(),
            "cct[2].shift (4) is above the maximum (3)"
        );
        assert!(CctShaper::new(cfg(128, 0, 1, 1)).is_err());
    }

    #[test]
    fn reset_returns_to_min() {
        let mut s = CctShaper::new(cfg(10, 4, 3, 5)).unwrap();
        s.step(&In {
            sent_i: true,
            ..BECN
        });
        let o = s.step(&In {
            rst_ni: false,
            ..BECN
        });
        assert_eq!((o.ccti_o, o.ready_o, o.trigger_o), (4, true, false));
        assert_eq!((s.ccti_q, s.timer_q, s.ipd_q), (4, 0, 0));
    }

    fn config() -> impl Strategy<Value = Config> {
        (
            0u16..=127,
            any::<u8>(),
            any::<u8>(),
            0u16..6,
            any::<u8>(),
            any::<u16>(),
            any::<u64>(),
        )
            .prop_map(|(limit, min, inc, timer, trig, t_pkt, seed)| {
                let mut r = seed | 1;
                Config {
                    cct: (0..=limit)
                        .map(|_| {
                            r ^= r << 13;
                            r ^= r >> 7;
                            r ^= r << 17;
                            CctEntryBits::from_raw(r as u16)
                        })
                        .collect(),
                    ccti_limit: limit,
                    ccti_min: (u16::from(min) % (limit + 1)) as u8,
                    ccti_increase: inc % 8,
                    ccti_timer: timer,
                    trigger_threshold: trig,
                    t_pkt,
                }
            })
    }

    fn inputs() -> impl Strategy<Value = Vec<In>> {
        proptest::collection::vec(
            (0u8..40, any::<bool>(), any::<bool>()).prop_map(|(r, becn, tick)| In {
                rst_ni: r != 0,
                becn_i: becn && r % 3 == 0,
                tick_i: tick,
                sent_i: r % 5 == 0,
            }),
            0..200,
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(10_000))]

        /// CCTI stays within [ccti_min, ccti_limit] under random BECN, tick, send and reset sequences, and
        /// moves by at most one per expiry.
        #[test]
        fn ccti_stays_in_range(c in config(), seq in inputs()) {
            let mut s = CctShaper::new(c.clone()).unwrap();
            for i in &seq {
                let before = s.ccti_q;
                let o = s.step(i);
                prop_assert_eq!(o.ccti_o, if i.rst_ni { before } else { c.ccti_min });
                prop_assert!(s.ccti_q >= c.ccti_min && u16::from(s.ccti_q) <= c.ccti_limit,
                    "ccti {} outside [{}, {}]", s.ccti_q, c.ccti_min, c.ccti_limit);
                if i.rst_ni && !i.becn_i {
                    prop_assert!(s.ccti_q == before || s.ccti_q + 1 == before);
                    prop_assert!(s.ccti_q == before || i.tick_i);
                }
                prop_assert!(s.timer_q <= c.ccti_timer);
            }
        }

        /// `skip(n)` equals `n` idle steps, and `next_event` is the number of idle edges before `ready_o` rises.
        #[test]
        fn skip_equals_idle_steps(c in config(), seq in inputs(), n in 0u64..3000) {
            let mut a = CctShaper::new(c).unwrap();
            for i in &seq {
                a.step(i);
            }
            let mut b = a.clone();
            let idle = a.idle_input();
            let now = a.clone().step(&idle);
            let ev = a.next_event();
            for k in 0..n {
                let o = b.step(&idle);
                match ev {
                    Some(e) if k < e => prop_assert_eq!(o, now),
                    Some(e) if k == e => prop_assert!(o.ready_o),
                    None => prop_assert_eq!(o, now),
                    _ => {}
                }
            }
            a.skip(n);
            prop_assert_eq!(a, b);
        }
    }
}
