//! `timebase`: the 1.024 us tick shared by the CC timers, derived exactly from the core clock.
//!
//! A fractional accumulator: each cycle adds `inc`; when the sum reaches `modulus` a tick is emitted and
//! `modulus` subtracted. With a core clock of `f` kHz, one cycle is `1e6 / f` ns and one tick 1024 ns, so in
//! units of `1 / f` ns a cycle is `1_000_000` and a tick `1024 * f`; with a period of `p` ps, a cycle is `p`
//! and a tick `1_024_000`. Both pairs are reduced by their gcd at configuration. Ticks are therefore spaced
//! `floor` or `ceil` of `modulus / inc` cycles apart and average exactly 1.024 us over the long run, with no
//! floating point. A 32-bit `ts_q` counts ticks (the CC TimeStamp attribute's unit).
//!
//! | port      | dir | width | meaning                                                                    |
//! |-----------|-----|-------|----------------------------------------------------------------------------|
//! | `rst_ni`  | in  | 1     | synchronous reset, active low                                              |
//! | `tick_o`  | out | 1     | a 1.024 us tick this cycle: `acc_q + inc >= modulus`                       |
//! | `ts_o`    | out | 32    | ticks since reset, wrapping (`ts_q`)                                       |
//!
//! Held-constant configuration ports in the RTL: `inc` (32) and `modulus` (32), computed here
//! ([`Timebase::inc`], [`Timebase::modulus`]). State: `acc_q` (32, always below `modulus`), `ts_q` (32).
//!
//! Designer choices, named: reset phase `acc_q = 0`, so the first tick comes `ceil(modulus / inc)` cycles
//! after reset (in the cycle where the accumulator would reach the modulus).

use super::{flag, ConfigError};
use crate::clocked::Clocked;

/// Picoseconds in one tick.
pub const TICK_PS: u32 = 1_024_000;

/// How the core clock is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClockSpec {
    /// Frequency in kHz (exact for any clock that is a whole number of kHz).
    FreqKhz(u32),
    /// Period in picoseconds (exact when the period is a whole number of ps).
    PeriodPs(u32),
}

/// Static configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// The core clock.
    pub clock: ClockSpec,
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// `cfg_err_o` bit: the increment is 0 (a clock of 0 ps: no tick ever).
pub const CFG_ERR_INC_ZERO: u8 = 1 << 0;
/// `cfg_err_o` bit: the increment is not below the modulus (a clock of 0 kHz, or one cycle per tick or
/// slower).
pub const CFG_ERR_INC_NOT_BELOW: u8 = 1 << 1;
/// Width of `cfg_err_o`, bits.
pub const CFG_ERR_WIDTH: u32 = 2;

/// The configuration rules the RTL's held ports `inc`, `modulus` break, a bit per rule
/// ([`CFG_ERR_INC_ZERO`], [`CFG_ERR_INC_NOT_BELOW`]): what the RTL shows on `cfg_err_o`.
pub fn cfg_err_of(inc: u64, modulus: u64) -> u8 {
    flag(inc == 0, CFG_ERR_INC_ZERO) | flag(inc >= modulus, CFG_ERR_INC_NOT_BELOW)
}

impl Config {
    /// [`cfg_err_of`] the clock's ratio (before reduction by the gcd, which changes neither rule).
    /// [`Config::validate`] refuses every clock with a bit set, and also one whose reduced ratio does not fit
    /// the 32-bit ports.
    pub fn cfg_err(&self) -> u8 {
        let (inc, modulus) = match self.clock {
            ClockSpec::FreqKhz(f) => (1_000_000u64, 1024 * u64::from(f)),
            ClockSpec::PeriodPs(p) => (u64::from(p), u64::from(TICK_PS)),
        };
        cfg_err_of(inc, modulus)
    }

    /// `(inc, modulus)` reduced, or why the clock cannot be used.
    pub fn ratio(&self) -> Result<(u32, u32), ConfigError> {
        let (inc, modulus, setting, value) = match self.clock {
            ClockSpec::FreqKhz(f) => (1_000_000u64, 1024 * u64::from(f), "clock FreqKhz", f),
            ClockSpec::PeriodPs(p) => (u64::from(p), u64::from(TICK_PS), "clock PeriodPs", p),
        };
        if value == 0 {
            return Err(ConfigError::Invalid {
                setting,
                value: 0,
                reason: "a clock needs a nonzero frequency or period",
            });
        }
        let g = gcd(inc, modulus);
        let (inc, modulus) = (inc / g, modulus / g);
        if inc >= modulus {
            return Err(ConfigError::Invalid {
                setting,
                value: value.into(),
                reason: "the core clock must be faster than one cycle per 1.024 us tick",
            });
        }
        match u32::try_from(modulus) {
            Ok(m) => Ok((inc as u32, m)),
            Err(_) => Err(ConfigError::Invalid {
                setting,
                value: value.into(),
                reason: "the reduced tick modulus does not fit 32 bits",
            }),
        }
    }

    /// Checks the clock can be turned into a 32-bit accumulator.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.ratio().map(|_| ())
    }
}

/// Input ports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct In {
    /// Reset, active low.
    pub rst_ni: bool,
}

/// Output ports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Out {
    /// A tick this cycle.
    pub tick_o: bool,
    /// Ticks since reset.
    pub ts_o: u32,
    /// Configuration rules broken ([`Config::cfg_err`]): 0 for every block built, as [`Config::validate`]
    /// refuses the rest; the RTL computes it from its held ports.
    pub cfg_err_o: u8,
}

/// The shared 1.024 us tick generator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Timebase {
    inc: u32,
    modulus: u32,
    /// Fractional accumulator, below `modulus`.
    pub acc_q: u32,
    /// Ticks since reset.
    pub ts_q: u32,
}

impl Timebase {
    /// Builds the block in its reset state.
    pub fn new(cfg: Config) -> Result<Self, ConfigError> {
        let (inc, modulus) = cfg.ratio()?;
        Ok(Timebase {
            inc,
            modulus,
            acc_q: 0,
            ts_q: 0,
        })
    }

    /// Accumulator increment per cycle.
    pub fn inc(&self) -> u32 {
        self.inc
    }

    /// Accumulator value of one tick.
    pub fn modulus(&self) -> u32 {
        self.modulus
    }
}

impl Clocked for Timebase {
    type In = In;
    type Out = Out;

    // Inlinable across crates: the co-simulation steps it in its per-cycle loop.
    #[inline]
    fn step(&mut self, i: &In) -> Out {
        if !i.rst_ni {
            self.acc_q = 0;
            self.ts_q = 0;
            return Out::default();
        }
        let sum = u64::from(self.acc_q) + u64::from(self.inc);
        let tick = sum >= u64::from(self.modulus);
        let out = Out {
            tick_o: tick,
            ts_o: self.ts_q,
            cfg_err_o: 0,
        };
        if tick {
            self.acc_q = (sum - u64::from(self.modulus)) as u32;
            self.ts_q = self.ts_q.wrapping_add(1);
        } else {
            self.acc_q = sum as u32;
        }
        out
    }

    fn idle_input(&self) -> In {
        In { rst_ni: true }
    }

    fn next_event(&self) -> Option<u64> {
        // The tick cycle j (0-based) is the first with acc + (j + 1) * inc >= modulus.
        let gap = u64::from(self.modulus.saturating_sub(self.acc_q));
        Some(gap.div_ceil(u64::from(self.inc)).saturating_sub(1))
    }

    fn skip(&mut self, n: u64) {
        let total = u128::from(self.acc_q) + u128::from(n) * u128::from(self.inc);
        let m = u128::from(self.modulus);
        self.acc_q = (total % m) as u32;
        self.ts_q = self.ts_q.wrapping_add((total / m) as u32);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn tick_cycles(tb: &mut Timebase, cycles: u64) -> Vec<u64> {
        (0..cycles)
            .filter(|_| tb.step(&In { rst_ni: true }).tick_o)
            .collect()
    }

    #[test]
    fn one_ghz_ticks_every_1024_cycles() {
        let mut tb = Timebase::new(Config {
            clock: ClockSpec::FreqKhz(1_000_000),
        })
        .unwrap();
        assert_eq!((tb.inc(), tb.modulus()), (1, 1024));
        assert_eq!(tb.next_event(), Some(1023));
        assert_eq!(tick_cycles(&mut tb, 3 * 1024), [1023, 2047, 3071]);
        assert_eq!(tb.ts_q, 3);
    }

    #[test]
    fn fractional_clock_averages_exactly() {
        // 1.5 GHz: 1536 cycles per tick exactly. 1.3 GHz: 1331.2 cycles per tick, so 5 ticks every 6656 cycles.
        let mut tb = Timebase::new(Config {
            clock: ClockSpec::FreqKhz(1_300_000),
        })
        .unwrap();
        assert_eq!((tb.inc(), tb.modulus()), (5, 6656));
        let t = tick_cycles(&mut tb, 6656 * 4);
        assert_eq!(t.len(), 20);
        assert_eq!(&t[..5], [1331, 2662, 3993, 5324, 6655]);
        let gaps: Vec<u64> = t.windows(2).map(|w| w[1] - w[0]).collect();
        assert!(gaps.iter().all(|&g| g == 1331 || g == 1332));
        // 625 ps = 1.6 GHz: 1638.4 cycles per tick.
        let tb = Timebase::new(Config {
            clock: ClockSpec::PeriodPs(625),
        })
        .unwrap();
        assert_eq!((tb.inc(), tb.modulus()), (5, 8192));
    }

    #[test]
    fn bad_clocks() {
        assert!(Timebase::new(Config {
            clock: ClockSpec::FreqKhz(0)
        })
        .is_err());
        // 1024 ns per cycle: one tick per cycle is not below the modulus.
        let e = Timebase::new(Config {
            clock: ClockSpec::PeriodPs(TICK_PS),
        })
        .unwrap_err();
        assert!(e
            .to_string()
            .starts_with("clock PeriodPs (1024000) is invalid"));
        assert!(Timebase::new(Config {
            clock: ClockSpec::FreqKhz(977)
        })
        .is_ok());
    }

    #[test]
    fn reset_restarts_phase() {
        let mut tb = Timebase::new(Config {
            clock: ClockSpec::FreqKhz(1_000_000),
        })
        .unwrap();
        tb.skip(5000);
        assert_eq!((tb.acc_q, tb.ts_q), (5000 % 1024, 4));
        assert_eq!(tb.step(&In { rst_ni: false }), Out::default());
        assert_eq!((tb.acc_q, tb.ts_q), (0, 0));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(10_000))]

        /// `skip(n)` equals `n` steps, and `next_event` counts the quiet cycles before the next tick.
        #[test]
        fn skip_equals_idle_steps(
            clock in prop_oneof![
                (1000u32..=5_000_000).prop_map(ClockSpec::FreqKhz),
                (200u32..=1_000_000).prop_map(ClockSpec::PeriodPs),
            ],
            prefix in 0u32..3000,
            ts in any::<u32>(),
            n in 0u64..5000,
        ) {
            let mut a = Timebase::new(Config { clock }).unwrap();
            a.ts_q = ts;
            for _ in 0..prefix {
                a.step(&In { rst_ni: true });
            }
            let mut b = a.clone();
            let ev = a.next_event().unwrap();
            for k in 0..n {
                let o = b.step(&In { rst_ni: true });
                prop_assert_eq!(o.tick_o, k == ev, "edge {} next_event {}", k, ev);
                if k >= ev { break; }
            }
            let mut b = a.clone();
            for _ in 0..n {
                b.step(&In { rst_ni: true });
            }
            a.skip(n);
            prop_assert_eq!(a, b);
        }
    }
}
