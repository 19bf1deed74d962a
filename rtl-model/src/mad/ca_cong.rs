//! CACongestionSetting (CC attribute 0x16): how a CA reacts to BECNs, per SL.
//!
//! Layout (132 bytes):
//!
//! | bytes          | field                                                                   |
//! |----------------|-------------------------------------------------------------------------|
//! | B0-1           | Port_Control: bit 0 = 0 QP-based CC, 1 SL/port-based CC; bits 15:1 reserved |
//! | B2-3           | Control_Map: bit i = entry for SL i is to be applied                      |
//! | B(4+8i)..      | entry for SL i (i = 0..15), 8 bytes:                                    |
//! | +0-1           | CCTI_Timer (units of 1.024 us)                                           |
//! | +2             | CCTI_Increase                                                            |
//! | +3             | Trigger_Threshold                                                        |
//! | +4             | CCTI_Min                                                                 |
//! | +5-7           | reserved                                                                 |
//!
//! Cross-checked: opensm `ib_ca_cong_setting_t` / `ib_ca_cong_entry_t` (`ccti_timer` net16, `ccti_increase`,
//! `trigger_threshold`, `ccti_min`, `resv0` u8, `resv1` net16), libibmad `fields.c` (Port_Control
//! `BITSOFFS(0,16)`, Control_Map `BITSOFFS(16,16)`, entry CCTI_Timer 0..16, Increase 16..24, Trigger 24..32,
//! CCTI_Min 32..40) and `ibccconfig` (entry at `payload + 2 + 2 + i * 8`). They agree. The Mellanox adb lists
//! Control_Map before Port_Control, but with dword bit numbers (Control_Map 0.0-0.15 is the low half of the
//! first big-endian dword, i.e. B2-3), so it agrees too. `ibccconfig` writes entries only for SLs selected in
//! Control_Map; opensm writes all 16.
//!
//! All fields are byte-aligned, so plain big-endian reads are used here rather than a bitfield.

use serde::{Deserialize, Serialize};

use super::cct::Cct;
use super::{be16, check_len, MadError};

const ATTR: &str = "CACongestionSetting";

/// Port_Control bit 0: which context a CA keeps its congestion state in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CcMode {
    /// Bit 0 = 0: per-QP congestion control.
    #[default]
    QpBased,
    /// Bit 0 = 1: per-SL (per-port) congestion control.
    SlBased,
}

/// The CACongestionEntry of one SL.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaCongestionEntry {
    /// Period after which CCTI is decremented by one, in 1.024 us units.
    pub ccti_timer: u16,
    /// Added to CCTI on each BECN.
    pub ccti_increase: u8,
    /// CCTI at which the CA logs an event (0: never, as hfi1 treats it).
    pub trigger_threshold: u8,
    /// Lowest CCTI (sets a minimum injection delay).
    pub ccti_min: u8,
}

impl CaCongestionEntry {
    /// Bytes of an entry on the wire.
    pub const WIRE_LEN: usize = 8;

    /// The Mellanox CC manager defaults from the reference notes: CCTI_Increase 1, Trigger_Threshold 2, CCTI_Min
    /// 0. The notes give no default CCTI_Timer, so the caller chooses it.
    pub fn mellanox_defaults(ccti_timer: u16) -> Self {
        Self {
            ccti_timer,
            ccti_increase: 1,
            trigger_threshold: 2,
            ccti_min: 0,
        }
    }

    /// CCTI_Timer in nanoseconds (1.024 us = 1024 ns per unit).
    pub fn ccti_timer_ns(&self) -> u64 {
        u64::from(self.ccti_timer) * 1024
    }

    /// Reads an entry from the first 8 bytes of `buf`; B5-7 (reserved) are ignored.
    pub fn parse(buf: &[u8]) -> Result<Self, MadError> {
        check_len("CACongestionEntry", buf, Self::WIRE_LEN)?;
        Ok(Self {
            ccti_timer: be16(buf, 0),
            ccti_increase: buf[2],
            trigger_threshold: buf[3],
            ccti_min: buf[4],
        })
    }

    /// Writes the entry into the first 8 bytes of `buf`, reserved B5-7 as zero.
    ///
    /// # Panics
    /// If `buf` is shorter than [`Self::WIRE_LEN`].
    pub fn emit(&self, buf: &mut [u8]) {
        let buf = &mut buf[..Self::WIRE_LEN];
        buf[0..2].copy_from_slice(&self.ccti_timer.to_be_bytes());
        buf[2] = self.ccti_increase;
        buf[3] = self.trigger_threshold;
        buf[4] = self.ccti_min;
        buf[5..8].fill(0);
    }
}

/// The CACongestionSetting attribute.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaCongestionSetting {
    /// Port_Control bit 0.
    pub port_control: CcMode,
    /// Control_Map: bit i set = apply `entries[i]` (SL i).
    pub control_map: u16,
    /// One entry per SL.
    pub entries: [CaCongestionEntry; 16],
}

impl CaCongestionSetting {
    /// Bytes of the attribute on the wire.
    pub const WIRE_LEN: usize = 132;
    /// Attribute ID of CACongestionSetting in the CC class.
    pub const ATTR_ID: u16 = 0x16;

    /// Whether SL `sl`'s entry is selected by Control_Map (false for `sl` > 15).
    pub fn sl_selected(&self, sl: u8) -> bool {
        sl < 16 && self.control_map & (1 << sl) != 0
    }

    /// Selects or deselects SL `sl` in Control_Map; SLs above 15 do not exist and are ignored.
    pub fn select_sl(&mut self, sl: u8, on: bool) {
        if sl < 16 {
            if on {
                self.control_map |= 1 << sl;
            } else {
                self.control_map &= !(1 << sl);
            }
        }
    }

    /// The same entry for every SL, all 16 selected (opensm likewise writes all 16 entries).
    pub fn all_sls(port_control: CcMode, entry: CaCongestionEntry) -> Self {
        Self {
            port_control,
            control_map: 0xFFFF,
            entries: [entry; 16],
        }
    }

    /// Reads the attribute from the first 132 bytes of `buf`; reserved bits are ignored.
    pub fn parse(buf: &[u8]) -> Result<Self, MadError> {
        check_len(ATTR, buf, Self::WIRE_LEN)?;
        let mut entries = [CaCongestionEntry::default(); 16];
        for (i, e) in entries.iter_mut().enumerate() {
            *e = CaCongestionEntry::parse(&buf[4 + 8 * i..])?;
        }
        Ok(Self {
            port_control: if buf[1] & 1 == 0 {
                CcMode::QpBased
            } else {
                CcMode::SlBased
            },
            control_map: be16(buf, 2),
            entries,
        })
    }

    /// Writes the attribute into the first 132 bytes of `buf`, reserved bits as zero.
    ///
    /// # Panics
    /// If `buf` is shorter than [`Self::WIRE_LEN`].
    pub fn emit(&self, buf: &mut [u8]) {
        let buf = &mut buf[..Self::WIRE_LEN];
        let port_control: u16 = match self.port_control {
            CcMode::QpBased => 0,
            CcMode::SlBased => 1,
        };
        buf[0..2].copy_from_slice(&port_control.to_be_bytes());
        buf[2..4].copy_from_slice(&self.control_map.to_be_bytes());
        for (i, e) in self.entries.iter().enumerate() {
            e.emit(&mut buf[4 + 8 * i..]);
        }
    }

    /// The 132 wire bytes.
    pub fn to_bytes(&self) -> [u8; 132] {
        let mut b = [0u8; 132];
        self.emit(&mut b);
        b
    }

    /// Every field fits its wire width, so there is nothing to range-check on its own; this checks the
    /// selected SLs against the CA's CongestionControlTable: CCTI_Min and a non-zero Trigger_Threshold must not
    /// exceed CCTI_Limit, or the CCTI could never reach or leave them. Errors name the SL.
    pub fn check_against_cct(&self, cct: &Cct) -> Result<(), MadError> {
        let limit = u64::from(cct.ccti_limit);
        for (sl, e) in self.entries.iter().enumerate() {
            if !self.sl_selected(sl as u8) {
                continue;
            }
            super::check_max(ATTR, "ccti_min", Some(sl), e.ccti_min.into(), limit)?;
            if e.trigger_threshold != 0 {
                super::check_max(
                    ATTR,
                    "trigger_threshold",
                    Some(sl),
                    e.trigger_threshold.into(),
                    limit,
                )?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mad::cct::CctEntry;
    use crate::mad::Expected;
    use proptest::prelude::*;

    /// SL-based, SLs 0 and 15 selected; SL 0: timer 150, +1, trigger 2, min 0; SL 15: timer 0x1234, +3,
    /// trigger 0, min 5. Reserved bytes hold 0xa5 to prove they are ignored.
    fn hand_built() -> Vec<u8> {
        let mut b = vec![0u8; 132];
        b[0] = 0xa5; // Port_Control bits 15:8 reserved
        b[1] = 0xa5 | 1; // bit 0 = SL-based, bits 7:1 reserved
        b[2..4].copy_from_slice(&[0x80, 0x01]);
        b[4..12].copy_from_slice(&[0x00, 0x96, 1, 2, 0, 0xa5, 0xa5, 0xa5]);
        let sl15 = 4 + 8 * 15;
        b[sl15..sl15 + 8].copy_from_slice(&[0x12, 0x34, 3, 0, 5, 0xa5, 0xa5, 0xa5]);
        b
    }

    #[test]
    fn parse_from_layout() {
        let s = CaCongestionSetting::parse(&hand_built()).unwrap();
        assert_eq!(s.port_control, CcMode::SlBased);
        assert_eq!(s.control_map, 0x8001);
        assert!(s.sl_selected(0) && s.sl_selected(15) && !s.sl_selected(1) && !s.sl_selected(16));
        assert_eq!(s.entries[0], CaCongestionEntry::mellanox_defaults(150));
        assert_eq!(
            s.entries[15],
            CaCongestionEntry {
                ccti_timer: 0x1234,
                ccti_increase: 3,
                trigger_threshold: 0,
                ccti_min: 5
            }
        );
        assert!(s.entries[1..15]
            .iter()
            .all(|e| *e == CaCongestionEntry::default()));
        assert_eq!(s.entries[0].ccti_timer_ns(), 153_600);
    }

    #[test]
    fn emit_clears_reserved_bits() {
        let s = CaCongestionSetting::parse(&hand_built()).unwrap();
        let mut buf = [0xa5u8; 134];
        s.emit(&mut buf);
        assert_eq!(&buf[0..4], &[0x00, 0x01, 0x80, 0x01]);
        assert_eq!(&buf[4..12], &[0x00, 0x96, 1, 2, 0, 0, 0, 0]);
        assert_eq!(&buf[124..132], &[0x12, 0x34, 3, 0, 5, 0, 0, 0]);
        assert!(buf[12..124].iter().all(|&x| x == 0));
        assert_eq!(&buf[132..], &[0xa5, 0xa5]);
    }

    #[test]
    fn qp_based_and_sl_selection() {
        let mut s = CaCongestionSetting::all_sls(CcMode::QpBased, CaCongestionEntry::default());
        assert_eq!(&s.to_bytes()[0..4], &[0, 0, 0xFF, 0xFF]);
        s.select_sl(3, false);
        s.select_sl(200, true);
        assert_eq!(s.control_map, 0xFFF7);
    }

    #[test]
    fn short_buffer_is_a_length_error() {
        assert_eq!(
            CaCongestionSetting::parse(&[0u8; 131]),
            Err(MadError::Length {
                attr: "CACongestionSetting",
                need: 132,
                have: 131
            })
        );
    }

    #[test]
    fn checks_selected_sls_against_the_cct() {
        let cct = Cct::from_entries(vec![CctEntry::default(); 4]).unwrap(); // limit 3
        let mut s =
            CaCongestionSetting::all_sls(CcMode::SlBased, CaCongestionEntry::mellanox_defaults(10));
        assert!(s.check_against_cct(&cct).is_ok());
        s.entries[7].ccti_min = 4;
        assert_eq!(
            s.check_against_cct(&cct),
            Err(MadError::Field {
                attr: "CACongestionSetting",
                field: "ccti_min",
                index: Some(7),
                value: 4,
                expected: Expected::AtMost(3)
            })
        );
        s.select_sl(7, false);
        assert!(
            s.check_against_cct(&cct).is_ok(),
            "unselected SLs are not applied"
        );
    }

    /// Clears the reserved bits: Port_Control bits 15:1 and bytes 5-7 of every entry.
    fn zero_reserved(mut b: Vec<u8>) -> Vec<u8> {
        b[0] = 0;
        b[1] &= 1;
        for i in 0..16 {
            b[4 + 8 * i + 5..4 + 8 * i + 8].fill(0);
        }
        b
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(10_000))]

        /// Property stated with the reserved bits zeroed.
        #[test]
        fn round_trip(b in proptest::collection::vec(any::<u8>(), 132)) {
            let got = CaCongestionSetting::parse(&b).unwrap().to_bytes().to_vec();
            prop_assert_eq!(got, zero_reserved(b));
        }

        #[test]
        fn parse_never_panics(b in proptest::collection::vec(any::<u8>(), 0..200)) {
            prop_assert_eq!(CaCongestionSetting::parse(&b).is_ok(), b.len() >= 132);
        }
    }
}
