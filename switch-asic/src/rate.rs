//! Exact link rates and the sub-cycle time base used to serialise packets.
//!
//! A link moves exactly `num / den` bytes per core cycle. Time on a link is counted in *ticks* of `1 / num`
//! cycle: a cycle is `num` ticks and a byte is `den` ticks, so every byte boundary falls on an integer tick and
//! back-to-back packets keep the exact long-run rate with no rounding per packet.
//!
//! A byte occupying ticks `[a, a + den)` counts as sent (and, at the far end, received) in the cycle that holds
//! its last tick, `(a + den - 1) / num`. Both ends of a link use the same rule, so a receiver that knows the tick
//! at which a packet started (its head cycle plus the sub-cycle offset carried in [`crate::PacketStart`]) sees
//! every block in exactly the cycle the transmitter sent it, shifted by the link latency.

use serde::{Deserialize, Serialize};

use crate::config::ConfigError;

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
}
