//! Exact link rates and the sub-cycle time base used to serialise packets.
//!
//! A link moves exactly `num / den` bytes per core cycle. Time on a link is counted in *ticks* of `1 / num`
//! cycle: a cycle is `num` ticks and a byte is `den` ticks, so every byte boundary falls on an integer tick and
//! back-to-back packets keep the exact long-run rate with no rounding per packet.
//!
//! A byte occupying ticks `[a, a + den)` counts as sent (and, at the far end, received) in the cycle that holds
//! its last tick, `(a + den - 1) / num`. Both ends of a link use the same rule, so a receiver that knows the tick
//! at which a packet started (its head cycle plus the sub-cycle offset carried in [`super::packet::PacketStart`]) sees
//! every block in exactly the cycle the transmitter sent it, shifted by the link latency.
//!
//! The HCA's rate controllers read the same type as `bytes` per `cycles` ([`LinkRate::bytes`],
//! [`LinkRate::cycles`], [`LinkRate::bps`]).

use serde::{Deserialize, Serialize};

use super::ConfigError;

/// Largest numerator or denominator accepted, so tick arithmetic over 2^40 cycles stays inside `u64`.
pub const RATE_PART_MAX: u32 = 1 << 16;
/// Largest rate in bytes per cycle: one 64-byte block per cycle per VL port of `credit_rx` is 127 blocks, but a
/// link faster than 64 bytes per cycle could finish two short packets in one cycle, which the one-head-per-cycle
/// port interface does not carry.
pub const RATE_MAX_BYTES_PER_CYCLE: u32 = 64;

/// A link rate of exactly `num / den` bytes per cycle (kept reduced).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkRate {
    /// Bytes per `den` cycles.
    pub num: u32,
    /// Cycles per `num` bytes.
    pub den: u32,
}

const fn gcd(mut a: u32, mut b: u32) -> u32 {
    while b != 0 {
        let t = a % b;
        a = b;
        b = t;
    }
    a
}

impl LinkRate {
    /// A rate of `num / den` bytes per cycle, reduced. `setting` names the configuration field in errors.
    pub fn new(num: u32, den: u32) -> Result<Self, ConfigError> {
        LinkRate { num, den }.checked("rate")
    }

    /// A data rate of `mbps` Mbit/s on a core clock of `clock_khz` kHz: `mbps * 10^6 / 8` bytes per
    /// `clock_khz * 10^3` cycles, exactly (4x QDR carries 32 000 Mbit/s of data; 4x SDR 8 000).
    pub fn from_mbps(mbps: u64, clock_khz: u32) -> Result<Self, ConfigError> {
        // bytes/cycle = mbps * 10^6 / 8 / (kHz * 10^3) = mbps * 1000 / (8 * kHz), reduced before the range
        // check.
        let (b, c) = (u128::from(mbps) * 1000, 8 * u128::from(clock_khz));
        let bad = |reason: &str| {
            ConfigError::new("rate", format!("{mbps} Mbit/s at {clock_khz} kHz"), reason)
        };
        if b == 0 || c == 0 {
            return Err(bad("a link rate needs a nonzero rate and clock"));
        }
        let (mut x, mut y) = (b, c);
        while y != 0 {
            (x, y) = (y, x % y);
        }
        let num = u32::try_from(b / x).map_err(|_| bad("too large"))?;
        let den = u32::try_from(c / x).map_err(|_| bad("too large"))?;
        LinkRate { num, den }.checked("rate")
    }

    /// Validates and reduces a rate read from a configuration, naming `setting` in errors.
    pub fn checked(self, setting: &str) -> Result<Self, ConfigError> {
        let LinkRate { num, den } = self;
        if num == 0 || den == 0 {
            return Err(ConfigError::new(
                setting,
                format!("{num}/{den}"),
                "a link rate needs a nonzero numerator and denominator",
            ));
        }
        let g = gcd(num, den);
        let r = LinkRate {
            num: num / g,
            den: den / g,
        };
        if r.num > RATE_PART_MAX || r.den > RATE_PART_MAX {
            return Err(ConfigError::new(
                setting,
                format!("{num}/{den}"),
                format!("reduced numerator and denominator must be at most {RATE_PART_MAX}"),
            ));
        }
        if u64::from(r.num) > u64::from(RATE_MAX_BYTES_PER_CYCLE) * u64::from(r.den) {
            return Err(ConfigError::new(
                setting,
                format!("{num}/{den}"),
                format!("at most {RATE_MAX_BYTES_PER_CYCLE} bytes per cycle"),
            ));
        }
        Ok(r)
    }

    /// Ticks per cycle.
    pub fn ticks_per_cycle(self) -> u64 {
        u64::from(self.num)
    }

    /// Ticks per byte.
    pub fn ticks_per_byte(self) -> u64 {
        u64::from(self.den)
    }

    /// The cycle holding tick `tick`.
    pub fn cycle_of(self, tick: u64) -> u64 {
        tick / u64::from(self.num)
    }

    /// The first tick of `cycle`.
    pub fn tick_of(self, cycle: u64) -> u64 {
        cycle * u64::from(self.num)
    }

    /// The cycle in which the byte ending `bytes` bytes after tick `start` is sent.
    pub fn cycle_of_byte_end(self, start: u64, bytes: u64) -> u64 {
        (start + bytes * u64::from(self.den) - 1) / u64::from(self.num)
    }

    /// `self <= other` as exact rationals.
    pub fn le(self, other: LinkRate) -> bool {
        u64::from(self.num) * u64::from(other.den) <= u64::from(other.num) * u64::from(self.den)
    }

    /// Bytes per [`LinkRate::cycles`] cycles (the numerator).
    pub fn bytes(self) -> u64 {
        u64::from(self.num)
    }

    /// Cycles per [`LinkRate::bytes`] bytes (the denominator).
    pub fn cycles(self) -> u64 {
        u64::from(self.den)
    }

    /// Whole cycles `len` bytes occupy the wire: `ceil(len * den / num)`.
    pub fn wire_cycles(self, len: u64) -> u64 {
        (u128::from(len) * u128::from(self.den)).div_ceil(u128::from(self.num)) as u64
    }

    /// The rate in bit/s on a clock of `hz` Hz, rounded down.
    pub fn bps(self, hz: u64) -> u64 {
        (u128::from(self.num) * 8 * u128::from(hz) / u128::from(self.den)) as u64
    }

    /// Bytes per cycle as a float, for reports only.
    pub fn bytes_per_cycle(self) -> f64 {
        f64::from(self.num) / f64::from(self.den)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reduces_and_rejects() {
        assert_eq!(LinkRate::new(16, 2).unwrap(), LinkRate { num: 8, den: 1 });
        assert_eq!(LinkRate::new(25, 10).unwrap(), LinkRate { num: 5, den: 2 });
        let e = LinkRate::new(0, 3).unwrap_err().to_string();
        assert!(e.contains("rate") && e.contains("0/3"), "{e}");
        assert!(LinkRate::new(65, 1).is_err());
        assert!(LinkRate::new(1, RATE_PART_MAX + 1).is_err());
        assert!(LinkRate::new(2, 2 * RATE_PART_MAX).is_ok(), "reduced first");
    }

    #[test]
    fn byte_cycles_follow_the_last_tick_rule() {
        // 5/2 bytes per cycle: a cycle is 5 ticks, a byte 2 ticks. From tick 0, byte 1 ends at tick 2 (cycle
        // 0), byte 3 ends at tick 6 (cycle 1), byte 5 ends at tick 10 (its last tick 9 is in cycle 1).
        let r = LinkRate::new(5, 2).unwrap();
        assert_eq!(r.cycle_of_byte_end(0, 1), 0);
        assert_eq!(r.cycle_of_byte_end(0, 2), 0);
        assert_eq!(r.cycle_of_byte_end(0, 3), 1);
        assert_eq!(r.cycle_of_byte_end(0, 5), 1);
        assert_eq!(r.cycle_of_byte_end(0, 6), 2);
        // 1000 packets of 37 bytes back to back take exactly 37000 * 2 / 5 = 14800 cycles.
        let mut t = 0u64;
        for _ in 0..1000 {
            t += 37 * r.ticks_per_byte();
        }
        assert_eq!(r.cycle_of_byte_end(0, 37_000), 14_799);
        assert_eq!(t, 74_000);
        assert!(r.le(LinkRate::new(3, 1).unwrap()));
        assert!(!LinkRate::new(3, 1).unwrap().le(r));
    }

    #[test]
    fn rates_from_mbps_and_wire_time() {
        // 32 Gbit/s of data at 1 GHz: 4 bytes per cycle.
        let l = LinkRate::from_mbps(32_000, 1_000_000).unwrap();
        assert_eq!((l.bytes(), l.cycles()), (4, 1));
        assert_eq!(l.wire_cycles(2074), 519, "2074 / 4 = 518.5, rounded up");
        assert_eq!(l.bps(1_000_000_000), 32_000_000_000);
        // 8 Gbit/s at 312.5 MHz: 10^9 bytes/s over 312.5e6 cycles/s = 3.2 bytes per cycle = 16 / 5.
        let l = LinkRate::from_mbps(8_000, 312_500).unwrap();
        assert_eq!((l.bytes(), l.cycles()), (16, 5));
        assert_eq!(l.wire_cycles(16), 5);
        assert_eq!(l.wire_cycles(17), 6);
        assert!(LinkRate::from_mbps(0, 312_500).is_err());
        assert!(LinkRate::from_mbps(8_000, 0).is_err());
        // The same rational as the switch's rate of a link configured in Mbit/s at a clock in MHz.
        assert_eq!(
            LinkRate::from_mbps(40_000, 1_000_000).unwrap(),
            LinkRate::new(40_000, 8_000).unwrap()
        );
    }
}
