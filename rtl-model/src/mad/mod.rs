//! Wire layouts of the management attributes that configure congestion control and VL arbitration, so a
//! configuration can be given in the binary form a subnet manager writes.
//!
//! Every attribute here follows the same pattern:
//! - `WIRE_LEN`: bytes of the attribute (or block) in the MAD data area.
//! - `parse(&[u8])`: reads the first `WIRE_LEN` bytes (trailing bytes, such as the rest of the 192-byte CC
//!   management data area, are ignored); the only error is a short buffer ([`MadError::Length`]). Parsing never
//!   panics.
//! - `emit(&self, &mut [u8])`: writes `WIRE_LEN` bytes and **panics only if the buffer is shorter than
//!   `WIRE_LEN`** (a caller bug, as in smoltcp's `Repr::emit`). Reserved bits are written as zero. A plain value
//!   wider than its wire field is truncated to the field's low bits, as libibmad's `mad_encode_field` does;
//!   call `validate()` first to reject such values instead.
//! - `to_bytes()`: emit into a fresh array; never panics.
//! - serde `Serialize`/`Deserialize` on the plain form, so the same settings can be written in TOML.
//! - `validate()` wherever the plain form can hold a value the wire field cannot.
//!
//! Reserved bits are not kept: `to_bytes(parse(b))` equals `b` with its reserved bits cleared. Subnet managers
//! write them as zero (opensm clears `resv0`/`resv1` explicitly), and a plain configuration form has no place
//! for them.
//!
//! Sources of the layouts: /work/shared/reference/ib-wire-and-cc.md, cross-checked against opensm
//! `include/iba/ib_types.h` and `osm_congestion_control.c`/`osm_qos.c`, rdma-core libibmad `fields.c` and
//! infiniband-diags `ibccconfig.c`; disagreements are noted in the file of the attribute concerned.

use core::fmt;

/// Why an attribute could not be parsed, or why a plain setting cannot be put on the wire.
///
/// A separate type from [`crate::wire::Error`] because configuration errors must say *which* entry of a table is
/// wrong (an SL, a block, an index) and what was expected, which the packet-header error does not carry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MadError {
    /// The buffer is shorter than the attribute.
    #[error("{attr}: truncated: need {need} bytes, have {have}")]
    Length {
        /// Attribute name as the IBA spells it.
        attr: &'static str,
        /// Bytes the attribute occupies.
        need: usize,
        /// Bytes given.
        have: usize,
    },
    /// A field holds a value the attribute (or the configuration rule) does not allow.
    #[error("{attr}: {field}{} = {value}: expected {expected}", idx(.index))]
    Field {
        /// Attribute name as the IBA spells it.
        attr: &'static str,
        /// Field name (the plain-form / TOML name).
        field: &'static str,
        /// Entry index where the field belongs to a table (SL, block, entry number).
        index: Option<usize>,
        /// The offending value.
        value: u64,
        /// What would have been accepted.
        expected: Expected,
    },
    /// Text (a hex port mask) could not be read.
    #[error("{attr}: {what}")]
    Syntax {
        /// Attribute name.
        attr: &'static str,
        /// What is wrong with the text.
        what: &'static str,
    },
}

/// The accepted values of a field, for [`MadError::Field`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expected {
    /// At most this value.
    AtMost(u64),
    /// At least this value.
    AtLeast(u64),
    /// Between the two values, inclusive.
    InRange(u64, u64),
    /// Exactly this value.
    Equal(u64),
    /// A multiple of this value.
    MultipleOf(u64),
}

impl fmt::Display for Expected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expected::AtMost(v) => write!(f, "at most {v}"),
            Expected::AtLeast(v) => write!(f, "at least {v}"),
            Expected::InRange(lo, hi) => write!(f, "{lo}..={hi}"),
            Expected::Equal(v) => write!(f, "{v}"),
            Expected::MultipleOf(v) => write!(f, "a multiple of {v}"),
        }
    }
}

/// Formats an optional table index as `[i]` for error messages.
fn idx(index: &Option<usize>) -> String {
    index.map(|i| format!("[{i}]")).unwrap_or_default()
}

/// Checks that `buf` holds at least `need` bytes of `attr`.
pub(crate) fn check_len(attr: &'static str, buf: &[u8], need: usize) -> Result<(), MadError> {
    if buf.len() < need {
        Err(MadError::Length {
            attr,
            need,
            have: buf.len(),
        })
    } else {
        Ok(())
    }
}

/// Builds a [`MadError::Field`] unless `value <= max`.
pub(crate) fn check_max(
    attr: &'static str,
    field: &'static str,
    index: Option<usize>,
    value: u64,
    max: u64,
) -> Result<(), MadError> {
    if value > max {
        Err(MadError::Field {
            attr,
            field,
            index,
            value,
            expected: Expected::AtMost(max),
        })
    } else {
        Ok(())
    }
}

/// Big-endian u16 at `off`; callers have checked the length.
pub(crate) fn be16(buf: &[u8], off: usize) -> u16 {
    u16::from_be_bytes([buf[off], buf[off + 1]])
}

/// Serde for fixed arrays longer than serde's built-in 32, as a sequence of exactly `N` elements.
pub(crate) mod serde_arr {
    use serde::de::Error as _;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    /// Writes the array as a sequence.
    pub(crate) fn serialize<S: Serializer, T: Serialize, const N: usize>(
        a: &[T; N],
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.collect_seq(a.iter())
    }

    /// Reads a sequence of exactly `N` elements.
    pub(crate) fn deserialize<'de, D: Deserializer<'de>, T: Deserialize<'de>, const N: usize>(
        d: D,
    ) -> Result<[T; N], D::Error> {
        let v = Vec::<T>::deserialize(d)?;
        let len = v.len();
        v.try_into()
            .map_err(|_| D::Error::custom(format!("expected {N} elements, got {len}")))
    }
}

pub mod ca_cong;
pub mod cct;
pub mod port_mask;
pub mod sl2vl;
pub mod switch_cong;
pub mod vlarb;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_messages_name_attribute_field_and_index() {
        let e = MadError::Field {
            attr: "SLtoVLMappingTable",
            field: "sl_to_vl",
            index: Some(3),
            value: 9,
            expected: Expected::AtMost(7),
        };
        assert_eq!(
            e.to_string(),
            "SLtoVLMappingTable: sl_to_vl[3] = 9: expected at most 7"
        );
        let e = MadError::Length {
            attr: "CACongestionSetting",
            need: 132,
            have: 5,
        };
        assert_eq!(
            e.to_string(),
            "CACongestionSetting: truncated: need 132 bytes, have 5"
        );
        let e = MadError::Field {
            attr: "SwitchCongestionSetting",
            field: "threshold",
            index: None,
            value: 16,
            expected: Expected::AtMost(15),
        };
        assert_eq!(
            e.to_string(),
            "SwitchCongestionSetting: threshold = 16: expected at most 15"
        );
    }

    #[test]
    fn check_helpers() {
        assert!(check_len("X", &[0; 3], 4).is_err());
        assert!(check_len("X", &[0; 4], 4).is_ok());
        assert!(check_max("X", "f", None, 15, 15).is_ok());
        assert_eq!(
            check_max("X", "f", Some(2), 16, 15),
            Err(MadError::Field {
                attr: "X",
                field: "f",
                index: Some(2),
                value: 16,
                expected: Expected::AtMost(15)
            })
        );
        assert_eq!(be16(&[0x12, 0x34, 0x56], 1), 0x3456);
    }
}
