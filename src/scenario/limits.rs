//! The ranges of scenario values, derived from what the model can represent and simulate
//! (docs/scenario-format.md, "Limits and warnings").
//!
//! Time inside the model is a cycle count, and a link's sub-cycle tick count is the cycle count times the
//! reduced numerator of its rate (at most 2^16, `rtl_model::link::rate::RATE_PART_MAX`), so every cycle a run
//! reaches must stay below [`MAX_CYCLES`] = 2^40 for tick arithmetic to fit in a `u64`. The ranges of the time
//! values are chosen so that the longest run, its drain and the longest wire stay below that at the fastest
//! clock; the arithmetic that converts them is checked as well, so a value that slipped past a range is an
//! error, never a wrapped number.

use rtl_model::link::rate::RATE_MAX_BYTES_PER_CYCLE;

use crate::topology::{FIRST_HCA_LID, MAX_UNICAST_LID};

/// Cycles a run (with its drain and flow-control settling) may reach: tick arithmetic on a link multiplies a
/// cycle by up to 2^16 and must fit in a `u64`.
pub const MAX_CYCLES: u64 = 1 << 40;
/// Fastest core clock, MHz.
pub const MAX_CLOCK_MHZ: u32 = 8192;
/// Longest run, microseconds (100 s of simulated time).
pub const MAX_DURATION_US: u64 = 100_000_000;
/// Longest drain after the run, microseconds.
pub const MAX_DRAIN_LIMIT_US: u64 = 10_000_000;
/// Longest one-way link latency, nanoseconds (10 ms, some 2,000 km of fibre).
pub const MAX_LATENCY_NS: u64 = 10_000_000;
/// Longest name of a switch, an HCA or a flow, bytes (names become file names of captures and traces).
pub const MAX_NAME_BYTES: usize = 128;
/// Largest scenario or queueing file read, bytes.
pub const MAX_FILE_BYTES: u64 = 16 << 20;
/// Most switches and HCAs in one fabric: every node gets a unicast LID (HCAs first, then switches).
pub const MAX_NODES: u64 = (MAX_UNICAST_LID - FIRST_HCA_LID + 1) as u64;

// The longest run, its longest drain and two trips over the longest wire at the fastest clock, plus two
// flow-control periods, stay below MAX_CYCLES.
const _: () = assert!(
    (MAX_DURATION_US + MAX_DRAIN_LIMIT_US) * MAX_CLOCK_MHZ as u64
        + 2 * (MAX_LATENCY_NS * MAX_CLOCK_MHZ as u64).div_ceil(1000)
        + 2 * u16::MAX as u64
        + 2
        < MAX_CYCLES
);

/// Fastest link or flow rate at `clock_mhz`, Mbit/s: 64 bytes per cycle.
pub fn max_rate_mbps(clock_mhz: u32) -> u64 {
    u64::from(RATE_MAX_BYTES_PER_CYCLE) * 8 * u64::from(clock_mhz)
}

/// Cycles of `us` microseconds at `clock_mhz`, or `None` when it would not fit.
pub fn us_to_cycles(us: u64, clock_mhz: u32) -> Option<u64> {
    us.checked_mul(u64::from(clock_mhz))
        .filter(|&c| c < MAX_CYCLES)
}

/// Cycles of `ns` nanoseconds at `clock_mhz`, rounded up, or `None` when it would not fit.
pub fn ns_to_cycles(ns: u64, clock_mhz: u32) -> Option<u64> {
    ns.checked_mul(u64::from(clock_mhz))
        .map(|c| c.div_ceil(1000))
        .filter(|&c| c < MAX_CYCLES)
}

/// The message `what` for a value outside `lo..=hi`.
pub fn out_of_range(what: &str, value: impl std::fmt::Display, lo: u64, hi: u64) -> String {
    format!("{what}: {value} is not in {lo}..={hi}")
}

/// Checks a node or flow name: not empty, at most [`MAX_NAME_BYTES`], no control characters (names appear
/// in file names, CSV rows and messages).
pub fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("must not be empty".into());
    }
    if name.len() > MAX_NAME_BYTES {
        return Err(format!(
            "is {} bytes long; at most {MAX_NAME_BYTES}",
            name.len()
        ));
    }
    if name.chars().any(char::is_control) {
        return Err(format!("{name:?} holds a control character"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions_refuse_what_does_not_fit() {
        assert_eq!(us_to_cycles(2000, 1000), Some(2_000_000));
        assert_eq!(us_to_cycles(18_446_744_073_709_552, 1000), None);
        assert_eq!(
            us_to_cycles(MAX_DURATION_US, MAX_CLOCK_MHZ),
            Some(819_200_000_000)
        );
        assert_eq!(ns_to_cycles(100, 1000), Some(100));
        assert_eq!(ns_to_cycles(1, 250), Some(1));
        assert_eq!(ns_to_cycles(u64::MAX / 2, 1000), None);
        assert_eq!(max_rate_mbps(1000), 512_000);
        assert_eq!(MAX_NODES, 0xBFFF);
    }

    #[test]
    fn names() {
        assert!(check_name("H1").is_ok());
        assert!(check_name("").is_err());
        assert!(check_name("a\nb").is_err());
        assert!(check_name(&"x".repeat(129)).is_err());
    }
}
