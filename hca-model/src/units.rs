//! Units shared by every controller, fixed here once:
//!
//! - **Time** is a [`Cycle`]: an integer count of core clock cycles since reset (cycle 0).
//! - **The core clock** is given in kHz ([`CoreClock`]); durations configured in nanoseconds or microseconds are
//!   turned into cycles by rounding down (`ns * kHz / 10^6`), at configuration, never at run time.
//! - **Link rates** are exact rationals, `bytes` per `cycles` ([`LinkRate`]); the wire time of a packet is
//!   rounded up to whole cycles (a packet occupies the wire for whole cycles).
//! - **Controller rates** (DCQCN, receiver-driven, FIMD/PIPD) are integers in **bit/s** ([`Bps`]). A rate `r`
//!   turns into an inter-packet spacing of `len * 8 * f_Hz / r` cycles (see [`crate::rate::pacer`]).
//! - **MTU** is one of the five IB MTUs ([`Mtu`]).

use serde::{Deserialize, Serialize};

use crate::error::{nonzero, CcError};

/// A core clock cycle number (or a count of cycles).
pub type Cycle = u64;

/// A rate in bits per second.
pub type Bps = u64;

/// The core clock frequency. Serde form: the frequency in kHz (a number), checked on reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "u32", into = "u32")]
pub struct CoreClock {
    khz: u32,
}

impl CoreClock {
    /// A clock of `khz` kHz (nonzero).
    pub fn from_khz(khz: u32) -> Result<Self, CcError> {
        nonzero("core clock kHz", khz.into())?;
        Ok(CoreClock { khz })
    }

    /// The frequency in kHz.
    pub fn khz(&self) -> u32 {
        self.khz
    }

    /// The frequency in Hz.
    pub fn hz(&self) -> u64 {
        u64::from(self.khz) * 1000
    }

    /// Cycles in `ns` nanoseconds, rounded down.
    pub fn ns_to_cycles(&self, ns: u64) -> Cycle {
        (u128::from(ns) * u128::from(self.khz) / 1_000_000) as u64
    }

    /// Cycles in `us` microseconds, rounded down.
    pub fn us_to_cycles(&self, us: u64) -> Cycle {
        (u128::from(us) * u128::from(self.khz) / 1000) as u64
    }

    /// Cycles to send `bytes` bytes at `rate` bit/s: `bytes * 8 * f_Hz / rate`, as a quotient and the
    /// remainder in units of `1 / rate` cycles. `rate` must be nonzero (controllers validate it).
    pub fn cycles_at_rate(&self, bytes: u64, rate: Bps) -> (Cycle, u64) {
        let num = u128::from(bytes) * 8 * u128::from(self.hz());
        let r = u128::from(rate.max(1));
        ((num / r) as u64, (num % r) as u64)
    }
}

impl TryFrom<u32> for CoreClock {
    type Error = CcError;
    fn try_from(khz: u32) -> Result<Self, CcError> {
        CoreClock::from_khz(khz)
    }
}

impl From<CoreClock> for u32 {
    fn from(c: CoreClock) -> u32 {
        c.khz
    }
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// A link's data rate as an exact rational: `bytes` bytes every `cycles` cycles (reduced). Serde form:
/// `{ bytes = 4, cycles = 1 }`, checked on reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "LinkRateFields", into = "LinkRateFields")]
pub struct LinkRate {
    bytes: u64,
    cycles: u64,
}

impl LinkRate {
    /// `bytes` bytes per `cycles` cycles (both nonzero).
    pub fn per_cycles(bytes: u64, cycles: u64) -> Result<Self, CcError> {
        nonzero("link rate bytes", bytes)?;
        nonzero("link rate cycles", cycles)?;
        let g = gcd(bytes, cycles);
        Ok(LinkRate {
            bytes: bytes / g,
            cycles: cycles / g,
        })
    }

    /// A data rate of `mbps` Mbit/s on a core clock: `mbps * 10^6 / 8` bytes per `f_Hz` cycles, exactly.
    /// (4x QDR carries 32 000 Mbit/s of data; 4x SDR 8 000.)
    pub fn from_mbps(mbps: u64, clock: CoreClock) -> Result<Self, CcError> {
        nonzero("link rate mbps", mbps)?;
        // bytes/cycle = mbps * 10^6 / 8 / (kHz * 10^3) = mbps * 1000 / (8 * kHz).
        Self::per_cycles(mbps * 1000, 8 * u64::from(clock.khz()))
    }

    /// Numerator: bytes.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Denominator: cycles.
    pub fn cycles(&self) -> u64 {
        self.cycles
    }

    /// Whole cycles `len` bytes occupy the wire: `ceil(len * cycles / bytes)`.
    pub fn wire_cycles(&self, len: u64) -> Cycle {
        (u128::from(len) * u128::from(self.cycles)).div_ceil(u128::from(self.bytes)) as u64
    }

    /// The rate in bit/s on `clock`, rounded down.
    pub fn bps(&self, clock: CoreClock) -> Bps {
        (u128::from(self.bytes) * 8 * u128::from(clock.hz()) / u128::from(self.cycles)) as u64
    }
}

/// The serde form of [`LinkRate`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkRateFields {
    /// Bytes ...
    pub bytes: u64,
    /// ... per this many cycles.
    pub cycles: u64,
}

impl TryFrom<LinkRateFields> for LinkRate {
    type Error = CcError;
    fn try_from(f: LinkRateFields) -> Result<Self, CcError> {
        LinkRate::per_cycles(f.bytes, f.cycles)
    }
}

impl From<LinkRate> for LinkRateFields {
    fn from(l: LinkRate) -> Self {
        LinkRateFields {
            bytes: l.bytes,
            cycles: l.cycles,
        }
    }
}

/// An IB path MTU: 256, 512, 1024, 2048 or 4096 bytes of payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "u16", into = "u16")]
pub struct Mtu(u16);

impl Mtu {
    /// The MTU of `bytes` bytes, or an error naming the value.
    pub fn new(bytes: u16) -> Result<Self, CcError> {
        match bytes {
            256 | 512 | 1024 | 2048 | 4096 => Ok(Mtu(bytes)),
            _ => Err(CcError::Invalid {
                setting: "mtu",
                value: bytes.into(),
                reason: "not an IB MTU (256, 512, 1024, 2048, 4096)",
            }),
        }
    }

    /// Payload bytes.
    pub fn bytes(&self) -> u16 {
        self.0
    }

    /// The PortInfo/QP code: 1 = 256 .. 5 = 4096.
    pub fn code(&self) -> u8 {
        (self.0.trailing_zeros() - 7) as u8
    }
}

impl TryFrom<u16> for Mtu {
    type Error = CcError;
    fn try_from(v: u16) -> Result<Self, CcError> {
        Mtu::new(v)
    }
}

impl From<Mtu> for u16 {
    fn from(m: Mtu) -> u16 {
        m.0
    }
}

/// Bytes an IB packet of a full MTU carries besides its payload in the common case the CCT's `T_pkt` refers
/// to: LRH 8 + BTH 12 + ICRC 4 + VCRC 2 (RC without extension headers). A named default; UD adds DETH (8).
pub const IB_LOCAL_OVERHEAD: u32 = 26;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mtu_values_and_errors() {
        for (b, c) in [(256, 1), (512, 2), (1024, 3), (2048, 4), (4096, 5)] {
            assert_eq!(Mtu::new(b).unwrap().code(), c);
        }
        assert_eq!(
            Mtu::new(1000).unwrap_err().to_string(),
            "mtu (1000) is invalid: not an IB MTU (256, 512, 1024, 2048, 4096)"
        );
        assert!(serde_json::from_str::<Mtu>("2048").is_ok());
        assert!(serde_json::from_str::<Mtu>("1500").is_err());
    }

    #[test]
    fn link_rate_arithmetic() {
        let clk = CoreClock::from_khz(1_000_000).unwrap();
        // 32 Gbit/s of data at 1 GHz: 4 bytes per cycle.
        let l = LinkRate::from_mbps(32_000, clk).unwrap();
        assert_eq!((l.bytes(), l.cycles()), (4, 1));
        assert_eq!(l.wire_cycles(2074), 519, "2074 / 4 = 518.5, rounded up");
        assert_eq!(l.bps(clk), 32_000_000_000);
        // 8 Gbit/s at 312.5 MHz: 10^9 bytes/s over 312.5e6 cycles/s = 3.2 bytes per cycle = 16 / 5.
        let clk = CoreClock::from_khz(312_500).unwrap();
        let l = LinkRate::from_mbps(8_000, clk).unwrap();
        assert_eq!((l.bytes(), l.cycles()), (16, 5));
        assert_eq!(l.wire_cycles(16), 5);
        assert_eq!(l.wire_cycles(17), 6);
        assert!(LinkRate::from_mbps(0, clk).is_err());
        assert!(CoreClock::from_khz(0).is_err());
        // Serde forms are checked.
        assert_eq!(
            serde_json::from_str::<LinkRate>(r#"{"bytes": 8, "cycles": 2}"#).unwrap(),
            LinkRate::per_cycles(4, 1).unwrap()
        );
        let e = serde_json::from_str::<LinkRate>(r#"{"bytes": 0, "cycles": 2}"#).unwrap_err();
        assert!(
            e.to_string().contains("link rate bytes (0) is invalid"),
            "{e}"
        );
        assert!(serde_json::from_str::<CoreClock>("0").is_err());
        assert_eq!(serde_json::to_string(&clk).unwrap(), "312500");
    }

    #[test]
    fn clock_conversions() {
        let clk = CoreClock::from_khz(250_000).unwrap();
        assert_eq!(clk.us_to_cycles(55), 13_750);
        assert_eq!(clk.ns_to_cycles(1024), 256);
        assert_eq!(clk.ns_to_cycles(3), 0, "rounded down");
        // 1000 bytes at 1 Gbit/s = 8 us = 2000 cycles at 250 MHz.
        assert_eq!(clk.cycles_at_rate(1000, 1_000_000_000), (2000, 0));
        // 1 byte at 3 bit/s: 8 * 250e6 / 3 = 666_666_666 r 2.
        assert_eq!(clk.cycles_at_rate(1, 3), (666_666_666, 2));
    }
}
