//! SLtoVLMappingTable (SMP attribute 0x17): which VL a packet of each SL uses on a port.
//!
//! Layout (8 bytes): byte i holds SL 2i in \[7:4\] and SL 2i+1 in \[3:0\]. On a switch the attribute modifier is
//! `(in_port << 8) | out_port` (the table used for packets entering at `in_port` and leaving at `out_port`); on
//! a CA or router port it is 0. Sources: the reference notes and opensm `osm_qos.c` (`parse_sl2vl_entry`:
//! `raw = (val1 << 4) | (val2 & 0xf)`; `sl2vl_update_table(.., in << 8 | out, ..)` for switches, modifier 0
//! for end ports). They agree.
//!
//! opensm also sends switch modifiers `0x30000` and `0x20000 | out` when the switch supports optimized SL2VL
//! programming (bits 17:16 widen the table to all input and/or output ports); the exact meaning of those bits is
//! not in the public sources read, so they are not modelled here.
//!
//! VL 15 in an SL2VL entry: opensm masks every mapped VL to the port's operational VLs *except* 15, which it
//! keeps; an SL mapped to VL15 is how a data SL is marked unusable (its packets are dropped). [`Sl2VlTable::validate`]
//! therefore accepts 15 as well as the operational data VLs.

use serde::{Deserialize, Serialize};

use super::{check_len, check_max, Expected, MadError};

const ATTR: &str = "SLtoVLMappingTable";

/// The VL each SL maps to. Serde form: a list of 16 VLs, index = SL (`sl2vl = [0, 1, 2, ...]`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Sl2VlTable {
    /// `vl[sl]`, 0..=15.
    pub vl: [u8; 16],
}

impl Sl2VlTable {
    /// Bytes of the attribute on the wire.
    pub const WIRE_LEN: usize = 8;
    /// Attribute ID of SLtoVLMappingTable (subnet management class).
    pub const ATTR_ID: u16 = 0x17;
    /// The VL that marks an SL as not to be used (see the module doc).
    pub const VL_DROP: u8 = 15;

    /// opensm's built-in default, `OSM_DEFAULT_QOS_SL2VL` = "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,7": SL i uses VL
    /// i for SL 0..=14 and SL 15 uses VL 7. (The reference notes' "sl2vl 0..14,7" means exactly this.) opensm
    /// then masks each VL with the port's operational-VL mask before sending, which this plain table does not do.
    pub fn opensm_default() -> Self {
        let mut vl = [0u8; 16];
        for (sl, v) in vl.iter_mut().enumerate().take(15) {
            *v = sl as u8;
        }
        vl[15] = 7;
        Self { vl }
    }

    /// The switch attribute modifier for the table of packets entering at `in_port` and leaving at `out_port`.
    pub fn switch_attr_modifier(in_port: u8, out_port: u8) -> u32 {
        (u32::from(in_port) << 8) | u32::from(out_port)
    }

    /// The VL of `sl`, or `None` for an SL above 15 (SLs are 4 bits).
    pub fn vl_of(&self, sl: u8) -> Option<u8> {
        self.vl.get(usize::from(sl)).copied()
    }

    /// Checks every SL's VL against `op_vls`, the number of operational data VLs (1..=15; see
    /// [`data_vls_of_oper_vls`] for PortInfo's OperVLs code): each VL must be below `op_vls` or be VL 15
    /// ([`Self::VL_DROP`]). The error names the SL (index) and its VL (value).
    pub fn validate(&self, op_vls: u8) -> Result<(), MadError> {
        if !(1..=15).contains(&op_vls) {
            return Err(MadError::Field {
                attr: ATTR,
                field: "op_vls",
                index: None,
                value: op_vls.into(),
                expected: Expected::InRange(1, 15),
            });
        }
        for (sl, &vl) in self.vl.iter().enumerate() {
            if vl != Self::VL_DROP {
                check_max(ATTR, "sl_to_vl", Some(sl), vl.into(), u64::from(op_vls) - 1)?;
            }
        }
        Ok(())
    }

    /// Reads the table from the first 8 bytes of `buf` (every nibble is a VL, so only the length can fail).
    pub fn parse(buf: &[u8]) -> Result<Self, MadError> {
        check_len(ATTR, buf, Self::WIRE_LEN)?;
        let mut vl = [0u8; 16];
        for (i, &b) in buf[..Self::WIRE_LEN].iter().enumerate() {
            vl[2 * i] = b >> 4;
            vl[2 * i + 1] = b & 0xF;
        }
        Ok(Self { vl })
    }

    /// Writes the table into the first 8 bytes of `buf`; VLs are truncated to 4 bits.
    ///
    /// # Panics
    /// If `buf` is shorter than [`Self::WIRE_LEN`].
    pub fn emit(&self, buf: &mut [u8]) {
        for (i, b) in buf[..Self::WIRE_LEN].iter_mut().enumerate() {
            *b = ((self.vl[2 * i] & 0xF) << 4) | (self.vl[2 * i + 1] & 0xF);
        }
    }

    /// The 8 wire bytes.
    pub fn to_bytes(&self) -> [u8; 8] {
        let mut b = [0u8; 8];
        self.emit(&mut b);
        b
    }
}

/// Number of data VLs for PortInfo's OperVLs / VLCap code (1: VL0, 2: VL0-1, 3: VL0-3, 4: VL0-7, 5: VL0-14),
/// or `None` for other codes.
pub fn data_vls_of_oper_vls(code: u8) -> Option<u8> {
    match code {
        1 => Some(1),
        2 => Some(2),
        3 => Some(4),
        4 => Some(8),
        5 => Some(15),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde::de::value::{Error as ValueError, SeqDeserializer};

    #[test]
    fn opensm_default_bytes() {
        let t = Sl2VlTable::opensm_default();
        assert_eq!(
            t.to_bytes(),
            [0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xE7]
        );
        assert_eq!(t.vl_of(14), Some(14));
        assert_eq!(t.vl_of(15), Some(7));
        assert_eq!(t.vl_of(16), None);
    }

    #[test]
    fn parse_from_layout() {
        let t = Sl2VlTable::parse(&[0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x3F, 0xa5]).unwrap();
        assert_eq!(t.vl_of(0), Some(1), "SL 0 in the high nibble of byte 0");
        assert_eq!(t.vl_of(1), Some(0));
        assert_eq!(t.vl_of(14), Some(3));
        assert_eq!(t.vl_of(15), Some(15));
        let mut buf = [0xa5u8; 9];
        t.emit(&mut buf);
        assert_eq!(buf, [0x10, 0, 0, 0, 0, 0, 0, 0x3F, 0xa5]);
    }

    #[test]
    fn switch_modifier() {
        assert_eq!(Sl2VlTable::switch_attr_modifier(3, 17), 0x0311);
        assert_eq!(Sl2VlTable::switch_attr_modifier(255, 0), 0xFF00);
    }

    #[test]
    fn validate_names_sl_and_vl() {
        let t = Sl2VlTable::opensm_default();
        assert!(t.validate(15).is_ok());
        assert_eq!(
            t.validate(8),
            Err(MadError::Field {
                attr: "SLtoVLMappingTable",
                field: "sl_to_vl",
                index: Some(8),
                value: 8,
                expected: Expected::AtMost(7)
            })
        );
        let mut t = Sl2VlTable::default();
        t.vl[5] = 15;
        assert!(t.validate(1).is_ok(), "VL15 marks a dropped SL");
        t.vl[6] = 1;
        let err = t.validate(1).unwrap_err().to_string();
        assert_eq!(
            err,
            "SLtoVLMappingTable: sl_to_vl[6] = 1: expected at most 0"
        );
        assert!(matches!(
            t.validate(0),
            Err(MadError::Field {
                field: "op_vls",
                ..
            })
        ));
        assert!(t.validate(16).is_err());
    }

    #[test]
    fn oper_vls_codes() {
        let got: Vec<_> = (0..=6).map(data_vls_of_oper_vls).collect();
        assert_eq!(
            got,
            vec![None, Some(1), Some(2), Some(4), Some(8), Some(15), None]
        );
    }

    #[test]
    fn serde_form_is_a_list_of_16() {
        let d = SeqDeserializer::<_, ValueError>::new((0u8..16).rev());
        let t = Sl2VlTable::deserialize(d).unwrap();
        assert_eq!(t.vl_of(0), Some(15));
        let d = SeqDeserializer::<_, ValueError>::new(0u8..15);
        assert!(Sl2VlTable::deserialize(d).is_err());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(10_000))]

        /// No reserved bits: the round trip is exact.
        #[test]
        fn round_trip(b in proptest::collection::vec(any::<u8>(), 8)) {
            prop_assert_eq!(Sl2VlTable::parse(&b).unwrap().to_bytes().to_vec(), b);
        }

        #[test]
        fn parse_never_panics(b in proptest::collection::vec(any::<u8>(), 0..200)) {
            prop_assert_eq!(Sl2VlTable::parse(&b).is_ok(), b.len() >= 8);
        }

        /// A table of VLs below op_vls always validates; raising one SL to op_vls (when not 15) fails naming it.
        #[test]
        fn validate_matches_rule(op_vls in 1u8..=15, vls in proptest::array::uniform16(0u8..15), sl in 0usize..16) {
            let t = Sl2VlTable { vl: vls.map(|v| v % op_vls) };
            prop_assert!(t.validate(op_vls).is_ok());
            let mut bad = t;
            bad.vl[sl] = op_vls;
            if op_vls == 15 {
                prop_assert!(bad.validate(op_vls).is_ok());
            } else {
                let is_expected_error = matches!(
                    bad.validate(op_vls),
                    Err(MadError::Field { index: Some(i), value, .. }) if i == sl && value == u64::from(op_vls)
                );
                prop_assert!(is_expected_error);
            }
        }
    }
}
