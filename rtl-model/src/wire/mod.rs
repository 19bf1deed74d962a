//! Bit-accurate views of InfiniBand and RoCEv2 packet headers, in the style of smoltcp's `wire` module.
//!
//! Each header has a `Packet<T: AsRef<[u8]>>` view over a byte buffer and a `Repr` (a plain struct of the
//! header's fields). Rules that hold for every view here:
//! - `Packet::new_checked(buf)` checks the length (and any length field); after it returned `Ok`, no accessor
//!   panics. `Packet::new_unchecked` is for buffers the caller sized with `Repr::buffer_len()`.
//! - Getters live in `impl<T: AsRef<[u8]>>`, setters in `impl<T: AsRef<[u8]> + AsMut<[u8]>>`; setters of
//!   sub-byte fields keep the other bits of the byte.
//! - `Repr::parse` validates and returns a typed [`Error`]; `Repr::emit` cannot fail.
//! - Enumerated codes keep unknown values (`Unknown(u8)`) so any header round-trips.
//! - CRCs and checksums are not checked here: see [`crate::crc`] and the `verify_*`/`fill_*` methods.
//!
//! Bit notation in the docs: `B1[7:4]` is byte 1, bits 7 to 4, bit 7 the most significant; fields are
//! big-endian unless stated.

use core::ops::Range;

/// Byte range of a field inside its header.
pub(crate) type Field = Range<usize>;

/// Why a header could not be parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The buffer is shorter than the header, or than a length field of the header says.
    #[error("{header}: truncated: need {need} bytes, have {have}")]
    Truncated {
        header: &'static str,
        need: usize,
        have: usize,
    },
    /// A field holds a value the format does not allow (a version, a next-header code, a length).
    #[error("{header}: field {field} has invalid value {value:#x}")]
    BadField {
        header: &'static str,
        field: &'static str,
        value: u32,
    },
}

/// Result of a parse.
pub type Result<T> = core::result::Result<T, Error>;

/// Checks that `buf` holds at least `need` bytes of `header`.
pub(crate) fn check_len(header: &'static str, buf: &[u8], need: usize) -> Result<()> {
    if buf.len() < need {
        Err(Error::Truncated {
            header,
            need,
            have: buf.len(),
        })
    } else {
        Ok(())
    }
}

pub mod aeth;
pub mod bth;
pub mod builder;
pub mod deth;
pub mod ethernet;
pub mod flow_ctl;
pub mod grh;
pub mod ib_cnp;
pub mod ipv4;
pub mod ipv6;
pub mod lrh;
pub mod pfc;
pub mod roce_cnp;
pub mod udp;
