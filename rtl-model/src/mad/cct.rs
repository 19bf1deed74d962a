//! CongestionControlTable (CC attribute 0x17): the table of injection-rate delays a CA steps through by CCTI.
//!
//! Block layout (132 bytes, attribute modifier = block number `b`, as opensm's `cc_send_cct` sends it):
//!
//! | bytes          | field                                                        |
//! |----------------|--------------------------------------------------------------|
//! | B0-1           | CCTI_Limit: highest valid CCTI of the whole table             |
//! | B2-3           | reserved                                                     |
//! | B(4+2i)-(5+2i) | entry i (i = 0..63), CCTI = 64 b + i: \[15:14\] CCT_Shift, \[13:0\] CCT_Multiplier |
//!
//! Cross-checked: opensm `ib_cc_tbl_t` (`ccti_limit`, `resv`, 64 x `shift_multiplier`, "bits [15..14] - CCT
//! Shift, bits [13..0] - CCT Multiplier"), libibmad `fields.c` (CCTI_Limit `BITSOFFS(0,16)`, CCT_Shift
//! `BITSOFFS(0,2)`, CCT_Multiplier `BITSOFFS(2,14)`) and `ibccconfig` (entries at `payload + 4 + i * 2`). They
//! agree. opensm writes the same CCTI_Limit (`entries - 1`) into every block and supports at most 128 entries
//! (`OSM_CCT_ENTRY_MAX`, "not actual max, max we're currently going to support"); with no entries it still
//! sends one block with CCTI_Limit 0 and all entries zero. `ibccconfig` requires
//! `CCTI_Limit + 1 == 64 * block + entries given` (unless the limit is 0).

use serde::{Deserialize, Serialize};

use super::{be16, check_len, serde_arr, Expected, MadError};

/// The packed 16-bit entry, described once with modular-bitfield (fields from the least significant bit).
mod bits {
    // The macro generates getters and setters for every field (only some are used), const blocks in braces
    // and `<< 0` / `+ 0` offsets that rustc and clippy flag.
    #![allow(dead_code, unused_braces, clippy::identity_op)]
    use modular_bitfield::prelude::*;

    /// CCT entry word: CCT_Multiplier in \[13:0\], CCT_Shift in \[15:14\].
    #[bitfield]
    #[repr(u16)]
    #[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub(super) struct CctWord {
        pub(super) multiplier: B14,
        pub(super) shift: B2,
    }
}

const ENTRY_ATTR: &str = "CongestionControlTableEntry";
const ATTR: &str = "CongestionControlTable";

/// One CongestionControlTable entry (also the format of SwitchCongestionSetting's CS_ReturnDelay).
///
/// Always holds a value the 16-bit wire word can carry: it is built only through the checked constructor or
/// from a raw word. Serde form: `{ shift = 1, multiplier = 100 }`, range-checked on reading.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(try_from = "CctEntryFields", into = "CctEntryFields")]
pub struct CctEntry(bits::CctWord);

impl CctEntry {
    /// Bytes of an entry on the wire.
    pub const WIRE_LEN: usize = 2;
    /// Largest CCT_Shift (2 bits).
    pub const MAX_SHIFT: u8 = 3;
    /// Largest CCT_Multiplier (14 bits).
    pub const MAX_MULTIPLIER: u16 = 0x3FFF;

    /// The entry with this shift and multiplier, or a [`MadError::Field`] naming the field that does not fit.
    pub fn new(shift: u8, multiplier: u16) -> Result<Self, MadError> {
        super::check_max(
            ENTRY_ATTR,
            "shift",
            None,
            shift.into(),
            Self::MAX_SHIFT.into(),
        )?;
        super::check_max(
            ENTRY_ATTR,
            "multiplier",
            None,
            multiplier.into(),
            Self::MAX_MULTIPLIER.into(),
        )?;
        Ok(Self(
            bits::CctWord::new()
                .with_shift(shift)
                .with_multiplier(multiplier),
        ))
    }

    /// The entry whose wire word is `raw` (every 16-bit value is a valid entry).
    pub fn from_raw(raw: u16) -> Self {
        Self(bits::CctWord::from(raw))
    }

    /// The 16-bit wire word.
    pub fn raw(self) -> u16 {
        u16::from(self.0)
    }

    /// CCT_Shift, bits \[15:14\].
    pub fn shift(self) -> u8 {
        self.0.shift()
    }

    /// CCT_Multiplier, bits \[13:0\].
    pub fn multiplier(self) -> u16 {
        self.0.multiplier()
    }

    /// Reads an entry from the first two bytes of `buf` (big-endian).
    pub fn parse(buf: &[u8]) -> Result<Self, MadError> {
        check_len(ENTRY_ATTR, buf, Self::WIRE_LEN)?;
        Ok(Self::from_raw(be16(buf, 0)))
    }

    /// Writes the entry into the first two bytes of `buf`.
    ///
    /// # Panics
    /// If `buf` is shorter than [`Self::WIRE_LEN`].
    pub fn emit(&self, buf: &mut [u8]) {
        buf[..Self::WIRE_LEN].copy_from_slice(&self.to_bytes());
    }

    /// The two wire bytes.
    pub fn to_bytes(&self) -> [u8; 2] {
        self.raw().to_be_bytes()
    }

    /// Inter-packet delay this entry asks for: `(t_pkt >> shift) * multiplier`, in the unit of `t_pkt`.
    ///
    /// Source: the reference notes (ib-wire-and-cc.md, "CC MADs"): IPD = (T_pkt >> CCT_Shift) * CCT_Multiplier,
    /// T_pkt the time of a maximum-size packet at link rate. Sending one packet (T_pkt) and then waiting the IPD
    /// leaves the flow the bandwidth fraction T / (T + T * mult / 2^shift) = 2^shift / (mult + 2^shift), which
    /// is the formula the Linux OPA (hfi1) driver's comment gives; the two sources agree.
    ///
    /// Computed in u64: `(2^32 - 1) * (2^14 - 1)` needs 46 bits, so the product never overflows (a u32 result
    /// could).
    pub fn ird(self, t_pkt: u32) -> u64 {
        u64::from(t_pkt >> self.shift()) * u64::from(self.multiplier())
    }
}

impl core::fmt::Debug for CctEntry {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("CctEntry")
            .field("shift", &self.shift())
            .field("multiplier", &self.multiplier())
            .finish()
    }
}

/// Serde/TOML form of a [`CctEntry`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CctEntryFields {
    /// CCT_Shift, 0..=3.
    pub shift: u8,
    /// CCT_Multiplier, 0..=0x3FFF.
    pub multiplier: u16,
}

impl TryFrom<CctEntryFields> for CctEntry {
    type Error = MadError;
    fn try_from(f: CctEntryFields) -> Result<Self, MadError> {
        CctEntry::new(f.shift, f.multiplier)
    }
}

impl From<CctEntry> for CctEntryFields {
    fn from(e: CctEntry) -> Self {
        Self {
            shift: e.shift(),
            multiplier: e.multiplier(),
        }
    }
}

/// One 64-entry block of the CongestionControlTable attribute.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CongestionControlTableBlock {
    /// CCTI_Limit: the highest valid CCTI of the whole table (not of this block).
    pub ccti_limit: u16,
    /// Entries for CCTI 64 b .. 64 b + 63.
    #[serde(with = "serde_arr")]
    pub entries: [CctEntry; 64],
}

impl Default for CongestionControlTableBlock {
    fn default() -> Self {
        Self {
            ccti_limit: 0,
            entries: [CctEntry::default(); 64],
        }
    }
}

impl CongestionControlTableBlock {
    /// Bytes of a block on the wire.
    pub const WIRE_LEN: usize = 132;
    /// Attribute ID of CongestionControlTable in the CC class.
    pub const ATTR_ID: u16 = 0x17;
    /// Entries per block.
    pub const ENTRIES: usize = 64;

    /// Attribute modifier of block `block`: the block number itself (opensm `cc_send_cct`).
    pub fn attr_modifier(block: u32) -> u32 {
        block
    }

    /// Reads a block from the first 132 bytes of `buf`; B2-3 (reserved) are ignored.
    pub fn parse(buf: &[u8]) -> Result<Self, MadError> {
        check_len(ATTR, buf, Self::WIRE_LEN)?;
        let mut entries = [CctEntry::default(); 64];
        for (i, e) in entries.iter_mut().enumerate() {
            *e = CctEntry::from_raw(be16(buf, 4 + 2 * i));
        }
        Ok(Self {
            ccti_limit: be16(buf, 0),
            entries,
        })
    }

    /// Writes the block into the first 132 bytes of `buf`, reserved B2-3 as zero.
    ///
    /// # Panics
    /// If `buf` is shorter than [`Self::WIRE_LEN`].
    pub fn emit(&self, buf: &mut [u8]) {
        let buf = &mut buf[..Self::WIRE_LEN];
        buf[0..2].copy_from_slice(&self.ccti_limit.to_be_bytes());
        buf[2..4].fill(0);
        for (i, e) in self.entries.iter().enumerate() {
            e.emit(&mut buf[4 + 2 * i..]);
        }
    }

    /// The 132 wire bytes.
    pub fn to_bytes(&self) -> [u8; 132] {
        let mut b = [0u8; 132];
        self.emit(&mut b);
        b
    }
}

/// A whole CongestionControlTable, assembled from (or split into) 64-entry blocks.
///
/// `entries[ccti]` is the entry for CCTI `ccti`. Configuration, not per-cycle state, so a `Vec` is fine.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cct {
    /// Highest CCTI the CA may reach.
    pub ccti_limit: u16,
    /// Entries from CCTI 0 upwards.
    pub entries: Vec<CctEntry>,
}

impl Cct {
    /// Most entries supported, as in opensm (`OSM_CCT_ENTRY_MAX` = 128, i.e. two blocks).
    pub const MAX_ENTRIES: usize = 128;
    /// Most blocks supported.
    pub const MAX_BLOCKS: usize = Self::MAX_ENTRIES / CongestionControlTableBlock::ENTRIES;

    /// The table with these entries and CCTI_Limit = entries - 1, the rule opensm applies.
    pub fn from_entries(entries: Vec<CctEntry>) -> Result<Self, MadError> {
        let t = Self {
            ccti_limit: entries
                .len()
                .saturating_sub(1)
                .try_into()
                .unwrap_or(u16::MAX),
            entries,
        };
        t.validate()?;
        Ok(t)
    }

    /// Checks: at most [`Self::MAX_ENTRIES`] entries; CCTI_Limit < number of entries. An empty table is allowed
    /// with CCTI_Limit 0: opensm sends it as one block of zero entries, which means no added delay.
    pub fn validate(&self) -> Result<(), MadError> {
        super::check_max(
            ATTR,
            "entries",
            None,
            self.entries.len() as u64,
            Self::MAX_ENTRIES as u64,
        )?;
        let max_limit = self.entries.len().saturating_sub(1) as u64;
        super::check_max(ATTR, "ccti_limit", None, self.ccti_limit.into(), max_limit)
    }

    /// The entry for `ccti`, if `ccti` is within CCTI_Limit and the table.
    pub fn entry(&self, ccti: u16) -> Option<CctEntry> {
        if ccti > self.ccti_limit {
            return None;
        }
        self.entries.get(usize::from(ccti)).copied()
    }

    /// The blocks to send; block `i` goes with attribute modifier `i`. At least one block, so an empty table
    /// still sets CCTI_Limit 0. Each block carries the table's CCTI_Limit; missing entries are zero.
    pub fn to_blocks(&self) -> Vec<CongestionControlTableBlock> {
        let n = self
            .entries
            .len()
            .div_ceil(CongestionControlTableBlock::ENTRIES)
            .max(1);
        (0..n)
            .map(|b| {
                let mut block = CongestionControlTableBlock {
                    ccti_limit: self.ccti_limit,
                    ..Default::default()
                };
                let from = b * CongestionControlTableBlock::ENTRIES;
                for (slot, e) in block.entries.iter_mut().zip(self.entries.iter().skip(from)) {
                    *slot = *e;
                }
                block
            })
            .collect()
    }

    /// Assembles a table from blocks 0, 1, ... in order. All blocks must carry the same CCTI_Limit, and it must
    /// fall inside the blocks given; entries past CCTI_Limit are dropped (they carry no meaning).
    pub fn from_blocks(blocks: &[CongestionControlTableBlock]) -> Result<Self, MadError> {
        let Some(first) = blocks.first() else {
            return Err(MadError::Field {
                attr: ATTR,
                field: "blocks",
                index: None,
                value: 0,
                expected: Expected::AtLeast(1),
            });
        };
        super::check_max(
            ATTR,
            "blocks",
            None,
            blocks.len() as u64,
            Self::MAX_BLOCKS as u64,
        )?;
        let limit = first.ccti_limit;
        if let Some((i, b)) = blocks
            .iter()
            .enumerate()
            .find(|(_, b)| b.ccti_limit != limit)
        {
            return Err(MadError::Field {
                attr: ATTR,
                field: "ccti_limit",
                index: Some(i),
                value: b.ccti_limit.into(),
                expected: Expected::Equal(limit.into()),
            });
        }
        let available = blocks.len() * CongestionControlTableBlock::ENTRIES;
        super::check_max(ATTR, "ccti_limit", None, limit.into(), available as u64 - 1)?;
        let entries = blocks
            .iter()
            .flat_map(|b| b.entries.iter().copied())
            .take(usize::from(limit) + 1)
            .collect();
        Ok(Self {
            ccti_limit: limit,
            entries,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde::de::value::{Error as ValueError, MapDeserializer};

    #[test]
    fn entry_bits_shift_15_14_multiplier_13_0() {
        let e = CctEntry::new(2, 0x1234).unwrap();
        assert_eq!(e.raw(), 0x9234);
        assert_eq!(e.to_bytes(), [0x92, 0x34]);
        let e = CctEntry::from_raw(0xC001);
        assert_eq!((e.shift(), e.multiplier()), (3, 1));
        let e = CctEntry::parse(&[0x7F, 0xFF]).unwrap();
        assert_eq!((e.shift(), e.multiplier()), (1, 0x3FFF));
    }

    #[test]
    fn entry_constructor_rejects_values_wider_than_the_field() {
        assert_eq!(
            CctEntry::new(4, 0),
            Err(MadError::Field {
                attr: "CongestionControlTableEntry",
                field: "shift",
                index: None,
                value: 4,
                expected: Expected::AtMost(3)
            })
        );
        assert!(matches!(
            CctEntry::new(0, 0x4000),
            Err(MadError::Field {
                field: "multiplier",
                ..
            })
        ));
        assert!(CctEntry::new(3, 0x3FFF).is_ok());
    }

    #[test]
    fn ird_and_bandwidth_fraction() {
        // shift 1, mult 3: T=1000 -> IPD 500 * 3 = 1500; fraction 2/(3+2) = 1000/(1000+1500).
        let e = CctEntry::new(1, 3).unwrap();
        assert_eq!(e.ird(1000), 1500);
        assert_eq!(CctEntry::new(0, 0).unwrap().ird(1000), 0);
        // Largest operands do not overflow: (2^32-1) * (2^14-1).
        let e = CctEntry::new(0, 0x3FFF).unwrap();
        assert_eq!(e.ird(u32::MAX), 4_294_967_295u64 * 16_383);
        assert_eq!(CctEntry::new(3, 1).unwrap().ird(7), 0, "7 >> 3 = 0");
    }

    #[test]
    fn entry_serde_form_is_range_checked() {
        let ok = MapDeserializer::<_, ValueError>::new(
            vec![("shift", 1u16), ("multiplier", 100u16)].into_iter(),
        );
        let e = CctEntry::deserialize(ok).unwrap();
        assert_eq!((e.shift(), e.multiplier()), (1, 100));
        let bad = MapDeserializer::<_, ValueError>::new(
            vec![("shift", 4u16), ("multiplier", 1u16)].into_iter(),
        );
        let err = CctEntry::deserialize(bad).unwrap_err().to_string();
        assert!(err.contains("shift = 4"), "{err}");
    }

    /// Block 1 of a 100-entry table, built by hand from the layout.
    fn block_bytes() -> Vec<u8> {
        let mut b = vec![0u8; 132];
        b[0..2].copy_from_slice(&99u16.to_be_bytes()); // CCTI_Limit
        b[2] = 0xa5; // reserved: must be ignored on parse and cleared on emit
        b[3] = 0x5a;
        b[4..6].copy_from_slice(&[0x40, 0x05]); // CCTI 64: shift 1, mult 5
        b[130..132].copy_from_slice(&[0xFF, 0xFF]); // CCTI 127: shift 3, mult 0x3FFF
        b
    }

    #[test]
    fn parse_block_from_layout() {
        let blk = CongestionControlTableBlock::parse(&block_bytes()).unwrap();
        assert_eq!(blk.ccti_limit, 99);
        assert_eq!(
            (blk.entries[0].shift(), blk.entries[0].multiplier()),
            (1, 5)
        );
        assert_eq!(blk.entries[63].raw(), 0xFFFF);
        assert!(blk.entries[1..63].iter().all(|e| e.raw() == 0));
    }

    #[test]
    fn emit_block_clears_reserved_and_writes_every_byte() {
        let blk = CongestionControlTableBlock::parse(&block_bytes()).unwrap();
        let mut buf = [0xa5u8; 140];
        blk.emit(&mut buf);
        let mut want = block_bytes();
        want[2] = 0;
        want[3] = 0;
        assert_eq!(&buf[..132], &want[..]);
        assert!(buf[132..].iter().all(|&x| x == 0xa5));
        assert_eq!(CongestionControlTableBlock::attr_modifier(1), 1);
    }

    #[test]
    fn short_block_is_a_length_error() {
        assert_eq!(
            CongestionControlTableBlock::parse(&[0u8; 131]),
            Err(MadError::Length {
                attr: "CongestionControlTable",
                need: 132,
                have: 131
            })
        );
    }

    fn entries(n: usize) -> Vec<CctEntry> {
        (0..n).map(|i| CctEntry::from_raw(i as u16 + 1)).collect()
    }

    #[test]
    fn table_splits_into_blocks_like_opensm() {
        let t = Cct::from_entries(entries(100)).unwrap();
        assert_eq!(t.ccti_limit, 99);
        let blocks = t.to_blocks();
        assert_eq!(blocks.len(), 2);
        assert!(blocks.iter().all(|b| b.ccti_limit == 99));
        assert_eq!(blocks[1].entries[0].raw(), 65, "CCTI 64 = 64*1 + 0");
        assert_eq!(blocks[1].entries[35].raw(), 100);
        assert_eq!(blocks[1].entries[36].raw(), 0, "past the table: zero");
        assert_eq!(Cct::from_blocks(&blocks).unwrap(), t);
        assert_eq!(t.entry(99).map(CctEntry::raw), Some(100));
        assert_eq!(t.entry(100), None);
    }

    #[test]
    fn empty_table_is_one_block_with_limit_zero() {
        let t = Cct::from_entries(vec![]).unwrap();
        assert_eq!(t.ccti_limit, 0);
        let blocks = t.to_blocks();
        assert_eq!(blocks.len(), 1);
        assert_eq!(blocks[0], CongestionControlTableBlock::default());
        // The wire cannot tell an empty table from one zero entry.
        assert_eq!(
            Cct::from_blocks(&blocks).unwrap().entries,
            vec![CctEntry::default()]
        );
    }

    #[test]
    fn validate_rejects_limit_past_entries_and_oversize_tables() {
        let t = Cct {
            ccti_limit: 3,
            entries: entries(3),
        };
        assert_eq!(
            t.validate(),
            Err(MadError::Field {
                attr: "CongestionControlTable",
                field: "ccti_limit",
                index: None,
                value: 3,
                expected: Expected::AtMost(2)
            })
        );
        assert!(Cct::from_entries(entries(128)).is_ok());
        assert!(matches!(
            Cct::from_entries(entries(129)),
            Err(MadError::Field {
                field: "entries",
                value: 129,
                ..
            })
        ));
    }

    #[test]
    fn from_blocks_checks_limits() {
        let mut blocks = Cct::from_entries(entries(100)).unwrap().to_blocks();
        blocks[1].ccti_limit = 98;
        assert_eq!(
            Cct::from_blocks(&blocks),
            Err(MadError::Field {
                attr: "CongestionControlTable",
                field: "ccti_limit",
                index: Some(1),
                value: 98,
                expected: Expected::Equal(99)
            })
        );
        let one = &Cct::from_entries(entries(100)).unwrap().to_blocks()[..1];
        assert!(matches!(
            Cct::from_blocks(one),
            Err(MadError::Field {
                field: "ccti_limit",
                value: 99,
                expected: Expected::AtMost(63),
                ..
            })
        ));
        assert!(Cct::from_blocks(&[]).is_err());
        let three = vec![CongestionControlTableBlock::default(); 3];
        assert!(Cct::from_blocks(&three).is_err());
    }

    /// The reserved bytes B2-3 zeroed: the only bits parse/emit may drop.
    fn zero_reserved(mut b: Vec<u8>) -> Vec<u8> {
        b[2] = 0;
        b[3] = 0;
        b
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(10_000))]

        /// Property stated with the reserved bytes B2-3 zeroed.
        #[test]
        fn block_round_trip(b in proptest::collection::vec(any::<u8>(), 132)) {
            let got = CongestionControlTableBlock::parse(&b).unwrap().to_bytes().to_vec();
            prop_assert_eq!(got, zero_reserved(b));
        }

        #[test]
        fn block_parse_never_panics(b in proptest::collection::vec(any::<u8>(), 0..200)) {
            prop_assert_eq!(CongestionControlTableBlock::parse(&b).is_ok(), b.len() >= 132);
            prop_assert_eq!(CctEntry::parse(&b).is_ok(), b.len() >= 2);
        }

        /// Any table within opensm's limits survives blocks and back.
        #[test]
        fn table_round_trip(raw in proptest::collection::vec(any::<u16>(), 1..=128)) {
            let t = Cct::from_entries(raw.iter().map(|&r| CctEntry::from_raw(r)).collect()).unwrap();
            let blocks = t.to_blocks();
            prop_assert_eq!(blocks.len(), raw.len().div_ceil(64));
            prop_assert_eq!(Cct::from_blocks(&blocks).unwrap(), t);
        }

        #[test]
        fn entry_new_matches_raw_layout(shift in 0u8..=3, mult in 0u16..=0x3FFF) {
            let e = CctEntry::new(shift, mult).unwrap();
            prop_assert_eq!(e.raw(), (u16::from(shift) << 14) | mult);
            prop_assert_eq!(CctEntry::from_raw(e.raw()), e);
        }
    }
}
