//! SwitchCongestionSetting (CC attribute 0x14) and SwitchPortCongestionSetting (0x15): how a switch marks FECN.
//!
//! SwitchCongestionSetting (76 bytes, attribute modifier 0):
//!
//! | bytes   | field                                                            |
//! |---------|------------------------------------------------------------------|
//! | B0-3    | Control_Map: which of the components below are to be applied     |
//! | B4-35   | Victim_Mask ([`PortMask`])                                       |
//! | B36-67  | Credit_Mask ([`PortMask`])                                       |
//! | B68     | \[7:4\] Threshold (0 = no marking, 1 loose .. 15 aggressive); \[3:0\] reserved |
//! | B69     | Packet_Size, 64-byte units: smaller packets are not marked        |
//! | B70     | \[7:4\] CS_Threshold; \[3:0\] reserved                               |
//! | B71     | reserved                                                         |
//! | B72-73  | CS_ReturnDelay, in CCT entry format ([`CctEntry`])               |
//! | B74-75  | Marking_Rate: mean number of packets between markings            |
//!
//! SwitchPortCongestionSetting: attribute modifier = block of 32 ports; 32 elements of 4 bytes (128 bytes):
//! B0\[7\] Valid, B0\[6\] Control_Type (0 congestion control, 1 credit starvation), B0\[5:4\] reserved, B0\[3:0\]
//! Threshold (or CS_Threshold), B1 Packet_Size, B2-3 Cong_Parm (Marking_Rate; reserved for credit starvation).
//!
//! Cross-checked: opensm `ib_sw_cong_setting_t` (`threshold_resv` u8, `packet_size` u8, `cs_threshold_resv`
//! net16, `cs_return_delay`, `marking_rate`) and `cc_setup_mad_data` ("threshold is 4 bits, takes up upper
//! nibble of byte"; CS threshold `<< 12` of the net16, i.e. B70\[7:4\]); libibmad `fields.c` (Threshold
//! `BITSOFFS(544,4)` = B68\[7:4\], Packet_Size `BITSOFFS(552,8)`, CS_Threshold `BITSOFFS(560,4)`, CS_ReturnDelay
//! `BITSOFFS(576,16)`, Marking_Rate `BITSOFFS(592,16)`; element Valid `BITSOFFS(0,1)`, Control_Type
//! `BITSOFFS(1,1)`, Threshold `BITSOFFS(4,4)`, Packet_Size `BITSOFFS(8,8)`, Cong_Parm `BITSOFFS(16,16)`); the
//! Mellanox adb (dword 17: Threshold bits 28-31, Packet_Size 16-23, CS_Threshold 12-15). The positions agree.
//! Disagreements found:
//! - Control_Map bit order: opensm (`opensm.conf` comments: bit 0 victim mask, 1 credit mask, 2 threshold +
//!   packet size, 3 CS threshold + return delay, 4 marking rate) and Intel's OPA FM (`CC_SWITCH_CONTROL_MAP_*`
//!   0x1 victim .. 0x10 marking) against the Mellanox adb (bit 0 `Marking_RateIsValid` .. bit 4
//!   `Victim_MaskIsValid`). Hence [`ControlMapOrder`]. Bit 2 and the value 0x1F mean the same in both.
//! - opensm's `ib_types.h` comment calls the threshold word "bits [15..12] threshold, bits [11..0] reserved",
//!   but bits \[7:0\] of that word are Packet_Size; the struct itself (two u8) is right.
//! - `ibccconfig` reads SwitchPortCongestionSetting with modifier `port / 32` but writes it back with
//!   `port / 48`; the block is 32 elements (opensm `ib_sw_port_cong_setting_block_t[32]`, the adb, the
//!   reference), so [`SwitchPortCongestionSettingBlock::block_of_port`] uses 32.
//! - `ibccconfig` checks no ranges (libibmad keeps the low bits of a too-wide value); here `validate()` does.

use serde::{Deserialize, Serialize};

use super::cct::CctEntry;
use super::port_mask::PortMask;
use super::{be16, check_len, check_max, Expected, MadError};

const ATTR: &str = "SwitchCongestionSetting";
const PORT_ATTR: &str = "SwitchPortCongestionSetting";

/// Which bit of Control_Map stands for which component; the sources disagree, so the caller names one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ControlMapOrder {
    /// opensm and Intel OPA: bit 0 Victim_Mask, 1 Credit_Mask, 2 Threshold + Packet_Size, 3 CS_Threshold +
    /// CS_ReturnDelay, 4 Marking_Rate.
    #[default]
    Opensm,
    /// Mellanox adb: bit 0 Marking_Rate, 1 CS_Threshold + CS_ReturnDelay, 2 Threshold + Packet_Size, 3
    /// Credit_Mask, 4 Victim_Mask.
    Reversed,
}

impl ControlMapOrder {
    /// Bit numbers of victim mask, credit mask, threshold + packet size, CS threshold + return delay, marking
    /// rate, in that order.
    fn bits(self) -> [u32; 5] {
        match self {
            ControlMapOrder::Opensm => [0, 1, 2, 3, 4],
            ControlMapOrder::Reversed => [4, 3, 2, 1, 0],
        }
    }
}

/// The components of SwitchCongestionSetting that Control_Map marks as to be applied.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ControlMap {
    /// Victim_Mask is valid.
    pub victim_mask: bool,
    /// Credit_Mask is valid.
    pub credit_mask: bool,
    /// Threshold and Packet_Size are valid.
    pub threshold_packet_size: bool,
    /// CS_Threshold and CS_ReturnDelay are valid.
    pub cs_threshold_return_delay: bool,
    /// Marking_Rate is valid.
    pub marking_rate: bool,
}

impl ControlMap {
    /// Every component valid (Control_Map 0x1F in either order).
    pub const ALL: Self = Self {
        victim_mask: true,
        credit_mask: true,
        threshold_packet_size: true,
        cs_threshold_return_delay: true,
        marking_rate: true,
    };

    fn flags(&self) -> [bool; 5] {
        [
            self.victim_mask,
            self.credit_mask,
            self.threshold_packet_size,
            self.cs_threshold_return_delay,
            self.marking_rate,
        ]
    }

    /// Decodes bits 4:0 of a Control_Map in the given order; reserved bits 31:5 are ignored.
    pub fn from_bits(control_map: u32, order: ControlMapOrder) -> Self {
        let b = order.bits().map(|n| control_map & (1 << n) != 0);
        Self {
            victim_mask: b[0],
            credit_mask: b[1],
            threshold_packet_size: b[2],
            cs_threshold_return_delay: b[3],
            marking_rate: b[4],
        }
    }

    /// Encodes the components as a Control_Map in the given order.
    pub fn to_bits(&self, order: ControlMapOrder) -> u32 {
        order
            .bits()
            .iter()
            .zip(self.flags())
            .filter(|(_, on)| *on)
            .fold(0, |acc, (n, _)| acc | (1 << n))
    }
}

/// The SwitchCongestionSetting attribute.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SwitchCongestionSetting {
    /// Control_Map, raw (decode with [`Self::controls`]); only bits 4:0 are defined.
    pub control_map: u32,
    /// Ports that mark FECN whether they are the root or a victim of congestion.
    pub victim_mask: PortMask,
    /// Ports that apply credit starvation.
    pub credit_mask: PortMask,
    /// Marking aggressiveness, 4 bits: 0 none, 1 loose .. 15 aggressive.
    pub threshold: u8,
    /// Smallest packet that may be marked, in 64-byte units (0..=255, i.e. up to 0x3FC0 bytes).
    pub packet_size: u8,
    /// Credit starvation aggressiveness, 4 bits.
    pub cs_threshold: u8,
    /// Credit return delay, as a CCT entry.
    pub cs_return_delay: CctEntry,
    /// Mean number of packets between markings.
    pub marking_rate: u16,
}

impl SwitchCongestionSetting {
    /// Bytes of the attribute on the wire.
    pub const WIRE_LEN: usize = 76;
    /// Attribute ID of SwitchCongestionSetting in the CC class.
    pub const ATTR_ID: u16 = 0x14;
    /// Bytes per Packet_Size unit (a credit).
    pub const PACKET_SIZE_UNIT: u32 = 64;
    /// Largest Threshold / CS_Threshold (4 bits).
    pub const MAX_THRESHOLD: u8 = 15;
    /// Control_Map bits defined by either order.
    pub const CONTROL_MAP_DEFINED: u32 = 0x1F;

    /// The Mellanox CC manager defaults (reference notes): Threshold 0xF, Marking_Rate 0xA, Packet_Size 0x200
    /// bytes = 8 units. Control_Map marks valid exactly the components these defaults set (Threshold +
    /// Packet_Size, Marking_Rate), so applying them leaves the masks and credit starvation alone; that choice is
    /// ours, the notes give no Control_Map.
    pub fn mellanox_defaults(order: ControlMapOrder) -> Self {
        Self {
            control_map: ControlMap {
                threshold_packet_size: true,
                marking_rate: true,
                ..ControlMap::default()
            }
            .to_bits(order),
            threshold: 0xF,
            packet_size: 8,
            marking_rate: 0xA,
            ..Self::default()
        }
    }

    /// The components Control_Map marks valid, read in `order`.
    pub fn controls(&self, order: ControlMapOrder) -> ControlMap {
        ControlMap::from_bits(self.control_map, order)
    }

    /// Sets Control_Map from components, written in `order`.
    pub fn set_controls(&mut self, controls: ControlMap, order: ControlMapOrder) {
        self.control_map = controls.to_bits(order);
    }

    /// Packet_Size in bytes.
    pub fn packet_size_bytes(&self) -> u32 {
        u32::from(self.packet_size) * Self::PACKET_SIZE_UNIT
    }

    /// Sets Packet_Size from bytes: a multiple of 64 up to 255 * 64 = 0x3FC0.
    pub fn set_packet_size_bytes(&mut self, bytes: u32) -> Result<(), MadError> {
        let units = bytes / Self::PACKET_SIZE_UNIT;
        if units * Self::PACKET_SIZE_UNIT != bytes {
            return Err(MadError::Field {
                attr: ATTR,
                field: "packet_size_bytes",
                index: None,
                value: bytes.into(),
                expected: Expected::MultipleOf(Self::PACKET_SIZE_UNIT.into()),
            });
        }
        check_max(ATTR, "packet_size_bytes", None, bytes.into(), 0x3FC0)?;
        // units <= 255 after the check above.
        self.packet_size = units as u8;
        Ok(())
    }

    /// Checks what the plain form can hold but the wire cannot: Threshold and CS_Threshold above 15, and
    /// Control_Map bits above bit 4 (reserved in every source). Packet_Size (u8) and Marking_Rate (u16) are typed
    /// to their wire widths, so every value is acceptable.
    pub fn validate(&self) -> Result<(), MadError> {
        check_max(
            ATTR,
            "threshold",
            None,
            self.threshold.into(),
            Self::MAX_THRESHOLD.into(),
        )?;
        check_max(
            ATTR,
            "cs_threshold",
            None,
            self.cs_threshold.into(),
            Self::MAX_THRESHOLD.into(),
        )?;
        check_max(
            ATTR,
            "control_map",
            None,
            self.control_map.into(),
            Self::CONTROL_MAP_DEFINED.into(),
        )
    }

    /// Reads the attribute from the first 76 bytes of `buf`; reserved bits are ignored.
    pub fn parse(buf: &[u8]) -> Result<Self, MadError> {
        check_len(ATTR, buf, Self::WIRE_LEN)?;
        Ok(Self {
            control_map: u32::from_be_bytes([buf[0], buf[1], buf[2], buf[3]]),
            victim_mask: PortMask::parse(&buf[4..])?,
            credit_mask: PortMask::parse(&buf[36..])?,
            threshold: buf[68] >> 4,
            packet_size: buf[69],
            cs_threshold: buf[70] >> 4,
            cs_return_delay: CctEntry::from_raw(be16(buf, 72)),
            marking_rate: be16(buf, 74),
        })
    }

    /// Writes the attribute into the first 76 bytes of `buf`, reserved bits as zero. Threshold and CS_Threshold
    /// are truncated to 4 bits; see [`Self::validate`].
    ///
    /// # Panics
    /// If `buf` is shorter than [`Self::WIRE_LEN`].
    pub fn emit(&self, buf: &mut [u8]) {
        let buf = &mut buf[..Self::WIRE_LEN];
        buf[0..4].copy_from_slice(&self.control_map.to_be_bytes());
        self.victim_mask.emit(&mut buf[4..]);
        self.credit_mask.emit(&mut buf[36..]);
        buf[68] = (self.threshold & 0xF) << 4;
        buf[69] = self.packet_size;
        buf[70] = (self.cs_threshold & 0xF) << 4;
        buf[71] = 0;
        self.cs_return_delay.emit(&mut buf[72..]);
        buf[74..76].copy_from_slice(&self.marking_rate.to_be_bytes());
    }

    /// The 76 wire bytes.
    pub fn to_bytes(&self) -> [u8; 76] {
        let mut b = [0u8; 76];
        self.emit(&mut b);
        b
    }
}

/// The packed 32-bit port element, described with modular-bitfield (fields from the least significant bit of
/// the big-endian word).
mod bits {
    // The macro generates getters and setters for every field (only some are used), const blocks in braces
    // and `<< 0` / `+ 0` offsets that rustc and clippy flag.
    #![allow(dead_code, unused_braces, clippy::identity_op)]
    use modular_bitfield::prelude::*;

    /// SwitchPortCongestionSettingElement as a big-endian u32.
    #[bitfield]
    #[repr(u32)]
    #[derive(Clone, Copy, PartialEq, Eq)]
    pub(super) struct ElementWord {
        /// B2-3.
        pub(super) cong_parm: B16,
        /// B1.
        pub(super) packet_size: B8,
        /// B0\[3:0\].
        pub(super) threshold: B4,
        /// B0\[5:4\].
        pub(super) reserved: B2,
        /// B0\[6\].
        pub(super) control_type: bool,
        /// B0\[7\].
        pub(super) valid: bool,
    }
}

/// Control_Type of a port element: which parameters the element sets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ControlType {
    /// 0: congestion control parameters (Threshold, Packet_Size, Marking_Rate).
    #[default]
    CongestionControl,
    /// 1: credit starvation parameters (CS_Threshold; Packet_Size and Cong_Parm reserved).
    CreditStarvation,
}

/// One SwitchPortCongestionSettingElement: the per-port override of the switch-wide setting.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SwitchPortCongestionElement {
    /// The element is to be applied.
    pub valid: bool,
    /// What the element sets.
    pub control_type: ControlType,
    /// Threshold (or CS_Threshold for credit starvation), 4 bits.
    pub threshold: u8,
    /// Smallest markable packet, 64-byte units (reserved for credit starvation).
    pub packet_size: u8,
    /// Cong_Parm: the port's Marking_Rate (reserved for credit starvation).
    pub marking_rate: u16,
}

impl SwitchPortCongestionElement {
    /// Bytes of an element on the wire.
    pub const WIRE_LEN: usize = 4;

    /// A valid congestion-control element with the Mellanox CC manager defaults (reference notes): Threshold
    /// 0xF, Packet_Size 8 units (0x200 bytes), Marking_Rate 0xA.
    pub fn mellanox_defaults() -> Self {
        Self {
            valid: true,
            control_type: ControlType::CongestionControl,
            threshold: 0xF,
            packet_size: 8,
            marking_rate: 0xA,
        }
    }

    /// Reads an element from the first 4 bytes of `buf`; B0\[5:4\] (reserved) are ignored.
    pub fn parse(buf: &[u8]) -> Result<Self, MadError> {
        check_len("SwitchPortCongestionSettingElement", buf, Self::WIRE_LEN)?;
        let w = bits::ElementWord::from(u32::from_be_bytes([buf[0], buf[1], buf[2], buf[3]]));
        Ok(Self {
            valid: w.valid(),
            control_type: if w.control_type() {
                ControlType::CreditStarvation
            } else {
                ControlType::CongestionControl
            },
            threshold: w.threshold(),
            packet_size: w.packet_size(),
            marking_rate: w.cong_parm(),
        })
    }

    /// Writes the element into the first 4 bytes of `buf`, reserved bits as zero; Threshold is truncated to 4
    /// bits (see [`SwitchPortCongestionSettingBlock::validate`]).
    ///
    /// # Panics
    /// If `buf` is shorter than [`Self::WIRE_LEN`].
    pub fn emit(&self, buf: &mut [u8]) {
        let w = bits::ElementWord::new()
            .with_valid(self.valid)
            .with_control_type(self.control_type == ControlType::CreditStarvation)
            .with_threshold(self.threshold & 0xF)
            .with_packet_size(self.packet_size)
            .with_cong_parm(self.marking_rate);
        buf[..Self::WIRE_LEN].copy_from_slice(&u32::from(w).to_be_bytes());
    }
}

/// One SwitchPortCongestionSetting block: the elements of 32 consecutive ports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SwitchPortCongestionSettingBlock {
    /// Element `i` is port `32 * block + i`.
    pub elements: [SwitchPortCongestionElement; 32],
}

impl SwitchPortCongestionSettingBlock {
    /// Bytes of a block on the wire.
    pub const WIRE_LEN: usize = 128;
    /// Attribute ID of SwitchPortCongestionSetting in the CC class.
    pub const ATTR_ID: u16 = 0x15;
    /// Ports per block.
    pub const PORTS: usize = 32;

    /// Attribute modifier (block number) of the block holding `port`.
    pub fn block_of_port(port: u8) -> u32 {
        u32::from(port) / Self::PORTS as u32
    }

    /// Index of `port`'s element inside its block.
    pub fn index_in_block(port: u8) -> usize {
        usize::from(port) % Self::PORTS
    }

    /// Checks that every element's Threshold fits its 4 bits; the error names the element index.
    pub fn validate(&self) -> Result<(), MadError> {
        for (i, e) in self.elements.iter().enumerate() {
            check_max(
                PORT_ATTR,
                "threshold",
                Some(i),
                e.threshold.into(),
                SwitchCongestionSetting::MAX_THRESHOLD.into(),
            )?;
        }
        Ok(())
    }

    /// Reads a block from the first 128 bytes of `buf`.
    pub fn parse(buf: &[u8]) -> Result<Self, MadError> {
        check_len(PORT_ATTR, buf, Self::WIRE_LEN)?;
        let mut elements = [SwitchPortCongestionElement::default(); 32];
        for (i, e) in elements.iter_mut().enumerate() {
            *e = SwitchPortCongestionElement::parse(&buf[4 * i..])?;
        }
        Ok(Self { elements })
    }

    /// Writes the block into the first 128 bytes of `buf`.
    ///
    /// # Panics
    /// If `buf` is shorter than [`Self::WIRE_LEN`].
    pub fn emit(&self, buf: &mut [u8]) {
        let buf = &mut buf[..Self::WIRE_LEN];
        for (i, e) in self.elements.iter().enumerate() {
            e.emit(&mut buf[4 * i..]);
        }
    }

    /// The 128 wire bytes.
    pub fn to_bytes(&self) -> [u8; 128] {
        let mut b = [0u8; 128];
        self.emit(&mut b);
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn mellanox_defaults_with_victim_ports_0_and_255_give_exact_bytes() {
        let mut s = SwitchCongestionSetting::mellanox_defaults(ControlMapOrder::Opensm);
        s.victim_mask = PortMask::EMPTY.with(0, true).with(255, true);
        assert_eq!(s.threshold, 0xF);
        assert_eq!(s.packet_size, 8);
        assert_eq!(s.packet_size_bytes(), 0x200);
        assert_eq!(s.marking_rate, 0xA);
        let mut buf = [0xa5u8; 78];
        s.emit(&mut buf);
        assert_eq!(&buf[0..4], &[0, 0, 0, 0x14], "opensm order: bits 2 and 4");
        assert_eq!(buf[4], 0x80, "port 255 = MSB of the first mask byte");
        assert!(buf[5..35].iter().all(|&x| x == 0));
        assert_eq!(buf[35], 0x01, "port 0 = LSB of the last mask byte");
        assert!(buf[36..68].iter().all(|&x| x == 0), "credit mask empty");
        assert_eq!(buf[68], 0xF0);
        assert_eq!(buf[69], 0x08);
        assert_eq!(&buf[70..74], &[0, 0, 0, 0]);
        assert_eq!(&buf[74..76], &[0x00, 0x0A]);
        assert_eq!(&buf[76..], &[0xa5, 0xa5], "nothing written past 76 bytes");
        let reversed = SwitchCongestionSetting::mellanox_defaults(ControlMapOrder::Reversed);
        assert_eq!(
            reversed.control_map, 0b00101,
            "reversed order: bits 2 and 0"
        );
    }

    /// Every field distinct, reserved bits set to 1 to prove they are ignored.
    fn hand_built() -> Vec<u8> {
        let mut b = vec![0u8; 76];
        b[0..4].copy_from_slice(&[0, 0, 0, 0x1F]);
        b[35] = 0b0000_0110; // victim ports 1, 2
        b[36] = 0x40; // credit port 254
        b[68] = 0x5F; // Threshold 5, reserved 0xF
        b[69] = 0x20; // Packet_Size 32 units = 2048 bytes
        b[70] = 0x3F; // CS_Threshold 3, reserved 0xF
        b[71] = 0xFF; // reserved
        b[72..74].copy_from_slice(&[0x80, 0x07]); // CS_ReturnDelay shift 2, mult 7
        b[74..76].copy_from_slice(&[0x01, 0x02]);
        b
    }

    #[test]
    fn parse_from_layout() {
        let s = SwitchCongestionSetting::parse(&hand_built()).unwrap();
        assert_eq!(s.control_map, 0x1F);
        assert_eq!(s.controls(ControlMapOrder::Opensm), ControlMap::ALL);
        assert_eq!(s.victim_mask.iter_ones().collect::<Vec<_>>(), vec![1, 2]);
        assert_eq!(s.credit_mask.iter_ones().collect::<Vec<_>>(), vec![254]);
        assert_eq!(s.threshold, 5);
        assert_eq!(s.packet_size_bytes(), 2048);
        assert_eq!(s.cs_threshold, 3);
        assert_eq!(
            (s.cs_return_delay.shift(), s.cs_return_delay.multiplier()),
            (2, 7)
        );
        assert_eq!(s.marking_rate, 0x0102);
        assert!(s.validate().is_ok());
    }

    #[test]
    fn emit_clears_reserved_bits() {
        let got = SwitchCongestionSetting::parse(&hand_built())
            .unwrap()
            .to_bytes();
        let mut want = hand_built();
        want[68] = 0x50;
        want[70] = 0x30;
        want[71] = 0;
        assert_eq!(got.to_vec(), want);
    }

    #[test]
    fn ibccconfig_usage_example() {
        // "SwitchCongestionSetting 2 0x1F 0x1FFFFFFFFF 0x0 0xF 8 0 0:0 1"
        let s = SwitchCongestionSetting {
            control_map: 0x1F,
            victim_mask: PortMask::from_hex("0x1FFFFFFFFF").unwrap(),
            credit_mask: PortMask::EMPTY,
            threshold: 0xF,
            packet_size: 8,
            cs_threshold: 0,
            cs_return_delay: CctEntry::new(0, 0).unwrap(),
            marking_rate: 1,
        };
        let b = s.to_bytes();
        assert_eq!(&b[31..36], &[0x1F, 0xFF, 0xFF, 0xFF, 0xFF]);
        assert_eq!(&b[68..76], &[0xF0, 8, 0, 0, 0, 0, 0, 1]);
    }

    #[test]
    fn control_map_orders() {
        let only_victim = ControlMap {
            victim_mask: true,
            ..ControlMap::default()
        };
        assert_eq!(only_victim.to_bits(ControlMapOrder::Opensm), 0x01);
        assert_eq!(only_victim.to_bits(ControlMapOrder::Reversed), 0x10);
        let only_marking = ControlMap {
            marking_rate: true,
            ..ControlMap::default()
        };
        assert_eq!(only_marking.to_bits(ControlMapOrder::Opensm), 0x10);
        assert_eq!(only_marking.to_bits(ControlMapOrder::Reversed), 0x01);
        let cs = ControlMap {
            cs_threshold_return_delay: true,
            ..ControlMap::default()
        };
        assert_eq!(cs.to_bits(ControlMapOrder::Opensm), 0x08);
        assert_eq!(cs.to_bits(ControlMapOrder::Reversed), 0x02);
        let credit = ControlMap {
            credit_mask: true,
            ..ControlMap::default()
        };
        assert_eq!(credit.to_bits(ControlMapOrder::Opensm), 0x02);
        assert_eq!(credit.to_bits(ControlMapOrder::Reversed), 0x08);

        let s = SwitchCongestionSetting {
            control_map: 0x01,
            ..Default::default()
        };
        assert_eq!(s.controls(ControlMapOrder::Opensm), only_victim);
        assert_eq!(s.controls(ControlMapOrder::Reversed), only_marking);
        let s = SwitchCongestionSetting {
            control_map: 0x04 | 0xFFFF_FF00,
            ..Default::default()
        };
        let thr = ControlMap {
            threshold_packet_size: true,
            ..ControlMap::default()
        };
        assert_eq!(
            s.controls(ControlMapOrder::Opensm),
            thr,
            "bit 2 same in both"
        );
        assert_eq!(s.controls(ControlMapOrder::Reversed), thr);
        assert_eq!(ControlMap::ALL.to_bits(ControlMapOrder::Reversed), 0x1F);
        let mut s = SwitchCongestionSetting::default();
        s.set_controls(only_victim, ControlMapOrder::Reversed);
        assert_eq!(s.control_map, 0x10);
    }

    #[test]
    fn validate_names_the_field() {
        let s = SwitchCongestionSetting {
            threshold: 16,
            ..Default::default()
        };
        assert_eq!(
            s.validate(),
            Err(MadError::Field {
                attr: "SwitchCongestionSetting",
                field: "threshold",
                index: None,
                value: 16,
                expected: Expected::AtMost(15)
            })
        );
        let s = SwitchCongestionSetting {
            cs_threshold: 0x20,
            ..Default::default()
        };
        assert!(matches!(
            s.validate(),
            Err(MadError::Field {
                field: "cs_threshold",
                ..
            })
        ));
        let s = SwitchCongestionSetting {
            control_map: 0x20,
            ..Default::default()
        };
        assert!(matches!(
            s.validate(),
            Err(MadError::Field {
                field: "control_map",
                ..
            })
        ));
        // Out-of-range threshold is truncated on the wire, as libibmad does.
        let s = SwitchCongestionSetting {
            threshold: 0x1A,
            ..Default::default()
        };
        assert_eq!(s.to_bytes()[68], 0xA0);
    }

    #[test]
    fn packet_size_in_bytes() {
        let mut s = SwitchCongestionSetting::default();
        s.set_packet_size_bytes(0x3FC0).unwrap();
        assert_eq!(s.packet_size, 255);
        assert_eq!(
            s.set_packet_size_bytes(0x4000),
            Err(MadError::Field {
                attr: "SwitchCongestionSetting",
                field: "packet_size_bytes",
                index: None,
                value: 0x4000,
                expected: Expected::AtMost(0x3FC0)
            })
        );
        assert!(matches!(
            s.set_packet_size_bytes(100),
            Err(MadError::Field {
                expected: Expected::MultipleOf(64),
                ..
            })
        ));
        assert_eq!(s.packet_size, 255, "unchanged on error");
    }

    #[test]
    fn short_buffers_are_length_errors() {
        assert!(matches!(
            SwitchCongestionSetting::parse(&[0u8; 75]),
            Err(MadError::Length {
                need: 76,
                have: 75,
                ..
            })
        ));
        assert!(matches!(
            SwitchPortCongestionSettingBlock::parse(&[0u8; 127]),
            Err(MadError::Length { need: 128, .. })
        ));
    }

    #[test]
    fn port_element_bits() {
        let mut b = [0u8; 128];
        b[0..4].copy_from_slice(&[0x80 | 0x30 | 0x0F, 0x08, 0x00, 0x0A]); // valid, resv 11, thr 15
        b[4..8].copy_from_slice(&[0x45, 0x00, 0xFF, 0xFF]); // credit starvation, CS_Threshold 5
        let blk = SwitchPortCongestionSettingBlock::parse(&b).unwrap();
        assert_eq!(
            blk.elements[0],
            SwitchPortCongestionElement::mellanox_defaults()
        );
        assert_eq!(
            blk.elements[1],
            SwitchPortCongestionElement {
                valid: false,
                control_type: ControlType::CreditStarvation,
                threshold: 5,
                packet_size: 0,
                marking_rate: 0xFFFF
            }
        );
        let out = blk.to_bytes();
        assert_eq!(
            &out[0..4],
            &[0x8F, 0x08, 0x00, 0x0A],
            "reserved B0[5:4] cleared"
        );
        assert_eq!(&out[4..8], &[0x45, 0x00, 0xFF, 0xFF]);
        assert!(out[8..].iter().all(|&x| x == 0));
    }

    #[test]
    fn port_block_modifier_and_validate() {
        assert_eq!(SwitchPortCongestionSettingBlock::block_of_port(31), 0);
        assert_eq!(SwitchPortCongestionSettingBlock::block_of_port(32), 1);
        assert_eq!(SwitchPortCongestionSettingBlock::block_of_port(255), 7);
        assert_eq!(SwitchPortCongestionSettingBlock::index_in_block(40), 8);
        let mut blk = SwitchPortCongestionSettingBlock::default();
        assert!(blk.validate().is_ok());
        blk.elements[9].threshold = 16;
        assert_eq!(
            blk.validate(),
            Err(MadError::Field {
                attr: "SwitchPortCongestionSetting",
                field: "threshold",
                index: Some(9),
                value: 16,
                expected: Expected::AtMost(15)
            })
        );
    }

    /// Clears SwitchCongestionSetting's reserved bits: B68\[3:0\], B70\[3:0\], B71.
    fn zero_reserved(mut b: Vec<u8>) -> Vec<u8> {
        b[68] &= 0xF0;
        b[70] &= 0xF0;
        b[71] = 0;
        b
    }

    /// Clears each port element's reserved B0\[5:4\].
    fn zero_reserved_port(mut b: Vec<u8>) -> Vec<u8> {
        for i in 0..32 {
            b[4 * i] &= !0x30;
        }
        b
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(10_000))]

        /// Property stated with the reserved bits zeroed.
        #[test]
        fn round_trip(b in proptest::collection::vec(any::<u8>(), 76)) {
            let s = SwitchCongestionSetting::parse(&b).unwrap();
            prop_assert!(s.threshold <= 15 && s.cs_threshold <= 15);
            prop_assert_eq!(s.to_bytes().to_vec(), zero_reserved(b));
        }

        #[test]
        fn parse_never_panics(b in proptest::collection::vec(any::<u8>(), 0..200)) {
            prop_assert_eq!(SwitchCongestionSetting::parse(&b).is_ok(), b.len() >= 76);
            prop_assert_eq!(SwitchPortCongestionSettingBlock::parse(&b).is_ok(), b.len() >= 128);
        }

        /// Property stated with the reserved bits zeroed.
        #[test]
        fn port_block_round_trip(b in proptest::collection::vec(any::<u8>(), 128)) {
            let blk = SwitchPortCongestionSettingBlock::parse(&b).unwrap();
            prop_assert!(blk.validate().is_ok(), "parsed values always fit");
            prop_assert_eq!(blk.to_bytes().to_vec(), zero_reserved_port(b));
        }

        #[test]
        fn control_map_round_trips_in_both_orders(bits in 0u32..32, reversed in any::<bool>()) {
            let order = if reversed { ControlMapOrder::Reversed } else { ControlMapOrder::Opensm };
            prop_assert_eq!(ControlMap::from_bits(bits, order).to_bits(order), bits);
            // Reading in the other order mirrors the five bits.
            let other = if reversed { ControlMapOrder::Opensm } else { ControlMapOrder::Reversed };
            let mirrored = (0..5).filter(|n| bits & (1 << n) != 0).fold(0, |a, n| a | (1 << (4 - n)));
            prop_assert_eq!(ControlMap::from_bits(bits, order).to_bits(other), mirrored);
        }
    }
}
