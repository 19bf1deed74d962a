//! Configuration errors of the HCA congestion-control parts. Every message names the setting and the value.

use rtl_model::blocks::ConfigError;

/// A setting a controller cannot be built with.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CcError {
    /// A value outside what the setting allows (e.g. "mtu (1000) is invalid: not an IB MTU ...").
    #[error("{setting} ({value}) is invalid: {reason}")]
    Invalid {
        /// The setting at fault.
        setting: &'static str,
        /// Its value.
        value: u64,
        /// Why it is rejected.
        reason: &'static str,
    },
    /// A value above another setting or a maximum (e.g. "min_rate_bps (9) is above max_rate_bps (8)").
    #[error("{setting} ({value}) is above {bound} ({limit})")]
    Above {
        /// The setting at fault.
        setting: &'static str,
        /// Its value.
        value: u64,
        /// The name of what bounds it.
        bound: &'static str,
        /// The bound's value.
        limit: u64,
    },
    /// A rejected setting of an `rtl-model` block (the CCT shaper), with the block's message.
    #[error(transparent)]
    Block(#[from] ConfigError),
}

/// Rejects zero.
pub(crate) fn nonzero(setting: &'static str, value: u64) -> Result<(), CcError> {
    if value == 0 {
        Err(CcError::Invalid {
            setting,
            value,
            reason: "must be nonzero",
        })
    } else {
        Ok(())
    }
}

/// Checks `value <= limit`.
pub(crate) fn at_most(
    setting: &'static str,
    value: u64,
    bound: &'static str,
    limit: u64,
) -> Result<(), CcError> {
    if value > limit {
        Err(CcError::Above {
            setting,
            value,
            bound,
            limit,
        })
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_setting_and_value() {
        assert_eq!(
            nonzero("period_cycles", 0).unwrap_err().to_string(),
            "period_cycles (0) is invalid: must be nonzero"
        );
        assert_eq!(
            at_most("min_rate_bps", 9, "max_rate_bps", 8)
                .unwrap_err()
                .to_string(),
            "min_rate_bps (9) is above max_rate_bps (8)"
        );
        assert!(at_most("x", 8, "y", 8).is_ok());
    }
}
