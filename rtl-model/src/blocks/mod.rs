//! Clocked primitives: each is a synchronous block following [`crate::clocked`] and the twin of an RTL module
//! of the same name in `hdl/`.
//!
//! Conventions shared by every block here (the RTL twins follow them too):
//! - While `rst_ni` is low, strobe outputs (`*_valid_o`, `*_send_o`, `mark_o`, error flags) are 0, value
//!   outputs show the reset values, and the state returns to its reset values at the edge.
//! - [`crate::clocked::Clocked::next_event`] returning `Some(k)` means: the next `k` idle edges leave every
//!   output as it is now (only counters move), and the cycle after them may differ. `skip(n)` is exact for
//!   any `n`, but outputs of edges it passes over are not reported, so callers skip at most `k`.
//! - Configuration errors are [`ConfigError`]s naming the setting and the bad value. A block whose RTL has
//!   held configuration ports also states its rules as bits (`Config::cfg_err`, the RTL's `cfg_err_o`, valid
//!   during reset too): `validate` refuses exactly the configurations with a bit set among those the ports
//!   can carry, so a built block's `cfg_err_o` is always 0.

pub mod cct_shaper;
pub mod cong_detect;
pub mod credit_rx;
pub mod credit_tx;
pub mod fecn_marker;
pub mod fecn_rewrite;
pub mod timebase;
pub mod vl_arb;

/// Largest packet in 64-byte blocks at the 4096-byte MTU: LRH 8 + GRH 40 + BTH 12 + RETH 16 + 4096 payload +
/// ICRC 4 + VCRC 2 = 4178 bytes, 66 blocks (rounded up). Packet-length ports are 7 bits wide because of it.
pub const MAX_PKT_BLOCKS: u8 = 66;

/// A setting a block cannot be built with. The message names the setting and its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// A value above its bound, which is another setting or a hardware maximum
    /// (e.g. "ccti_min (130) is above ccti_limit (127)").
    #[error("{setting} ({value}) is above {bound} ({limit})")]
    Above {
        /// The setting at fault.
        setting: &'static str,
        /// Its value.
        value: u64,
        /// What bounds it: the name of another setting, or "the maximum".
        bound: &'static str,
        /// The bound's value.
        limit: u64,
    },
    /// A table entry field above its maximum (e.g. `vl_arb_low[3].vl (15) is above the maximum (14)`).
    #[error("{table}[{index}].{field} ({value}) is above the maximum ({limit})")]
    EntryAbove {
        /// The table.
        table: &'static str,
        /// The entry's index.
        index: usize,
        /// The field of the entry.
        field: &'static str,
        /// Its value.
        value: u64,
        /// The field's maximum.
        limit: u64,
    },
    /// A table with fewer entries than another setting needs
    /// (e.g. "cct has 10 entries, fewer than ccti_limit + 1 (101)").
    #[error("{table} has {len} entries, fewer than {need_name} ({need})")]
    TooShort {
        /// The table.
        table: &'static str,
        /// Entries it has.
        len: usize,
        /// What sets the need.
        need_name: &'static str,
        /// Entries needed.
        need: usize,
    },
    /// A value the block cannot work with for another reason (e.g. "fc_interval (0) is invalid: ...").
    #[error("{setting} ({value}) is invalid: {reason}")]
    Invalid {
        /// The setting at fault.
        setting: &'static str,
        /// Its value.
        value: u64,
        /// Why it is rejected.
        reason: &'static str,
    },
}

/// Checks `value <= limit`, naming the bound in the error.
pub(crate) fn check_above(
    setting: &'static str,
    value: u64,
    bound: &'static str,
    limit: u64,
) -> Result<(), ConfigError> {
    if value > limit {
        Err(ConfigError::Above {
            setting,
            value,
            bound,
            limit,
        })
    } else {
        Ok(())
    }
}

/// Checks `value <= max` where `max` is a hardware limit.
pub(crate) fn check_max(setting: &'static str, value: u64, max: u64) -> Result<(), ConfigError> {
    check_above(setting, value, "the maximum", max)
}

/// `bit` when `cond` holds, else 0: one rule's bit of a `cfg_err` word.
pub(crate) const fn flag(cond: bool, bit: u8) -> u8 {
    if cond {
        bit
    } else {
        0
    }
}

/// All-ones mask of `bits` bits (`bits <= 32`), for masking inputs to their port width.
pub(crate) const fn mask(bits: u32) -> u32 {
    if bits >= 32 {
        u32::MAX
    } else {
        (1u32 << bits) - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_error_names_setting_and_value() {
        let e = check_above("ccti_min", 130, "ccti_limit", 127).unwrap_err();
        assert_eq!(e.to_string(), "ccti_min (130) is above ccti_limit (127)");
        let e = check_max("threshold", 16, 15).unwrap_err();
        assert_eq!(e.to_string(), "threshold (16) is above the maximum (15)");
        assert_eq!(check_max("threshold", 15, 15), Ok(()));
    }

    #[test]
    fn mask_widths() {
        assert_eq!(mask(12), 0xfff);
        assert_eq!(mask(7), 0x7f);
        assert_eq!(mask(32), u32::MAX);
    }
}
