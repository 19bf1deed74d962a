//! The RoCEv2 Congestion Notification Packet (CNP) as carried in the UDP payload: a BTH with opcode 0x81,
//! 16 reserved zero bytes, then the ICRC.
//!
//! ```text
//! byte 0       OpCode = 0x81 (CNP)
//! byte 1       SE [7], M [6], PadCnt [5:4], TVer [3:0]     all 0 in a CNP
//! bytes 2-3    P_Key                                        (of the flow being notified)
//! byte 4       FECN [7], BECN [6] = 1, resv6 [5:0] = 0      (masked in the ICRC)
//! bytes 5-7    DestQP                                       (the flow sender's QP)
//! byte 8       AckReq [7], resv7 [6:0]                      all 0
//! bytes 9-11   PSN                                          0
//! bytes 12-27  reserved                                     all 0
//! bytes 28-31  ICRC                                         not part of this view: see crate::crc::icrc
//! ```
//!
//! The IP header of a CNP carries a Total Length of 60 (IPv4) and the UDP header a Length of 40
//! ([`UDP_PAYLOAD_LEN`] + 8).
//!
//! Parsing is strict: every bit outside P_Key, FECN, BECN and DestQP must be zero, as CNPs are sent, and a
//! nonzero one is `BadField`. That way `emit(parse(b)) == b` for every accepted `b`, without the `Repr`
//! carrying reserved bytes; a model that wants to accept sloppy CNPs can read the view's getters instead.

use super::{check_len, Error, Result};

/// BTH opcode of a RoCEv2 CNP.
pub const OPCODE_CNP: u8 = 0x81;

/// Bytes of the ICRC that follows the view.
pub const ICRC_LEN: usize = 4;

// merge: use wire::bth (the 12 BTH bytes below are laid out here only until the shared BthRepr is merged).
mod field {
    use crate::wire::Field;

    pub const OPCODE: usize = 0;
    pub const SE_M_PAD_TVER: usize = 1;
    pub const PKEY: Field = 2..4;
    pub const FECN_BECN_RESV6: usize = 4;
    pub const DEST_QP: Field = 5..8;
    pub const ACKREQ_RESV7: usize = 8;
    pub const PSN: Field = 9..12;
    pub const RESERVED: Field = 12..28;
}

const FECN: u8 = 0x80;
const BECN: u8 = 0x40;
const RESV6: u8 = 0x3f;

/// Length of the view: BTH (12) and the reserved bytes (16), without the ICRC.
pub const HEADER_LEN: usize = field::RESERVED.end;

/// Bytes of a CNP after the UDP header, ICRC included.
pub const UDP_PAYLOAD_LEN: usize = HEADER_LEN + ICRC_LEN;

/// A read/write view of a RoCEv2 CNP, from the BTH through the reserved bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wraps a buffer without any check; for buffers sized with [`RoceCnpRepr::buffer_len`].
    pub const fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }

    /// Wraps a buffer after checking that it holds the 28 bytes of BTH and reserved bytes.
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let packet = Self::new_unchecked(buffer);
        packet.check_len()?;
        Ok(packet)
    }

    /// Checks that the 28 bytes are present; after `Ok` no accessor panics.
    pub fn check_len(&self) -> Result<()> {
        check_len("roce_cnp", self.buffer.as_ref(), HEADER_LEN)
    }

    /// Gives back the buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// BTH OpCode (0x81 for a CNP).
    pub fn opcode(&self) -> u8 {
        self.buffer.as_ref()[field::OPCODE]
    }

    /// BTH byte 1 as a whole: SE, M, PadCnt and TVer (0 in a CNP).
    pub fn se_m_pad_tver(&self) -> u8 {
        self.buffer.as_ref()[field::SE_M_PAD_TVER]
    }

    /// P_Key.
    pub fn pkey(&self) -> u16 {
        let d = &self.buffer.as_ref()[field::PKEY];
        u16::from_be_bytes([d[0], d[1]])
    }

    /// FECN.
    pub fn fecn(&self) -> bool {
        self.buffer.as_ref()[field::FECN_BECN_RESV6] & FECN != 0
    }

    /// BECN (1 in a CNP).
    pub fn becn(&self) -> bool {
        self.buffer.as_ref()[field::FECN_BECN_RESV6] & BECN != 0
    }

    /// resv6, BTH byte 4 bits \[5:0\].
    pub fn resv6(&self) -> u8 {
        self.buffer.as_ref()[field::FECN_BECN_RESV6] & RESV6
    }

    /// DestQP (24 bits): the QP of the flow's sender, whose rate is to be cut.
    pub fn dest_qp(&self) -> u32 {
        let d = &self.buffer.as_ref()[field::DEST_QP];
        u32::from_be_bytes([0, d[0], d[1], d[2]])
    }

    /// BTH byte 8 as a whole: AckReq and resv7 (0 in a CNP).
    pub fn ackreq_resv7(&self) -> u8 {
        self.buffer.as_ref()[field::ACKREQ_RESV7]
    }

    /// PSN (24 bits; 0 in a CNP).
    pub fn psn(&self) -> u32 {
        let d = &self.buffer.as_ref()[field::PSN];
        u32::from_be_bytes([0, d[0], d[1], d[2]])
    }

    /// The 16 reserved bytes after the BTH.
    pub fn reserved(&self) -> &[u8] {
        &self.buffer.as_ref()[field::RESERVED]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Sets the OpCode.
    pub fn set_opcode(&mut self, value: u8) {
        self.buffer.as_mut()[field::OPCODE] = value;
    }

    /// Sets P_Key.
    pub fn set_pkey(&mut self, value: u16) {
        self.buffer.as_mut()[field::PKEY].copy_from_slice(&value.to_be_bytes());
    }

    /// Sets FECN; keeps BECN and resv6.
    pub fn set_fecn(&mut self, value: bool) {
        let b = &mut self.buffer.as_mut()[field::FECN_BECN_RESV6];
        *b = (*b & !FECN) | if value { FECN } else { 0 };
    }

    /// Sets BECN; keeps FECN and resv6.
    pub fn set_becn(&mut self, value: bool) {
        let b = &mut self.buffer.as_mut()[field::FECN_BECN_RESV6];
        *b = (*b & !BECN) | if value { BECN } else { 0 };
    }

    /// Sets DestQP (low 24 bits of `value`).
    pub fn set_dest_qp(&mut self, value: u32) {
        self.buffer.as_mut()[field::DEST_QP].copy_from_slice(&value.to_be_bytes()[1..]);
    }

    /// Zeroes everything a CNP holds as zero: byte 1, resv6, byte 8, PSN and the 16 reserved bytes.
    pub fn clear_reserved(&mut self) {
        let buf = self.buffer.as_mut();
        buf[field::SE_M_PAD_TVER] = 0;
        buf[field::FECN_BECN_RESV6] &= !RESV6;
        buf[field::ACKREQ_RESV7] = 0;
        buf[field::PSN].fill(0);
        buf[field::RESERVED].fill(0);
    }
}

/// The meaningful fields of a RoCEv2 CNP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RoceCnpRepr {
    /// P_Key of the flow (0xffff, the default partition, in practice).
    pub pkey: u16,
    /// The flow sender's QP (24 bits; upper bits are dropped by `emit`).
    pub dest_qp: u32,
    /// FECN: 0 as sent; kept because a switch could set it (it is masked in the ICRC).
    pub fecn: bool,
    /// BECN: 1 as sent by every CNP generator; kept, not enforced, since a 0 is harmless to the ICRC and the
    /// receiver's reaction is the CC algorithm's business.
    pub becn: bool,
}

impl RoceCnpRepr {
    /// Reads a CNP from the bytes starting at its BTH. `BadField` if the OpCode is not 0x81, or if any bit
    /// that a CNP holds as zero is set (field names: `se_m_pad_tver`, `resv6`, `ackreq_resv7`, `psn`,
    /// `reserved`; for `reserved` the value is the first nonzero byte).
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&T>) -> Result<RoceCnpRepr> {
        packet.check_len()?;
        let bad = |field, value: u32| Error::BadField {
            header: "roce_cnp",
            field,
            value,
        };
        if packet.opcode() != OPCODE_CNP {
            return Err(bad("opcode", u32::from(packet.opcode())));
        }
        if packet.se_m_pad_tver() != 0 {
            return Err(bad("se_m_pad_tver", u32::from(packet.se_m_pad_tver())));
        }
        if packet.resv6() != 0 {
            return Err(bad("resv6", u32::from(packet.resv6())));
        }
        if packet.ackreq_resv7() != 0 {
            return Err(bad("ackreq_resv7", u32::from(packet.ackreq_resv7())));
        }
        if packet.psn() != 0 {
            return Err(bad("psn", packet.psn()));
        }
        if let Some(&b) = packet.reserved().iter().find(|&&b| b != 0) {
            return Err(bad("reserved", u32::from(b)));
        }
        Ok(RoceCnpRepr {
            pkey: packet.pkey(),
            dest_qp: packet.dest_qp(),
            fecn: packet.fecn(),
            becn: packet.becn(),
        })
    }

    /// Bytes the view takes (28); the 4-byte ICRC follows and is written by `crate::crc::icrc::fill_icrc`
    /// once the IP and UDP headers are in place (it covers them).
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    /// Writes the BTH and the 16 zero bytes.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut Packet<T>) {
        packet.set_opcode(OPCODE_CNP);
        packet.set_pkey(self.pkey);
        packet.set_dest_qp(self.dest_qp);
        packet.clear_reserved();
        packet.set_fecn(self.fecn);
        packet.set_becn(self.becn);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    // The UDP payload of a RoCEv2 CNP captured on a ConnectX-4 Lx (secdev/scapy test/contrib/roce.uts, "RoCE
    // CNP captured on ConnectX-4 Lx"): BTH 81 00 ffff 40 000118 00 000000, 16 zero bytes, ICRC 82 fd 00 2a.
    static CNP_BYTES: [u8; 32] = [
        0x81, 0x00, 0xff, 0xff, 0x40, 0x00, 0x01, 0x18, 0x00, 0x00, 0x00, 0x00, // BTH
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // reserved
        0x82, 0xfd, 0x00, 0x2a, // ICRC
    ];

    // The CNP of NVIDIA/Mellanox's "RoCEv2 CNP Packet Format Example" knowledge article (as copied at
    // https://cnblogs.com/ztguang/p/15201924.html): "81 00 ff ff 40 00 00 d2" then zeros, ICRC e4 2d ad 81.
    static ARTICLE_BYTES: [u8; 32] = [
        0x81, 0x00, 0xff, 0xff, 0x40, 0x00, 0x00, 0xd2, 0x00, 0x00, 0x00, 0x00, //
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, //
        0xe4, 0x2d, 0xad, 0x81,
    ];

    fn repr() -> RoceCnpRepr {
        RoceCnpRepr {
            pkey: 0xffff,
            dest_qp: 0x118,
            fecn: false,
            becn: true,
        }
    }

    #[test]
    fn deconstruct() {
        let p = Packet::new_checked(&CNP_BYTES[..]).unwrap();
        assert_eq!(p.opcode(), OPCODE_CNP);
        assert_eq!(p.se_m_pad_tver(), 0);
        assert_eq!(p.pkey(), 0xffff);
        assert!(!p.fecn());
        assert!(p.becn());
        assert_eq!(p.resv6(), 0);
        assert_eq!(p.dest_qp(), 0x118);
        assert_eq!(p.ackreq_resv7(), 0);
        assert_eq!(p.psn(), 0);
        assert_eq!(p.reserved(), &[0u8; 16]);
    }

    #[test]
    fn construct() {
        let mut buf = [0xa5u8; 28];
        let mut p = Packet::new_unchecked(&mut buf[..]);
        p.set_opcode(OPCODE_CNP);
        p.set_pkey(0xffff);
        p.clear_reserved();
        p.set_fecn(false);
        p.set_becn(true);
        p.set_dest_qp(0x118);
        assert_eq!(buf, CNP_BYTES[..28]);
    }

    #[test]
    fn parse() {
        let p = Packet::new_checked(&CNP_BYTES[..]).unwrap();
        assert_eq!(RoceCnpRepr::parse(&p).unwrap(), repr());
        let p = Packet::new_checked(&ARTICLE_BYTES[..]).unwrap();
        assert_eq!(
            RoceCnpRepr::parse(&p).unwrap(),
            RoceCnpRepr {
                dest_qp: 0xd2,
                ..repr()
            }
        );
    }

    #[test]
    fn emit() {
        let mut buf = [0xa5u8; 32];
        repr().emit(&mut Packet::new_unchecked(&mut buf[..]));
        assert_eq!(buf[..28], CNP_BYTES[..28]);
        assert_eq!(buf[28..], [0xa5; 4], "the ICRC is not written by emit");
    }

    #[test]
    fn strict_fields() {
        let cases: [(usize, u8, &str); 8] = [
            (0, 0x80, "opcode"),
            (1, 0x01, "se_m_pad_tver"),
            (1, 0x30, "se_m_pad_tver"),
            (4, 0x41, "resv6"),
            (8, 0x80, "ackreq_resv7"),
            (11, 0x01, "psn"),
            (12, 0x07, "reserved"),
            (27, 0x01, "reserved"),
        ];
        for (at, value, name) in cases {
            let mut b = CNP_BYTES;
            b[at] = value;
            let err = RoceCnpRepr::parse(&Packet::new_checked(&b[..]).unwrap()).unwrap_err();
            assert!(
                matches!(err, Error::BadField { header: "roce_cnp", field, .. } if field == name),
                "byte {at} = {value:#x}: {err:?}"
            );
        }
        assert!(matches!(
            Packet::new_checked(&CNP_BYTES[..27]),
            Err(Error::Truncated { need: 28, .. })
        ));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(10_000))]

        /// Round trip over every valid CNP: random P_Key, DestQP, FECN, BECN; everything else as a CNP holds it.
        #[test]
        fn emit_parse_round_trip(b in proptest::array::uniform28(any::<u8>())) {
            let mut b = b;
            b[0] = OPCODE_CNP;
            b[1] = 0;
            b[4] &= 0xc0;
            b[8..].fill(0);
            let r = RoceCnpRepr::parse(&Packet::new_checked(&b[..]).unwrap()).unwrap();
            let mut out = [0xa5u8; HEADER_LEN];
            r.emit(&mut Packet::new_unchecked(&mut out[..]));
            prop_assert_eq!(out, b);
        }

        /// Any bytes: no panic, a typed error, and whatever is accepted round-trips.
        #[test]
        fn parse_never_panics(b in proptest::collection::vec(any::<u8>(), 0..96), valid_start in any::<bool>()) {
            let mut b = b;
            if valid_start && !b.is_empty() {
                b[0] = OPCODE_CNP;
            }
            match Packet::new_checked(&b[..]) {
                Ok(p) => match RoceCnpRepr::parse(&p) {
                    Ok(r) => {
                        let mut out = [0xa5u8; HEADER_LEN];
                        r.emit(&mut Packet::new_unchecked(&mut out[..]));
                        prop_assert_eq!(&out[..], &b[..HEADER_LEN]);
                    }
                    Err(e) => prop_assert!(matches!(e, Error::BadField { .. }), "{:?}", e),
                },
                Err(e) => prop_assert!(matches!(e, Error::Truncated { .. }) && b.len() < HEADER_LEN, "{:?}", e),
            }
        }
    }
}
