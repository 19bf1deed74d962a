//! Units shared by every controller, fixed here once:
//!
//! - **Time** is a [`Cycle`]: an integer count of core clock cycles since reset (cycle 0).
//! - **The core clock** is given in kHz ([`CoreClock`]); durations configured in nanoseconds or microseconds are
//!   turned into cycles by rounding down (`ns * kHz / 10^6`), at configuration, never at run time.
//! - **Link rates** are exact rationals, `bytes` per `cycles`: the link layer's [`LinkRate`] (the same type
//!   the switch and the HCA's port serialise with).
//! - **Controller rates** (DCQCN, receiver-driven) are integers in **bit/s** ([`Bps`]). A rate `r`
//!   turns into an inter-packet spacing of `len * 8 * f_Hz / r` cycles (see [`crate::rate::pacer`]).
//! - **MTU** is one of the five IB MTUs ([`Mtu`]).

use serde::{Deserialize, Serialize};

pub use rtl_model::link::LinkRate;

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
    fn clock_serde_is_checked() {
        assert!(serde_json::from_str::<CoreClock>("0").is_err());
        let clk = CoreClock::from_khz(312_500).unwrap();
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
