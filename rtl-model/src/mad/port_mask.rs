//! 256-bit switch port mask, as in SwitchCongestionSetting's Victim_Mask and Credit_Mask.
//!
//! Wire form: a 256-bit big-endian integer in 32 bytes, bit `p` for port `p`, so port 0 is the least significant
//! bit of byte 31 and port 255 the most significant bit of byte 0. Sources agree: opensm `ib_types.h` ("bit 0:
//! port 0 (enhanced port 0 only), bits [254..1]: ports [254..1], bit 255: reserved"), the Mellanox adb
//! (`Mask_31_0` last, "bit0: port 0"), and Intel's OPA FM, which clears port 0 with `Victim_Mask[31] &= 0xfe`.
//! Bit 255 is reserved by the IBA; it is kept here like any other bit (a mask is only data), so a caller that
//! writes it is not stopped.
//!
//! Serde form: a list of port numbers (`victim_mask = [1, 2, 36]`), written in ascending order. Reading also
//! accepts a hex string of the 256-bit integer (`"0x1ffffffffe"`), the form opensm's `opensm.conf`
//! (`cc_sw_cong_setting_victim_mask 0x...`) and `ibccconfig` use: up to 64 hex digits, right-aligned.

use bitvec::prelude::*;
use core::fmt;
use serde::de::{self, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{check_len, MadError};

const ATTR: &str = "PortMask";

/// A set of switch ports 0..=255 stored in its wire form.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct PortMask {
    /// Wire bytes viewed MSB-first: bitvec index `i` is port `255 - i`.
    bits: BitArray<[u8; 32], Msb0>,
}

impl PortMask {
    /// Bytes of the mask on the wire.
    pub const WIRE_LEN: usize = 32;

    /// The empty mask.
    pub const EMPTY: Self = Self {
        bits: BitArray::ZERO,
    };

    /// The mask whose wire bytes are `bytes`.
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        Self {
            bits: BitArray::new(bytes),
        }
    }

    /// Reads the first 32 bytes of `buf`.
    pub fn parse(buf: &[u8]) -> Result<Self, MadError> {
        check_len(ATTR, buf, Self::WIRE_LEN)?;
        let mut bytes = [0u8; 32];
        bytes.copy_from_slice(&buf[..Self::WIRE_LEN]);
        Ok(Self::from_bytes(bytes))
    }

    /// Writes the mask into the first 32 bytes of `buf`.
    ///
    /// # Panics
    /// If `buf` is shorter than [`Self::WIRE_LEN`].
    pub fn emit(&self, buf: &mut [u8]) {
        buf[..Self::WIRE_LEN].copy_from_slice(&self.to_bytes());
    }

    /// The wire bytes.
    pub fn to_bytes(&self) -> [u8; 32] {
        self.bits.into_inner()
    }

    /// Position of `port` in the MSB-first bit view of the wire bytes.
    fn index(port: u8) -> usize {
        255 - usize::from(port)
    }

    /// Whether `port` is in the mask.
    pub fn get(&self, port: u8) -> bool {
        self.bits[Self::index(port)]
    }

    /// Adds (`on`) or removes `port`.
    pub fn set(&mut self, port: u8, on: bool) {
        self.bits.set(Self::index(port), on);
    }

    /// The mask with `port` added or removed, for building masks in one expression.
    pub fn with(mut self, port: u8, on: bool) -> Self {
        self.set(port, on);
        self
    }

    /// Number of ports in the mask.
    pub fn count(&self) -> usize {
        self.bits.count_ones()
    }

    /// Whether no port is in the mask.
    pub fn is_empty(&self) -> bool {
        self.bits.not_any()
    }

    /// The ports in the mask, in ascending order.
    pub fn iter_ones(&self) -> impl Iterator<Item = u8> + '_ {
        // Ascending ports are descending bit indices, but bitvec 1.1.1's `IterOnes::next_back` on Msb0 overflows
        // (`sp_last_one`), so test each port instead: 256 bit reads, on configuration paths only.
        (0..=255u8).filter(move |&p| self.get(p))
    }

    /// The 256-bit integer as `0x` and 64 hex digits, the form opensm writes in `opensm.conf`.
    pub fn to_hex(&self) -> String {
        let mut s = String::with_capacity(66);
        s.push_str("0x");
        for b in self.to_bytes() {
            s.push_str(&format!("{b:02X}"));
        }
        s
    }

    /// Reads the 256-bit integer from hex: optional `0x`, 1 to 64 hex digits, right-aligned as ibccconfig's
    /// `parse256` does (so `"0x1"` is port 0).
    pub fn from_hex(text: &str) -> Result<Self, MadError> {
        let digits = text
            .strip_prefix("0x")
            .or_else(|| text.strip_prefix("0X"))
            .unwrap_or(text);
        if digits.is_empty() {
            return Err(MadError::Syntax {
                attr: ATTR,
                what: "no hex digits",
            });
        }
        if digits.len() > 64 {
            return Err(MadError::Syntax {
                attr: ATTR,
                what: "more than 64 hex digits",
            });
        }
        let mut mask = Self::EMPTY;
        // The last digit holds ports 0..=3, the one before it ports 4..=7, and so on.
        for (pos, c) in digits.chars().rev().enumerate() {
            let nibble = c.to_digit(16).ok_or(MadError::Syntax {
                attr: ATTR,
                what: "invalid hex digit",
            })?;
            for bit in 0..4 {
                if nibble & (1 << bit) != 0 {
                    // pos <= 63, so the port is at most 255.
                    mask.set((pos * 4 + bit) as u8, true);
                }
            }
        }
        Ok(mask)
    }
}

impl FromIterator<u8> for PortMask {
    fn from_iter<I: IntoIterator<Item = u8>>(ports: I) -> Self {
        let mut mask = Self::EMPTY;
        for p in ports {
            mask.set(p, true);
        }
        mask
    }
}

impl fmt::Debug for PortMask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter_ones()).finish()
    }
}

impl Serialize for PortMask {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter_ones())
    }
}

impl<'de> Deserialize<'de> for PortMask {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(PortMaskVisitor)
    }
}

/// Accepts a list of port numbers or a hex string.
struct PortMaskVisitor;

impl<'de> Visitor<'de> for PortMaskVisitor {
    type Value = PortMask;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of port numbers 0..=255 or a hex string of the 256-bit mask")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<PortMask, A::Error> {
        let mut mask = PortMask::EMPTY;
        while let Some(p) = seq.next_element::<u8>()? {
            mask.set(p, true);
        }
        Ok(mask)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<PortMask, E> {
        PortMask::from_hex(v).map_err(E::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde::de::value::{Error as ValueError, SeqDeserializer, StrDeserializer};
    use std::collections::BTreeSet;

    #[test]
    fn port_0_is_lsb_of_byte_31_and_port_255_msb_of_byte_0() {
        let m = PortMask::EMPTY.with(0, true).with(255, true).with(9, true);
        let b = m.to_bytes();
        assert_eq!(b[0], 0x80);
        assert_eq!(b[31], 0x01);
        assert_eq!(b[30], 0x02, "port 9 = bit 1 of byte 30");
        assert!(b[1..30].iter().all(|&x| x == 0));
        assert_eq!(m.count(), 3);
        assert_eq!(m.iter_ones().collect::<Vec<_>>(), vec![0, 9, 255]);
    }

    #[test]
    fn parse_reads_hand_built_bytes() {
        let mut b = [0u8; 40];
        b[31] = 0b0000_0110; // ports 1, 2
        b[27] = 0x10; // port 4*8 + 4 = 36
        b[32..].fill(0xa5); // trailing bytes are not part of the mask
        let m = PortMask::parse(&b).unwrap();
        assert_eq!(m.iter_ones().collect::<Vec<_>>(), vec![1, 2, 36]);
        assert!(m.get(36) && !m.get(35) && !m.get(0));
    }

    #[test]
    fn emit_writes_exactly_32_bytes() {
        let mut buf = [0xa5u8; 34];
        PortMask::EMPTY.with(7, true).emit(&mut buf);
        assert_eq!(buf[31], 0x80);
        assert!(buf[..31].iter().all(|&x| x == 0));
        assert_eq!(&buf[32..], &[0xa5, 0xa5]);
    }

    #[test]
    fn short_buffer_is_a_length_error() {
        assert_eq!(
            PortMask::parse(&[0; 31]),
            Err(MadError::Length {
                attr: "PortMask",
                need: 32,
                have: 31
            })
        );
    }

    #[test]
    fn hex_matches_opensm_and_ibccconfig_examples() {
        // opensm LLNL config: ports 1..=36 of a 36-port switch.
        let m =
            PortMask::from_hex("0x000000000000000000000000000000000000000000000000001ffffffffe")
                .unwrap();
        assert_eq!(
            m.iter_ones().collect::<Vec<_>>(),
            (1..=36).collect::<Vec<_>>()
        );
        // ibccconfig usage example: ports 0..=36.
        let m = PortMask::from_hex("0x1FFFFFFFFF").unwrap();
        assert_eq!(m.count(), 37);
        assert!(m.get(0) && m.get(36) && !m.get(37));
        assert_eq!(PortMask::from_hex("1").unwrap().to_bytes()[31], 1);
        let hex = PortMask::EMPTY.with(0, true).with(255, true).to_hex();
        assert_eq!(hex.len(), 66);
        assert!(hex.starts_with("0x80") && hex.ends_with("01"));
    }

    #[test]
    fn bad_hex_is_a_syntax_error() {
        assert!(matches!(
            PortMask::from_hex("0x"),
            Err(MadError::Syntax { .. })
        ));
        assert!(matches!(
            PortMask::from_hex("0x1g"),
            Err(MadError::Syntax { .. })
        ));
        assert!(PortMask::from_hex(&"f".repeat(65)).is_err());
        assert_eq!(PortMask::from_hex(&"f".repeat(64)).unwrap().count(), 256);
    }

    #[test]
    fn deserializes_from_port_list_or_hex_string() {
        let d = SeqDeserializer::<_, ValueError>::new(vec![3u8, 1, 3].into_iter());
        let m = PortMask::deserialize(d).unwrap();
        assert_eq!(m.iter_ones().collect::<Vec<_>>(), vec![1, 3]);
        let d = StrDeserializer::<ValueError>::new("0x0a");
        let m = PortMask::deserialize(d).unwrap();
        assert_eq!(m.iter_ones().collect::<Vec<_>>(), vec![1, 3]);
        let d = StrDeserializer::<ValueError>::new("zz");
        assert!(PortMask::deserialize(d).is_err());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(10_000))]

        /// A mask has no reserved bits in its storage, so the round trip is exact.
        #[test]
        fn to_bytes_of_parse_is_identity(b in proptest::collection::vec(any::<u8>(), 32)) {
            prop_assert_eq!(PortMask::parse(&b).unwrap().to_bytes().to_vec(), b);
        }

        #[test]
        fn parse_never_panics(b in proptest::collection::vec(any::<u8>(), 0..200)) {
            prop_assert_eq!(PortMask::parse(&b).is_ok(), b.len() >= 32);
        }

        /// get/set/iter_ones/count agree with a plain set of port numbers, and hex round-trips.
        #[test]
        fn behaves_like_a_set(ports in proptest::collection::vec(any::<u8>(), 0..40)) {
            let model: BTreeSet<u8> = ports.iter().copied().collect();
            let m: PortMask = ports.iter().copied().collect();
            prop_assert_eq!(m.iter_ones().collect::<Vec<_>>(), model.iter().copied().collect::<Vec<_>>());
            prop_assert_eq!(m.count(), model.len());
            for p in 0..=255u8 {
                prop_assert_eq!(m.get(p), model.contains(&p));
            }
            prop_assert_eq!(PortMask::from_hex(&m.to_hex()).unwrap(), m);
        }
    }
}
