//! VLArbitrationTable (SMP attribute 0x18): the weighted round-robin lists a port's VL arbiter walks.
//!
//! A port has a high-priority and a low-priority list of up to 64 entries each, sent as four 32-entry blocks.
//! Attribute modifier = `(block << 16) | port`: block 1 = low entries 0-31, 2 = low 32-63, 3 = high 0-31, 4 =
//! high 32-63 (opensm `vlarb_update`: `((block_num + 1) << 16) | port_num` with block_num 0, 1 for the low
//! table and 2, 3 for the high table). A block is 64 bytes; entry i at B(2i)-B(2i+1):
//! B0\[7:4\] reserved, B0\[3:0\] VL, B1 Weight (64-byte units; 0 = skip the entry).
//!
//! VLHighLimit (bytes of high-priority traffic, in 4 KB units, before one low-priority packet must go) lives
//! in PortInfo, not in this attribute; [`VlArbTable`] keeps it alongside because it is configured together.
//!
//! opensm facts used here: `parse_vlarb_entry` reduces the VL modulo 15 (data VLs 0..=14); entries past the
//! end of the configured string parse as VL 0 weight 0; before sending, VLs are masked to the port's
//! operational VLs and only min(VLArbCap, 32) entries per block are copied (the rest zero).

use serde::{Deserialize, Serialize};

use super::{check_len, check_max, Expected, MadError};

const ATTR: &str = "VLArbitrationTable";

/// The packed 16-bit entry, described with modular-bitfield (fields from the least significant bit).
mod bits {
    // The macro generates getters and setters for every field (only some are used), const blocks in braces
    // and `<< 0` / `+ 0` offsets that rustc and clippy flag.
    #![allow(dead_code, unused_braces, clippy::identity_op)]
    use modular_bitfield::prelude::*;

    /// VL arbitration entry as a big-endian u16.
    #[bitfield]
    #[repr(u16)]
    #[derive(Clone, Copy, PartialEq, Eq)]
    pub(super) struct EntryWord {
        /// B1.
        pub(super) weight: B8,
        /// B0\[3:0\].
        pub(super) vl: B4,
        /// B0\[7:4\].
        pub(super) reserved: B4,
    }
}

/// One arbitration entry: serve `vl` for up to `weight` 64-byte units.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VlArbEntry {
    /// Data VL, 0..=14.
    pub vl: u8,
    /// Weight in 64-byte units; 0 skips the entry.
    pub weight: u8,
}

impl VlArbEntry {
    /// Bytes of an entry on the wire.
    pub const WIRE_LEN: usize = 2;

    /// Weight in bytes.
    pub fn weight_bytes(&self) -> u32 {
        u32::from(self.weight) * 64
    }

    /// Reads an entry from the first 2 bytes of `buf`; B0\[7:4\] (reserved) are ignored.
    pub fn parse(buf: &[u8]) -> Result<Self, MadError> {
        check_len("VLArbitrationTableEntry", buf, Self::WIRE_LEN)?;
        let w = bits::EntryWord::from(u16::from_be_bytes([buf[0], buf[1]]));
        Ok(Self {
            vl: w.vl(),
            weight: w.weight(),
        })
    }

    /// Writes the entry into the first 2 bytes of `buf`, reserved bits as zero; the VL is truncated to 4 bits
    /// (see [`VlArbTable::validate`]).
    ///
    /// # Panics
    /// If `buf` is shorter than [`Self::WIRE_LEN`].
    pub fn emit(&self, buf: &mut [u8]) {
        let w = bits::EntryWord::new()
            .with_vl(self.vl & 0xF)
            .with_weight(self.weight);
        buf[..Self::WIRE_LEN].copy_from_slice(&u16::from(w).to_be_bytes());
    }
}

/// Which quarter of a port's arbitration tables a block carries (the upper 16 bits of the attribute modifier).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VlArbBlock {
    /// 1: low-priority entries 0-31.
    Low0To31 = 1,
    /// 2: low-priority entries 32-63.
    Low32To63 = 2,
    /// 3: high-priority entries 0-31.
    High0To31 = 3,
    /// 4: high-priority entries 32-63.
    High32To63 = 4,
}

impl VlArbBlock {
    /// All four blocks in modifier order.
    pub const ALL: [Self; 4] = [
        Self::Low0To31,
        Self::Low32To63,
        Self::High0To31,
        Self::High32To63,
    ];

    /// Attribute modifier for this block of `port`: `(block << 16) | port`.
    pub fn attr_modifier(self, port: u8) -> u32 {
        ((self as u32) << 16) | u32::from(port)
    }

    /// Splits an attribute modifier into block and port; the block must be 1..=4 and bits 15:8 zero (a port
    /// number is 8 bits).
    pub fn from_attr_modifier(modifier: u32) -> Result<(Self, u8), MadError> {
        let block = modifier >> 16;
        let kind = match block {
            1 => Self::Low0To31,
            2 => Self::Low32To63,
            3 => Self::High0To31,
            4 => Self::High32To63,
            _ => {
                return Err(MadError::Field {
                    attr: ATTR,
                    field: "block",
                    index: None,
                    value: block.into(),
                    expected: Expected::InRange(1, 4),
                })
            }
        };
        let port = modifier & 0xFFFF;
        check_max(ATTR, "port", None, port.into(), 255)?;
        // port <= 255 after the check.
        Ok((kind, port as u8))
    }
}

/// One 32-entry block of the VLArbitrationTable attribute.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VlArbitrationTableBlock {
    /// The block's entries.
    pub entries: [VlArbEntry; 32],
}

impl VlArbitrationTableBlock {
    /// Bytes of a block on the wire.
    pub const WIRE_LEN: usize = 64;
    /// Attribute ID of VLArbitrationTable (subnet management class).
    pub const ATTR_ID: u16 = 0x18;
    /// Entries per block.
    pub const ENTRIES: usize = 32;

    /// Reads a block from the first 64 bytes of `buf`.
    pub fn parse(buf: &[u8]) -> Result<Self, MadError> {
        check_len(ATTR, buf, Self::WIRE_LEN)?;
        let mut entries = [VlArbEntry::default(); 32];
        for (i, e) in entries.iter_mut().enumerate() {
            *e = VlArbEntry::parse(&buf[2 * i..])?;
        }
        Ok(Self { entries })
    }

    /// Writes the block into the first 64 bytes of `buf`.
    ///
    /// # Panics
    /// If `buf` is shorter than [`Self::WIRE_LEN`].
    pub fn emit(&self, buf: &mut [u8]) {
        let buf = &mut buf[..Self::WIRE_LEN];
        for (i, e) in self.entries.iter().enumerate() {
            e.emit(&mut buf[2 * i..]);
        }
    }

    /// The 64 wire bytes.
    pub fn to_bytes(&self) -> [u8; 64] {
        let mut b = [0u8; 64];
        self.emit(&mut b);
        b
    }
}

/// A port's VL arbitration configuration in plain form.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VlArbTable {
    /// High-priority list, at most 64 entries.
    pub high: Vec<VlArbEntry>,
    /// Low-priority list, at most 64 entries.
    pub low: Vec<VlArbEntry>,
    /// PortInfo VLHighLimit: 4 KB units of high-priority bytes before a low-priority packet; 255 unbounded.
    pub high_limit: u8,
}

impl VlArbTable {
    /// Most entries per list.
    pub const MAX_ENTRIES: usize = 64;
    /// Highest data VL (VL15 is management and is not arbitrated).
    pub const MAX_DATA_VL: u8 = 14;

    /// opensm's built-in defaults (`osm_base.h`): `OSM_DEFAULT_QOS_HIGH_LIMIT` 0,
    /// `OSM_DEFAULT_QOS_VLARB_HIGH` "0:4,1:0,2:0,...,14:0" (VL0 weight 4, VLs 1-14 weight 0) and
    /// `OSM_DEFAULT_QOS_VLARB_LOW` "0:0,1:4,2:4,...,14:4" (VL0 weight 0, VLs 1-14 weight 4). The reference
    /// notes' "vlarb_high 0:4, vlarb_low 1-14:4" summarises these; the zero-weight entries are in the strings
    /// too and are kept here so the blocks match what opensm sends. opensm pads the other 49 entries of each
    /// list with 0:0, as [`Self::to_blocks`] does.
    pub fn opensm_default() -> Self {
        let list = |weight_of: fn(u8) -> u8| {
            (0..=Self::MAX_DATA_VL)
                .map(|vl| VlArbEntry {
                    vl,
                    weight: weight_of(vl),
                })
                .collect()
        };
        Self {
            high: list(|vl| if vl == 0 { 4 } else { 0 }),
            low: list(|vl| if vl == 0 { 0 } else { 4 }),
            high_limit: 0,
        }
    }

    /// Checks list lengths (at most 64) and VLs (data VLs 0..=14). Errors name the list and entry index.
    pub fn validate(&self) -> Result<(), MadError> {
        for (name, list) in [("high", &self.high), ("low", &self.low)] {
            check_max(
                ATTR,
                name,
                None,
                list.len() as u64,
                Self::MAX_ENTRIES as u64,
            )?;
            let vl_field = if name == "high" { "high.vl" } else { "low.vl" };
            for (i, e) in list.iter().enumerate() {
                check_max(
                    ATTR,
                    vl_field,
                    Some(i),
                    e.vl.into(),
                    Self::MAX_DATA_VL.into(),
                )?;
            }
        }
        Ok(())
    }

    /// The four blocks, in [`VlArbBlock::ALL`] order, each list padded with zero entries (weight 0 = skip).
    /// Entries past 64 are not sent; [`Self::validate`] rejects them.
    pub fn to_blocks(&self) -> [(VlArbBlock, VlArbitrationTableBlock); 4] {
        let block = |list: &[VlArbEntry], from: usize| {
            let mut b = VlArbitrationTableBlock::default();
            for (slot, e) in b.entries.iter_mut().zip(list.iter().skip(from)) {
                *slot = *e;
            }
            b
        };
        [
            (VlArbBlock::Low0To31, block(&self.low, 0)),
            (VlArbBlock::Low32To63, block(&self.low, 32)),
            (VlArbBlock::High0To31, block(&self.high, 0)),
            (VlArbBlock::High32To63, block(&self.high, 32)),
        ]
    }

    /// Assembles the table from the four blocks in [`VlArbBlock::ALL`] order. Trailing all-zero entries (VL 0,
    /// weight 0), which are what [`Self::to_blocks`] pads with, are dropped from each list.
    pub fn from_blocks(blocks: &[VlArbitrationTableBlock; 4], high_limit: u8) -> Self {
        let list = |a: &VlArbitrationTableBlock, b: &VlArbitrationTableBlock| {
            let mut v: Vec<VlArbEntry> =
                a.entries.iter().chain(b.entries.iter()).copied().collect();
            while v.last() == Some(&VlArbEntry::default()) {
                v.pop();
            }
            v
        };
        Self {
            low: list(&blocks[0], &blocks[1]),
            high: list(&blocks[2], &blocks[3]),
            high_limit,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn entry_layout() {
        let e = VlArbEntry::parse(&[0xF3, 0x40]).unwrap();
        assert_eq!(e, VlArbEntry { vl: 3, weight: 64 });
        assert_eq!(e.weight_bytes(), 4096);
        let mut buf = [0xa5u8; 3];
        e.emit(&mut buf);
        assert_eq!(buf, [0x03, 0x40, 0xa5], "reserved B0[7:4] cleared");
    }

    #[test]
    fn opensm_default_blocks_are_exact() {
        let t = VlArbTable::opensm_default();
        assert!(t.validate().is_ok());
        assert_eq!(t.high_limit, 0);
        let blocks = t.to_blocks();
        let low0 = blocks[0].1.to_bytes();
        // "0:0,1:4,2:4,...,14:4": VL0 weight 0, then VL i weight 4.
        assert_eq!(&low0[0..6], &[0x00, 0x00, 0x01, 0x04, 0x02, 0x04]);
        assert_eq!(&low0[28..30], &[0x0E, 0x04]);
        assert!(low0[30..].iter().all(|&x| x == 0));
        let high0 = blocks[2].1.to_bytes();
        // "0:4,1:0,...,14:0".
        assert_eq!(&high0[0..4], &[0x00, 0x04, 0x01, 0x00]);
        assert_eq!(&high0[28..30], &[0x0E, 0x00]);
        assert_eq!(blocks[1].1, VlArbitrationTableBlock::default());
        assert_eq!(blocks[3].1, VlArbitrationTableBlock::default());
        let back = VlArbTable::from_blocks(&blocks.map(|(_, b)| b), 0);
        assert_eq!(back, t);
    }

    #[test]
    fn attr_modifiers() {
        assert_eq!(VlArbBlock::Low0To31.attr_modifier(5), 0x0001_0005);
        assert_eq!(VlArbBlock::Low32To63.attr_modifier(5), 0x0002_0005);
        assert_eq!(VlArbBlock::High0To31.attr_modifier(0), 0x0003_0000);
        assert_eq!(VlArbBlock::High32To63.attr_modifier(255), 0x0004_00FF);
        assert_eq!(
            VlArbBlock::from_attr_modifier(0x0003_0011),
            Ok((VlArbBlock::High0To31, 17))
        );
        assert_eq!(
            VlArbBlock::from_attr_modifier(0x0005_0001),
            Err(MadError::Field {
                attr: "VLArbitrationTable",
                field: "block",
                index: None,
                value: 5,
                expected: Expected::InRange(1, 4)
            })
        );
        assert!(VlArbBlock::from_attr_modifier(0x0000_0001).is_err());
        assert!(matches!(
            VlArbBlock::from_attr_modifier(0x0001_0100),
            Err(MadError::Field { field: "port", .. })
        ));
    }

    #[test]
    fn validate_rejects_vl15_and_long_lists() {
        let mut t = VlArbTable::opensm_default();
        t.low[3].vl = 15;
        assert_eq!(
            t.validate(),
            Err(MadError::Field {
                attr: "VLArbitrationTable",
                field: "low.vl",
                index: Some(3),
                value: 15,
                expected: Expected::AtMost(14)
            })
        );
        let t = VlArbTable {
            high: vec![VlArbEntry::default(); 65],
            ..Default::default()
        };
        assert!(matches!(
            t.validate(),
            Err(MadError::Field {
                field: "high",
                value: 65,
                ..
            })
        ));
    }

    #[test]
    fn second_block_carries_entries_32_to_63() {
        let t = VlArbTable {
            low: (0..40)
                .map(|i| VlArbEntry {
                    vl: (i % 15) as u8,
                    weight: i as u8 + 1,
                })
                .collect(),
            ..Default::default()
        };
        let blocks = t.to_blocks();
        assert_eq!(blocks[1].0, VlArbBlock::Low32To63);
        let b = blocks[1].1.to_bytes();
        assert_eq!(&b[0..2], &[32 % 15, 33], "entry 32: VL 2, weight 33");
        assert_eq!(&b[14..16], &[39 % 15, 40]);
        assert!(b[16..].iter().all(|&x| x == 0));
    }

    #[test]
    fn short_block_is_a_length_error() {
        assert_eq!(
            VlArbitrationTableBlock::parse(&[0u8; 63]),
            Err(MadError::Length {
                attr: "VLArbitrationTable",
                need: 64,
                have: 63
            })
        );
    }

    /// Clears each entry's reserved B0\[7:4\].
    fn zero_reserved(mut b: Vec<u8>) -> Vec<u8> {
        for i in 0..32 {
            b[2 * i] &= 0x0F;
        }
        b
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(10_000))]

        /// Property stated with the reserved bits zeroed.
        #[test]
        fn block_round_trip(b in proptest::collection::vec(any::<u8>(), 64)) {
            let got = VlArbitrationTableBlock::parse(&b).unwrap().to_bytes().to_vec();
            prop_assert_eq!(got, zero_reserved(b));
        }

        #[test]
        fn parse_never_panics(b in proptest::collection::vec(any::<u8>(), 0..200)) {
            prop_assert_eq!(VlArbitrationTableBlock::parse(&b).is_ok(), b.len() >= 64);
        }

        /// Blocks -> table -> blocks is the identity for any blocks whose VLs are data VLs.
        #[test]
        fn blocks_table_blocks(raw in proptest::collection::vec((0u8..=14, any::<u8>()), 128)) {
            let mut blocks = [VlArbitrationTableBlock::default(); 4];
            for (i, (vl, weight)) in raw.iter().enumerate() {
                blocks[i / 32].entries[i % 32] = VlArbEntry { vl: *vl, weight: *weight };
            }
            let t = VlArbTable::from_blocks(&blocks, 7);
            prop_assert!(t.validate().is_ok());
            prop_assert_eq!(t.to_blocks().map(|(_, b)| b), blocks);
        }
    }
}
